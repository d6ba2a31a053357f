// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `stockade watch`'s pure parts: the request parser (untrusted input:
 * every refusal says why, nothing half-set survives one), the filter
 * matcher (keys AND, values OR, globs, lost always passes), the request
 * the client formats (it parses back to the same filter), and the compact
 * line (agent/watch_format.c) for refusals, other records and gaps, with
 * and without colour.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <json-c/json.h>

#include "test.h"
#include "watch_filter.h"
#include "watch_format.h"

static const char deny_line[] =
	"{\"ts\":\"2026-11-29T19:56:41.445175874Z\",\"seq\":4,\"event\":\"deny\",\"kind\":\"connect\","
	"\"policy\":\"model-code\",\"cgroup\":\"/kubepods.slice/pod1/cri-containerd-abc.scope\",\"cgroup_id\":139,"
	"\"container\":{\"runtime\":\"containerd\",\"id\":\"0123456789abcdef0123\",\"name\":\"web\","
	"\"pod\":{\"namespace\":\"prod\",\"name\":\"web-7f9c\",\"uid\":\"u-1\"}},"
	"\"pid\":15159,\"tid\":15159,\"uid\":0,\"comm\":\"netprobe\",\"family\":\"ipv4\","
	"\"daddr\":\"169.254.169.254\",\"dport\":80,\"proto\":\"tcp\",\"proto_nr\":6,\"reason\":\"metadata_endpoint\"}\n";
static const char lost_line[] =
	"{\"ts\":\"2026-11-29T19:57:02.000000001Z\",\"seq\":40213,\"event\":\"lost\",\"count\":118,\"lost_total\":118,\"reason\":\"ring_buffer_full\"}\n";
static const char exec_line[] =
	"{\"ts\":\"2026-11-29T19:57:03.250000000Z\",\"seq\":41,\"event\":\"exec\",\"policy\":\"build\","
	"\"cgroup\":\"/ci/job-1\",\"cgroup_id\":7,\"pid\":300,\"binary\":\"/usr/bin/make\"}\n";

static bool req_ok(const char *req, struct watch_filter *f)
{
	char err[256];

	return watch_req__parse(req, strlen(req), f, err, sizeof(err)) == 0;
}

/* The refusal's reason contains want. */
static bool req_bad(const char *req, size_t len, const char *want)
{
	struct watch_filter f;
	char err[256] = "";
	int e = watch_req__parse(req, len, &f, err, sizeof(err));

	if (e != -EINVAL || !strstr(err, want)) {
		print_error("request %.60s: got %d '%s', want -EINVAL '%s'\n", req, e, err, want);
		watch_filter__free(&f);
		return false;
	}
	/* Nothing left behind. */
	return !watch_filter__selects(&f) && !f.has_since;
}

static void test_request(void **state)
{
	struct watch_filter f;
	char big[WATCH_REQ_MAX + 10];

	(void)state;
	EXPECT(req_ok("", &f));
	EXPECT(!watch_filter__selects(&f));
	EXPECT(req_ok("{}", &f));
	EXPECT(req_ok("{\"since\":10,\"policy\":[\"a\",\"b*\"],\"kind\":\"connect\",\"pid\":7,\"since_seq\":99}", &f));
	EXPECT(f.has_since && f.since == 10);
	EXPECT(f.has_since_seq && f.since_seq == 99);
	EXPECT(f.has_pid && f.pid == 7);
	EXPECT_EQ(f.policy.n, 2);
	EXPECT_STR(f.policy.v[1], "b*");
	EXPECT_EQ(f.kind.n, 1);
	EXPECT(watch_filter__selects(&f));
	watch_filter__free(&f);

	EXPECT(req_bad("{\"polcy\":\"a\"}", 13, "unknown key \"polcy\""));
	EXPECT(req_bad("{\"since\":-1}", 12, "non-negative"));
	EXPECT(req_bad("{\"since\":\"3\"}", 13, "non-negative"));
	EXPECT(req_bad("{\"since\":1.5}", 13, "non-negative"));
	EXPECT(req_bad("{\"kind\":[1]}", 12, "expected strings"));
	EXPECT(req_bad("{\"kind\":[]}", 11, "empty"));
	EXPECT(req_bad("{\"kind\":\"\"}", 11, "empty"));
	EXPECT(req_bad("{\"kind\":{}}", 11, "a string or an array"));
	EXPECT(req_bad("[1]", 3, "not a JSON object"));
	EXPECT(req_bad("{\"a\":", 5, "not one JSON object"));
	EXPECT(req_bad("{} {}", 5, "not one JSON object"));
	EXPECT(req_bad("{\"kind\":\"a\0b\"}", 14, "NUL"));
	EXPECT(req_bad("{\"since\":99999999999999999999}", 30, "non-negative"));
	/* Too deep: a flat object only. */
	EXPECT(req_bad("{\"kind\":[[[[[\"a\"]]]]]}", 21, "not one JSON object"));
	memset(big, ' ', sizeof(big));
	big[0] = '{';
	big[sizeof(big) - 2] = '}';
	EXPECT(req_bad(big, sizeof(big) - 1, "longer than"));
	{
		/* 33 values, one value of 257 bytes. */
		char many[1024] = "{\"kind\":[", *p = many + strlen(many);
		char longv[400];
		int i;

		for (i = 0; i < 33; i++)
			p += sprintf(p, "%s\"k%d\"", i ? "," : "", i);
		strcpy(p, "]}");
		EXPECT(req_bad(many, strlen(many), "more than 32"));
		memset(longv, 'x', sizeof(longv));
		memcpy(longv, "{\"policy\":\"", 11);
		memcpy(longv + 11 + 257, "\"}", 3);
		EXPECT(req_bad(longv, strlen(longv), "longer than 256"));
	}
	DONE();
}

