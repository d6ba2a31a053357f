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
#include "net.h"

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
	/* exec.anon_exec: deny: anonymous memory may not become executable
	 * (lsm/mmap_file, lsm/file_mprotect). */
	SANDBOX_ANON_EXEC_DENY = 1 << 6,
	/* exec.allow_written: true. Compiled into the file rules already;
	 * kept here so that what is in force says it (manifest, status). */
	SANDBOX_EXEC_WRITTEN = 1 << 7,
	/* Per-execution folders: judge paths by the selected cgroup's own
	 * scope in file_cg_rules (include/file.h). */
	SANDBOX_FILE_PER_CGROUP = 1 << 8,
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
	/* network.allow's prefix lengths per family ([0] IPv4, [1] IPv6),
	 * longest first, and how many (NET_XLEN_TRIE: more than fit, the
	 * trie decides): include/net.h, net_exact. */
	__u8 net_xlen[2][NET_XLEN_MAX];
	__u8 net_nxlen[2];
	__u8 pad2[6];
};

/*
 * A `sandboxes` entry. In the map, policy_id says what the entry is (enum
 * sandbox_entry; 0, a sandbox, is what every entry was before watched
 * directories existed), and sandbox_current() fills in the resolved
 * policy id in the copy a program decides by (slot resolved once, so one
 * program run sees one policy id throughout).
 *
 * Zero window. A cgroup created below a selector's watched directory (the
 * deepest existing directory above its glob's first wildcard: /docker for
 * /docker/<*>) exists, and runs code, before the agent can classify it.
 * The agent attaches the cgroup programs at the watched directory too
 * (the watch links, bpf/net.bpf.c) and marks it WATCHED, so such a cgroup
 * is never an outsider by default: a task whose nearest entry is a
 * WATCHED ancestor is pending, and is judged by that entry's candidate
 * slot, the one policy whose selectors can select below it (the conflict
 * slot, deny all, when several can). The agent classifies each new
 * cgroup within a millisecond or two (inotify on the watched directory):
 * a selected one gets its own entry and links; one that no selector can
 * select, at any depth below it, gets an OUTSIDE entry, so it and its
 * descendants are outsiders again. A task in a WATCHED directory itself
 * is outside (the directory is not selected).
 */
enum sandbox_entry {
	SANDBOX_ENTRY_SANDBOX = 0,
	SANDBOX_ENTRY_WATCHED = 1,	/* slot: the candidate; root_id: 0 */
	SANDBOX_ENTRY_OUTSIDE = 2,	/* classified: in no sandbox */
};

/* In a copy's slot, once resolved: it was judged while pending (records
 * say "pending": true). */
#define SANDBOX_SNAP_PENDING	0x80000000u

struct sandbox {
	__u32 policy_id;	/* the copy's resolved id; in the map enum sandbox_entry */
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
	__u64 gen;	/* | SANDBOX_CACHE_CLASSIFIED: an OUTSIDE entry said so */
};
/*
 * Task storage `task_verdict`: the same verdict per task, with the cgroup
 * it was reached in, and for a task in a sandbox cgroup of its own entry,
 * a copy of that entry. The BPF-LSM and tracing programs look it up
 * first after cg_fast (below), so a confined task pays one storage
 * lookup (no hash, no LRU) on every hook; a task moved to another
 * cgroup misses (cgid differs). Whoever writes the sandboxes map (put or delete) bumps
 * sandbox_gen after the write: the agent, and `stockade detach` (through
 * the pinned .data); that ends every cached verdict at once. The copy
 * holds the entry's slot, which each use resolves again (policy_slots),
 * so a reload's flip of the slot takes effect as it does for a lookup.
 * Pending verdicts, and a sandbox reached through an ancestor's entry
 * (a cgroup not classified yet), are never cached.
 */
struct task_verdict_val {
	__u64 cgid;
	__u64 gen;	/* as cg_cache_val.gen, | SANDBOX_CACHE_INSIDE */
	struct sandbox entry;	/* with SANDBOX_CACHE_INSIDE: the cgroup's own */
	/* Not a verdict, kept across them: 1 once the task was judged in a
	 * sandbox with no setup pass (SETUP_F_SANDBOXED set), after which it
	 * can never have one (include/setup.h), so the BPF-LSM programs
	 * skip the setup check's own lookup. Written only by its task. */
	__u32 setup_over;
	__u32 pad;
};
/*
 * `cg_fast` (array of CG_FAST_SLOTS): the same verdicts by cgroup, one
 * slot per hash of the cgroup's id, looked at before the task's storage
 * and cg_cache, and read with no helper call (an array's lookup is
 * inlined): "outside", or a sandbox cgroup's own entry, valid while gen
 * matches sandbox_gen as theirs are, written where they are. So an
 * outsider's BPF-LSM hook makes no storage lookup, the larger part of
 * its cost (README "Performance"), and a cgroup program in a sandbox no
 * hash lookup. The BPF-LSM programs take only its "outside": a task in a
 * sandbox still reads its own storage (setup_over). A slot is a seqlock:
 * a writer takes it by compare-and-swap of seq from even to odd (one
 * that loses, or finds it odd, writes nothing) and makes seq even again
 * after its stores; a reader takes what it read between two reads of the
 * same even seq, else goes the long way. A slot another cgroup's verdict
 * took only misses (the cgroup's id is in it). Never written by the
 * agent, nor carried across a replacement.
 */
#ifdef STOCKADE_TEST_LAYOUT
#define CG_FAST_SLOTS	1	/* every verdict in one slot (bpf/common.bpf.h) */
#else
#define CG_FAST_SLOTS	8192	/* a power of two */
#endif
struct cg_fast_slot {
	__u64 seq;		/* odd while a writer is in */
	__u64 cgid;		/* 0: empty (no cgroup has id 0) */
	__u64 gen;		/* as task_verdict_val.gen */
	struct sandbox entry;	/* with SANDBOX_CACHE_INSIDE: the cgroup's own */
};
/* Cached "outside" because an OUTSIDE entry (or a WATCHED directory of its
 * own) says so, not because no entry was found: the cgroup programs deny
 * the second (attached, yet no policy: fail closed), never the first. */
#define SANDBOX_CACHE_CLASSIFIED	(1ULL << 63)
/* In task_verdict's gen: in a sandbox, by the entry kept beside it. */
#define SANDBOX_CACHE_INSIDE		(1ULL << 62)

/* What sandbox_lookup() found for the current task. */
enum sandbox_state {
	SANDBOX_NONE = 0,	/* no entry at all */
	SANDBOX_OUTSIDE = 1,	/* classified outside every sandbox */
	SANDBOX_IN = 2,		/* in a sandbox (or pending: judged as one) */
};

#endif /* STOCKADE_SANDBOX_H */
