// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Fds held from before confinement (issue 14; README, "Fds from before
 * confinement"). The BPF-LSM programs judge an open when it happens, so
 * an fd a process opened before its cgroup was confined (or before an
 * outsider moved it into a confined cgroup) keeps working. The agent
 * walks /proc/PID/fd (and fdinfo for the flags) of such processes, and
 * writes one `preexisting_fd` record per fd the policy would refuse now
 * (the pure judgement: agent/preexist_judge.h), once per (process,
 * cgroup, policy); with `files.preexisting: kill` it then ends the holder
 * (SIGKILL) with a `limit` record of kind preexisting_fd.
 *
 * When, without a periodic scan:
 *   - a cgroup confined, or switched to another policy (a reload): all
 *     its processes, after the turn of the main loop that did it (the
 *     sandbox table's held_checked says which policy a cgroup was last
 *     walked under);
 *   - a process entering a confined cgroup from outside (a move, or
 *     clone3(CLONE_INTO_CGROUP)): that process, from the kernel's notice
 *     (include/preexist.h, bpf/preexist.bpf.c). A lost notice makes the
 *     next turn walk every confined cgroup again;
 *   - after a kill: the cgroup again, for a child the holder forked
 *     before it died.
 * At the agent's start every confined cgroup is "newly confined".
 *
 * Without BPF-LSM (degraded: no file scope) only sockets are judged:
 * nothing would refuse the files now either.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "events.h"
#include "events_agent.h"
#include "log.h"
#include "records.h"
#include "loop.h"
#include "names.h"
#include "policy.h"
#include "preexist.h"
#include "sandbox.h"
#include "preexist_judge.h"
#include "preexist_agent.h"
#include "stockade.skel.h"

#define PREEXIST_MAX_PEERS	4096	/* sockets of one process's netns read */
#define SEEN_MIN_CAP		256

/* A process walked for a cgroup under a policy. */
struct proc_key {
	uint64_t start;		/* /proc/PID/stat starttime: pid reuse */
	uint64_t cgid;
	uint32_t pid;
	uint32_t policy_id;
};

struct rules {
	const struct policy *p;	/* compiled from; NULL: none yet */
	struct file_compiled files;
	struct net_compiled net;
	bool ok;
};

/* The peers of the sockets in pid's network namespace (tcp, udp; v4, v6). */
struct peers {
	struct preexist_peer v[PREEXIST_MAX_PEERS];
	uint8_t proto[PREEXIST_MAX_PEERS];
	size_t n;
	bool read;
};

struct preexist {
	struct preexist_cfg cfg;
	struct ring_buffer *ring;	/* join notices */
	struct bpf_link *attach_link, *fork_link;
	uint64_t join_lost_seen;
	struct proc_key *seen;
	size_t n_seen, cap_seen;
	char **homes;
	size_t n_homes;
	bool homes_read;
	struct rules rules[POLICY_MAX];
	struct peers *ps;
	uint64_t reported, killed;
};

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

/* The rules policy id is judged by, compiled as the agent loaded them. */
static struct rules *rules_of(struct preexist *P, uint32_t id,
			      const struct policy **pp)
{
	const struct policy *p = names__policy(P->cfg.names, id);
	struct rules *r;
	char err[POLICY_DIAG_MAX];

	*pp = p;
	if (!p || id >= POLICY_MAX)
		return NULL;
	r = &P->rules[id];
	if (r->p == p)
		return r->ok ? r : NULL;
	if (r->p) {
		file_compiled__free(&r->files);
		net_compiled__free(&r->net);
	}
	memset(r, 0, sizeof(*r));
	r->p = p;
	if (!P->homes_read) {
		P->homes_read = true;
		if (file_rules__homes(&P->homes, &P->n_homes))
			P->n_homes = 0;
	}
	if (file_rules__compile(p, id, (const char *const *)P->homes, P->n_homes,
				&r->files, err, sizeof(err)) ||
	    net_rules__compile(p, id, &r->net, err, sizeof(err))) {
		pr_warn("preexist", "compiling policy %s for the fd check failed: %s; its held fds are not checked",
			p->name, err);
		return NULL;
	}
	r->ok = true;
	return r;
}

