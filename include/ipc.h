/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Keys and IPC across the sandbox's edge (bpf/ipc.bpf.c, BPF-LSM).
 *
 * Rule: a sandbox reaches a key, a SysV object (shared memory, semaphore
 * set, message queue) or a POSIX message queue only when a task of the
 * same sandbox created it. Ownership tables map the kernel object to the
 * sandbox root that created it (struct sandbox.root_id):
 *   key_owner  struct key *            set in key_alloc, gone in key_free
 *   ipc_owner  struct kern_ipc_perm *  set in {shm,sem,msg_queue}_alloc_security,
 *                                      gone in the *_free_security hooks
 *   mq_owner   struct dentry *         set in inode_create on an mqueue
 *                                      directory, gone in inode_unlink
 * Only objects created inside a sandbox get an entry; an allocation by an
 * outsider deletes whatever entry its address had, so a freed object's
 * address reused later never inherits an owner. No entry means
 * "outsiders'" (created by the host, or before the agent): refused.
 * A full table refuses the sandbox's creation (reason table_full).
 */
#ifndef STOCKADE_IPC_H
#define STOCKADE_IPC_H

#define KEY_OWNER_MAX	65536	/* keys created by all sandboxes together */
#define IPC_OWNER_MAX	65536	/* SysV objects created by sandboxes */
#define MQ_OWNER_MAX	65536	/* POSIX queues created by sandboxes */

/* ipc_owner's value: the creator and which kind of object it is. */
struct ipc_owner_val {
	__u64 root_id;
	__u32 op;		/* EV_OP_IPC_SHM, _SEM or _MSG */
	__u32 pad;
};

#endif /* STOCKADE_IPC_H */
