/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The network decision (include/net.h), shared by the cgroup programs
 * (bpf/net.bpf.c) and the LSM programs that judge sockets created before
 * their owner joined a sandbox (bpf/lsm.bpf.c).
 */
#ifndef STOCKADE_NET_BPF_H
#define STOCKADE_NET_BPF_H

#include "common.bpf.h"
#include "limits.bpf.h"
#include "netaddr.h"
#include "netmeta.h"

#define AF_INET		2
#define AF_INET6	10
#define SOCK_STREAM	1
#define SOCK_DGRAM	2
#define SOCK_RAW	3
#define IPPROTO_ICMP	1
#define IPPROTO_TCP	6
#define IPPROTO_UDP	17
#define IPPROTO_MPTCP	262
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
} net_allow SEC(".maps") __weak;

/* The allow entries again, by exact key (include/net.h, net_exact);
 * allocated on insert: most policies never fill it. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NET_MAX_RULES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct net_xkey);
	__type(value, struct net_allow);
} net_exact SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, NET_MAX_META);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct net_key);
	__type(value, __u32);	/* enum net_meta_verdict */
} net_meta SEC(".maps") __weak;

static __always_inline __u8 proto_of(__u32 type, __u32 protocol)
{
	if (type == SOCK_STREAM)
		return NET_PROTO_TCP;	/* TCP and MPTCP */
	if (type == SOCK_DGRAM && (protocol == 0 || protocol == IPPROTO_UDP ||
				   protocol == IPPROTO_UDPLITE))
		return NET_PROTO_UDP;
	return NET_PROTO_OTHER;
}

/* The rules' lookup key of an address, in place: key->addr holds it as
 * given (4 or 16 bytes, the rest zero); a mapped IPv6 address is judged
 * as the IPv4 one it maps (netaddr_normalize6), full length. */
static __always_inline void key_fill(struct net_key *key, __u32 policy_id,
				     bool v6)
{
	key->family = v6 ? netaddr_normalize6(key->addr) : NET_FAMILY_V4;
	key->policy_id = policy_id;
	key->prefixlen = NET_KEY_FIXED_BITS +
			 (key->family == NET_FAMILY_V4 ? 32 : 128);
}

/*
 * net_allow_match() as a global function, for the callers that judge an
 * entry on several paths (the trie's, bind's and listen's): checked once
 * per program, not once per path. a may be NULL to the verifier: no.
 */
__weak __noinline int net_allow_match_fn(const struct net_allow *a,
					 __u32 proto, __u32 port)
{
	return a && net_allow_match(a, (__u8)proto, (__u16)port);
}

/*
 * One exact probe of a destination (full-length key) at one of its
 * policy's prefix lengths (include/net.h, net_exact): -1 when the policy
 * has no entry of that length covering it, else whether that entry
 * allows (proto, port). A global function, as net_allow_decide() below,
 * for the same reason: inlined, each probe's masks and its entry's port
 * ranges were checked again for every way the probes before it had gone
 * (three quarters of each connect and sendmsg program's verification).
 * key may be NULL to the verifier: fail closed (an entry that allows
 * nothing).
 */
__weak __noinline int net_probe(const struct net_key *key, __u32 prefix,
				__u32 proto, __u32 port)
{
	struct net_allow *a;
	struct net_xkey x;

	if (!key)
		return 0;
	net_xkey_of(&x, key, prefix);
	a = bpf_map_lookup_elem(&net_exact, &x);
	if (!a)
		return -1;
	return net_allow_match(a, (__u8)proto, (__u16)port);
}

/*
 * Does a rule allow (proto, port) to a destination (full-length key)? The
 * longest prefix of the policy's rules that covers it decides: by exact
 * probes of the policy's prefix lengths, longest first (the first entry
 * found is the trie's longest match), or by the trie when they do not fit
 * (include/net.h, net_exact). No rule covers it: no.
 *
 * A global function, not inlined: the verifier checks it once per
 * program, on its own, and the caller sees only its 0 or 1. Inlined, its
 * probes' paths multiplied with the callers' (a third more verification
 * work for the agent's load, which the VM suite pays at every agent start
 * under TCG). Weak: net.bpf.c and lsm.bpf.c both include it, and the
 * static linker keeps one. conf and key may be NULL for the verifier (it
 * checks a global function for any argument): fail closed.
 */
