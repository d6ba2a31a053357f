// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * agent/manifest.c: the /proc parsers, secret names, the policy blob, the
 * boundary file, writable_shared_with, the verdict per point (a sandbox
 * that passes all five, and one that fails each in turn) and both
 * renderings.
 */
#include <errno.h>
#include <stdlib.h>

#include "test.h"
#include "manifest.h"
#include "policy.h"
#include "rules_check.h"

static const char status_txt[] =
	"Name:\tpython3\n"
	"Umask:\t0022\n"
	"State:\tS (sleeping)\n"
	"Uid:\t1000\t1000\t1000\t1000\n"
	"Gid:\t100\t101\t102\t103\n"
	"CapInh:\t0000000000000000\n"
	"CapPrm:\t0000000000000000\n"
	"CapEff:\t00000000a80425fb\n"
	"CapBnd:\t000001ffffffffff\n"
	"CapAmb:\t0000000000000000\n"
	"NoNewPrivs:\t1\n"
	"Seccomp:\t2\n"
	"Seccomp_filters:\t1\n";

static void test_status(void **state)
{
	struct mf_status st;

	(void)state;
	EXPECT_EQ(mf_parse_status(status_txt, sizeof(status_txt) - 1, &st), 0);
	EXPECT_STR(st.name, "python3");
	EXPECT_EQ(st.uid[0], 1000);
	EXPECT_EQ(st.gid[1], 101);
	EXPECT_EQ(st.gid[3], 103);
	EXPECT_EQ(st.cap_eff, 0xa80425fbULL);
	EXPECT_EQ(st.cap_bnd, 0x1ffffffffffULL);
	EXPECT_EQ(st.no_new_privs, 1);
	EXPECT_EQ(st.seccomp, 2);
	/* Cut before the capability lines: refused. */
	EXPECT_EQ(mf_parse_status(status_txt, 60, &st), -EINVAL);
	/* Garbage in a field: that field is not taken. */
	{ static const char g[] = "Uid:\tx\nGid:\t1 2 3 4\n";
		EXPECT_EQ(mf_parse_status(g, sizeof(g) - 1, &st), -EINVAL); }
	/* No NoNewPrivs/Seccomp (old kernel): unknown, not 0. */
	{
		static const char old[] = "Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\n"
			"CapInh:\t0\nCapPrm:\t1\nCapEff:\t1\nCapBnd:\t1\nCapAmb:\t0\n";

		EXPECT_EQ(mf_parse_status(old, sizeof(old) - 1, &st), 0);
		EXPECT_EQ(st.no_new_privs, -1);
		EXPECT_EQ(st.seccomp, -1);
	}
	DONE();
}

static void test_secret_names(void **state)
{
	static const char *const yes[] = {
		"GITHUB_TOKEN", "API_KEY", "DB_PASSWORD", "STRIPE_SECRET",
		"AWS_ACCESS_KEY_ID", "AWS_SESSION_TOKEN", "AZURE_CLIENT_SECRET",
		"GOOGLE_APPLICATION_CREDENTIALS", "token", "OPENAI_API_KEY",
		"my_secret_key", "KUBECONFIG", "AZURE_CLIENT_ID",
	};
	static const char *const no[] = {
		"PATH", "HOME", "KEYBOARD", "TOKENIZER_PATH", "AWS_REGION",
		"MONKEY", "LANG", "SECRETARY", "HF_HOME", "OPENAI_BASE_URL",
		"AWS_PROFILE", "",
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(yes); i++)
		if (!EXPECT(mf_secret_name(yes[i], strlen(yes[i]))))
			print_error("  %s should look like a secret\n", yes[i]);
	for (i = 0; i < ARRAY_SIZE(no); i++)
		if (!EXPECT(!mf_secret_name(no[i], strlen(no[i]))))
			print_error("  %s should not\n", no[i]);
	DONE();
}

