// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * A reload (SIGHUP, `stockade reload`, a policy file changed): the new
 * set checked, planned (agent/policy_table.h decides ids, slots and which
 * cgroups are held), written under fresh ids (agent/policy_maps.c),
 * switched slot by slot; and the policy files' inotify watches
 * (agent/agent_int.h).
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

/* ---- reload ---- */

/*
 * "generations": one object per policy in force, after an applied reload:
 * its id, slot and generation, and for each one the reload switched, when
 * its slot flipped (switch_ns, CLOCK_REALTIME: every cgroup of the policy
 * switched at that instant). Literal JSON for json_raw(); the caller frees
 * it. NULL when out of memory (the record then goes without it).
 */
static char *reload_generations(struct agent *a, const bool *changed)
{
	struct json sub;
	char *buf = NULL;
	size_t i, len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	json_init(&sub);
	fputc('[', f);
	for (i = 0; i < a->set.n; i++) {
		json_begin(&sub);
		json_str(&sub, "policy", a->set.v[i]->name);
		json_u64(&sub, "policy_id", a->pt.pol_id[i]);
		json_u64(&sub, "slot", a->pt.pol_slot[i]);
		json_u64(&sub, "generation", a->pt.info[i].generation);
		json_bool(&sub, "changed", changed[i]);
		if (changed[i] && a->pt.switch_ns[i])
			json_u64(&sub, "switch_ns", (uint64_t)a->pt.switch_ns[i]);
		fprintf(f, "%s%s}", i ? "," : "", sub.buf);
	}
	fputc(']', f);
	if (fclose(f) || sub.oom) {
		free(buf);
		buf = NULL;
	}
	json_free(&sub);
	return buf;
}

static void emit_reload(struct agent *a, const char *trigger, const char *result,
			const bool *changed_v, const char *const *changed, size_t n_changed,
			int64_t start_ns, int64_t end_ns)
{
	const char *names[POLICY_MAX];
	char *gens;
	size_t i;

	for (i = 0; i < a->set.n && i < POLICY_MAX; i++)
		names[i] = a->set.v[i]->name;
	events__begin(&a->ev, "reload");
	json_str(&a->ev.j, "trigger", trigger);
	json_str(&a->ev.j, "result", result);
	json_str_array(&a->ev.j, "policies", names, a->set.n);
	if (changed)
		json_str_array(&a->ev.j, "changed", changed, n_changed);
	if (start_ns) {
		json_u64(&a->ev.j, "switch_start_ns", (uint64_t)start_ns);
		json_u64(&a->ev.j, "switch_end_ns", (uint64_t)end_ns);
	}
	gens = changed_v ? reload_generations(a, changed_v) : NULL;
	if (gens)
		json_raw(&a->ev.j, "generations", gens);
	free(gens);
	events__emit(&a->ev);
}

_Static_assert(RELOAD_MSG_LEN == POLICY_DIAG_MAX, "reload_msg.text holds one diagnostic");

/*
 * The problems of a rejected reload, for `stockade reload` to print: the
 * agent's own verdict (its policy paths, the cgroups its limits would
 * land on, the room left in its maps), not a second validation that could
 * disagree. Numbered with the reload they belong to (a->reloads + 1, the
 * number agent_meta gives it next).
 */
static void reload_msgs_put(struct agent *a, const struct policy_diag *diag)
{
	int fd = bpf_map__fd(a->skel->maps.reload_msgs);
	struct reload_msg m;
	__u32 k;
	size_t i;

	a->reload_problems = 0;
	for (i = 0; i < diag->n && i < RELOAD_MSGS_MAX; i++) {
		memset(&m, 0, sizeof(m));
		m.reload = a->reloads + 1;
		if (i == RELOAD_MSGS_MAX - 1 && diag->n > RELOAD_MSGS_MAX)
			snprintf(m.text, sizeof(m.text), "... and %zu more problems: see the agent's log (policy_error records)",
				 diag->n - i);
		else
			snprintf(m.text, sizeof(m.text), "%s", diag->msgs[i]);
		k = (__u32)i;
		if (bpf_map_update_elem(fd, &k, &m, BPF_ANY))
			break;
		a->reload_problems++;
	}
}

