/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Policy ids and slots as a value type (agent/policy_table.c): which id
 * and which slot each policy of a set holds, what the pins said before
 * this agent, and a reload's plan. No BPF, no map fds: agent/policy_maps.c
 * reads the pins into a table and writes one into the maps, and
 * agent/reload.c orchestrates a plan. Unit-tested
 * (tests/unit/test_policy_table.c).
 *
 * Why ids and slots (include/sandbox.h): rules are written under a policy
 * id, and a cgroup's sandbox entry names a slot that resolves to an id, so
 * a changed policy is written under a fresh id beside the old one and
 * every cgroup of it switches with one update of its slot. An id is kept
 * while the policy's name and content are; a slot while its name is.
 *
 * The set is not held here (the daemon owns it): the functions that need
 * a policy by set index take the set the table was made for.
 */
#ifndef STOCKADE_POLICY_TABLE_H
#define STOCKADE_POLICY_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lifecycle.h"
#include "policy.h"
#include "sandbox.h"
#include "sandbox_table.h"

/* Zeroed: empty, a fresh start (no old names). */
struct policy_table {
	/* pol_id[i], pol_slot[i], info[i]: those of set->v[i]; by_id[id]:
	 * i + 1 (0: no policy in force holds id). */
	uint32_t pol_id[POLICY_MAX];
	uint16_t by_id[POLICY_MAX];
	struct policy_info info[POLICY_MAX];
	uint32_t pol_slot[POLICY_MAX];
	int64_t switch_ns[POLICY_MAX];	/* last slot flip (CLOCK_REALTIME) */
	/* Mirrors the `policy_slots` map: the id each slot resolves to (0:
	 * free, or the conflict slot). Its writer updates it. */
	uint32_t slot_id[POLICY_SLOTS];
	/* By id: what the pins said before this agent wrote anything, and
	 * the ids reloads retired since (names of records left in the ring,
	 * generations). NULL on a fresh start. Owned: policy_table__free(). */
	struct policy_info *old;
	/* Round robin over free ids (policy_table__fresh_id()). */
	uint32_t next_id;
};

void policy_table__free(struct policy_table *t);

/*
 * Give each policy of set its id, at a start. One that t->old names with
 * the same name and content keeps that id (and its rules, rewritten in
 * place); one whose content changed gets a fresh id, as a new one does.
 * A fresh id is the lowest that neither a policy of set nor t->old uses,
 * so a record left in the ring keeps its meaning. Generations: t->old's,
 * plus one on a change. 0, or -E2BIG: set too large (POLICY_MAX - 1 at
 * most) or no free id; t is then incomplete and must not be written.
 */
int policy_table__assign_ids(struct policy_table *t, const struct policy_set *set);

/*
 * Then each policy's slot: t->slot_id holds the `policy_slots` map as read
 * from the pins (an id out of range reads as the conflict id). A policy
 * keeps the slot whose id t->old names it by, so the cgroups an earlier
 * agent confined switch with that one slot; else it gets a free one.
 * Slots of policies no longer in set stay as they are: entries still
 * point at them. 0, or -E2BIG: no free slot.
 */
int policy_table__assign_slots(struct policy_table *t, const struct policy_set *set);

/* At the end of a start: the round robin begins past the last id in use,
 * so a fresh id is one nothing used lately. */
void policy_table__round_robin(struct policy_table *t);

/*
 * The next id, round robin, that neither the set in force, nor taken[]
 * (by id, non-zero: a plan's ids), nor a slot (t->slot_id), nor a cgroup
 * of cgt (its policy_id) holds: an id that a failed flip or switch left in
 * force still has its rules, and a fresh policy given it would merge its
 * rules into them. An id just retired comes last, so a record still in
 * the ring keeps its name. Moves t->next_id on; 0 when none is free.
 */
uint32_t policy_table__fresh_id(struct policy_table *t, const uint16_t *taken,
				const struct sandbox_table *cgt);

/* The slot of id (POLICY_SLOT_CONFLICT: the conflict id, or no policy in
 * force holds id). */
uint32_t policy_table__slot_of(const struct policy_table *t, uint32_t id);

/* The id slot resolves to (POLICY_ID_CONFLICT: out of range, or free). */
uint32_t policy_table__slot_id(const struct policy_table *t, uint32_t slot);

/* A slot that resolves to no id and that taken[] (by slot) does not mark:
 * no entry can still point at one that resolves to a live policy. 0 when
 * none is free. */
uint32_t policy_table__free_slot(const struct policy_table *t, const bool *taken);

/* Marks in unused[] (by slot) the slots that resolve to an id but that
 * neither a policy of the set (n_set of them) nor a cgroup of cgt holds:
 * a removed policy's, free again once no program reads them. */
