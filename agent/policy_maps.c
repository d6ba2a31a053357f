// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The policy table (agent/policy_table.h) read from the pins and written
 * into the maps, with the rules its ids name: policies, policy_names,
 * policy_slots, net_allow, net_exact, net_meta, file_rules, unix_allow (fill, flip,
 * free, retire, sweep): agent/agent_int.h. What an id or a slot is, is
 * the table's to decide; this file only writes it.
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
#include "manifest.h"
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

/* ---- the policy table, from the pins and into them ---- */

/* What the pins said each policy id meant, before we write anything. */
int read_old_policies(struct agent *a)
{
	int fd = bpf_map__fd(a->skel->maps.policy_names);
	struct policy_info *old;
	__u32 id;

	old = a->pt.old = calloc(POLICY_MAX, sizeof(*old));
	if (!old)
		return -ENOMEM;
	for (id = 0; id < POLICY_MAX; id++) {
		if (bpf_map_lookup_elem(fd, &id, &old[id]))
			memset(&old[id], 0, sizeof(old[id]));
		old[id].name[PIN_POLICY_NAME_LEN - 1] = '\0';
	}
	return 0;
}

/*
 * Give each policy its id and its slot, at a start: ids by name and
 * content, slots by name, from what the pins hold (a->pt.old, and the
 * `policy_slots` map read here): agent/policy_table.h.
 */
int assign_ids(struct agent *a)
{
	int fd = bpf_map__fd(a->skel->maps.policy_slots);
	__u32 s;
	int err;

	if (a->set.n >= POLICY_MAX) {
		pr_err("agent", "%zu policies; at most %d fit", a->set.n, POLICY_MAX - 1);
		return -E2BIG;
	}
	err = policy_table__assign_ids(&a->pt, &a->set);
	if (err) {
		pr_err("agent", "no free policy id: the pins under %s still name many removed policies; run `stockade detach --all --bpffs %s` while no agent runs",
		       a->pin_dir, a->pin_dir);
		return err;
	}
	for (s = 0; s < POLICY_SLOTS; s++)
		if (bpf_map_lookup_elem(fd, &s, &a->pt.slot_id[s]))
			a->pt.slot_id[s] = POLICY_ID_CONFLICT;
	err = policy_table__assign_slots(&a->pt, &a->set);
	if (err)
		pr_err("agent", "no free policy slot: the pins under %s still hold many removed policies; run `stockade detach --all --bpffs %s` while no agent runs",
		       a->pin_dir, a->pin_dir);
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
	struct policy_table *t = &a->pt;
	__u32 s = POLICY_SLOT_CONFLICT, id = POLICY_ID_CONFLICT;
	size_t i;
	int err = 0;

	if (!only && bpf_map_update_elem(fd, &s, &id, BPF_ANY))
		err = -errno;
	for (i = 0; i < a->set.n; i++) {
		if (only && !only[i])
			continue;
		s = t->pol_slot[i];
		id = t->pol_id[i];
		if (t->slot_id[s] == id)
			continue;
		t->switch_ns[i] = clock_now_ns(CLOCK_REALTIME);
		if (bpf_map_update_elem(fd, &s, &id, BPF_ANY)) {
			err = err ?: -errno;
			pr_err("policy", "%s: switching its slot %u to policy id %u failed: %s; its cgroups keep the rules they had",
			       a->set.v[i]->name, s, id, strerror(errno));
			continue;
		}
		t->slot_id[s] = id;
	}
	return err;
}

/* After a grace period: free the slots that neither a policy in force nor
 * a tracked cgroup holds (removed policies), so they resolve to the
 * conflict id and can be given out again. */
