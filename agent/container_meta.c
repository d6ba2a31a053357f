// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * A container's names from the runtime's files (agent/container_meta.h).
 * Pure userspace, no skeleton: the unit tests link it, the fuzzer too.
 *
 * json-c parses (agent/json.c only writes). Every parse is strict JSON
 * with UTF-8 validated: a document json-c would repair (trailing commas,
 * bare words) or bytes that are not UTF-8 are not a runtime's output, so
 * they are refused rather than guessed at.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "container_meta.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

enum meta_field {
	F_NAME,
	F_IMAGE,
	F_POD_NS,
	F_POD_NAME,
	F_POD_UID,
	F_FIELDS,
};
#define F_BIT(f)	(1u << (f))
#define F_ALL		(F_BIT(F_FIELDS) - 1)

/*
 * Annotation (and docker label) -> field. Order is precedence only in the
 * sense that the first key found fills the field; a later key for the same
 * field must agree with it (else -EINVAL), so no creator can make two
 * readers disagree. Sources of the names:
 *   - containerd's CRI plugin sets io.kubernetes.cri.* itself on every CRI
 *     container (pkg/cri/annotations; the pause container has no
 *     container-name nor image-name);
 *   - kubelet's container labels (io.kubernetes.container.name,
 *     io.kubernetes.pod.*) reach the OCI annotations under CRI-O, and
 *     docker's labels under cri-dockerd;
 *   - io.kubernetes.cri-o.ImageName is CRI-O's "some name of the image"
 *     (may be empty when the image was given by ID);
 *     io.kubernetes.cri-o.ContainerName is not here: it is CRI-O's
 *     internal k8s_<container>_<pod>_... name, not the pod spec's;
 *   - nerdctl passes its labels as annotations, nerdctl/name among them.
 * Not here: org.opencontainers.image.ref.name (an image's tag within its
 * index, not the image's name), and podman's container name: podman
 * writes no annotation with it (io.podman.annotations.* carry options:
 * autoremove, init, privileged...), so a podman container outside a pod
 * is named only by the hook's record.
 */
static const struct {
	const char *key;
	enum meta_field field;
} annotation_map[] = {
	{ "io.kubernetes.cri.container-name", F_NAME },
	{ "io.kubernetes.cri.image-name", F_IMAGE },
	{ "io.kubernetes.cri.sandbox-namespace", F_POD_NS },
	{ "io.kubernetes.cri.sandbox-name", F_POD_NAME },
	{ "io.kubernetes.cri.sandbox-uid", F_POD_UID },
	{ "io.kubernetes.container.name", F_NAME },
	{ "io.kubernetes.pod.namespace", F_POD_NS },
	{ "io.kubernetes.pod.name", F_POD_NAME },
	{ "io.kubernetes.pod.uid", F_POD_UID },
	{ "io.kubernetes.cri-o.ImageName", F_IMAGE },
	{ "nerdctl/name", F_NAME },
};

static char *field_buf(struct container_meta *m, enum meta_field f, size_t *cap)
{
	switch (f) {
	case F_NAME:
		*cap = sizeof(m->name);
		return m->name;
	case F_IMAGE:
		*cap = sizeof(m->image);
		return m->image;
	case F_POD_NS:
		*cap = sizeof(m->pod_namespace);
		return m->pod_namespace;
	case F_POD_NAME:
		*cap = sizeof(m->pod_name);
		return m->pod_name;
	default:
		*cap = sizeof(m->pod_uid);
		return m->pod_uid;
	}
}

static int fail(char *why, size_t n, int err, const char *fmt, const char *a)
{
	if (why && n)
		snprintf(why, n, fmt, a);
	return err;
}

/* C0 controls, DEL, and C1 controls (U+0080..U+009F, UTF-8 C2 80..C2 9F:
 * CSI is U+009B), which terminals act on as they do on ESC. */
static bool has_control(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == 0x7f)
			return true;
		if (c == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] >= 0x80 &&
		    (unsigned char)s[i + 1] <= 0x9f)
			return true;
	}
	return false;
}

