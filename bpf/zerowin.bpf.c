// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * When each cgroup was made, for the zero window's pending_ms (README,
 * "Zero window"): cgroupfs gives a new directory no time of its own (its
 * inode, and so its ctime, is made at the first lookup, which is usually
 * the agent's own, after the inotify event). The cgroup_mkdir tracepoint
 * fires in mkdir itself. A raw tracepoint, not a trampoline: it attaches
 * where BPF-LSM cannot (the agent falls back to the ctime when it does
 * not).
 */
#include "common.bpf.h"
#include <bpf/bpf_tracing.h>
#include "sandbox.h"

/* cgroup id -> bpf_ktime_get_boot_ns() at its mkdir; the agent reads it
 * when it classifies the cgroup, and old ones fall out (LRU). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SANDBOX_MAX_CGROUPS);
	__type(key, __u64);
	__type(value, __u64);
} cg_born SEC(".maps");

SEC("tp_btf/cgroup_mkdir")
int BPF_PROG(stk_cg_mkdir, struct cgroup *cgrp, const char *path)
{
	__u64 id, now;

	/* A v1 hierarchy's mkdir: its id may be a v2 cgroup's. */
	if (!cgroup_is_v2(cgrp))
		return 0;
	id = BPF_CORE_READ(cgrp, kn, id);
	now = bpf_ktime_get_boot_ns();
	bpf_map_update_elem(&cg_born, &id, &now, BPF_ANY);
	return 0;
}
