// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Resource limits and counting (agent/limits_agent.h).
 *
 * Limits are the sandbox cgroup's own files: cpu.max, memory.max,
 * memory.swap.max, pids.max. The agent writes them when it confines a
 * directly selected cgroup, remembers what it found (in the pinned
 * lim_saved map, include/stockade_limits.h, so that it outlives the
 * agent), and puts that back when enforcement is removed: detach,
 * --detach-on-exit, `stockade detach`. An agent that stops without
 * detaching leaves the limits in force, like the programs. Breaches are the kernel's to enforce and ours to log:
 *   memory   memory.events oom_kill grows; the kernel log says whom it
 *            killed (/dev/kmsg), which the record names when it can;
 *   pids     pids.events max grows: one record per burst;
 *   runtime  our own clock; at expiry cgroup.kill kills the whole subtree
 *            at once, setsid'd and double-forked children included;
 *   cpu      cpu.stat nr_throttled grows: at most one record per interval.
 * The *.events files are watched with inotify (the kernel notifies on
 * change), and read only when it tells of one (backstop_files() says
 * when else); cpu.stat is not, so it is read twice a second for sandboxes
 * with a CPU limit. All of it runs from the main loop (agent/loop.h):
 * limits__tick() after every turn, as each turn may have changed what is
 * due, and a timer wakes the loop at the next thing due (limits_next_ms),
 * never on a fixed tick: a breach is logged well within a second.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cgroup.h"
#include "bpfutil.h"
#include "json.h"
#include "events_agent.h"
#include "container.h"
#include "limits_agent.h"
#include "limits_util.h"
#include "log.h"
#include "loop.h"
#include "names.h"
#include "policy.h"
#include "sandbox.h"
#include "stockade.skel.h"

#define CPU_CHECK_MS	500	/* cpu.stat has no notification */
#define CPU_LOG_MS	10000	/* at most one cpu record per sandbox per 10 s */
#define FILE_CHECK_MS	1000	/* re-read a *.events file inotify cannot watch */
#define FILE_RETRY_MS	30000	/* watch again a *.events file that was missing */
#define METRICS_MS	1000
#define OOM_WAIT_MS	400	/* for the kernel log to name the victim */
#define VICTIMS		32	/* recent OOM victims from /dev/kmsg */
#define VICTIM_TTL_MS	5000

/* The limit files, in the order they are written. */
enum lim_file { LF_CPU, LF_SWAP, LF_MEM, LF_PIDS, LF_N };
static const char *const lf_name[LF_N] = {
	[LF_CPU] = "cpu.max", [LF_SWAP] = "memory.swap.max",
	[LF_MEM] = "memory.max", [LF_PIDS] = "pids.max",
};

enum watch_kind { W_MEM, W_PIDS, W_POPULATED };
static const char *const watch_file[] = {
	[W_MEM] = "memory.events", [W_PIDS] = "pids.events",
	[W_POPULATED] = "cgroup.events",
};

struct limits_watch {
	int wd;
	enum watch_kind kind;
	uint64_t cg_id;		/* the cgroup whose file it is */
};

struct victim {
	struct oom_victim v;
	uint64_t seen_ms;
	bool claimed;
};

struct limits_state {
	/* What the daemon handed over (limits__init()). */
	const char *cgroot;
	const struct names *names;	/* policy names, the confined cgroups */
	struct sandbox_table *cgt;	/* names->cgt */
	const char *metrics_path;	/* --metrics FILE, or NULL */
	bool container_labels;		/* --metrics-container-labels */
	void (*metrics_publish)(void *ctx, char *text, size_t len);
	void *metrics_ctx;
	/* Per policy name: decisions and breaches, monotonic (metrics_count()). */
	struct metrics_policy *pol;
	size_t n_pol;
	bool pol_full_said;
	const char *const *pin_dir;	/* --bpffs, read at each state write */
	struct events *ev;	/* the daemon's records */
	int cnt_fd;		/* sb_count, which this file alone writes */
	int saved_fd;		/* lim_saved */

	int ino_fd;
	int kmsg_fd;
	struct limits_watch *w;
	size_t n_w, cap_w;
	struct victim victims[VICTIMS];
	size_t next_victim;
	bool running;		/* the initial scan is over */
	bool state_dirty;
	int pids_hier;		/* pids.events counts descendants: -1 unknown */
	uint64_t next_cpu_ms, next_file_ms, next_retry_ms, next_metrics_ms;
	bool reread_all;	/* the inotify queue overflowed: read every file */
	struct loop_source *timer;	/* limits_next_ms(); NULL before the loop */
	char state_path[PATH_MAX];
	bool state_written;
	int ncpus;
	size_t stride;		/* bytes of one CPU's struct sb_count */
	void *percpu;		/* ncpus * stride */
};

struct limits_cg {
	const struct policy *p;	/* its policy, when it sets limits */
	uint64_t root_id;	/* the sandbox (directly selected cgroup) */
	bool direct;		/* set up as a directly selected cgroup */
	bool counted;		/* has an sb_count entry */
	/* The limit files written, or NULL: none (lim_files()). Apart, as
	 * most sandboxes set no limits and the values are 516 bytes. */
	struct lim_files *files;
	bool pids;		/* its pids.events counts into root_id's burst */
	uint64_t oom_seen, pids_seen;
	/* Per watch_kind bit: its file has an inotify watch (then it is read
	 * only when inotify tells of a change), or was missing when the
	 * watch was asked for (then the watch is asked for again every
	 * FILE_RETRY_MS). A file in neither set is read every FILE_CHECK_MS:
	 * inotify refused it for another reason (a watch limit). */
	uint8_t watched, missing;
	int wd[W_POPULATED + 1];	/* of each watched file */
	bool reread;		/* read its files at the next turn */
	uint64_t oom_pending, oom_deadline_ms;
	struct burst burst;	/* refused forks, of the whole sandbox */
	uint64_t thr_nr, thr_usec, periods, cpu_log_ms;
	bool cpu_logged;
	uint64_t rt_start_ms, rt_deadline_real_ms;	/* 0: not started */
	bool rt_expired;
	/* The counters as last added to its policy's (metrics_count()), or
	 * NULL: none yet (all zero). Allocated only while metrics are
	 * written: 784 bytes per sandbox, 0.75 MiB for 1,000 of them. */
	struct sb_count *seen;
};

struct lim_files {
	struct {
		bool set;
		char orig[64];	/* as found, written back on detach */
		char now[64];	/* as read back after our write */
	} f[LF_N];
};

/* l's limit files, allocated on first use; NULL when memory ran out. */
static struct lim_files *lim_files(struct limits_cg *l)
{
	if (!l->files)
		l->files = calloc(1, sizeof(*l->files));
	return l->files;
}

static void lim_free(struct limits_cg *l)
{
	if (!l)
		return;
	free(l->files);
	free(l->seen);
	free(l);
}

static uint64_t clock_ms(clockid_t c)
{
	return (uint64_t)clock_now_ns(c) / 1000000;
}

/* ---- per-policy counters, for the metrics ---- */

/* Is the exposition text wanted (a file, the HTTP endpoint)? */
static bool metrics_on(const struct limits_state *ls)
{
	return ls->metrics_path || ls->metrics_publish;
}

/* Policy names ever seen: a reload that renames policies adds some. */
#define METRICS_POLICIES	(2 * POLICY_MAX)

/* cg's policy's counters (found or added by name), or NULL when the
 * table is full (said once). */
static struct metrics_policy *metrics_policy_of(struct limits_state *ls,
						const struct sandbox_cg *cg)
{
	const char *name = names__policy_name(ls->names, cg->policy_id);
	struct metrics_policy *p;
	size_t i;

	for (i = 0; i < ls->n_pol; i++)
		if (!strcmp(ls->pol[i].policy, name))
			return &ls->pol[i];
	if (ls->n_pol == METRICS_POLICIES)
		goto full;
	p = realloc(ls->pol, (ls->n_pol + 1) * sizeof(*p));
	if (!p)
		goto full;
	ls->pol = p;
	p = &ls->pol[ls->n_pol];
	memset(p, 0, sizeof(*p));
	p->policy = strdup(name);
	if (!p->policy)
		goto full;
	ls->n_pol++;
	return p;
full:
	if (!ls->pol_full_said)
		pr_warn("limits", "no room for the metrics of policy '%s' (%zu policy names seen, or out of memory); its decisions and breaches are not counted in stockade_decisions_total and stockade_limit_breaches_total",
			name, ls->n_pol);
	ls->pol_full_said = true;
	return NULL;
}

static uint64_t grown(uint64_t now, uint64_t seen)
{
	/* Lower: the entry was zeroed (a new sandbox root), counted anew. */
	return now >= seen ? now - seen : now;
}

/*
 * Add what cg's counters grew by since last time to its policy's. The
 * policy's numbers then only grow, whatever happens to its sandboxes:
 * one that goes (its entry deleted) was added just before, and one that
 * changes policy in a reload adds to the new one from then on.
 */
static void metrics_count(struct limits_state *ls, struct sandbox_cg *cg,
			  const struct sb_count *now)
{
	struct metrics_policy *p = metrics_policy_of(ls, cg);
	struct sb_count *seen = cg->lim->seen;
	unsigned int k;

	/* No memory for it: counted at a later call, from zero (as a
	 * first call counts), so the totals stay whole. */
	if (!seen && !(seen = cg->lim->seen = calloc(1, sizeof(*seen))))
		return;
	for (k = 0; p && k < LIMITS_KINDS; k++) {
		p->dec[MA_ALLOW][k] += grown(now->allowed[k], seen->allowed[k]);
		p->dec[MA_DENY][k] += grown(now->denied[k], seen->denied[k]);
		p->dec[MA_AUDIT][k] += grown(now->audited[k], seen->audited[k]);
	}
	*seen = *now;
}

static bool read_counts(int map_fd, uint64_t id, int ncpus, size_t stride,
			void *buf, struct sb_count *out);

