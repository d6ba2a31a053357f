// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* policy/container.c: every path form of README "Containers and
 * Kubernetes", the skips, and paths that must not resolve. */
#include "test.h"

#include <errno.h>

#include "container.h"
#include "policy.h"

#define ID  "3f2a8c1e9b7d4a6f0c5e2b8d1a7f4c9e6b3d0a8f5c2e9b7d4a1f6c3e0b8d5a2f"
#define ID2 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define UID "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"
#define UID_ "0b1c2d3e_4f50_6172_8394_a5b6c7d8e9f0"

struct want {
	const char *path;
	enum container_runtime rt;
	const char *id, *pod_uid, *qos, *ns;
	const char *own;	/* the container's own cgroup */
};

static const struct want good[] = {
	{ "/docker/" ID, CONTAINER_DOCKER, ID, "", "", "", "/docker/" ID },
	{ "/docker/" ID "/sub", CONTAINER_DOCKER, ID, "", "", "", "/docker/" ID },
	{ "/system.slice/docker-" ID ".scope", CONTAINER_DOCKER, ID, "", "", "",
	  "/system.slice/docker-" ID ".scope" },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice/cri-containerd-" ID ".scope",
	  CONTAINER_CONTAINERD, ID, UID, "burstable", "",
	  "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice/cri-containerd-" ID ".scope" },
	{ "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_ ".slice/cri-containerd-" ID ".scope",
	  CONTAINER_CONTAINERD, ID, UID, "besteffort", "",
	  "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_ ".slice/cri-containerd-" ID ".scope" },
	/* guaranteed: no QoS level */
	{ "/kubepods.slice/kubepods-pod" UID_ ".slice/cri-containerd-" ID ".scope",
	  CONTAINER_CONTAINERD, ID, UID, "", "",
	  "/kubepods.slice/kubepods-pod" UID_ ".slice/cri-containerd-" ID ".scope" },
	{ "/kubepods/burstable/pod" UID "/" ID, CONTAINER_CONTAINERD, ID, UID, "burstable", "",
	  "/kubepods/burstable/pod" UID "/" ID },
	{ "/kubepods/pod" UID "/" ID, CONTAINER_CONTAINERD, ID, UID, "", "",
	  "/kubepods/pod" UID "/" ID },
	{ "/kubepods/besteffort/pod" UID "/crio-" ID, CONTAINER_CRIO, ID, UID, "besteffort", "",
	  "/kubepods/besteffort/pod" UID "/crio-" ID },
	/* the mixed, literal form */
	{ "/kubepods-burstable-pod" UID_ ".slice:cri-containerd:" ID, CONTAINER_CONTAINERD, ID, UID, "", "",
	  "/kubepods-burstable-pod" UID_ ".slice:cri-containerd:" ID },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice:cri-containerd:" ID,
	  CONTAINER_CONTAINERD, ID, UID, "burstable", "",
	  "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice:cri-containerd:" ID },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice/crio-" ID ".scope",
	  CONTAINER_CRIO, ID, UID, "burstable", "",
	  "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice/crio-" ID ".scope" },
	{ "/machine.slice/libpod-" ID ".scope", CONTAINER_PODMAN, ID, "", "", "",
	  "/machine.slice/libpod-" ID ".scope" },
	/* crun with the systemd driver: the payload in a "container" child */
	{ "/machine.slice/libpod-" ID ".scope/container", CONTAINER_PODMAN, ID, "", "", "",
	  "/machine.slice/libpod-" ID ".scope" },
	{ "/libpod_parent/libpod-" ID, CONTAINER_PODMAN, ID, "", "", "", "/libpod_parent/libpod-" ID },
	{ "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID ".scope",
	  CONTAINER_PODMAN, ID, "", "", "",
	  "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID ".scope" },
	{ "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID ".scope/container",
	  CONTAINER_PODMAN, ID, "", "", "",
	  "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID ".scope" },
	{ "/default/" ID, CONTAINER_CONTAINERD, ID, "", "", "default", "/default/" ID },
	{ "/buildkit/" ID "/x", CONTAINER_CONTAINERD, ID, "", "", "buildkit", "/buildkit/" ID },
	{ "/system.slice/nerdctl-" ID ".scope", CONTAINER_CONTAINERD, ID, "", "", "",
	  "/system.slice/nerdctl-" ID ".scope" },
	/* nearest ancestor: a container's nested runtime's container is
	 * still the outer one's */
	{ "/docker/" ID "/docker/" ID2, CONTAINER_DOCKER, ID, "", "", "", "/docker/" ID },
};

static const char *const bad[] = {
	"/",
	"",
	"/docker",
	"/docker/not-hex",
	"/docker/" ID "0",			/* 65 digits */
	"/docker/3F2A8C1E9B7D4A6F0C5E2B8D1A7F4C9E6B3D0A8F5C2E9B7D4A1F6C3E0B8D5A2F", /* upper case */
	"/system.slice/docker-foo.scope",
	"/system.slice/docker.service",
	"/system.slice/" ID,			/* not a namespace */
	"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice/crio-conmon-" ID ".scope",
	"/machine.slice/libpod-conmon-" ID ".scope",
	"/libpod_parent/libpod-conmon-" ID,
	"/kubepods/burstable/pod" UID,		/* the pod, no container */
	"/kubepods.slice/kubepods-burstable.slice",
	"/a/b/" ID,				/* depth 3: no form */
	"/x/" ID "x",
	"/kubepods-burstable-pod" UID_ ".slice:cri-containerd:short",
	"/kubepods-burstable-pod" UID_ ".slice:other:" ID,
	"/user.slice/user-1000.slice",
};

static void test_forms(void **state)
{
	struct container_id c;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(good); i++) {
		const struct want *w = &good[i];

		if (!EXPECT_EQ(container__resolve(w->path, &c), 0)) {
			fprintf(stderr, "  path: %s\n", w->path);
			continue;
		}
		EXPECT_EQ(c.runtime, w->rt);
		EXPECT_STR(c.id, w->id);
		EXPECT_STR(c.pod_uid, w->pod_uid);
		EXPECT_STR(c.qos, w->qos);
		EXPECT_STR(c.ns, w->ns);
		EXPECT_EQ(c.path_len, strlen(w->own));
		EXPECT(!strncmp(w->path, w->own, c.path_len));
	}
	DONE();
}

