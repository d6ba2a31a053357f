// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Policy ids and slots, and the rules they name written into the maps
 * (policies, policy_names, policy_slots, net_allow, net_meta, file_rules,
 * unix_allow): agent/agent_int.h.
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

/* ---- policy ids and rules ---- */

/* What the pins said each policy id meant, before we write anything. */
int read_old_policies(struct agent *a)
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
uint32_t slot_of(struct agent *a, uint32_t id)
{
	if (id == POLICY_ID_CONFLICT || id >= POLICY_MAX || !a->by_id[id])
		return POLICY_SLOT_CONFLICT;
	return a->pol_slot[a->by_id[id] - 1];
}

/* A slot that no policy in force holds and none of taken[] (the plan of
 * a reload) either: its value is 0, so no entry can still point at one
 * that resolves to a live policy. 0 when none is free. */
uint32_t free_slot(struct agent *a, const bool *taken)
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
int flip_slots(struct agent *a, const bool *only)
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
void free_slots(struct agent *a)
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
int assign_ids(struct agent *a)
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

int key_set_add(struct key_set *ks, const void *key, size_t size)
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

void key_set_free(struct key_set *ks)
{
	free(ks->v);
	memset(ks, 0, sizeof(*ks));
}

/*
 * Delete every entry of a pinned rule map whose key this agent did not
 * write: rules of an earlier policy set. Called once the new entries are
 * in, so no rule ever disappears before its replacement is there.
 */
size_t sweep_keys(int fd, struct key_set *ks, size_t size)
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

/* exec's settings in policy_conf.flags (include/sandbox.h). */
static __u32 exec_flags(const struct policy *p)
{
	return (p->exec.anon_deny ? SANDBOX_ANON_EXEC_DENY : 0) |
	       (p->exec.allow_written ? SANDBOX_EXEC_WRITTEN : 0);
}

/* A policy's settings for the `policies` map (include/sandbox.h). */
static void conf_of(const struct policy *p, struct policy_conf *conf)
{
	conf->mode = p->mode == POLICY_AUDIT ? SANDBOX_AUDIT : SANDBOX_ENFORCE;
	conf->flags = (p->net.default_allow ? SANDBOX_NET_DEFAULT_ALLOW : 0) |
		      (p->net.raw_sockets ? SANDBOX_RAW_SOCKETS : 0) |
		      (p->net.icmp ? SANDBOX_ICMP : 0) |
		      (p->namespaces.user ? SANDBOX_USERNS : 0) |
		      (p->perf_allow ? SANDBOX_PERF : 0) |
		      (p->userfaultfd ? SANDBOX_USERFAULTFD : 0) |
		      exec_flags(p);
	conf->netlink = p->net.netlink;
	conf->caps = policy_caps(p);
}

/* Id 0: a cgroup claimed by two policies; deny-all, enforce, with a file
 * scope of nothing: its "/" entry allows no access. */
static int fill_conflict(struct agent *a, bool keep)
{
	struct policy_conf conf = { .mode = SANDBOX_ENFORCE, .flags = 0 };
	struct file_entry none = { .val.flags = 0 };
	__u32 id = POLICY_ID_CONFLICT;
	int err;

	err = bpf_map_update_elem(bpf_map__fd(a->skel->maps.policies), &id, &conf, BPF_ANY);
	if (err)
		return err;
	none.key.prefixlen = 32 + 8;
	none.key.policy_id = POLICY_ID_CONFLICT;
	none.key.path[0] = '/';
	err = bpf_map_update_elem(bpf_map__fd(a->skel->maps.file_rules), &none.key,
				  &none.val, BPF_ANY);
	if (!err && keep)
		err = key_set_add(&a->keys_file, &none.key, sizeof(none.key));
	return err;
}

/* Write the rules of every policy of a->set, or of those only[] marks
 * (a reload: new ids that nothing uses yet). */
int fill_policies(struct agent *a, const bool *only)
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
	if (!only)
		err = fill_conflict(a, keep);
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
		conf_of(p, &conf);
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

/* The `policy` record's exec fields: whether files the sandbox can write
 * may run (W^X off), and whether JIT memory is refused. */
static void emit_exec_fields(struct agent *a, const struct policy *p)
{
	json_bool(&a->j, "exec_allow_written", p->exec.allow_written);
	json_str(&a->j, "anon_exec", p->exec.anon_deny ? "deny" : "allow");
}

/* The `policy` record of set.v[i]: what is in force, by content. */
void emit_policy(struct agent *a, size_t i)
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
	emit_exec_fields(a, a->set.v[i]);
	events__emit(a);
}

void emit_policies(struct agent *a)
{
	size_t i;

	for (i = 0; i < a->set.n; i++)
		emit_policy(a, i);
}

/* Wait until every program already running has finished (rcu_sync in
 * bpf/lifecycle.bpf.c). */
void rcu_sync(struct agent *a)
{
	int err = bpf_rcu_sync(bpf_map__fd(a->skel->maps.rcu_sync),
			       bpf_map__fd(a->skel->maps.rcu_inner));

	if (err)
		pr_warn("agent", "waiting for running programs failed: %s; paused instead",
			strerror(-err));
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

size_t policy_maps__sweep(struct agent *a)
{
	size_t n_rules = 0;

	rcu_sync(a);
	n_rules += sweep_keys(bpf_map__fd(a->skel->maps.net_allow), &a->keys_allow,
			      sizeof(struct net_key));
	n_rules += sweep_keys(bpf_map__fd(a->skel->maps.net_meta), &a->keys_meta,
			      sizeof(struct net_key));
	n_rules += sweep_keys(bpf_map__fd(a->skel->maps.file_rules), &a->keys_file,
			      sizeof(struct file_key));
	n_rules += sweep_keys(bpf_map__fd(a->skel->maps.unix_allow), &a->keys_unix,
			      bpf_map__key_size(a->skel->maps.unix_allow));
	sweep_ids(a);
	key_set_free(&a->keys_allow);
	key_set_free(&a->keys_meta);
	key_set_free(&a->keys_file);
	key_set_free(&a->keys_unix);
	return n_rules;
}

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
void retire_ids(struct agent *a, const bool *retired)
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

int slot_put(struct agent *a, uint32_t slot, uint32_t id)
{
	return bpf_map_update_elem(bpf_map__fd(a->skel->maps.policy_slots), &slot, &id,
				   BPF_ANY) ? -errno : 0;
}
