/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Resource limits and counting, the agent's half (agent/limits.c):
 *
 *   limits__check    before anything is loaded: can every cgroup take its
 *                    policy's limits? If not, say why and how to fix it,
 *                    and the agent starts nothing (like a bad policy).
 *   limits__init     after the BPF object is loaded: pin the counters,
 *                    open inotify and /dev/kmsg.
 *   limits__attach   a cgroup is being confined: its counter entry, its
 *                    limits (remembering the values found), its watches.
 *   limits__detach   the reverse; puts back the values found.
 *   limits__tick     every turn of the main loop (<= 100 ms): breaches,
 *                    run time, CPU throttling, --metrics, the state file.
 *   limits__fini     unpin, remove the state and metrics files.
 *
 * The pure parts (file values, Prometheus text, bursts) are in
 * agent/limits_util.c.
 */
#ifndef STOCKADE_LIMITS_AGENT_H
#define STOCKADE_LIMITS_AGENT_H

#include <stdbool.h>

#define LIMITS_STATE_DEFAULT	"/run/stockade/state.json"

struct agent;
struct sandbox_cg;

int limits__check(struct agent *a);
int limits__init(struct agent *a);
int limits__attach(struct agent *a, struct sandbox_cg *cg);
void limits__detach(struct agent *a, struct sandbox_cg *cg, const char *why);
void limits__tick(struct agent *a);
void limits__fini(struct agent *a);

/* `stockade status`: exit status 0, or 1 when no agent is running. */
int status__run(const char *state_path, bool json);

#endif
