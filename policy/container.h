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
	char name[CONTAINER_NAME_MAX + 1];
	char image[CONTAINER_IMAGE_MAX + 1];
	char pod_namespace[CONTAINER_NAME_MAX + 1];
	char pod_name[CONTAINER_NAME_MAX + 1];
	char pod_uid[CONTAINER_UID_MAX + 1];
};

/* The container rel ("/a/b", below the cgroup2 mount) is in: 0, or
 * -ENOENT when no rule of the table resolves it (conmon siblings
 * included: they are the runtime's, not the container's). */
int container__resolve(const char *rel, struct container_id *out);

/* "docker", "containerd", "cri-o", "podman"; NULL for CONTAINER_NONE. */
const char *container__runtime_name(enum container_runtime r);
/* The runtime named s (aliases: "crio", "nerdctl"), or CONTAINER_NONE. */
enum container_runtime container__runtime_parse(const char *s);

#endif /* STOCKADE_CONTAINER_H */
