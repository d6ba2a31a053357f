// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * agent/container_meta.c and agent/oci_hook.c on a fixture tree in a
 * temporary directory (struct container_sources.root): each source, their
 * precedence and the runtime filter, a missing id, ids that would leave
 * the runtime's directory, symlinks and a FIFO in a container's
 * directory, an oversized file, files that are not JSON, over-long and
 * control-character values, disagreeing keys; then the hook itself, fed
 * a state on a pipe with this process's pid, and its record read back.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "container_meta.h"
#include "oci_hook.h"

static char root[256];

/* root + rel, parents made; content written as is. */
static bool put_file(const char *rel, const char *content, size_t len)
{
	char path[1024], *s;
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", root, rel);
	for (s = path + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		if (mkdir(path, 0755) && errno != EEXIST)
			return false;
		*s = '/';
	}
	f = fopen(path, "w");
	if (!f)
		return false;
	if (fwrite(content, 1, len, f) != len) {
		fclose(f);
		return false;
	}
	return fclose(f) == 0;
}

#define PUT(rel, s)	assert_true(put_file((rel), (s), strlen(s)))

static void rm_tree(const char *dir)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		print_error("could not remove %s\n", dir);
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "%s/stockade-meta-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	rm_tree(root);
	return 0;
}

static const struct container_sources *src(void)
{
	static struct container_sources s;

	s.root = root;
	s.hook_dir = "/run/stockade/containers";
	return &s;
}

static struct container_id cid_of(enum container_runtime rt, const char *id, const char *ns)
{
	struct container_id c;

	memset(&c, 0, sizeof(c));
	c.runtime = rt;
	snprintf(c.id, sizeof(c.id), "%s", id);
	snprintf(c.ns, sizeof(c.ns), "%s", ns);
	return c;
}

static int load(enum container_runtime rt, const char *id, const char *ns, struct container_meta *m)
{
	struct container_id c = cid_of(rt, id, ns);
	char why[512];
	int err;

	err = container_meta__load_why(src(), &c, m, why, sizeof(why));
	if (err && err != -ENOENT)
		print_message("  (%s: %s)\n", id, why);
	if (err && !EXPECT(!m->have && !m->name[0]))
		print_error("  an error left have or a name set\n");
	return err;
}

#define DOCKER	"/var/lib/docker/containers/"
#define TASKS	"/run/containerd/io.containerd.runtime.v2.task/"
#define RUNST	"/run/containers/storage/overlay-containers/"
#define LIBST	"/var/lib/containers/storage/overlay-containers/"
#define HOOK	"/run/stockade/containers/"

