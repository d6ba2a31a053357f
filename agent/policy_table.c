// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Policy ids and slots as a value type: agent/policy_table.h. Pure: the
 * map reads and writes are agent/policy_maps.c's and agent/reload.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_table.h"

void policy_table__free(struct policy_table *t)
{
	free(t->old);
	t->old = NULL;
}

/* The info a policy's id carries (policy_names): by content. */
static void info_of(const struct policy *p, uint32_t generation,
		    struct policy_info *in)
{
	memset(in, 0, sizeof(*in));
	snprintf(in->name, sizeof(in->name), "%s", p->name);
	in->hash = p->hash;
	in->mode = p->mode == POLICY_AUDIT ? SANDBOX_AUDIT : SANDBOX_ENFORCE;
	in->generation = generation;
}

int policy_table__assign_ids(struct policy_table *t, const struct policy_set *set)
{
	uint32_t id, next = 1;
	size_t i;

	if (set->n >= POLICY_MAX)
		return -E2BIG;
	memset(t->by_id, 0, sizeof(t->by_id));
	for (i = 0; i < set->n; i++) {
		const struct policy *p = set->v[i];
		struct policy_info *in = &t->info[i];

		info_of(p, 1, in);
		t->pol_id[i] = 0;
		for (id = 1; t->old && id < POLICY_MAX; id++) {
			if (strcmp(t->old[id].name, p->name))
				continue;
			if (t->old[id].hash == p->hash) {
				t->pol_id[i] = id;
				t->by_id[id] = (uint16_t)(i + 1);
				in->generation = t->old[id].generation ?: 1;
			} else {
				in->generation = t->old[id].generation + 1;
			}
			break;
		}
	}
	for (i = 0; i < set->n; i++) {
		if (t->pol_id[i])
			continue;
		while (next < POLICY_MAX &&
		       (t->by_id[next] || (t->old && t->old[next].name[0])))
			next++;
		if (next == POLICY_MAX)
			return -E2BIG;
		t->pol_id[i] = next;
		t->by_id[next] = (uint16_t)(i + 1);
	}
	return 0;
}

int policy_table__assign_slots(struct policy_table *t, const struct policy_set *set)
{
	bool taken[POLICY_SLOTS] = { false };
	uint32_t s, id;
	size_t i;

	/* The conflict slot resolves to the conflict id whatever the pins
	 * say, and an id past the table names nothing. */
	for (s = 0; s < POLICY_SLOTS; s++)
		if (s == POLICY_SLOT_CONFLICT || t->slot_id[s] >= POLICY_MAX)
			t->slot_id[s] = POLICY_ID_CONFLICT;
	for (i = 0; i < set->n; i++) {
		t->pol_slot[i] = 0;
		for (s = 1; t->old && s < POLICY_SLOTS; s++) {
			id = t->slot_id[s];
			if (id && !taken[s] && !strcmp(t->old[id].name, set->v[i]->name)) {
				t->pol_slot[i] = s;
				taken[s] = true;
				break;
			}
		}
	}
	for (i = 0; i < set->n; i++) {
		if (t->pol_slot[i])
			continue;
		s = policy_table__free_slot(t, taken);
		if (!s)
			return -E2BIG;
		t->pol_slot[i] = s;
		taken[s] = true;
	}
	return 0;
}

void policy_table__round_robin(struct policy_table *t)
{
	uint32_t i;

	for (i = 1; i < POLICY_MAX; i++)
		if (t->by_id[i] || (t->old && t->old[i].name[0]))
			t->next_id = i;
	t->next_id = t->next_id % (POLICY_MAX - 1) + 1;
}

/* Is id still what a slot resolves to, or a cgroup decides by? */
static bool id_held(const struct policy_table *t, const struct sandbox_table *cgt,
		    uint32_t id)
{
	size_t i;

	for (i = 0; i < POLICY_SLOTS; i++)
		if (t->slot_id[i] == id)
			return true;
	for (i = 0; i < cgt->n; i++)
		if (cgt->v[i].policy_id == id)
			return true;
	return false;
}

uint32_t policy_table__fresh_id(struct policy_table *t, const uint16_t *taken,
				const struct sandbox_table *cgt)
{
	uint32_t id, n;

	for (n = 0; n < POLICY_MAX - 1; n++) {
		id = t->next_id;
		t->next_id = t->next_id % (POLICY_MAX - 1) + 1;
		if (id && id < POLICY_MAX && !t->by_id[id] && !taken[id] &&
		    !id_held(t, cgt, id))
			return id;
	}
	return 0;
}

