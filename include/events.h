/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The record every BPF program writes into the one ring buffer `rb`.
 *
 * Sequence numbers: every record the kernel produces takes the next value
 * of the global counter `seq` before it tries to reserve ring space, and
 * the agent takes its own records' numbers from the same counter. So a
 * reader sees a gap in `seq` exactly where records were lost, and every
 * lost record is also counted in `lost`, which the agent turns into
 * `event: lost` records: produced == logged + lost, always.
 * The verdict never depends on whether the reservation succeeded.
 */
#ifndef STOCKADE_EVENTS_H
#define STOCKADE_EVENTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define EV_COMM_LEN	16
#define EV_RINGBUF_DEFAULT	(4u << 20)	/* bytes; power of two */

enum ev_type {
	EV_DENY = 1,
	EV_AUDIT = 2,
};

enum ev_kind {
	EV_KIND_CONNECT = 1,
	EV_KIND_SENDMSG = 2,
	EV_KIND_SOCKET = 3,
	EV_KIND_FILE = 4,	/* BPF-LSM */
};

enum ev_reason {
	EV_REASON_NOT_ALLOWED = 1,
	EV_REASON_METADATA = 2,
	EV_REASON_RAW_SOCKET = 3,
	EV_REASON_ICMP = 4,
	EV_REASON_PACKET_SOCKET = 5,	/* AF_PACKET, BPF-LSM socket_create */
	EV_REASON_NO_POLICY = 6,	/* program ran but no sandbox entry */
};

struct event {
	__u64 seq;
	__u64 ts_boot_ns;	/* bpf_ktime_get_boot_ns() */
	__u64 cgroup_id;	/* the task's own cgroup */
	__u32 policy_id;
	__u32 pid;		/* tgid */
	__u32 tid;
	__u32 uid;
	__u8 type;		/* enum ev_type */
	__u8 kind;		/* enum ev_kind */
	__u8 reason;		/* enum ev_reason */
	__u8 family;		/* 4, 6, or the socket family for kind socket */
	__u8 proto;		/* IPPROTO_* */
	__u8 sock_type;		/* SOCK_* for kind socket */
	__u16 dport;		/* host byte order */
	__u8 daddr[16];		/* as the caller gave it, not normalised */
	char comm[EV_COMM_LEN];
};

#endif /* STOCKADE_EVENTS_H */
