/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Fds held from before confinement (agent/preexist.c): the judgement,
 * pure, over the compiled rules (agent/file_rules.h, agent/net_rules.h)
 * and the text of /proc, so that the unit tests hold it against the
 * kernel's (tests/unit/test_preexist.c).
 *
 * A held fd is refused "now" when the policy would refuse opening it now:
 *   a path  by the file scope exactly as bpf/lsm.bpf.h judge() decides
 *           for an open with that access (protected, denied_path, a read
 *           outside the read scope, a write outside the write scope);
 *           the kernel's internal objects ("pipe:[..]", "anon_inode:..",
 *           memfds) have no path and are let through as the BPF side
 *           lets them; a deleted file is judged by the path it had;
 *   a socket  connected (a peer in /proc/PID/net/{tcp,udp}{,6}) to a
 *           destination net_rules__decide() refuses; sockets with no
 *           peer (listening, unconnected UDP) are left alone.
 */
#ifndef STOCKADE_PREEXIST_JUDGE_H
#define STOCKADE_PREEXIST_JUDGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "file_rules.h"
#include "net_rules.h"

enum preexist_access { PREEXIST_READ = 1, PREEXIST_WRITE = 2 };

/* The access an fd was opened for, from fdinfo's "flags:" (octal
 * O_ flags): 0 for O_PATH (no access to judge). */
int preexist__access(unsigned long flags);

/* "read", "write" or "read_write". */
const char *preexist__access_name(int access);

/* The reason (enum ev_reason) the policy refuses the fd whose
 * /proc/PID/fd link reads `link` with access, or 0 (allowed, or nothing
 * to judge). */
uint8_t preexist__judge_path(const struct file_compiled *c, uint32_t policy_id,
			     const char *link, int access);

/* A socket's peer, from one line of /proc/PID/net/{tcp,udp}{,6}. */
struct preexist_peer {
	uint64_t inode;
	int family;		/* 4 or 6 */
	uint8_t addr[16];	/* network byte order */
	uint16_t port;		/* host order; 0: no peer */
	unsigned int state;	/* TCP state (01 ESTABLISHED...) */
};

/* Parse one line (family 4 or 6); false for the header or a bad line. */
bool preexist__parse_peer(const char *line, int family, struct preexist_peer *out);

/* The reason the policy refuses a connection to the peer now (proto:
 * enum net_proto), or 0. */
uint8_t preexist__judge_peer(const struct net_compiled *c, uint32_t policy_id,
			     bool default_allow, const struct preexist_peer *peer,
			     uint8_t proto);

#endif
