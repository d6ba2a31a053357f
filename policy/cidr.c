/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * CIDR text <-> struct policy_cidr, and the two relations the loader needs.
 *
 * Two CIDRs either nest or are disjoint, so "overlaps" is "one contains the
 * other" and the intersection of overlapping CIDRs is the longer one: the
 * metadata-endpoint check in parse.c relies on that.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "netaddr.h"
#include "policy.h"

static unsigned int family_bits(uint8_t family)
{
	return family == NET_FAMILY_V4 ? 32 : 128;
}

/* "/n": decimal, no sign, no leading zero; a longer spelling of the same
 * number ("/008") is refused rather than guessed at. */
static int parse_prefix(const char *s, unsigned int *out)
{
	unsigned int v = 0;
	size_t i;

	if (s[0] == '\0' || strlen(s) > 3 || (s[0] == '0' && s[1] != '\0'))
		return -EINVAL;
	for (i = 0; s[i]; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (unsigned int)(s[i] - '0');
	}
	*out = v;
	return 0;
}

int policy_cidr__parse_raw(const char *s, struct policy_cidr *out)
{
	char addr[INET6_ADDRSTRLEN];
	const char *slash = strchr(s, '/');
	size_t alen = slash ? (size_t)(slash - s) : strlen(s);
	struct policy_cidr c;
	unsigned int prefix;
	int af;

	memset(&c, 0, sizeof(c));
	if (alen == 0 || alen >= sizeof(addr))
		return -EINVAL;
	memcpy(addr, s, alen);
	addr[alen] = '\0';
	/* inet_pton is strict (no octal, no short forms like "10.1"), which
	 * is what a security rule wants: "10.1" means different things to
	 * different tools. */
	af = strchr(addr, ':') ? AF_INET6 : AF_INET;
	if (inet_pton(af, addr, c.addr) != 1)
		return -EINVAL;
	c.family = af == AF_INET ? NET_FAMILY_V4 : NET_FAMILY_V6;
	prefix = family_bits(c.family);
	if (slash && parse_prefix(slash + 1, &prefix))
		return -EINVAL;
	if (prefix > family_bits(c.family))
		return -ERANGE;
	c.prefix = (uint8_t)prefix;
	*out = c;
	return 0;
}

bool policy_cidr__mask(struct policy_cidr *c)
{
	bool had = false;
	unsigned int i;

	for (i = 0; i < sizeof(c->addr); i++) {
		unsigned int bit = i * 8;
		uint8_t keep;

		if (bit >= c->prefix)
			keep = 0;
		else if (c->prefix - bit >= 8)
			keep = 0xff;
		else
			keep = (uint8_t)(0xff << (8 - (c->prefix - bit)));
		if (c->addr[i] & ~keep)
			had = true;
		c->addr[i] &= keep;
	}
	return had;
}

void policy_cidr__normalize(struct policy_cidr *c)
{
	uint8_t v4[16];
	unsigned int prefix;

	if (c->family != NET_FAMILY_V6)
		return;
	memcpy(v4, c->addr, sizeof(v4));
	if (netaddr_normalize6(v4) != NET_FAMILY_V4)
		return;
	/* Only a CIDR that lies wholly inside one carrying form denotes an
	 * IPv4 CIDR; a shorter one (64:ff9b::/64) stays IPv6 and, since the
	 * kernel judges carried addresses as IPv4, never matches them. */
	if (c->addr[0] == 0x20 && c->addr[1] == 0x02) {
		if (c->prefix < 16)
			return;
		/* 6to4 carries IPv4 in bits 16..47: a /56 still names one
		 * IPv4 host, and the kernel cannot tell its subnets apart. */
		prefix = c->prefix - 16 > 32 ? 32 : c->prefix - 16;
	} else {
		if (c->prefix < 96)
			return;
		prefix = c->prefix - 96;
	}
	c->family = NET_FAMILY_V4;
	c->prefix = (uint8_t)prefix;
	memcpy(c->addr, v4, sizeof(c->addr));
}

int policy_cidr__parse(const char *s, struct policy_cidr *out)
{
	struct policy_cidr c;

	if (policy_cidr__parse_raw(s, &c) || policy_cidr__mask(&c))
		return -EINVAL;
	policy_cidr__normalize(&c);
	*out = c;
	return 0;
}

bool policy_cidr__contains(const struct policy_cidr *a,
			   const struct policy_cidr *b)
{
	struct policy_cidr na = *a, nb = *b;

	if (a->family != b->family || a->prefix > b->prefix)
		return false;
	/* Compare b cut to a's length with a; mask a too so that a caller's
	 * unmasked CIDR cannot make this answer "no" by accident. */
	nb.prefix = a->prefix;
	policy_cidr__mask(&na);
	policy_cidr__mask(&nb);
	return memcmp(na.addr, nb.addr, sizeof(na.addr)) == 0;
}

bool policy_cidr__overlaps(const struct policy_cidr *a,
			   const struct policy_cidr *b)
{
	return policy_cidr__contains(a, b) || policy_cidr__contains(b, a);
}

const char *policy_cidr__str(const struct policy_cidr *c, char *buf,
			     size_t len)
{
	char addr[INET6_ADDRSTRLEN];
	int af = c->family == NET_FAMILY_V4 ? AF_INET : AF_INET6;

	if (c->family != NET_FAMILY_V4 && c->family != NET_FAMILY_V6)
		snprintf(buf, len, "(invalid family %u)", c->family);
	else if (!inet_ntop(af, c->addr, addr, sizeof(addr)))
		snprintf(buf, len, "(unprintable)");
	else
		snprintf(buf, len, "%s/%u", addr, c->prefix);
	return buf;
}
