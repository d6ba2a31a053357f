// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The scan: which cgroups a policy selects, confined from their first
 * syscall, reselected on a reload, released; detached marks; the sweep of
 * an adopted state (agent/agent_int.h).
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

#include "daemon.h"
#include "bpfutil.h"
#include "cgroup.h"
#include "containers.h"
#include "limits_agent.h"
#include "log.h"
#include "loop.h"
#include "lsm.h"
#include "file_rules.h"
#include "file_scope.h"
#include "net_rules.h"
#include "pin.h"
#include "replace.h"
#include "sandbox.h"
#include "records.h"
#include "rules_check.h"
#include "setup_agent.h"
#include "stockade_limits.h"
#include "stockade.skel.h"

/*
 * Which policy selects rel directly? Its id; POLICY_ID_CONFLICT when
 * several do, -1 when none, SELECTED_WAIT when a container selector may
 * select it once the runtime has written its names and may_wait (a new
 * cgroup, id, still within CONTAINER_META_WAIT_MS): it stays pending
 * (judged by its candidate), decided with all its names or none.
 */
int64_t selected_by(struct agent *a, const char *rel, uint64_t id, unsigned int flags)
{
	bool may_wait = flags & SEL_MAY_WAIT, nested = flags & SEL_NESTED;
	const char *waiting[POLICY_MAX], *unknown[POLICY_MAX];
	size_t i, n_wait = 0, n_unknown = 0;
	int64_t found = -1;

	for (i = 0; i < a->set.n; i++) {
		const struct policy *p = a->set.v[i];
		enum policy_sel r;

		/* Inside a sandbox only cgroups: globs select (a directory
		 * named like docker-<id>.scope, made by the sandbox's own
		 * root, must not move it to a container policy). */
		r = nested ? (policy__selects_glob(p, rel) ? POLICY_SEL_YES : POLICY_SEL_NO) :
			     policy__selects(p, rel, containers__meta, a, may_wait, NULL);
		switch (r) {
		case POLICY_SEL_NO:
			continue;
		case POLICY_SEL_WAIT:
			if (n_wait < POLICY_MAX)
				waiting[n_wait++] = p->name;
			continue;
		case POLICY_SEL_UNKNOWN:
			if (n_unknown < POLICY_MAX)
				unknown[n_unknown++] = p->name;
			continue;
		case POLICY_SEL_YES:
			break;
		}
		if (found >= 0 && found != (int64_t)a->pt.pol_id[i]) {
			pr_err("cgroup", "%s is selected by both %s and %s; it is confined deny-all until the policies are fixed",
			       rel, agent__policy_name(a, (uint32_t)found), p->name);
			return POLICY_ID_CONFLICT;
		}
		found = (int64_t)a->pt.pol_id[i];
	}
	if (n_wait && containers__may_wait(a, rel, id))
		return SELECTED_WAIT;
	/* The wait is over and the names did not come, or they were
	 * refused: such a policy may or may not select it. Neither a no
	 * (the container would run unconfined on a guess) nor a yes: the
	 * conflict slot, deny-all, until its names arrive (rejudge()). */
	for (i = 0; i < n_wait && n_unknown < POLICY_MAX; i++)
		unknown[n_unknown++] = waiting[i];
	if (n_unknown) {
		if (flags & SEL_SAY)	/* once: when it goes deny-all */
			containers__names_unknown(a, rel, id, unknown, n_unknown);
		return POLICY_ID_CONFLICT;
	}
	return found;
}

bool confined_above(struct agent *a, const char *rel)
{
	char up[PATH_MAX];
	char *slash;
	uint64_t id;

	snprintf(up, sizeof(up), "%s", rel);
	while ((slash = strrchr(up, '/')) && slash != up) {
		*slash = '\0';
		id = cgroup__id(a->cgroot, up);
		if (id && agent__find_cg(a, id))
			return true;
	}
	return false;
}

