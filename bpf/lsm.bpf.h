/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Helpers shared by the BPF-LSM programs (bpf/file.bpf.c, bpf/lsm.bpf.c).
 * These programs are global (BPF_LSM_MAC), so every one starts by asking
 * whether the current task is in a sandbox; outsiders leave after at most
 * two map lookups (sandbox_current()).
 */
#ifndef STOCKADE_LSM_BPF_H
#define STOCKADE_LSM_BPF_H

#include "common.bpf.h"
#include "file.h"
#include "limits.bpf.h"
#include <bpf/bpf_tracing.h>

#define EPERM		1
#define EEXIST		17
#define ENAMETOOLONG	36
#define MASK		(FILE_BUF_SIZE - 1)

/*
 * Per-CPU scratch: two path buffers (rename and link judge two paths) and
 * lookup keys. Each buffer is twice FILE_BUF_SIZE so that the verifier
 * can bound every masked offset + length inside it.
 *
 * buf[0] is also the path of two keys whose headers sit in hdr, right in
 * front of it: a file_cg_key from hdr[0] and a file_key from hdr[2] (the
 * cgroup lookup is made first, so the file_key's header may then overwrite
 * its cgroup id). A path that bpf_d_path() wrote at buf[0] is looked up
 * where it lies, with no copy (judge_file()); a walked path ends the
 * buffer, so it is copied into key or cg_key.
 */
struct lsm_scratch {
	union {
		struct file_cg_key dp_cg_key;
		struct {
			__u32 dp_pad[2];
			struct file_key dp_key;
		};
		struct {
			__u32 hdr[4];
			char buf[2][FILE_BUF_SIZE * 2];
		};
	};
	struct file_key key;
	struct file_cg_key cg_key;
};

_Static_assert(__builtin_offsetof(struct lsm_scratch, dp_cg_key.path) ==
	       __builtin_offsetof(struct lsm_scratch, buf), "cg key path is buf[0]");
_Static_assert(__builtin_offsetof(struct lsm_scratch, dp_key.path) ==
	       __builtin_offsetof(struct lsm_scratch, buf), "key path is buf[0]");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lsm_scratch);
} lsm_scratch SEC(".maps") __weak;

/*
 * The file decision cache's generation (include/file.h): bumped by the
 * agent after it writes file_rules, file_cg_rules or policies
 * (agent/policy_maps.c, file_gen_bump()), and by the hooks below for
 * anyone's rename, chroot, pivot_root, link, and unlink of a file with
 * another name. __weak: one variable for every object that includes this.
 */
__u64 file_gen __weak = 1;

static __always_inline void file_gen_bump(void)
{
	__sync_fetch_and_add(&file_gen, 1);
}

/* Per-policy denial counters by kind: [policy * EV_KIND_MAX + kind]. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, POLICY_MAX * EV_KIND_MAX);
	__type(key, __u32);
	__type(value, __u64);
} lsm_count SEC(".maps") __weak;

/*
 * The credentials a sandbox's tasks make (sandbox_creds, written by
 * bpf/priv.bpf.c): every prepare_creds() of a task in a sandbox (fork,
 * exec, setuid, access(2), a core dump...), and every personality an
 * io_uring request of one runs under. stk_capable() judges a check under
 * overridden credentials only when they are in it, and the kernel's own
 * changes (kernel_own_open(), kernel_own_change() in bpf/file.bpf.c) are
 * never under them: the kernel's own overrides (overlayfs's mounter's,
 * made outside) are not in it. A table that is full refuses the new
 * credentials (the fork, the setuid fails: table_full), never leaves them
 * out. Entries go with their credentials (cred_free). __weak: one map
 * for every object that includes this.
 */
#define SANDBOX_CREDS_MAX	131072

struct {
	/* Preallocated (about 8 MiB): a fork must never fail because 6.1's
	 * allocator for maps that allocate had no element at hand. */
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SANDBOX_CREDS_MAX);
	__type(key, __u64);	/* struct cred * */
	__type(value, __u8);
} sandbox_creds SEC(".maps") __weak;

static __always_inline bool sandbox_cred(const struct cred *c)
{
	__u64 k = (__u64)c;

	return bpf_map_lookup_elem(&sandbox_creds, &k);
}

