// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file_rules.h"

enum src {
	SRC_READ = 1 << 0,
	SRC_WRITE = 1 << 1,
	SRC_DENY = 1 << 2,
	SRC_PROTECTED = 1 << 3,
	SRC_OVERRIDE = 1 << 4,
	SRC_SINK = 1 << 5,
	SRC_ANCESTOR = 1 << 6,	/* above a deny or protected boundary */
	SRC_EXEC = 1 << 7,	/* an exec.paths entry */
	/* The literal base of a templated write path: every execution's
	 * folder lies below it, so nothing there may run (W^X across the
	 * executions of a policy, not only within one). */
	SRC_NOEXEC = 1 << 8,
};

/*
 * Devices that hold no data: reading or writing them discloses and
 * changes nothing, and shells cannot work without /dev/null. They stay
 * readable and writable whatever the scope says (a `deny` or protected
 * prefix still wins).
 */
static const char *const sinks[] = {
	"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
};

struct boundary {
	char *path;
	unsigned int src;	/* enum src: which lists name it */
};

struct bset {
	struct boundary *v;
	size_t n, cap;
};

static int bset_add(struct bset *b, const char *path, unsigned int src)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		struct boundary *v = realloc(b->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		b->v = v;
		b->cap = cap;
	}
	b->v[b->n].path = strdup(path);
	if (!b->v[b->n].path)
		return -ENOMEM;
	b->v[b->n++].src = src;
	return 0;
}

static int bcmp_path(const void *a, const void *b)
{
	return strcmp(((const struct boundary *)a)->path,
		      ((const struct boundary *)b)->path);
}

/* Sort and merge duplicates, OR-ing their sources. */
static void bset_sort(struct bset *b)
{
	size_t i, out = 0;

	if (!b->n)
		return;
	qsort(b->v, b->n, sizeof(*b->v), bcmp_path);
	for (i = 0; i < b->n; i++) {
		if (out && !strcmp(b->v[out - 1].path, b->v[i].path)) {
			b->v[out - 1].src |= b->v[i].src;
			free(b->v[i].path);
			continue;
		}
		b->v[out++] = b->v[i];
	}
	b->n = out;
}

static const struct boundary *bset_find(const struct bset *b, const char *path)
{
	struct boundary k = { .path = (char *)path };

	return bsearch(&k, b->v, b->n, sizeof(*b->v), bcmp_path);
}

/*
 * The sources of every prefix of path (itself included), deepest first
 * for protected/override: returns the OR of read/write/deny sources and
 * sets *protected from the deepest protected-or-override boundary.
 */
static unsigned int covering(const struct bset *b, const char *path,
			     bool *protected)
{
	char buf[FILE_KEY_PATH + 1];
	unsigned int src = 0;
	bool decided = false;
	size_t len = strlen(path);
	const struct boundary *hit;

	*protected = false;
	memcpy(buf, path, len + 1);
	for (;;) {
		hit = bset_find(b, buf);
		if (hit) {
			src |= hit->src & (SRC_READ | SRC_WRITE | SRC_DENY | SRC_EXEC | SRC_NOEXEC);
			if (!decided && (hit->src & (SRC_PROTECTED | SRC_OVERRIDE))) {
				/* An override opens its subtree, even when it
				 * names the protected path itself. */
				*protected = !(hit->src & SRC_OVERRIDE);
				decided = true;
			}
		}
		if (len <= 1)
			break;
		while (len > 1 && buf[len - 1] != '/')
			len--;
		if (len > 1)
			len--;	/* drop the '/' too, except the root's */
		buf[len] = '\0';
	}
	return src;
}

static void key_of(struct file_key *k, __u32 policy_id, const char *path)
{
	size_t len = strlen(path);

	memset(k, 0, sizeof(*k));
	k->policy_id = policy_id;
	memcpy(k->path, path, len);
	/* "/" stays one byte: every path starts with it. */
	if (len > 1)
		k->path[len++] = '/';
	k->prefixlen = 32 + 8 * (__u32)len;
}

