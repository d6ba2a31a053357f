// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * agent/policy_table.c: policy ids and slots, and a reload's plan. Each
 * test builds the table the daemon would hold (a start from pins, then
 * the slot flips policy_maps.c would write) and checks what a map writer
 * would be told to write.
 */
#include <errno.h>
#include <stdlib.h>

#include "test.h"
#include "policy_table.h"

#define MAX_POL	8

/* A policy set of up to MAX_POL policies, by name and content hash. */
struct pset {
	struct policy p[MAX_POL];
	struct policy *v[MAX_POL];
	struct policy_set set;
};

static void pset_add(struct pset *s, const char *name, uint64_t hash)
{
	struct policy *p = &s->p[s->set.n];

	memset(p, 0, sizeof(*p));
	p->name = (char *)name;
	p->hash = hash;
	s->v[s->set.n++] = p;
	s->set.v = s->v;
}

static struct policy_table *table_new(void)
{
	struct policy_table *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	return t;
}

static void table_free(struct policy_table *t)
{
	policy_table__free(t);
	free(t);
}

/* What an earlier agent left in policy_names: id -> name, content,
 * generation. */
static void old_put(struct policy_table *t, uint32_t id, const char *name,
		    uint64_t hash, uint32_t generation)
{
	if (!t->old)
		t->old = calloc(POLICY_MAX, sizeof(*t->old));
	assert_non_null(t->old);
	snprintf(t->old[id].name, sizeof(t->old[id].name), "%s", name);
	t->old[id].hash = hash;
	t->old[id].generation = generation;
}

/* flip_slots() at a start: every policy's slot resolves to its id. */
static void flip_all(struct policy_table *t, const struct policy_set *set)
{
	size_t i;

	for (i = 0; i < set->n; i++)
		t->slot_id[t->pol_slot[i]] = t->pol_id[i];
}

/* A start: ids, then slots (t->slot_id as read from the pins), then the
 * flip; 0 or the first error. */
static int start(struct policy_table *t, const struct policy_set *set)
{
	int err = policy_table__assign_ids(t, set);

	if (!err)
		err = policy_table__assign_slots(t, set);
	if (!err) {
		flip_all(t, set);
		policy_table__round_robin(t);
	}
	return err;
}

static struct sandbox_cg *cg_add(struct sandbox_table *cgt, const char *rel,
				 uint64_t id, const struct policy_table *t,
				 uint32_t slot)
{
	struct sandbox_cg *cg = sandbox_table__add(cgt, rel, id);

	assert_non_null(cg);
	cg->slot = slot;
	cg->policy_id = t->slot_id[slot];
	cg->root_id = id;
	cg->direct = true;
	return cg;
}

/* Each test's: the table, its cgroups, the set in force (s) and a
 * reload's next one (n), the plan and its diagnostics. */
struct fix {
	struct policy_table *t;
	struct sandbox_table cgt;
	struct policy_diag diag;
	struct pset s, n;
	struct policy_plan *p;
};

static int fix_setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->t = table_new();
	*state = f;
	return 0;
}

static int fix_teardown(void **state)
{
	struct fix *f = *state;

	policy_plan__free(f->p);
	policy_diag__free(&f->diag);
	sandbox_table__free(&f->cgt);
	table_free(f->t);
	free(f);
	return 0;
}

/* Plan from f->s to f->n. */
static struct policy_plan *fix_plan(struct fix *f)
{
	policy_plan__free(f->p);
	f->p = policy_table__plan_reload(f->t, &f->s.set, &f->n.set, &f->cgt, &f->diag);
	return f->p;
}

