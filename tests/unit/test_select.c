// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* policy/select.c: what a selector can select before its cgroups exist. */
#include <errno.h>

#include "test.h"
#include "policy.h"

static void test_depth(void **state)
{
	(void)state;
	EXPECT_EQ(select__depth(""), 0);
	EXPECT_EQ(select__depth("/a"), 1);
	EXPECT_EQ(select__depth("/docker/*"), 2);
	EXPECT_EQ(select__depth("/verify-zw/*/job-*"), 3);
	EXPECT_EQ(select__depth("//a//b/"), 2);
	DONE();
}

static void test_prefix(void **state)
{
	(void)state;
	/* Shallower and matching: something below may be selected. */
	EXPECT(select__prefix_match("/verify-zw/*/job-*", ""));
	EXPECT(select__prefix_match("/verify-zw/*/job-*", "/verify-zw"));
	EXPECT(select__prefix_match("/verify-zw/*/job-*", "/verify-zw/x"));
	EXPECT(select__prefix_match("/docker/*", "/docker"));
	/* As deep or deeper: the selector itself decides (cgroup__match). */
	EXPECT(!select__prefix_match("/verify-zw/*/job-*", "/verify-zw/x/job-1"));
	EXPECT(!select__prefix_match("/docker/*", "/docker/abc"));
	EXPECT(!select__prefix_match("/docker/*", "/docker/abc/def"));
	/* A component that does not match. */
	EXPECT(!select__prefix_match("/verify-zw/*/job-*", "/other"));
	EXPECT(!select__prefix_match("/a/b-*/c", "/a/x"));
	EXPECT(select__prefix_match("/a/b-*/c", "/a/b-1"));
	/* '*' never spans a '/'. */
	EXPECT(!select__prefix_match("/a*/c", "/a/b"));
	EXPECT(select__prefix_match("/a*/c", "/ab"));
	DONE();
}

static void test_watch_base(void **state)
{
	char b[64];

	(void)state;
	EXPECT_EQ(select__watch_base("/docker/*", b, sizeof(b)), 0);
	EXPECT_STR(b, "/docker");
	EXPECT_EQ(select__watch_base("/verify-zw/*/job-*", b, sizeof(b)), 0);
	EXPECT_STR(b, "/verify-zw");
	EXPECT_EQ(select__watch_base("/a/b/c-?", b, sizeof(b)), 0);
	EXPECT_STR(b, "/a/b");
	/* A wildcard at the top: the mount's root. */
	EXPECT_EQ(select__watch_base("/*", b, sizeof(b)), 0);
	EXPECT_STR(b, "");
	EXPECT_EQ(select__watch_base("/job-[0-9]", b, sizeof(b)), 0);
	EXPECT_STR(b, "");
	/* Literal: the parent. */
	EXPECT_EQ(select__watch_base("/sandboxes/job-1", b, sizeof(b)), 0);
	EXPECT_STR(b, "/sandboxes");
	EXPECT_EQ(select__watch_base("/top", b, sizeof(b)), 0);
	EXPECT_STR(b, "");
	EXPECT_EQ(select__watch_base("/averyveryverylongname/*", b, 8),
		  -ENAMETOOLONG);
	EXPECT(select__is_literal("/a/b"));
	EXPECT(!select__is_literal("/a/*"));
	EXPECT(!select__is_literal("/a/[bc]"));
	DONE();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_prefix),
		cmocka_unit_test(test_watch_base),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