static int add_list(struct bset *b, const struct policy_path *v, size_t n,
		    unsigned int src)
{
	size_t i;
	int err = 0;

	for (i = 0; !err && i < n; i++)
		err = bset_add(b, v[i].path, src);
	return err;
}

/*
 * files.read or files.write: a path with placeholders is expanded for cg,
 * or, for the base scope (cg NULL), left out (include/file.h: the base
 * never opens what a per-execution folder would).
 */
static int add_tmpl_list(struct bset *b, const struct policy_path *v, size_t n,
			 unsigned int src, const char *cg, char *err, size_t errlen)
{
	char path[PATH_MAX];
	size_t i;
	int ret = 0, len;

	for (i = 0; !ret && i < n; i++) {
		if (!policy_tmpl__has(v[i].path)) {
			ret = bset_add(b, v[i].path, src);
			continue;
		}
		if (src & SRC_WRITE) {
			policy_tmpl__base(v[i].path, path, sizeof(path));
			ret = bset_add(b, path, SRC_NOEXEC);
			if (ret)
				break;
		}
		if (!cg)
			continue;
		len = policy_tmpl__expand(v[i].path, cg, path, sizeof(path));
		if (len > FILE_CG_PREFIX_MAX || len == -ENAMETOOLONG) {
			snprintf(err, errlen, "%.120s for cgroup %.80s%s is longer than %d bytes; its per-execution folder cannot be a rule, so that cgroup keeps the policy's base scope (no folder)",
				 v[i].path, cg, strlen(cg) > 80 ? "..." : "", FILE_CG_PREFIX_MAX);
			return -ENAMETOOLONG;
		}
		if (len < 0) {
			snprintf(err, errlen, "%s cannot be expanded for %s (not a cgroup path)",
				 v[i].path, cg);
			return -EINVAL;
		}
		ret = bset_add(b, path, src);
	}
	return ret;
}

/*
 * May a file under an entry with these covering sources and these flags
 * be executed or mapped executable? Readable, under `exec.paths` when
 * the policy lists them, and (W^X) not writable unless
 * exec.allow_written. Protected and denied paths keep FILE_EXEC off too,
 * though judge_ex() refuses them before it looks.
 */
static bool exec_allowed(const struct policy *p, unsigned int src,
			 unsigned int flags)
{
	if (!(flags & FILE_READ) || (flags & (FILE_DENY | FILE_PROTECTED)))
		return false;
	if (p->exec.has_paths && !(src & SRC_EXEC))
		return false;
	if ((src & SRC_NOEXEC) && !p->exec.allow_written)
		return false;
	return p->exec.allow_written || !(flags & FILE_WRITE);
}

/* Every boundary of p: its lists, the sinks, the protected paths (and
 * those below each home). */
static int add_bounds(struct bset *b, const struct policy *p, const char *cg,
		      const char *const *homes, size_t n_homes, char *err,
		      size_t errlen)
{
	char path[PATH_MAX];
	size_t i, j;
	int ret;

	ret = bset_add(b, "/", 0);
	if (!ret)
		ret = add_tmpl_list(b, p->files.read, p->files.n_read, SRC_READ,
				    cg, err, errlen);
	if (!ret)
		ret = add_tmpl_list(b, p->files.write, p->files.n_write, SRC_WRITE,
				    cg, err, errlen);
	if (!ret)
		ret = add_list(b, p->files.deny, p->files.n_deny, SRC_DENY);
	if (!ret)
		ret = add_list(b, p->exec.paths, p->exec.n_paths, SRC_EXEC);
	for (i = 0; !ret && i < p->files.n_overrides; i++)
		ret = bset_add(b, p->files.overrides[i].path, SRC_OVERRIDE);
	for (i = 0; !ret && i < sizeof(sinks) / sizeof(sinks[0]); i++)
		ret = bset_add(b, sinks[i], SRC_SINK);
	for (i = 0; !ret && i < policy_n_protected_paths; i++)
		ret = bset_add(b, policy_protected_paths[i], SRC_PROTECTED);
	for (i = 0; !ret && i < n_homes; i++) {
		for (j = 0; !ret && j < policy_n_protected_home; j++) {
			snprintf(path, sizeof(path), "%s/%s", homes[i],
				 policy_protected_home[j]);
			if (strlen(path) > FILE_PREFIX_MAX) {
				snprintf(err, errlen, "the protected path %s is longer than %d bytes; it cannot be protected, so the policy is refused",
					 path, FILE_PREFIX_MAX);
				ret = -ENAMETOOLONG;
				break;
			}
			ret = bset_add(b, path, SRC_PROTECTED);
		}
	}
	return ret;
}

