// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * netprobe: make exactly one network syscall the way confined code would,
 * and print what the kernel said. Used by the live tests, the VM suite and
 * the demo.
 *
 *   netprobe [--netns] [--cgroup DIR] OP ARGS...
 *     connect tcp|udp|udplite ADDR PORT [--listen] [--until FILE [--every-us N] [--log FILE]]
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
 *     sendto icmp ADDR PORT                  an echo request from an ICMP
 *                                            echo ("ping") socket
 *     sendto icmp-connected ADDR PORT        the same socket connected to
 *                                            ADDR first (before joining,
 *                                            with --join-late), then send()
 *     sendto tcp ADDR PORT                   one byte with MSG_FASTOPEN:
 *                                            the connect within the send
 *     sendto packet lo 0                     an AF_PACKET datagram out of
 *                                            lo (a socket made before
 *                                            joining, with --join-late)
 *     socket raw4|raw6|icmp|icmp6|packet|udplite|udplite6
 *                                            socket() of that kind
 *     bind tcp|udp ADDR PORT [--freebind]    bind(); --freebind sets
 *                                            IP_FREEBIND / IPV6_FREEBIND
 *                                            first (its refusal is then
 *                                            the result)
 *     listen tcp ADDR PORT | listen tcp - 4|6
 *                                            bind (not with -: then only
 *                                            the family), then listen();
 *                                            prints "port=N" of the bound
 *                                            port on success
 *     serve tcp ADDR PORT                    a server in --cgroup and a
 *                                            client outside it, in the same
 *                                            namespace: the server binds,
 *                                            listens, accepts, sends "hi";
 *                                            OK when the client reads it.
 *                                            pid= is the server's
 *     setsockopt tcp|udp|tcp6|udp6 OPTION    one setsockopt(): transparent,
 *                                            freebind, mark, bindtodevice,
 *                                            bindtoifindex, ipsec_policy,
 *                                            ipt_replace, reuseport_cbpf,
 *                                            tcp_repair, srcroute (IP_OPTIONS
 *                                            with a loose source route;
 *                                            IPV6_RTHDR with a segment
 *                                            routing header), unicast_if,
 *                                            pktoptions (IPV6_2292PKTOPTIONS,
 *                                            tcp6/udp6 only) (IPv6 levels
 *                                            on tcp6/udp6)
 *     ioctl addrt|sifflags                   one socket ioctl that changes
 *                                            the host's network: SIOCADDRT
 *                                            (10.99.0.0/16 via lo),
 *                                            SIOCSIFFLAGS (lo's own flags)
 *     netlink MSG                            one sendmsg() on a netlink
 *                                            socket: route-getaddr,
 *                                            route-getlink (dumps; OK only
 *                                            when the reply arrives),
 *                                            route-newaddr (127.0.0.2/8 on
 *                                            lo), route-multi (a GETLINK
 *                                            then a NEWADDR), route-many
 *                                            (65 GETLINKs), route-short
 *                                            (a cut header), nft-deltable,
 *                                            audit-get, diag-dump,
 *                                            sock-destroy, generic-getfamily
 *
 * --netns moves the probe into a new network namespace with only `lo` up,
 * so a destination the agent fails to block ends in ENETUNREACH, never on
 * a real network; ping sockets are enabled for every group there, so that
 * only stockade can refuse them. --cgroup DIR joins that cgroup (writes
 * cgroup.procs). --wait FILE waits (up to 60 s) until FILE exists before
 * acting: a process that was already running when the agent started.
 * --join-late creates the socket first and joins --cgroup only then: a
 * socket made before its owner entered the sandbox. --socket-first (with
 * connect, and --wait) creates the socket before --wait's wait, and
 * prints "socket" once it exists: a socket made in a sandbox's cgroup
 * before the agent confined it.
 * Output: "pid=N" then "OK" or the errno name (EPERM, ENETUNREACH, ...).
 * Exit status: 0 for OK, 1 for an errno, 2 for a usage or setup error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <net/route.h>
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
#include <sys/wait.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/genetlink.h>
#include <linux/if_addr.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/inet_diag.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter_ipv4/ip_tables.h>
#include <linux/netfilter_ipv6/ip6_tables.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <netinet/tcp.h>

#define PROBE_NAME	"netprobe"
#include "probe.h"

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

/* One netlink request: header, then `len` bytes of payload. */
struct nl_req {
	struct nlmsghdr h;
	char body[256];
};

static void nl_msg(struct nl_req *r, __u16 type, __u16 flags, const void *body,
		   size_t len)
{
	memset(r, 0, sizeof(*r));
	r->h.nlmsg_len = (__u32)(NLMSG_HDRLEN + len);
	r->h.nlmsg_type = type;
	r->h.nlmsg_flags = (__u16)(NLM_F_REQUEST | flags);
	r->h.nlmsg_seq = 1;
	memcpy(r->body, body, len);
}

/* An rtattr of `len` bytes at buf + *off. */
static void rta_put(char *buf, size_t *off, unsigned short type,
		    const void *data, size_t len)
{
	struct rtattr *a = (struct rtattr *)(buf + *off);

	a->rta_type = type;
	a->rta_len = (unsigned short)RTA_LENGTH(len);
	memcpy(RTA_DATA(a), data, len);
	*off += RTA_ALIGN(a->rta_len);
}

/* After a dump request: read until NLMSG_DONE; 0, or -1 with errno. */
static int nl_dump_reply(int fd)
{
	static char buf[65536];
	int i;

	for (i = 0; i < 1000; i++) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (n < 0)
			return -1;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);

				errno = e->error ? -e->error : EPROTO;
				return e->error ? -1 : 0;
			}
		}
	}
	errno = EPROTO;
	return -1;
}

