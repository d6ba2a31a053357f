/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Resource limits and counting, shared by bpf/limits.bpf.c (and every BPF
 * program that counts) and the agent (agent/limits.c).
 *
 * (Not include/limits.h: -Iinclude would make that shadow the C library's
 * <limits.h> in every file of the build.)
 *
 * Limits are not BPF: the agent writes them into the sandbox cgroup's own
 * files (cpu.max, memory.max, memory.swap.max, pids.max) and watches the
 * kernel's event files for breaches. What BPF adds is counting:
 *
 * `sb_count` (bpf/limits.bpf.h) is a per-CPU hash keyed by the sandbox's
 * cgroup id: the directly selected cgroup, which is struct sandbox's
 * root_id for it and for every cgroup below it. So a sandbox's numbers
 * include everything its subtree did. The agent creates the entry when it
 * confines the cgroup, before the programs can run there, and deletes it
 * on detach; the programs only look up and add, never insert, so a full
 * map can never make a program fail.
 *
 * It is pinned with every other map (include/lifecycle.h, maps/sb_count),
 * so the counts outlive the agent: they run from the first attach until
 * the cgroup's enforcement is removed (detach), across agent restarts.
 *
 *   allowed[kind]   decisions that let the call through (connect, sendmsg)
 *   denied[kind]    denials by enum ev_kind (include/events.h): connect,
 *                   sendmsg, socket, and the BPF-LSM kinds (file, ptrace, ...)
 *   audited[kind]   in mode audit, the would-be denials (allowed, logged as
 *                   `audit` records), by the same kinds
 *   egress_bytes    bytes of IP packets the sandbox's sockets sent
 *   egress_packets  (cgroup_skb/egress; IP header included, never dropped)
 *
 * A denial the programs attribute to no sandbox (reason no_policy) is in
 * no entry: there is no sandbox to charge it to.
 */
#ifndef STOCKADE_STOCKADE_LIMITS_H
#define STOCKADE_STOCKADE_LIMITS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* enum ev_kind values 0..LIMITS_KINDS-1 have a counter; must be 2^n. */
#define LIMITS_KINDS		32

struct sb_count {
	__u64 allowed[LIMITS_KINDS];
	__u64 denied[LIMITS_KINDS];
	__u64 audited[LIMITS_KINDS];
	__u64 egress_bytes;
	__u64 egress_packets;
};

/*
 * `lim_saved` (hash, pinned with the rest): sandbox cgroup id -> the limit
 * files the agent wrote, what they held before (orig) and what the kernel
 * kept of the agent's value (now). An agent that stops without detaching
 * leaves the limits in force (they are enforcement, like the programs);
 * whoever removes enforcement later (the next agent, `stockade detach`)
 * puts orig back, unless someone else changed the file since (it is not
 * `now` any more). No program reads it. Files, in this order: cpu.max,
 * memory.swap.max, memory.max, pids.max.
 */
#define LIMITS_FILES		4
#define LIMITS_VAL_LEN		64

struct limits_saved {
	__u32 set;		/* bit f: file f was written */
	__u32 pad;
	char orig[LIMITS_FILES][LIMITS_VAL_LEN];
	char now[LIMITS_FILES][LIMITS_VAL_LEN];
};

#endif /* STOCKADE_STOCKADE_LIMITS_H */