/* A fresh start: ids and slots from 1 up, generation 1, names by id. */
static void test_fresh_start(void **state)
{
	struct fix *f = *state;
	struct policy_table *t = f->t;

	pset_add(&f->s, "web", 0x11);
	pset_add(&f->s, "db", 0x22);
	EXPECT_EQ(start(t, &f->s.set), 0);
	EXPECT_EQ(t->pol_id[0], 1);
	EXPECT_EQ(t->pol_id[1], 2);
	EXPECT_EQ(t->pol_slot[0], 1);
	EXPECT_EQ(t->pol_slot[1], 2);
	EXPECT_EQ(t->info[1].generation, 1);
	EXPECT_EQ(t->info[1].hash, 0x22);
	EXPECT_STR(t->info[1].name, "db");
	EXPECT_EQ(t->by_id[2], 2);
	EXPECT_STR(policy_table__name(t, &f->s.set, 1), "web");
	EXPECT_STR(policy_table__name(t, &f->s.set, 2), "db");
	EXPECT_STR(policy_table__name(t, &f->s.set, 3), "(unknown)");
	EXPECT(policy_table__policy(t, &f->s.set, 2) == f->s.v[1]);
	EXPECT(!policy_table__policy(t, &f->s.set, 3));
	EXPECT_EQ(policy_table__slot_of(t, 2), 2);
	EXPECT_EQ(policy_table__slot_id(t, 2), 2);
	/* Past the last id in use. */
	EXPECT_EQ(t->next_id, 3);
	DONE();
}

/*
 * A restart over pins: a policy of the same name and content keeps its
 * id, generation and slot; one whose content changed gets a fresh id (the
 * lowest no pinned policy names) and keeps its slot; a new one gets the
 * lowest free of both.
 */
static void test_restart_stable(void **state)
{
	struct fix *f = *state;
	struct policy_table *t = f->t;

	old_put(t, 5, "web", 0xa, 3);
	old_put(t, 7, "db", 0xb1, 2);
	old_put(t, 2, "gone", 0x9, 1);
	old_put(t, 1, "zero-gen", 0xc, 0);
	t->slot_id[4] = 5;
	t->slot_id[9] = 7;
	t->slot_id[3] = 2;
	t->slot_id[6] = 1;
	pset_add(&f->s, "web", 0xa);
	pset_add(&f->s, "db", 0xb2);
	pset_add(&f->s, "new", 0xd);
	pset_add(&f->s, "zero-gen", 0xc);
	EXPECT_EQ(policy_table__assign_ids(t, &f->s.set), 0);
	EXPECT_EQ(t->pol_id[0], 5);
	EXPECT_EQ(t->info[0].generation, 3);
	EXPECT_EQ(t->pol_id[1], 3);		/* 1, 2 named by the pins */
	EXPECT_EQ(t->info[1].generation, 3);
	EXPECT_EQ(t->info[1].hash, 0xb2);
	EXPECT_EQ(t->pol_id[2], 4);
	EXPECT_EQ(t->info[2].generation, 1);
	EXPECT_EQ(t->pol_id[3], 1);
	EXPECT_EQ(t->info[3].generation, 1);	/* a pinned 0 reads as 1 */
	EXPECT_EQ(policy_table__assign_slots(t, &f->s.set), 0);
	EXPECT_EQ(t->pol_slot[0], 4);
	EXPECT_EQ(t->pol_slot[1], 9);		/* by name, not by id */
	EXPECT_EQ(t->pol_slot[2], 1);		/* the lowest that resolves to nothing */
	EXPECT_EQ(t->pol_slot[3], 6);
	/* "gone" keeps its slot (entries may point at it) and its name. */
	EXPECT_EQ(t->slot_id[3], 2);
	EXPECT_STR(policy_table__name(t, &f->s.set, 2), "gone");
	EXPECT_STR(policy_table__name(t, &f->s.set, 7), "db");	/* db's old id */
	EXPECT(policy_table__removed(t, 2));
	EXPECT(policy_table__removed(t, 7));
	EXPECT(!policy_table__removed(t, 5));
	EXPECT(!policy_table__removed(t, 8));
	EXPECT(!policy_table__policy(t, &f->s.set, 7));
	DONE();
}