static void test_sources(void **state)
{
	struct container_meta m;

	(void)state;
	PUT(HOOK "h1.json", "{\"id\":\"h1\",\"name\":\"web\",\"image\":\"nginx:1.25\","
	    "\"pod\":{\"namespace\":\"prod\",\"name\":\"web-0\",\"uid\":\"0b9c5e5a-8d1f-4b8e-9f6e-1d2c3b4a5f60\"},"
	    "\"cgroup\":\"/x\",\"bundle\":\"/b\",\"pid\":7,\"created\":\"2026-12-02T00:00:00Z\"}\n");
	if (EXPECT_EQ(load(CONTAINER_NONE, "h1", "", &m), 0)) {
		EXPECT(m.have);
		EXPECT_STR(m.name, "web");
		EXPECT_STR(m.image, "nginx:1.25");
		EXPECT_STR(m.pod_namespace, "prod");
		EXPECT_STR(m.pod_name, "web-0");
		EXPECT_STR(m.pod_uid, "0b9c5e5a-8d1f-4b8e-9f6e-1d2c3b4a5f60");
	}

	/* docker: Name without its '/', Config.Image; a plain container. */
	PUT(DOCKER "d1/config.v2.json", "{\"Name\":\"/db\",\"Config\":{\"Image\":\"postgres:16\",\"Labels\":null}}");
	if (EXPECT_EQ(load(CONTAINER_DOCKER, "d1", "", &m), 0)) {
		EXPECT_STR(m.name, "db");
		EXPECT_STR(m.image, "postgres:16");
		EXPECT_STR(m.pod_name, "");
	}
	/* cri-dockerd: kubelet's labels name the container and its pod;
	 * docker's own Name (k8s_...) yields to the label's name. */
	PUT(DOCKER "d2/config.v2.json",
	    "{\"Name\":\"/k8s_app_web-0_prod_uid_0\",\"Config\":{\"Image\":\"app:2\",\"Labels\":{"
	    "\"io.kubernetes.container.name\":\"app\",\"io.kubernetes.pod.name\":\"web-0\","
	    "\"io.kubernetes.pod.namespace\":\"prod\",\"io.kubernetes.pod.uid\":\"u-1\","
	    "\"io.kubernetes.cri.image-name\":\"not-the-image\",\"other\":\"x\"}}}");
	if (EXPECT_EQ(load(CONTAINER_DOCKER, "d2", "", &m), 0)) {
		EXPECT_STR(m.name, "app");
		EXPECT_STR(m.image, "app:2");
		EXPECT_STR(m.pod_name, "web-0");
		EXPECT_STR(m.pod_namespace, "prod");
		EXPECT_STR(m.pod_uid, "u-1");
	}

	/* Plain docker: `docker run --label io.kubernetes.*` is the
	 * creator's say, and renames nothing: docker's Name stands, and no
	 * pod is made up. */
	PUT(DOCKER "d3/config.v2.json",
	    "{\"Name\":\"/db\",\"Config\":{\"Image\":\"postgres:16\",\"Labels\":{"
	    "\"io.kubernetes.container.name\":\"web-1\",\"io.kubernetes.pod.name\":\"web-0\","
	    "\"io.kubernetes.pod.namespace\":\"prod\"}}}");
	if (EXPECT_EQ(load(CONTAINER_DOCKER, "d3", "", &m), 0)) {
		EXPECT_STR(m.name, "db");
		EXPECT_STR(m.pod_name, "");
		EXPECT_STR(m.pod_namespace, "");
	}

	/* containerd's CRI plugin, in k8s.io. */
	PUT(TASKS "k8s.io/c1/config.json",
	    "{\"ociVersion\":\"1.1.0\",\"annotations\":{"
	    "\"io.kubernetes.cri.container-type\":\"container\","
	    "\"io.kubernetes.cri.container-name\":\"sidecar\","
	    "\"io.kubernetes.cri.image-name\":\"registry.k8s.io/pause:3.9\","
	    "\"io.kubernetes.cri.sandbox-name\":\"job-7\","
	    "\"io.kubernetes.cri.sandbox-namespace\":\"batch\","
	    "\"io.kubernetes.cri.sandbox-uid\":\"u-2\","
	    "\"org.opencontainers.image.ref.name\":\"3.9\"}}");
	if (EXPECT_EQ(load(CONTAINER_CONTAINERD, "c1", "", &m), 0)) {
		EXPECT_STR(m.name, "sidecar");
		EXPECT_STR(m.image, "registry.k8s.io/pause:3.9");
		EXPECT_STR(m.pod_name, "job-7");
		EXPECT_STR(m.pod_namespace, "batch");
		EXPECT_STR(m.pod_uid, "u-2");
	}
	/* nerdctl in its own namespace, named by the cgroup's path. */
	PUT(TASKS "team/n1/config.json", "{\"annotations\":{\"nerdctl/name\":\"builder\"}}");
	if (EXPECT_EQ(load(CONTAINER_CONTAINERD, "n1", "team", &m), 0))
		EXPECT_STR(m.name, "builder");
	/* ... and not found in another namespace than the one named. */
	EXPECT_EQ(load(CONTAINER_CONTAINERD, "n1", "default", &m), -ENOENT);
	/* A bundle without annotations: found, no names. */
	PUT(TASKS "default/c2/config.json", "{\"ociVersion\":\"1.1.0\"}");
	if (EXPECT_EQ(load(CONTAINER_NONE, "c2", "", &m), 0)) {
		EXPECT(m.have);
		EXPECT_STR(m.name, "");
	}

	/* CRI-O (in /run) and podman (in /var/lib). */
	PUT(RUNST "o1/userdata/config.json",
	    "{\"annotations\":{\"io.kubernetes.container.name\":\"api\","
	    "\"io.kubernetes.cri-o.ContainerName\":\"k8s_api_front-1_web_u-3_0\","
	    "\"io.kubernetes.cri-o.ImageName\":\"quay.io/org/api:7\","
	    "\"io.kubernetes.pod.name\":\"front-1\",\"io.kubernetes.pod.namespace\":\"web\","
	    "\"io.kubernetes.pod.uid\":\"u-3\"}}");
	if (EXPECT_EQ(load(CONTAINER_CRIO, "o1", "", &m), 0)) {
		EXPECT_STR(m.name, "api");
		EXPECT_STR(m.image, "quay.io/org/api:7");
		EXPECT_STR(m.pod_name, "front-1");
		EXPECT_STR(m.pod_namespace, "web");
		EXPECT_STR(m.pod_uid, "u-3");
	}
	PUT(LIBST "p1/userdata/config.json", "{\"annotations\":{\"io.container.manager\":\"libpod\"}}");
	if (EXPECT_EQ(load(CONTAINER_PODMAN, "p1", "", &m), 0)) {
		EXPECT(m.have);
		EXPECT_STR(m.name, "");
	}
	DONE();
}