static void test_environ(void **state)
{
	static const char env[] = "PATH=/usr/bin\0API_TOKEN=hunter2\0HOME=/root\0"
		"AWS_SECRET_ACCESS_KEY=abc\0API_TOKEN=again\0NOEQUALS_KEY\0=x\0"
		"LAST_SECRET=unterminated";
	char **names;
	size_t n, i;

	(void)state;
	EXPECT_EQ(mf_environ_secrets(env, sizeof(env) - 1, &names, &n), 0);
	if (EXPECT_EQ(n, 4)) {
		EXPECT_STR(names[0], "API_TOKEN");
		EXPECT_STR(names[1], "AWS_SECRET_ACCESS_KEY");
		EXPECT_STR(names[2], "NOEQUALS_KEY");
		EXPECT_STR(names[3], "LAST_SECRET");
	}
	/* Never a value. */
	for (i = 0; i < n; i++)
		EXPECT(!strchr(names[i], '=') && !strstr(names[i], "hunter2"));
	mf_strv_free(names, n);
	DONE();
}

static void test_mountinfo(void **state)
{
	static const char mi[] =
		"22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
		"23 22 0:21 / /proc rw,nosuid - proc proc rw\n"
		"24 22 8:1 /srv/ro /mnt/with\\040space ro,relatime - ext4 /dev/sda1 rw\n"
		"25 22 0:30 / /sb-ro rw master:2 - tmpfs tmpfs ro,size=1k\n"
		"bad line\n"
		"26 22 0:31 / relative rw - tmpfs t rw\n";
	struct mf_mount *m;
	size_t n, bad;

	(void)state;
	EXPECT_EQ(mf_parse_mountinfo(mi, sizeof(mi) - 1, &m, &n, &bad), 0);
	EXPECT_EQ(bad, 2);
	if (EXPECT_EQ(n, 4)) {
		EXPECT_STR(m[0].point, "/");
		EXPECT(!m[0].ro);
		EXPECT_STR(m[1].fstype, "proc");
		EXPECT_STR(m[2].point, "/mnt/with space");
		EXPECT_STR(m[2].root, "/srv/ro");
		EXPECT(m[2].ro);
		EXPECT(m[3].ro);	/* the superblock is ro */
		EXPECT_STR(m[3].source, "tmpfs");
	}
	mf_mounts_free(m, n);
	DONE();
}

static struct policy *load(const char *yaml)
{
	struct policy_diag diag = { 0 };
	struct policy *p = NULL;
	size_t i;

	if (policy__parse("t.yaml", yaml, strlen(yaml), &p, &diag))
		for (i = 0; i < diag.n; i++)
			print_error("%s\n", diag.msgs[i]);
	policy_diag__free(&diag);
	return p;
}

static const char clean_yaml[] =
	"name: clean\n"
	"category: model-generated-code\n"
	"cgroups: [/sandboxes/clean]\n"
	"network:\n"
	"  allow:\n"
	"    - cidr: 10.0.0.0/8\n"
	"      ports: [443, \"9000-9100\"]\n"
	"      proto: tcp\n"
	"      reason: \"the package mirror\\tand a tab\"\n"
	"files:\n"
	"  read: [/usr, /etc]\n"
	"  write: [/srv/jobs/clean]\n"
	"  deny: [/etc/hosts]\n"
	"limits:\n"
	"  runtime: 30s\n";

static void test_reason_key(void **state)
{
	struct policy *p;

	(void)state;
	p = load(clean_yaml);
	if (!EXPECT(p))
		goto out;
	EXPECT_STR(p->net.allow[0].reason, "the package mirror\tand a tab");
	policy__free(p);
	/* An empty reason is refused, like an override's. */
	{
		struct policy_diag diag = { 0 };
		static const char bad[] = "name: b\ncgroups: [/x]\nnetwork:\n  allow:\n"
			"    - cidr: 10.0.0.0/8\n      reason: \" \"\n";

		p = NULL;
		EXPECT_EQ(policy__parse("b.yaml", bad, sizeof(bad) - 1, &p, &diag), -EINVAL);
		if (EXPECT_EQ(diag.n, 1))
			EXPECT(strstr(diag.msgs[0], "network.allow[0].reason: empty reason"));
		policy_diag__free(&diag);
	}
out:
	DONE();
}

