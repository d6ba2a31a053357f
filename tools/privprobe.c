// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * privprobe: make exactly one privileged move that root inside a sandbox
 * would make against the kernel or the host (issue 11: kernel code, host
 * state, kernel logs and tracing, watching outsiders), and print what the
 * kernel said. tests/vm/priv.sh runs it inside sandboxes of two policies,
 * outside every sandbox, and in an audit-mode sandbox.
 *
 *   privprobe [--cgroup DIR] OP [ARG]
 *
 * Every action is harmless when it succeeds (outside, or in audit mode):
 *   init-module          init_module() of 64 bytes of garbage: never loads
 *   finit-module FILE    finit_module() of FILE (write garbage there first)
 *   delete-module        delete_module("stockade_none"): no such module
 *   kexec-load           kexec_load() of 17 segments, one more than the
 *                        kernel takes: EINVAL after every check, nothing
 *                        staged
 *   kexec-file-load FILE kexec_file_load() of FILE (garbage): no loader
 *                        takes it (ENOEXEC)
 *   module-request       socket(AF_NETLINK, SOCK_RAW, 30): the kernel asks
 *                        for module net-pf-16-proto-30, which no one has
 *   iopl | ioperm        iopl(3) / ioperm(0x80, 1, 1), then back to 0
 *   sethostname          the hostname, written back unchanged
 *   settimeofday | clock-settime
 *                        the time just read, written back
 *   rtc-set              RTC_RD_TIME then RTC_SET_TIME of it on /dev/rtc0
 *                        (prints SKIP without one)
 *   swapon FILE          swapon() of a missing FILE
 *   acct FILE            acct(FILE), then acct(NULL) at once
 *   syslog               syslog(SYSLOG_ACTION_READ_ALL)
 *   kmsg                 open("/dev/kmsg", O_RDONLY)
 *   perf-self | perf-cpu | perf-bp | perf-kernel
 *                        perf_event_open() of a software clock on this task
 *                        (user only), on CPU 0 for every task, a hardware
 *                        write breakpoint on this task, and the clock with
 *                        kernel sampling
 *   inotify PATH         inotify_add_watch(PATH, IN_ALL_EVENTS)
 *   fanotify-perm PATH   fanotify_init(FAN_CLASS_CONTENT), then a
 *                        FAN_OPEN_PERM mark on PATH, closed at once (use a
 *                        file nothing else opens)
 *   userfaultfd          userfaultfd(UFFD_USER_MODE_ONLY)
 *   pagemap-setuid       open /proc/self/pagemap, setuid(0) (new
 *                        credentials, the same ids), then read a touched
 *                        page's entry: the kernel shows its frame number
 *                        only if the opener's credentials (the file's, not
 *                        the task's any more) have SYS_ADMIN, and hides it
 *                        without an error otherwise: printed as EPERM
 *   uring-personality same|changed
 *                        register an io_uring personality (this task's
 *                        credentials), then (changed) setuid(0), and submit
 *                        a NOP under the personality: the completion's
 *                        result
 *   uring-setxattr FILE  the same, changed, with an IORING_OP_SETXATTR of
 *                        trusted.stockade on FILE (needs SYS_ADMIN, under
 *                        the personality's credentials)
 *
 * Output: "pid=N", then "OK" or the errno name; SKIP when the VM lacks
 * what the action needs. Exit status: 0 for OK, 1 otherwise, 2 for a
 * usage or setup error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/io.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/socket.h>
#include <sys/swap.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <linux/hw_breakpoint.h>
#include <linux/io_uring.h>
#include <linux/kexec.h>
#include <linux/perf_event.h>
#include <linux/rtc.h>

#define PROBE_NAME	"privprobe"
#include "probe.h"

#define UFFD_USER_MODE_ONLY_	1

static int open_arg(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "privprobe: opening %s: %s\n", path, strerror(errno));
		exit(2);
	}
	return fd;
}

static volatile int bp_word;

static int perf(const char *how)
{
	struct perf_event_attr a;
	int pid = 0, cpu = -1, fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	if (!strcmp(how, "perf-cpu")) {
		pid = -1;
		cpu = 0;
	} else if (!strcmp(how, "perf-bp")) {
		a.type = PERF_TYPE_BREAKPOINT;
		a.config = 0;
		a.bp_type = HW_BREAKPOINT_W;
		a.bp_addr = (uintptr_t)&bp_word;
		a.bp_len = HW_BREAKPOINT_LEN_4;
	} else if (!strcmp(how, "perf-kernel")) {
		a.exclude_kernel = 0;
	}
	fd = (int)syscall(SYS_perf_event_open, &a, pid, cpu, -1, 0);
	if (fd >= 0)
		close(fd);
	return fd < 0 ? -1 : 0;
}