/* Every directory above a deny or protected path is an entry of its own,
 * flagged, so that renaming it can be refused. b is sorted. */
static int add_ancestors(struct bset *b)
{
	char path[PATH_MAX];
	size_t i, n_before = b->n;
	int ret = 0;

	for (i = 0; !ret && i < n_before; i++) {
		size_t len;

		if (!(b->v[i].src & (SRC_DENY | SRC_PROTECTED)))
			continue;
		snprintf(path, sizeof(path), "%s", b->v[i].path);
		for (len = strlen(path); !ret && len > 1;) {
			while (len > 1 && path[len - 1] != '/')
				len--;
			if (len > 1)
				len--;
			path[len] = '\0';
			ret = bset_add(b, path, SRC_ANCESTOR);
		}
	}
	return ret;
}

/* One file_rules entry per boundary of the sorted b. */
static int add_entries(const struct bset *b, const struct policy *p,
		       __u32 policy_id, struct file_compiled *out)
{
	size_t i;

	out->v = calloc(b->n, sizeof(*out->v));
	if (!out->v)
		return -ENOMEM;
	for (i = 0; i < b->n; i++) {
		struct file_entry *e = &out->v[out->n++];
		bool protected;
		unsigned int src = covering(b, b->v[i].path, &protected);

		key_of(&e->key, policy_id, b->v[i].path);
		e->val.flags = 0;
		if (!p->files.has_read || (src & (SRC_READ | SRC_WRITE)))
			e->val.flags |= FILE_READ;
		if (src & SRC_WRITE)
			e->val.flags |= FILE_WRITE;
		if (b->v[i].src & SRC_SINK)
			e->val.flags |= FILE_READ | FILE_WRITE;
		if (b->v[i].src & SRC_ANCESTOR)
			e->val.flags |= FILE_GUARDED_BELOW;
		e->val.len = (__u16)strlen(b->v[i].path);
		if (src & SRC_DENY)
			e->val.flags |= FILE_DENY;
		if (protected)
			e->val.flags |= FILE_PROTECTED;
		if (exec_allowed(p, src, e->val.flags))
			e->val.flags |= FILE_EXEC;
	}
	return 0;
}

/* The unix_allow keys of p's net.unix_allow paths. */
static int add_unix(const struct policy *p, __u32 policy_id,
		    struct file_compiled *out)
{
	size_t i;

	if (p->net.n_unix_allow) {
		out->unix_keys = calloc(p->net.n_unix_allow, sizeof(*out->unix_keys));
		if (!out->unix_keys)
			return -ENOMEM;
	}
	for (i = 0; i < p->net.n_unix_allow; i++) {
		struct unix_key *k = &out->unix_keys[out->n_unix++];
		const char *s = p->net.unix_allow[i].path;

		memset(k, 0, sizeof(*k));
		k->policy_id = policy_id;
		/* The kernel holds an abstract name with a leading NUL. */
		if (s[0] == '@')
			memcpy(k->path + 1, s + 1, strnlen(s + 1, sizeof(k->path) - 1));
		else
			memcpy(k->path, s, strnlen(s, sizeof(k->path)));
	}
	return 0;
}

int file_rules__compile(const struct policy *p, __u32 policy_id,
			const char *const *homes, size_t n_homes,
			struct file_compiled *out, char *err, size_t errlen)
{
	return file_rules__compile_cg(p, policy_id, NULL, homes, n_homes, out,
				      err, errlen);
}