static void test_precedence(void **state)
{
	struct container_meta m;

	(void)state;
	/* The hook's record first, whatever else names the id. */
	PUT(HOOK "x1.json", "{\"id\":\"x1\",\"name\":\"from-hook\"}");
	PUT(DOCKER "x1/config.v2.json", "{\"Name\":\"/from-docker\"}");
	PUT(TASKS "moby/x1/config.json", "{\"annotations\":{\"nerdctl/name\":\"from-task\"}}");
	if (EXPECT_EQ(load(CONTAINER_DOCKER, "x1", "", &m), 0))
		EXPECT_STR(m.name, "from-hook");
	/* Docker before its containerd task. */
	PUT(DOCKER "x2/config.v2.json", "{\"Name\":\"/from-docker\"}");
	PUT(TASKS "moby/x2/config.json", "{\"annotations\":{\"nerdctl/name\":\"from-task\"}}");
	if (EXPECT_EQ(load(CONTAINER_NONE, "x2", "", &m), 0))
		EXPECT_STR(m.name, "from-docker");
	/* k8s.io before moby before default when no namespace is named. */
	PUT(TASKS "default/x3/config.json", "{\"annotations\":{\"nerdctl/name\":\"default\"}}");
	PUT(TASKS "k8s.io/x3/config.json", "{\"annotations\":{\"nerdctl/name\":\"k8s\"}}");
	if (EXPECT_EQ(load(CONTAINER_CONTAINERD, "x3", "", &m), 0))
		EXPECT_STR(m.name, "k8s");
	/* The runtime the cgroup names: a CRI-O container's id given to a
	 * containerd task (ctr run IMAGE ID) or a docker directory does not
	 * name the CRI-O container. */
	PUT(TASKS "default/x4/config.json", "{\"annotations\":{\"nerdctl/name\":\"impostor\"}}");
	PUT(DOCKER "x4/config.v2.json", "{\"Name\":\"/impostor\"}");
	EXPECT_EQ(load(CONTAINER_CRIO, "x4", "", &m), -ENOENT);
	PUT(RUNST "x4/userdata/config.json", "{\"annotations\":{\"io.kubernetes.container.name\":\"real\"}}");
	if (EXPECT_EQ(load(CONTAINER_CRIO, "x4", "", &m), 0))
		EXPECT_STR(m.name, "real");
	/* /run before /var/lib for containers/storage. */
	PUT(LIBST "x4/userdata/config.json", "{\"annotations\":{\"io.kubernetes.container.name\":\"lib\"}}");
	if (EXPECT_EQ(load(CONTAINER_PODMAN, "x4", "", &m), 0))
		EXPECT_STR(m.name, "real");
	/* A hook record with fields left empty (docker hands its hooks no
	 * name annotation): the runtime's own state fills them, and never
	 * overwrites one the record has. A pod comes whole from one. */
	PUT(HOOK "x6.json", "{\"id\":\"x6\",\"name\":\"\",\"image\":\"img:hook\"}");
	PUT(DOCKER "x6/config.v2.json", "{\"Name\":\"/from-docker\",\"Config\":{\"Image\":\"img:docker\"}}");
	if (EXPECT_EQ(load(CONTAINER_DOCKER, "x6", "", &m), 0)) {
		EXPECT_STR(m.name, "from-docker");
		EXPECT_STR(m.image, "img:hook");
	}
	/* Ids are unique within a runtime only: a record whose cgroup is a
	 * podman container's names no docker container of that id. */
	{
		char rec[512], id[65];

		memset(id, 'a', 64);
		id[64] = '\0';
		snprintf(rec, sizeof(rec), "{\"id\":\"%s\",\"name\":\"pm\",\"cgroup\":\"/machine.slice/libpod-%s.scope\"}", id, id);
		assert_true(put_file(HOOK "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.json", rec, strlen(rec)));
		if (EXPECT_EQ(load(CONTAINER_PODMAN, id, "", &m), 0))
			EXPECT_STR(m.name, "pm");
		EXPECT_EQ(load(CONTAINER_DOCKER, id, "", &m), -ENOENT);
		/* containerd: one id in two namespaces (ctr -n evil run ...
		 * ID): the record of evil's names no k8s.io container. A value
		 * it has that would be refused refuses nothing of the other. */
		snprintf(rec, sizeof(rec), "{\"id\":\"%s\",\"name\":\"ev\x01il\",\"cgroup\":\"/evil/%s\"}", id, id);
		assert_true(put_file(HOOK "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.json", rec, strlen(rec)));
		EXPECT_EQ(load(CONTAINER_CONTAINERD, id, "k8s.io", &m), -ENOENT);
		EXPECT_EQ(load(CONTAINER_CONTAINERD, id, "evil", &m), -EINVAL);
	}
	/* An error in the first source found stops the search: a broken
	 * record never hands the choice to a later source. */
	PUT(HOOK "x5.json", "{\"id\":\"x5\",\"name\":17}");
	PUT(DOCKER "x5/config.v2.json", "{\"Name\":\"/fallback\"}");
	EXPECT_EQ(load(CONTAINER_NONE, "x5", "", &m), -EINVAL);
	DONE();
}