/* Before cg's counter entry is deleted: its last growth. */
static void metrics_count_last(struct limits_state *ls, struct sandbox_cg *cg)
{
	struct sb_count c;

	if (metrics_on(ls) && cg->lim && cg->lim->counted &&
	    read_counts(ls->cnt_fd, cg->id, ls->ncpus, ls->stride, ls->percpu, &c))
		metrics_count(ls, cg, &c);
}

/* The policy of id in the set in force (ids are not set indexes: a
 * reload or an adopting start gives fresh ones). */
static const struct policy *policy_of(struct limits_state *ls, uint32_t id)
{
	return names__policy(ls->names, id);
}

static bool wants_limits(const struct policy *p)
{
	return p && (p->limits.has_cpu || p->limits.has_memory ||
		     p->limits.has_memory_swap || p->limits.has_pids ||
		     p->limits.has_runtime);
}

static void cgf_path(const char *cgroot, const char *rel, const char *name,
		     char *buf, size_t len)
{
	/* Too long for PATH_MAX: the empty path fails with ENOENT. */
	if ((size_t)snprintf(buf, len, "%s%s/%s", cgroot, rel, name) >= len)
		buf[0] = '\0';
}

static bool cgf_read(const char *cgroot, const char *rel, const char *name,
		     char *buf, size_t len)
{
	char path[PATH_MAX];

	cgf_path(cgroot, rel, name, path, sizeof(path));
	return cgv_read(path, buf, len) >= 0;
}

static bool read_keyed(const char *cgroot, const char *rel, const char *name,
		       const char *key, uint64_t *v)
{
	char buf[1024];

	return cgf_read(cgroot, rel, name, buf, sizeof(buf)) && !cgv_keyed(buf, key, v);
}

static bool read_u64(const char *cgroot, const char *rel, const char *name,
		     uint64_t *v)
{
	char buf[64];

	return cgf_read(cgroot, rel, name, buf, sizeof(buf)) && !cgv_parse(buf, v);
}

static int cgf_write(const char *cgroot, const char *rel, const char *name,
		     const char *val)
{
	char path[PATH_MAX];
	size_t n = strlen(val);
	int fd, err = 0;

	cgf_path(cgroot, rel, name, path, sizeof(path));
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, n) != (ssize_t)n)
		err = -errno;
	close(fd);
	return err;
}

static void trim(char *s)
{
	s[strcspn(s, "\n")] = '\0';
}

/* ---- preflight ---- */

/* Is word in the space-separated list? */
static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);
	const char *p = list;

	while ((p = strstr(p, word))) {
		if ((p == list || p[-1] == ' ') &&
		    (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
			return true;
		p += n;
	}
	return false;
}

/* Where cgroup v1 mounted ctl, if it did (a hybrid host). */
static bool v1_mount_of(const char *ctl, char *mnt, size_t len)
{
	char line[4096], point[PATH_MAX], fstype[64], opts[1024];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - ");
		char *o, *tok, *save;

		if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", point) != 1 ||
		    sscanf(sep + 3, "%63s %*s %1023s", fstype, opts) != 2 ||
		    strcmp(fstype, "cgroup"))
			continue;
		for (o = opts; (tok = strtok_r(o, ",", &save)); o = NULL)
			if (!strcmp(tok, ctl))
				found = true;
		if (found)
			snprintf(mnt, len, "%s", point);
	}
	if (f)
		fclose(f);
	return found;
}

struct need {
	const char *ctl;	/* controller, or NULL for a core file */
	const char *file;	/* the file the limit is written to */
	const char *key;	/* limits.KEY */
	struct policy_pos pos;
};

/* What a policy's limits need from a cgroup. */
static size_t needs_of(const struct policy *p, struct need *n)
{
	const struct policy_limits *l = &p->limits;
	size_t k = 0, i, j;

	if (l->has_cpu)
		n[k++] = (struct need){ "cpu", "cpu.max", "cpu", l->cpu_pos };
	if (l->has_memory)
		n[k++] = (struct need){ "memory", "memory.max", "memory",
					l->memory_pos };
	if (l->has_memory_swap)
		n[k++] = (struct need){ "memory", "memory.swap.max",
					"memory_swap", l->memory_swap_pos };
	if (l->has_pids)
		n[k++] = (struct need){ "pids", "pids.max", "pids", l->pids_pos };
	if (l->has_runtime)
		n[k++] = (struct need){ NULL, "cgroup.kill", "runtime",
					l->runtime_pos };
	/* In file order, like every other diagnostic. */
	for (i = 1; i < k; i++)
		for (j = i; j > 0 && (n[j].pos.line < n[j - 1].pos.line ||
				      (n[j].pos.line == n[j - 1].pos.line &&
				       n[j].pos.col < n[j - 1].pos.col)); j--) {
			struct need t = n[j];

			n[j] = n[j - 1];
			n[j - 1] = t;
		}
	return k;
}

/* A limit that cannot be applied, as `FILE:LINE:COL: limits.KEY: ...`:
 * into diag when given (a reload's problems: policy_error records and
 * `stockade reload` print them), else on stderr. */
