// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * fileprobe: make exactly one syscall-level move that confined code would
 * make against files, processes, mounts, cgroups or unix sockets, and print
 * what the kernel said. The BPF-LSM tests (tests/vm/file-scope.sh) run it
 * inside a sandbox, outside it, and in an audit-mode sandbox.
 *
 *   fileprobe [--cgroup DIR] [--wait FILE] OP ARGS...
 *
 * Actions (one syscall each, unless noted):
 *   open-read PATH            open(O_RDONLY)
 *   open-write PATH           open(O_WRONLY) of an existing file
 *   open-creat PATH           open(O_WRONLY|O_CREAT, 0644)
 *   open-trunc PATH           open(O_WRONLY|O_TRUNC)
 *   mkdir PATH | rmdir PATH | unlink PATH
 *   truncate PATH             truncate(PATH, 0)
 *   chmod PATH [MODE]         chmod, MODE octal (default 0777)
 *   chown PATH [UID:GID]      chown (default 65534:65534)
 *   setxattr PATH [NAME]      setxattr NAME=1 (default trusted.stockade:
 *                             tmpfs on 6.1 has no user.* xattrs)
 *   removexattr PATH [NAME]
 *   rename OLD NEW | link OLD NEW | symlink TARGET LINKPATH
 *   exec PATH                 execve(PATH, {PATH, "exec-ok"}) in this very
 *                             process, so the pid stays; PATH should be a
 *                             copy of fileprobe, which then prints OK
 *   mount DIR                 mount a tmpfs on DIR
 *   umount DIR | chroot DIR
 *   unshare-user              unshare(CLONE_NEWUSER)
 *   bpf                       bpf(BPF_MAP_CREATE), a 1-entry array
 *   kill PID SIG              kill(PID, SIG), SIG a number
 *   ptrace-attach PID         PTRACE_ATTACH; on success waits for the stop
 *                             and detaches, so the target runs on
 *   read-environ PID          open and read /proc/PID/environ
 *   process-vm-readv PID ADDR read 8 bytes at ADDR (from `hold`'s addr=)
 *   cgroup-move CGDIR         write our pid into CGDIR/cgroup.procs
 *   clone-into-cgroup CGDIR   clone3(CLONE_INTO_CGROUP) with an O_PATH fd
 *                             of CGDIR (O_PATH skips file_open, so only
 *                             the cgroup rule can refuse it); the child
 *                             exits at once
 *   io-uring-openat PATH      IORING_OP_OPENAT O_RDONLY through raw
 *                             io_uring syscalls; the result is the CQE's res
 *   unix-connect PATH|@NAME   stream connect(); @NAME is abstract
 *   recv-fd PATH|@NAME        connect, then recvmsg() one SCM_RIGHTS fd
 *                             (see recv_fd() for what a refusal looks like)
 *   mknod-dev PATH            mknod(PATH, S_IFCHR, 1:3), a /dev/null twin
 *   prlimit PID               prlimit(PID, RLIMIT_CPU, 1 s)
 *   setpriority PID           setpriority(PRIO_PROCESS, PID, 19)
 *   open-tree-read DIR FILE   open_tree(DIR, OPEN_TREE_CLONE), a detached
 *                             copy of the mount, then openat(FILE) in it
 *   socket-xdp                socket(AF_XDP): a family the rules never see
 *                             (built into the test VM's kernel)
 *   ftruncate FD              ftruncate(FD, 0) of an fd inherited from the
 *                             shell, opened before joining the cgroup
 *   set-acl PATH              setxattr system.posix_acl_access, a real ACL
 *                             (user 65534 r--); 6.2+ judge it in
 *                             inode_set_acl, 6.1 in inode_setxattr
 *   remove-acl PATH           removexattr system.posix_acl_access
 *   tiocsti FD                ioctl(FD, TIOCSTI, "x"), FD an inherited tty
 *   tiocsti32 FD              the same as a 32-bit ioctl (int $0x80, the
 *                             compat entry: file_ioctl_compat); ENOSYS on
 *                             a kernel without IA32 emulation
 * Helpers, run outside the sandbox: they print "pid=N", then "ready" once
 * set up, then their result, and exit after HELPER_TIMEOUT seconds anyway:
 *   hold [WHAT...]            sleep until killed; prints addr=0x... of a
 *                             readable word for process-vm-readv. Holds
 *                             an fd of each WHAT first (at most 4): PATH
 *                             read, w:PATH written (created), tcp:IPV4:PORT
 *                             or udplite:IPV4:PORT connected,
 *                             listen:IPV4:PORT listening
 *   unix-listen PATH|@NAME [N]  listen, accept N connections (default 1)
 *   send-fd-server PATH|@NAME FILE  listen, open FILE, send its fd to the
 *                             first client with SCM_RIGHTS
 *   clone-hold CGDIR WHAT     open WHAT (as hold does), then
 *                             clone3(CLONE_INTO_CGROUP)
 *                             a child into CGDIR that holds it: the child
 *                             prints "child=N", then "ready", and sleeps
 *                             until killed; the helper waits for it
 *
 * --cgroup DIR joins that cgroup (writes cgroup.procs) before anything
 * else; --wait FILE waits (up to 60 s) until FILE exists before acting: a
 * process that was already running when the agent started.
 * Output: "pid=N", then "OK" or the errno name (EPERM, EACCES, ...), or
 * NOFD for recv-fd. Exit status: 0 for OK, 1 otherwise, 2 for a usage or
 * setup error (with a message on stderr).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/sysmacros.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/sched.h>

#define PROBE_NAME	"fileprobe"
#include "probe.h"

#define ACTION_TIMEOUT	30	/* s; a probe never hangs a test run */
#define HELPER_TIMEOUT	120
#define XATTR_DEFAULT	"trusted.stockade"

extern char **environ;

/* A word that `hold` exposes to process-vm-readv. */
static volatile uint64_t hold_word = 0x73746f636b616465ULL;	/* "stockade" */

/* PATH or @NAME (abstract: sun_path starts with a NUL) into a sockaddr. */
static int unix_addr(const char *name, struct sockaddr_un *sa, socklen_t *len)
{
	size_t n = strlen(name);

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (n == 0 || n >= sizeof(sa->sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(sa->sun_path, name, n);
	if (name[0] == '@')
		sa->sun_path[0] = '\0';
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	return 0;
}

static int unix_listen(const char *name)
{
	struct sockaddr_un sa;
	socklen_t len;
	int fd;

	if (unix_addr(name, &sa, &len))
		return -1;
	if (name[0] != '@')
		unlink(name);	/* a socket file left by an earlier helper */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, len) || listen(fd, 16)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int unix_connect(const char *name, int *out)
{
	struct sockaddr_un sa;
	socklen_t len;
	int fd, rc;

	if (unix_addr(name, &sa, &len))
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	rc = connect(fd, (struct sockaddr *)&sa, len);
	if (rc || !out) {
		int e = errno;

		close(fd);
		errno = e;
		return rc;
	}
	*out = fd;
	return 0;
}

/*
 * What a refused SCM_RIGHTS fd looks like: the kernel asks
 * security_file_receive() for each passed file while it installs the fds
 * (scm_detach_fds() -> receive_fd_user()). On a refusal it stops
 * installing, drops the remaining files, sets MSG_CTRUNC and, when no fd
 * got through, writes no SCM_RIGHTS header at all; recvmsg() itself still
 * succeeds with the data bytes. So EPERM never reaches the receiver: we
 * print what we got, then NOFD for "recvmsg succeeded, no fd installed".
 */
static int recv_fd(const char *name)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = { 0 };
	struct cmsghdr *c;
	struct iovec iov;
	char byte;
	ssize_t n;
	int fd, got = -1;

	if (unix_connect(name, &fd)) {
		fprintf(stderr, "fileprobe: recv-fd: connect %s: %s\n", name,
			strerror(errno));
		return probe_result(-1);
	}
	memset(&u, 0, sizeof(u));
	iov.iov_base = &byte;
	iov.iov_len = 1;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = u.buf;
	msg.msg_controllen = sizeof(u.buf);
	n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
	if (n < 0)
		return probe_result(-1);
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len >= CMSG_LEN(sizeof(int)))
			memcpy(&got, CMSG_DATA(c), sizeof(int));
	printf("recvmsg=%zd msg_flags=0x%x%s fd=%d\n", n, (unsigned)msg.msg_flags,
	       msg.msg_flags & MSG_CTRUNC ? "(MSG_CTRUNC)" : "", got);
	if (got >= 0) {
		close(got);
		printf("OK\n");
		return 0;
	}
	printf("NOFD\n");
	return 1;
}

static int send_fd_server(const char *name, const char *file)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = { 0 };
	struct cmsghdr *c;
	struct iovec iov;
	int lfd, cfd, ffd;
	char byte = 'x';

	ffd = open(file, O_RDONLY | O_CLOEXEC);
	if (ffd < 0)
		return probe_setup_fail(file);
	lfd = unix_listen(name);
	if (lfd < 0)
		return probe_setup_fail("listen");
	printf("ready\n");
	fflush(stdout);
	cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (cfd < 0)
		return probe_result(-1);
	memset(&u, 0, sizeof(u));
	iov.iov_base = &byte;
	iov.iov_len = 1;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = u.buf;
	msg.msg_controllen = sizeof(u.buf);
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &ffd, sizeof(int));
	return probe_result(sendmsg(cfd, &msg, 0) == 1 ? 0 : -1);
}