static void test_missing_and_traversal(void **state)
{
	static const char *const bad[] = {
		"..", "../../etc/passwd", "a/b", ".hidden", "", "a\nb",
	};
	char longid[CONTAINER_ID_MAX + 2];
	struct container_meta m;
	size_t i;

	(void)state;
	EXPECT_EQ(load(CONTAINER_NONE, "nosuch", "", &m), -ENOENT);
	EXPECT(!m.have);
	/* A file where a runtime has a directory: not a source. */
	PUT("/var/lib/docker/containers/f1", "{}");
	EXPECT_EQ(load(CONTAINER_DOCKER, "f1", "", &m), -ENOENT);
	/* A record that sits under .json names: the target exists, so a
	 * traversal would find it. */
	PUT("/etc/passwd.json", "{\"id\":\"../../../etc/passwd\",\"name\":\"root\"}");
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		if (!EXPECT_EQ(load(CONTAINER_NONE, bad[i], "", &m), -EINVAL))
			print_error("  id '%s' accepted\n", bad[i]);
	memset(longid, 'a', CONTAINER_ID_MAX);
	longid[CONTAINER_ID_MAX] = '\0';
	EXPECT_EQ(load(CONTAINER_NONE, longid, "", &m), -ENOENT);
	/* container_id.id holds at most CONTAINER_ID_MAX: one more byte is
	 * only possible through the checker itself. */
	memset(longid, 'a', CONTAINER_ID_MAX + 1);
	longid[CONTAINER_ID_MAX + 1] = '\0';
	EXPECT(!container_meta__id_ok(longid));
	/* A containerd namespace from the cgroup path is a directory too. */
	EXPECT_EQ(load(CONTAINER_CONTAINERD, "n1", "..", &m), -EINVAL);
	DONE();
}

