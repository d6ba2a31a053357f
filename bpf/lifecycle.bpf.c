// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Maps that no program reads: they exist so that they are pinned with the
 * rest (include/lifecycle.h), for `stockade status` and `stockade detach`
 * to work from the pins alone, with or without a running agent.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "sandbox.h"
#include "lifecycle.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, POLICY_MAX);
	__type(key, __u32);
	__type(value, struct policy_info);
} policy_names SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PIN_MAX_DETACHED);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, __u64);
} detached SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct agent_meta);
} agent_meta SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RELOAD_MSGS_MAX);
	__type(key, __u32);
	__type(value, struct reload_msg);
} reload_msgs SEC(".maps");

#ifdef STOCKADE_TEST_LAYOUT
/* A map only the layout variant has (include/lifecycle.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} layout_test SEC(".maps");
#endif

/*
 * Never read by a program either: updating a map-in-map makes the kernel
 * wait for an RCU grace period (maybe_wait_bpf_programs()), that is, for
 * every program already running to finish. A reload writes there after it
 * has switched every sandbox to the new policy ids and before it deletes
 * the old ids' rules, so no program can look up a rule that is gone.
 * Private to one load, not pinned.
 */
struct rcu_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} rcu_inner SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct rcu_inner);
} rcu_sync SEC(".maps") = {
	.values = { [0] = &rcu_inner },
};