/* The slot the new set gives cg: that of the policy selecting it, else
 * (inherited) that of the policy selecting its sandbox root; the
 * conflict slot when none does. */
static uint32_t mover_target(void *ctx, const struct sandbox_cg *cg)
{
	struct agent *a = ctx;
	const struct sandbox_cg *root;
	int64_t sel;

	sel = is_detached(a, cg->id) ? -1 :
	      selected_by(a, cg->path, cg->id, confined_above(a, cg->path) ? SEL_NESTED : 0);
	if (sel < 0 && cg->root_id != cg->id) {
		root = sandbox_table__find(&a->cgt, cg->root_id);
		if (root && !is_detached(a, root->id))
			sel = selected_by(a, root->path, root->id,
					  confined_above(a, root->path) ? SEL_NESTED : 0);
	}
	return sel >= 0 ? policy_table__slot_of(&a->pt, (uint32_t)sel) :
			  POLICY_SLOT_CONFLICT;
}

/*
 * Before a reload's flip: the cgroups leaving a changed policy's slot
 * wait on a temporary slot that resolves to the id they decide by now
 * (policy_plan__holds() says which, and why). Each temporary slot is
 * written before any entry points at it; free_slots() frees it once
 * nothing does.
 */
static void hold_movers(struct agent *a, struct policy_plan *p)
{
	uint32_t s, id;
	size_t i;

	if (policy_plan__holds(p, &a->pt, a->set.n, &a->cgt, mover_target, a)) {
		pr_warn("policy", "out of memory: cgroups moving to another policy switch after their old policy's flip");
		return;
	}
	for (s = 1; s < POLICY_SLOTS; s++) {
		id = a->pt.slot_id[s];
		if (!p->temp[s])
			continue;
		if (slot_put(a, p->temp[s], id))
			p->temp[s] = 0;		/* its cgroups are not held */
		else
			a->pt.slot_id[p->temp[s]] = id;
	}
	for (i = 0; i < p->n_holds; i++) {
		struct sandbox_cg *cg = &a->cgt.v[p->holds[i].cg];
		struct sandbox sb = { .root_id = cg->root_id };

		sb.slot = p->temp[p->holds[i].from];
		if (!sb.slot) {
			pr_warn("policy", "no temporary slot for the cgroups leaving slot %u: they switch after its flip",
				p->holds[i].from);
			continue;
		}
		if (sandbox_entry_put(a, cg->id, &sb)) {
			pr_warn("policy", "holding %s on its old rules failed (%s): it switches after its old policy's flip",
				cg->path, strerror(errno));
			continue;
		}
		cg->slot = sb.slot;
	}
}

/* The new set loaded and checked as a start would check it (the plan
 * then checks that it fits the ids). */
static int reload_load(struct agent *a, struct policy_set *nset,
		       struct policy_diag *diag)
{
	int err = policy_set__load(a->opt.policy_paths, a->opt.n_policy_paths, nset, diag);

	if (!err)
		err = rules__check_set(nset, diag);
	/* Limits this host cannot apply reject the set, as they stop a start. */
	if (!err)
		err = limits__check_set(a->cgroot, nset, diag);
	return err;
}

/* The plan's set and table in force, the old ones kept in nset and the
 * plan; or, undo, the old ones back. */
static void plan_switch(struct agent *a, struct policy_set *nset,
			struct policy_plan *p, bool undo)
{
	struct policy_set tset = a->set;

	a->set = *nset;
	*nset = tset;
	if (undo)
		policy_table__undo(&a->pt, p);
	else
		policy_table__apply(&a->pt, p);
}

/*
 * The switch: one update of each changed policy's slot moves all its
 * cgroups at once (a new policy's slot is written too, before any entry
 * points at it). Then the scan moves, one entry each, the cgroups whose
 * selector now names another policy, and confines or releases the others.
 * A failed flip is reported and leaves that policy on its old id, which
 * then stays. *start_ns and *end_ns: the switch window.
 */
