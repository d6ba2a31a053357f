// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The daemon: load the policy set, load the BPF object, confine every
 * selected cgroup (and pick up new ones), stream events until told to stop.
 *
 * Everything it sets up is pinned (include/lifecycle.h) and outlives it; an
 * agent that finds pins adopts them instead of building anew (README.md,
 * "Lifecycle").
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

/* The safety net: new cgroups arrive by inotify on the watched
 * directories (include/sandbox.h); the scan finds what that missed. */
#define SCAN_INTERVAL_MS	5000

/*
 * The agent's signals, from the first line of main(). SIGHUP's default
 * action kills: a `stockade reload` (or a log rotation's HUP) that lands
 * while the agent is still starting must not stop it. So SIGHUP, SIGINT
 * and SIGTERM are blocked at once, and stay blocked: the main loop reads
 * them from a signalfd (agent/loop.h), never in a handler. Blocked, not
 * caught, during start-up too, because a caught signal makes the verifier
 * give up a program load (EAGAIN once a signal is pending) and a storm of
 * them would fail the start. Held pending, a SIGHUP makes one reload once
 * the agent is ready, which applies whatever changed meanwhile; a
 * SIGTERM/SIGINT stops it then, cleanly, rather than halfway through.
 */
static sigset_t agent_sigs;