/* pagemap-setuid: see the top. */
static int pagemap_setuid(void)
{
	static volatile char page[8192] __attribute__((aligned(4096)));
	uint64_t entry = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	page[0] = 1;
	if (setuid(0) ||
	    pread(fd, &entry, sizeof(entry),
		  (off_t)((uintptr_t)page / 4096 * sizeof(entry))) != sizeof(entry)) {
		close(fd);
		return -1;
	}
	close(fd);
	/* Bit 63: present; bits 0-54: the frame number. */
	if ((entry >> 63) && !(entry & ((1ULL << 55) - 1))) {
		errno = EPERM;
		return -1;
	}
	return 0;
}

/*
 * uring-personality and uring-setxattr: see the top. Plain syscalls: no
 * liburing here. One request, sqe's fields, under a personality of this
 * task's credentials registered before (changed: a setuid(0) between);
 * the completion's result.
 */
static int uring_personality(bool changed, const struct io_uring_sqe *req)
{
	struct io_uring_params p = { 0 };
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqe;
	unsigned int *tail, *head, t, i;
	size_t sq_len, cq_len;
	char *sq, *cq;
	int fd, pers, rc;

	fd = (int)syscall(__NR_io_uring_setup, 4, &p);
	if (fd < 0)
		return -1;
	sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned int);
	cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	if (p.features & IORING_FEAT_SINGLE_MMAP)
		sq_len = cq_len = sq_len > cq_len ? sq_len : cq_len;
	sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
		  IORING_OFF_SQ_RING);
	cq = p.features & IORING_FEAT_SINGLE_MMAP ? sq :
	     mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
		  IORING_OFF_CQ_RING);
	sqes = mmap(NULL, p.sq_entries * sizeof(*sqes), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED)
		exit(probe_setup_fail("mapping the io_uring rings"));
	pers = (int)syscall(__NR_io_uring_register, fd, IORING_REGISTER_PERSONALITY, NULL, 0);
	if (pers < 0)
		exit(probe_setup_fail("registering a personality"));
	if (changed && setuid(0))
		exit(probe_setup_fail("setuid(0)"));
	tail = (unsigned int *)(sq + p.sq_off.tail);
	t = *tail;
	i = t & (p.sq_entries - 1);
	sqes[i] = *req;
	sqes[i].personality = (__u16)pers;
	((unsigned int *)(sq + p.sq_off.array))[i] = i;
	__atomic_store_n(tail, t + 1, __ATOMIC_RELEASE);
	if (syscall(__NR_io_uring_enter, fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
		return -1;
	head = (unsigned int *)(cq + p.cq_off.head);
	if (*head == __atomic_load_n((unsigned int *)(cq + p.cq_off.tail), __ATOMIC_ACQUIRE))
		exit(probe_setup_fail("no completion"));
	cqe = (struct io_uring_cqe *)(cq + p.cq_off.cqes) + (*head & (p.cq_entries - 1));
	rc = cqe->res;
	close(fd);
	if (rc < 0) {
		errno = -rc;
		return -1;
	}
	return 0;
}

static int act(const char *op, const char *arg)
{
	static char garbage[64] = "not a module, not a kernel image";
	int fd, rc;

	if (!strcmp(op, "init-module"))
		return (int)syscall(SYS_init_module, garbage, sizeof(garbage), "");
	if (!strcmp(op, "finit-module")) {
		fd = open_arg(arg);
		return (int)syscall(SYS_finit_module, fd, "", 0);
	}
	if (!strcmp(op, "delete-module"))
		return (int)syscall(SYS_delete_module, "stockade_none", O_NONBLOCK);
	if (!strcmp(op, "kexec-load")) {
		static struct kexec_segment seg[KEXEC_SEGMENT_MAX + 1];

		return (int)syscall(SYS_kexec_load, 0UL, KEXEC_SEGMENT_MAX + 1UL,
				    seg, (unsigned long)KEXEC_ARCH_DEFAULT);
	}
	if (!strcmp(op, "kexec-file-load")) {
		fd = open_arg(arg);
		return (int)syscall(SYS_kexec_file_load, fd, -1, 1UL, "",
				    (unsigned long)KEXEC_FILE_NO_INITRAMFS);
	}
	if (!strcmp(op, "module-request")) {
		fd = socket(AF_NETLINK, SOCK_RAW, 30);
		if (fd >= 0)
			close(fd);
		return fd < 0 ? -1 : 0;
	}
	if (!strcmp(op, "iopl")) {
		rc = iopl(3);
		if (!rc)
			iopl(0);
		return rc;
	}
	if (!strcmp(op, "ioperm")) {
		rc = ioperm(0x80, 1, 1);
		if (!rc)
			ioperm(0x80, 1, 0);
		return rc;
	}
	if (!strcmp(op, "sethostname")) {
		char name[256] = "";

		if (gethostname(name, sizeof(name) - 1))
			return -1;
		return sethostname(name, strlen(name));
	}
	if (!strcmp(op, "settimeofday")) {
		struct timeval tv;

		gettimeofday(&tv, NULL);
		return settimeofday(&tv, NULL);
	}
	if (!strcmp(op, "clock-settime")) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		return clock_settime(CLOCK_REALTIME, &ts);
	}
	if (!strcmp(op, "rtc-set")) {
		struct rtc_time t;

		fd = open("/dev/rtc0", O_RDONLY | O_CLOEXEC);
		if (fd < 0 || ioctl(fd, RTC_RD_TIME, &t)) {
			printf("SKIP\n");
			exit(1);
		}
		return ioctl(fd, RTC_SET_TIME, &t);
	}
	if (!strcmp(op, "swapon"))
		return swapon(arg, 0);
	if (!strcmp(op, "acct")) {
		rc = acct(arg);
		if (!rc)
			acct(NULL);
		return rc;
	}
	if (!strcmp(op, "syslog")) {
		static char buf[4096];

		return klogctl(3, buf, sizeof(buf)) < 0 ? -1 : 0;
	}
	if (!strcmp(op, "kmsg")) {
		fd = open("/dev/kmsg", O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			close(fd);
		return fd < 0 ? -1 : 0;
	}
	if (!strncmp(op, "perf-", 5))
		return perf(op);
	if (!strcmp(op, "inotify")) {
		fd = inotify_init1(IN_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, "privprobe: inotify_init1: %s\n", strerror(errno));
			exit(2);
		}
		return inotify_add_watch(fd, arg, IN_ALL_EVENTS) < 0 ? -1 : 0;
	}
	if (!strcmp(op, "fanotify-perm")) {
		fd = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC, O_RDONLY);
		if (fd < 0)
			return -1;
		rc = fanotify_mark(fd, FAN_MARK_ADD, FAN_OPEN_PERM, AT_FDCWD, arg);
		close(fd);	/* no open waits for an answer that never comes */
		return rc;
	}
	if (!strcmp(op, "pagemap-setuid"))
		return pagemap_setuid();
	if (!strcmp(op, "uring-personality") && arg) {
		struct io_uring_sqe nop = { .opcode = IORING_OP_NOP };

		return uring_personality(!strcmp(arg, "changed"), &nop);
	}
	if (!strcmp(op, "uring-setxattr") && arg) {
		static const char name[] = "trusted.stockade", value[] = "x";
		struct io_uring_sqe sx = {
			.opcode = IORING_OP_SETXATTR,
			.addr = (uintptr_t)name,
			.addr2 = (uintptr_t)value,
			.addr3 = (uintptr_t)arg,
			.len = sizeof(value) - 1,
		};

		return uring_personality(true, &sx);
	}
	if (!strcmp(op, "userfaultfd")) {
		fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY_);
		if (fd >= 0)
			close(fd);
		return fd < 0 ? -1 : 0;
	}
	return -2;
}

int main(int argc, char **argv)
{
	int i = 1, rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 2 && !strcmp(argv[1], "--cgroup")) {
		if (probe_join_cgroup(argv[2])) {
			fprintf(stderr, "privprobe: joining the cgroup %s: %s\n", argv[2],
				strerror(errno));
			return 2;
		}
		i = 3;
	}
	if (i >= argc || argc - i > 2)
		goto usage;
	probe_print_pid();
	alarm(20);
	rc = act(argv[i], i + 1 < argc ? argv[i + 1] : NULL);
	if (rc != -2)
		return probe_result(rc);
usage:
	fprintf(stderr, "usage: privprobe [--cgroup DIR] OP [ARG]; see tools/privprobe.c\n");
	return 2;
}
