// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The event pipeline's userspace half: drain the ring buffer, write one
 * JSON object per line (stdout, and --log FILE), and turn the kernel's
 * loss counter into `event: lost` records (include/events.h). Its state is
 * its own (struct events, agent/events_agent.h); it names cgroups and
 * policies through agent/names.h, not through the daemon's state.
 *
 * The ring buffer is pinned and outlives the agent (include/lifecycle.h),
 * so it is read here directly rather than with libbpf's ring_buffer: the
 * consumer position moves on only after the records before it have been
 * written out (out_flush()). An agent killed at any moment thus leaves every
 * record it has not written in the ring for the next agent; the worst a
 * SIGKILL can do is make a few records appear twice (same seq), never
 * vanish.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cgroup.h"
#include "clock.h"
#include "events.h"
#include "containers.h"
#include "events_agent.h"
#include "exec.h"
#include "exec_agent.h"
#include "exec_hash.h"
#include "limits_util.h"
#include "names.h"
#include "policy.h"
#include "lifecycle.h"
#include "log.h"
#include "bpfutil.h"
#include "records.h"
#include "loop.h"
#include "stockade.skel.h"

/* At most this many records between two flushes, and per drain. */
#define RING_BATCH	4096
#define RING_MAX_PER_POLL	(64 * RING_BATCH)
/*
 * At most this many records per turn of the main loop (agent/loop.h):
 * the logger writes about 0.8M records/s (README "Performance"), so a
 * turn takes well under a millisecond, and a signal or an inotify event
 * that arrives during a storm waits no longer than that for its turn
 * (tests/live/latency.sh: with 2048, the medians were 2-3 times longer).
 * A turn costs a few system calls more than the records: ~2% at 512.
 */
#define RING_MAX_PER_TURN	512
/*
 * After a turn that wrote records, the ring is read again this long
 * later, by a timer, not at its next wakeup, so a steady flow is written
 * in batches: without it, a paced 100k denials/s woke the agent for every
 * few records, and the wakeups (epoll_wait, a write() per stream) cost
 * more than the records (tests/bench/events.sh). A record waits at most
 * this much longer; at 1M records/s the ring fills by about 176 KB
 * meanwhile. 2 ms, not 1: at a paced 100k/s the agent took 0.086-0.091
 * of a core instead of 0.11-0.128 (half the wakeups), and a signal, an
 * inotify event or a reload is still handled at once (tests/live/
 * latency.sh). A timer, not a sleep: the loop still handles everything
 * else at once while it runs.
 */
#define RING_COALESCE_US	2000
/* A turn's records go after its signals, inotify events and timers. */
#define RING_PRIO	LOOP_PRIO_BULK
/*
 * The records of a turn go out in one write() per stream, from one
 * buffer both streams share (struct out_batch): a turn's 512 records are
 * about 150 KiB. Each record is copied once, into it, where stdio copied
 * it into each stream's own buffer, and wrote a 64 KiB buffer in three
 * write()s: with two storm threads, those copies and the file system's
 * cost per write() were a fifth of the agent's time (perf, README
 * "Performance"). A record longer than the whole buffer goes out alone.
 */
#define OUT_BUF	(256 * 1024)

struct evring {
	int map_fd;
	unsigned long *cons;	/* consumer page: ours to write */
	void *prod_map;		/* producer page, then the data mapped twice */
	unsigned long *prod;
	char *data;
	size_t page, size;
	/* In the main loop: the ring's fd, and the coalescing timer that
	 * reads it while the fd is not watched (events__loop_add()). */
	struct loop_source *src, *coalesce;
};