void free_slots(struct agent *a)
{
	int fd = bpf_map__fd(a->skel->maps.policy_slots);
	bool unused[POLICY_SLOTS];
	__u32 s, none = POLICY_ID_CONFLICT;

	policy_table__unused_slots(&a->pt, a->set.n, &a->cgt, unused);
	for (s = 1; s < POLICY_SLOTS; s++)
		if (unused[s] && !bpf_map_update_elem(fd, &s, &none, BPF_ANY))
			a->pt.slot_id[s] = POLICY_ID_CONFLICT;
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
		      (policy__has_templates(p) ? SANDBOX_FILE_PER_CGROUP : 0) |
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

/*
 * After every write of file_rules, file_cg_rules (agent/file_scope.c) or
 * policies, never before: an allow the BPF-LSM programs cached
 * (file_dcache, include/file.h) was judged under the generation read
 * before their lookups, so one that saw the old rules is stale once the
 * bump lands.
 */
void file_gen_bump(struct agent *a)
{
	__atomic_fetch_add(&a->skel->data->file_gen, 1, __ATOMIC_SEQ_CST);
}

/*
 * What `stockade manifest` reads of p that the pins do not hold (its
 * rules' reasons, the file scopes and overrides, category, file, run
 * time): DIR/policies/<hash>.policy, DIR the --state file's directory
 * (bpffs holds no regular file). Named by the content hash that
 * policy_names pins, so a reader matches it to what is in force, and a
 * stale one cannot pass for it. A failure costs the manifest only.
 */
static void write_manifest_blob(const struct agent *a, const struct policy *p)
{
	char dir[PATH_MAX], path[PATH_MAX + 64], tmp[PATH_MAX + 80], *slash, *buf;
	size_t len;
	FILE *f;
	int ok;

	snprintf(dir, sizeof(dir), "%s", a->opt.state_path ?: LIMITS_STATE_DEFAULT);
	slash = strrchr(dir, '/');
	if (slash && slash != dir)
		*slash = '\0';
	else
		snprintf(dir, sizeof(dir), ".");
	mkdir(dir, 0755);
	snprintf(path, sizeof(path), "%s/" MF_BLOB_DIR, dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/" MF_BLOB_DIR "/%016llx.policy", dir,
		 (unsigned long long)p->hash);
	snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
	if (mf_blob_write(p, &buf, &len))
		return;
	f = fopen(tmp, "we");
	ok = f && fwrite(buf, 1, len, f) == len;
	if (f && fclose(f))
		ok = 0;
	if (!ok || rename(tmp, path)) {
		pr_warn("policy", "%s: writing %s for `stockade manifest` failed: %s; the manifest will leave out its rules and scopes. Fix: make %s writable, or pass --state FILE in a writable directory",
			p->name, path, strerror(errno), dir);
		unlink(tmp);
	}
	free(buf);
}

/* Write the rules of every policy of a->set, or of those only[] marks
 * (a reload: new ids that nothing uses yet). */
int fill_policies(struct agent *a, const bool *only)
{
	struct policy_conf conf = { .mode = SANDBOX_ENFORCE, .flags = 0 };
	int allow_fd = bpf_map__fd(a->skel->maps.net_allow);
	int exact_fd = bpf_map__fd(a->skel->maps.net_exact);
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
		id = a->pt.pol_id[i];
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
		for (j = 0; !err && j < c.n_allow; j++) {
			struct net_xkey x;

			if (!net_rules__exact_key(&c, &c.allow[j], &x))
				continue;
			err = bpf_map_update_elem(exact_fd, &x, &c.allow[j].val, BPF_ANY);
			if (!err && keep)
				err = key_set_add(&a->keys_exact, &x, sizeof(x));
		}
		for (j = 0; !err && j < c.n_meta; j++) {
			err = bpf_map_update_elem(meta_fd, &c.meta[j].key,
						  &c.meta[j].verdict, BPF_ANY);
			if (!err && keep)
				err = key_set_add(&a->keys_meta, &c.meta[j].key,
						  sizeof(c.meta[j].key));
		}
		/* A reload: the per-execution folders of its cgroups under
		 * the new id, before its slot flips to it. */
		if (!err && only)
			err = file_scope__put_slot(a, policy_table__slot_of(&a->pt, id), id);
		conf_of(p, &conf);
		memcpy(conf.net_xlen, c.xlen, sizeof(conf.net_xlen));
		memcpy(conf.net_nxlen, c.nxlen, sizeof(conf.net_nxlen));
		/* The policy's settings go in last: until then, id has no
		 * entry and its programs would deny. */
		if (!err)
			err = bpf_map_update_elem(conf_fd, &id, &conf, BPF_ANY);
		if (!err)
			err = bpf_map_update_elem(names_fd, &id, &a->pt.info[i], BPF_ANY);
		if (!err)
			write_manifest_blob(a, p);
		if (err)
			pr_err("policy", "%s: writing its rules into the kernel maps failed: %s",
			       p->name, err == -ENOMEM ? strerror(ENOMEM) : strerror(errno));
		net_compiled__free(&c);
	}
cleanup:
	/* Written or half written: either way not what was cached. */
	file_gen_bump(a);
	for (i = 0; i < n_homes; i++)
		free(homes[i]);
	free(homes);
	return err;
}

/* The `policy` record's exec fields: whether files the sandbox can write
 * may run (W^X off), and whether JIT memory is refused. */
static void emit_exec_fields(struct agent *a, const struct policy *p)
{
	json_bool(&a->ev.j, "exec_allow_written", p->exec.allow_written);
	json_str(&a->ev.j, "anon_exec", p->exec.anon_deny ? "deny" : "allow");
	json_str(&a->ev.j, "exec_hash", p->exec.hash_sha256 ? "sha256" : "none");
}

