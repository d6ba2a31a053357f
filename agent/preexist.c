// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Fds held from before confinement (issue 14; README, "Fds from before
 * confinement"). The BPF-LSM programs judge an open when it happens, so
 * an fd a process opened before its cgroup was confined (or before an
 * outsider moved it into a confined cgroup) keeps working. Once a second
 * the agent reads each confined cgroup's cgroup.procs, and walks
 * /proc/PID/fd (and fdinfo for the flags) of each process it has not met
 * yet: at the agent's start that is every process already inside, later
 * those of a newly selected cgroup and those moved in from outside, and
 * children (whose inherited fds are just as held). It writes one
 * `preexisting_fd` record per fd the policy would refuse now (the pure
 * judgement: agent/preexist_judge.h), once per (process, fd); with
 * `files.preexisting: kill` it then ends the holder (SIGKILL) with a
 * `limit` record of kind preexisting_fd.
 *
 * Without BPF-LSM (degraded: no file scope) only sockets are judged:
 * nothing would refuse the files now either.
 *
 * One instance per agent (the daemon is single-threaded): file-static
 * state, reached only through preexist__loop_add() and preexist__fini().
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "agent.h"
#include "events.h"
#include "log.h"
#include "loop.h"
#include "policy.h"
#include "preexist_judge.h"
#include "preexist_agent.h"

#define PREEXIST_INTERVAL_US	1000000
#define PREEXIST_MAX_PEERS	4096	/* sockets of one process's netns read */

struct proc_key {
	uint32_t pid;
	uint64_t start;		/* /proc/PID/stat starttime: pid reuse */
	unsigned int gen;	/* last scan that found it in a sandbox */
};

struct rules {
	const struct policy *p;	/* compiled from; NULL: none yet */
	struct file_compiled files;
	struct net_compiled net;
	bool ok;
};

static struct {
	struct agent *a;
	struct loop_source *tick;
	struct proc_key *seen;
	size_t n_seen, cap_seen;
	unsigned int gen;
	char **homes;
	size_t n_homes;
	bool homes_read;
	struct rules rules[POLICY_MAX];
	uint64_t reported, killed;
	/* No file scope on this kernel (degraded): nothing refuses a file
	 * now, so only sockets are judged. */
	bool no_files;
} P;

static bool read_small(const char *path, char *buf, size_t len)
{
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	r = read(fd, buf, len - 1);
	close(fd);
	if (r < 0)
		return false;
	buf[r] = '\0';
	return true;
}

/* starttime (field 22 of /proc/PID/stat), 0 when it is gone. */
static uint64_t proc_start(uint32_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long st = 0;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/stat", pid);
	if (!read_small(path, buf, sizeof(buf)))
		return 0;
	p = strrchr(buf, ')');	/* comm may hold spaces and parentheses */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
			 &st) != 1)
		return 0;
	return st ? st : 1;
}

/* Already met (and marks it found in this scan)? */
static bool seen(uint32_t pid, uint64_t start)
{
	struct proc_key *k;
	size_t i;

	for (i = 0; i < P.n_seen; i++) {
		if (P.seen[i].pid == pid && P.seen[i].start == start) {
			P.seen[i].gen = P.gen;
			return true;
		}
	}
	if (P.n_seen == P.cap_seen) {
		size_t cap = P.cap_seen ? P.cap_seen * 2 : 256;

		k = realloc(P.seen, cap * sizeof(*k));
		if (!k)
			return true;	/* no room to remember: never twice */
		P.seen = k;
		P.cap_seen = cap;
	}
	P.seen[P.n_seen++] = (struct proc_key){ pid, start, P.gen };
	return false;
}

/* Forget processes no scan found any more (gone, or moved out). */
static void prune(void)
{
	size_t i = 0;

	while (i < P.n_seen) {
		if (P.seen[i].gen != P.gen)
			P.seen[i] = P.seen[--P.n_seen];
		else
			i++;
	}
}

/* The rules policy id is judged by, compiled as the agent loaded them. */
static struct rules *rules_of(uint32_t id, const struct policy **pp)
{
	const struct policy *p = names__policy(&P.a->names, id);
	struct rules *r;
	char err[POLICY_DIAG_MAX];

