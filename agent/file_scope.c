// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Per-execution folders: file_cg_rules (agent/file_scope.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "daemon.h"
#include "bpfutil.h"
#include "file_rules.h"
#include "file_scope.h"
#include "log.h"
#include "manifest.h"
#include "sandbox.h"
#include "stockade.skel.h"

static int scope_fd(struct agent *a)
{
	return bpf_map__fd(a->skel->maps.file_cg_rules);
}

static uint64_t key_cg(const struct file_cg_key *k)
{
	return (uint64_t)k->cg_hi << 32 | k->cg_lo;
}

/* Longest prefix first: a scope written part way then answers each path
 * as the whole scope would, or (no entry yet covers it, its "/" comes
 * last) not at all, which sends the lookup to the base scope. */
static int by_len_desc(const void *x, const void *y)
{
	const struct file_cg_key *a = x, *b = y;

	return a->prefixlen < b->prefixlen ? 1 : a->prefixlen > b->prefixlen ? -1 : 0;
}

/* The same order for the compiled entries (file_key: same prefixes). */
static int entry_len_desc(const void *x, const void *y)
{
	const struct file_entry *a = x, *b = y;

	return a->key.prefixlen < b->key.prefixlen ? 1 :
	       a->key.prefixlen > b->key.prefixlen ? -1 : 0;
}

/* The reverse, for deleting: "/" first, so that what is left of a scope
 * being removed still answers as the whole scope would, or not at all. */
static int by_len_asc(const void *x, const void *y)
{
	return by_len_desc(y, x);
}

static void delete_keys(struct agent *a, struct file_cg_key *k, size_t n)
{
	size_t i;

	qsort(k, n, sizeof(*k), by_len_asc);
	for (i = 0; i < n; i++)
		bpf_map_delete_elem(scope_fd(a), &k[i]);
	file_gen_bump(a);
}

/*
 * The compiled scope of cg under id, into the map, longest prefix first.
 * On any failure what was written goes again ("/" first): the cgroup is
 * then judged by the base scope, which opens no folder. Returns 0 or a
 * negative errno; *written whether the scope is in.
 */
static int write_scope(struct agent *a, const struct policy *p,
		       struct sandbox_cg *cg, uint32_t id, bool *written)
{
	struct file_compiled fc = { 0 };
	struct file_cg_key *keys = NULL;
	char err_msg[POLICY_DIAG_MAX], **homes = NULL;
	size_t i, n_homes = 0, n_done = 0;
	int err;

	*written = false;
	err = file_rules__homes(&homes, &n_homes);
	if (err) {
		pr_err("files", "listing home directories for the protected paths of %s failed: %s",
		       cg->path, strerror(-err));
		goto out;
	}
	err = file_rules__compile_cg(p, id, cg->path, (const char *const *)homes,
				     n_homes, &fc, err_msg, sizeof(err_msg));
	if (err == -ENAMETOOLONG || err == -EINVAL) {
		/* A property of this cgroup's name, not of the set: it stays
		 * confined, on the base scope, which refuses its folders. */
		pr_err("files", "%s: %s", p->name, err_msg);
		err = 0;
		goto out;
	}
	if (err) {
		pr_err("files", "%s: %s", p->name, err_msg);
		goto out;
	}
	keys = calloc(fc.n ? fc.n : 1, sizeof(*keys));
	if (!keys) {
		err = -ENOMEM;
		goto out;
	}
	qsort(fc.v, fc.n, sizeof(*fc.v), entry_len_desc);
	for (i = 0; i < fc.n; i++) {
		if (file_rules__cg_key(&fc.v[i].key, cg->id, &keys[i])) {
			/* A home's protected path too long for a cgroup's key
			 * (the policy's own paths are checked: policy/parse.c). */
			pr_err("files", "%s: a protected path of %.200s does not fit a per-execution rule (at most %d bytes); %s keeps the base scope (no folder)",
			       p->name, fc.v[i].key.path, FILE_CG_PREFIX_MAX, cg->path);
			goto out;
		}
	}
	for (; n_done < fc.n; n_done++) {
		err = map_update_retry(scope_fd(a), &keys[n_done], &fc.v[n_done].val, BPF_ANY);
		if (err)
			break;
	}
	if (err) {
		pr_err("files", "writing the per-execution file scope of %s (policy %s) failed: %s (file_cg_rules full? at most %d entries, %zu for this cgroup)",
		       cg->path, p->name, strerror(-err), FILE_MAX_RULES, fc.n);
		delete_keys(a, keys, n_done);
		goto out;
	}
	*written = true;
out:
	file_gen_bump(a);
	free(keys);
	file_compiled__free(&fc);
	for (i = 0; i < n_homes; i++)
		free(homes[i]);
	free(homes);
	return err;
}

