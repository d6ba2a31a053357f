// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Containers (agent/containers.h): each tracked cgroup's container_info,
 * and the watch on `stockade oci-hook`'s directory.
 *
 * Why names are read per cgroup and kept with it: records name their
 * sandbox's container many times a second in a storm, and a record must
 * not read a file; a cgroup's names are read once when it is tracked and
 * again only when the hook's directory changes while they are missing.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "container_meta.h"
#include "containers.h"
#include "daemon.h"
#include "json.h"
#include "log.h"
#include "loop.h"
#include "sandbox.h"

static const char *hook_dir(const struct agent *a)
{
	return a->opt.containers_dir ?: CONTAINER_HOOK_DIR_DEFAULT;
}

/* mkdir -p, 0755: the hook's directory and its parents. */
static int make_dirs(const char *dir)
{
	char p[4096], *s;

	if (snprintf(p, sizeof(p), "%s", dir) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	for (s = p + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		if (mkdir(p, 0755) && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	return mkdir(p, 0755) && errno != EEXIST ? -errno : 0;
}

void containers__init(struct agent *a)
{
	const char *dir = hook_dir(a);
	int err;

	a->ctr_src = (struct container_sources){ .root = "", .hook_dir = dir };
	/* The hook makes it too; made here so that it is watched from the
	 * start (a runtime's first container comes later). */
	err = make_dirs(dir);
	a->ctr_ino_fd = err ? -1 : inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (a->ctr_ino_fd >= 0 &&
	    inotify_add_watch(a->ctr_ino_fd, dir, IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE) < 0) {
		err = -errno;
		close(a->ctr_ino_fd);
		a->ctr_ino_fd = -1;
	} else if (!err && a->ctr_ino_fd < 0) {
		err = -errno;
	}
	if (err)
		pr_warn("containers", "watching %s failed: %s; container names from `stockade oci-hook` arrive with the next scan (every %d s)",
			dir, strerror(-err), SCAN_INTERVAL_MS / 1000);
}

/* The names of c's container arrived (or may have): read them again. */
static void refresh(struct agent *a, struct sandbox_cg *cg)
{
	struct container_info *c = cg->ctr, *nc;
	struct container_meta m;

	if (!c || c->meta.have || containers__meta(a, &c->id, &m))
		return;
	nc = records__container_info(&c->id, &m);
	if (nc) {
		free(c);
		cg->ctr = nc;
	}
	/* Deny-all for want of them: judged again with them. Others were
	 * decided by what needs no names (a runtime, an id, a glob), and
	 * a container's start must not cost a reselection of every
	 * tracked cgroup. */
	if (cg->policy_id == POLICY_ID_CONFLICT)
		a->rejudge = true;
}

/*
 * A hook record came or went: names for the cgroups of that id that lack
 * them (every such cgroup when the queue overflowed), and a scan, which
 * decides the cgroups waiting for theirs. By the event's name, so that a
 * container's start costs a read for its own id, not one per container
 * the node runs.
 */
static int on_hook_dir(struct loop_source *s, uint32_t revents, void *userdata)
{
	struct agent *a = userdata;
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *e;
	char id[CONTAINER_ID_MAX + 1];
	ssize_t len;
	size_t i, n;
	bool all = false;

	(void)s;
	(void)revents;
	a->meta_cache.valid = false;
	while ((len = read(a->ctr_ino_fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + len; p += sizeof(*e) + e->len) {
			e = (const struct inotify_event *)p;
			if (e->mask & IN_Q_OVERFLOW) {
				all = true;
				continue;
			}
			n = e->len ? strnlen(e->name, e->len) : 0;
			if (n <= 5 || n - 5 > CONTAINER_ID_MAX || e->name[0] == '.' ||
			    strcmp(e->name + n - 5, ".json"))
				continue;
			memcpy(id, e->name, n - 5);
			id[n - 5] = '\0';
			for (i = 0; i < a->cgt.n; i++)
				if (a->cgt.v[i].ctr && !strcmp(a->cgt.v[i].ctr->id.id, id))
					refresh(a, &a->cgt.v[i]);
		}
	}
	for (i = 0; all && i < a->cgt.n; i++)
		refresh(a, &a->cgt.v[i]);
	a->rescan = true;
	return 0;
}

int containers__loop_add(struct agent *a, struct loop *l)
{
	if (a->ctr_ino_fd < 0)
		return 0;
	return loop__add_io(l, a->ctr_ino_fd, LOOP_PRIO_FIRST, on_hook_dir, a) ? 0 : -errno;
}

void containers__free(struct agent *a)
{
	free(a->held);
	a->held = NULL;
	a->n_held = 0;
	if (a->ctr_ino_fd >= 0)
		close(a->ctr_ino_fd);
	a->ctr_ino_fd = -1;
}

int containers__meta(void *agent, const struct container_id *cid,
		     struct container_meta *out)
{
	struct agent *a = agent;
	struct meta_cache *mc = &a->meta_cache;
	char why[256] = "";
	int err;

	/* One container's names are asked for by every policy that needs
	 * them, in one scan: read once per scan (the hook's directory
	 * changing forgets it, on_hook_dir()). */
	if (mc->valid && !a->in_inotify && mc->gen == a->scan_gen &&
	    !memcmp(&mc->cid, cid, sizeof(*cid))) {
		*out = mc->m;
		return mc->err;
	}
	memset(out, 0, sizeof(*out));
	err = container_meta__load_why(&a->ctr_src, cid, out, why, sizeof(why));
	if (err && err != -ENOENT)
		/* Refused names select nothing by name: said once per read. */
		pr_warn("containers", "the names of %s container %.12s are refused: %s; it is judged by what its cgroup path says",
			container__runtime_name(cid->runtime), cid->id,
			why[0] ? why : strerror(-err));
	if (err)
		memset(out, 0, sizeof(*out));
	mc->valid = true;
	mc->gen = a->scan_gen;
	mc->cid = *cid;
	mc->m = *out;
	mc->err = err;
	return err;
}

bool containers__may_wait(struct agent *a, const char *rel, uint64_t id)
{
	const struct watch_dir *under = parent_wd(a, rel);
	int64_t us;

	/* Waiting leaves it as it is: pending (judged by its watched
	 * directory's candidate) only right below an armed one; elsewhere
	 * (a layout no glob watches, the watch not armed) it would run
	 * unconfined meanwhile, so it is decided now. Nor does a cgroup made
	 * before this agent wait: a running container's directory may look
	 * new (its ctime moves with its children), and it would run
	 * unconfined for the wait. */
	if (!under || !under->armed || !under->entry || !cg_is_fresh(a, rel, id))
		return false;
	us = pending_us_of(a, rel, id);
	return us >= 0 && us < (int64_t)CONTAINER_META_WAIT_MS * 1000;
}

void containers__track(struct agent *a, struct sandbox_cg *cg)
{
	struct container_id id;
	struct container_meta m;

	free(cg->ctr);
	cg->ctr = NULL;
	if (container__resolve(cg->path, &id))
		return;
	containers__meta(a, &id, &m);
	/* NULL when memory ran out: its records name no container. */
	cg->ctr = records__container_info(&id, &m);
}

unsigned int containers__count(const struct agent *a)
{
	unsigned int n = 0;
	size_t i;

	for (i = 0; i < a->cgt.n; i++) {
		const struct sandbox_cg *cg = &a->cgt.v[i];

		n += cg->ctr && cg->ctr->id.path_len == strlen(cg->path);
	}
	return n;
}

void containers__outside(struct agent *a, const char *rel, uint64_t id)
{
	const char *names[POLICY_MAX];
	struct container_id cid;
	size_t i, j, n = 0;

	if (!container__resolve(rel, &cid) && cid.path_len == strlen(rel))
		return;	/* a container no selector wanted */
	for (i = 0; i < a->set.n; i++) {
		const struct policy *p = a->set.v[i];

		for (j = p->n_cgroups_user; j < p->n_cgroups; j++)
			if (!fnmatch(p->cgroups[j], rel, FNM_PATHNAME)) {
				names[n++] = p->name;
				break;
			}
	}
	if (!n)
		return;
	events__begin(&a->ev, "container_unresolved");
	json_str_raw(&a->ev.j, "cgroup", rel, strlen(rel));
	json_u64(&a->ev.j, "cgroup_id", id);
	json_str_array(&a->ev.j, "policies", names, n);
	json_str(&a->ev.j, "reason", cid.runtime ? "inside_container" : "no_path_form");
	events__emit(&a->ev);
}

void containers__names_unknown(struct agent *a, const char *rel, uint64_t id,
			       const char *const *policies, size_t n)
{
	pr_warn("containers", "%s: the container's names are unknown (not written within %d s, or refused), and %s%s need%s them: it is confined deny-all until they arrive; install `stockade oci-hook` as a createRuntime hook, or check the runtime's state files",
		rel, CONTAINER_META_WAIT_MS / 1000, policies[0], n > 1 ? " and others" : "",
		n > 1 ? "" : "s");
	events__begin(&a->ev, "container_unresolved");
	json_str_raw(&a->ev.j, "cgroup", rel, strlen(rel));
	json_u64(&a->ev.j, "cgroup_id", id);
	json_str_array(&a->ev.j, "policies", policies, n);
	json_str(&a->ev.j, "reason", "names_unknown");
	json_str(&a->ev.j, "action", "deny_all");
	events__emit(&a->ev);
}

void containers__hold(struct agent *a, uint64_t id)
{
	size_t i;

	for (i = 0; i < a->n_held; i++)
		if (a->held[i].id == id)
			break;
	if (i == a->n_held) {
		/* No more waiting cgroups than confined ones can be: past
		 * that, it still waits (pending), only uncounted. */
		if (a->n_held >= SANDBOX_MAX_CGROUPS)
			return;
		if (a->n_held % 64 == 0) {
			struct held_cg *v = realloc(a->held, (a->n_held + 64) * sizeof(*v));

			if (!v)
				return;	/* counted as the scan's find, no more */
			a->held = v;
		}
		a->held[a->n_held++].id = id;
	}
	a->held[i].gen = a->scan_gen;
}

bool containers__release(struct agent *a, uint64_t id)
{
	size_t i;

	for (i = 0; i < a->n_held; i++)
		if (a->held[i].id == id) {
			a->held[i] = a->held[--a->n_held];
			return true;
		}
	return false;
}

void containers__sweep_held(struct agent *a)
{
	size_t i;

	for (i = 0; i < a->n_held;) {
		if (a->held[i].gen != a->scan_gen)
			a->held[i] = a->held[--a->n_held];
		else
			i++;
	}
}
