/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Address normalisation shared by the BPF programs, the rule compiler and
 * the unit tests, so that all three judge an address the same way.
 *
 * IPv6 forms that carry an IPv4 address are judged as that IPv4 address,
 * otherwise ::ffff:169.254.169.254 would slip past an IPv4 block:
 *   ::ffff:a.b.c.d/96   IPv4-mapped   (RFC 4291 2.5.5.2)
 *   ::a.b.c.d/96        IPv4-compatible (deprecated, RFC 4291 2.5.5.1);
 *                       :: and ::1 are excluded, they are IPv6 addresses
 *   64:ff9b::/96        NAT64 well-known prefix (RFC 6052)
 *   2002:a.b.c.d::/16   6to4 (RFC 3056): the IPv4 address is bits 16..47
 */
#ifndef STOCKADE_NETADDR_H
#define STOCKADE_NETADDR_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif
#include "net.h"

/*
 * Normalise a 16-byte IPv6 address in place. Returns NET_FAMILY_V4 with
 * the IPv4 address moved to addr[0..3] (rest zeroed) when the address
 * carries one, else NET_FAMILY_V6 and the address untouched.
 */
static __always_inline __u8 netaddr_normalize6(__u8 *addr)
{
	__u32 w0 = ((__u32)addr[0] << 24) | ((__u32)addr[1] << 16) |
		   ((__u32)addr[2] << 8) | addr[3];
	__u32 w1 = ((__u32)addr[4] << 24) | ((__u32)addr[5] << 16) |
		   ((__u32)addr[6] << 8) | addr[7];
	__u32 w2 = ((__u32)addr[8] << 24) | ((__u32)addr[9] << 16) |
		   ((__u32)addr[10] << 8) | addr[11];
	__u32 w3 = ((__u32)addr[12] << 24) | ((__u32)addr[13] << 16) |
		   ((__u32)addr[14] << 8) | addr[15];
	__u8 v4[4];
	int i;

	if (w0 == 0 && w1 == 0 && (w2 == 0x0000ffff ||
				   (w2 == 0 && w3 > 1))) {
		/* mapped, or compatible (excluding :: and ::1) */
		v4[0] = addr[12]; v4[1] = addr[13];
		v4[2] = addr[14]; v4[3] = addr[15];
	} else if (w0 == 0x0064ff9b && w1 == 0 && w2 == 0) {
		v4[0] = addr[12]; v4[1] = addr[13];
		v4[2] = addr[14]; v4[3] = addr[15];
	} else if ((w0 >> 16) == 0x2002) {
		v4[0] = addr[2]; v4[1] = addr[3];
		v4[2] = addr[4]; v4[3] = addr[5];
	} else {
		return NET_FAMILY_V6;
	}
	for (i = 0; i < 16; i++)
		addr[i] = 0;
	addr[0] = v4[0]; addr[1] = v4[1];
	addr[2] = v4[2]; addr[3] = v4[3];
	return NET_FAMILY_V4;
}

#endif /* STOCKADE_NETADDR_H */