static void test_untrusted_files(void **state)
{
	char path[1024], target[1024], *big;
	size_t n = CONTAINER_META_FILE_MAX + 1;
	struct container_meta m;

	(void)state;
	/* A symlink for the container's directory, and for its file. */
	PUT("/elsewhere/config.v2.json", "{\"Name\":\"/victim\"}");
	snprintf(target, sizeof(target), "%s/elsewhere", root);
	snprintf(path, sizeof(path), "%s" DOCKER "s1", root);
	assert_int_equal(symlink(target, path), 0);
	EXPECT_EQ(load(CONTAINER_DOCKER, "s1", "", &m), -ELOOP);
	PUT(RUNST "s2/userdata/keep", "");
	snprintf(target, sizeof(target), "%s/elsewhere/config.v2.json", root);
	snprintf(path, sizeof(path), "%s" RUNST "s2/userdata/config.json", root);
	assert_int_equal(symlink(target, path), 0);
	EXPECT_EQ(load(CONTAINER_CRIO, "s2", "", &m), -ELOOP);
	/* A FIFO: refused at once, not waited on. */
	PUT(RUNST "s3/userdata/keep", "");
	snprintf(path, sizeof(path), "%s" RUNST "s3/userdata/config.json", root);
	assert_int_equal(mkfifo(path, 0644), 0);
	EXPECT_EQ(load(CONTAINER_CRIO, "s3", "", &m), -EINVAL);

	/* One byte over the cap, valid JSON but for its size. */
	big = malloc(n);
	assert_non_null(big);
	memset(big, ' ', n);
	memcpy(big, "{}", 2);
	assert_true(put_file(DOCKER "b1/config.v2.json", big, n));
	EXPECT_EQ(load(CONTAINER_DOCKER, "b1", "", &m), -EFBIG);
	/* At the cap: read. */
	assert_true(put_file(DOCKER "b2/config.v2.json", big, n - 1));
	EXPECT_EQ(load(CONTAINER_DOCKER, "b2", "", &m), 0);
	free(big);

	/* Not JSON, not all of it, not an object, more after it. */
	PUT(DOCKER "j1/config.v2.json", "Name: db\n");
	EXPECT_EQ(load(CONTAINER_DOCKER, "j1", "", &m), -EINVAL);
	PUT(DOCKER "j2/config.v2.json", "{\"Name\":\"/db\"");
	EXPECT_EQ(load(CONTAINER_DOCKER, "j2", "", &m), -EINVAL);
	PUT(DOCKER "j3/config.v2.json", "[\"/db\"]");
	EXPECT_EQ(load(CONTAINER_DOCKER, "j3", "", &m), -EINVAL);
	PUT(DOCKER "j4/config.v2.json", "{\"Name\":\"/db\"} {\"Name\":\"/other\"}");
	EXPECT_EQ(load(CONTAINER_DOCKER, "j4", "", &m), -EINVAL);
	PUT(DOCKER "j5/config.v2.json", "{\"Name\":\"/db\",}");
	EXPECT_EQ(load(CONTAINER_DOCKER, "j5", "", &m), -EINVAL);
	PUT(DOCKER "j6/config.v2.json", "{\"Name\":\"/d\xff\"}");
	EXPECT_EQ(load(CONTAINER_DOCKER, "j6", "", &m), -EINVAL);
	PUT(DOCKER "j7/config.v2.json", "");
	EXPECT_EQ(load(CONTAINER_DOCKER, "j7", "", &m), -EINVAL);
	/* Shapes: Config a string, annotations an array. */
	PUT(DOCKER "j8/config.v2.json", "{\"Config\":\"x\"}");
	EXPECT_EQ(load(CONTAINER_DOCKER, "j8", "", &m), -EINVAL);
	PUT(TASKS "k8s.io/j9/config.json", "{\"annotations\":[]}");
	EXPECT_EQ(load(CONTAINER_CONTAINERD, "j9", "", &m), -EINVAL);
	/* A record of another container, under this one's name. */
	PUT(HOOK "r1.json", "{\"id\":\"r2\",\"name\":\"admin\"}");
	EXPECT_EQ(load(CONTAINER_NONE, "r1", "", &m), -EINVAL);
	PUT(HOOK "r3.json", "{\"name\":\"admin\"}");
	EXPECT_EQ(load(CONTAINER_NONE, "r3", "", &m), -EINVAL);
	DONE();
}

