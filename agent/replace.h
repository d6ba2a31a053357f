/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Replacing the pinned state of another build, one cgroup at a time, with
 * no moment unconfined (README "Lifecycle", include/lifecycle.h). Called
 * by the agent's start (agent/agent.c) in this order:
 *
 *   replace__interrupted  before load: did a replacement stop half way?
 *   replace__prepare      the pins do not fit this build: load into a
 *                         staging directory instead (fresh maps);
 *   replace__configure    before load: the new state's first sequence
 *                         number, the old ring's size;
 *   replace__carry        after load: the old rings drained, policy ids,
 *                         `detached`, `lim_saved` carried over;
 *   replace__cg_before    per cgroup, before its new links: its counters;
 *   replace__cg_after     per cgroup, after its new links are pinned: its
 *                         old links detached (returns how many);
 *   replace__finish       after the first scan: old links left, old BPF-LSM
 *                         links, the old rings drained, the new state
 *                         published at --bpffs, a `pin_replace` record;
 *   replace__free         at exit.
 */
#ifndef STOCKADE_REPLACE_H
#define STOCKADE_REPLACE_H

#include <stdbool.h>
#include <stdint.h>

struct agent;
struct sandbox_cg;

bool replace__interrupted(const char *dir);
int replace__prepare(struct agent *a, const char *why);
void replace__configure(struct agent *a);
int replace__carry(struct agent *a);
void replace__cg_before(struct agent *a, const struct sandbox_cg *cg);
unsigned int replace__cg_after(struct agent *a, const struct sandbox_cg *cg);
int replace__finish(struct agent *a);
void replace__free(struct agent *a);

#endif
