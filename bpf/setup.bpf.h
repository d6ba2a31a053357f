/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The setup pass, BPF side (include/setup.h): the state of each task in
 * setup, the grants the agent writes, and the checks the BPF-LSM programs
 * make. Included by lsm.bpf.h after lsm_record(), which it records with.
 */
#ifndef STOCKADE_SETUP_BPF_H
#define STOCKADE_SETUP_BPF_H

#include "setup.h"

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct setup_state);
} setup_tasks SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct setup_clone);
} setup_clones SEC(".maps") __weak;

/* Owned by the agent (agent/setup.c), which writes a cgroup's grant
 * before the entry that ends its pending state. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SETUP_GRANTS_MAX);
	__type(key, __u64);
	__type(value, struct setup_grant);
} setup_grants SEC(".maps") __weak;

static __always_inline __u32 mntns_of(struct task_struct *t)
{
	return BPF_CORE_READ(t, nsproxy, mnt_ns, ns.inum);
}

/*
 * A pass that begins at now in cgroup cgid, by grant g, to be left from
 * mount namespace mntns: st's fields, its deadline last (an existing
 * state filled in place; a new one is made whole from a local). The
 * barrier keeps the compiler's order; x86 keeps the stores' (TSO), so a
 * call of the task's on another CPU that sees the deadline sees the rest.
 * A weaker CPU (arm64's JIT emits plain stores) may show the deadline
 * with the fields of the pass before: a stale clone_xid never matches a
 * later exec (self_exec_id only grows), a stale mntns is the last
 * mover's.
 */
static __always_inline void setup_fill(struct setup_state *st, __u64 now,
				       const struct setup_grant *g, __u64 cgid,
				       __u32 mntns)
{
	st->begin_ns = now;
	st->cgroup_id = cgid;
	st->mntns = mntns;
	st->clone_xid = 0;
	asm volatile("" ::: "memory");
	st->deadline_ns = now + (__u64)g->deadline_ms * 1000000;
}

/* End t's pass (st) with a record of its length. */
static __always_inline void setup_end(struct setup_state *st, __u32 policy_id,
				      __u64 cgid, __u8 op, const char *name,
				      __u64 now)
{
	__u64 ms = (now - st->begin_ns) / 1000000;

	st->deadline_ns = 0;
	lsm_record(policy_id, cgid, EV_SETUP, EV_KIND_SETUP, op, 0, name, NULL,
		   0, 0, ms > 0xffffffffULL ? 0xffffffffU : (__u32)ms);
}

/*
 * The nearest `sandboxes` entry of dst (itself first): *inside says
 * whether it puts dst in a sandbox (or pending), snap gets it resolved.
 * Returns the grant that covers dst: SETUP_GRANT_SELF on dst's own
 * entry, or SETUP_GRANT_CHILDREN on the nearest ancestor's when dst has
 * no entry yet (new, not yet classified); else NULL.
 */
static __always_inline struct setup_grant *grant_of(struct cgroup *dst,
						    struct sandbox *snap,
						    bool *inside)
{
	struct setup_grant *g;
	struct nearest c;

	*inside = false;
	snap->policy_id = POLICY_ID_CONFLICT;
	nearest_entry(dst, &c);
	if (!c.found)
		return NULL;
	*snap = c.snap;
	/* An OUTSIDE mark, or a watched directory itself: outside. */
	if (snap->policy_id == SANDBOX_ENTRY_OUTSIDE ||
	    (snap->policy_id == SANDBOX_ENTRY_WATCHED && !c.up)) {
		snap->policy_id = POLICY_ID_CONFLICT;
		return NULL;
	}
	*inside = true;
	sandbox_resolve(snap);
	g = bpf_map_lookup_elem(&setup_grants, &c.id);
	if (!g || !(g->flags & (c.up ? SETUP_GRANT_CHILDREN : SETUP_GRANT_SELF)))
		return NULL;
	return g;
}

/*
 * Is the current task, found in sandbox sb, in its setup pass? Then the
 * BPF-LSM programs let it through. Else it is marked as judged in a
 * sandbox, which rules out a pass for it and its children ever after; a
 * pass past its deadline ends here, with its record. No storage (the
 * allocation failed): judged, fail closed. *over: set when the task is
 * marked now (so it can never have a pass: task_verdict_val.setup_over).
 */
