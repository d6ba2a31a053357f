// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * What a cgroup selector (a shell glob over "/a/b" paths, '/' never
 * matched by a wildcard) can select, before the cgroups exist: the zero
 * window's watched directories (include/sandbox.h). Pure string work,
 * unit-tested in tests/unit/test_policy.c; the agent asks the filesystem
 * which of the directories exist.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "policy.h"

/* The next component of *p ("/a/b" -> "a", then "b"), into buf. */
static const char *next_comp(const char **p, char *buf, size_t len)
{
	const char *s = *p, *e;
	size_t n;

	while (*s == '/')
		s++;
	if (!*s)
		return NULL;
	e = strchr(s, '/');
	n = e ? (size_t)(e - s) : strlen(s);
	if (n >= len)
		n = len - 1;	/* longer than any cgroup name: cannot match */
	memcpy(buf, s, n);
	buf[n] = '\0';
	*p = e ? e : s + strlen(s);
	return buf;
}

static bool has_wild(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

int select__depth(const char *sel)
{
	char c[256];
	int n = 0;

	while (next_comp(&sel, c, sizeof(c)))
		n++;
	return n;
}

bool select__prefix_match(const char *sel, const char *rel)
{
	char cs[256], cr[256];

	for (;;) {
		if (!next_comp(&rel, cr, sizeof(cr)))
			return next_comp(&sel, cs, sizeof(cs)) != NULL;
		if (!next_comp(&sel, cs, sizeof(cs)))
			return false;	/* rel is as deep as sel, or deeper */
		if (fnmatch(cs, cr, 0))
			return false;
	}
}

int select__watch_base(const char *sel, char *out, size_t len)
{
	const char *p = sel, *last = sel;
	char c[256];
	size_t n;

	while (next_comp(&p, c, sizeof(c))) {
		if (has_wild(c))
			break;
		last = p;
	}
	/* A literal selector: its parent. */
	if (last == sel + strlen(sel)) {
		const char *slash = strrchr(sel, '/');

		last = slash ? slash : sel;
	}
	n = (size_t)(last - sel);
	while (n > 0 && sel[n - 1] == '/')
		n--;
	if (n >= len)
		return -ENAMETOOLONG;
	memcpy(out, sel, n);
	out[n] = '\0';
	return 0;
}

bool select__is_literal(const char *sel)
{
	return !has_wild(sel);
}