/* route-many: 65 GETs in one send, one more than the hook judges. */
static int nl_route_many(void)
{
	static char many[65 * NLMSG_ALIGN(NLMSG_HDRLEN + sizeof(struct rtgenmsg))];
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct rtgenmsg g = { .rtgen_family = AF_UNSPEC };
	size_t k, step = NLMSG_ALIGN(NLMSG_HDRLEN + sizeof(g));
	struct nl_req r;
	int fd;

	for (k = 0; k < 65; k++) {
		nl_msg(&r, RTM_GETLINK, 0, &g, sizeof(g));
		r.h.nlmsg_seq = (__u32)k + 1;
		memcpy(many + k * step, &r, step);
	}
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return probe_setup_fail("netlink socket");
	return probe_result(sendto(fd, many, sizeof(many), 0,
				   (struct sockaddr *)&sa,
				   sizeof(sa)) < 0 ? -1 : 0);
}

/* The netlink MSG (all but route-many) as *nmsg requests in r, for the
 * protocol *proto; *dump: its reply is a dump to read. -2: no such MSG. */
static int nl_build(const char *what, struct nl_req r[2], size_t *nmsg,
		    int *proto, int *dump)
{
	size_t off = 0;
	char body[256];

	memset(body, 0, sizeof(body));
	*nmsg = 1;
	*proto = NETLINK_ROUTE;
	*dump = 0;
	if (!strcmp(what, "route-getaddr") || !strcmp(what, "route-getlink")) {
		/* What getifaddrs() sends. */
		struct rtgenmsg g = { .rtgen_family = AF_UNSPEC };

		nl_msg(&r[0], what[9] == 'a' ? RTM_GETADDR : RTM_GETLINK,
		       NLM_F_DUMP, &g, sizeof(g));
		*dump = 1;
	} else if (!strcmp(what, "route-newaddr") || !strcmp(what, "route-multi")) {
		struct ifaddrmsg *ifa = (struct ifaddrmsg *)body;
		struct in_addr a = { htonl(0x7f000002) };
		struct rtgenmsg g = { .rtgen_family = AF_UNSPEC };

		ifa->ifa_family = AF_INET;
		ifa->ifa_prefixlen = 8;
		ifa->ifa_index = if_nametoindex("lo");
		off = NLMSG_ALIGN(sizeof(*ifa));
		rta_put(body, &off, IFA_LOCAL, &a, sizeof(a));
		rta_put(body, &off, IFA_ADDRESS, &a, sizeof(a));
		if (what[6] == 'm') {
			nl_msg(&r[0], RTM_GETLINK, NLM_F_DUMP, &g, sizeof(g));
			nl_msg(&r[1], RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK,
			       body, off);
			*nmsg = 2;
		} else {
			nl_msg(&r[0], RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK,
			       body, off);
		}
	} else if (!strcmp(what, "route-short")) {
		struct rtgenmsg g = { .rtgen_family = AF_UNSPEC };

		/* A GET whose length claims more than is sent. */
		nl_msg(&r[0], RTM_GETLINK, NLM_F_DUMP, &g, sizeof(g));
		r[0].h.nlmsg_len = 200;
	} else if (!strcmp(what, "nft-deltable")) {
		/* nft delete table inet stockade_probe: harmless when missing. */
		struct nfgenmsg *g = (struct nfgenmsg *)body;

		g->nfgen_family = 1;	/* NFPROTO_INET */
		g->version = NFNETLINK_V0;
		off = NLMSG_ALIGN(sizeof(*g));
		rta_put(body, &off, NFTA_TABLE_NAME, "stockade_probe", 15);
		nl_msg(&r[0], (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_DELTABLE,
		       NLM_F_ACK, body, off);
		*proto = NETLINK_NETFILTER;
	} else if (!strcmp(what, "audit-get")) {
		nl_msg(&r[0], AUDIT_GET, NLM_F_ACK, body, 0);
		*proto = NETLINK_AUDIT;
	} else if (!strcmp(what, "diag-dump") || !strcmp(what, "sock-destroy")) {
		struct inet_diag_req_v2 q = {
			.sdiag_family = AF_INET, .sdiag_protocol = IPPROTO_TCP,
			.idiag_states = ~0U,
		};

		if (what[0] == 'd') {
			nl_msg(&r[0], SOCK_DIAG_BY_FAMILY, NLM_F_DUMP, &q, sizeof(q));
		} else {
			/* A socket that does not exist: ENOENT when let through. */
			q.id.idiag_sport = htons(1);
			q.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
			q.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
			nl_msg(&r[0], SOCK_DESTROY, NLM_F_ACK, &q, sizeof(q));
		}
		*proto = NETLINK_SOCK_DIAG;
	} else if (!strcmp(what, "generic-getfamily")) {
		struct genlmsghdr *g = (struct genlmsghdr *)body;

		g->cmd = CTRL_CMD_GETFAMILY;
		g->version = 1;
		off = GENL_HDRLEN;
		rta_put(body, &off, CTRL_ATTR_FAMILY_NAME, "nlctrl", 7);
		nl_msg(&r[0], GENL_ID_CTRL, NLM_F_ACK, body, off);
		*proto = NETLINK_GENERIC;
	} else {
		return -2;
	}
	return 0;
}

/* netlink MSG: build it, send it in one sendmsg(), report the send. */
static int netlink_op(const char *what)
{
	static char buf[2 * sizeof(struct nl_req)];
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct nl_req r[2];
	size_t nmsg, len = 0, k;
	int proto, fd, dump;
	struct iovec iov;
	struct msghdr mh;

	if (!strcmp(what, "route-many"))
		return nl_route_many();
	if (nl_build(what, r, &nmsg, &proto, &dump))
		return -2;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, proto);
	if (fd < 0)
		return probe_setup_fail("netlink socket");
	/* Messages back to back, each aligned: one skb, many headers. */
	for (k = 0; k < nmsg; k++) {
		size_t l = NLMSG_ALIGN(r[k].h.nlmsg_len);

		if (!strcmp(what, "route-short"))
			l = NLMSG_HDRLEN + 4;
		memcpy(buf + len, &r[k], l);
		len += l;
	}
	iov.iov_base = buf;
	iov.iov_len = len;
	memset(&mh, 0, sizeof(mh));
	mh.msg_name = &sa;
	mh.msg_namelen = sizeof(sa);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (sendmsg(fd, &mh, 0) < 0)
		return probe_result(-1);
	return probe_result(dump ? nl_dump_reply(fd) : 0);
}