static void test_values(void **state)
{
	char buf[2048], name[CONTAINER_NAME_MAX + 2];
	struct container_meta m;

	(void)state;
	/* CONTAINER_NAME_MAX bytes: kept whole; one more: refused, not cut. */
	memset(name, 'n', CONTAINER_NAME_MAX);
	name[CONTAINER_NAME_MAX] = '\0';
	snprintf(buf, sizeof(buf), "{\"annotations\":{\"io.kubernetes.cri.container-name\":\"%s\"}}", name);
	PUT(TASKS "k8s.io/v1/config.json", buf);
	if (EXPECT_EQ(load(CONTAINER_CONTAINERD, "v1", "", &m), 0))
		EXPECT_EQ(strlen(m.name), CONTAINER_NAME_MAX);
	name[CONTAINER_NAME_MAX] = 'n';
	name[CONTAINER_NAME_MAX + 1] = '\0';
	snprintf(buf, sizeof(buf), "{\"annotations\":{\"io.kubernetes.cri.container-name\":\"%s\"}}", name);
	PUT(TASKS "k8s.io/v2/config.json", buf);
	EXPECT_EQ(load(CONTAINER_CONTAINERD, "v2", "", &m), -ENAMETOOLONG);
	/* Docker's Name: the '/' does not count. */
	name[CONTAINER_NAME_MAX] = '\0';
	snprintf(buf, sizeof(buf), "{\"Name\":\"/%s\"}", name);
	PUT(DOCKER "v3/config.v2.json", buf);
	EXPECT_EQ(load(CONTAINER_DOCKER, "v3", "", &m), 0);
	snprintf(buf, sizeof(buf), "{\"Name\":\"/%sn\"}", name);
	PUT(DOCKER "v4/config.v2.json", buf);
	EXPECT_EQ(load(CONTAINER_DOCKER, "v4", "", &m), -ENAMETOOLONG);
	/* A pod UID longer than a UUID. */
	PUT(RUNST "v5/userdata/config.json",
	    "{\"annotations\":{\"io.kubernetes.pod.uid\":\"0b9c5e5a-8d1f-4b8e-9f6e-1d2c3b4a5f60-x\"}}");
	EXPECT_EQ(load(CONTAINER_CRIO, "v5", "", &m), -ENAMETOOLONG);

	/* Control characters: ESC, NUL, DEL, C1 CSI (U+009B), a newline. */
	PUT(DOCKER "c1/config.v2.json", "{\"Name\":\"/ok\\u001b[2J\"}");
	EXPECT_EQ(load(CONTAINER_DOCKER, "c1", "", &m), -EINVAL);
	PUT(DOCKER "c2/config.v2.json", "{\"Name\":\"/ok\\u0000admin\"}");
	EXPECT_EQ(load(CONTAINER_DOCKER, "c2", "", &m), -EINVAL);
	PUT(DOCKER "c3/config.v2.json", "{\"Name\":\"/ok\\u007f\"}");
	EXPECT_EQ(load(CONTAINER_DOCKER, "c3", "", &m), -EINVAL);
	PUT(DOCKER "c4/config.v2.json", "{\"Name\":\"/ok\\u009b31m\"}");
	EXPECT_EQ(load(CONTAINER_DOCKER, "c4", "", &m), -EINVAL);
	PUT(TASKS "k8s.io/c5/config.json", "{\"annotations\":{\"io.kubernetes.cri.image-name\":\"a\\nb\"}}");
	EXPECT_EQ(load(CONTAINER_CONTAINERD, "c5", "", &m), -EINVAL);
	/* Not every non-ASCII character is a control: é (U+00E9, C3 A9). */
	PUT(DOCKER "c6/config.v2.json", "{\"Name\":\"/caf\\u00e9\"}");
	if (EXPECT_EQ(load(CONTAINER_DOCKER, "c6", "", &m), 0))
		EXPECT_STR(m.name, "caf\xc3\xa9");
	/* An annotation the table does not map may hold anything. */
	PUT(TASKS "k8s.io/c7/config.json", "{\"annotations\":{\"x\":\"\\u001b\",\"nerdctl/name\":\"n\"}}");
	EXPECT_EQ(load(CONTAINER_CONTAINERD, "c7", "", &m), 0);
	/* A value that is not a string. */
	PUT(TASKS "k8s.io/c8/config.json", "{\"annotations\":{\"io.kubernetes.pod.name\":[\"a\"]}}");
	EXPECT_EQ(load(CONTAINER_CONTAINERD, "c8", "", &m), -EINVAL);

	/* Two keys for one field: agreeing is fine, disagreeing is not. */
	PUT(TASKS "k8s.io/k1/config.json",
	    "{\"annotations\":{\"io.kubernetes.cri.container-name\":\"a\",\"io.kubernetes.container.name\":\"a\"}}");
	EXPECT_EQ(load(CONTAINER_CONTAINERD, "k1", "", &m), 0);
	PUT(TASKS "k8s.io/k2/config.json",
	    "{\"annotations\":{\"io.kubernetes.cri.container-name\":\"a\",\"nerdctl/name\":\"admin\"}}");
	EXPECT_EQ(load(CONTAINER_CONTAINERD, "k2", "", &m), -EINVAL);
	DONE();
}