static const char *const op_names[] = {
	[EV_OP_OPEN_READ] = "open_read", [EV_OP_OPEN_WRITE] = "open_write",
	[EV_OP_CREATE] = "create", [EV_OP_MKDIR] = "mkdir",
	[EV_OP_RMDIR] = "rmdir", [EV_OP_UNLINK] = "unlink",
	[EV_OP_RENAME] = "rename", [EV_OP_LINK] = "link",
	[EV_OP_SYMLINK] = "symlink", [EV_OP_TRUNCATE] = "truncate",
	[EV_OP_CHMOD] = "chmod", [EV_OP_CHOWN] = "chown",
	[EV_OP_SETXATTR] = "setxattr", [EV_OP_EXEC] = "exec",
	[EV_OP_REMOVEXATTR] = "removexattr", [EV_OP_MOUNT] = "mount",
	[EV_OP_UMOUNT] = "umount", [EV_OP_MOVE_MOUNT] = "move_mount",
	[EV_OP_PIVOT_ROOT] = "pivot_root", [EV_OP_CHROOT] = "chroot",
	[EV_OP_CGROUP_MIGRATE] = "cgroup_migrate",
	[EV_OP_CLONE_INTO_CGROUP] = "clone_into_cgroup",
	[EV_OP_IOCTL] = "ioctl", [EV_OP_PRLIMIT] = "prlimit",
	[EV_OP_SETNICE] = "setnice", [EV_OP_SETSCHEDULER] = "setscheduler",
	[EV_OP_SETIOPRIO] = "setioprio", [EV_OP_SIGIO] = "sigio",
	[EV_OP_MKNOD_DEVICE] = "mknod_device",
	[EV_OP_LOAD_MODULE] = "load_module", [EV_OP_LOAD_KEXEC] = "load_kexec",
	[EV_OP_LOAD_FIRMWARE] = "load_firmware", [EV_OP_LOAD_DATA] = "load_data",
	[EV_OP_MODULE_REQUEST] = "module_request", [EV_OP_LOCKDOWN] = "lockdown",
	[EV_OP_SETTIME] = "settime", [EV_OP_SYSLOG] = "syslog",
	[EV_OP_ACCT] = "acct", [EV_OP_USERFAULTFD] = "userfaultfd",
	[EV_OP_PERF_OPEN] = "perf_open", [EV_OP_DELETE_MODULE] = "delete_module",
	[EV_OP_KEY_VIEW] = "key_view", [EV_OP_KEY_READ] = "key_read",
	[EV_OP_KEY_WRITE] = "key_write", [EV_OP_KEY_SEARCH] = "key_search",
	[EV_OP_KEY_LINK] = "key_link", [EV_OP_KEY_SETATTR] = "key_setattr",
	[EV_OP_KEY_UNLINK] = "key_unlink", [EV_OP_KEY_SYSADMIN] = "key_sysadmin",
	[EV_OP_KEY_REVOKE] = "key_revoke", [EV_OP_KEY_ALLOC] = "key_alloc",
	[EV_OP_IPC_SHM] = "shm", [EV_OP_IPC_SEM] = "sem", [EV_OP_IPC_MSG] = "msg",
	[EV_OP_IPC_MQUEUE] = "mqueue", [EV_OP_INOTIFY] = "inotify",
	[EV_OP_FANOTIFY] = "fanotify", [EV_OP_DNOTIFY] = "dnotify",
	[EV_OP_FANOTIFY_PERM] = "fanotify_perm", [EV_OP_SETATTR] = "setattr",
	[EV_OP_SET_ACL] = "set_acl", [EV_OP_REMOVE_ACL] = "remove_acl",
	[EV_OP_NETLINK_SEND] = "netlink_send", [EV_OP_SETSOCKOPT] = "setsockopt",
	[EV_OP_SETUP_BEGIN] = "begin", [EV_OP_SETUP_EXEC] = "exec",
	[EV_OP_SETUP_DEADLINE] = "deadline", [EV_OP_SETUP_REFUSED] = "refused",
	[EV_OP_SETUP_MOVED] = "moved",
	[EV_OP_MMAP_EXEC] = "mmap_exec", [EV_OP_MPROTECT_EXEC] = "mprotect_exec",
	[EV_OP_PERSONALITY] = "personality", [EV_OP_TRACEME] = "traceme",
	[EV_OP_URING_CREDS] = "uring_creds", [EV_OP_CREDS] = "creds",
};

static const char *const reason_names[] = {
	[EV_REASON_NOT_ALLOWED] = "not_allowed",
	[EV_REASON_METADATA] = "metadata_endpoint",
	[EV_REASON_RAW_SOCKET] = "raw_socket",
	[EV_REASON_ICMP] = "icmp",
	[EV_REASON_PACKET_SOCKET] = "packet_socket",
	[EV_REASON_NO_POLICY] = "no_policy",
	[EV_REASON_OUTSIDE_SCOPE] = "outside_scope",
	[EV_REASON_PROTECTED] = "protected",
	[EV_REASON_DENIED_PATH] = "denied_path",
	[EV_REASON_PATH_TOO_LONG] = "path_too_long",
	[EV_REASON_OUTSIDE_SANDBOX] = "outside_sandbox",
	[EV_REASON_ALWAYS_DENIED] = "always_denied",
	[EV_REASON_CGROUP_ESCAPE] = "cgroup_escape",
	[EV_REASON_NOT_ALLOWED_NS] = "not_allowed_ns",
	[EV_REASON_OTHER_PROTOCOL] = "other_protocol",
	[EV_REASON_GUARDED_BELOW] = "guarded_below",
	[EV_REASON_DEVICE] = "device",
	[EV_REASON_DETACHED_MOUNT] = "detached_mount",
	[EV_REASON_CAPABILITY] = "capability_not_allowed",
	[EV_REASON_NETLINK_WRITE] = "netlink_write",
	[EV_REASON_NETLINK_FAMILY] = "netlink_family",
	[EV_REASON_SYSTEM_WIDE] = "system_wide",
	[EV_REASON_KERNEL_PMU] = "kernel_pmu",
	[EV_REASON_TABLE_FULL] = "table_full",
	[EV_REASON_PERF_NOT_ALLOWED] = "perf_not_allowed",
	[EV_REASON_IN_SETUP] = "in_setup",
	[EV_REASON_NOT_EXECUTABLE] = "not_executable",
	[EV_REASON_MEMORY_FILE] = "memory_file",
	[EV_REASON_DELETED_FILE] = "deleted_file",
	[EV_REASON_ANON_EXEC] = "anon_exec",
	[EV_REASON_SOURCE_ROUTE] = "source_route",
};

#define NAME(tbl, i) ((size_t)(i) < sizeof(tbl) / sizeof(tbl[0]) && tbl[i] ? \
		      tbl[i] : "unknown")

/*
 * RFC 3339 with nanoseconds, UTC. The date and time change once a second,
 * so they are formatted (gmtime_r, strftime) once a second and kept; the
 * nanoseconds are written by hand. Together that was a tenth of the
 * logger's time per record. The agent is single-threaded.
 */
