/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Maps and helpers every stockade BPF program shares. Each object that
 * includes this defines the shared maps and counters __weak, and libbpf's
 * static linker (bpftool gen object) merges identical weak definitions
 * into one, so every program sees the same ring buffer and counters.
 */
#ifndef STOCKADE_COMMON_BPF_H
#define STOCKADE_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

#include "events.h"
#include "sandbox.h"
#include "net.h"
#include "lifecycle.h"

#define EPERM_RET 0	/* cgroup sock programs: 0 rejects with EPERM */

/*
 * The upgrade tests need a second build whose programs differ from this
 * one's in a few instructions and in nothing else (make variant, built
 * with -DSTOCKADE_TEST_VARIANT): an agent of either build must replace
 * the other's programs without a window. A no-op otherwise. (The same
 * build also counts the file decision cache's hits: bpf/file.bpf.c,
 * dcache_hits; tests/live/lifecycle.sh names the programs it changes.)
 */
#ifdef STOCKADE_TEST_VARIANT
#define TEST_VARIANT_MARK() asm volatile("r0 = 0" ::: "r0")
#else
#define TEST_VARIANT_MARK() do { } while (0)
#endif

/* Sequence numbers and counters: see include/events.h. */
__u64 ev_seq __weak = 1;	/* .data: the agent takes numbers too */
__u64 ev_produced __weak;
__u64 ev_lost __weak;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, EV_RINGBUF_DEFAULT);
} rb SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SANDBOX_MAX_CGROUPS);
	__type(key, __u64);
	__type(value, struct sandbox);
} sandboxes SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, POLICY_MAX);
	__type(key, __u32);
	__type(value, struct policy_conf);
} policies SEC(".maps") __weak;

/* Slot -> policy id in force (include/sandbox.h): one update switches every
 * cgroup of a policy. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, POLICY_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
} policy_slots SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SANDBOX_CACHE_SIZE);
	__type(key, __u64);
	__type(value, struct cg_cache_val);
} cg_cache SEC(".maps") __weak;

/* Per task: its last verdict (outside, or its own cgroup's entry) and the
 * cgroup it was for (include/sandbox.h). Only the BPF-LSM and tracing
 * programs use it: the cgroup programs cannot reach task storage, they
 * keep cg_cache. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_verdict_val);
} task_verdict SEC(".maps") __weak;

/* The verdicts again, by cgroup, read without a helper call
 * (include/sandbox.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CG_FAST_SLOTS);
	__type(key, __u32);
	__type(value, struct cg_fast_slot);
} cg_fast SEC(".maps") __weak;

/* Is cgrp in the cgroup v2 hierarchy (hierarchy id 0)? A cgroup v1
 * hierarchy's (a hybrid host: runc joins each of them too) cgroup ids are
 * another kernfs's numbering, and may equal a sandbox's: a hook handed an
 * arbitrary cgroup (a move's, a mkdir's) checks this before its id. */
static __always_inline bool cgroup_is_v2(struct cgroup *cgrp)
{
	return BPF_CORE_READ(cgrp, root, hierarchy_id) == 0;
}

/* Bumped by the agent after every write of the sandboxes map: see
 * include/sandbox.h. */
__u64 sandbox_gen __weak = 1;

/*
 * Resolve a copied entry's slot into the policy id in force, once: every
 * later lookup of the program uses snap->policy_id, so a reload flipping
 * the slot meanwhile cannot make one decision mix two policies. A slot
 * out of range or holding nothing resolves to POLICY_ID_CONFLICT, which
 * denies everything (fail closed).
 */
static __always_inline struct sandbox *sandbox_resolve(struct sandbox *snap)
{
	__u32 slot = snap->slot, *id;

	id = bpf_map_lookup_elem(&policy_slots, &slot);
	snap->policy_id = id && *id < POLICY_MAX ? *id : POLICY_ID_CONFLICT;
	return snap;
}

