/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The /metrics endpoint (--metrics-listen ADDR:PORT, agent/metrics_http.c):
 * libmicrohttpd in its external epoll mode, driven by the agent's one main
 * loop (agent/loop.h): its epoll fd is one more io source, its timeout one
 * more timer. No thread. It serves the text agent/limits.c builds once a
 * second (metrics_write(), the same as --metrics FILE), and nothing else:
 * GET /metrics 200, another method there 405, any other path 404.
 *
 * A client cannot hold the agent up: every socket is non-blocking, and
 * the connections are bounded in number, idle time and memory
 * (METRICS_HTTP_* in the .c file). There is no TLS and no authentication:
 * bind loopback (README "Metrics").
 *
 * A build without libmicrohttpd (STOCKADE_METRICS_HTTP=0: the static VM
 * build, Debian ships no static p11-kit for GnuTLS) has these functions
 * too; metrics_http__open() refuses, saying why.
 */
#ifndef STOCKADE_METRICS_HTTP_H
#define STOCKADE_METRICS_HTTP_H

#include <stdbool.h>
#include <stddef.h>

struct loop;
struct metrics_http;

/* Listen on spec (metrics_listen_parse(): "127.0.0.1:9464", "[::1]:9464").
 * An address that is not loopback needs allow_remote. Every failure is
 * said (the step, the cause, the fix): -EINVAL a bad spec, -EPERM remote
 * without allow_remote, -EADDRINUSE..., -EOPNOTSUPP a build without it. */
int metrics_http__open(struct metrics_http **out, const char *spec,
		       bool allow_remote);
/* Its epoll fd and its timer join the main loop. */
int metrics_http__loop_add(struct metrics_http *h, struct loop *l);
/* The exposition text to serve from now on (malloc()ed; h takes it, and
 * frees it once no response uses it). ctx: the struct metrics_http. */
void metrics_http__publish(void *ctx, char *text, size_t len);
/* Close every connection and the socket (NULL: nothing). */
void metrics_http__free(struct metrics_http *h);

#endif
