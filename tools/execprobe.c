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
 * The reviewer's forms (README, "Execution"):
 *   exec-env VAR=VAL PATH [ARGV...]  execve(PATH) with VAR=VAL added
 *   spawn PATH [ARGV...]          fork; the child prints its pid and
 *                                 execs PATH; OK when it exits 0, else
 *                                 FAILED (ld.so run directly: its error
 *                                 is a message and a status)
 *   opath-exec PATH [ARGV...]     open(O_PATH), execveat(AT_EMPTY_PATH)
 *   procfd-memfd SRC [ARGV...]    a memfd of SRC, execve("/proc/self/fd/N")
 *   tmpfile-exec DIR SRC [ARGV...]  O_TMPFILE in DIR, SRC copied in,
 *                                 reopened read-only, execveat
 *   shmat-exec                    SysV shm, shmat(SHM_EXEC)
 *   shared-file-mprotect PATH     open O_RDWR, MAP_SHARED RW, mprotect R+X
 *   devzero-exec                  mmap("/dev/zero", PROT_READ|PROT_EXEC)
 *   remap-shared-anon             shared anonymous RWX, remap_file_pages
 * Writable and executable at once, or executable after a write (judged
 * as anonymous memory under anon_exec: deny):
 *   file-rwx PATH                 mmap(PATH, RWX, MAP_PRIVATE)
 *   text-rwx                      mprotect(own text page, RWX)
 *   data-rwx                      mprotect(own .data page, RWX)
 *   cow-mprotect PATH             mmap(PATH, RW, MAP_PRIVATE), write a
 *                                 byte, mprotect(R+X)
 *   brk-exec                      a child: personality(READ_IMPLIES_EXEC),
 *                                 then sbrk; the parent prints KILLED when
 *                                 the child was killed, else its verdict
 *   ptrace-poke                   a child: PTRACE_TRACEME (it prints its
 *                                 pid and, refused, the errno); the parent
 *                                 peeks and pokes back a word of its text
 *   ptrace-attach-child           fork a sleeper, PTRACE_ATTACH it
 * A storm of execs (tests/vm/exec-records.sh):
 *   storm N PATH [ARGV...]        N times: vfork, execve(PATH), wait (an
 *                                 exec and an exit record each in a
 *                                 sandbox); OK when every child exited
 *                                 0, else FAILED and how many did not.
 *                                 vfork: no page tables copied, so under
 *                                 TCG the records' cost is what is timed
 * --cgroup DIR joins that cgroup (writes cgroup.procs) before anything.
 * Output: "pid=N", then "OK" or the errno name. Exit status: 0 for OK, 1
 * otherwise, 2 for a usage or setup error (with a message on stderr).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
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

/* An initialised static array: in .data, the probe's own file-backed,
 * private, writable mapping. */
static char data_page[2 * 4096] = { 1 };

static void *page_of(const void *p)
{
	return (void *)((unsigned long)p & ~4095UL);
}

/* A child's end as one line: OK for status 0, KILLED for SIGKILL,
 * FAILED otherwise. */
static int child_verdict(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return probe_setup_fail("waitpid");
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) {
		printf("KILLED\n");
		return 1;
	}
	printf(WIFEXITED(st) && !WEXITSTATUS(st) ? "OK\n" : "FAILED\n");
	return !(WIFEXITED(st) && !WEXITSTATUS(st));
}

/* fork(); the child prints its own pid line first (its records are the
 * ones judged). -1 after a setup error (printed). */
static pid_t child_first(void)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		probe_setup_fail("fork");
	if (pid == 0) {
		probe_print_pid();
		fflush(stdout);
	}
	return pid;
}

/* The child of brk-exec: exits 0 when personality() returned (its heap
 * then executable: the kernel's own doing outside anon_exec: deny). No
 * stdio after it: under the flag any mmap is PROT_EXEC, judged (and in
 * audit mode recorded) again. */
static int brk_child(void)
{
	void *p;

	if (personality(PER_LINUX | READ_IMPLIES_EXEC) < 0)
		_exit(1);
	p = sbrk(4096);
	if (p == (void *)-1)
		_exit(1);
	*(volatile char *)p = 0;
	_exit(0);
}

/* Map path read-write (mflags: shared, or private and then written: a
 * copied-on-write page), then mprotect it R+X. */
