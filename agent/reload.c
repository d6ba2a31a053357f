// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * A reload (SIGHUP, `stockade reload`, a policy file changed): the new
 * set checked, written under fresh ids, switched slot by slot; and the
 * policy files' inotify watches (agent/agent_int.h).
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

#include "agent.h"
#include "agent_int.h"
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

/* ---- reload ---- */



/* The next policy id that neither the set in force nor the new one uses,
 * round robin: an id just retired is reused last, so a record still in
 * the ring keeps its name (a->old). 0 when none is free. */
/* Is id still what a slot resolves to, or a cgroup decides by? After a
 * failed flip or switch an old id stays in force with its rules: a fresh
 * policy given that id would merge its rules into them. */
static bool id_held(const struct agent *a, uint32_t id)
{
	size_t i;

	for (i = 0; i < POLICY_SLOTS; i++)
		if (a->slot_id[i] == id)
			return true;
	for (i = 0; i < a->cgt.n; i++)
		if (a->cgt.v[i].policy_id == id)
			return true;
	return false;
}

static uint32_t fresh_id(struct agent *a, const uint16_t *taken)
{
	uint32_t id, n;

	for (n = 0; n < POLICY_MAX - 1; n++) {
		id = a->next_id;
		a->next_id = a->next_id % (POLICY_MAX - 1) + 1;
		if (id && !a->by_id[id] && !taken[id] && !id_held(a, id))
			return id;
	}
	return 0;
}


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
		json_u64(&sub, "policy_id", a->pol_id[i]);
		json_u64(&sub, "slot", a->pol_slot[i]);
		json_u64(&sub, "generation", a->info[i].generation);
		json_bool(&sub, "changed", changed[i]);
		if (changed[i] && a->switch_ns[i])
			json_u64(&sub, "switch_ns", (uint64_t)a->switch_ns[i]);
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

/*
 * Before a reload's flip: a cgroup on the slot of a changed policy that
 * the new set confines by another policy (or not at all) would decide, for
 * the moment between the flip and the scan that moves it, by the new
 * version of its old policy: a policy that is its neither before nor
 * after. So each such cgroup's entry first moves to a temporary slot that
 * holds the id it decides by now (the same decisions: no window); the
 * scan then moves it from there as from any slot, and free_slots() frees
 * the temporary slot once nothing points at it. When in doubt a cgroup is
 * held: that only costs it a switch of its own instead of the flip's.
 */
static void hold_movers(struct agent *a, const bool *changed)
{
	bool *taken = calloc(POLICY_SLOTS, sizeof(*taken));
	bool *flips = calloc(POLICY_SLOTS, sizeof(*flips));
	uint32_t *hold = calloc(POLICY_SLOTS, sizeof(*hold));
	size_t i, j;

	if (!taken || !flips || !hold) {
		pr_warn("policy", "out of memory: cgroups moving to another policy switch after their old policy's flip");
		goto out;
	}
	for (i = 0; i < a->set.n; i++) {
		taken[a->pol_slot[i]] = true;
		if (changed[i])
			flips[a->pol_slot[i]] = true;
	}
	for (i = 0; i < a->cgt.n; i++) {
		struct sandbox_cg *cg = &a->cgt.v[i];
		struct sandbox sb = { .root_id = cg->root_id };
		uint32_t target = POLICY_SLOT_CONFLICT, old = cg->slot;
		int64_t sel;

		if (cg->released || old == POLICY_SLOT_CONFLICT || !flips[old])
			continue;
		sel = is_detached(a, cg->id) ? -1 : selected_by(a, cg->path);
		if (sel >= 0) {
			target = slot_of(a, (uint32_t)sel);
		} else if (cg->root_id != cg->id) {
			for (j = 0; j < a->cgt.n && a->cgt.v[j].id != cg->root_id; j++)
				;
			if (j < a->cgt.n && !is_detached(a, a->cgt.v[j].id) &&
			    (sel = selected_by(a, a->cgt.v[j].path)) >= 0)
				target = slot_of(a, (uint32_t)sel);
		}
		if (target == old)
			continue;
		if (!hold[old]) {
			uint32_t s = free_slot(a, taken), id = a->slot_id[old];

			if (!s || slot_put(a, s, id)) {
				pr_warn("policy", "no temporary slot for the cgroups leaving slot %u: they switch after its flip",
					old);
				continue;
			}
			a->slot_id[s] = id;
			taken[s] = true;
			hold[old] = s;
		}
		sb.slot = hold[old];
		if (sandbox_entry_put(a, cg->id, &sb)) {
			pr_warn("policy", "holding %s on its old rules failed (%s): it switches after its old policy's flip",
				cg->path, strerror(errno));
			continue;
		}
		cg->slot = sb.slot;
	}
out:
	free(taken);
	free(flips);
	free(hold);
}

