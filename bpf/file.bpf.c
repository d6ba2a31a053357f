// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * File-path scope (include/file.h): which paths a sandbox may read and
 * write, the built-in protected paths, `files.deny`, and the cgroup escape
 * through cgroup.procs. Every decision judges the kernel's resolved object
 * (struct path / dentry), never the syscall's arguments, so symlinks, "..",
 * /proc/self/root, /dev/fd/N and io_uring are judged like any other access.
 */
#include "lsm.bpf.h"
#include "ipc.bpf.h"

#define FMODE_READ		0x1
#define FMODE_WRITE		0x2
#define FMODE_EXEC		0x20
#define O_TRUNC			01000
#define CGROUP2_SUPER_MAGIC	0x63677270
#define OVERLAYFS_SUPER_MAGIC	0x794c7630
#define S_IFMT			00170000
#define S_IFBLK			0060000
#define S_IFCHR			0020000
#define PROT_WRITE		0x2
#define PROT_EXEC		0x4
#define MAP_SHARED		0x01	/* MAP_SHARED_VALIDATE has it too */
#define VM_EXEC			0x4
#define VM_SHARED		0x8
#define READ_IMPLIES_EXEC	0x0400000
#define SIGKILL			9
/* /dev/zero: MKDEV(1, 5) in the kernel's dev_t (20 minor bits). */
#define DEV_ZERO		((1U << 20) | 5)

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
 * The pointers an open is judged by, loaded from the hook's struct file *
 * once, at its entry, before any branch, and passed down. 6.12's verifier
 * checks each load of a pointer from a trusted one (the hook's argument,
 * the current task) with up to four linear scans of the kernel's BTF for
 * its __safe_* names (sandbox_lookup_tv() says more), and it does so for
 * every path that reaches the load: loaded in each helper, they made
 * stk_file_open's verification 140 us an instruction under TCG, against
 * 20-55 for the other programs. The file's pointers are loaded at the
 * hook's entry, the task's (mount namespace, fs) in judge_file() once
 * the task is known to be in a sandbox: the same loads at run time, but
 * for those two on the paths (a queue, an exec, an internal mount) that
 * did not need them.
 */
struct fo {
	struct vfsmount *mnt;		/* file->f_path.mnt */
	struct dentry *dentry;		/* file->f_path.dentry */
	struct inode *inode;		/* file->f_inode */
	/* The current task, fetched once for the hook: each
	 * bpf_get_current_task_btf() is a helper call on 6.1, and an
	 * open's hit path (judge_file()) asked for it three times. */
	struct task_struct *task;
};

static __always_inline void fo_load(struct fo *f, struct file *file)
{
	f->task = bpf_get_current_task_btf();
	f->mnt = file->f_path.mnt;
	f->dentry = file->f_path.dentry;
	f->inode = file->f_inode;
}

/*
 * The hot path's reads (file_open, file_receive, mmap_file) go straight
 * through the hook's struct file *: a BTF pointer, which the verifier
 * lets a program dereference, and each dereference (CO-RE relocated, like
 * every field of vmlinux.h) becomes one fault-safe load (BPF_PROBE_MEM: a
 * fault reads 0, as a failed bpf_probe_read_kernel() does), not a helper
 * call. The BPF_CORE_READ()s elsewhere take pointers that came out of
 * probe reads or out of a container_of(), which the verifier sees as
 * plain numbers (or a negative offset into a BTF type, which it refuses).
 */
static __always_inline bool fo_internal(const struct fo *f)
{
	return f->mnt->mnt_flags & MNT_INTERNAL;
}

/*
 * A mount outside the current task's mount namespace: a detached clone
 * (open_tree(OPEN_TREE_CLONE), fsmount()) or another namespace's. Paths
 * there are relative to that mount and would dodge every rule, so a
 * sandbox may not use them at all.
 */
static __always_inline bool foreign_to(struct vfsmount *vfsmnt,
				       struct mnt_namespace *ns)
{
	struct mount *mnt = (void *)vfsmnt - bpf_core_field_offset(struct mount, mnt);

	/* container_of(): a probe read. */
	return BPF_CORE_READ(mnt, mnt_ns) != ns;
}

static __always_inline bool is_foreign_mount(struct vfsmount *vfsmnt)
{
	struct task_struct *task = bpf_get_current_task_btf();

	/* The task is a BTF pointer. */
	return foreign_to(vfsmnt, task->nsproxy->mnt_ns);
}

/* Not a file of the task's tree (an internal mount, or a foreign one):
 * what setup_exec() calls unattached. */
static __always_inline bool fo_unattached(const struct fo *f)
{
	return fo_internal(f) || foreign_to(f->mnt, f->task->nsproxy->mnt_ns);
}

/* fs/mount.h: the mnt_ns of a kernel-private mount (kern_mount(), and
 * clone_private_mount(): overlayfs's layers), in no namespace. */
#define MNT_NS_INTERNAL		((void *)-22L)	/* ERR_PTR(-EINVAL) */

/*
 * An open the kernel makes for itself within the task's call, under
 * credentials of its own (override_creds(): the task's cred is not its
 * real_cred), of a file the task cannot name: overlayfs's opens of its
 * layers, with its mounter's credentials (the real file behind an
 * overlay file, on 6.8 and later a backing file whose path is the
 * layer's; a copy-up's lower and upper files; a directory's layers for
 * readdir), on the layers' private mounts, in no namespace; and 6.1's
 * real file behind an overlay file, which carries the overlay's path
 * with the layer's inode. The call each serves was judged by its overlay
 * path: judging the kernel's own open again would refuse it as a
 * detached mount (an overlay container could read nothing on 6.8 and
 * later, nor write an image file at all) or record the same refusal, or
 * exec, twice. The credential test alone would not do (an io_uring
 * personality's credentials differ from a task's real ones once it
 * changed its own), nor would the mount test (a coredump writes its file
 * under credentials of the kernel's, on the task's own mount): both.
 */
static __always_inline bool kernel_own_open(const struct fo *f)
{
	struct task_struct *t = f->task;
	const struct cred *cred = t->cred;
	struct mount *mnt;

	/* Credentials a sandbox made (an io_uring personality): its own
	 * open, however the file was reached. */
	if (cred == t->real_cred || fo_internal(f) || sandbox_cred(cred))
		return false;	/* kern_mount()'s: judged as ever (mqueue) */
	if (f->inode != f->dentry->d_inode)
		return true;
	/* container_of(): a probe read. */
	mnt = (void *)f->mnt - bpf_core_field_offset(struct mount, mnt);
	return (void *)BPF_CORE_READ(mnt, mnt_ns) == MNT_NS_INTERNAL;
}

/*
 * The path a task's mapping of a file was made through. On 6.8 and
 * later, a mapping of an overlay file holds overlayfs's backing file
 * (backing_file_mmap() sets vma->vm_file to the layer's file), whose
 * f_path is the layer's, on a private mount in no namespace, which would
 * be refused as a detached mount; the path the task opened is the
 * backing file's user_path. Only file_mprotect meets it: mmap_file is
 * called with the overlay file itself, and an exec opens that. 6.1's
 * real file carries the overlay's path (kernel_own_open()), as do 6.6
 * and 6.7's backing files (their field is real_path, not user_path).
 * The user path is taken only for a file on a private mount
 * (clone_private_mount(): a stacking file system's layers; kern_mount()'s
 * are MNT_INTERNAL) and only when it names a dentry of an overlay mount:
 * anything else keeps the file's own path, and is refused as before
 * (fail closed). FUSE passthrough's backing files, on the server's
 * mounts, are left to that refusal.
 */
