/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * libFuzzer target for the events socket's request parser
 * (agent/watch_filter.c): any root process may send the agent a request
 * line, so any bytes in, no crash, no leak, and the contracts hold:
 *   - 0 or -EINVAL (-ENOMEM aside), and a refusal leaves no filter set;
 *   - an accepted request's lists are bounded (WATCH_LIST_MAX values of
 *     at most WATCH_STR_MAX bytes, none empty);
 *   - what the client formats from it parses back to the same filter;
 *   - the matcher runs on it against a record, and the same bytes taken
 *     as a record line go through the matcher and the compact formatter.
 *
 *   make fuzz && build/fuzz/watch_fuzz tests/fuzz/corpus-watch
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "watch_filter.h"
#include "watch_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char rec[] =
	"{\"ts\":\"2026-11-29T19:56:41.445175874Z\",\"seq\":4,\"event\":\"deny\",\"kind\":\"connect\","
	"\"policy\":\"p\",\"cgroup\":\"/a/b\",\"container\":{\"id\":\"0123\",\"name\":\"web\","
	"\"pod\":{\"namespace\":\"prod\",\"name\":\"w\"}},\"pid\":9,\"daddr\":\"10.0.0.1\",\"dport\":80,"
	"\"reason\":\"not_allowed\"}\n";

static void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "watch_fuzz: contract broken: %s\n", what);
		abort();
	}
}

static bool same_list(const struct watch_list *a, const struct watch_list *b)
{
	size_t i;

	if (a->n != b->n)
		return false;
	for (i = 0; i < a->n; i++)
		if (strcmp(a->v[i], b->v[i]))
			return false;
	return true;
}

static void bounded(const struct watch_list *l)
{
	size_t i;

	check(l->n <= WATCH_LIST_MAX, "too many values");
	for (i = 0; i < l->n; i++)
		check(l->v[i][0] && strlen(l->v[i]) <= WATCH_STR_MAX, "value empty or too long");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct watch_filter f, g;
	char err[256], buf[WATCH_REQ_MAX * 8], line[512];
	struct watch_line wl = { .buf = rec, .len = sizeof(rec) - 1 };
	struct json_object *o;
	int e, n;

	e = watch_req__parse((const char *)data, size, &f, err, sizeof(err));
	check(e == 0 || e == -EINVAL || e == -ENOMEM, "errno");
	if (e) {
		check(!watch_filter__selects(&f) && !f.has_since && !f.has_since_seq,
		      "a refused request left a filter behind");
	} else {
		bounded(&f.policy);
		bounded(&f.cgroup);
		bounded(&f.container);
		bounded(&f.pod);
		bounded(&f.kind);
		bounded(&f.reason);
		bounded(&f.event);
		watch_filter__match_line(&f, &wl);
		watch_line__done(&wl);
		n = watch_req__format(&f, buf, sizeof(buf));
		if (n > 0 && n <= WATCH_REQ_MAX) {
			check(buf[n - 1] == '\n', "formatted request without its newline");
			check(!watch_req__parse(buf, (size_t)n - 1, &g, err, sizeof(err)),
			      "a formatted request refused");
			check(same_list(&f.policy, &g.policy) && same_list(&f.kind, &g.kind) &&
			      same_list(&f.pod, &g.pod) && same_list(&f.event, &g.event) &&
			      f.has_pid == g.has_pid && f.pid == g.pid &&
			      f.has_since == g.has_since && f.since == g.since,
			      "a formatted request parsed back differently");
			watch_filter__free(&g);
		}
		watch_filter__free(&f);
	}
	/* The same bytes as a record line from the agent. */
	memset(&f, 0, sizeof(f));
	watch_list__add(&f.kind, "connect");
	wl = (struct watch_line){ .buf = (const char *)data, .len = size };
	watch_filter__match_line(&f, &wl);
	watch_line__done(&wl);
	watch_filter__free(&f);
	o = NULL;
	if (size < sizeof(buf)) {
		memcpy(buf, data, size);
		buf[size] = '\0';
		o = json_tokener_parse(buf);
	}
	if (o) {
		size_t k = watch_format__compact(o, true, line, sizeof(line));

		check(k < sizeof(line) && line[k - 1] == '\n' && line[k] == '\0',
		      "compact line not terminated");
		json_object_put(o);
	}
	return 0;
}