/* v, the value of key, into dst[cap]: a string, shorter than cap, with no
 * control character (a NUL included: json-c keeps "\u0000"). */
static int take_str(json_object *v, const char *key, char *dst, size_t cap,
		    char *why, size_t n)
{
	const char *s;
	size_t len;

	if (!json_object_is_type(v, json_type_string))
		return fail(why, n, -EINVAL, "\"%s\" is not a string", key);
	s = json_object_get_string(v);
	len = (size_t)json_object_get_string_len(v);
	if (len >= cap) {
		if (why && n)
			snprintf(why, n, "\"%s\" is %zu bytes, more than the %zu allowed: refused, not truncated",
				 key, len, cap - 1);
		return -ENAMETOOLONG;
	}
	if (has_control(s, len))
		return fail(why, n, -EINVAL, "\"%s\" holds a control character", key);
	memcpy(dst, s, len);
	dst[len] = '\0';
	return 0;
}

/* The table's keys found in obj, for the fields in mask. */
static int apply_map(json_object *obj, struct container_meta *m, unsigned int mask,
		     char *why, size_t n)
{
	char tmp[CONTAINER_IMAGE_MAX + 1];
	json_object *v;
	size_t i, cap;
	char *dst;
	int err;

	for (i = 0; i < ARRAY_SIZE(annotation_map); i++) {
		if (!(mask & F_BIT(annotation_map[i].field)) ||
		    !json_object_object_get_ex(obj, annotation_map[i].key, &v))
			continue;
		dst = field_buf(m, annotation_map[i].field, &cap);
		err = take_str(v, annotation_map[i].key, tmp, cap, why, n);
		if (err)
			return err;
		if (!tmp[0])
			continue;
		if (dst[0] && strcmp(dst, tmp))
			return fail(why, n, -EINVAL,
				    "\"%s\" disagrees with another key for the same field", annotation_map[i].key);
		memcpy(dst, tmp, strlen(tmp) + 1);
	}
	return 0;
}

/* buf as one JSON object, nothing but whitespace after it. */
static int parse_object(const char *buf, size_t len, json_object **out, char *why, size_t n)
{
	struct json_tokener *tok;
	json_object *obj;
	enum json_tokener_error jerr;
	size_t off;

	*out = NULL;
	if (len > CONTAINER_META_FILE_MAX)
		return fail(why, n, -EFBIG, "more than %s bytes", "1048576");
	tok = json_tokener_new();
	if (!tok)
		return -ENOMEM;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	obj = json_tokener_parse_ex(tok, buf, (int)len);
	jerr = json_tokener_get_error(tok);
	off = tok->char_offset;
	json_tokener_free(tok);
	if (!obj) {
		/* json_tokener_continue: the input ended inside a value. */
		return fail(why, n, -EINVAL, "not valid JSON: %s",
			    jerr == json_tokener_continue ? "it ends too early" :
			    json_tokener_error_desc(jerr));
	}
	for (; off < len; off++)
		if (!strchr(" \t\r\n", buf[off]) || !buf[off]) {
			json_object_put(obj);
			return fail(why, n, -EINVAL, "not valid JSON: %s", "bytes after the document");
		}
	if (!json_object_is_type(obj, json_type_object)) {
		json_object_put(obj);
		return fail(why, n, -EINVAL, "not valid JSON: %s", "not an object");
	}
	*out = obj;
	return 0;
}

/* obj[key] as an object: 0 (and *v NULL) when absent or null. */
static int get_object(json_object *obj, const char *key, json_object **v, char *why, size_t n)
{
	*v = NULL;
	if (!json_object_object_get_ex(obj, key, v) || json_object_is_type(*v, json_type_null)) {
		*v = NULL;
		return 0;
	}
	if (!json_object_is_type(*v, json_type_object)) {
		*v = NULL;
		return fail(why, n, -EINVAL, "\"%s\" is not an object", key);
	}
	return 0;
}

