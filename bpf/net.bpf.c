// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Outbound network confinement: cgroup/connect4/6, sendmsg4/6 and
 * sock_create, attached (bpf_link) to every sandbox cgroup. The rules and
 * their meaning are described in include/net.h.
 */
#include "net.bpf.h"

/*
 * Who judges a task under a watched directory (include/sandbox.h): the
 * watch links, attached at the directory, judge only pending cgroups; a
 * cgroup's own links judge it once it is classified. The agent attaches a
 * new cgroup's own links before it writes the entry that ends its pending
 * state. Both programs run in one hook call, the cgroup's own first (the
 * kernel's effective array lists a cgroup's programs before its
 * ancestors'), and each looks the sandbox up itself: had each decided by
 * its own lookup, an entry written between the two would have let the
 * own program skip it as pending and the watch program skip it as
 * classified, a call judged by neither (the host's zero-window test saw
 * it once in 1,000 under load). So the own program that skips a pending
 * cgroup hands the call to the watch program (judge_handoff, by thread),
 * which then judges it whatever its own lookup says: exactly one of the
 * two judges, and logs. Returns the sandbox to judge by, or NULL with
 * *skip set to allow at once (judged elsewhere, or outside).
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);	/* bpf_get_current_pid_tgid() */
	__type(value, __u8);
} judge_handoff SEC(".maps");

/*
 * A connect that a kernel thread makes on a socket of a sandbox. The
 * kernel opens an MPTCP connection's further subflows from a worker of
 * its own (to each address the peer announces, ADD_ADDR, and from each
 * local endpoint), each a TCP socket in its connection's cgroup, and
 * connects them with kernel_connect(): this program runs, the current
 * task is the worker, outside every sandbox, and by the task alone the
 * subflow would go wherever the peer named, with no rule asked. So a
 * kernel thread's call is judged as a task's in the socket's cgroup
 * would be: the cgroup's own entry, else its nearest ancestor's (as
 * sandbox_lookup() finds a task's), pending included. TCP only: a
 * subflow is one, and the kernel's own UDP sockets are made by its
 * threads, outside. No cost for a task: only a call found outside asks.
 */
#define PF_KTHREAD	0x00200000	/* include/linux/sched.h */

static __always_inline bool current_kthread(void)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();

	return BPF_CORE_READ(t, flags) & PF_KTHREAD;
}

/* sock_sandbox()'s walk over the socket cgroup's ancestors, root first
 * (bpf_loop() callback, 1 to stop): the deepest entry found is kept.
 * Probe reads: the cgroup came from one, a number to the verifier. */
struct sock_anc {
	__u64 cg;		/* struct cgroup * */
	__u32 level;		/* its level: ancestors[level] is itself */
	bool fault;
	struct anc_scan scan;
};

static long sock_anc_step(__u32 i, void *ctx)
{
	struct sock_anc *c = ctx;
	struct cgroup *anc = NULL;
	__u64 at = c->cg, id;
	struct sandbox *sb;

	if (i >= c->level)
		return 1;
	at += bpf_core_field_offset(struct cgroup, ancestors) + i * sizeof(anc);
	if (bpf_probe_read_kernel(&anc, sizeof(anc), (void *)at) || !anc) {
		c->fault = true;
		return 1;
	}
	id = BPF_CORE_READ(anc, kn, id);
	sb = bpf_map_lookup_elem(&sandboxes, &id);
	if (sb) {
		c->scan.snap = *sb;
		c->scan.found = true;
	}
	return 0;
}

/* The sandbox of sk's cgroup, as sandbox_lookup() gives a task's (*cgid,
 * *snap, *state); NULL outside, and for a socket that is not TCP. */
