// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The watch filter (agent/watch_filter.h): the request parser, the
 * record's fields, the matcher. json-c reads both the request (untrusted,
 * so a real parser with its own depth limit) and the records: those are
 * the agent's own lines, but their strings hold what hostile code chose
 * (paths, comm), so they are read by the same parser, never by hand.
 */
#include <errno.h>
#include <stdint.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "watch_filter.h"

/* json-c's nesting limit for the request: a flat object of flat arrays. */
#define REQ_DEPTH	4

static const struct {
	const char *key;
	size_t off;
} list_keys[] = {
	{ "policy", offsetof(struct watch_filter, policy) },
	{ "cgroup", offsetof(struct watch_filter, cgroup) },
	{ "container", offsetof(struct watch_filter, container) },
	{ "pod", offsetof(struct watch_filter, pod) },
	{ "kind", offsetof(struct watch_filter, kind) },
	{ "reason", offsetof(struct watch_filter, reason) },
	{ "event", offsetof(struct watch_filter, event) },
};
#define N_LIST_KEYS (sizeof(list_keys) / sizeof(list_keys[0]))

static struct watch_list *list_at(struct watch_filter *f, size_t i)
{
	return (struct watch_list *)((char *)f + list_keys[i].off);
}

static int list_add1(struct watch_list *l, const char *s, size_t n)
{
	char *v;

	if (!n)
		return -EINVAL;
	if (n > WATCH_STR_MAX)
		return -ENAMETOOLONG;
	if (l->n >= WATCH_LIST_MAX)
		return -E2BIG;
	v = strndup(s, n);
	if (!v)
		return -ENOMEM;
	l->v[l->n++] = v;
	return 0;
}

int watch_list__add(struct watch_list *l, const char *s)
{
	const char *comma;
	int err;

	for (;;) {
		comma = strchr(s, ',');
		err = list_add1(l, s, comma ? (size_t)(comma - s) : strlen(s));
		if (err || !comma)
			return err;
		s = comma + 1;
	}
}

void watch_filter__free(struct watch_filter *f)
{
	size_t i, k;

	for (i = 0; i < N_LIST_KEYS; i++) {
		struct watch_list *l = list_at(f, i);

		for (k = 0; k < l->n; k++)
			free(l->v[k]);
	}
	memset(f, 0, sizeof(*f));
}

bool watch_filter__selects(const struct watch_filter *f)
{
	size_t i;

	for (i = 0; i < N_LIST_KEYS; i++)
		if (list_at((struct watch_filter *)f, i)->n)
			return true;
	return f->has_pid;
}

/* One list key's value: a string, or an array of strings. */
static int list_value(struct watch_list *l, const char *key,
		      struct json_object *v, char *err, size_t errlen)
{
	size_t i, n;
	int e = 0;

