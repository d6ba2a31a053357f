// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Rule matching: address normalisation (the same inline code the BPF
 * programs run), the rule compiler's merging of covering prefixes, and the
 * decision over the compiled entries.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>

#include "test.h"
#include "events.h"
#include "netaddr.h"
#include "netmeta.h"
#include "net_rules.h"
#include "policy.h"

/* ---- normalisation ---- */

static __u8 norm(const char *text, char *out)
{
	__u8 a[16], fam;

	assert_int_equal(inet_pton(AF_INET6, text, a), 1);
	fam = netaddr_normalize6(a);
	inet_ntop(fam == NET_FAMILY_V4 ? AF_INET : AF_INET6, a, out, 64);
	return fam;
}

static void test_normalize(void **state)
{
	static const struct { const char *in, *out; __u8 fam; } cases[] = {
		{ "::ffff:169.254.169.254", "169.254.169.254", 4 },	/* mapped */
		{ "::169.254.169.254", "169.254.169.254", 4 },		/* compat */
		{ "64:ff9b::a9fe:a9fe", "169.254.169.254", 4 },		/* NAT64 */
		{ "2002:a9fe:a9fe::", "169.254.169.254", 4 },		/* 6to4 */
		{ "2002:a9fe:a9fe:1:2:3:4:5", "169.254.169.254", 4 },
		{ "::ffff:127.0.0.1", "127.0.0.1", 4 },
		{ "::", "::", 6 },			/* unspecified stays v6 */
		{ "::1", "::1", 6 },			/* loopback stays v6 */
		{ "::2", "0.0.0.2", 4 },		/* compat form of 0.0.0.2 */
		{ "fd00:ec2::254", "fd00:ec2::254", 6 },
		{ "64:ff9b:1::a9fe:a9fe", "64:ff9b:1::a9fe:a9fe", 6 },	/* local-use NAT64 prefix is not the well-known one */
		{ "::fffe:169.254.169.254", "::fffe:a9fe:a9fe", 6 },
		{ "2001:db8::1", "2001:db8::1", 6 },
	};
	char out[64];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		EXPECT_EQ(norm(cases[i].in, out), cases[i].fam);
		EXPECT_STR(out, cases[i].out);
	}
	DONE();
}

/* ---- compile + decide ---- */

static struct policy *mk_policy(bool default_allow)
{
	struct policy *p = calloc(1, sizeof(*p));

	assert_non_null(p);
	p->file = "t.yaml";
	p->name = "t";
	p->net.default_allow = default_allow;
	return p;
}

static void add_rule(struct policy *p, const char *cidr, __u8 proto,
		     int lo, int hi)
{
	struct policy_net_rule *r;

	p->net.allow = realloc(p->net.allow, (p->net.n_allow + 1) * sizeof(*r));
	assert_non_null(p->net.allow);
	r = &p->net.allow[p->net.n_allow++];
	memset(r, 0, sizeof(*r));
	assert_int_equal(policy_cidr__parse(cidr, &r->cidr), 0);
	r->proto = proto;
	if (lo) {
		r->n_ports = 1;
		r->ports[0].lo = (uint16_t)lo;
		r->ports[0].hi = (uint16_t)hi;
	}
}

static void add_override(struct policy *p, const char *ep)
{
	struct policy_net_override *o;

	p->net.overrides = realloc(p->net.overrides,
				   (p->net.n_overrides + 1) * sizeof(*o));
	assert_non_null(p->net.overrides);
	o = &p->net.overrides[p->net.n_overrides++];
	memset(o, 0, sizeof(*o));
	assert_int_equal(policy_cidr__parse(ep, &o->endpoint), 0);
}

/* A network.listen rule: the same shape, its own list. */
static void add_listen(struct policy *p, const char *cidr, __u8 proto,
		       int lo, int hi)
{
	struct policy_net_rule *save = p->net.allow;
	size_t n = p->net.n_allow;

	p->net.allow = p->net.listen;
	p->net.n_allow = p->net.n_listen;
	add_rule(p, cidr, proto, lo, hi);
	p->net.listen = p->net.allow;
	p->net.n_listen = p->net.n_allow;
	p->net.allow = save;
	p->net.n_allow = n;
}

static void free_policy(struct policy *p)
{
	free(p->net.listen);
	free(p->net.allow);
	free(p->net.overrides);
	free(p);
}

