/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The daemon's rooms (agent/agent.c and the files below) and what they
 * call of each other; only they include it. Each room:
 *   agent/agent.c        start-up in order, the main loop, one teardown
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
#ifndef STOCKADE_AGENT_INT_H
#define STOCKADE_AGENT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent.h"
#include "policy.h"

/* The safety net: new cgroups arrive by inotify on the watched
 * directories (include/sandbox.h); the scan finds what that missed. */
#define SCAN_INTERVAL_MS	5000

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
int attach_links(struct agent *a, uint64_t id, const char *rel, struct bpf_program **progs, int n, struct bpf_link **links, const char **how);
int cg_link_path(struct agent *a, uint64_t id, const struct bpf_program *prog, char *path, size_t len);
void cg_progs(struct agent *a, struct bpf_program *progs[SANDBOX_N_LINKS]);
void close_cg(struct sandbox_cg *cg);
void detach_cg(struct agent *a, struct sandbox_cg *cg, const char *why);
void detach_cg_links(struct agent *a, struct sandbox_cg *cg);
void untrack(struct agent *a, size_t i);

/* agent/confine.c */
bool is_detached(struct agent *a, uint64_t id);
void rcu_sync(struct agent *a);
int scan(struct agent *a);
void *scan_one(const char *rel, uint64_t id, void *parent, void *vctx);
int64_t selected_by(struct agent *a, const char *rel);
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
struct watch_dir *find_wd_id(struct agent *a, uint64_t id);
bool is_outside(struct agent *a, uint64_t id);
struct watch_dir *parent_wd(struct agent *a, const char *rel);
int64_t pending_us_of(struct agent *a, const char *rel, uint64_t id);
void watch_tops(struct agent *a);
void policy_watches_free(void);
/* agent/policy_maps.c, owner of the rule, policy and slot maps */
size_t policy_maps__sweep(struct agent *a);
void retire_ids(struct agent *a, const bool *retired);
int slot_put(struct agent *a, uint32_t slot, uint32_t id);
/* agent/confine.c, owner of the sandboxes map */
int sandbox_entry_put(struct agent *a, uint64_t id, const struct sandbox *sb);
bool sandbox_entry_get(struct agent *a, uint64_t id, struct sandbox *sb);
void sandbox_entry_delete(struct agent *a, uint64_t id);
void classify_unselected(struct agent *a, const char *rel, uint64_t id);

#endif
