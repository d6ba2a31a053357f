// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * File-path scope (include/file.h): which paths a sandbox may read and
 * write, the built-in protected paths, `files.deny`, and the cgroup escape
 * through cgroup.procs. Every decision judges the kernel's resolved object
 * (struct path / dentry), never the syscall's arguments, so symlinks, "..",
 * /proc/self/root, /dev/fd/N and io_uring are judged like any other access.
 */
#include "lsm.bpf.h"

#define FMODE_READ		0x1
#define FMODE_WRITE		0x2
#define FMODE_EXEC		0x20
#define O_TRUNC			01000
#define CGROUP2_SUPER_MAGIC	0x63677270
#define S_IFMT			00170000
#define S_IFBLK			0060000
#define S_IFCHR			0020000

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, FILE_MAX_RULES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct file_key);
	__type(value, struct file_rule);
} file_rules SEC(".maps");

enum want { WANT_READ = 1, WANT_WRITE = 2 };

/*
 * Look the path in buf[off .. FILE_BUF_SIZE-1) up (len bytes, no NUL) and
 * return the reason to deny, or 0. The key gets a '/' after the path, so
 * that a prefix stored as "/task/" matches /task and /task/x only.
 * moving: the path is being renamed away, so a directory with a deny or
 * protected path below it is refused too.
 */
static __always_inline __u8 judge_ex(struct lsm_scratch *s, __u32 policy_id,
				     const char *path, __u64 len, int want,
				     bool moving)
{
	struct file_key *k = &s->key;
	struct file_rule *r;

	k->policy_id = policy_id;
	bpf_probe_read_kernel(k->path, sizeof(k->path), path);
	/* Opaque to the compiler: otherwise it folds len = 4095 - off into
	 * "pointer minus off", which the verifier cannot bound. */
	asm volatile("" : "+r"(len));
	if (len < FILE_KEY_PATH)
		k->path[len] = '/';
	k->prefixlen = 32 + 8 * (len + 1 < FILE_KEY_PATH ? len + 1 : FILE_KEY_PATH);
	r = bpf_map_lookup_elem(&file_rules, k);
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
	if (moving && (r->flags & FILE_GUARDED_BELOW) && r->len == len)
		return EV_REASON_GUARDED_BELOW;
	return 0;
}

/* Judge without the rename-only guard. */
static __always_inline __u8 judge(struct lsm_scratch *s, __u32 policy_id,
				  const char *path, __u64 len, int want)
{
	return judge_ex(s, policy_id, path, len, want, false);
}

/*
 * bpf_d_path() for the hooks that may call it. Returns the path's length
 * (no NUL) in buf[0..], or -ENAMETOOLONG.
 */
static __always_inline long dpath(struct path *p, char *buf)
{
	long n = bpf_d_path(p, buf, FILE_BUF_SIZE);

	if (n <= 0 || n > FILE_BUF_SIZE)
		return -ENAMETOOLONG;
	return n - 1;
}

static __always_inline bool is_internal(struct vfsmount *mnt)
{
	/* pipefs, sockfs, anon inodes, memfd's shm: no path to judge. */
	return BPF_CORE_READ(mnt, mnt_flags) & MNT_INTERNAL;
}

/*
 * A mount outside the current task's mount namespace: a detached clone
 * (open_tree(OPEN_TREE_CLONE), fsmount()) or another namespace's. Paths
 * there are relative to that mount and would dodge every rule, so a
 * sandbox may not use them at all.
 */
static __always_inline bool is_foreign_mount(struct vfsmount *vfsmnt)
{
	struct mount *mnt = (void *)vfsmnt - bpf_core_field_offset(struct mount, mnt);
	struct task_struct *task = bpf_get_current_task_btf();

	return BPF_CORE_READ(mnt, mnt_ns) != BPF_CORE_READ(task, nsproxy, mnt_ns);
}

/* Judge a walked path; 0 to allow, else the verdict from lsm_deny(). */
static __always_inline int walked(struct sandbox *sb, struct policy_conf *conf,
				  __u64 cgid, struct lsm_scratch *s,
				  struct vfsmount *mnt, struct dentry *d,
				  __u8 op, int want)
{
	char *buf = s->buf[0];
	long off;
	__u8 reason;

	if (mnt && is_internal(mnt))
		return 0;	/* ftruncate/fchmod of a memfd, a pipe... */
	if (mnt && is_foreign_mount(mnt))
		return lsm_deny(sb, conf, cgid, EV_KIND_FILE, op,
				EV_REASON_DETACHED_MOUNT, NULL, NULL, 0, 0);
	off = walk(buf, mnt, d);
	if (off < 0)
		return lsm_deny(sb, conf, cgid, EV_KIND_FILE, op,
				EV_REASON_PATH_TOO_LONG, NULL, NULL, 0, 0);
	reason = judge(s, sb->policy_id, &buf[off & MASK],
		       (FILE_BUF_SIZE - 1 - off) & MASK, want);
	if (!reason)
		return 0;
	return lsm_deny(sb, conf, cgid, EV_KIND_FILE, op, reason,
			&buf[off & MASK], NULL, 0, 0);
}

