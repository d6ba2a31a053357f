// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The setup pass (include/setup.h): who gets one, decided when the kernel
 * moves a task into a cgroup. The checks themselves are in setup.bpf.h,
 * made by every BPF-LSM program through lsm_current().
 */
#include "lsm.bpf.h"

/*
 * The kernel moved task into dst (a write to cgroup.procs, or systemd's
 * doing on a runtime's behalf); current is the mover. Called after the
 * move, for the thread group's leader only (or a thread moved alone, by
 * cgroup.threads): other threads of a moved group get no pass (judged:
 * fail closed). A task moved into a sandbox
 * without a pass is marked there and then, so it can never get one later
 * (include/setup.h).
 */
SEC("tp_btf/cgroup_attach_task")
int BPF_PROG(stk_setup_attach, struct cgroup *dst, const char *path,
	     struct task_struct *task, bool threadgroup)
{
	struct sandbox *sb, snap, dsnap;
	struct setup_grant *g;
	struct setup_state *st;
	__u64 cgid, dst_id, now;
	bool inside, self, refuse;
	int state;

	/* A move within a cgroup v1 hierarchy (a hybrid host: runc joins
	 * each controller's hierarchy as well as the unified one) is not a
	 * move between sandboxes: the task's cgroup v2 stays what it was.
	 * Taken for one, by an id that another hierarchy numbers, it began
	 * a second pass or ended the first (tests/vm/setup.sh hybrid). */
	if (!cgroup_is_v2(dst))
		return 0;
	dst_id = BPF_CORE_READ(dst, kn, id);
	g = grant_of(dst, &dsnap, &inside);
	st = bpf_task_storage_get(&setup_tasks, task, 0, 0);
	if (!inside) {
		/* Moved out of every sandbox: a pass it had ends. */
		if (st && st->deadline_ns)
			setup_end(st, dsnap.policy_id, dst_id, EV_OP_SETUP_MOVED,
				  NULL, bpf_ktime_get_boot_ns());
		return 0;
	}
	/* Only a mover outside every sandbox (pending is inside), and not
	 * the task itself: a process that joins a cgroup on its own (`echo
	 * $$ > cgroup.procs`, a probe's --cgroup) is the sandbox's first
	 * process, judged from its first syscall; a runtime's init is moved
	 * by its parent (runc) or by systemd. */
	sb = sandbox_lookup(&cgid, &snap, &state, true);
	self = (__u32)BPF_CORE_READ(task, tgid) ==
	       (__u32)(bpf_get_current_pid_tgid() >> 32);
	/* A thread moved alone (cgroup.threads, a threaded cgroup): the
	 * tracepoint fires for it, not its leader; as the other threads of a
	 * moved process, it gets no pass. */
	refuse = sb || self || !g || task->pid != task->tgid;
	if (!st) {
		/* Made whole in one step: the moved task runs on another CPU,
		 * and a first judged call of its own that found the storage
		 * made but not yet filled would mark it judged for good, with
		 * the pass begun here all the same (begin record, then every
		 * call refused: tests/vm/setup-race.sh under load). */
		struct setup_state init = {};

		now = bpf_ktime_get_boot_ns();
		if (refuse)
			init.flags = SETUP_F_SANDBOXED;
		else
			setup_fill(&init, now, g, dst_id,
				   mntns_of(bpf_get_current_task_btf()));
		st = bpf_task_storage_get(&setup_tasks, task, &init,
					  BPF_LOCAL_STORAGE_GET_F_CREATE);
		/* NULL also when the task made it in between (BPF_NOEXIST). */
		if (!st)
			st = bpf_task_storage_get(&setup_tasks, task, 0, 0);
		/* No storage (memory, or the helper busy on this CPU): the
		 * task stays unmarked, and its first judged call decides as
		 * for a move this tracepoint did not see. */
		if (!st)
			return 0;
		if (!refuse && st->begin_ns == now && st->cgroup_id == dst_id) {
			/* Ours: the task made none meanwhile. */
			lsm_record(dsnap.policy_id, dst_id, EV_SETUP, EV_KIND_SETUP,
				   EV_OP_SETUP_BEGIN, 0, NULL, NULL,
				   BPF_CORE_READ(task, tgid), 0, g->deadline_ms);
			return 0;
		}
		/* Else the task's own first judged call made it first (or it
		 * is ours, a refusal): decided below as any existing one. */
	}
	if (refuse) {
		/* Judged in this sandbox from now on. */
		if (st->deadline_ns)
			setup_end(st, dsnap.policy_id, dst_id, EV_OP_SETUP_MOVED,
				  NULL, bpf_ktime_get_boot_ns());
		st->flags |= SETUP_F_SANDBOXED;
		return 0;
	}
	if (st->deadline_ns && st->cgroup_id == dst_id) {
		/* Begun already, at its first judged call (setup_pass()):
		 * the mover's namespace is the one to leave. */
		st->mntns = mntns_of(bpf_get_current_task_btf());
		return 0;
	}
	if (st->flags & SETUP_F_SANDBOXED) {
		/* Judged in a sandbox before: never a pass. */
		lsm_record(dsnap.policy_id, dst_id, EV_SETUP, EV_KIND_SETUP,
			   EV_OP_SETUP_REFUSED, 0, NULL, NULL,
			   BPF_CORE_READ(task, tgid), 0, 0);
		return 0;
	}
	/* An existing state (a task moved out and back, or whose pass an
	 * exec ended) is filled in place: the deadline last, so a call of
	 * the task's that sees it sees the rest; one that marks the task
	 * meanwhile wins (setup_pass(): the mark over the deadline). */
	now = bpf_ktime_get_boot_ns();
	setup_fill(st, now, g, dst_id, mntns_of(bpf_get_current_task_btf()));
	lsm_record(dsnap.policy_id, dst_id, EV_SETUP, EV_KIND_SETUP,
		   EV_OP_SETUP_BEGIN, 0, NULL, NULL, BPF_CORE_READ(task, tgid),
		   0, g->deadline_ms);
	return 0;
}