	*pp = p;
	if (!p || id >= POLICY_MAX)
		return NULL;
	r = &P.rules[id];
	if (r->p == p)
		return r->ok ? r : NULL;
	if (r->p) {
		file_compiled__free(&r->files);
		net_compiled__free(&r->net);
	}
	memset(r, 0, sizeof(*r));
	r->p = p;
	if (!P.homes_read) {
		P.homes_read = true;
		if (file_rules__homes(&P.homes, &P.n_homes))
			P.n_homes = 0;
	}
	if (file_rules__compile(p, id, (const char *const *)P.homes, P.n_homes,
				&r->files, err, sizeof(err)) ||
	    net_rules__compile(p, id, &r->net, err, sizeof(err))) {
		pr_warn("preexist", "compiling policy %s for the fd check failed: %s; its held fds are not checked",
			p->name, err);
		return NULL;
	}
	r->ok = true;
	return r;
}

/* The peers of the sockets in pid's network namespace (tcp, udp; v4, v6). */
struct peers {
	struct preexist_peer v[PREEXIST_MAX_PEERS];
	uint8_t proto[PREEXIST_MAX_PEERS];
	size_t n;
	bool read;
};

static void peers_read(struct peers *ps, uint32_t pid)
{
	static const struct { const char *file; int family; uint8_t proto; } f[] = {
		{ "tcp", 4, NET_PROTO_TCP }, { "tcp6", 6, NET_PROTO_TCP },
		{ "udp", 4, NET_PROTO_UDP }, { "udp6", 6, NET_PROTO_UDP },
	};
	char path[64], line[512];
	size_t i;
	FILE *fp;

	ps->read = true;
	ps->n = 0;
	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		snprintf(path, sizeof(path), "/proc/%" PRIu32 "/net/%s", pid, f[i].file);
		fp = fopen(path, "re");
		if (!fp)
			continue;
		while (ps->n < PREEXIST_MAX_PEERS && fgets(line, sizeof(line), fp))
			if (preexist__parse_peer(line, f[i].family, &ps->v[ps->n]))
				ps->proto[ps->n++] = f[i].proto;
		fclose(fp);
	}
}

static void cg_fields(struct json *j, const struct sandbox_cg *cg,
		      uint32_t pid, const char *comm)
{
	json_str(j, "policy", names__policy_name(&P.a->names, cg->policy_id));
	json_str_raw(j, "cgroup", cg->path, strlen(cg->path));
	json_u64(j, "cgroup_id", cg->id);
	json_u64(j, "pid", pid);
	json_str_raw(j, "comm", comm, strlen(comm));
}

static const char *reason_name(uint8_t r)
{
	switch (r) {
	case EV_REASON_PROTECTED: return "protected";
	case EV_REASON_DENIED_PATH: return "denied_path";
	case EV_REASON_PATH_TOO_LONG: return "path_too_long";
	case EV_REASON_METADATA: return "metadata_endpoint";
	case EV_REASON_NOT_ALLOWED: return "not_allowed";
	default: return "outside_scope";
	}
}