void agent__signals_init(void)
{
	sigemptyset(&agent_sigs);
	sigaddset(&agent_sigs, SIGHUP);
	sigaddset(&agent_sigs, SIGINT);
	sigaddset(&agent_sigs, SIGTERM);
	sigprocmask(SIG_BLOCK, &agent_sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
}

const char *agent__policy_name(struct agent *a, uint32_t policy_id)
{
	if (policy_id == POLICY_ID_CONFLICT)
		return "(conflict)";
	if (policy_id >= POLICY_MAX)
		return "(unknown)";
	if (a->by_id[policy_id])
		return a->set.v[a->by_id[policy_id] - 1]->name;
	/* A record from before this agent, of a policy since removed. */
	if (a->old && a->old[policy_id].name[0])
		return a->old[policy_id].name;
	return "(unknown)";
}

const struct sandbox_cg *agent__find_cg(struct agent *a, uint64_t id)
{
	return sandbox_table__find(&a->cgt, id);
}

/* ---- preflight: every check names its fix ---- */

static bool has_caps(void)
{
	unsigned long long eff = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	if (f)
		fclose(f);
	/* CAP_SYS_ADMIN, or CAP_BPF + CAP_NET_ADMIN (cgroup sock programs)
	 * + CAP_PERFMON. */
	return (eff & (1ULL << 21)) ||
	       ((eff & (1ULL << 39)) && (eff & (1ULL << 12)) &&
		(eff & (1ULL << 38)));
}

/* ---- load ---- */

static int open_skel(struct agent *a, bool with_lsm)
{
	char why[256] = "";
	int err;

	a->skel = stockade__open();
	if (!a->skel) {
		err = -errno;
		pr_err("agent", "opening the BPF object failed: %s", strerror(errno));
		return err;
	}
	err = lsm__set_autoload(a, a->skel, with_lsm);
	if (err) {
		stockade__destroy(a->skel);
		a->skel = NULL;
		return err;
	}
	if (a->opt.ring_size)
		events__set_ring_size(a->skel, a->opt.ring_size);
	/* Reuse what an earlier agent pinned, or create and pin. Pins of
	 * another build, or of a replacement that was interrupted, are
	 * replaced instead: fresh maps, in a staging directory. */
	if (a->rep) {
		err = 0;	/* a retry of this load: decided already */
	} else if (replace__interrupted(a->opt.bpffs)) {
		snprintf(why, sizeof(why), "a replacement was interrupted");
		err = -ESTALE;
	} else {
		err = pin__maps_prepare(a->skel, a->opt.bpffs, a->opt.ring_size,
					why, sizeof(why));
	}
	if (err == -ESTALE && !a->rep)
		err = replace__prepare(a, why);
	if (a->rep && !err) {
		/* Its sequence and ring size, then our staging pins. */
		replace__configure(a);
		err = pin__maps_prepare(a->skel, a->opt.bpffs, a->opt.ring_size,
					why, sizeof(why));
	}
	if (err) {
		if (err == -ESTALE)
			pr_err("pin", "the maps pinned under %s do not fit this build: %s",
			       a->opt.bpffs, why);
		err = -ESTALE;	/* the message is out; not an LSM problem */
	} else {
		err = stockade__load(a->skel);
	}
	if (err) {
		stockade__destroy(a->skel);
		a->skel = NULL;
	}
	return err;
}

/* Is the program behind link the one prog holds (same tag)? */
bool agent__same_prog(struct bpf_link *link, const struct bpf_program *prog)
{
	__u8 have[8], want[8];

	if (pin__link_prog(bpf_link__fd(link), have, NULL) ||
	    pin__prog_tag(bpf_program__fd(prog), want, NULL))
		return false;
	return !memcmp(have, want, sizeof(have));
}

/*
 * Load with the LSM programs, and prove they work by attaching them; if
 * that fails, load again without them, which tells an LSM problem (degrade,
 * or refuse) from any other (fatal). libbpf's warnings from the first try
 * are demoted to debug: the second try, or our own message, says it all.
 */
static int load_bpf(struct agent *a)
{
	char why[512];
	int err;

	if (!lsm__bpf_listed(why, sizeof(why))) {
		err = lsm__degrade(a, why);
		return err ?: open_skel(a, false);
	}
	log_libbpf_quiet = true;
	err = open_skel(a, true);
	log_libbpf_quiet = false;
	/* -EOPNOTSUPP: a hook is missing and --allow-degraded not given;
	 * lsm__set_autoload said which. */
	if (err == -ESTALE || err == -EOPNOTSUPP)
		return err;
	if (!err) {
		err = lsm__attach(a);
		if (!err)
			return 0;
		snprintf(why, sizeof(why), "attaching BPF-LSM programs failed: %s (are BPF trampolines blocked on this kernel?)",
			 strerror(-err));
		stockade__destroy(a->skel);
		a->skel = NULL;
	} else if (err == -EACCES || err == -EINVAL || err == -E2BIG) {
		/* The verifier rejected a program: a bug in this build, not a
		 * kernel without BPF-LSM. Load again, loudly, for its log. */
		err = open_skel(a, true);
		pr_err("agent", "the kernel's verifier rejected a BPF program (%s); the log is above. This is a stockade bug: please report it with the log",
		       strerror(-err));
		return err ?: -EINVAL;
	} else {
		snprintf(why, sizeof(why), "loading BPF-LSM programs failed: %s",
			 strerror(-err));
	}
	err = open_skel(a, false);
	if (err) {
		if (err != -ESTALE)
			pr_err("agent", "loading the BPF programs failed: %s; run with -v for the verifier's log",
			       strerror(-err));
		return err;
	}
	err = lsm__degrade(a, why);
	if (err) {
		stockade__destroy(a->skel);
		a->skel = NULL;
	}
	return err;
}

/* ---- policy ids and rules ---- */

/* What the pins said each policy id meant, before we write anything. */
static int read_old_policies(struct agent *a)
{
	int fd = bpf_map__fd(a->skel->maps.policy_names);
	__u32 id;

	a->old = calloc(POLICY_MAX, sizeof(*a->old));
	if (!a->old)
		return -ENOMEM;
	for (id = 0; id < POLICY_MAX; id++) {
		if (bpf_map_lookup_elem(fd, &id, &a->old[id]))
			memset(&a->old[id], 0, sizeof(a->old[id]));
		a->old[id].name[PIN_POLICY_NAME_LEN - 1] = '\0';
	}
	return 0;
}

/* The slot of policy id (POLICY_SLOT_CONFLICT for the conflict id). */
static uint32_t slot_of(struct agent *a, uint32_t id)
{
	if (id == POLICY_ID_CONFLICT || id >= POLICY_MAX || !a->by_id[id])
		return POLICY_SLOT_CONFLICT;
	return a->pol_slot[a->by_id[id] - 1];
}

/* A slot that no policy in force holds and none of taken[] (the plan of
 * a reload) either: its value is 0, so no entry can still point at one
 * that resolves to a live policy. 0 when none is free. */
static uint32_t free_slot(struct agent *a, const bool *taken)
{
	uint32_t s;

	for (s = 1; s < POLICY_SLOTS; s++)
		if (!a->slot_id[s] && !taken[s])
			return s;
	return 0;
}

/*
 * Give each policy of the set its slot, at a start: the one the pins hold
 * for its name (the slot whose id names it in policy_names), so the
 * cgroups an earlier agent confined switch with that one slot; else a free
 * one. Slots of policies no longer in the set stay as they are until
 * sweep() has removed the entries that point at them.
 */
static int assign_slots(struct agent *a)
{
	int fd = bpf_map__fd(a->skel->maps.policy_slots);
	bool *taken = calloc(POLICY_SLOTS, sizeof(*taken));
	uint32_t s, id;
	size_t i;
	int err = 0;

	if (!taken)
		return -ENOMEM;
	for (s = 0; s < POLICY_SLOTS; s++) {
		if (bpf_map_lookup_elem(fd, &s, &id) || id >= POLICY_MAX)
			id = POLICY_ID_CONFLICT;
		a->slot_id[s] = s == POLICY_SLOT_CONFLICT ? POLICY_ID_CONFLICT : id;
	}
	for (i = 0; i < a->set.n; i++) {
		a->pol_slot[i] = 0;
		for (s = 1; a->old && s < POLICY_SLOTS; s++) {
			id = a->slot_id[s];
			if (id && !taken[s] && !strcmp(a->old[id].name, a->set.v[i]->name)) {
				a->pol_slot[i] = s;
				taken[s] = true;
				break;
			}
		}
	}
	for (i = 0; i < a->set.n; i++) {
		if (a->pol_slot[i])
			continue;
		s = free_slot(a, taken);
		if (!s) {
			pr_err("agent", "no free policy slot: the pins under %s still hold many removed policies; run `stockade detach --all --bpffs %s` while no agent runs",
			       a->opt.bpffs, a->opt.bpffs);
			err = -E2BIG;
			break;
		}
		a->pol_slot[i] = s;
		taken[s] = true;
	}
	free(taken);
	return err;
}

/*
 * Point each policy's slot at its id (of all policies, or of those only[]
 * marks), once its rules are complete: one map update per policy, which
 * every cgroup of that policy sees at once. Returns the first failure; a
 * slot that failed keeps its old id, and so its cgroups keep the old rules
 * whole (the caller retires no id a slot still holds).
 */
static int flip_slots(struct agent *a, const bool *only)
{
	int fd = bpf_map__fd(a->skel->maps.policy_slots);
	__u32 s = POLICY_SLOT_CONFLICT, id = POLICY_ID_CONFLICT;
	size_t i;
	int err = 0;

	if (!only && bpf_map_update_elem(fd, &s, &id, BPF_ANY))
		err = -errno;
	for (i = 0; i < a->set.n; i++) {
		if (only && !only[i])
			continue;
		s = a->pol_slot[i];
		id = a->pol_id[i];
		if (a->slot_id[s] == id)
			continue;
		a->switch_ns[i] = clock_now_ns(CLOCK_REALTIME);
		if (bpf_map_update_elem(fd, &s, &id, BPF_ANY)) {
			err = err ?: -errno;
			pr_err("policy", "%s: switching its slot %u to policy id %u failed: %s; its cgroups keep the rules they had",
			       a->set.v[i]->name, s, id, strerror(errno));
			continue;
		}
		a->slot_id[s] = id;
	}
	return err;
}

/* After a grace period: free the slots that neither a policy in force nor
 * a tracked cgroup holds (removed policies), so they resolve to the
 * conflict id and can be given out again. */
static void free_slots(struct agent *a)
{
	int fd = bpf_map__fd(a->skel->maps.policy_slots);
	bool *used = calloc(POLICY_SLOTS, sizeof(*used));
	__u32 s, none = POLICY_ID_CONFLICT;
	size_t i;

	if (!used)
		return;		/* kept: a later reload frees them */
	for (i = 0; i < a->set.n; i++)
		used[a->pol_slot[i]] = true;
	for (i = 0; i < a->cgt.n; i++)
		used[a->cgt.v[i].slot] = true;
	for (s = 1; s < POLICY_SLOTS; s++) {
		if (used[s] || !a->slot_id[s])
			continue;
		if (!bpf_map_update_elem(fd, &s, &none, BPF_ANY))
			a->slot_id[s] = POLICY_ID_CONFLICT;
	}
	free(used);
}

/*
 * Give each policy its id. One the pins hold with the same name and the
 * same content keeps its id (and its rules, rewritten in place as they
 * were). One whose content changed gets a fresh id, like a new one: its
 * rules are written beside the old ones, the scan switches each sandbox
 * entry to it in one update, and the old id's rules go only after that
 * (sweep()), so no program ever sees a half-written policy. A fresh id is
 * the lowest that no pinned policy uses, so a record left in the ring
 * keeps its meaning. Generations: the pinned one, plus one on a change.
 */
static int assign_ids(struct agent *a)
{
	uint32_t id, next = 1;
	size_t i;

	if (a->set.n >= POLICY_MAX) {
		pr_err("agent", "%zu policies; at most %d fit", a->set.n, POLICY_MAX - 1);
		return -E2BIG;
	}
	memset(a->by_id, 0, sizeof(a->by_id));
	for (i = 0; i < a->set.n; i++) {
		const struct policy *p = a->set.v[i];
		struct policy_info *in = &a->info[i];

		memset(in, 0, sizeof(*in));
		snprintf(in->name, sizeof(in->name), "%s", p->name);
		in->hash = p->hash;
		in->mode = p->mode == POLICY_AUDIT ? SANDBOX_AUDIT : SANDBOX_ENFORCE;
		in->generation = 1;
		a->pol_id[i] = 0;
		for (id = 1; a->old && id < POLICY_MAX; id++) {
			if (strcmp(a->old[id].name, p->name))
				continue;
			if (a->old[id].hash == p->hash) {
				a->pol_id[i] = id;
				a->by_id[id] = (uint16_t)(i + 1);
				in->generation = a->old[id].generation ?: 1;
			} else {
				in->generation = a->old[id].generation + 1;
			}
			break;
		}
	}
	for (i = 0; i < a->set.n; i++) {
		if (a->pol_id[i])
			continue;
		while (next < POLICY_MAX &&
		       (a->by_id[next] || (a->old && a->old[next].name[0])))
			next++;
		if (next == POLICY_MAX) {
			pr_err("agent", "no free policy id: the pins under %s still name many removed policies; run `stockade detach --all --bpffs %s` while no agent runs",
			       a->opt.bpffs, a->opt.bpffs);
			return -E2BIG;
		}
		a->pol_id[i] = next;
		a->by_id[next] = (uint16_t)(i + 1);
	}
	return assign_slots(a);
}

static size_t key_cmp_size;

static int key_cmp(const void *x, const void *y)
{
	return memcmp(x, y, key_cmp_size);
}

static int key_set_add(struct key_set *ks, const void *key, size_t size)
{
	if (ks->n == ks->cap) {
		size_t cap = ks->cap ? ks->cap * 2 : 256;
		unsigned char *v = realloc(ks->v, cap * size);

		if (!v)
			return -ENOMEM;
		ks->v = v;
		ks->cap = cap;
	}
	ks->size = size;
	memcpy(ks->v + ks->n++ * size, key, size);
	return 0;
}

static void key_set_free(struct key_set *ks)
{
	free(ks->v);
	memset(ks, 0, sizeof(*ks));
}

/*
 * Delete every entry of a pinned rule map whose key this agent did not
 * write: rules of an earlier policy set. Called once the new entries are
 * in, so no rule ever disappears before its replacement is there.
 */
static size_t sweep_keys(int fd, struct key_set *ks, size_t size)
{
	unsigned char cur[1024], next[1024];
	struct key_set stale = { 0 };
	size_t i, n = 0;
	int err;

	if (size > sizeof(cur))
		return 0;
	key_cmp_size = size;
	if (ks->n)
		qsort(ks->v, ks->n, size, key_cmp);
	err = bpf_map_get_next_key(fd, NULL, next);
	while (!err) {
		if (!ks->n || !bsearch(next, ks->v, ks->n, size, key_cmp))
			if (key_set_add(&stale, next, size))
				break;
		memcpy(cur, next, size);
		err = bpf_map_get_next_key(fd, cur, next);
	}
	for (i = 0; i < stale.n; i++)
		if (!bpf_map_delete_elem(fd, stale.v + i * size))
			n++;
	key_set_free(&stale);
	return n;
}

/* Write the rules of every policy of a->set, or of those only[] marks
 * (a reload: new ids that nothing uses yet). */
static int fill_policies(struct agent *a, const bool *only)
{
	struct policy_conf conf = { .mode = SANDBOX_ENFORCE, .flags = 0 };
	int allow_fd = bpf_map__fd(a->skel->maps.net_allow);
	int meta_fd = bpf_map__fd(a->skel->maps.net_meta);
	int conf_fd = bpf_map__fd(a->skel->maps.policies);
	int file_fd = bpf_map__fd(a->skel->maps.file_rules);
	int unix_fd = bpf_map__fd(a->skel->maps.unix_allow);
	int names_fd = bpf_map__fd(a->skel->maps.policy_names);
	struct net_compiled c = { 0 };
	struct file_compiled fc = { 0 };
	char err_msg[POLICY_DIAG_MAX], **homes = NULL;
	__u32 id = POLICY_ID_CONFLICT;
	size_t i, j, total = 0, file_total = 0, n_homes = 0;
	/* Remember keys for sweep_keys(), once, at an adopting start. */
	bool keep = a->adopting && !only;
	__u8 one = 1;
	int err;

	err = file_rules__homes(&homes, &n_homes);
	if (err) {
		pr_err("policy", "listing home directories for the protected paths failed: %s",
		       strerror(-err));
		goto cleanup;
	}
	/* Id 0: a cgroup claimed by two policies; deny-all, enforce, with a
	 * file scope of nothing: its "/" entry allows no access. */
	if (!only)
		err = bpf_map_update_elem(conf_fd, &id, &conf, BPF_ANY);
	if (!err && !only) {
		struct file_entry none = { .val.flags = 0 };

		none.key.prefixlen = 32 + 8;
		none.key.policy_id = POLICY_ID_CONFLICT;
		none.key.path[0] = '/';
		err = bpf_map_update_elem(file_fd, &none.key, &none.val, BPF_ANY);
		if (!err && keep)
			err = key_set_add(&a->keys_file, &none.key, sizeof(none.key));
	}
	/* Existing entries are overwritten in place, each in one step; the
	 * stale ones go only after the scan (sweep_keys()). */
	for (i = 0; !err && i < a->set.n; i++) {
		const struct policy *p = a->set.v[i];

		if (only && !only[i])
			continue;
		id = a->pol_id[i];
		err = net_rules__compile(p, id, &c, err_msg, sizeof(err_msg));
		if (err) {
			pr_err("policy", "%s", err_msg);
			break;
		}
		err = file_rules__compile(p, id, (const char *const *)homes, n_homes,
					  &fc, err_msg, sizeof(err_msg));
		if (err) {
			pr_err("policy", "%s: %s", p->name, err_msg);
			net_compiled__free(&c);
			break;
		}
		total += c.n_allow;
		file_total += fc.n;
		if (total > NET_MAX_RULES || file_total > FILE_MAX_RULES) {
			pr_err("policy", "%zu network and %zu file rules in the set; at most %d and %d fit the kernel maps",
			       total, file_total, NET_MAX_RULES, FILE_MAX_RULES);
			err = -E2BIG;
			net_compiled__free(&c);
			file_compiled__free(&fc);
			break;
		}
		for (j = 0; !err && j < fc.n; j++) {
			err = bpf_map_update_elem(file_fd, &fc.v[j].key, &fc.v[j].val,
						  BPF_ANY);
			if (!err && keep)
				err = key_set_add(&a->keys_file, &fc.v[j].key,
						  sizeof(fc.v[j].key));
		}
		for (j = 0; !err && j < fc.n_unix; j++) {
			err = bpf_map_update_elem(unix_fd, &fc.unix_keys[j], &one,
						  BPF_ANY);
			if (!err && keep)
				err = key_set_add(&a->keys_unix, &fc.unix_keys[j],
						  sizeof(fc.unix_keys[j]));
		}
		file_compiled__free(&fc);
		for (j = 0; !err && j < c.n_allow; j++) {
			err = bpf_map_update_elem(allow_fd, &c.allow[j].key,
						  &c.allow[j].val, BPF_ANY);
			if (!err && keep)
				err = key_set_add(&a->keys_allow, &c.allow[j].key,
						  sizeof(c.allow[j].key));
		}
		for (j = 0; !err && j < c.n_meta; j++) {
			err = bpf_map_update_elem(meta_fd, &c.meta[j].key,
						  &c.meta[j].verdict, BPF_ANY);
			if (!err && keep)
				err = key_set_add(&a->keys_meta, &c.meta[j].key,
						  sizeof(c.meta[j].key));
		}
		conf.mode = p->mode == POLICY_AUDIT ? SANDBOX_AUDIT : SANDBOX_ENFORCE;
		conf.flags = (p->net.default_allow ? SANDBOX_NET_DEFAULT_ALLOW : 0) |
			     (p->net.raw_sockets ? SANDBOX_RAW_SOCKETS : 0) |
			     (p->net.icmp ? SANDBOX_ICMP : 0) |
			     (p->namespaces.user ? SANDBOX_USERNS : 0) |
			     (p->perf_allow ? SANDBOX_PERF : 0) |
			     (p->userfaultfd ? SANDBOX_USERFAULTFD : 0);
		conf.netlink = p->net.netlink;
		conf.caps = policy_caps(p);
		/* The policy's settings go in last: until then, id has no
		 * entry and its programs would deny. */
		if (!err)
			err = bpf_map_update_elem(conf_fd, &id, &conf, BPF_ANY);
		if (!err)
			err = bpf_map_update_elem(names_fd, &id, &a->info[i], BPF_ANY);
		if (err)
			pr_err("policy", "%s: writing its rules into the kernel maps failed: %s",
			       p->name, err == -ENOMEM ? strerror(ENOMEM) : strerror(errno));
		net_compiled__free(&c);
	}
cleanup:
	for (i = 0; i < n_homes; i++)
		free(homes[i]);
	free(homes);
	return err;
}

/* The `policy` record of set.v[i]: what is in force, by content. */
static void emit_policy(struct agent *a, size_t i)
{
	char hash[20];

	snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)a->info[i].hash);
	events__begin(a, "policy");
	json_str(&a->j, "policy", a->set.v[i]->name);
	json_u64(&a->j, "policy_id", a->pol_id[i]);
	json_u64(&a->j, "slot", a->pol_slot[i]);
	json_str(&a->j, "file", a->set.v[i]->file);
	json_str(&a->j, "hash", hash);
	json_u64(&a->j, "generation", a->info[i].generation);
	json_str(&a->j, "mode", a->info[i].mode == SANDBOX_AUDIT ? "audit" : "enforce");
	events__emit(a);
}