/*
 * One level of sandbox_lookup()'s scan of the current task's ancestors,
 * root first (bpf_loop() callback, 1 to stop): the deepest entry found is
 * kept. A callback, not a loop, because the verifier checks a callback
 * once, where a loop of SANDBOX_MAX_DEPTH levels is checked level by
 * level in every program: about half of all the instructions verified at
 * an agent's start, which is most of that start under an emulator.
 * (unused: not every object that includes this header looks up.)
 */
struct anc_scan {
	struct sandbox snap;
	bool found;
};

/* One level of such a scan, root first, by its cgroup's id (0: past the
 * cgroup's own level): its entry, if any, is the deepest so far. 1 to
 * stop. Shared with egress's scan of a socket's cgroup (limits.bpf.c). */
static __always_inline long anc_keep(struct anc_scan *c, __u64 id)
{
	struct sandbox *sb;

	if (!id)
		return 1;
	sb = bpf_map_lookup_elem(&sandboxes, &id);
	if (sb) {
		c->snap = *sb;
		c->found = true;
	}
	return 0;
}

static long __attribute__((unused)) anc_scan_step(__u32 level, void *ctx)
{
	return anc_keep(ctx, bpf_get_current_ancestor_cgroup_id((int)level));
}

/* Cgroup id's sandbox, its nearest entry being *snap, a SANDBOX or a
 * WATCHED one (pending: judged by the directory's candidate slot, as a
 * sandbox of its own, root_id itself; never cached, the agent is about
 * to classify it). */
static __always_inline struct sandbox *sandbox_nearest(struct sandbox *snap,
							__u64 id, int *state)
{
	*state = SANDBOX_IN;
	if (snap->policy_id == SANDBOX_ENTRY_WATCHED) {
		snap->root_id = id;
		sandbox_resolve(snap);
		snap->slot |= SANDBOX_SNAP_PENDING;
		return snap;
	}
	return sandbox_resolve(snap);
}

/* cg_fast's seqlock (include/sandbox.h): the compiler keeps each access
 * where it is, and x86 keeps loads in order with loads and stores with
 * stores (the compare-and-swap is a full barrier), as the JIT emits them. */
#define cg_fast_barrier()	asm volatile("" ::: "memory")
#define cg_fast_once(x)		(*(volatile __u64 *)&(x))

/* Key 0: the reads cg_fast's sequence turned away, counted by the layout
 * test build alone (tests/vm/cgfast-race.sh). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} cg_fast_turned SEC(".maps") __weak;

/*
 * The layout test build (make variant-layout, whose pins fit no other
 * build's anyway; not make variant, whose programs must differ from
 * these in a few places only: tests/live/lifecycle.sh) has one slot
 * (include/sandbox.h), which every cgroup's verdict takes in turn;
 * writes a verdict's cgroup, then spins, then its generation and entry;
 * and spins (less: every lookup does) between a reader's first read of
 * the sequence and its reads of the slot: so that on two CPUs a reader
 * often meets a slot half written, and a writer that starts mid-read.
 * tests/vm/cgfast-race.sh shows with it that the sequence keeps readers
 * off them (a slot holding a sandbox cgroup's id with another cgroup's
 * "outside" would let that sandbox do anything). The product does
 * neither.
 */
#ifdef STOCKADE_TEST_LAYOUT
static long cg_fast_spin_step(__u32 i, void *ctx)
{
	return 0;
}

/* bpf_loop(): its callback is verified once, where a loop would be
 * verified round by round at each of the lookup's call sites. */
static __always_inline void cg_fast_spin(__u32 n)
{
	bpf_loop(n, cg_fast_spin_step, NULL, 0);
}

static __always_inline void cg_fast_count_turned(void)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&cg_fast_turned, &zero);

	if (n)
		__sync_fetch_and_add(n, 1);
}
#else
static __always_inline void cg_fast_spin(__u32 n)
{
}

static __always_inline void cg_fast_count_turned(void)
{
}
#endif

static __always_inline struct cg_fast_slot *cg_fast_slot(__u64 id)
{
	__u32 k = (__u32)((id * 0x9E3779B97F4A7C15ULL) >> 32) & (CG_FAST_SLOTS - 1);

	return bpf_map_lookup_elem(&cg_fast, &k);
}

