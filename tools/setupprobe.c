// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * setupprobe: behave like a container runtime towards a new cgroup, so
 * the setup pass (include/setup.h) can be tested without one. Run outside
 * every sandbox; it forks a child, moves the child into CGDIR from the
 * parent (as runc moves its init), lets it go, and waits for it. Every
 * line the child (and its children) print is one step's result.
 *
 *   setupprobe CGDIR MODE [ARGS...]
 *
 * Modes (the child's steps; RES is OK or the errno's name):
 *   open PATH        setup-open=RES (open(PATH) before any exec), then the
 *                    payload: unshare(CLONE_NEWNS) and exec fileprobe
 *                    open-read PATH (which prints pid= and its RES)
 *   same-ns PATH     setup-open=RES, then exec fileprobe open-read PATH in
 *                    the mover's mount namespace (an exec that ends it)
 *   memfd PATH       re-execs itself from a memfd copy in the mover's
 *                    mount namespace, as runc does (the pass goes on):
 *                    memfd-open=RES, then the payload as for open
 *   memfd-fail PATH  an exec of a memfd that is no program, in the
 *                    mover's mount namespace (opened as runc's clone
 *                    would be, then ENOEXEC): failed-exec=RES, then the
 *                    payload as for open, at the same self_exec_id
 *   deadline PATH MS sleeps MS milliseconds, then late-open=RES (no exec)
 *   fork PATH        forks: its child prints child-open=RES, then execs
 *                    the payload as for open
 *   hold SECONDS     prints held=PID and sleeps (a target for ptrace and
 *                    signals from the sandbox)
 *   thread PATH      the child has a second thread before it is moved:
 *                    leader-open=RES, then thread-open=RES (the other
 *                    thread's open, after the leader's), and no exec
 *   memfd-race PATH US
 *                    the other order, as runc's: the child copies itself
 *                    into a memfd and re-execs it, and the parent moves
 *                    it US microseconds after the child said it was about
 *                    to (a busy wait: on a second CPU); the parent prints
 *                    moved=PID, in-exec=yes|no (was the exec still
 *                    under way after the move: the child's comm not yet
 *                    the new image's), pre=yes|no (the same, read before
 *                    the move's write) and write-us=N (how long the
 *                    write to cgroup.procs took), then lets the new image
 *                    go on:
 *                    memfd-open=RES, then the payload as for open. Run as
 *                    setupprobe-ld (a dynamic build whose ELF
 *                    interpreter's path takes long to resolve: the
 *                    Makefile, tests/vm/setup-race.sh), a move during the
 *                    exec lands mostly between its bprm_check and its
 *                    interpreter's open
 *
 * FILEPROBE (env) is the payload binary, default: fileprobe beside this
 * one. SETUPPROBE_V1 (env, not memfd-race): a cgroup v1 directory the
 * child is moved into too, right after CGDIR (runc on a hybrid host).
 * Nothing is written outside CGDIR/cgroup.procs (and that one's).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char payload[PATH_MAX];
static pthread_t thread;

static const char *res(int rc)
{
	static char buf[32];

	if (rc >= 0)
		return "OK";
	switch (errno) {
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case ENOENT: return "ENOENT";
	case ENOEXEC: return "ENOEXEC";
	default:
		snprintf(buf, sizeof(buf), "errno%d", errno);
		return buf;
	}
}

static void step(const char *name, int rc)
{
	printf("%s=%s\n", name, res(rc));
	fflush(stdout);
}

static int try_open(const char *path)
{
	int fd = open(path, O_RDONLY);

	if (fd >= 0)
		close(fd);
	return fd;
}

/* The payload: fileprobe open-read PATH, in a mount namespace of its own
 * (new_ns) as a container's, or in the mover's. */
static void exec_payload(const char *path, int new_ns)
{
	char *argv[] = { payload, "open-read", (char *)path, NULL };

	if (new_ns && unshare(CLONE_NEWNS)) {
		step("unshare", -1);
		_exit(1);
	}
	execv(payload, argv);
	step("exec-payload", -1);
	_exit(1);
}

/* Copy /proc/self/exe into a memfd and exec that, with argv; ready >= 0:
 * say "r" there just before the exec. */
static void exec_memfd(char **argv, int ready)
{
	int in = open("/proc/self/exe", O_RDONLY), out = memfd_create("setupprobe", 0);
	struct stat st;

	if (in < 0 || out < 0 || fstat(in, &st) ||
	    sendfile(out, in, NULL, (size_t)st.st_size) != st.st_size) {
		step("memfd-copy", -1);
		_exit(1);
	}
	close(in);
	if (ready >= 0 && (write(ready, "r", 1) != 1 || close(ready))) {
		step("memfd-ready", -1);
		_exit(1);
	}
	fexecve(out, argv, environ);
	step("memfd-exec", -1);
	_exit(1);
}

/* An exec of a memfd holding no program: the kernel opens it as an
 * exec's binary, finds no binary format, and returns ENOEXEC. */
static int exec_garbage(void)
{
	static const char junk[] = "not a program\n";
	char *av[] = { "junk", NULL };
	int fd = memfd_create("junk", 0);

	if (fd < 0 || write(fd, junk, sizeof(junk) - 1) != sizeof(junk) - 1 ||
	    fchmod(fd, 0755))
		return -1;
	fexecve(fd, av, environ);
	close(fd);
	return -1;
}

static void comm_of(pid_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	fd = open(path, O_RDONLY);
	n = fd >= 0 ? read(fd, buf, len - 1) : -1;
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
}

/* Move pid into cgdir from here (the mover); on failure it is killed. */
static int move_into(const char *cgdir, pid_t pid)
{
	char procs[PATH_MAX], buf[32];
	int fd, n;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cgdir);
	fd = open(procs, O_WRONLY);
	n = snprintf(buf, sizeof(buf), "%d\n", pid);
	if (fd < 0 || write(fd, buf, (size_t)n) != n) {
		fprintf(stderr, "setupprobe: moving %d into %s failed: %s\n", pid, procs,
			strerror(errno));
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	close(fd);
	return 0;
}

static long us_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000000L + (t.tv_nsec - t0->tv_nsec) / 1000;
}

