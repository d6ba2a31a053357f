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

struct skb_anc {
	struct anc_scan scan;	/* what anc_keep() keeps */
	struct __sk_buff *skb;
};

/* One level of sandbox_of_skb()'s walk, root first (bpf_loop() callback,
 * 1 to stop): the deepest entry found is kept (anc_keep(); 0 beyond the
 * socket cgroup's own level). A callback, not a loop, for the reason
 * anc_scan_step() gives (bpf/common.bpf.h): the loop was checked level
 * by level, twice (both callers inline this), a quarter of stk_egress's
 * verification. */
static long skb_anc_step(__u32 level, void *ctx)
{
	struct skb_anc *c = ctx;

	return anc_keep(&c->scan, bpf_skb_ancestor_cgroup_id(c->skb, level));
}

/*
 * The nearest `sandboxes` entry of the socket cgroup id, copied into
 * snap: its own first, else its ancestors', nearest wins (a cgroup created
 * since the agent's last scan), like sandbox_current(). Egress runs in
 * whatever context sends the packet (softirq for TCP retransmits and ACK
 * clocking), so the current task says nothing: the socket's cgroup does.
 * False when none has one.
 */
static __always_inline bool sandbox_of_skb(struct __sk_buff *skb, __u64 id,
					   struct sandbox *snap)
{
	struct skb_anc c = { .skb = skb };
	struct sandbox *sb;

	sb = bpf_map_lookup_elem(&sandboxes, &id);
	if (sb) {
		*snap = *sb;
		return true;
	}
	/* Walk down from the root: the nearest entry wins. */
	bpf_loop(SANDBOX_MAX_DEPTH, skb_anc_step, &c, 0);
	if (c.scan.found)
		*snap = c.scan.snap;
	return c.scan.found;
}

/* ---- source routes ------------------------------------------------------ */

#define ETH_P_IP		0x0800
#define ETH_P_IPV6		0x86DD
#define IPOPT_LSRR		0x83	/* loose source and record route */
#define IPOPT_SSRR		0x89	/* strict source and record route */
#define NEXTHDR_HOP		0
#define NEXTHDR_ROUTING		43
#define NEXTHDR_FRAGMENT	44
#define NEXTHDR_DEST		60
#define IP6_EXT_MAX		8	/* extension headers looked through */

struct src_route {
	__u8 daddr[16];
	__u16 dport;		/* host order; 0 when not at hand */
	__u8 proto;		/* the transport, IPPROTO_* */
	bool v6;
	bool first;		/* not a fragment, or the first one */
};

/*
 * An IPv4 packet's options (its header at offset 0, ihl > 5): is there a
 * loose or strict source route? Such a packet goes first to the hop the
 * option names, whatever address connect() or sendto() was judged by
 * (IP_OPTIONS, or an IP_RETOPTS control message on each send: neither
 * reaches a cgroup program). Each option's type and length are read from
 * the packet at its offset, not out of a copy on the stack: an index into
 * the stack is a value the verifier tracks exactly, so no two of the
 * walk's paths were alike and none was pruned (141,000 instructions
 * verified on 6.1, 196,000 on 6.12: a fifth of all an agent's start
 * verifies, for every agent started), where an offset given to a helper
 * is not, and the walk cost about 11,000. As a bpf_loop() callback
 * (opt_step()), checked once, it costs a few hundred.
 */
struct opt_walk {
	struct __sk_buff *skb;
	__u32 i, end;		/* the option's offset, the header's end */
	bool none;		/* the list ended, or is malformed */
};

/* One option of ip4_source_routed()'s walk (bpf_loop() callback, 1 to
 * stop): at a source route (c->i), past the header's end, or with none. */