static int unix_listen_helper(const char *name, long count)
{
	int lfd = unix_listen(name), cfd;
	long i;

	if (lfd < 0)
		return probe_setup_fail("listen");
	printf("ready\n");
	fflush(stdout);
	for (i = 0; i < count; i++) {
		cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (cfd < 0)
			return probe_result(-1);
		close(cfd);
	}
	return probe_result(0);
}

/* ---- io_uring, raw: one IORING_OP_OPENAT, its CQE's res ---- */

static int uring_openat(const char *path)
{
	struct io_uring_params p;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqe;
	void *sq, *cq;
	unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
	unsigned tail, head;
	size_t sq_len, cq_len;
	int ring, res;

	memset(&p, 0, sizeof(p));
	ring = (int)syscall(__NR_io_uring_setup, 4, &p);
	if (ring < 0)
		return probe_setup_fail("io_uring_setup");
	sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		  ring, IORING_OFF_SQ_RING);
	cq = mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		  ring, IORING_OFF_CQ_RING);
	sqes = mmap(NULL, p.sq_entries * sizeof(*sqes), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED)
		return probe_setup_fail("mmap of the io_uring rings");
	sq_tail = (unsigned *)((char *)sq + p.sq_off.tail);
	sq_mask = (unsigned *)((char *)sq + p.sq_off.ring_mask);
	sq_array = (unsigned *)((char *)sq + p.sq_off.array);
	cq_head = (unsigned *)((char *)cq + p.cq_off.head);
	cq_tail = (unsigned *)((char *)cq + p.cq_off.tail);
	cq_mask = (unsigned *)((char *)cq + p.cq_off.ring_mask);

	memset(&sqes[0], 0, sizeof(sqes[0]));
	sqes[0].opcode = IORING_OP_OPENAT;
	sqes[0].fd = AT_FDCWD;
	sqes[0].addr = (uint64_t)(uintptr_t)path;
	sqes[0].open_flags = O_RDONLY | O_CLOEXEC;
	sqes[0].user_data = 1;
	tail = *sq_tail;
	sq_array[tail & *sq_mask] = 0;
	__atomic_store_n(sq_tail, tail + 1, __ATOMIC_RELEASE);

	if (syscall(__NR_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS,
		    NULL, 0) < 0)
		return probe_setup_fail("io_uring_enter");
	head = __atomic_load_n(cq_head, __ATOMIC_ACQUIRE);
	if (head == __atomic_load_n(cq_tail, __ATOMIC_ACQUIRE)) {
		errno = EAGAIN;
		return probe_setup_fail("io_uring: no completion");
	}
	cqe = (struct io_uring_cqe *)((char *)cq + p.cq_off.cqes) + (head & *cq_mask);
	res = cqe->res;
	__atomic_store_n(cq_head, head + 1, __ATOMIC_RELEASE);
	if (res >= 0) {
		close(res);
		return probe_result(0);
	}
	errno = -res;
	return probe_result(-1);
}

