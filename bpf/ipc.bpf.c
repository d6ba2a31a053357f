// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Keys, SysV IPC and POSIX message queues across the sandbox's edge
 * (include/ipc.h): a sandbox reaches only what its own tasks created, and
 * what it creates cannot be linked into outsiders' keyrings (that needs
 * WRITE on the outsider's keyring, which key_permission refuses).
 */
#include "ipc.bpf.h"

/* include/linux/key.h; #defines, so not in BTF. The same since 4.14. */
#define KEY_ALLOC_UID_KEYRING	0x0010

/* The sysvipc cmd values (include/uapi/linux/{ipc,shm,sem,msg}.h). */
#define IPC_RMID	0
#define IPC_SET		1
#define IPC_64		0x0100
#define SHM_LOCK	11
#define SHM_UNLOCK	12
#define SHM_STAT_ANY	15
#define SEM_STAT_ANY	20
#define MSG_STAT_ANY	13

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KEY_OWNER_MAX);
	__type(key, __u64);	/* struct key * */
	__type(value, __u64);	/* sandbox root that created it */
} key_owner SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, IPC_OWNER_MAX);
	__type(key, __u64);	/* struct kern_ipc_perm * */
	__type(value, struct ipc_owner_val);
} ipc_owner SEC(".maps");

static __always_inline bool prefix_eq(const char *s, const char *p, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (s[i] != p[i])
			return false;
	return true;
}

/*
 * Keyrings the kernel shares between every process of a uid or user
 * namespace, whoever asked first: the user and user-session keyrings
 * (KEY_ALLOC_UID_KEYRING) and the persistent keyrings with their register.
 * A sandbox that happens to be first must not become their owner, or it
 * could write into what the host reads later; they stay outsiders'.
 */
static __always_inline bool shared_keyring(struct key *key, unsigned long flags)
{
	char d[20] = {};

	if (flags & KEY_ALLOC_UID_KEYRING)
		return true;
	bpf_probe_read_kernel_str(d, sizeof(d), BPF_CORE_READ(key, description));
	return prefix_eq(d, "_persistent.", 12) ||
	       prefix_eq(d, ".persistent_register", 20);
}

/* request_key's numbers: x86_64 (and x32, with its bit), i386 (int $0x80
 * from any task; 287 is fallocate on x86_64, which makes no key). */
#define NR_REQUEST_KEY		249
#define NR_REQUEST_KEY_32	287
#define X32_SYSCALL_BIT		0x40000000L

/* The first bytes of a key's type name: the types (key_type_keyring among
 * them) are not in BTF, so a type is known by its name. */
static __always_inline void key_type_name(struct key *key, char name[8])
{
	bpf_probe_read_kernel_str(name, 8, BPF_CORE_READ(key, type, name));
}

static __always_inline bool is_keyring(struct key *key)
{
	char name[8] = {};

	key_type_name(key, name);
	return prefix_eq(name, "keyring", 8);
}

/* The key request_key(2) constructs: neither a keyring nor a type of the
 * kernel's own (a name that starts with a dot: .request_key_auth). */
static __always_inline bool constructed_key(struct key *key)
{
	char name[8] = {};

	key_type_name(key, name);
	return name[0] != '.' && !prefix_eq(name, "keyring", 8);
}

/* The serial is not given yet here (key_alloc_serial() runs after this
 * hook), so ownership is by address. */
