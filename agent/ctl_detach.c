// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `stockade detach`: removes enforcement on purpose, from the pins alone
 * (include/lifecycle.h), links first, then the sandbox entries their
 * programs read, and logs one `detach` record per cgroup, numbered from
 * the pinned sequence counter so that the stream has no unexplained gap.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpfutil.h"
#include "cgroup.h"
#include "ctl.h"
#include "limits_agent.h"
#include "limits_util.h"
#include "log.h"
#include "lsm.h"
#include "pin.h"
#include "replace.h"
#include "sandbox.h"
#include "stockade.skel.h"
#include "ctl_int.h"
#include "records.h"

/* The agent's sandbox_gen_bump(), through the pinned .data. */
static void ctl_sandbox_gen_bump(struct ctl *c)
{
	__atomic_fetch_add(&c->data->sandbox_gen, 1, __ATOMIC_SEQ_CST);
}

static void detach_record(struct ctl *c, uint64_t id, uint32_t policy_id)
{
	struct policy_info pi;
	uint64_t seq = __atomic_fetch_add(&c->data->ev_seq, 1, __ATOMIC_RELAXED);

	ctl_policy_of(c, policy_id, &pi);
	events__json_begin(&c->j, seq, "detach");
	records__detach(&c->j, pi.name, ctl_path_of(c, id), id, "detach_command");
	json_end(&c->j);
	fwrite(c->j.buf, 1, c->j.len, stdout);
	if (c->log)
		fwrite(c->j.buf, 1, c->j.len, c->log);
}

/*
 * Remove the sandbox rooted at root: its links (BPF_LINK_DETACH, which
 * ends them even while an agent holds them open), their pins, then every
 * entry confined through it, each with a record. Returns how many
 * cgroups were released.
 */
static size_t detach_root(struct ctl *c, uint64_t root, const struct entry *v,
			  size_t n)
{
	char path[PATH_MAX];
	size_t i, released = 0;
	int fd;

	for (i = 0; i < c->n_pins; i++) {
		if (!c->pins[i].cg_id || c->pins[i].cg_id != root)
			continue;
		if (pin__link_path(path, sizeof(path), c->bpffs, c->pins[i].name))
			continue;
		fd = bpf_obj_get(path);
		if (fd >= 0) {
			if (bpf_link_detach(fd) && errno != EINVAL && errno != ENOLINK)
				pr_warn("detach", "detaching %s failed: %s", path,
					strerror(errno));
			close(fd);
		}
		if (unlink(path) && errno != ENOENT)
			pr_warn("detach", "removing %s failed: %s", path, strerror(errno));
	}
	/* The root's record first, then the cgroups inherited from it. */
	for (i = 0; i < n; i++) {
		if (v[i].id != root || v[i].sb.root_id != root)
			continue;
		if (!bpf_map_delete_elem(c->sb_fd, &v[i].id)) {
			detach_record(c, v[i].id, v[i].sb.policy_id);
			released++;
		}
	}
	for (i = 0; i < n; i++) {
		if (v[i].id == root || v[i].sb.root_id != root)
			continue;
		if (!bpf_map_delete_elem(c->sb_fd, &v[i].id)) {
			detach_record(c, v[i].id, v[i].sb.policy_id);
			released++;
		}
	}
	/* After the deletes, as the agent does: the programs' cached
	 * verdicts (task_verdict: a confined task keeps a copy of its
	 * entry) end with the generation (include/sandbox.h). */
	ctl_sandbox_gen_bump(c);
	bpf_map_delete_elem(c->cnt_fd, &root);
	/* Enforcement is gone: so are the limits. A running agent puts them
	 * back itself when it sees the detach (it knows them best). */
	if (!c->agent_running) {
		const char *rel = ctl_path_of(c, root);

		limits__restore_saved(c->cgroot, rel[0] ? rel : NULL, c->saved_fd, root);
	}
	return released;
}

