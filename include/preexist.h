/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Joins (issue 14, fds held from before confinement), shared by
 * bpf/preexist.bpf.c and agent/preexist.c. A process that enters a
 * confined cgroup from outside carries the fds it opened there, which no
 * BPF-LSM program judged: the kernel tells the agent, which walks that
 * process's fds at once. Two ways in:
 *   JOIN_MOVED   a write to cgroup.procs (tracepoint cgroup_attach_task),
 *                by anyone: the mover is outside every sandbox, or the
 *                BPF-LSM programs refused the move;
 *   JOIN_CLONED  clone3(CLONE_INTO_CGROUP) from a parent in another
 *                cgroup (tracepoint sched_process_fork, the child's
 *                cgroup not its parent's).
 * A process forked inside a sandbox is no join: its fds are its parent's,
 * checked when the parent came in.
 *
 * Raw tracepoints, not BPF trampolines: they load on every kernel the
 * agent runs on, with BPF-LSM or without (then only sockets are judged).
 * The notices have a ring of their own, not `rb`: they are not records,
 * and produced == logged + lost holds for `rb` alone. A notice that finds
 * the ring full is counted in join_lost, and the agent then walks every
 * confined cgroup's processes instead (none is missed, only later).
 */
#ifndef STOCKADE_PREEXIST_H
#define STOCKADE_PREEXIST_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define JOIN_RING_SIZE	(64 * 1024)

enum join_how {
	JOIN_MOVED = 1,
	JOIN_CLONED = 2,
};

struct join_event {
	__u64 cgroup_id;	/* the confined cgroup it entered */
	__u32 pid;		/* thread-group id */
	__u32 how;		/* enum join_how */
};

#endif
