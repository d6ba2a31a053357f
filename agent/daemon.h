/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The daemon's state (struct agent) and what its rooms call of each
 * other; only the rooms below include it. Every other file is handed what
 * it needs: events, limits, setup, lsm and replace get their own state and
 * a struct names (agent/names.h); policy_table and sandbox_table are pure
 * values. Each room:
 *   agent/daemon.c       start-up in order, the main loop's sources, one
 *                        teardown
 *   agent/policy_table.c policy ids and slots as a value type, and a
 *                        reload's plan (pure, unit-tested; its own header)
 *   agent/policy_maps.c  the policy table and its rules written into the
 *                        maps (policies, policy_names, policy_slots...)
 *   agent/cgattach.c     the cgroup links of one cgroup
 *   agent/confine.c      the scan: confine, reselect, detached marks,
 *                        adoption's sweep
 *   agent/watch.c        the zero window: watched directories, their
 *                        marks and links, inotify on cgroupfs
 *   agent/reload.c       a reload (a plan of policy_table's, written by
 *                        policy_maps), and the policy files' inotify
 */
#ifndef STOCKADE_DAEMON_H
#define STOCKADE_DAEMON_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "agent.h"
#include "bpfutil.h"
#include "container_meta.h"
#include "events_agent.h"
#include "json.h"
#include "lifecycle.h"
#include "lsm.h"
#include "names.h"
#include "policy.h"
#include "policy_table.h"
#include "sandbox.h"
#include "sandbox_table.h"
#include "setup_agent.h"

struct stockade;	/* the BPF skeleton */
struct bpf_link;
struct replace;		/* agent/replace.c */

/*
 * A watched directory (include/sandbox.h, zero window): a selector's
 * deepest existing directory above its first wildcard ("top": the watch
 * links are attached there), or a directory below one that a selector can
 * still select below ("intermediate": only its WATCHED entry, for its own
 * candidate). Each has an inotify watch, so new cgroups are classified as
 * they appear.
 */
#define WATCH_N_LINKS	7
struct watch_dir {
	char *path;		/* relative to the cgroup2 mount; "" the root */
	uint64_t id;
	int wd;			/* inotify watch, or -1 */
	int pwd;		/* a top's parent's inotify watch (its removal, its
				 * making again), or -1 */
	uint32_t slot;		/* the candidate its entry holds */
	bool top;
	bool armed;		/* entry written (and links, when top) */
	bool entry;		/* the WATCHED entry is ours (not confined) */
	unsigned int seen;	/* scan generation that last wanted it */
	struct bpf_link *links[WATCH_N_LINKS];
};

struct agent {
	struct agent_opts opt;
	struct stockade *skel;
	struct events ev;	/* records out (agent/events_agent.h) */
	struct policy_set set;
	char cgroot[PATH_MAX];

	/* The pin directory (include/lifecycle.h), flock()ed while we run. */
	int pin_fd;
	bool adopting;		/* it held state from an earlier agent */
	/* Where this agent pins: opt.bpffs, or, while it replaces the state
	 * of an incompatible build (rep, agent/replace.c; NULL otherwise),
	 * the staging directory the new state is pinned in until published. */
	const char *pin_dir;
	struct replace *rep;
	bool running;		/* agent_meta names us */
	int64_t started_ns;
	int64_t started_boot_ns;	/* CLOCK_BOOTTIME at the start */
	struct lsm_state lsm;	/* BPF-LSM links, guarantees lost (agent/lsm.c) */

	/* The ids and slots of set's policies, and the pins' old names
	 * (agent/policy_table.h); policy_maps.c writes it into the maps. */
	struct policy_table pt;
	/* Rule-map keys this agent wrote, at an adopting start (sweep). */
	struct key_set keys_allow, keys_exact, keys_meta, keys_file, keys_unix;

	/* Reload (SIGHUP, `stockade reload`, a policy file changed). */
	bool reselect;		/* this scan re-judges tracked cgroups too */
	bool confined_more;	/* ... and confined one more: bump sandbox_gen */
	uint64_t reloads;
	uint32_t reload_result;	/* enum reload_result */
	uint32_t reload_problems;	/* written to reload_msgs */
	int ino_fd;		/* inotify on the policy paths, or -1 */
	int64_t reload_at_ms;	/* CLOCK_MONOTONIC ms of a pending reload */
	/* `detached` as read at the start of a scan; seen: still exists. */
	uint64_t *det;
	bool *det_seen;
	size_t n_det;