/* ---- processes and cgroups ---- */

static int ptrace_attach(pid_t pid)
{
	int status;

	if (ptrace(PTRACE_ATTACH, pid, NULL, NULL))
		return probe_result(-1);
	/* Let the target run on, so the next case finds it as it was. */
	waitpid(pid, &status, __WALL);
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
	return probe_result(0);
}

static int read_environ(const char *pid)
{
	char path[64], buf[4096];
	int fd;
	ssize_t n;

	/* The ptrace check happens at open (environ_open -> mm_access). */
	snprintf(path, sizeof(path), "/proc/%s/environ", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return probe_result(-1);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	return probe_result(n < 0 ? -1 : 0);
}

static int vm_readv(pid_t pid, const char *addr)
{
	uint64_t word = 0;
	struct iovec local = { &word, sizeof(word) };
	struct iovec remote = { (void *)(uintptr_t)strtoull(addr, NULL, 0),
				sizeof(word) };
	ssize_t n = -1;
	int tries;

	/* EFAULT comes from the copy, after the permission check passed
	 * (stockade's refusal is EPERM, before it); it was seen now and then
	 * right after ptrace-attach detached the target, so try again. */
	for (tries = 0; tries < 5; tries++) {
		n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
		if (n >= 0 || errno != EFAULT)
			break;
		usleep(20000);
	}
	if (n >= 0 && n != (ssize_t)sizeof(word)) {
		errno = EIO;
		n = -1;
	}
	return probe_result(n < 0 ? -1 : 0);
}

static int cgroup_move(const char *dir)
{
	char path[4096], pid[32];
	int fd, n;
	ssize_t w;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return probe_result(-1);
	n = snprintf(pid, sizeof(pid), "%d\n", getpid());
	w = write(fd, pid, (size_t)n);
	if (w >= 0 && w != n)
		errno = EIO;
	close(fd);
	return probe_result(w == n ? 0 : -1);
}

static int clone_into_cgroup(const char *dir)
{
	struct clone_args args;
	int fd, status;
	long pid;

	fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return probe_setup_fail(dir);
	memset(&args, 0, sizeof(args));
	args.flags = CLONE_INTO_CGROUP;
	args.exit_signal = SIGCHLD;
	args.cgroup = (uint64_t)fd;
	pid = syscall(__NR_clone3, &args, sizeof(args));
	if (pid == 0)
		_exit(0);
	if (pid < 0)
		return probe_result(-1);
	waitpid((pid_t)pid, &status, 0);
	return probe_result(0);
}

static int bpf_map_create(void)
{
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = 4;
	attr.value_size = 4;
	attr.max_entries = 1;
	fd = (int)syscall(__NR_bpf, BPF_MAP_CREATE, &attr, sizeof(attr));
	if (fd >= 0)
		close(fd);
	return probe_result(fd < 0 ? -1 : 0);
}

/* An fd held (hold, clone-hold): WHAT a PATH (read), w:PATH (written,
 * created), tcp:IPV4:PORT or udplite:IPV4:PORT (connected) or
 * listen:IPV4:PORT (listening). */
static int hold_open(const char *what)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	char kind[8], ip[32];
	unsigned int port;
	int fd;

	if (!strncmp(what, "w:", 2))
		return open(what + 2, O_WRONLY | O_CREAT, 0644);
	if (sscanf(what, "%7[a-z]:%31[0-9.]:%u", kind, ip, &port) != 3 ||
	    (strcmp(kind, "tcp") && strcmp(kind, "udplite") && strcmp(kind, "listen")))
		return open(what, O_RDONLY);
	sa.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1) {
		errno = EINVAL;
		return -1;
	}
	fd = !strcmp(kind, "udplite") ? socket(AF_INET, SOCK_DGRAM, IPPROTO_UDPLITE) :
					 socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	if (strcmp(kind, "listen") ? connect(fd, (struct sockaddr *)&sa, sizeof(sa)) :
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &(int){ 1 }, sizeof(int)) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 64)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static int clone_hold(const char *dir, const char *what)
{
	struct clone_args args;
	int cg, fd, status;
	long pid;

	fd = hold_open(what);
	cg = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || cg < 0)
		return probe_setup_fail(fd < 0 ? what : dir);
	memset(&args, 0, sizeof(args));
	args.flags = CLONE_INTO_CGROUP;
	args.exit_signal = SIGCHLD;
	args.cgroup = (uint64_t)cg;
	fflush(stdout);
	pid = syscall(__NR_clone3, &args, sizeof(args));
	if (pid == 0) {
		printf("child=%d\nready\n", getpid());
		fflush(stdout);
		alarm(HELPER_TIMEOUT);
		for (;;)
			pause();
	}
	if (pid < 0)
		return probe_result(-1);
	waitpid((pid_t)pid, &status, 0);
	return probe_result(0);
}