static __always_inline struct sandbox *sock_sandbox(struct bpf_sock *sk,
						    __u64 *cgid,
						    struct sandbox *snap,
						    int *state)
{
	struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);
	struct sock_anc c = {};
	struct sandbox *sb;
	struct cgroup *cg;
	__u64 id;

	*state = SANDBOX_OUTSIDE;
	if (!tp)
		return NULL;
	/* Plain locals inside BPF_CORE_READ(): a field of c there would
	 * be taken for a kernel type's and relocated. */
	cg = BPF_CORE_READ(tp, inet_conn.icsk_inet.sk.sk_cgrp_data.cgroup);
	id = cg ? BPF_CORE_READ(cg, kn, id) : 0;
	*cgid = id;
	sb = id ? bpf_map_lookup_elem(&sandboxes, &id) : NULL;
	if (sb) {
		*snap = *sb;
		if (snap->policy_id != SANDBOX_ENTRY_SANDBOX)
			return NULL;	/* a watched directory, or outside */
		*state = SANDBOX_IN;
		return sandbox_resolve(snap);
	}
	if (id) {
		c.cg = (__u64)cg;
		c.level = BPF_CORE_READ(cg, level);
		bpf_loop(SANDBOX_MAX_DEPTH, sock_anc_step, &c, 0);
	}
	if (!id || c.fault) {
		/* Whose socket it is cannot be told: fail closed, under
		 * the conflict slot (deny all). */
		snap->policy_id = SANDBOX_ENTRY_SANDBOX;
		snap->slot = POLICY_SLOT_CONFLICT;
		snap->root_id = id;
		*state = SANDBOX_IN;
		return sandbox_resolve(snap);
	}
	if (!c.scan.found) {
		*state = SANDBOX_NONE;
		return NULL;
	}
	*snap = c.scan.snap;
	if (snap->policy_id == SANDBOX_ENTRY_OUTSIDE)
		return NULL;
	return sandbox_nearest(snap, id, state);
}

/* sk: the call's socket, judged by its cgroup for a kernel thread
 * (sock_sandbox()); NULL for a socket's creation, which a kernel thread
 * makes in its own cgroup. */
static __always_inline struct sandbox *who_judges(__u64 *cgid,
						  struct sandbox *snap,
						  const bool watch, bool *skip,
						  struct bpf_sock *sk)
{
	struct sandbox *sb;
	bool pending;
	__u8 one = 1;
	int state;
	__u64 tid;

	sb = sandbox_lookup(cgid, snap, &state, false);
	if (!sb && sk && current_kthread())
		sb = sock_sandbox(sk, cgid, snap, &state);
	pending = sb && (sb->slot & SANDBOX_SNAP_PENDING);
	if (!watch) {
		*skip = pending || state == SANDBOX_OUTSIDE;
		/* The thread is asked for only here and below: a classified
		 * cgroup's calls, the common case, need no handoff. */
		if (pending) {
			tid = bpf_get_current_pid_tgid();
			bpf_map_update_elem(&judge_handoff, &tid, &one, BPF_ANY);
		}
		return sb;
	}
	tid = bpf_get_current_pid_tgid();
	if (bpf_map_lookup_elem(&judge_handoff, &tid)) {
		/* Left to us by this call's own program: judge it, by the
		 * entry in force now (classified since, or still pending). */
		bpf_map_delete_elem(&judge_handoff, &tid);
		*skip = state == SANDBOX_OUTSIDE;
		return sb;
	}
	*skip = !pending;
	return sb;
}

/* The address as the caller gave it, into given[16] (v4: the first 4
 * bytes). v6 is a constant per program, because the verifier rejects even
 * a dead read of user_ip6 in a connect4 program. */
static __always_inline void given_addr(struct bpf_sock_addr *ctx, const bool v6,
				       __u8 given[16])
{
	if (!v6) {
		__u32 a = ctx->user_ip4;

		__builtin_memcpy(given, &a, 4);
	} else {
		__u32 w[4];

		w[0] = ctx->user_ip6[0];
		w[1] = ctx->user_ip6[1];
		w[2] = ctx->user_ip6[2];
		w[3] = ctx->user_ip6[3];
		__builtin_memcpy(given, w, 16);
	}
}

/* The cgroup hooks (connect, sendmsg). */
static __always_inline int judge(struct bpf_sock_addr *ctx, __u8 kind,
				 const bool v6, const bool watch)
{
	__u8 given[16] = {};
	struct sandbox *sb, sb_snap;
	__u64 cgid;
	bool skip;

	sb = who_judges(&cgid, &sb_snap, watch, &skip, ctx->sk);
	if (skip)
		return 1;
	given_addr(ctx, v6, given);
	return net_verdict(sb, cgid, kind, v6, given, ctx->type, ctx->protocol,
			   bpf_ntohs((__u16)ctx->user_port));
}

