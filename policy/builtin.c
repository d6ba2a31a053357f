/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Cloud metadata and credential endpoints every policy denies unless it
 * overrides one by name (network.overrides). They hand out instance or
 * workload credentials to anyone who can connect, so code running in a
 * sandbox must not reach them by accident, through a broad allow rule or
 * through network.default: allow.
 *
 * The cidr fields are written out by hand (include/netmeta.h) because C
 * cannot run inet_pton at compile time; tests/unit/test_policy.c checks
 * each one against its text.
 */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "net.h"
#include "netmeta.h"
#include "policy.h"

/* The table itself is include/netmeta.h's: the programs test addresses
 * against the same one in code (netmeta_candidate). */
#define META_ENTRY(t, fam, p, ...)					\
	{ .text = t, .cidr = { .family = fam, .prefix = p,		\
			       .addr = { __VA_ARGS__ } } },
const struct policy_endpoint policy_meta_endpoints[] = {
	NETMETA_ENDPOINTS(META_ENTRY)
};
#undef META_ENTRY

const size_t policy_n_meta_endpoints =
	sizeof(policy_meta_endpoints) / sizeof(policy_meta_endpoints[0]);

/*
 * Paths every policy denies unless it overrides one (files.overrides):
 * credentials and keys, the container runtimes' control sockets and state
 * (each one is root on the host), and kernel interfaces that reach past
 * any policy. Both the /var/run and the /run spelling are listed: the
 * kernel side judges the path as resolved, and on a host where /var/run is
 * a real directory rather than the usual symlink, each is its own place.
 */
const char *const policy_protected_paths[] = {
	/* password hashes and sudo rules */
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
	"/etc/sudoers", "/etc/sudoers.d",
	/* TLS private keys, cluster credentials */
	"/etc/ssl/private", "/etc/kubernetes", "/var/lib/kubelet",
	/* mounted secrets, service account tokens */
	"/var/run/secrets", "/run/secrets",
	/* container runtimes */
	"/var/run/docker.sock", "/run/docker.sock",
	"/run/containerd", "/var/run/containerd",
	"/run/crio", "/var/run/crio",
	"/run/podman", "/var/run/podman",
	"/run/dockershim.sock", "/var/lib/docker",
	/* BPF pins and kernel debug interfaces */
	"/sys/fs/bpf", "/sys/kernel/security", "/sys/kernel/debug",
	"/sys/kernel/tracing",
	/* physical memory and I/O ports, the kernel's own image */
	"/dev/mem", "/dev/kmem", "/dev/port", "/proc/kcore",
	"/proc/sysrq-trigger",
	/* root's credentials: policy_protected_home under /root */
	"/root/.ssh", "/root/.aws", "/root/.config/gcloud", "/root/.azure",
	"/root/.kube", "/root/.docker/config.json",
};

const size_t policy_n_protected_paths =
	sizeof(policy_protected_paths) / sizeof(policy_protected_paths[0]);

/* Credentials under every home directory: SSH keys, cloud and cluster
 * CLIs' tokens, registry logins. */
const char *const policy_protected_home[] = {
	".ssh", ".aws", ".config/gcloud", ".azure", ".kube",
	".docker/config.json",
};

const size_t policy_n_protected_home =
	sizeof(policy_protected_home) / sizeof(policy_protected_home[0]);

/* linux/capability.h, in number order. */
const char *const policy_cap_names[POLICY_CAP_LAST + 1] = {
	"CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID",
	"KILL", "SETGID", "SETUID", "SETPCAP", "LINUX_IMMUTABLE",
	"NET_BIND_SERVICE", "NET_BROADCAST", "NET_ADMIN", "NET_RAW",
	"IPC_LOCK", "IPC_OWNER", "SYS_MODULE", "SYS_RAWIO", "SYS_CHROOT",
	"SYS_PTRACE", "SYS_PACCT", "SYS_ADMIN", "SYS_BOOT", "SYS_NICE",
	"SYS_RESOURCE", "SYS_TIME", "SYS_TTY_CONFIG", "MKNOD", "LEASE",
	"AUDIT_WRITE", "AUDIT_CONTROL", "SETFCAP", "MAC_OVERRIDE",
	"MAC_ADMIN", "SYSLOG", "WAKE_ALARM", "BLOCK_SUSPEND", "AUDIT_READ",
	"PERFMON", "BPF", "CHECKPOINT_RESTORE",
};

const char *policy_cap_name(unsigned int cap)
{
	return cap <= POLICY_CAP_LAST ? policy_cap_names[cap] : "unknown";
}

int policy_cap_parse(const char *name)
{
	unsigned int i;

	if (!strncasecmp(name, "CAP_", 4))
		name += 4;
	for (i = 0; i <= POLICY_CAP_LAST; i++)
		if (!strcasecmp(name, policy_cap_names[i]))
			return (int)i;
	return -EINVAL;
}

