/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
#ifndef STOCKADE_AGENT_H
#define STOCKADE_AGENT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "json.h"
#include "policy.h"

struct stockade;	/* the BPF skeleton */
struct ring_buffer;
struct bpf_link;

/* The cgroup programs attached to each directly selected cgroup. */
#define SANDBOX_N_LINKS	6

struct sandbox_cg {
	char *path;		/* relative to the cgroup2 mount, "/a/b" */
	uint64_t id;
	uint32_t policy_id;	/* index into the set + 1; 0 = conflict */
	uint64_t root_id;	/* the directly selected cgroup it is under */
	bool direct;		/* selected itself (has links), or inherited */
	unsigned int seen;	/* scan generation that last saw it */
	struct bpf_link *links[SANDBOX_N_LINKS];
	struct limits_cg *lim;	/* limits, watches, run time: agent/limits.c */
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
};

struct agent {
	struct agent_opts opt;
	struct stockade *skel;
	struct ring_buffer *rb;
	struct policy_set set;
	char cgroot[PATH_MAX];

	struct sandbox_cg *cgs;
	size_t n_cgs, cap_cgs;
	size_t last_cg;		/* lookup cache: events come in bursts */
	unsigned int scan_gen;

	/* Guarantees this kernel cannot give (no BPF-LSM). */
	const char *degraded[32];
	size_t n_degraded;

	struct json j;
	FILE *log;
	uint64_t lost_seen;	/* losses already reported */
	uint64_t lost_agent;	/* records received but not written out */
	uint64_t logged;	/* kernel records written out */
	int64_t boot_to_real_ns;

	struct limits_state *lim;	/* agent/limits.c */
};

/* agent/events.c */
int events__open(struct agent *a);
void events__close(struct agent *a);
/* Wait up to timeout_ms for records and write them; then report losses. */
int events__poll(struct agent *a, int timeout_ms);
/* Start an agent-side record (takes a sequence number); finish with
 * events__emit(). */
void events__begin(struct agent *a, const char *event);
void events__emit(struct agent *a);
void events__cgroup_fields(struct agent *a, const struct sandbox_cg *cg);

/* agent/agent.c */
int agent__run(const struct agent_opts *opt);
const struct sandbox_cg *agent__find_cg(struct agent *a, uint64_t id);
const char *agent__policy_name(struct agent *a, uint32_t policy_id);

#endif
