// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * BPF-LSM programs that are always on for sandboxed tasks: no bpf(), no
 * mount family, no leaving the cgroup, no ptrace, signals or unix
 * connections across the sandbox's edge, no user namespaces (unless the
 * policy allows them), no AF_PACKET sockets.
 *
 * These are global programs (BPF_LSM_MAC), not lsm_cgroup: the kernel has
 * only 10 lsm_cgroup hook slots system-wide (CGROUP_LSM_NUM), fewer than
 * the hooks needed here and in file.bpf.c, so each program decides for
 * itself whether the current task is in a sandbox (sandbox_current()).
 */
#include "lsm.bpf.h"
#include "net.bpf.h"

#define AF_UNIX			1
#define AF_NETLINK		16
#define AF_PACKET		17
#define CLONE_INTO_CGROUP	0x200000000ULL
#define PTRACE_MODE_ATTACH	0x02
#define PTRACE_MODE_NOAUDIT	0x04

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, UNIX_MAX_RULES);
	__type(key, struct unix_key);
	__type(value, __u8);
} unix_allow SEC(".maps");

SEC("lsm/bpf")
int BPF_PROG(stk_bpf, int cmd, union bpf_attr *attr, unsigned int size)
{
	TEST_VARIANT_MARK();
	CURRENT_OR_ALLOW();
	return lsm_deny(sb, conf, cgid, EV_KIND_BPF, 0, EV_REASON_ALWAYS_DENIED,
			NULL, NULL, 0, cmd);
}

/* Covers PTRACE_ATTACH/SEIZE, /proc/PID/{environ,mem,root,cwd,fd} and
 * process_vm_readv/writev: all ask ptrace_may_access(). A NOAUDIT check
 * (/proc/PID/stat asking whether to show a task's addresses, which `ps`
 * makes for every process) is refused the same, but only counted. */
SEC("lsm/ptrace_access_check")
int BPF_PROG(stk_ptrace, struct task_struct *child, unsigned int mode)
{
	__u8 reason = EV_REASON_OUTSIDE_SANDBOX;

	CURRENT_OR_ALLOW();
	/* A runtime's task in setup is not judged: whoever controlled it
	 * would run unjudged code. Out of the sandbox's reach. */
	if (in_setup(child))
		reason = EV_REASON_IN_SETUP;
	else if (task_root_of(child) == sb->root_id) {
		/* Within the sandbox: allowed, except that under anon_exec:
		 * deny an attach (PTRACE_POKETEXT, /proc/PID/mem,
		 * process_vm_writev) would write code into an allowed
		 * binary's text without any mprotect. Reading
		 * (PTRACE_MODE_READ) stays allowed. */
		if (!(conf->flags & SANDBOX_ANON_EXEC_DENY) ||
		    !(mode & PTRACE_MODE_ATTACH))
			return 0;
		reason = EV_REASON_ANON_EXEC;
	}
	if (mode & PTRACE_MODE_NOAUDIT)
		return lsm_deny_quiet(sb, conf, EV_KIND_PTRACE);
	return lsm_deny(sb, conf, cgid, EV_KIND_PTRACE, 0, reason, NULL, NULL,
			BPF_CORE_READ(child, tgid), 0);
}

/* PTRACE_TRACEME reaches no ptrace_access_check: the child asks to be
 * traced by its parent. Under anon_exec: deny, a parent in the same
 * sandbox is refused as an attach would be (stk_ptrace); one outside it
 * is no part of the sandbox, and one in setup is trusted. */
SEC("lsm/ptrace_traceme")
int BPF_PROG(stk_ptrace_traceme, struct task_struct *parent)
{
	CURRENT_OR_ALLOW();
	if (!(conf->flags & SANDBOX_ANON_EXEC_DENY) || in_setup(parent) ||
	    task_root_of(parent) != sb->root_id)
		return 0;
	return lsm_deny(sb, conf, cgid, EV_KIND_PTRACE, EV_OP_TRACEME,
			EV_REASON_ANON_EXEC, NULL, NULL,
			BPF_CORE_READ(parent, tgid), 0);
}

SEC("lsm/task_kill")
int BPF_PROG(stk_task_kill, struct task_struct *p, struct kernel_siginfo *info,
	     int sig, const struct cred *cred)
{
	CURRENT_OR_ALLOW();
	/* A runtime's task in setup is out of the sandbox's reach. */
	if (in_setup(p))
		return lsm_deny(sb, conf, cgid, EV_KIND_SIGNAL, 0,
				EV_REASON_IN_SETUP, NULL, NULL,
				BPF_CORE_READ(p, tgid), sig);
	if (task_root_of(p) == sb->root_id)
		return 0;
	return lsm_deny(sb, conf, cgid, EV_KIND_SIGNAL, 0,
			EV_REASON_OUTSIDE_SANDBOX, NULL, NULL,
			BPF_CORE_READ(p, tgid), sig);
}

