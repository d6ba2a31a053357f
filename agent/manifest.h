/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * `stockade manifest` (agent/ctl_manifest.c), its pure half: the runtime
 * configuration in force for each sandbox, as values, judged against the
 * five verification points of "sandboxed execution of untrusted code"
 * (README, "Evidence for assessors"):
 *   1 no ambient credentials;
 *   2 egress denied by default, with named exceptions;
 *   3 a filesystem read-only or task-scoped, no writable path shared;
 *   4 CPU, memory and run-time limits set;
 *   5 a named boundary.
 * ctl_manifest.c reads the pins, /proc and the cgroup files into these
 * values; everything here parses, judges and renders without a kernel,
 * and is unit-tested (tests/unit/test_manifest.c). The /proc parsers and
 * the policy blob parser take untrusted bytes: tests/fuzz/proc_fuzz.c.
 */
#ifndef STOCKADE_MANIFEST_H
#define STOCKADE_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct policy;

#define MF_POINTS	5
/* The boundary stockade provides, whatever the operator names it. */
#define MF_BOUNDARY_KIND "shared-kernel confinement by BPF-LSM and cgroup BPF programs"
/* Where the operator names the boundary (manifest --boundary FILE). */
#define MF_BOUNDARY_DEFAULT "/etc/stockade/boundary.yaml"
/* The agent's per-policy blobs: DIR/policies/<hash>.policy, DIR being the
 * --state file's directory (default /run/stockade). */
#define MF_BLOB_DIR	"policies"
#define MF_BLOB_MAGIC	"stockade-policy-manifest 1"

/* ---- /proc/PID/status ---------------------------------------------- */

struct mf_status {
	char name[64];
	uint32_t uid[4], gid[4];	/* real, effective, saved, fs */
	uint64_t cap_inh, cap_prm, cap_eff, cap_bnd, cap_amb;
	int no_new_privs;		/* -1: the kernel did not say */
	int seccomp;			/* 0 off, 1 strict, 2 filter; -1 unknown */
	unsigned int have;		/* MF_ST_* bits found */
};
enum { MF_ST_UID = 1, MF_ST_GID = 2, MF_ST_CAPS = 4, MF_ST_NNP = 8,
       MF_ST_SECCOMP = 16 };
/* Parse the text of /proc/PID/status. 0, or -EINVAL when it lacks the
 * Uid, Gid or Cap* lines (what every kernel since 4.3 prints). */
int mf_parse_status(const char *buf, size_t len, struct mf_status *out);

/* ---- secret-looking names ------------------------------------------ */

/* Does an environment variable's name look like a credential? *_TOKEN,
 * *_SECRET, *_KEY, *_PASSWORD, *_CREDENTIALS, AWS_*, AZURE_*,
 * GOOGLE_APPLICATION_CREDENTIALS... (case-insensitive, whole suffixes). */
bool mf_secret_name(const char *name, size_t len);

/* The names (never the values) of /proc/PID/environ's variables that
 * mf_secret_name() picks, each once, in order: an array of n strings
 * (mf_strv_free). 0 or -ENOMEM. */
int mf_environ_secrets(const char *buf, size_t len, char ***names, size_t *n);
void mf_strv_free(char **v, size_t n);

/* ---- /proc/PID/mountinfo ------------------------------------------- */

struct mf_mount {
	char *point;	/* unescaped (\040 -> ' ') */
	char *root;	/* the mount's root within its filesystem */
	char *fstype;
	char *source;
	bool ro;	/* the mount's own options say ro, or its superblock's */
};
/* Every well-formed line; a malformed one is skipped (counted in
 * *bad, if not NULL). 0 or -ENOMEM. */
int mf_parse_mountinfo(const char *buf, size_t len, struct mf_mount **out,
		       size_t *n, size_t *bad);
void mf_mounts_free(struct mf_mount *v, size_t n);

/* ---- the policy as the agent wrote it (its blob) -------------------- */

struct mf_reasoned {
	char *what;	/* a CIDR rule "10.0.0.0/8 tcp 443", a path, an endpoint */
	char *reason;	/* NULL: none given */
};

struct mf_policy {
	char *name, *category, *file;
	uint64_t hash;
	bool default_allow;		/* also in the pins: flags */
	struct mf_reasoned *allow;	size_t n_allow;
	struct mf_reasoned *net_overrides; size_t n_net_overrides;
	bool has_read;
	char **read;	size_t n_read;
	char **write;	size_t n_write;
	char **deny;	size_t n_deny;
	struct mf_reasoned *file_overrides; size_t n_file_overrides;
	bool has_runtime;
	uint64_t runtime_ms;
	/* exec: (README, "Execution"): has_exec_paths false: the read
	 * scope (minus the write scope unless exec_allow_written). */
	bool has_exec_paths;
	char **exec_paths;	size_t n_exec_paths;
	bool exec_allow_written, exec_anon_deny, exec_hash;
	/* The selectors, and the limits a probe must exceed. */
	char **selectors;	size_t n_selectors;
	bool has_memory, has_pids;
	uint64_t memory, pids;
};

