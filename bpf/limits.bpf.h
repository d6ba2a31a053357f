/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Per-sandbox counters (include/stockade_limits.h), for every BPF program
 * that counts. Weak, like the maps in common.bpf.h: each object that
 * includes this header defines the same map and the static linker merges
 * them into one.
 *
 * Counting a decision is one call with the struct sandbox * that
 * sandbox_current() returned (NULL is fine: it counts nothing):
 *     limits_count(sb, EV_KIND_FILE, true, conf->mode == SANDBOX_AUDIT);
 */
#ifndef STOCKADE_LIMITS_BPF_H
#define STOCKADE_LIMITS_BPF_H

#include "common.bpf.h"
#include "stockade_limits.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, SANDBOX_MAX_CGROUPS);
	/* Entries exist only for confined cgroups: allocate on insert. */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, struct sb_count);
} sb_count SEC(".maps") __weak;

static __always_inline struct sb_count *limits_counters(const struct sandbox *sb)
{
	__u64 id;

	if (!sb)
		return NULL;
	id = sb->root_id;
	return bpf_map_lookup_elem(&sb_count, &id);
}

/*
 * Per-CPU values: a plain add cannot race with another CPU. audit says the
 * denial was only reported (mode audit): it lets the call through, so it
 * goes to audited[], never to denied[].
 */
static __always_inline void limits_count(const struct sandbox *sb, __u8 kind,
					 bool denied, bool audit)
{
	struct sb_count *c = limits_counters(sb);
	__u8 k = kind & (LIMITS_KINDS - 1);

	if (!c)
		return;
	if (!denied)
		c->allowed[k] += 1;
	else if (audit)
		c->audited[k] += 1;
	else
		c->denied[k] += 1;
}

#endif /* STOCKADE_LIMITS_BPF_H */
