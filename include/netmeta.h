/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The built-in metadata and credential endpoints (policy/builtin.c says
 * what each one is), as one table that both sides compile from:
 * policy/builtin.c builds policy_meta_endpoints (what the agent writes
 * into net_meta, what `stockade check` and the manifest name) from it, and
 * the programs test a destination against it in code (netmeta_candidate)
 * before they look net_meta up at all.
 *
 * Why in code: net_meta is an LPM trie that every policy's entries share;
 * walking it on every connect() and sendmsg() was a handful of dependent
 * cold cache lines on the allow path, for an answer that is "no" for
 * nearly every destination. A few masked-word compares answer that "no"
 * from registers. Only a candidate (an address inside a built-in endpoint)
 * still looks net_meta up, so a policy's overrides work as before: every
 * override lies inside a built-in endpoint (policy/parse.c refuses any
 * other), and net_meta keeps every entry it had.
 * tests/unit/test_net.c (test_metadata_in_code) checks that
 * netmeta_candidate() and the table agree for addresses on both sides of
 * every boundary.
 */
#ifndef STOCKADE_NETMETA_H
#define STOCKADE_NETMETA_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif
#include "net.h"

/*
 * X(text, family, prefix, 16 address bytes): the endpoints, in the order
 * policy/builtin.c lists them. IPv4 addresses fill the first 4 bytes.
 */
#define NETMETA_ENDPOINTS(X)						\
	/* Link-local: AWS/GCP/Azure/OpenStack/DigitalOcean IMDS on	\
	 * 169.254.169.254, AWS ECS task credentials on 169.254.170.2,	\
	 * EKS Pod Identity on 169.254.170.23. Providers keep adding	\
	 * addresses here, so the whole /16 is blocked. */		\
	X("169.254.0.0/16", NET_FAMILY_V4, 16,				\
	  169, 254, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)		\
	/* AWS IMDS over IPv6 (Nitro instances). */			\
	X("fd00:ec2::254/128", NET_FAMILY_V6, 128,			\
	  0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54) \
	/* EKS Pod Identity agent over IPv6. */				\
	X("fd00:ec2::23/128", NET_FAMILY_V6, 128,			\
	  0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x23) \
	/* Google Cloud metadata server over IPv6. */			\
	X("fd20:ce::254/128", NET_FAMILY_V6, 128,			\
	  0xfd, 0x20, 0x00, 0xce, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54) \
	/* OpenStack metadata over IPv6 (link-local, 169.254.169.254's	\
	 * bytes). */							\
	X("fe80::a9fe:a9fe/128", NET_FAMILY_V6, 128,			\
	  0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xa9, 0xfe, 0xa9, 0xfe) \
	/* Oracle Cloud instance metadata over IPv6. */			\
	X("fd00:c1::a9fe:a9fe/128", NET_FAMILY_V6, 128,			\
	  0xfd, 0x00, 0x00, 0xc1, 0, 0, 0, 0, 0, 0, 0, 0, 0xa9, 0xfe, 0xa9, 0xfe) \
	/* Akamai (Linode) metadata service over IPv6. */		\
	X("fd00:a9fe:a9fe::1/128", NET_FAMILY_V6, 128,			\
	  0xfd, 0x00, 0xa9, 0xfe, 0xa9, 0xfe, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01) \
	/* Alibaba Cloud ECS metadata. */				\
	X("100.100.100.200/32", NET_FAMILY_V4, 32,			\
	  100, 100, 100, 200, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)	\
	/* Azure WireServer (also the VM's default DNS resolver: a	\
	 * sandbox that resolves names through it needs an override). */ \
	X("168.63.129.16/32", NET_FAMILY_V4, 32,			\
	  168, 63, 129, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)		\
	/* Oracle Cloud legacy metadata address. */			\
	X("192.0.0.192/32", NET_FAMILY_V4, 32,				\
	  192, 0, 0, 192, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

/* The mask of byte i (0..15) of a /p prefix. */
#define NETMETA_BMASK(p, i)						\
	((p) >= 8 * ((i) + 1) ? 0xffu :					\
	 (p) <= 8 * (i) ? 0u : (0xffu << (8 - ((p) - 8 * (i)))) & 0xffu)

/* Four bytes as the __u32 a load of them from memory gives. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define NETMETA_W(a, b, c, d)						\
	(((__u32)(a) << 24) | ((__u32)(b) << 16) | ((__u32)(c) << 8) | (__u32)(d))
#else
#define NETMETA_W(a, b, c, d)						\
	(((__u32)(d) << 24) | ((__u32)(c) << 16) | ((__u32)(b) << 8) | (__u32)(a))
#endif

/* Word i (0..3) of a /p mask, and of an address masked by it. */
#define NETMETA_MW(p, i)						\
	NETMETA_W(NETMETA_BMASK(p, 4 * (i)), NETMETA_BMASK(p, 4 * (i) + 1), \
		  NETMETA_BMASK(p, 4 * (i) + 2), NETMETA_BMASK(p, 4 * (i) + 3))
#define NETMETA_AW(p, i, a, b, c, d)					\
	(NETMETA_W(a, b, c, d) & NETMETA_MW(p, i))

#define NETMETA_TEST(text, fam, p, b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, \
		     b10, b11, b12, b13, b14, b15)			\
	if (family == (fam) &&						\
	    (w[0] & NETMETA_MW(p, 0)) == NETMETA_AW(p, 0, b0, b1, b2, b3) && \
	    (w[1] & NETMETA_MW(p, 1)) == NETMETA_AW(p, 1, b4, b5, b6, b7) && \
	    (w[2] & NETMETA_MW(p, 2)) == NETMETA_AW(p, 2, b8, b9, b10, b11) && \
	    (w[3] & NETMETA_MW(p, 3)) == NETMETA_AW(p, 3, b12, b13, b14, b15)) \
		return 1;

/*
 * Is the normalised address of a full-length lookup key (its family
 * NET_FAMILY_V4 or _V6, no LISTEN flag) inside a built-in endpoint? Only
 * then can net_meta say anything about it. IPv4 keys have addr[4..15]
 * zeroed (include/net.h), which the IPv4 entries' zero masks ignore.
 */
static __always_inline int netmeta_candidate(const struct net_key *k)
{
	__u8 family = k->family & ~NET_FAMILY_LISTEN;
	__u32 w[4];

	__builtin_memcpy(w, k->addr, sizeof(w));
	NETMETA_ENDPOINTS(NETMETA_TEST)
	return 0;
}

#endif /* STOCKADE_NETMETA_H */
