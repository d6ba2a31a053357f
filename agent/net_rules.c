// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "netaddr.h"
#include "netmeta.h"
#include "net_rules.h"

void net_key__from_cidr(struct net_key *k, __u32 policy_id,
			const struct policy_cidr *c)
{
	memset(k, 0, sizeof(*k));
	k->prefixlen = NET_KEY_FIXED_BITS + c->prefix;
	k->policy_id = policy_id;
	k->family = c->family;
	memcpy(k->addr, c->addr, c->family == NET_FAMILY_V4 ? 4 : 16);
}

static int cidr_cmp(const void *a, const void *b)
{
	const struct policy_cidr *x = a, *y = b;

	if (x->family != y->family)
		return x->family - y->family;
	if (x->prefix != y->prefix)
		return x->prefix - y->prefix;
	return memcmp(x->addr, y->addr, sizeof(x->addr));
}

static void cidr_truncate(struct policy_cidr *c, unsigned int prefix)
{
	unsigned int i;

	for (i = 0; i < 16; i++) {
		unsigned int bit = i * 8;

		if (bit >= prefix)
			c->addr[i] = 0;
		else if (bit + 8 > prefix)
			c->addr[i] &= (__u8)(0xff << (8 - (prefix - bit)));
	}
	c->prefix = (__u8)prefix;
}

static int range_cmp(const void *a, const void *b)
{
	const struct net_port_range *x = a, *y = b;

	if (x->proto != y->proto)
		return x->proto - y->proto;
	return x->lo != y->lo ? x->lo - y->lo : x->hi - y->hi;
}

/* Add one rule's ranges to a growing list. */
static int ranges_add(struct net_port_range **v, size_t *n, size_t *cap,
		      const struct policy_net_rule *r)
{
	size_t i, add = r->n_ports ? r->n_ports : 1;

	if (*n + add > *cap) {
		size_t ncap = (*cap ? *cap * 2 : 16) + add;
		struct net_port_range *nv = realloc(*v, ncap * sizeof(**v));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = ncap;
	}
	for (i = 0; i < add; i++) {
		struct net_port_range *d = &(*v)[(*n)++];

		memset(d, 0, sizeof(*d));
		d->proto = r->proto;
		/* No `ports:` means every port, 0 included. */
		d->lo = r->n_ports ? r->ports[i].lo : 0;
		d->hi = r->n_ports ? r->ports[i].hi : 65535;
	}
	return 0;
}

/*
 * Sort, then coalesce overlapping or adjacent ranges of one protocol and
 * drop tcp/udp ranges that an `any` range already covers. Returns the new
 * count.
 */
static size_t ranges_merge(struct net_port_range *v, size_t n)
{
	size_t i, j, out = 0;

	qsort(v, n, sizeof(*v), range_cmp);
	for (i = 0; i < n; i++) {
		if (out && v[out - 1].proto == v[i].proto &&
		    (unsigned int)v[i].lo <= (unsigned int)v[out - 1].hi + 1) {
			if (v[i].hi > v[out - 1].hi)
				v[out - 1].hi = v[i].hi;
			continue;
		}
		v[out++] = v[i];
	}
	/* NET_PROTO_ANY sorts first. */
	n = out;
	out = 0;
	for (i = 0; i < n; i++) {
		bool covered = false;

		for (j = 0; v[i].proto != NET_PROTO_ANY && j < n &&
			    v[j].proto == NET_PROTO_ANY; j++)
			if (v[j].lo <= v[i].lo && v[j].hi >= v[i].hi)
				covered = true;
		if (!covered)
			v[out++] = v[i];
	}
	return out;
}

/* A distinct CIDR and the rules (indices into p->net.allow) that name it. */
struct cidr_group {
	struct policy_cidr cidr;
	size_t first, count;	/* into the sorted index array */
};

static const struct policy_net_rule *sort_rules;	/* qsort has no context arg */

