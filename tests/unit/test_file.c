// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * File-scope compilation: the verdict the longest matching trie entry
 * gives, for read/write/deny/protected/override boundaries and their
 * nesting (agent/file_rules.c, include/file.h).
 */
#include <errno.h>
#include <stdlib.h>

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
#define V(path) file_rules__lookup(&fc, 3, path)

static void test_scope(void **state)
{
	(void)state;
	pol.files.has_read = pol.files.has_write = true;
	LIST(read, "/usr", "/etc", "/task");
	LIST(write, "/task/out", "/tmp/task");
	LIST(deny, "/task/.git/hooks");
	compile();
	EXPECT_EQ(V("/usr/bin/env"), R);
	EXPECT_EQ(V("/usr"), R);
	EXPECT_EQ(V("/usrx"), 0);		/* component boundary */
	EXPECT_EQ(V("/var/log/x"), 0);
	EXPECT_EQ(V("/task/in"), R);
	EXPECT_EQ(V("/task/out"), R | W);
	EXPECT_EQ(V("/task/out/a/b"), R | W);
	EXPECT_EQ(V("/task/outside"), R);
	EXPECT_EQ(V("/tmp/task/x"), R | W);	/* write implies read */
	EXPECT_EQ(V("/tmp/other"), 0);
	EXPECT_EQ(V("/task/.git/hooks/pre-commit") & FILE_DENY, FILE_DENY);
	EXPECT_EQ(V("/task/.git/config"), R);
	/* Renaming a directory above a deny or protected path is refused:
	 * the flag holds on the directory itself, not below it. */
	EXPECT_EQ(V("/task/.git"), R | FILE_GUARDED_BELOW);
	EXPECT_EQ(V("/task"), R | FILE_GUARDED_BELOW);
	EXPECT_EQ(V("/home/alice"), FILE_GUARDED_BELOW);
	EXPECT_EQ(V("/home/alice/.config"), FILE_GUARDED_BELOW);
	EXPECT_EQ(V("/home/alice/.configx"), 0);
	/* Credentials stay protected inside a readable scope. */
	EXPECT_EQ(V("/etc/shadow") & FILE_PROTECTED, FILE_PROTECTED);
	EXPECT_EQ(V("/etc/passwd"), R);
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
	EXPECT_EQ(V("/anything/at/all"), R);
	EXPECT_EQ(V("/"), R | FILE_GUARDED_BELOW);
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
	EXPECT_EQ(V("/var/run/secrets/kubernetes.io/serviceaccount/token"), R);
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
	EXPECT_EQ(V(p), R);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_scope, setup, teardown),
		cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_override, setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_paths, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unix_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_home_too_long, setup, teardown),
	};

	return cmocka_run_group_tests_name("file", tests, NULL, NULL);
}
