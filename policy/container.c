// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Container identity from a cgroup path: a table of the path forms that
 * docker, containerd (CRI and nerdctl/ctr), CRI-O and podman give their
 * containers' cgroups (README "Containers and Kubernetes"). Pure string
 * work, unit-tested against every form in tests/unit/test_container.c.
 *
 * A path is read from the top: the first component that is a container's
 * cgroup ends the search, so a process in a child of it (crun's
 * "container" below a systemd scope, or a nested cgroup of the payload's)
 * belongs to the container of its nearest such ancestor. Ids must be 64
 * hex digits, as every one of these runtimes makes them: "docker-foo.scope"
 * is some other unit, not a container.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "container.h"
#include "policy.h"

#define ID_LEN	64

static const char *const runtime_names[CONTAINER_RUNTIMES] = {
	[CONTAINER_DOCKER] = "docker",
	[CONTAINER_CONTAINERD] = "containerd",
	[CONTAINER_CRIO] = "cri-o",
	[CONTAINER_PODMAN] = "podman",
};

const char *container__runtime_name(enum container_runtime r)
{
	return r > CONTAINER_NONE && r < CONTAINER_RUNTIMES ? runtime_names[r] : NULL;
}

enum container_runtime container__runtime_parse(const char *s)
{
	int r;

	if (!strcmp(s, "crio"))
		return CONTAINER_CRIO;
	if (!strcmp(s, "nerdctl") || !strcmp(s, "ctr"))
		return CONTAINER_CONTAINERD;
	for (r = CONTAINER_NONE + 1; r < CONTAINER_RUNTIMES; r++)
		if (!strcmp(s, runtime_names[r]))
			return (enum container_runtime)r;
	return CONTAINER_NONE;
}

/* Where a form may stand. */
enum form_at {
	AT_ANY,		/* any parent (a systemd unit name says it all) */
	AT_DOCKER,	/* right below a top-level "docker" */
	AT_KUBEPODS,	/* right below a cgroupfs kubelet's pod<uid> */
	AT_LIBPOD,	/* right below a top-level "libpod_parent" */
	AT_NS,		/* depth 2, below a containerd namespace */
};

/*
 * One path form: a component "<prefix><id><suffix>". The order matters
 * only for the skips: a conmon sibling ("crio-conmon-<id>.scope") is the
 * runtime's monitor, not the container, and never resolves.
 */
static const struct form {
	enum container_runtime rt;
	enum form_at at;
	const char *prefix, *suffix;
} forms[] = {
	{ CONTAINER_DOCKER, AT_ANY, "docker-", ".scope" },
	{ CONTAINER_CONTAINERD, AT_ANY, "cri-containerd-", ".scope" },
	{ CONTAINER_CONTAINERD, AT_ANY, "nerdctl-", ".scope" },
	{ CONTAINER_CRIO, AT_ANY, "crio-", ".scope" },
	{ CONTAINER_PODMAN, AT_ANY, "libpod-", ".scope" },
	{ CONTAINER_DOCKER, AT_DOCKER, "", "" },
	{ CONTAINER_CRIO, AT_KUBEPODS, "crio-", "" },
	{ CONTAINER_CONTAINERD, AT_KUBEPODS, "", "" },
	{ CONTAINER_PODMAN, AT_LIBPOD, "libpod-", "" },
	{ CONTAINER_CONTAINERD, AT_NS, "", "" },
};

/* Components that are the runtimes' own, never a container's. */
static const char *const not_containers[] = { "crio-conmon-", "libpod-conmon-" };

/* Top-level directories that are no containerd namespace. */
static const char *const not_namespaces[] = {
	"docker", "kubepods", "kubepods.slice", "libpod_parent", "machine.slice",
	"system.slice", "user.slice", "init.scope",
};

bool container__namespace_ok(const char *ns)
{
	size_t k;

	for (k = 0; k < sizeof(not_namespaces) / sizeof(not_namespaces[0]); k++)
		if (!strcmp(ns, not_namespaces[k]))
			return false;
	return true;
}

static bool is_id(const char *s, size_t n)
{
	size_t i;

	if (n != ID_LEN)
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static bool starts(const char *s, size_t n, const char *p)
{
	size_t l = strlen(p);

	return n >= l && !memcmp(s, p, l);
}

static bool ends(const char *s, size_t n, const char *p)
{
	size_t l = strlen(p);

	return n >= l && !memcmp(s + n - l, p, l);
}

static bool comp_is(const char *s, size_t n, const char *lit)
{
	return n == strlen(lit) && !memcmp(s, lit, n);
}

/* A component; the path's components are kept as (start, length). */
struct comp {
	const char *s;
	size_t n;
};

/*
 * A pod UID from a kubelet's pod cgroup: "kubepods-<qos>-pod<uid>.slice"
 * or "kubepods-pod<uid>.slice" (systemd: '-' written as '_'), or
 * "pod<uid>" (cgroupfs). 36 characters of hex and dashes.
 */
static bool pod_uid_of(const struct comp *c, char *out)
{
	const char *s = c->s, *p;
	size_t n = c->n, i;

	if (starts(s, n, "kubepods-") && ends(s, n, ".slice")) {
		/* After "kubepods-": "kubepods" holds "pod" itself. */
		p = memmem(s + 9, n - 9, "pod", 3);
		if (!p)
			return false;
		p += 3;
		n = (size_t)(s + n - strlen(".slice") - p);
	} else if (starts(s, n, "pod")) {
		p = s + 3;
		n -= 3;
	} else {
		return false;
	}
	if (n != CONTAINER_UID_MAX)
		return false;
	for (i = 0; i < n; i++) {
		char ch = p[i] == '_' ? '-' : p[i];

		if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || ch == '-'))
			return false;
		out[i] = ch;
	}
	out[n] = '\0';
	return true;
}