static void __attribute__((format(printf, 4, 5)))
lim_report(struct policy_diag *diag, const struct policy *p, const struct need *n,
	   const char *fmt, ...)
{
	char msg[POLICY_DIAG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (diag)
		policy_diag__add(diag, "%s:%d:%d: limits.%s: %s", p->file, n->pos.line,
				 n->pos.col, n->key, msg);
	else
		pr_err("limits", "%s:%d:%d: limits.%s: %s", p->file, n->pos.line,
		       n->pos.col, n->key, msg);
}

#define lim_err(p, n, fmt, ...) lim_report(diag, p, n, fmt, ##__VA_ARGS__)

/* Can the cgroup2 hierarchy give this controller at all? */
static int check_root(const char *cgroot, const struct policy *p,
		      const struct need *n, const char *root_ctls,
		      struct policy_diag *diag)
{
	char mnt[PATH_MAX];

	if (!n->ctl || has_word(root_ctls, n->ctl))
		return 0;
	if (v1_mount_of(n->ctl, mnt, sizeof(mnt))) {
		lim_err(p, n, "policy '%s' cannot be applied on this host: it is a hybrid cgroup host, where the %s controller belongs to cgroup v1 (mounted at %s), so the cgroup2 hierarchy at %s has no %s controller to set %s with. Fix: boot with systemd.unified_cgroup_hierarchy=1 (or cgroup_no_v1=%s) so that cgroup2 gets the controller, or remove limits.%s from the policy",
			p->name, n->ctl, mnt, cgroot, n->ctl, n->file, n->ctl,
			n->key);
	} else {
		lim_err(p, n, "policy '%s' cannot be applied on this host: the kernel offers no %s controller on cgroup2 (%s/cgroup.controllers is '%s'); it was built without it or disabled with cgroup_disable=%s. Fix the kernel, or remove limits.%s from the policy",
			p->name, n->ctl, cgroot, root_ctls, n->ctl, n->key);
	}
	return -EOPNOTSUPP;
}

/* Can cgroup rel take the limit? Names the fix when not. */
static int check_cg(const char *cgroot, const struct policy *p,
		    const struct need *n, const char *rel, struct policy_diag *diag)
{
	char buf[1024], path[PATH_MAX], fix[2048] = "", up[PATH_MAX];
	size_t i, len;
	struct stat st;

	if (n->ctl) {
		if (!cgf_read(cgroot, rel, "cgroup.controllers", buf, sizeof(buf)))
			return 0;	/* gone since the walk */
		if (has_word(buf, n->ctl))
			goto file;
		/* Every ancestor, from the root down to the parent, that does
		 * not pass the controller down needs it in subtree_control. */
		for (i = 0, len = 0; rel[i]; i = len) {
			const char *slash = strchr(rel + i + 1, '/');
			char *f;

			snprintf(up, sizeof(up), "%.*s", (int)i, rel);
			len = slash ? (size_t)(slash - rel) : strlen(rel);
			if (!cgf_read(cgroot, up, "cgroup.subtree_control", buf, sizeof(buf)) ||
			    !has_word(buf, n->ctl)) {
				f = fix + strlen(fix);
				if ((size_t)snprintf(f, sizeof(fix) - (size_t)(f - fix),
						     "%secho +%s > %s%s/cgroup.subtree_control",
						     *fix ? "; " : "", n->ctl, cgroot,
						     up) >= sizeof(fix) - (size_t)(f - fix))
					break;
			}
		}
		snprintf(up, sizeof(up), "%s", rel);
		*strrchr(up, '/') = '\0';
		lim_err(p, n, "cannot be applied to cgroup %s: the %s controller is not enabled for it, %s%s/cgroup.subtree_control lacks '%s'. Fix: %s (a cgroup that holds processes itself cannot pass controllers down: move them into a child cgroup first)",
			rel, n->ctl, cgroot, up, n->ctl, fix);
		return -EOPNOTSUPP;
	}
file:
	cgf_path(cgroot, rel, n->file, path, sizeof(path));
	if (stat(path, &st) == 0)
		return 0;
	if (!strcmp(n->file, "cgroup.kill"))
		lim_err(p, n, "cannot be applied to cgroup %s: %s does not exist; killing a sandbox at once needs Linux 5.14 or later",
			rel, path);
	else if (!strcmp(n->file, "memory.swap.max"))
		lim_err(p, n, "cannot be applied to cgroup %s: %s does not exist: the kernel does not account swap (built without CONFIG_MEMCG_SWAP, or booted with swapaccount=0)",
			rel, path);
	else
		lim_err(p, n, "cannot be applied to cgroup %s: %s does not exist",
			rel, path);
	return -EOPNOTSUPP;
}

struct check_ctx {
	const char *cgroot;
	const struct policy_set *set;
	struct policy_diag *diag;
	int err;
};

static void *check_one(const char *rel, uint64_t id, void *parent, void *vctx)
{
	struct check_ctx *c = vctx;
	const struct policy_set *set = c->set;
	const struct policy *cand[POLICY_MAX];
	size_t i, k, m, nc = 0, n_yes = 0;
	struct need n[8];

	(void)id;
	/* What the agent will select (selected_by()), with no names read:
	 * a selector that needs a container's names may select it, so its
	 * limits must be possible too. The path forms' globs decide
	 * nothing here: they are for watching. */
	for (i = 0; i < set->n; i++) {
		enum policy_sel r = policy__selects(set->v[i], rel, NULL, NULL, false, NULL);

		if (r == POLICY_SEL_NO)
			continue;
		n_yes += r == POLICY_SEL_YES;
		if (nc < POLICY_MAX)
			cand[nc++] = set->v[i];
	}
	if (n_yes > 1)
		return parent;	/* conflict: deny-all, no limits */
	for (m = 0; m < nc; m++) {
		if (!wants_limits(cand[m]))
			continue;
		k = needs_of(cand[m], n);
		for (i = 0; i < k; i++)
			if (check_cg(c->cgroot, cand[m], &n[i], rel, c->diag))
				c->err = -EOPNOTSUPP;
	}
	return parent;
}

int limits__check_set(const char *cgroot, const struct policy_set *set,
		      struct policy_diag *diag)
{
	struct check_ctx c = { .cgroot = cgroot, .set = set, .diag = diag, .err = 0 };
	char root_ctls[1024] = "";
	struct need n[8];
	size_t i, j, k, bad = 0;
	int err;

	for (i = 0; i < set->n; i++)
		if (wants_limits(set->v[i]))
			break;
	if (i == set->n)
		return 0;
	if (!cgf_read(cgroot, "", "cgroup.controllers", root_ctls, sizeof(root_ctls)))
		root_ctls[0] = '\0';
	trim(root_ctls);
	for (i = 0; i < set->n; i++) {
		const struct policy *p = set->v[i];

		if (!wants_limits(p))
			continue;
		k = needs_of(p, n);
		for (j = 0; j < k; j++)
			if (check_root(cgroot, p, &n[j], root_ctls, diag))
				bad++;
	}
	if (!bad) {
		err = cgroup__walk(cgroot, check_one, &c);
		if (err) {
			pr_err("limits", "walking %s failed: %s", cgroot,
			       strerror(-err));
			if (diag)
				policy_diag__add(diag, "checking the limits: walking %s failed: %s",
						 cgroot, strerror(-err));
			return err;
		}
		if (c.err)
			bad++;
	}
	if (bad) {
		if (!diag)
			pr_err("limits", "the limits above cannot be applied; nothing was applied");
		return -EOPNOTSUPP;
	}
	return 0;
}

int limits__check(const char *cgroot, const struct policy_set *set)
{
	return limits__check_set(cgroot, set, NULL);
}

/* ---- setup ---- */

int limits__init(struct limits_state **out, const struct limits_config *cfg)
{
	struct limits_state *ls = calloc(1, sizeof(*ls));
	int err;

	*out = ls;
	if (!ls)
		return -ENOMEM;
	ls->cgroot = cfg->cgroot;
	ls->names = cfg->names;
	ls->cgt = cfg->names->cgt;
	ls->metrics_path = cfg->metrics_path;
	ls->container_labels = cfg->container_labels;
	ls->metrics_publish = cfg->metrics_publish;
	ls->metrics_ctx = cfg->metrics_ctx;
	ls->pin_dir = cfg->pin_dir;
	ls->ev = cfg->ev;
	ls->cnt_fd = bpf_map__fd(cfg->skel->maps.sb_count);
	ls->saved_fd = bpf_map__fd(cfg->skel->maps.lim_saved);
	ls->kmsg_fd = -1;
	ls->pids_hier = -1;
	ls->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (ls->ino_fd < 0) {
		err = -errno;
		pr_err("limits", "inotify_init1 failed: %s; raise fs.inotify.max_user_instances",
		       strerror(errno));
		return err;
	}
	ls->ncpus = libbpf_num_possible_cpus();
	if (ls->ncpus <= 0) {
		pr_err("limits", "cannot count the possible CPUs: %s", strerror(-ls->ncpus));
		return ls->ncpus ?: -EINVAL;
	}
	ls->stride = (sizeof(struct sb_count) + 7) & ~(size_t)7;
	ls->percpu = calloc((size_t)ls->ncpus, ls->stride);
	if (!ls->percpu)
		return -ENOMEM;
	snprintf(ls->state_path, sizeof(ls->state_path), "%s",
		 cfg->state_path ? cfg->state_path : LIMITS_STATE_DEFAULT);

	/* The kernel names OOM victims only in its log. Start at its end:
	 * older kills are not ours to report. */
	ls->kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (ls->kmsg_fd < 0)
		pr_warn("limits", "cannot read /dev/kmsg (%s): memory records will not name the process the OOM killer chose",
			strerror(errno));
	else
		lseek(ls->kmsg_fd, 0, SEEK_END);
	/* The counters are pinned with every other map (agent/pin.c). */
	return 0;
}

/* ---- watches ---- */

static void add_watch(struct limits_state *ls, struct sandbox_cg *cg,
		      enum watch_kind kind)
{
	char path[PATH_MAX];
	int wd;

	if (cg->lim->watched & (1u << kind))
		return;
	cgf_path(ls->cgroot, cg->path, watch_file[kind], path, sizeof(path));
	wd = inotify_add_watch(ls->ino_fd, path, IN_MODIFY);
	if (wd < 0) {
		if (errno == ENOENT)
			cg->lim->missing |= 1u << kind;	/* no such controller */
		else if (!(cg->lim->missing & (1u << kind)))
			pr_warn("limits", "cannot watch %s: %s; it is read once a second instead",
				path, strerror(errno));
		return;
	}
	cg->lim->missing &= ~(1u << kind);
	/* What changed between the read of the baseline and this watch is
	 * read at the next turn: nothing is missed in between. */
	cg->lim->reread = true;
	if (ls->n_w == ls->cap_w) {
		size_t cap = ls->cap_w ? ls->cap_w * 2 : 64;
		struct limits_watch *v = realloc(ls->w, cap * sizeof(*v));

		if (!v) {
			inotify_rm_watch(ls->ino_fd, wd);
			return;
		}
		ls->w = v;
		ls->cap_w = cap;
	}
	ls->w[ls->n_w++] = (struct limits_watch){ .wd = wd, .kind = kind, .cg_id = cg->id };
	cg->lim->watched |= 1u << kind;
	cg->lim->wd[kind] = wd;
}

static void drop_watches(struct limits_state *ls, uint64_t cg_id)
{
	size_t i;

	for (i = 0; i < ls->n_w;) {
		if (ls->w[i].cg_id != cg_id) {
			i++;
			continue;
		}
		/* Even a removed cgroup's: cgroupfs keeps the watch (no
		 * IN_IGNORED), which would hold one of root's inotify
		 * watches, and the dead file's inode, for good. */
		inotify_rm_watch(ls->ino_fd, ls->w[i].wd);
		ls->w[i] = ls->w[--ls->n_w];
	}
}

/* ---- applying limits ---- */

static void limit_value(const struct policy_limits *pl, enum lim_file f,
			char *buf, size_t len)
{
	buf[0] = '\0';
	switch (f) {
	case LF_CPU:
		if (pl->has_cpu)
			cgv_cpu_max(pl->cpu_milli, buf, len);
		break;
	case LF_SWAP:
		/* memory: without memory_swap means no swap at all, or the
		 * limit would only move the hog onto the swap device. */
		if (pl->has_memory_swap)
			snprintf(buf, len, "%" PRIu64, pl->memory_swap);
		else if (pl->has_memory)
			snprintf(buf, len, "0");
		break;
	case LF_MEM:
		if (pl->has_memory)
			snprintf(buf, len, "%" PRIu64, pl->memory);
		break;
	case LF_PIDS:
		if (pl->has_pids)
			snprintf(buf, len, "%" PRIu64, pl->pids);
		break;
	default:
		break;
	}
}

/*
 * Put back file f of cgroup rel as found (orig), unless someone changed it
 * since the agent wrote now. Shared with `stockade detach`.
 */
static void restore_one(const char *cgroot, const char *rel, int f,
			const char *orig, const char *now)
{
	char cur[LIMITS_VAL_LEN];
	int err;

	if (!cgf_read(cgroot, rel, lf_name[f], cur, sizeof(cur)))
		return;	/* the cgroup is gone */
	trim(cur);
	if (strcmp(cur, now)) {
		pr_warn("limits", "%s%s/%s is '%s', not the '%s' the agent wrote: someone else changed it; leaving it (it was '%s' before the agent)",
			cgroot, rel, lf_name[f], cur, now, orig);
		return;
	}
	err = cgf_write(cgroot, rel, lf_name[f], orig);
	if (err)
		pr_warn("limits", "putting back %s%s/%s = '%s' failed: %s",
			cgroot, rel, lf_name[f], orig, strerror(-err));
	else
		pr_debug("limits", "%s%s/%s put back to '%s'", cgroot, rel,
			 lf_name[f], orig);
}

/* Record in lim_saved what cg's limits are now, or drop its entry. */
static void saved_put(struct limits_state *ls, struct sandbox_cg *cg)
{
	struct lim_files *lf = cg->lim->files;
	struct limits_saved sv;
	int f;

	memset(&sv, 0, sizeof(sv));
	for (f = 0; lf && f < LF_N; f++) {
		if (!lf->f[f].set)
			continue;
		sv.set |= 1u << f;
		memcpy(sv.orig[f], lf->f[f].orig, sizeof(sv.orig[f]));
		memcpy(sv.now[f], lf->f[f].now, sizeof(sv.now[f]));
	}
	if (!sv.set)
		bpf_map_delete_elem(ls->saved_fd, &cg->id);
	else if (bpf_map_update_elem(ls->saved_fd, &cg->id, &sv, BPF_ANY))
		pr_warn("limits", "saving the limit values found in %s failed: %s; if the agent stops without detaching, they cannot be put back later",
			cg->path, strerror(errno));
}

/* Put back what was found, unless someone changed it since. */
static void restore_limits(struct limits_state *ls, struct sandbox_cg *cg)
{
	struct limits_cg *l = cg->lim;
	int f;

	for (f = LF_N - 1; l->files && f >= 0; f--) {
		if (!l->files->f[f].set)
			continue;
		restore_one(ls->cgroot, cg->path, f, l->files->f[f].orig,
			    l->files->f[f].now);
	}
	free(l->files);
	l->files = NULL;
	bpf_map_delete_elem(ls->saved_fd, &cg->id);
}

int limits__restore_saved(const char *cgroot, const char *rel, int fd,
			  uint64_t id)
{
	struct limits_saved sv;
	int f;

	if (fd < 0 || bpf_map_lookup_elem(fd, &id, &sv))
		return 0;
	for (f = LF_N - 1; f >= 0; f--) {
		if (!(sv.set & (1u << f)))
			continue;
		sv.orig[f][LIMITS_VAL_LEN - 1] = sv.now[f][LIMITS_VAL_LEN - 1] = '\0';
		if (rel)
			restore_one(cgroot, rel, f, sv.orig[f], sv.now[f]);
	}
	bpf_map_delete_elem(fd, &id);
	return 1;
}

static int apply_limits(struct limits_state *ls, struct sandbox_cg *cg)
{
	struct limits_cg *l = cg->lim;
	const struct policy_limits *pl = &l->p->limits;
	struct lim_files *lf = lim_files(l);
	char val[64];
	int f, err;

	if (!lf) {
		pr_err("limits", "policy '%s': no memory to keep the values found in %s%s; its limits are not applied",
		       l->p->name, ls->cgroot, cg->path);
		return -ENOMEM;
	}
	for (f = 0; f < LF_N; f++) {
		limit_value(pl, (enum lim_file)f, val, sizeof(val));
		if (!val[0]) {
			/* Written by an earlier agent for a policy that has
			 * changed since: put back. */
			if (lf->f[f].set) {
				lf->f[f].set = false;
				restore_one(ls->cgroot, cg->path, f, lf->f[f].orig,
					    lf->f[f].now);
			}
			continue;
		}
		/* Adopted: what the first agent found is what to put back. */
		if (!lf->f[f].set && !cgf_read(ls->cgroot, cg->path, lf_name[f],
					      lf->f[f].orig, sizeof(lf->f[f].orig))) {
			err = -errno;
			if (f == LF_SWAP && !pl->has_memory_swap && errno == ENOENT) {
				/* Implied, not asked for: say what is lost. */
				pr_warn("limits", "%s%s: no memory.swap.max (the kernel does not account swap): limits.memory holds, but the sandbox's swap use is not limited",
					ls->cgroot, cg->path);
				continue;
			}
			pr_err("limits", "policy '%s': reading %s%s/%s failed: %s",
			       l->p->name, ls->cgroot, cg->path, lf_name[f],
			       strerror(errno));
			goto fail;
		}
		trim(lf->f[f].orig);
		err = cgf_write(ls->cgroot, cg->path, lf_name[f], val);
		if (err) {
			pr_err("limits", "policy '%s': writing '%s' to %s%s/%s failed: %s",
			       l->p->name, val, ls->cgroot, cg->path, lf_name[f],
			       strerror(-err));
			goto fail;
		}
		lf->f[f].set = true;
		/* The kernel rounds (memory to pages): keep what it holds. */
		if (cgf_read(ls->cgroot, cg->path, lf_name[f], lf->f[f].now, sizeof(lf->f[f].now)))
			trim(lf->f[f].now);
		pr_debug("limits", "%s%s/%s = '%s' (was '%s')", ls->cgroot, cg->path,
			 lf_name[f], lf->f[f].now, lf->f[f].orig);
	}
	saved_put(ls, cg);
	return 0;
fail:
	/* Nothing half-applied. */
	restore_limits(ls, cg);
	return err;
}

/* The nearest directly selected cgroup at or above cg. */
static struct sandbox_cg *root_of(struct limits_state *ls, struct sandbox_cg *cg)
{
	struct sandbox_cg *best = NULL;
	size_t i;

	if (cg->direct)
		return cg;
	for (i = 0; i < ls->cgt->n; i++) {
		struct sandbox_cg *d = &ls->cgt->v[i];

		if (d->direct && d != cg && cgv_path_within(cg->path, d->path) &&
		    (!best || strlen(d->path) > strlen(best->path)))
			best = d;
	}
	return best;
}

/* Does pids.events count the whole subtree? Kernels that have
 * pids.events.local do (that file has the old meaning); older ones, 6.1
 * among them, count in each cgroup only the forks refused to its own
 * tasks. */
static bool pids_hierarchical(struct limits_state *ls, const char *rel)
{
	char path[PATH_MAX];

	if (ls->pids_hier < 0) {
		cgf_path(ls->cgroot, rel, "pids.events.local", path, sizeof(path));
		ls->pids_hier = access(path, F_OK) == 0;
	}
	return ls->pids_hier;
}

static void start_runtime(struct limits_state *ls, struct limits_cg *l, uint64_t now)
{
	l->rt_start_ms = now;
	l->rt_deadline_real_ms = clock_ms(CLOCK_REALTIME) + l->p->limits.runtime_ms;
	ls->state_dirty = true;
}

static bool populated(struct limits_state *ls, const char *rel)
{
	uint64_t v;

	return read_keyed(ls->cgroot, rel, "cgroup.events", "populated", &v) && v;
}

/* A cgroup confined through its sandbox root: it counts into root's
 * entry (root_id); only an old kernel's per-cgroup pids.events needs a
 * watch here. */
static void attach_child(struct limits_state *ls, struct sandbox_cg *cg,
			 const struct sandbox_cg *root)
{
	struct limits_cg *l = cg->lim;

	if (root && root->lim && root->lim->p &&
	    root->lim->p->limits.has_pids &&
	    !pids_hierarchical(ls, cg->path)) {
		l->pids = true;
		read_keyed(ls->cgroot, cg->path, "pids.events", "max", &l->pids_seen);
		add_watch(ls, cg, W_PIDS);
	}
}

/* A sandbox root's counters, then the baselines its breaches are told
 * from, and the watches that tell of them. */
static int start_counting(struct limits_state *ls, struct sandbox_cg *cg)
{
	struct limits_cg *l = cg->lim;
	int err;

	/* The counters exist before any program can count into them. An
	 * adopted sandbox keeps its count: since its first attach. */
	memset(ls->percpu, 0, (size_t)ls->ncpus * ls->stride);
	err = map_update_retry(ls->cnt_fd, &cg->id, ls->percpu, BPF_NOEXIST);
	if (err && err != -EEXIST) {
		pr_err("limits", "creating the counters of %s failed: %s", cg->path,
		       strerror(-err));
		return err;
	}
	l->counted = true;

	/* Baselines first, so a breach caused by our own write (memory.max
	 * below what the sandbox holds makes the kernel OOM-kill) is seen. */
	read_keyed(ls->cgroot, cg->path, "memory.events", "oom_kill", &l->oom_seen);
	read_keyed(ls->cgroot, cg->path, "pids.events", "max", &l->pids_seen);
	read_keyed(ls->cgroot, cg->path, "cpu.stat", "nr_throttled", &l->thr_nr);
	read_keyed(ls->cgroot, cg->path, "cpu.stat", "throttled_usec", &l->thr_usec);
	read_keyed(ls->cgroot, cg->path, "cpu.stat", "nr_periods", &l->periods);
	l->cpu_log_ms = clock_ms(CLOCK_MONOTONIC);
	l->pids = true;
	add_watch(ls, cg, W_MEM);
	add_watch(ls, cg, W_PIDS);
	return 0;
}

/* Limits an earlier agent left in force (it stopped without detaching):
 * the values it found are the ones to put back. */
static void saved_get(struct limits_state *ls, struct sandbox_cg *cg)
{
	struct lim_files *lf;
	struct limits_saved sv;
	int f;

	if (bpf_map_lookup_elem(ls->saved_fd, &cg->id, &sv) || !sv.set)
		return;
	lf = lim_files(cg->lim);
	if (!lf) {
		/* The entry stays in lim_saved: `stockade detach` or the
		 * next agent can still put them back. */
		pr_warn("limits", "no memory to take over the limit values an earlier agent found in %s%s; this agent will not put them back",
			ls->cgroot, cg->path);
		return;
	}
	for (f = 0; f < LF_N; f++) {
		if (!(sv.set & (1u << f)))
			continue;
		lf->f[f].set = true;
		memcpy(lf->f[f].orig, sv.orig[f], sizeof(lf->f[f].orig));
		memcpy(lf->f[f].now, sv.now[f], sizeof(lf->f[f].now));
		lf->f[f].orig[sizeof(lf->f[f].orig) - 1] = '\0';
		lf->f[f].now[sizeof(lf->f[f].now) - 1] = '\0';
	}
}

/*
 * p's limits on cg: first the diagnosis limits__check() gave the cgroups
 * there at start (a cgroup that came later, or a reload, gets the same),
 * then the writes (apply_limits() restores all on failure). On failure
 * cg has no policy limits (lim->p NULL), and the error above says why.
 */
static int apply_policy(struct limits_state *ls, struct sandbox_cg *cg,
			const struct policy *p)
{
	struct need n[8];
	size_t i, k = needs_of(p, n);
	int err = 0;

	for (i = 0; i < k; i++)
		if (check_cg(ls->cgroot, p, &n[i], cg->path, NULL))
			err = -EOPNOTSUPP;
	cg->lim->p = p;
	if (!err)
		err = apply_limits(ls, cg);
	if (err)
		cg->lim->p = NULL;
	return err;
}

int limits__attach(struct limits_state *ls, struct sandbox_cg *cg)
{
	struct limits_cg *l;
	struct sandbox_cg *root;
	const struct policy *p;
	int err;

	if (!ls)
		return 0;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	cg->lim = l;
	l->direct = cg->direct;
	root = root_of(ls, cg);
	l->root_id = root ? root->id : cg->id;
	ls->state_dirty = true;
	if (!cg->direct) {
		attach_child(ls, cg, root);
		return 0;
	}
	err = start_counting(ls, cg);
	if (err)
		return err;
	saved_get(ls, cg);
	p = policy_of(ls, cg->policy_id);
	if (!p || !wants_limits(p)) {
		restore_limits(ls, cg);	/* the policy sets none now */
		return 0;
	}
	err = apply_policy(ls, cg, p);
	if (err) {
		if (!ls->running)
			return err;	/* at start: the agent starts nothing */
		/* Later (a new cgroup): it is confined, but its limits are
		 * not; the error above says why. */
		pr_err("limits", "cgroup %s is confined WITHOUT the limits of policy '%s'",
		       cg->path, p->name);
		return 0;
	}
	if (p->limits.has_runtime) {
		add_watch(ls, cg, W_POPULATED);
		if (populated(ls, cg->path))
			start_runtime(ls, l, clock_ms(CLOCK_MONOTONIC));
	}
	return 0;
}

/*
 * One directly selected cgroup after a reload: the limits of its policy in
 * the new set. Values the new policy sets are written over the old ones in
 * place (no moment without a limit); one it no longer sets goes back to
 * the value found before the agent wrote it (apply_limits()). The run time
 * keeps its start: a changed runtime moves the deadline, a removed one
 * stops the clock.
 */
static void reload_direct(struct limits_state *ls, struct sandbox_cg *cg)
{
	struct limits_cg *l = cg->lim;
	const struct policy *p = policy_of(ls, cg->policy_id);

	l->p = NULL;	/* the old set's policy is freed after the reload */
	if (!wants_limits(p)) {
		restore_limits(ls, cg);
		l->rt_start_ms = 0;
		ls->state_dirty = true;
		return;
	}
	if (apply_policy(ls, cg, p)) {
		pr_err("limits", "cgroup %s is confined WITHOUT the limits of policy '%s'",
		       cg->path, p->name);
		return;
	}
	if (!p->limits.has_runtime) {
		l->rt_start_ms = 0;
	} else {
		if (!(l->watched & (1u << W_POPULATED)))
			add_watch(ls, cg, W_POPULATED);
		if (!l->rt_start_ms && populated(ls, cg->path))
			start_runtime(ls, l, clock_ms(CLOCK_MONOTONIC));
		else if (l->rt_start_ms)
			l->rt_deadline_real_ms = clock_ms(CLOCK_REALTIME) +
				p->limits.runtime_ms -
				(clock_ms(CLOCK_MONOTONIC) - l->rt_start_ms);
	}
	ls->state_dirty = true;
}

void limits__reload(struct limits_state *ls)
{
	struct sandbox_cg *cg;
	size_t i;

	if (!ls)
		return;
	for (i = 0; i < ls->cgt->n; i++) {
		cg = &ls->cgt->v[i];
		if (!cg->lim || cg->released)
			continue;
		if (cg->lim->direct && cg->direct) {
			reload_direct(ls, cg);
			continue;
		}
		if (cg->lim->direct) {
			/* Confined through its parent now: its own limits
			 * go, the sandbox's apply through the subtree. */
			restore_limits(ls, cg);
			metrics_count_last(ls, cg);
			if (cg->lim->counted)
				bpf_map_delete_elem(ls->cnt_fd,
						    &cg->id);
		}
		/* Set up anew, for what it is now (a new sandbox root gets
		 * its counters, watches and limits). */
		drop_watches(ls, cg->id);
		lim_free(cg->lim);
		cg->lim = NULL;
		limits__attach(ls, cg);
	}
}

/* ---- records ---- */

/* A limit record of kind for cg: the JSON to add the kind's fields to,
 * then record_emit(). */
static struct json *record_begin(struct limits_state *ls, const char *kind,
				 const struct sandbox_cg *cg)
{
	struct metrics_policy *mp = metrics_on(ls) ? metrics_policy_of(ls, cg) : NULL;
	int lim = metrics_limit_of(kind);

	if (mp && lim >= 0)
		mp->breaches[lim]++;
	events__begin(ls->ev, "limit");
	json_str(&ls->ev->j, "kind", kind);
	events__cgroup_fields(ls->ev, cg);
	return &ls->ev->j;
}

static void record_emit(struct limits_state *ls)
{
	events__emit(ls->ev);
}

static void record_memory(struct limits_state *ls, struct sandbox_cg *cg,
			  const struct victim *v, uint64_t count)
{
	struct json *j;
	uint64_t x;

	j = record_begin(ls, "memory", cg);
	if (read_u64(ls->cgroot, cg->path, "memory.max", &x) && x != CGV_MAX)
		json_u64(j, "limit", x);
	if (read_u64(ls->cgroot, cg->path, "memory.peak", &x))
		json_u64(j, "peak", x);
	if (read_u64(ls->cgroot, cg->path, "memory.current", &x))
		json_u64(j, "current", x);
	json_u64(j, "count", count);
	if (v) {
		json_u64(j, "pid", (uint64_t)v->v.pid);
		if (v->v.has_comm)
			json_str_raw(j, "comm", v->v.comm, strlen(v->v.comm));
		if (v->v.has_memcg)
			json_str(j, "task_cgroup", v->v.memcg);
	}
	json_u64(j, "oom_kills", cg->lim->oom_seen);
	record_emit(ls);
}

/* ---- the kernel log ---- */

static void add_victim(struct limits_state *ls, const struct oom_victim *v,
		       uint64_t now)
{
	size_t i;

	/* Both lines about one kill: merge. */
	for (i = 0; i < VICTIMS; i++) {
		struct victim *x = &ls->victims[i];

		if (x->seen_ms && x->v.pid == v->pid && now - x->seen_ms < VICTIM_TTL_MS) {
			if (v->has_comm && !x->v.has_comm) {
				memcpy(x->v.comm, v->comm, sizeof(x->v.comm));
				x->v.has_comm = true;
			}
			if (v->has_memcg && !x->v.has_memcg) {
				memcpy(x->v.memcg, v->memcg, sizeof(x->v.memcg));
				x->v.has_memcg = true;
			}
			return;
		}
	}
	ls->victims[ls->next_victim] = (struct victim){ .v = *v, .seen_ms = now };
	ls->next_victim = (ls->next_victim + 1) % VICTIMS;
}

static void drain_kmsg(struct limits_state *ls, uint64_t now)
{
	static char rec[8192 + 1];	/* CONSOLE_EXT_LOG_MAX: one record */
	struct oom_victim v;
	ssize_t n;

	if (ls->kmsg_fd < 0)
		return;
	for (;;) {
		n = read(ls->kmsg_fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten records: skip them */
		if (n < 0 && errno == EINVAL) {
			/* A record larger than any we know of would block
			 * the reader forever: skip to the end. */
			lseek(ls->kmsg_fd, 0, SEEK_END);
			break;
		}
		if (n <= 0)
			break;
		rec[n] = '\0';
		if (kmsg_parse_oom(rec, (size_t)n, &v))
			add_victim(ls, &v, now);
	}
}

/* Where a victim without task_memcg= was: its /proc entry, while it lasts. */
static void victim_memcg(struct victim *x)
{
	char path[64], buf[4096];

	if (x->v.has_memcg)
		return;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", x->v.pid);
	if (cgv_read(path, buf, sizeof(buf)) > 0 && !strncmp(buf, "0::", 3)) {
		trim(buf);
		memcpy(x->v.memcg, buf + 3, sizeof(x->v.memcg) - 1);
		x->v.memcg[sizeof(x->v.memcg) - 1] = '\0';
		x->v.has_memcg = true;
	}
}

static void oom_flush(struct limits_state *ls, struct sandbox_cg *cg, uint64_t now,
		      bool force, size_t n_pending)
{
	struct limits_cg *l = cg->lim;
	size_t i;

	for (i = 0; i < VICTIMS && l->oom_pending; i++) {
		struct victim *x = &ls->victims[i];

		if (!x->seen_ms || x->claimed || now - x->seen_ms > VICTIM_TTL_MS)
			continue;
		victim_memcg(x);
		/* Unknown cgroup: ours only if no other sandbox waits. */
		if (x->v.has_memcg ? !cgv_path_within(x->v.memcg, cg->path) :
				     n_pending != 1)
			continue;
		x->claimed = true;
		l->oom_pending--;
		record_memory(ls, cg, x, 1);
	}
	if (l->oom_pending && (force || now >= l->oom_deadline_ms)) {
		record_memory(ls, cg, NULL, l->oom_pending);
		l->oom_pending = 0;
	}
}

/* ---- events from the cgroup files ---- */

static void check_oom(struct limits_state *ls, struct sandbox_cg *cg, uint64_t now)
{
	struct limits_cg *l = cg->lim;
	uint64_t v;

	if (!read_keyed(ls->cgroot, cg->path, "memory.events", "oom_kill", &v) ||
	    v <= l->oom_seen)
		return;
	if (!l->oom_pending)
		l->oom_deadline_ms = now + OOM_WAIT_MS;
	l->oom_pending += v - l->oom_seen;
	l->oom_seen = v;
}

static void check_pids(struct limits_state *ls, struct sandbox_cg *cg, uint64_t now)
{
	struct limits_cg *l = cg->lim;
	struct sandbox_cg *root;
	uint64_t v;

	if (!l->pids ||
	    !read_keyed(ls->cgroot, cg->path, "pids.events", "max", &v) || v <= l->pids_seen)
		return;
	root = cg->direct ? cg : names__cg(ls->names, l->root_id);
	if (root && root->lim)
		burst_add(&root->lim->burst, now, v - l->pids_seen);
	l->pids_seen = v;
}

static void check_populated(struct limits_state *ls, struct sandbox_cg *cg, uint64_t now)
{
	struct limits_cg *l = cg->lim;
	bool pop;

	if (!l->p || !l->p->limits.has_runtime)
		return;
	pop = populated(ls, cg->path);
	if (pop && !l->rt_start_ms) {
		start_runtime(ls, l, now);
	} else if (!pop && l->rt_expired) {
		/* Spent and emptied: the clock starts again with the next
		 * process that enters. */
		l->rt_expired = false;
		l->rt_start_ms = 0;
		l->rt_deadline_real_ms = 0;
		ls->state_dirty = true;
	}
}

/*
 * A watched file made anew (a controller turned off and on again in the
 * parent's cgroup.subtree_control: a new file, a new inode) is never
 * notified through the old watch. Every FILE_RETRY_MS the watch is asked
 * for again by path: the same wd while the file is the same one; another
 * replaces the dead watch, and the file is read.
 */
static void recheck_watch(struct limits_state *ls, struct sandbox_cg *cg,
			  enum watch_kind kind)
{
	char path[PATH_MAX];
	size_t i;
	int wd;

	cgf_path(ls->cgroot, cg->path, watch_file[kind], path, sizeof(path));
	wd = inotify_add_watch(ls->ino_fd, path, IN_MODIFY);
	if (wd == cg->lim->wd[kind])
		return;
	for (i = 0; i < ls->n_w; i++)
		if (ls->w[i].cg_id == cg->id && ls->w[i].kind == kind)
			break;
	if (i == ls->n_w)
		return;
	inotify_rm_watch(ls->ino_fd, ls->w[i].wd);
	cg->lim->reread = true;
	if (wd >= 0) {
		ls->w[i].wd = wd;
		cg->lim->wd[kind] = wd;
		return;
	}
	ls->w[i] = ls->w[--ls->n_w];	/* gone meanwhile: read, retried */
	cg->lim->watched &= ~(1u << kind);
	if (errno == ENOENT)
		cg->lim->missing |= 1u << kind;
}

/* The files cg's breaches are read from, as watch_kind bits. */
static unsigned int wanted_files(const struct sandbox_cg *cg)
{
	const struct limits_cg *l = cg->lim;
	unsigned int k = 0;

	if (l->pids)
		k |= 1u << W_PIDS;
	if (cg->direct) {
		k |= 1u << W_MEM;
		if (l->p && l->p->limits.has_runtime)
			k |= 1u << W_POPULATED;
	}
	return k;
}

/* Reads cg's files of the kinds given (bits), as inotify's notice of a
 * change to each would. */
static void check_files(struct limits_state *ls, struct sandbox_cg *cg,
			unsigned int kinds, uint64_t now)
{
	if (kinds & (1u << W_MEM))
		check_oom(ls, cg, now);
	if (kinds & (1u << W_POPULATED))
		check_populated(ls, cg, now);
	if (kinds & (1u << W_PIDS))
		check_pids(ls, cg, now);
}

/*
 * The backstop for what inotify does not tell: files read at this turn.
 * A watched file is read only when inotify says it changed, after its
 * watch is made (the baseline was read before it) and after an overflow;
 * one inotify refused is read every FILE_CHECK_MS; one that was missing
 * (no such controller) is watched again every FILE_RETRY_MS.
 */
static unsigned int backstop_files(struct limits_state *ls, struct sandbox_cg *cg,
				   bool files, bool retry, bool all)
{
	struct limits_cg *l = cg->lim;
	unsigned int want = wanted_files(cg), k;
	enum watch_kind kind;

	if (retry)
		for (kind = W_MEM; kind <= W_POPULATED; kind++) {
			if (want & l->missing & (1u << kind))
				add_watch(ls, cg, kind);
			else if (want & l->watched & (1u << kind))
				recheck_watch(ls, cg, kind);
		}
	if (all || l->reread)
		k = want;
	else if (files)
		k = want & ~l->watched & ~l->missing;
	else
		k = 0;
	l->reread = false;
	return k;
}

static void drain_inotify(struct limits_state *ls, uint64_t now)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;
	size_t i, off;

	while ((n = read(ls->ino_fd, buf, sizeof(buf))) > 0) {
		for (off = 0; off < (size_t)n;) {
			const struct inotify_event *ev = (const void *)(buf + off);
			struct sandbox_cg *cg = NULL;

			off += sizeof(*ev) + ev->len;
			if (ev->mask & IN_Q_OVERFLOW) {
				/* Changes were lost: every file is read. */
				ls->reread_all = true;
				continue;
			}
			for (i = 0; i < ls->n_w; i++)
				if (ls->w[i].wd == ev->wd)
					break;
			if (i == ls->n_w)
				continue;
			cg = names__cg(ls->names, ls->w[i].cg_id);
			if (ev->mask & IN_IGNORED) {
				/* The watch is gone while the cgroup stays:
				 * its file is read every FILE_CHECK_MS. */
				if (cg && cg->lim) {
					cg->lim->watched &= ~(1u << ls->w[i].kind);
					cg->lim->reread = true;
				}
				ls->w[i] = ls->w[--ls->n_w];
				continue;
			}
			if (!(ev->mask & IN_MODIFY) || !cg || !cg->lim)
				continue;
			check_files(ls, cg, 1u << ls->w[i].kind, now);
		}
	}
}

/* Processes in a cgroup and below it (cgroup.procs of each). */
static uint64_t count_procs(const char *dir)
{
	static char buf[65536];	/* done with before recursing */
	char path[PATH_MAX];
	struct dirent *de;
	uint64_t n = 0;
	ssize_t len, i;
	DIR *d;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	len = cgv_read(path, buf, sizeof(buf));
	for (i = 0; i < len; i++)
		n += buf[i] == '\n';
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		n += count_procs(path);
	}
	if (d)
		closedir(d);
	return n;
}