	if (json_object_is_type(v, json_type_string)) {
		e = list_add1(l, json_object_get_string(v),
			      (size_t)json_object_get_string_len(v));
	} else if (json_object_is_type(v, json_type_array)) {
		n = json_object_array_length(v);
		if (!n)
			e = -EINVAL;
		for (i = 0; i < n && !e; i++) {
			struct json_object *s = json_object_array_get_idx(v, i);

			if (!json_object_is_type(s, json_type_string)) {
				snprintf(err, errlen, "\"%s\": expected strings", key);
				return -EINVAL;
			}
			e = list_add1(l, json_object_get_string(s),
				      (size_t)json_object_get_string_len(s));
		}
	} else {
		snprintf(err, errlen, "\"%s\": expected a string or an array of strings", key);
		return -EINVAL;
	}
	if (e == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	else if (e == -E2BIG)
		snprintf(err, errlen, "\"%s\": more than %d values", key, WATCH_LIST_MAX);
	else if (e == -ENAMETOOLONG)
		snprintf(err, errlen, "\"%s\": a value longer than %d bytes", key, WATCH_STR_MAX);
	else if (e)
		snprintf(err, errlen, "\"%s\": an empty value", key);
	return e ? (e == -ENOMEM ? e : -EINVAL) : 0;
}

static int u64_value(const char *key, struct json_object *v, bool *has,
		     uint64_t *out, char *err, size_t errlen)
{
	int64_t n;

	if (!json_object_is_type(v, json_type_int)) {
		snprintf(err, errlen, "\"%s\": expected a non-negative integer", key);
		return -EINVAL;
	}
	errno = 0;
	n = json_object_get_int64(v);
	/* json-c clamps what int64 cannot hold (to INT64_MAX, with or
	 * without errno, by version): no real seq, pid or count is that. */
	if (n < 0 || n == INT64_MAX || errno) {
		snprintf(err, errlen, "\"%s\": expected a non-negative integer", key);
		return -EINVAL;
	}
	*has = true;
	*out = (uint64_t)n;
	return 0;
}

int watch_req__parse(const char *buf, size_t len, struct watch_filter *f,
		     char *err, size_t errlen)
{
	struct json_tokener *tok = NULL;
	struct json_object *o = NULL;
	size_t i, k;
	int e = 0;

	memset(f, 0, sizeof(*f));
	snprintf(err, errlen, "bad request");
	while (len && (buf[len - 1] == '\r' || buf[len - 1] == ' '))
		len--;
	if (!len)
		return 0;	/* no filter: everything */
	if (len >= WATCH_REQ_MAX) {
		snprintf(err, errlen, "request longer than %d bytes", WATCH_REQ_MAX - 1);
		return -EINVAL;
	}
	if (memchr(buf, '\0', len)) {
		snprintf(err, errlen, "request holds a NUL byte");
		return -EINVAL;
	}
	tok = json_tokener_new_ex(REQ_DEPTH);
	if (!tok) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	o = json_tokener_parse_ex(tok, buf, (int)len);
	if (!o || json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) != len) {
		snprintf(err, errlen, "request is not one JSON object: %s",
			 o ? "trailing bytes" :
			 json_tokener_error_desc(json_tokener_get_error(tok) ==
						 json_tokener_continue ?
						 json_tokener_error_parse_eof :
						 json_tokener_get_error(tok)));
		e = -EINVAL;
		goto out;
	}
	if (!json_object_is_type(o, json_type_object)) {
		snprintf(err, errlen, "request is not a JSON object");
		e = -EINVAL;
		goto out;
	}
	json_object_object_foreach(o, key, v) {
		for (i = 0; i < N_LIST_KEYS; i++)
			if (!strcmp(key, list_keys[i].key))
				break;
		if (i < N_LIST_KEYS) {
			/* A key twice: json-c keeps the last; so do we. */
			struct watch_list *l = list_at(f, i);

			for (k = 0; k < l->n; k++)
				free(l->v[k]);
			l->n = 0;
			e = list_value(l, key, v, err, errlen);
		} else if (!strcmp(key, "since")) {
			e = u64_value(key, v, &f->has_since, &f->since, err, errlen);
		} else if (!strcmp(key, "since_seq")) {
			e = u64_value(key, v, &f->has_since_seq, &f->since_seq, err, errlen);
		} else if (!strcmp(key, "pid")) {
			e = u64_value(key, v, &f->has_pid, &f->pid, err, errlen);
		} else {
			/* A typo must not silently widen the stream. */
			snprintf(err, errlen, "unknown key \"%.64s\" (known: policy, cgroup, container, pod, kind, reason, event, pid, since, since_seq)",
				 key);
			e = -EINVAL;
		}
		if (e)
			goto out;
	}
out:
	json_object_put(o);
	json_tokener_free(tok);
	if (e)
		watch_filter__free(f);
	return e;
}

static int append(char *buf, size_t len, size_t *at, const char *s)
{
	size_t n = strlen(s);

	if (*at + n >= len)
		return -ENOSPC;
	memcpy(buf + *at, s, n + 1);
	*at += n;
	return 0;
}

int watch_req__format(const struct watch_filter *f, char *buf, size_t len)
{
	struct json_object *o = json_object_new_object(), *a;
	size_t i, k, at = 0;
	int e = 0;

	if (!o)
		return -ENOMEM;
	for (i = 0; i < N_LIST_KEYS; i++) {
		const struct watch_list *l = list_at((struct watch_filter *)f, i);

		if (!l->n)
			continue;
		a = json_object_new_array();
		if (!a || json_object_object_add(o, list_keys[i].key, a)) {
			json_object_put(a);
			e = -ENOMEM;
			goto out;
		}
		for (k = 0; k < l->n; k++)
			json_object_array_add(a, json_object_new_string(l->v[k]));
	}
	if (f->has_pid)
		json_object_object_add(o, "pid", json_object_new_int64((int64_t)f->pid));
	if (f->has_since)
		json_object_object_add(o, "since", json_object_new_int64((int64_t)f->since));
	if (f->has_since_seq)
		json_object_object_add(o, "since_seq", json_object_new_int64((int64_t)f->since_seq));
	e = append(buf, len, &at, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	if (!e)
		e = append(buf, len, &at, "\n");
	if (!e && at > WATCH_REQ_MAX)
		e = -ENOSPC;
out:
	json_object_put(o);
	return e ? e : (int)at;
}

static const char *str_of(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static bool u64_of(struct json_object *o, const char *key, uint64_t *out)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_int))
		return false;
	*out = json_object_get_uint64(v);
	return true;
}

