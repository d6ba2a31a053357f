/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The one compile check of a policy set beyond parsing, for `stockade
 * check` and a reload alike: the rules must compile into the kernel's
 * layout (port ranges per address, file prefixes) as the agent will
 * compile them. Every problem goes to diag, one line each; returns 0 or
 * the first negative errno. Pure: no BPF, no agent state (unit-tested).
 */
#ifndef STOCKADE_RULES_CHECK_H
#define STOCKADE_RULES_CHECK_H

#include "policy.h"

int rules__check_set(const struct policy_set *set, struct policy_diag *diag);

/*
 * Write paths that several executions would share (point 3 of `stockade
 * manifest`, "no writable path shared between executions"), one line per
 * problem in diag, worded as a warning (or, strict, an error):
 *   - a write path of a policy whose selectors can pick more than one
 *     cgroup (a glob, or several selectors): every cgroup they select
 *     writes the same folder;
 *   - a write path of one policy that overlaps one of another policy's.
 * Returns how many lines it added. Pure.
 */
size_t rules__write_shares(const struct policy_set *set, bool strict,
			   struct policy_diag *diag);

#endif
