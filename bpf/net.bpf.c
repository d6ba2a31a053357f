// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Outbound network confinement: cgroup/connect4/6, sendmsg4/6 and
 * sock_create, attached (bpf_link) to every sandbox cgroup. The rules and
 * their meaning are described in include/net.h.
 */
#include "common.bpf.h"
#include "netaddr.h"

#define AF_INET		2
#define AF_INET6	10
#define SOCK_STREAM	1
#define SOCK_DGRAM	2
#define SOCK_RAW	3
#define IPPROTO_ICMP	1
#define IPPROTO_UDP	17
#define IPPROTO_ICMPV6	58
#define IPPROTO_UDPLITE	136
/* Anything else (ICMP ping sockets, SCTP...) matches only `proto: any`. */
#define NET_PROTO_OTHER	3

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, NET_MAX_RULES);
	__uint(map_flags, BPF_F_NO_PREALLOC);	/* required for LPM tries */
	__type(key, struct net_key);
	__type(value, struct net_allow);
} net_allow SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, NET_MAX_META);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct net_key);
	__type(value, __u32);	/* enum net_meta_verdict */
} net_meta SEC(".maps");

/* Counters per policy: [policy][0] allowed, [policy][1] denied. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, POLICY_MAX * 2);
	__type(key, __u32);
	__type(value, __u64);
} net_count SEC(".maps");

static __always_inline void count(__u32 policy_id, int denied)
{
	__u32 k = policy_id * 2 + (denied ? 1 : 0);
	__u64 *v = bpf_map_lookup_elem(&net_count, &k);

	if (v)
		*v += 1;
}

static __always_inline __u8 proto_of(__u32 type, __u32 protocol)
{
	if (type == SOCK_STREAM)
		return NET_PROTO_TCP;	/* TCP and MPTCP */
	if (type == SOCK_DGRAM && (protocol == 0 || protocol == IPPROTO_UDP ||
				   protocol == IPPROTO_UDPLITE))
		return NET_PROTO_UDP;
	return NET_PROTO_OTHER;
}

/*
 * Judge one destination for the current task. Returns 1 to allow, 0 to
 * deny. v6 is a constant per program: the verifier rejects even a dead
 * read of user_ip6 in a connect4 program, so the branch must compile away. Every denial (and, in audit mode, every would-be denial) is
 * reported exactly once.
 */
static __always_inline int judge(struct bpf_sock_addr *ctx, __u8 kind,
				 const bool v6)
{
	struct net_key key = {};
	struct policy_conf *conf;
	struct net_allow *allow;
	struct sandbox *sb;
	struct event *e;
	__u32 *meta, policy_id, family = v6 ? AF_INET6 : AF_INET;
	__u8 proto, reason = 0, given[16] = {};
	__u16 port = bpf_ntohs((__u16)ctx->user_port);
	__u64 cgid;

	sb = sandbox_current(&cgid);
	/* Attached here but the cgroup is in no sandbox: an agent bug or a
	 * race with detach. Fail closed, with the reserved deny-all id. */
	policy_id = sb ? sb->policy_id : POLICY_ID_CONFLICT;
	conf = bpf_map_lookup_elem(&policies, &policy_id);
	if (!conf)
		return 0;
	if (!sb)
		reason = EV_REASON_NO_POLICY;

	if (!v6) {
		__u32 a = ctx->user_ip4;

		__builtin_memcpy(given, &a, 4);
		__builtin_memcpy(key.addr, &a, 4);
		key.family = NET_FAMILY_V4;
	} else {
		__u32 w[4];

		w[0] = ctx->user_ip6[0];
		w[1] = ctx->user_ip6[1];
		w[2] = ctx->user_ip6[2];
		w[3] = ctx->user_ip6[3];
		__builtin_memcpy(given, w, 16);
		__builtin_memcpy(key.addr, w, 16);
		key.family = netaddr_normalize6(key.addr);
	}
	proto = proto_of(ctx->type, ctx->protocol);
	key.policy_id = policy_id;
	key.prefixlen = NET_KEY_FIXED_BITS +
			(key.family == NET_FAMILY_V4 ? 32 : 128);

	if (!reason) {
		meta = bpf_map_lookup_elem(&net_meta, &key);
		if (meta && *meta == NET_META_BLOCKED)
			reason = EV_REASON_METADATA;
	}
	if (!reason) {
		allow = bpf_map_lookup_elem(&net_allow, &key);
		if (!(allow && net_allow_match(allow, proto, port)) &&
		    !(conf->flags & SANDBOX_NET_DEFAULT_ALLOW))
			reason = EV_REASON_NOT_ALLOWED;
	}
	if (!reason) {
		count(policy_id, 0);
		return 1;
	}

	count(policy_id, 1);
	e = event_reserve();
	if (e) {
		event_fill_task(e, cgid, policy_id,
				conf->mode == SANDBOX_AUDIT ? EV_AUDIT : EV_DENY);
		e->kind = kind;
		e->reason = reason;
		e->family = family == AF_INET ? 4 : 6;
		e->proto = proto == NET_PROTO_TCP ? 6 :
			   proto == NET_PROTO_UDP ? 17 : ctx->protocol;
		e->sock_type = ctx->type;
		e->dport = port;
		__builtin_memcpy(e->daddr, given, 16);
		bpf_ringbuf_submit(e, 0);
	}
	return conf->mode == SANDBOX_AUDIT;
}

