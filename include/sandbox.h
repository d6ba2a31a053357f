/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Which cgroups are sandboxes, and under which policy.
 *
 * `sandboxes` maps a cgroup id (the cgroup2 directory's inode number) to
 * its policy's slot. The agent inserts every selected cgroup and every
 * descendant it finds; a descendant created since the last scan is still
 * found because the BPF side walks the task's ancestors (nearest entry
 * wins), up to SANDBOX_MAX_DEPTH levels. A program that is attached but
 * finds no entry denies (fail closed).
 *
 * Why slots: a reload that changes a policy writes its rules under a fresh
 * policy id, then switches every cgroup of that policy in one map update,
 * by pointing the policy's slot at the new id (`policy_slots`, array: slot
 * -> policy id in force). A slot stays with its policy's name for as long
 * as the name is in the set, across reloads and agent restarts, so only a
 * cgroup that moves to another policy needs its own entry rewritten.
 * Slot 0 is the conflict slot (a cgroup two policies claim); it always
 * holds POLICY_ID_CONFLICT, and so does every slot nothing was written to
 * (array values start zeroed): a dangling slot denies everything.
 */
#ifndef STOCKADE_SANDBOX_H
#define STOCKADE_SANDBOX_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define SANDBOX_MAX_CGROUPS	16384
#define SANDBOX_MAX_DEPTH	32
#define POLICY_MAX		1024	/* policy ids 1..POLICY_MAX-1 */
/* Policy id 0 is reserved: a cgroup two policies claim; it denies all. */
#define POLICY_ID_CONFLICT	0
/* Slots 1..POLICY_MAX-1, one per policy name; slot 0 resolves to
 * POLICY_ID_CONFLICT. */
#define POLICY_SLOTS		POLICY_MAX
#define POLICY_SLOT_CONFLICT	0

enum sandbox_mode {
	SANDBOX_ENFORCE = 0,
	SANDBOX_AUDIT = 1,
};

enum sandbox_flags {
	SANDBOX_NET_DEFAULT_ALLOW = 1 << 0,
	SANDBOX_RAW_SOCKETS = 1 << 1,
	SANDBOX_ICMP = 1 << 2,
	SANDBOX_USERNS = 1 << 3,	/* namespaces.user: true */
	SANDBOX_PERF = 1 << 4,		/* perf: allow (bpf/priv.bpf.c) */
	SANDBOX_USERFAULTFD = 1 << 5,	/* userfaultfd: true */
};

/* Per-policy settings, array map `policies` indexed by policy id. */
struct policy_conf {
	__u32 mode;	/* enum sandbox_mode */
	__u32 flags;	/* enum sandbox_flags */
	/* network.netlink: bit n lets every message of netlink protocol n
	 * through (lsm/netlink_send); with bit 0 clear, NETLINK_ROUTE carries
	 * only read requests (RTM_GET*). */
	__u32 netlink;
	__u32 pad;
	/* Capabilities a sandboxed task may use, bit N = CAP_* number N
	 * (`capabilities:`, or its default): every other one is refused in
	 * lsm/capable, whatever the task's credentials hold. 0 (a zeroed
	 * array slot, the conflict id) refuses them all. */
	__u64 caps;
};

/*
 * A `sandboxes` entry. In the map only slot and root_id mean anything;
 * policy_id is written 0 there and filled in by sandbox_current() in the
 * copy a program decides by (slot resolved once, so one program run sees
 * one policy id throughout).
 */
struct sandbox {
	__u32 policy_id;	/* the copy's resolved id; 0 in the map */
	__u32 slot;		/* index into `policy_slots` */
	/* The directly selected cgroup this one is confined through (itself
	 * when selected). Two tasks are in the same sandbox when their roots
	 * are equal: ptrace, signals and unix peers are judged by that. */
	__u64 root_id;
};

/*
 * Outsider cache (`cg_cache`, LRU): cgroup id -> "in no sandbox", valid
 * while `gen` equals the global sandbox_gen, which the agent bumps each
 * time it adds sandboxes. A task outside every sandbox thus reaches its
 * verdict in two lookups (sandboxes, then cg_cache) instead of walking all
 * its ancestors on every hook.
 */
#define SANDBOX_CACHE_SIZE	8192
struct cg_cache_val {
	__u64 gen;
};

#endif /* STOCKADE_SANDBOX_H */