/* "kubepods-<qos>.slice" (systemd) or "<qos>" right below "kubepods". */
static void qos_of(const struct comp *c, size_t i, char *out, size_t len)
{
	static const char *const qos[] = { "burstable", "besteffort" };
	size_t k;

	for (k = 0; k < sizeof(qos) / sizeof(qos[0]); k++) {
		char unit[32];

		snprintf(unit, sizeof(unit), "kubepods-%s.slice", qos[k]);
		if (comp_is(c[i].s, c[i].n, unit) ||
		    (i == 1 && comp_is(c[0].s, c[0].n, "kubepods") &&
		     comp_is(c[i].s, c[i].n, qos[k])))
			snprintf(out, len, "%s", qos[k]);
	}
}

static bool at_ok(enum form_at at, const struct comp *c, size_t i)
{
	size_t k;

	switch (at) {
	case AT_ANY:
		return true;
	case AT_DOCKER:
		return i == 1 && comp_is(c[0].s, c[0].n, "docker");
	case AT_LIBPOD:
		return i == 1 && comp_is(c[0].s, c[0].n, "libpod_parent");
	case AT_KUBEPODS:
		return i >= 2 && comp_is(c[0].s, c[0].n, "kubepods") &&
		       starts(c[i - 1].s, c[i - 1].n, "pod");
	case AT_NS:
		if (i != 1)
			return false;
		for (k = 0; k < sizeof(not_namespaces) / sizeof(not_namespaces[0]); k++)
			if (comp_is(c[0].s, c[0].n, not_namespaces[k]))
				return false;
		return c[0].n < sizeof(((struct container_id *)0)->ns);
	}
	return false;
}

/* c[i] as a container of some form: its runtime and id, else false. */
static bool match_comp(const struct comp *c, size_t i, struct container_id *out)
{
	const char *s = c[i].s, *mid;
	size_t n = c[i].n, k, pl, sl;

	for (k = 0; k < sizeof(not_containers) / sizeof(not_containers[0]); k++)
		if (starts(s, n, not_containers[k]))
			return false;
	/* The literal systemd-style path a cgroupfs driver was handed:
	 * "<slice>:cri-containerd:<id>" (or ":crio:"), one directory. */
	mid = memchr(s, ':', n);
	if (mid) {
		static const struct { const char *tag; enum container_runtime rt; } lit[] = {
			{ ":cri-containerd:", CONTAINER_CONTAINERD },
			{ ":crio:", CONTAINER_CRIO },
			{ ":docker:", CONTAINER_DOCKER },
			{ ":libpod:", CONTAINER_PODMAN },
		};

		for (k = 0; k < sizeof(lit) / sizeof(lit[0]); k++) {
			size_t tl = strlen(lit[k].tag), head = (size_t)(mid - s);

			if (n - head < tl || memcmp(mid, lit[k].tag, tl) ||
			    !is_id(mid + tl, n - head - tl))
				continue;
			out->runtime = lit[k].rt;
			memcpy(out->id, mid + tl, ID_LEN);
			out->id[ID_LEN] = '\0';
			pod_uid_of(&(struct comp){ s, head }, out->pod_uid);
			qos_of(&(struct comp){ s, head }, 0, out->qos, sizeof(out->qos));
			return true;
		}
		return false;
	}
	for (k = 0; k < sizeof(forms) / sizeof(forms[0]); k++) {
		const struct form *f = &forms[k];

		pl = strlen(f->prefix);
		sl = strlen(f->suffix);
		if (!starts(s, n, f->prefix) || !ends(s, n, f->suffix) ||
		    !is_id(s + pl, n - pl - sl) || !at_ok(f->at, c, i))
			continue;
		out->runtime = f->rt;
		memcpy(out->id, s + pl, ID_LEN);
		out->id[ID_LEN] = '\0';
		if (f->at == AT_NS)
			snprintf(out->ns, sizeof(out->ns), "%.*s", (int)c[0].n, c[0].s);
		return true;
	}
	return false;
}