/* Decide for a textual address; returns 0 allow, else the ev_reason. */
static int decide(const struct net_compiled *c, bool default_allow,
		  const char *addr, __u8 proto, __u16 port)
{
	__u8 a[16] = { 0 }, reason = 0;
	int fam = strchr(addr, ':') ? 6 : 4;

	assert_int_equal(inet_pton(fam == 6 ? AF_INET6 : AF_INET, addr, a), 1);
	if (net_rules__decide(c, 1, default_allow, fam, a, proto, port, &reason))
		return 0;
	assert_int_not_equal(reason, 0);
	return reason;
}

#define T NET_PROTO_TCP
#define U NET_PROTO_UDP
#define NA EV_REASON_NOT_ALLOWED
#define MD EV_REASON_METADATA

static void test_ports_and_protocols(void **state)
{
	struct policy *p = mk_policy(false);
	struct net_compiled c;
	char err[256];

	(void)state;
	add_rule(p, "127.0.0.1/32", T, 8080, 8080);
	add_rule(p, "127.0.0.1", T, 9000, 9100);
	add_rule(p, "10.1.0.0/16", U, 53, 53);
	add_rule(p, "2001:db8::/32", NET_PROTO_ANY, 0, 0);
	assert_int_equal(net_rules__compile(p, 1, &c, err, sizeof(err)), 0);
	EXPECT_EQ(decide(&c, false, "127.0.0.1", T, 8080), 0);
	EXPECT_EQ(decide(&c, false, "127.0.0.1", T, 9000), 0);
	EXPECT_EQ(decide(&c, false, "127.0.0.1", T, 9100), 0);
	EXPECT_EQ(decide(&c, false, "127.0.0.1", T, 9101), NA);
	EXPECT_EQ(decide(&c, false, "127.0.0.1", U, 8080), NA);
	EXPECT_EQ(decide(&c, false, "127.0.0.2", T, 8080), NA);
	EXPECT_EQ(decide(&c, false, "10.1.200.3", U, 53), 0);
	EXPECT_EQ(decide(&c, false, "10.1.200.3", T, 53), NA);
	EXPECT_EQ(decide(&c, false, "10.2.0.1", U, 53), NA);
	EXPECT_EQ(decide(&c, false, "2001:db8:ff::1", T, 1), 0);
	EXPECT_EQ(decide(&c, false, "2001:db9::1", T, 1), NA);
	/* Mapped forms of an allowed IPv4 address are allowed like it... */
	EXPECT_EQ(decide(&c, false, "::ffff:127.0.0.1", T, 8080), 0);
	EXPECT_EQ(decide(&c, false, "64:ff9b::7f00:1", T, 8080), 0);
	EXPECT_EQ(decide(&c, false, "2002:7f00:1::", T, 8080), 0);
	/* ...and no more than it. */
	EXPECT_EQ(decide(&c, false, "::ffff:127.0.0.1", T, 22), NA);
	net_compiled__free(&c);
	free_policy(p);
	DONE();
}

/* A longer prefix must not hide the ports a shorter one allows. */
static void test_covering_prefixes_merge(void **state)
{
	struct policy *p = mk_policy(false);
	struct net_compiled c;
	char err[256];

	(void)state;
	add_rule(p, "127.0.0.0/8", T, 80, 80);
	add_rule(p, "127.0.0.1/32", T, 8080, 8080);
	add_rule(p, "127.0.0.0/24", NET_PROTO_ANY, 443, 443);
	assert_int_equal(net_rules__compile(p, 1, &c, err, sizeof(err)), 0);
	EXPECT_EQ(c.n_allow, 3);
	EXPECT_EQ(decide(&c, false, "127.0.0.1", T, 80), 0);
	EXPECT_EQ(decide(&c, false, "127.0.0.1", T, 8080), 0);
	EXPECT_EQ(decide(&c, false, "127.0.0.1", U, 443), 0);
	EXPECT_EQ(decide(&c, false, "127.0.0.9", T, 8080), NA);
	EXPECT_EQ(decide(&c, false, "127.0.0.9", T, 443), 0);
	EXPECT_EQ(decide(&c, false, "127.1.0.9", T, 443), NA);
	EXPECT_EQ(decide(&c, false, "127.1.0.9", T, 80), 0);
	net_compiled__free(&c);
	free_policy(p);
	DONE();
}