static void check_runtime(struct limits_state *ls, struct sandbox_cg *cg, uint64_t now)
{
	struct limits_cg *l = cg->lim;
	char dir[PATH_MAX];
	struct json *j;
	uint64_t procs;
	int err;

	if (!l->p || !l->p->limits.has_runtime || !l->rt_start_ms ||
	    l->rt_expired || now < l->rt_start_ms ||
	    now - l->rt_start_ms < l->p->limits.runtime_ms)
		return;
	l->rt_expired = true;
	snprintf(dir, sizeof(dir), "%s%s", ls->cgroot, cg->path);
	procs = count_procs(dir);
	/* One write kills the whole subtree, and the kernel keeps new forks
	 * from escaping while it does (Linux 5.14, cgroup.kill). */
	err = cgf_write(ls->cgroot, cg->path, "cgroup.kill", "1");
	if (err)
		pr_err("limits", "run time of %s expired, but writing 1 to %s/cgroup.kill failed: %s",
		       cg->path, dir, strerror(-err));
	j = record_begin(ls, "runtime", cg);
	json_u64(j, "limit", l->p->limits.runtime_ms);
	json_u64(j, "elapsed_ms", now - l->rt_start_ms);
	json_u64(j, "processes", procs);
	json_bool(j, "killed", !err);
	record_emit(ls);
}

