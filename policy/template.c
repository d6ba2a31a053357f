// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Per-execution folders (policy/policy.h): `{cgroup}` and `{cgroup_path}`
 * in files.read and files.write, expanded per selected cgroup by the file
 * rule compiler (agent/file_rules.c) and the manifest (agent/manifest.c).
 * One expansion for both, so that what is judged and what is reported
 * cannot drift apart.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "policy.h"

static const char *const placeholders[] = {
	[POLICY_TMPL_CGROUP] = "{cgroup}",
	[POLICY_TMPL_CGROUP_PATH] = "{cgroup_path}",
};

int policy_tmpl__at(const char *s)
{
	size_t i;

	for (i = 0; i < sizeof(placeholders) / sizeof(placeholders[0]); i++)
		if (!strncmp(s, placeholders[i], strlen(placeholders[i])))
			return (int)i;
	return -1;
}

bool policy_tmpl__has(const char *path)
{
	const char *b;

	/* NULL: an entry the parser refused (its problem is reported). */
	if (!path)
		return false;
	for (b = strchr(path, '{'); b; b = strchr(b + 1, '{'))
		if (policy_tmpl__at(b) >= 0)
			return true;
	return false;
}

unsigned int policy_tmpl__kinds(const char *path)
{
	unsigned int kinds = 0;
	const char *b;
	int k;

	if (!path)
		return 0;
	for (b = strchr(path, '{'); b; b = strchr(b + 1, '{'))
		if ((k = policy_tmpl__at(b)) >= 0)
			kinds |= 1u << k;
	return kinds;
}

bool policy__has_templates(const struct policy *p)
{
	size_t i;

	for (i = 0; i < p->files.n_read; i++)
		if (policy_tmpl__has(p->files.read[i].path))
			return true;
	for (i = 0; i < p->files.n_write; i++)
		if (policy_tmpl__has(p->files.write[i].path))
			return true;
	return false;
}

void policy_tmpl__base(const char *path, char *out, size_t len)
{
	const char *b = path;
	size_t n;

	while ((b = strchr(b, '{')) && policy_tmpl__at(b) < 0)
		b++;
	n = b ? (size_t)(b - path) : strlen(path);
	while (n > 1 && path[n - 1] != '/')
		n--;
	if (n > 1)
		n--;
	snprintf(out, len, "%.*s", (int)n, path);
}

int policy_tmpl__expand(const char *tmpl, const char *cg, char *out, size_t len)
{
	const char *last, *rel, *s;
	size_t n = 0, add;
	int k;

	/* The cgroup2 root is never a sandbox; a name with '/' is no name. */
	if (!cg || cg[0] != '/' || !cg[1])
		return -EINVAL;
	last = strrchr(cg, '/') + 1;
	rel = cg + 1;
	if (!*last)
		return -EINVAL;
	/* A name with a control character would put one in a rule (and in
	 * every record that quotes it): the policy's paths may have none. */
	for (s = cg; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return -EINVAL;
	for (s = tmpl; *s;) {
		const char *v = s;

		k = *s == '{' ? policy_tmpl__at(s) : -1;
		if (k < 0) {
			add = 1;
		} else {
			v = k == POLICY_TMPL_CGROUP ? last : rel;
			add = strlen(v);
		}
		if (n + add + 1 > len)
			return -ENAMETOOLONG;
		memcpy(out + n, v, add);
		n += add;
		s += k < 0 ? 1 : strlen(placeholders[k]);
	}
	out[n] = '\0';
	return (int)n;
}