/* Two paths (rename, link): each must be writable; a rename may not move
 * a directory that has a deny or protected path below it. */
static __always_inline int walked2(struct sandbox *sb, struct policy_conf *conf,
				   __u64 cgid, struct lsm_scratch *s,
				   struct vfsmount *mnt1, struct dentry *d1,
				   struct vfsmount *mnt2, struct dentry *d2,
				   __u8 op)
{
	char *b1 = s->buf[0], *b2 = s->buf[1];
	bool moving = op == EV_OP_RENAME;
	long o1, o2;
	__u8 reason;

	if (is_foreign_mount(mnt1) || is_foreign_mount(mnt2))
		return lsm_deny(sb, conf, cgid, EV_KIND_FILE, op,
				EV_REASON_DETACHED_MOUNT, NULL, NULL, 0, 0);
	o1 = walk(b1, mnt1, d1);
	if (o1 < 0)
		return lsm_deny(sb, conf, cgid, EV_KIND_FILE, op,
				EV_REASON_PATH_TOO_LONG, NULL, NULL, 0, 0);
	o2 = walk(b2, mnt2, d2);
	if (o2 < 0)
		return lsm_deny(sb, conf, cgid, EV_KIND_FILE, op,
				EV_REASON_PATH_TOO_LONG, &b1[o1 & MASK], NULL, 0, 0);
	reason = judge_ex(s, sb->policy_id, &b1[o1 & MASK],
			  (FILE_BUF_SIZE - 1 - o1) & MASK, WANT_WRITE, moving);
	if (!reason)
		reason = judge_ex(s, sb->policy_id, &b2[o2 & MASK],
				  (FILE_BUF_SIZE - 1 - o2) & MASK, WANT_WRITE,
				  moving);
	if (!reason)
		return 0;
	return lsm_deny(sb, conf, cgid, EV_KIND_FILE, op, reason,
			&b1[o1 & MASK], &b2[o2 & MASK], 0, 0);
}


