// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* sd_notify(3)'s datagram, by hand (agent/notify.h says why). */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "notify.h"

int notify__send(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n;
	socklen_t len;
	int fd, err = 0;

	if (!path || !*path)
		return 0;
	n = strlen(path);
	/* A path, or '@' for an abstract name (sd_notify(3)); anything else
	 * (vsock's "vsock:" included) is not for us, and said so. */
	if ((path[0] != '/' && path[0] != '@') || n >= sizeof(sa.sun_path) ||
	    (path[0] == '@' && n < 2))
		return -EINVAL;
	memcpy(sa.sun_path, path, n);
	/* An abstract address is the name after a NUL, exactly n bytes: no
	 * terminator counts in its length, or the kernel looks up another
	 * name. */
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* MSG_NOSIGNAL: a vanished listener is an error here, not a signal;
	 * MSG_DONTWAIT: a stuck systemd never stalls the agent's loop. */
	if (sendto(fd, state, strlen(state), MSG_NOSIGNAL | MSG_DONTWAIT,
		   (struct sockaddr *)&sa, len) < 0)
		err = -errno;
	close(fd);
	return err;
}

int notify__sendf(const char *fmt, ...)
{
	char buf[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return notify__send(buf);
}