static void reload_switch(struct agent *a, struct policy_plan *p,
			  int64_t *start_ns, int64_t *end_ns)
{
	size_t i;
	int err;

	*start_ns = clock_now_ns(CLOCK_REALTIME);
	hold_movers(a, p);
	flip_slots(a, p->changed);
	a->reselect = true;
	err = scan(a);
	/* A cgroup that could not be switched is retried at the next scan. */
	a->reselect = err != 0;
	rcu_sync(a);
	*end_ns = clock_now_ns(CLOCK_REALTIME);
	/* Limits follow (after the window: they are not the rules' switch):
	 * written over the old values, or put back as found. */
	limits__reload(a->lim);
	/* No program still runs with an entry that pointed at the slot of a
	 * removed policy: free it. */
	free_slots(a);
	/* Retired ids still used, by a slot that could not flip or a cgroup
	 * we could not switch, stay. */
	policy_plan__keep_held(p, &a->pt, &a->cgt);
	retire_ids(a, p->retired);
	/* Cgroups that moved: their old file scopes (agent/file_scope.h). */
	file_scope__sync(a);
	for (i = 0; i < a->set.n; i++)
		if (p->changed[i])
			emit_policy(a, i);
}

/* Every problem in a policy_error record, the previous set stays. */
static void reload_reject(struct agent *a, const char *trigger,
			  const struct policy_diag *diag)
{
	size_t i;

	for (i = 0; i < diag->n; i++) {
		pr_err("policy", "%s", diag->msgs[i]);
		events__begin(&a->ev, "policy_error");
		json_str(&a->ev.j, "message", diag->msgs[i]);
		events__emit(&a->ev);
	}
	pr_err("policy", "reload rejected: the policy set in force stays");
	reload_msgs_put(a, diag);
	a->reload_result = RELOAD_REJECTED;
	emit_reload(a, trigger, "rejected", NULL, NULL, 0, 0, 0);
}

/*
 * Reload the policy files. The whole new set is parsed, validated and
 * compiled first; if anything fails the set in force stays, with a
 * policy_error record per problem. A policy whose file did not change
 * keeps its id and its rules. A changed or new one gets a fresh id, its
 * rules are written under it (nothing reads them yet), then each sandbox
 * is switched to it (reload_switch()), so a program sees the old rules or
 * the new ones, whole, and never none. Once no program can still be
 * reading the old ids (an RCU grace period), their rules go.
 */
void reload(struct agent *a, const char *trigger)
{
	struct policy_set nset = { 0 };
	struct policy_diag diag = { 0 };
	struct policy_plan *p = NULL;
	int64_t start_ns = 0, end_ns = 0;
	int err;

	err = reload_load(a, &nset, &diag);
	if (!err) {
		p = policy_table__plan_reload(&a->pt, &a->set, &nset, &a->cgt, &diag);
		err = p ? 0 : -errno;
	}
	if (err) {
		reload_reject(a, trigger, &diag);
		goto done;
	}
	if (!p->n_changed && nset.n == a->set.n) {
		a->reload_result = RELOAD_UNCHANGED;
		if (strcmp(trigger, "inotify"))
			emit_reload(a, trigger, "unchanged", NULL, NULL, 0, 0, 0);
		else
			pr_debug("agent", "policy files touched, content unchanged");
		goto done;
	}
	/* The set in force stays intact in nset, its table in p. */
	plan_switch(a, &nset, p, false);
	err = fill_policies(a, p->changed);
	if (err) {
		/* Undo: the new ids' rules go, the old table comes back. */
		retire_ids(a, p->fresh);
		plan_switch(a, &nset, p, true);
		policy_diag__add(&diag, "writing the new rules into the kernel maps failed: %s (maps full?)",
				 strerror(-err));
		reload_reject(a, trigger, &diag);
		goto done;
	}
	reload_switch(a, p, &start_ns, &end_ns);
	a->reload_result = RELOAD_APPLIED;
	emit_reload(a, trigger, "applied", p->changed, p->changed_names, p->n_changed,
		    start_ns, end_ns);
done:
	if (a->reload_result != RELOAD_REJECTED)
		a->reload_problems = 0;
	a->reloads++;
	events__meta_update(&a->ev);
	policy_set__free(&nset);
	policy_diag__free(&diag);
	policy_plan__free(p);
	malloc_trim(0);	/* a big set's parse and compile: see agent__run */
}

