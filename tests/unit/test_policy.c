/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Unit tests for the policy loader (policy/): CIDR helpers, the built-in
 * endpoint table, single documents (valid and invalid, each invalid one with
 * its exact diagnostic) and whole sets loaded from a temporary directory.
 *
 * Checks are test.h's (the kernel's test_progs): EXPECT*() return whether
 * they held, so a test can skip what depends on a failed check, and the
 * test fails at its end (DONE()) if any did. What a test allocates hangs
 * off its fixture (struct fx), which cmocka frees in teardown however it
 * ends.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "net.h"
#include "policy.h"

static void dump_diag(const struct policy_diag *d)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		print_error("  diag: %s\n", d->msgs[i]);
}

static int parse(const char *doc, struct policy **p, struct policy_diag *d)
{
	return policy__parse("t.yaml", doc, strlen(doc), p, d);
}

static const char *cidr_str(const struct policy_cidr *c)
{
	static char buf[4][64];
	static int i;

	i = (i + 1) % 4;
	return policy_cidr__str(c, buf[i], sizeof(buf[i]));
}

/* ---- CIDR helpers -------------------------------------------------------- */

static struct policy_cidr cidr(const char *s)
{
	struct policy_cidr c;

	memset(&c, 0, sizeof(c));
	if (policy_cidr__parse(s, &c))
		print_error("cidr(\"%s\") did not parse\n", s);
	return c;
}

static void test_cidr_parse_str(void **state)
{
	/* text in, normalised text out */
	static const char *const cases[][2] = {
		{ "10.0.0.0/8", "10.0.0.0/8" },
		{ "127.0.0.1", "127.0.0.1/32" },
		{ "0.0.0.0/0", "0.0.0.0/0" },
		{ "::1", "::1/128" },
		{ "::/0", "::/0" },
		{ "fd00:ec2::254", "fd00:ec2::254/128" },
		{ "FD00:EC2::254/128", "fd00:ec2::254/128" },
		/* IPv4-carrying forms become the IPv4 CIDR they denote */
		{ "::ffff:10.0.0.0/104", "10.0.0.0/8" },
		{ "::ffff:0:0/96", "0.0.0.0/0" },
		{ "::ffff:169.254.169.254", "169.254.169.254/32" },
		{ "::10.1.2.3", "10.1.2.3/32" },
		{ "64:ff9b::a9fe:a9fe", "169.254.169.254/32" },
		{ "64:ff9b::/96", "0.0.0.0/0" },
		{ "2002:a9fe:a9fe::/48", "169.254.169.254/32" },
		{ "2002:a9fe::/32", "169.254.0.0/16" },
		{ "2002::/16", "0.0.0.0/0" },
		/* a 6to4 /64 still names one IPv4 host */
		{ "2002:a9fe:a9fe:1::/64", "169.254.169.254/32" },
		/* too short to lie inside one form: stays IPv6 */
		{ "64:ff9b::/64", "64:ff9b::/64" },
		{ "::fffe:0:0/95", "::fffe:0:0/95" },
		{ "2000::/3", "2000::/3" },
		/* :: and ::1 are IPv6 addresses, not compatible IPv4 */
		{ "::/128", "::/128" },
		{ "::/96", "::/96" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct policy_cidr c;

		if (EXPECT(policy_cidr__parse(cases[i][0], &c) == 0))
			EXPECT_STR(cidr_str(&c), cases[i][1]);
	}
	EXPECT(cidr("::ffff:10.0.0.0/104").family == NET_FAMILY_V4);
	EXPECT(cidr("::ffff:10.0.0.0/104").prefix == 8);
	EXPECT(cidr("::1").family == NET_FAMILY_V6);
	DONE();
}

static void test_cidr_invalid(void **state)
{
	static const char *const bad[] = {
		"", "/8", "10.0.0.0/", "10.0.0.0/33", "::/129", "10.0.0.0/08",
		"10.0.0.0/-1", "10.0.0.0/+8", "10.0.0.0/8/8", "10.0.0", "10.0.0.256",
		"010.0.0.0", "10.0.0.0 /8", " 10.0.0.0", "fe80::1%eth0", "::g",
		"1:2:3:4:5:6:7:8:9", "10.0.0.1/8", "fd00::1/8", "localhost",
		"10.0.0.0/1000",
	};
	struct policy_cidr c;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		if (!EXPECT(policy_cidr__parse(bad[i], &c) == -EINVAL))
			print_error("  accepted \"%s\"\n", bad[i]);
	EXPECT(policy_cidr__parse_raw("10.0.0.0/33", &c) == -ERANGE);
	EXPECT(policy_cidr__parse_raw("::/129", &c) == -ERANGE);
	/* raw keeps host bits; mask reports and clears them */
	if (EXPECT(policy_cidr__parse_raw("10.1.2.3/8", &c) == 0)) {
		EXPECT(policy_cidr__mask(&c));
		EXPECT_STR(cidr_str(&c), "10.0.0.0/8");
		EXPECT(!policy_cidr__mask(&c));
	}
	DONE();
}

static void test_cidr_relations(void **state)
{
	struct policy_cidr any4 = cidr("0.0.0.0/0"), ll = cidr("169.254.0.0/16"),
			   imds = cidr("169.254.169.254"), ten = cidr("10.0.0.0/8"),
			   any6 = cidr("::/0"), v6 = cidr("fd00:ec2::254");

	(void)state;
	EXPECT(policy_cidr__contains(&any4, &ll));
	EXPECT(policy_cidr__contains(&ll, &imds));
	EXPECT(policy_cidr__contains(&ll, &ll));
	EXPECT(!policy_cidr__contains(&imds, &ll));
	EXPECT(!policy_cidr__contains(&ten, &ll));
	EXPECT(policy_cidr__overlaps(&imds, &ll));
	EXPECT(policy_cidr__overlaps(&ll, &imds));
	EXPECT(!policy_cidr__overlaps(&ten, &ll));
	/* families never overlap: the kernel judges each on its own */
	EXPECT(!policy_cidr__overlaps(&any6, &any4));
	EXPECT(policy_cidr__contains(&any6, &v6));
	EXPECT(!policy_cidr__contains(&v6, &any6));
	DONE();
}

/* Each table entry's hand-written bytes must be what its text says. */
static void test_builtin_endpoints(void **state)
{
	size_t i, j;

	(void)state;
	EXPECT(policy_n_meta_endpoints == 10);
	for (i = 0; i < policy_n_meta_endpoints; i++) {
		const struct policy_endpoint *e = &policy_meta_endpoints[i];
		struct policy_cidr c = cidr(e->text);

		EXPECT_STR(cidr_str(&e->cidr), e->text);
		EXPECT(memcmp(&c, &e->cidr, sizeof(c)) == 0);
		/* disjoint, so an address lies inside at most one */
		for (j = 0; j < i; j++)
			EXPECT(!policy_cidr__overlaps(&e->cidr,
						      &policy_meta_endpoints[j].cidr));
	}
	DONE();
}

/* ---- fixtures ---------------------------------------------------------- */

/* Everything a test allocates lives here, freed by fx_teardown however the
 * test ends (cmocka's assertions leave the test by longjmp). */
struct fx {
	struct policy_diag d;
	struct policy *p;
	struct policy_set set;
	char dir[64];
	char files[8][128];
	size_t n_files;
};

static int fx_setup(void **state)
{
	*state = calloc(1, sizeof(struct fx));
	return *state ? 0 : -1;
}

static int fx_teardown(void **state)
{
	struct fx *fx = *state;
	size_t i;

	for (i = 0; i < fx->n_files; i++)
		unlink(fx->files[i]);
	if (fx->dir[0])
		rmdir(fx->dir);
	policy__free(fx->p);
	policy_set__free(&fx->set);
	policy_diag__free(&fx->d);
	free(fx);
	return 0;
}

/* A fixture with an empty temporary directory. */
static int fx_dir_setup(void **state)
{
	struct fx *fx;

	if (fx_setup(state))
		return -1;
	fx = *state;
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/stockade-test.XXXXXX");
	if (!mkdtemp(fx->dir)) {
		fx->dir[0] = '\0';
		fx_teardown(state);
		return -1;
	}
	return 0;
}

#define FX(f)		cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)
#define FX_DIR(f)	cmocka_unit_test_setup_teardown(f, fx_dir_setup, fx_teardown)

/* Write name, text, name, text, ..., NULL into the fixture's directory. */
static bool write_files(struct fx *fx, const char *const *nt)
{
	for (; nt[0]; nt += 2) {
		char *path = fx->files[fx->n_files];
		FILE *f;

		if (!EXPECT(fx->n_files < 8))
			return false;
		snprintf(path, sizeof(fx->files[0]), "%.63s/%.63s", fx->dir, nt[0]);
		f = fopen(path, "w");
		if (!EXPECT(f))
			return false;
		fx->n_files++;
		fputs(nt[1], f);
		if (!EXPECT(fclose(f) == 0))
			return false;
	}
	return true;
}

/* The diagnostics are exactly want[0..n), in this order. */
static bool expect_diags(const struct policy_diag *d, const char *const *want,
			 size_t n)
{
	bool ok = EXPECT(d->n == n);
	size_t i;

	for (i = 0; ok && i < n; i++)
		ok = EXPECT_STR(d->msgs[i], want[i]);
	if (!ok)
		dump_diag(d);
	return ok;
}

/* Parse a document that must be valid; NULL (and a failed check) if not. */
static struct policy *parse_ok(struct fx *fx, const char *doc)
{
	bool ok;

	policy__free(fx->p);
	fx->p = NULL;
	ok = EXPECT(parse(doc, &fx->p, &fx->d) == 0);
	/* Both checks run: the diagnostics explain a failed parse. */
	if (!expect_diags(&fx->d, NULL, 0))
		ok = false;
	return ok ? fx->p : NULL;
}

static int load1(struct fx *fx, const char *path)
{
	const char *paths[] = { path };

	return policy_set__load(paths, 1, &fx->set, &fx->d);
}

/* ---- invalid documents: the exact diagnostic ------------------------------ */

struct bad_case {
	const char *doc;
	const char *want;
};

static void test_bad(void **state)
{
	const struct bad_case *bc = *state;
	struct policy_diag d = { NULL, 0 };
	struct policy *p = (struct policy *)1;

	EXPECT(parse(bc->doc, &p, &d) == -EINVAL);
	EXPECT(p == NULL);
	expect_diags(&d, &bc->want, 1);
	policy_diag__free(&d);
	DONE();
}

#define OK_HEAD "name: t\ncgroups: [/s]\n"
/* A document with one allow rule `R` (flow mapping body). */
#define RULE(r) OK_HEAD "network:\n  allow:\n    - {" r "}\n"
#define BAD(nm, d, w) {							\
	.name = "bad_" #nm, .test_func = test_bad,			\
	.initial_state = &(struct bad_case){ .doc = (d), .want = (w) },	\
}

/* ---- valid documents ------------------------------------------------------ */

static const char full_doc[] =
	"# every key, in an unusual order\n"
	"mode: audit\n"
	"name: model-code\n"
	"category: model-generated-code\n"
	"cgroups:\n"
	"  - /sandboxes/*\n"
	"  - \"/ci/job-[0-9]*\"\n"
	"network:\n"
	"  default: allow\n"
	"  raw_sockets: true\n"
	"  icmp: true\n"
	"  allow:\n"
	"    - cidr: 127.0.0.1/32\n"
	"      ports: [8080, \"9000-9100\", \"443\", 1-1024]\n"
	"      proto: tcp\n"
	"    - cidr: ::ffff:10.0.0.0/104\n"
	"      proto: udp\n"
	"    - cidr: ::1\n"
	"      proto: any\n"
	"    - cidr: 169.254.169.254\n"
	"      ports: [80]\n"
	"  overrides:\n"
	"    - endpoint: 169.254.169.254\n"
	"      reason: \"build step reads the region\"\n"
	"files: {}\n"
	"limits: {}\n";

