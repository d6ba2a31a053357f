// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * systemd's notify datagram by hand (agent/notify.c): it reaches a
 * listener on a path and on an abstract name ('@', whose address length
 * must not count a terminator), arrives whole, and a socket name that is
 * neither is refused rather than guessed at; no $NOTIFY_SOCKET sends
 * nothing and is no error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "test.h"
#include "notify.h"

/* A datagram listener at name ('@' abstract, or a path); -1 on failure. */
static int listener(const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n = strlen(name);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	memcpy(sa.sun_path, name, n);
	if (name[0] == '@')
		sa.sun_path[0] = '\0';
	if (bind(fd, (struct sockaddr *)&sa,
		 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n))) {
		close(fd);
		return -1;
	}
	return fd;
}

static void expect_datagram(int fd, const char *want)
{
	char buf[256];
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);

	if (!EXPECT(n >= 0))
		return;
	buf[n] = '\0';
	EXPECT_STR(buf, want);
}

static void test_abstract(void **state)
{
	char name[64];
	int fd;

	(void)state;
	snprintf(name, sizeof(name), "@stockade-test-notify-%d", getpid());
	fd = listener(name);
	assert_true(fd >= 0);
	setenv("NOTIFY_SOCKET", name, 1);
	EXPECT_EQ(notify__send("READY=1\nSTATUS=ok"), 0);
	expect_datagram(fd, "READY=1\nSTATUS=ok");
	EXPECT_EQ(notify__sendf("STOPPING=%d", 1), 0);
	expect_datagram(fd, "STOPPING=1");
	close(fd);
	/* Nobody listens now: an error, said by the caller, not a crash. */
	EXPECT_EQ(notify__send("READY=1"), -ECONNREFUSED);
	unsetenv("NOTIFY_SOCKET");
	DONE();
}

static void test_path(void **state)
{
	char dir[] = "/tmp/stockade-notify-XXXXXX", path[128];
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/notify", dir);
	fd = listener(path);
	assert_true(fd >= 0);
	setenv("NOTIFY_SOCKET", path, 1);
	EXPECT_EQ(notify__send("READY=1"), 0);
	expect_datagram(fd, "READY=1");
	close(fd);
	unlink(path);
	rmdir(dir);
	unsetenv("NOTIFY_SOCKET");
	DONE();
}

static void test_none_and_invalid(void **state)
{
	(void)state;
	unsetenv("NOTIFY_SOCKET");
	EXPECT_EQ(notify__send("READY=1"), 0);
	setenv("NOTIFY_SOCKET", "", 1);
	EXPECT_EQ(notify__send("READY=1"), 0);
	setenv("NOTIFY_SOCKET", "relative/path", 1);
	EXPECT_EQ(notify__send("READY=1"), -EINVAL);
	setenv("NOTIFY_SOCKET", "@", 1);
	EXPECT_EQ(notify__send("READY=1"), -EINVAL);
	setenv("NOTIFY_SOCKET", "vsock:2:1234", 1);
	EXPECT_EQ(notify__send("READY=1"), -EINVAL);
	unsetenv("NOTIFY_SOCKET");
	DONE();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_abstract),
		cmocka_unit_test(test_path),
		cmocka_unit_test(test_none_and_invalid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