/* A second restart over the first one's pins gives the same table. */
static void test_restart_twice(void **state)
{
	struct fix *f = *state;
	struct policy_table *t = f->t, *u = table_new();
	size_t i;
	uint32_t id;

	pset_add(&f->s, "a", 1);
	pset_add(&f->s, "b", 2);
	pset_add(&f->s, "c", 3);
	assert_int_equal(start(t, &f->s.set), 0);
	/* What policy_names and policy_slots hold now. */
	for (i = 0; i < f->s.set.n; i++)
		old_put(u, t->pol_id[i], f->s.v[i]->name, f->s.v[i]->hash,
			t->info[i].generation);
	memcpy(u->slot_id, t->slot_id, sizeof(u->slot_id));
	/* Another order: ids and slots follow the names, not the index. */
	f->s.v[0] = &f->s.p[2];
	f->s.v[2] = &f->s.p[0];
	EXPECT_EQ(start(u, &f->s.set), 0);
	for (i = 0; i < f->s.set.n; i++) {
		id = u->pol_id[i];
		EXPECT_EQ(id, t->pol_id[f->s.v[i] - f->s.p]);	/* t had p[k] at k */
		EXPECT_EQ(u->pol_slot[i], policy_table__slot_of(t, id));
	}
	table_free(u);
	DONE();
}

/* Conflict id and slot: slot 0 resolves to id 0 whatever the pins say, an
 * id out of range reads as a conflict, and id 0 names no policy. */
static void test_conflict(void **state)
{
	struct fix *f = *state;
	struct policy_table *t = f->t;

	t->slot_id[0] = 3;
	t->slot_id[5] = POLICY_MAX + 7;
	pset_add(&f->s, "a", 1);
	EXPECT_EQ(start(t, &f->s.set), 0);
	EXPECT_EQ(t->slot_id[POLICY_SLOT_CONFLICT], POLICY_ID_CONFLICT);
	EXPECT_EQ(t->slot_id[5], POLICY_ID_CONFLICT);
	EXPECT_EQ(policy_table__slot_of(t, POLICY_ID_CONFLICT), POLICY_SLOT_CONFLICT);
	EXPECT_EQ(policy_table__slot_of(t, 9), POLICY_SLOT_CONFLICT);
	EXPECT_EQ(policy_table__slot_of(t, POLICY_MAX), POLICY_SLOT_CONFLICT);
	EXPECT_EQ(policy_table__slot_id(t, POLICY_SLOTS), POLICY_ID_CONFLICT);
	EXPECT_STR(policy_table__name(t, &f->s.set, POLICY_ID_CONFLICT), "(conflict)");
	EXPECT_STR(policy_table__name(t, &f->s.set, POLICY_MAX), "(unknown)");
	EXPECT(!policy_table__policy(t, &f->s.set, POLICY_ID_CONFLICT));
	EXPECT(!policy_table__removed(t, POLICY_ID_CONFLICT));
	DONE();
}

/* Fresh ids go round robin, skip what the set, a plan, a slot or a
 * cgroup holds, and wrap past the last id. */
static void test_fresh_id(void **state)
{
	struct fix *f = *state;
	struct policy_table *t = f->t;
	uint16_t taken[POLICY_MAX] = { 0 };

	pset_add(&f->s, "a", 1);
	pset_add(&f->s, "b", 2);
	assert_int_equal(start(t, &f->s.set), 0);
	EXPECT_EQ(t->next_id, 3);
	taken[3] = 1;				/* the plan's */
	t->slot_id[40] = 4;			/* a slot whose flip failed */
	cg_add(&f->cgt, "/x", 100, t, 1)->policy_id = 5;	/* a switch that failed */
	EXPECT_EQ(policy_table__fresh_id(t, taken, &f->cgt), 6);
	EXPECT_EQ(policy_table__fresh_id(t, taken, &f->cgt), 7);
	t->next_id = POLICY_MAX - 1;
	EXPECT_EQ(policy_table__fresh_id(t, taken, &f->cgt), POLICY_MAX - 1);
	/* 1 and 2: the set's; 3, 4, 5 held. */
	EXPECT_EQ(policy_table__fresh_id(t, taken, &f->cgt), 6);
	EXPECT_EQ(t->next_id, 7);
	DONE();
}