/* linux/netlink.h; 1 (unused), 17 (NETLINK_CRYPTO's old slot) and 23+
 * have no name. */
const char *const policy_netlink_names[POLICY_NETLINK_MAX] = {
	[0] = "route", [2] = "usersock", [3] = "firewall", [4] = "sock_diag",
	[5] = "nflog", [6] = "xfrm", [7] = "selinux", [8] = "iscsi",
	[9] = "audit", [10] = "fib_lookup", [11] = "connector",
	[12] = "netfilter", [13] = "ip6_fw", [14] = "dnrtmsg",
	[15] = "kobject_uevent", [16] = "generic", [18] = "scsitransport",
	[19] = "ecryptfs", [20] = "rdma", [21] = "crypto", [22] = "smc",
};

const char *policy_netlink_name(unsigned int proto)
{
	return proto < POLICY_NETLINK_MAX && policy_netlink_names[proto] ?
	       policy_netlink_names[proto] : "unknown";
}

int policy_netlink_parse(const char *name)
{
	unsigned int i;

	for (i = 0; i < POLICY_NETLINK_MAX; i++)
		if (policy_netlink_names[i] && !strcmp(policy_netlink_names[i], name))
			return (int)i;
	return -EINVAL;
}

/* Container runtimes' defaults (Docker, containerd) less MKNOD, SYS_CHROOT,
 * NET_RAW and the file-capability holes: what root needs to own files,
 * drop privileges and signal its own processes. The numbers are
 * linux/capability.h's. */
const uint64_t policy_caps_default =
	POLICY_CAP_BIT(0) |	/* CHOWN */
	POLICY_CAP_BIT(1) |	/* DAC_OVERRIDE */
	POLICY_CAP_BIT(3) |	/* FOWNER */
	POLICY_CAP_BIT(4) |	/* FSETID */
	POLICY_CAP_BIT(5) |	/* KILL (the signal hook still judges) */
	POLICY_CAP_BIT(6) |	/* SETGID */
	POLICY_CAP_BIT(7) |	/* SETUID */
	POLICY_CAP_BIT(8) |	/* SETPCAP */
	POLICY_CAP_BIT(10) |	/* NET_BIND_SERVICE */
	POLICY_CAP_BIT(29) |	/* AUDIT_WRITE */
	POLICY_CAP_BIT(31);	/* SETFCAP */

const uint64_t policy_caps_dangerous =
	POLICY_CAP_BIT(2) |	/* DAC_READ_SEARCH: open_by_handle_at */
	POLICY_CAP_BIT(12) |	/* NET_ADMIN */
	POLICY_CAP_BIT(15) |	/* IPC_OWNER */
	POLICY_CAP_BIT(16) |	/* SYS_MODULE */
	POLICY_CAP_BIT(17) |	/* SYS_RAWIO */
	POLICY_CAP_BIT(19) |	/* SYS_PTRACE */
	POLICY_CAP_BIT(20) |	/* SYS_PACCT */
	POLICY_CAP_BIT(21) |	/* SYS_ADMIN */
	POLICY_CAP_BIT(22) |	/* SYS_BOOT */
	POLICY_CAP_BIT(25) |	/* SYS_TIME */
	POLICY_CAP_BIT(30) |	/* AUDIT_CONTROL */
	POLICY_CAP_BIT(32) |	/* MAC_OVERRIDE */
	POLICY_CAP_BIT(33) |	/* MAC_ADMIN */
	POLICY_CAP_BIT(34) |	/* SYSLOG */
	POLICY_CAP_BIT(38) |	/* PERFMON */
	POLICY_CAP_BIT(39);	/* BPF */

/* The capabilities split out of SYS_ADMIN, which the kernel still takes
 * SYS_ADMIN for (perfmon_capable(), bpf_capable(), syslog,
 * checkpoint_restore_ns_capable()). */
#define SYS_ADMIN_FALLBACKS \
	(POLICY_CAP_BIT(34) | POLICY_CAP_BIT(38) | POLICY_CAP_BIT(39) | \
	 POLICY_CAP_BIT(40))

uint64_t policy_caps(const struct policy *p)
{
	/* Listing SYS_ADMIN grants what the kernel grants for it anyway:
	 * else each of those checks would log a refusal of PERFMON (BPF,
	 * SYSLOG...) for a call that then goes on under SYS_ADMIN. */
	if (p->caps.has)
		return p->caps.mask |
		       (p->caps.mask & POLICY_CAP_BIT(21) ? SYS_ADMIN_FALLBACKS : 0);
	/* Raw sockets need NET_RAW, and the policy asked for them. */
	return policy_caps_default |
	       (p->net.raw_sockets ? POLICY_CAP_BIT(13) : 0);
}