static void check_cpu(struct limits_state *ls, struct sandbox_cg *cg, uint64_t now)
{
	struct limits_cg *l = cg->lim;
	char buf[1024];
	struct json *j;
	uint64_t nr, usec, periods = 0, milli;

	if (!l->p || !l->p->limits.has_cpu ||
	    !cgf_read(ls->cgroot, cg->path, "cpu.stat", buf, sizeof(buf)) ||
	    cgv_keyed(buf, "nr_throttled", &nr) ||
	    cgv_keyed(buf, "throttled_usec", &usec))
		return;
	cgv_keyed(buf, "nr_periods", &periods);
	if (nr <= l->thr_nr || (l->cpu_logged && now - l->cpu_log_ms < CPU_LOG_MS))
		return;
	j = record_begin(ls, "cpu", cg);
	if (cgf_read(ls->cgroot, cg->path, "cpu.max", buf, sizeof(buf)) &&
	    !cgv_cpu_milli(buf, &milli) && milli != CGV_MAX)
		json_u64(j, "limit", milli);
	json_u64(j, "nr_throttled", nr - l->thr_nr);
	json_u64(j, "throttled_usec", usec - l->thr_usec);
	json_u64(j, "nr_periods", periods - l->periods);
	json_u64(j, "interval_ms", now - l->cpu_log_ms);
	json_u64(j, "nr_throttled_total", nr);
	json_u64(j, "throttled_usec_total", usec);
	record_emit(ls);
	l->thr_nr = nr;
	l->thr_usec = usec;
	l->periods = periods;
	l->cpu_log_ms = now;
	l->cpu_logged = true;
}