static int rw_then_exec(const char *path, int oflags, int mflags)
{
	int fd = open(path, oflags | O_CLOEXEC);
	char *p;

	if (fd < 0)
		return probe_setup_fail(path);
	p = map(fd, 4096, PROT_READ | PROT_WRITE, mflags);
	if (!p)
		return probe_setup_fail("mmap");
	if (mflags & MAP_PRIVATE)
		*(volatile char *)p ^= 1;
	probe_print_pid();
	fflush(stdout);
	return probe_result(mprotect(p, 4096, PROT_READ | PROT_EXEC));
}

static int ptrace_poke(void)
{
	pid_t pid;
	long word;
	int st;

	pid = child_first();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL)) {
			probe_result(-1);
			fflush(stdout);
			_exit(1);
		}
		raise(SIGSTOP);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid)
		return probe_setup_fail("waitpid");
	if (!WIFSTOPPED(st))
		return WIFEXITED(st) && WEXITSTATUS(st) == 1 ? 1 : probe_setup_fail("child");
	/* The same word back: proof of a write into the text, harmless. */
	errno = 0;
	word = ptrace(PTRACE_PEEKTEXT, pid, (void *)page_of((void *)ptrace_poke), NULL);
	st = errno ? -1 : (int)ptrace(PTRACE_POKETEXT, pid,
				       (void *)page_of((void *)ptrace_poke), (void *)word);
	probe_result(st);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return st ? 1 : 0;
}

/* One vfork+execve+wait of PATH: the child's wait status, or -1 after
 * a setup error (printed). Apart from the loop, so that vfork's return
 * twice clobbers none of the loop's variables. */
static int __attribute__((noinline)) spawn_wait(char *path, char **av)
{
	pid_t pid = vfork();
	int st;

	if (pid < 0) {
		probe_setup_fail("vfork");
		return -1;
	}
	if (pid == 0) {
		execve(path, av, environ);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid) {
		probe_setup_fail("waitpid");
		return -1;
	}
	return st;
}

/* storm: N vfork+execve+wait of PATH, each child's exit status judged. */
static int exec_storm(const char *count, char *path, int argc, char **argv)
{
	char **av = argv_of(path, argc, argv);
	unsigned long n, i, bad = 0;
	char *end;
	int st;

	errno = 0;
	n = strtoul(count, &end, 10);
	if (errno || end == count || *end || !n) {
		fprintf(stderr, "execprobe: storm: %s is not a count (1 or more)\n", count);
		return 2;
	}
	for (i = 0; i < n; i++) {
		st = spawn_wait(path, av);
		if (st < 0)
			return 2;
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			bad++;
	}
	if (bad) {
		printf("FAILED %lu of %lu\n", bad, n);
		return 1;
	}
	printf("OK\n");
	return 0;
}

static int ptrace_attach_child(void)
{
	pid_t pid = fork();
	int rc, st;

	if (pid < 0)
		return probe_setup_fail("fork");
	if (pid == 0) {
		pause();
		_exit(0);
	}
	probe_print_pid();
	fflush(stdout);
	rc = (int)ptrace(PTRACE_ATTACH, pid, NULL, NULL);
	if (!rc)
		waitpid(pid, &st, 0);
	probe_result(rc);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return rc ? 1 : 0;
}