/*
 * Reload the policy files. The whole new set is parsed, validated and
 * compiled first; if anything fails the set in force stays, with a
 * policy_error record per problem. A policy whose file did not change
 * keeps its id and its rules. A changed or new one gets a fresh id, its
 * rules are written under it (nothing reads them yet), then each sandbox
 * is switched to it with one update of its entry, so a program sees the
 * old rules or the new ones, whole, and never none. Once no program can
 * still be reading the old ids (an RCU grace period), their rules go.
 */
/*
 * A reload's plan, next to the tables in force (struct agent): for each
 * policy of the new set (by its index), its id, slot and info; the ids'
 * owners (nby); which policies changed (fresh ids), which ids of the set
 * in force retire. After plan_switch() the arrays hold the old tables,
 * so one more plan_switch() undoes it.
 */
struct reload_plan {
	uint32_t *npid;
	uint16_t *nby;
	struct policy_info *ninfo;
	bool *changed;
	bool *retired;
	const char **changed_names;
	size_t n_changed;
	uint32_t *nslot;
	bool *staken;
};

static void plan_free(struct reload_plan *p)
{
	free(p->npid);
	free(p->nby);
	free(p->ninfo);
	free(p->changed);
	free(p->retired);
	free(p->changed_names);
	free(p->nslot);
	free(p->staken);
}

static int plan_alloc(struct reload_plan *p)
{
	memset(p, 0, sizeof(*p));
	p->npid = calloc(POLICY_MAX, sizeof(*p->npid));
	p->nby = calloc(POLICY_MAX, sizeof(*p->nby));
	p->ninfo = calloc(POLICY_MAX, sizeof(*p->ninfo));
	p->changed = calloc(POLICY_MAX, sizeof(*p->changed));
	p->retired = calloc(POLICY_MAX, sizeof(*p->retired));
	p->changed_names = calloc(POLICY_MAX, sizeof(*p->changed_names));
	p->nslot = calloc(POLICY_MAX, sizeof(*p->nslot));
	p->staken = calloc(POLICY_SLOTS, sizeof(*p->staken));
	if (!p->npid || !p->nby || !p->ninfo || !p->changed || !p->retired ||
	    !p->changed_names || !p->nslot || !p->staken)
		return -ENOMEM;
	return 0;
}

/* The new set loaded and checked as a start would check it. */
static int reload_load(struct agent *a, struct policy_set *nset,
		       struct policy_diag *diag)
{
	int err = policy_set__load(a->opt.policy_paths, a->opt.n_policy_paths, nset, diag);

	if (!err)
		err = rules__check_set(nset, diag);
	/* Limits this host cannot apply reject the set, as they stop a start. */
	if (!err)
		err = limits__check_set(a->cgroot, nset, diag);
	if (!err && nset->n >= POLICY_MAX) {
		policy_diag__add(diag, "%zu policies; at most %d fit", nset->n, POLICY_MAX - 1);
		err = -E2BIG;
	}
	return err;
}

/* Plan: unchanged policies keep their ids, the rest get fresh ones; a
 * policy keeps its slot while its name is in the set, a new name gets a
 * free one (never the slot of a policy going away: cgroups still point at
 * it until the scan). */
static int plan_make(struct agent *a, const struct policy_set *nset,
		     struct reload_plan *p, struct policy_diag *diag)
{
	size_t i, j;

	for (i = 0; i < nset->n; i++) {
		const struct policy *pol = nset->v[i];

		for (j = 0; j < a->set.n && strcmp(a->set.v[j]->name, pol->name); j++)
			;
		p->nslot[i] = j < a->set.n ? a->pol_slot[j] : free_slot(a, p->staken);
		if (!p->nslot[i]) {
			policy_diag__add(diag, "no free policy slot for %s", pol->name);
			return -E2BIG;
		}
		p->staken[p->nslot[i]] = true;
		if (j < a->set.n && a->set.v[j]->hash == pol->hash) {
			p->npid[i] = a->pol_id[j];
			p->ninfo[i] = a->info[j];
		} else {
			p->npid[i] = fresh_id(a, p->nby);
			if (!p->npid[i]) {
				policy_diag__add(diag, "no free policy id for %s", pol->name);
				return -E2BIG;
			}
			snprintf(p->ninfo[i].name, sizeof(p->ninfo[i].name), "%s", pol->name);
			p->ninfo[i].hash = pol->hash;
			p->ninfo[i].mode = pol->mode == POLICY_AUDIT ? SANDBOX_AUDIT : SANDBOX_ENFORCE;
			p->ninfo[i].generation = j < a->set.n ? a->info[j].generation + 1 : 1;
			p->changed[i] = true;
			p->changed_names[p->n_changed++] = pol->name;
		}
		p->nby[p->npid[i]] = (uint16_t)(i + 1);
	}
	/* Fresh ids are none the set in force uses: an id of it that the new
	 * set holds was kept by an unchanged policy. */
	for (j = 0; j < a->set.n; j++)
		p->retired[a->pol_id[j]] = !p->nby[a->pol_id[j]];
	return 0;
}

