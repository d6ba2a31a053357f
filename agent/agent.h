/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
#ifndef STOCKADE_AGENT_H
#define STOCKADE_AGENT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "events_agent.h"
#include "json.h"
#include "lifecycle.h"
#include "policy.h"
#include "sandbox.h"
#include "lsm.h"
#include "names.h"
#include "sandbox_table.h"
#include "setup_agent.h"
#include "policy_table.h"
#include "bpfutil.h"

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
	uint32_t slot;		/* the candidate its entry holds */
	bool top;
	bool armed;		/* entry written (and links, when top) */
	bool entry;		/* the WATCHED entry is ours (not confined) */
	unsigned int seen;	/* scan generation that last wanted it */
	struct bpf_link *links[WATCH_N_LINKS];
};

struct agent_opts {
	const char **policy_paths;
	size_t n_policy_paths;
	const char *cgroup_root;
	const char *bpffs;
	const char *log_path;
	unsigned int ring_size;
	bool allow_degraded;
	const char *metrics_path;	/* --metrics FILE, or NULL */
	const char *state_path;		/* --state FILE, or NULL: the default */
	/* Remove every link and pin on SIGTERM/SIGINT (the old behaviour);
	 * by default they stay, and the sandboxes stay confined. */
	bool detach_on_exit;
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
	struct key_set keys_allow, keys_meta, keys_file, keys_unix;

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
	bool rescan;		/* the inotify queue overflowed: scan now */
	unsigned int scan_gen;

	uint64_t retries_seen;	/* bpfutil_enomem_retries already reported */

	struct limits_state *lim;	/* agent/limits.c */
};

/* agent/agent.c */
/* Block SIGHUP, SIGINT and SIGTERM for good (first thing in main()):
 * the main loop reads them from a signalfd once start-up is over. */
void agent__signals_init(void);
int agent__run(const struct agent_opts *opt);
const struct sandbox_cg *agent__find_cg(struct agent *a, uint64_t id);
/* Is id one of this agent's watched directories (zero window)? */
bool agent__watched(struct agent *a, uint64_t id);
const char *agent__policy_name(struct agent *a, uint32_t policy_id);

#endif
