// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* `stockade probe`'s pure half (agent/probe.h). */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probe.h"

/* One character a bracket expression at p ("[...]") accepts; *end after
 * it. 0 when none of a-z0-9 would do. */
static char bracket_pick(const char *p, const char **end)
{
	static const char cand[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	const char *q = p + 1;
	char pat[64];
	size_t n;
	int i;

	if (*q == '!' || *q == '^')
		q++;
	if (*q == ']')
		q++;		/* a leading ']' is a member */
	q = strchr(q, ']');
	if (!q || (size_t)(q - p) + 2 > sizeof(pat))
		return 0;
	n = (size_t)(q - p) + 1;
	*end = q + 1;
	memcpy(pat, p, n);
	pat[n] = '\0';
	for (i = 0; cand[i]; i++) {
		char s[2] = { cand[i], 0 };

		if (!fnmatch(pat, s, 0))
			return cand[i];
	}
	return 0;
}

int probe_sibling(const char *selector, const char *tag, char *out, size_t len)
{
	const char *last = strrchr(selector, '/'), *p;
	bool wild = false, star = false;
	size_t o;

	if (!last || strlen(selector) + strlen(tag) + 1 > len)
		return -ENAMETOOLONG;
	o = (size_t)(last - selector) + 1;
	memcpy(out, selector, o);
	for (p = last + 1; *p;) {
		char c = *p;

		if (o + strlen(tag) + 2 > len)
			return -ENAMETOOLONG;
		if (c == '\\' && p[1]) {
			out[o++] = p[1];
			p += 2;
		} else if (c == '*') {
			wild = true;
			if (!star) {
				memcpy(out + o, tag, strlen(tag));
				o += strlen(tag);
				star = true;
			}
			p++;
		} else if (c == '?') {
			wild = true;
			out[o++] = 'p';
			p++;
		} else if (c == '[') {
			const char *end = NULL;
			char pick = bracket_pick(p, &end);

			if (!pick)
				return -EINVAL;
			wild = true;
			out[o++] = pick;
			p = end;
		} else {
			out[o++] = c;
			p++;
		}
	}
	out[o] = '\0';
	if (!wild)
		return -ENOENT;
	return fnmatch(selector, out, FNM_PATHNAME) ? -EINVAL : 0;
}

/* The value of top-level member key in a flat JSON object: a pointer
 * just past `"key":`, or NULL. */
static const char *member(const char *line, size_t len, const char *key)
{
	size_t k = strlen(key);
	const char *p = line, *end = line + len;
	bool in_str = false;
	int depth = 0;

	for (; p < end; p++) {
		if (in_str) {
			if (*p == '\\')
				p++;
			else if (*p == '"')
				in_str = false;
			continue;
		}
		if (*p == '{' || *p == '[') {
			depth++;
		} else if (*p == '}' || *p == ']') {
			depth--;
		} else if (*p == '"') {
			if (depth == 1 && (size_t)(end - p) > k + 2 &&
			    !memcmp(p + 1, key, k) && p[k + 1] == '"' && p[k + 2] == ':')
				return p + k + 3;
			in_str = true;
		}
	}
	return NULL;
}

const char *logrec_raw(const char *line, size_t len, const char *key)
{
	return member(line, len, key);
}

/* A string member into out (escapes kept as written); false if absent. */
bool logrec_str(const char *line, size_t len, const char *key,
		char *out, size_t out_len)
{
	const char *v = member(line, len, key), *end = line + len;
	size_t n = 0;

	if (!v || v >= end || *v != '"')
		return false;
	for (v++; v < end && *v != '"' && n + 1 < out_len; v++) {
		if (*v == '\\' && v + 1 < end)
			out[n++] = *v++;
		out[n++] = *v;
	}
	out[n < out_len ? n : out_len - 1] = '\0';
	return true;
}

bool logrec_u64(const char *line, size_t len, const char *key,
		uint64_t *out)
{
	const char *v = member(line, len, key), *end = line + len;
	uint64_t x = 0;
	bool any = false;

	if (!v)
		return false;
	for (; v < end && *v >= '0' && *v <= '9'; v++) {
		if (x > (UINT64_MAX - 9) / 10)
			return false;
		x = x * 10 + (uint64_t)(*v - '0');
		any = true;
	}
	*out = x;
	return any;
}

int64_t probe_parse_ts(const char *s)
{
	struct tm tm = { 0 };
	int64_t ns = 0, scale = 100000000;
	const char *p;
	time_t t;

	p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!p)
		return 0;
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++) {
			ns += (*p - '0') * scale;
			scale /= 10;
		}
	}
	if (*p != 'Z')
		return 0;
	t = timegm(&tm);
	/* Before 1970 or past 2262 does not fit ns in 64 bits: malformed. */
	if (t <= 0 || t >= INT64_MAX / 1000000000 - 1)
		return 0;
	return (int64_t)t * 1000000000 + ns;
}

bool probe_parse_rec(const char *line, size_t len, struct probe_rec *out)
{
	char ts[48];

	memset(out, 0, sizeof(*out));
	if (!len || line[0] != '{')
		return false;
	if (!logrec_str(line, len, "event", out->event, sizeof(out->event)) ||
	    !logrec_u64(line, len, "seq", &out->seq))
		return false;
	logrec_str(line, len, "kind", out->kind, sizeof(out->kind));
	logrec_str(line, len, "op", out->op, sizeof(out->op));
	logrec_str(line, len, "cgroup", out->cgroup, sizeof(out->cgroup));
	out->has_pid = logrec_u64(line, len, "pid", &out->pid);
	logrec_u64(line, len, "count", &out->count);
	if (logrec_str(line, len, "ts", ts, sizeof(ts)))
		out->ts_ns = probe_parse_ts(ts);
	return true;
}
