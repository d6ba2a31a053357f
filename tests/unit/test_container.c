// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* policy/container.c: every path form of README "Containers and
 * Kubernetes", the skips, and paths that must not resolve. */
#include "test.h"

#include <errno.h>

#include "container.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_unresolved),
		cmocka_unit_test(test_runtime_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