static void emit_policies(struct agent *a)
{
	size_t i;

	for (i = 0; i < a->set.n; i++)
		emit_policy(a, i);
}

/* ---- confine cgroups ---- */

static void cg_progs(struct agent *a, struct bpf_program *progs[SANDBOX_N_LINKS])
{
	progs[0] = a->skel->progs.stk_connect4;
	progs[1] = a->skel->progs.stk_connect6;
	progs[2] = a->skel->progs.stk_sendmsg4;
	progs[3] = a->skel->progs.stk_sendmsg6;
	progs[4] = a->skel->progs.stk_sock_create;
	progs[5] = a->skel->progs.stk_egress;
	progs[6] = a->skel->progs.stk_bind4;
	progs[7] = a->skel->progs.stk_bind6;
}

static int cg_link_path(struct agent *a, uint64_t id, const struct bpf_program *prog,
			char *path, size_t len)
{
	char name[128];

	snprintf(name, sizeof(name), "cg-%llu-%s", (unsigned long long)id,
		 bpf_program__name(prog));
	return pin__link_path(path, len, a->opt.bpffs, name);
}

/*
 * Is the pinned link still attached to cgroup id with prog's attach type?
 * A link whose cgroup went away is "defunct" (cgroup id 0).
 */
static bool cg_link_fits(struct bpf_link *link, uint64_t id,
			 const struct bpf_program *prog)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(bpf_link__fd(link), &info, &len))
		return false;
	return info.type == BPF_LINK_TYPE_CGROUP && info.cgroup.cgroup_id == id &&
	       info.cgroup.attach_type == bpf_program__expected_attach_type(prog);
}

/*
 * Confine cg with the cgroup programs, each attached exactly once: a pinned
 * link of the same program is adopted, one of another build is switched to
 * this build's program in place (BPF_LINK_UPDATE: atomic, no window), and
 * only a missing one is attached (and pinned). *how says which happened.
 */
static int attach_links(struct agent *a, uint64_t id, const char *rel,
			struct bpf_program **progs, int n, struct bpf_link **links,
			const char **how)
{
	bool is_new[SANDBOX_N_LINKS > WATCH_N_LINKS ? SANDBOX_N_LINKS :
		    WATCH_N_LINKS] = { false };
	char path[PATH_MAX], pin[PATH_MAX];
	unsigned int adopted = 0, replaced = 0;
	struct bpf_link *link;
	int fd, i, err = 0;

	snprintf(path, sizeof(path), "%s%s", a->cgroot, rel);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (i = 0; i < n; i++) {
		err = cg_link_path(a, id, progs[i], pin, sizeof(pin));
		if (err)
			break;
		link = access(pin, F_OK) ? NULL : bpf_link__open(pin);
		if (link && !cg_link_fits(link, id, progs[i])) {
			/* Not what its name says: drop the pin, attach anew. */
			unlink(pin);
			bpf_link__destroy(link);
			link = NULL;
		}
		if (link) {
			if (agent__same_prog(link, progs[i])) {
				adopted++;
			} else if ((err = bpf_link__update_program(link, progs[i]))) {
				pr_err("cgroup", "switching %s of %s to this build's program failed: %s; the old program stays",
				       bpf_program__name(progs[i]), path, strerror(-err));
				bpf_link__destroy(link);
				break;
			} else {
				replaced++;
			}
			links[i] = link;
			continue;
		}
		links[i] = bpf_program__attach_cgroup(progs[i], fd);
		if (!links[i]) {
			err = -errno;
			pr_err("cgroup", "attaching %s to %s failed: %s",
			       bpf_program__name(progs[i]), path, strerror(errno));
			break;
		}
		is_new[i] = true;
		err = bpf_link__pin(links[i], pin);
		if (err) {
			pr_err("pin", "pinning %s failed: %s", pin, strerror(-err));
			i++;
			break;
		}
	}
	close(fd);
	if (err) {
		/* Nothing half-applied: drop what this call attached; adopted
		 * links stay pinned, and keep confining. */
		while (i-- > 0) {
			if (is_new[i]) {
				bpf_link__unpin(links[i]);
				bpf_link_detach(bpf_link__fd(links[i]));
			}
			bpf_link__destroy(links[i]);
			links[i] = NULL;
		}
		return err;
	}
	*how = replaced ? "replaced" : adopted == (unsigned int)n ? "adopted" :
	       "attached";
	return 0;
}

static int attach_cg(struct agent *a, struct sandbox_cg *cg, const char **how)
{
	struct bpf_program *progs[SANDBOX_N_LINKS];

	cg_progs(a, progs);
	return attach_links(a, cg->id, cg->path, progs, SANDBOX_N_LINKS,
			    cg->links, how);
}

/* Close our handles on cg's links; the pins keep them attached. */
static void close_cg(struct sandbox_cg *cg)
{
	int i;

	for (i = 0; i < SANDBOX_N_LINKS; i++) {
		bpf_link__destroy(cg->links[i]);
		cg->links[i] = NULL;
	}
}

/*
 * Remove cg's enforcement: its links (detached even if someone else holds
 * them open, and unpinned), then its entries; log a detach record unless
 * why is NULL (`stockade detach` logged it already).
 */
/* Detach and unpin cg's links (detached even if someone else holds them
 * open). */
static void detach_cg_links(struct agent *a, struct sandbox_cg *cg)
{
	struct bpf_program *progs[SANDBOX_N_LINKS];
	char pin[PATH_MAX];
	int i;

	cg_progs(a, progs);
	for (i = 0; cg->direct && i < SANDBOX_N_LINKS; i++) {
		if (cg->links[i])
			bpf_link_detach(bpf_link__fd(cg->links[i]));
		if (!cg_link_path(a, cg->id, progs[i], pin, sizeof(pin)))
			unlink(pin);
	}
	close_cg(cg);
}

static void detach_cg(struct agent *a, struct sandbox_cg *cg, const char *why)
{
	detach_cg_links(a, cg);
	/* Links first: a program must never run without its entry. */
	bpf_map_delete_elem(bpf_map__fd(a->skel->maps.sandboxes), &cg->id);
	/* Its counters, and the limit values found put back: enforcement
	 * is removed, limits are enforcement too. */
	limits__detach(a, cg, why ?: "detach_command");
	if (!why)
		return;
	events__begin(a, "detach");
	records__detach(&a->j, agent__policy_name(a, cg->policy_id), cg->path,
			cg->id, why);
	events__emit(a);
}

/* Forget a->cgt.v[i] (its links and entries are handled by the caller). */
static void untrack(struct agent *a, size_t i)
{
	if (a->cgt.v[i].wd >= 0 && a->cg_ino_fd >= 0)
		inotify_rm_watch(a->cg_ino_fd, a->cgt.v[i].wd);
	setup__revoke(a, a->cgt.v[i].id);
	sandbox_table__remove(&a->cgt, i);
	}

