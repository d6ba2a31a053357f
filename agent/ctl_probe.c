// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `stockade probe CGROUP|POLICY`: the live escape test (README, "Evidence
 * for assessors"). Each attempt runs in a fresh child process that joins
 * a probe cgroup the target's policy selects (a sibling under a glob
 * selector's parent, confined and limited by the agent like any sandbox
 * of that policy), inside the mount and network namespaces of a process
 * already in the target (setns through a pidfd), so paths and addresses
 * are the workload's. Limit attempts get a probe cgroup each and never run
 * in the workload's own cgroup: an OOM or run-time kill there would reach
 * the workload. An attempt passes only if it is refused and the agent's
 * log holds its record (deny, or limit), with no `lost` record in its
 * window. Everything it starts is removed at the end, its cgroups too.
 * Exit: 0 every attempt passes, 3 one fails, 1 an error, 2 a usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/bpf.h>
#include <netinet/in.h>

#include "ctl.h"
#include "json.h"
#include "log.h"
#include "manifest.h"
#include "probe.h"
#include "ctl_int.h"

#define MAX_ATTEMPTS	48
#define SETTLE_MS	1500	/* for the last records to reach the log */
#define CONFINE_MS	15000	/* for the agent to confine a probe cgroup */

enum act {
	ACT_CONNECT, ACT_SENDTO, ACT_OPEN_READ, ACT_CREATE, ACT_MODULE,
	ACT_BPF, ACT_MOUNT, ACT_PTRACE, ACT_MEMORY, ACT_PIDS, ACT_RUNTIME,
};

struct attempt {
	char id[96];
	char call[192];
	enum act act;
	char arg[256];		/* address or path */
	int port;
	const char *kind;	/* the record's kind; "a|b": either */
	bool limit;		/* a probe cgroup of its own */
	/* The target's own per-execution folder: a refusal proves something
	 * only from a probe cgroup, never from the target itself. */
	bool own_folder;
	/* Results. */
	bool ran, absent, refused;
	int got_errno;		/* 0: the call succeeded */
	int got_signal;
	pid_t pid;
	int64_t t0, t1;		/* CLOCK_REALTIME ns */
	char cg[PATH_MAX];	/* the probe cgroup it ran in (relative) */
	bool found, lost;
	uint64_t seq;
	char rec_event[16];
	const char *result;	/* pass, fail, absent, skipped */
	char why[256];
};

struct run {
	struct ctl c;
	const char *format, *log_path, *state, *target;
	int timeout_s;
	/* The target. */
	char cgroup[PATH_MAX];	/* a sandbox root, relative */
	uint64_t cgroup_id;
	uint32_t policy_id;
	struct policy_info pi;
	struct mf_policy pol;
	bool have_pol, audit;
	int ns_pid;		/* a process of the target, or 0 */
	int ns_fd;		/* its pidfd, or -1 */
	/* The probe cgroups made so far, to remove. */
	char made[8][PATH_MAX];
	int n_made;
	char no_sibling[256];	/* why limit attempts cannot run */
	pid_t helper;		/* a process outside, for ptrace */
	struct attempt a[MAX_ATTEMPTS];
	int n;
	long log_off;
	size_t n_lost;
};

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void sleep_ms(int ms)
{
	struct timespec t = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&t, NULL);
}

static struct attempt *add(struct run *r, const char *id, enum act act,
			   const char *kind, const char *arg, int port)
{
	struct attempt *a;

	if (r->n == MAX_ATTEMPTS)
		return NULL;
	a = &r->a[r->n++];
	memset(a, 0, sizeof(*a));
	snprintf(a->id, sizeof(a->id), "%s", id);
	a->act = act;
	a->kind = kind;
	a->port = port;
	snprintf(a->arg, sizeof(a->arg), "%s", arg ? arg : "");
	a->limit = act == ACT_MEMORY || act == ACT_PIDS || act == ACT_RUNTIME;
	return a;
}

/* ---- what each child does ------------------------------------------------ */