static void check_pids_burst(struct limits_state *ls, struct sandbox_cg *cg, uint64_t now)
{
	struct limits_cg *l = cg->lim;
	uint64_t n = burst_due(&l->burst, now), x;
	struct json *j;

	if (!n)
		return;
	j = record_begin(ls, "pids", cg);
	if (read_u64(ls->cgroot, cg->path, "pids.max", &x) && x != CGV_MAX)
		json_u64(j, "limit", x);
	if (read_u64(ls->cgroot, cg->path, "pids.current", &x))
		json_u64(j, "current", x);
	json_u64(j, "count", n);
	json_u64(j, "refused_total", l->burst.total);
	record_emit(ls);
}

/* ---- counters, metrics, state ---- */

static void stats_of(const char *cgroot, struct sb_stats *s)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s%s", cgroot, s->cgroup);
	sb_stats_read_cgroup(s, dir);
}

static bool read_counts(int map_fd, uint64_t id, int ncpus, size_t stride,
			void *buf, struct sb_count *out)
{
	if (map_fd < 0 || bpf_map_lookup_elem(map_fd, &id, buf))
		return false;
	sb_count_sum(out, buf, (size_t)ncpus, stride);
	return true;
}

static size_t collect(struct limits_state *ls, struct sb_stats *v)
{
	int fd = ls->cnt_fd;
	uint64_t now_real = clock_ms(CLOCK_REALTIME);
	size_t i, n = 0;

	for (i = 0; i < ls->cgt->n; i++) {
		struct sandbox_cg *cg = &ls->cgt->v[i];
		struct sb_stats *s = &v[n];

		if (!cg->direct || !cg->lim)
			continue;
		memset(s, 0, sizeof(*s));
		s->policy = names__policy_name(ls->names, cg->policy_id);
		s->cgroup = cg->path;
		s->cgroup_id = cg->id;
		s->ctr = cg->ctr;
		if (read_counts(fd, cg->id, ls->ncpus, ls->stride, ls->percpu, &s->c)) {
			s->have |= SB_COUNTS;
			metrics_count(ls, cg, &s->c);
		}
		stats_of(ls->cgroot, s);
		if (cg->lim->p && cg->lim->p->limits.has_runtime) {
			s->have |= SB_RUNTIME;
			s->runtime_ms = cg->lim->p->limits.runtime_ms;
			s->runtime_left_ms = !cg->lim->rt_deadline_real_ms ? -1 :
				cg->lim->rt_expired ||
				cg->lim->rt_deadline_real_ms <= now_real ? 0 :
				(int64_t)(cg->lim->rt_deadline_real_ms - now_real);
		}
		n++;
	}
	return n;
}

