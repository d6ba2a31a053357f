// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The judgement of fds held from before confinement (agent/preexist_judge.h). */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "events.h"
#include "preexist_judge.h"

int preexist__access(unsigned long flags)
{
	if (flags & O_PATH)
		return 0;
	switch (flags & O_ACCMODE) {
	case O_RDONLY:
		return PREEXIST_READ | ((flags & O_TRUNC) ? PREEXIST_WRITE : 0);
	case O_WRONLY:
		return PREEXIST_WRITE;
	default:	/* O_RDWR, and 3 (ioctl only: judged as both, as BPF does) */
		return PREEXIST_READ | PREEXIST_WRITE;
	}
}

const char *preexist__access_name(int access)
{
	return access == (PREEXIST_READ | PREEXIST_WRITE) ? "read_write" :
	       access == PREEXIST_WRITE ? "write" : "read";
}

uint8_t preexist__judge_path(const struct file_compiled *c, uint32_t policy_id,
			     const char *link, int access)
{
	static const char deleted[] = " (deleted)";
	char path[FILE_BUF_SIZE];
	size_t n = strlen(link), d = sizeof(deleted) - 1;
	int flags;

	/* No path: pipes, sockets, anon inodes, memfds ("/memfd:x (deleted)"). */
	if (!access || link[0] != '/' || !strncmp(link, "/memfd:", 7))
		return 0;
	if (n >= sizeof(path))
		return EV_REASON_PATH_TOO_LONG;
	memcpy(path, link, n + 1);
	if (n > d && !strcmp(path + n - d, deleted))
		path[n - d] = '\0';
	flags = file_rules__lookup(c, policy_id, path);
	if (flags < 0)
		return EV_REASON_OUTSIDE_SCOPE;	/* no "/" entry: fail closed */
	if (flags & FILE_PROTECTED)
		return EV_REASON_PROTECTED;
	if (flags & FILE_DENY)
		return EV_REASON_DENIED_PATH;
	if ((access & PREEXIST_WRITE) && !(flags & FILE_WRITE))
		return EV_REASON_OUTSIDE_SCOPE;
	if ((access & PREEXIST_READ) && !(flags & (FILE_READ | FILE_WRITE)))
		return EV_REASON_OUTSIDE_SCOPE;
	return 0;
}

/* 8 hex digits: one 32-bit word as the kernel printed it (%08X of the
 * word in host order, little-endian here: the bytes come reversed). */
static bool hex_word(const char *s, uint8_t out[4])
{
	unsigned int w, i;

	for (i = 0; i < 8; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'A' && s[i] <= 'F') ||
		      (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	if (sscanf(s, "%8x", &w) != 1)
		return false;
	out[0] = (uint8_t)w;
	out[1] = (uint8_t)(w >> 8);
	out[2] = (uint8_t)(w >> 16);
	out[3] = (uint8_t)(w >> 24);
	return true;
}

bool preexist__parse_peer(const char *line, int family, struct preexist_peer *out)
{
	char local[64], rem[64];
	unsigned int sl, rport, state, nw = family == 4 ? 1 : 4, i;
	unsigned long long inode;
	const char *colon;

	/* "  sl  local_address rem_address   st tx_queue:rx_queue tr:when
	 *  retrnsmt uid timeout inode ..." */
	if (sscanf(line, " %u: %63s %63s %x %*s %*s %*s %*u %*u %llu", &sl, local,
		   rem, &state, &inode) != 5)
		return false;
	colon = strchr(rem, ':');
	if (!colon || (size_t)(colon - rem) != nw * 8 ||
	    sscanf(colon + 1, "%x", &rport) != 1 || rport > 0xffff)
		return false;
	memset(out, 0, sizeof(*out));
	for (i = 0; i < nw; i++)
		if (!hex_word(rem + 8 * i, out->addr + 4 * i))
			return false;
	out->inode = inode;
	out->family = family;
	out->port = (uint16_t)rport;
	out->state = state;
	return true;
}

uint8_t preexist__judge_peer(const struct net_compiled *c, uint32_t policy_id,
			     bool default_allow, const struct preexist_peer *peer,
			     uint8_t proto)
{
	uint8_t reason = 0;

	if (!peer->port)
		return 0;	/* no peer: listening, or not connected */
	if (net_rules__decide(c, policy_id, default_allow, peer->family, peer->addr,
			      proto, peer->port, &reason))
		return 0;
	return reason;
}