/* Resolve CGROUP (relative to the mount, or the full path) to its id. */
static int cgroup_target(struct ctl *c, const char *arg, uint64_t *id,
			 char *rel, size_t len)
{
	size_t rlen = strlen(c->cgroot);
	struct stat st;
	char full[PATH_MAX];

	if (!strncmp(arg, c->cgroot, rlen) && arg[rlen] == '/')
		arg += rlen;
	snprintf(rel, len, "%s", arg);
	/* Drop trailing slashes: "/a/" names "/a". */
	while (strlen(rel) > 1 && rel[strlen(rel) - 1] == '/')
		rel[strlen(rel) - 1] = '\0';
	snprintf(full, sizeof(full), "%s%s", c->cgroot, rel);
	if (stat(full, &st) || !S_ISDIR(st.st_mode)) {
		pr_err("detach", "no cgroup %s under %s (%s)", rel, c->cgroot,
		       strerror(errno ?: ENOTDIR));
		return -ENOENT;
	}
	*id = st.st_ino;
	return 0;
}

/*
 * Open the pins for detach, and refuse while an agent runs (--all: the
 * BPF-LSM links end only when it lets go of them). 0: go on; 1: nothing
 * (more) to do, a success; -1: failed, and said why.
 */
static int detach_open(struct ctl *c)
{
	uint32_t pid = 0;
	int err;

	if (c->log_path) {
		c->log = fopen(c->log_path, "ae");
		if (!c->log) {
			pr_err("detach", "cannot open --log %s: %s", c->log_path,
			       strerror(errno));
			return -1;
		}
	}
	err = ctl_open(c);
	if (err == 1 && c->all && c->dir_fd >= 0 && replace__interrupted(c->bpffs)) {
		/* Killed while publishing a replacement: all of the state is
		 * in a staging directory. Its links end with their pins. */
		if (pin__lock(c->dir_fd, true)) {
			pr_err("detach", "an agent is running on %s; stop it first, then run detach --all",
			       c->bpffs);
			return -1;
		}
		if (!pin__remove_all(c->bpffs)) {
			fprintf(stderr, "stockade: detach: the state of an interrupted replacement removed, %s removed\n",
				c->bpffs);
			return 1;
		}
		return -1;
	}
	if (err == 1) {
		if (c->all) {
			fprintf(stderr, "stockade: detach: nothing is pinned at %s; nothing to detach\n",
				c->bpffs);
			return 1;
		} else {
			pr_err("detach", "nothing is pinned at %s: %s is not confined by stockade",
			       c->bpffs, c->target);
		}
		return -1;
	}
	if (err)
		return -1;
	c->agent_running = pin__agent_running(c->bpffs, c->dir_fd, &pid);
	if (c->all && c->agent_running) {
		pr_err("detach", "an agent (pid %u) is running on %s; stop it first (kill -TERM %u), then run detach --all: the BPF-LSM links end only when the agent lets go of them",
		       pid, c->bpffs, pid);
		return -1;
	}
	if (c->all && pin__lock(c->dir_fd, true)) {
		pr_err("detach", "an agent started on %s meanwhile; stop it first", c->bpffs);
		return -1;
	}
	return 0;
}

/* The sandbox roots to release: all of them (--all, also the links of a
 * cgroup whose entry is gone), one cgroup, or a policy's. -1: an error,
 * said. */
static int detach_roots(struct ctl *c, const struct entry *v, size_t n,
			uint64_t *roots, size_t *n_roots)
{
	char rel[PATH_MAX];
	uint32_t policy_id = 0;
	uint64_t id;
	size_t i, j;
	int err;

	if (c->all) {
		for (i = 0; i < n; i++)
			if (v[i].sb.root_id == v[i].id)
				roots[(*n_roots)++] = v[i].id;
		/* Links of a cgroup whose entry is already gone. */
		for (i = 0; i < c->n_pins; i++) {
			for (j = 0; c->pins[i].cg_id && j < *n_roots; j++)
				if (roots[j] == c->pins[i].cg_id)
					break;
			if (c->pins[i].cg_id && j == *n_roots)
				roots[(*n_roots)++] = c->pins[i].cg_id;
		}
	} else if (c->target[0] == '/') {
		err = cgroup_target(c, c->target, &id, rel, sizeof(rel));
		if (err)
			return -1;
		for (i = 0; i < n && v[i].id != id; i++)
			;
		if (i == n) {
			pr_err("detach", "%s (cgroup id %" PRIu64 ") is not confined by stockade (see stockade status)",
			       rel, id);
			return -1;
		}
		if (v[i].sb.root_id != id) {
			pr_err("detach", "%s is confined through %s, a cgroup a selector chose, whose programs cover its whole subtree; detach that one",
			       rel, ctl_path_of(c, v[i].sb.root_id));
			return -1;
		}
		roots[(*n_roots)++] = id;
	} else {
		struct policy_info pi;
		__u32 k;

		for (k = 1; k < POLICY_MAX && !policy_id; k++)
			if (!bpf_map_lookup_elem(c->names_fd, &k, &pi) &&
			    !strncmp(pi.name, c->target, sizeof(pi.name)))
				policy_id = k;
		if (!policy_id) {
			pr_err("detach", "no policy named %s is pinned under %s (see stockade status); a cgroup starts with '/'",
			       c->target, c->bpffs);
			return -1;
		}
		/* By name, not by that id: while a reload switches, a policy
		 * may hold two ids (its slot names the one in force). */
		for (i = 0; i < n; i++) {
			if (v[i].sb.root_id != v[i].id)
				continue;
			ctl_policy_of(c, v[i].sb.policy_id, &pi);
			if (!strncmp(pi.name, c->target, sizeof(pi.name)))
				roots[(*n_roots)++] = v[i].id;
		}
		if (!*n_roots)
			fprintf(stderr, "stockade: detach: policy %s confines no cgroup\n",
				c->target);
	}
	return 0;
}