static void test_unresolved(void **state)
{
	struct container_id c;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		if (!EXPECT_EQ(container__resolve(bad[i], &c), -ENOENT))
			fprintf(stderr, "  path: %s\n", bad[i]);
		EXPECT_EQ(c.runtime, CONTAINER_NONE);
		EXPECT_EQ(c.path_len, 0);
	}
	DONE();
}

static void test_runtime_names(void **state)
{
	int r;

	(void)state;
	for (r = CONTAINER_NONE + 1; r < CONTAINER_RUNTIMES; r++)
		EXPECT_EQ(container__runtime_parse(container__runtime_name(r)), r);
	EXPECT_EQ(container__runtime_parse("crio"), CONTAINER_CRIO);
	EXPECT_EQ(container__runtime_parse("nerdctl"), CONTAINER_CONTAINERD);
	EXPECT_EQ(container__runtime_parse("rkt"), CONTAINER_NONE);
	EXPECT(container__runtime_name(CONTAINER_NONE) == NULL);
	DONE();
}

static struct policy *parse(const char *yaml, struct policy_diag *d)
{
	struct policy *p = NULL;

	memset(d, 0, sizeof(*d));
	policy__parse("t.yaml", yaml, strlen(yaml), &p, d);
	return p;
}

/* What the fake runtime state knows: one container's names. */
struct fake {
	const char *id;
	struct container_meta m;
	int calls;
	int err;	/* returned instead (a refused source: -EINVAL) */
};

static int fake_meta(void *ctx, const struct container_id *cid,
		     struct container_meta *out)
{
	struct fake *f = ctx;

	f->calls++;
	if (f->err)
		return f->err;
	if (!f->id || strcmp(f->id, cid->id))
		return -ENOENT;
	*out = f->m;
	return 0;
}

