// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Limits and counting without the kernel (agent/limits_util.c): cgroup
 * file values, the kernel log's OOM lines, bursts, Prometheus text,
 * status output, the state file's reader.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "test.h"
#include "limits_util.h"

static void test_values(void **state)
{
	uint64_t v;
	char buf[64];

	(void)state;
	EXPECT_EQ(cgv_parse("max\n", &v), 0);
	EXPECT(v == CGV_MAX);
	EXPECT_EQ(cgv_parse(" 33554432\n", &v), 0);
	EXPECT(v == 33554432);
	EXPECT_EQ(cgv_parse("", &v), -EINVAL);
	EXPECT_EQ(cgv_parse("12x", &v), -EINVAL);
	EXPECT_EQ(cgv_parse("-1", &v), -EINVAL);
	EXPECT_EQ(cgv_parse("maxi", &v), -EINVAL);

	/* memory.events: "oom" must not match "oom_kill", nor the reverse. */
	EXPECT_EQ(cgv_keyed("low 0\nhigh 0\nmax 7\noom 3\noom_kill 2\noom_group_kill 0\n",
			    "oom_kill", &v), 0);
	EXPECT(v == 2);
	EXPECT_EQ(cgv_keyed("oom_kill 2\noom 3\n", "oom", &v), 0);
	EXPECT(v == 3);
	EXPECT_EQ(cgv_keyed("max 9", "max", &v), 0);
	EXPECT(v == 9);
	EXPECT_EQ(cgv_keyed("max_x 9\n", "max", &v), -ENOENT);
	/* A key is a whole word: "max1 7" is not "max". */
	EXPECT_EQ(cgv_keyed("max1 7\nmax 2\n", "max", &v), 0);
	EXPECT(v == 2);
	EXPECT_EQ(cgv_keyed("", "max", &v), -ENOENT);

	/* 100 ms periods; 1 s below 10 millicores (quota >= 1 ms). */
	cgv_cpu_max(1500, buf, sizeof(buf));
	EXPECT_STR(buf, "150000 100000");
	cgv_cpu_max(500, buf, sizeof(buf));
	EXPECT_STR(buf, "50000 100000");
	cgv_cpu_max(10, buf, sizeof(buf));
	EXPECT_STR(buf, "1000 100000");
	cgv_cpu_max(5, buf, sizeof(buf));
	EXPECT_STR(buf, "5000 1000000");
	cgv_cpu_max(1, buf, sizeof(buf));
	EXPECT_STR(buf, "1000 1000000");
	EXPECT_EQ(cgv_cpu_milli("50000 100000\n", &v), 0);
	EXPECT(v == 500);
	EXPECT_EQ(cgv_cpu_milli("max 100000\n", &v), 0);
	EXPECT(v == CGV_MAX);
	EXPECT_EQ(cgv_cpu_milli("5 0", &v), -EINVAL);

	EXPECT_STR(cgv_human(512, buf, sizeof(buf)), "512");
	EXPECT_STR(cgv_human(1536, buf, sizeof(buf)), "1.5Ki");
	EXPECT_STR(cgv_human(32 << 20, buf, sizeof(buf)), "32.0Mi");

	EXPECT(cgv_path_within("/a/b", "/a"));
	EXPECT(cgv_path_within("/a", "/a"));
	EXPECT(!cgv_path_within("/ab", "/a"));
	EXPECT(!cgv_path_within("/", "/a"));
	DONE();
}