struct scan_ctx {
	struct agent *a;
	int err;		/* first attach failure */
};

/* Which policy selects rel directly? Its id; POLICY_ID_CONFLICT when
 * several do, -1 when none. */
static int64_t selected_by(struct agent *a, const char *rel)
{
	int64_t found = -1;
	size_t i, j;

	for (i = 0; i < a->set.n; i++) {
		const struct policy *p = a->set.v[i];

		for (j = 0; j < p->n_cgroups; j++) {
			if (!cgroup__match(p->cgroups[j], rel))
				continue;
			if (found >= 0 && found != (int64_t)a->pol_id[i]) {
				pr_err("cgroup", "%s is selected by both %s and %s; it is confined deny-all until the policies are fixed",
				       rel, agent__policy_name(a, (uint32_t)found), p->name);
				return POLICY_ID_CONFLICT;
			}
			found = (int64_t)a->pol_id[i];
		}
	}
	return found;
}

static struct sandbox_cg *track(struct agent *a, const char *rel, uint64_t id)
{
	return sandbox_table__add(&a->cgt, rel, id);
}

/* Detached on purpose (`stockade detach`)? Marks it as still existing. */
static bool is_detached(struct agent *a, uint64_t id)
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

static struct watch_dir *find_wd_id(struct agent *a, uint64_t id)
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

/* The watched directory rel's parent is, if any. */
static struct watch_dir *parent_wd(struct agent *a, const char *rel)
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
			if (found >= 0 && found != (int64_t)a->pol_id[i])
				return POLICY_SLOT_CONFLICT;
			found = (int64_t)a->pol_id[i];
		}
	}
	return found < 0 ? POLICY_SLOT_CONFLICT : slot_of(a, (uint32_t)found);
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

/* Want rel watched (this scan generation); add it, and its inotify
 * watch, when new. */
static struct watch_dir *want_wd(struct agent *a, const char *rel, bool top)
{
	struct watch_dir *w = find_wd(a, rel);
	char path[PATH_MAX];

	if (!w) {
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
		a->n_wds++;
		/* The watch before anything below is judged: a cgroup made
		 * from now on is reported, one made before is walked. */
		snprintf(path, sizeof(path), "%s%s", a->cgroot, rel);
		if (a->cg_ino_fd >= 0) {
			w->wd = inotify_add_watch(a->cg_ino_fd, path,
						  IN_CREATE | IN_ONLYDIR);
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
static void watch_tops(struct agent *a)
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
}

static void outside_add(struct agent *a, uint64_t id)
{
	size_t i;

	for (i = 0; i < a->n_outs; i++) {
		if (a->outs[i].id == id) {
			a->outs[i].seen = a->scan_gen;
			return;
		}
	}
	if (a->n_outs == a->cap_outs) {
		size_t cap = a->cap_outs ? a->cap_outs * 2 : 64;
		struct outside_cg *v = realloc(a->outs, cap * sizeof(*v));

		if (!v)
			return;	/* its entry stays until the agent stops */
		a->outs = v;
		a->cap_outs = cap;
	}
	a->outs[a->n_outs].id = id;
	a->outs[a->n_outs++].seen = a->scan_gen;
}

static bool is_outside(struct agent *a, uint64_t id)
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
static void classify_unselected(struct agent *a, const char *rel, uint64_t id)
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
	if (map_update_retry(bpf_map__fd(a->skel->maps.sandboxes), &id, &sb,
			     BPF_ANY)) {
		pr_warn("cgroup", "marking %s outside every sandbox failed: %s; it stays pending (judged deny-first) until the next scan",
			rel, strerror(errno));
		return;
	}
	outside_add(a, id);
}

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
		setup__grant_wd(a, w);
		err = map_update_retry(bpf_map__fd(a->skel->maps.sandboxes),
				       &w->id, &sb, BPF_ANY);
		if (err) {
			pr_err("cgroup", "marking %s as watched failed: %s; cgroups created there wait for the scan",
			       w->path[0] ? w->path : "/", strerror(-err));
			return err;
		}
		w->entry = true;
	}
	if (w->top && !w->links[0]) {
		w_progs(a, progs);
		err = attach_links(a, w->id, w->path, progs, WATCH_N_LINKS,
				   w->links, &how);
		if (err) {
			pr_err("cgroup", "attaching the watch programs to %s failed: %s",
			       w->path[0] ? w->path : "/", strerror(-err));
			return err;
		}
	}
	w->armed = true;
	return 0;
}

/* Undo arm_wd(): links first (then nothing judges pending cgroups with
 * the cgroup programs), then the entry, then the inotify watch. */
static void disarm_wd(struct agent *a, struct watch_dir *w)
{
	struct bpf_program *progs[WATCH_N_LINKS];
	struct sandbox sb;
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
	if (w->entry &&
	    !bpf_map_lookup_elem(bpf_map__fd(a->skel->maps.sandboxes), &w->id, &sb) &&
	    sb.policy_id == SANDBOX_ENTRY_WATCHED)
		bpf_map_delete_elem(bpf_map__fd(a->skel->maps.sandboxes), &w->id);
	setup__revoke(a, w->id);
	if (w->wd >= 0 && a->cg_ino_fd >= 0)
		inotify_rm_watch(a->cg_ino_fd, w->wd);
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
static void born_attach(struct agent *a)
{
	a->born_link = bpf_program__attach(a->skel->progs.stk_cg_mkdir);
	if (!a->born_link)
		pr_warn("agent", "attaching the cgroup_mkdir tracepoint failed: %s; pending_ms counts from a new cgroup's first lookup (its directory's ctime), a lower bound",
			strerror(errno));
}

/* Microseconds from rel's creation until now: from its mkdir (the
 * tracepoint's time), else from its directory's ctime, which cgroupfs
 * sets at the first lookup (a lower bound). */
static int64_t pending_us_of(struct agent *a, const char *rel, uint64_t id)
{
	char path[PATH_MAX];
	struct stat st;
	int64_t born;
	__u64 ns;

	if (a->born_link &&
	    !bpf_map_lookup_elem(bpf_map__fd(a->skel->maps.cg_born), &id, &ns))
		return (clock_now_ns(CLOCK_BOOTTIME) - (int64_t)ns) / 1000;
	snprintf(path, sizeof(path), "%s%s", a->cgroot, rel);
	if (stat(path, &st))
		return -1;
	born = (int64_t)st.st_ctim.tv_sec * 1000000 + st.st_ctim.tv_nsec / 1000;
	return clock_now_ns(CLOCK_REALTIME) / 1000 - born;
}

static void emit_attach(struct agent *a, const struct sandbox_cg *cg,
			const char *parent, const char *how)
{
	events__begin(a, "attach");
	events__cgroup_fields(a, cg);
	json_str(&a->j, "via", cg->direct ? "selector" : "inherited");
	if (parent)
		json_str_raw(&a->j, "parent", parent, strlen(parent));
	if (how)
		json_str(&a->j, "links", how);
	if (cg->pending_us >= 0) {
		/* Created below a watched directory while the agent ran. */
		json_u64(&a->j, "pending_ms", (uint64_t)cg->pending_us / 1000);
		json_u64(&a->j, "pending_us", (uint64_t)cg->pending_us);
		json_str(&a->j, "classified_by", a->in_inotify ? "inotify" : "scan");
	}
	events__emit(a);
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

	sel = selected_by(a, rel);
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
	sb.slot = direct ? slot_of(a, policy_id) : parent->slot;
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
		limits__counters_reset(a, cg->id);
	}
	/* A policy whose content changed switched with its slot already
	 * (flip_slots()); only a cgroup that moves to another policy (or
	 * sandbox root) needs its own entry rewritten. */
	if (cg->slot != sb.slot || cg->root_id != sb.root_id) {
		if (bpf_map_update_elem(sb_fd, &cg->id, &sb, BPF_ANY)) {
			ctx->err = ctx->err ?: -errno;
			pr_err("cgroup", "switching %s to its new policy failed: %s; it keeps the old one",
			       rel, strerror(errno));
			cg->policy_id = a->slot_id[cg->slot];
			return (void *)(uintptr_t)(cg - a->cgt.v + 1);
		}
		cg->slot = sb.slot;
		cg->root_id = sb.root_id;
		a->confined_more = true;
	}
	cg->policy_id = a->slot_id[cg->slot];
	if (!direct && was_direct) {
		/* Confined through its parent's programs now: drop its own. */
		detach_cg_links(a, cg);
		limits__counters_drop(a, cg->id);
		cg->direct = false;
	}
	if (direct != was_direct || strcmp(old_name, agent__policy_name(a, policy_id)))
		emit_attach(a, cg, parent ? parent->path : NULL, how);
	return (void *)(uintptr_t)(cg - a->cgt.v + 1);
}

/*
 * One cgroup of the walk. parent is the sandbox_cg index + 1 of the nearest
 * confined ancestor (as a pointer-sized int), or 0.
 */