static __always_inline struct lsm_scratch *scratch(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&lsm_scratch, &zero);
}

/*
 * The nearest `sandboxes` entry of a cgroup, itself first, then its
 * ancestors: nearest_entry() fills found, snap (a copy taken at the
 * lookup), id (the entry's cgroup) and up (0: the cgroup's own entry).
 * The scan is a bpf_loop() callback, not a loop, because the verifier
 * checks a callback once, where SANDBOX_MAX_DEPTH unrolled levels were
 * checked one by one in every program (sandbox_lookup()'s scan says
 * more). The cgroup goes in as a number and back to a local before its
 * CO-RE reads, like walk_step()'s fields.
 */
struct nearest {
	__u64 cgrp;		/* struct cgroup * */
	int level;
	bool found;
	__u32 up;
	__u64 id;
	struct sandbox snap;
};

static long nearest_step(__u32 i, void *ctx)
{
	struct nearest *c = ctx;
	struct cgroup *cgrp = (void *)c->cgrp, *anc;
	int level = c->level - (int)i;
	struct sandbox *sb;
	__u64 id;

	if (level < 0)
		return 1;
	anc = BPF_CORE_READ(cgrp, ancestors[level]);
	if (!anc)
		return 1;
	id = BPF_CORE_READ(anc, kn, id);
	sb = bpf_map_lookup_elem(&sandboxes, &id);
	if (!sb)
		return 0;
	c->snap = *sb;
	c->id = id;
	c->up = i;
	c->found = true;
	return 1;
}

static __always_inline void nearest_entry(struct cgroup *cgrp, struct nearest *c)
{
	c->cgrp = (__u64)cgrp;
	c->level = BPF_CORE_READ(cgrp, level);
	c->found = false;
	bpf_loop(SANDBOX_MAX_DEPTH, nearest_step, c, 0);
}

/*
 * The sandbox root of any cgroup, 0 when it is in none: its own entry,
 * else its ancestors' (nearest first). A pending cgroup (nearest entry a
 * WATCHED directory: include/sandbox.h) is a sandbox of its own until the
 * agent classifies it, as sandbox_lookup() judges it.
 */
static __always_inline __u64 cgroup_root_of(struct cgroup *cgrp)
{
	struct nearest c;

	nearest_entry(cgrp, &c);
	if (!c.found)
		return 0;
	if (c.snap.policy_id == SANDBOX_ENTRY_WATCHED)
		return c.up ? BPF_CORE_READ(cgrp, kn, id) : 0;
	return c.snap.root_id;	/* 0 for an OUTSIDE entry */
}

static __always_inline __u64 task_root_of(struct task_struct *t)
{
	return cgroup_root_of(BPF_CORE_READ(t, cgroups, dfl_cgrp));
}

/*
 * Build and submit one BPF-LSM record (struct file_event) for the current
 * task: the one place they are made. Best effort: a full ring counts it
 * as lost (include/events.h), and no caller's verdict depends on it.
 */
static __always_inline void lsm_record(__u32 policy_id, __u64 cgid, __u8 type,
				       __u8 kind, __u8 op, __u8 reason,
				       const char *path, const char *path2,
				       __u32 target_pid, __u32 sig, __u32 arg)
{
	struct file_event *fe;
	__u64 seq;

	seq = __sync_fetch_and_add(&ev_seq, 1);
	__sync_fetch_and_add(&ev_produced, 1);
	fe = bpf_ringbuf_reserve(&rb, sizeof(*fe), 0);
	if (!fe) {
		__sync_fetch_and_add(&ev_lost, 1);
		return;
	}
	fe->e.seq = seq;
	event_fill_task(&fe->e, cgid, policy_id, type);
	fe->e.kind = kind;
	fe->e.reason = reason;
	fe->e.family = 0;
	fe->e.proto = 0;
	fe->e.sock_type = 0;
	fe->e.dport = 0;
	__builtin_memset(fe->e.daddr, 0, sizeof(fe->e.daddr));
	fe->op = op;
	fe->flags = 0;
	fe->pad = 0;
	fe->target_pid = target_pid;
	fe->sig = sig;
	fe->arg = arg;
	fe->path[0] = '\0';
	fe->path2[0] = '\0';
	if (path && bpf_probe_read_kernel_str(fe->path, sizeof(fe->path), path) ==
		    sizeof(fe->path))
		fe->flags |= EV_F_PATH_TRUNC;
	if (path2 && bpf_probe_read_kernel_str(fe->path2, sizeof(fe->path2), path2) ==
		     sizeof(fe->path2))
		fe->flags |= EV_F_PATH2_TRUNC;
	bpf_ringbuf_submit(fe, 0);
}

