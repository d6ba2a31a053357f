// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The JSON writer: escaping of quotes, control bytes and invalid UTF-8. */

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>

#include "test.h"
#include "json.h"
#include "records.h"

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

static void fill_names(struct json *j)
{
	json_name(j, "family", "ipv4");
	json_str_raw(j, "a_key_of_sixty_bytes_or_more_whose_hex_sibling_must_still_fit", "\xff", 1);
	json_name(j, "reason", "");
}

/* json_name() writes its value as it is; a long key's _hex sibling is
 * cut to fit, not overrun. */
static void test_names(void **state)
{
	struct json j;

	(void)state;
	json_init(&j);
	EXPECT_STR(line_of(&j, fill_names),
		   "{\"family\":\"ipv4\","
		   "\"a_key_of_sixty_bytes_or_more_whose_hex_sibling_must_still_fit\":\"\\ufffd\","
		   "\"a_key_of_sixty_bytes_or_more_whose_hex_sibling_must_still_f_hex\":\"ff\","
		   "\"reason\":\"\"}\n");
	json_free(&j);
	DONE();
}

/* records__addr() against inet_ntop(): every octet's digit-count edges
 * in every position, then random addresses, and IPv6 as the library's. */
static void expect_addr(struct json *j, bool v4, const uint8_t *a)
{
	char want[INET6_ADDRSTRLEN + 32], txt[INET6_ADDRSTRLEN];

	inet_ntop(v4 ? AF_INET : AF_INET6, a, txt, sizeof(txt));
	snprintf(want, sizeof(want), "{\"daddr\":\"%s\"}\n", txt);
	json_begin(j);
	records__addr(j, "daddr", v4, a);
	json_end(j);
	EXPECT_STR(j->buf, want);
}

static void test_addr(void **state)
{
	static const uint8_t edge[] = { 0, 1, 9, 10, 11, 99, 100, 101, 199, 200, 255 };
	const size_t ne = sizeof(edge);
	uint8_t a[16] = { 0 };
	struct json j;
	size_t i, k;

	(void)state;
	json_init(&j);
	for (i = 0; i < ne * ne * ne * ne; i++) {
		a[0] = edge[i % ne];
		a[1] = edge[i / ne % ne];
		a[2] = edge[i / ne / ne % ne];
		a[3] = edge[i / ne / ne / ne];
		expect_addr(&j, true, a);
	}
	srand(18);
	for (i = 0; i < 20000; i++) {
		for (k = 0; k < 16; k++)
			a[k] = (uint8_t)rand();
		expect_addr(&j, true, a);
		expect_addr(&j, false, a);
	}
	memset(a, 0, sizeof(a));
	expect_addr(&j, false, a);		/* :: */
	a[10] = a[11] = 0xff;
	a[12] = 127, a[15] = 1;
	expect_addr(&j, false, a);		/* ::ffff:127.0.0.1 */
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
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_addr),
	};

	return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}