static void test_state(void **state)
{
	struct oci_state st;
	char why[256];

	(void)state;
	{
		static const char s[] = "{\"ociVersion\":\"1.2.0\",\"id\":\"abc\",\"status\":\"creating\","
			"\"pid\":42,\"bundle\":\"/run/b/abc\",\"annotations\":{\"nerdctl/name\":\"n\"}}";

		if (EXPECT_EQ(container_meta__parse_state(s, sizeof(s) - 1, &st, why, sizeof(why)), 0)) {
			EXPECT_STR(st.id, "abc");
			EXPECT_STR(st.status, "creating");
			EXPECT_EQ(st.pid, 42);
			EXPECT_STR(st.bundle, "/run/b/abc");
			EXPECT(st.have_annotations);
			EXPECT_STR(st.meta.name, "n");
		}
	}
	{
		static const char *const bad[] = {
			"{\"id\":\"abc\",\"pid\":1}",			/* no ociVersion */
			"{\"ociVersion\":\"1.0\",\"pid\":1}",		/* no id */
			"{\"ociVersion\":\"1.0\",\"id\":\"../x\"}",	/* traversal */
			"{\"ociVersion\":\"1.0\",\"id\":\"a\",\"pid\":-1}",
			"{\"ociVersion\":\"1.0\",\"id\":\"a\",\"pid\":\"1\"}",
			"{\"ociVersion\":\"1.0\",\"id\":\"a\",\"pid\":99999999999}",
			"{\"ociVersion\":\"1.0\",\"id\":\"a\",\"bundle\":\"rel/dir\"}",
			"{\"ociVersion\":\"1.0\",\"id\":\"a\",\"annotations\":\"x\"}",
			"{\"ociVersion\":\"1.0\",\"id\":\"a\",\"status\":\"a-status-too-long\"}",
			"not json",
		};
		size_t i;

		for (i = 0; i < ARRAY_SIZE(bad); i++) {
			why[0] = '\0';
			if (!EXPECT(container_meta__parse_state(bad[i], strlen(bad[i]), &st, why, sizeof(why)) < 0))
				print_error("  accepted: %s\n", bad[i]);
			else if (!EXPECT(why[0]))
				print_error("  no why for: %s\n", bad[i]);
		}
	}
	DONE();
}

/* The hook's input on a pipe, as a runtime hands it. */
static int run_hook(const char *dir, bool remove, const char *input)
{
	struct oci_hook_opts o = { .dir = dir, .proc = "/proc", .remove = remove };
	int fds[2], rc;
	size_t len = strlen(input);

	assert_int_equal(pipe(fds), 0);
	assert_true(write(fds[1], input, len) == (ssize_t)len);
	close(fds[1]);
	rc = oci_hook__run(&o, fds[0]);
	close(fds[0]);
	return rc;
}

/* The 0:: line of /proc/self/cgroup, as the hook must find it. */
static bool own_cgroup(char *out, size_t n)
{
	char line[4096];
	bool found = false;
	FILE *f = fopen("/proc/self/cgroup", "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(out, n, "%s", line + 3);
			found = true;
		}
	fclose(f);
	return found;
}