static void test_kmsg(void **state)
{
	static const char summary[] =
		"6,512,1234567,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/lim-mem,task_memcg=/lim-mem/job,task=hog,pid=234,uid=0\n";
	static const char killed[] =
		"3,513,1234568,-;Memory cgroup out of memory: Killed process 234 (my (evil) hog) total-vm:70000kB, anon-rss:32000kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:100kB oom_score_adj:0\n SUBSYSTEM=x\n";
	static const char other[] = "6,514,1,-;eth0: link up\n";
	struct oom_victim v;

	(void)state;
	EXPECT(kmsg_parse_oom(summary, sizeof(summary) - 1, &v));
	EXPECT_EQ(v.pid, 234);
	EXPECT(v.has_memcg);
	EXPECT_STR(v.memcg, "/lim-mem/job");
	EXPECT(v.has_comm);
	EXPECT_STR(v.comm, "hog");

	EXPECT(kmsg_parse_oom(killed, sizeof(killed) - 1, &v));
	EXPECT_EQ(v.pid, 234);
	EXPECT(!v.has_memcg);
	EXPECT(v.has_comm);
	EXPECT_STR(v.comm, "my (evil) hog");

	EXPECT(!kmsg_parse_oom(other, sizeof(other) - 1, &v));
	EXPECT(!kmsg_parse_oom("no separator", 12, &v));
	/* "oom_memcg=" must not be taken for "memcg=", nor "task=" for
	 * "task_memcg=": keys match whole. */
	EXPECT(kmsg_parse_oom("6,1,1,-;oom-kill:task=x,pid=5", 29, &v));
	EXPECT(!v.has_memcg);
	EXPECT_STR(v.comm, "x");
	DONE();
}

static void test_burst(void **state)
{
	struct burst b = { 0 };

	(void)state;
	EXPECT(burst_due(&b, 0) == 0);
	EXPECT(burst_next_ms(&b) == 0);
	/* Three refusals in 100 ms, then quiet: one record of 3 after
	 * BURST_SETTLE_MS. */
	burst_add(&b, 1000, 1);
	burst_add(&b, 1050, 1);
	burst_add(&b, 1100, 1);
	/* The main loop sleeps until then (agent/limits.c). */
	EXPECT(burst_next_ms(&b) == 1100 + BURST_SETTLE_MS);
	EXPECT(burst_due(&b, 1100 + BURST_SETTLE_MS - 1) == 0);
	EXPECT(burst_due(&b, 1100 + BURST_SETTLE_MS) == 3);
	EXPECT(burst_due(&b, 1100 + BURST_SETTLE_MS + 1) == 0);
	/* A long burst is logged BURST_LOG_MS after it started, once. */
	burst_add(&b, 5000, 10);
	for (uint64_t t = 5100; t < 5000 + BURST_LOG_MS; t += 100) {
		burst_add(&b, t, 10);
		EXPECT(burst_due(&b, t) == 0);
	}
	/* Refusals keep coming: BURST_LOG_MS after the first is sooner. */
	assert_true(burst_next_ms(&b) == 5000 + BURST_LOG_MS);
	burst_add(&b, 5000 + BURST_LOG_MS, 10);
	EXPECT(burst_due(&b, 5000 + BURST_LOG_MS) > 10);
	EXPECT(burst_next_ms(&b) == 0);	/* logged: nothing due */
	for (uint64_t t = 5800; t < 9000; t += 100) {
		burst_add(&b, t, 10);
		EXPECT(burst_due(&b, t) == 0);
	}
	/* Quiet for BURST_QUIET_MS: the next refusal is a new burst. */
	EXPECT(burst_due(&b, 8900 + BURST_QUIET_MS) == 0);
	EXPECT(!b.active);
	burst_add(&b, 12000, 2);
	EXPECT(burst_due(&b, 12000 + BURST_SETTLE_MS) == 2);
	EXPECT(b.total == 3 + 10 + 6 * 10 + 10 + 32 * 10 + 2);
	DONE();
}