SEC("lsm/key_alloc")
int BPF_PROG(stk_key_alloc, struct key *key, const struct cred *cred,
	     unsigned long flags)
{
	struct policy_conf *conf;
	struct sandbox *sb, sb_snap;
	__u64 k = (__u64)key, cgid;

	conf = lsm_current(&sb, &cgid, &sb_snap);
	/* request_key(2) of a key that does not exist makes it here, then
	 * has the kernel run /sbin/request-key, outside every sandbox, to
	 * instantiate it: with keyutils' stock configuration a DNS query
	 * for any name the sandbox chose (dns_resolver keys), a way out for
	 * one that may reach no host. Refused: the key to construct, not a
	 * keyring the call makes for its destination, nor the authorisation
	 * key made next (.request_key_auth: reached only in audit mode, one
	 * record for the call). */
	if (conf && constructed_key(key) &&
	    ((syscall_nr() & ~X32_SYSCALL_BIT) == NR_REQUEST_KEY ||
	     syscall_nr() == NR_REQUEST_KEY_32))
		return lsm_deny(sb, conf, cgid, EV_KIND_KEY, EV_OP_KEY_ALLOC,
				EV_REASON_ALWAYS_DENIED,
				(const char *)BPF_CORE_READ(key, description), NULL,
				0, 0);
	if (!conf || shared_keyring(key, flags)) {
		bpf_map_delete_elem(&key_owner, &k);	/* a reused address */
		return 0;
	}
	if (!bpf_map_update_elem(&key_owner, &k, &sb->root_id, BPF_ANY))
		return 0;
	/* Fail closed: a key with no entry would be refused to its creator
	 * anyway; refuse it now, where the record can say why. */
	return lsm_deny(sb, conf, cgid, EV_KIND_KEY, EV_OP_KEY_ALLOC,
			EV_REASON_TABLE_FULL,
			(const char *)BPF_CORE_READ(key, description), NULL, 0, 0);
}

SEC("lsm/key_free")
int BPF_PROG(stk_key_free, struct key *key)
{
	__u64 k = (__u64)key;

	bpf_map_delete_elem(&key_owner, &k);
	return 0;
}

/* enum key_need_perm -> the record's op; 0 (no op field) for one this
 * build does not know, which is refused all the same. */
static __always_inline __u8 key_op(unsigned long perm)
{
	if (perm == bpf_core_enum_value(enum key_need_perm, KEY_NEED_VIEW))
		return EV_OP_KEY_VIEW;
	if (perm == bpf_core_enum_value(enum key_need_perm, KEY_NEED_READ))
		return EV_OP_KEY_READ;
	if (perm == bpf_core_enum_value(enum key_need_perm, KEY_NEED_WRITE))
		return EV_OP_KEY_WRITE;
	if (perm == bpf_core_enum_value(enum key_need_perm, KEY_NEED_SEARCH))
		return EV_OP_KEY_SEARCH;
	if (perm == bpf_core_enum_value(enum key_need_perm, KEY_NEED_LINK))
		return EV_OP_KEY_LINK;
	if (perm == bpf_core_enum_value(enum key_need_perm, KEY_NEED_SETATTR))
		return EV_OP_KEY_SETATTR;
	if (perm == bpf_core_enum_value(enum key_need_perm, KEY_NEED_UNLINK))
		return EV_OP_KEY_UNLINK;
	if (perm == bpf_core_enum_value(enum key_need_perm, KEY_SYSADMIN_OVERRIDE))
		return EV_OP_KEY_SYSADMIN;
	return 0;
}

/*
 * Every check on a key the sandbox did not create is refused: view, read,
 * write (also of a keyring: linking into it, add_key, clear), search of a
 * key, link, setattr, unlink and the overrides. Two pass:
 *   KEY_DEFER_PERM_CHECK: the caller checks the real permission next
 *   (keyctl_read_key() asks READ right after);
 *   SEARCH of an outsider's keyring: the kernel's own lookups descend
 *   through keyrings the task did not make (the uid register .user_reg
 *   to reach @u, an inherited session keyring in the possession check
 *   before every keyctl on a serial). Descending shows nothing by itself:
 *   each key a search finds is asked SEARCH in turn, and refused.
 * Judged by the current task, not by the cred passed: the kernel's
 * request-key upcall runs outside every sandbox with the requester's cred.
 */
SEC("lsm/key_permission")
int stk_key_permission(unsigned long long *ctx)
{
	unsigned int need_perm = (unsigned int)ctx[2];
	struct key *key;
	__u64 k = 0, *owner;

	/* key_ref_t points to a struct the kernel never defines (its low
	 * bit says "possessed"), so the verifier refuses a plain read of
	 * this argument from ctx; bpf_get_func_arg() reads it as a number. */
	bpf_get_func_arg(ctx, 0, &k);
	k &= ~1ULL;
	key = (struct key *)k;
	if (need_perm == bpf_core_enum_value(enum key_need_perm, KEY_DEFER_PERM_CHECK))
		return 0;
	{
		struct policy_conf *conf;
		struct sandbox *sb, sb_snap;
		__u64 cgid;

		conf = lsm_current(&sb, &cgid, &sb_snap);
		if (!conf)
			return 0;
		owner = bpf_map_lookup_elem(&key_owner, &k);
		if (owner && *owner == sb->root_id)
			return 0;
		if (need_perm == bpf_core_enum_value(enum key_need_perm, KEY_NEED_SEARCH) &&
		    is_keyring(key))
			return 0;
		return lsm_deny(sb, conf, cgid, EV_KIND_KEY, key_op(need_perm),
				EV_REASON_OUTSIDE_SANDBOX,
				(const char *)BPF_CORE_READ(key, description), NULL,
				0, BPF_CORE_READ(key, serial));
	}
}