static void test_selector_parse(void **state)
{
	struct policy_diag d;
	struct policy *p;
	size_t i;
	bool docker = false, kube = false, ns = false;

	(void)state;
	p = parse("name: t\n"
		  "containers:\n"
		  "  - {runtime: docker, name: web-*}\n"
		  "  - {runtime: containerd, namespace: default}\n"
		  "pods: [default/web-*, {pod_uid: " UID "}]\n"
		  "images: ['docker.io/library/busybox:*']\n", &d);
	if (!EXPECT(p)) {
		for (i = 0; i < d.n; i++)
			fprintf(stderr, "  diag: %s\n", d.msgs[i]);
		goto out;
	}
	EXPECT_EQ(p->n_cgroups_user, 0);
	EXPECT_EQ(p->n_ctrs, 5);
	EXPECT_EQ(p->ctrs[0].runtime, CONTAINER_DOCKER);
	EXPECT_STR(p->ctrs[0].name, "web-*");
	EXPECT_STR(p->ctrs[1].ns, "default");
	EXPECT_STR(p->ctrs[2].pod, "default/web-*");
	EXPECT_STR(p->ctrs[3].pod_uid, UID);
	EXPECT_STR(p->ctrs[4].image, "docker.io/library/busybox:*");
	/* Each form once, the namespace's too. */
	for (i = 0; i < p->n_cgroups; i++) {
		size_t j;

		for (j = 0; j < i; j++)
			EXPECT(strcmp(p->cgroups[i], p->cgroups[j]));
		docker |= !strcmp(p->cgroups[i], "/docker/*");
		kube |= !strcmp(p->cgroups[i], "/kubepods/*/pod*/*");
		ns |= !strcmp(p->cgroups[i], "/default/*");
	}
	EXPECT(docker && kube && ns);
out:
	policy__free(p);
	policy_diag__free(&d);
	DONE();
}

static void test_selector_errors(void **state)
{
	static const struct { const char *yaml, *want; } bad[] = {
		{ "name: t\n", "t.yaml:1:1: cgroups: required key is missing: a policy selects with cgroups, containers, pods or images (at least one)" },
		{ "name: t\ncontainers: [{runtime: rkt}]\n", "t.yaml:2:24: containers[0].runtime: expected docker, containerd, cri-o or podman, got 'rkt'" },
		{ "name: t\ncontainers: [{}]\n", "t.yaml:2:14: containers[0]: empty selector; give a runtime, a name or an id (every container of a runtime: {runtime: docker})" },
		{ "name: t\ncontainers: []\n", "t.yaml:2:13: containers: empty list; name at least one container, such as {runtime: docker, name: web-*}" },
		{ "name: t\ncontainers: [{nmae: x}]\n", "t.yaml:2:15: containers[0].nmae: unknown key 'nmae'; expected one of: runtime, name, id, namespace" },
		{ "name: t\ncontainers: [{runtime: docker, namespace: x}]\n", "t.yaml:2:43: containers[0].namespace: only containerd has namespaces; remove it, or use runtime: containerd" },
		{ "name: t\ncontainers: [{runtime: containerd, namespace: docker}]\n", "t.yaml:2:47: containers[0].namespace: 'docker' is a top-level directory of another runtime or of systemd, never a containerd namespace's; name the namespace as `ctr namespaces ls` shows it" },
		{ "name: t\npods: [web]\n", "t.yaml:2:8: pods[0]: 'web' is not namespace/name; write the pod's namespace, '/', and its name, each a glob (default/web-*, */web)" },
		{ "name: t\npods: [{pod_uid: 1234}]\n", "t.yaml:2:18: pods[0].pod_uid: '1234' is not a pod UID; expected 8-4-4-4-12 lower-case hex digits, such as 0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0 (kubectl get pod NAME -o jsonpath='{.metadata.uid}')" },
		{ "name: t\nimages: ['']\n", "t.yaml:2:10: images[0]: 0 characters; expected 1 to 511" },
	};
	struct policy_diag d;
	struct policy *p;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		p = parse(bad[i].yaml, &d);
		EXPECT(!p);
		if (EXPECT_EQ(d.n, 1))
			EXPECT_STR(d.msgs[0], bad[i].want);
		else
			for (size_t k = 0; k < d.n; k++)
				fprintf(stderr, "  diag: %s\n", d.msgs[k]);
		policy__free(p);
		policy_diag__free(&d);
	}
	DONE();
}