void policy_table__unused_slots(const struct policy_table *t, size_t n_set,
				const struct sandbox_table *cgt, bool *unused);

/* An id the pins named (t->old) that no policy in force holds: its rules,
 * settings and name go once nothing reads them. */
bool policy_table__removed(const struct policy_table *t, uint32_t id);

/* The name of id: "(conflict)", "(unknown)", the name of set's policy, or
 * that of a policy from before this agent or retired since (t->old). */
const char *policy_table__name(const struct policy_table *t,
			       const struct policy_set *set, uint32_t id);

/* The policy of set in force under id, or NULL (conflict, retired, none):
 * ids are not set indexes, a reload or an adopting start gives fresh ones. */
const struct policy *policy_table__policy(const struct policy_table *t,
					  const struct policy_set *set, uint32_t id);

/* A cgroup held on a temporary slot during a reload (policy_plan__holds). */
struct policy_hold {
	size_t cg;		/* its index in the sandbox table */
	uint32_t from;		/* the slot its entry holds now */
};

/*
 * A reload's plan (policy_table__plan_reload()): the table of the new set,
 * what changed, what retires and, once in force, which cgroups are held.
 */
struct policy_plan {
	/* The table once the plan is in force; after policy_table__apply(),
	 * the one it replaced (for policy_table__undo()). slot_id, old and
	 * next_id are those of the table it was made from. */
	struct policy_table next;
	/* By index in the new set: a fresh id (new, or its content changed). */
	bool changed[POLICY_MAX];
	const char *changed_names[POLICY_MAX];	/* theirs, in set order */
	size_t n_changed;
	/* By id: the fresh ids, and the ids of the set in force that no
	 * policy of the new set keeps. */
	bool fresh[POLICY_MAX];
	bool retired[POLICY_MAX];
	/* policy_plan__holds(): temp[s], the temporary slot for the cgroups
	 * leaving slot s (0: none, or none was free); holds, those cgroups. */
	uint32_t temp[POLICY_SLOTS];
	struct policy_hold *holds;
	size_t n_holds;
};

/*
 * Plan a reload from t (for the set cur) to the set next. A policy whose
 * name and content are in cur keeps its id and info; the rest get fresh
 * ids (policy_table__fresh_id(), cgt: the cgroups confined now) and a
 * generation one past their name's. A policy keeps its slot while its
 * name is in the set; a new name gets a free one, never the slot of a
 * policy going away (cgroups still point at it until the scan). Moves t's
 * round robin on, applied or not. NULL with errno set: ENOMEM, or E2BIG
 * (no free id or slot), each with a line in diag.
 */
struct policy_plan *policy_table__plan_reload(struct policy_table *t,
					      const struct policy_set *cur,
					      const struct policy_set *next,
					      const struct sandbox_table *cgt,
					      struct policy_diag *diag);
void policy_plan__free(struct policy_plan *p);

/* Put the plan in force: the names of the ids it retires go into t->old
 * first (records still in the ring), then t and p->next swap. The caller
 * swaps the sets with it. */
void policy_table__apply(struct policy_table *t, struct policy_plan *p);
/* Put back the table the plan replaced (its rules could not be written). */
void policy_table__undo(struct policy_table *t, struct policy_plan *p);

/*
 * Once the plan is in force (t: the new table, n_set policies): which
 * cgroups of cgt move to a temporary slot before the flip (hold_movers()
 * in agent/reload.c writes them). A cgroup on the slot of a changed policy
 * that the new set confines by another policy (or not at all) would
 * decide, between the flip and the scan that moves it, by the new version
 * of its old policy: its policy neither before nor after. Held on a
 * temporary slot that resolves to the id it decides by now, it keeps the
 * same decisions; the scan then moves it from there as from any slot.
 * One temporary slot per slot left, free and none of the new set's.
 * target(ctx, cg): the slot the new set gives cg (POLICY_SLOT_CONFLICT:
 * none), asked only of cgroups on a flipping slot. When in doubt a cgroup
 * is held: that only costs it a switch of its own instead of the flip's.
 * 0 or -ENOMEM (nothing held).
 */
int policy_plan__holds(struct policy_plan *p, const struct policy_table *t,
		       size_t n_set, const struct sandbox_table *cgt,
		       uint32_t (*target)(void *ctx, const struct sandbox_cg *cg),
		       void *ctx);

/* After the switch: an id of retired[] that a slot (its flip failed) or a
 * cgroup of cgt (its switch failed) still holds stays, with its rules. */
void policy_plan__keep_held(struct policy_plan *p, const struct policy_table *t,
			    const struct sandbox_table *cgt);

#endif
