/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Exec and exit records (issue 14), shared by bpf/exec.bpf.c and
 * agent/exec.c. Not refusals: what ran in a sandbox, and how it ended.
 *
 * They go through the one ring `rb` and take their `seq` like every other
 * record (include/events.h): a record that finds no room is counted lost,
 * so produced == logged + lost still holds. Exec and exit are frequent,
 * and a fork-exec loop must not crowd the denials out of the ring, so they
 * keep a reserve: an exec or exit record is written only when, with it
 * (at its largest), at most EXEC_RING_FILL_MAX sixteenths of the ring
 * are unread; else it is counted lost at once, and the rest stays for
 * the denials, which may fill the ring to the end.
 *
 * exec_id. Each image (one successful execve) is named by the boot,
 * its exec time and its process: the agent writes
 * "<boot_id>-<ktime_ns>-<pid>", boot_id the 32 hex digits of
 * /proc/sys/kernel/random/boot_id without dashes, ktime_ns the exec's
 * CLOCK_BOOTTIME in ns (decimal), pid the thread-group id. A process that
 * runs an image whose exec nobody saw (exec'd before the programs were
 * attached, or outside every sandbox) gets the same form built from its
 * fork time (task->start_boottime) instead: such an id has
 * EXEC_F_*_UNSEEN set and the record says so (`parent_exec_seen`).
 *
 * The state each process carries (task storage `exec_tasks`, on its
 * thread group's leader): the exec_id of the image it runs, and that of
 * its real parent's image at its fork (copied at fork), which is its
 * exec's `parent_exec_id`.
 */
#ifndef STOCKADE_EXEC_H
#define STOCKADE_EXEC_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#include "events.h"

/* Record types beside enum ev_type (include/events.h), same ring. */
#define EV_EXEC		16
#define EV_EXIT		17

#define EXEC_PATH_MAX	256	/* bytes of binary, interpreter, cwd */
#define EXEC_ARGV_MAX	1024	/* bytes of argv (NUL-separated) */
#define EXEC_RING_FILL_MAX	12	/* of 16: the 4/16 left are the denials' */

enum exec_flags {
	EXEC_F_ARGV_TRUNC = 1 << 0,	/* argv longer than EXEC_ARGV_MAX */
	EXEC_F_BINARY_TRUNC = 1 << 1,	/* a path did not fit, or too deep */
	EXEC_F_INTERP_TRUNC = 1 << 2,
	EXEC_F_CWD_TRUNC = 1 << 3,
	EXEC_F_PARENT_UNSEEN = 1 << 4,	/* parent id from its fork time */
	EXEC_F_SCRIPT = 1 << 6,		/* bprm->interp != bprm->filename */
	EXEC_F_PREV = 1 << 7,		/* the process exec'd before: prev_* */
};

/* An image's name: exec time (CLOCK_BOOTTIME ns) and tgid. */
struct exec_ref {
	__u64 ns;
	__u32 pid;
	__u32 unseen;		/* 1: ns is the fork time, not an exec's */
};

/* Task storage of a thread group leader (bpf/exec.bpf.c). */
struct exec_state {
	struct exec_ref self;	/* the image it runs */
	struct exec_ref parent;	/* its real parent's image at fork */
};

/*
 * EV_EXEC. The common part (e: pid is the tgid, uid the real uid, comm
 * the new image's), then the exec's. Variable length: argv is last and
 * only argv_len bytes of it are sent.
 */
struct exec_event {
	struct event e;
	struct exec_ref self, parent, prev;
	__u32 ppid;		/* real parent's tgid */
	__u32 euid;
	__u64 dev;		/* the executed file's (for a script: its interpreter's) */
	__u64 ino;
	__u32 nlink;
	__u16 flags;		/* enum exec_flags */
	__u16 argv_len;		/* bytes in argv, NULs included */
	char filename[EXEC_PATH_MAX];	/* as passed to execve (bprm->filename) */
	char binary[EXEC_PATH_MAX];	/* bprm->file, resolved */
	char interp[EXEC_PATH_MAX];	/* bprm->interp, for a script */
	char cwd[EXEC_PATH_MAX];
	char argv[EXEC_ARGV_MAX];
};

/* EV_EXIT: the thread group's end (its last thread), for a process
 * that exec'd in a sandbox: every exit record pairs with an exec one. */
struct exit_event {
	struct event e;
	struct exec_ref self;
	__u32 exit_code;	/* task->exit_code: status << 8 | signal */
	__u32 flags;		/* none yet */
	__u64 run_ns;		/* since its exec */
	__u64 maxrss_kb;	/* signal->maxrss: peak RSS of the group */
};

#endif /* STOCKADE_EXEC_H */
