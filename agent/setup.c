// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The setup pass's grants (agent/setup.h, include/setup.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "agent.h"
#include "agent_int.h"
#include "bpfutil.h"
#include "cgroup.h"
#include "log.h"
#include "setup.h"		/* include/: the BPF side's */
#include "setup_agent.h"
#include "stockade.skel.h"

static int grants_fd(struct agent *a)
{
	return bpf_map__fd(a->skel->maps.setup_grants);
}

/* The policy in force for slot, or NULL (the conflict slot, none). */
static const struct policy *policy_of_slot(struct agent *a, uint32_t slot)
{
	return names__policy(&a->names, names__slot_id(&a->names, slot));
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
	return false;
}

static int put(struct agent *a, uint64_t id, const char *rel, uint32_t flags,
	       const struct policy *p)
{
	struct setup_grant g = {
		.deadline_ms = p && p->setup.deadline_ms ? p->setup.deadline_ms :
			       POLICY_SETUP_DEADLINE_MS,
		.flags = flags,
	};
	int err;

	if (!flags) {
		bpf_map_delete_elem(grants_fd(a), &id);
		return 0;
	}
	err = map_update_retry(grants_fd(a), &id, &g, BPF_ANY);
	if (err)
		pr_warn("cgroup", "granting %s a setup pass failed: %s (at most %d grants); a runtime's setup there is judged like its payload",
			rel[0] ? rel : "/", strerror(-err), SETUP_GRANTS_MAX);
	return err;
}

bool setup__is_fresh(struct agent *a, const char *rel, uint64_t id)
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

int setup__grant_cg(struct agent *a, const struct sandbox_cg *cg)
{
	const struct sandbox_cg *root = cg->direct ? cg : agent__find_cg(a, cg->root_id);
	const struct policy *p = policy_of_slot(a, cg->slot);
	uint32_t flags = 0;

	if (root && pass_applies(p, root->path, false))
		flags = SETUP_GRANT_CHILDREN | (cg->fresh ? SETUP_GRANT_SELF : 0);
	return put(a, cg->id, cg->path, flags, p);
}

int setup__grant_wd(struct agent *a, const struct watch_dir *w)
{
	const struct policy *p = policy_of_slot(a, w->slot);

	return put(a, w->id, w->path,
		   pass_applies(p, w->path, true) ? SETUP_GRANT_CHILDREN : 0, p);
}

void setup__revoke(struct agent *a, uint64_t id)
{
	bpf_map_delete_elem(grants_fd(a), &id);
}

void setup__regrant(struct agent *a)
{
	size_t i;

	for (i = 0; i < a->cgt.n; i++)
		setup__grant_cg(a, &a->cgt.v[i]);
	for (i = 0; i < a->n_wds; i++)
		if (a->wds[i].armed && a->wds[i].entry)
			setup__grant_wd(a, &a->wds[i]);
}

static bool tracked(struct agent *a, uint64_t id)
{
	size_t i;

	if (agent__find_cg(a, id))
		return true;
	for (i = 0; i < a->n_wds; i++)
		if (a->wds[i].id == id && a->wds[i].armed && a->wds[i].entry)
			return true;
	return false;
}

void setup__sweep(struct agent *a)
{
	uint64_t key, next, *prev = NULL;
	int fd = grants_fd(a);

	/* Deleting the key just read restarts the walk from the start:
	 * keep the last key that stays, so the walk goes on past it. */
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		if (!tracked(a, next)) {
			bpf_map_delete_elem(fd, &next);
			continue;
		}
		key = next;
		prev = &key;
	}
}