int rejudge(struct agent *a)
{
	int err;

	a->rejudge = false;
	a->reselect = true;
	err = scan(a);
	a->reselect = false;
	if (err)
		a->rejudge = true;	/* again at the next scan */
	/* What reload_switch() does after its scan, for cgroups that moved
	 * between policies: no program still runs with the old entry, then
	 * their limits and the old file scopes follow. */
	rcu_sync(a);
	limits__reload(a->lim);
	file_scope__sync(a);
	return err;
}

static struct sandbox_cg *track(struct agent *a, const char *rel, uint64_t id)
{
	return sandbox_table__add(&a->cgt, rel, id);
}

/* Detached on purpose (`stockade detach`)? Marks it as still existing. */
bool is_detached(struct agent *a, uint64_t id)
{
	size_t i;

	for (i = 0; i < a->n_det; i++) {
		if (a->det[i] == id) {
			a->det_seen[i] = true;
			return true;
		}
	}
	return false;
}

/* Was id among the `detached` marks the last walk read? */
static bool det_known(const struct agent *a, uint64_t id)
{
	size_t i;

	for (i = 0; i < a->n_det; i++)
		if (a->det[i] == id)
			return true;
	return false;
}

bool detached_changed(struct agent *a)
{
	int fd = bpf_map__fd(a->skel->maps.detached);
	__u64 key, next;
	size_t n = 0;
	int err;

	for (err = bpf_map_get_next_key(fd, NULL, &next); !err;
	     err = bpf_map_get_next_key(fd, &key, &next)) {
		if (++n > a->n_det || !det_known(a, next))
			return true;
		key = next;
	}
	return false;
}

/*
 * Read `detached` and let go of every cgroup in it that we confine through
 * a selector, with the cgroups inherited from it: `stockade detach` removed
 * their links and entries (and logged it); this closes our handles, and
 * undoes an attach of ours that raced with the command.
 */
static void honour_detached(struct agent *a)
{
	int fd = bpf_map__fd(a->skel->maps.detached);
	__u64 key, next;
	size_t i, j;
	int err;

	a->n_det = 0;
	err = bpf_map_get_next_key(fd, NULL, &next);
	while (!err) {
		if (a->n_det % 64 == 0) {
			uint64_t *d = realloc(a->det, (a->n_det + 64) * sizeof(*d));
			bool *s = realloc(a->det_seen, (a->n_det + 64) * sizeof(*s));

			if (d)
				a->det = d;
			if (s)
				a->det_seen = s;
			if (!d || !s)
				break;
		}
		a->det_seen[a->n_det] = false;
		a->det[a->n_det++] = next;
		key = next;
		err = bpf_map_get_next_key(fd, &key, &next);
	}
	for (i = 0; i < a->n_det; i++) {
		const struct sandbox_cg *root = agent__find_cg(a, a->det[i]);

		if (!root || !root->direct)
			continue;
		pr_info("cgroup", "%s was detached by `stockade detach`; it is no longer confined through a selector",
			root->path);
		for (j = a->cgt.n; j-- > 0;) {
			if (a->cgt.v[j].root_id != a->det[i])
				continue;
			detach_cg(a, &a->cgt.v[j], NULL);
			untrack(a, j);
		}
	}
}

/* Does any link pin of cgroup id exist? */
static bool pin_has_cg_links(struct agent *a, uint64_t id)
{
	struct bpf_program *progs[SANDBOX_N_LINKS];
	char pin[PATH_MAX];
	int i;

	cg_progs(a, progs);
	for (i = 0; i < SANDBOX_N_LINKS; i++)
		if (!cg_link_path(a, id, progs[i], pin, sizeof(pin)) &&
		    !access(pin, F_OK))
			return true;
	return false;
}

/* ---- zero window: watched directories (include/sandbox.h) ---- */