/* setsockopt KIND OPTION */
static int sockopt_op(const char *kind, const char *opt)
{
	bool v6 = strchr(kind, '6'), tcp = !strncmp(kind, "tcp", 3);
	int one = 1, fd, level, name;
	const void *val = &one;
	socklen_t vlen = sizeof(one);
	struct ipt_replace rep;
	struct sock_filter insn = { BPF_RET | BPF_K, 0, 0, 0 };
	struct sock_fprog prog = { 1, &insn };
	static const unsigned char lsrr[8] = { 1, 0x83, 7, 4, 127, 0, 0, 3 };
	/* struct ipv6_sr_hdr, type 4, segments_left 1, two segments ::1. */
	static const unsigned char srh[40] = {
		0, 4, 4, 1, 1, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
	};

	memset(&rep, 0, sizeof(rep));
	fd = socket(v6 ? AF_INET6 : AF_INET, tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
	if (fd < 0)
		return probe_setup_fail("socket");
	level = v6 ? IPPROTO_IPV6 : IPPROTO_IP;
	if (!strcmp(opt, "transparent")) {
		name = v6 ? IPV6_TRANSPARENT : IP_TRANSPARENT;
	} else if (!strcmp(opt, "freebind")) {
		name = v6 ? IPV6_FREEBIND : IP_FREEBIND;
	} else if (!strcmp(opt, "mark")) {
		level = SOL_SOCKET;
		name = SO_MARK;
	} else if (!strcmp(opt, "bindtodevice")) {
		level = SOL_SOCKET;
		name = SO_BINDTODEVICE;
		val = "lo";
		vlen = 3;
	} else if (!strcmp(opt, "bindtoifindex")) {
		level = SOL_SOCKET;
		name = SO_BINDTOIFINDEX;
	} else if (!strcmp(opt, "ipsec_policy")) {
		name = v6 ? IPV6_IPSEC_POLICY : IP_IPSEC_POLICY;
	} else if (!strcmp(opt, "ipt_replace")) {
		/* An empty, invalid table: EINVAL when let through. */
		name = v6 ? IP6T_SO_SET_REPLACE : IPT_SO_SET_REPLACE;
		val = &rep;
		vlen = sizeof(rep);
	} else if (!strcmp(opt, "reuseport_cbpf")) {
		level = SOL_SOCKET;
		name = SO_ATTACH_REUSEPORT_CBPF;
		val = &prog;
		vlen = sizeof(prog);
	} else if (!strcmp(opt, "tcp_repair")) {
		level = IPPROTO_TCP;
		name = TCP_REPAIR;
	} else if (!strcmp(opt, "srcroute") && !v6) {
		/* NOP, LSRR, length 7, pointer 4, one hop: 127.0.0.3. */
		name = IP_OPTIONS;
		val = lsrr;
		vlen = sizeof(lsrr);
	} else if (!strcmp(opt, "srcroute")) {
		name = IPV6_RTHDR;
		val = srh;
		vlen = sizeof(srh);
	} else if (!strcmp(opt, "unicast_if")) {
		name = v6 ? IPV6_UNICAST_IF : IP_UNICAST_IF;
	} else if (!strcmp(opt, "pktoptions") && v6) {
		/* No control message: clears the sticky options. */
		name = IPV6_2292PKTOPTIONS;
		val = NULL;
		vlen = 0;
	} else {
		return -2;
	}
	return probe_result(setsockopt(fd, level, name, val, vlen));
}

/* A listener on ss (port 0 and "-" as the caller wants); -1 with errno. */
static int make_listener(struct sockaddr_storage *ss, socklen_t len, int type,
			 bool do_bind)
{
	int fd = socket(ss->ss_family, type, 0), one = 1;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (do_bind && bind(fd, (struct sockaddr *)ss, len))
		return -1;
	if (type == SOCK_STREAM && listen(fd, 8))
		return -1;
	return fd;
}

/* serve: the server in the cgroup (a child), the client outside. */
static int serve_op(struct sockaddr_storage *ss, socklen_t len,
		    const char *cgroup)
{
	int sync[2], fd, cfd, status;
	char buf[8] = "", res[16] = "";
	pid_t child;
	ssize_t n;

	if (pipe(sync))
		return probe_setup_fail("pipe");
	child = fork();
	if (child < 0)
		return probe_setup_fail("fork");
	if (child == 0) {
		if (cgroup && probe_join_cgroup(cgroup))
			_exit(2);
		probe_print_pid();
		fflush(stdout);
		fd = make_listener(ss, len, SOCK_STREAM, true);
		if (fd < 0) {
			snprintf(res, sizeof(res), "%s", probe_errname(errno));
			if (write(sync[1], res, sizeof(res)) < 0)
				_exit(2);
			_exit(1);
		}
		if (write(sync[1], "OK", 3) < 0)
			_exit(2);
		cfd = accept(fd, NULL, NULL);
		if (cfd < 0 || write(cfd, "hi", 2) != 2)
			_exit(1);
		close(cfd);
		_exit(0);
	}
	close(sync[1]);
	n = read(sync[0], res, sizeof(res) - 1);
	if (n <= 0 || strcmp(res, "OK")) {
		waitpid(child, &status, 0);
		printf("%s\n", n > 0 ? res : "E?");
		return 1;
	}
	fd = socket(ss->ss_family, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)ss, len) ||
	    read(fd, buf, 2) != 2 || strncmp(buf, "hi", 2)) {
		kill(child, SIGKILL);
		waitpid(child, &status, 0);
		return probe_result(-1);
	}
	waitpid(child, &status, 0);
	return probe_result(0);
}