static __always_inline bool setup_pass(struct sandbox *sb, __u64 cgid, bool *over)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct setup_grant *g;
	struct setup_state *st;
	struct sandbox dsnap;
	bool inside;
	__u64 now;

	st = bpf_task_storage_get(&setup_tasks, t, 0, 0);
	if (!st) {
		/*
		 * Never judged, never marked, never seen moved: in a cgroup
		 * that grants a pass, that is a task the kernel moved here
		 * whose move's tracepoint has not run yet (it fires after the
		 * migration, and the moved task may run first), or one an
		 * outsider started straight into it (clone3 with
		 * CLONE_INTO_CGROUP). Its pass begins now. A task born inside
		 * inherits its parent's state at fork, and a cgroup that was
		 * there before this agent grants no pass to itself. Only a
		 * thread group's leader: the move's tracepoint fires for the
		 * leader alone, and the other threads of a moved process (or
		 * of one that joined on its own) get no pass (setup.bpf.c).
		 */
		struct setup_state init = {};

		/* Made whole in one step, as the move's tracepoint makes it
		 * (setup.bpf.c), which may run at the same time on the
		 * mover's CPU: each finds the other's complete or none. */
		now = bpf_ktime_get_boot_ns();
		g = grant_of(BPF_CORE_READ(t, cgroups, dfl_cgrp), &dsnap, &inside);
		if (g && inside && t->pid == t->tgid)
			setup_fill(&init, now, g, cgid, mntns_of(t));
		else
			init.flags = SETUP_F_SANDBOXED;
		st = bpf_task_storage_get(&setup_tasks, t, &init,
					  BPF_LOCAL_STORAGE_GET_F_CREATE);
		/* NULL also when the tracepoint made it in between (the
		 * kernel creates with BPF_NOEXIST): then it is there. */
		if (!st)
			st = bpf_task_storage_get(&setup_tasks, t, 0, 0);
		if (!st)
			return false;
		if (g && init.deadline_ns && st->begin_ns == now &&
		    st->cgroup_id == cgid) {
			lsm_record(dsnap.policy_id, cgid, EV_SETUP, EV_KIND_SETUP,
				   EV_OP_SETUP_BEGIN, 0, NULL, NULL,
				   BPF_CORE_READ(t, tgid), 0, g->deadline_ms);
			return true;
		}
		/* No grant (marked below), or the tracepoint's, made first. */
	}
	/* The mark wins over a deadline: a pass the tracepoint began on an
	 * existing state while this task's call marked it (the two write
	 * it on two CPUs) is none. */
	if (st->deadline_ns && !(st->flags & SETUP_F_SANDBOXED)) {
		now = bpf_ktime_get_boot_ns();
		if (now < st->deadline_ns)
			return true;
		setup_end(st, sb->policy_id, cgid, EV_OP_SETUP_DEADLINE, NULL, now);
	}
	st->flags |= SETUP_F_SANDBOXED;
	*over = true;
	return false;
}

/* Is t in a setup pass now (the target of a ptrace or a signal)? */
static __always_inline bool in_setup(struct task_struct *t)
{
	struct setup_state *st = bpf_task_storage_get(&setup_tasks, t, 0, 0);

	return st && st->deadline_ns && !(st->flags & SETUP_F_SANDBOXED) &&
	       bpf_ktime_get_boot_ns() < st->deadline_ns;
}

/*
 * An exec by the current task (lsm/file_open of the binary, before it is
 * judged): the payload's, which ends the pass, unless it runs, in its
 * mover's mount namespace, a copy with no path there (unattached: a
 * memfd, or a file on a detached mount): a runtime re-executing its own
 * clone, as runc does (a memfd, or a read-only bind mount made with
 * fsmount/open_tree, by version). The same exec then opens its ELF
 * interpreter (ld.so, a real file): known by the task's self_exec_id,
 * which the kernel bumps only once the exec has succeeded, it does not
 * end the pass either.
 * binary: FILE is the exec's binary for certain (bprm_check_security's
 * first round), never an interpreter: the mark does not hold for it. A
 * clone's exec that failed after its open (ENOEXEC, or an
 * AT_EXECVE_CHECK, which opens and returns) leaves its mark at the same
 * self_exec_id, and the task's next exec, the payload's, would pass for
 * that clone's interpreter at its binary's open: its bprm_check ends the
 * pass then, and judges the binary.
 */