static void test_metadata_always_denied(void **state)
{
	static const char *const meta[] = {
		"169.254.169.254", "169.254.0.1", "::ffff:169.254.169.254",
		"::169.254.169.254", "64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::",
		"fd00:ec2::254", "fd00:ec2::23", "fd20:ce::254",
		"fe80::a9fe:a9fe", "fd00:c1::a9fe:a9fe", "fd00:a9fe:a9fe::1",
		"100.100.100.200",
		"168.63.129.16", "192.0.0.192", "::ffff:100.100.100.200",
	};
	struct policy *p = mk_policy(true);	/* default allow */
	struct net_compiled c;
	char err[256];
	size_t i;

	(void)state;
	assert_int_equal(net_rules__compile(p, 1, &c, err, sizeof(err)), 0);
	for (i = 0; i < ARRAY_SIZE(meta); i++)
		EXPECT_EQ(decide(&c, true, meta[i], T, 80), MD);
	EXPECT_EQ(decide(&c, true, "169.255.0.1", T, 80), 0);
	EXPECT_EQ(decide(&c, true, "fd00:ec2::255", T, 80), 0);
	net_compiled__free(&c);
	free_policy(p);
	DONE();
}

static void test_override_opens_only_that_endpoint(void **state)
{
	struct policy *p = mk_policy(false);
	struct net_compiled c;
	char err[256];

	(void)state;
	add_rule(p, "169.254.169.254/32", T, 80, 80);
	add_override(p, "169.254.169.254");
	add_rule(p, "fd00:ec2::254", T, 80, 80);
	add_override(p, "fd00:ec2::254");
	assert_int_equal(net_rules__compile(p, 1, &c, err, sizeof(err)), 0);
	EXPECT_EQ(decide(&c, false, "169.254.169.254", T, 80), 0);
	EXPECT_EQ(decide(&c, false, "::ffff:169.254.169.254", T, 80), 0);
	EXPECT_EQ(decide(&c, false, "169.254.169.254", T, 81), NA);
	EXPECT_EQ(decide(&c, false, "169.254.169.253", T, 80), MD);
	EXPECT_EQ(decide(&c, false, "fd00:ec2::254", T, 80), 0);
	EXPECT_EQ(decide(&c, false, "fd00:ec2::23", T, 80), MD);
	net_compiled__free(&c);
	free_policy(p);
	DONE();
}

static void test_too_many_ranges(void **state)
{
	struct policy *p = mk_policy(false);
	struct net_compiled c;
	char err[256];
	int i;

	(void)state;
	/* 17 disjoint ranges reach 127.0.0.1 through covering prefixes. */
	for (i = 0; i <= NET_MAX_PORT_RANGES; i++)
		add_rule(p, i % 2 ? "127.0.0.0/8" : "127.0.0.1", T,
			 1000 + 10 * i, 1000 + 10 * i);
	EXPECT_EQ(net_rules__compile(p, 1, &c, err, sizeof(err)), -E2BIG);
	EXPECT_STR(err, "t.yaml: network.allow: 127.0.0.1/32 is covered by rules with 17 distinct port ranges; at most 16 fit one address (merge ranges or split the CIDRs)");
	/* Adjacent and overlapping ranges merge, so these fit. */
	free_policy(p);
	p = mk_policy(false);
	for (i = 0; i < 40; i++)
		add_rule(p, "127.0.0.1", T, 1000 + i, 1001 + i);
	assert_int_equal(net_rules__compile(p, 1, &c, err, sizeof(err)), 0);
	assert_int_equal(c.n_allow, 1);	/* c.allow[0] is read below */
	EXPECT_EQ(c.allow[0].val.n, 1);
	EXPECT_EQ(c.allow[0].val.r[0].lo, 1000);
	EXPECT_EQ(c.allow[0].val.r[0].hi, 1040);
	net_compiled__free(&c);
	free_policy(p);
	DONE();
}

/* Local address decision, as bind4/6 (at_bind) and socket_listen judge. */
static int decide_local(const struct net_compiled *c, const char *addr,
			__u8 proto, __u16 port, bool at_bind)
{
	__u8 a[16] = { 0 }, reason = 0;
	int fam = strchr(addr, ':') ? 6 : 4;

	assert_int_equal(inet_pton(fam == 6 ? AF_INET6 : AF_INET, addr, a), 1);
	if (net_rules__decide_listen(c, 1, fam, a, proto, port, at_bind, &reason))
		return 0;
	assert_int_not_equal(reason, 0);
	return reason;
}

