// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Least privilege for root inside a sandbox (issue 11): the capability
 * set (`capabilities:`), and what no capability may buy a sandbox: kernel
 * code and images, module autoload, lockdown-class operations, the clock,
 * the kernel log, process accounting, perf beyond the sandbox, notify
 * marks beyond the read scope, and userfaultfd unless allowed.
 *
 * Ordering with the kernel's own checks: the capability LSM runs before
 * BPF, and most of these syscalls ask capable() first (init_module:
 * SYS_MODULE, settimeofday: SYS_TIME, syslog: SYSLOG...). So with the
 * default set the refusal is a capability record; the kernel-kind record
 * appears when the policy lists the capability. Either way, one record.
 */
#include "lsm.bpf.h"

#define CAP_SYS_MODULE		16
#define CAP_SYS_PACCT		20
#define CAP_SYS_ADMIN		21
/* include/linux/security.h (6.1 .. 6.18): a speculative check. */
#define CAP_OPT_NOAUDIT		(1u << 1)

/* x86_64 syscall numbers (arch/x86/entry/syscalls/syscall_64.tbl). */
#define NR_FCNTL		72
#define NR_ACCT			163
#define NR_DELETE_MODULE	176
#define NR_INOTIFY_ADD_WATCH	254
#define NR_FANOTIFY_MARK	301

/* enum kernel_load_data_id / kernel_read_file_id share their numbers. */
#define LOAD_FIRMWARE		1
#define LOAD_MODULE		2
#define LOAD_KEXEC_IMAGE	3
#define LOAD_KEXEC_INITRAMFS	4

/* include/linux/perf_event.h */
#define PERF_SECURITY_OPEN	0
#define PERF_TYPE_HARDWARE	0
#define PERF_TYPE_SOFTWARE	1
#define PERF_TYPE_HW_CACHE	3
#define PERF_TYPE_RAW		4

/* FS_OPEN_PERM, FS_ACCESS_PERM, FS_OPEN_EXEC_PERM, FS_PRE_ACCESS (6.14+):
 * a listener that must answer before the access goes on. */
#define FS_PERM_EVENTS		(0x00010000 | 0x00020000 | 0x00040000 | \
				 0x00100000)
#define FSNOTIFY_OBJ_INODE	0

/*
 * One record per refused syscall. The kernel often asks for one
 * capability and then for CAP_SYS_ADMIN as a fallback in the same call
 * (syslog: SYSLOG then SYS_ADMIN; perfmon_capable(), bpf_capable(),
 * checkpoint_restore_ns_capable()). The rule: a SYS_ADMIN refusal that
 * follows, within CAP_CHAIN_NS, a recorded refusal of another capability
 * by the same task in the same syscall (same number, instruction pointer,
 * stack pointer and argument registers) is counted but not recorded. The
 * remembered refusal is used up by that, so the next identical syscall
 * records again.
 */
#define CAP_CHAIN_NS		(10ULL * 1000 * 1000)

struct cap_last {
	__u64 regs[6];		/* orig_ax, ip, sp, di, si, dx */
	__u64 ts;
	__u32 cap;
	__u32 live;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct cap_last);
} cap_last SEC(".maps");

static __always_inline void regs_of(__u64 *r)
{
	struct pt_regs *regs = user_regs();

	r[0] = BPF_CORE_READ(regs, orig_ax);
	r[1] = BPF_CORE_READ(regs, ip);
	r[2] = BPF_CORE_READ(regs, sp);
	r[3] = BPF_CORE_READ(regs, di);
	r[4] = BPF_CORE_READ(regs, si);
	r[5] = BPF_CORE_READ(regs, dx);
}

/* The record of a refused acct(FILE): path as the caller wrote it (the
 * syscall's first argument), since no file is open yet. */
static __always_inline int deny_acct(struct sandbox *sb,
				     struct policy_conf *conf, __u64 cgid)
{
	const char *user = (const char *)BPF_CORE_READ(user_regs(), di);
	struct lsm_scratch *s = scratch();

	if (!s)
		return -EPERM;
	s->buf[0][0] = '\0';
	if (user)
		bpf_probe_read_user_str(s->buf[0], EV_PATH_MAX, user);
	return lsm_deny(sb, conf, cgid, EV_KIND_KERNEL, EV_OP_ACCT,
			EV_REASON_ALWAYS_DENIED, s->buf[0], NULL, 0, 0);
}

/* Its entries, about (stk_cred_free() looks only while there are any). */
__u64 sandbox_creds_live = 0;

