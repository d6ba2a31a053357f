// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The BPF-LSM table without the kernel (agent/lsm_table.c): rows by
 * program, an unlisted program's guarantee, the list of guarantees the
 * agent names when BPF-LSM is missing altogether.
 */
#include "test.h"
#include "lsm.h"

static void test_lookup(void **state)
{
	const struct lsm_hook *h;

	(void)state;
	h = lsm__hook("stk_file_open");
	assert_non_null(h);
	EXPECT_STR(h->hook, "file_open");
	EXPECT_STR(h->guarantee, "file_scope");
	EXPECT_STR(h->also, "protected_paths");
	EXPECT(!h->newer);
	/* Hooks of newer kernels whose absence an older hook covers. */
	EXPECT(lsm__hook("stk_file_truncate")->newer);
	EXPECT(lsm__hook("stk_inode_set_acl")->newer);
	EXPECT(lsm__hook("stk_file_ioctl_compat")->newer);
	/* fentry rows (not LSM hooks): their section is the hook, and a
	 * missing one costs its own guarantee only; the ia32 entry is
	 * absent at no loss without IA32 emulation. */
	h = lsm__hook("stk_persona");
	assert_non_null(h);
	EXPECT_STR(h->hook, LSM_FENTRY "__x64_sys_personality");
	EXPECT_STR(h->guarantee, "anon_exec_personality");
	EXPECT(!h->newer);
	EXPECT(lsm__hook("stk_persona32")->newer);
	EXPECT_STR(lsm__guarantee("stk_ptrace_traceme", "ptrace_traceme"), "ptrace");
	EXPECT(!lsm__hook("stk_nope"));
	EXPECT(!lsm__hook(NULL));

	/* A program without a row is named by its hook: never unnamed. */
	EXPECT_STR(lsm__guarantee("stk_ptrace", "ptrace_access_check"), "ptrace");
	EXPECT_STR(lsm__guarantee("stk_new_thing", "task_fix_setuid"),
		   "task_fix_setuid");
	DONE();
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
	/* got[] is read up to n below. */
	if (!EXPECT(n >= ARRAY_SIZE(want) && n <= 64))
		goto out;
	for (i = 0; i < ARRAY_SIZE(want); i++) {
		for (j = 0; j < n; j++)
			if (!strcmp(got[j], want[i]))
				break;
		EXPECT(j < n);
	}
	/* Each once. */
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			assert_string_not_equal(got[i], got[j]);
	/* A short buffer still counts them all. */
	EXPECT_EQ(lsm__guarantees(got, 2), n);
out:
	DONE();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_guarantees),
	};

	return cmocka_run_group_tests_name("lsm", tests, NULL, NULL);
}
