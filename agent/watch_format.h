/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * `stockade watch -o compact`: one line per record, for people
 * (agent/watch_format.c; README "Watching live denials" has examples):
 *
 *   TIME          WHAT   SANDBOX       KIND/OP        TARGET        REASON  POLICY
 *   14:02:07.311  deny   web-7f9c      connect        10.0.0.9:443  not_allowed  web
 *
 * TIME is the record's ts in local time; SANDBOX the container's name
 * where known, else its id (12 digits), else the cgroup; TARGET the
 * address:port, the path or the pid the record is about. Records that are
 * not refusals (exec, exit, limit, attach, agent_ready...) get the fields
 * that say what happened. A gap (`lost`, `watch_lost`) is its own line,
 * marked `!!`. Colour (ANSI) by what the record is: deny red, audit
 * yellow, limit magenta, exec and exit cyan, gaps bold red.
 */
#ifndef STOCKADE_WATCH_FORMAT_H
#define STOCKADE_WATCH_FORMAT_H

#include <stdbool.h>
#include <stddef.h>

struct json_object;

/* The line for record o, with its newline, in buf (truncated to fit, and
 * always terminated): its length. */
size_t watch_format__compact(struct json_object *o, bool color, char *buf,
			     size_t len);
/* The sandbox name the compact line shows (and the summary counts by). */
const char *watch_format__sandbox(struct json_object *o, char *buf, size_t len);

#endif