struct backing_file___stk {
	struct path user_path;
} __attribute__((preserve_access_index));

static __always_inline void mapped_path(struct file *file,
					struct vfsmount **mnt,
					struct dentry **d)
{
	struct backing_file___stk *bf = (void *)file;
	struct mount *m;
	struct vfsmount *um;
	struct dentry *ud;

	*mnt = BPF_CORE_READ(file, f_path.mnt);
	*d = BPF_CORE_READ(file, f_path.dentry);
	if (!bpf_core_field_exists(struct backing_file___stk, user_path))
		return;
	/* container_of(): a probe read. */
	m = (void *)*mnt - bpf_core_field_offset(struct mount, mnt);
	if ((void *)BPF_CORE_READ(m, mnt_ns) != MNT_NS_INTERNAL ||
	    is_internal(*mnt))
		return;
	um = BPF_CORE_READ(bf, user_path.mnt);
	ud = BPF_CORE_READ(bf, user_path.dentry);
	if (!um || !ud || BPF_CORE_READ(um, mnt_sb) != BPF_CORE_READ(ud, d_sb) ||
	    BPF_CORE_READ(ud, d_sb, s_magic) != OVERLAYFS_SUPER_MAGIC)
		return;
	*mnt = um;
	*d = ud;
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
	reason = judge(s, sb, conf, &buf[off & MASK],
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
	reason = judge_ex(s, sb, conf, &b1[o1 & MASK],
			  (FILE_BUF_SIZE - 1 - o1) & MASK, WANT_WRITE, moving);
	if (!reason)
		reason = judge_ex(s, sb, conf, &b2[o2 & MASK],
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
static __always_inline bool is_cgroup_migrate(const struct fo *f)
{
	char name[16] = {};

	if (f->mnt->mnt_sb->s_magic != CGROUP2_SUPER_MAGIC)
		return false;
	bpf_probe_read_kernel_str(name, sizeof(name), f->dentry->d_name.name);
	return str_eq(name, "cgroup.procs", 13) ||
	       str_eq(name, "cgroup.threads", 15);
}

/*
 * Execution (README, "Execution"). An exec, and a PROT_EXEC mapping, is
 * refused before its path is judged when the file is one no path rule
 * can vouch for: on an internal mount (memfd, shm, anon inodes: code
 * that only ever lived in memory), or unlinked (i_nlink 0: deleted after
 * it was opened, or an O_TMPFILE). Then its path must be executable
 * (FILE_EXEC: readable, in the exec scope, not writable unless
 * exec.allow_written).
 */
static __always_inline __u8 exec_unvetted(struct file *file)
{
	if (is_internal(BPF_CORE_READ(file, f_path.mnt)))
		return EV_REASON_MEMORY_FILE;
	if (!BPF_CORE_READ(file, f_inode, i_nlink))
		return EV_REASON_DELETED_FILE;
	return 0;
}

/*
 * by_walk: file_mprotect may not call bpf_d_path() (it is no sleepable
 * hook: mmap_lock is held), so the path is walked there (walk(); a
 * memfd's path then reads "/"), the one mapped_path() gives; elsewhere
 * bpf_d_path() gives the file's.
 */
static __always_inline int judge_exec(struct sandbox *sb,
				      struct policy_conf *conf, __u64 cgid,
				      struct file *file, __u8 op, bool by_walk)
{
	struct lsm_scratch *s = scratch();
	struct vfsmount *mnt;
	struct dentry *d;
	char *path;
	long len, off = 0;
	__u8 reason;

	if (!s)
		return -EPERM;	/* cannot happen; fail closed */
	if (by_walk) {
		mapped_path(file, &mnt, &d);
		off = walk(s->buf[0], mnt, d);
		len = off < 0 ? off : FILE_BUF_SIZE - 1 - off;
	} else {
		mnt = BPF_CORE_READ(file, f_path.mnt);
		len = dpath((struct path *)&file->f_path, s->buf[0]);
	}
	path = &s->buf[0][off & MASK];
	reason = exec_unvetted(file);
	if (reason)	/* a memfd's d_path reads "/memfd:NAME (deleted)" */
		return lsm_deny(sb, conf, cgid, EV_KIND_FILE, op, reason,
				len < 0 ? NULL : path, NULL, 0, 0);
	if (len < 0)
		return lsm_deny(sb, conf, cgid, EV_KIND_FILE, op,
				EV_REASON_PATH_TOO_LONG, NULL, NULL, 0, 0);
	if (is_foreign_mount(mnt))
		return lsm_deny(sb, conf, cgid, EV_KIND_FILE, op,
				EV_REASON_DETACHED_MOUNT, path, NULL, 0, 0);
	/* by_walk: the path ends buf[0], and is copied into the key. */
	reason = judge_at(s, sb, conf, path, len & MASK,
			  WANT_READ | WANT_EXEC, false, !by_walk);
	if (!reason)
		return 0;
	return lsm_deny(sb, conf, cgid, EV_KIND_FILE, op, reason, path,
			NULL, 0, 0);
}

/* Opened for exec (execve, execveat, a #! interpreter, uselib). */
static __always_inline bool is_exec_open(struct file *file)
{
	return (BPF_CORE_READ(file, f_mode) | BPF_CORE_READ(file, f_flags)) &
	       FMODE_EXEC;
}

/* is_exec_open() for a BTF pointer (fo_load()). */
static __always_inline bool file_exec_open(struct file *file)
{
	return (file->f_mode | file->f_flags) & FMODE_EXEC;
}

/* ---- the decision cache (include/file.h, struct file_dcache_key) ---- */

#define CAP_DAC_READ_SEARCH	2
#define S_IFREG			0100000
#define EXT4_SUPER_MAGIC	0xEF53
#define XFS_SUPER_MAGIC		0x58465342
#define BTRFS_SUPER_MAGIC	0x9123683E
#define TMPFS_MAGIC		0x01021994
#define RAMFS_MAGIC		0x858458f6

/*
 * The addresses of the kernel's seqlocks over dcache moves and mount
 * trees, which no BTF names: stk_ksyms finds them in the kernel's symbol
 * table once the agent has loaded (agent/lsm.c, lsm__find_locks()). 0
 * until then, and where the kernel lacks either or hides addresses from
 * the agent: nothing is cached.
 * Not typeless __ksym externs: libbpf resolves those by reading the whole
 * of /proc/kallsyms with fscanf(), about half of its work in a load, and
 * the kernel takes as long again to print that text (under an emulator,
 * 0.5 to 1 s of every agent start).
 */
__u64 rename_lock_addr;
__u64 mount_lock_addr;

static __always_inline long ksym_addr(const char *name, int len, __u64 *out)
{
	__u64 addr = 0;
	long err = bpf_kallsyms_lookup_name(name, len, 0, &addr);

	if (!err)
		*out = addr;
	return err;
}

/* Run once by the agent (BPF_PROG_TEST_RUN), before any link is made.
 * Returns the first lookup's error (-ENOENT: not listed; -EPERM: the
 * caller may not see kernel addresses), else 0. */
SEC("syscall")
int stk_ksyms(void *ctx)
{
	char rename[] = "rename_lock", mount[] = "mount_lock";
	long err = ksym_addr(rename, sizeof(rename), &rename_lock_addr);
	long err2 = ksym_addr(mount, sizeof(mount), &mount_lock_addr);

	return err ? err : err2;
}

struct file_dcache_way {
	struct file_dcache_key key;
	__u32 flags;			/* the entry's FILE_*; 0: empty */
	__u32 pad;
};

/*
 * Writers take the lock; readers do not (include/file.h, Concurrency):
 * seq is odd while a writer changes a way, and a reader that sees it
 * odd, or changed between its two reads, goes the whole way.
 */
struct file_dcache_val {
	struct bpf_spin_lock lock;
	__u32 counted;			/* in dcache_live (set once) */
	__u32 next;			/* the way the next new key takes */
	__u32 pad;
	__u64 seq;
	struct file_dcache_way way[FILE_DCACHE_WAYS];
};

/* The test build's spins while it writes a key, and while it reads the
 * ways (dcache_widen(), dcache_read_widen()). */
#define DCACHE_WIDEN_SPINS	4000
#define DCACHE_READ_SPINS	3000

/* Set by the agent before load (agent/lsm.c, dcache_sound()). */
const volatile __u32 dcache_on = 0;
/* include/file.h: the dynamic majors of raw storage character devices. */
const volatile __u32 raw_chr_majors[FILE_RAW_CHR_MAJORS] = {};

/* The compiler may move no memory access across it; an x86 CPU moves no
 * load before an earlier load, and no store before an earlier store. */
#define dcache_barrier()	asm volatile("" ::: "memory")
#define dcache_once(x)		(*(volatile __u64 *)&(x))

/* Entries alive (include/file.h, Memory). */
__u64 dcache_live;

struct {
	__uint(type, BPF_MAP_TYPE_INODE_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct file_dcache_val);
} file_dcache SEC(".maps");

/* The cache's answers, counted only by the test build (make variant:
 * STOCKADE_TEST_VARIANT): key DCACHE_HIT its hits, where tests/vm/dcache.sh
 * shows that the cache answers at all; key DCACHE_TURNED the reads it
 * turned away because a writer was in or came and went (dcache_get()),
 * where tests/vm/dcache-race.sh shows that reads met writers mid-write.
 * Always 0 in this build, which pays nothing. */
#define DCACHE_HIT	0
#define DCACHE_TURNED	1
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} dcache_hits SEC(".maps");

#ifdef STOCKADE_TEST_VARIANT
static __always_inline void dcache_count(__u32 key)
{
	__u64 *n = bpf_map_lookup_elem(&dcache_hits, &key);

	if (n)
		__sync_fetch_and_add(n, 1);
}
#else
static __always_inline void dcache_count(__u32 key)
{
}
#endif

/* Opens of recent files (include/file.h): an entry is made only once a
 * file has been opened FILE_DCACHE_OPENS times, so a file read a few
 * times costs no allocation. A slot counts the opens of the last inode
 * that hashed there; a collision only starts its count again. Plain
 * stores: a lost count only makes an entry an open early or late. */
struct dcache_seen_slot {
	__u64 ino;			/* i_ino + 1; 0: empty */
	__u32 opens;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FILE_DCACHE_SEEN);
	__type(key, __u32);
	__type(value, struct dcache_seen_slot);
} dcache_seen SEC(".maps");

/* The mount namespace's own sequence number: mnt_namespace.seq up to
 * 6.17, ns_common.ns_id after; neither is ever reused. 0: unknown. */
struct mnt_namespace___seq {
	__u64 seq;
} __attribute__((preserve_access_index));

static __always_inline __u64 mntns_seq(struct mnt_namespace *ns)
{
	if (bpf_core_field_exists(struct mnt_namespace___seq, seq))
		return ((struct mnt_namespace___seq *)ns)->seq;
	if (bpf_core_field_exists(ns->ns.ns_id))
		return BPF_CORE_READ(ns, ns.ns_id);
	return 0;
}

/* A seqlock's sequence (its first word), if no writer holds it. */
static __always_inline bool seq_even(const void *lock, __u64 *out)
{
	__u32 v;

	if (!lock || bpf_probe_read_kernel(&v, sizeof(v), lock) || (v & 1))
		return false;
	*out = v;
	return true;
}

/* Both sequences into k; false while a writer holds either. */
static __always_inline bool dcache_seqs(struct file_dcache_key *k)
{
	return seq_even((const void *)rename_lock_addr, &k->rename_seq) &&
	       seq_even((const void *)mount_lock_addr, &k->mount_seq);
}

static __always_inline bool dcache_fs(unsigned long magic)
{
	return magic == EXT4_SUPER_MAGIC || magic == XFS_SUPER_MAGIC ||
	       magic == BTRFS_SUPER_MAGIC || magic == TMPFS_MAGIC ||
	       magic == RAMFS_MAGIC || magic == OVERLAYFS_SUPER_MAGIC;
}

/*
 * May the cache answer this open of file by sb (include/file.h says which
 * opens may)? Loads only: it runs on every open in a sandbox.
 */
static __always_inline bool dcache_eligible(const struct fo *f,
					    const struct sandbox *sb,
					    const struct policy_conf *conf, __u8 kind)
{
	struct dentry *d = f->dentry;
	struct inode *ino = d->d_inode;

	/* Off unless the agent switched it on (include/file.h). */
	if (!dcache_on)
		return false;
	/* A received fd may have been opened by handle, outside: its
	 * dentry need not be connected to the tree. */
	if (kind != EV_KIND_FILE || (sb->slot & SANDBOX_SNAP_PENDING))
		return false;
	if (conf->caps & (1ULL << CAP_DAC_READ_SEARCH))
		return false;
	if (!ino || (ino->i_mode & S_IFMT) != S_IFREG || ino->i_nlink != 1)
		return false;
	return d->d_parent != d && dcache_fs(d->d_sb->s_magic);
}

/* Task t's root (d_path() is relative to the current task's). */
static __always_inline void task_root(struct fs_struct *fs, __u64 *mnt,
				      __u64 *dentry)
{
	*mnt = (__u64)fs->root.mnt;
	*dentry = (__u64)fs->root.dentry;
}

/*
 * The key of this open of file by sb (k zeroed, k->gen read already),
 * the two sequences included, or false while a writer holds one. Read
 * before the path is resolved: a move, a mount, a new root or a rule
 * written meanwhile then leaves a key that no later open will match.
 */
static __always_inline bool dcache_key(const struct fo *f, struct mnt_namespace *ns,
				       struct fs_struct *fs, const struct sandbox *sb,
				       struct file_dcache_key *k)
{
	k->ns_seq = mntns_seq(ns);
	if (!k->ns_seq)
		return false;
	task_root(fs, &k->root_mnt, &k->root_dentry);
	k->mnt = (__u64)f->mnt;
	k->dentry = (__u64)f->dentry;
	k->root_id = sb->root_id;
	k->policy_id = sb->policy_id;
	return dcache_seqs(k);
}

/* Equal but for the two sequences. */
static __always_inline bool dcache_same(const struct file_dcache_key *a,
					const struct file_dcache_key *b)
{
	return a->ns_seq == b->ns_seq && a->gen == b->gen && a->mnt == b->mnt &&
	       a->dentry == b->dentry && a->root_mnt == b->root_mnt &&
	       a->root_dentry == b->root_dentry && a->root_id == b->root_id &&
	       a->policy_id == b->policy_id;
}

/*
 * The test build (make variant) writes a key in two steps, the mount and
 * dentry first, with a spin between them, and spins again between a
 * reader's first read of the sequence and its reads of the ways, so that
 * on two CPUs a reader meets half-written keys often, and a writer often
 * starts after a reader's first read: tests/vm/dcache-race.sh shows with
 * it that each of the sequence's two checks keeps readers off them (a
 * reader that took one could allow a name no policy allows it). The
 * product does neither.
 */
#ifdef STOCKADE_TEST_VARIANT
static __always_inline void dcache_spin(__u32 spins)
{
	volatile __u32 n;

	for (n = 0; n < spins; n++)
		;
}

static __always_inline void dcache_widen(struct file_dcache_key *to,
					 const struct file_dcache_key *k)
{
	to->mnt = k->mnt;
	to->dentry = k->dentry;
	dcache_barrier();
	dcache_spin(DCACHE_WIDEN_SPINS);
	dcache_barrier();
}

static __always_inline void dcache_read_widen(void)
{
	dcache_spin(DCACHE_READ_SPINS);
}
#else
static __always_inline void dcache_widen(struct file_dcache_key *to,
					 const struct file_dcache_key *k)
{
}

static __always_inline void dcache_read_widen(void)
{
}
#endif

/* What dcache_get() found: the way whose key is k's but for the
 * sequences, if any (-1), with the sequences and flags it holds. */
struct dcache_found {
	int way;
	__u32 flags;
	__u64 rename_seq, mount_seq;
	bool have;		/* the inode has storage at all */
};

static __always_inline void dcache_get(struct inode *ino,
				       const struct file_dcache_key *k,
				       struct dcache_found *f)
{
	struct file_dcache_val *v;
	__u64 seq;
	int i;