/* The round robin starts past the last id in use, pinned names included. */
static void test_round_robin(void **state)
{
	struct fix *f = *state;
	struct policy_table *t = f->t;

	old_put(t, 9, "gone", 1, 1);
	pset_add(&f->s, "a", 2);
	assert_int_equal(start(t, &f->s.set), 0);
	EXPECT_EQ(t->pol_id[0], 1);
	EXPECT_EQ(t->next_id, 10);
	old_put(t, POLICY_MAX - 1, "last", 1, 1);
	policy_table__round_robin(t);
	EXPECT_EQ(t->next_id, 1);		/* wraps */
	DONE();
}

/* A table that cannot grow fails closed: -E2BIG, never a shared id or
 * slot. */
static void test_full(void **state)
{
	struct fix *f = *state;
	struct policy_table *t = f->t;
	struct policy *many = calloc(POLICY_MAX, sizeof(*many));
	struct policy **v = calloc(POLICY_MAX, sizeof(*v));
	struct policy_set big = { .v = v, .n = POLICY_MAX };
	uint32_t id;
	size_t i;

	assert_non_null(many);
	assert_non_null(v);
	for (i = 0; i < POLICY_MAX; i++) {
		many[i].name = "p";
		v[i] = &many[i];
	}
	EXPECT_EQ(policy_table__assign_ids(t, &big), -E2BIG);
	big.n = POLICY_MAX - 1;
	EXPECT_EQ(policy_table__assign_ids(t, &big), 0);

	/* Every id named by the pins: no fresh one for a new policy. */
	memset(t, 0, sizeof(*t));
	for (id = 1; id < POLICY_MAX; id++)
		old_put(t, id, "old", 1, 1);
	pset_add(&f->s, "new", 2);
	EXPECT_EQ(policy_table__assign_ids(t, &f->s.set), -E2BIG);

	/* Every slot resolving to an id: no slot for a new name. */
	policy_table__free(t);
	memset(t, 0, sizeof(*t));
	for (id = 1; id < POLICY_SLOTS; id++)
		t->slot_id[id] = 1;
	EXPECT_EQ(policy_table__assign_ids(t, &f->s.set), 0);
	EXPECT_EQ(policy_table__assign_slots(t, &f->s.set), -E2BIG);
	free(many);
	free(v);
	DONE();
}

/*
 * A reload: an unchanged policy keeps id, info and slot; a changed one a
 * fresh id, its slot and generation + 1; a new one a fresh id and a free
 * slot that is not a leaving policy's; the removed and replaced ids
 * retire. Applied, the retired names stay known; undone, the old table
 * is back.
 */