static void test_flatjson(void **state)
{
	static const char head[] =
		"{\"version\":1,\"pid\":42,\"cgroup_root\":\"/sys/fs/cgroup\",\"pin_dir\":\"/sys/fs/bpf/stockade\",\"sandboxes\":[\n";
	static const char sb[] =
		"{\"policy\":\"p\",\"cgroup\":\"/a\\\"b\\\\c\\u00e9\\ud83d\\ude00\\ufffd\",\"cgroup_id\":7,\"ok\":true,\"no\":null,\"runtime_ms\":0}";
	char s[64];
	uint64_t n = 99;

	(void)state;
	EXPECT_EQ(flatjson_get(head, "version", NULL, 0, &n), 'n');
	EXPECT(n == 1);
	EXPECT_EQ(flatjson_get(head, "pin_dir", s, sizeof(s), NULL), 's');
	EXPECT_STR(s, "/sys/fs/bpf/stockade");
	/* The array value ends what this parser reads. */
	EXPECT_EQ(flatjson_get(head, "sandboxes", s, sizeof(s), &n), 0);
	EXPECT_EQ(flatjson_get(head, "nothere", s, sizeof(s), &n), 0);

	EXPECT_EQ(flatjson_get(sb, "cgroup", s, sizeof(s), NULL), 's');
	EXPECT_STR(s, "/a\"b\\c\xc3\xa9\xf0\x9f\x98\x80\xef\xbf\xbd");
	EXPECT_EQ(flatjson_get(sb, "cgroup_id", NULL, 0, &n), 'n');
	EXPECT(n == 7);
	EXPECT_EQ(flatjson_get(sb, "ok", NULL, 0, &n), 'n');
	EXPECT(n == 1);
	EXPECT_EQ(flatjson_get(sb, "no", NULL, 0, &n), 0);
	EXPECT_EQ(flatjson_get(sb, "runtime_ms", NULL, 0, &n), 'n');
	EXPECT(n == 0);
	/* Cut to the buffer, still terminated. */
	EXPECT_EQ(flatjson_get(sb, "cgroup", s, 4, NULL), 's');
	EXPECT_STR(s, "/a\"");

	EXPECT_EQ(flatjson_get("", "x", s, sizeof(s), NULL), -EINVAL);
	EXPECT_EQ(flatjson_get("{\"a\":\"unterminated", "b", s, sizeof(s), NULL), -EINVAL);
	EXPECT_EQ(flatjson_get("{\"a\" 1}", "a", s, sizeof(s), NULL), -EINVAL);
	EXPECT_EQ(flatjson_get("{\"a\":\"\\x\"}", "a", s, sizeof(s), NULL), -EINVAL);
	EXPECT_EQ(flatjson_get("{}", "a", s, sizeof(s), NULL), 0);
	DONE();
}

static char *capture(void (*fn)(FILE *, void *), void *ctx)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	fn(f, ctx);
	fclose(f);
	return buf;
}

static void sample(struct sb_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->policy = "model-code";
	s->cgroup = "/sandboxes/job \"1\"\n\xff";
	s->cgroup_id = 77;
	s->have = SB_COUNTS | SB_CPU | SB_THROTTLE | SB_CPU_MAX | SB_MEM |
		  SB_MEM_PEAK | SB_OOM | SB_PIDS | SB_RUNTIME;
	s->c.allowed[1] = 5;
	s->c.denied[1] = 2;
	s->c.denied[4] = 9;
	s->c.denied[6] = 1;
	s->c.egress_bytes = 1500;
	s->c.egress_packets = 3;
	s->cpu_usage_usec = 2500000;
	s->cpu_nr_throttled = 4;
	s->cpu_throttled_usec = 1000;
	s->cpu_max_milli = 500;
	s->mem_current = 1024;
	s->mem_peak = 4096;
	s->mem_max = CGV_MAX;
	s->oom_kills = 1;
	s->pids_current = 3;
	s->pids_max = 16;
	s->pids_refused = 8;
	s->runtime_ms = 30000;
	s->runtime_left_ms = 1500;
}

static void write_metrics(FILE *f, void *ctx)
{
	metrics_write(f, NULL, ctx, 1);
}

/* The agent's families: decisions by action, kind and policy (only those
 * seen), breaches by policy and limit (all four), the events, the agent's
 * RSS and CPU; policy names escaped like every label. */
static void write_agent(FILE *f, void *ctx)
{
	metrics_write(f, ctx, NULL, 0);
}

