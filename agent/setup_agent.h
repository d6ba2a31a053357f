/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The setup pass, agent side (include/setup.h): the grants it writes to
 * `setup_grants`, the map it owns. Which cgroups grant a pass, and to
 * what:
 *   - a confined cgroup whose policy's setup.pass allows it (on, or auto
 *     and its root selected by a selector with a wildcard): new children
 *     (SETUP_GRANT_CHILDREN), and moves into itself too (SETUP_GRANT_SELF)
 *     when it was created while this agent ran (its mkdir seen by the
 *     cgroup_mkdir tracepoint, bpf/zerowin.bpf.c);
 *   - a watched directory whose candidate policy allows it: its new,
 *     pending children (SETUP_GRANT_CHILDREN).
 * A grant is written before the entry that makes it count (the cgroup's
 * own entry, the WATCHED mark), and removed with it.
 */
#ifndef STOCKADE_SETUP_AGENT_H
#define STOCKADE_SETUP_AGENT_H

#include <stdbool.h>
#include <stdint.h>

struct agent;
struct sandbox_cg;
struct watch_dir;

/* Was rel created while this agent runs? (For sandbox_cg.fresh.) */
bool setup__is_fresh(struct agent *a, const char *rel, uint64_t id);
/* Write (or remove) cg's grant, from its policy and cg->fresh. */
int setup__grant_cg(struct agent *a, const struct sandbox_cg *cg);
/* The same for a watched directory, from its candidate slot. */
int setup__grant_wd(struct agent *a, const struct watch_dir *w);
void setup__revoke(struct agent *a, uint64_t id);
/* After a reload: every grant again, from the policies now in force. */
void setup__regrant(struct agent *a);
/* Drop grants of cgroups no longer tracked (after a full scan). */
void setup__sweep(struct agent *a);

#endif