static int hold(char **what, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (hold_open(what[i]) < 0)
			return probe_setup_fail(what[i]);
	printf("addr=%p\nready\n", (void *)&hold_word);
	fflush(stdout);
	for (;;)
		pause();
	return 0;
}

/* ---- files ---- */

static int do_open(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC, 0644);

	if (fd >= 0)
		close(fd);
	return probe_result(fd < 0 ? -1 : 0);
}

/* ---- the table: OP, its argument count, what it does ---- */

enum op_id {
	OP_OPEN_READ, OP_OPEN_WRITE, OP_OPEN_CREAT, OP_OPEN_TRUNC, OP_MKDIR,
	OP_RMDIR, OP_UNLINK, OP_TRUNCATE, OP_CHMOD, OP_CHOWN, OP_SETXATTR,
	OP_REMOVEXATTR, OP_RENAME, OP_LINK, OP_SYMLINK, OP_EXEC, OP_MOUNT,
	OP_UMOUNT, OP_CHROOT, OP_UNSHARE_USER, OP_BPF, OP_KILL, OP_PTRACE,
	OP_ENVIRON, OP_VM_READV, OP_CGROUP_MOVE, OP_CLONE_CGROUP, OP_URING,
	OP_UNIX_CONNECT, OP_RECV_FD, OP_HOLD, OP_UNIX_LISTEN, OP_SEND_FD,
	OP_MKNOD_DEV, OP_PRLIMIT, OP_SETPRIO, OP_OPEN_TREE, OP_SOCKET_XDP,
	OP_FTRUNCATE, OP_SET_ACL, OP_REMOVE_ACL, OP_TIOCSTI, OP_TIOCSTI32,
	OP_CLONE_HOLD,
};

