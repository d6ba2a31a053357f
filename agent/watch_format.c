// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The compact line of `stockade watch` (agent/watch_format.h). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <json-c/json.h>

#include "watch_format.h"

#define C_RED		"\033[31m"
#define C_YELLOW	"\033[33m"
#define C_MAGENTA	"\033[35m"
#define C_CYAN		"\033[36m"
#define C_GAP		"\033[1;31m"
#define C_DIM		"\033[2m"
#define C_OFF		"\033[0m"

struct out {
	char *buf;
	size_t len, at;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->at + 1 >= o->len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->at, o->len - o->at, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	o->at += (size_t)n;
	if (o->at >= o->len)
		o->at = o->len - 1;
}

static const char *s_of(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
		return NULL;
	if (json_object_is_type(v, json_type_object) || json_object_is_type(v, json_type_array))
		return NULL;
	/* Numbers and booleans as json-c spells them. */
	return json_object_get_string(v);
}

const char *watch_format__sandbox(struct json_object *o, char *buf, size_t len)
{
	struct json_object *ctr;
	const char *s;

	if (json_object_object_get_ex(o, "container", &ctr) &&
	    json_object_is_type(ctr, json_type_object)) {
		if ((s = s_of(ctr, "name")))
			return s;
		if ((s = s_of(ctr, "id"))) {
			snprintf(buf, len, "%.12s", s);
			return buf;
		}
	}
	s = s_of(o, "cgroup");
	return s && *s ? s : "-";
}

/* "2026-11-29T19:56:41.128120268Z" as local HH:MM:SS.mmm. */
static void put_time(struct out *out, const char *ts)
{
	struct tm tm = { 0 }, lt;
	const char *frac;
	time_t t;
	int ms = 0;

	if (!ts || !strptime(ts, "%Y-%m-%dT%H:%M:%S", &tm)) {
		put(out, "%-12s", "?");
		return;
	}
	frac = strchr(ts, '.');
	if (frac && frac[1] >= '0' && frac[1] <= '9') {
		ms = (frac[1] - '0') * 100;
		if (frac[2] >= '0' && frac[2] <= '9') {
			ms += (frac[2] - '0') * 10;
			if (frac[3] >= '0' && frac[3] <= '9')
				ms += frac[3] - '0';
		}
	}
	t = timegm(&tm);
	localtime_r(&t, &lt);
	put(out, "%02d:%02d:%02d.%03d", lt.tm_hour, lt.tm_min, lt.tm_sec, ms);
}

static void put_addr(struct out *out, const char *a, const char *port)
{
	if (!a)
		return;
	if (strchr(a, ':'))
		put(out, "[%s]:%s", a, port ? port : "?");
	else
		put(out, "%s:%s", a, port ? port : "?");
}

/* What the record is about: the TARGET column. */
static void put_target(struct out *out, struct json_object *o, const char *event,
		       const char *kind)
{
	const char *v;

	if (!strcmp(event, "exec")) {
		put(out, "pid %s %s", s_of(o, "pid") ?: "?", s_of(o, "binary") ?: "?");
		return;
	}
	if (!strcmp(event, "exit")) {
		put(out, "pid %s", s_of(o, "pid") ?: "?");
		if ((v = s_of(o, "signal")))
			put(out, " signal %s", v);
		else if ((v = s_of(o, "status")))
			put(out, " status %s", v);
		return;
	}
	if (!strcmp(event, "limit")) {
		if ((v = s_of(o, "limit")))
			put(out, "limit %s", v);
		if ((v = s_of(o, "current")))
			put(out, " current %s", v);
		if ((v = s_of(o, "count")))
			put(out, " count %s", v);
		return;
	}
	if (s_of(o, "daddr")) {
		put_addr(out, s_of(o, "daddr"), s_of(o, "dport"));
		return;
	}
	if (s_of(o, "laddr")) {
		put_addr(out, s_of(o, "laddr"), s_of(o, "lport"));
		return;
	}
	if (kind && !strcmp(kind, "capability")) {
		put(out, "CAP_%s", s_of(o, "capability") ?: "?");
		return;
	}
	if (kind && !strcmp(kind, "netlink")) {
		put(out, "%s msg %s", s_of(o, "netlink_family") ?: "?", s_of(o, "msg_type") ?: "?");
		return;
	}
	if (kind && !strcmp(kind, "socket")) {
		put(out, "%s %s", s_of(o, "family") ?: "?", s_of(o, "proto") ?: "");
		return;
	}
	if ((v = s_of(o, "path"))) {
		put(out, "%s", v);
		if ((v = s_of(o, "path2")))
			put(out, " -> %s", v);
		return;
	}
	if ((v = s_of(o, "target_pid"))) {
		put(out, "pid %s", v);
		return;
	}
	if ((v = s_of(o, "pid"))) {
		put(out, "pid %s", v);
		return;
	}
	put(out, "-");
}

size_t watch_format__compact(struct json_object *o, bool color, char *buf,
			     size_t len)
{
	struct out out = { .buf = buf, .len = len };
	const char *event = s_of(o, "event") ?: "?";
	const char *kind = s_of(o, "kind"), *op = s_of(o, "op");
	const char *on = "", *v;
	char sbuf[16];

	if (!len)
		return 0;
	buf[0] = '\0';
	if (!strcmp(event, "deny"))
		on = C_RED;
	else if (!strcmp(event, "audit"))
		on = C_YELLOW;
	else if (!strcmp(event, "limit"))
		on = C_MAGENTA;
	else if (!strcmp(event, "exec") || !strcmp(event, "exit"))
		on = C_CYAN;
	else if (!strcmp(event, "lost") || !strcmp(event, "watch_lost"))
		on = C_GAP;
	else
		on = C_DIM;
	if (!color)
		on = "";
	put(&out, "%s", on);
	put_time(&out, s_of(o, "ts"));
	if (!strcmp(event, "lost")) {
		put(&out, "  !! LOST  %s records lost before the log (total %s); seq %s",
		    s_of(o, "count") ?: "?", s_of(o, "lost_total") ?: "?", s_of(o, "seq") ?: "?");
		if ((v = s_of(o, "reason")))
			put(&out, " (%s)", v);
	} else if (!strcmp(event, "watch_lost")) {
		put(&out, "  !! WATCH_LOST  %s records not sent to this watcher (too slow): seq %s..%s; the log has them",
		    s_of(o, "count") ?: "?", s_of(o, "first_seq") ?: "?", s_of(o, "last_seq") ?: "?");
		if (s_of(o, "dropped"))
			put(&out, "; dropped by the agent");
	} else {
		char what[64];

		if (kind && op)
			snprintf(what, sizeof(what), "%s/%s", kind, op);
		else
			snprintf(what, sizeof(what), "%s", kind ?: op ?: "-");
		put(&out, "  %-6s %-20s %-18s ", event,
		    watch_format__sandbox(o, sbuf, sizeof(sbuf)), what);
		put_target(&out, o, event, kind);
		if ((v = s_of(o, "reason")))
			put(&out, "  %s", v);
		if ((v = s_of(o, "policy")))
			put(&out, "  policy=%s", v);
		if (s_of(o, "pending"))
			put(&out, "  (pending)");
	}
	if (color)
		put(&out, "%s", C_OFF);
	/* The newline even when truncated: one record, one line. */
	if (out.at + 1 >= len)
		out.at = len - 2;
	buf[out.at++] = '\n';
	buf[out.at] = '\0';
	return out.at;
}
