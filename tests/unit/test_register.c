// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The code register (policy/register.h: its loader) and `stockade
 * register check` (agent/register_check.c) against crafted logs: a
 * passing one, then an unlisted category, an expired entry, a wrong hash,
 * the wrong environment, a missing limit and a seq gap no lost record
 * explains; a gap that one does explain passes.
 */
#include <errno.h>
#include <stdlib.h>

#include "test.h"
#include "register.h"
#include "register_check.h"

static const char reg_yaml[] =
	"entries:\n"
	"  - category: model-generated-code\n"
	"    description: code the assistant writes\n"
	"    conditions:\n"
	"      policies: [model-code, 00000000000000aa]\n"
	"      limits: [memory, runtime]\n"
	"    environment: /sandboxes/job-*\n"
	"    approver: J. Doe\n"
	"    approved: 2026-11-01\n"
	"    expires: 2026-12-01T12:00:00Z\n";

#define POL(name, hash, cat, limits) \
	"{\"ts\":\"2026-12-01T09:00:00Z\",\"seq\":1,\"event\":\"policy\",\"policy\":\"" name "\"," \
	"\"hash\":\"" hash "\",\"category\":\"" cat "\",\"limits\":[" limits "]}\n"
#define ATTACH(seq, pol, cg) \
	"{\"ts\":\"2026-12-01T09:00:01Z\",\"seq\":" #seq ",\"event\":\"attach\",\"policy\":\"" pol "\",\"cgroup\":\"" cg "\"}\n"
#define EXEC(ts, seq, pol, hash, cat, cg) \
	"{\"ts\":\"" ts "\",\"seq\":" #seq ",\"event\":\"exec\",\"policy\":\"" pol "\",\"policy_hash\":\"" hash "\"," \
	"\"category\":\"" cat "\",\"cgroup\":\"" cg "\",\"argv\":[\"x\"]}\n"

static struct code_register *load(void)
{
	struct policy_diag diag = { 0 };
	struct code_register *r = NULL;

	assert_int_equal(register__parse("r.yaml", reg_yaml, sizeof(reg_yaml) - 1, &r, &diag), 0);
	policy_diag__free(&diag);
	return r;
}

/* The report for log text; *n_p its problems. */
static void check(const struct code_register *r, const char *log, struct reg_report *rep)
{
	FILE *f = fmemopen((void *)log, strlen(log), "r");

	assert_non_null(f);
	assert_int_equal(register__check(r, f, 0, 0, rep), 0);
	fclose(f);
}

static bool has(const struct reg_report *rep, const char *s)
{
	size_t i;

	for (i = 0; i < rep->n_p; i++)
		if (strstr(rep->p[i].msg, s))
			return true;
	return false;
}

static void test_load(void **state)
{
	struct code_register *r = load();
	const struct register_entry *e;

	(void)state;
	e = register__find(r, "model-generated-code");
	if (EXPECT(e)) {
		EXPECT_EQ(e->n_policies, 2);
		EXPECT_EQ(e->limits, REG_LIMIT_MEMORY | REG_LIMIT_RUNTIME);
		EXPECT_EQ(e->approved_s, 1793491200);
		EXPECT_EQ(e->expires_s, 1796126400);
		EXPECT_STR(e->environment, "/sandboxes/job-*");
	}
	EXPECT(!register__find(r, "other"));
	register__free(r);
	EXPECT(register__sniff("# c\nentries:\n", 12));
	EXPECT(!register__sniff("name: p\nentries: x\n", 19));
	DONE();
}

static void test_pass(void **state)
{
	struct code_register *r = load();
	struct reg_report rep;

	(void)state;
	check(r, POL("model-code", "00000000000000bb", "model-generated-code", "\"memory\",\"runtime\"")
		 ATTACH(2, "model-code", "/sandboxes/job-1")
		 EXEC("2026-12-01T09:00:02Z", 3, "model-code", "00000000000000bb", "model-generated-code", "/sandboxes/job-1/sub")
		 "{\"ts\":\"2026-12-01T09:00:03Z\",\"seq\":7,\"event\":\"lost\",\"count\":3}\n"
		 EXEC("2026-12-01T09:00:04Z", 8, "model-code", "00000000000000bb", "model-generated-code", "/sandboxes/job-2"),
	      &rep);
	EXPECT_EQ(rep.n_p, 0);
	EXPECT_EQ(rep.execs, 2);
	EXPECT_EQ(rep.seq_missing, 3);
	if (EXPECT_EQ(rep.n_c, 1)) {
		EXPECT_EQ(rep.c[0].execs, 2);
		EXPECT_EQ(rep.c[0].n_cgroups, 3);
	}
	reg_report__free(&rep);
	register__free(r);
	DONE();
}

static void test_failures(void **state)
{
	struct code_register *r = load();
	struct reg_report rep;

	(void)state;
	/* An unlisted category. */
	check(r, EXEC("2026-12-01T09:00:02Z", 1, "p", "00000000000000cc", "customer-scripts", "/sandboxes/job-1"), &rep);
	EXPECT(has(&rep, "category 'customer-scripts' (policy p) is not in the register"));
	reg_report__free(&rep);
	/* Run after its entry expired (12:00Z). */
	check(r, POL("model-code", "00000000000000bb", "model-generated-code", "\"memory\",\"runtime\"")
		 EXEC("2026-12-01T13:00:00Z", 2, "model-code", "00000000000000bb", "model-generated-code", "/sandboxes/job-1"),
	      &rep);
	EXPECT(has(&rep, "ran after its entry expired"));
	EXPECT_EQ(rep.n_p, 1);
	reg_report__free(&rep);
	/* A policy (and hash) the entry does not name; the hash alone is enough. */
	check(r, EXEC("2026-12-01T09:00:02Z", 1, "other", "00000000000000dd", "model-generated-code", "/sandboxes/job-1")
		 EXEC("2026-12-01T09:00:02Z", 2, "renamed", "00000000000000aa", "model-generated-code", "/sandboxes/job-1"),
	      &rep);
	EXPECT(has(&rep, "ran under policy other (hash 00000000000000dd), which its entry does not name"));
	EXPECT(!has(&rep, "policy renamed (hash"));
	reg_report__free(&rep);
	/* Outside the environment, and a required limit missing. */
	check(r, POL("model-code", "00000000000000bb", "model-generated-code", "\"memory\"")
		 ATTACH(2, "model-code", "/elsewhere/job-1"),
	      &rep);
	EXPECT(has(&rep, "ran in /elsewhere/job-1, outside its environment /sandboxes/job-*"));
	EXPECT(has(&rep, "requires a runtime limit; policy model-code sets none"));
	reg_report__free(&rep);
	/* A gap no lost record explains. */
	check(r, POL("model-code", "00000000000000bb", "model-generated-code", "\"memory\",\"runtime\"")
		 EXEC("2026-12-01T09:00:02Z", 2, "model-code", "00000000000000bb", "model-generated-code", "/sandboxes/job-1")
		 EXEC("2026-12-01T09:00:03Z", 9, "model-code", "00000000000000bb", "model-generated-code", "/sandboxes/job-1"),
	      &rep);
	EXPECT(has(&rep, "6 sequence number(s) between 1 and 9 are missing and only 0 are accounted for"));
	if (EXPECT_EQ(rep.n_p, 1))
		EXPECT_EQ(rep.p[0].first_seq, 3);
	reg_report__free(&rep);
	/* A gap a log_lost note (no seq: the log's writes failed) and a
	 * lost record explain: passes; without the lost record, fails. */
	check(r, POL("model-code", "00000000000000bb", "model-generated-code", "\"memory\",\"runtime\"")
		 EXEC("2026-12-01T09:00:02Z", 2, "model-code", "00000000000000bb", "model-generated-code", "/sandboxes/job-1")
		 "{\"ts\":\"2026-12-01T09:00:03Z\",\"event\":\"log_lost\",\"count\":4}\n"
		 "{\"ts\":\"2026-12-01T09:00:03Z\",\"seq\":8,\"event\":\"lost\",\"count\":1}\n"
		 EXEC("2026-12-01T09:00:03Z", 9, "model-code", "00000000000000bb", "model-generated-code", "/sandboxes/job-1"),
	      &rep);
	EXPECT_EQ(rep.seq_missing, 5);
	EXPECT_EQ(rep.seq_accounted, 5);
	EXPECT_EQ(rep.n_p, 0);
	reg_report__free(&rep);
	check(r, POL("model-code", "00000000000000bb", "model-generated-code", "\"memory\",\"runtime\"")
		 EXEC("2026-12-01T09:00:02Z", 2, "model-code", "00000000000000bb", "model-generated-code", "/sandboxes/job-1")
		 "{\"ts\":\"2026-12-01T09:00:03Z\",\"event\":\"log_lost\",\"count\":4}\n"
		 EXEC("2026-12-01T09:00:03Z", 9, "model-code", "00000000000000bb", "model-generated-code", "/sandboxes/job-1"),
	      &rep);
	EXPECT(has(&rep, "6 sequence number(s) between 1 and 9 are missing and only 4 are accounted for"));
	reg_report__free(&rep);
	/* The same record twice (after a SIGKILL): no gap. */
	check(r, POL("model-code", "00000000000000bb", "model-generated-code", "\"memory\",\"runtime\"")
		 ATTACH(2, "model-code", "/sandboxes/job-1") ATTACH(2, "model-code", "/sandboxes/job-1"),
	      &rep);
	EXPECT_EQ(rep.n_p, 0);
	reg_report__free(&rep);
	register__free(r);
	DONE();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_pass),
		cmocka_unit_test(test_failures),
	};

	return cmocka_run_group_tests_name("register", tests, NULL, NULL);
}