static void test_blob_roundtrip(void **state)
{
	struct mf_policy mp;
	struct policy *p;
	size_t len;
	char *buf;

	(void)state;
	p = load(clean_yaml);
	if (!EXPECT(p))
		goto out;
	assert_int_equal(mf_blob_write(p, &buf, &len), 0);
	EXPECT_EQ(mf_blob_parse(buf, len, &mp), 0);
	EXPECT_STR(mp.name, "clean");
	EXPECT_STR(mp.category, "model-generated-code");
	EXPECT_STR(mp.file, "t.yaml");
	EXPECT_EQ(mp.hash, p->hash);
	EXPECT(!mp.default_allow);
	if (EXPECT_EQ(mp.n_allow, 1)) {
		EXPECT_STR(mp.allow[0].what, "10.0.0.0/8 tcp 443,9000-9100");
		EXPECT_STR(mp.allow[0].reason, "the package mirror\tand a tab");
	}
	EXPECT(mp.has_read);
	EXPECT_EQ(mp.n_read, 2);
	if (EXPECT_EQ(mp.n_write, 1))
		EXPECT_STR(mp.write[0], "/srv/jobs/clean");
	EXPECT_EQ(mp.n_deny, 1);
	EXPECT(mp.has_runtime && mp.runtime_ms == 30000);
	if (EXPECT_EQ(mp.n_selectors, 1))
		EXPECT_STR(mp.selectors[0], "/sandboxes/clean");
	EXPECT(!mp.has_memory && !mp.has_pids);
	/* exec: absent, the read scope minus the write scope. */
	EXPECT(!mp.has_exec_paths && !mp.exec_allow_written && !mp.exec_anon_deny &&
	       !mp.exec_hash);
	mf_policy_free(&mp);
	EXPECT_EQ(mf_blob_parse("not a blob\n", 11, &mp), -EINVAL);
	free(buf);
	policy__free(p);
	/* exec's mapping form: every field back. */
	p = load("name: x\ncgroups: [/x, /y/*]\nexec:\n  paths: [/usr/bin, /opt/t]\n"
		 "  allow_written: true\n  anon_exec: deny\n  hash: sha256\n"
		 "limits:\n  memory: 64Mi\n  pids: 32\n");
	if (!EXPECT(p))
		goto out;
	assert_int_equal(mf_blob_write(p, &buf, &len), 0);
	if (EXPECT_EQ(mf_blob_parse(buf, len, &mp), 0)) {
		EXPECT(mp.has_exec_paths && mp.exec_allow_written && mp.exec_anon_deny &&
		       mp.exec_hash);
		if (EXPECT_EQ(mp.n_exec_paths, 2))
			EXPECT_STR(mp.exec_paths[1], "/opt/t");
		if (EXPECT_EQ(mp.n_selectors, 2))
			EXPECT_STR(mp.selectors[1], "/y/*");
		EXPECT(mp.has_memory && mp.memory == 64ull << 20);
		EXPECT(mp.has_pids && mp.pids == 32);
		mf_policy_free(&mp);
	}
	free(buf);
	policy__free(p);
out:
	DONE();
}

static void test_boundary(void **state)
{
	static const char ok[] = "name: code-exec-sandbox\narchitecture_record: ARCH-7 section 4\n";
	static const char unk[] = "name: x\nowner: y\n";
	static const char half[] = "name: x\n";
	struct mf_boundary b;
	char why[256];

	(void)state;
	EXPECT_EQ(mf_boundary_parse(ok, sizeof(ok) - 1, &b, why, sizeof(why)), 0);
	EXPECT_STR(b.name, "code-exec-sandbox");
	EXPECT_STR(b.record, "ARCH-7 section 4");
	EXPECT_EQ(mf_boundary_parse(unk, sizeof(unk) - 1, &b, why, sizeof(why)), -EINVAL);
	EXPECT(strstr(why, "unknown key 'owner'"));
	EXPECT_EQ(mf_boundary_parse(half, sizeof(half) - 1, &b, why, sizeof(why)), -EINVAL);
	EXPECT(strstr(why, "architecture_record is missing"));
	EXPECT_EQ(mf_boundary_parse("[", 1, &b, why, sizeof(why)), -EINVAL);
	DONE();
}

static void test_paths(void **state)
{
	(void)state;
	EXPECT(mf_path_covers("/srv", "/srv/x"));
	EXPECT(mf_path_covers("/srv", "/srv"));
	EXPECT(!mf_path_covers("/srv", "/srvx"));
	EXPECT(mf_path_covers("/", "/anything"));
	EXPECT(mf_path_overlap("/srv/x", "/srv"));
	EXPECT(!mf_path_overlap("/srv/a", "/srv/b"));
	DONE();
}