static int rule_idx_cmp(const void *a, const void *b)
{
	return cidr_cmp(&sort_rules[*(const size_t *)a].cidr,
			&sort_rules[*(const size_t *)b].cidr);
}

static int group_cmp(const void *key, const void *g)
{
	return cidr_cmp(key, &((const struct cidr_group *)g)->cidr);
}

/*
 * One rule list (network.allow, or network.listen with fam_flag
 * NET_FAMILY_LISTEN) into entries appended to out->allow, which has room
 * for n more.
 */
static int compile_rules(const struct policy *p, const char *what,
			 const struct policy_net_rule *rules, size_t n,
			 __u32 policy_id, __u8 fam_flag,
			 struct net_compiled *out, char *err, size_t errlen)
{
	struct cidr_group *groups = NULL, *g;
	struct net_port_range *rv = NULL;
	size_t i, k, n_groups = 0, rn, rcap = 0, *idx = NULL;
	struct policy_cidr probe;
	int ret = -ENOMEM;
	unsigned int pl;

	if (!n)
		return 0;
	/* Group the rules by CIDR, sorted, so that the prefixes covering a
	 * CIDR are found by binary search: n * 129 * log n, not n^2. */
	idx = calloc(n, sizeof(*idx));
	groups = calloc(n, sizeof(*groups));
	if (!idx || !groups)
		goto cleanup;
	for (i = 0; i < n; i++)
		idx[i] = i;
	sort_rules = rules;
	qsort(idx, n, sizeof(*idx), rule_idx_cmp);
	for (i = 0; i < n; i++) {
		if (!n_groups ||
		    cidr_cmp(&groups[n_groups - 1].cidr, &rules[idx[i]].cidr)) {
			groups[n_groups].cidr = rules[idx[i]].cidr;
			groups[n_groups++].first = i;
		}
		groups[n_groups - 1].count++;
	}

	for (i = 0; i < n_groups; i++) {
		struct net_entry *e = &out->allow[out->n_allow++];

		rn = 0;
		for (pl = 0; pl <= groups[i].cidr.prefix; pl++) {
			probe = groups[i].cidr;
			cidr_truncate(&probe, pl);
			g = bsearch(&probe, groups, n_groups, sizeof(*groups),
				    group_cmp);
			for (k = 0; g && k < g->count; k++)
				if (ranges_add(&rv, &rn, &rcap,
					       &rules[idx[g->first + k]]))
					goto cleanup;
		}
		rn = ranges_merge(rv, rn);
		if (rn > NET_MAX_PORT_RANGES) {
			char buf[64];

			snprintf(err, errlen,
				 "%s: %s: %s is covered by rules with %zu distinct port ranges; at most %d fit one address (merge ranges or split the CIDRs)",
				 p->file ? p->file : "<policy>", what,
				 policy_cidr__str(&groups[i].cidr, buf, sizeof(buf)),
				 rn, NET_MAX_PORT_RANGES);
			ret = -E2BIG;
			goto cleanup;
		}
		net_key__from_cidr(&e->key, policy_id, &groups[i].cidr);
		e->key.family |= fam_flag;
		memset(&e->val, 0, sizeof(e->val));
		e->val.n = (__u32)rn;
		memcpy(e->val.r, rv, rn * sizeof(*rv));
	}
	ret = 0;
cleanup:
	free(groups);
	free(idx);
	free(rv);
	return ret;
}

/*
 * The distinct prefix lengths of the allow entries, per family, longest
 * first (include/net.h, net_exact); NET_XLEN_TRIE for a family with more
 * than NET_XLEN_MAX of them.
 */