	f->way = -1;
	f->flags = 0;
	f->rename_seq = 0;
	f->mount_seq = 0;
	v = bpf_inode_storage_get(&file_dcache, ino, 0, 0);
	f->have = v;
	if (!v)
		return;
	seq = dcache_once(v->seq);
	if (seq & 1) {
		dcache_count(DCACHE_TURNED);
		return;		/* a writer is in: no way is taken */
	}
	dcache_read_widen();
	dcache_barrier();
#pragma unroll
	for (i = 0; i < FILE_DCACHE_WAYS; i++) {
		if (f->way < 0 && v->way[i].flags &&
		    dcache_same(&v->way[i].key, k)) {
			f->way = i;
			f->flags = v->way[i].flags;
			f->rename_seq = v->way[i].key.rename_seq;
			f->mount_seq = v->way[i].key.mount_seq;
		}
	}
	dcache_barrier();
	if (dcache_once(v->seq) != seq) {
		f->way = -1;	/* a writer came and went: not taken */
		dcache_count(DCACHE_TURNED);
	}
}

/* This open's number among the inode's recent opens (1: the first since
 * its slot in dcache_seen last changed hands), counted up to
 * FILE_DCACHE_OPENS. By inode number (the verifier does no arithmetic on
 * a pointer): two files of one number on two filesystems only make an
 * entry some opens early or late. */
static __always_inline __u32 dcache_opens(struct inode *ino)
{
	__u64 n = ino->i_ino + 1;
	__u32 slot = (__u32)((n * 0x9E3779B97F4A7C15ULL) >> 32) &
		     (FILE_DCACHE_SEEN - 1);
	struct dcache_seen_slot *seen = bpf_map_lookup_elem(&dcache_seen, &slot);

	if (!seen)
		return 1;
	if (seen->ino != n) {
		seen->ino = n;
		seen->opens = 1;
		return 1;
	}
	if (seen->opens < FILE_DCACHE_OPENS)
		seen->opens++;
	return seen->opens;
}

/*
 * Store flags under k (sequences included) in way f->way, where the same
 * open was cached before with other sequences, else in the next way in
 * turn. No storage yet: made if fewer than FILE_DCACHE_MAX are alive.
 */
static __always_inline void dcache_put(struct inode *ino,
				       const struct file_dcache_key *k, __u32 flags,
				       const struct dcache_found *f)
{
	struct file_dcache_val *v;
	bool fresh = false;
	__u32 w;

	if (!f->have && dcache_live >= FILE_DCACHE_MAX)
		return;		/* full: the next open goes the whole way */
	v = bpf_inode_storage_get(&file_dcache, ino, 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!v)
		return;		/* no memory: the next open goes the whole way */
	bpf_spin_lock(&v->lock);
	/* Made here, or by another CPU since: counted once either way. */
	if (!v->counted) {
		v->counted = 1;
		fresh = true;
	}
	if (f->way >= 0) {
		w = f->way;
	} else {
		w = v->next;
		v->next = w + 1;
	}
	w &= FILE_DCACHE_WAYS - 1;
	dcache_once(v->seq) += 1;	/* odd: readers keep off */
	dcache_barrier();
	dcache_widen(&v->way[w].key, k);
	v->way[w].key = *k;
	v->way[w].flags = flags;
	dcache_barrier();
	dcache_once(v->seq) += 1;
	bpf_spin_unlock(&v->lock);
	if (fresh)
		__sync_fetch_and_add(&dcache_live, 1);
}

/* An inode goes, and its entry with it: give its place back. Runs for
 * every inode the host frees; an inode with no entry costs one lookup. */
SEC("lsm/inode_free_security")
int BPF_PROG(stk_inode_free, struct inode *inode)
{
	struct file_dcache_val *v = bpf_inode_storage_get(&file_dcache, inode, 0, 0);

	if (v && v->counted)
		__sync_fetch_and_add(&dcache_live, -1);
	return 0;
}

/* A raw storage character device (include/file.h)? MAJOR(): the
 * kernel's dev_t keeps the minor in its low 20 bits. */
static __always_inline bool raw_storage_chr(struct inode *ino)
{
	__u32 major, i;

	if ((ino->i_mode & S_IFMT) != S_IFCHR)
		return false;
	major = ino->i_rdev >> 20;
	if (major == FILE_SCSI_GENERIC_MAJOR)
		return true;
	for (i = 0; i < FILE_RAW_CHR_MAJORS; i++)
		if (raw_chr_majors[i] && raw_chr_majors[i] == major)
			return true;
	return false;
}

/* An opened (or received) file, judged by the access it was opened for
 * (f: its pointers, fo_load()). */
static __always_inline int judge_file(struct file *file, const struct fo *f,
				      __u8 kind, __u8 op_r)
{
	struct policy_conf *conf;
	struct lsm_scratch *s;
	struct sandbox *sb, sb_snap;
	struct file_dcache_key dk = {};
	struct dcache_found found;
	struct file_rule r_copy = {};
	struct file_rule *r;
	struct inode *ino;
	unsigned int mode, flags;
	bool foreign, store = false;
	long len;
	__u8 reason, op;
	struct task_struct *t;
	struct mnt_namespace *ns;
	struct fs_struct *fs;
	__u64 cgid;
	int want = 0;

	conf = lsm_current_hot(&sb, &cgid, &sb_snap);
	if (!conf)
		return 0;
	/* The task's pointers, once (struct fo says why). */
	t = f->task;
	ns = t->nsproxy->mnt_ns;
	fs = t->fs;
	/* POSIX message queues (mq_open's internal mount, or a mounted
	 * mqueue fs): judged by who created them, not by path. */
	if (is_mqueue_inode(f->inode))
		return mq_judge(sb, conf, cgid, f->dentry);
	/* execve() (and its #! interpreter) opens the binary with
	 * __FMODE_EXEC in f_flags before bprm_check_security runs, so the
	 * exec is judged here, once, and no bprm program is needed. */
	if (kind == EV_KIND_FILE && file_exec_open(file))
		return judge_exec(sb, conf, cgid, file, EV_OP_EXEC, false);
	if (fo_internal(f))
		return 0;
	mode = file->f_mode;
	flags = file->f_flags;
	if (mode & FMODE_READ)
		want |= WANT_READ;
	if ((mode & FMODE_WRITE) || (flags & O_TRUNC))
		want |= WANT_WRITE;
	/* O_ACCMODE 3 opens for ioctl only: judge it as both. */
	if (!want)
		want = WANT_READ | WANT_WRITE;
	/* An exec open went to judge_exec() above; a received fd that was
	 * opened for exec (binfmt_misc's open-binary) is named so. */
	op = want & WANT_WRITE ? EV_OP_OPEN_WRITE :
	     ((mode | flags) & FMODE_EXEC) ? EV_OP_EXEC : op_r;
	/* A regular file on a filesystem the cache takes is never a block
	 * device nor cgroupfs, and a hit is never on a foreign mount (an
	 * entry is made only after the check below passed, and the key
	 * holds the opener's namespace, the mount and mount_lock's
	 * sequence, which every change of a mount's namespace moves): the
	 * checks below cannot refuse a hit, so they run only on a miss. */
	ino = f->dentry->d_inode;
	/* The generation first, before the link count is read: a link
	 * bumps it before the count goes up. */
	dk.gen = file_gen;
	/* A file's first opens are only counted: an entry is looked for and
	 * made from its FILE_DCACHE_OPENS-th on (making one costs more than
	 * going the whole way; looking one up for a file opened a few times
	 * would cost its every open something for nothing). */
	if (dcache_eligible(f, sb, conf, kind) &&
	    dcache_opens(ino) >= FILE_DCACHE_OPENS && dcache_key(f, ns, fs, sb, &dk)) {
		store = true;
		dcache_get(ino, &dk, &found);
		r_copy.flags = (__u16)found.flags;
		if (found.way >= 0 && found.rename_seq == dk.rename_seq &&
		    found.mount_seq == dk.mount_seq &&
		    !rule_verdict(&r_copy, 0, want, false)) {
			dcache_count(DCACHE_HIT);
			return 0;
		}
	}
	/* The scratch buffer only now: a hit needs none, and on 6.1 the
	 * lookup of a per-CPU array is a helper call. */
	s = scratch();
	if (!s)
		return -EPERM;	/* cannot happen; fail closed */
	foreign = foreign_to(f->mnt, ns);
	len = dpath((struct path *)&file->f_path, s->buf[0]);
	if (len < 0)
		return lsm_deny(sb, conf, cgid, kind, op, EV_REASON_PATH_TOO_LONG,
				NULL, NULL, 0, 0);
	if (foreign)
		return lsm_deny(sb, conf, cgid, kind, op, EV_REASON_DETACHED_MOUNT,
				s->buf[0], NULL, 0, 0);
	/* A block device holds every file of its filesystem: reading it
	 * raw would get around every path rule; so do the character
	 * devices that send a disk commands (include/file.h). */
	if ((f->inode->i_mode & S_IFMT) == S_IFBLK || raw_storage_chr(f->inode))
		return lsm_deny(sb, conf, cgid, kind, op, EV_REASON_DEVICE,
				s->buf[0], NULL, 0, 0);
	if ((want & WANT_WRITE) && is_cgroup_migrate(f))
		return lsm_deny(sb, conf, cgid, EV_KIND_CGROUP,
				EV_OP_CGROUP_MIGRATE, EV_REASON_CGROUP_ESCAPE,
				s->buf[0], NULL, 0, 0);
	/* Judged where bpf_d_path() wrote it: no copy (file_lookup()). */
	r = file_lookup(s, sb, conf, s->buf[0], len & MASK, true);
	reason = rule_verdict(r, len & MASK, want, false);
	if (!reason) {
		/* Stored only if the root the path was resolved against is
		 * still the key's (another task sharing this one's fs_struct
		 * may have chrooted meanwhile). */
		if (store && r) {
			__u64 rm, rd;

			task_root(fs, &rm, &rd);
			if (rm == dk.root_mnt && rd == dk.root_dentry)
				dcache_put(ino, &dk, r->flags, &found);
		}
		return 0;
	}
	return lsm_deny(sb, conf, cgid, kind, op, reason, s->buf[0], NULL, 0, 0);
}

SEC("lsm/file_open")
int BPF_PROG(stk_file_open, struct file *file)
{
	struct fo f;

	fo_load(&f, file);
	if (kernel_own_open(&f))
		return 0;
	/* An exec ends a setup pass (include/setup.h) before it is judged,
	 * so the payload's own binary is judged. */
	if (file_exec_open(file))
		setup_exec(file, fo_unattached(&f), false);
	return judge_file(file, &f, EV_KIND_FILE, EV_OP_OPEN_READ);
}

/*
 * The exec's binary once more, for a setup pass that began after its open:
 * runc moves its init while the init re-executes its own clone, and the
 * clone's ELF interpreter, the exec's next open, would end the pass.
 * setup_exec() decides here as at the binary's open: an exec it saw there
 * ended the pass or marked the clone already, and deciding again changes
 * nothing. Only the first round, whose file is the binary itself (later
 * rounds have a #! or binfmt_misc interpreter, which file_open judged).
 * When the pass ends here, the binary is judged here: its open was not
 * (the task was outside, or its pass began within that open), or was
 * taken for the interpreter of a clone's exec that had failed. A clone's
 * exec with no pass yet is noted here (struct setup_clone), so that a
 * move after this and before the interpreter's open keeps the pass too.
 */
SEC("lsm/bprm_check_security")
int BPF_PROG(stk_bprm_check, struct linux_binprm *bprm)
{
	struct file *file = bprm->file;
	struct policy_conf *conf;
	struct sandbox *sb, sb_snap;
	struct fo f;
	__u64 cgid;

	if (bprm->interp != bprm->filename)
		return 0;
	fo_load(&f, file);
	if (!setup_exec(file, fo_unattached(&f), true))
		return 0;
	conf = lsm_current_hot(&sb, &cgid, &sb_snap);
	if (!conf)
		return 0;
	return judge_exec(sb, conf, cgid, file, EV_OP_EXEC, false);
}

/*
 * Anonymous memory made executable: a JIT's code, or shellcode. Allowed
 * unless exec.anon_exec is deny.
 */
static __always_inline int anon_exec(struct sandbox *sb,
				     struct policy_conf *conf, __u64 cgid,
				     __u8 op)
{
	if (!(conf->flags & SANDBOX_ANON_EXEC_DENY))
		return 0;
	return lsm_deny(sb, conf, cgid, EV_KIND_FILE, op, EV_REASON_ANON_EXEC,
			NULL, NULL, 0, 0);
}

/* A MAP_SHARED|MAP_ANONYMOUS mapping's file: shmem_zero_setup() names it
 * "dev/zero" on the internal shm mount (a memfd is "memfd:NAME"). */
static __always_inline bool is_shared_anon(struct file *file)
{
	char name[9] = {};

	if (!is_internal(BPF_CORE_READ(file, f_path.mnt)))
		return false;
	bpf_probe_read_kernel_str(name, sizeof(name),
				  BPF_CORE_READ(file, f_path.dentry, d_name.name));
	return str_eq(name, "dev/zero", 9);
}

/* The /dev/zero device itself (any node of it): mmap_zero() turns a
 * private mapping of it into anonymous memory, a shared one into shared
 * anonymous memory; the device file is never what runs. */
static __always_inline bool is_dev_zero(struct file *file)
{
	struct inode *ino = BPF_CORE_READ(file, f_inode);

	return (BPF_CORE_READ(ino, i_mode) & S_IFMT) == S_IFCHR &&
	       BPF_CORE_READ(ino, i_rdev) == DEV_ZERO;
}

static __always_inline bool anon_deny(struct policy_conf *conf)
{
	return conf->flags & SANDBOX_ANON_EXEC_DENY;
}

/* Under READ_IMPLIES_EXEC every readable mapping is executable, brk's
 * heap and a new stack included (VM_DATA_DEFAULT_FLAGS), with no hook on
 * the way; see stk_persona. */
static __always_inline bool reads_imply_exec(void)
{
	struct task_struct *t = bpf_get_current_task_btf();

	return BPF_CORE_READ(t, personality) & READ_IMPLIES_EXEC;
}

/*
 * A mapping of a file opened for exec is the kernel's ELF loader mapping
 * the binary or its interpreter (binfmt_elf: vm_mmap of bprm->file), or a
 * binfmt_misc interpreter given the binary's fd: judged when it was
 * opened (file_open), so judged once, with one record. A file opened any
 * other way has no FMODE_EXEC.
 *
 * Under anon_exec: deny, a private mapping that is both writable and
 * executable is anonymous memory in all but name (written pages are
 * private copies: code the sandbox wrote, whatever file is behind it),
 * refused before the exec-open shortcut: an ELF with an RWX segment is
 * refused too (README, "Execution").
 */
SEC("lsm/mmap_file")
int BPF_PROG(stk_mmap_file, struct file *file, unsigned long reqprot,
	     unsigned long prot, unsigned long flags)
{
	struct policy_conf *conf;
	struct sandbox *sb, sb_snap;
	struct file *raw = NULL;
	__u64 cgid;

	/* Every mmap on the host comes here: leave before any lookup. The
	 * kernel has added PROT_EXEC for READ_IMPLIES_EXEC already. */
	if (!(prot & PROT_EXEC))
		return 0;
	conf = lsm_current_hot(&sb, &cgid, &sb_snap);
	if (!conf)
		return 0;
	/* NULL for anonymous memory. Both tests, on purpose: the 6.12
	 * verifier takes a plain hook pointer argument for non-NULL and
	 * drops `!file` as dead code, hence the copy read as a number
	 * (raw); kernels that declare it file__nullable make it maybe-NULL
	 * and reject any use of file not guarded by `!file` itself. */
	bpf_probe_read_kernel(&raw, sizeof(raw), &ctx[0]);
	if (!raw || !file)
		return anon_exec(sb, conf, cgid, EV_OP_MMAP_EXEC);
	/* /dev/zero, and remap_file_pages() of a shared anonymous mapping
	 * (its vm_file is shmem's "dev/zero"): anonymous memory. */
	if (is_dev_zero(file) || is_shared_anon(file))
		return anon_exec(sb, conf, cgid, EV_OP_MMAP_EXEC);
	if (anon_deny(conf) &&
	    (((prot & PROT_WRITE) && !(flags & MAP_SHARED)) || reads_imply_exec()))
		return anon_exec(sb, conf, cgid, EV_OP_MMAP_EXEC);
	if (is_exec_open(file))
		return 0;
	return judge_exec(sb, conf, cgid, file, EV_OP_MMAP_EXEC, false);
}

/*
 * mprotect() adding PROT_EXEC: judged as an exec of the mapped file (its
 * vm_file), or as anonymous memory; a mapping already executable is not
 * judged again. Under anon_exec: deny, first (before that shortcut and
 * the exec-open one, which would pass a program's own .text or .data):
 * a private mapping made writable and executable, and a private mapping
 * made executable after it was written (an anon_vma: it holds COW'd
 * pages, the sandbox's bytes, not the file's). TEXTREL libraries do the
 * latter (README, "Execution").
 */
SEC("lsm/file_mprotect")
int BPF_PROG(stk_file_mprotect, struct vm_area_struct *vma,
	     unsigned long reqprot, unsigned long prot)
{
	struct policy_conf *conf;
	struct sandbox *sb, sb_snap;
	struct file *file;
	__u64 vm_flags;
	__u64 cgid;

	if (!(prot & PROT_EXEC))
		return 0;
	vm_flags = BPF_CORE_READ(vma, vm_flags);
	conf = lsm_current_hot(&sb, &cgid, &sb_snap);
	if (!conf)
		return 0;
	if (anon_deny(conf) && !(vm_flags & VM_SHARED) &&
	    ((prot & PROT_WRITE) ||
	     (!(vm_flags & VM_EXEC) && BPF_CORE_READ(vma, anon_vma))))
		return anon_exec(sb, conf, cgid, EV_OP_MPROTECT_EXEC);
	if (vm_flags & VM_EXEC)
		return 0;
	file = BPF_CORE_READ(vma, vm_file);
	if (!file || is_shared_anon(file))
		return anon_exec(sb, conf, cgid, EV_OP_MPROTECT_EXEC);
	if (is_exec_open(file))
		return 0;
	return judge_exec(sb, conf, cgid, file, EV_OP_MPROTECT_EXEC, true);
}

/*
 * personality(READ_IMPLIES_EXEC) under anon_exec: deny. With it, brk()
 * grows an executable heap (do_brk_flags() ORs VM_DATA_DEFAULT_FLAGS,
 * VM_EXEC included) and no LSM hook is on that way, nor on personality()
 * itself; and the syscall cannot be failed here: fmod_ret reaches
 * syscalls only with CONFIG_FUNCTION_ERROR_INJECTION, which Debian's
 * kernels lack. So the caller is killed (SIGKILL, delivered before it
 * returns to user space: it never runs with the flag), with one record;
 * audit mode records and lets it be. An exec of a 64-bit ELF clears the
 * flag (set_personality_64bit()); a legacy 32-bit one may set it, and
 * its first mapping is then refused (stk_mmap_file).
 */
static __always_inline int personality_judge(unsigned long persona)
{
	struct policy_conf *conf;
	struct sandbox *sb, sb_snap;
	__u64 cgid;

	/* 0xffffffff only asks for the current value. */
	if (!(persona & READ_IMPLIES_EXEC) || (__u32)persona == 0xffffffff)
		return 0;
	conf = lsm_current(&sb, &cgid, &sb_snap);
	if (!conf || !anon_deny(conf))
		return 0;
	if (anon_exec(sb, conf, cgid, EV_OP_PERSONALITY))
		bpf_send_signal(SIGKILL);
	return 0;
}

SEC("fentry/__x64_sys_personality")
int BPF_PROG(stk_persona, struct pt_regs *regs)
{
	return personality_judge(BPF_CORE_READ(regs, di));
}

/* int 0x80 from a 64-bit task reaches the ia32 entry: the same check. */
SEC("fentry/__ia32_sys_personality")
int BPF_PROG(stk_persona32, struct pt_regs *regs)
{
	return personality_judge(BPF_CORE_READ(regs, bx));
}

/* SCM_RIGHTS: a file the sandbox could not open itself is refused. */
SEC("lsm/file_receive")
int BPF_PROG(stk_file_receive, struct file *file)
{
	struct fo f;

	fo_load(&f, file);
	return judge_file(file, &f, EV_KIND_FD_RECEIVE, EV_OP_OPEN_READ);
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

	/* Anyone's rename ends every cached decision. rename_lock's
	 * sequence moves too, but it is 32 bits, and a sandbox renaming in
	 * its own folders could bring it round to an entry's in minutes. */
	file_gen_bump();
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

	/* Anyone's new name for a file ends every cached decision: once
	 * the old name goes, the new one's dentry may take the memory of
	 * the dentry an entry holds (include/file.h). */
	file_gen_bump();
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

/*
 * inode_setattr: times and the other attributes no path hook sees
 * (utimensat, futimens; chmod, chown and truncate are judged by
 * path_chmod, path_chown and path_truncate, so those changes are left
 * alone here: one call, one record). The hook has a dentry but no mount,
 * and a path walked only up to the dentry's filesystem root would be
 * wrong on any other mount (/tmp is its own tmpfs), so the mount is found
 * in the task's own mount namespace: the first mount of the dentry's
 * superblock there whose root is the dentry or one of its ancestors. A
 * bind-mounted filesystem is judged through that first mount only (a
 * false denial at worst: any view in the write scope could be written
 * through anyway). None found (a detached or another namespace's mount):
 * refused, reason detached_mount.
 */
#define ATTR_MODE	(1 << 0)
#define ATTR_UID	(1 << 1)
#define ATTR_GID	(1 << 2)
#define ATTR_SIZE	(1 << 3)
#define ATTR_FORCE	(1 << 9)
#define ATTR_KILL_SUID	(1 << 11)
#define ATTR_KILL_SGID	(1 << 12)
#define ATTR_FILE	(1 << 13)
#define ATTR_KILL_PRIV	(1 << 14)
#define ATTR_OPEN	(1 << 15)
#define SB_KERNMOUNT	(1 << 22)
#define SETATTR_ANC	FILE_WALK_DEPTH	/* ancestors kept for the search */
#define SETATTR_MOUNTS	256		/* mounts of one superblock looked at */

/* Up to 6.12 at least, a superblock lists its mounts in s_mounts through
 * mount.mnt_instance; later kernels chain them by mnt_next_for_sb. */
struct super_block___list {
	struct list_head s_mounts;
} __attribute__((preserve_access_index));

struct mount___list {
	struct list_head mnt_instance;
} __attribute__((preserve_access_index));

struct setattr_ctx {
	__u64 *anc;		/* the dentry and its ancestors */
	__u32 n;
	void *cur;		/* list node, or struct mount * */
	void *head;		/* the list's head; NULL: chained mounts */
	void *ns;		/* the task's mount namespace */
	void *found;		/* struct mount *: the first of ns reaching it */
	void *private;		/* struct mount *: a private one (an overlay's
				 * layer) of the same filesystem */
};

static long anc_step(__u32 i, void *ctx)
{
	struct setattr_ctx *c = ctx;
	struct dentry *d = (void *)c->anc[(c->n - 1) & (SETATTR_ANC - 1)], *parent;

	parent = BPF_CORE_READ(d, d_parent);

	if (parent == d || c->n >= SETATTR_ANC)
		return 1;
	c->anc[c->n & (SETATTR_ANC - 1)] = (__u64)parent;
	c->n++;
	return 0;
}

/* Is root one of the ancestors kept (bpf_loop() callback, 1 to stop)?
 * A callback rather than a loop in mnt_step(): the verifier checks it
 * once, where an unrolled loop of SETATTR_ANC steps inside each mount's
 * step cost about 50,000 instructions of verification, at every agent
 * start. */
struct anc_match_ctx {
	__u64 *anc;
	__u32 n;
	__u64 root;
	bool hit;
};

static long anc_match(__u32 j, void *ctx)
{
	struct anc_match_ctx *mc = ctx;

	if (j >= mc->n)
		return 1;
	if (mc->anc[j & (SETATTR_ANC - 1)] == mc->root) {
		mc->hit = true;
		return 1;
	}
	return 0;
}

/* Like walk_step(), the context's fields go to locals before any CO-RE
 * read: only the kernel's types may carry relocations. */
static long mnt_step(__u32 i, void *ctx)
{
	struct setattr_ctx *c = ctx;
	struct list_head *node = c->cur;
	struct anc_match_ctx mc = { .anc = c->anc, .n = c->n };
	struct mount *m;
	void *ns;

	if (!node || (void *)node == c->head)
		return 1;
	/* A constant after relocation: the other branch's relocation fails
	 * on this kernel, and the verifier must see it is dead. */
	if (bpf_core_field_exists(struct mount___list, mnt_instance)) {
		m = (void *)node - bpf_core_field_offset(struct mount___list, mnt_instance);
		c->cur = BPF_CORE_READ(node, next);
	} else {
		m = (void *)node;
		c->cur = BPF_CORE_READ(m, mnt_next_for_sb);
	}
	ns = (void *)BPF_CORE_READ(m, mnt_ns);
	/* A private mount of the same filesystem: it holds an overlay's
	 * layer (the upper one's work directory is beside it, not below:
	 * the filesystem, not the mount's root, is what is asked). The
	 * callback keeps no flags of its own, only what it read: 6.7 and
	 * later verify a callback until its states converge, and a flag
	 * stored here and tested after made an agent's start on 6.12 take
	 * four times as long. */
	if (ns == MNT_NS_INTERNAL) {
		c->private = m;
		return 0;
	}
	if (ns != c->ns)
		return 0;
	mc.root = (__u64)BPF_CORE_READ(m, mnt.mnt_root);
	bpf_loop(SETATTR_ANC, anc_match, &mc, 0);
	if (!mc.hit)
		return 0;
	c->found = m;
	return 1;
}

/*
 * One search of dentry d's filesystem's mounts (its superblock's list)
 * for those whose root is d or one of its ancestors: *c says which. Its
 * found is the first of the current task's namespace (NULL: none), its
 * private a private mount of the filesystem (in no namespace: an
 * overlay's layer) or NULL. True when the search was whole: when a bound
 * (SETATTR_ANC ancestors, SETATTR_MOUNTS mounts) cut it short, a NULL
 * proves nothing. s->buf[1] holds d's ancestors meanwhile.
 */
static __always_inline bool mounts_reaching(struct dentry *d,
					    struct lsm_scratch *s,
					    struct setattr_ctx *c)
{
	struct dentry *last;
	struct super_block *fs = BPF_CORE_READ(d, d_sb);

	c->anc = (__u64 *)s->buf[1];
	c->anc[0] = (__u64)d;
	/* n = 1, read back from the map so that the verifier does not know
	 * it: a known count made each depth a state of its own (anc_step()
	 * tests it against SETATTR_ANC), and 6.7 and later, which verify a
	 * callback until its states converge, went through all 64. */
	c->anc[SETATTR_ANC] = 1;
	c->n = *(volatile __u64 *)&c->anc[SETATTR_ANC];
	bpf_loop(SETATTR_ANC, anc_step, c, 0);
	c->ns = BPF_CORE_READ(bpf_get_current_task_btf(), nsproxy, mnt_ns);
	if (bpf_core_field_exists(struct mount___list, mnt_instance)) {
		struct list_head *head = (void *)fs +
			bpf_core_field_offset(struct super_block___list, s_mounts);

		c->head = head;
		c->cur = BPF_CORE_READ(head, next);
	} else {
		c->cur = BPF_CORE_READ(fs, s_mounts);
	}
	bpf_loop(SETATTR_MOUNTS, mnt_step, c, 0);
	/* Whole: the ancestors kept end at the root, and the list at its
	 * end (or a mount of the namespace found, which ends the search). */
	last = (void *)c->anc[(c->n - 1) & (SETATTR_ANC - 1)];
	return BPF_CORE_READ(last, d_parent) == last &&
	       (c->found || !c->cur || c->cur == c->head);
}

/*
 * A change the kernel makes for itself within the task's call, under
 * credentials of its own, to a dentry of an overlay's layer the task
 * cannot reach: overlayfs's copy-up giving the new upper file the lower
 * one's attributes, times and xattrs (and its own trusted.overlay.*
 * ones), with its mounter's credentials, on layers mounted nowhere in the
 * task's namespace (a container's). The call it serves (a write open, a
 * chmod) was judged by its overlay path. All three must hold, from a
 * whole search of d's mounts (c: mounts_reaching()'s; a bound hit proves
 * nothing, and the change is judged as ever):
 *   - credentials not the task's own, nor a sandbox's (sandbox_creds:
 *     an io_uring request runs under a registered personality's, which
 *     a task that changed its own since makes differ);
 *   - d's filesystem has a private mount (in no namespace): it holds an
 *     overlay's layer (the work directory, where a copy-up makes its
 *     file, lies beside the upper layer's root, not below it);
 *   - no mount of the task's namespace reaches d.
 * Not a filesystem of the kernel's own (SB_KERNMOUNT: shm, mqueue), whose
 * mounts are private too.
 */
static __always_inline bool kernel_own_change(struct dentry *d,
					      const struct setattr_ctx *c,
					      bool whole)
{
	struct task_struct *t = bpf_get_current_task_btf();

	return t->cred != t->real_cred &&
	       !(BPF_CORE_READ(d, d_sb, s_flags) & SB_KERNMOUNT) &&
	       whole && !c->found && c->private && !sandbox_cred(t->cred);
}

/* d judged through the first mount of the task's namespace that reaches
 * it (mounts_reaching()), for a hook that has a dentry and no mount. None
 * found: overlayfs's own change under its mounter's credentials, or a
 * detached or another namespace's mount, refused; with kern_walk, a file
 * of the kernel's own filesystems (SB_KERNMOUNT: pipes, sockets, memfd,
 * when no mount shows them) judged by its path in its filesystem. */
static __always_inline int judge_reached(struct sandbox *sb,
					 struct policy_conf *conf, __u64 cgid,
					 struct lsm_scratch *s,
					 struct dentry *d, __u8 op,
					 bool kern_walk)
{
	struct setattr_ctx c = {};
	bool whole;

	whole = mounts_reaching(d, s, &c);
	if (!c.found &&
	    !(kern_walk && (BPF_CORE_READ(d, d_sb, s_flags) & SB_KERNMOUNT))) {
		if (kernel_own_change(d, &c, whole))
			return 0;
		return lsm_deny(sb, conf, cgid, EV_KIND_FILE, op,
				EV_REASON_DETACHED_MOUNT, NULL, NULL, 0, 0);
	}
	/* One walk for both (the verifier checks each copy). */
	return walked(sb, conf, cgid, s,
		      c.found ? c.found + bpf_core_field_offset(struct mount, mnt) :
				NULL, d, op, WANT_WRITE);
}

static __always_inline int judge_setattr(struct dentry *d, struct iattr *attr)
{
	unsigned int v = BPF_CORE_READ(attr, ia_valid);
	struct policy_conf *conf;
	struct lsm_scratch *s;
	struct sandbox *sb, sb_snap;
	struct super_block *fs;
	__u64 cgid;

	if (v & (ATTR_MODE | ATTR_UID | ATTR_GID | ATTR_SIZE))
		return 0;	/* judged by the path hooks */
	/* Dropping suid/sgid/capabilities after a write already judged. */
	if (!(v & ~(ATTR_FORCE | ATTR_KILL_SUID | ATTR_KILL_SGID |
		    ATTR_KILL_PRIV | ATTR_FILE | ATTR_OPEN)))
		return 0;
	conf = lsm_current(&sb, &cgid, &sb_snap);
	if (!conf)
		return 0;
	fs = BPF_CORE_READ(d, d_sb);
	/* pipefs, sockfs, memfd's shm, anon inodes: no path to judge (the
	 * same as is_internal() for the hooks that have the mount). */
	if (BPF_CORE_READ(fs, s_flags) & SB_KERNMOUNT)
		return 0;
	s = scratch();
	if (!s)
		return -EPERM;
	return judge_reached(sb, conf, cgid, s, d, EV_OP_SETATTR, false);
}

/* 6.3 added the leading struct mnt_idmap *; the agent loads the one of
 * these two that matches the running kernel's bpf_lsm_inode_setattr. */
SEC("lsm/inode_setattr")
int BPF_PROG(stk_inode_setattr, void *idmap, struct dentry *dentry,
	     struct iattr *attr)
{
	return judge_setattr(dentry, attr);
}

SEC("lsm/inode_setattr")
int BPF_PROG(stk_inode_setattr_61, struct dentry *dentry, struct iattr *attr)
{
	return judge_setattr(dentry, attr);
}

/* xattr and ACL hooks get no mount either: judged like inode_setattr,
 * through the first mount of the task's namespace that reaches the dentry
 * (judge_reached()). A walk up to the dentry's filesystem root alone
 * judged a path relative to it: a sandbox's own file on /tmp (a tmpfs)
 * refused, and a file outside the scope, on a filesystem where its path
 * from the root reads like one inside it, let through. A file of the
 * kernel's own filesystems that no mount of the namespace shows (a pipe,
 * a socket, a memfd) keeps the walk to its filesystem's root. */
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
	return judge_reached(sb, conf, cgid, s, dentry, op, true);	\
}

XATTR_HOOK(stk_inode_setxattr, inode_setxattr, EV_OP_SETXATTR)
XATTR_HOOK(stk_inode_removexattr, inode_removexattr, EV_OP_REMOVEXATTR)
/* 6.2 on: system.posix_acl_* go through vfs_set_acl()/vfs_remove_acl()
 * and these hooks instead of the xattr ones; an ACL change is a write.
 * On 6.1 the xattr hooks above see them (op setxattr/removexattr). */
XATTR_HOOK(stk_inode_set_acl, inode_set_acl, EV_OP_SET_ACL)
XATTR_HOOK(stk_inode_rm_acl, inode_remove_acl, EV_OP_REMOVE_ACL)
