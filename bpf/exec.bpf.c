// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Exec and exit records (include/exec.h): what ran in a sandbox, with
 * its parent's image, and how each process ended. Tracepoints, not
 * BPF-LSM hooks: an exec that reaches sched_process_exec has succeeded
 * (a refused one ended in file_open, with its deny record), and
 * sched_process_exit sees every end, by a signal too. They are BPF
 * trampolines like the LSM programs, so the agent loads and pins them
 * with those (agent/lsm_table.c: guarantee exec_records).
 *
 * Prototypes (btf_trace_*): sched_process_exec (task, old_pid, bprm) and
 * sched_process_fork (parent, child) are the same on 6.1, 6.12 and 6.18;
 * sched_process_exit is (task) on 6.1 and 6.12 and (task, group_dead) on
 * 6.18: only the task is read, and the group's end is told by
 * signal->live, which do_exit() has decremented before the tracepoint on
 * all three.
 */
#include "lsm.bpf.h"
#include "exec.h"

#define PAGE_KB	4	/* x86_64: signal->maxrss counts pages */

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct exec_state);
} exec_tasks SEC(".maps");

/* Per-CPU: one record being built and a walk() buffer. */
struct exec_scratch {
	struct exec_event ev;
	char buf[FILE_BUF_SIZE * 2];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct exec_scratch);
} exec_scratch SEC(".maps");

/*
 * Take a sequence number and count the record as produced; false (and
 * counted lost) when a record of len bytes would leave less room than the
 * denials' reserve (include/exec.h). The verdict of anything never
 * depends on this.
 */
static __always_inline bool exec_seq(__u64 *seq, __u64 len)
{
	__u64 avail, size;

	*seq = __sync_fetch_and_add(&ev_seq, 1);
	__sync_fetch_and_add(&ev_produced, 1);
	avail = bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA);
	size = bpf_ringbuf_query(&rb, BPF_RB_RING_SIZE);
	/* + the ring's 8-byte header per record */
	if ((avail + len + 8) * 16 > size * EXEC_RING_FILL_MAX) {
		__sync_fetch_and_add(&ev_lost, 1);
		return false;
	}
	return true;
}

/* The image a task's group runs whose exec we did not see: named by the
 * leader's fork time (include/exec.h). */
static __always_inline void ref_unseen(struct exec_ref *r, struct task_struct *t)
{
	struct task_struct *l = BPF_CORE_READ(t, group_leader);

	r->ns = BPF_CORE_READ(l, start_boottime);
	r->pid = BPF_CORE_READ(l, tgid);
	r->unseen = 1;
}

/* The path of (mnt, dentry) into out (EXEC_PATH_MAX); false when it
 * was cut or too deep. */
static __always_inline bool exec_path(struct exec_scratch *s, char *out,
				      struct vfsmount *mnt, struct dentry *d)
{
	long off = walk(s->buf, mnt, d);
	long n;

	if (off < 0) {
		out[0] = '\0';
		return false;
	}
	n = bpf_probe_read_kernel_str(out, EXEC_PATH_MAX, &s->buf[off & MASK]);
	return n > 0 && n < EXEC_PATH_MAX;
}

