// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "cgroup.h"
#include "log.h"

static bool is_cgroup2(const char *path)
{
	struct statfs sf;

	return statfs(path, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC;
}

int cgroup_root__probe(const char *want, char *out, size_t len,
		       char *why, size_t why_len)
{
	static const char *const tries[] = { "/sys/fs/cgroup",
					     "/sys/fs/cgroup/unified" };
	char line[4096], mnt[PATH_MAX];
	FILE *f;
	size_t i;

	if (want) {
		if (!is_cgroup2(want)) {
			snprintf(why, why_len, "%s is not a cgroup2 mount; pass --cgroup-root the directory where cgroup2 is mounted (see /proc/self/mountinfo)",
				 want);
			return -EINVAL;
		}
		snprintf(out, len, "%s", want);
		return 0;
	}
	for (i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
		if (is_cgroup2(tries[i])) {
			snprintf(out, len, "%s", tries[i]);
			return 0;
		}
	}
	f = fopen("/proc/self/mountinfo", "re");
	while (f && fgets(line, sizeof(line), f)) {
		/* "... mountpoint ... - cgroup2 ..." */
		if (!strstr(line, " - cgroup2 "))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1 &&
		    is_cgroup2(mnt)) {
			snprintf(out, len, "%s", mnt);
			fclose(f);
			return 0;
		}
	}
	if (f)
		fclose(f);
	snprintf(why, why_len, "no cgroup2 mount found; mount one (mount -t cgroup2 none /sys/fs/cgroup) or pass --cgroup-root DIR");
	return -ENOENT;
}

int cgroup_root__find(const char *want, char *out, size_t len)
{
	char why[PATH_MAX + 128];
	int err = cgroup_root__probe(want, out, len, why, sizeof(why));

	if (err)
		pr_err("cgroup", "%s", why);
	return err;
}

static int walk_dir(int dfd, char *rel, size_t rel_len, cgroup_walk_fn fn,
		    void *parent_data, void *ctx)
{
	struct dirent *de;
	DIR *d;
	int ret = 0;

	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return -errno;
	}
	while ((de = readdir(d))) {
		struct stat st;
		size_t n;
		void *data;
		int cfd;

		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") ||
		    !strcmp(de->d_name, ".."))
			continue;
		n = strlen(de->d_name);
		if (rel_len + 1 + n >= PATH_MAX)
			continue;	/* the kernel's own limit; cannot happen */
		cfd = openat(dirfd(d), de->d_name,
			     O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (cfd < 0 && errno == ENOENT)
			continue;	/* removed while we walked */
		/* Any other failure (EMFILE from a lowered RLIMIT_NOFILE...)
		 * fails the walk: a cgroup we could not see must not look
		 * removed, or its sandbox would be detached. */
		if (cfd < 0) {
			ret = -errno;
			break;
		}
		if (fstat(cfd, &st)) {
			ret = -errno;
			close(cfd);
			break;
		}
		rel[rel_len] = '/';
		memcpy(rel + rel_len + 1, de->d_name, n + 1);
		data = fn(rel, st.st_ino, parent_data, ctx);
		ret = walk_dir(cfd, rel, rel_len + 1 + n, fn, data, ctx);
		rel[rel_len] = '\0';
		if (ret && ret != -ENOENT)
			break;
		ret = 0;
	}
	closedir(d);
	return ret;
}

int cgroup__walk(const char *root, cgroup_walk_fn fn, void *ctx)
{
	char rel[PATH_MAX] = "";
	int dfd;

	dfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	return walk_dir(dfd, rel, 0, fn, NULL, ctx);
}

uint64_t cgroup__id(const char *root, const char *rel)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s%s", root, rel);
	if (stat(path, &st))
		return 0;
	return st.st_ino;
}

bool cgroup__match(const char *selector, const char *rel)
{
	return fnmatch(selector, rel, FNM_PATHNAME) == 0;
}

static void *paths_add(const char *rel, uint64_t id, void *parent, void *ctx)
{
	struct cgroup_paths *t = ctx;
	struct cgroup_path *v;

	(void)parent;
	if (t->err)
		return NULL;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;

		v = realloc(t->v, cap * sizeof(*v));
		if (!v) {
			t->err = -ENOMEM;
			return NULL;
		}
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n].id = id;
	t->v[t->n].path = strdup(rel);
	if (!t->v[t->n].path)
		t->err = -ENOMEM;
	else
		t->n++;
	return NULL;
}

static int by_id(const void *a, const void *b)
{
	const struct cgroup_path *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

int cgroup_paths__load(const char *root, struct cgroup_paths *t)
{
	int err;

	memset(t, 0, sizeof(*t));
	err = cgroup__walk(root, paths_add, t);
	err = err ?: t->err;
	if (err) {
		cgroup_paths__free(t);
		return err;
	}
	qsort(t->v, t->n, sizeof(*t->v), by_id);
	return 0;
}

const char *cgroup_paths__find(const struct cgroup_paths *t, uint64_t id)
{
	struct cgroup_path key = { .id = id }, *hit;

	if (!t->n)
		return NULL;
	hit = bsearch(&key, t->v, t->n, sizeof(*t->v), by_id);
	return hit ? hit->path : NULL;
}

void cgroup_paths__free(struct cgroup_paths *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->v[i].path);
	free(t->v);
	memset(t, 0, sizeof(*t));
}