static void prefix_lengths(struct net_compiled *c)
{
	bool seen[2][129] = { { false } };
	size_t i;
	int f, pl;

	for (i = 0; i < c->n_allow; i++) {
		const struct net_key *k = &c->allow[i].key;

		if (k->family & NET_FAMILY_LISTEN)
			continue;
		seen[k->family == NET_FAMILY_V6][k->prefixlen - NET_KEY_FIXED_BITS] = true;
	}
	for (f = 0; f < 2; f++) {
		c->nxlen[f] = 0;
		for (pl = 128; pl >= 0; pl--) {
			if (!seen[f][pl])
				continue;
			if (c->nxlen[f] == NET_XLEN_MAX) {
				c->nxlen[f] = NET_XLEN_TRIE;
				break;
			}
			c->xlen[f][c->nxlen[f]++] = (__u8)pl;
		}
	}
}

bool net_rules__exact_key(const struct net_compiled *c, const struct net_entry *e,
			  struct net_xkey *x)
{
	if (e->key.family & NET_FAMILY_LISTEN ||
	    c->nxlen[e->key.family == NET_FAMILY_V6] > NET_XLEN_MAX)
		return false;
	memset(x, 0, sizeof(*x));
	net_xkey_of(x, &e->key, e->key.prefixlen - NET_KEY_FIXED_BITS);
	return true;
}

int net_rules__compile(const struct policy *p, __u32 policy_id,
		       struct net_compiled *out, char *err, size_t errlen)
{
	size_t i, n = p->net.n_allow + p->net.n_listen;
	int ret = -ENOMEM;

	memset(out, 0, sizeof(*out));
	if (err && errlen)
		err[0] = '\0';
	if (n && !(out->allow = calloc(n, sizeof(*out->allow))))
		goto cleanup;
	ret = compile_rules(p, "network.allow", p->net.allow, p->net.n_allow,
			    policy_id, 0, out, err, errlen);
	if (!ret)
		ret = compile_rules(p, "network.listen", p->net.listen,
				    p->net.n_listen, policy_id,
				    NET_FAMILY_LISTEN, out, err, errlen);
	if (ret)
		goto cleanup;
	prefix_lengths(out);
	ret = -ENOMEM;

	/* Metadata endpoints: blocked, then the policy's overrides on top;
	 * an override of the exact endpoint replaces its entry, a narrower one
	 * wins by being the longer prefix. */
	out->meta = calloc(policy_n_meta_endpoints + p->net.n_overrides,
			   sizeof(*out->meta));
	if (!out->meta)
		goto cleanup;
	for (i = 0; i < policy_n_meta_endpoints; i++) {
		struct net_meta_entry *m = &out->meta[out->n_meta++];

		net_key__from_cidr(&m->key, policy_id,
				   &policy_meta_endpoints[i].cidr);
		m->verdict = NET_META_BLOCKED;
	}
	for (i = 0; i < p->net.n_overrides; i++) {
		struct net_meta_entry *m = &out->meta[out->n_meta++];

		net_key__from_cidr(&m->key, policy_id,
				   &p->net.overrides[i].endpoint);
		m->verdict = NET_META_OVERRIDDEN;
	}
	ret = 0;
cleanup:
	if (ret == -ENOMEM && err && errlen)
		snprintf(err, errlen, "compiling network rules: out of memory");
	if (ret)
		net_compiled__free(out);
	return ret;
}

void net_compiled__free(struct net_compiled *c)
{
	free(c->allow);
	free(c->meta);
	memset(c, 0, sizeof(*c));
}

/* Does key k (an LPM entry) match the full-length lookup key q? */
static bool lpm_match(const struct net_key *k, const struct net_key *q)
{
	struct policy_cidr a = { .family = q->family, .prefix = 0 };

	if (k->policy_id != q->policy_id || k->family != q->family)
		return false;
	memcpy(a.addr, q->addr, 16);
	cidr_truncate(&a, k->prefixlen - NET_KEY_FIXED_BITS);
	return !memcmp(a.addr, k->addr, 16);
}

