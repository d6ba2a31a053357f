/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Compile a policy's network section into the entries of the kernel's
 * `net_allow` and `net_meta` LPM tries (include/net.h).
 *
 * An LPM lookup returns only the longest matching prefix, but allow rules
 * add up: `127.0.0.0/8 port 80` and `127.0.0.1/32 port 8080` together allow
 * both ports to 127.0.0.1. So each entry carries the union of its own port
 * ranges and those of every shorter prefix covering it; one lookup then
 * decides. The union is bounded by NET_MAX_PORT_RANGES, checked here (and
 * so by `stockade check`) before anything is loaded.
 */
#ifndef STOCKADE_NET_RULES_H
#define STOCKADE_NET_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "net.h"
#include "policy.h"

struct net_entry {
	struct net_key key;
	struct net_allow val;
};

struct net_meta_entry {
	struct net_key key;
	__u32 verdict;	/* enum net_meta_verdict */
};

struct net_compiled {
	struct net_entry *allow;
	size_t n_allow;
	struct net_meta_entry *meta;
	size_t n_meta;
	/* network.allow's prefix lengths per family ([0] IPv4, [1] IPv6),
	 * longest first, for policy_conf (include/net.h, net_exact). */
	__u8 xlen[2][NET_XLEN_MAX];
	__u8 nxlen[2];
};

void net_key__from_cidr(struct net_key *k, __u32 policy_id,
			const struct policy_cidr *c);

/*
 * Does allow entry e also go into net_exact, and under which key? False
 * for network.listen entries and for a family whose lengths do not fit
 * (NET_XLEN_TRIE): the trie alone holds those.
 */
bool net_rules__exact_key(const struct net_compiled *c, const struct net_entry *e,
			  struct net_xkey *x);

/* Returns 0, or -E2BIG / -ENOMEM with a check-style message in err. */
int net_rules__compile(const struct policy *p, __u32 policy_id,
		       struct net_compiled *out, char *err, size_t errlen);
void net_compiled__free(struct net_compiled *c);

/* The allow entry of a full-length key q by longest-prefix match alone
 * (what the trie returns), and by the programs' steps (exact probes when
 * the lengths fit): tests/unit/test_net.c (test_exact_equals_trie) holds
 * the two equal. */
const struct net_entry *net_rules__lpm(const struct net_compiled *c,
				       const struct net_key *q);
const struct net_entry *net_rules__find(const struct net_compiled *c,
					const struct net_key *q);

/*
 * Reference decision, the same steps as bpf/net.bpf.h net_verdict(),
 * over the compiled entries: the built-in endpoints tested in code, then
 * the exact probes of the policy's prefix lengths (a linear search stands
 * in for the net_exact hash), or, past NET_XLEN_MAX lengths, a linear
 * longest-prefix search standing in for the trie. `addr` is 4 or 16 bytes as given by the caller (family 4 or 6).
 * Returns true to allow; *reason gets an enum ev_reason on deny.
 */
bool net_rules__decide(const struct net_compiled *c, __u32 policy_id,
		       bool default_allow, int family, const __u8 *addr,
		       __u8 proto, __u16 port, __u8 *reason);

/*
 * Reference decision for a local address (bpf/net.bpf.h listen_verdict()):
 * metadata endpoints refused at any port; at bind (at_bind) port 0 passes;
 * otherwise the network.listen entries decide, network.default aside.
 */
bool net_rules__decide_listen(const struct net_compiled *c, __u32 policy_id,
			      int family, const __u8 *addr, __u8 proto,
			      __u16 port, bool at_bind, __u8 *reason);

#endif
