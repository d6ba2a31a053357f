// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * netprobe: make exactly one network syscall the way confined code would,
 * and print what the kernel said. Used by the live tests, the VM suite and
 * the demo.
 *
 *   netprobe [--netns] [--cgroup DIR] OP ARGS...
 *     connect tcp|udp ADDR PORT [--listen] [--until FILE [--every-us N] [--log FILE]]
 *                                            connect(); --listen first
 *                                            binds a listener on ADDR:PORT;
 *                                            --until repeats (a new
 *                                            non-blocking socket each time,
 *                                            every N us, default 2000) until
 *                                            FILE exists, then prints
 *                                            "attempts=N ok=N failed=N";
 *                                            --log FILE (- for stdout) writes
 *                                            a line per attempt:
 *                                            "START_NS END_NS 1|0" (realtime
 *                                            around connect(), 1 = allowed)
 *     sendto udp ADDR PORT [--count N]       N (default 1) unconnected
 *                                            sendto()s; prints the result
 *                                            of the last, and how many
 *                                            failed with which errno
 *     socket raw4|raw6|icmp|icmp6|packet     socket() of that kind
 *
 * --netns moves the probe into a new network namespace with only `lo` up,
 * so a destination the agent fails to block ends in ENETUNREACH, never on
 * a real network; ping sockets are enabled for every group there, so that
 * only stockade can refuse them. --cgroup DIR joins that cgroup (writes
 * cgroup.procs). --wait FILE waits (up to 60 s) until FILE exists before
 * acting: a process that was already running when the agent started.
 * --join-late creates the socket first and joins --cgroup only then: a
 * socket made before its owner entered the sandbox.
 * Output: "pid=N" then "OK" or the errno name (EPERM, ENETUNREACH, ...).
 * Exit status: 0 for OK, 1 for an errno, 2 for a usage or setup error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_ether.h>

static const char *errname(int e)
{
	switch (e) {
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case ENETUNREACH: return "ENETUNREACH";
	case ECONNREFUSED: return "ECONNREFUSED";
	case EHOSTUNREACH: return "EHOSTUNREACH";
	case EAFNOSUPPORT: return "EAFNOSUPPORT";
	case EINVAL: return "EINVAL";
	case EADDRNOTAVAIL: return "EADDRNOTAVAIL";
	case ETIMEDOUT: return "ETIMEDOUT";
	default: return strerrorname_np(e) ? strerrorname_np(e) : "E?";
	}
}

static int setup_fail(const char *what)
{
	fprintf(stderr, "netprobe: %s: %s\n", what, strerror(errno));
	return 2;
}

static int lo_up(void)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(fd, SIOCSIFFLAGS, &ifr) == 0) {
			close(fd);
			return 0;
		}
	}
	close(fd);
	return -1;
}

/* Per network namespace; the default "1 0" refuses every group. */
static int ping_all(void)
{
	static const char range[] = "0 2147483647\n";
	int fd = open("/proc/sys/net/ipv4/ping_group_range", O_WRONLY | O_CLOEXEC);
	int ok;

	if (fd < 0)
		return -1;
	ok = write(fd, range, sizeof(range) - 1) == (ssize_t)sizeof(range) - 1;
	close(fd);
	return ok ? 0 : -1;
}

static int join_cgroup(const char *dir)
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

/* Parse ADDR PORT into a sockaddr; IPv6 when ADDR has a ':'. */
static int parse_addr(const char *addr, const char *port,
		      struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	int p = atoi(port);

	memset(ss, 0, sizeof(*ss));
	if (strchr(addr, ':')) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((unsigned short)p);
		*len = sizeof(*s6);
		return inet_pton(AF_INET6, addr, &s6->sin6_addr) == 1 ? 0 : -1;
	}
	s4->sin_family = AF_INET;
	s4->sin_port = htons((unsigned short)p);
	*len = sizeof(*s4);
	return inet_pton(AF_INET, addr, &s4->sin_addr) == 1 ? 0 : -1;
}

static int result(int rc)
{
	if (rc == 0) {
		printf("OK\n");
		return 0;
	}
	printf("%s\n", errname(errno));
	return 1;
}

