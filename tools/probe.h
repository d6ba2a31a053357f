/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * What the syscall probes share (fileprobe, netprobe, ipcprobe, privprobe):
 * joining a cgroup, the pid line, the result line and the setup error. The
 * tests parse these lines, so each is written in one place:
 *
 *   pid=N                     before the probe acts (probe_print_pid)
 *   OK | ENAME                the probe's result (probe_result): the
 *                             errno's macro name, as strerrorname_np
 *                             gives it, E? for one it does not know
 *   PROBE_NAME: WHAT: CAUSE   on stderr, exit status 2 (probe_setup_fail)
 *
 * A tool defines PROBE_NAME before including this header.
 */
#ifndef STOCKADE_PROBE_H
#define STOCKADE_PROBE_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef PROBE_NAME
#error "define PROBE_NAME (the tool's name, for its messages) before probe.h"
#endif

static inline const char *probe_errname(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "E?";
}

/* rc 0: OK; anything else: the name of errno (set by the failed call). */
static inline int probe_result(int rc)
{
	if (rc == 0) {
		printf("OK\n");
		return 0;
	}
	printf("%s\n", probe_errname(errno));
	return 1;
}

static inline int probe_setup_fail(const char *what)
{
	fprintf(stderr, PROBE_NAME ": %s: %s\n", what, strerror(errno));
	return 2;
}

/* Move this process into the cgroup DIR (its cgroup.procs). */
static inline int probe_join_cgroup(const char *dir)
{
	char path[4096], pid[32];
	int fd, n, ok;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = snprintf(pid, sizeof(pid), "%d\n", getpid());
	ok = write(fd, pid, (size_t)n) == n;
	close(fd);
	return ok ? 0 : -1;
}

static inline void probe_print_pid(void)
{
	printf("pid=%d\n", getpid());
}

/* --wait FILE: up to 60 s until FILE exists. access() runs no hook the
 * agent judges, so waiting leaves no record. */
static inline void probe_wait_file(const char *path)
{
	int tries;

	for (tries = 0; path && access(path, F_OK) && tries < 6000; tries++)
		usleep(10000);
}

#endif /* STOCKADE_PROBE_H */
