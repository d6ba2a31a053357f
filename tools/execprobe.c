// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * execprobe: run one program, or map one piece of memory executable, the
 * way confined code would, and print what the kernel said. The exec tests
 * (tests/vm/exec.sh) run it inside a sandbox, outside it, and in an
 * audit-mode sandbox.
 *
 *   execprobe [--cgroup DIR] OP ARGS...
 *
 * Exec actions replace this process (the pid stays, so the test finds the
 * records by it); the new image prints OK. ARGV, when given, is the new
 * image's whole argv: a busybox copy wants an applet, `echo OK`; without
 * it the argv is {PATH, "exec-ok"}, for a copy of execprobe, which then
 * prints OK.
 *   exec PATH [ARGV...]           execve(PATH)
 *   copy-exec SRC DST [ARGV...]   copy SRC to DST (0755), then execve(DST):
 *                                 a binary the sandbox wrote itself
 *   deleted-exec PATH [ARGV...]   open PATH, unlink it, execveat(fd, "",
 *                                 AT_EMPTY_PATH)
 *   memfd-exec SRC [ARGV...]      memfd_create, copy SRC into it,
 *                                 execveat(fd, "", AT_EMPTY_PATH)
 *   memfd-fexecve SRC [ARGV...]   the same through glibc's fexecve()
 * Mappings (one syscall judged each; the setup before it is not):
 *   mmap-exec PATH                mmap(PROT_READ|PROT_EXEC, MAP_PRIVATE)
 *   mprotect-exec PATH            mmap(PROT_READ), then mprotect(+EXEC)
 *   memfd-mmap                    a memfd of one page, mmap PROT_EXEC
 *   anon-mprotect                 anonymous mmap(PROT_READ|PROT_WRITE),
 *                                 then mprotect(PROT_READ|PROT_EXEC): a JIT
 *   anon-mmap-exec                anonymous mmap(PROT_READ|PROT_WRITE|
 *                                 PROT_EXEC)
 *   shared-anon-mprotect          MAP_SHARED|MAP_ANONYMOUS, then
 *                                 mprotect(+EXEC) (its file is shmem's
 *                                 "dev/zero": judged as anonymous memory)
 * --cgroup DIR joins that cgroup (writes cgroup.procs) before anything.
 * Output: "pid=N", then "OK" or the errno name. Exit status: 0 for OK, 1
 * otherwise, 2 for a usage or setup error (with a message on stderr).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PROBE_NAME "execprobe"
#include "probe.h"

#ifndef MFD_EXEC
#define MFD_EXEC	0x0010U
#endif

extern char **environ;

/* The new image's argv: ARGV as given, else {path, "exec-ok"}. */
static char **argv_of(const char *path, int argc, char **argv)
{
	static char *dflt[3];

	if (argc > 0)
		return argv;
	dflt[0] = (char *)path;
	dflt[1] = (char *)"exec-ok";
	return dflt;
}

/* Copy src's bytes into fd; 0 or -1 (errno set). */
static int copy_into(const char *src, int fd)
{
	char buf[65536];
	ssize_t n;
	int in = open(src, O_RDONLY | O_CLOEXEC);

	if (in < 0)
		return -1;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(fd, buf, (size_t)n) != n) {
			n = -1;
			break;
		}
	close(in);
	return n < 0 ? -1 : 0;
}

/* A memfd that may be executed: MFD_EXEC where the kernel knows it
 * (6.3 on: without either flag it warns), else none. */
static int exec_memfd(void)
{
	int fd = memfd_create("execprobe", MFD_EXEC);

	if (fd < 0 && errno == EINVAL)
		fd = memfd_create("execprobe", 0);
	return fd;
}

static int do_execveat(int fd, char **argv)
{
	return (int)syscall(SYS_execveat, fd, "", argv, environ, AT_EMPTY_PATH);
}

