// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The JSON writer: escaping of quotes, control bytes and invalid UTF-8. */

#include "test.h"
#include "json.h"

static const char *line_of(struct json *j, void (*fill)(struct json *))
{
	json_begin(j);
	fill(j);
	json_end(j);
	return j->buf;
}

static const char *esc(struct json *j, const char *s, size_t n)
{
	j->len = 0;
	json_escape(j, s, n);
	return j->buf ? j->buf : "";
}

static void test_escape_ascii(void **state)
{
	struct json j;

	(void)state;
	json_init(&j);
	EXPECT_STR(esc(&j, "plain", 5), "plain");
	EXPECT_STR(esc(&j, "a\"b\\c", 5), "a\\\"b\\\\c");
	EXPECT_STR(esc(&j, "\n\t\r\b\f", 5), "\\n\\t\\r\\b\\f");
	EXPECT_STR(esc(&j, "\x01\x1f\x7f", 3), "\\u0001\\u001f\\u007f");
	/* An embedded NUL is data, not the end. */
	EXPECT_STR(esc(&j, "a\0b", 3), "a\\u0000b");
	json_free(&j);
	DONE();
}

static void test_escape_utf8(void **state)
{
	struct json j;

	(void)state;
	json_init(&j);
	/* Valid 2-, 3- and 4-byte sequences pass through. */
	EXPECT_STR(esc(&j, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9),
		   "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	/* Lone continuation, truncated sequence, overlong '/', surrogate,
	 * above U+10FFFF, 0xff: each invalid byte becomes U+FFFD. */
	EXPECT_STR(esc(&j, "\x80", 1), "\\ufffd");
	EXPECT_STR(esc(&j, "a\xe2\x82", 3), "a\\ufffd\\ufffd");
	EXPECT_STR(esc(&j, "\xc0\xaf", 2), "\\ufffd\\ufffd");
	EXPECT_STR(esc(&j, "\xed\xa0\x80", 3), "\\ufffd\\ufffd\\ufffd");
	EXPECT_STR(esc(&j, "\xf4\x90\x80\x80", 4),
		   "\\ufffd\\ufffd\\ufffd\\ufffd");
	EXPECT_STR(esc(&j, "\xff", 1), "\\ufffd");
	json_free(&j);
	DONE();
}

static void fill_comm(struct json *j)
{
	json_str_raw(j, "comm", "ev\xffil\"", 6);
	json_u64(j, "pid", 42);
}

static void fill_plain(struct json *j)
{
	const char *v[] = { "a", "b\"" };

	json_str(j, "event", "deny");
	json_str_raw(j, "comm", "curl", 4);
	json_str_array(j, "degraded", v, 2);
	json_str_array(j, "empty", v, 0);
	json_bool(j, "ok", true);
	json_i64(j, "neg", -3);
}

static void test_objects(void **state)
{
	struct json j;

	(void)state;
	json_init(&j);
	/* The raw bytes survive as hex when they were not valid UTF-8. */
	EXPECT_STR(line_of(&j, fill_comm),
		   "{\"comm\":\"ev\\ufffdil\\\"\",\"comm_hex\":\"6576ff696c22\",\"pid\":42}\n");
	EXPECT_STR(line_of(&j, fill_plain),
		   "{\"event\":\"deny\",\"comm\":\"curl\",\"degraded\":[\"a\",\"b\\\"\"],\"empty\":[],\"ok\":true,\"neg\":-3}\n");
	json_free(&j);
	DONE();
}

static void fill_numbers(struct json *j)
{
	json_u64(j, "a", 0);
	json_u64(j, "b", 9);
	json_u64(j, "c", 10);
	json_u64(j, "d", 1234567890123ULL);
	json_u64(j, "e", UINT64_MAX);
	json_i64(j, "f", 0);
	json_i64(j, "g", -1);
	json_i64(j, "h", INT64_MAX);
	json_i64(j, "i", INT64_MIN);
}

/* Every digit count's edge, and the extremes of both signs. */
static void test_numbers(void **state)
{
	struct json j;

	(void)state;
	json_init(&j);
	EXPECT_STR(line_of(&j, fill_numbers),
		   "{\"a\":0,\"b\":9,\"c\":10,\"d\":1234567890123,"
		   "\"e\":18446744073709551615,\"f\":0,\"g\":-1,"
		   "\"h\":9223372036854775807,\"i\":-9223372036854775808}\n");
	json_free(&j);
	DONE();
}

static void test_growth(void **state)
{
	char big[10000];
	struct json j;

	(void)state;
	memset(big, '"', sizeof(big));
	json_init(&j);
	json_begin(&j);
	json_strn(&j, "k", big, sizeof(big));
	json_end(&j);
	/* {"k":" + 2 bytes per quote + "}\n */
	EXPECT_EQ(j.len, 6 + 2 * sizeof(big) + 3);
	EXPECT(!j.oom);
	json_free(&j);
	DONE();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape_ascii),
		cmocka_unit_test(test_escape_utf8),
		cmocka_unit_test(test_objects),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_growth),
	};

	return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}