static void emit_attach(struct agent *a, const struct sandbox_cg *cg,
			const char *parent, const char *how)
{
	const char *pass[2];
	size_t n;

	events__begin(&a->ev, "attach");
	events__cgroup_fields(&a->ev, cg);
	json_str(&a->ev.j, "via", cg->direct ? "selector" : "inherited");
	if (parent)
		json_str_raw(&a->ev.j, "parent", parent, strlen(parent));
	if (how)
		json_str(&a->ev.j, "links", how);
	/* Who may begin a setup pass here: what a runtime's start in it
	 * depends on. */
	n = setup__granted(&a->setup, cg->id, pass);
	if (n)
		json_str_array(&a->ev.j, "setup_pass", pass, n);
	if (cg->pending_us >= 0) {
		/* Created below a watched directory while the agent ran. */
		json_u64(&a->ev.j, "pending_ms", (uint64_t)cg->pending_us / 1000);
		json_u64(&a->ev.j, "pending_us", (uint64_t)cg->pending_us);
		json_str(&a->ev.j, "classified_by", a->in_inotify ? "inotify" : "scan");
	}
	events__emit(&a->ev);
}

/*
 * A reload's scan: judge a cgroup we confine again under the new policy
 * set, and move it there with no moment unconfined. Each change is one map
 * update the programs see whole: the entry's policy id (the new id's rules
 * are complete before), links attached before a cgroup becomes selected
 * and detached only after its entry points at its parent's sandbox.
 * Returns the value for its children, like scan_one().
 */
static void *reselect_one(struct scan_ctx *ctx, struct sandbox_cg *cg,
			  const char *rel, uintptr_t pidx, bool det)
{
	struct agent *a = ctx->a;
	int sb_fd = bpf_map__fd(a->skel->maps.sandboxes);
	const struct sandbox_cg *parent = pidx ? &a->cgt.v[pidx - 1] : NULL;
	const char *how = NULL, *old_name = agent__policy_name(a, cg->policy_id);
	struct sandbox sb = { 0 };
	bool was_direct = cg->direct, direct;
	uint32_t policy_id;
	int64_t sel;
	int err;

	/* Tracked already: decided with the names it has, no wait. */
	sel = selected_by(a, rel, cg->id,
			  (parent ? SEL_NESTED : 0) |
			  (cg->policy_id != POLICY_ID_CONFLICT ? SEL_SAY : 0));
	if (sel >= 0 && det)
		sel = -1;
	direct = sel >= 0;
	if (!direct && !parent) {
		/* No longer confined. Its links (then entries) go after the
		 * walk (scan()): a descendant that is now selected itself gets
		 * its own links first, below, and until then its old root's
		 * programs still judge it; removed now, they would leave it a
		 * moment without cgroup programs. */
		cg->released = true;
		return NULL;
	}
	policy_id = direct ? (uint32_t)sel : parent->policy_id;
	sb.slot = direct ? policy_table__slot_of(&a->pt, policy_id) : parent->slot;
	sb.root_id = direct ? cg->id : parent->root_id;
	if (direct && !was_direct) {
		/* Its own programs first; they judge by its current entry (its
		 * parent's sandbox) until the entry below switches. */
		cg->direct = true;
		err = attach_cg(a, cg, &how);
		if (err) {
			cg->direct = false;
			ctx->err = ctx->err ?: err;
			return (void *)(uintptr_t)(cg - a->cgt.v + 1);
		}
		limits__counters_reset(a->lim, cg->id);
	}
	/* A policy whose content changed switched with its slot already
	 * (flip_slots()); only a cgroup that moves to another policy (or
	 * sandbox root) needs its own entry rewritten. */
	if (cg->slot != sb.slot || cg->root_id != sb.root_id) {
		/* Its own file scope under the policy it moves to, first. */
		if (direct && cg->file_scope)
			a->scope_stale = true;
		err = direct ? file_scope__put(a, cg, a->pt.slot_id[sb.slot]) : 0;
		if (err || bpf_map_update_elem(sb_fd, &cg->id, &sb, BPF_ANY)) {
			err = err ?: -errno;
			ctx->err = ctx->err ?: err;
			pr_err("cgroup", "switching %s to its new policy failed: %s; it keeps the old one",
			       rel, strerror(-err));
			cg->policy_id = a->pt.slot_id[cg->slot];
			return (void *)(uintptr_t)(cg - a->cgt.v + 1);
		}
		/* Now, not at the walk's end: its tasks keep a copy of the
		 * old entry until the generation moves (task_verdict). */
		sandbox_gen_bump(a);
		cg->slot = sb.slot;
		cg->root_id = sb.root_id;
		a->confined_more = true;
	}
	cg->policy_id = a->pt.slot_id[cg->slot];
	if (!direct && was_direct) {
		/* Confined through its parent's programs now: drop its own. */
		if (cg->file_scope)
			a->scope_stale = true;
		detach_cg_links(a, cg);
		limits__counters_drop(a->lim, cg->id);
		cg->direct = false;
	}
	if (direct != was_direct || strcmp(old_name, agent__policy_name(a, policy_id))) {
		/* Its grant under the policy it has now before the record
		 * that reads it back (setup_pass); setup__regrant() writes
		 * the same again after the walk, with the directories'. */
		setup__grant_cg(&a->setup, cg);
		emit_attach(a, cg, parent ? parent->path : NULL, how);
	}
	return (void *)(uintptr_t)(cg - a->cgt.v + 1);
}