static void ts_field(struct json *j, int64_t real_ns)
{
	static time_t cached_sec;
	static bool cached;	/* buf holds cached_sec's 30-byte form */
	static char buf[32];	/* "YYYY-MM-DDTHH:MM:SS" ".nnnnnnnnnZ" */
	time_t sec = real_ns / 1000000000;
	long ns = (long)(real_ns % 1000000000);
	int i;

	if (!cached || sec != cached_sec) {
		struct tm tm;

		cached = false;
		gmtime_r(&sec, &tm);
		/* 19 bytes from 1970 up to year 9999; anything else (a clock
		 * set before 1970 too: its ns would be negative) is the
		 * seconds as digits, and not cached. */
		if (real_ns < 0 ||
		    strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm) != 19) {
			snprintf(buf, sizeof(buf), "%lld", (long long)sec);
			json_str(j, "ts", buf);
			return;
		}
		cached = true;
		cached_sec = sec;
		buf[19] = '.';
		buf[29] = 'Z';
		buf[30] = '\0';
	}
	for (i = 28; i >= 20; i--) {
		buf[i] = (char)('0' + ns % 10);
		ns /= 10;
	}
	json_name_k(j, "ts", sizeof("ts") - 1, buf, 30);
}

void events__init(struct events *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->log_fd = -1;
}

/* --log FILE, appended to as fopen(path, "ae") would: fd or -errno. */
static int log_open(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);

	return fd < 0 ? -errno : fd;
}

/* All of buf to fd, through short writes and signals: 0, or -errno with
 * *done the bytes that went out before the failure. A full stream that
 * is non-blocking (O_NONBLOCK set on the pipe by whoever shares it: a
 * supervisor's end, a shell) is waited for as a blocking one would be:
 * EAGAIN is no failure, and dropping the batch would lose its records
 * from that stream. */
static int write_all(int fd, const char *buf, size_t len, size_t *done)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	ssize_t n;

	*done = 0;
	while (*done < len) {
		n = write(fd, buf + *done, len - *done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			/* An error or hang-up shows in the next write. */
			if (poll(&p, 1, -1) < 0 && errno != EINTR)
				return -errno;
			continue;
		}
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		*done += (size_t)n;
	}
	return 0;
}

/*
 * A write to --log failed within a record (the file system filled up
 * mid-batch), its last part bytes: cut off the file again, so it holds
 * whole lines only. The agent alone appends to it. False when it cannot
 * be (not a regular file: a FIFO).
 */
static bool log_trim(int fd, size_t part)
{
	off_t end = lseek(fd, 0, SEEK_END);

	if (end >= 0 && end < (off_t)part)
		return true;	/* truncated meanwhile (copytruncate): gone */
	return end >= 0 && !ftruncate(fd, end - (off_t)part);
}

/*
 * A stream's write failed (no space, a closed pipe): said once, as the
 * records of the write are missing from that stream, and said again only
 * after a write worked a second after the last failure (then said too):
 * on a full file system a small write into the last block's free tail
 * works between two failed batches.
 */
static void out_failed(struct events *ev, int i, int err)
{
	static const char *const what[] = { "stdout", "--log" };
	struct out_batch *o = &ev->out;
	int64_t now;

	if (!err && !o->failed[i])
		return;
	now = clock_now_ns(CLOCK_MONOTONIC);
	if (err) {
		if (!o->failed[i])
			pr_err("events", "writing records to %s failed: %s; the records of this write (up to %d KiB) are missing from it, and the agent goes on writing (free space, or whatever the stream needs)",
			       what[i], strerror(-err), OUT_BUF / 1024);
		o->failed[i] = true;
		o->fail_ns[i] = now;
	} else if (now - o->fail_ns[i] >= 1000000000) {
		pr_warn("events", "writing records to %s works again", what[i]);
		o->failed[i] = false;
	}
}

/*
 * buf to stream i (0 stdout, 1 --log) at fd. A part of a record that a
 * failed write left there (on a pipe, or a file it could not be cut off)
 * is ended first by a newline: the next record starts a line of its own,
 * never glued onto it.
 */
static int stream_write(struct events *ev, int i, int fd, const char *buf,
			size_t len)
{
	size_t done = 0, whole, k;
	int err = 0;

	if (ev->out.cut[i]) {
		err = write_all(fd, "\n", 1, &done);
		ev->out.cut[i] = err != 0;
		done = 0;
	}
	if (!err)
		err = write_all(fd, buf, len, &done);
	if (err) {
		/* The end of the last whole line that went out. */
		for (whole = done; whole && buf[whole - 1] != '\n'; whole--)
			;
		if (whole < done)
			ev->out.cut[i] = !(i == 1 && log_trim(fd, done - whole));
		/* The records not whole in the log (report_log_lost()). */
		for (k = whole; i == 1 && k < len; k++)
			ev->out.log_missing += buf[k] == '\n';
	}
	if (i == 1)
		ev->out.log_ok = !err;
	out_failed(ev, i, err);
	return err;
}

/* buf to every stream: stdout, and --log. 0, or --log's -errno. */
static int out_write(struct events *ev, const char *buf, size_t len)
{
	stream_write(ev, 0, STDOUT_FILENO, buf, len);
	return ev->log_fd < 0 ? 0 : stream_write(ev, 1, ev->log_fd, buf, len);
}