static int do_connect(const char *addr, int port, bool udp)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	socklen_t len;
	int fd, err = 0;

	if (inet_pton(AF_INET, addr, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		len = sizeof(*s4);
	} else if (inet_pton(AF_INET6, addr, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		len = sizeof(*s6);
	} else {
		return EINVAL;
	}
	fd = socket(ss.ss_family, (udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return errno;
	if (udp) {
		if (sendto(fd, "x", 1, 0, (struct sockaddr *)&ss, len) < 0)
			err = errno;
	} else if (connect(fd, (struct sockaddr *)&ss, len) < 0) {
		/* Not refused: in progress, or the network's own answer. */
		err = errno == EINPROGRESS ? 0 : errno;
	}
	close(fd);
	return err;
}

static int do_memory(void)
{
	size_t chunk = 1 << 20, i;

	/* Until the OOM killer ends it (or 64 GiB: then the limit is not
	 * there). Touched, so every page is charged. */
	for (i = 0; i < 65536; i++) {
		char *p = mmap(NULL, chunk, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return errno;
		memset(p, 1, chunk);
	}
	return 0;
}

static int do_pids(void)
{
	pid_t kids[4096];
	int n = 0, err = 0, i;

	while (n < 4096) {
		pid_t k = fork();

		if (k == 0) {
			pause();
			_exit(0);
		}
		if (k < 0) {
			err = errno;
			break;
		}
		kids[n++] = k;
	}
	for (i = 0; i < n; i++)
		kill(kids[i], SIGKILL);
	for (i = 0; i < n; i++)
		waitpid(kids[i], NULL, 0);
	return err;
}

static int act_run(const struct attempt *a, pid_t helper)
{
	int fd, err = 0;

	switch (a->act) {
	case ACT_CONNECT:
		return do_connect(a->arg, a->port, false);
	case ACT_SENDTO:
		return do_connect(a->arg, a->port, true);
	case ACT_OPEN_READ:
		fd = open(a->arg, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return errno;
		close(fd);
		return 0;
	case ACT_CREATE:
		fd = open(a->arg, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0)
			return errno;
		close(fd);
		unlink(a->arg);		/* not refused: leave nothing behind */
		return 0;
	case ACT_MODULE:
		fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return errno;
		if (syscall(SYS_finit_module, fd, "", 0))
			err = errno;
		close(fd);
		return err;
	case ACT_BPF: {
		union bpf_attr attr;

		memset(&attr, 0, sizeof(attr));
		attr.map_type = BPF_MAP_TYPE_ARRAY;
		attr.key_size = 4;
		attr.value_size = 4;
		attr.max_entries = 1;
		fd = (int)syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof(attr));
		if (fd < 0)
			return errno;
		close(fd);
		return 0;
	}
	case ACT_MOUNT:
		/* A tmpfs over /dev/null: the BPF-LSM refuses it at sb_mount,
		 * before anything is made; let through, the kernel still
		 * fails it (a directory onto a file: ENOTDIR) and nothing the
		 * workload sees changes. */
		if (mount("stockade-probe", "/dev/null", "tmpfs", 0, "size=4k"))
			return errno;
		umount2("/dev/null", MNT_DETACH);
		return 0;
	case ACT_PTRACE:
		if (ptrace(PTRACE_ATTACH, helper, NULL, NULL))
			return errno;
		waitpid(helper, NULL, __WALL);
		ptrace(PTRACE_DETACH, helper, NULL, NULL);
		return 0;
	case ACT_MEMORY:
		return do_memory();
	case ACT_PIDS:
		return do_pids();
	case ACT_RUNTIME:
		pause();
		return 0;
	}
	return EINVAL;
}

/*
 * One attempt in a child: into the target's namespaces, then into the
 * probe cgroup (its cgroup.procs open as procs, from before the setns),
 * then the call; its errno (0: done) through the pipe.
 */
static void child(struct run *r, const struct attempt *a, int procs, int wfd)
{
	int res;

	/* No process to take them from: a network namespace of its own, so
	 * that an attempt let through never reaches a real network. */
	if (r->ns_fd >= 0 ? setns(r->ns_fd, CLONE_NEWNS | CLONE_NEWNET) :
	    unshare(CLONE_NEWNET)) {
		res = 100000 + errno;
		goto out;
	}
	if (write(procs, "0", 1) != 1) {
		res = 200000 + errno;
		goto out;
	}
	res = act_run(a, r->helper);
out:
	if (write(wfd, &res, sizeof(res)) != sizeof(res))
		_exit(3);
	_exit(0);
}

static int wait_child(pid_t pid, int rfd, int timeout_ms, int *res, int *sig)
{
	struct pollfd p = { .fd = rfd, .events = POLLIN };
	int st = 0, n;

	*res = -1;
	*sig = 0;
	n = poll(&p, 1, timeout_ms);
	if (n > 0 && read(rfd, res, sizeof(*res)) != sizeof(*res))
		*res = -1;
	if (n <= 0)
		kill(pid, SIGKILL);
	if (waitpid(pid, &st, 0) == pid && WIFSIGNALED(st))
		*sig = WTERMSIG(st);
	return n <= 0 && !*sig ? -ETIMEDOUT : 0;
}

/* ---- probe cgroups ------------------------------------------------------- */

/* Made and confined by the agent under our policy (its limits written
 * before its entry): 0, or -errno said in why. */
static int probe_cg(struct run *r, char *rel, size_t len, char *why, size_t wlen)
{
	char tag[48], path[PATH_MAX + 16];
	struct entry *e = NULL;
	size_t n_e = 0, i, k;
	uint64_t id;
	int64_t until;
	int err = -ENOENT;

	if (!r->have_pol || !r->pol.n_selectors) {
		snprintf(why, wlen, "the policy's record names no selector");
		return -ENOENT;
	}
	for (k = 0; k < r->pol.n_selectors && err; k++) {
		snprintf(tag, sizeof(tag), "stockade-probe-%d-%d", (int)getpid(), r->n_made);
		err = probe_sibling(r->pol.selectors[k], tag, rel, len);
	}
	if (err) {
		snprintf(why, wlen, "no probe cgroup can be selected: every selector of policy %s names one literal cgroup; add a glob selector (e.g. %s-*) whose matches nothing else runs in, so that the probe's limit attempts never reach the workload",
			 r->pi.name, r->pol.n_selectors ? r->pol.selectors[0] : "/sandboxes/job");
		return -ENOENT;
	}
	snprintf(path, sizeof(path), "%s%s", r->c.cgroot, rel);
	if (mkdir(path, 0755)) {
		err = -errno;
		snprintf(why, wlen, "mkdir %.300s: %s", path, strerror(errno));
		return err;
	}
	snprintf(r->made[r->n_made++], sizeof(r->made[0]), "%.4000s", path);
	id = cgroup__id(r->c.cgroot, rel);
	until = now_ns() + (int64_t)CONFINE_MS * 1000000;
	while (now_ns() < until) {
		if (!ctl_read_entries(&r->c, &e, &n_e)) {
			for (i = 0; i < n_e; i++)
				if (e[i].id == id && e[i].sb.policy_id == r->policy_id) {
					free(e);
					return 0;
				}
			free(e);
			e = NULL;
		}
		sleep_ms(50);
	}
	snprintf(why, wlen, "the agent did not confine %s within %d s: is it running with this policy?",
		 rel, CONFINE_MS / 1000);
	return -ETIMEDOUT;
}

/* Empty and remove a probe cgroup (cgroup.kill where the kernel has it). */
static void cg_remove(const char *path)
{
	char f[PATH_MAX + 16], buf[4096];
	int fd, i;
	ssize_t n;

	snprintf(f, sizeof(f), "%s/cgroup.kill", path);
	fd = open(f, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "1", 1) != 1)
			pr_debug("probe", "cgroup.kill of %s: %s", path, strerror(errno));
		close(fd);
	}
	for (i = 0; i < 100 && rmdir(path) && errno == EBUSY; i++) {
		snprintf(f, sizeof(f), "%s/cgroup.procs", path);
		fd = open(f, O_RDONLY | O_CLOEXEC);
		n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
		if (fd >= 0)
			close(fd);
		if (n > 0) {
			char *p = buf, *end;

			buf[n] = '\0';
			for (; *p; p = end) {
				long pid = strtol(p, &end, 10);

				if (end == p)
					break;
				kill((pid_t)pid, SIGKILL);
				while (*end == '\n')
					end++;
			}
		}
		sleep_ms(50);
	}
}

/* ---- running the attempts ------------------------------------------------- */

static void run_one(struct run *r, struct attempt *a, const char *rel)
{
	char path[PATH_MAX + 32];
	int procs, p[2], res, sig, timeout_ms = r->timeout_s * 1000;
	pid_t pid;

	snprintf(a->cg, sizeof(a->cg), "%s", rel);
	snprintf(path, sizeof(path), "%s%s/cgroup.procs", r->c.cgroot, rel);
	procs = open(path, O_WRONLY | O_CLOEXEC);
	if (procs < 0 || pipe2(p, O_CLOEXEC)) {
		a->result = "fail";
		snprintf(a->why, sizeof(a->why), "opening %.180s: %s", path, strerror(errno));
		if (procs >= 0)
			close(procs);
		return;
	}
	if (a->act == ACT_RUNTIME) {
		if (r->pol.runtime_ms + 5000 > (uint64_t)timeout_ms) {
			a->result = "skipped";
			snprintf(a->why, sizeof(a->why), "the run time (%" PRIu64 " ms) is longer than --timeout %d s: rerun with --timeout %" PRIu64,
				 r->pol.runtime_ms, r->timeout_s, r->pol.runtime_ms / 1000 + 6);
			close(procs);
			close(p[0]);
			close(p[1]);
			return;
		}
		timeout_ms = (int)r->pol.runtime_ms + 5000;
	}
	a->t0 = now_ns();
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		child(r, a, procs, p[1]);
	}
	close(p[1]);
	close(procs);
	if (pid < 0) {
		close(p[0]);
		a->result = "fail";
		snprintf(a->why, sizeof(a->why), "fork: %s", strerror(errno));
		return;
	}
	a->pid = pid;
	a->ran = true;
	if (wait_child(pid, p[0], timeout_ms, &res, &sig) == -ETIMEDOUT) {
		a->got_errno = ETIMEDOUT;
		snprintf(a->why, sizeof(a->why), "no answer within %d s: killed", timeout_ms / 1000);
	}
	close(p[0]);
	a->t1 = now_ns();
	a->got_signal = sig;
	if (res >= 200000) {
		a->result = "fail";
		snprintf(a->why, sizeof(a->why), "joining the probe cgroup failed: %s", strerror(res - 200000));
		a->ran = false;
	} else if (res >= 100000) {
		a->result = "fail";
		snprintf(a->why, sizeof(a->why), "entering the namespaces of pid %d failed: %s",
			 r->ns_pid, strerror(res - 100000));
		if (!r->ns_pid)
			snprintf(a->why, sizeof(a->why), "a network namespace of its own: %s",
				 strerror(res - 100000));
		a->ran = false;
	} else if (res >= 0) {
		a->got_errno = res;
	}
	if (a->ran && a->act == ACT_OPEN_READ && a->got_errno == ENOENT)
		a->absent = true;
	a->refused = a->limit ? (a->act == ACT_PIDS ? a->got_errno == EAGAIN : sig == SIGKILL) :
		     a->got_errno == EPERM || a->got_errno == EACCES;
}

static void run_all(struct run *r)
{
	char rel[PATH_MAX], why[512];
	int i;
	bool have_shared = false;

	/* The non-limit attempts share one probe cgroup; where none can be
	 * made, they run in the target itself (refused calls harm nothing
	 * there). */
	if (!probe_cg(r, rel, sizeof(rel), why, sizeof(why)))
		have_shared = true;
	else
		snprintf(r->no_sibling, sizeof(r->no_sibling), "%.250s", why);
	for (i = 0; i < r->n; i++) {
		struct attempt *a = &r->a[i];

		if (a->limit)
			continue;
		if (a->own_folder && !have_shared) {
			a->result = "skipped";
			snprintf(a->why, sizeof(a->why), "no probe cgroup: the attempts run in the target, whose own folder this is");
			continue;
		}
		run_one(r, a, have_shared ? rel : r->cgroup);
	}
	for (i = 0; i < r->n; i++) {
		struct attempt *a = &r->a[i];

		if (!a->limit)
			continue;
		if (r->no_sibling[0]) {
			a->result = "skipped";
			snprintf(a->why, sizeof(a->why), "%s", r->no_sibling);
			continue;
		}
		if (probe_cg(r, rel, sizeof(rel), why, sizeof(why))) {
			a->result = "fail";
			snprintf(a->why, sizeof(a->why), "%.250s", why);
			continue;
		}
		run_one(r, a, rel);
	}
}

/* ---- the agent's records ------------------------------------------------- */

/* Is kind one of list ("a|b")? */
static bool kind_in(const char *kind, const char *list)
{
	size_t k = strlen(kind);
	const char *p = list;

	while (*p) {
		size_t n = strcspn(p, "|");

		if (n == k && !memcmp(p, kind, k))
			return true;
		p += n + (p[n] == '|');
	}
	return false;
}

static bool rec_fits(const struct run *r, const struct attempt *a,
		     const struct probe_rec *pr)
{
	if (a->limit)
		return !strcmp(pr->event, "limit") && !strcmp(pr->kind, a->kind) &&
		       !strcmp(pr->cgroup, a->cg);
	return !strcmp(pr->event, r->audit ? "audit" : "deny") &&
	       pr->has_pid && pr->pid == (uint64_t)a->pid && kind_in(pr->kind, a->kind);
}

static int read_log(struct run *r)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *f = fopen(r->log_path, "re");
	int i;

	if (!f) {
		pr_err("probe", "reading the agent's log %s failed: %s", r->log_path, strerror(errno));
		return -errno;
	}
	if (fseek(f, r->log_off, SEEK_SET))
		rewind(f);
	while ((n = getline(&line, &cap, f)) > 0) {
		struct probe_rec pr;

		if (!probe_parse_rec(line, (size_t)n, &pr))
			continue;
		if (!strcmp(pr.event, "lost")) {
			r->n_lost++;
			for (i = 0; i < r->n; i++)
				if (r->a[i].ran && pr.ts_ns >= r->a[i].t0 &&
				    pr.ts_ns <= r->a[i].t1 + (int64_t)SETTLE_MS * 1000000)
					r->a[i].lost = true;
			continue;
		}
		for (i = 0; i < r->n; i++) {
			struct attempt *a = &r->a[i];

			if (a->ran && !a->found && rec_fits(r, a, &pr)) {
				a->found = true;
				a->seq = pr.seq;
				snprintf(a->rec_event, sizeof(a->rec_event), "%s", pr.event);
			}
		}
	}
	free(line);
	fclose(f);
	return 0;
}