/* What `stockade register check` judges a policy by from the log: its
 * category, and which limits it sets. */
static void emit_register_fields(struct agent *a, const struct policy *p)
{
	const char *lim[4];
	size_t n = 0;

	if (p->category)
		json_str(&a->ev.j, "category", p->category);
	if (p->limits.has_cpu)
		lim[n++] = "cpu";
	if (p->limits.has_memory)
		lim[n++] = "memory";
	if (p->limits.has_pids)
		lim[n++] = "pids";
	if (p->limits.has_runtime)
		lim[n++] = "runtime";
	json_str_array(&a->ev.j, "limits", lim, n);
}

/* The `policy` record of set.v[i]: what is in force, by content. */
void emit_policy(struct agent *a, size_t i)
{
	const struct policy_info *in = &a->pt.info[i];
	char hash[20];

	snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)in->hash);
	events__begin(&a->ev, "policy");
	json_str(&a->ev.j, "policy", a->set.v[i]->name);
	json_u64(&a->ev.j, "policy_id", a->pt.pol_id[i]);
	json_u64(&a->ev.j, "slot", a->pt.pol_slot[i]);
	json_str(&a->ev.j, "file", a->set.v[i]->file);
	json_str(&a->ev.j, "hash", hash);
	json_u64(&a->ev.j, "generation", in->generation);
	json_str(&a->ev.j, "mode", in->mode == SANDBOX_AUDIT ? "audit" : "enforce");
	emit_exec_fields(a, a->set.v[i]);
	emit_register_fields(a, a->set.v[i]);
	events__emit(&a->ev);
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
	for (key = 1; key < POLICY_MAX; key++) {
		__u32 id = (__u32)key;

		if (!policy_table__removed(&a->pt, id))
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
	n_rules += sweep_keys(bpf_map__fd(a->skel->maps.net_exact), &a->keys_exact,
			      sizeof(struct net_xkey));
	n_rules += sweep_keys(bpf_map__fd(a->skel->maps.net_meta), &a->keys_meta,
			      sizeof(struct net_key));
	n_rules += sweep_keys(bpf_map__fd(a->skel->maps.file_rules), &a->keys_file,
			      sizeof(struct file_key));
	n_rules += sweep_keys(bpf_map__fd(a->skel->maps.unix_allow), &a->keys_unix,
			      bpf_map__key_size(a->skel->maps.unix_allow));
	sweep_ids(a);
	file_gen_bump(a);
	key_set_free(&a->keys_allow);
	key_set_free(&a->keys_exact);
	key_set_free(&a->keys_meta);
	key_set_free(&a->keys_file);
	key_set_free(&a->keys_unix);
	return n_rules;
}

/* Remove what the retired policy ids held: rules, settings, names. */
void retire_ids(struct agent *a, const bool *retired)
{
	struct policy_conf none = { .mode = SANDBOX_ENFORCE, .flags = 0 };
	struct policy_info unused;
	__u32 id;

	retire_keys(bpf_map__fd(a->skel->maps.net_allow), sizeof(struct net_key),
		    offsetof(struct net_key, policy_id), retired, POLICY_MAX);
	retire_keys(bpf_map__fd(a->skel->maps.net_exact), sizeof(struct net_xkey),
		    offsetof(struct net_xkey, policy_id), retired, POLICY_MAX);
	retire_keys(bpf_map__fd(a->skel->maps.net_meta), sizeof(struct net_key),
		    offsetof(struct net_key, policy_id), retired, POLICY_MAX);
	retire_keys(bpf_map__fd(a->skel->maps.file_rules), sizeof(struct file_key),
		    offsetof(struct file_key, policy_id), retired, POLICY_MAX);
	retire_keys(bpf_map__fd(a->skel->maps.unix_allow), sizeof(struct unix_key),
		    offsetof(struct unix_key, policy_id), retired, POLICY_MAX);
	file_scope__retire(a, retired);
	memset(&unused, 0, sizeof(unused));
	for (id = 1; id < POLICY_MAX; id++) {
		if (!retired[id])
			continue;
		bpf_map_update_elem(bpf_map__fd(a->skel->maps.policies), &id, &none, BPF_ANY);
		bpf_map_update_elem(bpf_map__fd(a->skel->maps.policy_names), &id, &unused,
				    BPF_ANY);
	}
	file_gen_bump(a);
}

int slot_put(struct agent *a, uint32_t slot, uint32_t id)
{
	return bpf_map_update_elem(bpf_map__fd(a->skel->maps.policy_slots), &slot, &id,
				   BPF_ANY) ? -errno : 0;
}
