// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * opencount: how often files are opened, by anyone (tests/vm/limits.sh).
 *
 *   opencount SECONDS FILE...
 *
 * Watches each FILE with inotify IN_OPEN for SECONDS, then prints one
 * line per FILE that was opened, "COUNT FILE", and "total COUNT" last.
 * Exit 0; 1 when a watch or the wait failed (said on stderr). The VM has
 * no strace: this tells from outside whether the agent still re-reads a
 * cgroup file that inotify watches for it.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	long long end, total = 0, *count = NULL;
	int *wd = NULL, fd = -1, n, i, rc = 1;
	struct pollfd pfd;
	ssize_t len;

	if (argc < 3 || atoi(argv[1]) <= 0) {
		fprintf(stderr, "usage: opencount SECONDS FILE...\n");
		return 2;
	}
	n = argc - 2;
	wd = calloc(n, sizeof(*wd));
	count = calloc(n, sizeof(*count));
	fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (!wd || !count || fd < 0) {
		fprintf(stderr, "opencount: inotify_init1: %s\n", strerror(errno));
		goto out;
	}
	for (i = 0; i < n; i++) {
		wd[i] = inotify_add_watch(fd, argv[i + 2], IN_OPEN);
		if (wd[i] < 0) {
			fprintf(stderr, "opencount: watching %s: %s\n", argv[i + 2], strerror(errno));
			goto out;
		}
	}
	end = now_ms() + 1000LL * atoi(argv[1]);
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	while (now_ms() < end) {
		if (poll(&pfd, 1, (int)(end - now_ms())) < 0 && errno != EINTR) {
			fprintf(stderr, "opencount: poll: %s\n", strerror(errno));
			goto out;
		}
		while ((len = read(fd, buf, sizeof(buf))) > 0) {
			for (char *p = buf; p < buf + len;) {
				const struct inotify_event *ev = (const void *)p;

				p += sizeof(*ev) + ev->len;
				for (i = 0; i < n; i++)
					if (wd[i] == ev->wd && (ev->mask & IN_OPEN))
						count[i]++;
			}
		}
	}
	for (i = 0; i < n; i++) {
		if (count[i])
			printf("%lld %s\n", count[i], argv[i + 2]);
		total += count[i];
	}
	printf("total %lld\n", total);
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	free(wd);
	free(count);
	return rc;
}
