/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The record every BPF program writes into the one ring buffer `rb`.
 *
 * Sequence numbers: every record the kernel produces takes the next value
 * of the global counter `seq` before it tries to reserve ring space, and
 * the agent takes its own records' numbers from the same counter. So a
 * reader sees a gap in `seq` exactly where records were lost, and every
 * lost record is also counted in `lost`, which the agent turns into
 * `event: lost` records: produced == logged + lost, always.
 * The verdict never depends on whether the reservation succeeded.
 */
#ifndef STOCKADE_EVENTS_H
#define STOCKADE_EVENTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define EV_COMM_LEN	16
#define EV_RINGBUF_DEFAULT	(4u << 20)	/* bytes; power of two */

enum ev_type {
	EV_DENY = 1,
	EV_AUDIT = 2,
	EV_SETUP = 3,	/* not a refusal: a setup pass began or ended */
};
/* Or'ed into a record's type: the cgroup was pending, not yet classified
 * by the agent (include/sandbox.h, zero window); "pending": true. */
#define EV_TYPE_PENDING	0x80

enum ev_kind {
	EV_KIND_CONNECT = 1,
	EV_KIND_SENDMSG = 2,
	EV_KIND_SOCKET = 3,
	/* BPF-LSM; these records are struct file_event */
	EV_KIND_FILE = 4,
	EV_KIND_BPF = 5,
	EV_KIND_PTRACE = 6,
	EV_KIND_SIGNAL = 7,
	EV_KIND_MOUNT = 8,
	EV_KIND_CGROUP = 9,
	EV_KIND_UNIX = 10,
	EV_KIND_USERNS = 11,
	EV_KIND_FD_RECEIVE = 12,
	EV_KIND_TASK = 13,	/* prlimit, nice, scheduler, ioprio, SIGIO */
	/* Least privilege (issue 11). All struct file_event but BIND and
	 * LISTEN, which use the network layout (ev_kind_is_net()). */
	EV_KIND_CAPABILITY = 14,	/* sig: the CAP_* number */
	EV_KIND_KERNEL = 15,	/* kernel code, lockdown, clock, syslog, acct... */
	EV_KIND_PERF = 16,	/* arg: perf_event_attr.type; target_pid */
	EV_KIND_NETLINK = 17,	/* arg: netlink protocol; sig: nlmsg_type */
	EV_KIND_BIND = 18,	/* network layout: daddr/dport = local address */
	EV_KIND_LISTEN = 19,	/* network layout: daddr/dport = local address */
	EV_KIND_SOCKOPT = 20,	/* arg: level; sig: optname */
	EV_KIND_KEY = 21,	/* sig: key serial */
	EV_KIND_IPC = 22,	/* sig: SysV id; path: mqueue name */
	EV_KIND_NOTIFY = 23,	/* inotify/fanotify/dnotify mark; arg: mask */
	/* Type EV_SETUP (include/setup.h): op begin (target_pid the moved
	 * task, the record's task its mover), exec/deadline (arg: the
	 * pass's length in ms; path: the exec'd file), refused. */
	EV_KIND_SETUP = 24,
	EV_KIND_MAX = 32,	/* LIMITS_KINDS: every kind has a counter */
};

/* Records of these kinds are struct event (the network layout); every
 * other kind is a struct file_event. */
static inline int ev_kind_is_net(unsigned int kind)
{
	return kind == EV_KIND_CONNECT || kind == EV_KIND_SENDMSG ||
	       kind == EV_KIND_SOCKET || kind == EV_KIND_BIND ||
	       kind == EV_KIND_LISTEN;
}