static void test_plan_reload(void **state)
{
	struct fix *f = *state;
	struct policy_table *t = f->t;
	struct policy_plan *p;
	uint32_t a_id, b_id, c_id, c_slot, next_id;

	pset_add(&f->s, "a", 1);
	pset_add(&f->s, "b", 2);
	pset_add(&f->s, "c", 3);
	assert_int_equal(start(t, &f->s.set), 0);
	a_id = t->pol_id[0];
	b_id = t->pol_id[1];
	c_id = t->pol_id[2];
	c_slot = t->pol_slot[2];
	pset_add(&f->n, "b", 22);
	pset_add(&f->n, "a", 1);
	pset_add(&f->n, "d", 4);
	pset_add(&f->n, "e", 5);
	p = fix_plan(f);
	assert_non_null(p);
	EXPECT_EQ(f->diag.n, 0);
	EXPECT_EQ(p->n_changed, 3);
	EXPECT_STR(p->changed_names[0], "b");
	EXPECT_STR(p->changed_names[1], "d");
	EXPECT_STR(p->changed_names[2], "e");
	EXPECT(p->changed[0] && !p->changed[1] && p->changed[2] && p->changed[3]);
	EXPECT_EQ(p->next.pol_id[1], a_id);
	EXPECT_EQ(p->next.pol_slot[1], t->pol_slot[0]);
	EXPECT_EQ(p->next.pol_slot[0], t->pol_slot[1]);	/* b: by name */
	EXPECT_EQ(p->next.pol_id[0], 4);		/* round robin: past c */
	EXPECT_EQ(p->next.info[0].generation, 2);
	EXPECT_EQ(p->next.info[0].hash, 22);
	EXPECT_EQ(p->next.pol_id[2], 5);
	EXPECT_EQ(p->next.info[2].generation, 1);
	EXPECT(p->next.pol_slot[2] != c_slot);		/* c's cgroups still there */
	EXPECT(p->next.pol_slot[2] != 0);
	/* Two new names, two slots. */
	EXPECT(p->next.pol_slot[3] != p->next.pol_slot[2]);
	EXPECT_EQ(p->next.pol_id[3], 6);
	EXPECT(p->fresh[4] && p->fresh[5] && p->fresh[6] && !p->fresh[a_id]);
	EXPECT(p->retired[b_id] && p->retired[c_id] && !p->retired[a_id]);
	EXPECT_EQ(p->next.by_id[5], 3);
	EXPECT_EQ(p->next.by_id[b_id], 0);
	next_id = t->next_id;
	EXPECT_EQ(next_id, 7);
	EXPECT_EQ(p->next.next_id, next_id);
	/* The plan leaves the table in force as it was. */
	EXPECT_EQ(t->pol_id[1], b_id);
	EXPECT_EQ(t->by_id[4], 0);

	policy_table__apply(t, p);
	EXPECT_EQ(t->pol_id[0], 4);
	EXPECT(policy_table__policy(t, &f->n.set, 4) == f->n.v[0]);
	EXPECT_STR(policy_table__name(t, &f->n.set, c_id), "c");	/* a record in the ring */
	EXPECT_STR(policy_table__name(t, &f->n.set, b_id), "b");
	EXPECT(!policy_table__policy(t, &f->n.set, b_id));
	EXPECT_EQ(t->old[b_id].hash, 2);
	EXPECT_EQ(t->slot_id[c_slot], c_id);			/* not flipped yet */
	policy_table__undo(t, p);
	EXPECT_EQ(t->pol_id[1], b_id);
	EXPECT_EQ(t->by_id[c_id], 3);
	EXPECT_EQ(t->next_id, next_id);
	EXPECT(policy_table__policy(t, &f->s.set, c_id) == f->s.v[2]);

	/* The same set again: nothing changed, nothing retires. */
	f->n = f->s;
	f->n.set.v = f->n.v;
	p = fix_plan(f);
	assert_non_null(p);
	EXPECT_EQ(p->n_changed, 0);
	EXPECT(!p->retired[a_id] && !p->retired[b_id] && !p->retired[c_id]);
	DONE();
}

/* A fresh id is never one still held: the id a cgroup decides by after a
 * failed switch, or a slot after a failed flip, even where the round
 * robin stands. */
static void test_plan_fresh_not_held(void **state)
{
	struct fix *f = *state;
	struct policy_table *t = f->t;
	struct policy_plan *p;

	pset_add(&f->s, "a", 1);
	assert_int_equal(start(t, &f->s.set), 0);
	/* An earlier reload's id 2 still in force: a cgroup and a slot. */
	cg_add(&f->cgt, "/held", 50, t, 1)->policy_id = 2;
	t->slot_id[30] = 3;
	EXPECT_EQ(t->next_id, 2);
	pset_add(&f->n, "a", 11);
	p = fix_plan(f);
	assert_non_null(p);
	EXPECT_EQ(p->next.pol_id[0], 4);
	EXPECT(p->retired[1]);
	/* After the switch (a's slot flipped to 4): an id a cgroup or a
	 * slot still holds stays. */
	policy_table__apply(t, p);
	flip_all(t, &f->n.set);
	f->cgt.v[0].policy_id = 1;
	policy_plan__keep_held(p, t, &f->cgt);
	EXPECT(!p->retired[1]);
	f->cgt.v[0].policy_id = 4;
	p->retired[1] = true;
	t->slot_id[30] = 1;
	policy_plan__keep_held(p, t, &f->cgt);
	EXPECT(!p->retired[1]);
	t->slot_id[30] = 0;
	p->retired[1] = true;
	policy_plan__keep_held(p, t, &f->cgt);
	EXPECT(p->retired[1]);
	DONE();
}

