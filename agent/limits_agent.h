/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Resource limits and counting, the agent's half (agent/limits.c):
 *
 *   limits__check    before anything is loaded: can every cgroup take its
 *                    policy's limits? If not, say why and how to fix it,
 *                    and the agent starts nothing (like a bad policy).
 *   limits__init     after the BPF object is loaded: open inotify and
 *                    /dev/kmsg (the counters are pinned with every map).
 *   limits__attach   a cgroup is being confined: its counter entry, its
 *                    limits (the values found saved in the pinned
 *                    lim_saved map), its watches. Adopts what an earlier
 *                    agent left.
 *   limits__detach   enforcement is removed: puts back the values found.
 *   limits__forget   the agent lets go of a cgroup that stays confined.
 *   limits__sweep    after adoption: puts back the limits of sandboxes
 *                    that are gone or no longer selected.
 *   limits__reload   after a reload: the limits follow the new policies.
 *   limits__tick     after every turn of the main loop, and when its timer
 *                    says something is due: breaches, run time, CPU
 *                    throttling, --metrics, the state file.
 *   limits__loop_add the inotify fd, /dev/kmsg and that timer join the
 *                    main loop (agent/loop.h).
 *   limits__fini     the agent stops: remove the state and metrics files;
 *                    limits stay in force unless detached before.
 *   limits__counters_*  the sandbox counters (`sb_count`), which this file
 *                    alone writes: zeroed when a cgroup becomes a sandbox
 *                    root, dropped when it stops being one, carried over
 *                    from a replaced state, swept after adoption.
 *
 * The pure parts (file values, Prometheus text, bursts) are in
 * agent/limits_util.c.
 */
#ifndef STOCKADE_LIMITS_AGENT_H
#define STOCKADE_LIMITS_AGENT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#define LIMITS_STATE_DEFAULT	"/run/stockade/state.json"

struct sandbox_cg;
struct cgroup_paths;
struct sb_stats;
struct policy_set;
struct policy_diag;
struct json;
struct names;
struct stockade;
struct loop;
struct limits_state;
struct events;

/* What limits__init() is handed; each pointer outlives the state. */
struct limits_config {
	struct stockade *skel;	/* loaded; sb_count and lim_saved are ours */
	const char *cgroot;	/* the cgroup2 mount */
	/* The confined cgroups (names->cgt; their ->lim is ours) and the
	 * policies in force. */
	const struct names *names;
	const char *state_path;		/* --state FILE, or NULL: the default */
	const char *metrics_path;	/* --metrics FILE, or NULL */
	/* --bpffs, for the state file; read at each write, as a replacement
	 * points it at its staging directory until it is done. */
	const char *const *pin_dir;
	struct events *ev;	/* where limit records go (agent/events_agent.h) */
};

/* Before anything is loaded: can every cgroup below cgroot take the
 * limits of set's policies? */
int limits__check(const char *cgroot, const struct policy_set *set);
/* The same for a reload's new set, each problem into diag (the set in
 * force is not touched). 0, or -EOPNOTSUPP. */
int limits__check_set(const char *cgroot, const struct policy_set *set,
		      struct policy_diag *diag);
/* *ls is set as soon as it exists, so that limits__fini() frees a state
 * whose init failed half way. */
int limits__init(struct limits_state **ls, const struct limits_config *cfg);
/* After a reload's scan: each tracked cgroup's limits follow its policy
 * in the new set (written again where they changed, the values found put
 * back where the policy no longer sets one); a cgroup that became, or
 * stopped being, directly selected is set up anew. */
void limits__reload(struct limits_state *ls);
/* The functions that take a cgroup do nothing when ls is NULL (before
 * limits__init()). */
int limits__attach(struct limits_state *ls, struct sandbox_cg *cg);
void limits__detach(struct limits_state *ls, struct sandbox_cg *cg, const char *why);
void limits__forget(struct limits_state *ls, struct sandbox_cg *cg);
void limits__sweep(struct limits_state *ls, const struct cgroup_paths *paths);
/* id became a sandbox root: its counters start at zero. */
void limits__counters_reset(struct limits_state *ls, uint64_t id);
/* id is no sandbox root any more. */
void limits__counters_drop(struct limits_state *ls, uint64_t id);
/* Copy id's counters from old_fd (a replaced state's sb_count, of the
 * same layout): 0, -ENOENT when old_fd has none, or the write's error. */
int limits__counters_carry(struct limits_state *ls, uint64_t id, int old_fd);
/* Drop the counters of every id that is not a directly selected cgroup
 * of the table (after adoption). */
void limits__counters_sweep(struct limits_state *ls);
void limits__tick(struct limits_state *ls);
/* The metrics and state files written again at this turn's tick (after a
 * log rotation's reopen). */
void limits__files_rewrite(struct limits_state *ls);
int limits__loop_add(struct limits_state *ls, struct loop *l);
/* Frees ls (NULL: nothing), and every cgroup's limits entry. */
void limits__fini(struct limits_state *ls);

/*
 * Put back the limit values saved for cgroup id (rel below cgroot; NULL
 * when the cgroup is gone) in the lim_saved map fd, and drop the entry.
 * For `stockade detach` while no agent runs. 1 if there was an entry.
 */
int limits__restore_saved(const char *cgroot, const char *rel, int fd,
			  uint64_t id);

/* ---- `stockade status` (agent/ctl.c) ---- */

/* A sandbox as the state file (--state) gives it: its run-time clock. */
struct state_sb {
	char policy[128];
	char cgroup[PATH_MAX];
	uint64_t id, runtime_ms, deadline;
};

/* Read the running agent's state file (NULL: the default). 0; -ESRCH
 * when the agent that wrote it is gone; another -errno. */
int limits__state_read(const char *state_path, struct state_sb **out,
		       size_t *n, uint64_t *pid);
/* Fill s (policy, cgroup, cgroup_id set by the caller) from the pinned
 * counters cnt_fd, the cgroup files, and st (or NULL). */
void limits__usage(const char *cgroot, int cnt_fd, const struct state_sb *st,
		   struct sb_stats *s);

#endif