/* ---- SysV IPC ---- */

/* x86_64 syscall numbers: the kind of an object with no entry (made
 * before the agent, or by an outsider) comes from the syscall asking. */
static __always_inline __u8 ipc_op_of_syscall(void)
{
	struct pt_regs *regs = (void *)bpf_task_pt_regs(bpf_get_current_task_btf());
	long nr = BPF_CORE_READ(regs, orig_ax);

	switch (nr) {
	case 29: case 30: case 31: case 67:	/* shmget shmat shmctl shmdt */
		return EV_OP_IPC_SHM;
	case 64: case 65: case 66: case 220:	/* semget semop semctl semtimedop */
		return EV_OP_IPC_SEM;
	case 68: case 69: case 70: case 71:	/* msgget msgsnd msgrcv msgctl */
		return EV_OP_IPC_MSG;
	}
	return 0;
}

static __always_inline int ipc_alloc(struct kern_ipc_perm *perm, __u8 op)
{
	struct ipc_owner_val v = { .op = op };
	struct policy_conf *conf;
	struct sandbox *sb, sb_snap;
	__u64 k = (__u64)perm, cgid;

	conf = lsm_current(&sb, &cgid, &sb_snap);
	if (!conf) {
		bpf_map_delete_elem(&ipc_owner, &k);	/* a reused address */
		return 0;
	}
	v.root_id = sb->root_id;
	if (!bpf_map_update_elem(&ipc_owner, &k, &v, BPF_ANY))
		return 0;
	return lsm_deny(sb, conf, cgid, EV_KIND_IPC, op, EV_REASON_TABLE_FULL,
			NULL, NULL, 0, 0);
}

static __always_inline int ipc_free(struct kern_ipc_perm *perm)
{
	__u64 k = (__u64)perm;

	bpf_map_delete_elem(&ipc_owner, &k);
	return 0;
}

static __always_inline int ipc_judge(struct kern_ipc_perm *perm)
{
	struct ipc_owner_val *v;
	struct policy_conf *conf;
	struct sandbox *sb, sb_snap;
	__u64 k = (__u64)perm, cgid;

	conf = lsm_current(&sb, &cgid, &sb_snap);
	if (!conf)
		return 0;
	v = bpf_map_lookup_elem(&ipc_owner, &k);
	if (v && v->root_id == sb->root_id)
		return 0;
	return lsm_deny(sb, conf, cgid, EV_KIND_IPC,
			v ? v->op : ipc_op_of_syscall(), EV_REASON_OUTSIDE_SANDBOX,
			NULL, NULL, 0, BPF_CORE_READ(perm, id));
}