static const struct op {
	const char *name;
	enum op_id id;
	int min, max;		/* arguments after OP */
	bool helper;		/* runs until used: HELPER_TIMEOUT */
} ops[] = {
	{ "open-read", OP_OPEN_READ, 1, 1, false },
	{ "open-write", OP_OPEN_WRITE, 1, 1, false },
	{ "open-creat", OP_OPEN_CREAT, 1, 1, false },
	{ "open-trunc", OP_OPEN_TRUNC, 1, 1, false },
	{ "mkdir", OP_MKDIR, 1, 1, false },
	{ "rmdir", OP_RMDIR, 1, 1, false },
	{ "unlink", OP_UNLINK, 1, 1, false },
	{ "truncate", OP_TRUNCATE, 1, 1, false },
	{ "chmod", OP_CHMOD, 1, 2, false },
	{ "chown", OP_CHOWN, 1, 2, false },
	{ "setxattr", OP_SETXATTR, 1, 2, false },
	{ "removexattr", OP_REMOVEXATTR, 1, 2, false },
	{ "rename", OP_RENAME, 2, 2, false },
	{ "link", OP_LINK, 2, 2, false },
	{ "symlink", OP_SYMLINK, 2, 2, false },
	{ "exec", OP_EXEC, 1, 1, false },
	{ "mount", OP_MOUNT, 1, 1, false },
	{ "umount", OP_UMOUNT, 1, 1, false },
	{ "chroot", OP_CHROOT, 1, 1, false },
	{ "unshare-user", OP_UNSHARE_USER, 0, 0, false },
	{ "bpf", OP_BPF, 0, 0, false },
	{ "kill", OP_KILL, 2, 2, false },
	{ "ptrace-attach", OP_PTRACE, 1, 1, false },
	{ "read-environ", OP_ENVIRON, 1, 1, false },
	{ "process-vm-readv", OP_VM_READV, 2, 2, false },
	{ "cgroup-move", OP_CGROUP_MOVE, 1, 1, false },
	{ "clone-into-cgroup", OP_CLONE_CGROUP, 1, 1, false },
	{ "io-uring-openat", OP_URING, 1, 1, false },
	{ "unix-connect", OP_UNIX_CONNECT, 1, 1, false },
	{ "recv-fd", OP_RECV_FD, 1, 1, false },
	{ "hold", OP_HOLD, 0, 4, true },
	{ "clone-hold", OP_CLONE_HOLD, 2, 2, true },
	{ "unix-listen", OP_UNIX_LISTEN, 1, 2, true },
	{ "send-fd-server", OP_SEND_FD, 2, 2, true },
	{ "mknod-dev", OP_MKNOD_DEV, 1, 1, false },
	{ "prlimit", OP_PRLIMIT, 1, 1, false },
	{ "setpriority", OP_SETPRIO, 1, 1, false },
	{ "open-tree-read", OP_OPEN_TREE, 2, 2, false },
	{ "socket-xdp", OP_SOCKET_XDP, 0, 0, false },
	{ "ftruncate", OP_FTRUNCATE, 1, 1, false },
	{ "set-acl", OP_SET_ACL, 1, 1, false },
	{ "remove-acl", OP_REMOVE_ACL, 1, 1, false },
	{ "tiocsti", OP_TIOCSTI, 1, 1, false },
	{ "tiocsti32", OP_TIOCSTI32, 1, 1, false },
};