static void *scan_one(const char *rel, uint64_t id, void *parent, void *vctx)
{
	struct scan_ctx *ctx = vctx;
	struct agent *a = ctx->a;
	const struct sandbox_cg *found = agent__find_cg(a, id);
	struct sandbox_cg *cg;
	struct sandbox sb = { 0 };
	const char *how = NULL;
	int64_t sel;
	uintptr_t pidx = (uintptr_t)parent;
	bool direct, det = a->n_det && is_detached(a, id), links_first;
	struct watch_dir *under;
	int err;

	if (found) {
		cg = (struct sandbox_cg *)found;
		cg->seen = a->scan_gen;
		if (a->reselect)
			return reselect_one(ctx, cg, rel, pidx, det);
		return (void *)(uintptr_t)(cg - a->cgt.v + 1);
	}
	sel = selected_by(a, rel);
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
	if (under && under->armed && under->entry && !a->in_inotify)
		a->scan_found++;	/* inotify missed it */
	cg->slot = direct ? slot_of(a, (uint32_t)sel) : a->cgt.v[pidx - 1].slot;
	cg->policy_id = a->slot_id[cg->slot];
	cg->root_id = direct ? id : a->cgt.v[pidx - 1].root_id;
	sb.slot = cg->slot;
	sb.root_id = cg->root_id;
	/* Its setup grant before its entry: while pending, a runtime's move
	 * into it was granted by the watched directory's (agent/setup.c). */
	cg->fresh = setup__is_fresh(a, rel);
	setup__grant_cg(a, cg);
	/* Counters and limits (agent/limits.c) first, then the entry before
	 * the links, so the programs find all they need at once. */
	err = limits__attach(a, cg);
	if (!err && links_first)
		err = attach_cg(a, cg, &how);
	if (!err && bpf_map_update_elem(bpf_map__fd(a->skel->maps.sandboxes),
					&id, &sb, BPF_ANY)) {
		err = -errno;
		pr_err("cgroup", "recording %s in the sandbox map failed: %s (map full? at most %d cgroups)",
		       rel, strerror(errno), SANDBOX_MAX_CGROUPS);
	} else if (!err && under && under->armed && under->entry) {
		/* Its entry ends the pending state: now it is classified. */
		cg->pending_us = pending_us_of(a, rel, id);
	}
	if (!err && direct && !pidx && !links_first) {
		/* Nested in a confined cgroup, the ancestor's programs already
		 * run here and pick this entry (nearest wins); links of its
		 * own would judge, and log, every denial twice. Replacing
		 * another build's state: its counters first, its old links
		 * only once the new ones are pinned (agent/replace.c). */
		if (a->rep)
			replace__cg_before(a, cg);
		err = attach_cg(a, cg, &how);
		if (!err && a->rep && replace__cg_after(a, cg))
			how = "replaced";
	}
	if (err) {
		ctx->err = ctx->err ?: err;
		/* Keep the entry (and its counters and limits) of a cgroup
		 * whose pinned links confine it. */
		if (!direct || !pin_has_cg_links(a, id)) {
			limits__detach(a, cg, "attach_failed");
			bpf_map_delete_elem(bpf_map__fd(a->skel->maps.sandboxes), &id);
		} else {
			limits__forget(a, cg);
		}
		/* The entry just added is the last one. */
		sandbox_table__remove(&a->cgt, (size_t)(cg - a->cgt.v));
		return NULL;
	}
	/* After the entry exists: invalidates "outside" cached by the LSM
	 * programs for this cgroup and its descendants (include/sandbox.h). */
	__atomic_fetch_add(&a->skel->data->sandbox_gen, 1, __ATOMIC_SEQ_CST);
	/* Its children are confined by inheritance from the moment they
	 * exist; the watch only tells the agent at once (status, detach,
	 * their attach records), instead of at the next scan. */
	if (a->cg_ino_fd >= 0) {
		char dir[2 * PATH_MAX];

		snprintf(dir, sizeof(dir), "%s%s", a->cgroot, rel);
		cg->wd = inotify_add_watch(a->cg_ino_fd, dir, IN_CREATE | IN_ONLYDIR);
	}
	emit_attach(a, cg, pidx ? a->cgt.v[pidx - 1].path : NULL, how);
	return (void *)(uintptr_t)(cg - a->cgt.v + 1);
}
/* scan_one() over rel's existing subtree (a cgroup classified from an
 * inotify event may have children by now). */
struct sub_ctx {
	struct scan_ctx *sc;
	const char *prefix;
	void *top;
};

static void *sub_one(const char *rel, uint64_t id, void *parent, void *vctx)
{
	struct sub_ctx *c = vctx;
	char full[PATH_MAX];

	snprintf(full, sizeof(full), "%s%s", c->prefix, rel);
	return scan_one(full, id, parent ?: c->top, c->sc);
}

/* Arm every watched directory this scan wants; forget the others (a
 * reload dropped their selector, or they are gone). */
static void arm_all(struct agent *a)
{
	size_t i;

	for (i = 0; i < a->n_wds;) {
		if (a->wds[i].seen != a->scan_gen) {
			forget_wd(a, i);
			continue;
		}
		arm_wd(a, &a->wds[i]);
		i++;
	}
}

/*
 * New cgroups below the watched directories, from inotify: classified at
 * once, so a pending cgroup is judged by its candidate for a millisecond
 * or two, not until the next scan. An overflowed queue asks for a scan.
 */
static void drain_cg_inotify(struct agent *a)
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
			if (!(ev->mask & IN_CREATE) || !(ev->mask & IN_ISDIR) || !ev->len)
				continue;
			pcg = NULL;
			for (i = 0; i < a->n_wds; i++)
				if (a->wds[i].wd == ev->wd)
					w = &a->wds[i];
			for (i = 0; !w && i < a->cgt.n; i++)
				if (a->cgt.v[i].wd == ev->wd)
					pcg = &a->cgt.v[i];
			if (!w && !pcg)
				continue;
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
	if (ctx.err)
		pr_warn("cgroup", "confining a new cgroup failed: %s; the periodic scan retries (it stays pending, judged by its candidate policy, until then)",
			strerror(-ctx.err));
	if (a->confined_more) {
		__atomic_fetch_add(&a->skel->data->sandbox_gen, 1, __ATOMIC_SEQ_CST);
		a->confined_more = false;
	}
	if (rescan)
		a->rescan = true;
}

/* OUTSIDE entries of cgroups the last walk did not see as such. */
static void sweep_outside(struct agent *a)
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
		    sb.policy_id == SANDBOX_ENTRY_OUTSIDE)
			bpf_map_delete_elem(fd, &a->outs[i].id);
		a->outs[i] = a->outs[--a->n_outs];
	}
}

static int scan(struct agent *a)
{
	struct scan_ctx ctx = { .a = a, .err = 0 };
	size_t i;
	int err;

	a->scan_gen++;
	a->rescan = false;
	honour_detached(a);
	/* The watched directories and their inotify watches first: a cgroup
	 * made during the walk is reported, and classified below. */
	watch_tops(a);
	err = cgroup__walk(a->cgroot, scan_one, &ctx);
	if (err) {
		pr_err("cgroup", "walking %s failed: %s", a->cgroot, strerror(-err));
		return err;
	}
	arm_all(a);
	sweep_outside(a);
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
	if (a->confined_more) {
		/* A cgroup joined a sandbox: "outside" cached by the LSM
		 * programs is stale (include/sandbox.h). */
		__atomic_fetch_add(&a->skel->data->sandbox_gen, 1, __ATOMIC_SEQ_CST);
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
		setup__regrant(a);
	setup__sweep(a);
		drain_cg_inotify(a);
	return ctx.err;
}

/* Wait until every program already running has finished (rcu_sync in
 * bpf/lifecycle.bpf.c). */
static void rcu_sync(struct agent *a)
{
	int err = bpf_rcu_sync(bpf_map__fd(a->skel->maps.rcu_sync),
			       bpf_map__fd(a->skel->maps.rcu_inner));

	if (err)
		pr_warn("agent", "waiting for running programs failed: %s; paused instead",
			strerror(-err));
}

/* Does id root a sandbox this agent confines (its counters stay)? */
static bool is_sandbox_root(struct agent *a, uint64_t id)
{
	const struct sandbox_cg *cg = agent__find_cg(a, id);

	return cg && cg->direct;
}

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

	snprintf(dir, sizeof(dir), "%s/links", a->opt.bpffs);
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
			ours = a->n_degraded > 0 && !a->n_lsm_links;
			bpf_object__for_each_program(prog, a->skel->obj)
				if (lsm__is_ours(prog) &&
				    a->n_lsm_links && bpf_program__autoload(prog) &&
				    !strcmp(bpf_program__name(prog), de->d_name + 4))
					ours = true;
		} else {
			continue;	/* not ours to judge */
		}
		if (ours)
			continue;
		if (pin__link_path(pin, sizeof(pin), a->opt.bpffs, de->d_name))
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
		if (sb.policy_id != SANDBOX_ENTRY_SANDBOX)
			continue;	/* a watched or outside mark: no sandbox */
		path = cgroup_paths__find(&paths, id);
		events__begin(a, "detach");
		records__detach(&a->j, agent__policy_name(a, sb.slot < POLICY_SLOTS ?
							  a->slot_id[sb.slot] :
							  POLICY_ID_CONFLICT),
				path ?: "", id, path ? "not_selected" : "cgroup_removed");
		events__emit(a);
	}
	key_set_free(&gone);
	/* Their limits too: the values found go back (agent/limits.c). */
	limits__sweep(a, &paths);
	cgroup_paths__free(&paths);
}

/* Slots and ids of removed policies: free again. No entry points at such
 * a slot any more, and no program still running read one that did. */
static void sweep_ids(struct agent *a)
{
	int conf_fd = bpf_map__fd(a->skel->maps.policies);
	int names_fd = bpf_map__fd(a->skel->maps.policy_names);
	struct policy_conf none = { .mode = SANDBOX_ENFORCE, .flags = 0 };
	struct policy_info unused;
	__u64 key;

	free_slots(a);
	memset(&unused, 0, sizeof(unused));
	for (key = 1; a->old && key < POLICY_MAX; key++) {
		__u32 id = (__u32)key;

		if (!a->old[id].name[0] || a->by_id[id])
			continue;
		bpf_map_update_elem(conf_fd, &id, &none, BPF_ANY);
		bpf_map_update_elem(names_fd, &id, &unused, BPF_ANY);
	}
}