/* 0, or the map's negative errno (-E2BIG: full). */
static __always_inline long sandbox_cred_put(const struct cred *c)
{
	__u64 k = (__u64)c;
	__u8 one = 1;
	long err;

	if (bpf_map_lookup_elem(&sandbox_creds, &k))
		return 0;
	err = bpf_map_update_elem(&sandbox_creds, &k, &one, BPF_NOEXIST);
	if (!err)
		__sync_fetch_and_add(&sandbox_creds_live, 1);
	return err == -EEXIST ? 0 : err;
}

SEC("lsm/capable")
int BPF_PROG(stk_capable, const struct cred *cred, struct user_namespace *ns,
	     int cap, unsigned int opts)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct cap_last *last;
	__u64 r[6], now;
	int i;
	bool same;

	/* Whose credentials: the task's own (real_cred), the sandbox
	 * asking; any other it did not borrow, a file's f_cred
	 * (file_ns_capable(): whoever opened it, which a sandbox keeps
	 * across a change of its own: /proc/self/pagemap opened before a
	 * setuid(0)) or another task's, judged by the current task's
	 * sandbox too. Its subjective ones while they differ from its real
	 * ones (override_creds()) are the sandbox asking when they are a
	 * sandbox's credentials (sandbox_creds: io_uring running a request
	 * under a personality or under its submitter's credentials of when
	 * it was queued, access(2)'s, a core dump's), and the kernel's own
	 * otherwise (overlayfs's lookups and copy-ups under its mounter's),
	 * left to the kernel. Cheap first: plain loads through the task's
	 * BTF pointer, as every capable() check on the host pays them; the
	 * lookup only for an override. */
	if (cred != task->real_cred && cred == task->cred &&
	    !sandbox_cred(cred))
		return 0;
	{
		CURRENT_OR_ALLOW_HOT();
		if (cap >= 0 && cap < 64 && (conf->caps & (1ULL << cap))) {
			/* delete_module has no LSM hook of its own: its only
			 * check is this one. */
			if (cap == CAP_SYS_MODULE && syscall_nr() == NR_DELETE_MODULE)
				return lsm_deny(sb, conf, cgid, EV_KIND_KERNEL,
						EV_OP_DELETE_MODULE,
						EV_REASON_ALWAYS_DENIED, NULL, NULL,
						0, 0);
			/* acct(2): the acct LSM hook is missing from the BTF
			 * of Debian's 6.1 (no bpf_lsm_acct to attach to), so
			 * judge it here, at its only capability check, before
			 * any file is opened. acct(NULL) turns accounting off:
			 * refused too, the host's accounting is not ours. */
			if (cap == CAP_SYS_PACCT && syscall_nr() == NR_ACCT)
				return deny_acct(sb, conf, cgid);
			return 0;
		}
		/* A probe the kernel itself does not audit (vm_enough_memory
		 * asks for SYS_ADMIN on every mmap): refuse, count, no record. */
		if (opts & CAP_OPT_NOAUDIT)
			return lsm_deny_quiet(sb, conf, EV_KIND_CAPABILITY);
		regs_of(r);
		now = bpf_ktime_get_ns();
		last = bpf_task_storage_get(&cap_last, task, NULL,
					    BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (last && last->live && cap == CAP_SYS_ADMIN &&
		    last->cap != CAP_SYS_ADMIN && now - last->ts < CAP_CHAIN_NS) {
			same = true;
			for (i = 0; i < 6; i++)
				if (last->regs[i] != r[i])
					same = false;
			if (same) {
				last->live = 0;
				return lsm_deny_quiet(sb, conf, EV_KIND_CAPABILITY);
			}
		}
		if (last) {
			for (i = 0; i < 6; i++)
				last->regs[i] = r[i];
			last->ts = now;
			last->cap = cap;
			last->live = 1;
		}
		return lsm_deny(sb, conf, cgid, EV_KIND_CAPABILITY, 0,
				EV_REASON_CAPABILITY, NULL, NULL, 0, (__u32)cap);
	}
}

/* Copies of the sandbox's own: of the task's real credentials, or of
 * credentials in the table. Not of those the kernel put on the task for
 * the call (overlayfs prepares its file creation's from its mounter's). */
SEC("lsm/cred_prepare")
int BPF_PROG(stk_cred_prepare, struct cred *new, const struct cred *old,
	     gfp_t gfp)
{
	struct task_struct *t = bpf_get_current_task_btf();

	CURRENT_OR_ALLOW_HOT();
	if (old != t->real_cred && !sandbox_cred(old))
		return 0;
	if (!sandbox_cred_put(new))
		return 0;
	return lsm_deny(sb, conf, cgid, EV_KIND_TASK, EV_OP_CREDS,
			EV_REASON_TABLE_FULL, NULL, NULL, 0, 0);
}