static int run(const char *op, int argc, char **argv)
{
	int fd;
	void *p;

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
	if (!strcmp(op, "exec-env") && argc >= 2) {
		if (putenv(argv[0]))
			return probe_setup_fail("putenv");
		probe_print_pid();
		fflush(stdout);
		execve(argv[1], argv_of(argv[1], argc - 2, argv + 2), environ);
		return probe_result(-1);
	}
	if (!strcmp(op, "spawn") && argc >= 1) {
		pid_t pid = child_first();

		if (pid < 0)
			return 2;
		if (pid == 0) {
			execve(argv[0], argv_of(argv[0], argc - 1, argv + 1), environ);
			_exit(127);
		}
		return child_verdict(pid);
	}
	if (!strcmp(op, "storm") && argc >= 2)
		return exec_storm(argv[0], argv[1], argc - 2, argv + 2);
	if (!strcmp(op, "opath-exec") && argc >= 1) {
		fd = open(argv[0], O_PATH | O_CLOEXEC);
		if (fd < 0)
			return probe_setup_fail(argv[0]);
		probe_print_pid();
		fflush(stdout);
		return probe_result(do_execveat(fd, argv_of(argv[0], argc - 1, argv + 1)));
	}
	if (!strcmp(op, "procfd-memfd") && argc >= 1) {
		char path[64];

		fd = exec_memfd();
		if (fd < 0 || copy_into(argv[0], fd))
			return probe_setup_fail("memfd");
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		probe_print_pid();
		fflush(stdout);
		execve(path, argv_of(argv[0], argc - 1, argv + 1), environ);
		return probe_result(-1);
	}
	if (!strcmp(op, "tmpfile-exec") && argc >= 2) {
		char path[64];
		int ro;

		fd = open(argv[0], O_TMPFILE | O_RDWR, 0755);
		if (fd < 0 || copy_into(argv[1], fd))
			return probe_setup_fail("O_TMPFILE");
		/* Read-only, the writer closed: else exec says ETXTBSY. */
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		ro = open(path, O_RDONLY);
		if (ro < 0)
			return probe_setup_fail(path);
		close(fd);
		probe_print_pid();
		fflush(stdout);
		return probe_result(do_execveat(ro, argv_of(argv[1], argc - 2, argv + 2)));
	}
	if (!strcmp(op, "shmat-exec") && argc == 0) {
		/* 0700: SHM_EXEC asks for x permission; without it shmat
		 * wants CAP_IPC_OWNER (a capability refusal of its own). */
		int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0700);

		if (id < 0)
			return probe_setup_fail("shmget");
		probe_print_pid();
		fflush(stdout);
		p = shmat(id, NULL, SHM_EXEC);
		shmctl(id, IPC_RMID, NULL);
		return probe_result(p == (void *)-1 ? -1 : 0);
	}
	if (!strcmp(op, "shared-file-mprotect") && argc == 1)
		return rw_then_exec(argv[0], O_RDWR, MAP_SHARED);
	if (!strcmp(op, "devzero-exec") && argc == 0) {
		fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return probe_setup_fail("/dev/zero");
		probe_print_pid();
		fflush(stdout);
		return probe_result(map(fd, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE) ? 0 : -1);
	}
	if (!strcmp(op, "remap-shared-anon") && argc == 0) {
		p = map(-1, 2 * 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_SHARED);
		if (!p)
			return probe_setup_fail("mmap");
		probe_print_pid();
		fflush(stdout);
		return probe_result((int)syscall(SYS_remap_file_pages, p, 4096, 0, 1, 0));
	}
	if (!strcmp(op, "file-rwx") && argc == 1)
		return file_map(argv[0], PROT_READ | PROT_WRITE | PROT_EXEC);
	if (!strcmp(op, "text-rwx") && argc == 0) {
		probe_print_pid();
		fflush(stdout);
		return probe_result(mprotect(page_of((void *)run), 4096,
					     PROT_READ | PROT_WRITE | PROT_EXEC));
	}
	if (!strcmp(op, "data-rwx") && argc == 0) {
		probe_print_pid();
		fflush(stdout);
		return probe_result(mprotect(page_of(&data_page[4096]), 4096,
					     PROT_READ | PROT_WRITE | PROT_EXEC));
	}
	if (!strcmp(op, "cow-mprotect") && argc == 1)
		return rw_then_exec(argv[0], O_RDONLY, MAP_PRIVATE);
	if (!strcmp(op, "brk-exec") && argc == 0) {
		pid_t pid = child_first();

		if (pid < 0)
			return 2;
		if (pid == 0)
			return brk_child();
		return child_verdict(pid);
	}
	if (!strcmp(op, "ptrace-poke") && argc == 0)
		return ptrace_poke();
	if (!strcmp(op, "ptrace-attach-child") && argc == 0)
		return ptrace_attach_child();
	fprintf(stderr, "usage: execprobe [--cgroup DIR] OP ARGS...\n"
		"  exec PATH [ARGV...]    copy-exec SRC DST [ARGV...]\n"
		"  deleted-exec PATH [ARGV...]    memfd-exec SRC [ARGV...]\n"
		"  memfd-fexecve SRC [ARGV...]    mmap-exec PATH    mprotect-exec PATH\n"
		"  memfd-mmap    anon-mprotect    anon-mmap-exec    shared-anon-mprotect\n"
		"  exec-env VAR=VAL PATH [ARGV...]    spawn PATH [ARGV...]\n"
		"  opath-exec PATH [ARGV...]    procfd-memfd SRC [ARGV...]\n"
		"  tmpfile-exec DIR SRC [ARGV...]    shmat-exec    shared-file-mprotect PATH\n"
		"  devzero-exec    remap-shared-anon    file-rwx PATH    text-rwx    data-rwx\n"
		"  cow-mprotect PATH    brk-exec    ptrace-poke    ptrace-attach-child\n"
		"  storm N PATH [ARGV...]\n");
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