/* Write to PATH.tmp, then rename: readers see the old file or the new. */
static int replace_file(const char *path, void (*fill)(FILE *, void *),
			void *ctx)
{
	char tmp[PATH_MAX + 8];
	FILE *f;
	int err = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	fill(f, ctx);
	if (fflush(f) || ferror(f))
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

struct fill_ctx {
	struct limits_state *ls;
	struct sb_stats *v;
	size_t n;
};

struct text {
	const char *buf;
	size_t len;
};

static void fill_text(FILE *f, void *vctx)
{
	const struct text *t = vctx;

	fwrite(t->buf, 1, t->len, f);
}

/*
 * The exposition text, built once (metrics_write(), the one builder) and
 * handed to both outputs, so the file and the endpoint say the same.
 */
static void write_metrics(struct limits_state *ls)
{
	struct metrics_agent ma = { 0 };
	struct sb_stats *v;
	struct text t;
	static bool warned;
	char *buf = NULL;
	size_t n, len = 0;
	FILE *f;
	int err = -ENOMEM;

	v = calloc(ls->cgt->n ? ls->cgt->n : 1, sizeof(*v));
	if (!v)
		goto out;
	n = collect(ls, v);
	events__counts(ls->ev, &ma.events_produced, &ma.events_logged,
		       &ma.events_lost);
	ma.has_self = !metrics_self(&ma.rss_bytes, &ma.cpu_usec);
	ma.pol = ls->pol;
	ma.n_pol = ls->n_pol;
	ma.container_labels = ls->container_labels;
	for (size_t i = 0; i < ls->cgt->n; i++) {
		const struct sandbox_cg *cg = &ls->cgt->v[i];

		ma.containers += cg->ctr && cg->ctr->id.path_len == strlen(cg->path);
	}
	f = open_memstream(&buf, &len);
	if (!f)
		goto out;
	metrics_write(f, &ma, v, n);
	err = fclose(f) ? -ENOMEM : 0;
	if (err)
		goto out;
	if (ls->metrics_path) {
		t = (struct text){ .buf = buf, .len = len };
		err = replace_file(ls->metrics_path, fill_text, &t);
	}
	if (ls->metrics_publish) {
		ls->metrics_publish(ls->metrics_ctx, buf, len);
		buf = NULL;	/* its own now */
	}
out:
	if (err && !warned)
		pr_err("limits", "writing the metrics%s%s failed: %s; free memory or disk space (they are retried every second)",
		       ls->metrics_path ? " to --metrics " : "",
		       ls->metrics_path ?: "", strerror(-err));
	warned = err != 0;
	free(buf);
	free(v);
}

static void fill_state(FILE *f, void *vctx)
{
	struct fill_ctx *c = vctx;
	struct limits_state *ls = c->ls;
	struct json j;
	size_t i;
	bool first = true;

	json_init(&j);
	json_begin(&j);
	json_u64(&j, "version", STATE_VERSION);
	json_u64(&j, "pid", (uint64_t)getpid());
	json_str(&j, "cgroup_root", ls->cgroot);
	json_str(&j, "pin_dir", *ls->pin_dir);
	/* Open the array by hand: one sandbox per line follows. */
	fwrite(j.buf, 1, j.len, f);
	fputs(",\"sandboxes\":[\n", f);
	for (i = 0; i < ls->cgt->n; i++) {
		const struct sandbox_cg *cg = &ls->cgt->v[i];
		const struct limits_cg *l = cg->lim;

		if (!cg->direct || !l)
			continue;
		json_begin(&j);
		json_str(&j, "policy", names__policy_name(ls->names, cg->policy_id));
		json_str(&j, "cgroup", cg->path);
		json_u64(&j, "cgroup_id", cg->id);
		json_u64(&j, "runtime_ms", l->p && l->p->limits.has_runtime ?
					   l->p->limits.runtime_ms : 0);
		json_u64(&j, "runtime_deadline_ms", l->rt_deadline_real_ms);
		json_end(&j);
		if (!first)
			fputs(",\n", f);
		first = false;
		fwrite(j.buf, 1, j.len - 1, f);	/* without its newline */
	}
	fputs("\n]}\n", f);
	json_free(&j);
}

static void write_state(struct limits_state *ls)
{
	struct fill_ctx c = { .ls = ls };
	char dir[PATH_MAX], *slash;
	int err;

	snprintf(dir, sizeof(dir), "%s", ls->state_path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		mkdir(dir, 0755);
	}
	err = replace_file(ls->state_path, fill_state, &c);
	if (err)
		pr_warn("limits", "writing the state file %s failed: %s; stockade status will not see this agent",
			ls->state_path, strerror(-err));
	else
		ls->state_written = true;
	ls->state_dirty = false;
}

/* ---- the main loop's turn ---- */

static void limits_arm(struct limits_state *ls);

void limits__tick(struct limits_state *ls)
{
	uint64_t now = clock_ms(CLOCK_MONOTONIC);
	bool cpu = false, files = false, retry = false, all;
	size_t i, n_pending = 0;

	if (!ls)
		return;
	ls->running = true;
	drain_inotify(ls, now);
	drain_kmsg(ls, now);
	if (now >= ls->next_cpu_ms) {
		cpu = true;
		ls->next_cpu_ms = now + CPU_CHECK_MS;
	}
	if (now >= ls->next_file_ms) {
		files = true;
		ls->next_file_ms = now + FILE_CHECK_MS;
	}
	if (now >= ls->next_retry_ms) {
		retry = true;
		ls->next_retry_ms = now + FILE_RETRY_MS;
	}
	all = ls->reread_all;
	ls->reread_all = false;
	for (i = 0; i < ls->cgt->n; i++) {
		struct sandbox_cg *cg = &ls->cgt->v[i];

		if (!cg->lim)
			continue;
		check_files(ls, cg, backstop_files(ls, cg, files, retry, all), now);
		if (cg->direct && cg->lim->oom_pending)
			n_pending++;
	}
	for (i = 0; i < ls->cgt->n; i++) {
		struct sandbox_cg *cg = &ls->cgt->v[i];

		if (!cg->direct || !cg->lim)
			continue;
		if (cg->lim->oom_pending)
			oom_flush(ls, cg, now, false, n_pending);
		check_pids_burst(ls, cg, now);
		check_runtime(ls, cg, now);
		if (cpu)
			check_cpu(ls, cg, now);
	}
	if (metrics_on(ls) && now >= ls->next_metrics_ms) {
		ls->next_metrics_ms = now + METRICS_MS;
		write_metrics(ls);
	}
	if (ls->state_dirty)
		write_state(ls);
	limits_arm(ls);
}

/*
 * A log rotation's reopen (SIGUSR1): the metrics and state files hold no
 * fd (each write is a new FILE.tmp renamed over FILE), so a rename or a
 * removal of either needs no reopen. They are written again at the end
 * of this turn all the same, so that one removed (by a cleanup of /run, a
 * rotation that should not have touched it) is back at once, the state
 * file's run-time clocks included, rather than at its next change.
 */
void limits__files_rewrite(struct limits_state *ls)
{
	if (!ls)
		return;
	ls->next_metrics_ms = 0;
	ls->state_dirty = true;
}

static void next_min(uint64_t *next, uint64_t t)
{
	if (t && (!*next || t < *next))
		*next = t;
}

/*
 * When limits__tick() next has work that no fd announces (CLOCK_MONOTONIC
 * ms), or 0: nothing. Each term is a condition limits__tick() tests by
 * time; the ones that a read fd announces (inotify, /dev/kmsg) wake the
 * loop by themselves.
 */
static uint64_t limits_next_ms(struct limits_state *ls)
{
	uint64_t next = 0;
	size_t i;

	if (metrics_on(ls))
		next_min(&next, ls->next_metrics_ms);
	for (i = 0; i < ls->cgt->n; i++) {
		const struct sandbox_cg *cg = &ls->cgt->v[i];
		const struct limits_cg *l = cg->lim;

		if (!l)
			continue;
		/* The backstop's reads (backstop_files()). */
		if (wanted_files(cg) & ~l->watched & ~l->missing)
			next_min(&next, ls->next_file_ms);
		if (wanted_files(cg) & (l->missing | l->watched))
			next_min(&next, ls->next_retry_ms);
		if (!cg->direct)
			continue;
		if (l->p && l->p->limits.has_cpu)
			next_min(&next, ls->next_cpu_ms);
		if (l->oom_pending)
			next_min(&next, l->oom_deadline_ms);
		next_min(&next, burst_next_ms(&l->burst));
		if (l->p && l->p->limits.has_runtime && l->rt_start_ms && !l->rt_expired)
			next_min(&next, l->rt_start_ms + l->p->limits.runtime_ms);
	}
	return next;
}

/* Wake the loop when limits__tick() is next due. */
static void limits_arm(struct limits_state *ls)
{
	uint64_t next;
	int err;

	if (!ls->timer)
		return;
	next = limits_next_ms(ls);
	err = next ? loop__timer_at(ls->timer, next * 1000) : loop__timer_off(ls->timer);
	if (err)
		pr_warn("limits", "arming the limits timer failed: %s; breaches are logged at the next event instead",
			strerror(-err));
}

/* The fds and the timer only wake the loop: the post hook ticks. */
static int on_wake(struct loop_source *s, uint32_t revents, void *userdata)
{
	(void)s;
	(void)revents;
	(void)userdata;
	return 0;
}

static int on_turn(struct loop *l, void *userdata)
{
	(void)l;
	limits__tick(userdata);
	return 0;
}

int limits__loop_add(struct limits_state *ls, struct loop *l)
{
	int err;

	if (!loop__add_io(l, ls->ino_fd, LOOP_PRIO_NORMAL, on_wake, ls))
		goto fail;
	if (ls->kmsg_fd >= 0 &&
	    !loop__add_io(l, ls->kmsg_fd, LOOP_PRIO_NORMAL, on_wake, ls))
		goto fail;
	ls->timer = loop__add_timer(l, LOOP_PRIO_NORMAL, on_wake, ls);
	if (!ls->timer)
		goto fail;
	err = loop__add_post(l, on_turn, ls);
	if (err)
		goto fail_err;
	limits_arm(ls);
	return 0;
fail:
	err = -errno;
fail_err:
	pr_err("limits", "cannot add the limits' inotify, /dev/kmsg and timer to the main loop: %s",
	       strerror(-err));
	return err;
}

void limits__detach(struct limits_state *ls, struct sandbox_cg *cg, const char *why)
{
	struct limits_cg *l = cg->lim;
	bool gone = !strcmp(why, "cgroup_removed");

	if (!ls || !l)
		return;
	drop_watches(ls, cg->id);
	if (cg->direct) {
		/* The last word on OOM kills the kernel already counted. */
		drain_kmsg(ls, clock_ms(CLOCK_MONOTONIC));
		if (!gone)
			check_oom(ls, cg, clock_ms(CLOCK_MONOTONIC));
		if (l->oom_pending)
			oom_flush(ls, cg, clock_ms(CLOCK_MONOTONIC), true, 1);
		metrics_count_last(ls, cg);
		if (l->counted)
			bpf_map_delete_elem(ls->cnt_fd, &cg->id);
		if (!gone)
			restore_limits(ls, cg);
		else
			bpf_map_delete_elem(ls->saved_fd, &cg->id);
	}
	lim_free(l);
	cg->lim = NULL;
	ls->state_dirty = true;
}

/* Does the state file still name this agent? */
static bool state_is_ours(const char *path)
{
	char line[512];
	uint64_t pid = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return false;
	if (fgets(line, sizeof(line), f))
		flatjson_get(line, "pid", NULL, 0, &pid);
	fclose(f);
	return pid == (uint64_t)getpid();
}

/* A cgroup the agent stops tracking while its enforcement stays (its
 * pinned links confine it): nothing is put back. */
void limits__forget(struct limits_state *ls, struct sandbox_cg *cg)
{
	if (!ls || !cg->lim)
		return;
	drop_watches(ls, cg->id);
	lim_free(cg->lim);
	cg->lim = NULL;
	ls->state_dirty = true;
}

/* Is id a directly selected cgroup this agent confines? */
static bool is_sandbox_root(struct limits_state *ls, uint64_t id)
{
	const struct sandbox_cg *cg = names__cg(ls->names, id);

	return cg && cg->direct;
}

void limits__counters_reset(struct limits_state *ls, uint64_t id)
{
	memset(ls->percpu, 0, (size_t)ls->ncpus * ls->stride);
	map_update_retry(ls->cnt_fd, &id, ls->percpu, BPF_ANY);
}

void limits__counters_drop(struct limits_state *ls, uint64_t id)
{
	struct sandbox_cg *cg = (struct sandbox_cg *)names__cg(ls->names, id);

	if (cg)
		metrics_count_last(ls, cg);
	bpf_map_delete_elem(ls->cnt_fd, &id);
}

int limits__counters_carry(struct limits_state *ls, uint64_t id, int old_fd)
{
	if (bpf_map_lookup_elem(old_fd, &id, ls->percpu))
		return -ENOENT;
	return map_update_retry(ls->cnt_fd, &id, ls->percpu, BPF_ANY);
}

void limits__counters_sweep(struct limits_state *ls)
{
	uint64_t key, next, *prev = NULL;
	int fd = ls->cnt_fd;

	/* Deleting the key just read: the walk goes on from the last kept. */
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		if (!is_sandbox_root(ls, next)) {
			bpf_map_delete_elem(fd, &next);
			continue;
		}
		key = next;
		prev = &key;
	}
}