static void test_selects(void **state)
{
	struct fake f = { .id = ID, .m = { .have = true, .name = "web-1",
					   .image = "docker.io/library/busybox:1.36",
					   .pod_namespace = "default", .pod_name = "web-7" } };
	struct container_id cid;
	struct policy_diag d;
	struct policy *by_name, *by_pod, *by_uid, *by_rt, *by_img, *glob;
	const char *kube = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
			   ".slice/cri-containerd-" ID ".scope";

	(void)state;
	by_name = parse("name: a\ncontainers: [{runtime: docker, name: web-*}]\n", &d);
	policy_diag__free(&d);
	by_pod = parse("name: b\npods: [default/web-*]\n", &d);
	policy_diag__free(&d);
	by_uid = parse("name: c\npods: [{pod_uid: " UID "}]\n", &d);
	policy_diag__free(&d);
	by_rt = parse("name: e\ncontainers: [{runtime: podman}]\n", &d);
	policy_diag__free(&d);
	by_img = parse("name: f\nimages: ['*/busybox:*']\n", &d);
	policy_diag__free(&d);
	glob = parse("name: g\ncgroups: [/docker/*]\ncontainers: [{id: 'ffff*'}]\n", &d);
	policy_diag__free(&d);
	assert_non_null(by_name);
	assert_non_null(by_pod);
	assert_non_null(by_uid);
	assert_non_null(by_rt);
	assert_non_null(by_img);
	assert_non_null(glob);

	EXPECT_EQ(policy__selects(by_name, "/docker/" ID, fake_meta, &f, true, &cid), POLICY_SEL_YES);
	EXPECT_STR(cid.id, ID);
	EXPECT_EQ(policy__selects(by_name, "/system.slice/docker-" ID ".scope", fake_meta, &f, true, NULL), POLICY_SEL_YES);
	/* A child of the container is in its sandbox by inheritance, not
	 * selected itself. */
	EXPECT_EQ(policy__selects(by_name, "/docker/" ID "/x", fake_meta, &f, true, NULL), POLICY_SEL_NO);
	/* Another runtime, an unresolved path, another name. */
	EXPECT_EQ(policy__selects(by_name, "/machine.slice/libpod-" ID ".scope", fake_meta, &f, true, NULL), POLICY_SEL_NO);
	EXPECT_EQ(policy__selects(by_name, "/docker/not-hex", fake_meta, &f, true, NULL), POLICY_SEL_NO);
	strcpy(f.m.name, "db-1");
	EXPECT_EQ(policy__selects(by_name, "/docker/" ID, fake_meta, &f, true, NULL), POLICY_SEL_NO);
	strcpy(f.m.name, "web-1");
	/* No names yet: wait while they may come, then unknown, never no
	 * (fail closed: deny-all until they come). */
	f.id = NULL;
	EXPECT_EQ(policy__selects(by_name, "/docker/" ID, fake_meta, &f, true, NULL), POLICY_SEL_WAIT);
	EXPECT_EQ(policy__selects(by_name, "/docker/" ID, fake_meta, &f, false, NULL), POLICY_SEL_UNKNOWN);
	EXPECT_EQ(policy__selects(by_name, "/docker/" ID, NULL, NULL, false, NULL), POLICY_SEL_UNKNOWN);
	f.id = ID;
	/* Refused names (too long, control characters, keys that disagree)
	 * are unknown at once: no wait makes them valid. */
	f.err = -EINVAL;
	EXPECT_EQ(policy__selects(by_name, "/docker/" ID, fake_meta, &f, true, NULL), POLICY_SEL_UNKNOWN);
	EXPECT_EQ(policy__selects(by_img, "/docker/" ID, fake_meta, &f, false, NULL), POLICY_SEL_UNKNOWN);
	f.err = 0;
	/* Names read, the field absent: a docker container has no name
	 * in this source's record: a name glob says no. */
	strcpy(f.m.name, "");
	EXPECT_EQ(policy__selects(by_name, "/docker/" ID, fake_meta, &f, false, NULL), POLICY_SEL_NO);
	strcpy(f.m.name, "web-1");
	/* Layouts the rules resolve beyond the globbed forms: a podman
	 * pod's slice, rootless docker, a docker --cgroup-parent slice. The
	 * globs are for watching; resolving decides. */
	EXPECT_EQ(policy__selects(by_rt, "/machine.slice/machine-libpod_pod_" ID ".slice/libpod-" ID ".scope", NULL, NULL, false, NULL), POLICY_SEL_YES);
	EXPECT_EQ(policy__selects(by_name, "/user.slice/user-1000.slice/user@1000.service/user.slice/docker-" ID ".scope", fake_meta, &f, false, NULL), POLICY_SEL_YES);
	EXPECT_EQ(policy__selects(by_name, "/batch.slice/docker-" ID ".scope", fake_meta, &f, false, NULL), POLICY_SEL_YES);

	EXPECT_EQ(policy__selects(by_pod, kube, fake_meta, &f, true, &cid), POLICY_SEL_YES);
	EXPECT_STR(cid.pod_uid, UID);
	strcpy(f.m.pod_namespace, "kube-system");
	EXPECT_EQ(policy__selects(by_pod, kube, fake_meta, &f, true, NULL), POLICY_SEL_NO);
	/* A pod selector never selects a container outside a pod. */
	EXPECT_EQ(policy__selects(by_pod, "/docker/" ID, fake_meta, &f, true, NULL), POLICY_SEL_NO);

	/* The pod UID is in the path: no names needed, none asked. */
	f.calls = 0;
	EXPECT_EQ(policy__selects(by_uid, kube, fake_meta, &f, true, NULL), POLICY_SEL_YES);
	EXPECT_EQ(f.calls, 0);
	EXPECT_EQ(policy__selects(by_uid, "/kubepods/besteffort/pod" UID "/crio-" ID, fake_meta, &f, true, NULL), POLICY_SEL_YES);
	EXPECT_EQ(policy__selects(by_uid, "/kubepods/besteffort/pod" UID "/crio-conmon-" ID, fake_meta, &f, true, NULL), POLICY_SEL_NO);

	EXPECT_EQ(policy__selects(by_rt, "/machine.slice/libpod-" ID ".scope", NULL, NULL, false, NULL), POLICY_SEL_YES);
	EXPECT_EQ(policy__selects(by_rt, "/machine.slice/libpod-conmon-" ID ".scope", NULL, NULL, false, NULL), POLICY_SEL_NO);
	EXPECT_EQ(policy__selects(by_rt, "/machine.slice/libpod-" ID ".scope/container", NULL, NULL, false, NULL), POLICY_SEL_NO);

	EXPECT_EQ(policy__selects(by_img, "/docker/" ID, fake_meta, &f, true, NULL), POLICY_SEL_YES);
	strcpy(f.m.image, "docker.io/library/alpine:3");
	EXPECT_EQ(policy__selects(by_img, "/docker/" ID, fake_meta, &f, true, NULL), POLICY_SEL_NO);

	/* A cgroups: glob selects whatever the container selectors say. */
	EXPECT_EQ(policy__selects(glob, "/docker/not-hex", NULL, NULL, false, NULL), POLICY_SEL_YES);
	EXPECT_EQ(policy__selects(glob, "/system.slice/docker-" ID ".scope", NULL, NULL, false, NULL), POLICY_SEL_NO);

	policy__free(by_name);
	policy__free(by_pod);
	policy__free(by_uid);
	policy__free(by_rt);
	policy__free(by_img);
	policy__free(glob);
	DONE();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_unresolved),
		cmocka_unit_test(test_runtime_names),
		cmocka_unit_test(test_selector_parse),
		cmocka_unit_test(test_selector_errors),
		cmocka_unit_test(test_selects),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