static bool expect_ports(const struct policy_net_rule *r,
			 const struct policy_ports *want, size_t n)
{
	bool ok = EXPECT(r->n_ports == n);
	size_t i;

	for (i = 0; ok && i < n; i++)
		ok = EXPECT(r->ports[i].lo == want[i].lo && r->ports[i].hi == want[i].hi);
	return ok;
}

static void test_full_document(void **state)
{
	static const struct policy_ports ports0[] = {
		{ 8080, 8080 }, { 9000, 9100 }, { 443, 443 }, { 1, 1024 },
	};
	const struct policy_net_rule *r;
	struct policy *p = parse_ok(*state, full_doc);

	if (!p)
		goto done;
	EXPECT_STR(p->file, "t.yaml");
	EXPECT_STR(p->name, "model-code");
	EXPECT(p->name_pos.line == 3 && p->name_pos.col == 7);
	EXPECT_STR(p->category, "model-generated-code");
	EXPECT(p->mode == POLICY_AUDIT);
	EXPECT(p->pos.line == 2 && p->pos.col == 1);
	if (EXPECT(p->n_cgroups == 2)) {
		EXPECT_STR(p->cgroups[0], "/sandboxes/*");
		EXPECT_STR(p->cgroups[1], "/ci/job-[0-9]*");
		EXPECT(p->cgroups_pos[1].line == 7 && p->cgroups_pos[1].col == 5);
	}
	EXPECT(p->net.default_allow && p->net.raw_sockets && p->net.icmp);
	if (!EXPECT(p->net.n_allow == 4))
		goto done;
	r = &p->net.allow[0];
	EXPECT_STR(cidr_str(&r->cidr), "127.0.0.1/32");
	EXPECT(r->cidr.family == NET_FAMILY_V4 && r->proto == NET_PROTO_TCP);
	EXPECT(r->pos.line == 13 && r->pos.col == 7);
	expect_ports(r, ports0, 4);
	r = &p->net.allow[1];
	EXPECT(r->cidr.family == NET_FAMILY_V4 && r->cidr.prefix == 8);
	EXPECT_STR(cidr_str(&r->cidr), "10.0.0.0/8");
	EXPECT(r->proto == NET_PROTO_UDP && r->n_ports == 0);
	r = &p->net.allow[2];
	EXPECT(r->cidr.family == NET_FAMILY_V6 && r->cidr.prefix == 128);
	EXPECT(r->proto == NET_PROTO_ANY);
	EXPECT_STR(cidr_str(&p->net.allow[3].cidr), "169.254.169.254/32");
	if (EXPECT(p->net.n_overrides == 1)) {
		EXPECT_STR(cidr_str(&p->net.overrides[0].endpoint),
			   "169.254.169.254/32");
		EXPECT_STR(p->net.overrides[0].reason, "build step reads the region");
	}
done:
	DONE();
}

static void test_defaults(void **state)
{
	struct policy *p = parse_ok(*state, RULE("cidr: 10.0.0.0/8"));

	if (!p)
		goto done;
	EXPECT(p->category == NULL);
	EXPECT(p->mode == POLICY_ENFORCE);
	EXPECT(!p->net.default_allow && !p->net.raw_sockets && !p->net.icmp);
	EXPECT(p->net.n_overrides == 0);
	if (EXPECT(p->net.n_allow == 1)) {
		EXPECT(p->net.allow[0].proto == NET_PROTO_ANY);
		EXPECT(p->net.allow[0].n_ports == 0);
	}
done:
	DONE();
}

/* Overrides that cover every metadata part a broad rule reaches. */
static void test_overrides_cover(void **state)
{
	static const char *const docs[] = {
		RULE("cidr: 169.254.169.254/32")
		"  overrides:\n"
		"    - {endpoint: 169.254.169.254, reason: imds}\n",
		RULE("cidr: 0.0.0.0/0")
		"  overrides:\n"
		"    - {endpoint: 169.254.0.0/16, reason: a}\n"
		"    - {endpoint: 100.100.100.200, reason: b}\n"
		"    - {endpoint: 168.63.129.16/32, reason: c}\n"
		"    - {endpoint: \"::ffff:192.0.0.192\", reason: d}\n",
		RULE("cidr: \"fd00:ec2::/120\"")
		"  overrides:\n"
		"    - {endpoint: \"fd00:ec2::254\", reason: a}\n"
		"    - {endpoint: \"fd00:ec2::23\", reason: b}\n",
		/* default allow with an override: no rule involved at all */
		OK_HEAD "network:\n  default: allow\n  overrides:\n"
		"    - {endpoint: 169.254.170.2, reason: ecs credentials}\n",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(docs); i++)
		parse_ok(*state, docs[i]);
	DONE();
}

/* ---- network.listen and network.netlink --------------------------------- */

#define NETLINK(n)	OK_HEAD "network: {netlink: [" n "]}\n"
#define LISTEN(r)	OK_HEAD "network:\n  listen:\n    - {" r "}\n"

static void test_listen_netlink(void **state)
{
	static const char doc[] =
		OK_HEAD
		"network:\n"
		"  listen:\n"
		"    - cidr: 127.0.0.0/8\n"
		"      ports: [8080, \"9000-9001\"]\n"
		"      proto: tcp\n"
		"    - {cidr: \"::1\"}\n"
		"  netlink: [sock_diag, generic, route]\n";
	struct policy *p = parse_ok(*state, doc);

	if (!p)
		goto done;
	EXPECT(p->net.n_allow == 0);
	if (EXPECT(p->net.n_listen == 2)) {
		EXPECT_STR(cidr_str(&p->net.listen[0].cidr), "127.0.0.0/8");
		EXPECT(p->net.listen[0].proto == NET_PROTO_TCP);
		EXPECT(p->net.listen[0].n_ports == 2);
		EXPECT(p->net.listen[0].pos.line == 5);
		EXPECT(p->net.listen[1].proto == NET_PROTO_ANY &&
		       p->net.listen[1].n_ports == 0);
	}
	EXPECT(p->net.netlink == ((1u << 4) | (1u << 16) | (1u << 0)));
	EXPECT(p->net.netlink & POLICY_NETLINK_RISKY);
	/* Absent: no listen rule, no netlink family beyond route reads. */
	p = parse_ok(*state, OK_HEAD "network: {default: allow}\n");
	if (p)
		EXPECT(p->net.n_listen == 0 && p->net.netlink == 0);
	/* An empty netlink list is the default. */
	p = parse_ok(*state, NETLINK(""));
	if (p)
		EXPECT(p->net.netlink == 0);
	/* The names round-trip, and unnamed numbers say so. */
	EXPECT(policy_netlink_parse("netfilter") == 12);
	EXPECT(policy_netlink_parse("kobject_uevent") == 15);
	EXPECT(policy_netlink_parse("Route") == -EINVAL);
	EXPECT_STR(policy_netlink_name(9), "audit");
	EXPECT_STR(policy_netlink_name(1), "unknown");
	EXPECT_STR(policy_netlink_name(99), "unknown");
	EXPECT(!(POLICY_NETLINK_RISKY & (1u << 4)));
	EXPECT((POLICY_NETLINK_RISKY & (1u << 12)) && (POLICY_NETLINK_RISKY & (1u << 9)) &&
	       (POLICY_NETLINK_RISKY & (1u << 6)));
done:
	DONE();
}

/* ---- files, unix sockets, namespaces, limits ------------------------------ */

/* One document with flow mappings for brevity: files.KEYS, limits.KEYS. */
#define FILES(f)	OK_HEAD "files: {" f "}\n"
#define LIMITS(l)	OK_HEAD "limits: {" l "}\n"
#define UNIX(u)		OK_HEAD "network: {unix_allow: [" u "]}\n"
/* Message tails the invalid-document table repeats. */
#define NOT_PROTECTED " is not a built-in protected path; expected one of those listed in the README, or a path inside one, e.g. /var/run/secrets or /home/USER/.ssh"
#define DOTS          " has a '.' or '..' component; write the path without them"
#define NOT_CPU       " is not a CPU amount; expected cores such as 1.5 or millicores such as 500m"
#define NOT_SIZE      " is not a size; expected a number with Ki, Mi, Gi, Ti, K, M, G or T"
#define NOT_COUNT     " is not a whole number; expected a count such as 256"
#define NOT_DURATION  " is not a duration; expected a number with ms, s, m or h, such as 30s, 5m or 1h30m"
/* Long names: "/" A250 is FILE_PREFIX_MAX bytes, "/" A106 a full sun_path. */
#define A16		"aaaaaaaaaaaaaaaa"
#define A64		A16 A16 A16 A16
#define A106		A64 A16 A16 "aaaaaaaaaa"
#define A250		A64 A64 A64 A16 A16 A16 "aaaaaaaaaa"

static const char confined_doc[] =
	"name: t\n"
	"cgroups: [/s]\n"
	"files:\n"
	"  read: [/usr, /lib, /etc, /task, /]\n"
	"  write:\n"
	"    - /task/out\n"
	"    - \"/tmp/task\"\n"
	"    - /task\n"
	"  deny: [/task/.git/hooks]\n"
	"  overrides:\n"
	"    - path: /var/run/secrets/kubernetes.io/serviceaccount\n"
	"      reason: \"job reads its own token\"\n"
	"    - {path: /home/alice/.ssh/known_hosts, reason: ssh}\n"
	"network:\n"
	"  unix_allow: [/run/task.sock, \"@abstract\"]\n"
	"namespaces:\n"
	"  user: true\n"
	"limits:\n"
	"  cpu: 1.5\n"
	"  memory: 512Mi\n"
	"  memory_swap: 0\n"
	"  pids: 256\n"
	"  runtime: 30s\n";

static bool expect_paths(const struct policy_path *v, size_t n,
			 const char *const *want, size_t n_want)
{
	bool ok = EXPECT(n == n_want);
	size_t i;

	for (i = 0; ok && i < n; i++)
		ok = EXPECT_STR(v[i].path, want[i]);
	return ok;
}

static void test_confined_document(void **state)
{
	static const char *const rd[] = { "/usr", "/lib", "/etc", "/task", "/" };
	static const char *const wr[] = { "/task/out", "/tmp/task", "/task" };
	static const char *const dn[] = { "/task/.git/hooks" };
	static const char *const ux[] = { "/run/task.sock", "@abstract" };
	struct policy *p = parse_ok(*state, confined_doc);
	const struct policy_limits *l;

	if (!p)
		goto done;
	EXPECT(p->files.has_read && p->files.has_write);
	expect_paths(p->files.read, p->files.n_read, rd, 5);
	if (expect_paths(p->files.write, p->files.n_write, wr, 3))
		EXPECT(p->files.write[1].pos.line == 7 &&
		       p->files.write[1].pos.col == 7);
	expect_paths(p->files.deny, p->files.n_deny, dn, 1);
	if (EXPECT(p->files.n_overrides == 2)) {
		EXPECT_STR(p->files.overrides[0].path,
			   "/var/run/secrets/kubernetes.io/serviceaccount");
		EXPECT_STR(p->files.overrides[0].reason, "job reads its own token");
		EXPECT(p->files.overrides[0].pos.line == 11);
		EXPECT_STR(p->files.overrides[1].path, "/home/alice/.ssh/known_hosts");
		EXPECT_STR(p->files.overrides[1].reason, "ssh");
	}
	if (expect_paths(p->net.unix_allow, p->net.n_unix_allow, ux, 2))
		EXPECT(p->net.unix_allow[1].pos.line == 15 &&
		       p->net.unix_allow[1].pos.col == 32);
	EXPECT(p->namespaces.user);
	l = &p->limits;
	EXPECT(l->has_cpu && l->has_memory && l->has_memory_swap &&
	       l->has_pids && l->has_runtime);
	EXPECT(l->cpu_milli == 1500);
	EXPECT(l->memory == 536870912);
	EXPECT(l->memory_swap == 0);
	EXPECT(l->pids == 256);
	EXPECT(l->runtime_ms == 30000);
	EXPECT(l->cpu_pos.line == 19 && l->cpu_pos.col == 8);
	EXPECT(l->runtime_pos.line == 23 && l->runtime_pos.col == 12);
done:
	DONE();
}