/*
 * The mount family is refused outright; the record names the target
 * (mount point, chroot directory, ...) where the hook has one.
 */
static __always_inline int deny_mount(__u8 op, struct vfsmount *mnt,
				      struct dentry *d)
{
	const char *path = NULL;
	struct lsm_scratch *s;
	long off;

	CURRENT_OR_ALLOW();
	s = scratch();
	if (s && d) {
		off = walk(s->buf[0], mnt, d);
		if (off >= 0)
			path = &s->buf[0][off & MASK];
	}
	return lsm_deny(sb, conf, cgid, EV_KIND_MOUNT, op, EV_REASON_ALWAYS_DENIED,
			path, NULL, 0, 0);
}

/* A mount, umount or move, anyone's, ends every cached file decision
 * (include/file.h): mount_lock's sequence does already, but it is 32
 * bits, and file_gen's 64 cannot come round. */
SEC("lsm/sb_mount")
int BPF_PROG(stk_sb_mount, const char *dev_name, const struct path *path)
{
	file_gen_bump();
	return deny_mount(EV_OP_MOUNT, BPF_CORE_READ(path, mnt),
			  BPF_CORE_READ(path, dentry));
}

SEC("lsm/sb_umount")
int BPF_PROG(stk_sb_umount, struct vfsmount *mnt)
{
	file_gen_bump();
	return deny_mount(EV_OP_UMOUNT, mnt, BPF_CORE_READ(mnt, mnt_root));
}

SEC("lsm/move_mount")
int BPF_PROG(stk_move_mount, const struct path *from_path,
	     const struct path *to_path)
{
	file_gen_bump();
	return deny_mount(EV_OP_MOVE_MOUNT, BPF_CORE_READ(to_path, mnt),
			  BPF_CORE_READ(to_path, dentry));
}

/* A new root, anyone's: d_path() is relative to it, so it ends every
 * cached file decision (include/file.h). */
SEC("lsm/sb_pivotroot")
int BPF_PROG(stk_sb_pivotroot, const struct path *old_path,
	     const struct path *new_path)
{
	file_gen_bump();
	return deny_mount(EV_OP_PIVOT_ROOT, BPF_CORE_READ(new_path, mnt),
			  BPF_CORE_READ(new_path, dentry));
}

SEC("lsm/path_chroot")
int BPF_PROG(stk_path_chroot, const struct path *path)
{
	file_gen_bump();
	return deny_mount(EV_OP_CHROOT, BPF_CORE_READ(path, mnt),
			  BPF_CORE_READ(path, dentry));
}

/* clone3(CLONE_INTO_CGROUP) would start a child outside the sandbox; the
 * write-cgroup.procs route is refused in file.bpf.c. */
SEC("lsm/task_alloc")
int BPF_PROG(stk_task_alloc, struct task_struct *task,
	     unsigned long clone_flags)
{
	int err = setup_inherit(task);

	if (err)
		return err;
	if (!(clone_flags & CLONE_INTO_CGROUP))
		return 0;
	{
		CURRENT_OR_ALLOW_HOT();
		return lsm_deny(sb, conf, cgid, EV_KIND_CGROUP,
				EV_OP_CLONE_INTO_CGROUP, EV_REASON_CGROUP_ESCAPE,
				NULL, NULL, 0, 0);
	}
}

SEC("lsm/userns_create")
int BPF_PROG(stk_userns_create, const struct cred *cred)
{
	CURRENT_OR_ALLOW();
	if (conf->flags & SANDBOX_USERNS)
		return 0;
	return lsm_deny(sb, conf, cgid, EV_KIND_USERNS, 0,
			EV_REASON_NOT_ALLOWED_NS, NULL, NULL, 0, 0);
}

/*
 * A unix socket held by a process outside the sandbox (the socket's owning
 * cgroup is outside it) may be reached only through `unix_allow`, matched
 * on the address the listener bound (a leading NUL for an abstract name).
 */
static __always_inline int judge_unix(struct sock *other)
{
	struct unix_address *addr;
	struct unix_key *k;
	struct lsm_scratch *s;
	struct cgroup *owner;
	int len;

	CURRENT_OR_ALLOW();
	owner = BPF_CORE_READ(other, sk_cgrp_data.cgroup);
	if (owner && cgroup_root_of(owner) == sb->root_id)
		return 0;
	s = scratch();
	if (!s)
		return -EPERM;
	/* The key lives in the scratch buffer: it is too big for the stack
	 * next to the rest. */
	k = (struct unix_key *)s->buf[1];
	__builtin_memset(k, 0, sizeof(*k));
	k->policy_id = sb->policy_id;
	addr = BPF_CORE_READ((struct unix_sock *)other, addr);
	if (addr) {
		len = BPF_CORE_READ(addr, len) - (int)sizeof(__u16);
		if (len > UNIX_PATH_MAX_)
			len = UNIX_PATH_MAX_;
		if (len > 0)
			bpf_probe_read_kernel(k->path, len, &addr->name[0].sun_path);
		if (bpf_map_lookup_elem(&unix_allow, k))
			return 0;
	}
	/* Abstract names start with NUL: show them as "@name". */
	s->buf[0][0] = '@';
	bpf_probe_read_kernel(&s->buf[0][1], UNIX_PATH_MAX_ - 1, &k->path[1]);
	s->buf[0][UNIX_PATH_MAX_] = '\0';
	return lsm_deny(sb, conf, cgid, EV_KIND_UNIX, 0, EV_REASON_OUTSIDE_SANDBOX,
			k->path[0] ? k->path : s->buf[0], NULL,
			BPF_CORE_READ(other, sk_peer_pid, numbers[0].nr), 0);
}

