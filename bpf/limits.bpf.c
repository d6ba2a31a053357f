// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Egress accounting: a cgroup_skb/egress program, attached to every
 * sandbox cgroup with the network programs, that counts each packet the
 * sandbox's sockets send into its sandbox's sb_count entry. It never
 * drops (returns 1): limits are the cgroup files' job, and the network
 * rules are net.bpf.c's.
 */
#include "limits.bpf.h"

/* The limit values found, for whoever removes enforcement (pinned; no
 * program reads it): include/stockade_limits.h. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SANDBOX_MAX_CGROUPS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, struct limits_saved);
} lim_saved SEC(".maps");

/*
 * The sandbox root a packet of the socket cgroup id belongs to, 0 for
 * none. Egress runs in
 * whatever context sends the packet (softirq for TCP retransmits and ACK
 * clocking), so the current task says nothing: the socket's cgroup does.
 * Its own entry first, else its ancestors, nearest wins (a cgroup created
 * since the agent's last scan), like sandbox_current(). Only root_id is
 * read, and read once per entry: the counters are per sandbox root, not
 * per policy, so the slot needs no resolving.
 */
static __always_inline __u64 sandbox_root_of_skb(struct __sk_buff *skb, __u64 id)
{
	struct sandbox *sb;
	__u64 root = 0;
	int level;

	sb = bpf_map_lookup_elem(&sandboxes, &id);
	if (sb)
		return sb->root_id;
	/* 0 beyond the socket cgroup's own level: walk down from the root. */
	for (level = 0; level < SANDBOX_MAX_DEPTH; level++) {
		id = bpf_skb_ancestor_cgroup_id(skb, level);
		if (!id)
			break;
		sb = bpf_map_lookup_elem(&sandboxes, &id);
		if (sb)
			root = sb->root_id;
	}
	return root;
}

/*
 * A socket in a sandbox root's own cgroup, the common case (a container is
 * one cgroup), is counted in one lookup: the agent keeps sb_count entries
 * for sandbox roots only (agent/limits.c makes one for each root and
 * deletes it when the cgroup stops being one; an agent adopting an older
 * one's pins sweeps out any other), so an entry under the socket's own
 * cgroup id is its root's. Any other socket takes sandbox_root_of_skb(),
 * one lookup more than before (a miss here). Counting only: no verdict
 * depends on it. A cgroup's counters and its sandboxes entry change in
 * separate writes, so packets sent while a cgroup becomes a root or
 * stops being one may count in its own entry (and go with it) rather
 * than its root's, or the other way round: a few packets, at a reload or
 * an adoption, as before in other ways.
 */
SEC("cgroup_skb/egress")
int stk_egress(struct __sk_buff *skb)
{
	__u64 id = bpf_skb_cgroup_id(skb), root = id;
	struct sb_count *c = bpf_map_lookup_elem(&sb_count, &root);

	if (!c) {
		root = sandbox_root_of_skb(skb, id);
		c = root ? bpf_map_lookup_elem(&sb_count, &root) : NULL;
	}
	if (c) {
		c->egress_bytes += skb->len;
		c->egress_packets += 1;
	}
	return 1;
}