/* The batch written out: before the ring's consumer moves on. */
static int out_flush(struct events *ev)
{
	int err;

	if (!ev->out.len)
		return 0;
	err = out_write(ev, ev->out.buf, ev->out.len);
	ev->out.len = 0;
	return err;
}

static void write_line(struct events *ev)
{
	if (ev->j.oom) {
		pr_err("events", "out of memory formatting a record; it is counted in the next lost record");
		ev->lost_agent++;
		return;
	}
	if (ev->out.len + ev->j.len > OUT_BUF)
		out_flush(ev);
	if (ev->j.len > OUT_BUF || !ev->out.buf) {
		out_write(ev, ev->j.buf, ev->j.len);
	} else {
		memcpy(ev->out.buf + ev->out.len, ev->j.buf, ev->j.len);
		ev->out.len += ev->j.len;
	}
	ev->written++;
	/* The one place every record passes, drained, kernel and agent-side
	 * ones alike, lost included: the watchers get the same bytes. */
	if (ev->cfg.sink)
		ev->cfg.sink(ev->cfg.sink_ctx, ev->j.buf, ev->j.len);
}

void events__counts(const struct events *ev, uint64_t *produced,
		    uint64_t *logged, uint64_t *lost)
{
	uint64_t seq = ev->seq ? __atomic_load_n(ev->seq, __ATOMIC_RELAXED) : 0;
	uint64_t klost = ev->kernel_lost ?
			 __atomic_load_n(ev->kernel_lost, __ATOMIC_RELAXED) : 0;

	*produced = seq - ev->seq_start;
	*logged = ev->written;
	*lost = klost + ev->lost_agent - ev->lost_start;
}

static void common_fields_j(struct json *j, int64_t real_ns, uint64_t seq,
			    const char *event)
{
	json_begin(j);
	ts_field(j, real_ns);
	json_u64(j, "seq", seq);
	json_name(j, "event", event);
}

static void common_fields(struct events *ev, int64_t real_ns, uint64_t seq,
			  const char *event)
{
	common_fields_j(&ev->j, real_ns, seq, event);
}

void events__json_begin(struct json *j, uint64_t seq, const char *event)
{
	common_fields_j(j, clock_now_ns(CLOCK_REALTIME), seq, event);
}

void events__begin(struct events *ev, const char *event)
{
	uint64_t seq = __atomic_fetch_add(ev->seq, 1, __ATOMIC_RELAXED);

	common_fields(ev, clock_now_ns(CLOCK_REALTIME), seq, event);
}

void events__emit(struct events *ev)
{
	json_end(&ev->j);
	write_line(ev);
	out_flush(ev);
}

void events__emit_counting(struct events *ev, uint64_t seqs)
{
	events__emit(ev);
	/* Missing from the log, it takes the seqs it counts with it: the
	 * log's gap grows by them too (its own is counted already). */
	if (ev->log_fd >= 0 && !ev->out.log_ok)
		ev->out.log_missing += seqs;
}

void events__cgroup_fields(struct events *ev, const struct sandbox_cg *cg)
{
	json_str(&ev->j, "policy", names__policy_name(ev->cfg.names, cg->policy_id));
	json_str_raw(&ev->j, "cgroup", cg->path, strlen(cg->path));
	json_u64(&ev->j, "cgroup_id", cg->id);
	records__container(&ev->j, cg->ctr);
}

static void addr_fields(struct json *j, const struct event *e)
{
	json_name(j, "family", e->family == 4 ? "ipv4" :
			      e->family == 6 ? "ipv6" :
			      e->family == 17 ? "packet" : "other");
	if (e->family == 255)
		json_u64(j, "af", e->dport);
	if (e->kind == EV_KIND_SOCKET) {
		json_u64(j, "sock_type", e->sock_type);
	} else {
		bool local = e->kind == EV_KIND_BIND || e->kind == EV_KIND_LISTEN;

		/* bind and listen: the sandbox's own address and port */
		records__addr(j, local ? "laddr" : "daddr", e->family == 4, e->daddr);
		json_u64(j, local ? "lport" : "dport", e->dport);
	}
	json_name(j, "proto", e->proto == 6 ? "tcp" : e->proto == 17 ? "udp" :
			     e->proto == 1 ? "icmp" : e->proto == 58 ? "icmpv6" :
			     e->proto == 255 ? "raw" : "other");
	json_u64(j, "proto_nr", e->proto);
}