static __always_inline bool setup_exec(struct file *file, bool unattached,
				       bool binary)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct sandbox *sb, snap;
	struct setup_state *st;
	struct setup_clone *c;
	__u64 cgid, xid;

	st = bpf_task_storage_get(&setup_tasks, t, 0, 0);
	if (!st || !st->deadline_ns || (st->flags & SETUP_F_SANDBOXED)) {
		/* No pass (yet): a clone's exec is noted, for a pass that
		 * begins before its interpreter's open (include/setup.h,
		 * struct setup_clone), and any other exec drops the note a
		 * failed clone's exec left at the same self_exec_id. Never
		 * for a task judged in a sandbox, which can have no pass. No
		 * storage: a pass that begins within this exec ends at its
		 * interpreter (closed). */
		if (!binary || (st && (st->flags & SETUP_F_SANDBOXED)))
			return false;
		c = bpf_task_storage_get(&setup_clones, t, 0,
					 unattached ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
		if (c && unattached) {
			c->xid1 = BPF_CORE_READ(t, self_exec_id) + 1;
			c->mntns = mntns_of(t);
		} else if (c) {
			c->xid1 = 0;
		}
		return false;
	}
	xid = BPF_CORE_READ(t, self_exec_id);
	if (mntns_of(t) == st->mntns && unattached) {
		st->clone_xid = xid + 1;
		return false;
	}
	if (!binary) {
		/* The interpreter of the clone's exec, noted in the pass or
		 * before it began (then made in the mover's namespace, the
		 * task's still). Used once: the exec opens one. */
		if (st->clone_xid == xid + 1)
			return false;
		c = bpf_task_storage_get(&setup_clones, t, 0, 0);
		if (c && c->xid1 == xid + 1 && c->mntns == st->mntns &&
		    c->mntns == mntns_of(t)) {
			c->xid1 = 0;
			return false;
		}
	}
	sb = sandbox_current(&cgid, &snap);
	setup_end(st, sb ? sb->policy_id : POLICY_ID_CONFLICT, cgid,
		  EV_OP_SETUP_EXEC,
		  (const char *)BPF_CORE_READ(file, f_path.dentry, d_name.name),
		  bpf_ktime_get_boot_ns());
	return true;
}

/*
 * lsm/task_alloc: a child inherits its parent's pass (same deadline: it
 * ends its own by its exec) and its mark. The parent is marked first if
 * it is in a sandbox and was never judged, so no child of a sandboxed task
 * goes unmarked. Returns 0, or -ENOMEM (the fork fails: a child that
 * cannot carry the mark could later get a pass).
 */
static __always_inline int setup_inherit(struct task_struct *child)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct setup_state *p, *c;
	struct sandbox *sb, snap;
	bool over = false;
	__u64 cgid;

	p = bpf_task_storage_get(&setup_tasks, t, 0, 0);
	if (!p) {
		sb = sandbox_current(&cgid, &snap);
		if (!sb)
			return 0;
		setup_pass(sb, cgid, &over);	/* makes its storage, and marks it */
		p = bpf_task_storage_get(&setup_tasks, t, 0, 0);
		if (!p)
			return -12;	/* ENOMEM */
	}
	if (!p->deadline_ns && !(p->flags & SETUP_F_SANDBOXED))
		return 0;
	c = bpf_task_storage_get(&setup_tasks, child, 0,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!c)
		return -12;
	c->deadline_ns = p->flags & SETUP_F_SANDBOXED ? 0 : p->deadline_ns;
	c->begin_ns = p->begin_ns;
	c->cgroup_id = p->cgroup_id;
	c->mntns = p->mntns;
	c->flags = p->flags;
	c->clone_xid = 0;
	return 0;
}

#endif /* STOCKADE_SETUP_BPF_H */
