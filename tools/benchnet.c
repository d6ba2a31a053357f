// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * benchnet: the network benchmark's measuring process (tests/bench/net.sh).
 * It times, in tight loops, the socket calls that stockade's cgroup
 * programs sit on, from wherever it is put (a sandbox cgroup, a cgroup
 * outside every sandbox, a host with no agent):
 *
 *   tcp       socket + SO_LINGER 0 + connect + close, to a listener on
 *             127.0.0.1:TCP_PORT (linger 0 resets the connection on close,
 *             so no TIME_WAIT builds up and distorts later batches);
 *             sock_create and connect4 run, and egress for each packet
 *   udpconn   socket + connect + close, to 127.0.0.1:UDP_PORT (sock_create,
 *             connect4)
 *   sendto    sendto() of 32 bytes on one unconnected socket to
 *             127.0.0.1:UDP_PORT, where a bound socket receives (sendmsg4,
 *             egress)
 *
 *   benchnet [--netns] [--cgroup DIR] [--cpu N] [--batches B]
 *            [--tcp-batch N] [--udp-batch N] [--sendto-batch N]
 *            [--tcp-port P] [--udp-port P] --check-port P --expect open|denied
 *
 * The ops' batches are interleaved (tcp, udpconn, sendto, tcp, ...), after
 * one untimed warm-up batch each, so a slow moment hits every op alike.
 * Output: one line per op, "OP NS_PER_OP", the median over the B batches
 * of each batch's mean: a batch that a preemption hit does not move it.
 *
 * The run is valid only if every timed call succeeded (one failure: exit 1,
 * no figures), every connection reached the listener and every datagram
 * the receiver, and --check-port behaves as --expect says: a TCP connect
 * and a UDP sendto to 127.0.0.1:P (listened on, received) both succeed
 * ("open": not in a sandbox) or both fail with EPERM ("denied": a sandbox
 * judges this process; the measured port is allowed, this one is not).
 * Without that check an "inside" figure could be measuring a sandbox that
 * no program guards.
 *
 * --netns: a new network namespace with only lo up (the traffic never
 * leaves it). --cgroup DIR: join DIR first (cgroup.procs). --cpu N: pin to
 * CPU N. Exit status: 0, 1 when a check or call failed, 2 on usage/setup.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
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

#define MAX_BATCHES	1000
#define PAYLOAD		32

enum op { OP_TCP, OP_UDPCONN, OP_SENDTO, OP_N };
static const char *const op_name[OP_N] = { "tcp", "udpconn", "sendto" };

struct bench {
	struct sockaddr_in tcp_dst, udp_dst;
	int lfd;	/* TCP listener */
	int rfd;	/* UDP receiver */
	int sfd;	/* sendto's socket */
	char buf[PAYLOAD];
};

static int fail(const char *step)
{
	fprintf(stderr, "benchnet: %s: %s\n", step, strerror(errno));
	return -(errno ? errno : EIO);
}

static int lo_up(void)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return fail("socket for lo");
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr))
		err = fail("SIOCGIFFLAGS lo");
	ifr.ifr_flags |= IFF_UP;
	if (!err && ioctl(fd, SIOCSIFFLAGS, &ifr))
		err = fail("bringing lo up");
	close(fd);
	return err;
}

static int join_cgroup(const char *dir)
{
	char path[4096], pid[32];
	int fd, n, err = 0;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(path);
	n = snprintf(pid, sizeof(pid), "%d\n", getpid());
	if (write(fd, pid, (size_t)n) != n)
		err = fail("joining the cgroup");
	close(fd);
	return err;
}

static void addr_lo(struct sockaddr_in *a, int port)
{
	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_port = htons((unsigned short)port);
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
}

static int listen_tcp(int port)
{
	struct sockaddr_in a;
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	addr_lo(&a, port);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 4096)) {
		fail("TCP listener on 127.0.0.1");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static int bind_udp(int port)
{
	struct sockaddr_in a;
	int sz = 64 << 20, fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	addr_lo(&a, port);
	/* Room for a whole batch: a full receive queue would turn sends into
	 * drops, a different (cheaper) path than the one measured. */
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		fail("UDP receiver on 127.0.0.1");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Accept (and close) what the listener holds; returns how many. */
static long drain_tcp(int lfd)
{
	long n = 0;
	int fd;

	while ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		close(fd);
		n++;
	}
	return n;
}

static long drain_udp(int rfd, char *buf)
{
	long n = 0;

	while (recv(rfd, buf, PAYLOAD, MSG_DONTWAIT) >= 0)
		n++;
	return n;
}

static int tcp_once(const struct sockaddr_in *dst)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), rc;

	if (fd < 0)
		return -1;
	rc = setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	if (!rc)
		rc = connect(fd, (const struct sockaddr *)dst, sizeof(*dst));
	if (rc) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return close(fd);
}