/* Release each root: marked detached first (one cgroup or a policy: a
 * running agent must not attach it again), then its links and entries. */
static int release_roots(struct ctl *c, const uint64_t *roots, size_t n_roots,
			 const struct entry *v, size_t n, size_t *released)
{
	__u64 when = (__u64)clock_now_ns(CLOCK_REALTIME);
	size_t i;

	for (i = 0; i < n_roots; i++) {

		/* First: a running agent must not attach it again. */
		if (!c->all && bpf_map_update_elem(c->det_fd, &roots[i], &when, BPF_ANY)) {
			pr_err("detach", "marking %s detached failed: %s; nothing changed",
			       ctl_path_of(c, roots[i]), strerror(errno));
			return -1;
		}
		*released += detach_root(c, roots[i], v, n);
	}
	return 0;
}

/* detach --all, after the roots: the entries no root held, the BPF-LSM
 * links, the limits' saved values, then every pin. */
static int detach_rest(struct ctl *c, const struct entry *v, size_t n,
		       size_t released)
{
	size_t i, lsm = 0;
	int err;

	/* Entries no root holds any more, then BPF-LSM, then the
	 * maps: nothing pinned is left. */
	for (i = 0; i < n; i++)
		if (!bpf_map_delete_elem(c->sb_fd, &v[i].id)) {
			detach_record(c, v[i].id, v[i].sb.policy_id);
			released++;
		}
	ctl_sandbox_gen_bump(c);
	for (i = 0; i < c->n_pins; i++)
		lsm += !c->pins[i].cg_id;
	/* Limits of sandboxes whose entry went before (the maps go
	 * next, and with them the values found). */
	if (c->saved_fd >= 0) {
		__u64 k;
		size_t guard = 0;

		while (guard++ < SANDBOX_MAX_CGROUPS &&
		       !bpf_map_get_next_key(c->saved_fd, NULL, &k)) {
			const char *rel = ctl_path_of(c, k);

			if (!limits__restore_saved(c->cgroot, rel[0] ? rel : NULL,
						   c->saved_fd, k))
				break;
		}
	}
	fflush(stdout);
	if (c->log)
		fflush(c->log);
	err = pin__remove_all(c->bpffs);
	if (err)
		return -1;
	fprintf(stderr, "stockade: detach: %zu cgroups released, %zu BPF-LSM links removed, %s removed\n",
		released, lsm, c->bpffs);
	return 0;
}

int ctl__detach(int argc, char **argv)
{
	struct ctl c;
	struct entry *v = NULL;
	uint64_t *roots = NULL;
	size_t n = 0, n_roots = 0, released = 0;
	int err, rc = 1;

	err = ctl_parse(&c, argc, argv, true);
	if (err)
		return err;
	err = detach_open(&c);
	if (err) {
		rc = err == 1 ? 0 : 1;
		goto out;
	}
	if (ctl_read_entries(&c, &v, &n))
		goto out;
	roots = calloc(n + c.n_pins + 1, sizeof(*roots));
	if (!roots || detach_roots(&c, v, n, roots, &n_roots) ||
	    release_roots(&c, roots, n_roots, v, n, &released))
		goto out;
	if (c.all && detach_rest(&c, v, n, released))
		goto out;
	rc = 0;
out:
	fflush(stdout);
	free(v);
	free(roots);
	ctl_close(&c);
	return rc;
}