int file_rules__compile_cg(const struct policy *p, __u32 policy_id,
			   const char *cg, const char *const *homes,
			   size_t n_homes, struct file_compiled *out, char *err,
			   size_t errlen)
{
	struct bset b = { 0 };
	size_t i;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = add_bounds(&b, p, cg, homes, n_homes, err, errlen);
	if (!ret) {
		bset_sort(&b);
		ret = add_ancestors(&b);
	}
	if (!ret) {
		bset_sort(&b);
		ret = add_entries(&b, p, policy_id, out);
	}
	if (!ret)
		ret = add_unix(p, policy_id, out);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "compiling file rules: out of memory");
	if (ret)
		file_compiled__free(out);
	for (i = 0; i < b.n; i++)
		free(b.v[i].path);
	free(b.v);
	return ret;
}

int file_rules__cg_key(const struct file_key *k, uint64_t cg,
		       struct file_cg_key *out)
{
	size_t n = (k->prefixlen - 32) / 8;

	if (n > FILE_CG_KEY_PATH)
		return -ENAMETOOLONG;
	memset(out, 0, sizeof(*out));
	out->prefixlen = 96 + 8 * (__u32)n;
	out->policy_id = k->policy_id;
	out->cg_lo = (__u32)cg;
	out->cg_hi = (__u32)(cg >> 32);
	memcpy(out->path, k->path, n);
	return 0;
}

void file_compiled__free(struct file_compiled *c)
{
	free(c->v);
	free(c->unix_keys);
	memset(c, 0, sizeof(*c));
}

int file_rules__lookup(const struct file_compiled *c, __u32 policy_id,
		       const char *path)
{
	char q[PATH_MAX + 2];
	size_t i, best_len = 0, qlen;
	int best = -1;

	snprintf(q, sizeof(q), "%s/", path);
	qlen = strlen(q);
	for (i = 0; i < c->n; i++) {
		const struct file_entry *e = &c->v[i];
		size_t len = (e->key.prefixlen - 32) / 8;

		if (e->key.policy_id != policy_id || len > qlen || len < best_len ||
		    (best >= 0 && len == best_len))
			continue;
		/* The trie compares at most FILE_KEY_PATH bytes. */
		if (!memcmp(e->key.path, q, len)) {
			best = (int)e->val.flags;
			best_len = len;
			/* As the BPF side reads it: only on the entry itself. */
			if (e->val.len != strlen(path))
				best &= ~FILE_GUARDED_BELOW;
		}
	}
	return best;
}

static int homes_add(char ***v, size_t *n, size_t *cap, const char *h)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (!strcmp((*v)[i], h))
			return 0;
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		char **nv = realloc(*v, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = nc;
	}
	(*v)[*n] = strdup(h);
	if (!(*v)[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

int file_rules__homes(char ***v, size_t *n)
{
	char path[PATH_MAX], line[4096];
	struct dirent *de;
	size_t cap = 0;
	FILE *f;
	DIR *d;
	int err;

	*v = NULL;
	*n = 0;
	err = homes_add(v, n, &cap, "/root");
	d = opendir("/home");
	while (!err && d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/home/%s", de->d_name);
		err = homes_add(v, n, &cap, path);
	}
	if (d)
		closedir(d);
	/* /etc/passwd itself, not getpwent(): no NSS modules in a static
	 * agent; homes only known to LDAP and the like are not listed. */
	f = fopen("/etc/passwd", "re");
	while (!err && f && fgets(line, sizeof(line), f)) {
		char *dir = line;
		int field;

		for (field = 0; field < 5 && dir; field++) {
			dir = strchr(dir, ':');
			if (dir)
				dir++;
		}
		if (!dir)
			continue;
		dir[strcspn(dir, ":\n")] = '\0';
		/* "/" or "/nonexistent" as a home would protect too much or
		 * nothing; only real directories below the root count. */
		if (dir[0] != '/' || !dir[1] || !strcmp(dir, "/nonexistent"))
			continue;
		err = homes_add(v, n, &cap, dir);
	}
	if (f)
		fclose(f);
	return err;
}