/* Swap the plan's tables with those in force (and the sets). */
static void plan_switch(struct agent *a, struct policy_set *nset,
			struct reload_plan *p)
{
	struct policy_set tset = a->set;
	size_t i;

	a->set = *nset;
	*nset = tset;
	for (i = 0; i < POLICY_MAX; i++) {
		uint32_t t32 = a->pol_id[i], ts = a->pol_slot[i];
		uint16_t t16 = a->by_id[i];
		struct policy_info ti = a->info[i];

		a->pol_slot[i] = p->nslot[i];
		p->nslot[i] = ts;
		a->switch_ns[i] = 0;
		a->pol_id[i] = p->npid[i];
		p->npid[i] = t32;
		a->by_id[i] = p->nby[i];
		p->nby[i] = t16;
		a->info[i] = p->ninfo[i];
		p->ninfo[i] = ti;
	}
}

/*
 * The switch: one update of each changed policy's slot moves all its
 * cgroups at once (a new policy's slot is written too, before any entry
 * points at it). Then the scan moves, one entry each, the cgroups whose
 * selector now names another policy, and confines or releases the others.
 * A failed flip is reported and leaves that policy on its old id, which
 * then stays. *start_ns and *end_ns: the switch window.
 */
static void reload_switch(struct agent *a, struct reload_plan *p,
			  int64_t *start_ns, int64_t *end_ns)
{
	size_t i;
	int err;

	*start_ns = clock_now_ns(CLOCK_REALTIME);
	hold_movers(a, p->changed);
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
	for (i = 0; i < a->cgt.n; i++)
		p->retired[a->cgt.v[i].policy_id] = false;
	for (i = 0; i < POLICY_SLOTS; i++)
		p->retired[a->slot_id[i]] = false;
	retire_ids(a, p->retired);
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

void reload(struct agent *a, const char *trigger)
{
	struct policy_set nset = { 0 };
	struct policy_diag diag = { 0 };
	struct reload_plan p;
	int64_t start_ns = 0, end_ns = 0;
	size_t i, j;
	int err;

	err = plan_alloc(&p);
	if (!err && !a->old) {
		a->old = calloc(POLICY_MAX, sizeof(*a->old));
		if (!a->old)
			err = -ENOMEM;
	}
	if (err)
		policy_diag__add(&diag, "out of memory");
	if (!err)
		err = reload_load(a, &nset, &diag);
	if (!err)
		err = plan_make(a, &nset, &p, &diag);
	if (err) {
		reload_reject(a, trigger, &diag);
		goto done;
	}
	if (!p.n_changed && nset.n == a->set.n) {
		a->reload_result = RELOAD_UNCHANGED;
		if (strcmp(trigger, "inotify"))
			emit_reload(a, trigger, "unchanged", NULL, NULL, 0, 0, 0);
		else
			pr_debug("agent", "policy files touched, content unchanged");
		goto done;
	}
	/* Names of the ids going away, for records still in the ring. */
	for (j = 0; j < a->set.n; j++)
		if (p.retired[a->pol_id[j]])
			a->old[a->pol_id[j]] = a->info[j];
	/* The set in force stays intact in nset, its tables in p. */
	plan_switch(a, &nset, &p);
	err = fill_policies(a, p.changed);
	if (err) {
		/* Undo: the new ids' rules go, the old tables come back. */
		bool *fresh = p.retired;

		memset(fresh, 0, POLICY_MAX * sizeof(*fresh));
		for (i = 0; i < a->set.n; i++)
			if (p.changed[i])
				fresh[a->pol_id[i]] = true;
		retire_ids(a, fresh);
		plan_switch(a, &nset, &p);
		policy_diag__add(&diag, "writing the new rules into the kernel maps failed: %s (maps full?)",
				 strerror(-err));
		reload_reject(a, trigger, &diag);
		goto done;
	}
	reload_switch(a, &p, &start_ns, &end_ns);
	a->reload_result = RELOAD_APPLIED;
	emit_reload(a, trigger, "applied", p.changed, p.changed_names, p.n_changed,
		    start_ns, end_ns);
done:
	if (a->reload_result != RELOAD_REJECTED)
		a->reload_problems = 0;
	a->reloads++;
	events__meta_update(&a->ev);
	policy_set__free(&nset);
	policy_diag__free(&diag);
	plan_free(&p);
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
				if (watches[i].name[0] ? !strcmp(watches[i].name, ev->name) :
							 policy_name_ok(ev->name))
					hit = true;
			}
		}
	}
	if (hit)
		a->reload_at_ms = clock_now_ns(CLOCK_MONOTONIC) / 1000000 + 200;
}
