/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * What the control commands share (agent/ctl.c): the pinned state opened
 * read-only (struct ctl), the sandbox entries, names and capability sets
 * read from it. Only agent/ctl*.c include this; the commands themselves
 * are in agent/ctl.h.
 */
#ifndef STOCKADE_CTL_INT_H
#define STOCKADE_CTL_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <limits.h>

#include "cgroup.h"
#include "json.h"
#include "pin.h"
#include "policy.h"
#include "sandbox.h"

/* One link pin: links/cg-<id>-<prog> or links/lsm-<prog>. */
struct link_pin {
	char name[128];
	uint64_t cg_id;		/* 0 for an LSM link */
	/* The program's name, name + prog_off: an offset, not a pointer,
	 * because the array is realloc'd while read and sorted by status
	 * (a pointer into name then points into freed or another pin's
	 * memory). */
	size_t prog_off;
	__u32 link_id, prog_id;
};

struct ctl {
	const char *bpffs;
	const char *cgroup_root;
	char cgroot[PATH_MAX];
	const char *log_path;
	const char *state_path;	/* status --state: run-time clocks */
	const char *containers_dir;	/* --containers-dir: the oci-hook's records */
	bool json, all;
	bool require_agent;	/* status --require-agent: the liveness probe */
	const char *target;

	int dir_fd;
	int sb_fd, names_fd, cnt_fd, det_fd, data_fd, bss_fd;
	size_t n_watch_entries;	/* WATCHED and OUTSIDE entries */
	int slots_fd;		/* policy_slots: an entry's slot -> policy id */
	int saved_fd;		/* lim_saved: limit values found (optional) */
	int conf_fd;		/* policies: each id's settings (capabilities) */
	int scope_fd;		/* file_cg_rules, or -1 (an older build's pins) */
	struct stockade__data *data;	/* the pinned .data, mmap()ed */
	size_t data_len;
	bool agent_running;
	struct cgroup_paths paths;
	struct link_pin *pins;
	size_t n_pins;
	struct json j;
	FILE *log;
};

/* Every sandbox entry (id -> struct sandbox), its slot resolved into
 * sb.policy_id. */
struct entry {
	uint64_t id;
	struct sandbox sb;
};

void ctl_init(struct ctl *c);
void ctl_close(struct ctl *c);
int ctl_parse(struct ctl *c, int argc, char **argv, bool detach);
int ctl_open(struct ctl *c);
const char *ctl_path_of(struct ctl *c, uint64_t id);
void ctl_policy_of(struct ctl *c, uint32_t id, struct policy_info *pi);
int ctl_read_entries(struct ctl *c, struct entry **out, size_t *n_out);
size_t ctl_degraded(struct ctl *c, size_t n_lsm, const char **out, size_t max);
bool ctl_caps_of(struct ctl *c, uint32_t id, bool json, char *buf,
		    size_t len);
/* Policy id's settings flags (policy_conf.flags, include/sandbox.h) in
 * *flags; false when the map cannot tell. */
bool ctl_flags_of(struct ctl *c, uint32_t id, uint32_t *flags);
/*
 * Per-execution folders (include/file.h): "own" when the kernel holds the
 * selected cgroup cg's own file scope under policy id, "missing" when the
 * policy has folders but the scope is not there (they are refused), NULL
 * when the policy has none (or the pins cannot say).
 */
const char *ctl_file_scope(struct ctl *c, uint32_t id, uint64_t cg);
/* How many cgroups have a file scope of their own (its "/" entries). */
uint64_t ctl_file_scopes(struct ctl *c);

/* agent/ctl_manifest.c: DIR of the state file (default
 * LIMITS_STATE_DEFAULT), where the agent keeps its policy records; the
 * record of a policy hash (0, or -errno said). */
struct mf_policy;
void ctl_run_dir(const char *state, char *out, size_t len);
int ctl_blob_read(const char *dir, uint64_t hash, struct mf_policy *out);

/* path's container (agent/containers.h), its names read from the
 * runtime's state as the agent reads them; NULL when none (free() it). */
struct container_info *ctl_container(const struct ctl *c, const char *path);

#endif