/* `op` of kind file (and fd_receive: open_read/open_write). */
enum ev_op {
	EV_OP_OPEN_READ = 1,
	EV_OP_OPEN_WRITE = 2,
	EV_OP_CREATE = 3,
	EV_OP_MKDIR = 4,
	EV_OP_RMDIR = 5,
	EV_OP_UNLINK = 6,
	EV_OP_RENAME = 7,
	EV_OP_LINK = 8,
	EV_OP_SYMLINK = 9,
	EV_OP_TRUNCATE = 10,
	EV_OP_CHMOD = 11,
	EV_OP_CHOWN = 12,
	EV_OP_SETXATTR = 13,
	EV_OP_EXEC = 14,
	EV_OP_REMOVEXATTR = 15,
	/* mount kind */
	EV_OP_MOUNT = 16,
	EV_OP_UMOUNT = 17,
	EV_OP_MOVE_MOUNT = 18,
	EV_OP_PIVOT_ROOT = 19,
	EV_OP_CHROOT = 20,
	/* cgroup kind */
	EV_OP_CGROUP_MIGRATE = 21,
	EV_OP_CLONE_INTO_CGROUP = 22,
	/* file kind: an ioctl refused outright (TIOCSTI, TIOCLINUX, SETFLAGS) */
	EV_OP_IOCTL = 23,
	/* task kind */
	EV_OP_PRLIMIT = 24,
	EV_OP_SETNICE = 25,
	EV_OP_SETSCHEDULER = 26,
	EV_OP_SETIOPRIO = 27,
	EV_OP_SIGIO = 28,
	EV_OP_MKNOD_DEVICE = 29,	/* file kind: mknod of a char/block device */
	/* kernel kind */
	EV_OP_LOAD_MODULE = 30,		/* init_module, finit_module */
	EV_OP_LOAD_KEXEC = 31,		/* kexec_load, kexec_file_load */
	EV_OP_LOAD_FIRMWARE = 32,
	EV_OP_LOAD_DATA = 33,		/* other kernel_load_data/read_file ids */
	EV_OP_MODULE_REQUEST = 34,	/* path: the module name asked for */
	EV_OP_LOCKDOWN = 35,		/* arg: enum lockdown_reason */
	EV_OP_SETTIME = 36,
	EV_OP_SYSLOG = 37,		/* arg: the syslog action */
	EV_OP_ACCT = 38,		/* path: the accounting file */
	EV_OP_USERFAULTFD = 39,
	EV_OP_PERF_OPEN = 40,		/* perf kind */
	EV_OP_DELETE_MODULE = 41,	/* kernel kind */
	/* key kind: the permission asked for (enum key_need_perm) */
	EV_OP_KEY_VIEW = 42,
	EV_OP_KEY_READ = 43,
	EV_OP_KEY_WRITE = 44,
	EV_OP_KEY_SEARCH = 45,
	EV_OP_KEY_LINK = 46,
	EV_OP_KEY_SETATTR = 47,
	EV_OP_KEY_UNLINK = 48,
	EV_OP_KEY_SYSADMIN = 49,
	EV_OP_KEY_REVOKE = 50,
	EV_OP_KEY_ALLOC = 51,
	/* ipc kind */
	EV_OP_IPC_SHM = 52,
	EV_OP_IPC_SEM = 53,
	EV_OP_IPC_MSG = 54,
	EV_OP_IPC_MQUEUE = 55,
	/* notify kind */
	EV_OP_INOTIFY = 56,
	EV_OP_FANOTIFY = 57,
	EV_OP_DNOTIFY = 58,
	EV_OP_FANOTIFY_PERM = 59,
	/* file kind */
	EV_OP_SETATTR = 60,		/* times and other attributes */
	EV_OP_SET_ACL = 61,
	EV_OP_REMOVE_ACL = 62,
	EV_OP_NETLINK_SEND = 63,	/* netlink kind */
	EV_OP_SETSOCKOPT = 64,		/* sockopt kind */
	/* setup kind */
	EV_OP_SETUP_BEGIN = 65,
	EV_OP_SETUP_EXEC = 66,		/* ended by the payload's exec */
	EV_OP_SETUP_DEADLINE = 67,	/* ended by its deadline */
	EV_OP_SETUP_REFUSED = 68,	/* a moved task that was sandboxed */
	EV_OP_SETUP_MOVED = 69,		/* moved on, where no pass holds */
	/* file kind: a PROT_EXEC mapping (path: the file; empty for
	 * anonymous memory) */
	EV_OP_MMAP_EXEC = 70,		/* mmap(PROT_EXEC), shmat(SHM_EXEC) */
	EV_OP_MPROTECT_EXEC = 71,	/* mprotect() adding PROT_EXEC */
	EV_OP_PERSONALITY = 72,		/* personality(READ_IMPLIES_EXEC) */
	EV_OP_TRACEME = 73,		/* ptrace kind: PTRACE_TRACEME */
	EV_OP_URING_CREDS = 74,		/* task kind: io_uring credentials */
	EV_OP_CREDS = 75,		/* task kind: new credentials */
};