SEC("lsm/cred_free")
int BPF_PROG(stk_cred_free, struct cred *cred)
{
	__u64 k = (__u64)cred;

	if (sandbox_creds_live && bpf_map_lookup_elem(&sandbox_creds, &k) &&
	    !bpf_map_delete_elem(&sandbox_creds, &k))
		__sync_fetch_and_add(&sandbox_creds_live, -1);
	return 0;
}

/*
 * A request with a personality (IORING_REGISTER_PERSONALITY: the
 * credentials of whoever registered them, when it did, maybe before a
 * setuid, or an outsider who handed the ring over) runs under them,
 * where it is issued (the task, later through task_work, a worker,
 * SQPOLL): they join sandbox_creds, so every check under them is judged
 * by this sandbox, whoever made them.
 */
SEC("lsm/uring_override_creds")
int BPF_PROG(stk_uring_creds, const struct cred *new)
{
	CURRENT_OR_ALLOW();
	if (!sandbox_cred_put(new))
		return 0;
	return lsm_deny(sb, conf, cgid, EV_KIND_TASK, EV_OP_URING_CREDS,
			EV_REASON_TABLE_FULL, NULL, NULL, 0, 0);
}

/* ---- kernel code and images --------------------------------------------- */

static __always_inline __u8 load_op(int id)
{
	if (id == LOAD_MODULE)
		return EV_OP_LOAD_MODULE;
	if (id == LOAD_KEXEC_IMAGE || id == LOAD_KEXEC_INITRAMFS)
		return EV_OP_LOAD_KEXEC;
	if (id == LOAD_FIRMWARE)
		return EV_OP_LOAD_FIRMWARE;
	return EV_OP_LOAD_DATA;	/* policy, x509, unknown: fail closed */
}

/* init_module, kexec_load: the image comes from memory. */
SEC("lsm/kernel_load_data")
int BPF_PROG(stk_kernel_load_data, enum kernel_load_data_id id, bool contents)
{
	CURRENT_OR_ALLOW();
	return lsm_deny_arg(sb, conf, cgid, EV_KIND_KERNEL, load_op(id),
			    EV_REASON_ALWAYS_DENIED, NULL, NULL, 0, 0, id);
}

/* finit_module, kexec_file_load, firmware and policy files: the record
 * names the file. */
SEC("lsm/kernel_read_file")
int BPF_PROG(stk_kernel_read_file, struct file *file,
	     enum kernel_read_file_id id, bool contents)
{
	const char *path = NULL;
	struct lsm_scratch *s;
	long off;

	CURRENT_OR_ALLOW();
	s = scratch();
	if (s && file) {
		off = walk(s->buf[0], BPF_CORE_READ(file, f_path.mnt),
			   BPF_CORE_READ(file, f_path.dentry));
		if (off >= 0)
			path = &s->buf[0][off & MASK];
	}
	return lsm_deny_arg(sb, conf, cgid, EV_KIND_KERNEL, load_op(id),
			    EV_REASON_ALWAYS_DENIED, path, NULL, 0, 0, id);
}

/* Module autoload on the sandbox's behalf (net-pf-16-proto-4, fs-*,
 * char-major-*...): the kernel's code is not the sandbox's to choose. */
SEC("lsm/kernel_module_request")
int BPF_PROG(stk_kernel_module_request, char *kmod_name)
{
	CURRENT_OR_ALLOW();
	return lsm_deny(sb, conf, cgid, EV_KIND_KERNEL, EV_OP_MODULE_REQUEST,
			EV_REASON_ALWAYS_DENIED, kmod_name, NULL, 0, 0);
}

/* ---- host state --------------------------------------------------------- */

/* Everything lockdown guards (ioperm/iopl, /dev/mem, /proc/kcore, perf
 * and BPF kernel reads, debugfs, ...): arg is the running kernel's enum
 * lockdown_reason, whose numbering moves between versions. */
SEC("lsm/locked_down")
int BPF_PROG(stk_locked_down, enum lockdown_reason what)
{
	CURRENT_OR_ALLOW();
	return lsm_deny_arg(sb, conf, cgid, EV_KIND_KERNEL, EV_OP_LOCKDOWN,
			    EV_REASON_ALWAYS_DENIED, NULL, NULL, 0, 0, what);
}