static void test_metrics_agent(void **state)
{
	struct metrics_policy pol[2] = {
		{ .policy = "web" },
		{ .policy = "odd \"name\"\\" },
	};
	struct metrics_agent a = {
		.events_produced = 12, .events_logged = 10, .events_lost = 2,
		.has_self = true, .rss_bytes = 4096, .cpu_usec = 1500000,
		.pol = pol, .n_pol = 2,
	};
	char *out;

	(void)state;
	pol[0].dec[MA_DENY][1] = 5;	/* connect */
	pol[0].dec[MA_ALLOW][1] = 7;
	pol[0].dec[MA_AUDIT][2] = 1;	/* sendmsg */
	pol[0].breaches[ML_PIDS] = 3;
	pol[1].dec[MA_DENY][4] = 2;	/* file */
	pol[1].dec[MA_DENY][0] = 9;	/* no kind name: not exposed */
	out = capture(write_agent, &a);
	EXPECT(strstr(out, "# TYPE stockade_decisions_total counter\n"));
	EXPECT(strstr(out, "\nstockade_decisions_total{action=\"deny\",kind=\"connect\",policy=\"web\"} 5\n"));
	EXPECT(strstr(out, "\nstockade_decisions_total{action=\"allow\",kind=\"connect\",policy=\"web\"} 7\n"));
	EXPECT(strstr(out, "\nstockade_decisions_total{action=\"audit\",kind=\"sendmsg\",policy=\"web\"} 1\n"));
	EXPECT(strstr(out, "\nstockade_decisions_total{action=\"deny\",kind=\"file\",policy=\"odd \\\"name\\\"\\\\\"} 2\n"));
	/* Zero: no sample; kind 0 has no name. */
	EXPECT(!strstr(out, "action=\"deny\",kind=\"sendmsg\",policy=\"web\""));
	EXPECT(!strstr(out, "} 9\n"));
	EXPECT(strstr(out, "\nstockade_limit_breaches_total{policy=\"web\",limit=\"pids\"} 3\n"));
	EXPECT(strstr(out, "\nstockade_limit_breaches_total{policy=\"web\",limit=\"memory\"} 0\n"));
	EXPECT(strstr(out, "\nstockade_limit_breaches_total{policy=\"web\",limit=\"runtime\"} 0\n"));
	EXPECT(strstr(out, "\nstockade_limit_breaches_total{policy=\"web\",limit=\"cpu\"} 0\n"));
	EXPECT(strstr(out, "\nstockade_events_produced_total 12\n"));
	EXPECT(strstr(out, "\nstockade_events_logged_total 10\n"));
	EXPECT(strstr(out, "\nstockade_events_lost_total 2\n"));
	EXPECT(strstr(out, "# TYPE stockade_agent_resident_memory_bytes gauge\n"
			   "stockade_agent_resident_memory_bytes 4096\n"));
	EXPECT(strstr(out, "# TYPE stockade_agent_cpu_seconds_total counter\n"
			   "stockade_agent_cpu_seconds_total 1.500000\n"));
	EXPECT(strstr(out, "stockade_sandboxes 0\n"));
	free(out);

	/* /proc/self unreadable: no RSS or CPU family at all. */
	a.has_self = false;
	out = capture(write_agent, &a);
	EXPECT(!strstr(out, "stockade_agent_"));
	free(out);
	EXPECT_EQ(metrics_limit_of("memory"), ML_MEMORY);
	EXPECT_EQ(metrics_limit_of("cpu"), ML_CPU);
	EXPECT_EQ(metrics_limit_of("oom"), -1);
	DONE();
}

static void test_metrics_self(void **state)
{
	uint64_t rss = 0, cpu = 0;

	(void)state;
	EXPECT_EQ(metrics_self(&rss, &cpu), 0);
	EXPECT(rss > 0);
	DONE();
}