/*
 * Cgroup id's verdict at generation gen, if its slot holds one: its gen
 * (with the flags) in *gen_out, its entry in *snap (whatever it held
 * otherwise: a caller reads it only for a verdict inside).
 */
static __always_inline bool cg_fast_get(__u64 id, __u64 gen, __u64 *gen_out,
					struct sandbox *snap)
{
	struct cg_fast_slot *v = cg_fast_slot(id);
	__u64 seq, cgid, g;

	if (!v || !id)
		return false;
	seq = cg_fast_once(v->seq);
	if (seq & 1) {
		cg_fast_count_turned();
		return false;	/* a writer is in */
	}
	cg_fast_spin(200);
	cg_fast_barrier();
	cgid = v->cgid;
	g = v->gen;
	*snap = v->entry;
	cg_fast_barrier();
	if (cg_fast_once(v->seq) != seq) {
		cg_fast_count_turned();
		return false;	/* a writer came and went */
	}
	if (cgid != id ||
	    (g & ~(SANDBOX_CACHE_CLASSIFIED | SANDBOX_CACHE_INSIDE)) != gen)
		return false;
	*gen_out = g;
	return true;
}

/* Write a verdict into id's slot, unless another writer is in it. */
static __always_inline void cg_fast_put(__u64 id, __u64 gen,
					const struct sandbox *entry)
{
	struct cg_fast_slot *v = cg_fast_slot(id);
	__u64 seq;

	if (!v || !id)
		return;
	seq = cg_fast_once(v->seq);
	if ((seq & 1) || __sync_val_compare_and_swap(&v->seq, seq, seq + 1) != seq)
		return;
	v->cgid = id;
	cg_fast_barrier();
	cg_fast_spin(2000);
	cg_fast_barrier();
	v->gen = gen;
	if (entry)
		v->entry = *entry;
	cg_fast_barrier();
	cg_fast_once(v->seq) = seq + 2;
}

/* Remember a verdict for cgroup id: "outside" (gen,
 * | SANDBOX_CACHE_CLASSIFIED or not), or its own entry (entry not NULL:
 * gen | SANDBOX_CACHE_INSIDE), in cg_fast and, with task_cache, in the
 * current task's storage (returned; NULL when it cannot be had). */
static __always_inline struct task_verdict_val *
task_verdict_put(bool task_cache, __u64 id, __u64 gen, const struct sandbox *entry)
{
	struct task_verdict_val *tv;

	cg_fast_put(id, entry ? gen | SANDBOX_CACHE_INSIDE : gen, entry);
	if (!task_cache)
		return NULL;
	tv = bpf_task_storage_get(&task_verdict, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!tv)
		return NULL;
	tv->cgid = id;
	if (entry) {
		tv->entry = *entry;
		gen |= SANDBOX_CACHE_INSIDE;
	}
	tv->gen = gen;
	return tv;
}

/*
 * The sandbox the current task is in (include/sandbox.h): its cgroup's
 * verdict in cg_fast if that holds it (for the BPF-LSM programs, only
 * an "outside": a task inside reads its own storage), then the task's
 * storage, then its own cgroup's entry (the agent inserts every cgroup
 * it has seen, so this is the common case), then the outsider cache,
 * then its ancestors, nearest entry wins, for a cgroup the agent has
 * not classified yet.
 * Returns NULL when the task is outside every sandbox (*state says whether
 * an entry said so, or none was found), else snap, a copy of the entry
 * taken right at the lookup, its slot resolved to a policy id: a reload
 * replaces entries and flips slots while programs run, and the kernel may
 * reuse a replaced entry's memory for the next update at once
 * (preallocated hash), so a program must read the entry once and decide
 * by that copy. A pending cgroup (nearest entry a WATCHED directory) is
 * judged by the directory's candidate slot, as a sandbox of its own
 * (root_id: itself), and its copy's slot carries SANDBOX_SNAP_PENDING.
 *
 * sandbox_lookup_tv(): how is a constant at every call site, so the cgroup
 * programs' copies hold no task storage call. *tvp (tvp not NULL): set to
 * the task's task_verdict when that holds this verdict (a task in a
 * sandbox cgroup of its own), left alone otherwise.
 *
 * How sandbox_lookup_tv() finds the current task's cgroup (how):
 * SBL_TASK_CACHE: with the verdict kept in the task's storage (BPF-LSM
 * and tracing programs; cgroup programs cannot reach the task);
 * SBL_ID_LOADS: that, and the cgroup's id by loads from the task
 * (t->cgroups->dfl_cgrp->kn->id, the walk bpf_get_current_cgroup_id()
 * makes), one helper call less on the hooks every task on the host
 * passes through often (a file's open, mmap, capable(), a socket's
 * connect and send, fork and exec: README "Performance"). Elsewhere the
 * helper: 6.12's verifier checks each load from a trusted pointer with
 * four linear scans of the kernel's BTF for its __safe_trusted names,
 * which made each of the ninety other programs' verification 45-65 ms
 * under TCG, half of an agent's start (README "Testing").
 */