static const char *err_name(int e)
{
	switch (e) {
	case 0: return "OK";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case ENOENT: return "ENOENT";
	case EAGAIN: return "EAGAIN";
	case ENOTDIR: return "ENOTDIR";
	case ENOEXEC: return "ENOEXEC";
	case EINVAL: return "EINVAL";
	case ENETUNREACH: return "ENETUNREACH";
	case ECONNREFUSED: return "ECONNREFUSED";
	case ETIMEDOUT: return "ETIMEDOUT";
	case EEXIST: return "EEXIST";
	case EROFS: return "EROFS";
	default: return strerrorname_np(e) ?: "E?";
	}
}

static void judge(struct run *r)
{
	int i;

	for (i = 0; i < r->n; i++) {
		struct attempt *a = &r->a[i];

		if (a->result)
			continue;
		if (a->absent) {
			a->result = "absent";
			snprintf(a->why, sizeof(a->why), "%s does not exist in the sandbox's view: nothing to read, not counted",
				 a->arg);
		} else if (r->audit) {
			/* Audit mode lets everything through: the record is
			 * what would have been refused; nothing was enforced. */
			a->result = "fail";
			snprintf(a->why, sizeof(a->why), a->found ?
				 "mode: audit: allowed, with an audit record; nothing was enforced" :
				 "mode: audit: allowed, and no audit record was found");
		} else if (!a->refused) {
			a->result = "fail";
			if (!a->why[0])
				snprintf(a->why, sizeof(a->why), "not refused: %s",
					 a->got_signal ? strsignal(a->got_signal) : err_name(a->got_errno));
		} else if (!a->found) {
			a->result = "fail";
			snprintf(a->why, sizeof(a->why), "refused, but no %s record of kind %s was found in %s",
				 a->limit ? "limit" : "deny", a->kind, r->log_path);
		} else if (a->lost) {
			a->result = "fail";
			snprintf(a->why, sizeof(a->why), "a lost record overlaps the attempt's window: its record may be one of them");
		} else {
			a->result = "pass";
		}
	}
}

