// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * hog: use up a resource the way runaway or hostile code would, for the
 * limit tests (tests/vm/limits.sh).
 *
 *   hog [--cgroup DIR] [--wait FILE] OP ARGS...
 *     mem SIZE [hold]     allocate SIZE of anonymous memory and touch every
 *                         page, then print "OK"; with hold, print "held"
 *                         and sleep until killed
 *     fill PATH SIZE      write SIZE bytes into the file PATH (tmpfs,
 *                         /dev/shm) 1 MiB at a time; prints "OK" or the
 *                         errno of the failed write
 *     forkbomb            every process forks as fast as it can, forever;
 *                         stop it with cgroup.kill
 *     forks N             fork N children that exit at once, wait for
 *                         them; prints "OK" or how many forks failed
 *     sleeper PIDFILE     double fork with setsid in between: the
 *                         grandchild, in a session of its own and
 *                         reparented away from us, writes its pid to
 *                         PIDFILE and sleeps; we exit once it has
 *     spin                burn CPU until killed
 *
 * SIZE takes K, M and G suffixes (powers of 1024). --cgroup DIR joins that
 * cgroup first (writes cgroup.procs); --wait FILE waits (up to 60 s) for
 * FILE to exist before acting. The first line is always "pid=N".
 * Exit status: 0 for OK, 1 for a failed operation, 2 for usage or setup.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIB	(1024UL * 1024UL)

static int usage(void)
{
	fprintf(stderr, "usage: hog [--cgroup DIR] [--wait FILE] mem SIZE [hold] | fill PATH SIZE | forkbomb | forks N | sleeper PIDFILE | spin\n");
	return 2;
}

static int parse_size(const char *s, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'G': v *= 1024; /* fall through */
	case 'M': v *= 1024; /* fall through */
	case 'K': v *= 1024; end++; break;
	case '\0': break;
	default: return -1;
	}
	if (*end)
		return -1;
	*out = v;
	return 0;
}

static int join_cgroup(const char *dir)
{
	char path[4096], pid[32];
	int fd, n;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = snprintf(pid, sizeof(pid), "%d\n", getpid());
	if (write(fd, pid, (size_t)n) != n) {
		close(fd);
		return -1;
	}
	return close(fd);
}

static int wait_file(const char *path)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	int i;

	for (i = 0; i < 3000; i++) {
		if (!access(path, F_OK))
			return 0;
		nanosleep(&ts, NULL);
	}
	return -1;
}

static int op_mem(unsigned long size, int hold)
{
	unsigned long off;
	long page = sysconf(_SC_PAGESIZE);
	char *p;

	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (p == MAP_FAILED) {
		printf("mmap: %s\n", strerror(errno));
		return 1;
	}
	/* Touching is what charges the pages; the OOM killer strikes here. */
	for (off = 0; off < size; off += (unsigned long)page)
		p[off] = 1;
	if (hold) {
		printf("held\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	printf("OK\n");
	return 0;
}

static int op_fill(const char *path, unsigned long size)
{
	static char buf[MIB];
	unsigned long done = 0;
	int fd;

	memset(buf, 'x', sizeof(buf));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		printf("open %s: %s\n", path, strerror(errno));
		return 1;
	}
	while (done < size) {
		ssize_t n = write(fd, buf, size - done < MIB ? size - done : MIB);

		if (n < 0) {
			printf("written=%lu\n%s\n", done, strerrorname_np(errno));
			close(fd);
			return 1;
		}
		done += (unsigned long)n;
	}
	close(fd);
	printf("written=%lu\nOK\n", done);
	return 0;
}

static int op_forkbomb(void)
{
	/* Children run this same loop: the classic bomb, bounded only by
	 * pids.max. Failures are what the test wants to see counted. */
	for (;;)
		fork();
	return 0;
}

static int op_forks(unsigned long n)
{
	unsigned long i, failed = 0;
	pid_t pid;

	for (i = 0; i < n; i++) {
		pid = fork();
		if (pid == 0)
			_exit(0);
		if (pid < 0)
			failed++;
	}
	while (wait(NULL) > 0)
		;
	if (failed) {
		printf("failed=%lu\n", failed);
		return 1;
	}
	printf("OK\n");
	return 0;
}

static int op_sleeper(const char *pidfile)
{
	pid_t child = fork();
	int status;

	if (child < 0)
		return 1;
	if (child == 0) {
		pid_t gc;

		/* A new session: no signal to our process group reaches it. */
		if (setsid() < 0)
			_exit(1);
		gc = fork();
		if (gc < 0)
			_exit(1);
		if (gc == 0) {
			char tmp[4096];
			FILE *f;

			snprintf(tmp, sizeof(tmp), "%s.tmp", pidfile);
			f = fopen(tmp, "w");
			if (!f)
				_exit(1);
			fprintf(f, "%d %d\n", getpid(), getsid(0));
			fclose(f);
			rename(tmp, pidfile);
			for (;;)
				pause();
		}
		_exit(0);
	}
	waitpid(child, &status, 0);
	if (wait_file(pidfile))
		return 1;
	printf("OK\n");
	return 0;
}

static int op_spin(void)
{
	volatile unsigned long x = 0;

	for (;;)
		x++;
	return 0;
}

int main(int argc, char **argv)
{
	const char *cgroup = NULL, *waitf = NULL;
	unsigned long size;
	int i = 1;

	while (i + 1 < argc && !strncmp(argv[i], "--", 2)) {
		if (!strcmp(argv[i], "--cgroup"))
			cgroup = argv[i + 1];
		else if (!strcmp(argv[i], "--wait"))
			waitf = argv[i + 1];
		else
			return usage();
		i += 2;
	}
	if (i >= argc)
		return usage();
	if (cgroup && join_cgroup(cgroup)) {
		fprintf(stderr, "hog: joining %s: %s\n", cgroup, strerror(errno));
		return 2;
	}
	printf("pid=%d\n", getpid());
	fflush(stdout);
	if (waitf && wait_file(waitf)) {
		fprintf(stderr, "hog: %s did not appear within 60 s\n", waitf);
		return 2;
	}
	if (!strcmp(argv[i], "mem") && i + 1 < argc && !parse_size(argv[i + 1], &size))
		return op_mem(size, i + 2 < argc && !strcmp(argv[i + 2], "hold"));
	if (!strcmp(argv[i], "fill") && i + 2 < argc && !parse_size(argv[i + 2], &size))
		return op_fill(argv[i + 1], size);
	if (!strcmp(argv[i], "forkbomb"))
		return op_forkbomb();
	if (!strcmp(argv[i], "forks") && i + 1 < argc && !parse_size(argv[i + 1], &size))
		return op_forks(size);
	if (!strcmp(argv[i], "sleeper") && i + 1 < argc)
		return op_sleeper(argv[i + 1]);
	if (!strcmp(argv[i], "spin"))
		return op_spin();
	return usage();
}
