// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The event pipeline's userspace half: drain the ring buffer, write one
 * JSON object per line (stdout, and --log FILE), and turn the kernel's
 * loss counter into `event: lost` records (include/events.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <bpf/libbpf.h>

#include "agent.h"
#include "events.h"
#include "log.h"
#include "stockade.skel.h"

static const char *const kind_names[] = {
	[EV_KIND_CONNECT] = "connect", [EV_KIND_SENDMSG] = "sendmsg",
	[EV_KIND_SOCKET] = "socket", [EV_KIND_FILE] = "file",
	[EV_KIND_BPF] = "bpf", [EV_KIND_PTRACE] = "ptrace",
	[EV_KIND_SIGNAL] = "signal", [EV_KIND_MOUNT] = "mount",
	[EV_KIND_CGROUP] = "cgroup", [EV_KIND_UNIX] = "unix",
	[EV_KIND_USERNS] = "userns", [EV_KIND_FD_RECEIVE] = "fd_receive",
	[EV_KIND_TASK] = "task",
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
};

#define NAME(tbl, i) ((size_t)(i) < sizeof(tbl) / sizeof(tbl[0]) && tbl[i] ? \
		      tbl[i] : "unknown")

static int64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* RFC 3339 with nanoseconds, UTC. */
static void ts_field(struct json *j, int64_t real_ns)
{
	char buf[48];
	struct tm tm;
	time_t sec = real_ns / 1000000000;

	gmtime_r(&sec, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + 19, sizeof(buf) - 19, ".%09lldZ",
		 (long long)(real_ns % 1000000000));
	json_str(j, "ts", buf);
}

static void write_line(struct agent *a)
{
	if (a->j.oom) {
		pr_err("events", "out of memory formatting a record; it is counted in the next lost record");
		a->lost_agent++;
		return;
	}
	fwrite(a->j.buf, 1, a->j.len, stdout);
	if (a->log)
		fwrite(a->j.buf, 1, a->j.len, a->log);
}

static void common_fields(struct agent *a, int64_t real_ns, uint64_t seq,
			  const char *event)
{
	json_begin(&a->j);
	ts_field(&a->j, real_ns);
	json_u64(&a->j, "seq", seq);
	json_str(&a->j, "event", event);
}

void events__begin(struct agent *a, const char *event)
{
	uint64_t seq = __atomic_fetch_add(&a->skel->data->ev_seq, 1,
					  __ATOMIC_RELAXED);

	common_fields(a, clock_ns(CLOCK_REALTIME), seq, event);
}

void events__emit(struct agent *a)
{
	json_end(&a->j);
	write_line(a);
	fflush(stdout);
	if (a->log)
		fflush(a->log);
}

void events__cgroup_fields(struct agent *a, const struct sandbox_cg *cg)
{
	json_str(&a->j, "policy", agent__policy_name(a, cg->policy_id));
	json_str_raw(&a->j, "cgroup", cg->path, strlen(cg->path));
	json_u64(&a->j, "cgroup_id", cg->id);
}

static void addr_fields(struct json *j, const struct event *e)
{
	char buf[INET6_ADDRSTRLEN];

	json_str(j, "family", e->family == 4 ? "ipv4" :
			      e->family == 6 ? "ipv6" :
			      e->family == 17 ? "packet" : "other");
	if (e->family == 255)
		json_u64(j, "af", e->dport);
	if (e->kind == EV_KIND_SOCKET) {
		json_u64(j, "sock_type", e->sock_type);
	} else {
		inet_ntop(e->family == 4 ? AF_INET : AF_INET6, e->daddr, buf,
			  sizeof(buf));
		json_str(j, "daddr", buf);
		json_u64(j, "dport", e->dport);
	}
	json_str(j, "proto", e->proto == 6 ? "tcp" : e->proto == 17 ? "udp" :
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
}

static int handle_event(void *ctx, void *data, size_t size)
{
	struct agent *a = ctx;
	const struct event *e = data;
	const struct sandbox_cg *cg;
	bool lsm_record = size >= sizeof(struct event) && e->kind >= EV_KIND_FILE;

	if (size < sizeof(*e) || (lsm_record && size < sizeof(struct file_event))) {
		pr_warn("events", "short record (%zu bytes) from the kernel; counted as lost", size);
		a->lost_agent++;
		return 0;
	}
	common_fields(a, (int64_t)e->ts_boot_ns + a->boot_to_real_ns, e->seq,
		      e->type == EV_AUDIT ? "audit" : "deny");
	json_str(&a->j, "kind", NAME(kind_names, e->kind));
	json_str(&a->j, "policy", agent__policy_name(a, e->policy_id));
	cg = agent__find_cg(a, e->cgroup_id);
	/* A cgroup created since the last scan: name it by id only. */
	json_str_raw(&a->j, "cgroup", cg ? cg->path : "", cg ? strlen(cg->path) : 0);
	json_u64(&a->j, "cgroup_id", e->cgroup_id);
	json_u64(&a->j, "pid", e->pid);
	json_u64(&a->j, "tid", e->tid);
	json_u64(&a->j, "uid", e->uid);
	json_str_raw(&a->j, "comm", e->comm, strnlen(e->comm, sizeof(e->comm)));
	if (lsm_record)
		lsm_fields(&a->j, data);
	else
		addr_fields(&a->j, e);
	json_str(&a->j, "reason", NAME(reason_names, e->reason));
	json_end(&a->j);
	if (!a->j.oom)
		a->logged++;
	write_line(a);
	return 0;
}

/*
 * Turn growth of the kernel's loss counter, plus records the kernel
 * delivered that the agent could not write out, into one `lost` record.
 */
static void report_lost(struct agent *a)
{
	uint64_t lost = __atomic_load_n(&a->skel->bss->ev_lost,
					__ATOMIC_RELAXED) + a->lost_agent;

	if (lost == a->lost_seen)
		return;
	events__begin(a, "lost");
	json_u64(&a->j, "count", lost - a->lost_seen);
	json_u64(&a->j, "lost_total", lost);
	json_str(&a->j, "reason", "ring_buffer_full");
	a->lost_seen = lost;
	events__emit(a);
}

int events__poll(struct agent *a, int timeout_ms)
{
	int n = ring_buffer__poll(a->rb, timeout_ms);

	if (n < 0 && n != -EINTR) {
		pr_err("events", "reading the ring buffer failed: %s", strerror(-n));
		return n;
	}
	report_lost(a);
	fflush(stdout);
	if (a->log)
		fflush(a->log);
	return n < 0 ? 0 : n;
}

int events__open(struct agent *a)
{
	a->boot_to_real_ns = clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_BOOTTIME);
	json_init(&a->j);
	if (a->opt.log_path) {
		a->log = fopen(a->opt.log_path, "ae");
		if (!a->log) {
			int err = -errno;

			pr_err("events", "cannot open --log %s: %s", a->opt.log_path,
			       strerror(errno));
			return err;
		}
	}
	a->rb = ring_buffer__new(bpf_map__fd(a->skel->maps.rb), handle_event, a,
				 NULL);
	if (!a->rb) {
		int err = -errno;

		pr_err("events", "cannot set up the ring buffer reader: %s",
		       strerror(errno));
		return err;
	}
	return 0;
}

void events__close(struct agent *a)
{
	if (a->rb) {
		/* Whatever the kernel wrote before detach still goes out. */
		ring_buffer__consume(a->rb);
		report_lost(a);
		ring_buffer__free(a->rb);
		a->rb = NULL;
	}
	fflush(stdout);
	if (a->log) {
		fclose(a->log);
		a->log = NULL;
	}
	json_free(&a->j);
}
