// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `stockade oci-hook` (agent/oci_hook.h). The runtime runs it once per
 * container start, so it stays small: read the state, read the cgroup,
 * write one file. It never takes the container down for a failure of its
 * own (a read-only /run, a full disk): those are warnings, exit 0, and
 * the agent's reader falls back to the runtime's own files. Only input
 * that is not a valid state fails, and then the runtime refuses to start
 * the container: the safe direction, since a hook handed garbage cannot
 * say what it is starting.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "container_meta.h"
#include "json.h"
#include "oci_hook.h"

#define PFX	"stockade: oci-hook: "

/* The cgroup2 path of pid (the "0::" line of /proc/<pid>/cgroup) into
 * out[n]: 0, -ENOENT on a cgroup v1-only host, or the read's error. */
static int read_cgroup(const char *proc, int pid, char *out, size_t n)
{
	char path[256], *buf, *line, *end;
	size_t len;
	int err;

	snprintf(path, sizeof(path), "%s/%d/cgroup", proc, pid);
	err = container_meta__read_file(path, &buf, &len);
	if (err)
		return err;
	err = -ENOENT;
	for (line = buf; line && *line; line = end ? end + 1 : NULL) {
		end = strchr(line, '\n');
		if (end)
			*end = '\0';
		if (strncmp(line, "0::", 3))
			continue;
		/* The kernel's own text, but a cgroup's name is its creator's:
		 * bounded like every other value. */
		if (strlen(line + 3) >= n) {
			err = -ENAMETOOLONG;
			break;
		}
		memcpy(out, line + 3, strlen(line + 3) + 1);
		err = 0;
		break;
	}
	free(buf);
	return err;
}

/* mkdir -p dir, 0755 for each directory it makes. */
static int make_dir(const char *dir)
{
	char p[4096];
	size_t i, len = strlen(dir);

	if (len >= sizeof(p))
		return -ENAMETOOLONG;
	memcpy(p, dir, len + 1);
	for (i = 1; i <= len; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		p[i] = '\0';
		if (mkdir(p, 0755) && errno != EEXIST)
			return -errno;
		p[i] = dir[i];
	}
	return 0;
}

/* data into dir/name by a temporary file and rename(): a reader sees the
 * old record or the new one, never half of one. The temporary's name
 * starts with '.', which no container id may (container_meta__id_ok), so
 * the reader never takes one for a record. */
static int write_atomic(const char *dir, const char *name, const char *data, size_t len)
{
	char tmp[4096], dst[4096];
	size_t off = 0;
	ssize_t w;
	int fd, err = 0;

	if ((size_t)snprintf(dst, sizeof(dst), "%s/%s", dir, name) >= sizeof(dst) ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dir, name) >= sizeof(tmp))
		return -ENAMETOOLONG;
	err = make_dir(dir);
	if (err)
		return err;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* mkostemp makes it 0600; the record is no secret, and readers other
	 * than root (a node's monitoring) may name containers with it. */
	if (fchmod(fd, 0644))
		err = -errno;
	while (!err && off < len) {
		w = write(fd, data + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			err = -errno;
		else
			off += (size_t)w;
	}
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, dst))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

static void rfc3339_now(char *out, size_t n)
{
	struct timespec ts;
	struct tm tm;
	size_t k;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	k = strftime(out, n, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + k, n - k, ".%09ldZ", ts.tv_nsec);
}

/* The record: one JSON object, a field named once (README "Container
 * names" lists them). */
static int build_record(struct json *j, const struct oci_state *st,
			const struct container_meta *m, const char *cgroup)
{
	struct json pod;
	char created[64], *lit;

	json_init(&pod);
	json_begin(&pod);
	json_str(&pod, "namespace", m->pod_namespace);
	json_str(&pod, "name", m->pod_name);
	json_str(&pod, "uid", m->pod_uid);
	if (pod.oom || asprintf(&lit, "%s}", pod.buf) < 0) {
		json_free(&pod);
		return -ENOMEM;
	}
	json_free(&pod);
	rfc3339_now(created, sizeof(created));
	json_begin(j);
	json_str(j, "id", st->id);
	json_str(j, "name", m->name);
	json_str(j, "image", m->image);
	json_raw(j, "pod", lit);
	json_str(j, "cgroup", cgroup);
	json_str(j, "bundle", st->bundle);
	json_i64(j, "pid", st->pid);
	json_str(j, "created", created);
	json_end(j);
	free(lit);
	return j->oom ? -ENOMEM : 0;
}