/* ---- the plan ------------------------------------------------------------ */

static void plan(struct run *r)
{
	static const struct { const char *id, *addr; } meta[] = {
		{ "credentials/metadata-ipv4", "169.254.169.254" },
		{ "credentials/metadata-ipv4-mapped", "::ffff:169.254.169.254" },
		{ "credentials/metadata-nat64", "64:ff9b::a9fe:a9fe" },
		{ "credentials/metadata-6to4", "2002:a9fe:a9fe::1" },
		{ "credentials/metadata-aws-ipv6", "fd00:ec2::254" },
		{ "credentials/metadata-ecs", "169.254.170.2" },
		{ "credentials/metadata-alibaba", "100.100.100.200" },
	};
	static const struct { const char *id, *path; } cred[] = {
		{ "credentials/etc-shadow", "/etc/shadow" },
		{ "credentials/service-account-token", "/var/run/secrets/kubernetes.io/serviceaccount/token" },
		{ "credentials/aws-credentials", "/root/.aws/credentials" },
	};
	struct attempt *a;
	char p[PATH_MAX];
	size_t i;

	for (i = 0; i < sizeof(meta) / sizeof(meta[0]); i++)
		if ((a = add(r, meta[i].id, ACT_CONNECT, "connect", meta[i].addr, 80)))
			snprintf(a->call, sizeof(a->call), "connect(TCP %s%s%s:80)",
				 strchr(meta[i].addr, ':') ? "[" : "", meta[i].addr,
				 strchr(meta[i].addr, ':') ? "]" : "");
	for (i = 0; i < sizeof(cred) / sizeof(cred[0]); i++)
		if ((a = add(r, cred[i].id, ACT_OPEN_READ, "file", cred[i].path, 0)))
			snprintf(a->call, sizeof(a->call), "open(\"%s\", O_RDONLY)", cred[i].path);
	/* TEST-NET-1 (RFC 5737): never a real host. */
	if ((a = add(r, "egress/tcp-not-allowed", ACT_CONNECT, "connect", "192.0.2.1", 9)))
		snprintf(a->call, sizeof(a->call), "connect(TCP 192.0.2.1:9)");
	if ((a = add(r, "egress/udp-not-allowed", ACT_SENDTO, "sendmsg", "192.0.2.1", 9)))
		snprintf(a->call, sizeof(a->call), "sendto(UDP 192.0.2.1:9)");
	snprintf(p, sizeof(p), "/.stockade-probe-%d", (int)getpid());
	if ((a = add(r, "filesystem/write-outside-scope", ACT_CREATE, "file", p, 0)))
		snprintf(a->call, sizeof(a->call), "open(\"%.140s\", O_WRONLY|O_CREAT|O_EXCL)", p);
	if ((a = add(r, "kernel/load-module", ACT_MODULE, "kernel|capability", "/dev/null", 0)))
		snprintf(a->call, sizeof(a->call), "finit_module(fd of /dev/null)");
	if ((a = add(r, "kernel/bpf", ACT_BPF, "bpf|capability", NULL, 0)))
		snprintf(a->call, sizeof(a->call), "bpf(BPF_MAP_CREATE, array)");
	if ((a = add(r, "kernel/mount", ACT_MOUNT, "mount|capability", "/dev/null", 0)))
		snprintf(a->call, sizeof(a->call), "mount(tmpfs on /dev/null)");
	if ((a = add(r, "kernel/ptrace-outside", ACT_PTRACE, "ptrace|capability", NULL, 0)))
		snprintf(a->call, sizeof(a->call), "ptrace(PTRACE_ATTACH, a process outside every sandbox)");
	if (r->have_pol && r->pol.has_memory && (a = add(r, "limits/memory", ACT_MEMORY, "memory", NULL, 0)))
		snprintf(a->call, sizeof(a->call), "allocate and touch past memory.max (%" PRIu64 " bytes), in a probe cgroup",
			 r->pol.memory);
	if (r->have_pol && r->pol.has_pids && (a = add(r, "limits/pids", ACT_PIDS, "pids", NULL, 0)))
		snprintf(a->call, sizeof(a->call), "fork past pids.max (%" PRIu64 "), in a probe cgroup", r->pol.pids);
	if (r->have_pol && r->pol.has_runtime && (a = add(r, "limits/runtime", ACT_RUNTIME, "runtime", NULL, 0)))
		snprintf(a->call, sizeof(a->call), "sleep past the run time (%" PRIu64 " ms), in a probe cgroup",
			 r->pol.runtime_ms);
}

