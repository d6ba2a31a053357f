// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Per-execution folders: file_cg_rules (agent/file_scope.h). */
#include <errno.h>
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

/* The compiled scope of cg under id, into the map. */
static int write_scope(struct agent *a, const struct policy *p,
		       struct sandbox_cg *cg, uint32_t id)
{
	struct file_compiled fc = { 0 };
	struct file_cg_key k;
	char err_msg[POLICY_DIAG_MAX], **homes = NULL;
	size_t i, n_homes = 0;
	int err;

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
	for (i = 0; !err && i < fc.n; i++) {
		err = file_rules__cg_key(&fc.v[i].key, cg->id, &k);
		if (!err)
			err = map_update_retry(scope_fd(a), &k, &fc.v[i].val, BPF_ANY);
	}
	if (err)
		pr_err("files", "writing the per-execution file scope of %s (policy %s) failed: %s (file_cg_rules full? at most %d entries, about %zu per cgroup of this policy)",
		       cg->path, p->name, strerror(err < 0 ? -err : errno), FILE_MAX_RULES, fc.n);
out:
	file_compiled__free(&fc);
	for (i = 0; i < n_homes; i++)
		free(homes[i]);
	free(homes);
	return err;
}

int file_scope__put(struct agent *a, struct sandbox_cg *cg, uint32_t id)
{
	const struct policy *p;
	int err;

	if (!cg->direct || cg->root_id != cg->id || cg->file_scope == id + 1)
		return 0;
	p = policy_table__policy(&a->pt, &a->set, id);
	if (!p || !policy__has_templates(p))
		return 0;
	err = write_scope(a, p, cg, id);
	if (!err)
		cg->file_scope = id + 1;
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

	return cg && cg->direct && cg->root_id == cg->id &&
	       cg->policy_id == k->policy_id && cg->file_scope == k->policy_id + 1;
}

size_t file_scope__sync(struct agent *a)
{
	struct key_set gone = { 0 };
	struct file_cg_key key, next;
	size_t i, n = 0;
	int err = 0, fd = scope_fd(a);

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
	for (i = 0; i < gone.n; i++)
		n += !bpf_map_delete_elem(fd, gone.v + i * sizeof(key));
	key_set_free(&gone);
	return n;
}

void file_scope__retire(struct agent *a, const bool *retired)
{
	retire_keys(scope_fd(a), sizeof(struct file_cg_key),
		    offsetof(struct file_cg_key, policy_id), retired, POLICY_MAX);
}