#define SBL_TASK_CACHE	1
#define SBL_ID_LOADS	3

static __always_inline struct sandbox *sandbox_lookup_tv(__u64 *cgid,
							  struct sandbox *snap,
							  int *state,
							  int how,
							  struct task_verdict_val **tvp)
{
	bool task_cache = how & SBL_TASK_CACHE;
	struct task_verdict_val *tv;
	struct task_struct *t = NULL;
	struct cg_cache_val *c, nc;
	struct anc_scan scan = {};
	struct sandbox *sb;
	__u64 id, g;

	if ((how & SBL_ID_LOADS) == SBL_ID_LOADS) {
		t = bpf_get_current_task_btf();
		id = t->cgroups->dfl_cgrp->kn->id;
		/* 0 only if a load faulted (never seen): the helper then. */
		if (!id)
			id = bpf_get_current_cgroup_id();
	} else {
		id = bpf_get_current_cgroup_id();
		if (task_cache)
			t = bpf_get_current_task_btf();
	}

	*cgid = id;
	*state = SANDBOX_OUTSIDE;
	/* Read the generation before any lookup: a sandbox added meanwhile
	 * bumps sandbox_gen after its entry exists, so an "outside" cached
	 * from lookups that missed it is stale on arrival. */
	nc.gen = sandbox_gen;
	if (cg_fast_get(id, nc.gen, &g, snap)) {
		if (!(g & SANDBOX_CACHE_INSIDE)) {
			if (!(g & SANDBOX_CACHE_CLASSIFIED))
				*state = SANDBOX_NONE;
			return NULL;
		}
		/* A task in a sandbox: the BPF-LSM programs read its storage
		 * all the same, for setup_over (lsm_who_body()). */
		if (!task_cache) {
			*state = SANDBOX_IN;
			return sandbox_resolve(snap);
		}
	}
	if (task_cache) {
		/* The verdict in one lookup: the task's own last one, while
		 * it stays in that cgroup and nothing was written. An entry
		 * kept there is the map's, its slot resolved here as below
		 * (a reload flips slots without writing entries). */
		tv = bpf_task_storage_get(&task_verdict, t, 0, 0);
		if (tv && tv->cgid == id &&
		    (tv->gen & ~(SANDBOX_CACHE_CLASSIFIED | SANDBOX_CACHE_INSIDE)) == nc.gen) {
			/* Not copied into cg_fast when its slot holds
			 * another cgroup's verdict: a hook that runs in
			 * interrupt context with task storage (task_kill,
			 * from a USB URB's completion) could read the
			 * interrupted task's verdict half written, and
			 * would hand it to the whole cgroup. */
			if (tv->gen & SANDBOX_CACHE_INSIDE) {
				*snap = tv->entry;
				*state = SANDBOX_IN;
				if (tvp)
					*tvp = tv;
				return sandbox_resolve(snap);
			}
			if (!(tv->gen & SANDBOX_CACHE_CLASSIFIED))
				*state = SANDBOX_NONE;
			return NULL;
		}
	}
	sb = bpf_map_lookup_elem(&sandboxes, &id);
	if (sb) {
		*snap = *sb;
		if (snap->policy_id != SANDBOX_ENTRY_SANDBOX) {
			/* a watched directory, or outside */
			task_verdict_put(task_cache, id, nc.gen | SANDBOX_CACHE_CLASSIFIED, NULL);
			return NULL;
		}
		*state = SANDBOX_IN;
		/* Its own entry, copied before the slot is resolved. */
		tv = task_verdict_put(task_cache, id, nc.gen, snap);
		if (tvp)
			*tvp = tv;
		return sandbox_resolve(snap);
	}
	c = bpf_map_lookup_elem(&cg_cache, &id);
	if (c && (c->gen & ~SANDBOX_CACHE_CLASSIFIED) == nc.gen) {
		if (!(c->gen & SANDBOX_CACHE_CLASSIFIED))
			*state = SANDBOX_NONE;
		task_verdict_put(task_cache, id, c->gen, NULL);
		return NULL;
	}
	/* bpf_get_current_ancestor_cgroup_id() returns 0 beyond the task's
	 * own level, so scan from the root down and keep the deepest hit. */
	bpf_loop(SANDBOX_MAX_DEPTH, anc_scan_step, &scan, 0);
	if (scan.found)
		*snap = scan.snap;
	if (!scan.found || snap->policy_id == SANDBOX_ENTRY_OUTSIDE) {
		if (scan.found)
			nc.gen |= SANDBOX_CACHE_CLASSIFIED;
		else
			*state = SANDBOX_NONE;
		bpf_map_update_elem(&cg_cache, &id, &nc, BPF_ANY);
		task_verdict_put(task_cache, id, nc.gen, NULL);
		return NULL;
	}
	return sandbox_nearest(snap, id, state);
}