	struct sandbox_table cgt;	/* the confined cgroups */
	/* cgt and the policy names, for the rooms outside the daemon */
	struct names names;
	struct bpf_link *born_link;	/* cgroup_mkdir times (pending_ms) */
	struct setup_ctx setup;		/* the setup pass's grants (agent/setup.c) */
	/* Watched directories and the OUTSIDE entries written below them. */
	struct watch_dir *wds;
	size_t n_wds, cap_wds;
	int cg_ino_fd;		/* inotify on the watched directories, or -1 */
	struct outside_cg {
		uint64_t id;
		unsigned int seen;
	} *outs;		/* cgroup ids with an OUTSIDE entry */
	size_t n_outs, cap_outs;
	uint64_t scan_found;	/* new cgroups the safety scan found first */
	uint64_t scan_found_seen;	/* ... already reported (scan_found records) */
	bool in_inotify;	/* classifying from an inotify event */
	bool wd_fallback;	/* arm_all(): links below a top that has none */
	bool rescan;		/* the inotify queue overflowed: scan now */
	/* At the next SCAN_INTERVAL_MS: a removal, a watch lost, a confine
	 * that failed (scan_needed()). */
	bool scan_due;
	/* A directory of the tree inotify would not watch for new cgroups
	 * (a watch limit): only a walk at each interval finds them. */
	bool discovery_short;
	/* The discovery watches, sorted by wd, each with the walk that last
	 * saw its directory: a removed cgroup's watch stays in the kernel
	 * (cgroupfs sends no IN_IGNORED), so a walk removes the ones it did
	 * not see (disc_sweep()), or they would use up root's inotify
	 * watches, every daemon's, with the host's cgroup churn. */
	struct disc_watch {
		int wd;
		unsigned int seen;
	} *disc;
	size_t n_disc, cap_disc;
	uint64_t last_walk_ms;	/* CLOCK_MONOTONIC of the last full walk */
	/* agent_ready's startup_ms and bpf_load_ms: where a start's time
	 * goes (the BPF-LSM programs' verification under TCG, say). */
	int64_t start_ns, bpf_load_ns, lsm_attach_ns;
	/* Names arrived for a tracked container judged without them: the
	 * next scan judges every tracked cgroup again (rejudge()). */
	bool rejudge;
	unsigned int scan_gen;

	uint64_t retries_seen;	/* bpfutil_enomem_retries already reported */

	struct limits_state *lim;	/* agent/limits.c */
	struct preexist *pre;		/* held fds (agent/preexist.c) */
	struct watch_server *watch;	/* --events-socket (agent/watch_server.c) */
	struct metrics_http *http;	/* --metrics-listen (agent/metrics_http.c) */
	/* A cgroup with a file scope of its own was untracked or moved:
	 * file_scope__sync() has entries to delete. */
	bool scope_stale;
	/* Containers (agent/containers.c): where their names are read, and
	 * the inotify on `stockade oci-hook`'s directory (or -1). */
	struct container_sources ctr_src;
	int ctr_ino_fd;
	struct held_cg {
		uint64_t id;
		unsigned int gen;	/* scan_gen it last waited in */
	} *held;		/* new cgroups waiting for their names */
	size_t n_held;
	/* The last container's names read (containers__meta()), for the
	 * rest of that scan. */
	struct meta_cache {
		bool valid;
		unsigned int gen;
		struct container_id cid;	/* whole: runtime, id, namespace, pod */
		int err;
		struct container_meta m;
	} meta_cache;
};

/* agent/daemon.c */
const struct sandbox_cg *agent__find_cg(struct agent *a, uint64_t id);
/* Is id one of this agent's watched directories (zero window)? */
bool agent__watched(struct agent *a, uint64_t id);
const char *agent__policy_name(struct agent *a, uint32_t policy_id);

#include "policy.h"

/*
 * New cgroups arrive by inotify on the watched directories, and removals
 * by inotify on their parents (include/sandbox.h). Every SCAN_INTERVAL_MS
 * the agent walks the cgroup tree only if something asked for a walk
 * (scan_needed()): a removal, a lost or refused watch, a failed attach,
 * a cgroup waiting for its container's names, a `stockade detach`, or a
 * cgroup made anywhere else in the tree (every directory a walk visits
 * is watched for new children: a container whose layout no selector's
 * glob names is found at the next interval, as it was by the periodic
 * scan this replaces). Once
 * every SCAN_BACKSTOP_MS it walks regardless, the safety net: what it
 * finds that inotify missed is logged (scan_found records).
 */
#define SCAN_INTERVAL_MS	5000
#define SCAN_BACKSTOP_MS	300000	/* a walk costs ~20 ms per 1,000 cgroups */

struct bpf_link;
struct bpf_program;
struct setup_dir;
struct watch_dir;

struct scan_ctx {
	struct agent *a;
	int err;		/* first attach failure */
};

/* scan_one() over rel's existing subtree (a cgroup classified from an
 * inotify event may have children by now). */
struct sub_ctx {
	struct scan_ctx *sc;
	const char *prefix;
	void *top;
};


