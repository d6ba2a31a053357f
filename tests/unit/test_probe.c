// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `stockade probe`'s pure half (agent/probe.c): the probe cgroup's name
 * from a selector, and the log records it matches attempts with.
 */
#include <errno.h>

#include "test.h"
#include "probe.h"

static void test_sibling(void **state)
{
	char out[256];

	(void)state;
	if (EXPECT_EQ(probe_sibling("/sandboxes/job-*", "stockade-probe-7", out, sizeof(out)), 0))
		EXPECT_STR(out, "/sandboxes/job-stockade-probe-7");
	if (EXPECT_EQ(probe_sibling("/k/*/pod-?", "x", out, sizeof(out)), 0))
		EXPECT_STR(out, "/k/*/pod-p");	/* only the last component: its parent is literal here */
	if (EXPECT_EQ(probe_sibling("/s/run-[0-9]*", "t", out, sizeof(out)), 0))
		EXPECT_STR(out, "/s/run-0t");
	if (EXPECT_EQ(probe_sibling("/s/[!a-y]*", "t", out, sizeof(out)), 0))
		EXPECT_STR(out, "/s/zt");
	if (EXPECT_EQ(probe_sibling("/s/a\\*b*", "t", out, sizeof(out)), 0))
		EXPECT_STR(out, "/s/a*bt");
	/* A literal cgroup: no sibling can be selected. */
	EXPECT_EQ(probe_sibling("/sandboxes/job-7", "t", out, sizeof(out)), -ENOENT);
	/* No character a-z0-9 fits. */
	EXPECT_EQ(probe_sibling("/s/[!a-z0-9]*", "t", out, sizeof(out)), -EINVAL);
	EXPECT_EQ(probe_sibling("/s/x-*", "t", out, 6), -ENAMETOOLONG);
	DONE();
}

static void test_records(void **state)
{
	static const char deny[] =
		"{\"ts\":\"2026-12-01T19:56:41.128120268Z\",\"seq\":42,\"event\":\"deny\","
		"\"kind\":\"file\",\"policy\":\"p\",\"cgroup\":\"/s/x\",\"cgroup_id\":9,"
		"\"pid\":77,\"tid\":77,\"uid\":0,\"comm\":\"stockade\",\"op\":\"open_read\","
		"\"path\":\"/x\\\",\\\"pid\\\":1,\\\"\",\"reason\":\"protected\"}";
	static const char lost[] =
		"{\"ts\":\"2026-12-01T19:56:42Z\",\"seq\":50,\"event\":\"lost\",\"count\":7}";
	static const char exec[] =
		"{\"ts\":\"2026-12-01T19:56:42Z\",\"seq\":51,\"event\":\"exec\",\"argv\":[\"a\",\"{\\\"pid\\\":3\"],\"pid\":8}";
	struct probe_rec r;

	(void)state;
	if (EXPECT(probe_parse_rec(deny, sizeof(deny) - 1, &r))) {
		EXPECT_STR(r.event, "deny");
		EXPECT_STR(r.kind, "file");
		EXPECT_STR(r.op, "open_read");
		EXPECT_STR(r.cgroup, "/s/x");
		EXPECT_EQ(r.seq, 42);
		/* The path's own "pid" is inside a string: not the member. */
		EXPECT(r.has_pid && r.pid == 77);
		EXPECT_EQ(r.ts_ns, 1796155001128120268LL);
	}
	if (EXPECT(probe_parse_rec(lost, sizeof(lost) - 1, &r))) {
		EXPECT_EQ(r.count, 7);
		EXPECT(!r.has_pid);
		EXPECT_EQ(r.ts_ns, 1796155002000000000LL);
	}
	if (EXPECT(probe_parse_rec(exec, sizeof(exec) - 1, &r)))
		EXPECT(r.has_pid && r.pid == 8);
	EXPECT(!probe_parse_rec("{\"event\":\"deny\"}", 16, &r));	/* no seq */
	EXPECT(!probe_parse_rec("not json", 8, &r));
	EXPECT_EQ(probe_parse_ts("2026-12-01T19:56:42+01:00"), 0);
	EXPECT_EQ(probe_parse_ts("yesterday"), 0);
	/* Out of 64-bit ns (the fuzzer found it): malformed, no overflow. */
	EXPECT_EQ(probe_parse_ts("1014-12-01T00:00:00Z"), 0);
	EXPECT_EQ(probe_parse_ts("9999-12-01T00:00:00Z"), 0);
	DONE();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sibling),
		cmocka_unit_test(test_records),
	};

	return cmocka_run_group_tests_name("probe", tests, NULL, NULL);
}
