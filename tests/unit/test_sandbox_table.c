// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* agent/sandbox_table.c: the table of confined cgroups. */
#include <stdlib.h>

#include "test.h"
#include "sandbox_table.h"

static void test_add_find(void **state)
{
	struct sandbox_table t = { 0 };
	struct sandbox_cg *cg;

	(void)state;
	EXPECT(!sandbox_table__find(&t, 7));
	cg = sandbox_table__add(&t, "/a", 7);
	assert_non_null(cg);
	EXPECT_STR(cg->path, "/a");
	EXPECT_EQ(cg->id, 7);
	EXPECT_EQ(cg->wd, -1);
	EXPECT_EQ(cg->pending_us, -1);
	EXPECT(!cg->direct && !cg->lim);
	for (int k = 0; k < SANDBOX_N_LINKS; k++)
		EXPECT_EQ(cg->link_fd[k], -1);	/* 0 is an fd */
	EXPECT(sandbox_table__add(&t, "/a/b", 8) != NULL);
	EXPECT(sandbox_table__find(&t, 7) == &t.v[0]);
	EXPECT(sandbox_table__find(&t, 8) == &t.v[1]);
	/* The cache answers a repeated lookup, and never a wrong one. */
	EXPECT_EQ(t.last, 1);
	EXPECT(sandbox_table__find(&t, 8) == &t.v[1]);
	EXPECT(!sandbox_table__find(&t, 9));
	EXPECT(sandbox_table__find(&t, 7) == &t.v[0]);
	EXPECT_EQ(t.last, 0);
	sandbox_table__free(&t);
	EXPECT(!t.v && !t.n && !t.cap);
	DONE();
}

/* A removal moves the last entry into its place; the cache is reset, so
 * it never points past the end or at the moved entry's old index. */
static void test_remove(void **state)
{
	struct sandbox_table t = { 0 };

	(void)state;
	assert_non_null(sandbox_table__add(&t, "/x", 1));
	assert_non_null(sandbox_table__add(&t, "/y", 2));
	assert_non_null(sandbox_table__add(&t, "/z", 3));
	EXPECT(sandbox_table__find(&t, 3) == &t.v[2]);
	sandbox_table__remove(&t, 0);
	EXPECT_EQ(t.n, 2);
	EXPECT_EQ(t.v[0].id, 3);
	EXPECT_STR(t.v[0].path, "/z");
	EXPECT(sandbox_table__find(&t, 3) == &t.v[0]);
	EXPECT(!sandbox_table__find(&t, 1));
	sandbox_table__remove(&t, 1);	/* the last: no move */
	EXPECT_EQ(t.n, 1);
	EXPECT(!sandbox_table__find(&t, 2));
	sandbox_table__remove(&t, 5);	/* out of range: nothing */
	EXPECT_EQ(t.n, 1);
	sandbox_table__remove(&t, 0);
	EXPECT_EQ(t.n, 0);
	EXPECT(!sandbox_table__find(&t, 3));
	sandbox_table__free(&t);
	DONE();
}

/* It grows past its first allocation, and every entry stays findable. */
static void test_grow(void **state)
{
	struct sandbox_table t = { 0 };
	char rel[32];
	uint64_t id;
	size_t miss = 0;

	(void)state;
	for (id = 1; id <= 1000; id++) {
		snprintf(rel, sizeof(rel), "/c-%llu", (unsigned long long)id);
		assert_non_null(sandbox_table__add(&t, rel, id));
	}
	EXPECT_EQ(t.n, 1000);
	EXPECT(t.cap >= 1000);
	for (id = 1000; id >= 1; id--) {
		const struct sandbox_cg *cg = sandbox_table__find(&t, id);

		snprintf(rel, sizeof(rel), "/c-%llu", (unsigned long long)id);
		if (!cg || cg->id != id || strcmp(cg->path, rel))
			miss++;
	}
	EXPECT_EQ(miss, 0);
	sandbox_table__free(&t);
	DONE();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_find),
		cmocka_unit_test(test_remove),
		cmocka_unit_test(test_grow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