/* What a BPF-LSM denial was about (struct file_event). */
static void lsm_fields(struct json *j, const struct file_event *fe)
{
	const struct event *e = &fe->e;

	if (fe->op)
		json_str(j, "op", NAME(op_names, fe->op));
	if (fe->path[0] || e->kind == EV_KIND_FILE || e->kind == EV_KIND_FD_RECEIVE) {
		json_str_raw(j, "path", fe->path, strnlen(fe->path, sizeof(fe->path)));
		if (fe->flags & EV_F_PATH_TRUNC)
			json_bool(j, "path_truncated", true);
	}
	if (fe->path2[0]) {
		json_str_raw(j, "path2", fe->path2, strnlen(fe->path2, sizeof(fe->path2)));
		if (fe->flags & EV_F_PATH2_TRUNC)
			json_bool(j, "path2_truncated", true);
	}
	if (e->kind == EV_KIND_PTRACE || e->kind == EV_KIND_SIGNAL ||
	    e->kind == EV_KIND_UNIX || e->kind == EV_KIND_TASK)
		json_u64(j, "target_pid", fe->target_pid);
	if (e->kind == EV_KIND_SIGNAL ||
	    (e->kind == EV_KIND_TASK && fe->op == EV_OP_SIGIO))
		json_u64(j, "signal", fe->sig);
	if (e->kind == EV_KIND_FILE && fe->op == EV_OP_IOCTL)
		json_u64(j, "ioctl_cmd", fe->sig);
	if (e->kind == EV_KIND_BPF)
		json_u64(j, "bpf_cmd", fe->sig);
	switch (e->kind) {
	case EV_KIND_CAPABILITY:
		json_str(j, "capability", policy_cap_name(fe->sig));
		json_u64(j, "cap_nr", fe->sig);
		break;
	case EV_KIND_KERNEL:
		if (fe->op == EV_OP_LOCKDOWN)
			json_u64(j, "lockdown_reason", fe->arg);
		else if (fe->op == EV_OP_SYSLOG)
			json_u64(j, "syslog_action", fe->arg);
		else if (fe->op >= EV_OP_LOAD_MODULE && fe->op <= EV_OP_LOAD_DATA)
			json_u64(j, "load_id", fe->arg);
		break;
	case EV_KIND_PERF:
		json_u64(j, "perf_type", fe->arg);
		json_u64(j, "target_pid", fe->target_pid);
		break;
	case EV_KIND_NETLINK:
		json_str(j, "netlink_family", policy_netlink_name(fe->arg));
		json_u64(j, "netlink_protocol", fe->arg);
		json_u64(j, "msg_type", fe->sig);
		break;
	case EV_KIND_SOCKOPT:
		json_u64(j, "level", fe->arg);
		json_u64(j, "optname", fe->sig);
		break;
	case EV_KIND_KEY:
		json_u64(j, "key_serial", fe->sig);
		break;
	case EV_KIND_IPC:
		if (fe->op != EV_OP_IPC_MQUEUE)
			json_u64(j, "ipc_id", fe->sig);
		break;
	case EV_KIND_NOTIFY:
		json_u64(j, "mask", fe->arg);
		break;
	}
}

/*
 * A setup pass (include/setup.h) began or ended: not a refusal. begin: the
 * record's task is the mover, target_pid the task moved into the cgroup;
 * the others are the task's own, with the pass's length.
 */
static void setup_fields(struct json *j, const struct file_event *fe)
{
	json_str(j, "op", NAME(op_names, fe->op));
	switch (fe->op) {
	case EV_OP_SETUP_BEGIN:
		json_u64(j, "target_pid", fe->target_pid);
		json_u64(j, "deadline_ms", fe->arg);
		break;
	case EV_OP_SETUP_REFUSED:
		json_u64(j, "target_pid", fe->target_pid);
		json_str(j, "reason", "sandboxed");
		break;
	default:
		json_u64(j, "setup_ms", fe->arg);
		if (fe->path[0])
			json_str_raw(j, "path", fe->path, strnlen(fe->path, sizeof(fe->path)));
		break;
	}
}

static int handle_event(void *ctx, void *data, size_t size)
{
	struct events *ev = ctx;
	const struct event *e = data;
	const struct sandbox_cg *cg;
	const struct policy *pol;
	bool lsm_record = size >= sizeof(struct event) && !ev_kind_is_net(e->kind);
	bool setup;

	/* Exec and exit records (agent/exec.c): not refusals. */
	if (size >= sizeof(*e) && exec__event(e->type)) {
		const struct sandbox_cg *xcg = names__cg(ev->cfg.names, e->cgroup_id);
		const char *p = xcg ? xcg->path : "";

		if (!xcg && ev->drain_paths)
			p = cgroup_paths__find(ev->drain_paths, e->cgroup_id) ?: "";
		common_fields(ev, (int64_t)e->ts_boot_ns + ev->boot_to_real_ns, e->seq,
			      exec__event(e->type));
		if (exec__json(&ev->j, data, size, ev->cfg.names, p)) {
			pr_warn("events", "short exec record (%zu bytes) from the kernel; counted as lost", size);
			ev->lost_agent++;
			return 0;
		}
		pol = names__policy(ev->cfg.names, e->policy_id);
		if ((e->type & ~EV_TYPE_PENDING) == EV_EXEC && pol &&
		    pol->exec.hash_sha256 && ev->hash)
			exec_hash__fields(ev->hash, &ev->j, data);
		goto end;
	}
	if (size < sizeof(*e) || (lsm_record && size < sizeof(struct file_event))) {
		pr_warn("events", "short record (%zu bytes) from the kernel; counted as lost", size);
		ev->lost_agent++;
		return 0;
	}
	setup = lsm_record && (e->type & ~EV_TYPE_PENDING) == EV_SETUP &&
		e->kind == EV_KIND_SETUP;
	common_fields(ev, (int64_t)e->ts_boot_ns + ev->boot_to_real_ns, e->seq,
		      setup ? "setup" :
		      (e->type & ~EV_TYPE_PENDING) == EV_AUDIT ? "audit" : "deny");
	json_name(&ev->j, "kind", setup ? "setup" : limits_kind_name(e->kind) ?: "unknown");
	json_str(&ev->j, "policy", names__policy_name(ev->cfg.names, e->policy_id));
	cg = names__cg(ev->cfg.names, e->cgroup_id);
	/* A cgroup created since the last scan: name it by id only; records
	 * left from before this agent started are named by a one-off walk. */
	{
		const char *p = cg ? cg->path : "";

		if (!cg && ev->drain_paths)
			p = cgroup_paths__find(ev->drain_paths, e->cgroup_id) ?: "";
		json_str_raw(&ev->j, "cgroup", p, strlen(p));
	}
	json_u64(&ev->j, "cgroup_id", e->cgroup_id);
	records__container(&ev->j, cg ? cg->ctr : NULL);
	json_u64(&ev->j, "pid", e->pid);
	json_u64(&ev->j, "tid", e->tid);
	json_u64(&ev->j, "uid", e->uid);
	json_str_raw(&ev->j, "comm", e->comm, strnlen(e->comm, sizeof(e->comm)));
	if (setup) {
		setup_fields(&ev->j, data);
		goto end;
	}
	if (lsm_record)
		lsm_fields(&ev->j, data);
	else
		addr_fields(&ev->j, e);
	json_name(&ev->j, "reason", NAME(reason_names, e->reason));
	if (e->type & EV_TYPE_PENDING)
		json_bool(&ev->j, "pending", true);
end:
	json_end(&ev->j);
	if (!ev->j.oom)
		ev->logged++;
	write_line(ev);
	return 0;
}

