/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * What a room that is not the daemon's needs to name things in a record or
 * a status row: a confined cgroup by id (the daemon's sandbox table), a
 * policy by id (the daemon's policy table, which also knows the names of
 * policies a record from before this agent may carry). The daemon fills
 * one in at start-up and hands it to events, limits, setup and replace,
 * so that none of them sees the daemon's state (agent/daemon.h).
 */
#ifndef STOCKADE_NAMES_H
#define STOCKADE_NAMES_H

#include <stdint.h>

#include "sandbox_table.h"

struct policy;

struct names {
	struct sandbox_table *cgt;
	/* The name of policy id: "(conflict)", "(unknown)" or a name. */
	const char *(*policy_name)(const void *ctx, uint32_t id);
	/* The policy in force under id, or NULL (conflict, retired, none). */
	const struct policy *(*policy)(const void *ctx, uint32_t id);
	/* The policy id a slot resolves to (POLICY_ID_CONFLICT: none). */
	uint32_t (*slot_id)(const void *ctx, uint32_t slot);
	const void *ctx;
};

static inline const char *names__policy_name(const struct names *n,
					     uint32_t id)
{
	return n->policy_name(n->ctx, id);
}

static inline const struct policy *names__policy(const struct names *n,
						 uint32_t id)
{
	return n->policy(n->ctx, id);
}

static inline uint32_t names__slot_id(const struct names *n, uint32_t slot)
{
	return n->slot_id(n->ctx, slot);
}

static inline struct sandbox_cg *names__cg(const struct names *n, uint64_t id)
{
	return sandbox_table__find(n->cgt, id);
}

#endif