SEC("lsm/unix_stream_connect")
int BPF_PROG(stk_unix_stream_connect, struct sock *sock, struct sock *other,
	     struct sock *newsk)
{
	return judge_unix(other);
}

SEC("lsm/unix_may_send")
int BPF_PROG(stk_unix_may_send, struct socket *sock, struct socket *other)
{
	return judge_unix(BPF_CORE_READ(other, sk));
}

/*
 * A refused socket's verdict and its one record, in the network record
 * layout (include/events.h): family 4 or 6, 17 for AF_PACKET, else 255
 * with the family's number in dport; the socket's type and protocol. For
 * socket_create and for a socket made outside the sandbox used inside.
 */
static __always_inline int socket_refuse(struct sandbox *sb,
					 struct policy_conf *conf, __u64 cgid,
					 __u8 kind, __u8 reason, __u8 family,
					 __u16 dport, int type, int proto)
{
	bool audit = conf->mode == SANDBOX_AUDIT;
	struct event *e;

	limits_count(sb, kind, true, audit);
	e = event_reserve();
	if (e) {
		event_fill_task(e, cgid, sb->policy_id, ev_type(sb, audit));
		e->kind = kind;
		e->reason = reason;
		e->family = family;
		e->dport = dport;
		e->sock_type = type;
		e->proto = proto;
		bpf_ringbuf_submit(e, 0);
	}
	return audit ? 0 : -EPERM;
}

/* A family's refusal: AF_PACKET's own reason and family number, every
 * other family as 255 with its number in dport. */
static __always_inline int family_refuse(struct sandbox *sb,
					 struct policy_conf *conf, __u64 cgid,
					 __u8 kind, __u16 family, int type,
					 int proto)
{
	bool packet = family == AF_PACKET;

	return socket_refuse(sb, conf, cgid, kind,
			     packet ? EV_REASON_PACKET_SOCKET :
				      EV_REASON_OTHER_PROTOCOL,
			     packet ? AF_PACKET : 255, family, type, proto);
}

/*
 * AF_PACKET sockets never reach cgroup/sock_create, and what they send
 * bypasses the cgroup egress hooks, so only an LSM hook can refuse them.
 */
SEC("lsm/socket_create")
int BPF_PROG(stk_socket_create, int family, int type, int protocol, int kern)
{
	/* unix, inet (judged by the network rules) and netlink (local to
	 * the kernel) are the families a sandbox may use. AF_PACKET never
	 * reaches cgroup/sock_create and bypasses the egress hooks; the
	 * rest (vsock, tipc, rds, can, xdp...) reach beyond the rules. */
	if (kern || family == AF_UNIX || family == AF_INET ||
	    family == AF_INET6 || family == AF_NETLINK)
		return 0;
	{
		CURRENT_OR_ALLOW_HOT();
		if (family == AF_PACKET && (conf->flags & SANDBOX_RAW_SOCKETS))
			return 0;
		return family_refuse(sb, conf, cgid, EV_KIND_SOCKET, family,
				     type, protocol);
	}
}

/*
 * Sockets are judged by the current task's sandbox, not the socket's
 * cgroup. The cgroup programs run for the cgroup the socket was created
 * in; a socket made before its owner joined a sandbox (or passed in from
 * outside) escapes them, so these two hooks judge exactly those sockets,
 * with the same rules (bpf/net.bpf.h).
 */
static __always_inline bool sock_outside_sandbox(struct sock *sk,
						 struct sandbox *sb)
{
	return cgroup_root_of(BPF_CORE_READ(sk, sk_cgrp_data.cgroup)) !=
	       sb->root_id;
}

/* An IPv6 sockaddr may be the RFC 2133 size, without sin6_scope_id. */
#define SIN6_LEN_RFC2133	24
#define SOCK_STREAM_		1
#define SOCK_DGRAM_		2
#define SOCK_RAW_		3
#define IPPROTO_ICMP_		1
#define IPPROTO_ICMPV6_		58
#define MSG_FASTOPEN_		0x20000000
#define TCP_ESTABLISHED_	1	/* a datagram socket's "connected" */
#define AF_UNSPEC		0