/*
 * Report one LSM denial (or audit) and return the verdict: -EPERM when
 * enforcing, 0 in audit mode. The record is best effort; the verdict is
 * not (include/events.h).
 */
static __always_inline int lsm_deny_arg(struct sandbox *sb,
					struct policy_conf *conf, __u64 cgid,
					__u8 kind, __u8 op, __u8 reason,
					const char *path, const char *path2,
					__u32 target_pid, __u32 sig, __u32 arg)
{
	bool audit = conf->mode == SANDBOX_AUDIT;
	__u32 k = sb->policy_id * EV_KIND_MAX + (kind & (EV_KIND_MAX - 1));
	__u64 *cnt = bpf_map_lookup_elem(&lsm_count, &k);

	if (cnt)
		*cnt += 1;
	limits_count(sb, kind, true, audit);	/* per sandbox: status, metrics */
	lsm_record(sb->policy_id, cgid, ev_type(sb, audit), kind, op, reason,
		   path, path2, target_pid, sig, arg);
	return audit ? 0 : -EPERM;
}

/* The user registers of the current syscall (x86_64). */
static __always_inline struct pt_regs *user_regs(void)
{
	return (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
}

/* The current syscall's number (x86_64: orig_ax). */
static __always_inline long syscall_nr(void)
{
	return BPF_CORE_READ(user_regs(), orig_ax);
}

/* The setup pass (include/setup.h); it records through lsm_record(). */
#include "setup.bpf.h"

/*
 * The current task's sandbox (a copy in *snap, its cgroup in *cgid) and,
 * unless it is in its setup pass, 1; 0 outside or in a pass. Behind a
 * global function, one per how (lsm_who(), lsm_who_hot()): the verifier
 * checks a global function once per program, by the types of its
 * arguments, and the caller goes on from one state, the int it returns.
 * Inlined, each way out of the lookup (the task's cached verdict, its
 * cgroup's own entry, the outsider cache, the ancestors' scan, a pending
 * cgroup) and of the setup pass's checks went on through the rest of
 * every BPF-LSM program as a path of its own: a fifth of 6.1's verified
 * instructions at each agent start (README "Testing"). -1 for a NULL
 * argument, which the verifier makes it check and no caller passes.
 */
static __always_inline int lsm_who_body(struct sandbox *snap, __u64 *cgid,
					int how)
{
	struct task_verdict_val *tv = NULL;
	struct sandbox *sb;
	bool over = false;
	int state;

	if (!snap || !cgid)
		return -1;
	sb = sandbox_lookup_tv(cgid, snap, &state, how, &tv);
	if (!sb)
		return 0;
	/* A task marked judged can never have a pass: its verdict's
	 * storage says so, and the setup check's own lookup is skipped. */
	if (!tv || !tv->setup_over) {
		if (setup_pass(sb, *cgid, &over))
			return 0;
		if (over && tv)
			tv->setup_over = 1;
	}
	return 1;
}

__attribute__((noinline, weak)) int lsm_who(struct sandbox *snap, __u64 *cgid)
{
	return lsm_who_body(snap, cgid, SBL_TASK_CACHE);
}

__attribute__((noinline, weak)) int lsm_who_hot(struct sandbox *snap, __u64 *cgid)
{
	return lsm_who_body(snap, cgid, SBL_ID_LOADS);
}

/* The current task's sandbox (a copy in *snap, *sbp = snap) and its
 * policy settings, or NULL outside, or while it is in its setup pass;
 * how: sandbox_lookup_tv()'s (lsm_current(), lsm_current_hot()). */
static __always_inline struct policy_conf *
lsm_current_how(struct sandbox **sbp, __u64 *cgid, struct sandbox *snap,
		int how)
{
	__u32 id;
	int in;

	__builtin_memset(snap, 0, sizeof(*snap));
	*cgid = 0;
	in = how == SBL_ID_LOADS ? lsm_who_hot(snap, cgid) : lsm_who(snap, cgid);
	if (!in)
		return NULL;
	if (in < 0) {
		/* Never seen (no caller passes NULL): deny all. */
		snap->slot = POLICY_SLOT_CONFLICT;
		sandbox_resolve(snap);
	}
	*sbp = snap;
	id = snap->policy_id;
	return bpf_map_lookup_elem(&policies, &id);
}

static __always_inline struct policy_conf *
lsm_current(struct sandbox **sbp, __u64 *cgid, struct sandbox *snap)
{
	return lsm_current_how(sbp, cgid, snap, SBL_TASK_CACHE);
}

/* lsm_current() on a hook every task passes through often (SBL_ID_LOADS). */
static __always_inline struct policy_conf *
lsm_current_hot(struct sandbox **sbp, __u64 *cgid, struct sandbox *snap)
{
	return lsm_current_how(sbp, cgid, snap, SBL_ID_LOADS);
}

/* A hook's start: conf, sb and cgid of the current task's sandbox, or
 * return 0 (allowed) outside one. */
#define CURRENT_OR_ALLOW_BY(current)					\
	struct policy_conf *conf;					\
	struct sandbox *sb, sb_snap;					\
	__u64 cgid;							\
									\
	conf = current(&sb, &cgid, &sb_snap);				\
	if (!conf)							\
		return 0
#define CURRENT_OR_ALLOW()	CURRENT_OR_ALLOW_BY(lsm_current)
/* On a hook every task passes through often (lsm_current_hot()). */
#define CURRENT_OR_ALLOW_HOT()	CURRENT_OR_ALLOW_BY(lsm_current_hot)

/*
 * A refusal the kernel itself calls speculative (PTRACE_MODE_NOAUDIT,
 * CAP_OPT_NOAUDIT): refused and counted like any other, but with no
 * record. Such checks only decide what a caller may see (ps reading
 * /proc/PID/stat of every process asks one per process), and a record for
 * each would flood the log with false alarms.
 */
static __always_inline int lsm_deny_quiet(struct sandbox *sb,
					  struct policy_conf *conf, __u8 kind)
{
	bool audit = conf->mode == SANDBOX_AUDIT;
	__u32 k = sb->policy_id * EV_KIND_MAX + (kind & (EV_KIND_MAX - 1));
	__u64 *cnt = bpf_map_lookup_elem(&lsm_count, &k);

	if (cnt)
		*cnt += 1;
	limits_count(sb, kind, true, audit);
	return audit ? 0 : -EPERM;
}

/* lsm_deny_arg() for the kinds without a second number (arg 0). */
static __always_inline int lsm_deny(struct sandbox *sb, struct policy_conf *conf,
				    __u64 cgid, __u8 kind, __u8 op, __u8 reason,
				    const char *path, const char *path2,
				    __u32 target_pid, __u32 sig)
{
	return lsm_deny_arg(sb, conf, cgid, kind, op, reason, path, path2,
			    target_pid, sig, 0);
}

struct walk_ctx {
	char *buf;
	struct mount *mnt;		/* NULL: stop at the filesystem root */
	struct dentry *dentry;
	struct dentry *mnt_root;
	__u32 off;
	int state;			/* 0 walking, 1 done, -1 too long */
};

/*
 * One component of walk(); bpf_loop() callback, 1 to stop. The context is
 * a void * (the verifier wants no struct type on a callback argument), and
 * its fields are copied to locals before any CO-RE read, so that only the
 * kernel's types carry relocations.
 */
static long walk_step(__u32 i, void *ctx)
{
	struct walk_ctx *c = ctx;
	struct dentry *d = c->dentry, *parent, *root = c->mnt_root;
	struct mount *mnt = c->mnt;
	const unsigned char *name;
	__u32 len, off = c->off;

	parent = BPF_CORE_READ(d, d_parent);
	if (mnt && d == root) {
		struct mount *up = BPF_CORE_READ(mnt, mnt_parent);

		if (up == mnt) {
			c->state = 1;	/* the namespace's root */
			return 1;
		}
		c->dentry = BPF_CORE_READ(mnt, mnt_mountpoint);
		c->mnt = up;
		c->mnt_root = BPF_CORE_READ(up, mnt.mnt_root);
		return 0;
	}
	if (d == parent) {
		c->state = 1;		/* a filesystem's root */
		return 1;
	}
	len = BPF_CORE_READ(d, d_name.len);
	name = BPF_CORE_READ(d, d_name.name);
	if (len > 255 || len + 1 > off) {
		c->state = -1;
		return 1;
	}
	off -= len;
	bpf_probe_read_kernel(&c->buf[off & MASK], len & 255, name);
	off -= 1;
	c->buf[off & MASK] = '/';
	c->off = off;
	c->dentry = parent;
	return 0;
}

/*
 * Build the path of dentry (on vfsmnt; NULL: only up to its filesystem's
 * root) backwards into buf, ending at buf[FILE_BUF_SIZE-1] = NUL, for the
 * hooks that may not call bpf_d_path(). Returns the start offset, or
 * -ENAMETOOLONG when it needs more than FILE_WALK_DEPTH steps or
 * FILE_BUF_SIZE bytes (include/file.h). bpf_loop(), not a plain loop: the
 * verifier explores a plain one path by path and gives up.
 */
static __always_inline long walk(char *buf, struct vfsmount *vfsmnt,
				 struct dentry *dentry)
{
	struct walk_ctx c = {
		.buf = buf,
		.dentry = dentry,
		.off = FILE_BUF_SIZE - 1,
	};

	if (vfsmnt) {
		c.mnt = (void *)vfsmnt - bpf_core_field_offset(struct mount, mnt);
		c.mnt_root = BPF_CORE_READ(vfsmnt, mnt_root);
	}
	buf[FILE_BUF_SIZE - 1] = '\0';
	bpf_loop(FILE_WALK_DEPTH, walk_step, &c, 0);
	if (c.state != 1)
		return -ENAMETOOLONG;
	if (c.off == FILE_BUF_SIZE - 1) {	/* the root itself */
		c.off -= 1;
		buf[c.off & MASK] = '/';
	}
	return c.off & MASK;
}

/*
 * The file scope (include/file.h), shared by file.bpf.c and priv.bpf.c
 * (path_notify judges marks against the read scope): __weak, so the
 * linked object holds one trie.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, FILE_MAX_RULES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct file_key);
	__type(value, struct file_rule);
} file_rules SEC(".maps") __weak;

/* Per-execution folders: each selected cgroup's own scope (include/file.h). */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, FILE_MAX_RULES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct file_cg_key);
	__type(value, struct file_rule);
} file_cg_rules SEC(".maps") __weak;

