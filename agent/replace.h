/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Replacing the pinned state of another build, one cgroup at a time, with
 * no moment unconfined (README "Lifecycle", include/lifecycle.h). Called
 * by the agent's start (agent/daemon.c) in this order:
 *
 *   replace__interrupted  before load: did a replacement stop half way?
 *   replace__prepare      the pins do not fit this build: the daemon
 *                         loads into a staging directory instead (fresh
 *                         maps; replace__staging() names it) and pins
 *                         there until replace__finish() succeeds;
 *   replace__configure    before load: the new state's first sequence
 *                         number, the old ring's size;
 *   replace__carry        after load: the old rings drained, policy ids,
 *                         `detached`, `lim_saved` carried over;
 *   replace__cg_before    per cgroup, before its new links: its counters;
 *   replace__cg_after     per cgroup, after its new links are pinned: its
 *                         old links detached (returns how many);
 *   replace__finish       after the first scan: old links left, old BPF-LSM
 *                         links, the old rings drained, the new state
 *                         published at --bpffs, a `pin_replace` record;
 *   replace__free         at exit.
 *
 * It sees none of the daemon's state: it is handed the pin directory, the
 * skeleton, the records' sink, the names, and what it asks of the daemon
 * (struct replace_env).
 */
#ifndef STOCKADE_REPLACE_H
#define STOCKADE_REPLACE_H

#include <stdbool.h>
#include <stdint.h>

struct cgroup_paths;
struct events;
struct names;
struct policy_info;
struct replace;
struct sandbox_cg;
struct stockade;

/*
 * What a replacement works with once the new state is loaded, given to
 * replace__carry(): the daemon keeps its state, and lends what the
 * replacement must ask of it through these.
 */
struct replace_env {
	struct stockade *skel;		/* the new state, loaded */
	struct events *ev;		/* records */
	const struct names *names;	/* confined cgroups, policy names */
	const char *cgroot;		/* the cgroup2 mount */
	/* Is id one of the daemon's watched directories (zero window)? */
	bool (*watched)(void *ctx, uint64_t id);
	/* The sandbox counters of id copied from old_fd, a replaced state's
	 * sb_count: 0, -ENOENT when it has none (limits__counters_carry()). */
	int (*counters_carry)(void *ctx, uint64_t id, int old_fd);
	/* The limits of cgroups no longer confined put back (limits__sweep()). */
	void (*limits_sweep)(void *ctx, const struct cgroup_paths *paths);
	void *ctx;
};

bool replace__interrupted(const char *dir);
/* dir: --bpffs, whose pins do not fit this build (why). *out is set even
 * when it fails: replace__free() it. */
int replace__prepare(struct replace **out, const char *dir, const char *why);
/* Where the new state is pinned until replace__finish() publishes it in
 * dir. */
const char *replace__staging(const struct replace *r);
/* ring_size: --ring-size, or 0. */
void replace__configure(struct replace *r, struct stockade *skel,
			unsigned int ring_size);
/* Also the old states' policy names by id, newest first, into *old
 * (allocated; POLICY_MAX entries). */
int replace__carry(struct replace *r, const struct replace_env *env,
		   struct policy_info **old);
void replace__cg_before(struct replace *r, const struct sandbox_cg *cg);
unsigned int replace__cg_after(struct replace *r, const struct sandbox_cg *cg);
/* lsm_attached: BPF-LSM links this agent attached (the record says);
 * lsm_none: it runs degraded, with no BPF-LSM links of its own. */
int replace__finish(struct replace *r, unsigned int lsm_attached, bool lsm_none);
void replace__free(struct replace *r);

#endif
