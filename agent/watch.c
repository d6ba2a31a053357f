// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The zero window (README, "Zero window"): watched directories, their
 * WATCHED and OUTSIDE marks and watch links, inotify on cgroupfs, and the
 * time a new cgroup waited (agent/agent_int.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "containers.h"
#include "daemon.h"
#include "bpfutil.h"
#include "cgroup.h"
#include "limits_agent.h"
#include "log.h"
#include "loop.h"
#include "lsm.h"
#include "file_rules.h"
#include "net_rules.h"
#include "pin.h"
#include "replace.h"
#include "sandbox.h"
#include "records.h"
#include "rules_check.h"
#include "setup_agent.h"
#include "stockade_limits.h"
#include "stockade.skel.h"

static void w_progs(struct agent *a, struct bpf_program *progs[WATCH_N_LINKS])
{
	progs[0] = a->skel->progs.stk_w_connect4;
	progs[1] = a->skel->progs.stk_w_connect6;
	progs[2] = a->skel->progs.stk_w_sendmsg4;
	progs[3] = a->skel->progs.stk_w_sendmsg6;
	progs[4] = a->skel->progs.stk_w_sock_create;
	progs[5] = a->skel->progs.stk_w_bind4;
	progs[6] = a->skel->progs.stk_w_bind6;
}

static struct watch_dir *find_wd(struct agent *a, const char *rel)
{
	size_t i;

	for (i = 0; i < a->n_wds; i++)
		if (!strcmp(a->wds[i].path, rel))
			return &a->wds[i];
	return NULL;
}

struct watch_dir *find_wd_id(struct agent *a, uint64_t id)
{
	size_t i;

	for (i = 0; i < a->n_wds; i++)
		if (a->wds[i].id == id)
			return &a->wds[i];
	return NULL;
}

bool agent__watched(struct agent *a, uint64_t id)
{
	return find_wd_id(a, id) != NULL;
}

bool wd_setup_dir(void *ctx, size_t i, struct setup_dir *d)
{
	const struct agent *a = ctx;
	const struct watch_dir *w;

	if (i >= a->n_wds)
		return false;
	w = &a->wds[i];
	*d = (struct setup_dir){ .id = w->id, .path = w->path, .slot = w->slot,
				 .marked = w->armed && w->entry };
	return true;
}

/* The watched directory rel's parent is, if any. */
struct watch_dir *parent_wd(struct agent *a, const char *rel)
{
	char parent[PATH_MAX];
	const char *slash = strrchr(rel, '/');

	if (!slash)
		return NULL;
	snprintf(parent, sizeof(parent), "%.*s", (int)(slash - rel), rel);
	return find_wd(a, parent);
}

/*
 * The slot a pending cgroup below dir is judged by: the one policy whose
 * selectors can select something below dir, else the conflict slot (deny
 * all): several candidates, or one that is conflicted itself.
 */
static uint32_t candidate_slot(struct agent *a, const char *dir)
{
	int64_t found = -1;
	size_t i, j;

	for (i = 0; i < a->set.n; i++) {
		const struct policy *p = a->set.v[i];

		for (j = 0; j < p->n_cgroups; j++) {
			if (!select__prefix_match(p->cgroups[j], dir))
				continue;
			if (found >= 0 && found != (int64_t)a->pt.pol_id[i])
				return POLICY_SLOT_CONFLICT;
			found = (int64_t)a->pt.pol_id[i];
		}
	}
	return found < 0 ? POLICY_SLOT_CONFLICT : policy_table__slot_of(&a->pt, (uint32_t)found);
}

/* Can any selector select a cgroup below rel (not rel itself)? */
static bool may_select_below(struct agent *a, const char *rel)
{
	size_t i, j;

	for (i = 0; i < a->set.n; i++)
		for (j = 0; j < a->set.v[i]->n_cgroups; j++)
			if (select__prefix_match(a->set.v[i]->cgroups[j], rel))
				return true;
	return false;
}

/* A watched directory's inotify watch: its new children. IN_MASK_ADD:
 * it may be a top's parent too (watch_tops()), the same watch. */
#define WD_MASK	(IN_CREATE | IN_DELETE | IN_ONLYDIR | IN_MASK_ADD)

/* Want rel watched (this scan generation); add it, and its inotify
 * watch, when new. */
static struct watch_dir *want_wd(struct agent *a, const char *rel, bool top)
{
	struct watch_dir *w = find_wd(a, rel);
	char path[PATH_MAX];

	if (w) {
		uint64_t id = cgroup__id(a->cgroot, rel);

		/* Removed and made again (a runtime's directory, recreated):
		 * another cgroup of that name. The old one's entry, links and
		 * inotify watch judge nothing there: taken down, and the new
		 * one watched and armed as a new directory (arm_all()). */
		if (id && id != w->id) {
			disarm_wd(a, w);
			w->id = id;
			snprintf(path, sizeof(path), "%s%s", a->cgroot, rel);
			if (a->cg_ino_fd >= 0)
				w->wd = inotify_add_watch(a->cg_ino_fd, path, WD_MASK);
			a->rescan = true;	/* what was made there meanwhile */
		} else if (a->cg_ino_fd >= 0) {
			/* Again at each walk, the wd kept (the same while
			 * the directory is): one lost (IN_IGNORED, maybe
			 * dropped in an overflow) or refused is made good. */
			snprintf(path, sizeof(path), "%s%s", a->cgroot, rel);
			w->wd = inotify_add_watch(a->cg_ino_fd, path, WD_MASK);
		}
	} else {
		uint64_t id = cgroup__id(a->cgroot, rel);

		if (!id)
			return NULL;	/* gone meanwhile */
		if (a->n_wds == a->cap_wds) {
			size_t cap = a->cap_wds ? a->cap_wds * 2 : 16;
			struct watch_dir *v = realloc(a->wds, cap * sizeof(*v));

			if (!v)
				return NULL;
			a->wds = v;
			a->cap_wds = cap;
		}
		w = &a->wds[a->n_wds];
		memset(w, 0, sizeof(*w));
		w->path = strdup(rel);
		if (!w->path)
			return NULL;
		w->id = id;
		w->wd = -1;
		w->pwd = -1;
		a->n_wds++;
		/* The watch before anything below is judged: a cgroup made
		 * from now on is reported, one made before is walked. */
		snprintf(path, sizeof(path), "%s%s", a->cgroot, rel);
		if (a->cg_ino_fd >= 0) {
			w->wd = inotify_add_watch(a->cg_ino_fd, path, WD_MASK);
			if (w->wd < 0)
				pr_warn("cgroup", "watching %s for new cgroups failed: %s; they are classified by the periodic scan (every %d s), pending until then",
					path, strerror(errno), SCAN_INTERVAL_MS / 1000);
		}
	}
	w->top |= top;
	w->seen = a->scan_gen;
	return w;
}

/* The selectors' watched directories, for this scan (start, reload, or
 * the safety net). A literal selector whose cgroup exists needs none:
 * its subtree is confined by inheritance. */
void watch_tops(struct agent *a)
{
	char base[PATH_MAX], path[2 * PATH_MAX];
	size_t i, j;

	for (i = 0; i < a->set.n; i++) {
		const struct policy *p = a->set.v[i];

		for (j = 0; j < p->n_cgroups; j++) {
			const char *sel = p->cgroups[j];
			char *slash;

			if (select__is_literal(sel)) {
				snprintf(path, sizeof(path), "%s%s", a->cgroot, sel);
				if (!access(path, F_OK))
					continue;
			}
			if (select__watch_base(sel, base, sizeof(base)))
				continue;
			/* The deepest of its directories that exists. */
			for (;;) {
				snprintf(path, sizeof(path), "%s%s", a->cgroot, base);
				if (!access(path, F_OK) || !base[0])
					break;
				slash = strrchr(base, '/');
				*(slash ? slash : base) = '\0';
			}
			want_wd(a, base, true);
		}
	}
	/* cgroupfs reports a directory's removal only to its parent's
	 * watch (IN_DELETE there; no IN_DELETE_SELF nor IN_IGNORED on the
	 * directory): each top's parent is watched too, so a top removed,
	 * or made again under its name, asks for a scan at once
	 * (drain_cg_inotify()). IN_MASK_ADD: the parent may be a watched
	 * directory itself, sharing the watch; never removed on its own for
	 * that reason, added again (the same wd) at each scan. */
	for (i = 0; a->cg_ino_fd >= 0 && i < a->n_wds; i++) {
		struct watch_dir *w = &a->wds[i];
		const char *slash = strrchr(w->path, '/');

		if (!w->top || w->seen != a->scan_gen || !slash)
			continue;
		snprintf(path, sizeof(path), "%s%.*s", a->cgroot, (int)(slash - w->path), w->path);
		w->pwd = inotify_add_watch(a->cg_ino_fd, path,
					   IN_CREATE | IN_DELETE | IN_ONLYDIR | IN_MASK_ADD);
	}
}

/* ev, on a top's parent, is that top's removal or its making again. */
static bool top_event(const struct agent *a, const struct inotify_event *ev)
{
	size_t i;

	if (!(ev->mask & (IN_CREATE | IN_DELETE)) || !ev->len)
		return false;
	for (i = 0; i < a->n_wds; i++) {
		const struct watch_dir *w = &a->wds[i];
		const char *slash = strrchr(w->path, '/');

		if (w->top && w->pwd == ev->wd && slash && !strcmp(slash + 1, ev->name))
			return true;
	}
	return false;
}

/* Records it; true when it is new. */
static bool outside_add(struct agent *a, uint64_t id)
{
	size_t i;

	for (i = 0; i < a->n_outs; i++) {
		if (a->outs[i].id == id) {
			a->outs[i].seen = a->scan_gen;
			return false;
		}
	}
	if (a->n_outs == a->cap_outs) {
		size_t cap = a->cap_outs ? a->cap_outs * 2 : 64;
		struct outside_cg *v = realloc(a->outs, cap * sizeof(*v));

		if (!v)
			return true;	/* its entry stays until the agent stops */
		a->outs = v;
		a->cap_outs = cap;
	}
	a->outs[a->n_outs].id = id;
	a->outs[a->n_outs++].seen = a->scan_gen;
	return true;
}

bool is_outside(struct agent *a, uint64_t id)
{
	size_t i;

	for (i = 0; i < a->n_outs; i++)
		if (a->outs[i].id == id)
			return true;
	return false;
}

static int arm_wd(struct agent *a, struct watch_dir *w);

/*
 * A cgroup that no selector chose, right below a watched directory:
 * another watched directory when a selector can still select below it,
 * else an OUTSIDE entry, which ends its pending state (and its
 * descendants').
 */
void classify_unselected(struct agent *a, const char *rel, uint64_t id)
{
	struct sandbox sb = { .policy_id = SANDBOX_ENTRY_OUTSIDE };

	if (may_select_below(a, rel)) {
		struct watch_dir *w = want_wd(a, rel, false), *up = parent_wd(a, rel);

		/* Below an armed directory: armed now, before anything below
		 * it is classified, so a selected child of it takes the
		 * links-first path (its pending state must not end before
		 * its own links judge it). */
		if (w && up && up->armed && up->entry)
			arm_wd(a, w);
		return;
	}
	if (sandbox_entry_put(a, id, &sb)) {
		pr_warn("cgroup", "marking %s outside every sandbox failed: %s; it stays pending (judged deny-first) until the next scan",
			rel, strerror(errno));
		return;
	}
	if (outside_add(a, id))
		containers__outside(a, rel, id);
}

/*
 * Is another watched top directory of this scan an ancestor of w? Then
 * w gets no watch links: that one's programs run for every cgroup below
 * w as well, and judge a pending call by its nearest entry (w's, with
 * w's candidate), so links at w too would judge, and log, each pending
 * call twice (every program of a cgroup's ancestors runs). Nested tops
 * are common: selectors whose base does not exist watch the root.
 * linked: only by one whose links are attached (arm_all() gives w its
 * own when the one above failed to attach).
 */
static bool covered(const struct agent *a, const struct watch_dir *w, bool linked)
{
	size_t i, n;

	for (i = 0; i < a->n_wds; i++) {
		const struct watch_dir *o = &a->wds[i];

		if (o == w || !o->top || o->seen != a->scan_gen ||
		    (linked && !o->links[0]))
			continue;
		n = strlen(o->path);
		if (n < strlen(w->path) && !strncmp(o->path, w->path, n) &&
		    w->path[n] == '/')
			return true;
	}
	return false;
}

static void drop_wd_links(struct agent *a, struct watch_dir *w);

/* Write w's WATCHED entry and, for a top directory, attach its links. */
static int arm_wd(struct agent *a, struct watch_dir *w)
{
	struct bpf_program *progs[WATCH_N_LINKS];
	struct sandbox sb = { .policy_id = SANDBOX_ENTRY_WATCHED };
	const char *how;
	int err;

	/* Inside a confined cgroup, the cgroup is judged by that sandbox
	 * already (its inherited entry), and its parent's programs run
	 * there: nothing to add, only the inotify watch. */
	if (agent__find_cg(a, w->id)) {
		w->armed = true;
		w->entry = false;
		return 0;
	}
	sb.slot = candidate_slot(a, w->path);
	if (!w->armed || !w->entry || sb.slot != w->slot) {
		/* Its grant first: pending children count from the mark. */
		w->slot = sb.slot;
		setup__grant_wd(&a->setup, &(struct setup_dir){
			.id = w->id, .path = w->path, .slot = w->slot });
		err = sandbox_entry_put(a, w->id, &sb);
		if (err) {
			pr_err("cgroup", "marking %s as watched failed: %s; cgroups created there wait for the scan",
			       w->path[0] ? w->path : "/", strerror(-err));
			return err;
		}
		w->entry = true;
	}
	if (w->top && !w->links[0] && !covered(a, w, a->wd_fallback)) {
		w_progs(a, progs);
		err = attach_links(a, w->id, w->path, progs, WATCH_N_LINKS,
				   w->links, NULL, &how);
		if (err) {
			pr_err("cgroup", "attaching the watch programs to %s failed: %s",
			       w->path[0] ? w->path : "/", strerror(-err));
			return err;
		}
	}
	w->armed = true;
	return 0;
}

/* w's watch links, and their pins. */
static void drop_wd_links(struct agent *a, struct watch_dir *w)
{
	struct bpf_program *progs[WATCH_N_LINKS];
	char pin[PATH_MAX];
	int i;

	w_progs(a, progs);
	for (i = 0; i < WATCH_N_LINKS; i++) {
		if (w->links[i])
			bpf_link_detach(bpf_link__fd(w->links[i]));
		bpf_link__destroy(w->links[i]);
		w->links[i] = NULL;
		if (!cg_link_path(a, w->id, progs[i], pin, sizeof(pin)))
			unlink(pin);
	}
}

/* Undo arm_wd(): links first (then nothing judges pending cgroups with
 * the cgroup programs), then the entry, then the inotify watch. */
void disarm_wd(struct agent *a, struct watch_dir *w)
{
	struct sandbox sb;

	drop_wd_links(a, w);
	if (w->entry &&
	    sandbox_entry_get(a, w->id, &sb) &&
	    sb.policy_id == SANDBOX_ENTRY_WATCHED)
		sandbox_entry_delete(a, w->id);
	setup__revoke(&a->setup, w->id);
	if (w->wd >= 0 && a->cg_ino_fd >= 0) {
		disc_forget(a, w->wd);
		inotify_rm_watch(a->cg_ino_fd, w->wd);
	}
	w->wd = -1;
	w->armed = w->entry = false;
}

static void forget_wd(struct agent *a, size_t i)
{
	disarm_wd(a, &a->wds[i]);
	free(a->wds[i].path);
	a->wds[i] = a->wds[--a->n_wds];
}

/*
 * The cgroup_mkdir tracepoint (bpf/zerowin.bpf.c) times each new cgroup
 * for pending_ms. Not pinned: only this agent's measurements use it. If
 * it cannot attach, pending_ms falls back to the directory's ctime.
 */
void born_attach(struct agent *a)
{
	a->born_link = bpf_program__attach(a->skel->progs.stk_cg_mkdir);
	if (!a->born_link)
		pr_warn("agent", "attaching the cgroup_mkdir tracepoint failed: %s; pending_ms counts from a new cgroup's first lookup (its directory's ctime), a lower bound",
			strerror(errno));
}

/* When the cgroup_mkdir tracepoint saw id made (bpf_ktime_get_boot_ns());
 * false if it did not, or is not attached. */
static bool cg_born_ns(struct agent *a, uint64_t id, __u64 *ns)
{
	return a->born_link &&
	       !bpf_map_lookup_elem(bpf_map__fd(a->skel->maps.cg_born), &id, ns);
}

bool cg_is_fresh(struct agent *a, const char *rel, uint64_t id)
{
	char path[2 * PATH_MAX];
	struct stat st;
	__u64 ns;

	/* Made while this agent's cgroup_mkdir tracepoint was attached (the
	 * pinned map may hold an earlier agent's times too). */
	if (a->born_link)
		return cg_born_ns(a, id, &ns) && (int64_t)ns >= a->started_boot_ns;
	/* Else the directory's ctime, which cgroupfs sets at the first
	 * lookup: a cgroup nobody looked at before may count as new. */
	snprintf(path, sizeof(path), "%s%s", a->cgroot, rel);
	/* started_ns has whole seconds: a cgroup made in the agent's first
	 * second counts as new. */
	return !stat(path, &st) && (int64_t)st.st_ctim.tv_sec * 1000000000 >= a->started_ns;
}

/* Microseconds from rel's creation until now: from its mkdir (the
 * tracepoint's time), else from its directory's ctime, which cgroupfs
 * sets at the first lookup (a lower bound). */
int64_t pending_us_of(struct agent *a, const char *rel, uint64_t id)
{
	char path[PATH_MAX];
	struct stat st;
	int64_t born;
	__u64 ns;

	if (cg_born_ns(a, id, &ns))
		return (clock_now_ns(CLOCK_BOOTTIME) - (int64_t)ns) / 1000;
	snprintf(path, sizeof(path), "%s%s", a->cgroot, rel);
	if (stat(path, &st))
		return -1;
	born = (int64_t)st.st_ctim.tv_sec * 1000000 + st.st_ctim.tv_nsec / 1000;
	return clock_now_ns(CLOCK_REALTIME) / 1000 - born;
}

static void *sub_one(const char *rel, uint64_t id, void *parent, void *vctx)
{
	struct sub_ctx *c = vctx;
	char full[PATH_MAX];

	snprintf(full, sizeof(full), "%s%s", c->prefix, rel);
	return scan_one(full, id, parent ?: c->top, c->sc);
}

/*
 * Would forgetting w, which this scan no longer wants, leave a wanted top
 * below it unjudged: one whose own links failed to attach (EMFILE, say)
 * and that no other linked top covers? Its pending cgroups would then
 * meet no watch program at all, and their connects would go through.
 */
static bool still_judges(const struct agent *a, const struct watch_dir *w)
{
	size_t i, n = strlen(w->path);

	if (!w->links[0])
		return false;
	for (i = 0; i < a->n_wds; i++) {
		const struct watch_dir *o = &a->wds[i];

		if (o == w || !o->top || o->seen != a->scan_gen || o->links[0])
			continue;
		if (!strncmp(o->path, w->path, n) && o->path[n] == '/' &&
		    !covered(a, o, true))
			return true;
	}
	return false;
}

/* Arm every watched directory this scan wants; forget the others (a
 * reload dropped their selector, or they are gone). */
void arm_all(struct agent *a)
{
	size_t i;

	/* The wanted ones first, links included, then the others go: a
	 * directory that a departing one covered has its own links before
	 * the departing one's go, so no pending call goes unjudged. */
	for (i = 0; i < a->n_wds; i++)
		if (a->wds[i].seen == a->scan_gen)
			arm_wd(a, &a->wds[i]);
	/* One above failed to attach: those below it take their own. */
	a->wd_fallback = true;
	for (i = 0; i < a->n_wds; i++)
		if (a->wds[i].seen == a->scan_gen && a->wds[i].top && !a->wds[i].links[0])
			arm_wd(a, &a->wds[i]);
	a->wd_fallback = false;
	for (i = 0; i < a->n_wds;) {
		struct watch_dir *w = &a->wds[i];

		if (w->seen != a->scan_gen && still_judges(a, w)) {
			/* Fail closed: kept whole, entry and links, as a
			 * top of this scan, until a walk links the ones
			 * below it (their failed arm asks for one). */
			pr_warn("cgroup", "keeping the watch programs on %s: a watched directory below it has none of its own yet",
				w->path[0] ? w->path : "/");
			w->seen = a->scan_gen;
		}
		if (w->seen != a->scan_gen) {
			forget_wd(a, i);
			continue;
		}
		i++;
	}
	/* Links of a directory now covered by one above it (a new top, or
	 * adopted from an earlier agent): the one above judges now. */
	for (i = 0; i < a->n_wds; i++)
		if (a->wds[i].links[0] && covered(a, &a->wds[i], true))
			drop_wd_links(a, &a->wds[i]);
}

/*
 * New cgroups below the watched directories, from inotify: classified at
 * once, so a pending cgroup is judged by its candidate for a millisecond
 * or two, not until the next scan. An overflowed queue asks for a scan.
 */
void drain_cg_inotify(struct agent *a)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	char rel[PATH_MAX], path[2 * PATH_MAX];
	struct scan_ctx ctx = { .a = a, .err = 0 };
	bool rescan = false;
	ssize_t n;

	if (a->cg_ino_fd < 0)
		return;
	a->in_inotify = true;
	while ((n = read(a->cg_ino_fd, buf, sizeof(buf))) > 0) {
		char *p;

		for (p = buf; p < buf + n;) {
			struct inotify_event *ev = (struct inotify_event *)p;
			const struct sandbox_cg *pcg;
			struct watch_dir *w = NULL;
			size_t i;

			p += sizeof(*ev) + ev->len;
			if (ev->mask & IN_Q_OVERFLOW) {
				rescan = true;
				continue;
			}
			if (top_event(a, ev)) {
				/* A top removed, or made again: the scan
				 * watches what there is now (its parent, or the
				 * new directory: want_wd()). */
				rescan = true;
				if (ev->mask & IN_DELETE)
					continue;
			}
			if (ev->mask & IN_IGNORED) {
				/* A watch gone (removed by us, maybe shared with
				 * another of our directories): if something
				 * still wanted it, the next walk asks again. */
				bool held = disc_forget(a, ev->wd);

				for (i = 0; i < a->n_wds; i++) {
					held |= a->wds[i].wd == ev->wd || a->wds[i].pwd == ev->wd;
					if (a->wds[i].wd == ev->wd)
						a->wds[i].wd = -1;
					if (a->wds[i].pwd == ev->wd)
						a->wds[i].pwd = -1;
				}
				for (i = 0; i < a->cgt.n; i++) {
					held |= a->cgt.v[i].wd == ev->wd || a->cgt.v[i].pwd == ev->wd;
					if (a->cgt.v[i].wd == ev->wd)
						a->cgt.v[i].wd = -1;
					if (a->cgt.v[i].pwd == ev->wd)
						a->cgt.v[i].pwd = -1;
				}
				if (held)
					a->scan_due = true;
				continue;
			}
			if (ev->mask & IN_DELETE) {
				/* A cgroup removed: the walk at the next
				 * interval detaches what went with it. */
				a->scan_due = true;
				continue;
			}
			if (!(ev->mask & IN_CREATE) || !(ev->mask & IN_ISDIR) || !ev->len)
				continue;
			pcg = NULL;
			for (i = 0; i < a->n_wds; i++)
				if (a->wds[i].wd == ev->wd)
					w = &a->wds[i];
			for (i = 0; !w && i < a->cgt.n; i++)
				if (a->cgt.v[i].wd == ev->wd)
					pcg = &a->cgt.v[i];
			if (!w && !pcg) {
				/* A directory watched only to learn of new
				 * cgroups: the next interval walks the tree. */
				a->scan_due = true;
				continue;
			}
			snprintf(rel, sizeof(rel), "%s/%s", w ? w->path : pcg->path,
				 ev->name);
			{
				uint64_t id = cgroup__id(a->cgroot, rel);
				struct sub_ctx sc = { .sc = &ctx, .prefix = rel };
				void *r;

				if (!id)
					continue;	/* removed already */
				if (w)
					pcg = agent__find_cg(a, w->id);
				r = scan_one(rel, id, pcg ? (void *)(uintptr_t)(pcg - a->cgt.v + 1) : NULL,
					     &ctx);
				sc.top = r;
				snprintf(path, sizeof(path), "%s%s", a->cgroot, rel);
				cgroup__walk(path, sub_one, &sc);
			}
			/* Directories it made watched: armed now, before more
			 * events are read. */
			for (i = 0; i < a->n_wds; i++)
				if (!a->wds[i].armed)
					arm_wd(a, &a->wds[i]);
		}
	}
	a->in_inotify = false;
	if (ctx.err) {
		pr_warn("cgroup", "confining a new cgroup failed: %s; a walk of the tree retries within %d s (it stays pending, judged by its candidate policy, until then)",
			strerror(-ctx.err), SCAN_INTERVAL_MS / 1000);
		a->scan_due = true;
	}
	if (a->confined_more) {
		sandbox_gen_bump(a);
		a->confined_more = false;
	}
	if (rescan)
		a->rescan = true;
}