enum want { WANT_READ = 1, WANT_WRITE = 2, WANT_EXEC = 4 };

/*
 * The entry deciding the path in buf (len bytes, no NUL), or NULL: the
 * selected cgroup's own scope for a policy with per-execution folders,
 * else (or while that scope is not written: include/file.h, fail closed)
 * the policy's. The key gets a '/' after the path, so that a prefix
 * stored as "/task/" matches /task and /task/x only. in_place: path is
 * s->buf[0], the keys' own path (struct lsm_scratch): the '/' goes over
 * its NUL, and the NUL comes back before the return, for the record that
 * names the path. Bytes of the key past its prefixlen are never compared.
 */
static __always_inline struct file_rule *
file_lookup(struct lsm_scratch *s, const struct sandbox *sb,
	    const struct policy_conf *conf, const char *path, __u64 len,
	    bool in_place)
{
	struct file_key *k = in_place ? &s->dp_key : &s->key;
	struct file_rule *r = NULL;
	__u64 n = len;

	if (conf->flags & SANDBOX_FILE_PER_CGROUP) {
		struct file_cg_key *ck = in_place ? &s->dp_cg_key : &s->cg_key;

		ck->policy_id = sb->policy_id;
		ck->cg_lo = (__u32)sb->root_id;
		ck->cg_hi = (__u32)(sb->root_id >> 32);
		if (!in_place)
			bpf_probe_read_kernel(ck->path, sizeof(ck->path), path);
		asm volatile("" : "+r"(n));
		if (n < FILE_CG_KEY_PATH)
			ck->path[n] = '/';
		ck->prefixlen = 96 + 8 * (n + 1 < FILE_CG_KEY_PATH ? n + 1 : FILE_CG_KEY_PATH);
		r = bpf_map_lookup_elem(&file_cg_rules, ck);
	}
	if (!r) {
		k->policy_id = sb->policy_id;
		if (!in_place)
			bpf_probe_read_kernel(k->path, sizeof(k->path), path);
		/* Opaque to the compiler: otherwise it folds len = 4095 - off
		 * into "pointer minus off", which the verifier cannot bound. */
		asm volatile("" : "+r"(len));
		if (len < FILE_KEY_PATH)
			k->path[len] = '/';
		k->prefixlen = 32 + 8 * (len + 1 < FILE_KEY_PATH ? len + 1 : FILE_KEY_PATH);
		r = bpf_map_lookup_elem(&file_rules, k);
	}
	if (in_place) {
		/* The one byte either key changed (FILE_CG_KEY_PATH <
		 * FILE_KEY_PATH, and both put it at the path's end). */
		asm volatile("" : "+r"(n));
		if (n < FILE_KEY_PATH)
			s->buf[0][n] = '\0';
	}
	return r;
}