/* Walk pid's fds; the number refused now. */
static unsigned int scan_pid(const struct sandbox_cg *cg, uint32_t pid,
			     const struct policy *p, const struct rules *r,
			     const char *action, struct peers *ps)
{
	char path[96], link[FILE_BUF_SIZE], info[512], comm[32] = "", *s;
	unsigned long flags;
	unsigned int n = 0;
	struct dirent *de;
	ssize_t len;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/comm", pid);
	if (read_small(path, comm, sizeof(comm)) && (s = strchr(comm, '\n')))
		*s = '\0';
	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/fd", pid);
	d = opendir(path);
	if (!d)
		return 0;
	ps->read = false;
	while ((de = readdir(d))) {
		const struct preexist_peer *peer = NULL;
		uint8_t reason = 0, proto = 0;
		unsigned long long ino;
		int fd, access;
		size_t i;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		fd = atoi(de->d_name);
		snprintf(path, sizeof(path), "/proc/%" PRIu32 "/fd/%d", pid, fd);
		len = readlink(path, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		snprintf(path, sizeof(path), "/proc/%" PRIu32 "/fdinfo/%d", pid, fd);
		if (!read_small(path, info, sizeof(info)) ||
		    !(s = strstr(info, "flags:")) || sscanf(s + 6, "%lo", &flags) != 1)
			continue;
		access = preexist__access(flags);
		if (sscanf(link, "socket:[%llu]", &ino) == 1) {
			if (!ps->read)
				peers_read(ps, pid);
			for (i = 0; i < ps->n && !peer; i++)
				if (ps->v[i].inode == ino) {
					peer = &ps->v[i];
					proto = ps->proto[i];
				}
			if (peer)
				reason = preexist__judge_peer(&r->net, cg->policy_id,
							      p->net.default_allow,
							      peer, proto);
		} else if (!P.no_files) {
			reason = preexist__judge_path(&r->files, cg->policy_id,
						      link, access);
		}
		if (!reason)
			continue;
		n++;
		P.reported++;
		events__begin(P.a, "preexisting_fd");
		cg_fields(&P.a->j, cg, pid, comm);
		json_u64(&P.a->j, "fd", (uint64_t)fd);
		if (peer) {
			char addr[INET6_ADDRSTRLEN];

			inet_ntop(peer->family == 4 ? AF_INET : AF_INET6, peer->addr,
				  addr, sizeof(addr));
			json_str(&P.a->j, "family", peer->family == 4 ? "ipv4" : "ipv6");
			json_str(&P.a->j, "daddr", addr);
			json_u64(&P.a->j, "dport", peer->port);
			json_str(&P.a->j, "proto", proto == NET_PROTO_TCP ? "tcp" : "udp");
		} else {
			json_str_raw(&P.a->j, "path", link, strlen(link));
		}
		json_str(&P.a->j, "access", preexist__access_name(access ?: PREEXIST_READ));
		json_str(&P.a->j, "reason", reason_name(reason));
		json_str(&P.a->j, "action", action);
		events__emit(P.a);
	}
	closedir(d);
	if (n && !strcmp(action, "kill")) {
		bool ok = !kill((pid_t)pid, SIGKILL);

		P.killed += ok;
		events__begin(P.a, "limit");
		json_str(&P.a->j, "kind", "preexisting_fd");
		cg_fields(&P.a->j, cg, pid, comm);
		json_u64(&P.a->j, "fds", n);
		json_bool(&P.a->j, "killed", ok);
		events__emit(P.a);
	}
	return n;
}

/* One pass over every confined cgroup's processes. */
static void scan(void)
{
	struct sandbox_table *t = P.a->names.cgt;
	struct peers *ps = NULL;
	char path[PATH_MAX + 64];
	size_t i;

	P.gen++;
	for (i = 0; i < t->n; i++) {
		const struct sandbox_cg *cg = &t->v[i];
		const struct policy *p;
		const struct rules *r;
		unsigned long pid;
		FILE *fp;

		if (cg->released)
			continue;
		snprintf(path, sizeof(path), "%s%s/cgroup.procs", P.a->cgroot, cg->path);
		fp = fopen(path, "re");
		if (!fp)
			continue;
		r = NULL;
		p = NULL;
		while (fscanf(fp, "%lu", &pid) == 1) {
			uint64_t st = proc_start((uint32_t)pid);

			if (!st || seen((uint32_t)pid, st))
				continue;
			if (!r && !(r = rules_of(cg->policy_id, &p)))
				break;
			if (!ps && !(ps = malloc(sizeof(*ps))))
				break;
			scan_pid(cg, (uint32_t)pid, p, r,
				 p->files.preexisting == POLICY_PREEXISTING_KILL &&
				 p->mode == POLICY_ENFORCE ? "kill" : "report", ps);
		}
		/* The rest of this cgroup's pids stay marked found. */
		while (fscanf(fp, "%lu", &pid) == 1) {
			uint64_t st = proc_start((uint32_t)pid);

			if (st)
				seen((uint32_t)pid, st);
		}
		fclose(fp);
	}
	free(ps);
	prune();
}

static int on_tick(struct loop_source *s, uint32_t revents, void *userdata)
{
	int err;

	(void)revents;
	(void)userdata;
	scan();
	err = loop__timer_in(s, PREEXIST_INTERVAL_US);
	if (err)
		pr_err("preexist", "arming the held-fd scan's timer failed: %s",
		       strerror(-err));
	return err;
}

int preexist__loop_add(struct agent *a, struct loop *l)
{
	size_t i;
	int err;

	P.a = a;
	for (i = 0; i < a->n_degraded; i++)
		if (!strcmp(a->degraded[i], "file_scope"))
			P.no_files = true;
	P.tick = loop__add_timer(l, LOOP_PRIO_NORMAL, on_tick, NULL);
	if (!P.tick) {
		err = -errno;
		pr_err("preexist", "adding the held-fd scan to the main loop failed: %s",
		       strerror(errno));
		return err;
	}
	return loop__timer_in(P.tick, 0);
}

void preexist__fini(void)
{
	size_t i;

	for (i = 0; i < POLICY_MAX; i++) {
		if (!P.rules[i].p)
			continue;
		file_compiled__free(&P.rules[i].files);
		net_compiled__free(&P.rules[i].net);
	}
	for (i = 0; i < P.n_homes; i++)
		free(P.homes[i]);
	free(P.homes);
	free(P.seen);
	memset(&P, 0, sizeof(P));
}