static void sweep(struct agent *a)
{
	size_t n_links, n_rules = 0;

	/* 1. Link pins that no longer confine anything of ours. */
	n_links = sweep_links(a);
	/* 2. Sandbox entries of cgroups we do not confine now. */
	sweep_entries(a);
	/* 3. Counters of sandboxes that are no more. */
	limits__counters_sweep(a, is_sandbox_root);
	/* 4. Rules no policy in force wrote: once no program still running
	 * can have read an entry that pointed at them. */
	rcu_sync(a);
	n_rules += sweep_keys(bpf_map__fd(a->skel->maps.net_allow), &a->keys_allow,
			      sizeof(struct net_key));
	n_rules += sweep_keys(bpf_map__fd(a->skel->maps.net_meta), &a->keys_meta,
			      sizeof(struct net_key));
	n_rules += sweep_keys(bpf_map__fd(a->skel->maps.file_rules), &a->keys_file,
			      sizeof(struct file_key));
	n_rules += sweep_keys(bpf_map__fd(a->skel->maps.unix_allow), &a->keys_unix,
			      bpf_map__key_size(a->skel->maps.unix_allow));

	/* 5. Slots and ids of removed policies (after step 2, and step 4's
	 * grace period). */
	sweep_ids(a);
	if (n_links || n_rules)
		pr_info("agent", "adopted pins: removed %zu stale links and %zu stale rules",
			n_links, n_rules);
	key_set_free(&a->keys_allow);
	key_set_free(&a->keys_meta);
	key_set_free(&a->keys_file);
	key_set_free(&a->keys_unix);
}

/* ---- reload ---- */

/* Delete every entry of a rule map whose policy id (at id_off in the
 * key) is retired. */
static void retire_map(int fd, size_t size, size_t id_off, const bool *retired)
{
	unsigned char cur[1024], next[1024];
	struct key_set gone = { 0 };
	__u32 id;
	size_t i;
	int err;

	if (size > sizeof(cur))
		return;
	err = bpf_map_get_next_key(fd, NULL, next);
	while (!err) {
		memcpy(&id, next + id_off, sizeof(id));
		if (id < POLICY_MAX && retired[id] && key_set_add(&gone, next, size))
			break;
		memcpy(cur, next, size);
		err = bpf_map_get_next_key(fd, cur, next);
	}
	for (i = 0; i < gone.n; i++)
		bpf_map_delete_elem(fd, gone.v + i * size);
	key_set_free(&gone);
}