/*
 * The verdict of the entry r that decides a path of len bytes (NULL: none
 * did): the reason to deny, or 0. moving: the path is being renamed away,
 * so a directory with a deny or protected path below it is refused too.
 * judge_at() judges a path (len bytes, no NUL; in_place: at s->buf[0], as
 * bpf_d_path() wrote it) for sb by the entry it finds.
 */
static __always_inline __u8 rule_verdict(const struct file_rule *r, __u64 len,
					 int want, bool moving)
{
	if (!r)
		return EV_REASON_OUTSIDE_SCOPE;	/* no "/" entry: fail closed */
	if (r->flags & FILE_PROTECTED)
		return EV_REASON_PROTECTED;
	if (r->flags & FILE_DENY)
		return EV_REASON_DENIED_PATH;
	if ((want & WANT_WRITE) && !(r->flags & FILE_WRITE))
		return EV_REASON_OUTSIDE_SCOPE;
	if ((want & WANT_READ) && !(r->flags & (FILE_READ | FILE_WRITE)))
		return EV_REASON_OUTSIDE_SCOPE;
	/* Readable, but not a place programs may run from (include/file.h:
	 * FILE_EXEC; W^X when `exec:` is absent). */
	if ((want & WANT_EXEC) && !(r->flags & FILE_EXEC))
		return EV_REASON_NOT_EXECUTABLE;
	if (moving && (r->flags & FILE_GUARDED_BELOW) && r->len == len)
		return EV_REASON_GUARDED_BELOW;
	return 0;
}

static __always_inline __u8 judge_at(struct lsm_scratch *s, const struct sandbox *sb,
				     const struct policy_conf *conf,
				     const char *path, __u64 len, int want,
				     bool moving, bool in_place)
{
	return rule_verdict(file_lookup(s, sb, conf, path, len, in_place),
			    len, want, moving);
}

/* A path anywhere in the scratch (a walked one: its end), copied into the
 * keys. */
static __always_inline __u8 judge_ex(struct lsm_scratch *s, const struct sandbox *sb,
				     const struct policy_conf *conf,
				     const char *path, __u64 len, int want,
				     bool moving)
{
	return judge_at(s, sb, conf, path, len, want, moving, false);
}

/* Judge without the rename-only guard. */
static __always_inline __u8 judge(struct lsm_scratch *s, const struct sandbox *sb,
				  const struct policy_conf *conf,
				  const char *path, __u64 len, int want)
{
	return judge_at(s, sb, conf, path, len, want, false, false);
}

#endif /* STOCKADE_LSM_BPF_H */