/* The blob the agent writes for p (at fill time: start and reload), one
 * "key\tfield..." line each, fields escaped (\t \n \\); malloc()ed text
 * in *out. 0 or -ENOMEM. */
int mf_blob_write(const struct policy *p, char **out, size_t *len);
/* And back; unknown keys are skipped (a newer agent's). 0, -EINVAL (not a
 * blob: no magic line) or -ENOMEM. */
int mf_blob_parse(const char *buf, size_t len, struct mf_policy *out);
/* Per-execution folders (policy/policy.h): does p's read or write scope
 * hold a placeholder; and p's read and write paths expanded in place for
 * the selected cgroup cg ("/a/job-7"), as the agent compiled them (cg
 * NULL: left out, as the base scope does). 0,
 * -ENAMETOOLONG (an expansion longer than a rule may be: that path is
 * dropped, as the agent leaves it out) or -ENOMEM. */
bool mf_policy_templated(const struct mf_policy *p);
int mf_policy_expand(struct mf_policy *p, const char *cg);
void mf_policy_free(struct mf_policy *p);

/* ---- the boundary file (YAML: name, architecture_record) ------------ */

struct mf_boundary {
	char name[256];
	char record[512];	/* the architecture record's reference */
};
/* 0, or -EINVAL with why (a line of text naming the key) filled in. */
int mf_boundary_parse(const char *buf, size_t len, struct mf_boundary *out,
		      char *why, size_t why_len);

/* ---- one sandbox, gathered ------------------------------------------ */

struct mf_proc {
	int pid;
	struct mf_status st;
	bool have_status;
	char **secret_env;	size_t n_secret_env;
};

struct mf_secret_path {
	char *path;	/* as the sandbox sees it */
	int pid;	/* whose mount namespace holds it */
	bool blocked;	/* filled by mf_judge() */
};

struct mf_share {
	char *cgroup;	/* the other sandbox */
	char *policy;
	char *path;	/* our write path that overlaps one of its */
};

struct container_info;

struct mf_sandbox {
	char *cgroup;
	uint64_t cgroup_id;
	/* Its container: the record's "container" object, rendered
	 * (agent/records.c), or NULL. */
	struct container_info *ctr;
	/* From the pins: policy_names, policies (flags, caps). */
	char policy_name[64];
	uint64_t hash;
	uint32_t generation;
	bool audit;
	bool default_allow, userns;
	bool caps_known;
	uint64_t caps;
	/* From the agent's blob for that hash; NULL when none was found.
	 * With per-execution folders, a copy expanded for this cgroup. */
	const struct mf_policy *pol;
	/* Per-execution folders: the kernel holds no file scope of this
	 * cgroup's own (file_cg_rules), so its folders are refused. */
	bool scope_missing;
	struct mf_proc *procs;		size_t n_procs;
	struct mf_secret_path *paths;	size_t n_paths;
	/* A process whose environ or root could not be read (not gone:
	 * refused): point 1 cannot be judged for it. */
	int unreadable_pid;
	int unreadable_errno;
	struct mf_mount *mounts;	size_t n_mounts;
	int mounts_pid;
	/* The cgroup files, as read ("" absent: the controller is off). */
	char cpu_max[64], memory_max[32], memory_swap_max[32], pids_max[32];
	bool runtime_set;		/* the running agent tracks a run time */
	uint64_t runtime_ms;
	bool runtime_from_agent;	/* from its state file, not the blob */
	/* Filled by mf_shared() and mf_judge(). */
	struct mf_share *shared;	size_t n_shared;
	bool pass[MF_POINTS + 1];	/* [1..5] */
	char why[MF_POINTS + 1][256];
};

struct mf_host {
	char hostname[256];
	char kernel[256];
	bool bpf_lsm;
	const char *degraded[48];
	size_t n_degraded;
	bool have_boundary;
	struct mf_boundary boundary;
	char boundary_file[512];
	char boundary_why[256];		/* why there is none */
};

/* Does path a cover b or b cover a, component by component? */
bool mf_path_overlap(const char *a, const char *b);
/* Does a cover b (a == b or b below a)? */
bool mf_path_covers(const char *a, const char *b);

/* writable_shared_with for every sandbox of v[0..n): each other sandbox
 * (another cgroup of the same policy included) whose write scope overlaps
 * one of its write paths. 0 or -ENOMEM. */
int mf_shared(struct mf_sandbox *v, size_t n);

/* Would the policy in force stop a sandbox's read of path? With BPF-LSM
 * off, nothing is (the file scope is an LSM guarantee). */
bool mf_path_blocked(const struct mf_policy *p, bool lsm, const char *path);

/* Fill each secret path's blocked, then pass[] and why[] per point. */
void mf_judge(const struct mf_host *h, struct mf_sandbox *s);

/* Render: one JSON document (generated: RFC 3339 UTC) or Markdown. Both
 * name every item's point and verdict. Return true when all pass. */
bool mf_render_json(FILE *f, const struct mf_host *h, struct mf_sandbox *v,
		    size_t n, const char *generated);
bool mf_render_md(FILE *f, const struct mf_host *h, struct mf_sandbox *v,
		  size_t n, const char *generated);

void mf_sandbox_free(struct mf_sandbox *s);

#endif
