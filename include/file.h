/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * File-path scope, shared by bpf/file.bpf.c and the agent (BPF-LSM).
 *
 * Rules. Each policy's `files` section compiles into entries of the
 * `file_rules` LPM trie, keyed by (policy id, path prefix). The agent
 * stores every prefix with a trailing '/', and the BPF side looks up the
 * judged path with a '/' appended, so that /task matches /task and
 * /task/x but never /taskforce. The longest prefix wins, and each entry
 * already holds the verdict its covering prefixes imply (the agent merges
 * them), so one lookup decides:
 *   FILE_PROTECTED  a built-in protected path not overridden: deny
 *   FILE_DENY       under `files.deny`: deny, even under read/write
 *   FILE_READ       reads (open for read) allowed
 *   FILE_WRITE      writes allowed (open for write/append/truncate, create,
 *                   mknod, mkdir, rmdir, unlink, rename and link at both
 *                   ends, symlink where created, truncate, chmod, chown,
 *                   setxattr, removexattr; times and other attributes
 *                   through inode_setattr)
 *   FILE_EXEC       exec (execve, execveat, a #! interpreter: opens with
 *                   FMODE_EXEC) and PROT_EXEC mappings (mmap, mprotect)
 *                   allowed: readable, under `exec:` when the policy lists
 *                   paths, and not writable unless exec.allow_written
 *                   (W^X for files; agent/file_rules.c, exec_allowed())
 * Every policy has an entry for "/" holding its default (reads everywhere
 * when `files.read` is absent; no writes when `files.write` is absent).
 * /dev/null, /dev/zero, /dev/full, /dev/random and /dev/urandom hold no
 * data and stay readable and writable in every scope (agent/file_rules.c).
 *
 * Limits. LPM keys hold at most 256 bytes of data: 4 are the policy id,
 * so a stored prefix has at most FILE_KEY_PATH = 252 bytes, and a rule
 * path as written at most FILE_PREFIX_MAX = 251 (its '/' is appended).
 * `stockade check` rejects longer ones. A longer judged path is still
 * judged exactly: only its first 252 bytes can take part in a match with
 * a prefix of at most 252 bytes.
 *
 * Resolving paths. file_open (which also judges exec: execve() opens the
 * binary and any #! interpreter through it, with __FMODE_EXEC),
 * file_receive and mmap_file use bpf_d_path() on the resolved struct
 * path. The path_* hooks and file_mprotect may not call it, so they walk the dentry and mount chain themselves, at most
 * FILE_WALK_DEPTH components into a FILE_BUF_SIZE buffer; a deeper or
 * longer path is denied with reason path_too_long. inode_setattr and the
 * xattr and ACL hooks get no mount, so they find it: the first mount of
 * the dentry's superblock in the task's mount namespace whose root is an
 * ancestor of the dentry (bpf/file.bpf.c, judge_reached()).
 */
#ifndef STOCKADE_FILE_H
#define STOCKADE_FILE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define FILE_KEY_PATH		252
#define FILE_PREFIX_MAX		(FILE_KEY_PATH - 1)
#define FILE_MAX_RULES		65536	/* trie entries, all policies */
#define FILE_WALK_DEPTH		64
#define FILE_BUF_SIZE		4096
#define UNIX_PATH_MAX_		108	/* sun_path */
#define UNIX_MAX_RULES		4096

enum file_flags {
	FILE_READ = 1 << 0,
	FILE_WRITE = 1 << 1,
	FILE_DENY = 1 << 2,
	FILE_PROTECTED = 1 << 3,
	/* A directory with a deny or protected path below it: renaming it
	 * would move that path out from under its rule. Meaningful only on
	 * an exact match (file_rule.len == the judged path's length). */
	FILE_GUARDED_BELOW = 1 << 4,
	FILE_EXEC = 1 << 5,
};

struct file_key {
	__u32 prefixlen;	/* 32 (policy id) + 8 * prefix bytes */
	__u32 policy_id;
	char path[FILE_KEY_PATH];
};

struct file_rule {
	__u16 flags;		/* enum file_flags */
	__u16 len;		/* bytes of this entry's path, without the '/' */
};

/*
 * Per-execution folders (`{cgroup}` in files.read or files.write,
 * policy/policy.h). Such a policy (SANDBOX_FILE_PER_CGROUP in its
 * policy_conf) has its rules compiled once per selected cgroup, with the
 * placeholders expanded, into `file_cg_rules`, keyed by (policy id,
 * selected cgroup id, prefix): the sandbox entry's root_id picks its
 * scope. Keys are the same shape as file_key's with the cgroup id put in,
 * so a stored prefix has at most FILE_CG_KEY_PATH = 244 bytes, and an
 * expanded path at most FILE_CG_PREFIX_MAX = 243 (a longer expansion is an
 * error for that cgroup, which then keeps the policy's base scope).
 *
 * Fail closed. Under the policy id itself `file_rules` holds the base
 * scope: the policy compiled with every templated path left out (and
 * files.read still counting as present, so leaving one out never turns
 * "read only these" into "read everything"). A task whose scope is not
 * written yet is judged by it, so it reaches nothing a per-execution
 * folder would open, and no other execution's. A pending task (include/
 * sandbox.h) is judged as the sandbox its own cgroup is about to be: its
 * root_id is that cgroup, whose scope the agent writes before the entry
 * that ends the pending state. A scope is written longest prefix first
 * and its "/" last, and deleted "/" first (agent/file_scope.c), so a scope
 * half written or half removed answers each path as the whole scope
 * would, or finds nothing and falls back to the base: never more.
 */
#define FILE_CG_KEY_PATH	244
#define FILE_CG_PREFIX_MAX	(FILE_CG_KEY_PATH - 1)

struct file_cg_key {
	__u32 prefixlen;	/* 32 + 64 (policy, cgroup) + 8 * prefix bytes */
	__u32 policy_id;
	/* The selected cgroup's id in two halves: a __u64 here would pad
	 * the key past the 256 data bytes an LPM key may have. */
	__u32 cg_lo;
	__u32 cg_hi;
	char path[FILE_CG_KEY_PATH];
};

/*
 * The decision cache (`file_dcache`, inode storage; bpf/file.bpf.c). An
 * allowed open of a regular file records, on the inode of the dentry it
 * opened, what it was judged by: the matched entry's flags, under a key of
 * everything the path and its verdict depend on. A later open whose key
 * is equal is judged by those flags without resolving the path or looking
 * it up; any other open goes the whole way. Only allows are cached (a
 * refusal goes the whole way, and writes its one record), and the cached
 * flags are judged against each open's own access.
 *
 * What d_path() gives for (dentry, mount, the task's root) can only change
 *   - by a move in the dcache (rename, exchange, a directory spliced into
 *     place): each writes the kernel's rename_lock, whose sequence is in
 *     the key;
 *   - by a change to any mount tree (mount, bind, move, umount, lazy or
 *     expiring, pivot_root, a namespace torn down): each writes
 *     mount_lock, whose sequence is in the key; every mount(2),
 *     umount(2) and move_mount(2), anyone's, bumps file_gen as well
 *     (the sequence is 32 bits), which leaves the sequence alone only
 *     the changes no syscall of the task's makes (expiry, a namespace
 *     torn down, an automount);
 *   - by another root: the key holds the task's mount namespace (its
 *     never reused sequence number) and its root (mount and dentry);
 *     every chroot and pivot_root, anyone's, bumps file_gen, and an
 *     entry is stored only if the task's root after the path was
 *     resolved is the key's (a task sharing its fs_struct may chroot);
 * and the verdict by the rules: the key holds the policy id and the
 * selected cgroup (root_id), and file_gen, which the agent bumps after
 * every write to file_rules, file_cg_rules and policies. The sequences
 * are 32 bits: a sandbox renaming in its own folders could bring
 * rename_lock's round to an entry's, so every rename(2), anyone's, bumps
 * file_gen (64 bits) as well (lsm/path_rename). A pointer in the
 * key (dentry, mount) can only be reused after a free, and a mount's free
 * writes mount_lock. A dentry's can be reused without either sequence
 * moving when its inode has other names (a hard link, or a dentry not
 * connected to the tree, as open_by_handle_at() makes): every link(2),
 * anyone's, bumps file_gen (lsm/path_link), and so does every unlink of
 * a name of a file that has another (lsm/inode_unlink, which links made
 * inside the kernel, by nfsd or overlayfs, also end with), and only a file
 * with exactly one link, opened (not received: an fd handed in may come
 * from open_by_handle_at() outside) through a connected dentry, is
 * cached, never in a policy that grants DAC_READ_SEARCH, only on filesystems
 * where every move goes through the dcache (ext4, xfs, btrfs, tmpfs,
 * ramfs, overlayfs; not procfs, sysfs, cgroupfs, FUSE or network
 * filesystems, whose names can change under a dentry with no move).
 * Concurrency: writers of one inode's entry are serialised by its spin
 * lock; readers take no lock. A writer makes the entry's sequence odd,
 * changes a way and makes it even again; a reader reads the sequence,
 * the ways, the sequence once more, and takes a way only if both reads
 * gave the same even number (the kernel's seqcount read). That needs
 * loads kept in order, and the writer's stores too: x86's memory model
 * keeps both, and compiler barriers keep clang from moving them (the
 * kernel's smp_rmb() and smp_wmb() on x86 are no more). BPF has no load
 * barrier for other CPUs, so the agent switches the cache on
 * (dcache_on, .rodata) only where the kernel's machine is x86-64, and
 * only with every hook that bumps file_gen loaded; elsewhere every open
 * goes the whole way. tests/vm/dcache-race.sh runs a reader against
 * writers on two CPUs (the test build widens the write: dcache_widen()).
 * Where the kernel's symbol table lacks rename_lock or mount_lock
 * (CONFIG_KALLSYMS_ALL off), or the kernel hides addresses from the agent
 * (no CAP_SYSLOG, or kernel.kptr_restrict 2), nothing is cached: stk_ksyms
 * finds their addresses when the agent loads (agent/lsm.c,
 * lsm__find_locks()).
 *
 * Memory. An entry is inode storage, about 510 bytes of kernel memory
 * charged to the agent's cgroup, freed with its inode. A sandbox can make
 * files (and so entries) until its own memory limit, so their number is
 * bounded: at most FILE_DCACHE_MAX live at once, about 16 MiB
 * (dcache_live, given back by lsm/inode_free_security as each inode
 * goes); past it an open is judged the whole way and nothing new is
 * stored. Making an entry (two allocations and their memory cgroup's
 * charge: about as much as the open itself under an emulator) pays for
 * itself only over several opens, so a file is looked up, and gets an
 * entry, from its FILE_DCACHE_OPENS-th recent open on (dcache_seen counts
 * them): a file read a few times pays one array lookup an open, nothing
 * more.
 */
#define FILE_DCACHE_MAX		32768

/*
 * Character devices that reach a disk's blocks without its block device:
 * SCSI generic (/dev/sgN: SG_IO and read()/write() send SCSI commands; a
 * READ needs no capability on a file open for reading), bsg (under /dev/bsg),
 * NVMe (/dev/ngXnY, the namespaces' generic devices: unprivileged reads
 * from 6.2 on; /dev/nvmeX, the controllers). Opened in a sandbox, they
 * are refused as a block device is (reason device). sg's major is fixed
 * (21); the others are given out at boot or when their driver loads, so
 * the agent reads them from /proc/devices before it loads the programs
 * (raw_chr_majors, .rodata; 0 = none): a driver loaded after the agent
 * started is covered from its next start.
 */
#define FILE_SCSI_GENERIC_MAJOR	21
#define FILE_RAW_CHR_MAJORS	4
#define FILE_RAW_CHR_NAMES	{ "bsg", "nvme-generic", "nvme" }
/* Keys an entry holds at once (a file several sandboxes open); the
 * opens of a file before it gets an entry, and the slots of
 * `dcache_seen` that count them (powers of two). */
#define FILE_DCACHE_WAYS	4
#define FILE_DCACHE_OPENS	8
#define FILE_DCACHE_SEEN	4096
struct file_dcache_key {
	__u64 rename_seq;	/* rename_lock's sequence, even */
	__u64 mount_seq;	/* mount_lock's sequence, even */
	__u64 ns_seq;		/* the task's mount namespace */
	__u64 gen;		/* file_gen */
	__u64 mnt;		/* struct vfsmount * */
	__u64 dentry;		/* struct dentry * */
	__u64 root_mnt;		/* the task's root: struct vfsmount * */
	__u64 root_dentry;	/* and struct dentry * */
	__u64 root_id;
	__u32 policy_id;
	__u32 pad;
};

/* unix_allow: exact match on (policy, sun_path bytes as the kernel holds
 * them: a leading NUL for an abstract name). */
struct unix_key {
	__u32 policy_id;
	char path[UNIX_PATH_MAX_];
};

#endif /* STOCKADE_FILE_H */