int oci_hook__run(const struct oci_hook_opts *o, int in_fd)
{
	const char *dir = o->dir ? o->dir : CONTAINER_HOOK_DIR_DEFAULT;
	char why[512], name[CONTAINER_ID_MAX + 8], cgroup[4096] = "";
	struct container_meta meta;
	struct oci_state st;
	struct json j;
	char *buf = NULL;
	size_t len;
	int err;

	err = container_meta__read_fd(in_fd, true, &buf, &len);
	if (err) {
		fprintf(stderr, PFX "error: reading the OCI state from stdin: %s; run it as an OCI hook, which writes the state (at most 1 MiB) to its stdin\n",
			strerror(-err));
		return 1;
	}
	err = container_meta__parse_state(buf, len, &st, why, sizeof(why));
	free(buf);
	if (err) {
		fprintf(stderr, PFX "error: stdin is not a valid OCI state: %s; run it as an OCI hook (createRuntime, prestart or poststop), which passes the state on stdin\n",
			why);
		return 1;
	}
	snprintf(name, sizeof(name), "%s.json", st.id);
	if (o->remove) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/%s", dir, name);
		if (unlink(path) && errno != ENOENT)
			fprintf(stderr, PFX "warning: removing %s: %s; remove it by hand (a stale record names only a container of the same id)\n",
				path, strerror(errno));
		return 0;
	}
	if (!st.pid) {
		fprintf(stderr, PFX "error: the OCI state of %s has no pid; use the hook in createRuntime, createContainer or prestart (--remove in poststop)\n",
			st.id);
		return 1;
	}
	meta = st.meta;
	/* runc and crun copy the config's annotations into the state; a
	 * runtime that does not still has them in the bundle. */
	if (!st.have_annotations && st.bundle[0]) {
		char path[CONTAINER_BUNDLE_MAX + 16];

		snprintf(path, sizeof(path), "%s/config.json", st.bundle);
		err = container_meta__read_file(path, &buf, &len);
		if (err) {
			fprintf(stderr, PFX "warning: reading %s: %s; the record of %s has no names\n",
				path, strerror(-err), st.id);
		} else {
			err = container_meta__parse_config(buf, len, &meta, why, sizeof(why));
			free(buf);
			if (err) {
				fprintf(stderr, PFX "error: %s: %s; fix the container's annotations\n", path, why);
				return 1;
			}
		}
	}
	err = read_cgroup(o->proc ? o->proc : "/proc", st.pid, cgroup, sizeof(cgroup));
	if (err)
		fprintf(stderr, PFX "warning: the cgroup2 path of pid %d: %s%s; the record of %s has none\n",
			st.pid, strerror(-err), err == -ENOENT ? " (no 0:: line: a cgroup v1-only host)" : "",
			st.id);
	json_init(&j);
	err = build_record(&j, &st, &meta, cgroup);
	if (!err)
		err = write_atomic(dir, name, j.buf, j.len);
	json_free(&j);
	if (err)
		fprintf(stderr, PFX "warning: writing %s/%s: %s; the container starts without a record (its names come from the runtime's files, where it has them); check that %s is writable by the runtime's user\n",
			dir, name, strerror(-err), dir);
	return 0;
}

int oci_hook__main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "remove", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct oci_hook_opts o = { .dir = CONTAINER_HOOK_DIR_DEFAULT, .proc = "/proc" };
	int c;

	optind = 0;	/* a fresh scan, whatever parsed argv before */
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			o.dir = optarg;
			break;
		case 'r':
			o.remove = true;
			break;
		case 'h':
			printf("usage: stockade oci-hook [--dir DIR] [--remove]\n"
			       "  an OCI hook: reads the state on stdin, writes DIR/<id>.json\n"
			       "  (default " CONTAINER_HOOK_DIR_DEFAULT "); --remove (poststop) deletes it\n");
			return 0;
		default:
			fprintf(stderr, PFX "error: usage: stockade oci-hook [--dir DIR] [--remove]\n");
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, PFX "error: unexpected argument '%s'; the state comes on stdin\n", argv[optind]);
		return 2;
	}
	return oci_hook__run(&o, STDIN_FILENO);
}