/* A sandbox that passes every point; each test then breaks one. */
struct fix {
	struct mf_policy pol, pol2;
	char *write1[1], *write2[1];
	struct mf_reasoned allow[1];
	struct mf_host h;
	struct mf_sandbox s[2];
};

static void fix_init(struct fix *f)
{
	memset(f, 0, sizeof(*f));
	f->write1[0] = "/srv/jobs/a";
	f->write2[0] = "/srv/jobs/b";
	f->allow[0].what = "10.0.0.0/8 tcp 443";
	f->allow[0].reason = "the mirror";
	f->pol.name = "a";
	f->pol.file = "a.yaml";
	f->pol.allow = f->allow;
	f->pol.n_allow = 1;
	f->pol.write = f->write1;
	f->pol.n_write = 1;
	f->pol2 = f->pol;
	f->pol2.write = f->write2;
	snprintf(f->h.hostname, sizeof(f->h.hostname), "node-1");
	snprintf(f->h.kernel, sizeof(f->h.kernel), "6.1.0");
	f->h.bpf_lsm = true;
	f->h.have_boundary = true;
	snprintf(f->h.boundary.name, sizeof(f->h.boundary.name), "exec-sandbox");
	snprintf(f->h.boundary.record, sizeof(f->h.boundary.record), "ARCH-7");
	f->s[0].cgroup = strdup("/sandboxes/a");
	f->s[1].cgroup = strdup("/sandboxes/b");
	snprintf(f->s[0].policy_name, 64, "a");
	snprintf(f->s[1].policy_name, 64, "b");
	f->s[0].pol = &f->pol;
	f->s[1].pol = &f->pol2;
	for (int i = 0; i < 2; i++) {
		snprintf(f->s[i].cpu_max, 64, "100000 100000");
		snprintf(f->s[i].memory_max, 32, "536870912");
		snprintf(f->s[i].memory_swap_max, 32, "0");
		snprintf(f->s[i].pids_max, 32, "256");
		f->s[i].runtime_set = true;
		f->s[i].runtime_ms = 30000;
	}
}

static void fix_free(struct fix *f)
{
	mf_sandbox_free(&f->s[0]);
	mf_sandbox_free(&f->s[1]);
}

static int judge(struct fix *f)
{
	int pt, fails = 0;

	assert_int_equal(mf_shared(f->s, 2), 0);
	mf_judge(&f->h, &f->s[0]);
	mf_judge(&f->h, &f->s[1]);
	for (pt = 1; pt <= MF_POINTS; pt++)
		fails |= !f->s[0].pass[pt] << pt;
	return fails;
}

static void test_verdict_pass(void **state)
{
	struct fix f;
	char *out = NULL;
	size_t len = 0;
	FILE *m;

	(void)state;
	fix_init(&f);
	EXPECT_EQ(judge(&f), 0);
	EXPECT_EQ(f.s[0].n_shared, 0);
	m = open_memstream(&out, &len);
	assert_non_null(m);
	EXPECT(mf_render_json(m, &f.h, f.s, 2, "2026-12-01T00:00:00Z"));
	fclose(m);
	EXPECT(strstr(out, "\"result\":\"pass\""));
	EXPECT(strstr(out, "\"reason\":\"the mirror\""));
	EXPECT(strstr(out, "\"::ffff:169.254.0.0/112\""));
	EXPECT(strstr(out, "\"64:ff9b::169.254.0.0/112\""));
	EXPECT(strstr(out, "\"2002:a9fe:0000::/32\""));
	EXPECT(strstr(out, "\"exec\":{\"paths\":\"read scope\",\"allow_written\":false,\"anon_exec\":\"allow\",\"hash\":\"none\"}"));
	free(out);
	fix_free(&f);
	DONE();
}

static void test_fail_point1_env(void **state)
{
	struct fix f;
	struct mf_proc pr = { .pid = 42 };
	char *out = NULL;
	size_t len = 0;
	FILE *m;

	(void)state;
	fix_init(&f);
	pr.secret_env = calloc(1, sizeof(char *));
	pr.secret_env[0] = strdup("API_TOKEN");
	pr.n_secret_env = 1;
	f.s[0].procs = calloc(1, sizeof(pr));
	f.s[0].procs[0] = pr;
	f.s[0].n_procs = 1;
	EXPECT_EQ(judge(&f), 1 << 1);
	EXPECT(strstr(f.s[0].why[1], "secret-looking environment variable"));
	m = open_memstream(&out, &len);
	assert_non_null(m);
	EXPECT(!mf_render_md(m, &f.h, f.s, 2, "2026-12-01T00:00:00Z"));
	fclose(m);
	EXPECT(strstr(out, "env API_TOKEN (name only)"));
	EXPECT(strstr(out, "Exec: the read scope, minus the write scope (W^X for files)"));
	free(out);
	fix_free(&f);
	DONE();
}