static bool line_passes(const char *req, const char *line)
{
	struct watch_filter f;
	struct watch_line wl = { .buf = line, .len = strlen(line) };
	bool ok;

	if (!req_ok(req, &f)) {
		print_error("request %s refused\n", req);
		return false;
	}
	ok = watch_filter__match_line(&f, &wl);
	watch_line__done(&wl);
	watch_filter__free(&f);
	return ok;
}

static void test_match(void **state)
{
	(void)state;
	EXPECT(line_passes("{}", deny_line));
	EXPECT(line_passes("{\"policy\":\"model-*\"}", deny_line));
	EXPECT(!line_passes("{\"policy\":\"model\"}", deny_line));
	EXPECT(line_passes("{\"policy\":[\"x\",\"model-code\"]}", deny_line));
	/* '*' crosses '/'. */
	EXPECT(line_passes("{\"cgroup\":\"/kubepods.slice/*\"}", deny_line));
	EXPECT(!line_passes("{\"cgroup\":\"/ci/*\"}", deny_line));
	EXPECT(line_passes("{\"container\":\"web\"}", deny_line));
	EXPECT(line_passes("{\"container\":\"0123456789ab*\"}", deny_line));
	EXPECT(!line_passes("{\"container\":\"db\"}", deny_line));
	EXPECT(line_passes("{\"pod\":\"prod/web-*\"}", deny_line));
	EXPECT(!line_passes("{\"pod\":\"staging/*\"}", deny_line));
	/* No container: a container or pod filter refuses. */
	EXPECT(!line_passes("{\"container\":\"*\"}", exec_line));
	EXPECT(!line_passes("{\"pod\":\"*\"}", exec_line));
	EXPECT(line_passes("{\"kind\":[\"sendmsg\",\"connect\"]}", deny_line));
	EXPECT(!line_passes("{\"kind\":\"conn\"}", deny_line));
	EXPECT(line_passes("{\"reason\":\"metadata_endpoint\"}", deny_line));
	EXPECT(line_passes("{\"event\":\"deny\"}", deny_line));
	EXPECT(!line_passes("{\"event\":\"deny\"}", exec_line));
	EXPECT(line_passes("{\"event\":\"exec\",\"policy\":\"build\"}", exec_line));
	EXPECT(line_passes("{\"pid\":15159}", deny_line));
	EXPECT(!line_passes("{\"pid\":15}", deny_line));
	/* Keys AND. */
	EXPECT(!line_passes("{\"kind\":\"connect\",\"policy\":\"other\"}", deny_line));
	/* lost passes every filter. */
	EXPECT(line_passes("{\"kind\":\"connect\",\"policy\":\"other\",\"pid\":1}", lost_line));
	/* A line that is not JSON passes only no filter. */
	EXPECT(line_passes("{}", "garbage\n"));
	EXPECT(!line_passes("{\"kind\":\"x\"}", "garbage\n"));
	DONE();
}

