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
#include <stddef.h>
#include <stdint.h>

struct names;
struct sandbox_cg;
struct stockade;

/* A watched directory, as its grant sees it (agent/watch.c has the rest). */
struct setup_dir {
	uint64_t id;
	const char *path;	/* relative to the cgroup2 mount */
	uint32_t slot;		/* its candidate: the slot its WATCHED entry holds */
	bool marked;		/* that entry is written, and the daemon's */
};

/* What the grants are judged from; the daemon fills it once the BPF
 * object is loaded, and each pointer outlives it. */
struct setup_ctx {
	struct stockade *skel;		/* setup_grants is ours */
	const struct names *names;	/* the confined cgroups, policies, slots */
	/* The daemon's i-th watched directory into *d; false past the last. */
	bool (*dir)(void *ctx, size_t i, struct setup_dir *d);
	void *ctx;
};

/* Write (or remove) cg's grant, from its policy and cg->fresh (which the
 * daemon sets: it knows when each cgroup was made, agent/watch.c). */
int setup__grant_cg(const struct setup_ctx *s, const struct sandbox_cg *cg);
/* What id's grant in the kernel allows, read back from the map: "self"
 * (a runtime's process moved into it), "children" (into a new cgroup
 * below it). Returns how many of names it filled; 0: no grant. */
size_t setup__granted(const struct setup_ctx *s, uint64_t id,
		      const char *names[2]);
/* The same for a watched directory, from its candidate slot. */
int setup__grant_wd(const struct setup_ctx *s, const struct setup_dir *d);
void setup__revoke(const struct setup_ctx *s, uint64_t id);
/* After a reload: every grant again, from the policies now in force. */
void setup__regrant(const struct setup_ctx *s);
/* Drop grants of cgroups no longer tracked (after a full scan). */
void setup__sweep(const struct setup_ctx *s);

#endif