/* Do p's write folders for cg meet those of another sandbox with folders
 * of its own? Two executions must never share one (a {cgroup} that names
 * two cgroups alike, a cgroup made below another's folder): the second
 * keeps the base scope, and the agent says which and why. */
static const struct sandbox_cg *collides(struct agent *a, const struct policy *p,
					 const struct sandbox_cg *cg, char *mine,
					 char *theirs, size_t len)
{
	size_t i, x, y;

	for (i = 0; i < a->cgt.n; i++) {
		const struct sandbox_cg *o = &a->cgt.v[i];
		const struct policy *q;

		if (o == cg || !o->file_scope_in || !o->direct)
			continue;
		q = policy_table__policy(&a->pt, &a->set, o->file_scope - 1);
		if (!q)
			continue;
		for (x = 0; x < p->files.n_write; x++) {
			if (!policy_tmpl__has(p->files.write[x].path) ||
			    policy_tmpl__expand(p->files.write[x].path, cg->path, mine, len) < 0)
				continue;
			for (y = 0; y < q->files.n_write; y++) {
				if (!policy_tmpl__has(q->files.write[y].path) ||
				    policy_tmpl__expand(q->files.write[y].path, o->path, theirs, len) < 0)
					continue;
				if (mf_path_overlap(mine, theirs))
					return o;
			}
		}
	}
	return NULL;
}

int file_scope__put(struct agent *a, struct sandbox_cg *cg, uint32_t id)
{
	char mine[PATH_MAX], theirs[PATH_MAX];
	const struct sandbox_cg *o;
	const struct policy *p;
	bool written;
	int err;

	if (!cg->direct || cg->file_scope == id + 1)
		return 0;
	p = policy_table__policy(&a->pt, &a->set, id);
	if (!p || !policy__has_templates(p))
		return 0;
	o = collides(a, p, cg, mine, theirs, sizeof(mine));
	if (o) {
		pr_err("files", "%s: the per-execution folder %s of %s meets %s, the folder of %s: two executions must not share one, so %s keeps the base scope (no folder); write {cgroup_path} for folders no two cgroups can share",
		       p->name, mine, cg->path, theirs, o->path, cg->path);
		cg->file_scope = id + 1;	/* judged, once: no scope */
		cg->file_scope_in = false;
		return 0;
	}
	err = write_scope(a, p, cg, id, &written);
	if (!err) {
		cg->file_scope = id + 1;
		cg->file_scope_in = written;
	}
	return err;
}

int file_scope__put_slot(struct agent *a, uint32_t slot, uint32_t id)
{
	size_t i;
	int err = 0;

	for (i = 0; !err && i < a->cgt.n; i++)
		if (a->cgt.v[i].slot == slot)
			err = file_scope__put(a, &a->cgt.v[i], id);
	return err;
}

/* Does a tracked cgroup judge by the scope k belongs to? */
static bool key_in_use(struct agent *a, const struct file_cg_key *k)
{
	const struct sandbox_cg *cg = agent__find_cg(a, key_cg(k));

	return cg && cg->direct && cg->root_id == cg->id && cg->file_scope_in &&
	       cg->policy_id == k->policy_id && cg->file_scope == k->policy_id + 1;
}

size_t file_scope__sync(struct agent *a)
{
	struct key_set gone = { 0 };
	struct file_cg_key key, next;
	size_t i, n = 0;
	int err = 0, fd = scope_fd(a);

	a->scope_stale = false;
	/* A scope a cgroup no longer judges by (it moved, or is no longer
	 * selected itself) goes below: it must be written again when it is
	 * wanted again. */
	for (i = 0; i < a->cgt.n; i++) {
		struct sandbox_cg *cg = &a->cgt.v[i];

		if (cg->file_scope && (!cg->direct || cg->file_scope != cg->policy_id + 1)) {
			cg->file_scope = 0;
			cg->file_scope_in = false;
		}
	}
	for (i = 0; i < a->cgt.n; i++)
		file_scope__put(a, &a->cgt.v[i], a->cgt.v[i].policy_id);
	/* Collected first: deleting while walking an LPM trie restarts the
	 * walk. */
	err = bpf_map_get_next_key(fd, NULL, &next);
	while (!err) {
		if (!key_in_use(a, &next) && key_set_add(&gone, &next, sizeof(next)))
			break;
		key = next;
		err = bpf_map_get_next_key(fd, &key, &next);
	}
	n = gone.n;
	delete_keys(a, (struct file_cg_key *)gone.v, gone.n);
	key_set_free(&gone);
	return n;
}

void file_scope__retire(struct agent *a, const bool *retired)
{
	retire_keys(scope_fd(a), sizeof(struct file_cg_key),
		    offsetof(struct file_cg_key, policy_id), retired, POLICY_MAX);
	file_gen_bump(a);
}