/* Absent keys and empty lists: what each leaves allowed. */
static void test_files_defaults(void **state)
{
	struct policy *p;

	/* no files key: reads everywhere, no writes, nothing else */
	if ((p = parse_ok(*state, OK_HEAD))) {
		EXPECT(!p->files.has_read && !p->files.has_write);
		EXPECT(p->files.n_read == 0 && p->files.n_write == 0);
		EXPECT(p->files.n_deny == 0 && p->files.n_overrides == 0);
		EXPECT(p->net.n_unix_allow == 0 && !p->namespaces.user);
		EXPECT(!p->limits.has_cpu && !p->limits.has_memory &&
		       !p->limits.has_memory_swap && !p->limits.has_pids &&
		       !p->limits.has_runtime);
	}
	if ((p = parse_ok(*state, OK_HEAD "files: {}\nnamespaces: {}\nlimits: {}\n")))
		EXPECT(!p->files.has_read && !p->files.has_write &&
		       !p->namespaces.user && !p->limits.has_cpu);
	/* read: [] is "no reads anywhere", not "key absent" */
	if ((p = parse_ok(*state, FILES("read: []"))))
		EXPECT(p->files.has_read && p->files.n_read == 0 &&
		       !p->files.has_write);
	if ((p = parse_ok(*state, FILES("write: []"))))
		EXPECT(p->files.has_write && p->files.n_write == 0 &&
		       !p->files.has_read);
	if ((p = parse_ok(*state, FILES("read: [/], write: [/]"))))
		EXPECT(p->files.n_read == 1 && p->files.n_write == 1);
	if ((p = parse_ok(*state, OK_HEAD "namespaces: {user: false}\n")))
		EXPECT(!p->namespaces.user);
	DONE();
}

/* Per-execution folders: placeholders kept as written, found, expanded. */
static void test_files_templates(void **state)
{
	struct policy *p;
	char out[64];

	if ((p = parse_ok(*state, FILES("read: [/usr, \"/srv/in/{cgroup}\"], write: [\"/srv/{cgroup_path}/out\"]")))) {
		EXPECT_STR(p->files.read[1].path, "/srv/in/{cgroup}");
		EXPECT(policy__has_templates(p));
		EXPECT(!policy_tmpl__has(p->files.read[0].path));
		EXPECT_EQ(policy_tmpl__kinds(p->files.write[0].path), 1u << POLICY_TMPL_CGROUP_PATH);
	}
	/* A literal '{' outside a placeholder is fine in a deny path. */
	if ((p = parse_ok(*state, FILES("deny: [\"/srv/{x}\"]"))))
		EXPECT(!policy__has_templates(p));
	/* The length limit counts each placeholder at its shortest, one byte:
	 * 5 + 1 + 1 + 236 = 243, the most a per-cgroup key holds. */
	if ((p = parse_ok(*state, FILES("write: [\"/srv/{cgroup}/" A64 A64 A64 A16 A16 "aaaaaaaaaaaa\"]"))))
		EXPECT(p->files.n_write == 1);
	EXPECT_EQ(policy_tmpl__expand("/j/{cgroup}/{cgroup_path}", "/a/b-7", out, sizeof(out)), 12);
	EXPECT_STR(out, "/j/b-7/a/b-7");
	EXPECT_EQ(policy_tmpl__expand("/j/{cgroup}", "/top", out, sizeof(out)), 6);
	EXPECT_STR(out, "/j/top");
	/* No value to put in: the root cgroup, or no path at all. */
	EXPECT_EQ(policy_tmpl__expand("/j/{cgroup}", "/", out, sizeof(out)), -EINVAL);
	EXPECT_EQ(policy_tmpl__expand("/j/{cgroup}", "", out, sizeof(out)), -EINVAL);
	EXPECT_EQ(policy_tmpl__expand("/j/{cgroup}", "/abcdefgh", out, 8), -ENAMETOOLONG);
	/* One pass: a cgroup named like a placeholder stays a name. */
	EXPECT_EQ(policy_tmpl__expand("/j/{cgroup}", "/{cgroup_path}", out, sizeof(out)), 16);
	EXPECT_STR(out, "/j/{cgroup_path}");
	DONE();
}

/* exec: absent (read minus write), a list, or the mapping form. */
static void test_exec_forms(void **state)
{
	struct policy *p;

	if ((p = parse_ok(*state, OK_HEAD)))
		EXPECT(!p->exec.has && !p->exec.has_paths &&
		       !p->exec.allow_written && !p->exec.anon_deny);
	if ((p = parse_ok(*state, OK_HEAD "exec: [/usr/bin, /opt/tool]\n")) &&
	    EXPECT(p->exec.has_paths && p->exec.n_paths == 2)) {
		EXPECT_STR(p->exec.paths[0].path, "/usr/bin");
		EXPECT_STR(p->exec.paths[1].path, "/opt/tool");
		EXPECT(!p->exec.allow_written);
	}
	if ((p = parse_ok(*state, OK_HEAD "exec: []\n")))
		EXPECT(p->exec.has_paths && p->exec.n_paths == 0);
	if ((p = parse_ok(*state, OK_HEAD "exec:\n  allow_written: true\n  anon_exec: deny\n"))) {
		EXPECT(p->exec.has && !p->exec.has_paths);
		EXPECT(p->exec.allow_written && p->exec.anon_deny);
		EXPECT_EQ(p->exec.allow_written_pos.line, 4);
	}
	if ((p = parse_ok(*state, OK_HEAD "exec: {paths: [/opt], anon_exec: allow}\n")) &&
	    EXPECT(p->exec.n_paths == 1))
		EXPECT(!p->exec.anon_deny && !p->exec.allow_written && !p->exec.hash_sha256);
	if ((p = parse_ok(*state, OK_HEAD "exec: {hash: sha256}\n")))
		EXPECT(p->exec.hash_sha256 && !p->exec.has_paths);
	if ((p = parse_ok(*state, OK_HEAD "exec: {hash: none}\n")))
		EXPECT(!p->exec.hash_sha256);
	DONE();
}

/* capabilities: names in any spelling, the default set, and the
 * dangerous ones (allowed, for `check` to warn about). */
static void test_capabilities(void **state)
{
	struct policy *p;
	int i;

	if ((p = parse_ok(*state, OK_HEAD))) {
		EXPECT(!p->caps.has && !p->perf_allow && !p->userfaultfd);
		EXPECT(policy_caps(p) == policy_caps_default);
		EXPECT(!(policy_caps(p) & policy_caps_dangerous));
		EXPECT(!(policy_caps(p) & POLICY_CAP_BIT(13)));	/* NET_RAW */
	}
	/* raw_sockets brings NET_RAW into the default, not into a list */
	if ((p = parse_ok(*state, OK_HEAD "network: {raw_sockets: true}\n")))
		EXPECT(policy_caps(p) == (policy_caps_default | POLICY_CAP_BIT(13)));
	if ((p = parse_ok(*state, OK_HEAD "network: {raw_sockets: true}\ncapabilities: [KILL]\n")))
		EXPECT(policy_caps(p) == POLICY_CAP_BIT(5));
	if ((p = parse_ok(*state, OK_HEAD "capabilities: []\n")))
		EXPECT(p->caps.has && policy_caps(p) == 0);
	if ((p = parse_ok(*state, OK_HEAD "capabilities: [chown, CAP_Sys_Admin, checkpoint_restore]\n"))) {
		EXPECT(p->caps.has);
		EXPECT(p->caps.mask == (POLICY_CAP_BIT(0) | POLICY_CAP_BIT(21) |
					POLICY_CAP_BIT(40)));
		EXPECT(policy_caps(p) == (p->caps.mask | POLICY_CAP_BIT(34) |
					  POLICY_CAP_BIT(38) | POLICY_CAP_BIT(39)));
		EXPECT(p->caps.pos[21].line == 3 && p->caps.pos[21].col == 23);
	}
	/* SYS_ADMIN brings the capabilities the kernel takes it for */
	if ((p = parse_ok(*state, OK_HEAD "capabilities: [SYS_ADMIN]\n")))
		EXPECT(policy_caps(p) == (POLICY_CAP_BIT(21) | POLICY_CAP_BIT(34) |
					  POLICY_CAP_BIT(38) | POLICY_CAP_BIT(39) |
					  POLICY_CAP_BIT(40)));
	if ((p = parse_ok(*state, OK_HEAD "capabilities: [PERFMON]\n")))
		EXPECT(policy_caps(p) == POLICY_CAP_BIT(38));
	if ((p = parse_ok(*state, OK_HEAD "perf: allow\nuserfaultfd: true\n")))
		EXPECT(p->perf_allow && p->userfaultfd);
	if ((p = parse_ok(*state, OK_HEAD "perf: deny\nuserfaultfd: false\n")))
		EXPECT(!p->perf_allow && !p->userfaultfd);
	/* setup: auto and the default deadline unless given */
	if ((p = parse_ok(*state, OK_HEAD "perf: deny\n")))
		EXPECT(p->setup.pass == POLICY_SETUP_AUTO && !p->setup.deadline_ms);
	if ((p = parse_ok(*state, OK_HEAD "setup: {pass: on, deadline: 2s}\n")))
		EXPECT(p->setup.pass == POLICY_SETUP_ON && p->setup.deadline_ms == 2000);
	if ((p = parse_ok(*state, OK_HEAD "setup: {pass: off}\n")))
		EXPECT(p->setup.pass == POLICY_SETUP_OFF);
	if ((p = parse_ok(*state, OK_HEAD "setup: {deadline: 1m30s}\n")))
		EXPECT(p->setup.pass == POLICY_SETUP_AUTO && p->setup.deadline_ms == 90000);
	/* files.preexisting: report unless kill is given */
	if ((p = parse_ok(*state, OK_HEAD "perf: deny\n")))
		EXPECT(p->files.preexisting == POLICY_PREEXISTING_REPORT);
	if ((p = parse_ok(*state, OK_HEAD "files: {preexisting: kill}\n")))
		EXPECT(p->files.preexisting == POLICY_PREEXISTING_KILL);
	if ((p = parse_ok(*state, OK_HEAD "files: {preexisting: report}\n")))
		EXPECT(p->files.preexisting == POLICY_PREEXISTING_REPORT);
	/* The brief's list: every one of these is dangerous, none default. */
	for (i = 0; i <= POLICY_CAP_LAST; i++) {
		static const char *const bad[] = {
			"SYS_MODULE", "SYS_RAWIO", "SYS_BOOT", "SYS_TIME",
			"SYS_ADMIN", "NET_ADMIN", "SYSLOG", "PERFMON", "BPF",
			"SYS_PTRACE", "MAC_ADMIN", "AUDIT_CONTROL", "SYS_PACCT",
			"IPC_OWNER", "DAC_READ_SEARCH",
		};
		size_t j;

		for (j = 0; j < ARRAY_SIZE(bad); j++)
			if (!strcmp(policy_cap_names[i], bad[j]))
				EXPECT((policy_caps_dangerous & POLICY_CAP_BIT(i)) &&
				       !(policy_caps_default & POLICY_CAP_BIT(i)));
	}
	DONE();
}

