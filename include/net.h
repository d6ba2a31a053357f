/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Outbound network rules, shared by bpf/net.bpf.c and the agent.
 *
 * Meaning of a rule. Every sandbox cgroup belongs to one policy. Its
 * connect()/sendmsg() destinations are judged in this order:
 *   1. the destination is normalised (include/netaddr.h): an IPv6 address
 *      that carries an IPv4 address (mapped, compatible, NAT64, 6to4) is
 *      judged as that IPv4 address;
 *   2. the built-in metadata/credential endpoints (META_* below) are denied,
 *      reason metadata_endpoint, unless the policy overrides the exact one;
 *   3. the allow trie is looked up by (policy, family, address); the longest
 *      prefix wins, and its entry already holds the union of the port rules
 *      of every shorter prefix that covers it (the agent merges them), so one
 *      lookup plus a bounded scan of NET_MAX_PORT_RANGES decides;
 *   4. no entry, or no port range that matches: the policy default applies
 *      (deny unless `network.default: allow`).
 * sock_create denies SOCK_RAW inet sockets and ICMP ping sockets unless the
 * policy sets raw_sockets / icmp.
 *
 * Ingress (network.listen). The same trie holds the listen rules, in a key
 * space of their own: family NET_FAMILY_LISTEN | 4 or | 6, so that no
 * allow rule can ever match a local address and no listen rule a
 * destination. cgroup/bind4/6 judge the address and port a socket is bound
 * to, socket_listen (BPF-LSM) the bound address and port at listen():
 *   1. the address is normalised as above, and a built-in metadata endpoint
 *      is refused at any port (a source address spoofing it), unless the
 *      policy overrides it;
 *   2. at bind, port 0 (an ephemeral port: what clients do) passes;
 *   3. else the listen trie decides, with the same merged port ranges; no
 *      entry or no range: refused. network.default does not apply: a
 *      sandbox serves nothing unless a listen rule says so. At listen() a
 *      socket never bound has port 0, the port the kernel is about to pick:
 *      only a rule without `ports:` matches it.
 */
#ifndef STOCKADE_NET_H
#define STOCKADE_NET_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Rule-count limits; the agent checks them before it loads anything. */
#define NET_MAX_RULES		65536	/* allow-trie entries, all policies */
#define NET_MAX_META		1024	/* metadata-trie entries, all policies */
/* Netlink messages one sendmsg() may carry from a sandbox (lsm/netlink_send
 * judges each); a longer batch is refused whole. */
#define NETLINK_MAX_MSGS	64
/* Port ranges one trie entry holds after merging its covering prefixes. */
#define NET_MAX_PORT_RANGES	16

enum net_proto {
	NET_PROTO_ANY = 0,
	NET_PROTO_TCP = 1,
	NET_PROTO_UDP = 2,
};

enum net_family {
	NET_FAMILY_V4 = 4,
	NET_FAMILY_V6 = 6,
	NET_FAMILY_LISTEN = 0x80,	/* flag: a network.listen entry */
};

/*
 * LPM key. The data part is policy (32 bits), family + padding (32 bits)
 * and address (128 bits): a rule for an IPv4 /n has prefixlen 64 + n, an
 * IPv6 /n has 64 + n. IPv4 addresses sit in addr[0..3]. 24 data bytes,
 * well under the kernel's 256-byte LPM key limit.
 */
struct net_key {
	__u32 prefixlen;
	__u32 policy_id;
	__u8 family;
	__u8 pad[3];
	__u8 addr[16];
};

#define NET_KEY_FIXED_BITS	64

struct net_port_range {
	__u16 lo;		/* host byte order, inclusive */
	__u16 hi;
	__u8 proto;		/* enum net_proto */
	__u8 pad[3];
};

struct net_allow {
	__u32 n;		/* ranges used; 0..NET_MAX_PORT_RANGES */
	struct net_port_range r[NET_MAX_PORT_RANGES];
};

/*
 * Exact-match lookups ahead of the trie (net_exact, a hash). The allow
 * trie holds every policy's rules, so its depth, and the cold cache lines
 * a lookup walks, grow with the rule count of all policies together. A
 * policy uses few distinct prefix lengths per family (hosts, /24s, /64s),
 * so the agent also writes each allow entry into a hash keyed by (policy,
 * family, prefix length, address masked to it), and records the lengths
 * the policy uses, longest first, in its policy_conf (net_xlen). The
 * programs probe those lengths in order: the first hit is the entry the
 * trie's longest-prefix match would return (the same merged value, written
 * by the same compile), and a miss on every length means the trie has
 * none either. A /32 rule costs one probe, whatever the rule count. A
 * family with more than NET_XLEN_MAX lengths is marked NET_XLEN_TRIE and
 * looked up in the trie, as before. network.listen entries stay in the
 * trie alone (bind and listen are not the hot path).
 */
#define NET_XLEN_MAX		4
#define NET_XLEN_TRIE		0xff	/* net_nxlen: the trie decides */

struct net_xkey {
	__u32 policy_id;
	__u8 family;		/* NET_FAMILY_V4 or NET_FAMILY_V6 */
	__u8 prefix;		/* 0..32 or 0..128 */
	__u8 pad[2];
	__u8 addr[16];		/* masked to prefix; IPv4 in addr[0..3] */
};

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define NET_HTONL(x)	(x)
#else
#define NET_HTONL(x)	__builtin_bswap32(x)
#endif

/* The mask of the 32-bit word that starts at bit `at` of a /prefix. */
static __always_inline __u32 net_word_mask(__u32 prefix, __u32 at)
{
	__u32 bits = prefix > at ? prefix - at : 0;

	if (bits >= 32)
		return ~0u;
	if (!bits)
		return 0;
	return NET_HTONL(~0u << (32 - bits));
}

/*
 * The exact key of a full-length lookup key q (include/net.h's net_key,
 * family V4 or V6) at one prefix length: the agent builds each entry's key
 * with it from the rule, the programs each probe's from the destination.
 * Only constant offsets into x: the 6.1 verifier refuses variable-offset
 * stack writes.
 */
static __always_inline void net_xkey_of(struct net_xkey *x, const struct net_key *q,
					__u32 prefix)
{
	__u32 w[4];

	__builtin_memcpy(w, q->addr, sizeof(w));
	w[0] &= net_word_mask(prefix, 0);
	w[1] &= net_word_mask(prefix, 32);
	w[2] &= net_word_mask(prefix, 64);
	w[3] &= net_word_mask(prefix, 96);
	x->policy_id = q->policy_id;
	x->family = q->family;
	x->prefix = (__u8)prefix;
	x->pad[0] = 0;
	x->pad[1] = 0;
	__builtin_memcpy(x->addr, w, sizeof(w));
}

/* Value of the metadata trie: is this (part of a) built-in endpoint open? */
enum net_meta_verdict {
	NET_META_BLOCKED = 1,
	NET_META_OVERRIDDEN = 2,
};

/*
 * Decide whether one merged entry allows (proto, port). Shared so that the
 * unit tests exercise the code the kernel runs.
 */
static __always_inline int net_allow_match(const struct net_allow *a,
					   __u8 proto, __u16 port)
{
	__u32 i;

	for (i = 0; i < NET_MAX_PORT_RANGES; i++) {
		const struct net_port_range *r = &a->r[i];

		if (i >= a->n)
			break;
		if (r->proto != NET_PROTO_ANY && r->proto != proto)
			continue;
		if (port >= r->lo && port <= r->hi)
			return 1;
	}
	return 0;
}

#endif /* STOCKADE_NET_H */
