// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The host's network control plane, seen from a sandbox (issue 11):
 *   - netlink_send: only NETLINK_ROUTE read requests (RTM_GET*), and the
 *     netlink families the policy names (network.netlink);
 *   - socket_listen: the local address and port of a listen, against the
 *     network.listen rules (include/net.h, "Ingress"); the bind that comes
 *     first is judged by cgroup/bind4/6 (bpf/net.bpf.c);
 *   - socket_setsockopt: the options that reach past the rules (transparent
 *     proxying, marks, devices, IPsec policies, the iptables family).
 */
#include "lsm.bpf.h"
#include "net.bpf.h"

#define NETLINK_ROUTE		0
#define NLMSG_HDRLEN		16
#define NLMSG_ALIGN(len)	(((len) + 3) & ~3U)
#define RTM_BASE		16	/* NLMSG_MIN_TYPE: below are control */

/* The walk over one skb's messages (bpf_loop callback state). */
struct nl_walk {
	__u64 data;		/* skb->data, a kernel address */
	__u32 len;		/* skb->len */
	__u32 off;
	__u32 type;		/* the first refused message's nlmsg_type */
	int state;		/* 0 walking, 1 all reads, -1 refused */
};

/*
 * One nlmsghdr; 1 to stop. rtnetlink decides "read or not" by the low two
 * bits of the type (rtnetlink_rcv_msg(): kind 2 is GET, the only kind it
 * serves without CAP_NET_ADMIN), so that is the test here too. A header
 * cut short, or a length that runs past the buffer, is refused: the kernel
 * would stop there, but nothing honest sends one.
 */
static long nl_step(__u32 i, void *ctx)
{
	struct nl_walk *w = ctx;
	struct nlmsghdr h;
	__u32 left, step;

	if (w->off >= w->len) {
		w->state = 1;
		return 1;
	}
	left = w->len - w->off;
	if (left < NLMSG_HDRLEN ||
	    bpf_probe_read_kernel(&h, sizeof(h), (void *)(w->data + w->off))) {
		w->state = -1;
		return 1;
	}
	if (h.nlmsg_len < NLMSG_HDRLEN || h.nlmsg_len > left ||
	    h.nlmsg_type < RTM_BASE || (h.nlmsg_type & 3) != 2) {
		w->type = h.nlmsg_type;
		w->state = -1;
		return 1;
	}
	step = NLMSG_ALIGN(h.nlmsg_len);
	w->off += step < left ? step : left;
	return 0;
}

/*
 * One sendmsg() is one skb, however many messages it carries (a batch):
 * every one is judged, at most NETLINK_MAX_MSGS; more are refused, so one
 * record covers the whole sendmsg. Runs on every netlink send of the host,
 * so outsiders leave at the sandbox lookup, before any of this.
 */
SEC("lsm/netlink_send")
int BPF_PROG(stk_netlink_send, struct sock *sk, struct sk_buff *skb)
{
	struct nl_walk w = {};
	struct nlmsghdr h;
	__u32 proto;
	__u8 reason;

	CURRENT_OR_ALLOW();
	proto = BPF_CORE_READ(sk, sk_protocol);
	if (proto < 32 && (conf->netlink & (1u << proto)))
		return 0;
	w.data = (__u64)BPF_CORE_READ(skb, data);
	w.len = BPF_CORE_READ(skb, len);
	if (proto == NETLINK_ROUTE) {
		bpf_loop(NETLINK_MAX_MSGS, nl_step, &w, 0);
		if (w.state == 1)
			return 0;
		reason = EV_REASON_NETLINK_WRITE;
	} else {
		/* A family not allowed: every message, read or write. */
		if (w.len >= NLMSG_HDRLEN &&
		    !bpf_probe_read_kernel(&h, sizeof(h), (void *)w.data))
			w.type = h.nlmsg_type;
		reason = EV_REASON_NETLINK_FAMILY;
	}
	return lsm_deny_arg(sb, conf, cgid, EV_KIND_NETLINK, EV_OP_NETLINK_SEND,
			    reason, NULL, NULL, 0, w.type, proto);
}

/*
 * listen(): the address and port the socket is bound to. After a bind to
 * port 0 the kernel has picked the port by now; a socket never bound is
 * autobound only inside inet_listen(), after this hook, so it shows port
 * 0 here, which only a listen rule without `ports:` covers.
 */