/* Paths at their length limits, and every form an override may take. */
static void test_path_forms(void **state)
{
	static const char *const overrides[] = {
		"/etc/shadow", "/etc/shadow-", "/etc/sudoers.d/90-cloud",
		"/var/run/secrets/kubernetes.io/serviceaccount", "/root/.kube",
		"/sys/kernel/debug/tracing", "/home/alice/.ssh",
		"/home/bob/.config/gcloud/credentials.db",
		"/home/c/.docker/config.json", "/run/containerd/containerd.sock",
	};
	struct policy *p;
	char doc[512];
	size_t i;

	if ((p = parse_ok(*state, FILES("read: [\"/" A250 "\"]"))))
		EXPECT(strlen(p->files.read[0].path) == 251);
	if ((p = parse_ok(*state, UNIX("\"/" A106 "\", \"@" A106 "\""))) &&
	    EXPECT(p->net.n_unix_allow == 2)) {
		EXPECT(strlen(p->net.unix_allow[0].path) == 107);
		EXPECT(strlen(p->net.unix_allow[1].path) == 107);
	}
	for (i = 0; i < ARRAY_SIZE(overrides); i++) {
		snprintf(doc, sizeof(doc),
			 FILES("overrides: [{path: \"%s\", reason: r}]"),
			 overrides[i]);
		if ((p = parse_ok(*state, doc)) && EXPECT(p->files.n_overrides == 1))
			EXPECT_STR(p->files.overrides[0].path, overrides[i]);
	}
	DONE();
}

/* Each protected path is absolute and normalised; the two lists as the
 * README documents them. */
static void test_builtin_paths(void **state)
{
	size_t i;

	(void)state;
	EXPECT(policy_n_protected_paths == 36);
	EXPECT(policy_n_protected_home == 6);
	for (i = 0; i < policy_n_protected_paths; i++) {
		const char *s = policy_protected_paths[i];

		EXPECT(s[0] == '/' && !strstr(s, "//") && !strstr(s, "/./") &&
		       !strstr(s, "/../") && s[strlen(s) - 1] != '/');
	}
	for (i = 0; i < policy_n_protected_home; i++)
		EXPECT(policy_protected_home[i][0] == '.');
	/* every home entry is also protected under /root */
	for (i = 0; i < policy_n_protected_home; i++) {
		char root[64];
		size_t j;

		snprintf(root, sizeof(root), "/root/%s", policy_protected_home[i]);
		for (j = 0; j < policy_n_protected_paths; j++)
			if (strcmp(policy_protected_paths[j], root) == 0)
				break;
		EXPECT(j < policy_n_protected_paths);
	}
	DONE();
}

/* Every unit of every limit, and the forms a YAML scalar may take. */
static void test_limits_units(void **state)
{
	enum { CPU, MEM, SWAP, PIDS, RUN };
	static const char *const keys[] = { "cpu", "memory", "memory_swap",
					    "pids", "runtime" };
	static const struct {
		int key;
		const char *text;
		uint64_t want;
	} cases[] = {
		{ CPU, "1.5", 1500 }, { CPU, "\"500m\"", 500 }, { CPU, "500m", 500 },
		{ CPU, "2", 2000 }, { CPU, "\"2\"", 2000 }, { CPU, "0.001", 1 },
		{ CPU, "1m", 1 }, { CPU, "1.5000", 1500 }, { CPU, "0.25", 250 },
		{ CPU, "1024", 1024000 }, { CPU, "1024000m", 1024000 },
		{ MEM, "512Mi", 536870912 }, { MEM, "1G", 1000000000 },
		{ MEM, "1024", 1024 }, { MEM, "1Ki", 1024 }, { MEM, "1K", 1000 },
		{ MEM, "2M", 2000000 }, { MEM, "1Gi", 1073741824 },
		{ MEM, "1T", 1000000000000 }, { MEM, "1Ti", 1099511627776 },
		{ MEM, "1.5Gi", 1610612736 }, { MEM, "0.5K", 500 },
		{ MEM, "18446744073709551615", UINT64_MAX },
		{ MEM, "0.0009765625Mi", 1024 }, { MEM, "0.5Ki", 512 },
		{ SWAP, "0", 0 }, { SWAP, "1Gi", 1073741824 },
		{ PIDS, "256", 256 }, { PIDS, "\"1\"", 1 }, { PIDS, "4194304", 4194304 },
		{ RUN, "30s", 30000 }, { RUN, "500ms", 500 }, { RUN, "5m", 300000 },
		{ RUN, "2h", 7200000 }, { RUN, "1h30m", 5400000 },
		{ RUN, "1.5h", 5400000 }, { RUN, "1m30s500ms", 90500 },
		{ RUN, "\"10m\"", 600000 }, { RUN, "720h", 2592000000 },
		{ RUN, "1ms", 1 },
	};
	struct fx *fx = *state;
	struct policy *p;
	char doc[256];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct policy_limits *l;
		uint64_t got = 0;
		bool has = false;

		snprintf(doc, sizeof(doc), OK_HEAD "limits:\n  %s: %s\n",
			 keys[cases[i].key], cases[i].text);
		policy_diag__free(&fx->d);
		p = parse_ok(fx, doc);
		if (!p) {
			print_error("  in case %s: %s\n", keys[cases[i].key],
				    cases[i].text);
			continue;
		}
		l = &p->limits;
		switch (cases[i].key) {
		case CPU: has = l->has_cpu; got = l->cpu_milli; break;
		case MEM: has = l->has_memory; got = l->memory; break;
		case SWAP: has = l->has_memory_swap; got = l->memory_swap; break;
		case PIDS: has = l->has_pids; got = l->pids; break;
		case RUN: has = l->has_runtime; got = l->runtime_ms; break;
		}
		if (!EXPECT(has && got == cases[i].want))
			print_error("  %s: %s gave %llu, want %llu\n",
				    keys[cases[i].key], cases[i].text,
				    (unsigned long long)got,
				    (unsigned long long)cases[i].want);
		/* only the key given is set, at its value's position */
		EXPECT(l->has_cpu + l->has_memory + l->has_memory_swap +
		       l->has_pids + l->has_runtime == 1);
	}
	if ((p = parse_ok(fx, LIMITS("memory_swap: 0"))))
		EXPECT(p->limits.has_memory_swap && p->limits.memory_swap == 0 &&
		       p->limits.memory_swap_pos.line == 3 &&
		       p->limits.memory_swap_pos.col == 23);
	DONE();
}

/* Every problem is reported, in file order, and nothing is returned. */
static void test_all_diagnostics(void **state)
{
	static const char doc[] =
		"name: Bad\n"
		"cgroups: [/s]\n"
		"bogus: 1\n"
		"mode: x\n";
	static const char *const want[] = {
		"t.yaml:1:7: name: 'Bad' has the character 'B'; use only a-z, 0-9 and '-'",
		"t.yaml:3:1: bogus: unknown key 'bogus'; expected one of: name, category, mode, cgroups, network, files, namespaces, limits, capabilities, perf, userfaultfd, setup, exec, containers, pods, images",
		"t.yaml:4:7: mode: expected enforce or audit, got 'x'",
	};
	struct fx *fx = *state;

	EXPECT(parse(doc, &fx->p, &fx->d) == -EINVAL);
	EXPECT(fx->p == NULL);
	expect_diags(&fx->d, want, 3);
	DONE();
}

static void test_too_big(void **state)
{
	static const char *const want[] = {
		"big.yaml: 1048577 bytes; a policy file may hold at most 1048576",
	};
	struct fx *fx = *state;
	size_t len = POLICY_FILE_MAX + 1;
	char *buf = malloc(len);

	if (EXPECT(buf)) {
		memset(buf, '#', len);
		EXPECT(policy__parse("big.yaml", buf, len, &fx->p, &fx->d) == -EINVAL);
		expect_diags(&fx->d, want, 1);
	}
	free(buf);
	DONE();
}

/* One past each count limit, in a document under the 1 MiB cap: the count
 * is checked before any item, so the items need not be valid. */
static void test_count_limits(void **state)
{
	static const char *const want[] = {
		"t.yaml:2:10: cgroups: 257 selectors; at most 256 are supported",
		"t.yaml:4:10: network.allow: 65537 rules; at most 65536 are supported",
		"t.yaml:6:9: files.read: 4097 entries; at most 4096 are supported",
	};
	struct fx *fx = *state;
	size_t i, len = 0, cap = 1 << 20;
	char *doc = malloc(cap);

	if (!EXPECT(doc))
		goto done;
	len += (size_t)sprintf(doc + len, "name: t\ncgroups: [");
	for (i = 0; i <= POLICY_MAX_SELECTORS; i++)
		len += (size_t)sprintf(doc + len, "%s/s%zu", i ? "," : "", i);
	len += (size_t)sprintf(doc + len, "]\nnetwork:\n  allow: [");
	for (i = 0; i <= POLICY_MAX_NET_RULES; i++)
		len += (size_t)sprintf(doc + len, "%sx", i ? "," : "");
	len += (size_t)sprintf(doc + len, "]\nfiles:\n  read: [");
	for (i = 0; i <= POLICY_MAX_FILE_PATHS; i++)
		len += (size_t)sprintf(doc + len, "%sx", i ? "," : "");
	len += (size_t)sprintf(doc + len, "]\n");
	if (EXPECT(len < cap)) {
		EXPECT(parse(doc, &fx->p, &fx->d) == -EINVAL);
		expect_diags(&fx->d, want, 3);
	}
	free(doc);
done:
	DONE();
}

/* A diagnostic is one line however hostile the input it quotes. */
static void test_diag_one_line(void **state)
{
	static const char *const want[] = {
		"t.yaml:3:1: a\\x0ab\\x01: unknown key 'a\\x0ab\\x01'; expected one of: name, category, mode, cgroups, network, files, namespaces, limits, capabilities, perf, userfaultfd, setup, exec, containers, pods, images",
	};
	struct fx *fx = *state;

	EXPECT(parse(OK_HEAD "\"a\\nb\\u0001\": 1\n", &fx->p, &fx->d) == -EINVAL);
	expect_diags(&fx->d, want, 1);
	DONE();
}

/* ---- sets: files and directories ----------------------------------------- */

static void test_set_dir_order(void **state)
{
	/* Only *.yaml / *.yml, no dot files, in byte order (B < a). */
	static const char *const files[] = {
		"b.yaml", "name: b\ncgroups: [/b]\n",
		"a.yml", "name: a\ncgroups: [/a]\n",
		"B.yaml", "name: big-b\ncgroups: [/B]\n",
		"notes.txt", "not: a policy\n",
		".c.yaml", "broken: [\n",
		"c.yaml.bak", "broken: [\n",
		NULL,
	};
	struct fx *fx = *state;

	if (!write_files(fx, files) || !EXPECT(load1(fx, fx->dir) == 0) ||
	    !expect_diags(&fx->d, NULL, 0) || !EXPECT(fx->set.n == 3))
		goto done;
	EXPECT_STR(fx->set.v[0]->name, "big-b");
	EXPECT_STR(fx->set.v[1]->name, "a");
	EXPECT_STR(fx->set.v[2]->name, "b");
	EXPECT_STR(fx->set.v[1]->file, fx->files[1]);
done:
	DONE();
}

/*
 * A ConfigMap volume as the kubelet lays it out (pkg/volume/util/
 * atomic_writer.go): the files in a hidden ..<timestamp> directory,
 * ..data a symlink to it, each visible file a symlink into ..data. The
 * old hidden directory (here still there, with a broken policy, as just
 * before the kubelet removes it) and the dot entries are no policies; the
 * visible symlink is followed, and the policy keeps the visible path.
 */
static void test_set_configmap(void **state)
{
	static const char doc[] = "name: cm\ncgroups: [/cm]\n";
	static const char *const hidden[] = { "..2026_12_02_01_02_03.111111111",
					      "..2026_12_02_01_05_09.222222222" };
	struct fx *fx = *state;
	char path[256], vis[256];
	size_t i;
	FILE *f;

	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", fx->dir, hidden[i]);
		if (!EXPECT(mkdir(path, 0755) == 0))
			goto done;
		snprintf(path, sizeof(path), "%s/%s/stockade.yaml", fx->dir, hidden[i]);
		f = fopen(path, "w");
		if (!EXPECT(f))
			goto done;
		fputs(i ? doc : "broken: [\n", f);
		if (!EXPECT(fclose(f) == 0))
			goto done;
	}
	snprintf(path, sizeof(path), "%s/..data", fx->dir);
	snprintf(vis, sizeof(vis), "%s/stockade.yaml", fx->dir);
	if (!EXPECT(symlink(hidden[1], path) == 0) ||
	    !EXPECT(symlink("..data/stockade.yaml", vis) == 0))
		goto done;
	/* A ..data_tmp left by an update that failed half way, at the old one. */
	snprintf(path, sizeof(path), "%s/..data_tmp", fx->dir);
	if (!EXPECT(symlink(hidden[0], path) == 0))
		goto done;
	if (!EXPECT(load1(fx, fx->dir) == 0) || !expect_diags(&fx->d, NULL, 0) ||
	    !EXPECT(fx->set.n == 1))
		goto done;
	EXPECT_STR(fx->set.v[0]->name, "cm");
	EXPECT_STR(fx->set.v[0]->file, vis);
	EXPECT(fx->set.v[0]->hash == policy__hash(doc, sizeof(doc) - 1));