/* obj[key], a string, into dst[cap]; absent or null leaves dst "". */
static int get_str(json_object *obj, const char *key, char *dst, size_t cap,
		   char *why, size_t n)
{
	json_object *v;

	dst[0] = '\0';
	if (!json_object_object_get_ex(obj, key, &v) || json_object_is_type(v, json_type_null))
		return 0;
	return take_str(v, key, dst, cap, why, n);
}

bool container_meta__id_ok(const char *id)
{
	size_t len = strnlen(id, CONTAINER_ID_MAX + 1);

	return len && len <= CONTAINER_ID_MAX && id[0] != '.' && !strchr(id, '/') &&
	       !has_control(id, len);
}

static int parse_record_of(const char *buf, size_t len, const char *id,
			   const struct container_id *cid,
			   struct container_meta *out, char *why, size_t n);

int container_meta__parse_record(const char *buf, size_t len, const char *id,
				 struct container_meta *out, char *why, size_t n)
{
	return parse_record_of(buf, len, id, NULL, out, why, n);
}

/* As container_meta__parse_record(); with cid, a record whose "cgroup"
 * resolves to another runtime's container, or another id, is -ESRCH:
 * ids are unique within a runtime only (a podman and a containerd
 * container may share one), and the hook's directory is keyed by id. */
static int parse_record_of(const char *buf, size_t len, const char *id,
			   const struct container_id *cid,
			   struct container_meta *out, char *why, size_t n)
{
	char got[CONTAINER_ID_MAX + 1], cg[4096] = "";
	struct container_id rc;
	json_object *obj, *pod;
	int err;

	memset(out, 0, sizeof(*out));
	err = parse_object(buf, len, &obj, why, n);
	if (err)
		return err;
	err = get_str(obj, "id", got, sizeof(got), why, n);
	/* A record copied, or renamed, to another container's name must not
	 * lend that container its names. */
	if (!err && strcmp(got, id))
		err = fail(why, n, -EINVAL, "its \"id\" is not %s", id);
	/* Whose record it is, before any name is read: another container's
	 * record with a value that would be refused must not make this
	 * one's names refused. A cgroup no rule resolves (a runtime's custom
	 * cgroupsPath, a v1 host's empty one) leaves the id alone to decide;
	 * one that resolves must be this container: same runtime, id,
	 * containerd namespace and pod (containerd lets the caller choose
	 * an id, the same in every namespace). */
	if (!err && cid)
		err = get_str(obj, "cgroup", cg, sizeof(cg), why, n);
	if (!err && cid && cg[0] && !container__resolve(cg, &rc) &&
	    (rc.runtime != cid->runtime || strcmp(rc.id, cid->id) ||
	     strcmp(rc.ns, cid->ns) || strcmp(rc.pod_uid, cid->pod_uid)))
		err = fail(why, n, -ESRCH, "its \"cgroup\" is another container's (%s)",
			   container__runtime_name(rc.runtime));
	if (!err)
		err = get_str(obj, "name", out->name, sizeof(out->name), why, n);
	if (!err)
		err = get_str(obj, "image", out->image, sizeof(out->image), why, n);
	if (!err)
		err = get_object(obj, "pod", &pod, why, n);
	if (!err && pod)
		err = get_str(pod, "namespace", out->pod_namespace, sizeof(out->pod_namespace), why, n);
	if (!err && pod)
		err = get_str(pod, "name", out->pod_name, sizeof(out->pod_name), why, n);
	if (!err && pod)
		err = get_str(pod, "uid", out->pod_uid, sizeof(out->pod_uid), why, n);
	json_object_put(obj);
	if (err)
		memset(out, 0, sizeof(*out));
	else
		out->have = true;
	return err;
}

int container_meta__parse_docker(const char *buf, size_t len,
				 struct container_meta *out, char *why, size_t n)
{
	/* Docker's Name is "/" + the name, at most CONTAINER_NAME_MAX after it. */
	char name[CONTAINER_NAME_MAX + 2];
	json_object *obj, *cfg, *labels = NULL;
	int err;