static __always_inline bool str_eq(const char *a, const char *b, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

/* Writing cgroup.procs or cgroup.threads moves a task between cgroups. */
static __always_inline bool is_cgroup_migrate(struct file *file)
{
	char name[16] = {};

	if (BPF_CORE_READ(file, f_path.mnt, mnt_sb, s_magic) != CGROUP2_SUPER_MAGIC)
		return false;
	bpf_probe_read_kernel_str(name, sizeof(name),
				  BPF_CORE_READ(file, f_path.dentry, d_name.name));
	return str_eq(name, "cgroup.procs", 13) ||
	       str_eq(name, "cgroup.threads", 15);
}

/* An opened (or received) file, judged by the access it was opened for. */
static __always_inline int judge_file(struct file *file, __u8 kind, __u8 op_r)
{
	struct policy_conf *conf;
	struct lsm_scratch *s;
	struct sandbox *sb, sb_snap;
	unsigned int mode, flags;
	long len;
	__u8 reason, op;
	__u64 cgid;
	int want = 0;

	conf = lsm_current(&sb, &cgid, &sb_snap);
	if (!conf)
		return 0;
	if (is_internal(BPF_CORE_READ(file, f_path.mnt)))
		return 0;
	s = scratch();
	if (!s)
		return -EPERM;	/* cannot happen; fail closed */
	mode = BPF_CORE_READ(file, f_mode);
	flags = BPF_CORE_READ(file, f_flags);
	if (mode & FMODE_READ)
		want |= WANT_READ;
	if ((mode & FMODE_WRITE) || (flags & O_TRUNC))
		want |= WANT_WRITE;
	/* O_ACCMODE 3 opens for ioctl only: judge it as both. */
	if (!want)
		want = WANT_READ | WANT_WRITE;
	/* execve() (and its #! interpreter) opens the binary with
	 * __FMODE_EXEC in f_flags before bprm_check_security runs, so the
	 * exec is judged here, once, and no bprm program is needed. */
	op = want & WANT_WRITE ? EV_OP_OPEN_WRITE :
	     ((mode | flags) & FMODE_EXEC) ? EV_OP_EXEC : op_r;
	len = dpath((struct path *)&file->f_path, s->buf[0]);
	if (len < 0)
		return lsm_deny(sb, conf, cgid, kind, op, EV_REASON_PATH_TOO_LONG,
				NULL, NULL, 0, 0);
	if (is_foreign_mount(BPF_CORE_READ(file, f_path.mnt)))
		return lsm_deny(sb, conf, cgid, kind, op, EV_REASON_DETACHED_MOUNT,
				s->buf[0], NULL, 0, 0);
	/* A block device holds every file of its filesystem: reading it
	 * raw would get around every path rule. */
	if ((BPF_CORE_READ(file, f_inode, i_mode) & S_IFMT) == S_IFBLK)
		return lsm_deny(sb, conf, cgid, kind, op, EV_REASON_DEVICE,
				s->buf[0], NULL, 0, 0);
	if ((want & WANT_WRITE) && is_cgroup_migrate(file))
		return lsm_deny(sb, conf, cgid, EV_KIND_CGROUP,
				EV_OP_CGROUP_MIGRATE, EV_REASON_CGROUP_ESCAPE,
				s->buf[0], NULL, 0, 0);
	reason = judge(s, sb->policy_id, s->buf[0], len & MASK, want);
	if (!reason)
		return 0;
	return lsm_deny(sb, conf, cgid, kind, op, reason, s->buf[0], NULL, 0, 0);
}

SEC("lsm/file_open")
int BPF_PROG(stk_file_open, struct file *file)
{
	return judge_file(file, EV_KIND_FILE, EV_OP_OPEN_READ);
}

/* SCM_RIGHTS: a file the sandbox could not open itself is refused. */
SEC("lsm/file_receive")
int BPF_PROG(stk_file_receive, struct file *file)
{
	return judge_file(file, EV_KIND_FD_RECEIVE, EV_OP_OPEN_READ);
}

/* The path_* hooks: a new or removed name in dir, or a changed inode. */
#define DIR_HOOK(fn, hook, op)						\
SEC("lsm/" #hook)							\
int BPF_PROG(fn, const struct path *dir, struct dentry *dentry)		\
{									\
	struct policy_conf *conf;					\
	struct lsm_scratch *s;						\
	struct sandbox *sb, sb_snap;					\
	__u64 cgid;							\
									\
	conf = lsm_current(&sb, &cgid, &sb_snap);			\
	if (!conf)							\
		return 0;						\
	s = scratch();							\
	if (!s)								\
		return -EPERM;						\
	return walked(sb, conf, cgid, s, BPF_CORE_READ(dir, mnt),	\
		      dentry, op, WANT_WRITE);				\
}

/* mknod: a new regular file is a write; a new device node is refused
 * outright (it would reopen any device under a name in scope). */
SEC("lsm/path_mknod")
int BPF_PROG(stk_path_mknod, const struct path *dir, struct dentry *dentry,
	     umode_t mode)
{
	struct sandbox *sb, sb_snap;
	struct policy_conf *conf;
	struct lsm_scratch *s;
	__u64 cgid;

	conf = lsm_current(&sb, &cgid, &sb_snap);
	if (!conf)
		return 0;
	s = scratch();
	if (!s)
		return -EPERM;
	if ((mode & S_IFMT) == S_IFBLK || (mode & S_IFMT) == S_IFCHR)
		return lsm_deny(sb, conf, cgid, EV_KIND_FILE, EV_OP_MKNOD_DEVICE,
				EV_REASON_DEVICE, NULL, NULL, 0, 0);
	return walked(sb, conf, cgid, s, BPF_CORE_READ(dir, mnt), dentry,
		      EV_OP_CREATE, WANT_WRITE);
}
DIR_HOOK(stk_path_mkdir, path_mkdir, EV_OP_MKDIR)
DIR_HOOK(stk_path_rmdir, path_rmdir, EV_OP_RMDIR)
DIR_HOOK(stk_path_unlink, path_unlink, EV_OP_UNLINK)
DIR_HOOK(stk_path_symlink, path_symlink, EV_OP_SYMLINK)

#define PATH_HOOK(fn, hook, op)						\
SEC("lsm/" #hook)							\
int BPF_PROG(fn, const struct path *path)				\
{									\
	struct policy_conf *conf;					\
	struct lsm_scratch *s;						\
	struct sandbox *sb, sb_snap;					\
	__u64 cgid;							\
									\
	conf = lsm_current(&sb, &cgid, &sb_snap);			\
	if (!conf)							\
		return 0;						\
	s = scratch();							\
	if (!s)								\
		return -EPERM;						\
	return walked(sb, conf, cgid, s, BPF_CORE_READ(path, mnt),	\
		      BPF_CORE_READ(path, dentry), op, WANT_WRITE);	\
}

PATH_HOOK(stk_path_truncate, path_truncate, EV_OP_TRUNCATE)
PATH_HOOK(stk_path_chmod, path_chmod, EV_OP_CHMOD)
PATH_HOOK(stk_path_chown, path_chown, EV_OP_CHOWN)

/* 6.2 on: ftruncate() and open(O_TRUNC) reach file_truncate, no longer
 * path_truncate, so an fd opened before the task joined the sandbox (or
 * handed in) would truncate a file outside the write scope. The same
 * judgement through the file's path. On 6.1 the program is not loaded
 * (agent/lsm_table.c: newer) and path_truncate still sees both calls;
 * where both hooks exist a call reaches only one of them. */
SEC("lsm/file_truncate")
int BPF_PROG(stk_file_truncate, struct file *file)
{
	struct policy_conf *conf;
	struct lsm_scratch *s;
	struct sandbox *sb, sb_snap;
	__u64 cgid;

	conf = lsm_current(&sb, &cgid, &sb_snap);
	if (!conf)
		return 0;
	s = scratch();
	if (!s)
		return -EPERM;
	return walked(sb, conf, cgid, s, BPF_CORE_READ(file, f_path.mnt),
		      BPF_CORE_READ(file, f_path.dentry), EV_OP_TRUNCATE,
		      WANT_WRITE);
}

/* xattr hooks get no mount: the walk stops at the filesystem's root
 * (include/file.h states the limit). */
#define XATTR_HOOK(fn, hook, op)					\
SEC("lsm/" #hook)							\
int BPF_PROG(fn, void *idmap, struct dentry *dentry)			\
{									\
	struct policy_conf *conf;					\
	struct lsm_scratch *s;						\
	struct sandbox *sb, sb_snap;					\
	__u64 cgid;							\
									\
	conf = lsm_current(&sb, &cgid, &sb_snap);			\
	if (!conf)							\
		return 0;						\
	s = scratch();							\
	if (!s)								\
		return -EPERM;						\
	return walked(sb, conf, cgid, s, NULL, dentry, op, WANT_WRITE);	\
}

XATTR_HOOK(stk_inode_setxattr, inode_setxattr, EV_OP_SETXATTR)
XATTR_HOOK(stk_inode_removexattr, inode_removexattr, EV_OP_REMOVEXATTR)
/* 6.2 on: system.posix_acl_* go through vfs_set_acl()/vfs_remove_acl()
 * and these hooks instead of the xattr ones; an ACL change is a write.
 * On 6.1 the xattr hooks above see them (op setxattr/removexattr). */
XATTR_HOOK(stk_inode_set_acl, inode_set_acl, EV_OP_SET_ACL)
XATTR_HOOK(stk_inode_rm_acl, inode_remove_acl, EV_OP_REMOVE_ACL)

/* Both ends: moving a file out of scope, or in from outside, is a write
 * to each side. */
SEC("lsm/path_rename")
int BPF_PROG(stk_path_rename, const struct path *old_dir,
	     struct dentry *old_dentry, const struct path *new_dir,
	     struct dentry *new_dentry)
{
	struct policy_conf *conf;
	struct lsm_scratch *s;
	struct sandbox *sb, sb_snap;
	__u64 cgid;

	conf = lsm_current(&sb, &cgid, &sb_snap);
	if (!conf)
		return 0;
	s = scratch();
	if (!s)
		return -EPERM;
	return walked2(sb, conf, cgid, s, BPF_CORE_READ(old_dir, mnt), old_dentry,
		       BPF_CORE_READ(new_dir, mnt), new_dentry, EV_OP_RENAME);
}

/* A hard link to a file outside the write scope (or protected) would hand
 * the sandbox a writable name for it: both ends must be writable. Hard
 * links never cross mounts, so the old dentry lives on new_dir's mount. */
SEC("lsm/path_link")
int BPF_PROG(stk_path_link, struct dentry *old_dentry,
	     const struct path *new_dir, struct dentry *new_dentry)
{
	struct policy_conf *conf;
	struct lsm_scratch *s;
	struct sandbox *sb, sb_snap;
	struct vfsmount *mnt;
	__u64 cgid;

	conf = lsm_current(&sb, &cgid, &sb_snap);
	if (!conf)
		return 0;
	s = scratch();
	if (!s)
		return -EPERM;
	mnt = BPF_CORE_READ(new_dir, mnt);
	return walked2(sb, conf, cgid, s, mnt, old_dentry, mnt, new_dentry,
		       EV_OP_LINK);
}