bool scan_needed(struct agent *a)
{
	uint64_t now = (uint64_t)clock_now_ns(CLOCK_MONOTONIC) / 1000000;
	size_t i;

	if (a->scan_due || a->discovery_short || a->rescan || a->rejudge ||
	    a->reselect || a->scope_stale ||
	    a->n_held || a->cg_ino_fd < 0 || now - a->last_walk_ms >= SCAN_BACKSTOP_MS)
		return true;
	/* A watch that inotify refused, or that went (IN_IGNORED): what it
	 * would tell is seen only by walking. */
	for (i = 0; i < a->n_wds; i++) {
		const struct watch_dir *w = &a->wds[i];

		/* ... or not armed: its mark or links failed. */
		if (w->wd < 0 || !w->armed || (w->top && strrchr(w->path, '/') && w->pwd < 0))
			return true;
	}
	for (i = 0; i < a->cgt.n; i++) {
		const struct sandbox_cg *cg = &a->cgt.v[i];

		if (cg->released || cg->wd < 0 || (cg->direct && cg->pwd < 0))
			return true;
	}
	return detached_changed(a);
}

/* The index of wd in a->disc, or where it would go (sorted by wd). */
static size_t disc_find(const struct agent *a, int wd)
{
	size_t lo = 0, hi = a->n_disc;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a->disc[mid].wd < wd)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void disc_seen(struct agent *a, int wd)
{
	size_t i = disc_find(a, wd);

	if (i < a->n_disc && a->disc[i].wd == wd) {
		a->disc[i].seen = a->scan_gen;
		return;
	}
	if (a->n_disc == a->cap_disc) {
		size_t cap = a->cap_disc ? a->cap_disc * 2 : 256;
		struct disc_watch *v = realloc(a->disc, cap * sizeof(*v));

		if (!v) {
			/* Untracked, it could not be swept: let it go. The
			 * walks come every 5 s until one can keep it. */
			if (!agent__watched_wd(a, wd))
				inotify_rm_watch(a->cg_ino_fd, wd);
			a->discovery_short = true;
			return;
		}
		a->disc = v;
		a->cap_disc = cap;
	}
	/* inotify hands out increasing wds: nearly always an append. */
	memmove(&a->disc[i + 1], &a->disc[i], (a->n_disc - i) * sizeof(*a->disc));
	a->disc[i] = (struct disc_watch){ .wd = wd, .seen = a->scan_gen };
	a->n_disc++;
}