done:
	unlink(vis);
	snprintf(path, sizeof(path), "%s/..data", fx->dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/..data_tmp", fx->dir);
	unlink(path);
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s/stockade.yaml", fx->dir, hidden[i]);
		unlink(path);
		snprintf(path, sizeof(path), "%s/%s", fx->dir, hidden[i]);
		rmdir(path);
	}
	DONE();
}

/* The content hash (FNV-1a 64): known vectors, and what the loader keeps. */
static void test_set_hash(void **state)
{
	static const char *const files[] = {
		"a.yaml", "name: a\ncgroups: [/a]\n",
		NULL,
	};
	static const char doc[] = "name: a\ncgroups: [/a]\n";
	struct fx *fx = *state;

	EXPECT(policy__hash("", 0) == 0xcbf29ce484222325ULL);
	EXPECT(policy__hash("a", 1) == 0xaf63dc4c8601ec8cULL);
	EXPECT(policy__hash("foobar", 6) == 0x85944171f73967e8ULL);
	if (!write_files(fx, files) || !EXPECT(load1(fx, fx->dir) == 0) ||
	    !EXPECT(fx->set.n == 1))
		goto done;
	EXPECT(fx->set.v[0]->hash == policy__hash(doc, sizeof(doc) - 1));
done:
	DONE();
}

static void test_set_conflicts(void **state)
{
	static const char *const files[] = {
		"a.yaml", "name: x\ncgroups: [/s/*, /a]\n",
		"b.yaml", "name: x\ncgroups: [/b]\n",
		"c.yaml", "name: c\ncgroups:\n  - /c\n  - /s/*\n",
		NULL,
	};
	struct fx *fx = *state;
	char want[2][512];
	const char *const wantp[] = { want[0], want[1] };

	snprintf(want[0], sizeof(want[0]),
		 "%s/b.yaml:1:7: name: policy 'x' is already defined in %s/a.yaml:1:7; policy names must be unique",
		 fx->dir, fx->dir);
	snprintf(want[1], sizeof(want[1]),
		 "%s/c.yaml:4:5: cgroups[1]: selector '/s/*' is claimed by both 'c' and 'x' (%s/a.yaml:2:11); give each selector to one policy",
		 fx->dir, fx->dir);
	if (write_files(fx, files)) {
		EXPECT(load1(fx, fx->dir) == -EINVAL);
		EXPECT(fx->set.n == 0 && fx->set.v == NULL);
		expect_diags(&fx->d, wantp, 2);
	}
	DONE();
}

/* One bad file among good ones: nothing is returned, every file is read. */
static void test_set_all_or_nothing(void **state)
{
	static const char *const files[] = {
		"good.yaml", "name: good\ncgroups: [/g]\n",
		"bad.yaml", "name: bad\ncgroups: [/b]\nmode: x\n",
		NULL,
	};
	struct fx *fx = *state;
	const char *paths[] = { fx->files[0], fx->files[1], "/nonexistent/p.yaml" };
	char want[512];
	const char *const wantp[] = {
		want, "/nonexistent/p.yaml: cannot load: No such file or directory",
	};

	if (write_files(fx, files)) {
		snprintf(want, sizeof(want),
			 "%s:3:7: mode: expected enforce or audit, got 'x'",
			 fx->files[1]);
		EXPECT(policy_set__load(paths, 3, &fx->set, &fx->d) == -EINVAL);
		EXPECT(fx->set.n == 0 && fx->set.v == NULL);
		expect_diags(&fx->d, wantp, 2);
	}
	DONE();
}

static void test_set_empty_dir(void **state)
{
	static const char *const files[] = { "x.txt", "", NULL };
	struct fx *fx = *state;
	char want[256];
	const char *const wantp[] = {
		want, "policy: no policy path given; name a policy file or a directory of them",
	};

	snprintf(want, sizeof(want),
		 "%s: no policy files (*.yaml, *.yml) in this directory", fx->dir);
	if (write_files(fx, files)) {
		EXPECT(load1(fx, fx->dir) == -EINVAL);
		EXPECT(policy_set__load(NULL, 0, &fx->set, &fx->d) == -EINVAL);
		EXPECT(fx->set.n == 0);
		expect_diags(&fx->d, wantp, 2);
	}
	DONE();
}

/* The shipped example is what users copy: it must load as documented. */
static void test_example_file(void **state)
{
	static const char path[] = "policy/examples/model-code.yaml";
	static const struct policy_ports ports0[] = { { 8080, 8080 }, { 9000, 9100 } };
	static const struct policy_ports ports1[] = { { 8080, 8080 } };
	static const char *const rd[] = { "/usr", "/lib", "/lib64", "/bin",
					  "/etc", "/task" };
	static const char *const wr[] = { "/task/out", "/tmp/task" };
	static const char *const dn[] = { "/task/.git/hooks" };
	struct fx *fx = *state;
	const struct policy *p;

	if (access(path, R_OK) != 0) {
		print_message("skip: %s not found; run from the repository root\n",
			      path);
		skip();
	}
	if (!EXPECT(load1(fx, path) == 0) || !expect_diags(&fx->d, NULL, 0) ||
	    !EXPECT(fx->set.n == 1))
		goto done;
	p = fx->set.v[0];
	EXPECT_STR(p->name, "model-code");
	EXPECT_STR(p->category, "model-generated-code");
	EXPECT(p->mode == POLICY_ENFORCE);
	EXPECT(p->n_cgroups == 1 && strcmp(p->cgroups[0], "/stockade-demo") == 0);
	EXPECT(!p->net.default_allow && !p->net.raw_sockets && !p->net.icmp);
	EXPECT(p->net.n_overrides == 0);
	if (!EXPECT(p->net.n_allow == 2))
		goto done;
	EXPECT_STR(cidr_str(&p->net.allow[0].cidr), "127.0.0.1/32");
	EXPECT(p->net.allow[0].proto == NET_PROTO_TCP);
	expect_ports(&p->net.allow[0], ports0, 2);
	EXPECT_STR(cidr_str(&p->net.allow[1].cidr), "::1/128");
	EXPECT(p->net.allow[1].proto == NET_PROTO_TCP);
	expect_ports(&p->net.allow[1], ports1, 1);
	EXPECT(p->net.n_unix_allow == 0);
	EXPECT(p->files.has_read && p->files.has_write);
	expect_paths(p->files.read, p->files.n_read, rd, 6);
	expect_paths(p->files.write, p->files.n_write, wr, 2);
	expect_paths(p->files.deny, p->files.n_deny, dn, 1);
	EXPECT(p->files.n_overrides == 0);
	EXPECT(!p->namespaces.user);
	EXPECT(p->limits.has_cpu && p->limits.cpu_milli == 1000);
	EXPECT(p->limits.has_memory && p->limits.memory == 256 << 20);
	EXPECT(!p->limits.has_memory_swap);
	EXPECT(p->limits.has_pids && p->limits.pids == 128);
	EXPECT(p->limits.has_runtime && p->limits.runtime_ms == 600000);
done:
	DONE();
}