/*
 * memfd-race (see the top): the parent's side. The child says "r" once its
 * copy is made, just before its exec; the move comes us microseconds
 * later. "m" after the move lets the new image go on (its fd number is
 * its argv[4]).
 */
static int memfd_race(char **argv, long us)
{
	char buf[4], self[32], pre[32], post[32];
	int ready[2], moved[2], status;
	struct timespec t0;
	long took;
	pid_t pid;

	if (pipe(ready) || pipe(moved))
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		char fdarg[16];
		char *av[] = { argv[0], argv[1], "memfd-race-2", argv[3], fdarg, NULL };

		close(ready[0]);
		close(moved[1]);
		snprintf(fdarg, sizeof(fdarg), "%d", moved[0]);
		exec_memfd(av, ready[1]);
	}
	close(ready[1]);
	close(moved[0]);
	if (read(ready[0], buf, 1) != 1)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (us_since(&t0) < us)
		;
	comm_of(pid, pre, sizeof(pre));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (move_into(argv[1], pid))
		return 1;
	took = us_since(&t0);
	comm_of(pid, post, sizeof(post));
	comm_of(getpid(), self, sizeof(self));
	printf("moved=%d\nin-exec=%s\npre=%s\nwrite-us=%ld\n", pid,
	       strcmp(post, self) ? "no" : "yes", strcmp(pre, self) ? "no" : "yes", took);
	fflush(stdout);
	if (write(moved[1], "m", 1) != 1)
		return 1;
	close(moved[1]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/* thread mode: the second thread waits for a byte on thread_go, then
 * opens thread_path. */
static int thread_go[2];
static const char *thread_path;

static void *second_thread(void *unused)
{
	char b;

	(void)unused;
	if (read(thread_go[0], &b, 1) == 1)
		step("thread-open", try_open(thread_path));
	return NULL;
}

static void child(int argc, char **argv)
{
	const char *mode = argv[2], *arg = argc > 3 ? argv[3] : "";
	struct timespec ts;
	pid_t pid;
	long ms;

	if (!strcmp(mode, "open")) {
		step("setup-open", try_open(arg));
		exec_payload(arg, 1);
	} else if (!strcmp(mode, "same-ns")) {
		step("setup-open", try_open(arg));
		exec_payload(arg, 0);
	} else if (!strcmp(mode, "memfd")) {
		char *av[] = { argv[0], argv[1], "memfd-2", (char *)arg, NULL };

		exec_memfd(av, -1);
	} else if (!strcmp(mode, "memfd-2")) {
		step("memfd-open", try_open(arg));
		exec_payload(arg, 1);
	} else if (!strcmp(mode, "memfd-race-2")) {
		char go;

		if (argc < 5 || read(atoi(argv[4]), &go, 1) != 1)
			_exit(1);
		step("memfd-open", try_open(arg));
		exec_payload(arg, 1);
	} else if (!strcmp(mode, "memfd-fail")) {
		step("failed-exec", exec_garbage());
		exec_payload(arg, 1);
	} else if (!strcmp(mode, "deadline")) {
		ms = argc > 4 ? atol(argv[4]) : 0;
		ts.tv_sec = ms / 1000;
		ts.tv_nsec = (ms % 1000) * 1000000;
		nanosleep(&ts, NULL);
		step("late-open", try_open(arg));
	} else if (!strcmp(mode, "fork")) {
		pid = fork();
		if (pid == 0) {
			step("child-open", try_open(arg));
			exec_payload(arg, 1);
		}
		waitpid(pid, NULL, 0);
	} else if (!strcmp(mode, "thread")) {
		step("leader-open", try_open(arg));
		if (write(thread_go[1], "t", 1) != 1)
			_exit(1);
		pthread_join(thread, NULL);
	} else if (!strcmp(mode, "hold")) {
		printf("held=%d\n", getpid());
		fflush(stdout);
		sleep((unsigned int)atoi(arg));
	} else {
		fprintf(stderr, "setupprobe: unknown mode '%s'\n", mode);
		_exit(2);
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	char buf[32], *slash;
	int go[2], ready[2], status, n;
	const char *env = getenv("FILEPROBE");
	pid_t pid;

	if (argc < 3) {
		fprintf(stderr, "usage: setupprobe CGDIR MODE [ARGS...]\n");
		return 2;
	}
	/* Re-executed from a memfd: already moved, already the child. */
	if (!strcmp(argv[2], "memfd-2") || !strcmp(argv[2], "memfd-race-2")) {
		snprintf(payload, sizeof(payload), "%s", env ? env : "");
		child(argc, argv);
	}
	if (env) {
		snprintf(payload, sizeof(payload), "%s", env);
	} else {
		n = (int)readlink("/proc/self/exe", payload, sizeof(payload) - 16);
		payload[n > 0 ? n : 0] = '\0';
		slash = strrchr(payload, '/');
		snprintf(slash ? slash + 1 : payload, 16, "fileprobe");
	}
	/* The memfd copy cannot find fileprobe beside itself. */
	setenv("FILEPROBE", payload, 1);
	if (!strcmp(argv[2], "memfd-race"))
		return argc > 4 ? memfd_race(argv, atol(argv[4])) : 2;
	if (pipe(go) || pipe(ready))
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		close(go[1]);
		close(ready[0]);
		/* thread: the second thread exists before the move (a thread
		 * made during the pass inherits it, as a forked child does). */
		if (!strcmp(argv[2], "thread")) {
			thread_path = argc > 3 ? argv[3] : "";
			if (pipe(thread_go) ||
			    pthread_create(&thread, NULL, second_thread, NULL))
				_exit(1);
		}
		/* Moved only once ready: waiting for go. */
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		close(ready[1]);
		if (read(go[0], buf, 1) != 1)
			_exit(1);
		close(go[0]);
		child(argc, argv);
	}
	close(go[0]);
	close(ready[1]);
	if (read(ready[0], buf, 1) != 1)
		return 1;
	close(ready[0]);
	/* The parent, outside every sandbox, moves the child: the mover.
	 * SETUPPROBE_V1: then into that cgroup v1 directory as well, as runc
	 * joins every hierarchy of a hybrid host. */
	if (move_into(argv[1], pid) ||
	    (getenv("SETUPPROBE_V1") && move_into(getenv("SETUPPROBE_V1"), pid)))
		return 1;
	printf("moved=%d\n", pid);
	fflush(stdout);
	if (write(go[1], "g", 1) != 1)
		return 1;
	close(go[1]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