/* The options before the command. */
struct opts {
	const char *wait_for, *cgroup;
	bool join_late, socket_first;
};

/* What an op returns for a usage error (as netlink_op and sockopt_op do). */
#define USAGE	(-2)

static int usage(void)
{
	fprintf(stderr, "usage: netprobe [--netns] [--cgroup DIR [--join-late]] [--wait FILE [--socket-first]] connect tcp|udp|udplite ADDR PORT [--listen] [--until FILE [--every-us N]]\n"
			"       netprobe [--netns] [--cgroup DIR] sendto udp|udplite ADDR PORT [--count N]\n"
			"       netprobe [--netns] [--cgroup DIR] socket raw4|raw6|icmp|icmp6|packet|udplite|udplite6\n"
			"       netprobe [--netns] [--cgroup DIR] bind tcp|udp|udplite ADDR PORT [--freebind]\n"
			"       netprobe [--netns] [--cgroup DIR] listen tcp ADDR PORT | - 4|6\n"
			"       netprobe [--netns] [--cgroup DIR] serve tcp ADDR PORT\n"
			"       netprobe [--netns] [--cgroup DIR] setsockopt tcp|udp|tcp6|udp6 OPTION\n"
			"       netprobe [--netns] [--cgroup DIR] netlink MSG\n");
	return 2;
}