/* One attempt per write folder of op (expanded for cg when templated). */
static void plan_writes_of(struct run *r, struct mf_policy *op, const char *cg,
			   bool own)
{
	size_t k;

	if (cg && mf_policy_expand(op, cg) == -ENOMEM)
		return;
	for (k = 0; k < op->n_write; k++) {
		struct attempt *a;
		char p[PATH_MAX];

		/* A folder our own write scope covers too is point 3's
		 * failure (a shared path): the attempt then succeeds. */
		snprintf(p, sizeof(p), "%s/.stockade-probe-%d", op->write[k], (int)getpid());
		a = add(r, "filesystem/other-sandbox-write", ACT_CREATE, "file", p, 0);
		if (!a)
			break;
		a->own_folder = own;
		snprintf(a->id, sizeof(a->id), "filesystem/other-sandbox-write/%.24s/%zu",
			 cg ? strrchr(cg, '/') + 1 : op->name ? op->name : "?", k);
		snprintf(a->call, sizeof(a->call), "open(\"%.80s\", O_WRONLY|O_CREAT|O_EXCL) (%s%.40s's write folder)",
			 p, cg ? "the execution " : "policy ", cg ? cg : op->name ? op->name : "?");
	}
}

/*
 * Other executions' write folders: each a file created inside. Those of
 * other policies (once per policy), and, with per-execution folders
 * (policy/policy.h), those of the other cgroups of every policy, this one
 * included: the probe cgroup must not reach the workload's own folder.
 */