/* A fork in a sandbox: the child runs its parent's image until it execs,
 * and that image is its exec's parent. Threads share their leader's. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(stk_exec_fork, struct task_struct *parent, struct task_struct *child)
{
	struct sandbox snap;
	struct exec_state *ps, *cs;
	struct exec_ref r;
	__u64 cgid;

	/* Plain loads, not probe reads: every fork on the host pays this. */
	if (child->pid != child->tgid)
		return 0;
	if (!sandbox_current_hot(&cgid, &snap))
		return 0;
	/* Fields walked directly, not read: the helper wants a BTF pointer. */
	ps = bpf_task_storage_get(&exec_tasks, parent->group_leader, 0, 0);
	if (ps && ps->self.ns)
		r = ps->self;
	else
		ref_unseen(&r, parent);
	cs = bpf_task_storage_get(&exec_tasks, child, 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!cs)
		return 0;	/* its exec then names the parent from its fork time */
	cs->self = r;
	cs->parent = r;
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(stk_exec, struct task_struct *p, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	struct exec_scratch *s;
	struct exec_event *ev;
	struct exec_state *st;
	struct sandbox snap, *sb;
	struct file *file;
	struct inode *ino;
	struct mm_struct *mm;
	struct fs_struct *fs;
	const char *fname, *interp;
	unsigned long a0, a1;
	__u64 cgid, seq, len;
	__u32 zero = 0;

	sb = sandbox_current_hot(&cgid, &snap);
	if (!sb)
		return 0;
	/* After de_thread() the exec'ing task leads its group. */
	st = bpf_task_storage_get(&exec_tasks, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	s = bpf_map_lookup_elem(&exec_scratch, &zero);
	if (!s)
		return 0;
	ev = &s->ev;
	ev->flags = 0;
	ev->prev.ns = 0;
	ev->prev.pid = 0;
	ev->prev.unseen = 0;
	if (st && st->parent.ns) {
		ev->parent = st->parent;
		if (st->self.ns && !st->self.unseen &&
		    st->self.pid == (__u32)BPF_CORE_READ(p, tgid) &&
		    st->self.ns != st->parent.ns) {
			ev->prev = st->self;	/* its own earlier exec */
			ev->flags |= EXEC_F_PREV;
		}
	} else {
		/* Forked before the programs were attached, or outside. */
		struct task_struct *rp = p->real_parent;
		struct exec_state *ps;

		ps = bpf_task_storage_get(&exec_tasks, rp->group_leader, 0, 0);
		if (ps && ps->self.ns)
			ev->parent = ps->self;
		else
			ref_unseen(&ev->parent, rp);
	}
	if (ev->parent.unseen)
		ev->flags |= EXEC_F_PARENT_UNSEEN;
	ev->self.ns = bpf_ktime_get_boot_ns();
	ev->self.pid = BPF_CORE_READ(p, tgid);
	ev->self.unseen = 0;
	if (st) {
		st->self = ev->self;
		st->parent = ev->parent;
	}
	if (!exec_seq(&seq, sizeof(*ev)))	/* at most: argv is cut to fit */
		return 0;

	__builtin_memset(&ev->e, 0, sizeof(ev->e));
	ev->e.seq = seq;
	event_fill_task(&ev->e, cgid, sb->policy_id, EV_EXEC);
	if (sb->slot & SANDBOX_SNAP_PENDING)
		ev->e.type |= EV_TYPE_PENDING;
	ev->e.ts_boot_ns = ev->self.ns;
	ev->ppid = BPF_CORE_READ(p, real_parent, tgid);
	ev->euid = BPF_CORE_READ(p, cred, euid.val);

	fname = BPF_CORE_READ(bprm, filename);
	interp = BPF_CORE_READ(bprm, interp);
	bpf_probe_read_kernel_str(ev->filename, EXEC_PATH_MAX, fname);
	ev->interp[0] = '\0';
	if (interp != fname) {
		/* #! (or binfmt_misc): bprm->file is now the interpreter. */
		ev->flags |= EXEC_F_SCRIPT;
		if (bpf_probe_read_kernel_str(ev->interp, EXEC_PATH_MAX, interp) ==
		    EXEC_PATH_MAX)
			ev->flags |= EXEC_F_INTERP_TRUNC;
	}
	file = BPF_CORE_READ(bprm, file);
	if (!exec_path(s, ev->binary, BPF_CORE_READ(file, f_path.mnt),
		       BPF_CORE_READ(file, f_path.dentry)))
		ev->flags |= EXEC_F_BINARY_TRUNC;
	ino = BPF_CORE_READ(file, f_inode);
	ev->dev = BPF_CORE_READ(ino, i_sb, s_dev);
	ev->ino = BPF_CORE_READ(ino, i_ino);
	ev->nlink = BPF_CORE_READ(ino, __i_nlink);
	fs = BPF_CORE_READ(p, fs);
	if (!exec_path(s, ev->cwd, BPF_CORE_READ(fs, pwd.mnt),
		       BPF_CORE_READ(fs, pwd.dentry)))
		ev->flags |= EXEC_F_CWD_TRUNC;

	/* argv as the new image sees it: its stack, NUL-separated. */
	mm = BPF_CORE_READ(p, mm);
	a0 = BPF_CORE_READ(mm, arg_start);
	a1 = BPF_CORE_READ(mm, arg_end);
	len = a1 > a0 ? a1 - a0 : 0;
	if (len > EXEC_ARGV_MAX) {
		len = EXEC_ARGV_MAX;
		ev->flags |= EXEC_F_ARGV_TRUNC;
	}
	if (bpf_probe_read_user(ev->argv, len & (EXEC_ARGV_MAX * 2 - 1),
				(const void *)a0))
		len = 0;
	ev->argv_len = len;
	len = (len & (EXEC_ARGV_MAX * 2 - 1)) + __builtin_offsetof(struct exec_event, argv);
	if (len > sizeof(*ev))
		len = sizeof(*ev);
	if (bpf_ringbuf_output(&rb, ev, len, 0))
		__sync_fetch_and_add(&ev_lost, 1);
	return 0;
}

/*
 * The end of a thread group in a sandbox (its last thread's exit), for
 * a process with an exec record: one that exec'd there. A process that
 * only forked runs its parent's image, and one that joined the sandbox
 * by itself (echo $$ > cgroup.procs) never exec'd in it: they end with
 * no record, so every exit record pairs with an exec record.
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(stk_exec_exit, struct task_struct *p)
{
	struct exec_state *st;
	struct exit_event *x;
	struct sandbox snap, *sb;
	struct exec_ref self;
	__u64 cgid, seq, now;

	/* Plain loads, not probe reads: every exit on the host pays this. */
	if (p->signal->live.counter != 0)
		return 0;	/* other threads live on */
	st = bpf_task_storage_get(&exec_tasks, p->group_leader, 0, 0);
	if (!st || !st->self.ns || st->self.unseen ||
	    st->self.pid != (__u32)p->tgid)
		return 0;
	self = st->self;
	sb = sandbox_current_hot(&cgid, &snap);
	if (!sb)
		return 0;
	if (!exec_seq(&seq, sizeof(*x)))
		return 0;
	x = bpf_ringbuf_reserve(&rb, sizeof(*x), 0);
	if (!x) {
		__sync_fetch_and_add(&ev_lost, 1);
		return 0;
	}
	__builtin_memset(x, 0, sizeof(*x));
	x->e.seq = seq;
	event_fill_task(&x->e, cgid, sb->policy_id, EV_EXIT);
	if (sb->slot & SANDBOX_SNAP_PENDING)
		x->e.type |= EV_TYPE_PENDING;
	now = x->e.ts_boot_ns;
	x->self = self;
	x->run_ns = now > self.ns ? now - self.ns : 0;
	x->exit_code = BPF_CORE_READ(p, exit_code);
	x->maxrss_kb = BPF_CORE_READ(p, signal, maxrss) * PAGE_KB;
	bpf_ringbuf_submit(x, 0);
	return 0;
}