__weak __noinline int net_allow_decide(const struct policy_conf *conf,
				       const struct net_key *key, __u32 proto,
				       __u32 port)
{
	struct net_allow *a;
	struct net_key k;
	__u32 f, i, n;
	int r;

	if (!conf || !key)
		return 0;
	k = *key;
	f = k.family == NET_FAMILY_V6 ? 1 : 0;
	n = conf->net_nxlen[f];
	if (n > NET_XLEN_MAX) {
		a = bpf_map_lookup_elem(&net_allow, &k);
		return net_allow_match_fn(a, proto, port);
	}
	for (i = 0; i < NET_XLEN_MAX; i++) {
		if (i >= n)
			break;
		r = net_probe(&k, conf->net_xlen[f][i], proto, port);
		if (r >= 0)
			return r;
	}
	return 0;
}

/*
 * Is a destination inside a built-in metadata endpoint the policy has not
 * overridden? Tested in code first (include/netmeta.h): net_meta is looked
 * up only for a candidate, where an override may open it (with a copy of
 * the key on the stack, where a map key must be).
 */
static __always_inline bool meta_blocked(const struct net_key *key)
{
	struct net_key k;
	__u32 *meta;

	if (!netmeta_candidate(key))
		return false;
	k = *key;
	meta = bpf_map_lookup_elem(&net_meta, &k);
	/* A candidate with no entry at all: the agent writes every built-in
	 * endpoint for every policy, so this is a policy half written, or a
	 * table this build and the agent's disagree on: fail closed. */
	return !meta || *meta != NET_META_OVERRIDDEN;
}

/*
 * The rules' lookup key of an IPv6 address (key_fill(); key->addr holds
 * it as given), and 1 when it is a built-in metadata endpoint the policy
 * has not overridden (meta_blocked()). A global function, as
 * net_allow_decide(): inlined, each way an IPv6 address normalises
 * (mapped or compatible, NAT64, 6to4, native) went on through the rest of
 * its caller, a state of its own for the verifier, in every program that
 * judges an IPv6 address (a tenth of 6.1's verification at each agent
 * start). key may be NULL to the verifier: fail closed.
 */
__weak __noinline int net_key_meta6(struct net_key *key, __u32 policy_id)
{
	if (!key)
		return 1;
	key_fill(key, policy_id, true);
	return meta_blocked(key);
}

/* The same for either family: IPv4's, which has one way, inlined (the
 * common case pays no call). */
static __always_inline bool key_meta(struct net_key *key, __u32 policy_id,
				     bool v6)
{
	if (v6)
		return net_key_meta6(key, policy_id);
	key_fill(key, policy_id, false);
	return meta_blocked(key);
}

/*
 * Judge one destination for the current task (in sandbox sb; NULL when
 * the task is outside every sandbox). given is the address as the
 * caller wrote it (4 or 16 bytes used). Returns 1 to allow, 0 to deny.
 * Every denial (and, in audit mode, every would-be denial) is reported
 * exactly once.
 */