/* The options, in order (--netns acts at once): the index of the
 * command, 0 for a usage error, -1 when the new namespace failed. */
static int parse_opts(int argc, char **argv, struct opts *o)
{
	int i;

	for (i = 1; i < argc && !strncmp(argv[i], "--", 2); i++) {
		if (!strcmp(argv[i], "--netns")) {
			if (unshare(CLONE_NEWNET) || lo_up() || ping_all()) {
				probe_setup_fail("new network namespace");
				return -1;
			}
		} else if (!strcmp(argv[i], "--wait") && i + 1 < argc) {
			o->wait_for = argv[++i];
		} else if (!strcmp(argv[i], "--join-late")) {
			o->join_late = true;
		} else if (!strcmp(argv[i], "--socket-first")) {
			o->socket_first = true;
		} else if (!strcmp(argv[i], "--cgroup") && i + 1 < argc) {
			o->cgroup = argv[++i];
		} else {
			return 0;
		}
	}
	return argc - i < 2 ? 0 : i;
}

/* --join-late: join --cgroup now, once the socket exists. */
static int join_late(const struct opts *o)
{
	return o->cgroup && o->join_late && probe_join_cgroup(o->cgroup) ? -1 : 0;
}

/* socket KIND */
static int socket_op(const char *k)
{
	int fd;

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
	else if (!strcmp(k, "udplite"))
		fd = socket(AF_INET, SOCK_DGRAM, IPPROTO_UDPLITE);
	else if (!strcmp(k, "udplite6"))
		fd = socket(AF_INET6, SOCK_DGRAM, IPPROTO_UDPLITE);
	else
		return USAGE;
	return probe_result(fd < 0 ? -1 : 0);
}

