// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * stamp: cause one event and print when (tests/live/latency.sh).
 *
 *   stamp kill PID SIGNAL     kill(PID, SIGNAL)
 *   stamp rename FROM TO      rename(FROM, TO)
 *   stamp mkdir DIR           mkdir(DIR, 0755)
 *
 * Prints "NS" (CLOCK_REALTIME, the agent records' ts clock) read just
 * before the system call, then exits 0; 1 if the call failed. One process
 * takes the time and makes the call: a shell's `date +%s%N; kill ...`
 * adds a fork and an exec between the two, milliseconds on a loaded
 * 2-core host, which would be counted as the agent's latency.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long long t;
	int rc;

	if (argc == 4 && !strcmp(argv[1], "kill")) {
		pid_t pid = (pid_t)atoi(argv[2]);
		int sig = atoi(argv[3]);

		t = now_ns();
		rc = kill(pid, sig);
	} else if (argc == 4 && !strcmp(argv[1], "rename")) {
		t = now_ns();
		rc = rename(argv[2], argv[3]);
	} else if (argc == 3 && !strcmp(argv[1], "mkdir")) {
		t = now_ns();
		rc = mkdir(argv[2], 0755);
	} else {
		fprintf(stderr, "usage: stamp kill PID SIGNAL | rename FROM TO | mkdir DIR\n");
		return 2;
	}
	if (rc) {
		fprintf(stderr, "stamp %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	printf("%lld\n", t);
	return 0;
}