/* --metrics-listen ADDR:PORT. */
static void test_metrics_listen(void **state)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
	unsigned int len = 0;
	bool lo = false;
	char why[160];
	static const char *const bad[] = {
		"127.0.0.1", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536",
		"127.0.0.1:99999999999999999999", "127.0.0.1:80x", "127.0.0.1:+80",
		"127.0.0.1: 80", ":9464", "localhost:9464", "::1:9464", "[::1]",
		"[::1]9464", "[]:9464", "[127.0.0.1]:9464", "[::1:9464", "256.0.0.1:1",
		"", "1.2.3:4",
	};
	size_t i;

	(void)state;
	EXPECT_EQ(metrics_listen_parse("127.0.0.1:9464", &ss, &len, &lo, why, sizeof(why)), 0);
	EXPECT_EQ(v4->sin_family, AF_INET);
	EXPECT_EQ(ntohs(v4->sin_port), 9464);
	EXPECT_EQ(len, sizeof(struct sockaddr_in));
	EXPECT(lo);
	EXPECT_EQ(metrics_listen_parse("127.1.2.3:1", &ss, &len, &lo, why, sizeof(why)), 0);
	EXPECT(lo);
	EXPECT_EQ(metrics_listen_parse("0.0.0.0:65535", &ss, &len, &lo, why, sizeof(why)), 0);
	EXPECT(!lo);
	EXPECT_EQ(ntohs(v4->sin_port), 65535);
	EXPECT_EQ(metrics_listen_parse("10.0.0.1:9464", &ss, &len, &lo, why, sizeof(why)), 0);
	EXPECT(!lo);
	EXPECT_EQ(metrics_listen_parse("[::1]:9464", &ss, &len, &lo, why, sizeof(why)), 0);
	EXPECT_EQ(v6->sin6_family, AF_INET6);
	EXPECT_EQ(ntohs(v6->sin6_port), 9464);
	EXPECT_EQ(len, sizeof(struct sockaddr_in6));
	EXPECT(lo);
	EXPECT_EQ(metrics_listen_parse("[::]:9464", &ss, &len, &lo, why, sizeof(why)), 0);
	EXPECT(!lo);
	EXPECT_EQ(metrics_listen_parse("[fe80::1]:80", &ss, &len, &lo, why, sizeof(why)), 0);
	EXPECT(!lo);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		if (!EXPECT_EQ(metrics_listen_parse(bad[i], &ss, &len, &lo, why, sizeof(why)), -EINVAL))
			fprintf(stderr, "accepted: '%s'\n", bad[i]);
		EXPECT(why[0]);
	}
	DONE();
}

static void test_metrics(void **state)
{
	static const char lbl[] =
		"{policy=\"model-code\",cgroup=\"/sandboxes/job \\\"1\\\"\\n\xef\xbf\xbd\"}";
	struct sb_stats s;
	char *out, want[256];

	(void)state;
	sample(&s);
	out = capture(write_metrics, &s);
	EXPECT(strstr(out, "stockade_sandboxes 1\n"));
	EXPECT(strstr(out, "# HELP stockade_connect_allowed_total "));
	EXPECT(strstr(out, "# TYPE stockade_connect_allowed_total counter\n"));
	EXPECT(strstr(out, "# TYPE stockade_memory_bytes gauge\n"));
#define HAS(name, val) do {						\
		snprintf(want, sizeof(want), "\n%s%s %s\n", name, lbl, val); \
		EXPECT(strstr(out, want));			\
	} while (0)
	HAS("stockade_connect_allowed_total", "5");
	HAS("stockade_connect_denied_total", "2");
	HAS("stockade_file_denials_total", "9");
	HAS("stockade_egress_bytes_total", "1500");
	HAS("stockade_egress_packets_total", "3");
	HAS("stockade_cpu_usage_seconds_total", "2.500000");
	HAS("stockade_cpu_throttled_periods_total", "4");
	HAS("stockade_cpu_limit_cores", "0.500");
	HAS("stockade_memory_bytes", "1024");
	HAS("stockade_memory_peak_bytes", "4096");
	HAS("stockade_oom_kills_total", "1");
	HAS("stockade_processes", "3");
	HAS("stockade_processes_limit", "16");
	HAS("stockade_fork_refused_total", "8");
	HAS("stockade_runtime_remaining_seconds", "1.500");
	/* Unlimited memory: no limit sample. */
	EXPECT(!strstr(out, "stockade_memory_limit_bytes{"));
	/* Other LSM kinds carry a kind label. */
	EXPECT(strstr(out, "\",kind=\"ptrace\"} 1\n"));
	free(out);

	/* Without the counters (not root), no counter samples at all. */
	s.have &= ~(unsigned int)SB_COUNTS;
	out = capture(write_metrics, &s);
	EXPECT(!strstr(out, "stockade_egress_bytes_total{"));
	EXPECT(strstr(out, "stockade_memory_bytes{"));
	free(out);
	DONE();
}

