/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The agent-side records whose fields more than one file writes (README,
 * "Log schema"): one builder each, used by the daemon (between
 * events__begin() and events__emit()) and by `stockade detach` (after
 * events__json_begin()) alike, so a record has one shape wherever it is
 * made. Each adds the fields after the common ones (ts, seq, event).
 */
#ifndef STOCKADE_RECORDS_H
#define STOCKADE_RECORDS_H

#include <stdbool.h>
#include <stdint.h>

#include "json.h"

/* Start a record in j with its common fields (ts now, seq, event): for a
 * record made outside the daemon (stockade detach). agent/events.c. */
void events__json_begin(struct json *j, uint64_t seq, const char *event);

/* detach: a cgroup no longer confined. policy: its name, "(unknown)" or
 * "(conflict)"; reason: not_selected, cgroup_removed, detach_command... */
void records__detach(struct json *j, const char *policy, const char *cgroup,
		     uint64_t cgroup_id, const char *reason);
/* An address member (daddr, laddr): v4, the first 4 bytes of addr, in
 * dotted decimal; else the 16 bytes as IPv6. */
void records__addr(struct json *j, const char *key, bool v4, const uint8_t *addr);
/* lost: count records lost since the last report, total in all; state:
 * NULL, or "replaced" for the losses of a replaced state. */
void records__lost(struct json *j, uint64_t count, uint64_t total,
		   const char *state);

#endif