/*
 * After adoption: lim_saved entries of cgroups this agent does not confine
 * through a selector any more (removed, or no longer selected while no
 * agent ran): their enforcement is gone, so their limits go too.
 */
void limits__sweep(struct limits_state *ls, const struct cgroup_paths *paths)
{
	int fd = ls->saved_fd;
	uint64_t *gone = NULL, key, next;
	size_t n = 0, cap = 0, i;
	int err;

	err = bpf_map_get_next_key(fd, NULL, &next);
	while (!err) {
		if (!is_sandbox_root(ls, next)) {
			if (n == cap) {
				uint64_t *v = realloc(gone, (cap ? cap * 2 : 16) * sizeof(*v));

				if (!v)
					break;
				gone = v;
				cap = cap ? cap * 2 : 16;
			}
			gone[n++] = next;
		}
		key = next;
		err = bpf_map_get_next_key(fd, &key, &next);
	}
	for (i = 0; i < n; i++)
		limits__restore_saved(ls->cgroot,
				      paths ? cgroup_paths__find(paths, gone[i]) : NULL,
				      fd, gone[i]);
	free(gone);
}

void limits__fini(struct limits_state *ls)
{
	size_t i;

	if (!ls)
		return;
	/* Stopping without detaching: the limits, the counters and the
	 * values found (lim_saved) stay; only our own bookkeeping goes. */
	for (i = 0; i < ls->cgt->n; i++) {
		lim_free(ls->cgt->v[i].lim);
		ls->cgt->v[i].lim = NULL;
	}
	/* Counters of an agent that is gone would read as current. */
	if (ls->state_written && state_is_ours(ls->state_path))
		unlink(ls->state_path);
	if (ls->metrics_path)
		unlink(ls->metrics_path);
	if (ls->ino_fd >= 0)
		close(ls->ino_fd);
	if (ls->kmsg_fd >= 0)
		close(ls->kmsg_fd);
	for (i = 0; i < ls->n_pol; i++)
		free((char *)ls->pol[i].policy);
	free(ls->pol);
	free(ls->w);
	free(ls->percpu);
	free(ls);
}

/* ---- stockade status (agent/ctl.c) ---- */

int limits__state_read(const char *state_path, struct state_sb **out,
		       size_t *n_out, uint64_t *pid_out)
{
	char line[PATH_MAX * 2], cgroot[PATH_MAX] = "", pin_dir[PATH_MAX] = "";
	struct state_sb *sbs = NULL;
	size_t n = 0, cap = 0;
	uint64_t pid = 0, version = 0;
	int err = 0;
	FILE *f;

	*out = NULL;
	*n_out = 0;
	*pid_out = 0;
	f = fopen(state_path ? state_path : LIMITS_STATE_DEFAULT, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "{", 1))
			continue;
		if (!version) {
			if (flatjson_get(line, "version", NULL, 0, &version) != 'n' ||
			    flatjson_get(line, "pid", NULL, 0, &pid) != 'n' ||
			    flatjson_get(line, "cgroup_root", cgroot, sizeof(cgroot), NULL) != 's' ||
			    flatjson_get(line, "pin_dir", pin_dir, sizeof(pin_dir), NULL) != 's')
				break;
			continue;
		}
		if (n == cap) {
			struct state_sb *nv;

			cap = cap ? cap * 2 : 16;
			nv = realloc(sbs, cap * sizeof(*nv));
			if (!nv) {
				err = -ENOMEM;
				break;
			}
			sbs = nv;
		}
		memset(&sbs[n], 0, sizeof(sbs[n]));
		if (flatjson_get(line, "policy", sbs[n].policy, sizeof(sbs[n].policy), NULL) != 's' ||
		    flatjson_get(line, "cgroup", sbs[n].cgroup, sizeof(sbs[n].cgroup), NULL) != 's' ||
		    flatjson_get(line, "cgroup_id", NULL, 0, &sbs[n].id) != 'n')
			continue;
		flatjson_get(line, "runtime_ms", NULL, 0, &sbs[n].runtime_ms);
		flatjson_get(line, "runtime_deadline_ms", NULL, 0, &sbs[n].deadline);
		n++;
	}
	fclose(f);
	if (!err && version != STATE_VERSION)
		err = -EINVAL;
	/* An agent that is gone: its run-time clocks mean nothing. */
	if (!err && (!pid || (kill((pid_t)pid, 0) && errno == ESRCH)))
		err = -ESRCH;
	if (err) {
		free(sbs);
		return err;
	}
	*out = sbs;
	*n_out = n;
	*pid_out = pid;
	return 0;
}

void limits__usage(const char *cgroot, int cnt_fd, const struct state_sb *st,
		   struct sb_stats *s)
{
	int ncpus = libbpf_num_possible_cpus();
	size_t stride = (sizeof(struct sb_count) + 7) & ~(size_t)7;
	uint64_t now_real = clock_ms(CLOCK_REALTIME);
	void *buf;

	if (ncpus > 0 && (buf = calloc((size_t)ncpus, stride))) {
		if (read_counts(cnt_fd, s->cgroup_id, ncpus, stride, buf, &s->c))
			s->have |= SB_COUNTS;
		free(buf);
	}
	stats_of(cgroot, s);
	if (st && st->runtime_ms) {
		s->have |= SB_RUNTIME;
		s->runtime_ms = st->runtime_ms;
		s->runtime_left_ms = !st->deadline ? -1 :
			st->deadline <= now_real ? 0 :
			(int64_t)(st->deadline - now_real);
	}
}