	memset(out, 0, sizeof(*out));
	err = parse_object(buf, len, &obj, why, n);
	if (err)
		return err;
	err = get_str(obj, "Name", name, sizeof(name), why, n);
	if (!err)
		err = get_object(obj, "Config", &cfg, why, n);
	if (!err && cfg)
		err = get_str(cfg, "Image", out->image, sizeof(out->image), why, n);
	if (!err && cfg)
		err = get_object(cfg, "Labels", &labels, why, n);
	/* Kubelet's labels only where kubelet made the container: under
	 * cri-dockerd Name is k8s_<container>_<pod>_..., and the label's
	 * container name, the pod spec's, is the name. On plain docker a
	 * label is whatever `docker run --label` said: it must not rename
	 * the container (nor put it in a pod) against docker's own Name. */
	if (!err && labels && !strncmp(name[0] == '/' ? name + 1 : name, "k8s_", 4))
		err = apply_map(labels, out, F_ALL & ~F_BIT(F_IMAGE), why, n);
	if (!err && !out->name[0]) {
		const char *s = name[0] == '/' ? name + 1 : name;

		if (strlen(s) > CONTAINER_NAME_MAX)
			err = fail(why, n, -ENAMETOOLONG, "\"%s\" is longer than allowed: refused, not truncated", "Name");
		else
			memcpy(out->name, s, strlen(s) + 1);
	}
	json_object_put(obj);
	if (err)
		memset(out, 0, sizeof(*out));
	else
		out->have = true;
	return err;
}

int container_meta__parse_config(const char *buf, size_t len,
				 struct container_meta *out, char *why, size_t n)
{
	json_object *obj, *ann;
	int err;

	memset(out, 0, sizeof(*out));
	err = parse_object(buf, len, &obj, why, n);
	if (err)
		return err;
	err = get_object(obj, "annotations", &ann, why, n);
	if (!err && ann)
		err = apply_map(ann, out, F_ALL, why, n);
	json_object_put(obj);
	if (err)
		memset(out, 0, sizeof(*out));
	else
		out->have = true;
	return err;
}

int container_meta__parse_state(const char *buf, size_t len,
				struct oci_state *out, char *why, size_t n)
{
	char version[64];
	json_object *obj, *v, *ann;
	int err;

	memset(out, 0, sizeof(*out));
	err = parse_object(buf, len, &obj, why, n);
	if (err)
		return err;
	if (!json_object_object_get_ex(obj, "ociVersion", &v))
		err = fail(why, n, -EINVAL, "no \"%s\": not an OCI state", "ociVersion");
	else
		err = take_str(v, "ociVersion", version, sizeof(version), why, n);
	if (!err && !json_object_object_get_ex(obj, "id", &v))
		err = fail(why, n, -EINVAL, "no \"%s\": not an OCI state", "id");
	else if (!err)
		err = take_str(v, "id", out->id, sizeof(out->id), why, n);
	if (!err && !container_meta__id_ok(out->id))
		err = fail(why, n, -EINVAL, "\"id\" %s cannot name a file (empty, '/', a leading '.')", out->id);
	if (!err)
		err = get_str(obj, "status", out->status, sizeof(out->status), why, n);
	if (!err && json_object_object_get_ex(obj, "pid", &v)) {
		int64_t pid = json_object_get_int64(v);

		/* pid_max is at most 2^22: anything else is not a process. */
		if (!json_object_is_type(v, json_type_int) || pid < 0 || pid > (1 << 22))
			err = fail(why, n, -EINVAL, "\"%s\" is not a process id", "pid");
		else
			out->pid = (int)pid;
	}
	if (!err)
		err = get_str(obj, "bundle", out->bundle, sizeof(out->bundle), why, n);
	if (!err && out->bundle[0] && out->bundle[0] != '/')
		err = fail(why, n, -EINVAL, "\"bundle\" %s is not an absolute path", out->bundle);
	if (!err)
		err = get_object(obj, "annotations", &ann, why, n);
	if (!err && ann) {
		out->have_annotations = json_object_object_length(ann) > 0;
		err = apply_map(ann, &out->meta, F_ALL, why, n);
	}
	json_object_put(obj);
	if (err)
		memset(out, 0, sizeof(*out));
	else
		out->meta.have = out->have_annotations;
	return err;
}