/* Raw sockets made outside are refused outright unless the policy allows
 * raw sockets: their headers can say anything. */
static __always_inline int raw_outside(struct sandbox *sb, __u64 cgid,
				       struct socket *sock)
{
	struct policy_conf *conf;
	__u32 id = sb->policy_id;

	conf = bpf_map_lookup_elem(&policies, &id);
	if (!conf)
		return -EPERM;
	if (conf->flags & SANDBOX_RAW_SOCKETS)
		return 0;
	return socket_refuse(sb, conf, cgid, EV_KIND_SOCKET, EV_REASON_RAW_SOCKET,
			     BPF_CORE_READ(sock, sk, __sk_common.skc_family) ==
			     AF_INET6 ? 6 : 4, 0, SOCK_RAW_, 255);
}

/*
 * A socket of another family than inet, unix or netlink, made outside
 * the sandbox (held from before joining, or passed in) and used from
 * inside: refused as socket_create would have refused making it
 * (AF_PACKET unless the policy allows raw sockets; vsock, tipc, xdp...
 * always), one record in the network layout of kind KIND. A socket of
 * such a family made inside was judged when it was made.
 */
static __always_inline int family_outside(struct sandbox *sb, __u64 cgid,
					  struct sock *sk, __u16 family,
					  __u8 kind)
{
	struct policy_conf *conf;
	__u32 id = sb->policy_id;

	if (family == AF_UNIX || family == AF_NETLINK ||
	    !sock_outside_sandbox(sk, sb))
		return 0;
	conf = bpf_map_lookup_elem(&policies, &id);
	if (!conf)
		return -EPERM;
	if (family == AF_PACKET && (conf->flags & SANDBOX_RAW_SOCKETS))
		return 0;
	return family_refuse(sb, conf, cgid, kind, family,
			     BPF_CORE_READ(sk, sk_type),
			     BPF_CORE_READ(sk, sk_protocol));
}

/* The connected peer of sk into sa6 (port 0 when not connected). */
static __always_inline void peer_of(struct sock *sk, __u16 family,
				    struct sockaddr_in6 *sa6)
{
	sa6->sin6_port = BPF_CORE_READ(sk, __sk_common.skc_dport);
	if (family == AF_INET)
		((struct sockaddr_in *)sa6)->sin_addr.s_addr =
			BPF_CORE_READ(sk, __sk_common.skc_daddr);
	else
		BPF_CORE_READ_INTO(&sa6->sin6_addr, sk, __sk_common.skc_v6_daddr);
}

SEC("lsm/socket_connect")
int BPF_PROG(stk_socket_connect, struct socket *sock, struct sockaddr *address,
	     int addrlen)
{
	struct sockaddr_in6 sa6 = {};
	struct sandbox *sb, sb_snap;
	struct sock *sk;
	__u16 family;
	__u64 cgid;

	sb = sandbox_current_hot(&cgid, &sb_snap);
	if (!sb)
		return 0;
	sk = BPF_CORE_READ(sock, sk);
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	if (family != AF_INET && family != AF_INET6)
		return family_outside(sb, cgid, sk, family, EV_KIND_CONNECT);
	/* A socket made inside met the connect4/6 programs, except a
	 * UDP-Lite one (no pre_connect): refused at creation, but one held
	 * from before confinement is judged here. */
	if (!sock_outside_sandbox(sk, sb) &&
	    BPF_CORE_READ(sk, sk_protocol) != IPPROTO_UDPLITE)
		return 0;
	if (BPF_CORE_READ(sock, type) == SOCK_RAW_)
		return raw_outside(sb, cgid, sock);
	family = BPF_CORE_READ(address, sa_family);
	if ((family != AF_INET || addrlen < (int)sizeof(struct sockaddr_in)) &&
	    (family != AF_INET6 || addrlen < SIN6_LEN_RFC2133))
		return 0;	/* AF_UNSPEC disconnects; the rest fail */
	bpf_probe_read_kernel(&sa6, family == AF_INET ?
			      sizeof(struct sockaddr_in) : SIN6_LEN_RFC2133,
			      address);
	return net_verdict(sb, cgid, EV_KIND_CONNECT, family == AF_INET6,
			   family == AF_INET6 ? (const __u8 *)&sa6.sin6_addr :
			   (const __u8 *)&((struct sockaddr_in *)&sa6)->sin_addr,
			   BPF_CORE_READ(sock, type), BPF_CORE_READ(sk, sk_protocol),
			   bpf_ntohs(sa6.sin6_port)) ? 0 : -EPERM;
}

/*
 * Sends: a connected stream goes to its peer whatever msg_name says (the
 * kernel ignores it), but an unconnected one sent to with MSG_FASTOPEN
 * connects to msg_name within the send (tcp_sendmsg_fastopen(), with no
 * socket_connect hook; a socket made inside meets the connect4/6
 * program there, one made outside meets nothing else); a datagram goes
 * to msg_name when given (AF_UNSPEC means "this IPv4 address" on an IPv4
 * socket, "the peer" on IPv6), else to the connected peer. An ICMP echo
 * ("ping") socket is judged here whoever made it: its sends meet no
 * cgroup program (ping_v4_sendmsg() has no sendmsg4 hook, only its
 * connect does), so with `icmp: true` an echo's payload would reach any
 * host.
 */
