/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Small helpers over libbpf's map calls that every room of the agent uses.
 */
#ifndef STOCKADE_BPFUTIL_H
#define STOCKADE_BPFUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "clock.h"

/*
 * bpf_map_update_elem(), retried on ENOMEM with a short backoff.
 *
 * Why: maps created with BPF_F_NO_PREALLOC (sb_count, the LPM tries) take
 * their elements from the kernel's BPF memory allocator, whose per-CPU
 * caches are refilled asynchronously (irq_work), so a burst of inserts
 * from user space, such as confining 1,000 cgroups at start, can see
 * ENOMEM for a moment with plenty of memory free. Seen in `make bench`
 * right after a section that had used 16 MiB ring buffers, and in
 * tests/live/burst.sh: sb_count's per-CPU values come from the per-CPU
 * allocator, which grows its chunks only from a worker, and a burst of
 * 1,000 new cgroups after a denial storm met ENOMEM for longer than
 * 255 ms. Retried at 1, 2, 4 ... 1024 ms (about 2 s in all) before the
 * error is final; a
 * map that is really full (E2BIG) or anything else fails at once.
 * Returns 0 or a negative errno. Every retry is counted in
 * bpfutil_enomem_retries, which the daemon reports in a `map_retry`
 * record, so a pressure that recovered is still said.
 */
int map_update_retry(int fd, const void *key, const void *value,
		     uint64_t flags);

extern uint64_t bpfutil_enomem_retries;


/*
 * Wait until every BPF program already running has finished: a write to
 * the map-in-map rcu_sync (bpf/lifecycle.bpf.c) returns after an RCU grace
 * period. If the write fails, a 100 ms pause (programs run for
 * microseconds) makes it likely; returns the write's negative errno then,
 * for the caller to say so.
 */
int bpf_rcu_sync(int sync_fd, int inner_fd);

/* A set of map keys of one size: those this agent wrote (entries of a
 * pinned map that are not among them are stale), or those a walk found. */
struct key_set {
	unsigned char *v;
	size_t n, cap, size;	/* size: bytes of one key */
};

/* 0 or -ENOMEM (the set as it was). */
int key_set_add(struct key_set *ks, const void *key, size_t size);
void key_set_free(struct key_set *ks);

/*
 * Delete every entry of a pinned map whose key (size bytes) is not in ks:
 * what an earlier agent wrote. Called once the new entries are in, so no
 * entry disappears before its replacement is there. Sorts ks. The number
 * deleted.
 */
size_t sweep_keys(int fd, struct key_set *ks, size_t size);

/* Delete every entry of a rule map whose policy id (a __u32 at id_off in
 * its key of size bytes) is below n_ids and marked in retired[]. */
void retire_keys(int fd, size_t size, size_t id_off, const bool *retired,
		 uint32_t n_ids);

/*
 * Verifier statistics (README, "CLI"): with STOCKADE_VERIFIER_STATS set in
 * the environment (not empty, not 0), verifier_stats_prepare() gives each
 * program of obj a log buffer at BPF_LOG_STATS level, and, after the load
 * (whether it worked or not), verifier_stats_report() prints one line per
 * program the verifier saw on stderr (instructions processed, states,
 * verification time), a rejected program's whole log, and the totals,
 * then frees the buffers. The first load only: a retry (another open of
 * the object) logs as libbpf does. Why: an agent's start is mostly the
 * verifier's work, which grows with every hook, and which program does
 * it is otherwise unknown. No-ops without the variable. prepare returns
 * 0 or -ENOMEM (nothing set).
 */
struct bpf_object;
int verifier_stats_prepare(struct bpf_object *obj);
void verifier_stats_report(struct bpf_object *obj);

#endif /* STOCKADE_BPFUTIL_H */
