// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * SHA-256 of executed programs (agent/exec_hash.c): the digest against
 * FIPS 180-2's test vector, the cache by (dev, ino, mtime, size), a file
 * that changes rehashed, the size cap, and an exec record's fields: the
 * image by /proc/PID/exe or by path only when it is the file that ran, a
 * script by its path, and the errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "test.h"
#include "exec.h"
#include "exec_hash.h"

/* SHA-256("abc"), FIPS 180-2 appendix B.1. */
#define ABC_SHA256 "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
/* SHA-256("abd"). */
#define ABD_SHA256 "a52d159f262b2c6ddb724a61840befc36eb30c88877a4030b65cbe86298449c9"

static char dir[] = "/tmp/stockade-test-hash.XXXXXX";
static char path[sizeof(dir) + 16], spath[sizeof(dir) + 16];

static void put(const char *p, const char *s)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, s, strlen(s)), (int)strlen(s));
	close(fd);
}

static void hex(const uint8_t *d, char *out)
{
	int i;

	for (i = 0; i < EXEC_HASH_LEN; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

static int digest(struct exec_hash *h, const char *p, char *out)
{
	struct stat st;
	uint8_t d[EXEC_HASH_LEN];
	int fd = open(p, O_RDONLY | O_CLOEXEC), err;

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	err = exec_hash__fd(h, fd, &st, d);
	close(fd);
	if (!err)
		hex(d, out);
	return err;
}

static int setup(void **state)
{
	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/prog", dir);
	snprintf(spath, sizeof(spath), "%s/script", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	unlink(spath);
	rmdir(dir);
	return 0;
}

static void test_digest_and_cache(void **state)
{
	struct exec_hash *h;
	struct exec_hash_stats s;
	char out[EXEC_HASH_LEN * 2 + 1];

	(void)state;
	assert_int_equal(exec_hash__new(&h), 0);
	put(path, "abc");
	/* Just written: hashed, not kept (it may change again unseen). */
	if (EXPECT_EQ(digest(h, path, out), 0))
		EXPECT_STR(out, ABC_SHA256);
	exec_hash__stats(h, &s);
	EXPECT_EQ(s.hashed, 1);
	if (EXPECT_EQ(digest(h, path, out), 0))
		EXPECT_STR(out, ABC_SHA256);
	exec_hash__stats(h, &s);
	EXPECT_EQ(s.hashed, 2);
	EXPECT_EQ(s.cached, 0);
	/* No racy window: the same file version comes from the cache. */
	exec_hash__set_racy(h, 0);
	if (EXPECT_EQ(digest(h, path, out), 0))
		EXPECT_STR(out, ABC_SHA256);
	if (EXPECT_EQ(digest(h, path, out), 0))
		EXPECT_STR(out, ABC_SHA256);
	exec_hash__stats(h, &s);
	EXPECT_EQ(s.hashed, 3);
	EXPECT_EQ(s.cached, 1);
	EXPECT_EQ(s.bytes, 9);
	/* Rewritten in place (same inode and size) a moment later, its
	 * timestamps may still move (a new jiffy): with the racy window
	 * back, it is read again whatever they say. */
	exec_hash__set_racy(h, EXEC_HASH_RACY_NS);
	put(path, "abd");
	if (EXPECT_EQ(digest(h, path, out), 0))
		EXPECT_STR(out, ABD_SHA256);
	exec_hash__stats(h, &s);
	EXPECT_EQ(s.hashed, 4);
	/* Over the cap: not hashed. */
	exec_hash__set_max(h, 2);
	put(path, "abcd");
	EXPECT_EQ(digest(h, path, out), -EFBIG);
	exec_hash__free(h);
	DONE();
}

/* An exec record of this process (its /proc/PID/exe is the test binary)
 * or of a file by path, and a script. */
static void test_fields(void **state)
{
	static struct exec_event x;
	struct exec_hash *h;
	struct json j;
	struct stat st;

	(void)state;
	assert_int_equal(exec_hash__new(&h), 0);
	json_init(&j);
	put(path, "abc");
	assert_int_equal(stat(path, &st), 0);

	/* A process gone (pid 0 has no /proc entry): the path, checked. */
	memset(&x, 0, sizeof(x));
	snprintf(x.binary, sizeof(x.binary), "%s", path);
	x.dev = ((uint64_t)major(st.st_dev) << 20) | minor(st.st_dev);
	x.ino = st.st_ino;
	json_begin(&j);
	exec_hash__fields(h, &j, &x);
	json_end(&j);
	EXPECT(strstr(j.buf, "\"sha256\":\"" ABC_SHA256 "\""));

	/* The path names another file now: no digest, "changed". */
	x.ino++;
	json_begin(&j);
	exec_hash__fields(h, &j, &x);
	json_end(&j);
	EXPECT(strstr(j.buf, "\"sha256_error\":\"changed\"") && !strstr(j.buf, "\"sha256\":"));

	/* A script: its interpreter by /proc/PID/exe (this test binary, a
	 * running process), the script by its path, relative to cwd. */
	assert_int_equal(stat("/proc/self/exe", &st), 0);
	x.e.pid = (uint32_t)getpid();
	x.dev = ((uint64_t)major(st.st_dev) << 20) | minor(st.st_dev);
	x.ino = st.st_ino;
	x.flags = EXEC_F_SCRIPT;
	snprintf(x.binary, sizeof(x.binary), "/nonexistent");
	snprintf(x.cwd, sizeof(x.cwd), "%s", dir);
	snprintf(x.filename, sizeof(x.filename), "script");
	put(spath, "abd");
	json_begin(&j);
	exec_hash__fields(h, &j, &x);
	json_end(&j);
	EXPECT(strstr(j.buf, "\"interpreter_sha256\":\""));
	EXPECT(strstr(j.buf, "\"sha256\":\"" ABD_SHA256 "\""));
	/* The script removed since. */
	unlink(spath);
	json_begin(&j);
	exec_hash__fields(h, &j, &x);
	json_end(&j);
	EXPECT(strstr(j.buf, "\"sha256_error\":\"changed\""));
	json_free(&j);
	exec_hash__free(h);
	DONE();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_digest_and_cache),
		cmocka_unit_test(test_fields),
	};

	return cmocka_run_group_tests_name("exec_hash", tests, setup, teardown);
}
