// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Joins (include/preexist.h): a process entering a confined cgroup from
 * outside, told to the agent, which checks the fds it brought along
 * (agent/preexist.c). Raw tracepoints: no BPF trampoline, so they run
 * without BPF-LSM too. Both run for every move and every fork of the
 * host; each reads a few fields and, only when the cgroup is a sandbox's,
 * writes a 16-byte notice.
 */
#include "common.bpf.h"
#include <bpf/bpf_tracing.h>
#include "preexist.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, JOIN_RING_SIZE);
} join_rb SEC(".maps");

/* Notices that found join_rb full: the agent walks every sandbox then. */
__u64 join_lost = 0;

static __always_inline void join(__u64 cgid, __u32 pid, __u32 how)
{
	struct sandbox *sb = bpf_map_lookup_elem(&sandboxes, &cgid);
	struct join_event je = { .cgroup_id = cgid, .pid = pid, .how = how };

	/* Confined cgroups only: a pending or new one is walked whole when
	 * the agent confines it (agent/preexist.c). */
	if (!sb || sb->policy_id != SANDBOX_ENTRY_SANDBOX)
		return;
	if (bpf_ringbuf_output(&join_rb, &je, sizeof(je), 0))
		__sync_fetch_and_add(&join_lost, 1);
}

SEC("raw_tp/cgroup_attach_task")
int BPF_PROG(stk_join_attach, struct cgroup *dst, const char *path,
	     struct task_struct *task, bool threadgroup)
{
	if (!cgroup_is_v2(dst))
		return 0;
	join(BPF_CORE_READ(dst, kn, id), BPF_CORE_READ(task, tgid), JOIN_MOVED);
	return 0;
}

/* The child is in its cgroup by now (cgroup_post_fork() is part of
 * copy_process(), before the tracepoint); current is the parent. */
SEC("raw_tp/sched_process_fork")
int BPF_PROG(stk_join_fork, struct task_struct *parent, struct task_struct *child)
{
	__u64 id = BPF_CORE_READ(child, cgroups, dfl_cgrp, kn, id);

	if (id == bpf_get_current_cgroup_id())
		return 0;
	join(id, BPF_CORE_READ(child, tgid), JOIN_CLONED);
	return 0;
}
