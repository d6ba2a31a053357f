/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The daemon's containers (agent/containers.c): each confined cgroup's
 * container and its names, for the selectors and for every record that
 * names a sandbox; the names come from the runtime's state on disk
 * (agent/container_meta.c), and `stockade oci-hook`'s directory is
 * watched, so names written after the cgroup was made arrive at once.
 */
#ifndef STOCKADE_CONTAINERS_H
#define STOCKADE_CONTAINERS_H

#include <stdbool.h>
#include <stdint.h>

#include "container.h"

struct agent;
struct json;
struct loop;
struct sandbox_cg;

/* How long a new container's cgroup stays pending for its names (a
 * selector needs one, the runtime has not written it): the OCI hook
 * writes them before the payload's first instruction, so only a runtime
 * without the hook waits this long, then is judged by what its path
 * says. From the cgroup's creation; the scan after it decides. */
#define CONTAINER_META_WAIT_MS	10000

/* Watch the hook's directory (made if missing). A failure is a warning:
 * names then arrive with the next scan. */
void containers__init(struct agent *a);
int containers__loop_add(struct agent *a, struct loop *l);
void containers__free(struct agent *a);

/* container_meta_fn (policy/container.h) over the agent's sources. */
int containers__meta(void *agent, const struct container_id *cid,
		     struct container_meta *out);
/* May rel, a new cgroup, still wait for its names? */
bool containers__may_wait(struct agent *a, const char *rel, uint64_t id);
/* cg is tracked: resolve its container and read its names. */
void containers__track(struct agent *a, struct sandbox_cg *cg);
/* rel was classified outside every sandbox: if a container selector's
 * path form matched it but no rule resolves it to a container (a
 * runtime's directory holding something else, /docker/not-hex), one
 * `container_unresolved` record says so: a container selector never
 * selects it. */
void containers__outside(struct agent *a, const char *rel, uint64_t id);
/* rel, a new container's cgroup, is confined deny-all: policies[n] need
 * its names, which are unknown (none after CONTAINER_META_WAIT_MS, or
 * refused). One `container_unresolved` record (reason `names_unknown`)
 * says so; the names' arrival judges it again. */
void containers__names_unknown(struct agent *a, const char *rel, uint64_t id,
			       const char *const *policies, size_t n);
/* A new cgroup waits for its names (scan_one(): SELECTED_WAIT); released
 * when it is decided (true if it was held: the scan that decides it did
 * not find what inotify missed); the sweep, after a full scan, forgets
 * those it did not see wait again (removed). */
void containers__hold(struct agent *a, uint64_t id);
bool containers__release(struct agent *a, uint64_t id);
void containers__sweep_held(struct agent *a);
/* How many confined cgroups are containers' own (status, metrics). */
unsigned int containers__count(const struct agent *a);

/* agent/records.c: the "container" object of a record (c may be NULL),
 * and a container_info with it rendered (NULL when memory ran out). */
void records__container(struct json *j, const struct container_info *c);
struct container_info *records__container_info(const struct container_id *id,
					       const struct container_meta *m);

#endif