/* The whole of fd into a NUL-terminated heap buffer, at most
 * CONTAINER_META_FILE_MAX bytes. A regular file's size is checked twice:
 * one that grows after fstat() is still cut off at the cap, and refused.
 * A pipe (the hook's stdin) has no size to ask first; anything else (a
 * FIFO put in place of a file, a device such as /dev/zero) would block or
 * never end, and is refused unless pipe_ok. */
int container_meta__read_fd(int fd, bool pipe_ok, char **buf, size_t *len)
{
	size_t cap, got = 0;
	struct stat st;
	char *b, *nb;
	ssize_t r;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode) && !(pipe_ok && S_ISFIFO(st.st_mode)))
		return -EINVAL;
	if (S_ISREG(st.st_mode) && (unsigned long long)st.st_size > CONTAINER_META_FILE_MAX)
		return -EFBIG;
	cap = S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : 4096;
	b = malloc(cap + 1);
	if (!b)
		return -ENOMEM;
	for (;;) {
		r = read(fd, b + got, cap - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(b);
			return -errno;
		}
		if (!r)
			break;
		got += (size_t)r;
		if (got > CONTAINER_META_FILE_MAX) {
			free(b);
			return -EFBIG;
		}
		if (got == cap) {
			cap = cap * 2 > CONTAINER_META_FILE_MAX + 1 ? CONTAINER_META_FILE_MAX + 1 : cap * 2;
			nb = realloc(b, cap + 1);
			if (!nb) {
				free(b);
				return -ENOMEM;
			}
			b = nb;
		}
	}
	b[got] = '\0';
	*buf = b;
	*len = got;
	return 0;
}

/* O_NONBLOCK: opening a FIFO put in place of the file must not wait for a
 * writer; read_fd() refuses it after. */
#define OPEN_FILE	(O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)

int container_meta__read_file(const char *path, char **buf, size_t *len)
{
	int fd, err;

	fd = open(path, OPEN_FILE);
	if (fd < 0)
		return -errno;
	err = container_meta__read_fd(fd, false, buf, len);
	close(fd);
	return err;
}

/*
 * base (the runtime's state directory: the host's admin chose it, so a
 * symlink there, /var/lib/docker -> /data/docker, is followed), then each
 * of comp[] with O_NOFOLLOW. Below base, the directories are per
 * container and hold what the container's creator shaped (containerd's
 * bundle holds the rootfs mount; a bind mount of the host can reach
 * them): a symlink at any component could send the reader to another
 * container's file, or to one that never ends, so none is followed.
 */
static int read_below(const char *root, const char *base, const char *const *comp,
		      size_t n, char **buf, size_t *len, char *path, size_t path_len)
{
	int fd, nfd, err;
	size_t i, off;

	off = (size_t)snprintf(path, path_len, "%s%s", root, base);
	if (off >= path_len)
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (i = 0; fd >= 0 && i < n; i++) {
		off += (size_t)snprintf(path + off, path_len - off, "/%s", comp[i]);
		if (off >= path_len) {
			close(fd);
			return -ENAMETOOLONG;
		}
		nfd = openat(fd, comp[i], i + 1 < n ? O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC : OPEN_FILE);
		err = errno;
		/* O_DIRECTORY|O_NOFOLLOW on a symlink says ENOTDIR, which
		 * would read as "no such container" and pass the id on to the
		 * next source: a symlink is an error, as it is for the file. */
		if (nfd < 0 && err == ENOTDIR) {
			struct stat st;

			if (!fstatat(fd, comp[i], &st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st.st_mode))
				err = ELOOP;
		}
		close(fd);
		fd = nfd;
		errno = err;
	}
	if (fd < 0)
		return -errno;
	err = container_meta__read_fd(fd, false, buf, len);
	close(fd);
	return err;
}