static void test_listen_rules(void **state)
{
	struct policy *p = mk_policy(true);	/* default allow: egress only */
	struct net_compiled c;
	char err[256];
	size_t i, n_listen = 0;

	(void)state;
	add_rule(p, "127.0.0.1/32", T, 9000, 9000);
	add_listen(p, "127.0.0.0/8", T, 8081, 8081);
	add_listen(p, "::1", U, 5354, 5354);
	add_listen(p, "10.0.0.5", NET_PROTO_ANY, 0, 0);	/* every port */
	assert_int_equal(net_rules__compile(p, 1, &c, err, sizeof(err)), 0);
	EXPECT_EQ(c.n_allow, 4);
	for (i = 0; i < c.n_allow; i++)
		if (c.allow[i].key.family & NET_FAMILY_LISTEN)
			n_listen++;
	EXPECT_EQ(n_listen, 3);
	/* The listen rules, and only them. */
	EXPECT_EQ(decide_local(&c, "127.0.0.1", T, 8081, true), 0);
	EXPECT_EQ(decide_local(&c, "127.9.0.1", T, 8081, false), 0);
	EXPECT_EQ(decide_local(&c, "::ffff:127.0.0.1", T, 8081, true), 0);
	EXPECT_EQ(decide_local(&c, "127.0.0.1", U, 8081, true), NA);
	EXPECT_EQ(decide_local(&c, "127.0.0.1", T, 8082, true), NA);
	EXPECT_EQ(decide_local(&c, "0.0.0.0", T, 8081, true), NA);
	EXPECT_EQ(decide_local(&c, "::1", U, 5354, true), 0);
	EXPECT_EQ(decide_local(&c, "::1", T, 5354, true), NA);
	EXPECT_EQ(decide_local(&c, "::", U, 5354, true), NA);
	/* An allow rule is no listen rule, network.default: allow neither... */
	EXPECT_EQ(decide_local(&c, "127.0.0.1", T, 9000, true), NA);
	EXPECT_EQ(decide_local(&c, "192.0.2.1", T, 80, true), NA);
	/* ...and a listen rule allows no connect. */
	EXPECT_EQ(decide(&c, false, "127.0.0.1", T, 8081), NA);
	EXPECT_EQ(decide(&c, false, "127.0.0.1", T, 9000), 0);
	/* Port 0: an ephemeral port passes at bind; at listen only a rule
	 * without ports covers it. */
	EXPECT_EQ(decide_local(&c, "127.0.0.1", T, 0, true), 0);
	EXPECT_EQ(decide_local(&c, "0.0.0.0", U, 0, true), 0);
	EXPECT_EQ(decide_local(&c, "127.0.0.1", T, 0, false), NA);
	EXPECT_EQ(decide_local(&c, "10.0.0.5", T, 0, false), 0);
	/* A metadata address as a source: refused at any port, every form. */
	EXPECT_EQ(decide_local(&c, "169.254.169.254", T, 0, true), MD);
	EXPECT_EQ(decide_local(&c, "::ffff:169.254.169.254", U, 0, true), MD);
	EXPECT_EQ(decide_local(&c, "fd00:ec2::254", T, 8081, true), MD);
	EXPECT_EQ(decide_local(&c, "64:ff9b::a9fe:a9fe", T, 80, false), MD);
	net_compiled__free(&c);
	free_policy(p);
	DONE();
}

/* The range limit names the list it was reached in. */
static void test_listen_too_many_ranges(void **state)
{
	struct policy *p = mk_policy(false);
	struct net_compiled c;
	char err[256];
	int i;

	(void)state;
	for (i = 0; i <= NET_MAX_PORT_RANGES; i++)
		add_listen(p, "127.0.0.1", T, 1000 + 10 * i, 1000 + 10 * i);
	EXPECT_EQ(net_rules__compile(p, 1, &c, err, sizeof(err)), -E2BIG);
	EXPECT_STR(err, "t.yaml: network.listen: 127.0.0.1/32 is covered by rules with 17 distinct port ranges; at most 16 fit one address (merge ranges or split the CIDRs)");
	free_policy(p);
	DONE();
}

