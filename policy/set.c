/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * policy_set__load(): files and directories -> one checked set.
 *
 * All or nothing: a set with one bad file is not returned at all, so the
 * agent never confines some sandboxes under a policy set the operator did
 * not finish writing. Every file is still read, so one run reports every
 * problem.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy.h"

struct loader {
	struct policy_set set;
	size_t cap;
	struct policy_diag *diag;
	size_t nerr;
	int err;		/* -ENOMEM: stop at once */
};

static void fail(struct loader *l, int err)
{
	l->nerr++;
	if (err == -ENOMEM)
		l->err = err;
}

static void __attribute__((format(printf, 2, 3)))
errf(struct loader *l, const char *fmt, ...)
{
	char msg[POLICY_DIAG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fail(l, policy_diag__add(l->diag, "%s", msg));
}

static int add(struct loader *l, struct policy *p)
{
	if (l->set.n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		struct policy **v = realloc(l->set.v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->set.v = v;
		l->cap = cap;
	}
	l->set.v[l->set.n++] = p;
	return 0;
}

/* Read at most POLICY_FILE_MAX + 1 bytes: enough to tell "too big" without
 * trusting st_size, which a growing file or /proc would get wrong. */
int policy__read_file(const char *path, char **out, size_t *out_len,
		      char *why, size_t why_len)
{
	size_t len = 0, cap = POLICY_FILE_MAX + 1;
	char *buf = NULL;
	struct stat st;
	ssize_t r;
	int fd, err = 0;

	*out = NULL;
	/* O_NONBLOCK: a FIFO named x.yaml must not hang the agent. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		err = -errno;
		snprintf(why, why_len, "%s: cannot open: %s", path, strerror(errno));
		return err;
	}
	if (fstat(fd, &st)) {
		err = -errno;
		snprintf(why, why_len, "%s: cannot stat: %s", path, strerror(errno));
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -EINVAL;
		snprintf(why, why_len, "%s: not a regular file; expected a policy file or a directory of them",
			 path);
		goto cleanup;
	}
	buf = malloc(cap);
	if (!buf) {
		err = -ENOMEM;
		snprintf(why, why_len, "%s: out of memory", path);
		goto cleanup;
	}
	while (len < cap && (r = read(fd, buf + len, cap - len)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			snprintf(why, why_len, "%s: cannot read: %s", path, strerror(errno));
			goto cleanup;
		}
		len += (size_t)r;
	}
	if (len > POLICY_FILE_MAX) {
		err = -EFBIG;
		snprintf(why, why_len, "%s: larger than %d bytes; a policy file may hold at most 1 MiB",
			 path, POLICY_FILE_MAX);
		goto cleanup;
	}
	*out = buf;
	*out_len = len;
	buf = NULL;
cleanup:
	free(buf);
	close(fd);
	return err;
}

static void load_file(struct loader *l, const char *path)
{
	char why[POLICY_DIAG_MAX], *buf = NULL;
	struct policy *p = NULL;
	size_t len = 0;
	int err;

	err = policy__read_file(path, &buf, &len, why, sizeof(why));
	if (err == -ENOMEM) {
		fail(l, err);
		return;
	}
	if (err) {
		errf(l, "%s", why);
		return;
	}
	err = policy__parse(path, buf, len, &p, l->diag);
	if (err) {
		fail(l, err);
		goto cleanup;
	}
	/* Of the bytes parsed, not of the file read again later: the two
	 * could differ while an editor saves. */
	p->hash = policy__hash(buf, len);
	if (add(l, p)) {
		policy__free(p);
		fail(l, -ENOMEM);
	}
cleanup:
	free(buf);
}

uint64_t policy__hash(const void *buf, size_t len)
{
	const unsigned char *b = buf;
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static int is_policy_file(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	/* Dot files are editor droppings (.#x.yaml, .x.yaml.swp), not policy. */
	if (d->d_name[0] == '.')
		return 0;
	return (n > 5 && strcmp(d->d_name + n - 5, ".yaml") == 0) ||
	       (n > 4 && strcmp(d->d_name + n - 4, ".yml") == 0);
}

/* Byte order, not the locale's: the load order must not depend on LANG. */
static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static void load_dir(struct loader *l, const char *dir)
{
	size_t dlen = strlen(dir);
	struct dirent **ents = NULL;
	char *path;
	int i, n;

	n = scandir(dir, &ents, is_policy_file, by_name);
	if (n < 0) {
		errf(l, "%s: cannot list directory: %s", dir, strerror(errno));
		return;
	}
	if (n == 0)
		errf(l, "%s: no policy files (*.yaml, *.yml) in this directory",
		     dir);
	for (i = 0; i < n; i++) {
		if (!l->err) {
			/* "dir/" + name: no "//" when the caller wrote "dir/". */
			if (asprintf(&path, "%s%s%s", dir,
				     dlen && dir[dlen - 1] == '/' ? "" : "/",
				     ents[i]->d_name) < 0) {
				fail(l, -ENOMEM);
			} else {
				load_file(l, path);
				free(path);
			}
		}
		free(ents[i]);
	}
	free(ents);
}

/*
 * Set-wide uniqueness: names, and cgroup selector strings (one selector in
 * two policies would leave the cgroup's policy to load order). Sorting
 * keeps this O(n log n) with hundreds of thousands of selectors.
 */
struct claim {
	const char *key;
	size_t pol, idx;
	struct policy_pos pos;
};

static int by_claim(const void *a, const void *b)
{
	const struct claim *x = a, *y = b;
	int d = strcmp(x->key, y->key);

	if (d)
		return d;
	if (x->pol != y->pol)
		return x->pol < y->pol ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static void check_unique(struct loader *l, bool selectors)
{
	struct policy **v = l->set.v;
	struct claim *cl;
	size_t i, j, n = 0;

	for (i = 0; i < l->set.n; i++)
		n += selectors ? v[i]->n_cgroups_user : 1;
	cl = calloc(n ? n : 1, sizeof(*cl));
	if (!cl) {
		fail(l, -ENOMEM);
		return;
	}
	n = 0;
	for (i = 0; i < l->set.n; i++) {
		if (!selectors) {
			cl[n++] = (struct claim){ v[i]->name, i, 0, v[i]->name_pos };
			continue;
		}
		/* Only the globs the files list: the path forms of two
		 * policies' container selectors are the same globs, and the
		 * containers decide between them (a cgroup both select is a
		 * conflict, confined deny-all, and logged). */
		for (j = 0; j < v[i]->n_cgroups_user; j++)
			cl[n++] = (struct claim){ v[i]->cgroups[j], i, j,
						  v[i]->cgroups_pos[j] };
	}
	qsort(cl, n, sizeof(*cl), by_claim);
	/* Each later claim of a key is reported against its first. */
	for (i = 0, j = 0; i < n; i++) {
		const struct policy *first, *dup = v[cl[i].pol];

		if (strcmp(cl[i].key, cl[j].key) != 0)
			j = i;
		if (i == j)
			continue;
		first = v[cl[j].pol];
		if (selectors)
			errf(l, "%s:%d:%d: cgroups[%zu]: selector '%s' is claimed by both '%s' and '%s' (%s:%d:%d); give each selector to one policy",
			     dup->file, cl[i].pos.line, cl[i].pos.col, cl[i].idx,
			     cl[i].key, dup->name, first->name, first->file,
			     cl[j].pos.line, cl[j].pos.col);
		else
			errf(l, "%s:%d:%d: name: policy '%s' is already defined in %s:%d:%d; policy names must be unique",
			     dup->file, cl[i].pos.line, cl[i].pos.col, cl[i].key,
			     first->file, cl[j].pos.line, cl[j].pos.col);
	}
	free(cl);
}

int policy_set__load(const char *const *paths, size_t n_paths,
		     struct policy_set *set, struct policy_diag *diag)
{
	struct loader l = { .diag = diag };
	struct stat st;
	size_t i;

	set->v = NULL;
	set->n = 0;
	if (n_paths == 0)
		errf(&l, "policy: no policy path given; name a policy file or a directory of them");
	for (i = 0; i < n_paths && !l.err; i++) {
		if (stat(paths[i], &st))
			errf(&l, "%s: cannot load: %s", paths[i], strerror(errno));
		else if (S_ISDIR(st.st_mode))
			load_dir(&l, paths[i]);
		else
			load_file(&l, paths[i]);
	}
	if (!l.err)
		check_unique(&l, false);
	if (!l.err)
		check_unique(&l, true);
	if (l.err || l.nerr) {
		policy_set__free(&l.set);
		return l.err ? l.err : -EINVAL;
	}
	*set = l.set;
	return 0;
}

void policy_set__free(struct policy_set *set)
{
	size_t i;

	if (!set)
		return;
	for (i = 0; i < set->n; i++)
		policy__free(set->v[i]);
	free(set->v);
	set->v = NULL;
	set->n = 0;
}