/*
 * Records missing from --log, whose writes failed (no space) while stdout
 * had them: told in the log by a `log_lost` record once a write to it
 * works again, so that the file's sequence has no gap it does not
 * explain (`stockade register check` counts it as `lost`'s). A note of
 * the file's, written to it alone, with no seq of its own: stdout and the
 * watchers had every record, and no gap of theirs is left to explain. A
 * failed write of it tells nothing: the next one tells all.
 */
static void report_log_lost(struct events *ev)
{
	struct out_batch *o = &ev->out;
	uint64_t missing;

	if (ev->log_fd < 0 || !o->log_ok || o->log_missing == o->log_told)
		return;
	out_flush(ev);		/* the records before it go first */
	missing = o->log_missing;
	if (!o->log_ok)
		return;		/* that write failed: later */
	json_begin(&ev->j);
	ts_field(&ev->j, clock_now_ns(CLOCK_REALTIME));
	json_name(&ev->j, "event", "log_lost");
	json_u64(&ev->j, "count", missing - o->log_told);
	json_u64(&ev->j, "missing_total", missing);
	json_str(&ev->j, "path", ev->cfg.log_path);
	json_str(&ev->j, "reason", "write_failed");
	json_end(&ev->j);
	if (ev->j.oom)
		return;		/* told by the next one */
	if (!stream_write(ev, 1, ev->log_fd, ev->j.buf, ev->j.len))
		o->log_told = missing;
	/* Not a record of the sequence: never missing itself. */
	o->log_missing = missing;
}

/*
 * Turn growth of the kernel's loss counter, plus records the kernel
 * delivered that the agent could not write out, into one `lost` record.
 */
static void report_lost(struct events *ev)
{
	uint64_t lost = __atomic_load_n(ev->kernel_lost, __ATOMIC_RELAXED) +
			ev->lost_agent;

	report_log_lost(ev);
	if (lost == ev->lost_seen)
		return;
	events__begin(ev, "lost");
	records__lost(&ev->j, lost - ev->lost_seen, lost, NULL);
	events__emit_counting(ev, lost - ev->lost_seen);
	ev->lost_seen = lost;
	events__meta_update(ev);
}

/* Written out, so the kernel may reuse the space. */
static void ring_commit(struct events *ev, unsigned long cons)
{
	out_flush(ev);
	__atomic_store_n(ev->ring->cons, cons, __ATOMIC_RELEASE);
}

/* Everything committed so far, oldest first (kernel/bpf/ringbuf.c's
 * layout: an 8-byte header, BUSY until committed, DISCARD if dropped). */
static int ring_consume(struct events *ev, int max)
{
	struct evring *r = ev->ring;
	unsigned long cons, prod;
	int n = 0, batch = 0;
	__u32 len, *hdr;

	cons = __atomic_load_n(r->cons, __ATOMIC_ACQUIRE);
	for (;;) {
		prod = __atomic_load_n(r->prod, __ATOMIC_ACQUIRE);
		if (cons >= prod || n >= max)
			break;
		while (cons < prod && n < max) {
			hdr = (__u32 *)(r->data + (cons & (r->size - 1)));
			len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);
			if (len & BPF_RINGBUF_BUSY_BIT)
				goto out;	/* not committed yet: next turn */
			cons += ((len & ~(__u32)(BPF_RINGBUF_BUSY_BIT |
						  BPF_RINGBUF_DISCARD_BIT)) +
				 BPF_RINGBUF_HDR_SZ + 7) & ~7UL;
			if (!(len & BPF_RINGBUF_DISCARD_BIT)) {
				handle_event(ev, hdr + 2, len & ~(__u32)BPF_RINGBUF_DISCARD_BIT);
				n++;
			}
			if (++batch == RING_BATCH) {
				ring_commit(ev, cons);
				batch = 0;
			}
		}
		ring_commit(ev, cons);
		batch = 0;
	}
out:
	ring_commit(ev, cons);
	return n;
}

