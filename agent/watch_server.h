/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The agent's events socket (agent/watch_server.c): the records it logs,
 * served live to `stockade watch` clients on a unix socket, filtered in
 * the agent (agent/watch_filter.h), after the last records of a ring kept
 * in memory. README "Watching live denials" has the protocol.
 *
 * Not agent/watch.c: that is the zero-window watcher of cgroup
 * directories.
 *
 * Nothing here may slow the log: every client write is non-blocking,
 * every client has a bounded buffer, and a client that cannot keep up
 * loses lines (it is told how many, `watch_lost`) and is then dropped.
 */
#ifndef STOCKADE_WATCH_SERVER_H
#define STOCKADE_WATCH_SERVER_H

#include <stddef.h>

struct loop;
struct watch_server;

/* The same run directory as the state file (LIMITS_STATE_DEFAULT). */
#define WATCH_SOCKET_DEFAULT	"/run/stockade/events.sock"

/* The bounds (README "Watching live denials"). */
#define WATCH_MAX_CLIENTS	64
#define WATCH_RING_RECORDS	4096
#define WATCH_RING_BYTES	(4u << 20)
/* Per client: queued bytes; a dropped client's last bytes may take this
 * much more (the final watch_lost line). */
#define WATCH_CLIENT_BUF	(1u << 20)
/* A client that has missed lines for this long, or this many, is dropped. */
#define WATCH_STALL_US		(5ull * 1000000)
#define WATCH_LOST_MAX		100000
/* A client has this long to send its request; a dropped one this long to
 * read what was queued for it, its final watch_lost line included. */
#define WATCH_REQ_TIMEOUT_US	(5ull * 1000000)
#define WATCH_LINGER_US		(10ull * 1000000)

/*
 * Bind path (0600, root's; a stale socket file there is removed: the
 * caller holds the pin directory's lock, so no other agent of these pins
 * serves it). path NULL or "none": *out NULL, nothing served. 0 or a
 * negative errno (said).
 */
int watch_server__open(struct watch_server **out, const char *path);
/* The listening socket and the clients in the main loop (agent/loop.h). */
int watch_server__loop_add(struct watch_server *ws, struct loop *l);
/* One record line as logged, newline included: events_cfg.sink. */
void watch_server__line(void *ws, const char *line, size_t len);
/* Last queued bytes written where they fit (never waiting), every client
 * closed, the socket file removed. NULL is fine. */
void watch_server__free(struct watch_server *ws);

#endif