static void test_fail_point1_path(void **state)
{
	struct fix f;
	char *reads[1] = { "/usr" };
	struct mf_reasoned ov = { "/var/run/secrets/kubernetes.io/serviceaccount", "own token" };

	(void)state;
	fix_init(&f);
	f.s[0].paths = calloc(2, sizeof(*f.s[0].paths));
	f.s[0].paths[0].path = strdup("/root/.aws/credentials");
	f.s[0].paths[1].path = strdup("/var/run/secrets/kubernetes.io/serviceaccount/token");
	f.s[0].n_paths = 2;
	/* Protected and not overridden: blocked, both. */
	EXPECT_EQ(judge(&f), 0);
	EXPECT(f.s[0].paths[0].blocked && f.s[0].paths[1].blocked);
	/* An override opens the token (inside read scope "everywhere"). */
	f.pol.file_overrides = &ov;
	f.pol.n_file_overrides = 1;
	EXPECT_EQ(judge(&f), 1 << 1);
	EXPECT(!f.s[0].paths[1].blocked);
	/* Outside a read scope: blocked again, override or not. */
	f.pol.has_read = true;
	f.pol.read = reads;
	f.pol.n_read = 1;
	EXPECT_EQ(judge(&f), 0);
	/* Without BPF-LSM nothing is blocked (and point 3 fails). */
	f.h.bpf_lsm = false;
	EXPECT_EQ(judge(&f), 1 << 1 | 1 << 3);
	EXPECT(strstr(f.s[0].why[1], "BPF-LSM is off"));
	f.pol.file_overrides = NULL;
	f.pol.n_file_overrides = 0;
	fix_free(&f);
	DONE();
}

static void test_fail_point1_unreadable(void **state)
{
	struct fix f;

	(void)state;
	fix_init(&f);
	f.s[0].unreadable_pid = 77;
	f.s[0].unreadable_errno = EACCES;
	EXPECT_EQ(judge(&f), 1 << 1);
	EXPECT(strstr(f.s[0].why[1], "/proc/77/environ or /proc/77/root could not be read (Permission denied): run stockade manifest as root"));
	fix_free(&f);
	DONE();
}

static void test_fail_point1_metadata(void **state)
{
	struct fix f;
	struct mf_reasoned ov = { "169.254.169.254/32", "the region" };
	char *out = NULL;
	size_t len = 0;
	FILE *m;

	(void)state;
	fix_init(&f);
	f.pol.net_overrides = &ov;
	f.pol.n_net_overrides = 1;
	EXPECT_EQ(judge(&f), 1 << 1);
	EXPECT(strstr(f.s[0].why[1], "169.254.169.254/32"));
	m = open_memstream(&out, &len);
	assert_non_null(m);
	mf_render_json(m, &f.h, f.s, 1, "t");
	fclose(m);
	EXPECT(strstr(out, "\"state\":\"opened by an override\""));
	free(out);
	fix_free(&f);
	DONE();
}

static void test_fail_point2(void **state)
{
	struct fix f;

	(void)state;
	fix_init(&f);
	f.s[0].default_allow = true;
	EXPECT_EQ(judge(&f), 1 << 2);
	EXPECT(strstr(f.s[0].why[2], "default is allow"));
	f.s[0].default_allow = false;
	f.allow[0].reason = NULL;
	EXPECT_EQ(judge(&f), 1 << 2);
	EXPECT(strstr(f.s[0].why[2], "has no reason"));
	f.allow[0].reason = "x";
	f.s[0].audit = true;
	EXPECT_EQ(judge(&f), 1 << 2 | 1 << 3);
	fix_free(&f);
	DONE();
}