/*
 * A new cgroup's counters and limits (agent/limits.c) first, then its
 * entry before its links, so that the programs find all they need at
 * once. own: it gets links of its own (directly selected, no confined
 * ancestor); links_first: pending until now (below a watched directory
 * with its mark, under), so its links go before the entry that ends the
 * pending state.
 */
static int confine_new(struct agent *a, struct sandbox_cg *cg, const char *rel,
		       bool own, bool links_first, const struct watch_dir *under,
		       const char **how)
{
	struct sandbox sb = { .slot = cg->slot, .root_id = cg->root_id };
	int err;

	/* Its own file scope before the entry that makes it judged by it. */
	err = file_scope__put(a, cg, cg->policy_id);
	if (!err)
		err = limits__attach(a->lim, cg);
	if (!err && links_first)
		err = attach_cg(a, cg, how);
	if (!err && bpf_map_update_elem(bpf_map__fd(a->skel->maps.sandboxes),
					&cg->id, &sb, BPF_ANY)) {
		err = -errno;
		pr_err("cgroup", "recording %s in the sandbox map failed: %s (map full? at most %d cgroups)",
		       rel, strerror(errno), SANDBOX_MAX_CGROUPS);
	} else if (!err) {
		/* Right after the write: ends "outside" cached by the
		 * programs for this cgroup and its descendants, and a copy of
		 * an entry it had (adopted pins) that its tasks hold
		 * (task_verdict; include/sandbox.h). */
		sandbox_gen_bump(a);
	}
	if (!err && under && under->armed && under->entry) {
		/* Its entry ends the pending state: now it is classified. */
		cg->pending_us = pending_us_of(a, rel, cg->id);
	}
	if (!err && own && !links_first) {
		/* Nested in a confined cgroup, the ancestor's programs already
		 * run here and pick this entry (nearest wins); links of its
		 * own would judge, and log, every denial twice. Replacing
		 * another build's state: its counters first, its old links
		 * only once the new ones are pinned (agent/replace.c). */
		if (a->rep)
			replace__cg_before(a->rep, cg);
		err = attach_cg(a, cg, how);
		if (!err && a->rep && replace__cg_after(a->rep, cg))
			*how = "replaced";
	}
	return err;
}

/* confine_new() failed: forget cg, the table's last entry. */
static void confine_undo(struct agent *a, struct sandbox_cg *cg)
{
	/* Keep the entry (and its counters and limits) of a cgroup whose
	 * pinned links confine it. */
	if (!cg->direct || !pin_has_cg_links(a, cg->id)) {
		limits__detach(a->lim, cg, "attach_failed");
		bpf_map_delete_elem(bpf_map__fd(a->skel->maps.sandboxes), &cg->id);
		sandbox_gen_bump(a);
	} else {
		limits__forget(a->lim, cg);
	}
	if (cg->file_scope)
		a->scope_stale = true;
	sandbox_table__remove(&a->cgt, (size_t)(cg - a->cgt.v));
}

/*
 * Its children are confined by inheritance from the moment they exist;
 * the watch only tells the agent at once (status, detach, their attach
 * records), and of their removal, instead of at a walk of the tree. A
 * directly selected cgroup's own removal is told to its parent's watch
 * (cgroupfs gives the directory itself no IN_DELETE_SELF): IN_MASK_ADD,
 * since that directory may be watched for another reason, the same wd.
 */