/* listen tcp ADDR PORT, or listen tcp - 4|6 (no bind; PORT says the
 * family). */
static int listen_op(const char *addr, const char *port)
{
	bool do_bind = strcmp(addr, "-") != 0;
	struct sockaddr_storage ss;
	struct sockaddr_in6 got;
	socklen_t len, glen = sizeof(got);
	int fd;

	if (do_bind ? parse_addr(addr, port, &ss, &len) :
		      parse_addr(strcmp(port, "6") ? "0.0.0.0" : "::", "0", &ss, &len))
		return USAGE;
	fd = make_listener(&ss, len, SOCK_STREAM, do_bind);
	if (fd >= 0 && !getsockname(fd, (struct sockaddr *)&got, &glen))
		printf("port=%d\n", ntohs(got.sin6_port));
	return probe_result(fd < 0 ? -1 : 0);
}

/* connect --until FILE: a probe loop across an agent's restart, where
 * every attempt must be denied. Non-blocking, so that an attempt that got
 * through never waits on a full backlog. */
static int connect_until(const struct sockaddr_storage *ss, socklen_t len,
			 int type, int proto, const char *until, long every_us,
			 const char *log_path, const struct opts *o)
{
	long attempts = 0, ok = 0, failed = 0;
	struct timespec t0, t1;
	FILE *log = NULL;
	bool allowed;
	int fd;

	/* "-": stdout, opened before the sandbox was joined; a sandbox may
	 * not be allowed to open files for writing. */
	if (log_path && !strcmp(log_path, "-"))
		log = stdout;
	else if (log_path && !(log = fopen(log_path, "we")))
		return probe_setup_fail("--log");
	if (join_late(o))
		return probe_setup_fail("joining the cgroup");
	while (access(until, F_OK)) {
		fd = socket(ss->ss_family, type | SOCK_NONBLOCK, proto);
		if (fd < 0)
			return probe_setup_fail("socket");
		attempts++;
		clock_gettime(CLOCK_REALTIME, &t0);
		allowed = connect(fd, (const struct sockaddr *)ss, len) == 0 ||
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

/* connect tcp|udp|udplite ADDR PORT [--listen] [--until FILE [--every-us N]
 * [--log FILE]]: argv[4] on are the flags; lfd, the --listen listener;
 * proto, the socket's protocol (UDP-Lite's, else 0). */
static int connect_op(int argc, char **argv, const struct sockaddr_storage *ss,
		      socklen_t len, int type, int proto, int lfd,
		      const struct opts *o)
{
	const char *until = NULL, *log_path = NULL;
	long every_us = 2000;
	bool listen_first = false;
	int k, fd;

	for (k = 4; k < argc; k++) {
		if (!strcmp(argv[k], "--listen"))
			listen_first = true;
		else if (!strcmp(argv[k], "--until") && k + 1 < argc)
			until = argv[++k];
		else if (!strcmp(argv[k], "--every-us") && k + 1 < argc)
			every_us = atol(argv[++k]);
		else if (!strcmp(argv[k], "--log") && k + 1 < argc)
			log_path = argv[++k];
		else
			return USAGE;
	}
	if (listen_first && lfd < 0)
		return probe_setup_fail("listener");
	if (until && o->socket_first)
		return USAGE;	/* one socket, made before the wait */
	if (until)
		return connect_until(ss, len, type, proto, until, every_us,
				     log_path, o);
	fd = socket(ss->ss_family, type, proto);
	if (fd < 0)
		return probe_setup_fail("socket");
	if (o->socket_first) {
		/* Made: what a test waits for before it starts the agent. */
		printf("socket\n");
		fflush(stdout);
		probe_wait_file(o->wait_for);
	}
	if (join_late(o))
		return probe_setup_fail("joining the cgroup");
	return probe_result(connect(fd, (const struct sockaddr *)ss, len));
}

/* bind tcp|udp ADDR PORT [--freebind] */
static int bind_op(int argc, char **argv, const struct sockaddr_storage *ss,
		   socklen_t len, int type, int proto)
{
	int fd = socket(ss->ss_family, type, proto), one = 1;

	if (fd < 0)
		return probe_setup_fail("socket");
	if (argc > 4 && !strcmp(argv[4], "--freebind") &&
	    setsockopt(fd, ss->ss_family == AF_INET6 ? IPPROTO_IPV6 : IPPROTO_IP,
		       ss->ss_family == AF_INET6 ? IPV6_FREEBIND : IP_FREEBIND,
		       &one, sizeof(one)))
		return probe_result(-1);
	return probe_result(bind(fd, (const struct sockaddr *)ss, len));
}

/* sendto udp ADDR PORT [--count N]: a storm of denials, for the event
 * pipeline's loss accounting. */
static int sendto_op(int argc, char **argv, const struct sockaddr_storage *ss,
		     socklen_t len, int type, int proto, const struct opts *o)
{
	/* An echo request: type 8 (128 for ICMPv6), the kernel sets the
	 * identifier and the checksum. */
	unsigned char echo[8] = { ss && ss->ss_family == AF_INET6 ? 128 : 8, 0, 0, 0,
				  0, 0, 0, 1 };
	const void *buf = "x";
	size_t blen = 1;
	long n = 1, k, failed = 0;
	int fd, rc = 0, last_errno = 0, flags = 0;

	if (argc > 5 && !strcmp(argv[4], "--count"))
		n = atol(argv[5]);
	fd = socket(ss->ss_family, type, proto);
	if (fd < 0 || n < 1)
		return probe_setup_fail("socket");
	if (!strcmp(argv[1], "icmp-connected")) {
		if (connect(fd, (const struct sockaddr *)ss, len))
			return probe_setup_fail("connect");
		ss = NULL;
		len = 0;
	}
	if (join_late(o))
		return probe_setup_fail("joining the cgroup");
	if (proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6) {
		buf = echo;
		blen = sizeof(echo);
	}
	if (type == SOCK_STREAM)
		flags = MSG_FASTOPEN;
	for (k = 0; k < n; k++) {
		rc = sendto(fd, buf, blen, flags, (const struct sockaddr *)ss,
			    ss ? len : 0) < 0 ? -1 : 0;
		if (rc) {
			failed++;
			last_errno = errno;
		}
	}
	if (n > 1)
		printf("failed=%ld %s\n", failed,
		       failed ? probe_errname(last_errno) : "-");
	errno = last_errno;
	return probe_result(rc);
}

/* ioctl addrt|sifflags */
static int ioctl_op(const char *what)
{
	struct rtentry rt;
	struct ifreq ifr;
	struct sockaddr_in *sin;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0)
		return probe_setup_fail("socket");
	memset(&ifr, 0, sizeof(ifr));
	memset(&rt, 0, sizeof(rt));
	strcpy(ifr.ifr_name, "lo");
	if (!strcmp(what, "sifflags")) {
		if (ioctl(fd, SIOCGIFFLAGS, &ifr))
			return probe_setup_fail("SIOCGIFFLAGS");
		return probe_result(ioctl(fd, SIOCSIFFLAGS, &ifr));
	}
	if (strcmp(what, "addrt"))
		return -2;
	sin = (struct sockaddr_in *)&rt.rt_dst;
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(0x0a630000);
	sin = (struct sockaddr_in *)&rt.rt_genmask;
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(0xffff0000);
	rt.rt_dev = ifr.ifr_name;
	rt.rt_flags = RTF_UP;
	return probe_result(ioctl(fd, SIOCADDRT, &rt));
}

/* sendto packet lo 0: one AF_PACKET datagram (an IPv4 ethertype, 20
 * zero bytes) out of lo, from a socket made before --join-late joins. */
static int packet_send_op(const struct opts *o)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET,
				   .sll_protocol = htons(ETH_P_IP),
				   .sll_ifindex = (int)if_nametoindex("lo"),
				   .sll_halen = ETH_ALEN };
	char payload[20] = "";
	int fd = socket(AF_PACKET, SOCK_DGRAM, htons(ETH_P_IP));

	if (fd < 0 || !sll.sll_ifindex)
		return probe_setup_fail("packet socket");
	if (join_late(o))
		return probe_setup_fail("joining the cgroup");
	return probe_result(sendto(fd, payload, sizeof(payload), 0,
				   (struct sockaddr *)&sll, sizeof(sll)) < 0 ? -1 : 0);
}