uint32_t policy_table__slot_of(const struct policy_table *t, uint32_t id)
{
	if (id == POLICY_ID_CONFLICT || id >= POLICY_MAX || !t->by_id[id])
		return POLICY_SLOT_CONFLICT;
	return t->pol_slot[t->by_id[id] - 1];
}

uint32_t policy_table__slot_id(const struct policy_table *t, uint32_t slot)
{
	return slot < POLICY_SLOTS ? t->slot_id[slot] : POLICY_ID_CONFLICT;
}

uint32_t policy_table__free_slot(const struct policy_table *t, const bool *taken)
{
	uint32_t s;

	for (s = 1; s < POLICY_SLOTS; s++)
		if (!t->slot_id[s] && !taken[s])
			return s;
	return 0;
}

void policy_table__unused_slots(const struct policy_table *t, size_t n_set,
				const struct sandbox_table *cgt, bool *unused)
{
	bool used[POLICY_SLOTS] = { false };
	uint32_t s;
	size_t i;

	for (i = 0; i < n_set; i++)
		used[t->pol_slot[i]] = true;
	for (i = 0; i < cgt->n; i++)
		if (cgt->v[i].slot < POLICY_SLOTS)
			used[cgt->v[i].slot] = true;
	for (s = 0; s < POLICY_SLOTS; s++)
		unused[s] = s != POLICY_SLOT_CONFLICT && !used[s] && t->slot_id[s];
}

bool policy_table__removed(const struct policy_table *t, uint32_t id)
{
	return t->old && id != POLICY_ID_CONFLICT && id < POLICY_MAX &&
	       t->old[id].name[0] && !t->by_id[id];
}

const char *policy_table__name(const struct policy_table *t,
			       const struct policy_set *set, uint32_t id)
{
	const struct policy *p;

	if (id == POLICY_ID_CONFLICT)
		return "(conflict)";
	p = policy_table__policy(t, set, id);
	if (p)
		return p->name;
	/* A record from before this agent, of a policy since removed. */
	if (id < POLICY_MAX && t->old && t->old[id].name[0])
		return t->old[id].name;
	return "(unknown)";
}

const struct policy *policy_table__policy(const struct policy_table *t,
					  const struct policy_set *set, uint32_t id)
{
	if (id == POLICY_ID_CONFLICT || id >= POLICY_MAX || !t->by_id[id] ||
	    t->by_id[id] > set->n)
		return NULL;
	return set->v[t->by_id[id] - 1];
}

/* The per-set columns of the new set (see the header); 0 or -E2BIG, with
 * the policy that found no room in diag. */
static int plan_policies(struct policy_table *t, const struct policy_set *cur,
			 const struct policy_set *next, const struct sandbox_table *cgt,
			 struct policy_plan *p, struct policy_diag *diag)
{
	struct policy_table *n = &p->next;
	bool staken[POLICY_SLOTS] = { false };
	size_t i, j;

	for (i = 0; i < next->n; i++) {
		const struct policy *pol = next->v[i];

		for (j = 0; j < cur->n && strcmp(cur->v[j]->name, pol->name); j++)
			;
		n->pol_slot[i] = j < cur->n ? t->pol_slot[j] :
					      policy_table__free_slot(t, staken);
		if (!n->pol_slot[i]) {
			policy_diag__add(diag, "no free policy slot for %s", pol->name);
			return -E2BIG;
		}
		staken[n->pol_slot[i]] = true;
		if (j < cur->n && cur->v[j]->hash == pol->hash) {
			n->pol_id[i] = t->pol_id[j];
			n->info[i] = t->info[j];
		} else {
			n->pol_id[i] = policy_table__fresh_id(t, n->by_id, cgt);
			if (!n->pol_id[i]) {
				policy_diag__add(diag, "no free policy id for %s", pol->name);
				return -E2BIG;
			}
			info_of(pol, j < cur->n ? t->info[j].generation + 1 : 1, &n->info[i]);
			p->changed[i] = true;
			p->fresh[n->pol_id[i]] = true;
			p->changed_names[p->n_changed++] = pol->name;
		}
		n->by_id[n->pol_id[i]] = (uint16_t)(i + 1);
	}
	/* Fresh ids are none the set in force uses: an id of it that the new
	 * set holds was kept by an unchanged policy. */
	for (j = 0; j < cur->n; j++)
		p->retired[t->pol_id[j]] = !n->by_id[t->pol_id[j]];
	return 0;
}