static void watch_children(struct agent *a, struct sandbox_cg *cg)
{
	char dir[2 * PATH_MAX], *slash;

	if (a->cg_ino_fd < 0)
		return;
	/* Asked for again at each walk, and the wd kept (IN_MASK_ADD: the
	 * same wd while the directory is the same): one whose IN_IGNORED
	 * an overflow lost is made good. */
	snprintf(dir, sizeof(dir), "%s%s", a->cgroot, cg->path);
	cg->wd = inotify_add_watch(a->cg_ino_fd, dir,
				   IN_CREATE | IN_DELETE | IN_ONLYDIR | IN_MASK_ADD);
	slash = strrchr(dir, '/');
	if (!cg->direct || !slash)
		return;
	*slash = '\0';
	cg->pwd = inotify_add_watch(a->cg_ino_fd, dir, IN_DELETE | IN_ONLYDIR | IN_MASK_ADD);
}

/*
 * One cgroup of the walk. parent is the sandbox_cg index + 1 of the nearest
 * confined ancestor (as a pointer-sized int), or 0.
 */
void *scan_one(const char *rel, uint64_t id, void *parent, void *vctx)
{
	struct scan_ctx *ctx = vctx;
	struct agent *a = ctx->a;
	const struct sandbox_cg *found = agent__find_cg(a, id);
	struct sandbox_cg *cg;
	const char *how = NULL;
	int64_t sel;
	uintptr_t pidx = (uintptr_t)parent;
	bool direct, det = a->n_det && is_detached(a, id), links_first, held;
	struct watch_dir *under;
	int err;

	/* Every directory of the tree: a cgroup made in one that nothing
	 * else watches asks for a walk (drain_cg_inotify()). */
	if (a->cg_ino_fd >= 0) {
		char path[2 * PATH_MAX];
		int wd;

		snprintf(path, sizeof(path), "%s%s", a->cgroot, rel);
		wd = inotify_add_watch(a->cg_ino_fd, path, IN_CREATE | IN_ONLYDIR | IN_MASK_ADD);
		if (wd >= 0)
			disc_seen(a, wd);
		else if (errno != ENOENT)
			a->discovery_short = true;
	}
	/* Below a cgroup that waits for its container's names: it waits
	 * too (pending, judged by its watched directory's candidate). One
	 * already tracked (a reload's reselection, a cgroups: glob of its
	 * own) is still there: marked seen, or the sweep would take it for
	 * removed and detach it. */
	if (parent == SCAN_HOLD) {
		if (found)
			((struct sandbox_cg *)found)->seen = a->scan_gen;
		return SCAN_HOLD;
	}
	if (found) {
		cg = (struct sandbox_cg *)found;
		cg->seen = a->scan_gen;
		if (a->reselect)
			return reselect_one(ctx, cg, rel, pidx, det);
		return (void *)(uintptr_t)(cg - a->cgt.v + 1);
	}
	sel = selected_by(a, rel, id, SEL_MAY_WAIT | SEL_SAY | (pidx ? SEL_NESTED : 0));
	if (sel == SELECTED_WAIT) {
		containers__hold(a, id);
		return SCAN_HOLD;
	}
	held = containers__release(a, id);
	/* Detached on purpose: no longer confined through its selector (it
	 * still is through a confined ancestor's programs, if any). */
	if (sel >= 0 && det)
		sel = -1;
	direct = sel >= 0;
	under = parent_wd(a, rel);
	if (!direct && !pidx) {
		/* Outside every sandbox; below a watched directory that means
		 * classified: watched itself, or an OUTSIDE entry. */
		if (under)
			classify_unselected(a, rel, id);
		return NULL;
	}
	/* Pending until now (its nearest entry a WATCHED directory): its own
	 * links go first, while the watch links still judge it, then the
	 * entry that ends the pending state (bpf/net.bpf.c, who_judges()). */
	links_first = direct && !pidx && under && under->armed && under->entry;

	cg = track(a, rel, id);
	if (!cg) {
		ctx->err = ctx->err ?: -ENOMEM;
		return NULL;
	}
	cg->seen = a->scan_gen;
	cg->direct = direct;
	cg->pending_us = -1;
	containers__track(a, cg);
	if (under && under->armed && under->entry && !a->in_inotify && !held)
		a->scan_found++;	/* inotify missed it */
	cg->slot = direct ? policy_table__slot_of(&a->pt, (uint32_t)sel) : a->cgt.v[pidx - 1].slot;
	cg->policy_id = a->pt.slot_id[cg->slot];
	cg->root_id = direct ? id : a->cgt.v[pidx - 1].root_id;
	/* Its setup grant before its entry: while pending, a runtime's move
	 * into it was granted by the watched directory's (agent/setup.c). */
	cg->fresh = cg_is_fresh(a, rel, id);
	setup__grant_cg(&a->setup, cg);
	err = confine_new(a, cg, rel, direct && !pidx, links_first, under, &how);
	if (err) {
		ctx->err = ctx->err ?: err;
		confine_undo(a, cg);
		return NULL;
	}
	watch_children(a, cg);
	emit_attach(a, cg, pidx ? a->cgt.v[pidx - 1].path : NULL, how);
	return (void *)(uintptr_t)(cg - a->cgt.v + 1);
}
/* OUTSIDE entries of cgroups the last walk did not see as such. */
void sweep_outside(struct agent *a)
{
	int fd = bpf_map__fd(a->skel->maps.sandboxes);
	struct sandbox sb;
	size_t i;

	for (i = 0; i < a->n_outs;) {
		if (a->outs[i].seen == a->scan_gen) {
			i++;
			continue;
		}
		if (!bpf_map_lookup_elem(fd, &a->outs[i].id, &sb) &&
		    sb.policy_id == SANDBOX_ENTRY_OUTSIDE) {
			bpf_map_delete_elem(fd, &a->outs[i].id);
			sandbox_gen_bump(a);
		}
		a->outs[i] = a->outs[--a->n_outs];
	}
}

