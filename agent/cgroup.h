/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * cgroup v2 discovery: find the mount, walk it, match selectors.
 * A cgroup's id, as BPF sees it (bpf_get_current_cgroup_id()), is the
 * inode number of its directory on cgroup2.
 */
#ifndef STOCKADE_CGROUP_H
#define STOCKADE_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <limits.h>
#include <stddef.h>

/*
 * Find the cgroup2 mount: `want` if given (it must be cgroup2), else
 * /sys/fs/cgroup, else /sys/fs/cgroup/unified (hybrid hosts), else the
 * first cgroup2 line of /proc/self/mountinfo. 0 or -ENOENT/-EINVAL with a
 * message that names the fix.
 */
int cgroup_root__find(const char *want, char *out, size_t len);
/* The same search, silent: the message (with its fix) in why instead
 * (`stockade agent --preflight` prints it as one of its lines). */
int cgroup_root__probe(const char *want, char *out, size_t len,
		       char *why, size_t why_len);

/*
 * Walk every directory below root (root itself excluded), pre-order, and
 * call fn with its path relative to root ("/a/b"), its id, and the value
 * fn returned for the parent (parent_data; NULL at the top level). fn's
 * return value is handed to the children. Returns 0 or a negative errno.
 */
typedef void *(*cgroup_walk_fn)(const char *rel, uint64_t id,
				void *parent_data, void *ctx);
int cgroup__walk(const char *root, cgroup_walk_fn fn, void *ctx);

/* Id of the cgroup at root + rel, or 0 with errno set. */
uint64_t cgroup__id(const char *root, const char *rel);

/* Every cgroup's path by id, for naming a cgroup the agent does not track
 * (records drained after a restart, `stockade status`). */
struct cgroup_path {
	uint64_t id;
	char *path;	/* relative to the mount, "/a/b" */
};
struct cgroup_paths {
	struct cgroup_path *v;
	size_t n, cap;
	int err;
};
int cgroup_paths__load(const char *root, struct cgroup_paths *t);
/* The path of id, or NULL when no cgroup has it (removed). */
const char *cgroup_paths__find(const struct cgroup_paths *t, uint64_t id);
void cgroup_paths__free(struct cgroup_paths *t);

/* Does selector (a shell glob, '/' never matched by a wildcard) match rel? */
bool cgroup__match(const char *selector, const char *rel);

#endif