static __always_inline int net_verdict(struct sandbox *sb, __u64 cgid,
				       __u8 kind, bool v6, const __u8 *given,
				       __u32 sock_type, __u32 protocol,
				       __u16 port)
{
	struct net_key key = {};
	struct policy_conf *conf;
	struct event *e;
	__u32 policy_id;
	__u8 proto, reason = 0;

	/* The cgroup programs run for the socket's cgroup; a task outside
	 * every sandbox using a socket made inside one (handed over, or the
	 * task was moved out by an admin) is judged as what it is: outside.
	 * Decisions follow the task, not the socket (include/sandbox.h),
	 * except a kernel thread's (bpf/net.bpf.c, sock_sandbox()). */
	if (!sb)
		return 1;
	policy_id = sb->policy_id;
	conf = bpf_map_lookup_elem(&policies, &policy_id);
	if (!conf)
		return 0;	/* no settings for its policy: fail closed */

	if (v6)
		__builtin_memcpy(key.addr, given, 16);
	else
		__builtin_memcpy(key.addr, given, 4);
	proto = proto_of(sock_type, protocol);

	if (key_meta(&key, policy_id, v6))
		reason = EV_REASON_METADATA;
	/* network.default: allow needs no rule lookup at all. */
	if (!reason && !(conf->flags & SANDBOX_NET_DEFAULT_ALLOW) &&
	    !net_allow_decide(conf, &key, proto, port))
		reason = EV_REASON_NOT_ALLOWED;
	if (!reason) {
		limits_count(sb, kind, false, false);
		return 1;
	}

	limits_count(sb, kind, true, conf->mode == SANDBOX_AUDIT);
	e = event_reserve();
	if (e) {
		event_fill_task(e, cgid, policy_id,
				ev_type(sb, conf->mode == SANDBOX_AUDIT));
		e->kind = kind;
		e->reason = reason;
		e->family = v6 ? 6 : 4;
		e->proto = proto == NET_PROTO_TCP ? 6 :
			   proto == NET_PROTO_UDP ? 17 : protocol;
		e->sock_type = sock_type;
		e->dport = port;
		__builtin_memset(e->daddr, 0, 16);
		if (v6)
			__builtin_memcpy(e->daddr, given, 16);
		else
			__builtin_memcpy(e->daddr, given, 4);
		bpf_ringbuf_submit(e, 0);
	}
	return conf->mode == SANDBOX_AUDIT;
}

/*
 * Judge a local address (include/net.h, "Ingress") for the current task in
 * sb (NULL: outside, allowed): a bind (kind bind, at_bind) or a listen
 * (kind listen). given is the address as bound (4 or 16 bytes), port the
 * local port, host order. 1 to allow, 0 to deny; every denial (audit: every
 * would-be denial) is reported once, in the network layout with the local
 * address in daddr/dport.
 */
static __always_inline int listen_verdict(struct sandbox *sb, __u64 cgid,
					  __u8 kind, bool v6, const __u8 *given,
					  __u32 sock_type, __u32 protocol,
					  __u16 port, bool at_bind)
{
	struct net_key key = {};
	struct policy_conf *conf;
	struct net_allow *allow;
	struct event *e;
	__u32 policy_id;
	__u8 proto, reason = 0;

	if (!sb)
		return 1;
	policy_id = sb->policy_id;
	conf = bpf_map_lookup_elem(&policies, &policy_id);
	if (!conf)
		return 0;	/* no settings for its policy: fail closed */

	if (v6)
		__builtin_memcpy(key.addr, given, 16);
	else
		__builtin_memcpy(key.addr, given, 4);
	proto = proto_of(sock_type, protocol);

	/* A metadata address as a source is refused whatever the port: a
	 * reply "from" the endpoint is as good as the endpoint. */
	if (key_meta(&key, policy_id, v6))
		reason = EV_REASON_METADATA;
	if (!reason && !(at_bind && port == 0)) {
		key.family |= NET_FAMILY_LISTEN;
		allow = bpf_map_lookup_elem(&net_allow, &key);
		if (!net_allow_match_fn(allow, proto, port))
			reason = EV_REASON_NOT_ALLOWED;
	}
	if (!reason) {
		limits_count(sb, kind, false, false);
		return 1;
	}

	limits_count(sb, kind, true, conf->mode == SANDBOX_AUDIT);
	e = event_reserve();
	if (e) {
		event_fill_task(e, cgid, policy_id,
				conf->mode == SANDBOX_AUDIT ? EV_AUDIT : EV_DENY);
		e->kind = kind;
		e->reason = reason;
		e->family = v6 ? 6 : 4;
		e->proto = proto == NET_PROTO_TCP ? 6 :
			   proto == NET_PROTO_UDP ? 17 : protocol;
		e->sock_type = sock_type;
		e->dport = port;
		if (v6)
			__builtin_memcpy(e->daddr, given, 16);
		else
			__builtin_memcpy(e->daddr, given, 4);
		bpf_ringbuf_submit(e, 0);
	}
	return conf->mode == SANDBOX_AUDIT;
}

#endif /* STOCKADE_NET_BPF_H */