int scan(struct agent *a)
{
	struct scan_ctx ctx = { .a = a, .err = 0 };
	size_t i;
	int err;

	a->scan_gen++;
	a->rescan = false;
	a->scan_due = false;
	a->discovery_short = false;
	if (a->cg_ino_fd >= 0) {
		int wd = inotify_add_watch(a->cg_ino_fd, a->cgroot,
					   IN_CREATE | IN_ONLYDIR | IN_MASK_ADD);

		if (wd >= 0)
			disc_seen(a, wd);
		else
			a->discovery_short = true;
	}
	a->last_walk_ms = (uint64_t)clock_now_ns(CLOCK_MONOTONIC) / 1000000;
	honour_detached(a);
	/* A `stockade detach` of a build before task_verdict deleted its
	 * entries without a bump: the verdicts cached from them end here at
	 * the latest (include/sandbox.h). */
	sandbox_gen_bump(a);
	/* The watched directories and their inotify watches first: a cgroup
	 * made during the walk is reported, and classified below. */
	watch_tops(a);
	err = cgroup__walk(a->cgroot, scan_one, &ctx);
	if (err) {
		pr_err("cgroup", "walking %s failed: %s", a->cgroot, strerror(-err));
		a->scan_due = true;
		return err;
	}
	arm_all(a);
	disc_sweep(a);
	sweep_outside(a);
	containers__sweep_held(a);
	/* Gone since the last scan: the kernel detached their links. A
	 * reload released others: now that every new attach is done, their
	 * links, then their entries, go. */
	for (i = 0; i < a->cgt.n;) {
		if (a->cgt.v[i].released) {
			detach_cg(a, &a->cgt.v[i], "not_selected");
			untrack(a, i);
			continue;
		}
		if (a->cgt.v[i].seen == a->scan_gen) {
			i++;
			continue;
		}
		detach_cg(a, &a->cgt.v[i], "cgroup_removed");
		untrack(a, i);
	}
	/* Watches lost (IN_IGNORED, or an overflow) or refused: again. */
	for (i = 0; i < a->cgt.n; i++)
		watch_children(a, &a->cgt.v[i]);
	if (a->confined_more) {
		/* A cgroup joined a sandbox: "outside" cached by the LSM
		 * programs is stale (include/sandbox.h). */
		sandbox_gen_bump(a);
		a->confined_more = false;
	}
	/* A detached mark dies with its cgroup: a new cgroup of that name is
	 * a new id, and confined again. Only after a full walk, which
	 * visited every cgroup that still exists. */
	for (i = 0; i < a->n_det; i++)
		if (!a->det_seen[i])
			bpf_map_delete_elem(bpf_map__fd(a->skel->maps.detached),
					    &a->det[i]);
	/* Setup grants follow the policies (a reload) and the cgroups. */
	if (a->reselect)
		setup__regrant(&a->setup);
	setup__sweep(&a->setup);
		drain_cg_inotify(a);
	/* File scopes of cgroups gone (a reload's wait for the grace period
	 * first: reload_switch()). */
	if (a->scope_stale && !a->reselect)
		file_scope__sync(a);
	if (ctx.err)
		a->scan_due = true;	/* retried at the next interval */
	return ctx.err;
}

