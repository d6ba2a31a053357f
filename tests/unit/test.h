/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * What every cmocka test here shares (tests/unit/test_*.c, tests/prog/).
 *
 * Checks follow the kernel's test_progs (tools/testing/selftests/bpf,
 * ASSERT_*): EXPECT*() return whether they held, so a test can skip what
 * depends on a failed check or jump to its cleanup, and a failed one prints
 * file:line, the expression and, where there are any, both values. The
 * test fails at its end (DONE()) if any check did. cmocka's own assert_*()
 * stay for gates, where what follows cannot run after a failure (an
 * allocation, a count the next lines index by): they end the test at once.
 *
 * SKIP() says why a test cannot run here (the kernel refuses a feature)
 * and returns true, so `if (SKIP(...)) goto out;` reads as it does in
 * test_progs; DONE() then marks the test skipped, never passed, unless a
 * check failed first.
 */
#ifndef STOCKADE_TEST_H
#define STOCKADE_TEST_H

/* cmocka.h needs these before it, in this order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

/* Per test binary; DONE() resets both for the next test. */
static int test__n_failed __attribute__((unused));
static bool test__skipped __attribute__((unused));

static inline bool test__expect(bool ok, const char *expr, const char *file,
				int line)
{
	if (!ok) {
		print_error("%s:%d: check failed: %s\n", file, line, expr);
		test__n_failed++;
	}
	return ok;
}

static inline bool test__expect_eq(long long got, long long want,
				   const char *expr, const char *file, int line)
{
	bool ok = got == want;

	if (!ok) {
		print_error("%s:%d: %s\n  got:  %lld\n  want: %lld\n", file,
			    line, expr, got, want);
		test__n_failed++;
	}
	return ok;
}

static inline bool test__expect_str(const char *got, const char *want,
				    const char *expr, const char *file,
				    int line)
{
	bool ok = got && strcmp(got, want) == 0;

	if (!ok) {
		print_error("%s:%d: %s\n  got:  %s\n  want: %s\n", file, line,
			    expr, got ? got : "(null)", want);
		test__n_failed++;
	}
	return ok;
}

#define EXPECT(cond)		test__expect(!!(cond), #cond, __FILE__, __LINE__)
#define EXPECT_EQ(got, want)	test__expect_eq((long long)(got), \
					(long long)(want), #got " == " #want, \
					__FILE__, __LINE__)
#define EXPECT_STR(got, want)	test__expect_str((got), (want), #got, \
					 __FILE__, __LINE__)

/* Always true: the caller returns or jumps to its cleanup. */
#define SKIP(...)							\
	(print_message("SKIP %s:%d: ", __FILE__, __LINE__),		\
	 print_message(__VA_ARGS__), print_message("\n"),		\
	 test__skipped = true)

/* End of a test: fail it if any check failed, else skip it if it said so;
 * the next test starts clean either way. */
#define DONE()	do {							\
		int f_ = test__n_failed;				\
		bool s_ = test__skipped;				\
									\
		test__n_failed = 0;					\
		test__skipped = false;					\
		if (f_)							\
			fail_msg("%d check(s) failed", f_);		\
		if (s_)							\
			skip();						\
	} while (0)

#endif /* STOCKADE_TEST_H */