/* open_tree(2) has no glibc wrapper in Debian 12. */
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif

static int open_tree_read(const char *dir, const char *file)
{
	int tfd = (int)syscall(SYS_open_tree, AT_FDCWD, dir, OPEN_TREE_CLONE), fd;

	if (tfd < 0)
		return probe_result(-1);
	fd = openat(tfd, file, O_RDONLY);
	return probe_result(fd < 0 ? -1 : 0);
}

/* A POSIX ACL in its xattr form (include/uapi/linux/posix_acl_xattr.h):
 * owner rw-, user 65534 r--, group r--, mask r--, other r--. A named user
 * makes it a real ACL, stored, not folded into the mode. */
static int set_acl(const char *path)
{
	struct { uint16_t tag, perm; uint32_t id; } __attribute__((packed)) e[5] = {
		{ 0x01, 6, UINT32_MAX }, { 0x02, 4, 65534 }, { 0x04, 4, UINT32_MAX },
		{ 0x10, 4, UINT32_MAX }, { 0x20, 4, UINT32_MAX },
	};
	unsigned char buf[4 + sizeof(e)];
	uint32_t version = 2;

	memcpy(buf, &version, 4);
	memcpy(buf + 4, e, sizeof(e));
	return probe_result(setxattr(path, "system.posix_acl_access", buf,
				     sizeof(buf), 0));
}

/* TIOCSTI of one byte; compat as a 32-bit syscall: int $0x80 enters the
 * ia32 table (ioctl is 54 there) from this 64-bit process, and so
 * compat_sys_ioctl(); its pointer must fit 32 bits (MAP_32BIT). */
