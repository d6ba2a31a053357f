// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The setup pass's grants (agent/setup_agent.h, include/setup.h).
 */
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpfutil.h"
#include "cgroup.h"
#include "container.h"
#include "log.h"
#include "names.h"
#include "policy.h"
#include "setup.h"		/* include/: the BPF side's */
#include "setup_agent.h"
#include "stockade.skel.h"

static int grants_fd(const struct setup_ctx *s)
{
	return bpf_map__fd(s->skel->maps.setup_grants);
}

/* The policy in force for slot, or NULL (the conflict slot, none). */
static const struct policy *policy_of_slot(const struct setup_ctx *s, uint32_t slot)
{
	return names__policy(s->names, names__slot_id(s->names, slot));
}

/* setup.pass auto: a selector with a wildcard is a container's kind (one
 * cgroup per container, made by a runtime); a plain path is not. below:
 * may select below rel (a watched directory), else selects rel. */
static bool pass_applies(const struct policy *p, const char *rel, bool below)
{
	size_t j;

	if (!p || p->setup.pass == POLICY_SETUP_OFF)
		return false;
	if (p->setup.pass == POLICY_SETUP_ON)
		return true;
	for (j = 0; j < p->n_cgroups; j++) {
		const char *sel = p->cgroups[j];

		if (select__is_literal(sel))
			continue;
		if (below ? select__prefix_match(sel, rel) : cgroup__match(sel, rel))
			return true;
	}
	/* A container selected in a layout no path form's glob names (a
	 * podman pod's slice, a --cgroup-parent): its runtime makes it as
	 * it makes the others. */
	if (!below && p->n_ctrs) {
		struct container_id cid;

		return !container__resolve(rel, &cid) && cid.path_len == strlen(rel);
	}
	return false;
}

static int put(const struct setup_ctx *s, uint64_t id, const char *rel,
	       uint32_t flags, const struct policy *p)
{
	struct setup_grant g = {
		.deadline_ms = p && p->setup.deadline_ms ? p->setup.deadline_ms :
			       POLICY_SETUP_DEADLINE_MS,
		.flags = flags,
	};
	int err;

	if (!flags) {
		bpf_map_delete_elem(grants_fd(s), &id);
		return 0;
	}
	err = map_update_retry(grants_fd(s), &id, &g, BPF_ANY);
	if (err)
		pr_warn("cgroup", "granting %s a setup pass failed: %s (at most %d grants); a runtime's setup there is judged like its payload",
			rel[0] ? rel : "/", strerror(-err), SETUP_GRANTS_MAX);
	return err;
}

int setup__grant_cg(const struct setup_ctx *s, const struct sandbox_cg *cg)
{
	const struct sandbox_cg *root = cg->direct ? cg : names__cg(s->names, cg->root_id);
	const struct policy *p = policy_of_slot(s, cg->slot);
	uint32_t flags = 0;

	if (root && pass_applies(p, root->path, false))
		flags = SETUP_GRANT_CHILDREN | (cg->fresh ? SETUP_GRANT_SELF : 0);
	return put(s, cg->id, cg->path, flags, p);
}

int setup__grant_wd(const struct setup_ctx *s, const struct setup_dir *d)
{
	const struct policy *p = policy_of_slot(s, d->slot);

	return put(s, d->id, d->path,
		   pass_applies(p, d->path, true) ? SETUP_GRANT_CHILDREN : 0, p);
}

size_t setup__granted(const struct setup_ctx *s, uint64_t id,
		      const char *names[2])
{
	struct setup_grant g;
	size_t n = 0;

	if (bpf_map_lookup_elem(grants_fd(s), &id, &g))
		return 0;
	if (g.flags & SETUP_GRANT_SELF)
		names[n++] = "self";
	if (g.flags & SETUP_GRANT_CHILDREN)
		names[n++] = "children";
	return n;
}

void setup__revoke(const struct setup_ctx *s, uint64_t id)
{
	bpf_map_delete_elem(grants_fd(s), &id);
}

void setup__regrant(const struct setup_ctx *s)
{
	const struct sandbox_table *t = s->names->cgt;
	struct setup_dir d;
	size_t i;

	for (i = 0; i < t->n; i++)
		setup__grant_cg(s, &t->v[i]);
	for (i = 0; s->dir(s->ctx, i, &d); i++)
		if (d.marked)
			setup__grant_wd(s, &d);
}

/* Does id hold a grant by right: a confined cgroup, or a watched
 * directory with its mark? */
static bool tracked(const struct setup_ctx *s, uint64_t id)
{
	struct setup_dir d;
	size_t i;

	if (names__cg(s->names, id))
		return true;
	for (i = 0; s->dir(s->ctx, i, &d); i++)
		if (d.id == id && d.marked)
			return true;
	return false;
}

void setup__sweep(const struct setup_ctx *s)
{
	uint64_t key, next, *prev = NULL;
	int fd = grants_fd(s);

	/* Deleting the key just read restarts the walk from the start:
	 * keep the last key that stays, so the walk goes on past it. */
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		if (!tracked(s, next)) {
			bpf_map_delete_elem(fd, &next);
			continue;
		}
		key = next;
		prev = &key;
	}
}