/* clock_settime, settimeofday, adjtimex that sets the time. */
SEC("lsm/settime")
int BPF_PROG(stk_settime, const struct timespec64 *ts, const struct timezone *tz)
{
	CURRENT_OR_ALLOW();
	return lsm_deny(sb, conf, cgid, EV_KIND_KERNEL, EV_OP_SETTIME,
			EV_REASON_ALWAYS_DENIED, NULL, NULL, 0, 0);
}

/* syslog(2), and /dev/kmsg opened for reading (which asks the same). */
SEC("lsm/syslog")
int BPF_PROG(stk_syslog, int type)
{
	CURRENT_OR_ALLOW();
	return lsm_deny_arg(sb, conf, cgid, EV_KIND_KERNEL, EV_OP_SYSLOG,
			    EV_REASON_ALWAYS_DENIED, NULL, NULL, 0, 0, type);
}

/* ---- perf --------------------------------------------------------------- */

/* Program names differ in their first 15 characters: pins and link lists
 * show no more (stk_perf_event_* would be one name twice). */

/*
 * perf: deny refuses the syscall. The kernel calls this hook again for
 * the kernel, CPU and tracepoint checks of the same call; judging only
 * the first keeps one record per call, also in audit mode.
 */
SEC("lsm/perf_event_open")
int BPF_PROG(stk_perf_open, struct perf_event_attr *attr, int type)
{
	if (type != PERF_SECURITY_OPEN)
		return 0;
	{
		CURRENT_OR_ALLOW();
		if (conf->flags & SANDBOX_PERF)
			return 0;
		return lsm_deny_arg(sb, conf, cgid, EV_KIND_PERF, EV_OP_PERF_OPEN,
				    EV_REASON_PERF_NOT_ALLOWED, NULL, NULL, 0, 0,
				    BPF_CORE_READ(attr, type));
	}
}

/* The same on kernels whose hook has no attr (6.18: perf_event_open(int
 * type)); the record has no perf_type there. One of the two loads, by the
 * hook's prototype (agent/lsm_table.c). */
SEC("lsm/perf_event_open")
int BPF_PROG(stk_perf_open_t, int type)
{
	if (type != PERF_SECURITY_OPEN)
		return 0;
	{
		CURRENT_OR_ALLOW();
		if (conf->flags & SANDBOX_PERF)
			return 0;
		return lsm_deny_arg(sb, conf, cgid, EV_KIND_PERF, EV_OP_PERF_OPEN,
				    EV_REASON_PERF_NOT_ALLOWED, NULL, NULL, 0, 0, 0);
	}
}

/*
 * perf: allow: only counters on a task of the same sandbox, of the
 * hardware, software, cache and raw PMUs, that exclude the kernel.
 * Tracepoints, breakpoints and every dynamic PMU (kprobe, uprobe...) read
 * the kernel or other processes: reason kernel_pmu, and so is a counter
 * without exclude_kernel. Inherited counters (a fork) were judged in
 * their parent; the child is not in its cgroup yet when they are made.
 */
/*
 * 6.10 moved the software cpu-clock and task-clock events to PMUs of
 * their own ("cpu_clock", "task_clock"), whose dynamic type replaces
 * PERF_TYPE_SOFTWARE in the event's attr: still software counters.
 */
static __always_inline bool is_clock_pmu(const char *name)
{
	static const char cpu[] = "cpu_clock", task[] = "task_clock";
	bool is_cpu = true, is_task = true;
	char n[12] = {};
	long len;
	int i;

	if (!name)
		return false;
	len = bpf_probe_read_kernel_str(n, sizeof(n), name);
	for (i = 0; i < (int)sizeof(task); i++) {
		if (i < (int)sizeof(cpu) && n[i] != cpu[i])
			is_cpu = false;
		if (n[i] != task[i])
			is_task = false;
	}
	return (is_cpu && len == sizeof(cpu)) || (is_task && len == sizeof(task));
}

