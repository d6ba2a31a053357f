/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Fds held from before confinement, the daemon's half (agent/preexist.c):
 *   preexist__loop_add  the once-a-second scan of confined cgroups'
 *                       processes joins the main loop (agent/loop.h); its
 *                       first pass runs at the loop's first turn;
 *   preexist__fini      the agent stops: free what it holds.
 */
#ifndef STOCKADE_PREEXIST_AGENT_H
#define STOCKADE_PREEXIST_AGENT_H

struct agent;
struct loop;

int preexist__loop_add(struct agent *a, struct loop *l);
void preexist__fini(void);

#endif