static int udpconn_once(const struct sockaddr_in *dst)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc;

	if (fd < 0)
		return -1;
	rc = connect(fd, (const struct sockaddr *)dst, sizeof(*dst));
	if (rc) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return close(fd);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* One batch of n calls of op; its mean ns per call, or < 0 on a failure. */
static double batch(struct bench *b, enum op op, long n)
{
	double t0, t1;
	long i, got;
	int rc = 0;

	t0 = now_ns();
	for (i = 0; i < n && !rc; i++) {
		switch (op) {
		case OP_TCP:
			rc = tcp_once(&b->tcp_dst);
			break;
		case OP_UDPCONN:
			rc = udpconn_once(&b->udp_dst);
			break;
		default:
			rc = sendto(b->sfd, b->buf, PAYLOAD, 0, (const struct sockaddr *)&b->udp_dst,
				    sizeof(b->udp_dst)) == PAYLOAD ? 0 : -1;
			break;
		}
	}
	t1 = now_ns();
	if (rc) {
		fprintf(stderr, "benchnet: %s call %ld of a batch failed: %s (the measured destination must be allowed)\n",
			op_name[op], i, strerror(errno));
		return -1;
	}
	/* Outside the timing: empty the queues, and prove every call got
	 * through (an allowed verdict that did not deliver would be a
	 * different, cheaper path). */
	if (op == OP_UDPCONN)
		return (t1 - t0) / (double)n;
	/* Loopback delivers in softirq context, usually before the call
	 * returns; allow it 100 ms to finish the last few. */
	for (got = 0, i = 0; got < n && i < 200; i++) {
		got += op == OP_TCP ? drain_tcp(b->lfd) : drain_udp(b->rfd, b->buf);
		if (got < n)
			usleep(500);
	}
	if (got != n) {
		fprintf(stderr, "benchnet: %s: %ld of %ld %s reached the other end\n", op_name[op],
			got, n, op == OP_TCP ? "connections" : "datagrams");
		return -1;
	}
	return (t1 - t0) / (double)n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* TCP connect and UDP sendto to 127.0.0.1:port, where lfd and rfd
 * listen: 0 = both succeeded, 1 = both EPERM, -1 = anything else (mixed,
 * or another error). */
static int probe_port(int port, int lfd, int rfd)
{
	struct sockaddr_in dst;
	char buf[PAYLOAD] = { 0 };
	int t, u, fd, ret = -1;

	addr_lo(&dst, port);
	if (lfd < 0 || rfd < 0)
		goto out;
	t = tcp_once(&dst) ? errno : 0;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fail("UDP socket for the check");
		goto out;
	}
	u = sendto(fd, buf, sizeof(buf), 0, (struct sockaddr *)&dst, sizeof(dst)) < 0 ? errno : 0;
	close(fd);
	if (!t && !u)
		ret = 0;
	else if (t == EPERM && u == EPERM)
		ret = 1;
	else
		fprintf(stderr, "benchnet: check port %d: tcp connect: %s, udp sendto: %s\n", port,
			t ? strerror(t) : "ok", u ? strerror(u) : "ok");
out:
	return ret;
}

static int usage(void)
{
	fprintf(stderr, "usage: benchnet [--netns] [--cgroup DIR] [--cpu N] [--batches B] [--tcp-batch N] [--udp-batch N] [--sendto-batch N] [--tcp-port P] [--udp-port P] --check-port P --expect open|denied\n");
	return 2;
}

struct args {
	long nb, per[OP_N];	/* batches; calls a batch, by op */
	int tcp_port, udp_port, check_port, cpu, expect, netns;
	const char *cgroup;
};

/* The options into a: 0, or -1 for a usage error. */
static int parse_args(int argc, char **argv, struct args *a)
{
	static const struct option lo[] = {
		{ "netns", no_argument, NULL, 'n' },
		{ "cgroup", required_argument, NULL, 'c' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "batches", required_argument, NULL, 'b' },
		{ "tcp-batch", required_argument, NULL, 'T' },
		{ "udp-batch", required_argument, NULL, 'U' },
		{ "sendto-batch", required_argument, NULL, 'S' },
		{ "tcp-port", required_argument, NULL, 't' },
		{ "udp-port", required_argument, NULL, 'u' },
		{ "check-port", required_argument, NULL, 'k' },
		{ "expect", required_argument, NULL, 'e' },
		{ 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'n': a->netns = 1; break;
		case 'c': a->cgroup = optarg; break;
		case 'C': a->cpu = atoi(optarg); break;
		case 'b': a->nb = atol(optarg); break;
		case 'T': a->per[OP_TCP] = atol(optarg); break;
		case 'U': a->per[OP_UDPCONN] = atol(optarg); break;
		case 'S': a->per[OP_SENDTO] = atol(optarg); break;
		case 't': a->tcp_port = atoi(optarg); break;
		case 'u': a->udp_port = atoi(optarg); break;
		case 'k': a->check_port = atoi(optarg); break;
		case 'e':
			a->expect = !strcmp(optarg, "open") ? 0 : !strcmp(optarg, "denied") ? 1 : -2;
			break;
		default: return -1;
		}
	}
	/* The TCP batch must fit the listen backlog (4096): a full accept
	 * queue drops SYNs, and connect() would wait a second to retry. */
	if (optind != argc || a->nb < 1 || a->nb > MAX_BATCHES || a->per[OP_TCP] < 1 ||
	    a->per[OP_TCP] > 4000 || a->per[OP_UDPCONN] < 1 || a->per[OP_SENDTO] < 1 ||
	    a->per[OP_SENDTO] > 100000 || a->check_port <= 0 || a->expect < 0)
		return -1;
	return 0;
}