/* Map len bytes of fd (or anonymous memory with fd -1). */
static void *map(int fd, size_t len, int prot, int flags)
{
	void *p = mmap(NULL, len, prot, flags | (fd < 0 ? MAP_ANONYMOUS : 0),
		       fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

static int file_map(const char *path, int prot)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return probe_setup_fail(path);
	probe_print_pid();
	fflush(stdout);
	return probe_result(map(fd, 4096, prot, MAP_PRIVATE) ? 0 : -1);
}

/* mmap without PROT_EXEC (not judged), then mprotect adding it. */
static int map_then_protect(int fd, int flags)
{
	void *p = map(fd, 4096, fd < 0 ? PROT_READ | PROT_WRITE : PROT_READ, flags);

	if (!p)
		return probe_setup_fail("mmap");
	probe_print_pid();
	fflush(stdout);
	return probe_result(mprotect(p, 4096, PROT_READ | PROT_EXEC));
}

static int run(const char *op, int argc, char **argv)
{
	int fd;

	if (!strcmp(op, "exec") && argc >= 1) {
		probe_print_pid();
		fflush(stdout);
		execve(argv[0], argv_of(argv[0], argc - 1, argv + 1), environ);
		return probe_result(-1);
	}
	if (!strcmp(op, "copy-exec") && argc >= 2) {
		fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
		if (fd < 0 || copy_into(argv[0], fd))
			return probe_setup_fail(argv[1]);
		close(fd);
		probe_print_pid();
		fflush(stdout);
		execve(argv[1], argv_of(argv[1], argc - 2, argv + 2), environ);
		return probe_result(-1);
	}
	if (!strcmp(op, "deleted-exec") && argc >= 1) {
		fd = open(argv[0], O_RDONLY);
		if (fd < 0 || unlink(argv[0]))
			return probe_setup_fail(argv[0]);
		probe_print_pid();
		fflush(stdout);
		return probe_result(do_execveat(fd, argv_of(argv[0], argc - 1, argv + 1)));
	}
	if ((!strcmp(op, "memfd-exec") || !strcmp(op, "memfd-fexecve")) && argc >= 1) {
		fd = exec_memfd();
		if (fd < 0 || copy_into(argv[0], fd))
			return probe_setup_fail("memfd");
		probe_print_pid();
		fflush(stdout);
		if (op[6] == 'f')
			fexecve(fd, argv_of(argv[0], argc - 1, argv + 1), environ);
		else
			do_execveat(fd, argv_of(argv[0], argc - 1, argv + 1));
		return probe_result(-1);
	}
	if (!strcmp(op, "mmap-exec") && argc == 1)
		return file_map(argv[0], PROT_READ | PROT_EXEC);
	if (!strcmp(op, "mprotect-exec") && argc == 1) {
		fd = open(argv[0], O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return probe_setup_fail(argv[0]);
		return map_then_protect(fd, MAP_PRIVATE);
	}
	if (!strcmp(op, "memfd-mmap") && argc == 0) {
		fd = exec_memfd();
		if (fd < 0 || ftruncate(fd, 4096))
			return probe_setup_fail("memfd");
		probe_print_pid();
		fflush(stdout);
		return probe_result(map(fd, 4096, PROT_READ | PROT_EXEC, MAP_SHARED) ? 0 : -1);
	}
	if (!strcmp(op, "anon-mprotect") && argc == 0)
		return map_then_protect(-1, MAP_PRIVATE);
	if (!strcmp(op, "shared-anon-mprotect") && argc == 0)
		return map_then_protect(-1, MAP_SHARED);
	if (!strcmp(op, "anon-mmap-exec") && argc == 0) {
		probe_print_pid();
		fflush(stdout);
		return probe_result(map(-1, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
					MAP_PRIVATE) ? 0 : -1);
	}
	fprintf(stderr, "usage: execprobe [--cgroup DIR] OP ARGS...\n"
		"  exec PATH [ARGV...]    copy-exec SRC DST [ARGV...]\n"
		"  deleted-exec PATH [ARGV...]    memfd-exec SRC [ARGV...]\n"
		"  memfd-fexecve SRC [ARGV...]    mmap-exec PATH    mprotect-exec PATH\n"
		"  memfd-mmap    anon-mprotect    anon-mmap-exec    shared-anon-mprotect\n");
	return 2;
}

int main(int argc, char **argv)
{
	/* Reached through an exec action: the pid line came before. */
	if (argc == 2 && !strcmp(argv[1], "exec-ok")) {
		printf("OK\n");
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "--cgroup")) {
		if (probe_join_cgroup(argv[2]))
			return probe_setup_fail(argv[2]);
		argc -= 2;
		argv += 2;
	}
	if (argc < 2)
		return run("", 0, NULL);
	return run(argv[1], argc - 2, argv + 2);
}