SEC("cgroup/connect4")
int stk_connect4(struct bpf_sock_addr *ctx)
{
	return judge(ctx, EV_KIND_CONNECT, false);
}

SEC("cgroup/connect6")
int stk_connect6(struct bpf_sock_addr *ctx)
{
	return judge(ctx, EV_KIND_CONNECT, true);
}

SEC("cgroup/sendmsg4")
int stk_sendmsg4(struct bpf_sock_addr *ctx)
{
	return judge(ctx, EV_KIND_SENDMSG, false);
}

SEC("cgroup/sendmsg6")
int stk_sendmsg6(struct bpf_sock_addr *ctx)
{
	return judge(ctx, EV_KIND_SENDMSG, true);
}

/*
 * Raw inet sockets would bypass the connect/sendmsg hooks entirely, and
 * ICMP ping sockets reach any address; both are refused at creation unless
 * the policy allows them. AF_PACKET never reaches this hook: see lsm.bpf.c.
 */
SEC("cgroup/sock_create")
int stk_sock_create(struct bpf_sock *sk)
{
	struct policy_conf *conf;
	struct sandbox *sb;
	struct event *e;
	__u32 policy_id;
	__u8 reason = 0;
	__u64 cgid;

	if (sk->family != AF_INET && sk->family != AF_INET6)
		return 1;
	sb = sandbox_current(&cgid);
	policy_id = sb ? sb->policy_id : POLICY_ID_CONFLICT;
	conf = bpf_map_lookup_elem(&policies, &policy_id);
	if (!conf)
		return 0;
	if (sk->type == SOCK_RAW && !(conf->flags & SANDBOX_RAW_SOCKETS))
		reason = EV_REASON_RAW_SOCKET;
	else if (sk->type == SOCK_DGRAM &&
		 (sk->protocol == IPPROTO_ICMP || sk->protocol == IPPROTO_ICMPV6) &&
		 !(conf->flags & SANDBOX_ICMP))
		reason = EV_REASON_ICMP;
	if (!sb && !reason)
		reason = EV_REASON_NO_POLICY;
	if (!reason)
		return 1;

	count(policy_id, 1);
	e = event_reserve();
	if (e) {
		event_fill_task(e, cgid, policy_id,
				conf->mode == SANDBOX_AUDIT ? EV_AUDIT : EV_DENY);
		e->kind = EV_KIND_SOCKET;
		e->reason = reason;
		e->family = sk->family == AF_INET ? 4 : 6;
		e->proto = sk->protocol;
		e->sock_type = sk->type;
		bpf_ringbuf_submit(e, 0);
	}
	return conf->mode == SANDBOX_AUDIT;
}