static void test_hook(void **state)
{
	char dir[512], rec[1024], state_json[2048], want_cg[4096], *buf = NULL;
	struct container_sources s = { .root = "", .hook_dir = dir };
	struct container_id c = cid_of(CONTAINER_NONE, "hk1", "");
	struct container_meta m;
	struct stat st;
	size_t len;

	(void)state;
	/* The directory is made, parents included. */
	snprintf(dir, sizeof(dir), "%s/hook/run/containers", root);
	snprintf(state_json, sizeof(state_json),
		 "{\"ociVersion\":\"1.2.0\",\"id\":\"hk1\",\"status\":\"creating\",\"pid\":%d,"
		 "\"bundle\":\"%s/bundle1\",\"annotations\":{"
		 "\"io.kubernetes.cri.container-name\":\"app\",\"io.kubernetes.cri.image-name\":\"img:1\","
		 "\"io.kubernetes.cri.sandbox-name\":\"pod-a\",\"io.kubernetes.cri.sandbox-namespace\":\"ns-a\","
		 "\"io.kubernetes.cri.sandbox-uid\":\"u-9\"}}", (int)getpid(), root);
	EXPECT_EQ(run_hook(dir, false, state_json), 0);
	snprintf(rec, sizeof(rec), "%s/hk1.json", dir);
	if (EXPECT_EQ(stat(rec, &st), 0))
		EXPECT_EQ(st.st_mode & 07777, 0644);
	if (EXPECT_EQ(container_meta__load(&s, &c, &m), 0)) {
		EXPECT_STR(m.name, "app");
		EXPECT_STR(m.image, "img:1");
		EXPECT_STR(m.pod_name, "pod-a");
		EXPECT_STR(m.pod_namespace, "ns-a");
		EXPECT_STR(m.pod_uid, "u-9");
	}
	/* Its cgroup is this process's, its pid this one. */
	if (EXPECT_EQ(container_meta__read_file(rec, &buf, &len), 0)) {
		char want[4200];

		if (own_cgroup(want_cg, sizeof(want_cg))) {
			snprintf(want, sizeof(want), "\"cgroup\":\"%s\"", want_cg);
			if (!EXPECT(strstr(buf, want)))
				print_error("  %s lacks %s\n", buf, want);
		}
		snprintf(want, sizeof(want), "\"pid\":%d,", (int)getpid());
		EXPECT(strstr(buf, want));
		EXPECT(strstr(buf, "\"created\":\"20"));
		free(buf);
	}
	/* No temporary left beside it. */
	{
		char cmd[700];

		snprintf(cmd, sizeof(cmd), "test \"$(ls -A '%s' | wc -l)\" = 1", dir);
		EXPECT_EQ(system(cmd), 0);
	}

	/* A state without annotations: the bundle's config.json has them. */
	PUT("/bundle2/config.json", "{\"ociVersion\":\"1.2.0\",\"annotations\":{\"nerdctl/name\":\"from-bundle\"}}");
	snprintf(state_json, sizeof(state_json),
		 "{\"ociVersion\":\"1.2.0\",\"id\":\"hk2\",\"status\":\"created\",\"pid\":%d,\"bundle\":\"%s/bundle2\"}",
		 (int)getpid(), root);
	EXPECT_EQ(run_hook(dir, false, state_json), 0);
	c = cid_of(CONTAINER_NONE, "hk2", "");
	if (EXPECT_EQ(container_meta__load(&s, &c, &m), 0))
		EXPECT_STR(m.name, "from-bundle");

	/* poststop: the record goes; twice is no error. */
	EXPECT_EQ(run_hook(dir, true, "{\"ociVersion\":\"1.2.0\",\"id\":\"hk2\",\"status\":\"stopped\"}"), 0);
	EXPECT_EQ(container_meta__load(&s, &c, &m), -ENOENT);
	EXPECT_EQ(run_hook(dir, true, "{\"ociVersion\":\"1.2.0\",\"id\":\"hk2\",\"status\":\"stopped\"}"), 0);

	/* Bad input fails the hook (the runtime then refuses the start). */
	EXPECT_EQ(run_hook(dir, false, "not a state"), 1);
	EXPECT_EQ(run_hook(dir, false, ""), 1);
	EXPECT_EQ(run_hook(dir, false, "{\"ociVersion\":\"1.2.0\",\"id\":\"../../x\",\"pid\":1}"), 1);
	EXPECT_EQ(run_hook(dir, false, "{\"ociVersion\":\"1.2.0\",\"id\":\"nopid\"}"), 1);
	snprintf(state_json, sizeof(state_json),
		 "{\"ociVersion\":\"1.2.0\",\"id\":\"hk3\",\"pid\":%d,\"annotations\":{\"nerdctl/name\":\"a\\u001bb\"}}",
		 (int)getpid());
	EXPECT_EQ(run_hook(dir, false, state_json), 1);
	EXPECT(access(rec, F_OK) == 0);

	/* Its own failure does not: a directory it cannot make. */
	PUT("/afile", "x");
	snprintf(dir, sizeof(dir), "%s/afile/sub", root);
	snprintf(state_json, sizeof(state_json),
		 "{\"ociVersion\":\"1.2.0\",\"id\":\"hk4\",\"pid\":%d}", (int)getpid());
	EXPECT_EQ(run_hook(dir, false, state_json), 0);
	DONE();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sources),
		cmocka_unit_test(test_precedence),
		cmocka_unit_test(test_missing_and_traversal),
		cmocka_unit_test(test_untrusted_files),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_state),
		cmocka_unit_test(test_hook),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
