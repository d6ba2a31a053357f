// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `stockade report`'s pure half (agent/report.c): version-5 UUIDs against
 * a known value, the same name giving the same id, SHA-256 of a file, and
 * the OSCAL document: no empty array (a key left out instead), findings
 * satisfied or not, observations tied to their point.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "test.h"
#include "report.h"

static void test_uuid5(void **state)
{
	char a[REPORT_UUID_LEN], b[REPORT_UUID_LEN];

	(void)state;
	/* Python's uuid.uuid5(uuid.NAMESPACE_DNS, "www.example.com"). */
	if (EXPECT(report_uuid5("6ba7b810-9dad-11d1-80b4-00c04fd430c8", "www.example.com", a)))
		EXPECT_STR(a, "2ed6657d-e927-568b-95e1-2665a8aea6a2");
	EXPECT(report_uuid5(REPORT_UUID_NS, "node/run/x", a));
	EXPECT(report_uuid5(REPORT_UUID_NS, "node/run/x", b));
	EXPECT_STR(a, b);
	EXPECT(a[14] == '5' && strchr("89ab", a[19]));
	EXPECT(!report_uuid5("not-a-uuid", "x", a));
	DONE();
}

static void test_sha256(void **state)
{
	char path[] = "/tmp/stockade-test-report.XXXXXX", sum[65];
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "abc", 3), 3);
	close(fd);
	if (EXPECT_EQ(report_sha256_file(path, sum), 0))
		EXPECT_STR(sum, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	unlink(path);
	EXPECT(report_sha256_file(path, sum) < 0);
	DONE();
}

static void test_oscal(void **state)
{
	struct report_point pt[2] = {
		{ .id = "live-test.1", .title = "credentials", .pass = true, .shown = true },
		{ .id = "live-test.2", .title = "egress", .pass = false, .shown = true, .why = "a \"quoted\" why" },
	};
	struct report_obs obs[1] = { { .title = "probe x", .description = "d", .test = true,
				       .point = "live-test.2" } };
	struct report_res res[1] = { { .title = "log", .href = "log-slice.jsonl",
				       .sha256 = "00" } };
	struct report_doc d = { .node = "n", .run = "r", .generated = "2026-12-01T00:00:00Z",
				.start = "2026-12-01T00:00:00Z", .end = "2026-12-01T00:00:01Z",
				.pt = pt, .n_pt = 2, .obs = obs, .n_obs = 0, .res = res, .n_res = 1 };
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	f = open_memstream(&out, &len);
	assert_non_null(f);
	report_oscal(f, &d);
	fclose(f);
	/* No observation: the key is left out, never []. */
	EXPECT(!strstr(out, "\"observations\""));
	EXPECT(!strstr(out, "[]"));
	EXPECT(strstr(out, "\"target-id\":\"app-016_obj.live-test.1\",\"status\":{\"state\":\"satisfied\"}"));
	EXPECT(strstr(out, "\"state\":\"not-satisfied\""));
	EXPECT(strstr(out, "a \\\"quoted\\\" why"));
	EXPECT(strstr(out, "\"hashes\":[{\"algorithm\":\"SHA-256\",\"value\":\"00\"}]"));
	free(out);
	out = NULL;
	d.n_obs = 1;
	f = open_memstream(&out, &len);
	assert_non_null(f);
	report_oscal(f, &d);
	fclose(f);
	EXPECT(strstr(out, "\"methods\":[\"TEST\"]"));
	EXPECT(strstr(out, "\"related-observations\":[{\"observation-uuid\":"));
	free(out);
	DONE();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uuid5),
		cmocka_unit_test(test_sha256),
		cmocka_unit_test(test_oscal),
	};

	return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}