#define MAX_COMPS	64

int container__resolve(const char *rel, struct container_id *out)
{
	struct comp c[MAX_COMPS];
	const char *p = rel, *e;
	size_t n = 0, i, k;

	memset(out, 0, sizeof(*out));
	while (*p && n < MAX_COMPS) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		e = strchr(p, '/');
		c[n].s = p;
		c[n].n = e ? (size_t)(e - p) : strlen(p);
		p += c[n].n;
		n++;
	}
	for (i = 0; i < n; i++) {
		if (!match_comp(c, i, out))
			continue;
		/* The pod and its QoS class from the ancestors, where the
		 * literal form did not give them. */
		for (k = 0; k < i; k++) {
			if (!out->pod_uid[0])
				pod_uid_of(&c[k], out->pod_uid);
			if (!out->qos[0])
				qos_of(c, k, out->qos, sizeof(out->qos));
		}
		out->path_len = (size_t)(c[i].s + c[i].n - rel);
		return 0;
	}
	memset(out, 0, sizeof(*out));
	return -ENOENT;
}

/* ---- selectors ---------------------------------------------------------- */

/*
 * The cgroup globs of each runtime's path forms, for the watched
 * directories and the setup pass: a superset of what resolves (the ids'
 * 64 hex digits and the conmon skips are container__resolve()'s).
 */
static const struct {
	enum container_runtime rt;
	bool pods;		/* a Kubernetes pod's container */
	const char *glob;
} globs[] = {
	{ CONTAINER_DOCKER, false, "/docker/*" },
	{ CONTAINER_DOCKER, false, "/system.slice/docker-*.scope" },
	{ CONTAINER_CONTAINERD, true, "/kubepods.slice/kubepods-*.slice/kubepods-*-pod*.slice/cri-containerd-*.scope" },
	{ CONTAINER_CONTAINERD, true, "/kubepods.slice/kubepods-pod*.slice/cri-containerd-*.scope" },
	{ CONTAINER_CONTAINERD, true, "/kubepods.slice/kubepods-*.slice/*:cri-containerd:*" },
	{ CONTAINER_CONTAINERD, true, "/kubepods.slice/*:cri-containerd:*" },
	{ CONTAINER_CONTAINERD, true, "/kubepods/*/pod*/*" },
	{ CONTAINER_CONTAINERD, true, "/kubepods/pod*/*" },
	{ CONTAINER_CONTAINERD, false, "/system.slice/nerdctl-*.scope" },
	{ CONTAINER_CRIO, true, "/kubepods.slice/kubepods-*.slice/kubepods-*-pod*.slice/crio-*.scope" },
	{ CONTAINER_CRIO, true, "/kubepods.slice/kubepods-pod*.slice/crio-*.scope" },
	{ CONTAINER_CRIO, true, "/kubepods/*/pod*/crio-*" },
	{ CONTAINER_CRIO, true, "/kubepods/pod*/crio-*" },
	{ CONTAINER_PODMAN, false, "/machine.slice/libpod-*.scope" },
	{ CONTAINER_PODMAN, false, "/libpod_parent/libpod-*" },
	{ CONTAINER_PODMAN, false, "/user.slice/user-*.slice/user@*.service/user.slice/libpod-*.scope" },
	/* Pods of podman (`podman pod create`): the pod's slice between. */
	{ CONTAINER_PODMAN, false, "/machine.slice/machine-libpod_pod_*.slice/libpod-*.scope" },
	{ CONTAINER_PODMAN, false, "/user.slice/user-*.slice/user@*.service/user.slice/user-libpod_pod_*.slice/libpod-*.scope" },
	/* Rootless docker (systemd driver, the user's manager). */
	{ CONTAINER_DOCKER, false, "/user.slice/user-*.slice/user@*.service/user.slice/docker-*.scope" },
};

static bool is_pod_sel(const struct policy_container *sel)
{
	return sel->pod || sel->pod_uid;
}

int policy__container_globs(const struct policy_container *sel, char **out,
			    size_t max)
{
	char buf[128];
	size_t i, n = 0;

	for (i = 0; i < sizeof(globs) / sizeof(globs[0]); i++) {
		if (sel->runtime && (int)globs[i].rt != sel->runtime)
			continue;
		if (is_pod_sel(sel) && !globs[i].pods)
			continue;
		if (n == max)
			return -ENOSPC;
		out[n] = strdup(globs[i].glob);
		if (!out[n])
			return -ENOMEM;
		n++;
	}
	if (sel->ns && !is_pod_sel(sel) &&
	    (!sel->runtime || sel->runtime == CONTAINER_CONTAINERD)) {
		if (n == max)
			return -ENOSPC;
		snprintf(buf, sizeof(buf), "/%s/*", sel->ns);
		out[n] = strdup(buf);
		if (!out[n])
			return -ENOMEM;
		n++;
	}
	return (int)n;
}