int main(int argc, char **argv)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int i = 1, fd, type, lfd = -1, one = 1, tries;
	const char *wait_for = NULL, *cgroup = NULL;
	bool join_late = false;

	for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
		if (!strcmp(argv[i], "--netns")) {
			if (unshare(CLONE_NEWNET) || lo_up() || ping_all())
				return setup_fail("new network namespace");
		} else if (!strcmp(argv[i], "--wait") && i + 1 < argc) {
			wait_for = argv[++i];
		} else if (!strcmp(argv[i], "--join-late")) {
			join_late = true;
		} else if (!strcmp(argv[i], "--cgroup") && i + 1 < argc) {
			cgroup = argv[++i];
		} else {
			goto usage;
		}
	}
	if (argc - i < 2)
		goto usage;
	if (cgroup && !join_late && join_cgroup(cgroup))
		return setup_fail("joining the cgroup");
	printf("pid=%d\n", getpid());
	fflush(stdout);
	for (tries = 0; wait_for && access(wait_for, F_OK) && tries < 6000; tries++)
		usleep(10000);

	if (!strcmp(argv[i], "socket")) {
		const char *k = argv[i + 1];

		if (!strcmp(k, "raw4"))
			fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
		else if (!strcmp(k, "raw6"))
			fd = socket(AF_INET6, SOCK_RAW, IPPROTO_RAW);
		else if (!strcmp(k, "icmp"))
			fd = socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP);
		else if (!strcmp(k, "icmp6"))
			fd = socket(AF_INET6, SOCK_DGRAM, IPPROTO_ICMPV6);
		else if (!strcmp(k, "packet"))
			fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
		else
			goto usage;
		return result(fd < 0 ? -1 : 0);
	}
	if (argc - i < 4 || parse_addr(argv[i + 2], argv[i + 3], &ss, &len))
		goto usage;
	type = !strcmp(argv[i + 1], "tcp") ? SOCK_STREAM :
	       !strcmp(argv[i + 1], "udp") ? SOCK_DGRAM : -1;
	if (type < 0)
		goto usage;

	if (!strcmp(argv[i], "connect")) {
		const char *until = NULL, *log_path = NULL;
		long every_us = 2000;
		bool listen_first = false;
		int k;

		for (k = i + 4; k < argc; k++) {
			if (!strcmp(argv[k], "--listen"))
				listen_first = true;
			else if (!strcmp(argv[k], "--until") && k + 1 < argc)
				until = argv[++k];
			else if (!strcmp(argv[k], "--every-us") && k + 1 < argc)
				every_us = atol(argv[++k]);
			else if (!strcmp(argv[k], "--log") && k + 1 < argc)
				log_path = argv[++k];
			else
				goto usage;
		}
		if (listen_first) {
			lfd = socket(ss.ss_family, type, 0);
			if (lfd < 0 ||
			    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
			    bind(lfd, (struct sockaddr *)&ss, len) ||
			    (type == SOCK_STREAM && listen(lfd, 8)))
				return setup_fail("listener");
		}
		if (until) {
			/* A probe loop across an agent's restart: every attempt
			 * must be denied. Non-blocking, so that an attempt that
			 * got through never waits on a full backlog. */
			long attempts = 0, ok = 0, failed = 0;
			struct timespec t0, t1;
			FILE *log = NULL;
			bool allowed;

			/* "-": stdout, opened before the sandbox was joined; a
			 * sandbox may not be allowed to open files for writing. */
			if (log_path && !strcmp(log_path, "-"))
				log = stdout;
			else if (log_path && !(log = fopen(log_path, "we")))
				return setup_fail("--log");
			if (cgroup && join_late && join_cgroup(cgroup))
				return setup_fail("joining the cgroup");
			while (access(until, F_OK)) {
				fd = socket(ss.ss_family, type | SOCK_NONBLOCK, 0);
				if (fd < 0)
					return setup_fail("socket");
				attempts++;
				clock_gettime(CLOCK_REALTIME, &t0);
				allowed = connect(fd, (struct sockaddr *)&ss, len) == 0 ||
					  errno == EINPROGRESS;
				clock_gettime(CLOCK_REALTIME, &t1);
				if (allowed)
					ok++;
				else
					failed++;
				if (log)
					fprintf(log, "%lld %lld %d\n",
						(long long)t0.tv_sec * 1000000000 + t0.tv_nsec,
						(long long)t1.tv_sec * 1000000000 + t1.tv_nsec,
						allowed);
				close(fd);
				usleep((useconds_t)every_us);
			}
			if (log && log != stdout)
				fclose(log);
			printf("attempts=%ld ok=%ld failed=%ld\n", attempts, ok, failed);
			return ok ? 1 : 0;
		}
		fd = socket(ss.ss_family, type, 0);
		if (fd < 0)
			return setup_fail("socket");
		if (cgroup && join_late && join_cgroup(cgroup))
			return setup_fail("joining the cgroup");
		return result(connect(fd, (struct sockaddr *)&ss, len));
	}
	if (!strcmp(argv[i], "sendto") && type == SOCK_DGRAM) {
		long n = 1, k, failed = 0;
		int rc = 0, last_errno = 0;

		if (argc - i > 5 && !strcmp(argv[i + 4], "--count"))
			n = atol(argv[i + 5]);
		fd = socket(ss.ss_family, type, 0);
		if (fd < 0 || n < 1)
			return setup_fail("socket");
		if (cgroup && join_late && join_cgroup(cgroup))
			return setup_fail("joining the cgroup");
		/* A storm of denials, for the event pipeline's loss accounting. */
		for (k = 0; k < n; k++) {
			rc = sendto(fd, "x", 1, 0, (struct sockaddr *)&ss, len) < 0 ? -1 : 0;
			if (rc) {
				failed++;
				last_errno = errno;
			}
		}
		if (n > 1)
			printf("failed=%ld %s\n", failed,
			       failed ? errname(last_errno) : "-");
		errno = last_errno;
		return result(rc);
	}
usage:
	fprintf(stderr, "usage: netprobe [--netns] [--cgroup DIR [--join-late]] [--wait FILE] connect tcp|udp ADDR PORT [--listen] [--until FILE [--every-us N]]\n"
			"       netprobe [--netns] [--cgroup DIR] sendto udp ADDR PORT [--count N]\n"
			"       netprobe [--netns] [--cgroup DIR] socket raw4|raw6|icmp|icmp6|packet\n");
	return 2;
}
