/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A container's names (struct container_meta, policy/container.h) from
 * the runtime's state on disk, without asking a daemon: `stockade
 * oci-hook`'s records, docker's config.v2.json, the OCI bundles of
 * containerd, CRI-O and podman (README "Container names").
 *
 * Everything read here is written from what the container's creator
 * chose (its name, its image, its annotations), so it is untrusted:
 *   - a file is at most CONTAINER_META_FILE_MAX bytes, else -EFBIG;
 *   - a value longer than its field (CONTAINER_NAME_MAX, ...) is refused
 *     whole, never truncated: a truncated name could equal another
 *     container's, and a policy selected by name would follow it
 *     (-ENAMETOOLONG);
 *   - a value with a control character (C0, DEL or C1) is refused
 *     (-EINVAL): it would forge lines in a log or a terminal;
 *   - two keys that name one field and disagree are refused (-EINVAL):
 *     which one a reader believes must not be the creator's choice.
 * A refused value fails the whole source: the caller gets the error, never
 * a record with that field quietly empty.
 */
#ifndef STOCKADE_CONTAINER_META_H
#define STOCKADE_CONTAINER_META_H

#include <stdbool.h>
#include <stddef.h>

#include "container.h"

#define CONTAINER_HOOK_DIR_DEFAULT	"/run/stockade/containers"
/* OCI configs are a few KiB; docker's config.v2.json rarely 100 KiB. */
#define CONTAINER_META_FILE_MAX		(1u << 20)
/* The bundle's path in an OCI state (PATH_MAX). */
#define CONTAINER_BUNDLE_MAX		4095

struct container_sources {
	const char *root;      /* prefix for every path below, "" for the host; tests use a fixture tree */
	const char *hook_dir;  /* stockade oci-hook's records, default "/run/stockade/containers" */
};

/* Fill *out (struct container_meta, policy/container.h) for the container cid
 * resolved from a cgroup path: 0 when a source was found (out->have),
 * -ENOENT when none, another negative errno on a read/parse error
 * (out left with have=false). */
int container_meta__load(const struct container_sources *src,
			 const struct container_id *cid, struct container_meta *out);
/* The same, and on an error why[] says which file and what was wrong. */
int container_meta__load_why(const struct container_sources *src,
			     const struct container_id *cid,
			     struct container_meta *out, char *why, size_t why_len);

/* All of fd (a regular file, or a pipe when pipe_ok), at most
 * CONTAINER_META_FILE_MAX bytes (-EFBIG), NUL-terminated, in *buf (free
 * it); -EINVAL for anything else (a FIFO, a device). */
int container_meta__read_fd(int fd, bool pipe_ok, char **buf, size_t *len);

/* An id that can name a file in a runtime's directory: non-empty, at most
 * CONTAINER_ID_MAX bytes, no '/', no leading '.', no control character. */
bool container_meta__id_ok(const char *id);

/*
 * The pure half (the hook and the fuzzer use it): each parses buf[0..len),
 * fills *out (have=true) and returns 0, or returns a negative errno with
 * why[] (may be NULL) naming the key and the cause.
 */
/* A `stockade oci-hook` record; its "id" must equal id. */
int container_meta__parse_record(const char *buf, size_t len, const char *id,
				 struct container_meta *out, char *why, size_t why_len);
/* docker's config.v2.json: Name, Config.Image, Config.Labels io.kubernetes.*. */
int container_meta__parse_docker(const char *buf, size_t len,
				 struct container_meta *out, char *why, size_t why_len);
/* An OCI config.json: its "annotations" (none: 0, every field ""). */
int container_meta__parse_config(const char *buf, size_t len,
				 struct container_meta *out, char *why, size_t why_len);

/* What an OCI runtime hands a hook on stdin (runtime-spec, "State"). */
struct oci_state {
	char id[CONTAINER_ID_MAX + 1];
	char status[16];		/* "creating", "created", "running", "stopped" */
	int pid;			/* 0 when absent (poststop) */
	char bundle[CONTAINER_BUNDLE_MAX + 1];
	bool have_annotations;		/* a non-empty "annotations" object */
	struct container_meta meta;	/* from those annotations */
};
/* -EINVAL unless it has ociVersion and a valid id; the rest is optional
 * here (the hook says what each of its modes needs). */
int container_meta__parse_state(const char *buf, size_t len,
				struct oci_state *out, char *why, size_t why_len);

/* Read the regular file at path into a NUL-terminated heap buffer:
 * O_NOFOLLOW on its last component, -EFBIG above CONTAINER_META_FILE_MAX,
 * -EINVAL when it is not a regular file. */
int container_meta__read_file(const char *path, char **buf, size_t *len);

#endif /* STOCKADE_CONTAINER_META_H */