static long opt_step(__u32 k, void *ctx)
{
	struct opt_walk *c = ctx;
	__u8 tl[2];

	if (c->i >= c->end)
		return 1;
	/* A 2-byte read fails only at a header's last byte with nothing
	 * after it (a raw socket's header-only packet): that byte alone,
	 * with no length (a failed read zeroes tl). A source route's type
	 * there is malformed, and dropped all the same. */
	if (bpf_skb_load_bytes(c->skb, c->i, tl, 2) &&
	    bpf_skb_load_bytes(c->skb, c->i, tl, 1)) {
		c->none = true;
		return 1;
	}
	if (tl[0] == 0) {
		c->none = true;
		return 1;
	}
	if (tl[0] == IPOPT_LSRR || tl[0] == IPOPT_SSRR)
		return 1;
	if (tl[0] == 1) {
		tl[1] = 1;
	} else if (tl[1] < 2) {	/* malformed: the kernel sends none */
		c->none = true;
		return 1;
	}
	c->i += tl[1];
	return 0;
}

static __always_inline bool ip4_source_routed(struct __sk_buff *skb, __u32 ihl,
					      struct src_route *r)
{
	struct opt_walk w = { .skb = skb, .i = 20, .end = ihl * 4 };
	__u32 end = ihl * 4, i;
	__u8 h[20];

	/* Had bpf_loop() failed, i would still be 20, before the end: a
	 * source route, dropped (fail closed). */
	bpf_loop(40, opt_step, &w, 0);
	if (w.none)
		return false;
	i = w.i;
	/* Here at a source route or past the list: 40 options of a byte
	 * or more fill the 40 bytes, so the bound never cuts the walk
	 * short (were it to, the packet would be dropped: fail closed). */
	if (i >= end || bpf_skb_load_bytes(skb, 0, h, sizeof(h)))
		return false;
	__builtin_memcpy(r->daddr, &h[16], 4);
	r->proto = h[9];
	/* Fragment offset 0: the first, or no fragment. */
	r->first = !((h[6] & 0x1f) | h[7]);
	if (r->first && (r->proto == 6 || r->proto == 17) &&
	    !bpf_skb_load_bytes(skb, end + 2, &r->dport, 2))
		r->dport = bpf_ntohs(r->dport);
	return true;
}

/* An IPv6 packet: a routing header among its first extension headers
 * (IPV6_RTHDR, a segment routing header, needs no capability). */
static __always_inline bool ip6_source_routed(struct __sk_buff *skb,
					      struct src_route *r)
{
	__u8 h[40], x[4];
	__u32 off = 40;
	__u8 nh;
	int k;

	if (bpf_skb_load_bytes(skb, 0, h, sizeof(h)))
		return false;
	nh = h[6];
	r->first = true;
	for (k = 0; k < IP6_EXT_MAX; k++) {
		if (nh == NEXTHDR_ROUTING) {
			r->v6 = true;
			__builtin_memcpy(r->daddr, &h[24], 16);
			r->proto = 0;	/* not looked further for */
			return true;
		}
		if (nh != NEXTHDR_HOP && nh != NEXTHDR_DEST &&
		    nh != NEXTHDR_FRAGMENT)
			return false;
		if (bpf_skb_load_bytes(skb, off, x, sizeof(x)))
			return false;
		if (nh == NEXTHDR_FRAGMENT) {
			if ((x[2] << 8 | x[3]) & 0xfff8)
				r->first = false;
			off += 8;
		} else {
			off += ((__u32)x[1] + 1) * 8;
		}
		nh = x[0];
	}
	return false;
}

/*
 * A source-routed packet from a sandbox's socket: refused (audit: let
 * through), whatever the policy, as it would reach a host no rule judged;
 * one record per packet refused, for the first fragment only (the others
 * go with it). It names no task (pid 0): the socket's cgroup and policy
 * say whose it is, and the current task would be whatever a softirq
 * interrupted (a TCP retransmission). A socket cgroup with no entry at all, under a sandbox
 * root whose program runs here, fails closed; one whose nearest entry
 * puts it outside is not ours.
 */
static __noinline int egress_source_route(struct __sk_buff *skb, __u64 id,
					  struct src_route *r)
{
	struct sandbox snap = { .policy_id = POLICY_ID_CONFLICT };
	struct policy_conf *conf = NULL;
	bool found, audit;
	struct event *e;
	__u32 pid_id;