/* A full-length lookup key, as key_fill() in bpf/net.bpf.h builds it. */
static void full_key(struct net_key *q, __u32 policy_id, int fam, const __u8 *a)
{
	memset(q, 0, sizeof(*q));
	q->policy_id = policy_id;
	memcpy(q->addr, a, fam == 4 ? 4 : 16);
	q->family = fam == 4 ? NET_FAMILY_V4 : netaddr_normalize6(q->addr);
	q->prefixlen = NET_KEY_FIXED_BITS + (q->family == NET_FAMILY_V4 ? 32 : 128);
}

/* Is q inside table entry e, by plain bit arithmetic (no masks)? */
static bool inside(const struct policy_cidr *e, const struct net_key *q)
{
	unsigned int b;

	if (q->family != e->family)
		return false;
	for (b = 0; b < e->prefix; b++)
		if (((q->addr[b / 8] ^ e->addr[b / 8]) >> (7 - b % 8)) & 1)
			return false;
	return true;
}

/*
 * netmeta_candidate() (the programs' test in code) against the table
 * policy/builtin.c gives the agent: for each endpoint, its first and last
 * address, the addresses just outside, and every single-bit flip of its
 * base, in both families and through the IPv6 forms that carry IPv4.
 */
static void test_metadata_in_code(void **state)
{
	struct net_key q;
	size_t i, j, checked = 0;
	unsigned int b;

	(void)state;
	for (i = 0; i < policy_n_meta_endpoints; i++) {
		const struct policy_cidr *e = &policy_meta_endpoints[i].cidr;
		int fam = e->family == NET_FAMILY_V4 ? 4 : 6;
		unsigned int width = fam == 4 ? 32 : 128;
		__u8 a[16];

		for (b = 0; b <= width; b++) {
			memset(a, 0, sizeof(a));
			memcpy(a, e->addr, 16);
			if (b < width)
				a[b / 8] ^= (__u8)(0x80 >> (b % 8));	/* one flip */
			full_key(&q, 1, fam, a);
			for (j = 0; j < policy_n_meta_endpoints; j++)
				if (inside(&policy_meta_endpoints[j].cidr, &q))
					break;
			EXPECT_EQ(!!netmeta_candidate(&q), j < policy_n_meta_endpoints);
			checked++;
			/* The host part all ones: the endpoint's last address. */
			memcpy(a, e->addr, 16);
			for (j = e->prefix; j < width; j++)
				a[j / 8] |= (__u8)(0x80 >> (j % 8));
			full_key(&q, 1, fam, a);
			EXPECT_EQ(netmeta_candidate(&q), 1);
		}
	}
	/* And addresses anywhere (random, both families). */
	{
		__u32 seed = 0xc0ffee;

		for (i = 0; i < 20000; i++) {
			__u8 a[16];

			for (j = 0; j < 16; j += 4) {
				__u32 v = seed = seed * 1103515245u + 12345u;

				memcpy(a + j, &v, 4);
			}
			if (i % 3 == 0)
				a[0] = 169, a[1] = (__u8)(i & 0xff) | 0xf0;	/* near 169.254/16 */
			full_key(&q, 1, i & 1 ? 6 : 4, a);
			for (j = 0; j < policy_n_meta_endpoints; j++)
				if (inside(&policy_meta_endpoints[j].cidr, &q))
					break;
			EXPECT_EQ(!!netmeta_candidate(&q), j < policy_n_meta_endpoints);
		}
	}
	/* ::ffff:169.254.169.254 normalises to the IPv4 endpoint. */
	{
		__u8 a[16] = { [10] = 0xff, [11] = 0xff, 169, 254, 169, 254 };

		full_key(&q, 1, 6, a);
		EXPECT_EQ(netmeta_candidate(&q), 1);
	}
	EXPECT(checked > 300);
	DONE();
}

/* "addr/len" of a[] with its host bits cleared (the parser wants them so). */
static void rule_text(char text[64], int af, __u8 *a, int len)
{
	int b, width = af == AF_INET ? 32 : 128;
	size_t n;

	for (b = len; b < width; b++)
		a[b / 8] &= (__u8)~(0x80 >> (b % 8));
	assert_non_null(inet_ntop(af, a, text, 48));
	n = strlen(text);
	snprintf(text + n, 64 - n, "/%d", len);
}

