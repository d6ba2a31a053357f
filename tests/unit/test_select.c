// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* policy/select.c: what a selector can select before its cgroups exist. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>

#include "policy.h"

static void test_depth(void **state)
{
	(void)state;
	assert_int_equal(select__depth(""), 0);
	assert_int_equal(select__depth("/a"), 1);
	assert_int_equal(select__depth("/docker/*"), 2);
	assert_int_equal(select__depth("/verify-zw/*/job-*"), 3);
	assert_int_equal(select__depth("//a//b/"), 2);
}

static void test_prefix(void **state)
{
	(void)state;
	/* Shallower and matching: something below may be selected. */
	assert_true(select__prefix_match("/verify-zw/*/job-*", ""));
	assert_true(select__prefix_match("/verify-zw/*/job-*", "/verify-zw"));
	assert_true(select__prefix_match("/verify-zw/*/job-*", "/verify-zw/x"));
	assert_true(select__prefix_match("/docker/*", "/docker"));
	/* As deep or deeper: the selector itself decides (cgroup__match). */
	assert_false(select__prefix_match("/verify-zw/*/job-*", "/verify-zw/x/job-1"));
	assert_false(select__prefix_match("/docker/*", "/docker/abc"));
	assert_false(select__prefix_match("/docker/*", "/docker/abc/def"));
	/* A component that does not match. */
	assert_false(select__prefix_match("/verify-zw/*/job-*", "/other"));
	assert_false(select__prefix_match("/a/b-*/c", "/a/x"));
	assert_true(select__prefix_match("/a/b-*/c", "/a/b-1"));
	/* '*' never spans a '/'. */
	assert_false(select__prefix_match("/a*/c", "/a/b"));
	assert_true(select__prefix_match("/a*/c", "/ab"));
}

static void test_watch_base(void **state)
{
	char b[64];

	(void)state;
	assert_int_equal(select__watch_base("/docker/*", b, sizeof(b)), 0);
	assert_string_equal(b, "/docker");
	assert_int_equal(select__watch_base("/verify-zw/*/job-*", b, sizeof(b)), 0);
	assert_string_equal(b, "/verify-zw");
	assert_int_equal(select__watch_base("/a/b/c-?", b, sizeof(b)), 0);
	assert_string_equal(b, "/a/b");
	/* A wildcard at the top: the mount's root. */
	assert_int_equal(select__watch_base("/*", b, sizeof(b)), 0);
	assert_string_equal(b, "");
	assert_int_equal(select__watch_base("/job-[0-9]", b, sizeof(b)), 0);
	assert_string_equal(b, "");
	/* Literal: the parent. */
	assert_int_equal(select__watch_base("/sandboxes/job-1", b, sizeof(b)), 0);
	assert_string_equal(b, "/sandboxes");
	assert_int_equal(select__watch_base("/top", b, sizeof(b)), 0);
	assert_string_equal(b, "");
	assert_int_equal(select__watch_base("/averyveryverylongname/*", b, 8),
			 -ENAMETOOLONG);
	assert_true(select__is_literal("/a/b"));
	assert_false(select__is_literal("/a/*"));
	assert_false(select__is_literal("/a/[bc]"));
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
