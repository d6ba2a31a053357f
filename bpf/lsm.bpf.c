// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * BPF-LSM programs. These are global (BPF_LSM_MAC, bpf_link), not
 * lsm_cgroup: the kernel has only 10 lsm_cgroup hook slots system-wide
 * (CGROUP_LSM_NUM), so each program decides for itself whether the current
 * task is in a sandbox (sandbox_current()). Outsiders pay one hash lookup.
 */
#include "common.bpf.h"
#include <bpf/bpf_tracing.h>

#define AF_PACKET	17
#define EPERM		1

/*
 * AF_PACKET sockets never reach cgroup/sock_create, and what they send
 * bypasses the cgroup egress hooks, so only an LSM hook can refuse them.
 */
SEC("lsm/socket_create")
int BPF_PROG(stk_socket_create, int family, int type, int protocol, int kern,
	     int ret)
{
	struct policy_conf *conf;
	struct sandbox *sb;
	struct event *e;
	__u32 policy_id;
	__u64 cgid;

	if (ret || kern || family != AF_PACKET)
		return ret;
	sb = sandbox_current(&cgid);
	if (!sb)
		return 0;
	policy_id = sb->policy_id;
	conf = bpf_map_lookup_elem(&policies, &policy_id);
	if (conf && (conf->flags & SANDBOX_RAW_SOCKETS))
		return 0;
	e = event_reserve();
	if (e) {
		event_fill_task(e, cgid, policy_id,
				conf && conf->mode == SANDBOX_AUDIT ?
				EV_AUDIT : EV_DENY);
		e->kind = EV_KIND_SOCKET;
		e->reason = EV_REASON_PACKET_SOCKET;
		e->family = AF_PACKET;
		e->proto = protocol;
		e->sock_type = type;
		bpf_ringbuf_submit(e, 0);
	}
	/* A missing policy entry is impossible for a found sandbox; deny. */
	return conf && conf->mode == SANDBOX_AUDIT ? 0 : -EPERM;
}
