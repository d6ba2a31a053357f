// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Fds held from before confinement: the judgement over the compiled
 * rules (agent/preexist_judge.c) must agree with the kernel's (bpf/lsm.bpf.h
 * judge(), bpf/net.bpf.c), and /proc's text must parse.
 */
#include <fcntl.h>
#include <stdlib.h>

#include "test.h"
#include "events.h"
#include "preexist_judge.h"

static struct policy pol;
static struct file_compiled fc;
static struct net_compiled nc;
static struct policy_path wpath = { .path = "/task/out" };
static struct policy_path rpath[] = { { .path = "/usr" }, { .path = "/task" } };
static struct policy_path dpath = { .path = "/task/secret" };

static int setup(void **state)
{
	static const char *const homes[] = { "/root" };
	static struct policy_net_rule rule = {
		.cidr = { .family = 4, .prefix = 8, .addr = { 127, 0, 0, 0 } },
		.proto = NET_PROTO_TCP, .n_ports = 1, .ports = { { 80, 80 } },
	};
	char err[256];

	(void)state;
	memset(&pol, 0, sizeof(pol));
	pol.file = "t.yaml";
	pol.name = "t";
	pol.files.has_read = pol.files.has_write = true;
	pol.files.read = rpath;
	pol.files.n_read = 2;
	pol.files.write = &wpath;
	pol.files.n_write = 1;
	pol.files.deny = &dpath;
	pol.files.n_deny = 1;
	pol.net.allow = &rule;
	pol.net.n_allow = 1;
	assert_int_equal(file_rules__compile(&pol, 5, homes, 1, &fc, err, sizeof(err)), 0);
	assert_int_equal(net_rules__compile(&pol, 5, &nc, err, sizeof(err)), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	file_compiled__free(&fc);
	net_compiled__free(&nc);
	return 0;
}

#define J(link, acc) preexist__judge_path(&fc, 5, link, acc)
#define RD PREEXIST_READ
#define WR PREEXIST_WRITE

static void test_access(void **state)
{
	(void)state;
	EXPECT_EQ(preexist__access(O_RDONLY | O_CLOEXEC), RD);
	EXPECT_EQ(preexist__access(O_WRONLY | O_APPEND), WR);
	EXPECT_EQ(preexist__access(O_RDWR), RD | WR);
	EXPECT_EQ(preexist__access(O_RDONLY | O_TRUNC), RD | WR);
	EXPECT_EQ(preexist__access(3), RD | WR);	/* ioctl only: both, as BPF */
	EXPECT_EQ(preexist__access(O_PATH), 0);
	EXPECT_STR(preexist__access_name(RD), "read");
	EXPECT_STR(preexist__access_name(WR), "write");
	EXPECT_STR(preexist__access_name(RD | WR), "read_write");
	DONE();
}

static void test_paths(void **state)
{
	(void)state;
	EXPECT_EQ(J("/usr/bin/env", RD), 0);
	EXPECT_EQ(J("/usr/bin/env", WR), EV_REASON_OUTSIDE_SCOPE);
	EXPECT_EQ(J("/var/log/x", RD), EV_REASON_OUTSIDE_SCOPE);
	EXPECT_EQ(J("/task/out/x", RD | WR), 0);
	EXPECT_EQ(J("/task/in", WR), EV_REASON_OUTSIDE_SCOPE);
	EXPECT_EQ(J("/task/secret/k", RD), EV_REASON_DENIED_PATH);
	EXPECT_EQ(J("/etc/shadow", RD), EV_REASON_PROTECTED);
	EXPECT_EQ(J("/root/.ssh/id_rsa", RD), EV_REASON_PROTECTED);
	/* Deleted files are judged by the path they had. */
	EXPECT_EQ(J("/etc/shadow (deleted)", RD), EV_REASON_PROTECTED);
	EXPECT_EQ(J("/task/out/tmp (deleted)", WR), 0);
	/* No path: what the BPF side lets through unjudged. */
	EXPECT_EQ(J("pipe:[1234]", RD | WR), 0);
	EXPECT_EQ(J("anon_inode:[eventfd]", RD | WR), 0);
	EXPECT_EQ(J("/memfd:jit (deleted)", RD | WR), 0);
	EXPECT_EQ(J("/etc/shadow", 0), 0);	/* O_PATH */
	/* Data-free devices work in every scope. */
	EXPECT_EQ(J("/dev/null", RD | WR), 0);
	DONE();
}

static void test_parse_peer(void **state)
{
	struct preexist_peer p;

	(void)state;
	EXPECT(!preexist__parse_peer("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode", 4, &p));
	EXPECT(preexist__parse_peer("   1: 0100007F:A4F2 0500007F:1E1E 01 00000000:00000000 00:00000000 00000000     0        0 23456 1 0000000000000000 20 4 30 10 -1", 4, &p));
	EXPECT_EQ(p.inode, 23456);
	EXPECT_EQ(p.family, 4);
	EXPECT_EQ(p.addr[0], 127);
	EXPECT_EQ(p.addr[3], 5);
	EXPECT_EQ(p.port, 0x1e1e);
	EXPECT_EQ(p.state, 1);
	/* ::ffff:10.0.0.9 port 443 */
	EXPECT(preexist__parse_peer("   0: 00000000000000000000000000000000:0050 0000000000000000FFFF00000900000A:01BB 01 00000000:00000000 00:00000000 00000000     0        0 777 1", 6, &p));
	EXPECT_EQ(p.inode, 777);
	EXPECT_EQ(p.addr[10], 0xff);
	EXPECT_EQ(p.addr[11], 0xff);
	EXPECT_EQ(p.addr[12], 10);
	EXPECT_EQ(p.addr[15], 9);
	EXPECT_EQ(p.port, 443);
	/* A listener: no peer. */
	EXPECT(preexist__parse_peer("   2: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 99 1", 4, &p));
	EXPECT_EQ(p.port, 0);
	EXPECT(!preexist__parse_peer("   3: 0100007F:A4F2 0500007F", 4, &p));
	DONE();
}

static struct preexist_peer peer4(uint8_t a, uint8_t b, uint8_t c, uint8_t d,
				  uint16_t port)
{
	struct preexist_peer p = { .family = 4, .port = port,
				   .addr = { a, b, c, d } };

	return p;
}

static void test_peers(void **state)
{
	struct preexist_peer p;

	(void)state;
	p = peer4(127, 0, 0, 5, 80);
	EXPECT_EQ(preexist__judge_peer(&nc, 5, false, &p, NET_PROTO_TCP), 0);
	EXPECT_EQ(preexist__judge_peer(&nc, 5, false, &p, NET_PROTO_UDP),
		  EV_REASON_NOT_ALLOWED);
	p = peer4(127, 0, 0, 5, 81);
	EXPECT_EQ(preexist__judge_peer(&nc, 5, false, &p, NET_PROTO_TCP),
		  EV_REASON_NOT_ALLOWED);
	EXPECT_EQ(preexist__judge_peer(&nc, 5, true, &p, NET_PROTO_TCP), 0);
	/* Metadata endpoints: refused even under default allow. */
	p = peer4(169, 254, 169, 254, 80);
	EXPECT_EQ(preexist__judge_peer(&nc, 5, true, &p, NET_PROTO_TCP),
		  EV_REASON_METADATA);
	/* ... in the mapped form too. */
	memset(&p, 0, sizeof(p));
	p.family = 6;
	p.port = 80;
	p.addr[10] = p.addr[11] = 0xff;
	p.addr[12] = 169;
	p.addr[13] = 254;
	p.addr[14] = 169;
	p.addr[15] = 254;
	EXPECT_EQ(preexist__judge_peer(&nc, 5, true, &p, NET_PROTO_TCP),
		  EV_REASON_METADATA);
	/* No peer: not judged. */
	p = peer4(0, 0, 0, 0, 0);
	EXPECT_EQ(preexist__judge_peer(&nc, 5, false, &p, NET_PROTO_TCP), 0);
	DONE();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_access),
		cmocka_unit_test_setup_teardown(test_paths, setup, teardown),
		cmocka_unit_test(test_parse_peer),
		cmocka_unit_test_setup_teardown(test_peers, setup, teardown),
	};

	return cmocka_run_group_tests_name("preexist", tests, NULL, NULL);
}