/* Does id root a sandbox this agent confines (its counters stay)? */
/*
 * After the first scan of an agent that adopted pins: remove what the
 * earlier agent confined that the new policy set does not, then rules of
 * policies that changed or went. Each step only once what replaces it is
 * in force: links go before the entries their programs read, entries
 * before the rules they point to.
 */
/* Link pins that no longer confine anything of ours: detached and
 * unpinned. Returns how many. */
static size_t sweep_links(struct agent *a)
{
	char dir[PATH_MAX], pin[PATH_MAX];
	struct bpf_program *prog;
	struct dirent *de;
	size_t n_links = 0;
	DIR *d;
	int fd;

	snprintf(dir, sizeof(dir), "%s/links", a->pin_dir);
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		const char *pname;
		uint64_t id;
		bool ours = false;

		if (de->d_name[0] == '.')
			continue;
		if (!pin__parse_cg_link(de->d_name, &id, &pname)) {
			const struct sandbox_cg *cg = agent__find_cg(a, id);
			const struct watch_dir *w = find_wd_id(a, id);

			if (cg && cg->direct) {
				bpf_object__for_each_program(prog, a->skel->obj)
					if (bpf_program__type(prog) != BPF_PROG_TYPE_LSM &&
					    strncmp(bpf_program__name(prog), "stk_w_", 6) &&
					    !strcmp(bpf_program__name(prog), pname))
						ours = true;
			} else if (w && w->top && w->links[0]) {
				/* A watched directory's links (zero window). */
				ours = !strncmp(pname, "stk_w_", 6) &&
				       bpf_object__find_program_by_name(a->skel->obj, pname);
			}
		} else if (!strncmp(de->d_name, "lsm-", 4)) {
			/* Degraded, we cannot tell; leave BPF-LSM as it is.
			 * Otherwise each of our programs holds lsm-<name>, and
			 * anything else (another build's hook, a "-new" left
			 * by a killed agent, a program not loaded because its
			 * hook is missing here) is stale. */
			ours = lsm__off(&a->lsm);
			bpf_object__for_each_program(prog, a->skel->obj)
				if (lsm__is_ours(prog) &&
				    lsm__n_links(&a->lsm) && bpf_program__autoload(prog) &&
				    !strcmp(bpf_program__name(prog), de->d_name + 4))
					ours = true;
		} else {
			continue;	/* not ours to judge */
		}
		if (ours)
			continue;
		if (pin__link_path(pin, sizeof(pin), a->pin_dir, de->d_name))
			continue;
		fd = bpf_obj_get(pin);
		if (fd >= 0) {
			bpf_link_detach(fd);	/* cgroup links; LSM: no-op */
			close(fd);
		}
		unlink(pin);
		n_links++;
	}
	if (d)
		closedir(d);

	return n_links;
}