enum ev_reason {
	EV_REASON_NOT_ALLOWED = 1,
	EV_REASON_METADATA = 2,
	EV_REASON_RAW_SOCKET = 3,
	EV_REASON_ICMP = 4,
	EV_REASON_PACKET_SOCKET = 5,	/* AF_PACKET, BPF-LSM socket_create */
	EV_REASON_NO_POLICY = 6,	/* program ran but no sandbox entry */
	EV_REASON_OUTSIDE_SCOPE = 7,
	EV_REASON_PROTECTED = 8,
	EV_REASON_DENIED_PATH = 9,
	EV_REASON_PATH_TOO_LONG = 10,
	EV_REASON_OUTSIDE_SANDBOX = 11,	/* ptrace/signal/unix target outside */
	EV_REASON_ALWAYS_DENIED = 12,	/* bpf(), mount family */
	EV_REASON_CGROUP_ESCAPE = 13,
	EV_REASON_NOT_ALLOWED_NS = 14,	/* userns without namespaces.user */
	EV_REASON_OTHER_PROTOCOL = 15,	/* socket family/protocol not judged */
	EV_REASON_GUARDED_BELOW = 16,	/* renaming a dir above deny/protected */
	EV_REASON_DEVICE = 17,		/* block device, device node creation */
	EV_REASON_DETACHED_MOUNT = 18,	/* a mount outside the task's namespace */
	EV_REASON_CAPABILITY = 19,	/* not in the policy's capabilities */
	EV_REASON_NETLINK_WRITE = 20,	/* a netlink message that changes state */
	EV_REASON_NETLINK_FAMILY = 21,	/* a netlink family not allowed */
	EV_REASON_SYSTEM_WIDE = 22,	/* perf: no target task, or a CPU */
	EV_REASON_KERNEL_PMU = 23,	/* perf: kprobe/uprobe/tracepoint... */
	EV_REASON_TABLE_FULL = 24,	/* an ownership table is full */
	EV_REASON_PERF_NOT_ALLOWED = 25,	/* perf without perf: allow */
	EV_REASON_IN_SETUP = 26,	/* ptrace/signal to a task in setup */
	/* exec and PROT_EXEC (README, "Execution") */
	EV_REASON_NOT_EXECUTABLE = 27,	/* readable, but outside the exec scope */
	EV_REASON_MEMORY_FILE = 28,	/* memfd, shm, another internal mount */
	EV_REASON_DELETED_FILE = 29,	/* unlinked (i_nlink 0), O_TMPFILE */
	EV_REASON_ANON_EXEC = 30,	/* anonymous memory made executable */
	EV_REASON_SOURCE_ROUTE = 31,	/* a packet with an IPv4 LSRR/SSRR
					 * option or an IPv6 routing header */
};

#define EV_PATH_MAX	512	/* bytes of path/path2 in a record */

enum ev_flags {
	EV_F_PATH_TRUNC = 1 << 0,	/* path longer than EV_PATH_MAX */
	EV_F_PATH2_TRUNC = 1 << 1,
};

struct event {
	__u64 seq;
	__u64 ts_boot_ns;	/* bpf_ktime_get_boot_ns() */
	__u64 cgroup_id;	/* the task's own cgroup */
	__u32 policy_id;
	__u32 pid;		/* tgid */
	__u32 tid;
	__u32 uid;
	__u8 type;		/* enum ev_type */
	__u8 kind;		/* enum ev_kind */
	__u8 reason;		/* enum ev_reason */
	__u8 family;		/* 4, 6; 17 AF_PACKET; 255 another family,
				 * whose AF_* number is then in dport */
	__u8 proto;		/* IPPROTO_* */
	__u8 sock_type;		/* SOCK_* for kind socket */
	__u16 dport;		/* host byte order */
	__u8 daddr[16];		/* as the caller gave it, not normalised */
	char comm[EV_COMM_LEN];
};

/*
 * BPF-LSM records (kind >= EV_KIND_FILE): the common part, then what the
 * denial was about. The ring carries both sizes; `kind` tells them apart.
 */
struct file_event {
	struct event e;
	__u8 op;		/* enum ev_op, 0 when not applicable */
	__u8 flags;		/* enum ev_flags */
	__u16 pad;
	__u32 target_pid;	/* ptrace, signal, unix peer: the target */
	__u32 sig;		/* signal number for kind signal; bpf cmd for bpf;
				 * see enum ev_kind for the others */
	__u32 arg;		/* a second number; see enum ev_kind */
	char path[EV_PATH_MAX];	/* NUL-terminated */
	char path2[EV_PATH_MAX];	/* rename/link destination */
};

#endif /* STOCKADE_EVENTS_H */