/* A plan that cannot fit fails with a line that names the policy, and
 * leaves the table in force alone. */
static void test_plan_full(void **state)
{
	struct fix *f = *state;
	struct policy_table *t = f->t;
	struct policy_set big = { .v = NULL, .n = POLICY_MAX };
	uint32_t id;
	char rel[32];

	pset_add(&f->s, "a", 1);
	assert_int_equal(start(t, &f->s.set), 0);
	/* Every other id held by a cgroup. */
	for (id = 2; id < POLICY_MAX; id++) {
		snprintf(rel, sizeof(rel), "/c%u", id);
		cg_add(&f->cgt, rel, id, t, 1)->policy_id = id;
	}
	pset_add(&f->n, "a", 1);
	pset_add(&f->n, "b", 2);
	errno = 0;
	EXPECT(!fix_plan(f));
	EXPECT_EQ(errno, E2BIG);
	if (EXPECT_EQ(f->diag.n, 1))
		EXPECT_STR(f->diag.msgs[0], "no free policy id for b");
	EXPECT_EQ(t->by_id[1], 1);
	EXPECT_EQ(t->pol_id[1], 0);
	policy_diag__free(&f->diag);

	/* Every slot resolving to an id: no slot for a new name. */
	for (id = 2; id < POLICY_SLOTS; id++)
		t->slot_id[id] = 1;
	EXPECT(!fix_plan(f));
	EXPECT_EQ(errno, E2BIG);
	if (EXPECT_EQ(f->diag.n, 1))
		EXPECT_STR(f->diag.msgs[0], "no free policy slot for b");
	policy_diag__free(&f->diag);

	EXPECT(!policy_table__plan_reload(t, &f->s.set, &big, &f->cgt, &f->diag));
	if (EXPECT_EQ(f->diag.n, 1))
		EXPECT_STR(f->diag.msgs[0], "1024 policies; at most 1023 fit");
	DONE();
}

/* The target of each cgroup, by cgroup id, as selected_by() would give it
 * under the new set; and how often it was asked. */
struct targets {
	uint32_t slot[16];
	unsigned int asked;
};

static uint32_t target_of(void *ctx, const struct sandbox_cg *cg)
{
	struct targets *tg = ctx;

	tg->asked++;
	return tg->slot[cg->id];
}

/*
 * The holds: a cgroup on a changed policy's slot that moves elsewhere is
 * held on a temporary slot, one per slot left, free and none of the new
 * set's; one that stays, one on an unchanged slot, a released one and
 * one on the conflict slot are not, and only cgroups on a flipping slot
 * are asked for their target.
 */
