/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * `stockade watch`'s filter, both halves (agent/watch_filter.c): the
 * request line a client sends the agent's events socket (README
 * "Watching live denials"), parsed into a struct watch_filter; the fields
 * of one logged record that a filter looks at (struct watch_rec); and the
 * matcher. The agent runs the matcher (agent/watch_server.c), so a busy
 * node sends only what was asked for; the client builds the request with
 * watch_req__format().
 *
 * The request is untrusted input (any root process may send one; the
 * agent must never fail on it): bounded in length, entries and string
 * size, and fuzzed (tests/fuzz/watch_fuzz.c).
 */
#ifndef STOCKADE_WATCH_FILTER_H
#define STOCKADE_WATCH_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_object;

/* One request line, newline included. */
#define WATCH_REQ_MAX		4096
/* Values per filter key, and bytes per value. */
#define WATCH_LIST_MAX		32
#define WATCH_STR_MAX		256

/* Alternatives for one field: a record passes when any matches. */
struct watch_list {
	size_t n;
	char *v[WATCH_LIST_MAX];
};

/*
 * Keys AND, values of one key OR; an empty list does not filter. policy,
 * cgroup, container and pod are fnmatch(3) globs without FNM_PATHNAME ('*'
 * crosses '/'); kind, reason and event are exact names. container matches
 * the container's name or its id; pod matches "namespace/name". A record
 * without the field a set key looks at does not pass. `lost` records
 * always pass: a gap is always reported.
 */
struct watch_filter {
	struct watch_list policy, cgroup, container, pod, kind, reason, event;
	bool has_pid;
	uint64_t pid;
	/* The ring's last `since` matching records first. */
	bool has_since;
	uint64_t since;
	/* Only ring records with seq > since_seq (a reconnect's: none seen
	 * twice); with since, the last `since` of those. */
	bool has_since_seq;
	uint64_t since_seq;
};

/* A record's fields, as the filter and the compact output see them:
 * pointers into the json-c object it was read from (valid while that
 * lives), NULL where the record has no such field. */
struct watch_rec {
	bool has_seq, has_pid;
	uint64_t seq, pid;
	const char *ts, *event, *kind, *op, *policy, *cgroup, *reason;
	const char *ctr_name, *ctr_id, *pod_ns, *pod_name;
};

/* Parse one request (without its newline; an empty one is `{}`): 0, or
 * -EINVAL with why in err (a sentence for the watch_error line). */
int watch_req__parse(const char *buf, size_t len, struct watch_filter *f,
		     char *err, size_t errlen);
void watch_filter__free(struct watch_filter *f);
/* Does the filter look at the record's fields (any key but since)? */
bool watch_filter__selects(const struct watch_filter *f);
/* Add one value (a comma list: several) to a list: 0, or -E2BIG (more than
 * WATCH_LIST_MAX), -ENAMETOOLONG (a value over WATCH_STR_MAX), -EINVAL
 * (empty), -ENOMEM. */
int watch_list__add(struct watch_list *l, const char *s);
/* The request line for f, newline included: its length, or -ENOSPC. */
int watch_req__format(const struct watch_filter *f, char *buf, size_t len);

/* One record line, parsed at most once however many filters look at it
 * (watch_filter__match_line()); watch_line__done() frees the parse. */
struct watch_line {
	const char *buf;	/* the line as logged, newline included */
	size_t len;
	bool parsed;
	struct json_object *obj;
	struct watch_rec rec;
};
bool watch_filter__match_line(const struct watch_filter *f, struct watch_line *l);
void watch_line__done(struct watch_line *l);

/* The fields of a parsed record line. */
void watch_rec__from_json(struct json_object *o, struct watch_rec *r);
bool watch_filter__match(const struct watch_filter *f, const struct watch_rec *r);

#endif