/* A small xorshift: the same addresses on every run. */
static __u32 rnd(__u32 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/*
 * The exact probes (net_exact, the programs' path) return the entry the
 * longest-prefix match (the trie) returns, for every address: policies of
 * 1 to 6 prefix lengths per family (past NET_XLEN_MAX the trie decides),
 * addresses drawn near the rules (each rule's base with its low bits
 * randomised) and anywhere.
 */
static void test_exact_equals_trie(void **state)
{
	static const int lens4[] = { 32, 24, 16, 8, 28, 0 };
	static const int lens6[] = { 128, 64, 48, 32, 96, 0 };
	char err[512], text[64];
	__u32 seed = 0x5eed1234;
	int nl, r, k, hits = 0, probes = 0;

	(void)state;
	for (nl = 1; nl <= 6; nl++) {
		struct policy *p = mk_policy(false);
		struct net_compiled c;

		for (r = 0; r < 60; r++) {
			__u32 v = rnd(&seed);
			int l4 = lens4[r % nl], l6 = lens6[r % nl];

			/* A small address space, so that rules nest. */
			__u8 a4[4] = { 10, v & 3, (v >> 2) & 3, (v >> 4) & 7 };
			__u8 a6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, v & 3, 0, (v >> 2) & 3,
					[15] = (v >> 4) & 7 };

			rule_text(text, AF_INET, a4, l4);
			add_rule(p, text, T, 80, 80);
			rule_text(text, AF_INET6, a6, l6);
			add_rule(p, text, U, 53, 53);
		}
		assert_int_equal(net_rules__compile(p, 3, &c, err, sizeof(err)), 0);
		EXPECT_EQ(c.nxlen[0], nl > NET_XLEN_MAX ? NET_XLEN_TRIE : nl);
		EXPECT_EQ(c.nxlen[1], nl > NET_XLEN_MAX ? NET_XLEN_TRIE : nl);
		for (k = 0; k < 4000; k++) {
			__u8 a[16] = { 0 };
			struct net_key q;
			__u32 v = rnd(&seed);
			int fam = k & 1 ? 6 : 4;

			if (fam == 4) {
				a[0] = k % 7 ? 10 : (__u8)v;
				a[1] = (__u8)(v >> 8) & 3;
				a[2] = (__u8)(v >> 10) & 3;
				a[3] = (__u8)(v >> 12) & 15;
			} else {
				a[0] = 0x20, a[1] = 0x01, a[2] = 0x0d, a[3] = 0xb8;
				a[5] = (__u8)v & 3;
				a[7] = (__u8)(v >> 2) & 3;
				a[15] = (__u8)(v >> 4) & 15;
				if (!(k % 7))
					a[0] = (__u8)(v >> 8) | 1;
			}
			full_key(&q, 3, fam, a);
			EXPECT(net_rules__find(&c, &q) == net_rules__lpm(&c, &q));
			hits += net_rules__lpm(&c, &q) != NULL;
			probes++;
			/* Another policy's rules are never found. */
			q.policy_id = 4;
			EXPECT(net_rules__find(&c, &q) == NULL);
		}
		net_compiled__free(&c);
		free_policy(p);
	}
	/* Both outcomes were exercised, many times. */
	EXPECT(hits > probes / 10 && hits < probes - probes / 10);
	DONE();
}

static void test_key_layout(void **state)
{
	struct policy_cidr cidr;
	struct net_key k;

	(void)state;
	/* Four bytes of policy id and four of family: a 24-byte LPM key. */
	EXPECT_EQ(sizeof(struct net_key), 4 + 24);
	EXPECT_EQ(policy_cidr__parse("10.0.0.0/8", &cidr), 0);
	net_key__from_cidr(&k, 7, &cidr);
	EXPECT_EQ(k.prefixlen, 64 + 8);
	EXPECT_EQ(k.policy_id, 7);
	EXPECT_EQ(k.family, 4);
	EXPECT_EQ(k.addr[0], 10);
	DONE();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_normalize),
		cmocka_unit_test(test_ports_and_protocols),
		cmocka_unit_test(test_covering_prefixes_merge),
		cmocka_unit_test(test_metadata_always_denied),
		cmocka_unit_test(test_override_opens_only_that_endpoint),
		cmocka_unit_test(test_too_many_ranges),
		cmocka_unit_test(test_listen_rules),
		cmocka_unit_test(test_listen_too_many_ranges),
		cmocka_unit_test(test_key_layout),
		cmocka_unit_test(test_metadata_in_code),
		cmocka_unit_test(test_exact_equals_trie),
	};

	return cmocka_run_group_tests_name("net", tests, NULL, NULL);
}