static void plan_other_writes(struct run *r, const struct entry *e, size_t n_e,
			      const char *dir)
{
	uint64_t seen[64];
	size_t n_seen = 0, n_own = 0, i, j;

	for (i = 0; i < n_e; i++) {
		struct policy_info pi;
		struct mf_policy op;
		const char *cg;
		bool dup = false;

		if (e[i].sb.root_id != e[i].id || e[i].sb.policy_id == POLICY_ID_CONFLICT)
			continue;
		ctl_policy_of(&r->c, e[i].sb.policy_id, &pi);
		for (j = 0; j < n_seen; j++)
			dup |= seen[j] == pi.hash;
		if (ctl_blob_read(dir, pi.hash, &op))
			continue;
		cg = ctl_path_of(&r->c, e[i].id);
		if (mf_policy_templated(&op)) {
			/* At most 8 executions: one refused is the proof, a
			 * few show it is not one cgroup's accident. */
			if (n_own < 8 && cg && cg[0]) {
				n_own++;
				plan_writes_of(r, &op, cg, e[i].id == r->cgroup_id);
			}
		} else if (!dup && n_seen < 64 && e[i].sb.policy_id != r->policy_id) {
			seen[n_seen++] = pi.hash;
			plan_writes_of(r, &op, NULL, false);
		}
		mf_policy_free(&op);
	}
}

/* ---- output -------------------------------------------------------------- */

static bool all_pass(const struct run *r)
{
	int i, counted = 0;

	for (i = 0; i < r->n; i++) {
		if (!strcmp(r->a[i].result, "absent"))
			continue;
		counted++;
		if (strcmp(r->a[i].result, "pass"))
			return false;
	}
	return counted > 0;
}