enum src_kind { SRC_HOOK, SRC_DOCKER, SRC_CONTAINERD, SRC_STORAGE };

/* One source: 0 and *out filled, -ENOENT when it has no file for id, or
 * the error. A directory or file that is missing anywhere on the way is
 * -ENOENT (ENOTDIR too: a file where a runtime would have a directory). */
static int try_source(const struct container_sources *src, enum src_kind kind,
		      const char *base, const char *ns, const struct container_id *cid,
		      struct container_meta *out, char *why, size_t n)
{
	char path[4096], file[CONTAINER_ID_MAX + 8], perr[256];
	const char *comp[3];
	size_t nc = 0;
	const char *id = cid->id;
	char *buf = NULL;
	size_t len = 0;
	int err;

	switch (kind) {
	case SRC_HOOK:
		snprintf(file, sizeof(file), "%s.json", id);
		comp[nc++] = file;
		break;
	case SRC_DOCKER:
		comp[nc++] = id;
		comp[nc++] = "config.v2.json";
		break;
	case SRC_CONTAINERD:
		comp[nc++] = ns;
		comp[nc++] = id;
		comp[nc++] = "config.json";
		break;
	case SRC_STORAGE:
		comp[nc++] = id;
		comp[nc++] = "userdata";
		comp[nc++] = "config.json";
		break;
	}
	err = read_below(src->root ? src->root : "", base, comp, nc, &buf, &len, path, sizeof(path));
	if (err == -ENOENT || err == -ENOTDIR)
		return -ENOENT;
	if (err) {
		if (why && n)
			snprintf(why, n, "%s: %s%s", path, strerror(-err),
				 err == -ELOOP ? " (a symlink: not followed below the runtime's directory)" :
				 err == -EFBIG ? " (larger than 1 MiB)" :
				 err == -EINVAL ? " (not a regular file)" : "");
		return err;
	}
	perr[0] = '\0';
	if (kind == SRC_HOOK)
		err = parse_record_of(buf, len, id, cid, out, perr, sizeof(perr));
	else if (kind == SRC_DOCKER)
		err = container_meta__parse_docker(buf, len, out, perr, sizeof(perr));
	else
		err = container_meta__parse_config(buf, len, out, perr, sizeof(perr));
	free(buf);
	if (err && why && n)
		snprintf(why, n, "%s: %s", path, perr);
	return err;
}

#define DOCKER_DIR	"/var/lib/docker/containers"
#define CONTAINERD_DIR	"/run/containerd/io.containerd.runtime.v2.task"
#define STORAGE_RUN	"/run/containers/storage/overlay-containers"
#define STORAGE_LIB	"/var/lib/containers/storage/overlay-containers"

static bool meta_complete(const struct container_meta *m)
{
	return m->name[0] && m->image[0] && m->pod_namespace[0] && m->pod_name[0] &&
	       m->pod_uid[0];
}

/* Each field of into that is empty, from from. */
static void merge_empty(struct container_meta *into, const struct container_meta *from)
{
#define FILL(f) do { if (!into->f[0]) memcpy(into->f, from->f, sizeof(into->f)); } while (0)
	FILL(name);
	FILL(image);
	/* A pod whole, from one source: never one's namespace with
	 * another's name. */
	if (!into->pod_namespace[0] && !into->pod_name[0] && !into->pod_uid[0]) {
		FILL(pod_namespace);
		FILL(pod_name);
		FILL(pod_uid);
	}
#undef FILL
}

static int load_runtime(const struct container_sources *src,
			const struct container_id *cid,
			struct container_meta *out, char *why, size_t n);