static void test_fail_point3_shared(void **state)
{
	struct fix f;
	char *out = NULL;
	size_t len = 0;
	FILE *m;

	(void)state;
	fix_init(&f);
	/* The second sandbox writes below the first's folder. */
	f.write2[0] = "/srv/jobs/a/sub";
	EXPECT_EQ(judge(&f), 1 << 3);
	if (EXPECT_EQ(f.s[0].n_shared, 1)) {
		EXPECT_STR(f.s[0].shared[0].cgroup, "/sandboxes/b");
		EXPECT_STR(f.s[0].shared[0].path, "/srv/jobs/a");
	}
	EXPECT_EQ(f.s[1].n_shared, 1);
	m = open_memstream(&out, &len);
	assert_non_null(m);
	EXPECT(!mf_render_json(m, &f.h, f.s, 2, "t"));
	fclose(m);
	EXPECT(strstr(out, "\"writable_shared_with\":[{\"cgroup\":\"/sandboxes/b\""));
	EXPECT(strstr(out, "\"result\":\"fail\""));
	free(out);
	fix_free(&f);
	/* The same policy over two cgroups with one literal path. */
	fix_init(&f);
	f.s[1].pol = &f.pol;
	EXPECT_EQ(judge(&f), 1 << 3);
	fix_free(&f);
	/* Writable everywhere. */
	fix_init(&f);
	f.write1[0] = "/";
	f.s[1].pol = NULL;
	EXPECT_EQ(judge(&f), 1 << 3);
	fix_free(&f);
	DONE();
}

static void test_fail_point4(void **state)
{
	struct fix f;

	(void)state;
	fix_init(&f);
	snprintf(f.s[0].memory_max, 32, "max");
	EXPECT_EQ(judge(&f), 1 << 4);
	EXPECT(strstr(f.s[0].why[4], "memory.max is max"));
	snprintf(f.s[0].memory_max, 32, "1");
	f.s[0].cpu_max[0] = '\0';
	EXPECT_EQ(judge(&f), 1 << 4);
	snprintf(f.s[0].cpu_max, 64, "max 100000");
	EXPECT_EQ(judge(&f), 1 << 4);
	snprintf(f.s[0].cpu_max, 64, "1 1");
	f.s[0].runtime_set = false;
	f.pol.has_runtime = true;
	EXPECT_EQ(judge(&f), 1 << 4);
	EXPECT(strstr(f.s[0].why[4], "only a running agent"));
	fix_free(&f);
	DONE();
}

static void test_fail_point5(void **state)
{
	struct fix f;

	(void)state;
	fix_init(&f);
	f.h.have_boundary = false;
	snprintf(f.h.boundary_why, sizeof(f.h.boundary_why), "no file");
	EXPECT_EQ(judge(&f), 1 << 5);
	EXPECT(strstr(f.s[0].why[5], "no file"));
	fix_free(&f);
	DONE();
}

static void test_no_record(void **state)
{
	struct fix f;

	(void)state;
	fix_init(&f);
	f.s[0].pol = NULL;
	EXPECT_EQ(judge(&f), 1 << 1 | 1 << 2 | 1 << 3);
	EXPECT(strstr(f.s[0].why[2], "was not found"));
	fix_free(&f);
	DONE();
}

/* stockade check's warning: one write path, several executions. */
static void test_check_shares(void **state)
{
	struct policy_set set = { 0 };
	struct policy_diag d = { 0 };
	struct policy *v[3];

	(void)state;
	v[0] = load("name: g\ncgroups: [/s/*]\nfiles:\n  write: [/tmp/a]\n");
	v[1] = load("name: h\ncgroups: [/t]\nfiles:\n  write: [/tmp/a/b, /tmp/c]\n");
	v[2] = load("name: k\ncgroups: [/u, /w]\nfiles:\n  write: [/tmp/k]\n");
	assert_true(v[0] && v[1] && v[2]);
	set.v = v;
	set.n = 3;
	EXPECT_EQ(rules__write_shares(&set, false, &d), 3);
	if (EXPECT_EQ(d.n, 3)) {
		EXPECT(strstr(d.msgs[0], "t.yaml:4:11: files.write[0]: warning: /tmp/a is writable by every cgroup the glob selector /s/* selects"));
		EXPECT(strstr(d.msgs[1], "files.write[0]: warning: /tmp/k is writable by every cgroup the selectors of this policy selects"));
		EXPECT(strstr(d.msgs[2], "warning: /tmp/a overlaps /tmp/a/b, a write path of policy h"));
	}
	policy_diag__free(&d);
	/* Strict: the same lines, as errors. One literal cgroup, own
	 * folders: nothing. */
	set.n = 1;
	EXPECT_EQ(rules__write_shares(&set, true, &d), 1);
	if (EXPECT_EQ(d.n, 1))
		EXPECT(strstr(d.msgs[0], ": error: /tmp/a is writable"));
	policy_diag__free(&d);
	set.v = v + 1;
	set.n = 1;
	EXPECT_EQ(rules__write_shares(&set, true, &d), 0);
	policy_diag__free(&d);
	policy__free(v[0]);
	policy__free(v[1]);
	policy__free(v[2]);
	DONE();
}

