/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Fds held from before confinement, the daemon's half (agent/preexist.c).
 * Event-driven, no periodic scan: a confined cgroup's processes are
 * walked when it is confined or changes policy (checked after each turn
 * of the main loop), and a process is walked when the kernel says it
 * entered a confined cgroup from outside (include/preexist.h).
 *   preexist__open      after the load: the join notices' ring, the raw
 *                       tracepoints attached;
 *   preexist__loop_add  their ring, and the after-turn check, join the
 *                       main loop (agent/loop.h);
 *   preexist__free      the agent stops: links and memory.
 */
#ifndef STOCKADE_PREEXIST_AGENT_H
#define STOCKADE_PREEXIST_AGENT_H

#include <stdbool.h>

struct events;
struct loop;
struct names;
struct preexist;
struct stockade;

struct preexist_cfg {
	struct stockade *skel;
	const struct names *names;	/* the confined cgroups, policies */
	const char *cgroot;		/* the cgroup2 mount */
	struct events *ev;		/* preexisting_fd and limit records */
	/* No file scope (degraded): nothing refuses a file now either, so
	 * only sockets are judged. */
	bool no_files;
};

int preexist__open(struct preexist **out, const struct preexist_cfg *cfg);
int preexist__loop_add(struct preexist *p, struct loop *l);
void preexist__free(struct preexist *p);

#endif