int main(void)
{
	/* Not static: the BAD() cases point at compound literals in this frame. */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cidr_parse_str),
		cmocka_unit_test(test_cidr_invalid),
		cmocka_unit_test(test_cidr_relations),
		cmocka_unit_test(test_builtin_endpoints),
		FX(test_full_document),
		FX(test_defaults),
		FX(test_overrides_cover),
		FX(test_listen_netlink),
		FX(test_confined_document),
		FX(test_files_defaults),
		FX(test_files_templates),
		FX(test_path_forms),
		FX(test_capabilities),
		FX(test_exec_forms),
		cmocka_unit_test(test_builtin_paths),
		FX(test_limits_units),
		FX(test_all_diagnostics),
		FX(test_too_big),
		FX(test_count_limits),
		FX(test_diag_one_line),
		FX_DIR(test_set_dir_order),
		FX_DIR(test_set_configmap),
		FX_DIR(test_set_hash),
		FX_DIR(test_set_conflicts),
		FX_DIR(test_set_all_or_nothing),
		FX_DIR(test_set_empty_dir),
		FX(test_example_file),

		/* structure */
		BAD(empty_file, "", "t.yaml:1:1: document: empty file; expected a policy mapping with name and cgroups"),
		BAD(comments_only, "# nothing\n", "t.yaml:2:1: document: empty file; expected a policy mapping with name and cgroups"),
		BAD(empty_document, "---\n", "t.yaml:2:1: document: empty document; expected a policy mapping with name and cgroups"),
		BAD(two_documents, OK_HEAD "---\n" OK_HEAD,
		    "t.yaml:3:1: document: a second document; a policy file holds exactly one policy, split it into two files"),
		BAD(root_sequence, "- name: t\n", "t.yaml:1:1: document: expected a mapping, got a sequence"),
		BAD(syntax_error, "name: t\ncgroups: [/s\n",
		    "t.yaml:3:1: yaml: did not find expected ',' or ']' (while parsing a flow sequence at line 2, column 10)"),
		BAD(syntax_indent, "name: t\n  cgroups: [/s]\n",
		    "t.yaml:2:10: yaml: mapping values are not allowed in this context"),
		BAD(bad_utf8, "name: t\ncgroups: [/s]\ncategory: \xff\n",
		    "t.yaml:3:11: yaml: invalid leading UTF-8 octet"),
		BAD(duplicate_key, "name: t\ncgroups: [/s]\nname: u\n",
		    "t.yaml:3:1: name: duplicate key; first given at line 1, column 1"),
		BAD(alias, "name: &n t\ncgroups: [/s]\ncategory: *n\n",
		    "t.yaml:3:11: category: aliases (*n) are not supported; write the value out"),
		BAD(tag, OK_HEAD "mode: !!str enforce\n",
		    "t.yaml:3:7: mode: YAML tags (tag:yaml.org,2002:str) are not supported; remove the tag"),
		BAD(too_deep, OK_HEAD "category: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n",
		    "t.yaml:3:42: yaml: nested deeper than 32 levels; a policy needs at most 5"),
		BAD(complex_key, OK_HEAD "? [a]\n: 1\n",
		    "t.yaml:3:3: document: expected a string key, got a sequence"),

		/* unknown keys and wrong types */
		BAD(unknown_top, OK_HEAD "nmae: t\n", "t.yaml:3:1: nmae: unknown key 'nmae'; expected one of: name, category, mode, cgroups, network, files, namespaces, limits, capabilities, perf, userfaultfd, setup, exec, containers, pods, images"),
		BAD(unknown_network, OK_HEAD "network:\n  allwo: []\n",
		    "t.yaml:4:3: network.allwo: unknown key 'allwo'; expected one of: default, allow, raw_sockets, icmp, overrides, unix_allow, listen, netlink"),
		BAD(unknown_rule, RULE("cidr: 10.0.0.0/8, port: 80"),
		    "t.yaml:5:26: network.allow[0].port: unknown key 'port'; expected one of: cidr, ports, proto, reason"),
		BAD(network_sequence, OK_HEAD "network: [a]\n", "t.yaml:3:10: network: expected a mapping, got a sequence"),
		BAD(network_null, OK_HEAD "network:\n", "t.yaml:3:9: network: expected a mapping, got null"),
		BAD(cgroups_scalar, "name: t\ncgroups: /s\n", "t.yaml:2:10: cgroups: expected a sequence, got '/s'"),
		BAD(allow_mapping, OK_HEAD "network:\n  allow: {cidr: 10.0.0.0/8}\n",
		    "t.yaml:4:10: network.allow: expected a sequence, got a mapping"),
		BAD(rule_scalar, OK_HEAD "network:\n  allow: [10.0.0.0/8]\n",
		    "t.yaml:4:11: network.allow[0]: expected a mapping, got '10.0.0.0/8'"),
		BAD(files_null, OK_HEAD "files:\n", "t.yaml:3:7: files: expected a mapping, got null"),
		BAD(limits_sequence, OK_HEAD "limits: []\n", "t.yaml:3:9: limits: expected a mapping, got a sequence"),

		/* name, mode, category */
		BAD(missing_name, "cgroups: [/s]\n", "t.yaml:1:1: name: required key is missing"),
		BAD(name_chars, "name: Model_Code\ncgroups: [/s]\n",
		    "t.yaml:1:7: name: 'Model_Code' has the character 'M'; use only a-z, 0-9 and '-'"),
		BAD(name_space, "name: \"a b\"\ncgroups: [/s]\n",
		    "t.yaml:1:7: name: \"a b\" has the character ' '; use only a-z, 0-9 and '-'"),
		BAD(name_control, "name: \"a\\tb\"\ncgroups: [/s]\n",
		    "t.yaml:1:7: name: \"a\\x09b\" has the control character \\x09; use only a-z, 0-9 and '-'"),
		BAD(name_utf8, "name: caf\xc3\xa9\ncgroups: [/s]\n",
		    "t.yaml:1:7: name: 'caf\xc3\xa9' has a non-ASCII character; use only a-z, 0-9 and '-'"),
		BAD(name_too_long, "name: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\ncgroups: [/s]\n",
		    "t.yaml:1:7: name: 64 characters; expected 1-63 characters of a-z, 0-9 and '-'"),
		BAD(name_empty, "name: \"\"\ncgroups: [/s]\n",
		    "t.yaml:1:7: name: 0 characters; expected 1-63 characters of a-z, 0-9 and '-'"),
		BAD(name_null, "name: ~\ncgroups: [/s]\n", "t.yaml:1:7: name: expected a string, got null"),
		BAD(name_nul, "name: \"t\\0x\"\ncgroups: [/s]\n", "t.yaml:1:7: name: contains a NUL character; remove it"),
		BAD(mode, OK_HEAD "mode: enforcing\n", "t.yaml:3:7: mode: expected enforce or audit, got 'enforcing'"),
		BAD(category_map, OK_HEAD "category: {a: b}\n", "t.yaml:3:11: category: expected a string, got a mapping"),

		/* cgroups */
		BAD(missing_cgroups, "name: t\n", "t.yaml:1:1: cgroups: required key is missing: a policy selects with cgroups, containers, pods or images (at least one)"),
		BAD(empty_cgroups, "name: t\ncgroups: []\n",
		    "t.yaml:2:10: cgroups: empty list; expected at least one cgroup selector such as /sandboxes/*"),
		BAD(cgroup_relative, "name: t\ncgroups: [sandboxes/*]\n",
		    "t.yaml:2:11: cgroups[0]: 'sandboxes/*' must start with '/' (a path below the cgroup2 mount, e.g. /sandboxes/*)"),
		BAD(cgroup_dotdot, "name: t\ncgroups: [/a/../b]\n",
		    "t.yaml:2:11: cgroups[0]: '/a/../b' has a '.' or '..' component; name the cgroup by its own path"),
		BAD(cgroup_root, "name: t\ncgroups: [/]\n",
		    "t.yaml:2:11: cgroups[0]: '/' is the root cgroup; confining every process on the host is refused, name a child cgroup"),
		BAD(cgroup_empty_component, "name: t\ncgroups: [/a//b]\n",
		    "t.yaml:2:11: cgroups[0]: '/a//b' has an empty component ('//'); write a single '/'"),
		BAD(cgroup_trailing_slash, "name: t\ncgroups: [/a/]\n",
		    "t.yaml:2:11: cgroups[0]: '/a/' ends in '/'; remove the trailing '/'"),
		BAD(cgroup_twice, "name: t\ncgroups: [/a, /a]\n",
		    "t.yaml:2:15: cgroups[1]: '/a' is listed twice; first at line 2, column 11"),

		/* network scalars */
		BAD(default_value, OK_HEAD "network: {default: reject}\n",
		    "t.yaml:3:20: network.default: expected deny or allow, got 'reject'"),
		BAD(bool_yes, OK_HEAD "network: {icmp: yes}\n",
		    "t.yaml:3:17: network.icmp: expected true or false, got 'yes'"),
		BAD(bool_quoted, OK_HEAD "network: {raw_sockets: \"false\"}\n",
		    "t.yaml:3:24: network.raw_sockets: expected true or false without quotes, got \"false\""),
		BAD(bool_null, OK_HEAD "network:\n  icmp:\n",
		    "t.yaml:4:8: network.icmp: expected true or false, got null"),

		/* allow rules */
		BAD(missing_cidr, RULE("proto: tcp"), "t.yaml:5:7: network.allow[0].cidr: required key is missing"),
		BAD(bad_cidr, RULE("cidr: 10.0.0.256"),
		    "t.yaml:5:14: network.allow[0].cidr: '10.0.0.256' is not a CIDR; expected an IPv4 or IPv6 address with an optional /prefix, e.g. 10.0.0.0/8 or fd00::/8"),
		BAD(cidr_prefix, RULE("cidr: 10.0.0.0/33"),
		    "t.yaml:5:14: network.allow[0].cidr: '10.0.0.0/33': prefix too long; expected /0 to /32 for IPv4"),
		BAD(host_bits, RULE("cidr: 10.0.0.1/8"),
		    "t.yaml:5:14: network.allow[0].cidr: '10.0.0.1/8': host bits set; did you mean 10.0.0.0/8?"),
		BAD(host_bits_v6, RULE("cidr: \"fd00::1/8\""),
		    "t.yaml:5:14: network.allow[0].cidr: \"fd00::1/8\": host bits set; did you mean fd00::/8?"),
		BAD(host_bits_mapped, RULE("cidr: \"::ffff:10.0.0.1/104\""),
		    "t.yaml:5:14: network.allow[0].cidr: \"::ffff:10.0.0.1/104\": host bits set; did you mean ::ffff:10.0.0.0/104?"),
		BAD(port_zero, RULE("cidr: 10.0.0.0/8, ports: [0]"),
		    "t.yaml:5:34: network.allow[0].ports[0]: port 0 out of range; expected 1-65535"),
		BAD(port_65536, RULE("cidr: 10.0.0.0/8, ports: [80, 65536]"),
		    "t.yaml:5:38: network.allow[0].ports[1]: port 65536 out of range; expected 1-65535"),
		BAD(port_huge, RULE("cidr: 10.0.0.0/8, ports: [\"1-123456789012\"]"),
		    "t.yaml:5:34: network.allow[0].ports[0]: port 1234567890... out of range; expected 1-65535"),
		BAD(port_reversed, RULE("cidr: 10.0.0.0/8, ports: [\"9100-9000\"]"),
		    "t.yaml:5:34: network.allow[0].ports[0]: range 9100-9000 is reversed; write 9000-9100"),
		BAD(port_word, RULE("cidr: 10.0.0.0/8, ports: [http]"),
		    "t.yaml:5:34: network.allow[0].ports[0]: expected a port 1-65535 or a range like \"9000-9100\", got 'http'"),
		BAD(port_leading_zero, RULE("cidr: 10.0.0.0/8, ports: [080]"),
		    "t.yaml:5:34: network.allow[0].ports[0]: expected a port 1-65535 or a range like \"9000-9100\", got '080'"),
		BAD(port_negative, RULE("cidr: 10.0.0.0/8, ports: [-1]"),
		    "t.yaml:5:34: network.allow[0].ports[0]: expected a port 1-65535 or a range like \"9000-9100\", got '-1'"),
		BAD(port_open_range, RULE("cidr: 10.0.0.0/8, ports: [\"80-\"]"),
		    "t.yaml:5:34: network.allow[0].ports[0]: expected a port 1-65535 or a range like \"9000-9100\", got \"80-\""),
		BAD(ports_empty, RULE("cidr: 10.0.0.0/8, ports: []"),
		    "t.yaml:5:33: network.allow[0].ports: empty list; omit ports to allow every port"),
		BAD(ports_scalar, RULE("cidr: 10.0.0.0/8, ports: 80"),
		    "t.yaml:5:33: network.allow[0].ports: expected a sequence, got '80'"),
		BAD(too_many_ports, RULE("cidr: 10.0.0.0/8, ports: [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]"),
		    "t.yaml:5:33: network.allow[0].ports: 17 entries; at most 16 are supported"),
		BAD(proto, RULE("cidr: 10.0.0.0/8, proto: icmp"),
		    "t.yaml:5:33: network.allow[0].proto: expected tcp, udp or any, got 'icmp'"),

		/* metadata endpoints */
		BAD(meta_any4, RULE("cidr: 0.0.0.0/0") "  overrides:\n    - {endpoint: 169.254.169.254, reason: imds}\n",
		    "t.yaml:5:14: network.allow[0].cidr: 0.0.0.0/0 covers the metadata endpoints 169.254.0.0/16, 100.100.100.200/32, 168.63.129.16/32, 192.0.0.192/32; narrow the rule or add them to network.overrides with a reason"),
		BAD(meta_linklocal, RULE("cidr: 169.254.0.0/16") "  overrides:\n    - {endpoint: 169.254.169.254, reason: imds}\n",
		    "t.yaml:5:14: network.allow[0].cidr: 169.254.0.0/16 covers the metadata endpoint 169.254.0.0/16; narrow the rule or add it to network.overrides with a reason"),
		BAD(meta_host, RULE("cidr: 169.254.170.2"),
		    "t.yaml:5:14: network.allow[0].cidr: 169.254.170.2/32 covers the metadata endpoint 169.254.0.0/16; narrow the rule or add it to network.overrides with a reason"),
		BAD(meta_any6, RULE("cidr: \"::/0\""),
		    "t.yaml:5:14: network.allow[0].cidr: ::/0 covers the metadata endpoints fd00:ec2::254/128, fd00:ec2::23/128, fd20:ce::254/128, fe80::a9fe:a9fe/128, fd00:c1::a9fe:a9fe/128, fd00:a9fe:a9fe::1/128; narrow the rule or add them to network.overrides with a reason"),
		BAD(meta_mapped, RULE("cidr: \"::ffff:169.254.0.0/112\""),
		    "t.yaml:5:14: network.allow[0].cidr: 169.254.0.0/16 covers the metadata endpoint 169.254.0.0/16; narrow the rule or add it to network.overrides with a reason"),
		BAD(meta_nat64, RULE("cidr: \"64:ff9b::a9fe:a9fe\""),
		    "t.yaml:5:14: network.allow[0].cidr: 169.254.169.254/32 covers the metadata endpoint 169.254.0.0/16; narrow the rule or add it to network.overrides with a reason"),
		BAD(meta_6to4, RULE("cidr: \"2002:a9fe:a9fe::/48\""),
		    "t.yaml:5:14: network.allow[0].cidr: 169.254.169.254/32 covers the metadata endpoint 169.254.0.0/16; narrow the rule or add it to network.overrides with a reason"),
		BAD(meta_azure, RULE("cidr: 168.63.0.0/16, ports: [53], proto: udp"),
		    "t.yaml:5:14: network.allow[0].cidr: 168.63.0.0/16 covers the metadata endpoint 168.63.129.16/32; narrow the rule or add it to network.overrides with a reason"),

		/* overrides */
		BAD(override_not_builtin, OK_HEAD "network:\n  overrides:\n    - {endpoint: 8.8.8.8, reason: dns}\n",
		    "t.yaml:5:18: network.overrides[0].endpoint: 8.8.8.8/32 is not a built-in metadata endpoint; expected one of (or an address inside): 169.254.0.0/16, fd00:ec2::254/128, fd00:ec2::23/128, fd20:ce::254/128, fe80::a9fe:a9fe/128, fd00:c1::a9fe:a9fe/128, fd00:a9fe:a9fe::1/128, 100.100.100.200/32, 168.63.129.16/32, 192.0.0.192/32"),
		BAD(override_too_wide, OK_HEAD "network:\n  overrides:\n    - {endpoint: 169.0.0.0/8, reason: all}\n",
		    "t.yaml:5:18: network.overrides[0].endpoint: 169.0.0.0/8 is not a built-in metadata endpoint; expected one of (or an address inside): 169.254.0.0/16, fd00:ec2::254/128, fd00:ec2::23/128, fd20:ce::254/128, fe80::a9fe:a9fe/128, fd00:c1::a9fe:a9fe/128, fd00:a9fe:a9fe::1/128, 100.100.100.200/32, 168.63.129.16/32, 192.0.0.192/32"),
		BAD(override_no_reason, OK_HEAD "network:\n  overrides:\n    - endpoint: 169.254.169.254\n",
		    "t.yaml:5:7: network.overrides[0].reason: required key is missing"),
		BAD(override_blank_reason, OK_HEAD "network:\n  overrides:\n    - {endpoint: 169.254.169.254, reason: \"  \"}\n",
		    "t.yaml:5:43: network.overrides[0].reason: empty reason; say why this policy needs the endpoint"),
		BAD(overrides_mapping, OK_HEAD "network:\n  overrides: {endpoint: 169.254.169.254}\n",
		    "t.yaml:4:14: network.overrides: expected a sequence, got a mapping"),

		/* files */
		BAD(files_unknown, FILES("reed: [/etc]"),
		    "t.yaml:3:9: files.reed: unknown key 'reed'; expected one of: read, write, deny, overrides, preexisting"),
		BAD(files_preexisting_word, FILES("preexisting: close"),
		    "t.yaml:3:22: files.preexisting: expected report or kill, got 'close'"),
		BAD(files_read_scalar, FILES("read: /etc"),
		    "t.yaml:3:15: files.read: expected a sequence, got '/etc'"),
		BAD(files_read_null, OK_HEAD "files:\n  read:\n",
		    "t.yaml:4:8: files.read: expected a sequence, got null"),
		BAD(files_read_relative, FILES("read: [etc]"),
		    "t.yaml:3:16: files.read[0]: 'etc' is not an absolute path; write it from '/'"),
		BAD(files_read_dotdot, FILES("read: [/task/../etc]"),
		    "t.yaml:3:16: files.read[0]: '/task/../etc'" DOTS),
		BAD(files_write_dot, FILES("write: [/task/./out]"),
		    "t.yaml:3:17: files.write[0]: '/task/./out'" DOTS),
		BAD(files_write_slashes, FILES("write: [/task//out]"),
		    "t.yaml:3:17: files.write[0]: '/task//out' has an empty component ('//'); write a single '/'"),
		BAD(files_write_trailing, FILES("write: [/usr, /task/out/]"),
		    "t.yaml:3:23: files.write[1]: '/task/out/' ends in '/'; remove the trailing '/'"),
		BAD(files_read_twice, FILES("read: [/etc, /usr, /etc]"),
		    "t.yaml:3:28: files.read[2]: '/etc' is listed twice; first at line 3, column 16"),
		BAD(files_read_control, FILES("read: [\"/et\\tc\"]"),
		    "t.yaml:3:16: files.read[0]: \"/et\\x09c\" has the control character \\x09; remove it"),
		BAD(files_read_nul, FILES("read: [\"/et\\0c\"]"),
		    "t.yaml:3:16: files.read[0]: contains a NUL character; remove it"),
		BAD(files_read_too_long, FILES("read: [\"/" A250 "a\"]"),
		    "t.yaml:3:16: files.read[0]: \"/" A16 A16 "aaaaaaaaaaaaaaa...\" is 252 bytes; a file rule path may have at most 251"),
		BAD(files_read_mapping, FILES("read: [{a: b}]"),
		    "t.yaml:3:16: files.read[0]: expected a string, got a mapping"),
		BAD(files_write_bad_placeholder, FILES("write: [\"/srv/{cgroups}\"]"),
		    "t.yaml:3:17: files.write[0]: \"/srv/{cgroups}\" has a '{' that starts no placeholder; the placeholders are {cgroup} and {cgroup_path}"),
		BAD(files_deny_placeholder, FILES("deny: [\"/srv/{cgroup}\"]"),
		    "t.yaml:3:16: files.deny[0]: \"/srv/{cgroup}\" has a placeholder; {cgroup} and {cgroup_path} are expanded only in files.read and files.write"),
		BAD(files_write_tmpl_dots, FILES("write: [\"/srv/{cgroup}/../x\"]"),
		    "t.yaml:3:17: files.write[0]: \"/srv/{cgroup}/../x\"" DOTS),
		BAD(files_write_tmpl_long, FILES("write: [\"/srv/{cgroup}/" A64 A64 A64 A16 A16 "aaaaaaaaaaaaa\"]"),
		    "t.yaml:3:17: files.write[0]: '/srv/{cgroup}/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...' is 244 bytes with each placeholder at its shortest; in a policy with {cgroup} or {cgroup_path} a path may have at most 243 (its rules are keyed per cgroup too)"),
		BAD(files_deny_long_in_tmpl, "name: t\ncgroups: [/t]\nfiles: {write: [\"/srv/{cgroup}\"], deny: [\"/" A250 "\"]}\n",
		    "t.yaml:3:42: files.deny[0]: '/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...' is 251 bytes with each placeholder at its shortest; in a policy with {cgroup} or {cgroup_path} a path may have at most 243 (its rules are keyed per cgroup too)"),
		BAD(files_write_tmpl_top, FILES("write: [\"/{cgroup}\"]"),
		    "t.yaml:3:17: files.write[0]: '/{cgroup}' has a placeholder in its first component; put it below a folder of its own: /srv/jobs/{cgroup}"),
		BAD(files_write_flow_tmpl, FILES("write: [/srv/{cgroup}/out]"),
		    "t.yaml:3:22: yaml: did not find expected ',' or ']' (while parsing a flow sequence at line 3, column 16); a path with {cgroup} or {cgroup_path} in a [...] list must be quoted, \"/srv/jobs/{cgroup}/out\", or listed one '- ' item per line"),
		BAD(files_deny_empty, FILES("deny: []"),
		    "t.yaml:3:15: files.deny: empty list; omit deny when there are no paths to deny"),
		BAD(files_deny_number, FILES("deny: [1]"),
		    "t.yaml:3:16: files.deny[0]: '1' is not an absolute path; write it from '/'"),

		/* files.overrides */
		BAD(fo_not_protected, FILES("overrides: [{path: /x, reason: r}]"),
		    "t.yaml:3:28: files.overrides[0].path: '/x'" NOT_PROTECTED),
		BAD(fo_sibling, FILES("overrides: [{path: /etc/shadowx, reason: r}]"),
		    "t.yaml:3:28: files.overrides[0].path: '/etc/shadowx'" NOT_PROTECTED),
		BAD(fo_parent, FILES("overrides: [{path: /etc, reason: r}]"),
		    "t.yaml:3:28: files.overrides[0].path: '/etc'" NOT_PROTECTED),
		BAD(fo_home_shallow, FILES("overrides: [{path: /home/.ssh, reason: r}]"),
		    "t.yaml:3:28: files.overrides[0].path: '/home/.ssh'" NOT_PROTECTED),
		BAD(fo_home_deep, FILES("overrides: [{path: /home/a/b/.ssh, reason: r}]"),
		    "t.yaml:3:28: files.overrides[0].path: '/home/a/b/.ssh'" NOT_PROTECTED),
		BAD(fo_dotdot, FILES("overrides: [{path: /etc/shadow/.., reason: r}]"),
		    "t.yaml:3:28: files.overrides[0].path: '/etc/shadow/..'" DOTS),
		BAD(fo_no_reason, OK_HEAD "files:\n  overrides:\n    - path: /etc/shadow\n",
		    "t.yaml:5:7: files.overrides[0].reason: required key is missing"),
		BAD(fo_no_path, FILES("overrides: [{reason: r}]"),
		    "t.yaml:3:21: files.overrides[0].path: required key is missing"),
		BAD(fo_blank_reason, FILES("overrides: [{path: /etc/shadow, reason: \" \"}]"),
		    "t.yaml:3:49: files.overrides[0].reason: empty reason; say why this policy needs the path"),
		BAD(fo_twice, OK_HEAD "files:\n  overrides:\n    - {path: /dev/mem, reason: a}\n    - {path: /dev/mem, reason: b}\n",
		    "t.yaml:6:14: files.overrides[1].path: '/dev/mem' is listed twice; first at line 5, column 7"),
		BAD(fo_unknown, FILES("overrides: [{path: /dev/mem, reason: a, why: b}]"),
		    "t.yaml:3:49: files.overrides[0].why: unknown key 'why'; expected one of: path, reason"),
		BAD(fo_empty, FILES("overrides: []"),
		    "t.yaml:3:20: files.overrides: empty list; omit overrides when there are none"),

		/* network.unix_allow */
		BAD(unix_relative, UNIX("run/x.sock"),
		    "t.yaml:3:24: network.unix_allow[0]: 'run/x.sock' is neither an absolute path nor an abstract socket name; write /path/to.sock or @name"),
		BAD(unix_empty_abstract, UNIX("\"@\""),
		    "t.yaml:3:24: network.unix_allow[0]: \"@\" is an empty abstract socket name; write @name"),
		BAD(unix_dotdot, UNIX("/run/../x.sock"),
		    "t.yaml:3:24: network.unix_allow[0]: '/run/../x.sock'" DOTS),
		BAD(unix_too_long, UNIX("\"/" A106 "a\""),
		    "t.yaml:3:24: network.unix_allow[0]: \"/" A16 A16 "aaaaaaaaaaaaaaa...\" is 108 bytes; a unix socket address (sun_path) may have at most 107"),
		BAD(unix_abstract_too_long, UNIX("\"@" A106 "a\""),
		    "t.yaml:3:24: network.unix_allow[0]: \"@" A16 A16 "aaaaaaaaaaaaaaa...\" is 108 bytes; a unix socket address (sun_path) may have at most 107"),
		BAD(unix_twice, UNIX("\"@a\", /x.sock, \"@a\""),
		    "t.yaml:3:39: network.unix_allow[2]: \"@a\" is listed twice; first at line 3, column 24"),
		BAD(unix_empty, UNIX(""),
		    "t.yaml:3:23: network.unix_allow: empty list; omit unix_allow when no socket outside the sandbox is needed"),

		/* network.listen, network.netlink */
		BAD(listen_no_cidr, LISTEN("ports: [80]"),
		    "t.yaml:5:7: network.listen[0].cidr: required key is missing"),
		BAD(listen_port_zero, LISTEN("cidr: 127.0.0.1, ports: [0]"),
		    "t.yaml:5:33: network.listen[0].ports[0]: port 0 out of range; expected 1-65535"),
		BAD(listen_proto, LISTEN("cidr: 127.0.0.1, proto: sctp"),
		    "t.yaml:5:32: network.listen[0].proto: expected tcp, udp or any, got 'sctp'"),
		BAD(listen_metadata, LISTEN("cidr: 0.0.0.0/0"),
		    "t.yaml:5:14: network.listen[0].cidr: 0.0.0.0/0 covers the metadata endpoints 169.254.0.0/16, 100.100.100.200/32, 168.63.129.16/32, 192.0.0.192/32; narrow the rule or add them to network.overrides with a reason"),
		BAD(listen_empty, OK_HEAD "network: {listen: []}\n",
		    "t.yaml:3:19: network.listen: empty list; omit listen when the sandbox serves nothing"),
		BAD(netlink_unknown, NETLINK("route, nftables"),
		    "t.yaml:3:28: network.netlink[1]: 'nftables' is not a netlink family; expected one of route, usersock, firewall, sock_diag, nflog, xfrm, selinux, iscsi, audit, fib_lookup, connector, netfilter, ip6_fw, dnrtmsg, kobject_uevent, generic, scsitransport, ecryptfs, rdma, crypto or smc"),
		BAD(netlink_twice, NETLINK("generic, route, generic"),
		    "t.yaml:3:37: network.netlink[2]: 'generic' is listed twice; remove one"),
		BAD(netlink_scalar, OK_HEAD "network: {netlink: route}\n",
		    "t.yaml:3:20: network.netlink: expected a sequence, got 'route'"),
		BAD(netlink_number, NETLINK("0"),
		    "t.yaml:3:21: network.netlink[0]: '0' is not a netlink family; expected one of route, usersock, firewall, sock_diag, nflog, xfrm, selinux, iscsi, audit, fib_lookup, connector, netfilter, ip6_fw, dnrtmsg, kobject_uevent, generic, scsitransport, ecryptfs, rdma, crypto or smc"),

		/* namespaces */
		BAD(ns_unknown, OK_HEAD "namespaces: {net: true}\n",
		    "t.yaml:3:14: namespaces.net: unknown key 'net'; expected one of: user"),
		BAD(ns_user_yes, OK_HEAD "namespaces: {user: yes}\n",
		    "t.yaml:3:20: namespaces.user: expected true or false, got 'yes'"),
		BAD(ns_scalar, OK_HEAD "namespaces: true\n",
		    "t.yaml:3:13: namespaces: expected a mapping, got 'true'"),

		/* capabilities, perf, userfaultfd */
		BAD(caps_unknown, OK_HEAD "capabilities: [CHOWN, CAP_SYS_FOO]\n",
		    "t.yaml:3:23: capabilities[1]: unknown capability 'CAP_SYS_FOO'; expected a name from capabilities(7) such as CHOWN or CAP_NET_BIND_SERVICE"),
		BAD(caps_twice, OK_HEAD "capabilities: [kill, CAP_CHOWN, cap_kill]\n",
		    "t.yaml:3:33: capabilities[2]: 'cap_kill' is listed twice; first at line 3, column 16"),
		BAD(caps_scalar, OK_HEAD "capabilities: CHOWN\n",
		    "t.yaml:3:15: capabilities: expected a sequence, got 'CHOWN'"),
		BAD(caps_nested, OK_HEAD "capabilities: [[CHOWN]]\n",
		    "t.yaml:3:16: capabilities[0]: expected a string, got a sequence"),
		BAD(perf_word, OK_HEAD "perf: maybe\n",
		    "t.yaml:3:7: perf: expected deny or allow, got 'maybe'"),
		BAD(uffd_word, OK_HEAD "userfaultfd: yes\n",
		    "t.yaml:3:14: userfaultfd: expected true or false, got 'yes'"),

		/* exec */
		BAD(exec_scalar, OK_HEAD "exec: /usr\n",
		    "t.yaml:3:7: exec: expected a list of paths or a mapping (paths, allow_written, anon_exec, hash), got '/usr'"),
		BAD(exec_key, OK_HEAD "exec: {allow_writen: true}\n",
		    "t.yaml:3:8: exec.allow_writen: unknown key 'allow_writen'; expected one of: paths, allow_written, anon_exec, hash"),
		BAD(exec_written_word, OK_HEAD "exec: {allow_written: yes}\n",
		    "t.yaml:3:23: exec.allow_written: expected true or false, got 'yes'"),
		BAD(exec_anon_word, OK_HEAD "exec: {anon_exec: no}\n",
		    "t.yaml:3:19: exec.anon_exec: expected allow or deny, got 'no'"),
		BAD(exec_hash_word, OK_HEAD "exec: {hash: md5}\n",
		    "t.yaml:3:14: exec.hash: expected none or sha256, got 'md5'"),
		BAD(exec_relative, OK_HEAD "exec: [usr/bin]\n",
		    "t.yaml:3:8: exec[0]: 'usr/bin' is not an absolute path; write it from '/'"),
		BAD(exec_paths_dots, OK_HEAD "exec: {paths: [/opt/../bin]}\n",
		    "t.yaml:3:16: exec.paths[0]: '/opt/../bin'" DOTS),

		/* setup */
		BAD(setup_word, OK_HEAD "setup: {pass: yes}\n",
		    "t.yaml:3:15: setup.pass: expected auto, on or off, got 'yes'"),
		BAD(setup_key, OK_HEAD "setup: {deadlin: 1s}\n",
		    "t.yaml:3:9: setup.deadlin: unknown key 'deadlin'; expected one of: pass, deadline"),
		BAD(setup_long, OK_HEAD "setup: {deadline: 6m}\n",
		    "t.yaml:3:19: setup.deadline: '6m' is more than 5 minutes; a setup pass that long is a window"),
		BAD(setup_zero, OK_HEAD "setup: {deadline: 0s}\n",
		    "t.yaml:3:19: setup.deadline: must be greater than 0"),
		BAD(setup_scalar, OK_HEAD "setup: on\n",
		    "t.yaml:3:8: setup: expected a mapping, got 'on'"),

		/* limits */
		BAD(limits_null, OK_HEAD "limits:\n", "t.yaml:3:8: limits: expected a mapping, got null"),
		BAD(limits_unknown, LIMITS("memroy: 1G"),
		    "t.yaml:3:10: limits.memroy: unknown key 'memroy'; expected one of: cpu, memory, memory_swap, pids, runtime"),
		BAD(cpu_zero, LIMITS("cpu: 0"), "t.yaml:3:15: limits.cpu: must be greater than 0"),
		BAD(cpu_zero_milli, LIMITS("cpu: 0m"), "t.yaml:3:15: limits.cpu: must be greater than 0"),
		BAD(cpu_negative, LIMITS("cpu: -1"), "t.yaml:3:15: limits.cpu: must be greater than 0"),
		BAD(cpu_too_fine, LIMITS("cpu: 0.0005"),
		    "t.yaml:3:15: limits.cpu: '0.0005' is finer than 1 millicore; use at most 3 decimals"),
		BAD(cpu_milli_fraction, LIMITS("cpu: 1.5m"),
		    "t.yaml:3:15: limits.cpu: '1.5m' is finer than 1 millicore; use at most 3 decimals"),
		BAD(cpu_too_many, LIMITS("cpu: 1025"),
		    "t.yaml:3:15: limits.cpu: '1025' is more than 1024 cores"),
		BAD(cpu_overflow, LIMITS("cpu: 99999999999999999999999"),
		    "t.yaml:3:15: limits.cpu: '99999999999999999999999' is more than 1024 cores"),
		BAD(cpu_word, LIMITS("cpu: one"),
		    "t.yaml:3:15: limits.cpu: 'one'" NOT_CPU),
		BAD(cpu_exponent, LIMITS("cpu: 1e3"),
		    "t.yaml:3:15: limits.cpu: '1e3'" NOT_CPU),
		BAD(cpu_bare_point, LIMITS("cpu: .5"),
		    "t.yaml:3:15: limits.cpu: '.5'" NOT_CPU),
		BAD(cpu_bool, LIMITS("cpu: true"),
		    "t.yaml:3:15: limits.cpu: 'true'" NOT_CPU),
		BAD(memory_mb, LIMITS("memory: 512MB"),
		    "t.yaml:3:18: limits.memory: '512MB'" NOT_SIZE),
		BAD(memory_lower, LIMITS("memory: 512mi"),
		    "t.yaml:3:18: limits.memory: '512mi'" NOT_SIZE),
		BAD(memory_space, LIMITS("memory: \"512 Mi\""),
		    "t.yaml:3:18: limits.memory: \"512 Mi\"" NOT_SIZE),
		BAD(memory_octal, LIMITS("memory: 0512"),
		    "t.yaml:3:18: limits.memory: '0512'" NOT_SIZE),
		BAD(memory_zero, LIMITS("memory: 0Gi"), "t.yaml:3:18: limits.memory: must be greater than 0"),
		BAD(memory_negative, LIMITS("memory: -1Gi"), "t.yaml:3:18: limits.memory: must be greater than 0"),
		BAD(memory_fraction, LIMITS("memory: 1.5"),
		    "t.yaml:3:18: limits.memory: '1.5' is not a whole number of bytes"),
		BAD(memory_overflow, LIMITS("memory: 18446744073709551616"),
		    "t.yaml:3:18: limits.memory: '18446744073709551616' is more than 2^64-1 bytes"),
		BAD(memory_overflow_unit, LIMITS("memory: 16777216Ti"),
		    "t.yaml:3:18: limits.memory: '16777216Ti' is more than 2^64-1 bytes"),
		BAD(memory_sequence, LIMITS("memory: [1]"),
		    "t.yaml:3:18: limits.memory: expected a size, got a sequence"),
		BAD(memory_null, OK_HEAD "limits:\n  memory:\n",
		    "t.yaml:4:10: limits.memory: expected a size, got null"),
		BAD(memory_nul, LIMITS("memory: \"1\\0Gi\""),
		    "t.yaml:3:18: limits.memory: \"1\\x00Gi\"" NOT_SIZE),
		BAD(swap_negative, LIMITS("memory_swap: -1"),
		    "t.yaml:3:23: limits.memory_swap: must be 0 or greater"),
		BAD(swap_unit, LIMITS("memory_swap: 1B"),
		    "t.yaml:3:23: limits.memory_swap: '1B'" NOT_SIZE),
		BAD(pids_zero, LIMITS("pids: 0"), "t.yaml:3:16: limits.pids: must be greater than 0"),
		BAD(pids_fraction, LIMITS("pids: 1.5"),
		    "t.yaml:3:16: limits.pids: '1.5'" NOT_COUNT),
		BAD(pids_unit, LIMITS("pids: 1K"),
		    "t.yaml:3:16: limits.pids: '1K'" NOT_COUNT),
		BAD(pids_too_many, LIMITS("pids: 4194305"),
		    "t.yaml:3:16: limits.pids: '4194305' is more than 4194304, the kernel's limit"),
		BAD(runtime_no_unit, LIMITS("runtime: 30"),
		    "t.yaml:3:19: limits.runtime: '30'" NOT_DURATION),
		BAD(runtime_days, LIMITS("runtime: 1d"),
		    "t.yaml:3:19: limits.runtime: '1d'" NOT_DURATION),
		BAD(runtime_dangling, LIMITS("runtime: 1h30"),
		    "t.yaml:3:19: limits.runtime: '1h30'" NOT_DURATION),
		BAD(runtime_inner_sign, LIMITS("runtime: 1h-30m"),
		    "t.yaml:3:19: limits.runtime: '1h-30m'" NOT_DURATION),
		BAD(runtime_zero, LIMITS("runtime: 0s"), "t.yaml:3:19: limits.runtime: must be greater than 0"),
		BAD(runtime_negative, LIMITS("runtime: -5m"), "t.yaml:3:19: limits.runtime: must be greater than 0"),
		BAD(runtime_fine, LIMITS("runtime: 0.5ms"),
		    "t.yaml:3:19: limits.runtime: '0.5ms' is finer than 1 millisecond"),
		BAD(runtime_too_long, LIMITS("runtime: 720h1ms"),
		    "t.yaml:3:19: limits.runtime: '720h1ms' is more than 30 days (720h)"),
		BAD(runtime_tag, LIMITS("runtime: !!str 5m"),
		    "t.yaml:3:19: limits.runtime: YAML tags (tag:yaml.org,2002:str) are not supported; remove the tag"),
		BAD(limits_duplicate, LIMITS("pids: 1, pids: 2"),
		    "t.yaml:3:19: limits.pids: duplicate key; first given at line 3, column 10"),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