/* Remove what the retired policy ids held: rules, settings, names. */
static void retire_ids(struct agent *a, const bool *retired)
{
	struct policy_conf none = { .mode = SANDBOX_ENFORCE, .flags = 0 };
	struct policy_info unused;
	__u32 id;

	retire_map(bpf_map__fd(a->skel->maps.net_allow), sizeof(struct net_key),
		   offsetof(struct net_key, policy_id), retired);
	retire_map(bpf_map__fd(a->skel->maps.net_meta), sizeof(struct net_key),
		   offsetof(struct net_key, policy_id), retired);
	retire_map(bpf_map__fd(a->skel->maps.file_rules), sizeof(struct file_key),
		   offsetof(struct file_key, policy_id), retired);
	retire_map(bpf_map__fd(a->skel->maps.unix_allow), sizeof(struct unix_key),
		   offsetof(struct unix_key, policy_id), retired);
	memset(&unused, 0, sizeof(unused));
	for (id = 1; id < POLICY_MAX; id++) {
		if (!retired[id])
			continue;
		bpf_map_update_elem(bpf_map__fd(a->skel->maps.policies), &id, &none, BPF_ANY);
		bpf_map_update_elem(bpf_map__fd(a->skel->maps.policy_names), &id, &unused,
				    BPF_ANY);
	}
}

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
	events__begin(a, "reload");
	json_str(&a->j, "trigger", trigger);
	json_str(&a->j, "result", result);
	json_str_array(&a->j, "policies", names, a->set.n);
	if (changed)
		json_str_array(&a->j, "changed", changed, n_changed);
	if (start_ns) {
		json_u64(&a->j, "switch_start_ns", (uint64_t)start_ns);
		json_u64(&a->j, "switch_end_ns", (uint64_t)end_ns);
	}
	gens = changed_v ? reload_generations(a, changed_v) : NULL;
	if (gens)
		json_raw(&a->j, "generations", gens);
	free(gens);
	events__emit(a);
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
	int sb_fd = bpf_map__fd(a->skel->maps.sandboxes);
	int slots_fd = bpf_map__fd(a->skel->maps.policy_slots);
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

			if (!s || bpf_map_update_elem(slots_fd, &s, &id, BPF_ANY)) {
				pr_warn("policy", "no temporary slot for the cgroups leaving slot %u: they switch after its flip",
					old);
				continue;
			}
			a->slot_id[s] = id;
			taken[s] = true;
			hold[old] = s;
		}
		sb.slot = hold[old];
		if (bpf_map_update_elem(sb_fd, &cg->id, &sb, BPF_ANY)) {
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
static void reload(struct agent *a, const char *trigger)
{
	struct policy_set nset = { 0 };
	struct policy_diag diag = { 0 };
	uint32_t *npid = calloc(POLICY_MAX, sizeof(*npid));
	uint16_t *nby = calloc(POLICY_MAX, sizeof(*nby));
	struct policy_info *ninfo = calloc(POLICY_MAX, sizeof(*ninfo));
	bool *changed = calloc(POLICY_MAX, sizeof(*changed));
	bool *retired = calloc(POLICY_MAX, sizeof(*retired));
	const char **changed_names = calloc(POLICY_MAX, sizeof(*changed_names));
	uint32_t *nslot = calloc(POLICY_MAX, sizeof(*nslot));
	bool *staken = calloc(POLICY_SLOTS, sizeof(*staken));
	int64_t start_ns = 0, end_ns = 0;
	size_t i, j, n_changed = 0;
	bool same;
	int err;

	if (!npid || !nby || !ninfo || !changed || !retired || !changed_names ||
	    !nslot || !staken) {
		policy_diag__add(&diag, "out of memory");
		err = -ENOMEM;
		goto rejected;
	}
	if (!a->old) {
		a->old = calloc(POLICY_MAX, sizeof(*a->old));
		if (!a->old) {
			err = -ENOMEM;
			goto rejected;
		}
	}
	err = policy_set__load(a->opt.policy_paths, a->opt.n_policy_paths, &nset, &diag);
	if (!err)
		err = rules__check_set(&nset, &diag);
	/* Limits this host cannot apply reject the set, as they stop a start. */
	if (!err)
		err = limits__check_set(a, &nset, &diag);
	if (!err && nset.n >= POLICY_MAX) {
		policy_diag__add(&diag, "%zu policies; at most %d fit", nset.n, POLICY_MAX - 1);
		err = -E2BIG;
	}
	if (err)
		goto rejected;

	/* Plan: unchanged policies keep their ids, the rest get fresh ones;
	 * a policy keeps its slot while its name is in the set, a new name
	 * gets a free one (never the slot of a policy going away: cgroups
	 * still point at it until the scan below). */
	for (i = 0; i < nset.n; i++) {
		const struct policy *p = nset.v[i];

		for (j = 0; j < a->set.n && strcmp(a->set.v[j]->name, p->name); j++)
			;
		nslot[i] = j < a->set.n ? a->pol_slot[j] : free_slot(a, staken);
		if (!nslot[i]) {
			policy_diag__add(&diag, "no free policy slot for %s", p->name);
			err = -E2BIG;
			goto rejected;
		}
		staken[nslot[i]] = true;
		if (j < a->set.n && a->set.v[j]->hash == p->hash) {
			npid[i] = a->pol_id[j];
			ninfo[i] = a->info[j];
		} else {
			npid[i] = fresh_id(a, nby);
			if (!npid[i]) {
				policy_diag__add(&diag, "no free policy id for %s", p->name);
				err = -E2BIG;
				goto rejected;
			}
			snprintf(ninfo[i].name, sizeof(ninfo[i].name), "%s", p->name);
			ninfo[i].hash = p->hash;
			ninfo[i].mode = p->mode == POLICY_AUDIT ? SANDBOX_AUDIT : SANDBOX_ENFORCE;
			ninfo[i].generation = j < a->set.n ? a->info[j].generation + 1 : 1;
			changed[i] = true;
			changed_names[n_changed++] = p->name;
		}
		nby[npid[i]] = (uint16_t)(i + 1);
	}
	/* Fresh ids are none the set in force uses: an id of it that the new
	 * set holds was kept by an unchanged policy. */
	for (j = 0; j < a->set.n; j++)
		retired[a->pol_id[j]] = !nby[a->pol_id[j]];
	same = !n_changed && nset.n == a->set.n;
	if (same) {
		a->reload_result = RELOAD_UNCHANGED;
		if (strcmp(trigger, "inotify"))
			emit_reload(a, trigger, "unchanged", NULL, NULL, 0, 0, 0);
		else
			pr_debug("agent", "policy files touched, content unchanged");
		goto done;
	}
	/* Names of the ids going away, for records still in the ring. */
	for (j = 0; j < a->set.n; j++)
		if (retired[a->pol_id[j]])
			a->old[a->pol_id[j]] = a->info[j];

	/* Switch the tables; the set in force stays intact in nset. */
	{
		struct policy_set tset = a->set;

		a->set = nset;
		nset = tset;
	}
	for (i = 0; i < POLICY_MAX; i++) {
		uint32_t t32 = a->pol_id[i], ts = a->pol_slot[i];
		uint16_t t16 = a->by_id[i];
		struct policy_info ti = a->info[i];

		a->pol_slot[i] = nslot[i];
		nslot[i] = ts;
		a->switch_ns[i] = 0;
		a->pol_id[i] = npid[i];
		npid[i] = t32;
		a->by_id[i] = nby[i];
		nby[i] = t16;
		a->info[i] = ninfo[i];
		ninfo[i] = ti;
	}
	err = fill_policies(a, changed);
	if (err) {
		/* Undo: the new ids' rules go, the old tables come back. */
		bool *fresh = retired;

		memset(fresh, 0, POLICY_MAX * sizeof(*fresh));
		for (i = 0; i < a->set.n; i++)
			if (changed[i])
				fresh[a->pol_id[i]] = true;
		retire_ids(a, fresh);
		policy_set__free(&a->set);
		a->set = nset;
		memset(&nset, 0, sizeof(nset));
		memcpy(a->pol_id, npid, POLICY_MAX * sizeof(*npid));
		memcpy(a->pol_slot, nslot, POLICY_MAX * sizeof(*nslot));
		memcpy(a->by_id, nby, POLICY_MAX * sizeof(*nby));
		memcpy(a->info, ninfo, POLICY_MAX * sizeof(*ninfo));
		policy_diag__add(&diag, "writing the new rules into the kernel maps failed: %s (maps full?)",
				 strerror(-err));
		goto rejected;
	}

	/* The switch: one update of each changed policy's slot moves all its
	 * cgroups at once (a new policy's slot is written too, before any
	 * entry points at it). Then the scan moves, one entry each, the
	 * cgroups whose selector now names another policy, and confines or
	 * releases the others. A failed flip is reported and leaves that
	 * policy on its old id, which then stays (below). */
	start_ns = clock_now_ns(CLOCK_REALTIME);
	hold_movers(a, changed);
	flip_slots(a, changed);
	a->reselect = true;
	err = scan(a);
	/* A cgroup that could not be switched is retried at the next scan. */
	a->reselect = err != 0;
	rcu_sync(a);
	end_ns = clock_now_ns(CLOCK_REALTIME);
	/* Limits follow (after the window: they are not the rules' switch):
	 * written over the old values, or put back as found. */
	limits__reload(a);
	/* No program still runs with an entry that pointed at the slot of a
	 * removed policy: free it. */
	free_slots(a);
	/* Retired ids still used, by a slot that could not flip or a cgroup
	 * we could not switch, stay. */
	for (i = 0; i < a->cgt.n; i++)
		retired[a->cgt.v[i].policy_id] = false;
	for (i = 0; i < POLICY_SLOTS; i++)
		retired[a->slot_id[i]] = false;
	retire_ids(a, retired);

	for (i = 0; i < a->set.n; i++)
		if (changed[i])
			emit_policy(a, i);
	a->reload_result = RELOAD_APPLIED;
	emit_reload(a, trigger, "applied", changed, changed_names, n_changed, start_ns, end_ns);
	goto done;

rejected:
	for (i = 0; i < diag.n; i++) {
		pr_err("policy", "%s", diag.msgs[i]);
		events__begin(a, "policy_error");
		json_str(&a->j, "message", diag.msgs[i]);
		events__emit(a);
	}
	pr_err("policy", "reload rejected: the policy set in force stays");
	reload_msgs_put(a, &diag);
	a->reload_result = RELOAD_REJECTED;
	emit_reload(a, trigger, "rejected", NULL, NULL, 0, 0, 0);
done:
	if (a->reload_result != RELOAD_REJECTED)
		a->reload_problems = 0;
	a->reloads++;
	events__meta_update(a);
	policy_set__free(&nset);
	policy_diag__free(&diag);
	free(npid);
	free(nby);
	free(ninfo);
	free(changed);
	free(retired);
	free(changed_names);
	free(nslot);
	free(staken);
	malloc_trim(0);	/* a big set's parse and compile: see agent__run */
}

/* ---- policy files watched (inotify) ---- */

struct policy_watch {
	int wd;
	char name[256];		/* a watched file's name in its directory; "" for a dir */
};

static struct policy_watch *watches;
static size_t n_watches;

static void watch_policies(struct agent *a)
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
static void check_inotify(struct agent *a)
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

static void notify_systemd(void)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len;
	int fd;

	if (!path || (path[0] != '/' && path[0] != '@') ||
	    strlen(path) >= sizeof(sa.sun_path))
		return;
	strcpy(sa.sun_path, path);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	len = offsetof(struct sockaddr_un, sun_path) + strlen(path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (sendto(fd, "READY=1", 7, 0, (struct sockaddr *)&sa, (socklen_t)len) < 0)
		pr_warn("agent", "telling systemd READY=1 failed: %s", strerror(errno));
	close(fd);
}

static void emit_ready(struct agent *a)
{
	const char *names[POLICY_MAX];
	size_t i, confined = 0;

	for (i = 0; i < a->set.n && i < POLICY_MAX; i++)
		names[i] = a->set.v[i]->name;
	for (i = 0; i < a->cgt.n; i++)
		confined += 1;
	events__begin(a, "agent_ready");
	json_str_array(&a->j, "policies", names, a->set.n);
	json_u64(&a->j, "cgroups", confined);
	json_str(&a->j, "cgroup_root", a->cgroot);
	json_str_array(&a->j, "degraded", a->degraded, a->n_degraded);
	json_u64(&a->j, "pid", (uint64_t)getpid());
	json_str(&a->j, "bpffs", a->opt.bpffs);
	json_str(&a->j, "pins", a->rep ? "replaced" : a->adopting ? "adopted" : "created");
	events__emit(a);
	notify_systemd();
}

/*
 * Stop. By default every link and map stays pinned, so the sandboxes stay
 * confined and the next agent adopts them; with detach (--detach-on-exit,
 * or a failed first start) everything is removed, with a detach record per
 * cgroup.
 */
static void agent_cleanup(struct agent *a, bool detach, int sig)
{
	size_t i, n = a->cgt.n;

	if (a->skel) {
		/* Limits are enforcement too: without detach they stay as
		 * written, and the values found stay saved in the pinned
		 * lim_saved map for whoever removes enforcement later. */
		for (i = 0; i < a->cgt.n; i++) {
			if (detach)
				detach_cg(a, &a->cgt.v[i], "agent_exit");
			else
				close_cg(&a->cgt.v[i]);
		}
		for (i = 0; i < a->n_wds; i++) {
			int k;

			if (detach) {
				disarm_wd(a, &a->wds[i]);
				continue;
			}
			for (k = 0; k < WATCH_N_LINKS; k++)
				bpf_link__destroy(a->wds[i].links[k]);
		}
		if (detach) {
			a->scan_gen++;	/* none seen: every OUTSIDE entry goes */
			sweep_outside(a);
		}
		limits__fini(a);
		if (detach)
			for (i = 0; i < a->n_lsm_links; i++)
				if (bpf_link__pin_path(a->lsm_links[i]))
					unlink(bpf_link__pin_path(a->lsm_links[i]));
		lsm__drop(a, false, NULL);
		if (a->ring) {
			events__close_ring(a);
			events__begin(a, "agent_stop");
			if (sig)
				json_u64(&a->j, "signal", (uint64_t)sig);
			json_str(&a->j, "enforcement", detach ? "removed" : "kept");
			json_u64(&a->j, "cgroups", detach ? 0 : n);
			events__emit(a);
		}
		if (a->running) {
			a->running = false;
			events__meta_update(a);
		}
		events__close(a);
	}
	/* After the links and the entries; we hold the lock. */
	if (detach && a->pin_fd >= 0)
		pin__remove_all(a->opt.bpffs);
	sandbox_table__free(&a->cgt);
	bpf_link__destroy(a->born_link);
	for (i = 0; i < a->n_wds; i++)
		free(a->wds[i].path);
	free(a->wds);
	free(a->outs);
	if (a->cg_ino_fd >= 0)
		close(a->cg_ino_fd);
	free(a->det);
	free(a->det_seen);
	free(a->old);
	key_set_free(&a->keys_allow);
	key_set_free(&a->keys_meta);
	key_set_free(&a->keys_file);
	key_set_free(&a->keys_unix);
	stockade__destroy(a->skel);
	if (a->pin_fd >= 0)
		close(a->pin_fd);	/* releases the lock */
	if (a->ino_fd >= 0)
		close(a->ino_fd);
	free(watches);
	watches = NULL;
	n_watches = 0;
	policy_set__free(&a->set);
}

/* Take the pin directory, or say who holds it. */
static int pin_take(struct agent *a)
{
	struct agent_meta m = { 0 };
	int err;

	a->pin_fd = pin__dir_open(a->opt.bpffs, true);
	if (a->pin_fd < 0) {
		err = a->pin_fd;
		a->pin_fd = -1;
		return err;
	}
	err = pin__lock(a->pin_fd, true);
	if (err == -EWOULDBLOCK) {
		pin__meta_read(a->opt.bpffs, &m);
		pr_err("agent", "another agent (pid %u) is running on %s; stop it first, or give this one another --bpffs DIR",
		       m.pid, a->opt.bpffs);
		close(a->pin_fd);
		a->pin_fd = -1;
		return -EBUSY;
	}
	return err;
}

/*
 * Map inserts that met a transient ENOMEM and were retried
 * (map_update_retry()): one record per batch, so a pressure that passed
 * is still said.
 */
/* A counter's growth since *seen, said in one record of event: how much
 * (count), the total (total_key), and why. */
static void report_growth(struct agent *a, const char *event, uint64_t now,
			  uint64_t *seen, const char *total_key, const char *reason)
{
	if (now == *seen)
		return;
	events__begin(a, event);
	json_u64(&a->j, "count", now - *seen);
	json_u64(&a->j, total_key, now);
	json_str(&a->j, "reason", reason);
	*seen = now;
	events__emit(a);
}

/* Map inserts retried after a transient ENOMEM (agent/bpfutil.h), and new
 * cgroups the safety scan found before inotify told of them. */
static void report_map_retries(struct agent *a)
{
	report_growth(a, "map_retry", bpfutil_enomem_retries, &a->retries_seen,
		      "retries_total", "enomem");
	report_growth(a, "scan_found", a->scan_found, &a->scan_found_seen,
		      "found_total", "missed_by_inotify");
}

/* ---- the main loop (agent/loop.h) ---- */

/*
 * What wakes the agent, each an fd in one epoll set: the signals
 * (signalfd), the ring buffer (agent/events.c), inotify on the watched
 * cgroup directories and on the policy files, the limits' inotify and
 * /dev/kmsg (agent/limits.c), and timers: the safety scan, the reload's
 * settling, the limits' next deadline, the ring's coalescing. Nothing else:
 * an idle agent sleeps until one of them is due.
 */
struct agent_loop {
	struct agent *a;
	struct loop *l;
	struct loop_source *scan, *settle;
	int stop_signal;	/* SIGTERM or SIGINT: the loop has ended */
	bool reload_signal;	/* the settle timer runs a SIGHUP's reload */
};

static int timer_armed(int err, const char *what)
{
	if (err)
		pr_err("agent", "arming the %s timer failed: %s; stopping the agent",
		       what, strerror(-err));
	return err;
}

static int on_signal(struct loop_source *s, const struct signalfd_siginfo *si,
		     void *userdata)
{
	struct agent_loop *al = userdata;

	(void)s;
	if (si->ssi_signo != SIGHUP) {
		al->stop_signal = (int)si->ssi_signo;
		loop__exit(al->l, 0);
		return 0;
	}
	/*
	 * Reload at once, from the settle timer's next turn rather than
	 * here: a SIGTERM read along with it still stops the agent without
	 * reloading first (both pending at the end of start-up always did).
	 * It takes the place of a settling inotify reload: the files are
	 * read now.
	 */
	al->reload_signal = true;
	al->a->reload_at_ms = 0;
	return timer_armed(loop__timer_in(al->settle, 0), "reload");
}

static int on_settle(struct loop_source *s, uint32_t revents, void *userdata)
{
	struct agent_loop *al = userdata;
	const char *trigger = al->reload_signal ? "signal" : "inotify";

	(void)s;
	(void)revents;
	al->reload_signal = false;
	al->a->reload_at_ms = 0;
	reload(al->a, trigger);
	return 0;
}

static int on_policy_inotify(struct loop_source *s, uint32_t revents, void *userdata)
{
	struct agent_loop *al = userdata;

	(void)s;
	(void)revents;
	check_inotify(al->a);
	/* A SIGHUP's reload, due at once, reads the change too. */
	if (!al->a->reload_at_ms || al->reload_signal)
		return 0;
	return timer_armed(loop__timer_at(al->settle, (uint64_t)al->a->reload_at_ms * 1000),
			   "reload");
}

static int on_cg_inotify(struct loop_source *s, uint32_t revents, void *userdata)
{
	struct agent_loop *al = userdata;

	(void)s;
	(void)revents;
	drain_cg_inotify(al->a);	/* a pending cgroup waits */
	return 0;
}

static int on_scan(struct loop_source *s, uint32_t revents, void *userdata)
{
	struct agent_loop *al = userdata;
	int err;

	(void)revents;
	/* SCAN_INTERVAL_MS from this scan's start, however long it takes. */
	err = timer_armed(loop__timer_in(s, SCAN_INTERVAL_MS * 1000ULL), "scan");
	if (err)
		return err;
	/* A failed attach is retried next scan; the cgroup is still
	 * confined by inheritance or the ancestor walk where it has a
	 * confined ancestor. */
	scan(al->a);
	report_map_retries(al->a);
	return 0;
}

/* After each turn: an overflowed inotify queue (in any turn's
 * drain_cg_inotify(), a scan's or a reload's included) asks for a scan. */
static int on_turn(struct loop *l, void *userdata)
{
	struct agent_loop *al = userdata;

	(void)l;
	if (!al->a->rescan)
		return 0;
	return timer_armed(loop__timer_in(al->scan, 0), "scan");
}

static int agent_loop_init(struct agent_loop *al, struct agent *a)
{
	const char *step = "epoll_create1";
	int err;

	al->a = a;
	err = loop__new(&al->l);
	if (err)
		goto fail_err;
	step = "signalfd";
	/* Before the others: signals first in any turn (LOOP_PRIO_FIRST),
	 * the inotify sources just before them (a SIGHUP of the same turn
	 * then takes the place of their settling reload). */
	if (!loop__add_signals(al->l, &agent_sigs, LOOP_PRIO_FIRST + 1, on_signal, al))
		goto fail;
	step = "inotify (cgroups)";
	if (a->cg_ino_fd >= 0 &&
	    !loop__add_io(al->l, a->cg_ino_fd, LOOP_PRIO_FIRST, on_cg_inotify, al))
		goto fail;
	step = "inotify (policy files)";
	if (a->ino_fd >= 0 &&
	    !loop__add_io(al->l, a->ino_fd, LOOP_PRIO_FIRST, on_policy_inotify, al))
		goto fail;
	step = "timerfd_create";
	al->settle = loop__add_timer(al->l, LOOP_PRIO_NORMAL, on_settle, al);
	al->scan = al->settle ? loop__add_timer(al->l, LOOP_PRIO_NORMAL, on_scan, al) : NULL;
	if (!al->scan)
		goto fail;
	err = loop__add_post(al->l, on_turn, al);
	if (err)
		goto fail_err;
	err = events__loop_add(a, al->l);
	if (!err)
		err = limits__loop_add(a, al->l);
	if (err)
		return err;	/* said */
	/* The first turn scans: whatever inotify could not report between
	 * the first scan and agent_ready. */
	return timer_armed(loop__timer_in(al->scan, 0), "scan");
fail:
	err = -errno;
fail_err:
	pr_err("agent", "setting up the main loop failed at %s: %s; raise fs.inotify.max_user_instances or RLIMIT_NOFILE if it is EMFILE",
	       step, strerror(-err));
	return err;
}

int agent__run(const struct agent_opts *opt)
{
	struct policy_diag diag = { 0 };
	struct agent_loop al = { 0 };
	struct agent *a;
	bool detach = false, ready = false;
	size_t i;
	int err;

	agent__signals_init();	/* main() did already; again for other callers */
	/* ~100 KiB of policy tables: the heap, not the stack. */
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->opt = *opt;
	a->pin_fd = -1;
	a->ino_fd = -1;
	/* Before the first scan: the watched directories' watches go on it. */
	a->cg_ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (a->cg_ino_fd < 0)
		pr_warn("cgroup", "inotify_init1 failed: %s; new cgroups are classified by the periodic scan only (every %d s), pending until then",
			strerror(errno), SCAN_INTERVAL_MS / 1000);

	err = policy_set__load(opt->policy_paths, opt->n_policy_paths, &a->set,
			       &diag);
	for (i = 0; i < diag.n; i++)
		pr_err("policy", "%s", diag.msgs[i]);
	policy_diag__free(&diag);
	if (err) {
		pr_err("policy", "the policy set is invalid; nothing was applied");
		goto cleanup;
	}
	if (!has_caps()) {
		pr_err("agent", "not enough privilege: run as root, or with CAP_BPF, CAP_PERFMON and CAP_NET_ADMIN (or CAP_SYS_ADMIN)");
		err = -EPERM;
		goto cleanup;
	}
	err = cgroup_root__find(opt->cgroup_root, a->cgroot, sizeof(a->cgroot));
	if (err)
		goto cleanup;
	err = pin_take(a);
	if (err)
		goto cleanup;
	a->adopting = pin__has_maps(opt->bpffs);
	/* A first start that fails removes what it made: nothing half-applied.
	 * An adopting one leaves the pins as they are: still enforcing; so
	 * does one that finds an interrupted replacement (its whole state may
	 * sit in a staging directory, which pin__remove_all() would take). */
	detach = !a->adopting && !replace__interrupted(opt->bpffs);
	/* Limits this host cannot apply fail the start like a bad policy. */
	err = limits__check(a);
	if (err)
		goto cleanup;

	log_setup_libbpf();
	err = load_bpf(a);
	if (a->rep) {
		/* Replacing: fresh maps, nothing adopted; and nothing removed
		 * on failure, the old state's and ours confine together. */
		a->adopting = false;
		detach = false;
	}
	if (err)
		goto cleanup;
	born_attach(a);
	err = events__open(a);
	if (err)
		goto cleanup;
	a->started_ns = (int64_t)time(NULL) * 1000000000;
	a->running = true;
	events__meta_update(a);
	if (a->adopting) {
		err = read_old_policies(a);
		if (err)
			goto cleanup;
		/* Records written while no agent ran, before anything new. */
		events__drain(a);
	}
	if (a->rep) {
		err = replace__carry(a);
		if (err)
			goto cleanup;
	}
	err = assign_ids(a);
	if (err)
		goto cleanup;
	err = fill_policies(a, NULL);
	if (!err)
		err = flip_slots(a, NULL);	/* adopted cgroups switch here */
	if (err)
		goto cleanup;
	emit_policies(a);
	err = limits__init(a);
	if (err)
		goto cleanup;

	err = scan(a);
	if (err) {
		pr_err("agent", a->rep ?
		       "could not confine every selected cgroup; exiting half way through the replacement: every cgroup stays confined, by the old programs or the new ones; start the agent again to finish it" :
		       a->adopting ?
		       "could not confine every selected cgroup; exiting, the adopted pins stay in force" :
		       "could not confine every selected cgroup; detaching all and exiting (nothing half-applied)");
		goto cleanup;
	}
	if (a->adopting)
		sweep(a);
	if (a->rep) {
		err = replace__finish(a);
		if (err)
			goto cleanup;
	}
	limits__tick(a);	/* the state file and metrics exist at agent_ready */
	ready = true;
	/* Past the last id in use: a fresh id is one nothing used lately. */
	for (i = 1; i < POLICY_MAX; i++)
		if (a->by_id[i] || (a->old && a->old[i].name[0]))
			a->next_id = (uint32_t)i;
	a->next_id = a->next_id % (POLICY_MAX - 1) + 1;
	watch_policies(a);
	/* Loading parsed the kernel's BTF (megabytes) and freed it; glibc
	 * keeps freed heap for reuse, which the agent never needs again at
	 * that size. Give it back, so the long-running agent's RSS is what
	 * it uses (README "Performance": idle RSS). */
	malloc_trim(0);
	report_map_retries(a);
	err = agent_loop_init(&al, a);
	if (err)
		goto cleanup;
	emit_ready(a);

	err = loop__run(al.l);
	if (err < 0)
		pr_err("agent", "the main loop failed: %s; exiting",
		       strerror(-err));
	detach = opt->detach_on_exit;
	if (al.stop_signal)
		pr_info("agent", "signal %d: %s", al.stop_signal,
			detach ? "detaching everything and exiting (--detach-on-exit)" :
				 "exiting; the sandboxes stay confined by the pinned programs");
cleanup:
	if (!ready && a->pin_fd < 0)
		detach = false;	/* not ours to remove */
	agent_cleanup(a, detach, al.stop_signal);
	/* After the cleanup: its sources point into the agent's rooms. */
	loop__free(al.l);
	replace__free(a);
	free(a);
	return err;
}
