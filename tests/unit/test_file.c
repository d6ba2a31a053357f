// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * File-scope compilation: the verdict the longest matching trie entry
 * gives, for read/write/deny/protected/override boundaries and their
 * nesting (agent/file_rules.c, include/file.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "file_rules.h"
#include "policy.h"

static struct policy_path *paths(const char *const *v, size_t n)
{
	struct policy_path *p = calloc(n ? n : 1, sizeof(*p));
	size_t i;

	assert_non_null(p);
	for (i = 0; i < n; i++)
		p[i].path = (char *)v[i];
	return p;
}

#define EXEC_PATHS(...)							\
	do {								\
		static const char *const _v[] = { __VA_ARGS__ };	\
		pol.exec.has = pol.exec.has_paths = true;		\
		pol.exec.paths = paths(_v, ARRAY_SIZE(_v));		\
		pol.exec.n_paths = ARRAY_SIZE(_v);			\
	} while (0)

#define LIST(field, ...)						\
	do {								\
		static const char *const _v[] = { __VA_ARGS__ };	\
		pol.files.field = paths(_v, ARRAY_SIZE(_v));\
		pol.files.n_##field = ARRAY_SIZE(_v);	\
	} while (0)

static struct policy pol;
static struct file_compiled fc;

static int setup(void **state)
{
	(void)state;
	memset(&pol, 0, sizeof(pol));
	pol.file = "t.yaml";
	pol.name = "t";
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(pol.files.read);
	free(pol.files.write);
	free(pol.files.deny);
	free(pol.files.overrides);
	free(pol.net.unix_allow);
	free(pol.exec.paths);
	file_compiled__free(&fc);
	return 0;
}

static void compile(void)
{
	static const char *const homes[] = { "/root", "/home/alice" };
	char err[256];

	assert_int_equal(file_rules__compile(&pol, 3, homes, 2, &fc, err,
					     sizeof(err)), 0);
}

#define R FILE_READ
#define W FILE_WRITE
#define X FILE_EXEC
#define RX (FILE_READ | FILE_EXEC)
#define V(path) file_rules__lookup(&fc, 3, path)

/* Per-execution folders: the base scope opens none, each cgroup's only
 * its own (include/file.h). */
static void test_templates(void **state)
{
	static const char *const homes[] = { "/root" };
	struct file_cg_key ck;
	char err[256], long_cg[300];

	(void)state;
	pol.files.has_read = pol.files.has_write = true;
	LIST(read, "/usr", "/srv/in/{cgroup}");
	LIST(write, "/srv/jobs/{cgroup}/out", "/tmp/{cgroup_path}");
	/* Base: no folder, and read: still "only these" (no read at /). */
	compile();
	EXPECT_EQ(V("/usr/bin/sh"), RX);
	EXPECT_EQ(V("/srv/jobs/job-7/out/x"), 0);
	EXPECT_EQ(V("/srv/in/job-7"), 0);
	EXPECT_EQ(V("/tmp/sandboxes/job-7"), 0);
	EXPECT_EQ(V("/etc/passwd"), 0);
	file_compiled__free(&fc);
	assert_int_equal(file_rules__compile_cg(&pol, 3, "/sandboxes/job-7", homes, 1,
						&fc, err, sizeof(err)), 0);
	EXPECT_EQ(V("/srv/jobs/job-7/out/x"), R | W);
	EXPECT_EQ(V("/srv/jobs/job-8/out/x"), 0);	/* another execution's */
	EXPECT_EQ(V("/srv/jobs/job-7"), 0);
	EXPECT_EQ(V("/srv/in/job-7/data"), RX);
	EXPECT_EQ(V("/srv/in/job-70"), 0);
	EXPECT_EQ(V("/tmp/sandboxes/job-7/a"), R | W);
	EXPECT_EQ(V("/tmp/sandboxes/job-8"), 0);
	EXPECT_EQ(V("/usr/bin/sh"), RX);
	/* Stored for the cgroup: the same prefix after (policy, cgroup). */
	assert_int_equal(file_rules__cg_key(&fc.v[0].key, 0x100000002ULL, &ck), 0);
	EXPECT_EQ(ck.policy_id, 3);
	EXPECT_EQ(ck.cg_lo, 2);
	EXPECT_EQ(ck.cg_hi, 1);
	EXPECT_EQ(ck.prefixlen, fc.v[0].key.prefixlen + 64);
	EXPECT(!memcmp(ck.path, fc.v[0].key.path, (fc.v[0].key.prefixlen - 32) / 8));
	file_compiled__free(&fc);
	/* Reads everywhere: another execution's folder is readable, but
	 * nothing below the folders' literal base may run (W^X across the
	 * executions, not only within one), there and in the base scope. */
	pol.files.has_read = false;
	assert_int_equal(file_rules__compile_cg(&pol, 3, "/sandboxes/job-7", homes, 1,
						&fc, err, sizeof(err)), 0);
	EXPECT_EQ(V("/srv/jobs/job-8/out/a.out"), R);
	EXPECT_EQ(V("/srv/jobs/x"), R);
	EXPECT_EQ(V("/srv/jobs/job-7/out/x"), R | W);
	EXPECT_EQ(V("/srv/jobsx/bin"), RX);
	EXPECT_EQ(V("/usr/bin/sh"), RX);
	file_compiled__free(&fc);
	compile();
	EXPECT_EQ(V("/srv/jobs/job-8/out/a.out"), R);
	EXPECT_EQ(V("/srv/in/job-7/x"), RX);
	file_compiled__free(&fc);
	pol.files.has_read = true;
	/* An expansion too long for a key: an error, nothing compiled. */
	memset(long_cg, 'a', sizeof(long_cg) - 1);
	long_cg[0] = '/';
	long_cg[sizeof(long_cg) - 1] = '\0';
	EXPECT_EQ(file_rules__compile_cg(&pol, 3, long_cg, homes, 1, &fc, err,
					 sizeof(err)), -ENAMETOOLONG);
	EXPECT(strstr(err, "keeps the policy's base scope"));
	EXPECT_EQ(fc.n, 0);
	DONE();
}

static void test_scope(void **state)
{
	(void)state;
	pol.files.has_read = pol.files.has_write = true;
	LIST(read, "/usr", "/etc", "/task");
	LIST(write, "/task/out", "/tmp/task");
	LIST(deny, "/task/.git/hooks");
	compile();
	EXPECT_EQ(V("/usr/bin/env"), RX);
	EXPECT_EQ(V("/usr"), RX);
	EXPECT_EQ(V("/usrx"), 0);		/* component boundary */
	EXPECT_EQ(V("/var/log/x"), 0);
	EXPECT_EQ(V("/task/in"), RX);
	EXPECT_EQ(V("/task/out"), R | W);
	EXPECT_EQ(V("/task/out/a/b"), R | W);
	EXPECT_EQ(V("/task/outside"), RX);
	EXPECT_EQ(V("/tmp/task/x"), R | W);	/* write implies read */
	EXPECT_EQ(V("/tmp/other"), 0);
	EXPECT_EQ(V("/task/.git/hooks/pre-commit") & FILE_DENY, FILE_DENY);
	EXPECT_EQ(V("/task/.git/config"), RX);
	/* Renaming a directory above a deny or protected path is refused:
	 * the flag holds on the directory itself, not below it. */
	EXPECT_EQ(V("/task/.git"), RX | FILE_GUARDED_BELOW);
	EXPECT_EQ(V("/task"), RX | FILE_GUARDED_BELOW);
	EXPECT_EQ(V("/home/alice"), FILE_GUARDED_BELOW);
	EXPECT_EQ(V("/home/alice/.config"), FILE_GUARDED_BELOW);
	EXPECT_EQ(V("/home/alice/.configx"), 0);
	/* Credentials stay protected inside a readable scope. */
	EXPECT_EQ(V("/etc/shadow") & FILE_PROTECTED, FILE_PROTECTED);
	EXPECT_EQ(V("/etc/passwd"), RX);
	EXPECT_EQ(V("/etc/sudoers.d/x") & FILE_PROTECTED, FILE_PROTECTED);
	EXPECT_EQ(V("/home/alice/.ssh/id_ed25519") & FILE_PROTECTED, FILE_PROTECTED);
	EXPECT_EQ(V("/root/.aws/credentials") & FILE_PROTECTED, FILE_PROTECTED);
	EXPECT_EQ(V("/home/alice/notes"), 0);
	/* Data-free devices work in any scope. */
	EXPECT_EQ(V("/dev/null"), R | W);
	EXPECT_EQ(V("/dev/sda"), 0);
	DONE();
}

static void test_defaults(void **state)
{
	(void)state;
	/* No files section: reads everywhere, writes nowhere. */
	compile();
	EXPECT_EQ(V("/anything/at/all"), RX);
	EXPECT_EQ(V("/"), RX | FILE_GUARDED_BELOW);
	EXPECT_EQ(V("/etc/shadow") & FILE_PROTECTED, FILE_PROTECTED);
	teardown(NULL);
	setup(NULL);
	/* read: [] reads nothing. */
	pol.files.has_read = true;
	compile();
	EXPECT_EQ(V("/usr/bin/env"), 0);
	DONE();
}

static void test_override(void **state)
{
	struct policy_file_override *o = calloc(1, sizeof(*o));

	(void)state;
	assert_non_null(o);
	o->path = "/var/run/secrets/kubernetes.io/serviceaccount";
	o->reason = "job reads its own token";
	pol.files.overrides = o;
	pol.files.n_overrides = 1;
	compile();
	EXPECT_EQ(V("/var/run/secrets/kubernetes.io/serviceaccount/token"), RX);
	EXPECT_EQ(V("/var/run/secrets/other") & FILE_PROTECTED, FILE_PROTECTED);
	EXPECT_EQ(V("/run/secrets/x") & FILE_PROTECTED, FILE_PROTECTED);
	DONE();
}

static void test_long_paths(void **state)
{
	char p[600];

	(void)state;
	pol.files.has_write = true;
	LIST(write, "/w");
	compile();
	/* Beyond the key's 252 bytes only the stored prefix decides. */
	memset(p, 'a', sizeof(p));
	memcpy(p, "/w/", 3);
	p[sizeof(p) - 1] = '\0';
	EXPECT_EQ(V(p), R | W);
	p[1] = 'x';
	EXPECT_EQ(V(p), RX);
	DONE();
}

static void test_unix_keys(void **state)
{
	static const char *const v[] = { "/run/task.sock", "@agent" };

	(void)state;
	pol.net.unix_allow = paths(v, 2);
	pol.net.n_unix_allow = 2;
	compile();
	assert_int_equal(fc.n_unix, 2);	/* unix_keys[1] is read below */
	EXPECT_STR(fc.unix_keys[0].path, "/run/task.sock");
	EXPECT_EQ(fc.unix_keys[1].path[0], '\0');	/* abstract */
	EXPECT_STR(fc.unix_keys[1].path + 1, "agent");
	EXPECT_EQ(fc.unix_keys[1].policy_id, 3);
	DONE();
}

static void test_home_too_long(void **state)
{
	char home[300], err[1024];
	const char *homes[] = { home };

	(void)state;
	memset(home, 'h', sizeof(home));
	home[0] = '/';
	home[sizeof(home) - 1] = '\0';
	EXPECT_EQ(file_rules__compile(&pol, 3, homes, 1, &fc, err,
				      sizeof(err)), -ENAMETOOLONG);
	EXPECT_EQ(strncmp(err, "the protected path /hhh", 23), 0);
	EXPECT_STR(err + 19 + strlen(home) + strlen("/.ssh"),
		   " is longer than 251 bytes; it cannot be protected, so the policy is refused");
	DONE();
}

/* W^X for files: with no `exec:` key, what the sandbox can write cannot
 * run; the rest of the read scope can. */
static void test_exec_under_write_scope_refused_by_default(void **state)
{
	(void)state;
	pol.files.has_read = pol.files.has_write = true;
	LIST(read, "/usr", "/task");
	LIST(write, "/task/out", "/tmp/task");
	compile();
	EXPECT_EQ(V("/usr/bin/env"), RX);
	EXPECT_EQ(V("/task/bin/tool"), RX);
	EXPECT_EQ(V("/task/out/busybox"), R | W);
	EXPECT_EQ(V("/task/out"), R | W);
	EXPECT_EQ(V("/tmp/task/a.out"), R | W);
	/* Outside the read scope nothing runs either. */
	EXPECT_EQ(V("/srv/x"), 0);
	/* The data-free devices are writable, so never executable. */
	EXPECT_EQ(V("/dev/zero"), R | W);
	DONE();
}

/* exec.allow_written drops the subtraction: written files may run. */
static void test_exec_allow_written(void **state)
{
	(void)state;
	pol.files.has_read = pol.files.has_write = true;
	LIST(read, "/usr");
	LIST(write, "/task/out");
	pol.exec.has = pol.exec.allow_written = true;
	compile();
	EXPECT_EQ(V("/usr/bin/env"), RX);
	EXPECT_EQ(V("/task/out/busybox"), R | W | X);
	EXPECT_EQ(V("/srv/x"), 0);
	DONE();
}

/* exec: [paths]: only under them, and only where readable. */
static void test_exec_paths_list(void **state)
{
	(void)state;
	pol.files.has_read = true;
	LIST(read, "/usr", "/opt", "/etc");
	EXEC_PATHS("/usr/bin", "/opt/tool", "/srv/bin");
	compile();
	EXPECT_EQ(V("/usr/bin/env"), RX);
	EXPECT_EQ(V("/usr/bin"), RX);
	EXPECT_EQ(V("/usr/binx"), R);		/* component boundary */
	EXPECT_EQ(V("/usr/lib/libc.so.6"), R);
	EXPECT_EQ(V("/opt/tool/run"), RX);
	EXPECT_EQ(V("/opt/other/run"), R);
	/* Listed, but outside the read scope: not readable, not run. */
	EXPECT_EQ(V("/srv/bin/x"), 0);
	/* exec: [] runs nothing. */
	teardown(NULL);
	setup(NULL);
	pol.exec.has = pol.exec.has_paths = true;
	compile();
	EXPECT_EQ(V("/usr/bin/env"), R);
	DONE();
}

/* A write folder inside an exec path is still W^X; deny and protected
 * paths under an exec path never run. */
static void test_exec_nested_write_under_exec_path(void **state)
{
	(void)state;
	pol.files.has_read = pol.files.has_write = true;
	LIST(read, "/opt", "/etc");
	LIST(write, "/opt/data");
	LIST(deny, "/opt/secret");
	EXEC_PATHS("/opt", "/etc");
	compile();
	EXPECT_EQ(V("/opt/app/run"), RX);
	EXPECT_EQ(V("/opt/data/dropped"), R | W);
	EXPECT_EQ(V("/opt/secret/x") & (FILE_DENY | X), FILE_DENY);
	EXPECT_EQ(V("/etc/shadow") & (FILE_PROTECTED | X), FILE_PROTECTED);
	teardown(NULL);
	setup(NULL);
	pol.files.has_read = pol.files.has_write = true;
	LIST(read, "/opt");
	LIST(write, "/opt/data");
	EXEC_PATHS("/opt");
	pol.exec.allow_written = true;
	compile();
	EXPECT_EQ(V("/opt/data/dropped"), R | W | X);
	DONE();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_scope, setup, teardown),
		cmocka_unit_test_setup_teardown(test_templates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_override, setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_paths, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unix_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_home_too_long, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_under_write_scope_refused_by_default,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_allow_written, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_paths_list, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_nested_write_under_exec_path,
						setup, teardown),
	};

	return cmocka_run_group_tests_name("file", tests, NULL, NULL);
}