static void write_table(FILE *f, void *ctx)
{
	status_print_table(f, ctx, 1);
}

static void test_status(void **state)
{
	struct sb_stats s;
	struct json j;
	char *out;

	(void)state;
	sample(&s);
	s.cgroup = "/sandboxes/job-1";
	out = capture(write_table, &s);
	EXPECT(strstr(out, "POLICY"));
	EXPECT(strstr(out, "model-code  /sandboxes/job-1  5/2"));
	EXPECT(strstr(out, "1.0Ki/max"));
	EXPECT(strstr(out, "3/16"));
	EXPECT(strstr(out, "1.5s left"));
	/* No trailing blanks. */
	EXPECT(!strstr(out, " \n"));
	free(out);

	json_init(&j);
	json_begin(&j);
	status_json(&j, &s);
	json_end(&j);
	EXPECT(strstr(j.buf, "\"connect_allowed\":5,\"connect_denied\":2,"));
	EXPECT(strstr(j.buf, "\"file_denied\":9,"));
	EXPECT(strstr(j.buf, "\"memory_limit_bytes\":null,"));
	EXPECT(strstr(j.buf, "\"processes_limit\":16,"));
	EXPECT(strstr(j.buf, "\"runtime_left_ms\":1500}"));
	json_free(&j);
	DONE();
}

static void test_sum_and_files(void **state)
{
	struct sb_count percpu[3], sum;
	char dir[] = "/tmp/stockade-unit-XXXXXX", path[128];
	static const char *const files[][2] = {
		{ "cpu.stat", "usage_usec 2000\nuser_usec 1000\nsystem_usec 1000\nnr_periods 5\nnr_throttled 2\nthrottled_usec 300\n" },
		{ "cpu.max", "50000 100000\n" },
		{ "memory.current", "4096\n" },
		{ "memory.max", "max\n" },
		{ "memory.events", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n" },
		{ "pids.current", "2\n" },
		{ "pids.max", "16\n" },
		{ "pids.events", "max 5\n" },
	};
	struct sb_stats s = { 0 };
	size_t i;

	(void)state;
	memset(percpu, 0, sizeof(percpu));
	for (i = 0; i < 3; i++) {
		percpu[i].allowed[1] = i + 1;
		percpu[i].audited[4] = 2;
		percpu[i].egress_bytes = 100;
	}
	sb_count_sum(&sum, percpu, 3, sizeof(percpu[0]));
	EXPECT(sum.allowed[1] == 6);
	EXPECT(sum.audited[4] == 6 && sum.denied[4] == 0);
	EXPECT(sum.egress_bytes == 300);

	assert_non_null(mkdtemp(dir));
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", dir, files[i][0]);
		f = fopen(path, "w");
		assert_non_null(f);
		fputs(files[i][1], f);
		fclose(f);
	}
	sb_stats_read_cgroup(&s, dir);
	/* No memory.peak file (Linux < 5.19): its bit stays clear. */
	EXPECT_EQ(s.have, SB_CPU | SB_THROTTLE | SB_CPU_MAX | SB_MEM |
			  SB_OOM | SB_PIDS);
	EXPECT(s.cpu_usage_usec == 2000 && s.cpu_nr_throttled == 2 &&
	       s.cpu_throttled_usec == 300 && s.cpu_max_milli == 500);
	EXPECT(s.mem_current == 4096 && s.mem_max == CGV_MAX && s.oom_kills == 1);
	EXPECT(s.pids_current == 2 && s.pids_max == 16 && s.pids_refused == 5);
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i][0]);
		unlink(path);
	}
	rmdir(dir);
	DONE();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_kmsg),
		cmocka_unit_test(test_burst),
		cmocka_unit_test(test_flatjson),
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_metrics_agent),
		cmocka_unit_test(test_metrics_self),
		cmocka_unit_test(test_metrics_listen),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_sum_and_files),
	};

	return cmocka_run_group_tests_name("limits", tests, NULL, NULL);
}