/* ---- policy files watched (inotify) ---- */

struct policy_watch {
	int wd;
	char name[256];		/* a watched file's name in its directory; "" for a dir */
};

static struct policy_watch *watches;
static size_t n_watches;

void policy_watches_free(void)
{
	free(watches);
	watches = NULL;
	n_watches = 0;
}

void watch_policies(struct agent *a)
{
	const uint32_t mask = IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM |
			      IN_CREATE | IN_DELETE;
	char dir[PATH_MAX], *slash;
	struct stat st;
	size_t i;
	int wd;

	a->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (a->ino_fd < 0) {
		pr_warn("agent", "inotify unavailable (%s): policy files are reloaded on SIGHUP or `stockade reload` only",
			strerror(errno));
		return;
	}
	watches = calloc(a->opt.n_policy_paths, sizeof(*watches));
	for (i = 0; watches && i < a->opt.n_policy_paths; i++) {
		const char *path = a->opt.policy_paths[i];

		if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
			snprintf(dir, sizeof(dir), "%s", path);
			watches[n_watches].name[0] = '\0';
		} else {
			/* A file: editors replace it by a rename, so watch
			 * its directory, for its name. */
			snprintf(dir, sizeof(dir), "%s", path);
			slash = strrchr(dir, '/');
			snprintf(watches[n_watches].name, sizeof(watches[n_watches].name),
				 "%.255s", slash ? slash + 1 : dir);
			if (slash && slash != dir)
				*slash = '\0';
			else
				snprintf(dir, sizeof(dir), "%s", slash ? "/" : ".");
		}
		wd = inotify_add_watch(a->ino_fd, dir, mask);
		if (wd < 0) {
			pr_warn("agent", "cannot watch %s (%s): reload it with SIGHUP or `stockade reload`",
				dir, strerror(errno));
			continue;
		}
		watches[n_watches++].wd = wd;
	}
}

/*
 * A ConfigMap volume (the kubelet's AtomicWriter) changes its files'
 * content without touching them: x.yaml is a symlink to ..data/x.yaml,
 * and an update renames a new symlink over ..data (pointing at a new
 * hidden ..<timestamp> directory). That rename, IN_MOVED_TO "..data" in
 * the watched directory, is the one event that says the content changed,
 * for a watched directory and a watched file in it alike; the other dot
 * entries (..data_tmp, the hidden directories) come and go around it and
 * are not policies (policy/set.c skips every dot entry).
 */
#define KUBELET_DATA	"..data"

static bool policy_name_ok(const char *n)
{
	size_t len = strlen(n);

	return n[0] != '.' &&
	       ((len > 5 && !strcmp(n + len - 5, ".yaml")) ||
		(len > 4 && !strcmp(n + len - 4, ".yml")));
}

/* Note a change to a policy file; the reload waits for the writes to
 * settle (an editor saves in several steps). */
void check_inotify(struct agent *a)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev;
	bool hit = false;
	ssize_t n;
	size_t i;
	char *p;

	while ((n = read(a->ino_fd, buf, sizeof(buf))) > 0) {
		for (p = buf; p < buf + n; p += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)p;
			if (!ev->len)
				continue;
			for (i = 0; i < n_watches; i++) {
				if (watches[i].wd != ev->wd)
					continue;
				if (!strcmp(ev->name, KUBELET_DATA) ||
				    (watches[i].name[0] ? !strcmp(watches[i].name, ev->name) :
							  policy_name_ok(ev->name)))
					hit = true;
			}
		}
	}
	if (hit)
		a->reload_at_ms = clock_now_ns(CLOCK_MONOTONIC) / 1000000 + 200;
}