#define IPC_ALLOC_HOOKS(kind, op)					\
SEC("lsm/" #kind "_alloc_security")					\
int BPF_PROG(stk_##kind##_alloc, struct kern_ipc_perm *perm)		\
{									\
	return ipc_alloc(perm, op);					\
}									\
									\
SEC("lsm/" #kind "_free_security")					\
int BPF_PROG(stk_##kind##_free, struct kern_ipc_perm *perm)		\
{									\
	return ipc_free(perm);						\
}

IPC_ALLOC_HOOKS(shm, EV_OP_IPC_SHM)
IPC_ALLOC_HOOKS(sem, EV_OP_IPC_SEM)
IPC_ALLOC_HOOKS(msg_queue, EV_OP_IPC_MSG)

/*
 * ipcperms() runs security_ipc_permission() for shmat, semop, semtimedop,
 * msgsnd, msgrcv, the *get of an existing key (before *_associate), and
 * the ctl commands that read or change the values (IPC_STAT, *_STAT,
 * GETVAL.., SETVAL..). So this one hook judges all of those, and the
 * associate/shmat/semop/msgsnd/msgrcv hooks that follow it are left
 * alone: one syscall, one record, in audit mode too.
 */
SEC("lsm/ipc_permission")
int BPF_PROG(stk_ipc_permission, struct kern_ipc_perm *ipcp, short flag)
{
	return ipc_judge(ipcp);
}

/*
 * The ctl commands that skip ipcperms(): IPC_RMID and IPC_SET (owner or
 * CAP_SYS_ADMIN checks only), SHM_LOCK/SHM_UNLOCK, and the *_STAT_ANY
 * reads. The rest were judged in ipc_permission; the *_INFO commands have
 * no object (NULL perm).
 */
static __always_inline int ipc_ctl(struct kern_ipc_perm *perm, int cmd,
				   int stat_any, bool shm)
{
	cmd &= ~IPC_64;
	if (!perm)
		return 0;
	if (cmd != IPC_RMID && cmd != IPC_SET && cmd != stat_any &&
	    !(shm && (cmd == SHM_LOCK || cmd == SHM_UNLOCK)))
		return 0;
	return ipc_judge(perm);
}

SEC("lsm/shm_shmctl")
int BPF_PROG(stk_shm_shmctl, struct kern_ipc_perm *perm, int cmd)
{
	return ipc_ctl(perm, cmd, SHM_STAT_ANY, true);
}

SEC("lsm/sem_semctl")
int BPF_PROG(stk_sem_semctl, struct kern_ipc_perm *perm, int cmd)
{
	return ipc_ctl(perm, cmd, SEM_STAT_ANY, false);
}

SEC("lsm/msg_queue_msgctl")
int BPF_PROG(stk_msg_queue_msgctl, struct kern_ipc_perm *perm, int cmd)
{
	return ipc_ctl(perm, cmd, MSG_STAT_ANY, false);
}

/* ---- POSIX message queues ---- */

/*
 * mq_open(O_CREAT) and open(O_CREAT) under a mounted mqueue fs both reach
 * inode_create (vfs_mkobj(), vfs_create()), with the queue's dentry; it is
 * pinned (mqueue_create_attr()) until unlinked. inode_create runs on every
 * file creation of the host: the magic test comes first.
 */
SEC("lsm/inode_create")
int BPF_PROG(stk_inode_create, struct inode *dir, struct dentry *dentry,
	     umode_t mode)
{
	struct policy_conf *conf;
	struct sandbox *sb, sb_snap;
	__u64 k = (__u64)dentry, cgid;

	if (!is_mqueue_inode(dir))
		return 0;
	conf = lsm_current(&sb, &cgid, &sb_snap);
	if (!conf) {
		bpf_map_delete_elem(&mq_owner, &k);	/* a reused address */
		return 0;
	}
	if (!bpf_map_update_elem(&mq_owner, &k, &sb->root_id, BPF_ANY))
		return 0;
	return lsm_deny(sb, conf, cgid, EV_KIND_IPC, EV_OP_IPC_MQUEUE,
			EV_REASON_TABLE_FULL,
			(const char *)BPF_CORE_READ(dentry, d_name.name), NULL, 0, 0);
}

/* mq_unlink() calls vfs_unlink() directly: no path_unlink, so only this
 * hook sees a sandbox removing a host queue. */
SEC("lsm/inode_unlink")
int BPF_PROG(stk_inode_unlink, struct inode *dir, struct dentry *dentry)
{
	struct policy_conf *conf;
	struct sandbox *sb, sb_snap;
	__u64 k = (__u64)dentry, cgid;
	int ret;

	/* Anyone's removal of one of a file's names while it has another:
	 * that name's dentry may then take the memory of the dentry a
	 * cached file decision holds (include/file.h). */
	if (dentry->d_inode && dentry->d_inode->i_nlink > 1)
		file_gen_bump();
	if (!is_mqueue_inode(dir))
		return 0;
	conf = lsm_current(&sb, &cgid, &sb_snap);
	if (conf) {
		ret = mq_judge(sb, conf, cgid, dentry);
		if (ret)
			return ret;
	}
	bpf_map_delete_elem(&mq_owner, &k);
	return 0;
}