static void actual(const struct attempt *a, char *buf, size_t len)
{
	if (!a->ran)
		snprintf(buf, len, "not run");
	else if (a->got_signal)
		snprintf(buf, len, "%s", sigabbrev_np(a->got_signal) ? sigabbrev_np(a->got_signal) : "signal");
	else
		snprintf(buf, len, "%s", err_name(a->got_errno));
	if (a->got_signal && strlen(buf) + 4 < len) {
		memmove(buf + 3, buf, strlen(buf) + 1);
		memcpy(buf, "SIG", 3);
	}
}

static const char *expected(const struct attempt *a)
{
	switch (a->act) {
	case ACT_MEMORY: case ACT_RUNTIME: return "SIGKILL";
	case ACT_PIDS: return "EAGAIN";
	default: return "EPERM or EACCES";
	}
}

static void print_text(const struct run *r, bool pass)
{
	char act[32];
	int i;

	printf("stockade probe: %s (policy %s, %s)", r->cgroup, r->pi.name,
	       r->audit ? "mode audit: nothing is enforced" : "enforce");
	if (r->ns_pid)
		printf(", in the namespaces of pid %d", r->ns_pid);
	else
		printf(", no process inside: each attempt in a network namespace of its own");
	printf("\n");
	if (r->no_sibling[0])
		printf("  note: %s\n", r->no_sibling);
	for (i = 0; i < r->n; i++) {
		const struct attempt *a = &r->a[i];

		actual(a, act, sizeof(act));
		printf("  %-6s %-40s %s: want %s, got %s", a->result, a->id, a->call,
		       expected(a), act);
		if (a->found)
			printf(", %s record seq %" PRIu64, a->rec_event, a->seq);
		if (strcmp(a->result, "pass") && a->why[0])
			printf(" (%s)", a->why);
		printf("\n");
	}
	printf("stockade probe: %s\n", pass ? "every attempt refused and recorded" :
	       r->audit ? "FAIL: mode audit enforces nothing" : "FAIL: see the attempts above");
}

static void print_json(const struct run *r, bool pass)
{
	struct json j;
	char act[32];
	int i;

	json_init(&j);
	json_begin(&j);
	json_str(&j, "cgroup", r->cgroup);
	json_str(&j, "policy", r->pi.name);
	json_str(&j, "mode", r->audit ? "audit" : "enforce");
	json_u64(&j, "namespaces_of_pid", (uint64_t)r->ns_pid);
	if (r->no_sibling[0])
		json_str(&j, "note", r->no_sibling);
	json_u64(&j, "lost_records", r->n_lost);
	json_str(&j, "result", pass ? "pass" : "fail");
	json_end(&j);
	fputs(j.buf, stdout);
	for (i = 0; i < r->n; i++) {
		const struct attempt *a = &r->a[i];

		actual(a, act, sizeof(act));
		json_begin(&j);
		json_str(&j, "attempt", a->id);
		json_str(&j, "call", a->call);
		json_str(&j, "expected", expected(a));
		json_str(&j, "actual", act);
		if (a->ran)
			json_u64(&j, "pid", (uint64_t)a->pid);
		json_str(&j, "probe_cgroup", a->cg);
		if (a->found) {
			json_u64(&j, "record_seq", a->seq);
			json_str(&j, "record_event", a->rec_event);
		}
		json_str(&j, "result", a->result);
		if (a->why[0])
			json_str(&j, "why", a->why);
		json_end(&j);
		fputs(j.buf, stdout);
	}
	json_free(&j);
}

/* ---- the command --------------------------------------------------------- */