/* One turn's read: at most RING_MAX_PER_TURN records, then the losses. */
static int ring_turn(struct events *ev)
{
	int n = ring_consume(ev, RING_MAX_PER_TURN);

	report_lost(ev);
	out_flush(ev);
	return n;
}

/*
 * Records were written: stop watching the fd and read again by the timer,
 * at once if this turn left records behind (its limit), or after the
 * coalescing delay. Until a read finds nothing, the fd stays unwatched.
 */
static int ring_coalesce(struct events *ev, int n)
{
	struct evring *r = ev->ring;
	int err;

	err = loop__io_enable(r->src, false);
	if (!err)
		err = loop__timer_in(r->coalesce,
				     n >= RING_MAX_PER_TURN ? 0 : RING_COALESCE_US);
	if (err)
		pr_err("events", "arming the ring buffer's coalescing timer failed: %s",
		       strerror(-err));
	return err;
}

static int on_ring(struct loop_source *s, uint32_t revents, void *userdata)
{
	struct events *ev = userdata;
	int n;

	(void)s;
	(void)revents;
	/* Whatever the wakeup said: a record committed while the consumer
	 * lagged behind brings no wakeup of its own. */
	n = ring_turn(ev);
	return n > 0 ? ring_coalesce(ev, n) : 0;
}

static int on_coalesce(struct loop_source *s, uint32_t revents, void *userdata)
{
	struct events *ev = userdata;
	int n, err;

	(void)s;
	(void)revents;
	n = ring_turn(ev);
	if (n > 0)
		return ring_coalesce(ev, n);
	/* Quiet again: the next record wakes the loop. */
	err = loop__io_enable(ev->ring->src, true);
	if (err)
		pr_err("events", "watching the ring buffer again failed: %s",
		       strerror(-err));
	return err;
}

int events__loop_add(struct events *ev, struct loop *l)
{
	struct evring *r = ev->ring;
	int err;

	r->src = loop__add_io(l, r->map_fd, RING_PRIO, on_ring, ev);
	if (!r->src)
		goto fail;
	r->coalesce = loop__add_timer(l, RING_PRIO, on_coalesce, ev);
	if (!r->coalesce)
		goto fail;
	return 0;
fail:
	err = -errno;
	pr_err("events", "cannot add the ring buffer to the main loop: %s", strerror(errno));
	return err;
}

void events__meta_update(struct events *ev)
{
	struct agent_meta m = { 0 };
	__u32 zero = 0;

	if (ev->cfg.meta)
		ev->cfg.meta(ev->cfg.ctx, &m);
	m.layout = PIN_LAYOUT_VERSION;
	m.lost_reported = ev->lost_seen;
	if (bpf_map_update_elem(ev->meta_fd, &zero, &m, BPF_ANY))
		pr_warn("events", "updating the pinned agent_meta failed: %s",
			strerror(errno));
}

static int ring_open(struct events *ev, int map_fd)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);
	struct evring *r;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	ev->ring = r;
	r->map_fd = map_fd;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(r->map_fd, &info, &len))
		return -errno;
	r->size = info.max_entries;
	r->page = (size_t)sysconf(_SC_PAGESIZE);
	r->cons = mmap(NULL, r->page, PROT_READ | PROT_WRITE, MAP_SHARED,
		       r->map_fd, 0);
	if (r->cons == MAP_FAILED) {
		r->cons = NULL;
		return -errno;
	}
	r->prod_map = mmap(NULL, r->page + 2 * r->size, PROT_READ, MAP_SHARED,
			   r->map_fd, (off_t)r->page);
	if (r->prod_map == MAP_FAILED) {
		r->prod_map = NULL;
		return -errno;
	}
	r->prod = r->prod_map;
	r->data = (char *)r->prod_map + r->page;
	return 0;
}

static void ring_close(struct events *ev)
{
	struct evring *r = ev->ring;

	if (!r)
		return;
	if (r->cons)
		munmap(r->cons, r->page);
	if (r->prod_map)
		munmap(r->prod_map, r->page + 2 * r->size);
	free(r);
	ev->ring = NULL;
}

int events__drain(struct events *ev)
{
	struct cgroup_paths paths;
	int n;

	/* Name the cgroups of records left from before this agent. */
	if (!cgroup_paths__load(ev->cfg.cgroot, &paths))
		ev->drain_paths = &paths;
	n = ring_consume(ev, RING_MAX_PER_POLL);
	report_lost(ev);
	out_flush(ev);
	if (ev->drain_paths)
		cgroup_paths__free(&paths);
	ev->drain_paths = NULL;
	return n;
}

int events__drain_map(struct events *ev, int map_fd)
{
	struct evring *ours = ev->ring;
	struct cgroup_paths paths;
	int n;

	/* Read it as our own ring for a moment: the same layout, the same
	 * commit-after-write rule. */
	ev->ring = NULL;
	n = ring_open(ev, map_fd);
	if (!n) {
		if (!cgroup_paths__load(ev->cfg.cgroot, &paths))
			ev->drain_paths = &paths;
		n = ring_consume(ev, RING_MAX_PER_POLL);
		out_flush(ev);
		if (ev->drain_paths)
			cgroup_paths__free(&paths);
		ev->drain_paths = NULL;
	}
	ring_close(ev);
	ev->ring = ours;
	return n;
}