	found = sandbox_of_skb(skb, id, &snap);
	if (found && snap.policy_id != SANDBOX_ENTRY_SANDBOX &&
	    snap.policy_id != SANDBOX_ENTRY_WATCHED)
		return 1;	/* an OUTSIDE mark */
	if (found) {
		sandbox_resolve(&snap);
		pid_id = snap.policy_id;
		conf = bpf_map_lookup_elem(&policies, &pid_id);
	}
	audit = conf && conf->mode == SANDBOX_AUDIT;
	if (found)
		limits_count(&snap, EV_KIND_SENDMSG, true, audit);
	if (!r->first)
		return audit;
	e = event_reserve();
	if (e) {
		/* No task: 6.1 gives a cgroup_skb program none of the
		 * current task's helpers. */
		e->ts_boot_ns = bpf_ktime_get_boot_ns();
		e->cgroup_id = id;
		e->policy_id = snap.policy_id;
		e->type = audit ? EV_AUDIT : EV_DENY;
		e->kind = EV_KIND_SENDMSG;
		e->reason = EV_REASON_SOURCE_ROUTE;
		e->family = r->v6 ? 6 : 4;
		e->proto = r->proto;
		e->sock_type = r->proto == 6 ? 1 : 2;	/* SOCK_STREAM, SOCK_DGRAM */
		e->dport = r->dport;
		__builtin_memcpy(e->daddr, r->daddr, 16);
		bpf_ringbuf_submit(e, 0);
	}
	return audit;
}

/*
 * A socket in a sandbox root's own cgroup, the common case (a container is
 * one cgroup), is counted in one lookup: the agent keeps sb_count entries
 * for sandbox roots only (agent/limits.c makes one for each root and
 * deletes it when the cgroup stops being one; an agent adopting an older
 * one's pins sweeps out any other), so an entry under the socket's own
 * cgroup id is its root's. Any other socket takes the nearest entry's
 * root. Counting only: no verdict depends on it. A cgroup's counters and
 * its sandboxes entry change in separate writes, so packets sent while a
 * cgroup becomes a root or stops being one may count in its own entry
 * (and go with it) rather than its root's, or the other way round: a few
 * packets, at a reload or an adoption, as before in other ways.
 *
 * The one verdict here: a source-routed packet is refused (above). The
 * test reads one byte in place: IPv4's header length (options, which a
 * socket's packets carry only when asked), IPv6's next header (an
 * extension header).
 */
SEC("cgroup_skb/egress")
int stk_egress(struct __sk_buff *skb)
{
	__u64 id = bpf_skb_cgroup_id(skb), root = id;
	struct sb_count *c = bpf_map_lookup_elem(&sb_count, &root);
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct src_route r = {};
	struct sandbox snap;
	__u8 vihl;

	if (!c) {
		root = sandbox_of_skb(skb, id, &snap) ? snap.root_id : 0;
		c = root ? bpf_map_lookup_elem(&sb_count, &root) : NULL;
	}
	if (c) {
		c->egress_bytes += skb->len;
		c->egress_packets += 1;
	}
	if (skb->protocol == bpf_htons(ETH_P_IP)) {
		/* Locally made: the header is in the linear part. */
		if (data + 1 <= end)
			vihl = *(__u8 *)data;
		else if (bpf_skb_load_bytes(skb, 0, &vihl, 1))
			return 1;
		if ((vihl & 0x0f) > 5 && ip4_source_routed(skb, vihl & 0x0f, &r))
			return egress_source_route(skb, id, &r);
	} else if (skb->protocol == bpf_htons(ETH_P_IPV6)) {
		/* The next header: the walk only past an extension header. */
		if (data + 7 <= end)
			vihl = ((__u8 *)data)[6];
		else if (bpf_skb_load_bytes(skb, 6, &vihl, 1))
			return 1;
		if ((vihl == NEXTHDR_HOP || vihl == NEXTHDR_ROUTING ||
		     vihl == NEXTHDR_FRAGMENT || vihl == NEXTHDR_DEST) &&
		    ip6_source_routed(skb, &r))
			return egress_source_route(skb, id, &r);
	}
	return 1;
}