int container_meta__load_why(const struct container_sources *src,
			     const struct container_id *cid,
			     struct container_meta *out, char *why, size_t n)
{
	const char *hook_dir = src->hook_dir ? src->hook_dir : CONTAINER_HOOK_DIR_DEFAULT;
	struct container_meta hook;
	bool hook_found;
	int err;

	memset(out, 0, sizeof(*out));
	if (why && n)
		why[0] = '\0';
	if (!container_meta__id_ok(cid->id))
		return fail(why, n, -EINVAL, "container id %s cannot name a file (empty, '/', a leading '.', too long)",
			    cid->id);
	err = try_source(src, SRC_HOOK, hook_dir, NULL, cid, out, why, n);
	if (err == -ESRCH) {
		/* Another runtime's container with the same id. */
		memset(out, 0, sizeof(*out));
		err = -ENOENT;
	}
	if (err != -ENOENT && err)
		return err;
	if (!err && meta_complete(out))
		return 0;
	/* No record, or one the runtime's annotations left fields of empty
	 * (a docker container's hook sees no name): the runtime's own state
	 * fills them. A field the record has is never overwritten. */
	hook = *out;
	hook_found = !err;
	err = load_runtime(src, cid, out, why, n);
	if (hook_found && (err == 0 || err == -ENOENT)) {
		merge_empty(&hook, out);
		*out = hook;
		return 0;
	}
	return err;
}

/* The runtime's own files, in the order of container_meta__load_why(). */
static int load_runtime(const struct container_sources *src,
			const struct container_id *cid,
			struct container_meta *out, char *why, size_t n)
{
	static const char *const namespaces[] = { "k8s.io", "moby", "default" };
	enum container_runtime rt = cid->runtime;
	int err;
	size_t i;

	memset(out, 0, sizeof(*out));
	/*
	 * The cgroup's path names the runtime: only its own files are read.
	 * Ids are unique within a runtime, not across them, and some let the
	 * caller choose one (`ctr run IMAGE ID`): a containerd task given a
	 * CRI-O container's id must not name that container.
	 */
	if (rt == CONTAINER_NONE || rt == CONTAINER_DOCKER) {
		err = try_source(src, SRC_DOCKER, DOCKER_DIR, NULL, cid, out, why, n);
		if (err != -ENOENT)
			return err;
	}
	if (rt == CONTAINER_NONE || rt == CONTAINER_CONTAINERD || rt == CONTAINER_DOCKER) {
		/* dockerd runs its containers as containerd tasks in "moby". */
		if (rt == CONTAINER_CONTAINERD && cid->ns[0]) {
			if (!container_meta__id_ok(cid->ns))
				return fail(why, n, -EINVAL, "containerd namespace %s cannot name a directory", cid->ns);
			err = try_source(src, SRC_CONTAINERD, CONTAINERD_DIR, cid->ns, cid, out, why, n);
			if (err != -ENOENT)
				return err;
		} else {
			for (i = 0; i < ARRAY_SIZE(namespaces); i++) {
				if (rt == CONTAINER_DOCKER && strcmp(namespaces[i], "moby"))
					continue;
				err = try_source(src, SRC_CONTAINERD, CONTAINERD_DIR, namespaces[i], cid,
						 out, why, n);
				if (err != -ENOENT)
					return err;
			}
		}
	}
	if (rt == CONTAINER_NONE || rt == CONTAINER_CRIO || rt == CONTAINER_PODMAN) {
		err = try_source(src, SRC_STORAGE, STORAGE_RUN, NULL, cid, out, why, n);
		if (err != -ENOENT)
			return err;
		err = try_source(src, SRC_STORAGE, STORAGE_LIB, NULL, cid, out, why, n);
		if (err != -ENOENT)
			return err;
	}
	return fail(why, n, -ENOENT, "no runtime's state names container %s", cid->id);
}

int container_meta__load(const struct container_sources *src,
			 const struct container_id *cid, struct container_meta *out)
{
	return container_meta__load_why(src, cid, out, NULL, 0);
}