SEC("cgroup/connect4")
int stk_connect4(struct bpf_sock_addr *ctx)
{
	TEST_VARIANT_MARK();
	return judge(ctx, EV_KIND_CONNECT, false, false);
}

SEC("cgroup/connect6")
int stk_connect6(struct bpf_sock_addr *ctx)
{
	return judge(ctx, EV_KIND_CONNECT, true, false);
}

SEC("cgroup/sendmsg4")
int stk_sendmsg4(struct bpf_sock_addr *ctx)
{
	return judge(ctx, EV_KIND_SENDMSG, false, false);
}

SEC("cgroup/sendmsg6")
int stk_sendmsg6(struct bpf_sock_addr *ctx)
{
	return judge(ctx, EV_KIND_SENDMSG, true, false);
}

/* The watch links' programs (include/sandbox.h): pending cgroups only. */
SEC("cgroup/connect4")
int stk_w_connect4(struct bpf_sock_addr *ctx)
{
	return judge(ctx, EV_KIND_CONNECT, false, true);
}

SEC("cgroup/connect6")
int stk_w_connect6(struct bpf_sock_addr *ctx)
{
	return judge(ctx, EV_KIND_CONNECT, true, true);
}

SEC("cgroup/sendmsg4")
int stk_w_sendmsg4(struct bpf_sock_addr *ctx)
{
	return judge(ctx, EV_KIND_SENDMSG, false, true);
}

SEC("cgroup/sendmsg6")
int stk_w_sendmsg6(struct bpf_sock_addr *ctx)
{
	return judge(ctx, EV_KIND_SENDMSG, true, true);
}

/*
 * Ingress: the local address and port of a bind (include/net.h). These run
 * on every kernel, BPF-LSM or not; lsm/socket_listen (bpf/netctl.bpf.c)
 * adds the listen that follows a bind to port 0, or no bind at all.
 */
static __always_inline int judge_bind(struct bpf_sock_addr *ctx, const bool v6,
				      const bool watch)
{
	__u8 given[16] = {};
	struct sandbox *sb, sb_snap;
	__u64 cgid;
	bool skip;

	sb = who_judges(&cgid, &sb_snap, watch, &skip, NULL);
	if (skip)
		return 1;
	given_addr(ctx, v6, given);
	return listen_verdict(sb, cgid, EV_KIND_BIND, v6, given, ctx->type,
			      ctx->protocol, bpf_ntohs((__u16)ctx->user_port),
			      true);
}

SEC("cgroup/bind4")
int stk_bind4(struct bpf_sock_addr *ctx)
{
	return judge_bind(ctx, false, false);
}

SEC("cgroup/bind6")
int stk_bind6(struct bpf_sock_addr *ctx)
{
	return judge_bind(ctx, true, false);
}

/* Their watch links' twins: a pending cgroup binds under its candidate. */
SEC("cgroup/bind4")
int stk_w_bind4(struct bpf_sock_addr *ctx)
{
	return judge_bind(ctx, false, true);
}

SEC("cgroup/bind6")
int stk_w_bind6(struct bpf_sock_addr *ctx)
{
	return judge_bind(ctx, true, true);
}

/*
 * Raw inet sockets would bypass the connect/sendmsg hooks entirely, and
 * ICMP ping sockets reach any address; both are refused at creation unless
 * the policy allows them. AF_PACKET never reaches this hook: see lsm.bpf.c.
 *
 * Fast path: a TCP or UDP socket is refused here only when no entry says
 * anything (NO_POLICY below); every policy allows them, and a task outside
 * is skipped. So when the task's own cgroup has an entry, whatever it says
 * (a sandbox, its slot conflicting or not; a WATCHED directory or an
 * OUTSIDE entry: outside), the full path below would allow the socket,
 * record nothing and write nothing (no cg_cache update, no handoff: an own
 * entry is never pending), and one lookup of that entry answers the same:
 * in cg_fast first, whose "inside" is only ever an own entry's.
 * Only the own program takes it: the watch program must still consume a
 * handoff its own twin left when it saw the cgroup pending, or the next
 * call of this thread would be judged twice. Anything else (raw, ICMP,
 * other protocols; no own entry: pending, unscanned descendant, no entry
 * at all) takes the full path, unchanged.
 *
 * Not zero lookups: without an entry, TCP/UDP sockets must still fail
 * closed here, because a socket never bound can listen() (autobound in
 * inet_listen) with no cgroup hook to refuse it, and lsm/socket_listen
 * judges only a task in a sandbox.
 */
