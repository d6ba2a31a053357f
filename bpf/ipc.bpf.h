/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * POSIX message queue ownership (include/ipc.h), shared by bpf/ipc.bpf.c,
 * which writes mq_owner, and bpf/file.bpf.c, whose judge_file() judges an
 * opened mqueue file here instead of by path. Weak, like the maps in
 * common.bpf.h: the static linker merges the two definitions into one.
 */
#ifndef STOCKADE_IPC_BPF_H
#define STOCKADE_IPC_BPF_H

#include "lsm.bpf.h"
#include "ipc.h"

#define MQUEUE_MAGIC	0x19800202

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MQ_OWNER_MAX);
	__type(key, __u64);	/* struct dentry * of the queue */
	__type(value, __u64);	/* sandbox root that created it */
} mq_owner SEC(".maps") __weak;

/* Is the inode on a message-queue filesystem? The hot inode hooks test
 * it of their directory before any sandbox lookup, for every file the
 * host creates or unlinks: two plain loads from the hook's BTF pointer
 * (the inode, then its superblock), not probe reads (a helper call
 * each). */
static __always_inline bool is_mqueue_inode(struct inode *ino)
{
	return ino->i_sb->s_magic == MQUEUE_MAGIC;
}

/*
 * A queue (or the mqueue root directory, which lists every queue's name)
 * opened or unlinked by a sandboxed task: allowed only when the same
 * sandbox created it. path = the queue's name.
 */
static __always_inline int mq_judge(struct sandbox *sb, struct policy_conf *conf,
				    __u64 cgid, struct dentry *d)
{
	__u64 key = (__u64)d, *owner = bpf_map_lookup_elem(&mq_owner, &key);

	if (owner && *owner == sb->root_id)
		return 0;
	return lsm_deny(sb, conf, cgid, EV_KIND_IPC, EV_OP_IPC_MQUEUE,
			EV_REASON_OUTSIDE_SANDBOX,
			(const char *)BPF_CORE_READ(d, d_name.name), NULL, 0, 0);
}

#endif /* STOCKADE_IPC_BPF_H */
