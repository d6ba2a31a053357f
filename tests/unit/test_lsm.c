// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The BPF-LSM table without the kernel (agent/lsm_table.c): rows by
 * program, an unlisted program's guarantee, the list of guarantees the
 * agent names when BPF-LSM is missing altogether.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "lsm.h"

static void test_lookup(void **state)
{
	const struct lsm_hook *h;

	(void)state;
	h = lsm__hook("stk_file_open");
	assert_non_null(h);
	assert_string_equal(h->hook, "file_open");
	assert_string_equal(h->guarantee, "file_scope");
	assert_string_equal(h->also, "protected_paths");
	assert_false(h->newer);
	/* Hooks of newer kernels whose absence an older hook covers. */
	assert_true(lsm__hook("stk_file_truncate")->newer);
	assert_true(lsm__hook("stk_inode_set_acl")->newer);
	assert_true(lsm__hook("stk_file_ioctl_compat")->newer);
	assert_null(lsm__hook("stk_nope"));
	assert_null(lsm__hook(NULL));

	/* A program without a row is named by its hook: never unnamed. */
	assert_string_equal(lsm__guarantee("stk_ptrace", "ptrace_access_check"), "ptrace");
	assert_string_equal(lsm__guarantee("stk_new_thing", "task_fix_setuid"),
			    "task_fix_setuid");
}

static void test_guarantees(void **state)
{
	/* The names agent_ready has always listed (tests/live/degraded.sh). */
	static const char *const want[] = {
		"file_scope", "protected_paths", "fd_receive", "bpf", "ptrace",
		"signals", "mount", "cgroup_escape", "unix_sockets",
		"user_namespaces", "packet_sockets", "socket_owner",
	};
	const char *got[64];
	size_t i, j, n;

	(void)state;
	n = lsm__guarantees(got, 64);
	assert_true(n >= sizeof(want) / sizeof(want[0]) && n <= 64);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		for (j = 0; j < n; j++)
			if (!strcmp(got[j], want[i]))
				break;
		assert_true(j < n);
	}
	/* Each once. */
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			assert_string_not_equal(got[i], got[j]);
	/* A short buffer still counts them all. */
	assert_int_equal(lsm__guarantees(got, 2), n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_guarantees),
	};

	return cmocka_run_group_tests_name("lsm", tests, NULL, NULL);
}
