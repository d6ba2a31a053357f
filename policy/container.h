/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Container identity: which runtime made a cgroup, for which container
 * (and pod), from the cgroup's path alone (policy/container.c, a table of
 * path forms, unit-tested in tests/unit/test_container.c), and the names
 * the runtime knows it by, from files on disk (agent/container_meta.c:
 * the `stockade oci-hook` records, docker's config.v2.json, the OCI
 * bundles of containerd, CRI-O and podman). README "Containers and
 * Kubernetes" lists the path forms.
 */
#ifndef STOCKADE_CONTAINER_H
#define STOCKADE_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>

enum container_runtime {
	CONTAINER_NONE = 0,
	CONTAINER_DOCKER,
	CONTAINER_CONTAINERD,	/* CRI, and nerdctl/ctr namespaces */
	CONTAINER_CRIO,
	CONTAINER_PODMAN,
	CONTAINER_RUNTIMES,
};

#define CONTAINER_ID_MAX	128
#define CONTAINER_UID_MAX	36	/* a pod UID, 8-4-4-4-12 */
#define CONTAINER_NAME_MAX	253	/* a Kubernetes DNS subdomain */
#define CONTAINER_IMAGE_MAX	511

/* What a cgroup's path says. */
struct container_id {
	enum container_runtime runtime;
	char id[CONTAINER_ID_MAX + 1];
	char pod_uid[CONTAINER_UID_MAX + 1];	/* "" when not a pod */
	char qos[16];		/* kubepods QoS: "burstable", "besteffort", "" */
	char ns[64];		/* nerdctl/ctr: the containerd namespace */
	/* The container's own cgroup is rel's first path_len bytes: a
	 * process in a child of it (crun's "container", a nested cgroup)
	 * belongs to the container of its nearest ancestor. */
	size_t path_len;
};

/* What the runtime's state says (each "" when unknown). */
struct container_meta {
	bool have;		/* a source was found for this id */
	/* A source was found, and refused (agent/container_meta.h: too long,
	 * control characters, disagreeing keys): the names are unknown, not
	 * absent, and a selector that needs one cannot say no. */
	bool refused;
	char name[CONTAINER_NAME_MAX + 1];
	char image[CONTAINER_IMAGE_MAX + 1];
	char pod_namespace[CONTAINER_NAME_MAX + 1];
	char pod_name[CONTAINER_NAME_MAX + 1];
	char pod_uid[CONTAINER_UID_MAX + 1];
};

/* A confined cgroup's container, as records name it (agent/containers.c). */
struct container_info {
	struct container_id id;
	struct container_meta meta;
	/* The record's "container" object, rendered once (records are many
	 * a second in a storm); one allocation with the struct. */
	char json[];
};

/* The container rel ("/a/b", below the cgroup2 mount) is in: 0, or
 * -ENOENT when no rule of the table resolves it (conmon siblings
 * included: they are the runtime's, not the container's). */
int container__resolve(const char *rel, struct container_id *out);

/* Can ns be a containerd namespace's top-level cgroup? Not one of the
 * other runtimes' or systemd's own top-level directories ("docker",
 * "kubepods", "system.slice", ...): /<ns>/<id> there is theirs. */
bool container__namespace_ok(const char *ns);

/* "docker", "containerd", "cri-o", "podman"; NULL for CONTAINER_NONE. */
const char *container__runtime_name(enum container_runtime r);
/* The runtime named s (aliases: "crio", "nerdctl"), or CONTAINER_NONE. */
enum container_runtime container__runtime_parse(const char *s);

/*
 * Which cgroups a policy's container selectors can select: the path forms
 * of their runtimes, as cgroup globs (strdup'ed into out[], at most max).
 * One selector without a runtime names every form but the nerdctl/ctr
 * /<namespace>/<id> one, which only a `namespace:` adds: it would have
 * every top-level directory watched. Returns how many, or -ENOSPC.
 */
struct policy;
struct policy_container;
int policy__container_globs(const struct policy_container *sel, char **out,
			    size_t max);

enum policy_sel {
	POLICY_SEL_NO = 0,
	POLICY_SEL_YES = 1,
	/* A container selector needs the container's names (name, image,
	 * pod), which its runtime has not written yet: the cgroup stays
	 * pending until they are there, or the wait is over. */
	POLICY_SEL_WAIT = 2,
	/* It needs names that are unknown: none after the wait, or refused
	 * (too long, control characters, disagreeing keys). The policy may
	 * or may not select the container: fail closed, confined deny-all
	 * (the conflict slot) and said, until the names are known. */
	POLICY_SEL_UNKNOWN = 3,
};

/* The names of cid, from the runtime's state: 0, or -ENOENT when there
 * are none (yet). */
typedef int (*container_meta_fn)(void *ctx, const struct container_id *cid,
				 struct container_meta *out);

/*
 * Does p select rel ("/a/b") itself? Through a `cgroups:` glob, or
 * through a container selector where rel is a container's own cgroup
 * (not a child of one: those are in its sandbox by inheritance), in
 * whatever layout container__resolve() recognises it: the globs of the
 * path forms (policy__container_globs()) are for watching, not for
 * deciding. meta (may be NULL) gives the names; a selector that needs
 * one the runtime has not written says POLICY_SEL_WAIT when may_wait,
 * POLICY_SEL_UNKNOWN after (or when they are refused); one the names
 * show absent (a container in no pod, for a pod selector) says no.
 * *cid receives rel's container, when it has one (may be NULL).
 */
enum policy_sel policy__selects(const struct policy *p, const char *rel,
				container_meta_fn meta, void *ctx, bool may_wait,
				struct container_id *cid);

/* Does one of p's `cgroups:` globs select rel? (Inside a sandbox, only
 * they may: a container selector never takes a cgroup out of the
 * sandbox it is in, since whoever runs there can make a directory that
 * looks like any runtime's container.) */
bool policy__selects_glob(const struct policy *p, const char *rel);

/* sel against one container: what policy__selects does per selector. */
enum policy_sel policy__container_match(const struct policy_container *sel,
					const struct container_id *cid,
					const struct container_meta *m,
					bool may_wait);

#endif /* STOCKADE_CONTAINER_H */