static void peers_read(struct peers *ps, uint32_t pid)
{
	/* UDP-Lite has tables of its own, in udp's format; its sockets
	 * are judged by the udp rules, and recorded as udp, as the BPF
	 * programs record them. */
	static const struct { const char *file; int family; uint8_t proto; } f[] = {
		{ "tcp", 4, NET_PROTO_TCP }, { "tcp6", 6, NET_PROTO_TCP },
		{ "udp", 4, NET_PROTO_UDP }, { "udp6", 6, NET_PROTO_UDP },
		{ "udplite", 4, NET_PROTO_UDP }, { "udplite6", 6, NET_PROTO_UDP },
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

/* A record's policy, cgroup, cgroup_id, pid and comm. */
static void holder_fields(struct events *ev, const struct sandbox_cg *cg,
			  uint32_t pid, const char *comm)
{
	events__cgroup_fields(ev, cg);
	json_u64(&ev->j, "pid", pid);
	json_str_raw(&ev->j, "comm", comm, strlen(comm));
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

/* Walk pid's fds: a record per fd refused now; with kill, the holder
 * killed (true). */
static bool scan_pid(struct preexist *P, const struct sandbox_cg *cg,
		     uint32_t pid, const struct policy *p,
		     const struct rules *r, const char *action)
{
	struct events *ev = P->cfg.ev;
	struct peers *ps = P->ps;
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
		return false;
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
		} else if (!P->cfg.no_files) {
			reason = preexist__judge_path(&r->files, cg->policy_id,
						      link, access);
		}
		if (!reason)
			continue;
		n++;
		P->reported++;
		events__begin(ev, "preexisting_fd");
		holder_fields(ev, cg, pid, comm);
		json_u64(&ev->j, "fd", (uint64_t)fd);
		if (peer) {
			json_str(&ev->j, "family", peer->family == 4 ? "ipv4" : "ipv6");
			records__addr(&ev->j, "daddr", peer->family == 4, peer->addr);
			json_u64(&ev->j, "dport", peer->port);
			json_str(&ev->j, "proto", proto == NET_PROTO_TCP ? "tcp" : "udp");
		} else {
			json_str_raw(&ev->j, "path", link, strlen(link));
		}
		json_str(&ev->j, "access", preexist__access_name(access ?: PREEXIST_READ));
		json_str(&ev->j, "reason", reason_name(reason));
		json_str(&ev->j, "action", action);
		events__emit(ev);
	}
	closedir(d);
	if (n && !strcmp(action, "kill")) {
		bool ok = !kill((pid_t)pid, SIGKILL);

		P->killed += ok;
		events__begin(ev, "limit");
		json_str(&ev->j, "kind", "preexisting_fd");
		holder_fields(ev, cg, pid, comm);
		json_u64(&ev->j, "fds", n);
		json_bool(&ev->j, "killed", ok);
		events__emit(ev);
		return ok;
	}
	return false;
}

/* Already walked for cg under its policy (else remembered now)? */
static bool seen(struct preexist *P, const struct sandbox_cg *cg, uint32_t pid,
		 uint64_t start)
{
	struct proc_key *k;
	size_t i;

	for (i = 0; i < P->n_seen; i++) {
		k = &P->seen[i];
		if (k->pid == pid && k->start == start && k->cgid == cg->id &&
		    k->policy_id == cg->policy_id)
			return true;
	}
	if (P->n_seen == P->cap_seen) {
		/* Full: forget the processes that are gone first. */
		for (i = 0; i < P->n_seen;) {
			if (proc_start(P->seen[i].pid) != P->seen[i].start)
				P->seen[i] = P->seen[--P->n_seen];
			else
				i++;
		}
	}
	if (P->n_seen == P->cap_seen) {
		size_t cap = P->cap_seen ? P->cap_seen * 2 : SEEN_MIN_CAP;

		k = realloc(P->seen, cap * sizeof(*k));
		if (!k)
			return false;	/* walked, unremembered: maybe twice */
		P->seen = k;
		P->cap_seen = cap;
	}
	P->seen[P->n_seen++] = (struct proc_key){ .start = start, .cgid = cg->id,
						  .pid = pid, .policy_id = cg->policy_id };
	return false;
}

/* A process moved in again is walked again. */
static void forget(struct preexist *P, uint32_t pid)
{
	size_t i;

	for (i = 0; i < P->n_seen;) {
		if (P->seen[i].pid == pid)
			P->seen[i] = P->seen[--P->n_seen];
		else
			i++;
	}
}

static const char *action_of(const struct policy *p)
{
	return p->files.preexisting == POLICY_PREEXISTING_KILL &&
	       p->mode == POLICY_ENFORCE ? "kill" : "report";
}

/*
 * A policy with per-execution folders: held fds are judged by the scope
 * of cg's own sandbox (its selected cgroup's folders), as the programs
 * judge its accesses (include/file.h), compiled for this walk only.
 * Failing that, by the policy's base scope, which opens no folder.
 */
static bool check_pid_own(struct preexist *P, struct sandbox_cg *cg, uint32_t pid,
			  const struct policy *p, const struct rules *base)
{
	const struct sandbox_cg *root = names__cg(P->cfg.names, cg->root_id);
	struct rules own = { .p = p, .net = base->net };
	char err[POLICY_DIAG_MAX];
	bool killed;

	if (!root || file_rules__compile_cg(p, cg->policy_id, root->path,
					    (const char *const *)P->homes, P->n_homes,
					    &own.files, err, sizeof(err)))
		return scan_pid(P, cg, pid, p, base, action_of(p));
	own.ok = true;
	killed = scan_pid(P, cg, pid, p, &own, action_of(p));
	file_compiled__free(&own.files);
	return killed;
}

/* Walk pid for cg unless done already; true when it was killed. */
static bool check_pid(struct preexist *P, struct sandbox_cg *cg, uint32_t pid)
{
	const struct policy *p;
	const struct rules *r;
	uint64_t st = proc_start(pid);

	if (!st || seen(P, cg, pid, st))
		return false;
	r = rules_of(P, cg->policy_id, &p);
	if (!r)
		return false;
	if (policy__has_templates(p))
		return check_pid_own(P, cg, pid, p, r);
	return scan_pid(P, cg, pid, p, r, action_of(p));
}

/* Every process of cg. */
static void check_cg(struct preexist *P, struct sandbox_cg *cg)
{
	char path[PATH_MAX + 64];
	bool killed = false;
	unsigned long pid;
	FILE *fp;

	cg->held_checked = cg->policy_id + 1;
	snprintf(path, sizeof(path), "%s%s/cgroup.procs", P->cfg.cgroot, cg->path);
	fp = fopen(path, "re");
	if (!fp)
		return;		/* removed meanwhile */
	while (fscanf(fp, "%lu", &pid) == 1)
		killed |= check_pid(P, cg, (uint32_t)pid);
	fclose(fp);
	/* A child forked before the kill holds the same fds: again, next
	 * turn (what was walked is not walked twice). */
	if (killed)
		cg->held_checked = 0;
}

/* Is pid's cgroup (v2) cg now? It may have moved on since the notice. */
static bool in_cg(uint32_t pid, const struct sandbox_cg *cg)
{
	char path[64], buf[PATH_MAX + 64], *line, *nl;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/cgroup", pid);
	if (!read_small(path, buf, sizeof(buf)))
		return false;
	for (line = buf; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (!strncmp(line, "0::", 3))
			return !strcmp(line + 3, cg->path) ||
			       (!strcmp(line + 3, "/") && !*cg->path);
	}
	return false;
}

static int on_join(void *ctx, void *data, size_t size)
{
	struct preexist *P = ctx;
	const struct join_event *je = data;
	struct sandbox_cg *cg;

	if (size < sizeof(*je))
		return 0;
	cg = names__cg(P->cfg.names, je->cgroup_id);
	/* Not tracked yet (confined a moment ago): walked whole when it is. */
	if (!cg || cg->released || !in_cg(je->pid, cg))
		return 0;
	if (je->how == JOIN_MOVED)
		forget(P, je->pid);
	if (check_pid(P, cg, je->pid))
		cg->held_checked = 0;
	return 0;
}

static int on_ring(struct loop_source *s, uint32_t revents, void *userdata)
{
	struct preexist *P = userdata;
	int n;

	(void)s;
	(void)revents;
	n = ring_buffer__consume(P->ring);
	if (n < 0)
		pr_warn("preexist", "reading the join notices failed: %s; every confined cgroup is walked again",
			strerror(-n));
	return 0;
}

/* After each turn: the cgroups confined or switched since, all of them
 * when a notice was lost. */
static int on_turn(struct loop *l, void *userdata)
{
	struct preexist *P = userdata;
	struct sandbox_table *t = P->cfg.names->cgt;
	uint64_t lost = __atomic_load_n(&P->cfg.skel->bss->join_lost, __ATOMIC_RELAXED);
	size_t i;

	(void)l;
	if (lost != P->join_lost_seen) {
		pr_warn("preexist", "%" PRIu64 " join notice(s) found their ring full; every confined cgroup's processes are walked again",
			lost - P->join_lost_seen);
		P->join_lost_seen = lost;
		for (i = 0; i < t->n; i++)
			t->v[i].held_checked = 0;
	}
	for (i = 0; i < t->n; i++) {
		struct sandbox_cg *cg = &t->v[i];

		if (!cg->released && cg->held_checked != cg->policy_id + 1)
			check_cg(P, cg);
	}
	return 0;
}

int preexist__open(struct preexist **out, const struct preexist_cfg *cfg)
{
	struct stockade *skel = cfg->skel;
	const char *step = "memory";
	struct preexist *P;
	int err;

	*out = NULL;
	P = calloc(1, sizeof(*P));
	if (P)
		P->ps = malloc(sizeof(*P->ps));
	if (!P || !P->ps) {
		err = -ENOMEM;
		goto fail;
	}
	P->cfg = *cfg;
	P->join_lost_seen = skel->bss->join_lost;
	step = "the join notices' ring";
	P->ring = ring_buffer__new(bpf_map__fd(skel->maps.join_rb), on_join, P, NULL);
	if (!P->ring) {
		err = -errno;
		goto fail;
	}
	step = "tracepoint cgroup_attach_task";
	P->attach_link = bpf_program__attach(skel->progs.stk_join_attach);
	if (!P->attach_link) {
		err = -errno;
		goto fail;
	}
	step = "tracepoint sched_process_fork";
	P->fork_link = bpf_program__attach(skel->progs.stk_join_fork);
	if (!P->fork_link) {
		err = -errno;
		goto fail;
	}
	*out = P;
	return 0;
fail:
	pr_err("preexist", "setting up the check of fds held from before confinement failed at %s: %s",
	       step, strerror(-err));
	preexist__free(P);
	return err;
}

int preexist__loop_add(struct preexist *P, struct loop *l)
{
	int err;

	if (!loop__add_io(l, ring_buffer__epoll_fd(P->ring), LOOP_PRIO_NORMAL, on_ring, P)) {
		err = -errno;
		goto fail;
	}
	err = loop__add_post(l, on_turn, P);
	if (!err)
		return 0;
fail:
	pr_err("preexist", "adding the held-fd check to the main loop failed: %s",
	       strerror(-err));
	return err;
}

void preexist__free(struct preexist *P)
{
	size_t i;

	if (!P)
		return;
	bpf_link__destroy(P->attach_link);
	bpf_link__destroy(P->fork_link);
	ring_buffer__free(P->ring);
	for (i = 0; i < POLICY_MAX; i++) {
		if (!P->rules[i].p)
			continue;
		file_compiled__free(&P->rules[i].files);
		net_compiled__free(&P->rules[i].net);
	}
	for (i = 0; i < P->n_homes; i++)
		free(P->homes[i]);
	free(P->homes);
	free(P->seen);
	free(P->ps);
	free(P);
}