struct policy_plan *policy_table__plan_reload(struct policy_table *t,
					      const struct policy_set *cur,
					      const struct policy_set *next,
					      const struct sandbox_table *cgt,
					      struct policy_diag *diag)
{
	struct policy_plan *p;
	int err;

	if (next->n >= POLICY_MAX) {
		policy_diag__add(diag, "%zu policies; at most %d fit", next->n, POLICY_MAX - 1);
		errno = E2BIG;
		return NULL;
	}
	/* ~140 KiB: the heap. old: where the retired ids' names go. */
	p = calloc(1, sizeof(*p));
	if (p && !t->old)
		t->old = calloc(POLICY_MAX, sizeof(*t->old));
	if (!p || !t->old) {
		policy_diag__add(diag, "out of memory");
		free(p);
		errno = ENOMEM;
		return NULL;
	}
	memcpy(p->next.slot_id, t->slot_id, sizeof(t->slot_id));
	p->next.old = t->old;
	err = plan_policies(t, cur, next, cgt, p, diag);
	p->next.next_id = t->next_id;
	if (err) {
		free(p);
		errno = -err;
		return NULL;
	}
	return p;
}

void policy_plan__free(struct policy_plan *p)
{
	if (!p)
		return;
	free(p->holds);
	free(p);	/* p->next.old is the table's */
}

/* Byte by byte: a whole table on the stack would be ~110 KiB. */
static void table_swap(struct policy_table *x, struct policy_table *y)
{
	unsigned char *a = (unsigned char *)x, *b = (unsigned char *)y, c;
	size_t i;

	for (i = 0; i < sizeof(*x); i++) {
		c = a[i];
		a[i] = b[i];
		b[i] = c;
	}
}

void policy_table__apply(struct policy_table *t, struct policy_plan *p)
{
	uint32_t id;

	for (id = 1; t->old && id < POLICY_MAX; id++)
		if (p->retired[id] && t->by_id[id])
			t->old[id] = t->info[t->by_id[id] - 1];
	table_swap(t, &p->next);
}

void policy_table__undo(struct policy_table *t, struct policy_plan *p)
{
	table_swap(t, &p->next);
}

int policy_plan__holds(struct policy_plan *p, const struct policy_table *t,
		       size_t n_set, const struct sandbox_table *cgt,
		       uint32_t (*target)(void *ctx, const struct sandbox_cg *cg),
		       void *ctx)
{
	bool taken[POLICY_SLOTS] = { false }, flips[POLICY_SLOTS] = { false };
	uint32_t s;
	size_t i;

	free(p->holds);
	p->holds = NULL;
	p->n_holds = 0;
	memset(p->temp, 0, sizeof(p->temp));
	if (cgt->n && !(p->holds = calloc(cgt->n, sizeof(*p->holds))))
		return -ENOMEM;
	for (i = 0; i < n_set; i++) {
		taken[t->pol_slot[i]] = true;
		if (p->changed[i])
			flips[t->pol_slot[i]] = true;
	}
	for (i = 0; i < cgt->n; i++) {
		const struct sandbox_cg *cg = &cgt->v[i];
		uint32_t old = cg->slot;

		if (cg->released || old == POLICY_SLOT_CONFLICT || old >= POLICY_SLOTS ||
		    !flips[old] || target(ctx, cg) == old)
			continue;
		/* None free: temp[old] stays 0, and its writer says that
		 * these cgroups switch after the flip. */
		if (!p->temp[old] && (s = policy_table__free_slot(t, taken))) {
			taken[s] = true;
			p->temp[old] = s;
		}
		p->holds[p->n_holds].cg = i;
		p->holds[p->n_holds++].from = old;
	}
	return 0;
}

void policy_plan__keep_held(struct policy_plan *p, const struct policy_table *t,
			    const struct sandbox_table *cgt)
{
	size_t i;

	for (i = 0; i < cgt->n; i++)
		if (cgt->v[i].policy_id < POLICY_MAX)
			p->retired[cgt->v[i].policy_id] = false;
	for (i = 0; i < POLICY_SLOTS; i++)
		if (t->slot_id[i] < POLICY_MAX)
			p->retired[t->slot_id[i]] = false;
}