/* Sandbox entries of cgroups we do not confine now (removed while no
 * agent ran, or no longer selected), each with its detach record; then
 * their limits (the values found go back). */
static void sweep_entries(struct agent *a)
{
	struct cgroup_paths paths = { 0 };
	int sb_fd = bpf_map__fd(a->skel->maps.sandboxes);
	struct key_set gone = { 0 };
	struct sandbox sb;
	__u64 key, next;
	size_t i;
	int err;

	err = bpf_map_get_next_key(sb_fd, NULL, &next);
	while (!err) {
		if (!agent__find_cg(a, next) && !find_wd_id(a, next) &&
		    !is_outside(a, next) && key_set_add(&gone, &next, sizeof(next)))
			break;
		key = next;
		err = bpf_map_get_next_key(sb_fd, &key, &next);
	}
	/* (Also for the limits of sandboxes that are no more, below.) */
	cgroup_paths__load(a->cgroot, &paths);
	for (i = 0; i < gone.n; i++) {
		const char *path;
		uint64_t id;

		memcpy(&id, gone.v + i * sizeof(__u64), sizeof(__u64));
		if (bpf_map_lookup_elem(sb_fd, &id, &sb))
			continue;
		bpf_map_delete_elem(sb_fd, &id);
		sandbox_gen_bump(a);
		if (sb.policy_id != SANDBOX_ENTRY_SANDBOX)
			continue;	/* a watched or outside mark: no sandbox */
		path = cgroup_paths__find(&paths, id);
		events__begin(&a->ev, "detach");
		records__detach(&a->ev.j, agent__policy_name(a, policy_table__slot_id(&a->pt, sb.slot)),
				path ?: "", id, path ? "not_selected" : "cgroup_removed");
		events__emit(&a->ev);
	}
	key_set_free(&gone);
	/* Their limits too: the values found go back (agent/limits.c). */
	limits__sweep(a->lim, &paths);
	cgroup_paths__free(&paths);
}

void sweep(struct agent *a)
{
	size_t n_links, n_rules;

	/* 1. Link pins that no longer confine anything of ours. */
	n_links = sweep_links(a);
	/* 2. Sandbox entries of cgroups we do not confine now. */
	sweep_entries(a);
	/* 3. Counters of sandboxes that are no more. */
	limits__counters_sweep(a->lim);
	/* 4. Rules no policy in force wrote, once no program still running
	 * can have read an entry that pointed at them; 5. then the slots and
	 * ids of removed policies (agent/policy_maps.c). */
	n_rules = policy_maps__sweep(a);
	n_rules += file_scope__sync(a);
	if (n_links || n_rules)
		pr_info("agent", "adopted pins: removed %zu stale links and %zu stale rules",
			n_links, n_rules);
}

/* The sandboxes map (include/sandbox.h), whose owner this file is: the
 * other rooms write their marks through these. put: a retried insert
 * (agent/bpfutil.h), 0 or a negative errno with errno set. */
int sandbox_entry_put(struct agent *a, uint64_t id, const struct sandbox *sb)
{
	int err = map_update_retry(bpf_map__fd(a->skel->maps.sandboxes), &id, sb, BPF_ANY);

	if (err)
		errno = -err;
	else
		sandbox_gen_bump(a);
	return err;
}

/*
 * After every write of the sandboxes map, never before: a verdict the
 * BPF programs cached (cg_fast, cg_cache, task_verdict) was computed
 * with the generation read before their lookups, so one that missed this
 * write is stale once the bump lands (include/sandbox.h).
 */
void sandbox_gen_bump(struct agent *a)
{
	__atomic_fetch_add(&a->skel->data->sandbox_gen, 1, __ATOMIC_SEQ_CST);
}

bool sandbox_entry_get(struct agent *a, uint64_t id, struct sandbox *sb)
{
	return !bpf_map_lookup_elem(bpf_map__fd(a->skel->maps.sandboxes), &id, sb);
}

void sandbox_entry_delete(struct agent *a, uint64_t id)
{
	bpf_map_delete_elem(bpf_map__fd(a->skel->maps.sandboxes), &id);
	sandbox_gen_bump(a);
}
