/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Per-execution folders (include/file.h): the file scope of each directly
 * selected cgroup of a policy with `{cgroup}` or `{cgroup_path}` in a
 * read or write path, in `file_cg_rules`, whose owner this room is
 * (agent/file_scope.c).
 *
 * Order, as for every rule: a cgroup's scope is written before anything
 * points at it (its sandbox entry, a reload's slot flip), and an old one
 * goes only once nothing does (file_scope__sync() after the scan, the
 * retired ids after the grace period). Until its scope is there, a task
 * is judged by the policy's base scope, which opens no folder.
 */
#ifndef STOCKADE_FILE_SCOPE_H
#define STOCKADE_FILE_SCOPE_H

#include <stdbool.h>
#include <stdint.h>

struct agent;
struct sandbox_cg;

/*
 * cg's own scope under policy id (written once per id: cg->file_scope).
 * Nothing to do when cg is not directly selected or its policy has no
 * placeholder. An expansion too long for a key is an error record and
 * the cgroup keeps the base scope (returns 0: refused, not unconfined);
 * a map that is full returns its negative errno.
 */
int file_scope__put(struct agent *a, struct sandbox_cg *cg, uint32_t id);
/* The same for every directly selected cgroup on slot, under id (a
 * reload, before the slot flips to id). */
int file_scope__put_slot(struct agent *a, uint32_t slot, uint32_t id);
/* After a scan: the scope of each tracked cgroup written, and every entry
 * no tracked cgroup's (policy id, cgroup) names deleted. The number
 * deleted. */
size_t file_scope__sync(struct agent *a);
/* The entries of the ids marked in retired[] (agent/policy_maps.c). */
void file_scope__retire(struct agent *a, const bool *retired);

#endif