static int parse(struct run *r, int argc, char **argv)
{
	enum { OPT_BPFFS = 256, OPT_CGROOT, OPT_FORMAT, OPT_TIMEOUT, OPT_LOG, OPT_STATE };
	static const struct option opts[] = {
		{ "bpffs", required_argument, NULL, OPT_BPFFS },
		{ "cgroup-root", required_argument, NULL, OPT_CGROOT },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "log", required_argument, NULL, OPT_LOG },
		{ "state", required_argument, NULL, OPT_STATE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int k;

	ctl_init(&r->c);
	r->format = "text";
	r->timeout_s = 10;
	r->ns_fd = -1;
	optind = 1;
	while ((k = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (k) {
		case OPT_BPFFS: r->c.bpffs = optarg; break;
		case OPT_CGROOT: r->c.cgroup_root = optarg; break;
		case OPT_FORMAT: r->format = optarg; break;
		case OPT_TIMEOUT: r->timeout_s = atoi(optarg); break;
		case OPT_LOG: r->log_path = optarg; break;
		case OPT_STATE: r->state = optarg; break;
		case 'h':
			printf("usage: stockade probe CGROUP|POLICY --log FILE [--format text|json] [--timeout S]\n"
			       "                      [--bpffs DIR] [--cgroup-root DIR] [--state FILE]\n");
			exit(0);
		default:
			return 2;
		}
	}
	if (optind + 1 != argc || (strcmp(r->format, "text") && strcmp(r->format, "json")) ||
	    r->timeout_s <= 0) {
		fprintf(stderr, "usage: stockade probe CGROUP|POLICY --log FILE [--format text|json] [--timeout S]\n");
		return 2;
	}
	if (!r->log_path) {
		fprintf(stderr, "stockade probe: --log FILE is required: the agent's --log, where the probe finds the record of each refusal\n");
		return 2;
	}
	r->target = argv[optind];
	return 0;
}

/* The target's sandbox root, policy and a process to take namespaces
 * from. 0, or 1 said. */
static int find_target(struct run *r, const struct entry *e, size_t n_e, const char *dir)
{
	char path[PATH_MAX + 32], buf[64];
	size_t i;
	FILE *f;

	for (i = 0; i < n_e; i++) {
		struct policy_info pi;

		if (e[i].sb.root_id != e[i].id)
			continue;
		ctl_policy_of(&r->c, e[i].sb.policy_id, &pi);
		if (r->target[0] == '/' ? !strcmp(ctl_path_of(&r->c, e[i].id), r->target) :
		    !strcmp(pi.name, r->target)) {
			snprintf(r->cgroup, sizeof(r->cgroup), "%s", ctl_path_of(&r->c, e[i].id));
			r->cgroup_id = e[i].id;
			r->policy_id = e[i].sb.policy_id;
			r->pi = pi;
			break;
		}
	}
	if (i == n_e) {
		pr_err("probe", "%s is not a confined cgroup (a selected one, relative to the cgroup2 mount) nor the name of a policy in force; `stockade status` lists both",
		       r->target);
		return 1;
	}
	r->audit = r->pi.mode == SANDBOX_AUDIT;
	r->have_pol = !ctl_blob_read(dir, r->pi.hash, &r->pol);
	snprintf(path, sizeof(path), "%.2000s%.2000s/cgroup.procs", r->c.cgroot, r->cgroup);
	f = fopen(path, "re");
	if (f && fgets(buf, sizeof(buf), f))
		r->ns_pid = atoi(buf);
	if (f)
		fclose(f);
	if (r->ns_pid > 0) {
		r->ns_fd = (int)syscall(SYS_pidfd_open, r->ns_pid, 0);
		if (r->ns_fd < 0) {
			pr_warn("probe", "pidfd_open(%d) failed: %s; the attempts run in the host's namespaces",
				r->ns_pid, strerror(errno));
			r->ns_pid = 0;
		}
	}
	return 0;
}

int ctl__probe(int argc, char **argv)
{
	struct run *r = calloc(1, sizeof(*r));
	struct entry *e = NULL;
	char dir[PATH_MAX];
	size_t n_e = 0;
	struct stat st;
	bool pass;
	int rc = 1, i;

	if (!r) {
		pr_err("probe", "out of memory");
		return 1;
	}
	rc = parse(r, argc, argv);
	if (rc)
		goto out_free;
	rc = 1;
	if (ctl_open(&r->c)) {
		pr_err("probe", "nothing is pinned at %s: no sandbox is confined; start the agent first", r->c.bpffs);
		goto out;
	}
	if (stat(r->log_path, &st)) {
		pr_err("probe", "the agent's log %s: %s; pass the file the agent writes (stockade agent --log FILE)",
		       r->log_path, strerror(errno));
		goto out;
	}
	r->log_off = (long)st.st_size;
	ctl_run_dir(r->state, dir, sizeof(dir));
	if (ctl_read_entries(&r->c, &e, &n_e))
		goto out;
	if (find_target(r, e, n_e, dir))
		goto out;
	plan(r);
	plan_other_writes(r, e, n_e, dir);
	/* The ptrace target: a child of ours, outside every sandbox. */
	r->helper = fork();
	if (r->helper == 0) {
		alarm(600);
		for (;;)
			pause();
	}
	run_all(r);
	sleep_ms(SETTLE_MS);
	if (read_log(r))
		goto out;
	judge(r);
	pass = all_pass(r);
	if (!strcmp(r->format, "json"))
		print_json(r, pass);
	else
		print_text(r, pass);
	rc = pass ? 0 : 3;
out:
	if (r->helper > 0) {
		kill(r->helper, SIGKILL);
		waitpid(r->helper, NULL, 0);
	}
	for (i = r->n_made - 1; i >= 0; i--)
		cg_remove(r->made[i]);
	if (r->ns_fd >= 0)
		close(r->ns_fd);
	if (r->have_pol)
		mf_policy_free(&r->pol);
	free(e);
	ctl_close(&r->c);
out_free:
	free(r);
	return rc;
}