SEC("lsm/perf_event_alloc")
int BPF_PROG(stk_perf_alloc, struct perf_event *event)
{
	struct perf_event_attr *attr;
	struct task_struct *target;
	__u32 type, tpid = 0;
	__u8 reason = 0;

	if (BPF_CORE_READ(event, parent))
		return 0;
	{
		CURRENT_OR_ALLOW();
		/* perf: deny already refused the syscall; what else comes here
		 * (ptrace breakpoints) is the kernel's own use. */
		if (!(conf->flags & SANDBOX_PERF))
			return 0;
		attr = &event->attr;
		type = BPF_CORE_READ(attr, type);
		if (is_clock_pmu(BPF_CORE_READ(event, pmu, name)))
			type = PERF_TYPE_SOFTWARE;
		target = BPF_CORE_READ(event, hw.target);
		if (target)
			tpid = BPF_CORE_READ(target, tgid);
		if (type != PERF_TYPE_HARDWARE && type != PERF_TYPE_SOFTWARE &&
		    type != PERF_TYPE_HW_CACHE && type != PERF_TYPE_RAW)
			reason = EV_REASON_KERNEL_PMU;
		else if (!BPF_CORE_READ_BITFIELD_PROBED(attr, exclude_kernel))
			reason = EV_REASON_KERNEL_PMU;
		else if (!target || task_root_of(target) != sb->root_id)
			reason = EV_REASON_SYSTEM_WIDE;
		if (!reason)
			return 0;
		return lsm_deny_arg(sb, conf, cgid, EV_KIND_PERF, EV_OP_PERF_OPEN,
				    reason, NULL, NULL, tpid, 0, type);
	}
}

/* ---- watching outsiders ------------------------------------------------- */

/*
 * inotify, fanotify and dnotify marks. A permission mark makes other
 * processes' opens wait for the sandbox's answer (the agent's too): never.
 * Any other mark sees what happens at a path, so it must lie in the read
 * scope; a mount or filesystem mark sees the whole of it, judged as "/".
 */
SEC("lsm/path_notify")
int BPF_PROG(stk_path_notify, const struct path *path, __u64 mask,
	     unsigned int obj_type)
{
	struct lsm_scratch *s;
	long nr, off;
	__u8 op, reason;

	CURRENT_OR_ALLOW();
	nr = syscall_nr();
	op = nr == NR_INOTIFY_ADD_WATCH ? EV_OP_INOTIFY :
	     nr == NR_FCNTL ? EV_OP_DNOTIFY : EV_OP_FANOTIFY;
	if (mask & FS_PERM_EVENTS)
		return lsm_deny_arg(sb, conf, cgid, EV_KIND_NOTIFY,
				    EV_OP_FANOTIFY_PERM, EV_REASON_ALWAYS_DENIED,
				    NULL, NULL, 0, 0, (__u32)mask);
	s = scratch();
	if (!s)
		return -EPERM;
	if (obj_type != FSNOTIFY_OBJ_INODE) {
		s->buf[0][0] = '/';
		s->buf[0][1] = '\0';
		reason = judge(s, sb, conf, s->buf[0], 1, WANT_READ);
		if (!reason)
			return 0;
		return lsm_deny_arg(sb, conf, cgid, EV_KIND_NOTIFY, op, reason,
				    s->buf[0], NULL, 0, obj_type, (__u32)mask);
	}
	off = walk(s->buf[0], BPF_CORE_READ(path, mnt), BPF_CORE_READ(path, dentry));
	if (off < 0)
		return lsm_deny_arg(sb, conf, cgid, EV_KIND_NOTIFY, op,
				    EV_REASON_PATH_TOO_LONG, NULL, NULL, 0,
				    obj_type, (__u32)mask);
	reason = judge(s, sb, conf, &s->buf[0][off & MASK],
		       (FILE_BUF_SIZE - 1 - off) & MASK, WANT_READ);
	if (!reason)
		return 0;
	return lsm_deny_arg(sb, conf, cgid, EV_KIND_NOTIFY, op, reason,
			    &s->buf[0][off & MASK], NULL, 0, obj_type, (__u32)mask);
}

/* userfaultfd stalls the kernel mid-copy at a time the sandbox picks,
 * the classic way to win a kernel race: only when the policy allows it. */
SEC("lsm/inode_init_security_anon")
int BPF_PROG(stk_inode_init_security_anon, struct inode *inode,
	     const struct qstr *name, const struct inode *context_inode)
{
	static const char uffd[] = "[userfaultfd]";
	char got[sizeof(uffd)] = {};
	unsigned int i;

	bpf_probe_read_kernel_str(got, sizeof(got), BPF_CORE_READ(name, name));
	for (i = 0; i < sizeof(uffd); i++)
		if (got[i] != uffd[i])
			return 0;
	{
		CURRENT_OR_ALLOW();
		if (conf->flags & SANDBOX_USERFAULTFD)
			return 0;
		return lsm_deny(sb, conf, cgid, EV_KIND_KERNEL, EV_OP_USERFAULTFD,
				EV_REASON_ALWAYS_DENIED, NULL, NULL, 0, 0);
	}
}