void watch_rec__from_json(struct json_object *o, struct watch_rec *r)
{
	struct json_object *ctr = NULL, *pod = NULL;

	memset(r, 0, sizeof(*r));
	if (!o || !json_object_is_type(o, json_type_object))
		return;
	r->has_seq = u64_of(o, "seq", &r->seq);
	r->has_pid = u64_of(o, "pid", &r->pid);
	r->ts = str_of(o, "ts");
	r->event = str_of(o, "event");
	r->kind = str_of(o, "kind");
	r->op = str_of(o, "op");
	r->policy = str_of(o, "policy");
	r->cgroup = str_of(o, "cgroup");
	r->reason = str_of(o, "reason");
	if (json_object_object_get_ex(o, "container", &ctr) &&
	    json_object_is_type(ctr, json_type_object)) {
		r->ctr_name = str_of(ctr, "name");
		r->ctr_id = str_of(ctr, "id");
		if (json_object_object_get_ex(ctr, "pod", &pod) &&
		    json_object_is_type(pod, json_type_object)) {
			r->pod_ns = str_of(pod, "namespace");
			r->pod_name = str_of(pod, "name");
		}
	}
}

static bool any_glob(const struct watch_list *l, const char *s)
{
	size_t i;

	if (!s)
		return false;
	for (i = 0; i < l->n; i++)
		if (!fnmatch(l->v[i], s, 0))
			return true;
	return false;
}

static bool any_exact(const struct watch_list *l, const char *s)
{
	size_t i;

	if (!s)
		return false;
	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], s))
			return true;
	return false;
}

bool watch_filter__match(const struct watch_filter *f, const struct watch_rec *r)
{
	char pod[2 * WATCH_STR_MAX + 2];

	/* A gap is always reported, whatever was asked. */
	if (r->event && !strcmp(r->event, "lost"))
		return true;
	if (f->policy.n && !any_glob(&f->policy, r->policy))
		return false;
	if (f->cgroup.n && !any_glob(&f->cgroup, r->cgroup))
		return false;
	if (f->container.n && !any_glob(&f->container, r->ctr_name) &&
	    !any_glob(&f->container, r->ctr_id))
		return false;
	if (f->pod.n) {
		if (!r->pod_ns || !r->pod_name)
			return false;
		snprintf(pod, sizeof(pod), "%s/%s", r->pod_ns, r->pod_name);
		if (!any_glob(&f->pod, pod))
			return false;
	}
	if (f->kind.n && !any_exact(&f->kind, r->kind))
		return false;
	if (f->reason.n && !any_exact(&f->reason, r->reason))
		return false;
	if (f->event.n && !any_exact(&f->event, r->event))
		return false;
	if (f->has_pid && (!r->has_pid || r->pid != f->pid))
		return false;
	return true;
}

/* Records nest two levels (container.pod). */
#define REC_DEPTH	8

bool watch_filter__match_line(const struct watch_filter *f, struct watch_line *l)
{
	/* One tokener for good: the agent and the client are single-threaded,
	 * and a tokener per line would be an allocation per record. */
	static struct json_tokener *tok;

	if (!watch_filter__selects(f))
		return true;
	if (!l->parsed) {
		l->parsed = true;
		if (!tok)
			tok = json_tokener_new_ex(REC_DEPTH);
		if (tok) {
			json_tokener_reset(tok);
			l->obj = json_tokener_parse_ex(tok, l->buf, (int)l->len);
		}
		watch_rec__from_json(l->obj, &l->rec);
	}
	return watch_filter__match(f, &l->rec);
}

void watch_line__done(struct watch_line *l)
{
	json_object_put(l->obj);
	l->obj = NULL;
	l->parsed = false;
}