SEC("lsm/socket_sendmsg")
int BPF_PROG(stk_socket_sendmsg, struct socket *sock, struct msghdr *msg,
	     int size)
{
	struct sockaddr_in6 sa6 = {};
	struct sandbox *sb, sb_snap;
	struct sock *sk;
	void *name;
	__u16 family, nfam = AF_UNSPEC;
	bool fastopen, outside;
	__u64 cgid;
	int namelen, type, proto;

	sb = sandbox_current_hot(&cgid, &sb_snap);
	if (!sb)
		return 0;
	sk = BPF_CORE_READ(sock, sk);
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	if (family != AF_INET && family != AF_INET6)
		return family_outside(sb, cgid, sk, family, EV_KIND_SENDMSG);
	type = BPF_CORE_READ(sock, type);
	proto = BPF_CORE_READ(sk, sk_protocol);
	outside = sock_outside_sandbox(sk, sb);
	if (!outside && !(type == SOCK_DGRAM_ &&
			  (proto == IPPROTO_ICMP_ || proto == IPPROTO_ICMPV6_)))
		return 0;
	if (type == SOCK_RAW_)
		return raw_outside(sb, cgid, sock);
	name = BPF_CORE_READ(msg, msg_name);
	namelen = BPF_CORE_READ(msg, msg_namelen);
	fastopen = type == SOCK_STREAM_ &&
		   (BPF_CORE_READ(msg, msg_flags) & MSG_FASTOPEN_);
	if ((type != SOCK_STREAM_ || fastopen) && name &&
	    namelen >= (int)sizeof(__u16)) {
		bpf_probe_read_kernel(&nfam, sizeof(nfam), name);
		/* A stream's AF_UNSPEC disconnects: nothing is sent. */
		if (fastopen && nfam != AF_INET && nfam != AF_INET6)
			return 0;
		if (nfam == AF_INET6 && namelen >= SIN6_LEN_RFC2133)
			bpf_probe_read_kernel(&sa6, SIN6_LEN_RFC2133, name);
		else if ((nfam == AF_INET ||
			  (nfam == AF_UNSPEC && family == AF_INET)) &&
			 namelen >= (int)sizeof(struct sockaddr_in))
			bpf_probe_read_kernel(&sa6, sizeof(struct sockaddr_in), name);
		else if (nfam != AF_UNSPEC)
			return 0;	/* the kernel refuses it */
		if (nfam == AF_UNSPEC && family == AF_INET)
			nfam = AF_INET;
	}
	if (nfam == AF_UNSPEC) {
		/* A ping socket made inside: its connect was judged (by the
		 * connect4/6 program), and so its peer. */
		if (!outside)
			return 0;
		peer_of(sk, family, &sa6);
		nfam = family;
		/* Not connected: nothing is sent. A datagram socket says so
		 * by its state, not its port: a ping socket's connect leaves
		 * the port 0 (ping ignores it). */
		if (type == SOCK_STREAM_ ? !sa6.sin6_port :
		    BPF_CORE_READ(sk, __sk_common.skc_state) != TCP_ESTABLISHED_)
			return 0;
	}
	return net_verdict(sb, cgid, EV_KIND_SENDMSG, nfam == AF_INET6,
			   nfam == AF_INET6 ? (const __u8 *)&sa6.sin6_addr :
			   (const __u8 *)&((struct sockaddr_in *)&sa6)->sin_addr,
			   type, proto, bpf_ntohs(sa6.sin6_port)) ? 0 : -EPERM;
}

/*
 * Other ways to stop or starve a process across the sandbox's edge (the
 * agent above all): resource limits, priority and scheduling, and SIGIO.
 */
SEC("lsm/task_prlimit")
int BPF_PROG(stk_task_prlimit, const struct cred *cred, const struct cred *tcred,
	     unsigned int flags)
{
	/* Only called for another process, and the target task is not
	 * passed: refuse all of them. */
	CURRENT_OR_ALLOW();
	return lsm_deny(sb, conf, cgid, EV_KIND_TASK, EV_OP_PRLIMIT,
			EV_REASON_ALWAYS_DENIED, NULL, NULL, 0, 0);
}