/* The namespace, the other ends, the cgroup, the CPU and the sendto
 * socket: 0, or -1 (said where the step says why). */
static int bench_setup(const struct args *a, struct bench *b, int *clfd, int *crfd)
{
	if (a->netns && (unshare(CLONE_NEWNET) ? fail("new network namespace") : lo_up()))
		return -1;
	/* The other ends are made before joining: they stand for services
	 * outside the sandbox, which a sandbox may not bind (network.listen). */
	addr_lo(&b->tcp_dst, a->tcp_port);
	addr_lo(&b->udp_dst, a->udp_port);
	b->lfd = listen_tcp(a->tcp_port);
	b->rfd = bind_udp(a->udp_port);
	*clfd = listen_tcp(a->check_port);
	*crfd = bind_udp(a->check_port);
	if (a->cgroup && join_cgroup(a->cgroup))
		return -1;
	if (a->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(a->cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			fail("pinning to the CPU");
			return -1;
		}
	}
	b->sfd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	return b->lfd < 0 || b->rfd < 0 || b->sfd < 0 ? -1 : 0;
}

/* The check port gives the verdict --expect names (said if not); after:
 * the check again, once measured, so the verdict held all along. */
static bool check_verdict(const struct args *a, int clfd, int crfd, bool after)
{
	int got = probe_port(a->check_port, clfd, crfd);
	const char *was = got == 0 ? "success" : got == 1 ? "EPERM" : "an error";

	if (got == a->expect)
		return true;
	if (after)
		fprintf(stderr, "benchnet: check port %d after measuring: expected %s, got %s\n",
			a->check_port, a->expect ? "EPERM" : "success", was);
	else
		fprintf(stderr, "benchnet: check port %d: expected %s, got %s\n", a->check_port,
			a->expect ? "EPERM (in a sandbox)" : "success (no sandbox)", was);
	return false;
}

/* An untimed batch of each op, then nb batches of each, interleaved, into
 * v[op][batch]: 0, or -1 when a batch failed (said). */
static int measure(const struct args *a, struct bench *b, double *v[OP_N])
{
	long i;
	int o;

	for (o = 0; o < OP_N; o++)
		if (batch(b, (enum op)o, a->per[o]) < 0)
			return -1;
	for (i = 0; i < a->nb; i++) {
		for (o = 0; o < OP_N; o++) {
			v[o][i] = batch(b, (enum op)o, a->per[o]);
			if (v[o][i] < 0)
				return -1;
		}
	}
	return 0;
}

/* "OP MEDIAN_NS" a line. */
static void report(const struct args *a, double *v[OP_N])
{
	long nb = a->nb;
	int o;

	for (o = 0; o < OP_N; o++) {
		qsort(v[o], (size_t)nb, sizeof(double), cmp_double);
		printf("%s %.1f\n", op_name[o],
		       nb % 2 ? v[o][nb / 2] : (v[o][nb / 2 - 1] + v[o][nb / 2]) / 2);
	}
}

int main(int argc, char **argv)
{
	struct args a = {
		.nb = 20, .per = { 200, 1000, 2000 }, .tcp_port = 5201,
		.udp_port = 5202, .cpu = -1, .expect = -1,
	};
	struct bench b = { .lfd = -1, .rfd = -1, .sfd = -1 };
	double *v[OP_N] = { 0 };
	int o, ret = 2, clfd = -1, crfd = -1;

	if (parse_args(argc, argv, &a))
		return usage();
	if (bench_setup(&a, &b, &clfd, &crfd))
		goto out;
	for (o = 0; o < OP_N; o++) {
		v[o] = calloc((size_t)a.nb, sizeof(double));
		if (!v[o])
			goto out;
	}
	ret = 1;
	if (check_verdict(&a, clfd, crfd, false) && !measure(&a, &b, v) &&
	    check_verdict(&a, clfd, crfd, true)) {
		report(&a, v);
		ret = 0;
	}
out:
	for (o = 0; o < OP_N; o++)
		free(v[o]);
	if (b.lfd >= 0)
		close(b.lfd);
	if (b.rfd >= 0)
		close(b.rfd);
	if (b.sfd >= 0)
		close(b.sfd);
	if (clfd >= 0)
		close(clfd);
	if (crfd >= 0)
		close(crfd);
	return ret;
}