static int tiocsti(int fd, bool compat)
{
	char *c = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	long ret;

	if (c == MAP_FAILED)
		return probe_setup_fail("mmap(MAP_32BIT)");
	c[0] = 'x';
	if (!compat)
		return probe_result(ioctl(fd, TIOCSTI, c));
	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(54), "b"(fd), "c"(TIOCSTI), "d"((uint32_t)(uintptr_t)c)
			 : "memory", "r8", "r9", "r10", "r11");
	if (ret < 0 && ret > -4096) {
		errno = (int)-ret;
		return probe_result(-1);
	}
	return probe_result(0);
}

/* UID:GID, or the default nobody:nogroup; -1 on a malformed one. */
static int parse_ids(const char *s, uid_t *uid, gid_t *gid)
{
	char *end;

	*uid = 65534;
	*gid = 65534;
	if (!s)
		return 0;
	*uid = (uid_t)strtoul(s, &end, 10);
	if (end == s || *end != ':')
		return -1;
	s = end + 1;
	*gid = (gid_t)strtoul(s, &end, 10);
	return end == s || *end ? -1 : 0;
}

/* One action; -2 for a malformed argument (usage). a2 may be NULL. */
static int act(enum op_id id, const char *a1, const char *a2)
{
	uid_t uid;
	gid_t gid;

	switch (id) {
	case OP_OPEN_READ:
		return do_open(a1, O_RDONLY);
	case OP_OPEN_WRITE:
		return do_open(a1, O_WRONLY);
	case OP_OPEN_CREAT:
		return do_open(a1, O_WRONLY | O_CREAT);
	case OP_OPEN_TRUNC:
		return do_open(a1, O_WRONLY | O_TRUNC);
	case OP_MKDIR:
		return probe_result(mkdir(a1, 0755));
	case OP_RMDIR:
		return probe_result(rmdir(a1));
	case OP_UNLINK:
		return probe_result(unlink(a1));
	case OP_TRUNCATE:
		return probe_result(truncate(a1, 0));
	case OP_CHMOD:
		return probe_result(chmod(a1, (mode_t)strtoul(a2 ? a2 : "0777", NULL, 8)));
	case OP_CHOWN:
		if (parse_ids(a2, &uid, &gid))
			return -2;
		return probe_result(chown(a1, uid, gid));
	case OP_SETXATTR:
		return probe_result(setxattr(a1, a2 ? a2 : XATTR_DEFAULT, "1", 1, 0));
	case OP_REMOVEXATTR:
		return probe_result(removexattr(a1, a2 ? a2 : XATTR_DEFAULT));
	case OP_RENAME:
		return probe_result(rename(a1, a2));
	case OP_LINK:
		return probe_result(link(a1, a2));
	case OP_SYMLINK:
		return probe_result(symlink(a1, a2));
	case OP_EXEC: {
		char *const args[] = { (char *)a1, (char *)"exec-ok", NULL };

		execve(a1, args, environ);
		return probe_result(-1);
	}
	case OP_MOUNT:
		return probe_result(mount("stockade", a1, "tmpfs", 0, "size=1m"));
	case OP_UMOUNT:
		return probe_result(umount2(a1, 0));
	case OP_CHROOT:
		return probe_result(chroot(a1));
	case OP_UNSHARE_USER:
		return probe_result(unshare(CLONE_NEWUSER));
	case OP_BPF:
		return bpf_map_create();
	case OP_KILL:
		return probe_result(kill((pid_t)atoi(a1), atoi(a2)));
	case OP_MKNOD_DEV:
		return probe_result(mknod(a1, S_IFCHR | 0600, makedev(1, 3)));
	case OP_PRLIMIT: {
		struct rlimit rl = { .rlim_cur = 1, .rlim_max = 1 };

		return probe_result(prlimit((pid_t)atoi(a1), RLIMIT_CPU, &rl, NULL));
	}
	case OP_SETPRIO:
		return probe_result(setpriority(PRIO_PROCESS, (id_t)atoi(a1), 19));
	case OP_OPEN_TREE:
		return open_tree_read(a1, a2);
	case OP_SOCKET_XDP:
		return probe_result(socket(AF_XDP, SOCK_RAW, 0) < 0 ? -1 : 0);
	case OP_FTRUNCATE:
		return probe_result(ftruncate(atoi(a1), 0));
	case OP_SET_ACL:
		return set_acl(a1);
	case OP_REMOVE_ACL:
		return probe_result(removexattr(a1, "system.posix_acl_access"));
	case OP_TIOCSTI:
	case OP_TIOCSTI32:
		return tiocsti(atoi(a1), id == OP_TIOCSTI32);
	case OP_PTRACE:
		return ptrace_attach((pid_t)atoi(a1));
	case OP_ENVIRON:
		return read_environ(a1);
	case OP_VM_READV:
		return vm_readv((pid_t)atoi(a1), a2);
	case OP_CGROUP_MOVE:
		return cgroup_move(a1);
	case OP_CLONE_CGROUP:
		return clone_into_cgroup(a1);
	case OP_URING:
		return uring_openat(a1);
	case OP_UNIX_CONNECT:
		return probe_result(unix_connect(a1, NULL));
	case OP_RECV_FD:
		return recv_fd(a1);
	case OP_HOLD:
		break;		/* main() calls hold(): all its arguments */
	case OP_UNIX_LISTEN:
		return unix_listen_helper(a1, a2 ? atol(a2) : 1);
	case OP_SEND_FD:
		return send_fd_server(a1, a2);
	case OP_CLONE_HOLD:
		return clone_hold(a1, a2);
	}
	return -2;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: fileprobe [--cgroup DIR] [--wait FILE] OP ARGS...\n"
		"  open-read|open-write|open-creat|open-trunc PATH\n"
		"  mkdir|rmdir|unlink|truncate PATH    chmod PATH [MODE]    chown PATH [UID:GID]\n"
		"  setxattr|removexattr PATH [NAME]    rename|link OLD NEW    symlink TARGET LINKPATH\n"
		"  exec PATH    mount DIR    umount DIR    chroot DIR    unshare-user    bpf\n"
		"  kill PID SIG    ptrace-attach PID    read-environ PID    process-vm-readv PID ADDR\n"
		"  cgroup-move CGDIR    clone-into-cgroup CGDIR    io-uring-openat PATH\n"
		"  unix-connect PATH|@NAME    recv-fd PATH|@NAME\n"
		"  ftruncate FD    set-acl PATH    remove-acl PATH    tiocsti FD    tiocsti32 FD\n"
		"  helpers: hold [PATH|w:PATH|tcp:IPV4:PORT|udplite:IPV4:PORT|listen:IPV4:PORT...]\n"
		"           unix-listen PATH|@NAME [N]    send-fd-server PATH|@NAME FILE\n"
		"           clone-hold CGDIR PATH|tcp:IPV4:PORT\n");
}