static __always_inline int sock_create(struct bpf_sock *sk, const bool watch)
{
	struct policy_conf *conf;
	struct sandbox *sb, sb_snap;
	__u32 type, protocol;
	struct event *e;
	__u32 policy_id;
	__u8 reason = 0;
	bool tcp_udp;
	__u64 cgid;
	bool skip;

	if (sk->family != AF_INET && sk->family != AF_INET6)
		return 1;
	type = sk->type;
	protocol = sk->protocol;
	/* Only TCP and UDP have connect/sendmsg hooks that judge every
	 * destination; SCTP, L2TP and the like could reach hosts the rules
	 * never see. Nor UDP-Lite: its sends go through udp_sendmsg() and
	 * the sendmsg hooks, but its protocol has no pre_connect, so its
	 * connect() meets no connect4/6 program, and a connected socket's
	 * sends meet none either. */
	tcp_udp = (type == SOCK_STREAM &&
		   (protocol == IPPROTO_TCP || protocol == IPPROTO_MPTCP)) ||
		  (type == SOCK_DGRAM && protocol == IPPROTO_UDP);
	if (!watch && tcp_udp) {
		__u64 g;

		cgid = bpf_get_current_cgroup_id();
		/* The own entry as cg_fast keeps it (a sandbox's: no hash
		 * lookup), else as the map holds it (any entry). */
		if ((cg_fast_get(cgid, sandbox_gen, &g, &sb_snap) &&
		     (g & SANDBOX_CACHE_INSIDE)) ||
		    bpf_map_lookup_elem(&sandboxes, &cgid))
			return 1;
	}
	sb = who_judges(&cgid, &sb_snap, watch, &skip, NULL);
	if (skip)
		return 1;
	policy_id = sb ? sb->policy_id : POLICY_ID_CONFLICT;
	conf = bpf_map_lookup_elem(&policies, &policy_id);
	if (!conf)
		return 0;
	if (type == SOCK_RAW) {
		if (!(conf->flags & SANDBOX_RAW_SOCKETS))
			reason = EV_REASON_RAW_SOCKET;
	} else if (type == SOCK_DGRAM &&
		   (protocol == IPPROTO_ICMP || protocol == IPPROTO_ICMPV6)) {
		if (!(conf->flags & SANDBOX_ICMP))
			reason = EV_REASON_ICMP;
	} else if (!tcp_udp) {
		reason = EV_REASON_OTHER_PROTOCOL;
	}
	/* Attached, yet no entry says anything: fail closed. */
	if (!sb && !reason)
		reason = EV_REASON_NO_POLICY;
	if (!reason)
		return 1;

	limits_count(sb, EV_KIND_SOCKET, true, conf->mode == SANDBOX_AUDIT);
	e = event_reserve();
	if (e) {
		event_fill_task(e, cgid, policy_id,
				ev_type(sb, conf->mode == SANDBOX_AUDIT));
		e->kind = EV_KIND_SOCKET;
		e->reason = reason;
		e->family = sk->family == AF_INET ? 4 : 6;
		e->proto = protocol;
		e->sock_type = type;
		bpf_ringbuf_submit(e, 0);
	}
	return conf->mode == SANDBOX_AUDIT;
}

SEC("cgroup/sock_create")
int stk_sock_create(struct bpf_sock *sk)
{
	return sock_create(sk, false);
}

SEC("cgroup/sock_create")
int stk_w_sock_create(struct bpf_sock *sk)
{
	return sock_create(sk, true);
}