#define TASK_HOOK(fn, hook, op, ...)					\
SEC("lsm/" #hook)							\
int BPF_PROG(fn, struct task_struct *p, ##__VA_ARGS__)			\
{									\
	CURRENT_OR_ALLOW();						\
	if (task_root_of(p) == sb->root_id)				\
		return 0;						\
	return lsm_deny(sb, conf, cgid, EV_KIND_TASK, op,		\
			EV_REASON_OUTSIDE_SANDBOX, NULL, NULL,		\
			BPF_CORE_READ(p, tgid), 0);			\
}

TASK_HOOK(stk_task_setnice, task_setnice, EV_OP_SETNICE, int nice)
TASK_HOOK(stk_task_setscheduler, task_setscheduler, EV_OP_SETSCHEDULER)
TASK_HOOK(stk_task_setioprio, task_setioprio, EV_OP_SETIOPRIO, int ioprio)

/*
 * SIGIO/SIGURG: F_SETOWN on a file makes later I/O on it signal the owner,
 * from whichever task does the I/O, so task_kill never sees it. Remember
 * which sandbox set the owner of each file, and refuse the signal when it
 * would cross that sandbox's edge (or the current task's).
 *
 * Not an LRU: a sandbox that armed one file against the agent, then set
 * the owner of 16,384 others, would have pushed the first entry out, and
 * the signal (F_SETSIG: any, SIGKILL too) would then have passed when an
 * outsider's I/O fired it. An entry goes when its file does
 * (stk_file_free()), or when an outsider sets that file's owner. file_set_fowner cannot
 * refuse (its hook returns nothing), so every way a sandbox sets an owner
 * that has a hook that can (fcntl F_SETOWN, F_SETOWN_EX, F_NOTIFY,
 * F_SETLEASE, F_SETFL with O_ASYNC; ioctl FIOSETOWN, SIOCSPGRP, FIOASYNC:
 * a tty's O_ASYNC sets its owner) writes the entry first, and a full
 * table refuses the call (table_full): never an owner without one.
 */
struct {
	/* Preallocated: an insert never waits on an allocation that 6.1's
	 * allocator for maps that allocate may fail for a moment (seen: an
	 * F_SETFL refused). */
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);	/* struct file * */
	__type(value, __u64);	/* sandbox root that set the owner */
} fowner SEC(".maps");

/* fowner's entries, about: stk_file_free() looks only while there are
 * any (a count that races may drift; it only decides whether to look). */
__u64 fowner_live = 0;

/* Write file's entry (root: the setter's sandbox); 0, or the map's
 * negative errno (-E2BIG: full). */
static __always_inline long fowner_put(__u64 key, __u64 root)
{
	__u64 *v = bpf_map_lookup_elem(&fowner, &key);
	long err;

	if (v) {
		*v = root;	/* in place: no element to take */
		return 0;
	}
	err = bpf_map_update_elem(&fowner, &key, &root, BPF_NOEXIST);
	if (!err) {
		__sync_fetch_and_add(&fowner_live, 1);
		return 0;
	}
	if (err == -EEXIST) {
		/* Another CPU's insert of the same file, just now. */
		v = bpf_map_lookup_elem(&fowner, &key);
		if (v) {
			*v = root;
			return 0;
		}
	}
	return err;
}

static __always_inline void fowner_drop(__u64 key)
{
	if (!bpf_map_delete_elem(&fowner, &key))
		__sync_fetch_and_add(&fowner_live, -1);
}

SEC("lsm/file_set_fowner")
int BPF_PROG(stk_file_set_fowner, struct file *file)
{
	__u64 key = (__u64)file, cgid;
	struct sandbox sb_snap, *sb = sandbox_current(&cgid, &sb_snap);

	if (sb)
		fowner_put(key, sb->root_id);
	else
		fowner_drop(key);
	return 0;
}

/* A file goes: its entry with it, so a table that filled empties again.
 * Runs for every file the host closes last: one load while no entry
 * exists at all, a lookup otherwise. */
SEC("lsm/file_free_security")
int BPF_PROG(stk_file_free, struct file *file)
{
	__u64 key = (__u64)file;

	if (fowner_live && bpf_map_lookup_elem(&fowner, &key))
		fowner_drop(key);
	return 0;
}

/* A sandbox is about to set file's owner: its entry first, or refuse. */
static __always_inline int fowner_arm(struct file *file)
{
	CURRENT_OR_ALLOW();
	if (!fowner_put((__u64)file, sb->root_id))
		return 0;
	return lsm_deny(sb, conf, cgid, EV_KIND_TASK, EV_OP_SIGIO,
			EV_REASON_TABLE_FULL, NULL, NULL, 0, 0);
}

#define F_SETFL_	4
#define O_ASYNC_	020000
#define FIOASYNC_	0x5452
#define F_SETOWN_	8
#define F_SETOWN_EX_	15
#define F_SETLEASE_	1024
#define F_NOTIFY_	1026
#define FIOSETOWN_	0x8901
#define SIOCSPGRP_	0x8902

/* Every fcntl() passes here: the command first, the lookup only for one
 * that sets an owner. */
SEC("lsm/file_fcntl")
int BPF_PROG(stk_file_fcntl, struct file *file, unsigned int cmd,
	     unsigned long arg)
{
	/* O_ASYNC on a tty sets its owner too (__tty_fasync(): the tty's
	 * process group, maybe outside). */
	if (cmd != F_SETOWN_ && cmd != F_SETOWN_EX_ && cmd != F_SETLEASE_ &&
	    cmd != F_NOTIFY_ && !(cmd == F_SETFL_ && (arg & O_ASYNC_)))
		return 0;
	return fowner_arm(file);
}

/* 6.1 embeds the owner in struct file; later kernels point to it. */
struct file___embedded {
	struct fown_struct f_owner;
} __attribute__((preserve_access_index));

/*
 * The record of a SIGIO refused because the sandbox that set the owner
 * would signal outside itself, fired by a task in no sandbox: it goes
 * under the setter's sandbox (cgroup_id = its root, its policy and mode),
 * with the firing task's pid and comm. A setter whose sandbox is gone
 * resolves to the conflict policy, which enforces: still one record.
 */
static __always_inline int sigio_setter_deny(__u64 setter,
					     struct task_struct *tsk, int sig)
{
	struct sandbox snap = { .slot = POLICY_SLOT_CONFLICT, .root_id = setter };
	struct sandbox *e = bpf_map_lookup_elem(&sandboxes, &setter);
	struct policy_conf *conf;
	__u32 id;

	if (e)
		snap = *e;
	sandbox_resolve(&snap);
	id = snap.policy_id;
	conf = bpf_map_lookup_elem(&policies, &id);
	if (!conf)
		return -EPERM;	/* cannot happen: an array, id < POLICY_MAX */
	return lsm_deny(&snap, conf, setter, EV_KIND_TASK, EV_OP_SIGIO,
			EV_REASON_OUTSIDE_SANDBOX, NULL, NULL,
			BPF_CORE_READ(tsk, tgid), sig);
}

SEC("lsm/file_send_sigiotask")
int BPF_PROG(stk_file_send_sigiotask, struct task_struct *tsk,
	     struct fown_struct *fown, int sig)
{
	struct policy_conf *conf = NULL;
	struct sandbox *sb, sb_snap;
	__u64 key, cgid, *setter, target = task_root_of(tsk);
	int state;

	if (bpf_core_field_exists(fown->file))
		key = (__u64)BPF_CORE_READ(fown, file);
	else
		key = (__u64)fown -
		      bpf_core_field_offset(struct file___embedded, f_owner);
	setter = bpf_map_lookup_elem(&fowner, &key);
	/* Not through task storage: this hook also runs in interrupt
	 * context (kill_fasync from a driver or the network stack), where
	 * current is whoever was interrupted, maybe halfway through
	 * writing its own task_verdict in a hook of its own. */
	sb = sandbox_lookup(&cgid, &sb_snap, &state, false);
	if (sb && target != sb->root_id)
		goto deny;
	if (setter && target != *setter) {
		/* Set by a sandbox, fired by someone else: report it under
		 * the setter's sandbox when the current task has none. */
		if (!sb)
			return sigio_setter_deny(*setter, tsk, sig);
		goto deny;
	}
	return 0;
deny:
	{
		__u32 id = sb->policy_id;

		conf = bpf_map_lookup_elem(&policies, &id);
		if (!conf)
			return -EPERM;
		return lsm_deny(sb, conf, cgid, EV_KIND_TASK, EV_OP_SIGIO,
				EV_REASON_OUTSIDE_SANDBOX, NULL, NULL,
				BPF_CORE_READ(tsk, tgid), sig);
	}
}

/* ioctls that reach past the file: typing into the outside terminal
 * (TIOCSTI, TIOCLINUX), changing inode flags (chattr), and setting the
 * host's hardware clock (RTC_SET_TIME; the system clock is lsm/settime in
 * bpf/priv.bpf.c). A 32-bit task's SETFLAGS has its own number
 * (FS_IOC32_SETFLAGS: the int argument). */
#define TIOCSTI			0x5412
#define TIOCLINUX		0x541C
#define FS_IOC_SETFLAGS		0x40086602
#define FS_IOC32_SETFLAGS	0x40046602
#define FS_IOC_FSSETXATTR	0x401c5820
#define RTC_SET_TIME		0x4024700a	/* _IOW('p', 0x0a, struct rtc_time) */

/*
 * The socket ioctls that change the host's network (include/uapi/linux/
 * sockios.h, if_tun-era tunnels at SIOCDEVPRIVATE): routes, interface
 * addresses, flags, names, ARP entries, bridges, bonds, tunnels, NIC
 * settings, wireless. They ask CAP_NET_ADMIN, and are what the netlink
 * write filter refuses, by the older door: with NET_ADMIN in a policy's
 * capabilities, a tunnel and a route into it would carry an allowed
 * connect to any host. The plain reads (SIOCGIFFLAGS, SIOCGIFADDR,
 * SIOCGIFCONF...) stay allowed; the "reads" that also write
 * (SIOCGIFBR, SIOCGIFVLAN, SIOCETHTOOL, the private ranges) do not.
 */
static __always_inline bool sockios_set(unsigned int cmd)
{
	/* Wireless extensions: the even numbers set (SIOCSIW*). */
	if (cmd >= 0x8b00 && cmd <= 0x8bff)
		return !(cmd & 1);
	if (cmd < 0x8900 || cmd > 0x89ff)
		return false;
	/* Device- and protocol-private: tunnels (SIOCADDTUNNEL...), the
	 * bridge's old BRCTL_ADD_IF, bonding's old enslave; their reads
	 * (SIOCGETTUNNEL) go with them. */
	if (cmd >= 0x89e0)
		return true;
	switch (cmd) {
	case 0x8940:				/* SIOCGIFBR: adds bridges too */
	case 0x8946: case 0x894a:		/* SIOCETHTOOL, SIOCWANDEV */
	case 0x8982:				/* SIOCGIFVLAN: adds VLANs too */
	case 0x890b: case 0x890c: case 0x890d:	/* SIOCADDRT, DELRT, RTMSG */
	case 0x8914: case 0x8916: case 0x8918:	/* SIOCSIFFLAGS, ADDR, DSTADDR */
	case 0x891a: case 0x891c: case 0x891e:	/* BRDADDR, NETMASK, METRIC */
	case 0x8920: case 0x8922: case 0x8923:	/* MEM, MTU, NAME */
	case 0x8924: case 0x8926: case 0x8930:	/* HWADDR, ENCAP, SLAVE */
	case 0x8931: case 0x8932: case 0x8934:	/* ADD/DELMULTI, PFLAGS */
	case 0x8936: case 0x8937: case 0x8941:	/* DIFADDR, HWBROADCAST, BR */
	case 0x8943: case 0x8949:		/* TXQLEN, SIOCSMIIREG */
	case 0x8953: case 0x8955:		/* SIOCDARP, SIOCSARP */
	case 0x8960: case 0x8962: case 0x8971:	/* DRARP, SRARP, SIOCSIFMAP */
	case 0x8980: case 0x8981: case 0x8983:	/* ADD/DELDLCI, SIOCSIFVLAN */
	case 0x8990: case 0x8991: case 0x8992:	/* bonding: enslave, release, */
	case 0x8995:				/* hwaddr, change active */
	case 0x89a0: case 0x89a1: case 0x89a2:	/* bridge add/del, addif */
	case 0x89a3: case 0x89b0:		/* delif, SIOCSHWTSTAMP */
	case 0x89f1: case 0x89f2: case 0x89f3:	/* ADD/DEL/CHGTUNNEL */
	case 0x89f5: case 0x89f6: case 0x89f7:	/* ADD/DEL/CHGPRL */
	case 0x89f9: case 0x89fa: case 0x89fb:	/* ADD/DEL/CHG6RD */
		return true;
	}
	return false;
}

static __always_inline bool ioctl_refused(unsigned int cmd)
{
	return cmd == TIOCSTI || cmd == TIOCLINUX || cmd == FS_IOC_SETFLAGS ||
	       cmd == FS_IOC32_SETFLAGS || cmd == FS_IOC_FSSETXATTR ||
	       cmd == RTC_SET_TIME || sockios_set(cmd);
}

/* Kernels without file_ioctl_compat pass compat ioctls here too. */
SEC("lsm/file_ioctl")
int BPF_PROG(stk_file_ioctl, struct file *file, unsigned int cmd,
	     unsigned long arg)
{
	if (cmd == FIOSETOWN_ || cmd == SIOCSPGRP_ || cmd == FIOASYNC_)
		return fowner_arm(file);
	if (!ioctl_refused(cmd))
		return 0;
	{
		CURRENT_OR_ALLOW_HOT();
		return lsm_deny(sb, conf, cgid, EV_KIND_FILE, EV_OP_IOCTL,
				EV_REASON_ALWAYS_DENIED, NULL, NULL, 0, cmd);
	}
}

/* 6.7, and 6.1 stable kernels since early 2024 (a backport; Debian's 6.1 has it): a 32-bit
 * ioctl (compat_sys_ioctl(), or int $0x80 from any task) reaches this
 * hook and not file_ioctl, so without it TIOCSTI and chattr would pass. */
SEC("lsm/file_ioctl_compat")
int BPF_PROG(stk_file_ioctl_compat, struct file *file, unsigned int cmd,
	     unsigned long arg)
{
	if (cmd == FIOSETOWN_ || cmd == SIOCSPGRP_ || cmd == FIOASYNC_)
		return fowner_arm(file);
	if (!ioctl_refused(cmd))
		return 0;
	{
		CURRENT_OR_ALLOW_HOT();
		return lsm_deny(sb, conf, cgid, EV_KIND_FILE, EV_OP_IOCTL,
				EV_REASON_ALWAYS_DENIED, NULL, NULL, 0, cmd);
	}
}