int main(int argc, char **argv)
{
	const struct op *op = NULL;
	const char *wait_for = NULL;
	int i = 1, n, rc;
	size_t k;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Reached through `exec`: the pid line came from the image before. */
	if (argc == 2 && !strcmp(argv[1], "exec-ok"))
		return probe_result(0);

	for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
		if (!strcmp(argv[i], "--wait") && i + 1 < argc) {
			wait_for = argv[++i];
		} else if (!strcmp(argv[i], "--cgroup") && i + 1 < argc) {
			if (probe_join_cgroup(argv[++i]))
				return probe_setup_fail("joining the cgroup");
		} else {
			goto usage;
		}
	}
	if (i >= argc)
		goto usage;
	n = argc - i - 1;
	for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
		if (!strcmp(argv[i], ops[k].name))
			op = &ops[k];
	if (!op || n < op->min || n > op->max)
		goto usage;

	probe_print_pid();
	probe_wait_file(wait_for);
	alarm(op->helper ? HELPER_TIMEOUT : ACTION_TIMEOUT);
	rc = op->id == OP_HOLD ? hold(argv + i + 1, n) :
	     act(op->id, n >= 1 ? argv[i + 1] : NULL, n >= 2 ? argv[i + 2] : NULL);
	if (rc != -2)
		return rc;
usage:
	usage();
	return 2;
}