#define LPM_FIND(arr, n, q, best)					\
	do {								\
		size_t _i;						\
		for (_i = 0; _i < (n); _i++)				\
			if (lpm_match(&(arr)[_i].key, (q)) &&		\
			    (!(best) || (arr)[_i].key.prefixlen >=	\
					(best)->key.prefixlen))		\
				(best) = &(arr)[_i];			\
	} while (0)

const struct net_entry *net_rules__lpm(const struct net_compiled *c,
				       const struct net_key *q)
{
	const struct net_entry *best = NULL;

	LPM_FIND(c->allow, c->n_allow, q, best);
	return best;
}

/* bpf/net.bpf.h net_allow_decide()'s lookup (its exact probes, net_probe(),
 * or the trie), with linear searches for the maps. */
const struct net_entry *net_rules__find(const struct net_compiled *c,
					const struct net_key *q)
{
	unsigned int f = q->family == NET_FAMILY_V6, i, n = c->nxlen[f];
	struct net_xkey x, ex;
	size_t j;

	if (q->family & NET_FAMILY_LISTEN || n > NET_XLEN_MAX)
		return net_rules__lpm(c, q);
	for (i = 0; i < n; i++) {
		memset(&x, 0, sizeof(x));
		net_xkey_of(&x, q, c->xlen[f][i]);
		for (j = 0; j < c->n_allow; j++)
			if (net_rules__exact_key(c, &c->allow[j], &ex) &&
			    !memcmp(&x, &ex, sizeof(x)))
				return &c->allow[j];
	}
	return NULL;
}

/* The full-length key of one address, as the programs build it; false
 * (reason set) when a metadata endpoint blocks it. */
static bool query(const struct net_compiled *c, __u32 policy_id, int family,
		  const __u8 *addr, struct net_key *q, __u8 *reason)
{
	const struct net_meta_entry *meta = NULL;

	memset(q, 0, sizeof(*q));
	q->policy_id = policy_id;
	if (family == 4) {
		memcpy(q->addr, addr, 4);
		q->family = NET_FAMILY_V4;
	} else {
		memcpy(q->addr, addr, 16);
		q->family = netaddr_normalize6(q->addr);
	}
	q->prefixlen = NET_KEY_FIXED_BITS + (q->family == NET_FAMILY_V4 ? 32 : 128);
	/* bpf/net.bpf.h meta_blocked(): only a candidate looks net_meta up,
	 * and a candidate without an entry is blocked. */
	if (!netmeta_candidate(q))
		return true;
	LPM_FIND(c->meta, c->n_meta, q, meta);
	if (!meta || meta->verdict != NET_META_OVERRIDDEN) {
		*reason = EV_REASON_METADATA;
		return false;
	}
	return true;
}

bool net_rules__decide(const struct net_compiled *c, __u32 policy_id,
		       bool default_allow, int family, const __u8 *addr,
		       __u8 proto, __u16 port, __u8 *reason)
{
	const struct net_entry *allow = NULL;
	struct net_key q;

	if (!query(c, policy_id, family, addr, &q, reason))
		return false;
	if (default_allow)
		return true;
	allow = net_rules__find(c, &q);
	if (allow && net_allow_match(&allow->val, proto, port))
		return true;
	*reason = EV_REASON_NOT_ALLOWED;
	return false;
}

bool net_rules__decide_listen(const struct net_compiled *c, __u32 policy_id,
			      int family, const __u8 *addr, __u8 proto,
			      __u16 port, bool at_bind, __u8 *reason)
{
	const struct net_entry *allow = NULL;
	struct net_key q;

	if (!query(c, policy_id, family, addr, &q, reason))
		return false;
	if (at_bind && port == 0)
		return true;
	q.family |= NET_FAMILY_LISTEN;
	LPM_FIND(c->allow, c->n_allow, &q, allow);
	if (allow && net_allow_match(&allow->val, proto, port))
		return true;
	*reason = EV_REASON_NOT_ALLOWED;
	return false;
}