bool disc_forget(struct agent *a, int wd)
{
	size_t i = disc_find(a, wd);

	if (i == a->n_disc || a->disc[i].wd != wd)
		return false;
	memmove(&a->disc[i], &a->disc[i + 1], (a->n_disc - i - 1) * sizeof(*a->disc));
	a->n_disc--;
	return true;
}

/* After a full walk: the discovery watches of directories it did not
 * visit (removed) go, unless the watch is also another purpose's. */
void disc_sweep(struct agent *a)
{
	size_t i, n = 0;

	for (i = 0; i < a->n_disc; i++) {
		if (a->disc[i].seen == a->scan_gen) {
			a->disc[n++] = a->disc[i];
			continue;
		}
		if (!agent__watched_wd(a, a->disc[i].wd))
			inotify_rm_watch(a->cg_ino_fd, a->disc[i].wd);
	}
	a->n_disc = n;
}

/* Does another of the agent's purposes hold this inotify watch? */
bool agent__watched_wd(const struct agent *a, int wd)
{
	size_t i;

	for (i = 0; i < a->n_wds; i++)
		if (a->wds[i].wd == wd || a->wds[i].pwd == wd)
			return true;
	for (i = 0; i < a->cgt.n; i++)
		if (a->cgt.v[i].wd == wd || a->cgt.v[i].pwd == wd)
			return true;
	return false;
}