/* agent/cgattach.c */
int attach_cg(struct agent *a, struct sandbox_cg *cg, const char **how);
int attach_links(struct agent *a, uint64_t id, const char *rel, struct bpf_program **progs, int n, struct bpf_link **links, int *fds, const char **how);
int cg_link_path(struct agent *a, uint64_t id, const struct bpf_program *prog, char *path, size_t len);
void cg_progs(struct agent *a, struct bpf_program *progs[SANDBOX_N_LINKS]);
void close_cg(struct sandbox_cg *cg);
void detach_cg(struct agent *a, struct sandbox_cg *cg, const char *why);
void detach_cg_links(struct agent *a, struct sandbox_cg *cg);
void untrack(struct agent *a, size_t i);

/* agent/confine.c */
bool is_detached(struct agent *a, uint64_t id);
int scan(struct agent *a);
void *scan_one(const char *rel, uint64_t id, void *parent, void *vctx);
/* What selected_by() says of a new container's cgroup that a selector
 * may select once the runtime has written its names: leave it pending. */
#define SELECTED_WAIT	(-2)
/* scan_one()'s "parent" for what is below such a cgroup: it waits too. */
#define SCAN_HOLD	((void *)UINTPTR_MAX)
/* selected_by()'s flags. */
enum {
	SEL_MAY_WAIT = 1,	/* a new cgroup: it may wait for its names */
	SEL_NESTED = 2,		/* it has a confined ancestor: cgroups: globs only */
	SEL_SAY = 4,		/* deny-all for unknown names: one record */
};
int64_t selected_by(struct agent *a, const char *rel, uint64_t id, unsigned int flags);
/* Has rel a confined ancestor (tracked, any depth)? */
bool confined_above(struct agent *a, const char *rel);
/* scan(), judging tracked cgroups again too, as a reload does with the
 * same policies (a->rejudge). */
int rejudge(struct agent *a);
void sweep(struct agent *a);
void sweep_outside(struct agent *a);

/* agent/policy_maps.c */
int assign_ids(struct agent *a);
void emit_policies(struct agent *a);
void emit_policy(struct agent *a, size_t i);
int fill_policies(struct agent *a, const bool *only);
int flip_slots(struct agent *a, const bool *only);
void free_slots(struct agent *a);
int read_old_policies(struct agent *a);

/* agent/reload.c */
void check_inotify(struct agent *a);
void reload(struct agent *a, const char *trigger);
void watch_policies(struct agent *a);

/* agent/watch.c */
void arm_all(struct agent *a);
void born_attach(struct agent *a);
/* Was rel made while this agent runs? (For sandbox_cg.fresh, which the
 * setup pass's grants read: agent/setup_agent.h.) */
bool cg_is_fresh(struct agent *a, const char *rel, uint64_t id);
/* struct setup_ctx's dir(): the i-th watched directory (ctx: the agent). */
bool wd_setup_dir(void *ctx, size_t i, struct setup_dir *d);
void disarm_wd(struct agent *a, struct watch_dir *w);
void drain_cg_inotify(struct agent *a);
/* Does the next SCAN_INTERVAL_MS need a walk of the tree (see above)? */
bool scan_needed(struct agent *a);
/* Discovery watches (see struct disc_watch): one more seen this walk;
 * one the agent removes itself (false: not one); the unseen ones. */
void disc_seen(struct agent *a, int wd);
bool disc_forget(struct agent *a, int wd);
void disc_sweep(struct agent *a);
bool agent__watched_wd(const struct agent *a, int wd);
/* A `stockade detach` since the last walk: a mark it did not read. */
bool detached_changed(struct agent *a);
struct watch_dir *find_wd_id(struct agent *a, uint64_t id);
bool is_outside(struct agent *a, uint64_t id);
struct watch_dir *parent_wd(struct agent *a, const char *rel);
int64_t pending_us_of(struct agent *a, const char *rel, uint64_t id);
void watch_tops(struct agent *a);
void policy_watches_free(void);
/* agent/policy_maps.c, owner of the rule, policy and slot maps */
/* Wait until every program already running has finished (bpf_rcu_sync()
 * over the rcu_sync map, which policy_maps.c owns). */
void rcu_sync(struct agent *a);
size_t policy_maps__sweep(struct agent *a);
void retire_ids(struct agent *a, const bool *retired);
void file_gen_bump(struct agent *a);
int slot_put(struct agent *a, uint32_t slot, uint32_t id);
/* agent/confine.c, owner of the sandboxes map */
int sandbox_entry_put(struct agent *a, uint64_t id, const struct sandbox *sb);
bool sandbox_entry_get(struct agent *a, uint64_t id, struct sandbox *sb);
void sandbox_entry_delete(struct agent *a, uint64_t id);
void sandbox_gen_bump(struct agent *a);
void classify_unselected(struct agent *a, const char *rel, uint64_t id);

#endif