static void test_plan_holds(void **state)
{
	struct fix *f = *state;
	struct policy_table *t = f->t;
	struct sandbox_table *cgt = &f->cgt;
	struct targets tg = { { 0 }, 0 };
	struct policy_plan *p;
	uint32_t sa, sb, sc, sd;
	size_t i, n_temp = 0;

	pset_add(&f->s, "a", 1);
	pset_add(&f->s, "b", 2);
	pset_add(&f->s, "c", 3);
	assert_int_equal(start(t, &f->s.set), 0);
	sa = t->pol_slot[0];
	sb = t->pol_slot[1];
	sc = t->pol_slot[2];
	/* A slot left over from a removed policy, not yet freed. */
	t->slot_id[4] = 77;
	cg_add(cgt, "/a-to-b", 1, t, sa);	/* a unchanged: no flip, no hold */
	cg_add(cgt, "/b-to-d", 2, t, sb);	/* held */
	cg_add(cgt, "/b-stays", 3, t, sb);
	cg_add(cgt, "/b-to-none", 4, t, sb);	/* held, with /b-to-d */
	cg_add(cgt, "/b-released", 5, t, sb)->released = true;
	cg_add(cgt, "/conflict", 6, t, POLICY_SLOT_CONFLICT);
	cg_add(cgt, "/c-to-a", 7, t, sc);	/* held, a slot of its own */
	pset_add(&f->n, "a", 1);
	pset_add(&f->n, "b", 22);
	pset_add(&f->n, "c", 33);
	pset_add(&f->n, "d", 4);
	p = fix_plan(f);
	assert_non_null(p);
	sd = p->next.pol_slot[3];
	EXPECT_EQ(sd, 5);			/* slot 4 still resolves to 77 */
	policy_table__apply(t, p);
	tg.slot[1] = sb;
	tg.slot[2] = sd;
	tg.slot[3] = sb;
	tg.slot[4] = POLICY_SLOT_CONFLICT;
	tg.slot[5] = sa;
	tg.slot[6] = sa;
	tg.slot[7] = sa;
	EXPECT_EQ(policy_plan__holds(p, t, f->n.set.n, cgt, target_of, &tg), 0);
	EXPECT_EQ(tg.asked, 4);			/* 2, 3, 4, 7 */
	EXPECT_EQ(p->temp[sb], 6);		/* 5 is d's */
	EXPECT_EQ(p->temp[sc], 7);
	for (i = 0; i < POLICY_SLOTS; i++)
		n_temp += p->temp[i] != 0;
	EXPECT_EQ(n_temp, 2);
	if (EXPECT_EQ(p->n_holds, 3)) {
		EXPECT_EQ(cgt->v[p->holds[0].cg].id, 2);
		EXPECT_EQ(p->holds[0].from, sb);
		EXPECT_EQ(cgt->v[p->holds[1].cg].id, 4);
		EXPECT_EQ(p->holds[1].from, sb);
		EXPECT_EQ(cgt->v[p->holds[2].cg].id, 7);
		EXPECT_EQ(p->holds[2].from, sc);
	}

	/* No temporary slot free: the movers are named, with none. */
	for (i = 1; i < POLICY_SLOTS; i++)
		if (!t->slot_id[i])
			t->slot_id[i] = 99;
	EXPECT_EQ(policy_plan__holds(p, t, f->n.set.n, cgt, target_of, &tg), 0);
	EXPECT_EQ(p->n_holds, 3);
	EXPECT_EQ(p->temp[sb], 0);
	EXPECT_EQ(p->temp[sc], 0);
	DONE();
}

/* The slots to free: those that resolve to an id that neither a policy in
 * force nor a cgroup holds. */
static void test_unused_slots(void **state)
{
	struct fix *f = *state;
	struct policy_table *t = f->t;
	bool unused[POLICY_SLOTS];
	size_t i, n = 0;

	pset_add(&f->s, "a", 1);
	assert_int_equal(start(t, &f->s.set), 0);
	t->slot_id[7] = 40;		/* a removed policy's */
	t->slot_id[8] = 41;		/* a temporary slot a cgroup is on */
	cg_add(&f->cgt, "/held", 9, t, 8);
	policy_table__unused_slots(t, f->s.set.n, &f->cgt, unused);
	for (i = 0; i < POLICY_SLOTS; i++)
		n += unused[i];
	EXPECT_EQ(n, 1);
	EXPECT(unused[7]);
	EXPECT(!unused[t->pol_slot[0]] && !unused[8] && !unused[0]);
	DONE();
}

/* Every test gets a fresh fixture. */
#define TEST(fn)	cmocka_unit_test_setup_teardown(fn, fix_setup, fix_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		TEST(test_fresh_start),
		TEST(test_restart_stable),
		TEST(test_restart_twice),
		TEST(test_conflict),
		TEST(test_fresh_id),
		TEST(test_round_robin),
		TEST(test_full),
		TEST(test_plan_reload),
		TEST(test_plan_fresh_not_held),
		TEST(test_plan_full),
		TEST(test_plan_holds),
		TEST(test_unused_slots),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