SEC("lsm/socket_listen")
int BPF_PROG(stk_socket_listen, struct socket *sock, int backlog)
{
	struct sandbox *sb, sb_snap;
	__u8 addr[16] = {};
	struct sock *sk;
	__u16 family;
	__u64 cgid;

	sb = sandbox_current(&cgid, &sb_snap);
	if (!sb)
		return 0;
	sk = BPF_CORE_READ(sock, sk);
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	if (family != AF_INET && family != AF_INET6)
		return 0;	/* unix listeners: judged at connect */
	if (family == AF_INET) {
		__u32 a = BPF_CORE_READ(sk, __sk_common.skc_rcv_saddr);

		__builtin_memcpy(addr, &a, 4);
	} else {
		BPF_CORE_READ_INTO(&addr, sk, __sk_common.skc_v6_rcv_saddr);
	}
	return listen_verdict(sb, cgid, EV_KIND_LISTEN, family == AF_INET6, addr,
			      BPF_CORE_READ(sock, type),
			      BPF_CORE_READ(sk, sk_protocol),
			      BPF_CORE_READ(sk, __sk_common.skc_num), false) ?
	       0 : -EPERM;
}

#define SOL_IP_			0
#define SOL_SOCKET_		1
#define SOL_TCP_		6
#define SOL_IPV6_		41

/*
 * Socket options that reach past the network rules. The hook sees the
 * option, not its value, so each is refused outright, even when it would
 * be switched off. Cheap to ask first: this hook runs for every
 * setsockopt() on the host.
 *   SOL_SOCKET: SO_BINDTODEVICE (25), SO_BINDTOIFINDEX (62): leave by an
 *     interface the routes do not give; SO_MARK (36): choose routing
 *     tables and firewall verdicts; SO_ATTACH_REUSEPORT_CBPF/EBPF (51, 52):
 *     steer a reuseport group's connections, the group may hold a host
 *     listener of the same uid.
 *   SOL_IP: IP_OPTIONS (4): a source route sends the packets first to
 *     a hop no rule judged (the egress program refuses such packets too,
 *     as it refuses an IP_RETOPTS control message's: bpf/limits.bpf.c);
 *     IP_UNICAST_IF (50): SO_BINDTODEVICE's effect for one family;
 *     IP_FREEBIND (15), IP_TRANSPARENT (19): bind or spoof
 *     addresses not ours (the metadata endpoint as a source);
 *     IP_IPSEC_POLICY (16), IP_XFRM_POLICY (17): per-socket IPsec policy;
 *     64, 65: iptables SET_REPLACE/ADD_COUNTERS; 96, 97: arptables;
 *     128, 129: ebtables; 200-213: multicast routing (MRT_*);
 *     1152-1167: IPVS (IP_VS_SO_SET_*), the kernel's load balancer.
 *   SOL_IPV6: IPV6_RTHDR (57), IPV6_2292PKTOPTIONS (6): a routing
 *     header (a segment routing one needs no capability), sticky;
 *     IPV6_UNICAST_IF (76); IPV6_IPSEC_POLICY (34), IPV6_XFRM_POLICY (35),
 *     IPV6_TRANSPARENT (75), IPV6_FREEBIND (78), 64, 65: ip6tables;
 *     200-213: MRT6_*.
 *   SOL_TCP: TCP_REPAIR (19): a connection's state written by hand.
 */
static __always_inline bool sockopt_refused(int level, int optname)
{
	switch (level) {
	case SOL_SOCKET_:
		return optname == 25 || optname == 36 || optname == 51 ||
		       optname == 52 || optname == 62;
	case SOL_IP_:
		return optname == 4 || optname == 50 ||
		       optname == 15 || optname == 16 || optname == 17 ||
		       optname == 19 || optname == 64 || optname == 65 ||
		       optname == 96 || optname == 97 || optname == 128 ||
		       optname == 129 || (optname >= 200 && optname <= 213) ||
		       (optname >= 1152 && optname <= 1167);
	case SOL_IPV6_:
		return optname == 6 || optname == 57 || optname == 76 ||
		       optname == 34 || optname == 35 || optname == 64 ||
		       optname == 65 || optname == 75 || optname == 78 ||
		       (optname >= 200 && optname <= 213);
	case SOL_TCP_:
		return optname == 19;
	}
	return false;
}

SEC("lsm/socket_setsockopt")
int BPF_PROG(stk_socket_setsockopt, struct socket *sock, int level, int optname)
{
	if (!sockopt_refused(level, optname))
		return 0;
	{
		CURRENT_OR_ALLOW();
		return lsm_deny_arg(sb, conf, cgid, EV_KIND_SOCKOPT,
				    EV_OP_SETSOCKOPT, EV_REASON_ALWAYS_DENIED,
				    NULL, NULL, 0, optname, level);
	}
}