/* Per-execution folders in the check and in the manifest. */
static void test_templates(void **state)
{
	struct policy_set set = { 0 };
	struct policy_diag d = { 0 };
	struct mf_policy mp = { 0 };
	struct policy *v[4];

	(void)state;
	/* A folder per cgroup: no share. */
	v[0] = load("name: g\ncgroups: [/s/*]\nfiles:\n  write: [\"/tmp/{cgroup}\"]\n");
	/* {cgroup} under a wildcard parent: two cgroups can end alike. */
	v[1] = load("name: h\ncgroups: [/k/*/j-*]\nfiles:\n  write: [\"/srv/{cgroup}\", \"/srv2/{cgroup_path}\"]\n");
	/* A literal path of another policy over a folder's base. */
	v[2] = load("name: k\ncgroups: [/u]\nfiles:\n  write: [/tmp]\n");
	v[3] = load("name: m\ncgroups: [/w/*]\nfiles:\n  write:\n    - /srv2/{cgroup_path}\n");
	assert_true(v[0] && v[1] && v[2] && v[3]);
	set.v = v;
	set.n = 2;
	EXPECT_EQ(rules__write_shares(&set, false, &d), 1);
	if (EXPECT_EQ(d.n, 1))
		EXPECT(strstr(d.msgs[0], "files.write[0]: warning: /srv/{cgroup}: {cgroup} is only the last path component"));
	policy_diag__free(&d);
	set.v = v;
	set.n = 3;
	EXPECT_EQ(rules__write_shares(&set, false, &d), 2);
	if (EXPECT_EQ(d.n, 2))
		EXPECT(strstr(d.msgs[1], "/tmp/{cgroup} overlaps /tmp, a write path of policy k"));
	policy_diag__free(&d);
	/* The same {cgroup_path} folder in two policies: cgroups differ, so
	 * only h's {cgroup} path is reported. */
	{
		struct policy *two[2] = { v[1], v[3] };

		set.v = two;
		set.n = 2;
		EXPECT_EQ(rules__write_shares(&set, false, &d), 1);
		policy_diag__free(&d);
	}
	/* The manifest's copy for one sandbox. */
	mp.n_write = 2;
	mp.write = calloc(2, sizeof(char *));
	assert_non_null(mp.write);
	mp.write[0] = strdup("/tmp/{cgroup}/out");
	mp.write[1] = strdup("/var/x");
	EXPECT(mf_policy_templated(&mp));
	EXPECT_EQ(mf_policy_expand(&mp, "/s/job-7"), 0);
	EXPECT(!mf_policy_templated(&mp));
	if (EXPECT_EQ(mp.n_write, 2))
		EXPECT_STR(mp.write[0], "/tmp/job-7/out");
	mf_policy_free(&mp);
	policy__free(v[0]);
	policy__free(v[1]);
	policy__free(v[2]);
	policy__free(v[3]);
	DONE();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_secret_names),
		cmocka_unit_test(test_environ),
		cmocka_unit_test(test_mountinfo),
		cmocka_unit_test(test_reason_key),
		cmocka_unit_test(test_blob_roundtrip),
		cmocka_unit_test(test_boundary),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_verdict_pass),
		cmocka_unit_test(test_fail_point1_env),
		cmocka_unit_test(test_fail_point1_path),
		cmocka_unit_test(test_fail_point1_unreadable),
		cmocka_unit_test(test_fail_point1_metadata),
		cmocka_unit_test(test_fail_point2),
		cmocka_unit_test(test_fail_point3_shared),
		cmocka_unit_test(test_fail_point4),
		cmocka_unit_test(test_fail_point5),
		cmocka_unit_test(test_no_record),
		cmocka_unit_test(test_check_shares),
		cmocka_unit_test(test_templates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