/* connect --listen: the listener it reaches is a service outside the
 * sandbox, made before joining, so that no listen rule is needed for it
 * (the ingress rules judge the socket's cgroup). -1: none asked for. */
static int pre_listener(int argc, char **argv, int *lfd)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int k;

	*lfd = -1;
	if (strcmp(argv[0], "connect") || argc < 4)
		return 0;
	for (k = 4; k < argc; k++)
		if (!strcmp(argv[k], "--listen"))
			break;
	if (k == argc)
		return 0;
	if (parse_addr(argv[2], argv[3], &ss, &len))
		return USAGE;
	*lfd = make_listener(&ss, len, !strcmp(argv[1], "tcp") ? SOCK_STREAM : SOCK_DGRAM,
			     true);
	return *lfd < 0 ? probe_setup_fail("listener") : 0;
}

/* The command argv[0] with its argc - 1 words: what runs before joining
 * the cgroup, the pid line, then the one syscall. */
static int run(int argc, char **argv, const struct opts *o)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int lfd, type, proto, rc;

	rc = pre_listener(argc, argv, &lfd);
	if (rc)
		return rc;
	/* --socket-first: connect's socket made before --wait's wait. */
	if (o->socket_first && (!o->wait_for || strcmp(argv[0], "connect")))
		return USAGE;
	if (!strcmp(argv[0], "serve")) {
		if (argc < 4 || strcmp(argv[1], "tcp") ||
		    parse_addr(argv[2], argv[3], &ss, &len))
			return USAGE;
		return serve_op(&ss, len, o->cgroup);
	}
	if (o->cgroup && !o->join_late && probe_join_cgroup(o->cgroup))
		return probe_setup_fail("joining the cgroup");
	probe_print_pid();
	fflush(stdout);
	if (!o->socket_first)
		probe_wait_file(o->wait_for);

	if (!strcmp(argv[0], "socket"))
		return socket_op(argv[1]);
	if (!strcmp(argv[0], "netlink"))
		return netlink_op(argv[1]);
	if (!strcmp(argv[0], "ioctl") && argc >= 2)
		return ioctl_op(argv[1]);
	if (!strcmp(argv[0], "setsockopt") && argc >= 3)
		return sockopt_op(argv[1], argv[2]);
	if (!strcmp(argv[0], "listen") && argc >= 4 && !strcmp(argv[1], "tcp"))
		return listen_op(argv[2], argv[3]);
	if (!strcmp(argv[0], "sendto") && argc >= 2 && !strcmp(argv[1], "packet"))
		return packet_send_op(o);
	if (argc < 4 || parse_addr(argv[2], argv[3], &ss, &len))
		return USAGE;
	type = !strcmp(argv[1], "tcp") ? SOCK_STREAM :
	       !strcmp(argv[1], "udp") || !strcmp(argv[1], "udplite") ||
	       !strncmp(argv[1], "icmp", 4) ? SOCK_DGRAM : -1;
	proto = !strcmp(argv[1], "udplite") ? IPPROTO_UDPLITE :
		strncmp(argv[1], "icmp", 4) ? 0 :
		ss.ss_family == AF_INET6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP;
	if (type < 0)
		return USAGE;
	if (!strcmp(argv[0], "connect"))
		return connect_op(argc, argv, &ss, len, type, proto, lfd, o);
	if (!strcmp(argv[0], "bind"))
		return bind_op(argc, argv, &ss, len, type, proto);
	if (!strcmp(argv[0], "sendto"))
		return sendto_op(argc, argv, &ss, len, type, proto, o);
	return USAGE;
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	int i = parse_opts(argc, argv, &o), rc;

	if (i < 0)
		return 2;
	rc = i ? run(argc - i, argv + i, &o) : USAGE;
	return rc == USAGE ? usage() : rc;
}