static void test_format_request(void **state)
{
	struct watch_filter f = { 0 }, g;
	char buf[WATCH_REQ_MAX + 1], err[256];
	int n;

	(void)state;
	EXPECT_EQ(watch_list__add(&f.kind, "connect,sendmsg"), 0);
	EXPECT_EQ(watch_list__add(&f.pod, "prod/*"), 0);
	EXPECT_EQ(watch_list__add(&f.kind, "a,,b"), -EINVAL);
	f.has_since_seq = true;
	f.since_seq = 1234;
	n = watch_req__format(&f, buf, sizeof(buf));
	assert_true(n > 0);
	EXPECT_EQ(buf[n - 1], '\n');
	EXPECT_EQ(watch_req__parse(buf, (size_t)n - 1, &g, err, sizeof(err)), 0);
	EXPECT_EQ(g.kind.n, 3);	/* connect, sendmsg, a (before the empty one) */
	EXPECT_STR(g.kind.v[1], "sendmsg");
	EXPECT_STR(g.pod.v[0], "prod/*");
	EXPECT(g.has_since_seq && g.since_seq == 1234);
	EXPECT(!g.has_since);
	watch_filter__free(&g);
	EXPECT_EQ(watch_req__format(&f, buf, 8), -ENOSPC);
	watch_filter__free(&f);
	DONE();
}

static const char *compact(const char *line, bool color, char *buf, size_t len)
{
	struct json_object *o = json_tokener_parse(line);

	watch_format__compact(o, color, buf, len);
	json_object_put(o);
	return buf;
}

static void test_compact(void **state)
{
	char buf[512];

	(void)state;
	setenv("TZ", "UTC", 1);
	tzset();
	EXPECT_STR(compact(deny_line, false, buf, sizeof(buf)),
		   "19:56:41.445  deny   web                  connect            169.254.169.254:80  metadata_endpoint  policy=model-code\n");
	/* Coloured: red, and reset at the end. */
	compact(deny_line, true, buf, sizeof(buf));
	EXPECT(!strncmp(buf, "\033[31m19:56:41.445", 17));
	EXPECT(strstr(buf, "\033[0m\n") != NULL);
	EXPECT_STR(compact(lost_line, false, buf, sizeof(buf)),
		   "19:57:02.000  !! LOST  118 records lost before the log (total 118); seq 40213 (ring_buffer_full)\n");
	compact(lost_line, true, buf, sizeof(buf));
	EXPECT(!strncmp(buf, "\033[1;31m", 7));
	EXPECT_STR(compact("{\"ts\":\"2026-11-29T19:57:03.5Z\",\"event\":\"watch_lost\",\"count\":3,\"first_seq\":10,\"last_seq\":20}",
			   false, buf, sizeof(buf)),
		   "19:57:03.500  !! WATCH_LOST  3 records not sent to this watcher (too slow): seq 10..20; the log has them\n");
	EXPECT_STR(compact(exec_line, false, buf, sizeof(buf)),
		   "19:57:03.250  exec   /ci/job-1            -                  pid 300 /usr/bin/make  policy=build\n");
	/* Without a name, the container's id, 12 digits; an IPv6 address
	 * in brackets; a file path with its op. */
	EXPECT_STR(compact("{\"ts\":\"2026-11-29T01:02:03.000Z\",\"event\":\"deny\",\"kind\":\"connect\",\"container\":{\"id\":\"0123456789abcdef\"},\"daddr\":\"fd00::1\",\"dport\":443,\"reason\":\"not_allowed\",\"policy\":\"p\"}",
			   false, buf, sizeof(buf)),
		   "01:02:03.000  deny   0123456789ab         connect            [fd00::1]:443  not_allowed  policy=p\n");
	EXPECT_STR(compact("{\"ts\":\"2026-11-29T01:02:03.000Z\",\"event\":\"audit\",\"kind\":\"file\",\"op\":\"open_write\",\"cgroup\":\"/a\",\"path\":\"/etc/shadow\",\"reason\":\"protected\",\"policy\":\"p\"}",
			   false, buf, sizeof(buf)),
		   "01:02:03.000  audit  /a                   file/open_write    /etc/shadow  protected  policy=p\n");
	/* Truncated: still one line, terminated. */
	EXPECT_EQ(watch_format__compact(NULL, false, buf, 0), 0);
	compact(deny_line, false, buf, 20);
	EXPECT_EQ(strlen(buf), 19);
	EXPECT_EQ(buf[18], '\n');
	DONE();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_format_request),
		cmocka_unit_test(test_compact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