/* A glob against a value that may be unknown (""): unknown matches no
 * glob, "*" included. 1 match, 0 not, -1 unknown. */
static int glob_on(const char *glob, const char *v, int flags)
{
	if (!glob)
		return 1;
	if (!v[0])
		return -1;
	return !fnmatch(glob, v, flags);
}

enum policy_sel policy__container_match(const struct policy_container *sel,
					const struct container_id *cid,
					const struct container_meta *m,
					bool may_wait)
{
	static const struct container_meta none;
	char pod[2 * CONTAINER_NAME_MAX + 2] = "";
	const char *uid;
	int r[5], k;
	bool unknown = false;

	if (!m)
		m = &none;
	if (sel->runtime && sel->runtime != (int)cid->runtime)
		return POLICY_SEL_NO;
	/* From the path: decided whatever the names say. */
	if (!glob_on(sel->id, cid->id, 0))
		return POLICY_SEL_NO;
	if (sel->ns && strcmp(sel->ns, cid->ns))
		return POLICY_SEL_NO;
	uid = cid->pod_uid[0] ? cid->pod_uid : m->pod_uid;
	if (is_pod_sel(sel) && !cid->pod_uid[0] && !m->pod_uid[0] && m->have)
		return POLICY_SEL_NO;	/* not a pod's */
	if (m->pod_namespace[0] && m->pod_name[0])
		snprintf(pod, sizeof(pod), "%s/%s", m->pod_namespace, m->pod_name);
	r[0] = glob_on(sel->name, m->name, 0);
	r[1] = glob_on(sel->image, m->image, 0);
	r[2] = glob_on(sel->pod, pod, FNM_PATHNAME);
	r[3] = sel->pod_uid ? (uid[0] ? !strcmp(sel->pod_uid, uid) : -1) : 1;
	r[4] = 1;
	for (k = 0; k < 5; k++) {
		if (!r[k])
			return POLICY_SEL_NO;
		if (r[k] < 0)
			unknown = true;
	}
	if (!unknown)
		return POLICY_SEL_YES;
	/* Names the runtime has not written (yet): wait for them while
	 * they may come. Read, and without the field (a docker container
	 * has no pod, a ctr one no name): no. Never written, or refused:
	 * unknown, which is never a no (fail closed). */
	if (m->refused)
		return POLICY_SEL_UNKNOWN;
	if (!m->have)
		return may_wait ? POLICY_SEL_WAIT : POLICY_SEL_UNKNOWN;
	return POLICY_SEL_NO;
}

bool policy__selects_glob(const struct policy *p, const char *rel)
{
	size_t i;

	for (i = 0; i < p->n_cgroups_user; i++)
		if (!fnmatch(p->cgroups[i], rel, FNM_PATHNAME))
			return true;
	return false;
}

enum policy_sel policy__selects(const struct policy *p, const char *rel,
				container_meta_fn meta, void *ctx, bool may_wait,
				struct container_id *cid)
{
	struct container_id own;
	struct container_meta m;
	enum policy_sel best = POLICY_SEL_NO, r;
	bool have_meta = false;
	size_t i;

	if (!cid)
		cid = &own;
	if (container__resolve(rel, cid))
		memset(cid, 0, sizeof(*cid));
	if (policy__selects_glob(p, rel))
		return POLICY_SEL_YES;
	/* A container's own cgroup, not a child of it, nor a cgroup that
	 * no rule resolves; in any layout the rules know (a podman pod's
	 * slice, a rootless docker, a --cgroup-parent), globbed or not. */
	if (!p->n_ctrs || !cid->runtime || cid->path_len != strlen(rel))
		return POLICY_SEL_NO;
	memset(&m, 0, sizeof(m));
	for (i = 0; i < p->n_ctrs; i++) {
		const struct policy_container *s = &p->ctrs[i];

		if (!have_meta && (s->name || s->image || s->pod ||
				   (s->pod_uid && !cid->pod_uid[0]))) {
			have_meta = true;
			int err = meta ? meta(ctx, cid, &m) : -ENOENT;

			if (!err)
				m.have = true;
			else if (err != -ENOENT)
				m.refused = true;
		}
		r = policy__container_match(s, cid, have_meta ? &m : NULL, may_wait);
		if (r == POLICY_SEL_YES)
			return r;
		/* Another item may still say yes; unknown outranks a wait
		 * (the wait is over for that item's names). */
		if (r > best)
			best = r;
	}
	return best;
}
