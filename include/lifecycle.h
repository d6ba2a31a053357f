/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * State that outlives the agent (README "Lifecycle").
 *
 * Every link and every map the programs share is pinned under the pin
 * directory (--bpffs, default /sys/fs/bpf/stockade), so a sandbox stays
 * confined while no agent runs, even after a SIGKILL:
 *
 *   maps/<name>               rb, sandboxes, policy_slots, policies, ..., data (.data:
 *                             ev_seq, sandbox_gen), bss (.bss: ev_lost)
 *   links/lsm-<program>       the BPF-LSM programs (global, once each)
 *   links/cg-<id>-<program>   the cgroup programs of each directly
 *                             selected cgroup (<id>: its cgroup id)
 *
 * A new agent of the same build adopts all of it: libbpf reuses the pinned
 * maps (without re-initialising .data, so `seq` continues), and a pinned
 * link whose program has the tag of the program this build loads, and the
 * same constants in its .rodata maps (the tag leaves them out), is kept
 * as it is; one with another tag is switched to this build's program
 * (BPF_LINK_UPDATE for cgroup links; for LSM links, which cannot be
 * updated, a new link first and the old one dropped after: an overlap,
 * never a gap).
 *
 * Pinned maps that do not fit this build (type, sizes, entries, flags, a
 * map more or less, PIN_LAYOUT_VERSION, the ring size) cannot be reused:
 * the agent replaces the whole state (agent/replace.c). It builds a fresh
 * one in
 *
 *   staging-<seq>-<pid>/maps, /links   <seq>: the new state's first
 *                                      sequence number
 *
 * attaches each cgroup's new links before it detaches the old ones (cgroup
 * links are multi-attach: both judge for a moment), overlaps the BPF-LSM
 * links, drains the old rings, removes the old pins and renames its own
 * into place. A staging directory found at start means an agent died
 * replacing: every cgroup is still confined by one state or both, and the
 * next agent replaces them all the same way. Old maps are read by their
 * BTF (ev_seq, ev_lost, agent_meta.layout, .lost_reported by name), and
 * carried over only where their BTF types match this build's.
 *
 * The maps below are never read by the programs (except sb_count); they let
 * `stockade status` and `stockade detach` work from the pins alone.
 */
#ifndef STOCKADE_LIFECYCLE_H
#define STOCKADE_LIFECYCLE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/*
 * Bumped by hand whenever the layout of a pinned map's key or value
 * changes without changing its size (a size change is caught anyway). An
 * agent replaces pins of another layout (agent/replace.c) instead of
 * reusing them.
 */
#define PIN_LAYOUT_VERSION	4	/* 3: sandbox entries name slots; 4: net_exact */

/*
 * The replacement tests need a build whose pinned maps do not fit this
 * one's (make variant-layout, built with -DSTOCKADE_TEST_LAYOUT): another
 * layout version, `detached` of another size, and one map more
 * (layout_test, bpf/lifecycle.bpf.c). Agents of the two builds replace
 * each other's state (agent/replace.c). The same build has a cg_fast of
 * one slot, with spins that widen its race (bpf/common.bpf.h): its pins
 * fit no other build's anyway.
 */
#ifdef STOCKADE_TEST_LAYOUT
enum { PIN_LAYOUT_BASE = PIN_LAYOUT_VERSION };
#undef PIN_LAYOUT_VERSION
#define PIN_LAYOUT_VERSION	(PIN_LAYOUT_BASE + 1000)
#endif

#define PIN_POLICY_NAME_LEN	64	/* policy names are at most 63 bytes */

/* `policy_names` (array, indexed by policy id): what each id means. An
 * entry with an empty name is unused. Ids are kept per name across agent
 * restarts, so a record's policy id means the same policy before and after.
 * Slots (include/sandbox.h) are kept per name too, with no map of their own:
 * a policy's slot is the one whose `policy_slots` value is an id that names
 * it here. */
struct policy_info {
	char name[PIN_POLICY_NAME_LEN];
	__u64 hash;		/* FNV-1a 64 of the policy file's bytes */
	__u32 generation;	/* 1, +1 each time the file's content changed */
	__u32 mode;		/* enum sandbox_mode */
};

/* What the last reload did (agent_meta.reload_result). */
enum reload_result {
	RELOAD_NONE = 0,
	RELOAD_APPLIED = 1,	/* a new policy set is in force */
	RELOAD_UNCHANGED = 2,	/* the files hold what is in force */
	RELOAD_REJECTED = 3,	/* invalid: the previous set stays in force */
};

/* `agent_meta` (array of one). */
struct agent_meta {
	/* A replacing agent of another build reads `layout` and
	 * `lost_reported` by these names (BTF): keep them. */
	__u32 pid;		/* the running agent; 0 after a clean exit */
	__u32 layout;		/* PIN_LAYOUT_VERSION of whoever pinned */
	__u64 lost_reported;	/* ev_lost already turned into lost records */
	__u64 started_ns;	/* CLOCK_REALTIME when that agent started */
	__u64 reloads;		/* reloads this agent finished (any result) */
	__u32 reload_result;	/* enum reload_result of the last one */
	__u32 reload_problems;	/* its problems, in `reload_msgs` */
};

/*
 * `reload_msgs` (array): the problems of the last rejected reload, in
 * `stockade check` words, for `stockade reload` to print. Written before
 * agent_meta counts the reload; reload is that reload's number (agent_meta
 * reloads), so a reader can tell them from a later reload's. Beyond
 * RELOAD_MSGS_MAX problems the last entry says how many more the agent's
 * log holds.
 */
#define RELOAD_MSGS_MAX		64
#define RELOAD_MSG_LEN		512	/* POLICY_DIAG_MAX */
struct reload_msg {
	__u64 reload;
	char text[RELOAD_MSG_LEN];
};

/* `sb_count` (per-CPU hash): sandbox root cgroup id -> struct sb_count
 * (include/stockade_limits.h): allowed, denied and audited decisions per
 * kind, egress, since its programs were first attached. Sum the per-CPU
 * values; `status` shows denials = sum of denied[], audits = sum of
 * audited[]. */

/* `detached` (hash): cgroup id -> CLOCK_REALTIME ns when `stockade detach`
 * removed its enforcement. The agent does not confine that cgroup through
 * a selector again until the cgroup is gone (a new cgroup of the same name
 * has a new id) or `stockade detach --all` clears everything. */
#ifdef STOCKADE_TEST_LAYOUT
#define PIN_MAX_DETACHED	2048
#else
#define PIN_MAX_DETACHED	4096
#endif

#endif /* STOCKADE_LIFECYCLE_H */