static __always_inline struct sandbox *sandbox_lookup(__u64 *cgid,
						       struct sandbox *snap,
						       int *state,
						       bool task_cache)
{
	return sandbox_lookup_tv(cgid, snap, state,
				 task_cache ? SBL_TASK_CACHE : 0, NULL);
}

static __always_inline struct sandbox *sandbox_current(__u64 *cgid,
							struct sandbox *snap)
{
	int state;

	return sandbox_lookup(cgid, snap, &state, true);
}

/* sandbox_current() on a hook every task passes through often. */
static __always_inline struct sandbox *sandbox_current_hot(__u64 *cgid,
							    struct sandbox *snap)
{
	int state;

	return sandbox_lookup_tv(cgid, snap, &state, SBL_ID_LOADS, NULL);
}

/* A record's type for a decision about sb (EV_TYPE_PENDING). */
static __always_inline __u8 ev_type(const struct sandbox *sb, bool audit)
{
	__u8 t = audit ? EV_AUDIT : EV_DENY;

	if (sb && (sb->slot & SANDBOX_SNAP_PENDING))
		t |= EV_TYPE_PENDING;
	return t;
}

/*
 * Fill and submit one record. The caller has already decided the verdict;
 * this only reports it, and counts the record as lost when the ring is
 * full, so the decision never depends on ring space.
 */
static __always_inline struct event *event_reserve(void)
{
	struct event *e;
	__u64 seq = __sync_fetch_and_add(&ev_seq, 1);

	__sync_fetch_and_add(&ev_produced, 1);
	e = bpf_ringbuf_reserve(&rb, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&ev_lost, 1);
		return NULL;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->seq = seq;
	return e;
}

static __always_inline void event_fill_task(struct event *e, __u64 cgid,
					    __u32 policy_id, __u8 type)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	e->ts_boot_ns = bpf_ktime_get_boot_ns();
	e->cgroup_id = cgid;
	e->policy_id = policy_id;
	e->pid = pid_tgid >> 32;
	e->tid = (__u32)pid_tgid;
	e->uid = (__u32)bpf_get_current_uid_gid();
	e->type = type;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
}

#endif /* STOCKADE_COMMON_BPF_H */