void events__set_ring_size(struct stockade *skel, unsigned int bytes)
{
	bpf_map__set_max_entries(skel->maps.rb, bytes);
}

int events__open(struct events *ev, struct stockade *skel,
		 const struct events_cfg *cfg)
{
	int err;

	ev->cfg = *cfg;
	/* Shared with the BPF programs: their mmapped .data and .bss. */
	ev->seq = &skel->data->ev_seq;
	ev->kernel_lost = &skel->bss->ev_lost;
	ev->seq_start = __atomic_load_n(ev->seq, __ATOMIC_RELAXED);
	ev->lost_start = __atomic_load_n(ev->kernel_lost, __ATOMIC_RELAXED);
	ev->meta_fd = bpf_map__fd(skel->maps.agent_meta);
	ev->boot_to_real_ns = clock_now_ns(CLOCK_REALTIME) - clock_now_ns(CLOCK_BOOTTIME);
	err = exec_hash__new(&ev->hash);
	if (err) {
		pr_err("events", "allocating the exec records' hash cache failed: %s",
		       strerror(-err));
		return err;
	}
	err = exec__read_boot_id();
	if (err)
		pr_warn("events", "reading /proc/sys/kernel/random/boot_id failed: %s; exec_ids carry a boot id of zeros, unique on this boot only",
			strerror(-err));
	json_init(&ev->j);
	ev->out.buf = malloc(OUT_BUF);
	if (!ev->out.buf) {
		pr_err("events", "allocating the records' output buffer (%d KiB) failed",
		       OUT_BUF / 1024);
		return -ENOMEM;
	}
	/* Whatever stdio holds for stdout goes before the first record. */
	fflush(stdout);
	if (cfg->log_path) {
		ev->log_fd = log_open(cfg->log_path);
		if (ev->log_fd < 0) {
			err = ev->log_fd;
			pr_err("events", "cannot open --log %s: %s", cfg->log_path,
			       strerror(-err));
			return err;
		}
	}
	err = ring_open(ev, bpf_map__fd(skel->maps.rb));
	if (err) {
		pr_err("events", "cannot set up the ring buffer reader: %s",
		       strerror(-err));
		ring_close(ev);
		return err;
	}
	/* Losses an earlier agent already reported are not reported again. */
	{
		struct agent_meta m = { 0 };
		__u32 zero = 0;

		if (!bpf_map_lookup_elem(ev->meta_fd, &zero, &m))
			ev->lost_seen = m.lost_reported;
	}
	return 0;
}

/*
 * --log FILE again, by its name: logrotate (or an operator) has moved the
 * file away and asks for a new one (SIGUSR1, `stockade reopen-logs`).
 * Nothing may be lost or written twice on the way, so: the new file is
 * opened first, and on failure (its directory gone, no space for the
 * inode, EACCES) the old one stays in use, with an error and a
 * `log_reopen` record saying so in it. Then the batch not yet written
 * goes to the old file (out_flush()): every record before this one is
 * in the old file, every record after it in the new one. The agent is
 * single-threaded and this runs between two of the loop's callbacks, so
 * no record is half written; records still in the ring are read after,
 * into the new file (the consumer moves on only once they are written).
 * stdout is not reopened: it is the service manager's (journald, a pipe).
 */
int events__log_reopen(struct events *ev)
{
	int fd, err = 0;

	if (ev->log_fd < 0)
		return 0;
	fd = log_open(ev->cfg.log_path);
	if (fd < 0) {
		err = fd;
		pr_err("events", "reopening --log %s failed: %s; still writing to the file opened before (wherever it was moved); make the path writable again and send SIGUSR1 again (stockade reopen-logs)",
		       ev->cfg.log_path, strerror(-err));
		events__begin(ev, "log_reopen");
		json_str(&ev->j, "path", ev->cfg.log_path);
		json_str(&ev->j, "result", "failed");
		json_str(&ev->j, "error", strerror(-err));
		events__emit(ev);
		return err;
	}
	/* A failed write of the old file's last batch is the one way a
	 * record could go missing here: say it (the kernel's counters still
	 * tell how many were produced). */
	err = out_flush(ev);
	if (err)
		pr_err("events", "flushing the rotated --log file failed: %s; the records of its last write (up to %d KiB) may be missing from it",
		       strerror(-err), OUT_BUF / 1024);
	close(ev->log_fd);
	ev->log_fd = fd;
	ev->out.failed[1] = ev->out.cut[1] = false;
	/* The new file's first line: where the rotated one ended. */
	events__begin(ev, "log_reopen");
	json_str(&ev->j, "path", ev->cfg.log_path);
	json_str(&ev->j, "result", "reopened");
	events__emit(ev);
	return 0;
}

bool events__reading(const struct events *ev)
{
	return ev->ring != NULL;
}

void events__close_ring(struct events *ev)
{
	if (ev->ring) {
		/* Whatever the kernel wrote so far still goes out. */
		ring_consume(ev, RING_MAX_PER_POLL);
		report_lost(ev);
		ring_close(ev);
	}
}

void events__close(struct events *ev)
{
	events__close_ring(ev);
	out_flush(ev);
	if (ev->log_fd >= 0) {
		close(ev->log_fd);
		ev->log_fd = -1;
	}
	free(ev->out.buf);
	ev->out.buf = NULL;
	json_free(&ev->j);
	exec_hash__free(ev->hash);
	ev->hash = NULL;
}
