// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The one table of BPF-LSM programs: hook, guarantee, argument shape
 * (agent/lsm.h). Pure data and lookups, no libbpf: the unit tests link it
 * (tests/unit/test_lsm.c).
 *
 * A program in bpf/ with no row here still loads, is still probed for its
 * hook, and when missing is reported under its hook's name: a row only
 * names the guarantee better and checks the prototype. So a new program
 * should get a row, and forgetting one never drops a guarantee unnamed.
 */
#include <stdbool.h>
#include <string.h>
#include "lsm.h"

#define FILE_SCOPE	"file_scope", "protected_paths"

static const struct lsm_hook lsm_table[] = {
	/* bpf/file.bpf.c: file scope; the built-in credential paths are
	 * judged by the same programs. */
	{ "stk_file_open", "file_open", FILE_SCOPE, false, { "file" } },
	/* Bookkeeping of file_open's decision cache (include/file.h): gives
	 * a freed inode's entry back to the cache's bound. Without it no
	 * entry is ever given back, and once FILE_DCACHE_MAX were made the
	 * cache stores nothing more: slower, never looser, so marked `newer`
	 * as stk_key_free is: missing, no guarantee is lost. */
	{ "stk_inode_free", "inode_free_security", FILE_SCOPE, true, { "inode" } },
	{ "stk_file_receive", "file_receive", "fd_receive", NULL, false, { "file" } },
	{ "stk_path_mknod", "path_mknod", FILE_SCOPE, false, { "path", "dentry" } },
	{ "stk_path_mkdir", "path_mkdir", FILE_SCOPE, false, { "path", "dentry" } },
	{ "stk_path_rmdir", "path_rmdir", FILE_SCOPE, false, { "path", "dentry" } },
	{ "stk_path_unlink", "path_unlink", FILE_SCOPE, false, { "path", "dentry" } },
	{ "stk_path_symlink", "path_symlink", FILE_SCOPE, false, { "path", "dentry" } },
	{ "stk_path_truncate", "path_truncate", FILE_SCOPE, false, { "path" } },
	{ "stk_path_chmod", "path_chmod", FILE_SCOPE, false, { "path" } },
	{ "stk_path_chown", "path_chown", FILE_SCOPE, false, { "path" } },
	/* The first argument is a user_namespace on 6.1, an idmap from 6.3
	 * on: not read, so either fits. */
	{ "stk_inode_setxattr", "inode_setxattr", FILE_SCOPE, false, { "", "dentry" } },
	{ "stk_inode_removexattr", "inode_removexattr", FILE_SCOPE, false, { "", "dentry" } },
	{ "stk_path_rename", "path_rename", FILE_SCOPE, false,
	  { "path", "dentry", "path", "dentry" } },
	{ "stk_path_link", "path_link", FILE_SCOPE, false, { "dentry", "path", "dentry" } },
	/* 6.2: ftruncate() and open(O_TRUNC) call
	 * file_truncate instead of path_truncate; before, path_truncate
	 * sees them. */
	{ "stk_file_truncate", "file_truncate", FILE_SCOPE, true, { "file" } },
	/* 6.2: POSIX ACLs are set through vfs_set_acl()
	 * and these hooks, no longer through setxattr; before, the
	 * setxattr hooks see them. */
	{ "stk_inode_set_acl", "inode_set_acl", FILE_SCOPE, true, { "", "dentry" } },
	/* Not stk_inode_remove_acl: the kernel keeps 15 characters of a
	 * program's name, and stk_inode_removexattr has the same 15. */
	{ "stk_inode_rm_acl", "inode_remove_acl", FILE_SCOPE, true, { "", "dentry" } },

	/* bpf/file.bpf.c: what may execute. Exec itself is judged in
	 * file_open (FMODE_EXEC); these two judge PROT_EXEC mappings: a
	 * file mapped executable (mmap, shmat SHM_EXEC), a mapping made
	 * executable (mprotect), and anonymous memory under anon_exec.
	 * Same prototypes on 6.1, 6.12 and 6.18 (the trailing arguments
	 * are unsigned longs). */
	{ "stk_mmap_file", "mmap_file", "exec_scope", NULL, false,
	  { "file", LSM_ARG_SCALAR, LSM_ARG_SCALAR, LSM_ARG_SCALAR } },
	{ "stk_file_mprotect", "file_mprotect", "exec_scope", NULL, false,
	  { "vm_area_struct", LSM_ARG_SCALAR, LSM_ARG_SCALAR } },
	/* A setup pass that began during an exec learns there whether the
	 * exec is a runtime's own clone, and a payload binary no open judged
	 * is judged there (bpf/file.bpf.c); without it such a runtime's
	 * start is refused. */
	{ "stk_bprm_check", "bprm_check_security", "exec_scope", NULL, false,
	  { "linux_binprm" } },
	/* Not LSM hooks (personality(2) reaches none; task_prctl is
	 * prctl's only): fentry programs on the syscall's entry, which kill
	 * a sandbox setting READ_IMPLIES_EXEC under anon_exec: deny. Probed
	 * like a hook, by the function's BTF (agent/lsm.h); missing, only
	 * this guarantee is lost. The ia32 entry exists only with
	 * CONFIG_IA32_EMULATION: without it nothing reaches it (`newer`). */
	{ "stk_persona", LSM_FENTRY "__x64_sys_personality", "anon_exec_personality",
	  NULL, false, { "pt_regs" } },
	{ "stk_persona32", LSM_FENTRY "__ia32_sys_personality", "anon_exec_personality",
	  NULL, true, { "pt_regs" } },

	/* bpf/lsm.bpf.c: the sandbox's edge. */
	{ "stk_bpf", "bpf", "bpf", NULL, false, { "", "bpf_attr" } },
	{ "stk_ptrace", "ptrace_access_check", "ptrace", NULL, false, { "task_struct" } },
	{ "stk_ptrace_traceme", "ptrace_traceme", "ptrace", NULL, false, { "task_struct" } },
	{ "stk_task_kill", "task_kill", "signals", NULL, false, { "task_struct" } },
	{ "stk_file_set_fowner", "file_set_fowner", "signals", NULL, false, { "file" } },
	/* Writes a sandbox's owner entry before fcntl() sets the owner, and
	 * refuses the call when the table is full (bpf/lsm.bpf.c, fowner). */
	{ "stk_file_fcntl", "file_fcntl", "signals", NULL, false, { "file" } },
	/* Gives a closed file's entry back. Without it the table never
	 * empties, and once full every sandbox's F_SETOWN is refused:
	 * stricter, never looser, so marked `newer` as stk_inode_free is. */
	{ "stk_file_free", "file_free_security", "signals", NULL, true, { "file" } },
	{ "stk_file_send_sigiotask", "file_send_sigiotask", "signals", NULL, false,
	  { "task_struct", "fown_struct" } },
	{ "stk_sb_mount", "sb_mount", "mount", NULL, false, { "", "path" } },
	{ "stk_sb_umount", "sb_umount", "mount", NULL, false, { "vfsmount" } },
	{ "stk_move_mount", "move_mount", "mount", NULL, false, { "path", "path" } },
	{ "stk_sb_pivotroot", "sb_pivotroot", "mount", NULL, false, { "path", "path" } },
	{ "stk_path_chroot", "path_chroot", "mount", NULL, false, { "path" } },
	{ "stk_task_alloc", "task_alloc", "cgroup_escape", NULL, false, { "task_struct" } },
	{ "stk_userns_create", "userns_create", "user_namespaces", NULL, false, { "cred" } },
	{ "stk_unix_stream_connect", "unix_stream_connect", "unix_sockets", NULL, false,
	  { "sock", "sock", "sock" } },
	{ "stk_unix_may_send", "unix_may_send", "unix_sockets", NULL, false,
	  { "socket", "socket" } },
	{ "stk_socket_create", "socket_create", "packet_sockets", NULL, false, { 0 } },
	{ "stk_socket_connect", "socket_connect", "socket_owner", NULL, false,
	  { "socket", "sockaddr" } },
	{ "stk_socket_sendmsg", "socket_sendmsg", "socket_owner", NULL, false,
	  { "socket", "msghdr" } },
	{ "stk_task_prlimit", "task_prlimit", "process_control", NULL, false,
	  { "cred", "cred" } },
	{ "stk_task_setnice", "task_setnice", "process_control", NULL, false, { "task_struct" } },
	{ "stk_task_setscheduler", "task_setscheduler", "process_control", NULL, false,
	  { "task_struct" } },
	{ "stk_task_setioprio", "task_setioprio", "process_control", NULL, false,
	  { "task_struct" } },
	{ "stk_file_ioctl", "file_ioctl", "ioctls", NULL, false, { "file" } },
	/* 6.7, and Debian's 6.1 (stable backport): compat_sys_ioctl() calls
	 * this one instead of file_ioctl, so a 32-bit ioctl would slip past
	 * stk_file_ioctl; without it, file_ioctl sees compat ioctls too. */
	{ "stk_file_ioctl_compat", "file_ioctl_compat", "ioctls", NULL, true, { "file" } },

	/* bpf/file.bpf.c: times and other attributes (utimensat). The hook
	 * gained a leading struct mnt_idmap * in 6.3: one program per
	 * prototype, and the one that does not fit is left out. */
	{ "stk_inode_setattr", "inode_setattr", "setattr", NULL, false,
	  { "", "dentry", "iattr" } },
	{ "stk_inode_setattr_61", "inode_setattr", "setattr", NULL, false,
	  { "dentry", "iattr" } },

	/* bpf/ipc.bpf.c: keys, SysV IPC and POSIX message queues across the
	 * sandbox's edge. */
	{ "stk_key_alloc", "key_alloc", "keys", NULL, false, { "key", "cred" } },
	/* Table hygiene only: later kernels (6.18 has none) free the key's
	 * LSM state themselves and dropped the hook. Without it, an entry
	 * outlives its key until the address is reused, and key_alloc judges
	 * every new key at a reused address afresh; a table full of stale
	 * entries refuses the sandbox's new keys (table_full), never an
	 * outsider's. Marked `newer` for that reason: missing, nothing is
	 * lost. */
	{ "stk_key_free", "key_free", "keys", NULL, true, { "key" } },
	{ "stk_key_permission", "key_permission", "keys", NULL, false, { "", "cred" } },
	{ "stk_shm_alloc", "shm_alloc_security", "ipc", NULL, false, { "kern_ipc_perm" } },
	{ "stk_shm_free", "shm_free_security", "ipc", NULL, false, { "kern_ipc_perm" } },
	{ "stk_sem_alloc", "sem_alloc_security", "ipc", NULL, false, { "kern_ipc_perm" } },
	{ "stk_sem_free", "sem_free_security", "ipc", NULL, false, { "kern_ipc_perm" } },
	{ "stk_msg_queue_alloc", "msg_queue_alloc_security", "ipc", NULL, false,
	  { "kern_ipc_perm" } },
	{ "stk_msg_queue_free", "msg_queue_free_security", "ipc", NULL, false,
	  { "kern_ipc_perm" } },
	{ "stk_ipc_permission", "ipc_permission", "ipc", NULL, false, { "kern_ipc_perm" } },
	{ "stk_shm_shmctl", "shm_shmctl", "ipc", NULL, false, { "kern_ipc_perm" } },
	{ "stk_sem_semctl", "sem_semctl", "ipc", NULL, false, { "kern_ipc_perm" } },
	{ "stk_msg_queue_msgctl", "msg_queue_msgctl", "ipc", NULL, false, { "kern_ipc_perm" } },
	{ "stk_inode_create", "inode_create", "ipc", NULL, false, { "inode", "dentry" } },
	{ "stk_inode_unlink", "inode_unlink", "ipc", NULL, false, { "inode", "dentry" } },

	/* bpf/netctl.bpf.c: the network's control plane. Without
	 * socket_listen, bind4/6 still judge every bind that names a port;
	 * only a listen on a port the kernel picks goes unjudged. */
	{ "stk_netlink_send", "netlink_send", "netlink", NULL, false, { "sock", "sk_buff" } },
	{ "stk_socket_listen", "socket_listen", "listen_ephemeral", NULL, false, { "socket" } },
	{ "stk_socket_setsockopt", "socket_setsockopt", "socket_options", NULL, false,
	  { "socket" } },

	/* bpf/priv.bpf.c: what root's capabilities reach beyond the
	 * sandbox. */
	{ "stk_capable", "capable", "capabilities", NULL, false, { "cred", "user_namespace" } },
	/* The table of the sandbox's credentials (bpf/priv.bpf.c): without
	 * these two, a check under an io_uring personality's credentials,
	 * or a queued request's, would pass as the kernel's own override. */
	{ "stk_uring_creds", "uring_override_creds", "capabilities", NULL, false, { "cred" } },
	{ "stk_cred_prepare", "cred_prepare", "capabilities", NULL, false, { "cred", "cred" } },
	/* Gives an entry back. Without it the table never empties, and once
	 * full a sandbox's forks are refused: stricter, never looser. */
	{ "stk_cred_free", "cred_free", "capabilities", NULL, true, { "cred" } },
	{ "stk_kernel_load_data", "kernel_load_data", "kernel_code", NULL, false, { 0 } },
	{ "stk_kernel_read_file", "kernel_read_file", "kernel_code", NULL, false, { "file" } },
	{ "stk_kernel_module_request", "kernel_module_request", "kernel_code", NULL, false,
	  { 0 } },
	{ "stk_locked_down", "locked_down", "host_state", NULL, false, { 0 } },
	{ "stk_settime", "settime", "host_state", NULL, false, { "timespec64", "timezone" } },
	{ "stk_syslog", "syslog", "host_state", NULL, false, { 0 } },
	{ "stk_perf_open", "perf_event_open", "perf", NULL, false, { "perf_event_attr" } },
	/* 6.18 dropped the attr argument: (int type) only; its twin. */
	{ "stk_perf_open_t", "perf_event_open", "perf", NULL, false, { LSM_ARG_SCALAR } },
	{ "stk_perf_alloc", "perf_event_alloc", "perf", NULL, false, { "perf_event" } },
	{ "stk_path_notify", "path_notify", "notify_marks", NULL, false, { "path" } },
	/* userfaultfd's anonymous inode is the one point that tells it. */
	{ "stk_inode_init_security_anon", "inode_init_security_anon", "userfaultfd", NULL,
	  false, { "inode", "qstr", "inode" } },

	/* bpf/exec.bpf.c: exec and exit records. Tracepoints, not LSM hooks
	 * (hook: the tracepoint), loaded and pinned with the LSM programs:
	 * they need the same BPF trampolines (lsm__rides_along()). */
	{ "stk_exec", "sched_process_exec", "exec_records", NULL, false, { 0 } },
	{ "stk_exec_fork", "sched_process_fork", "exec_records", NULL, false, { 0 } },
	{ "stk_exec_exit", "sched_process_exit", "exec_records", NULL, false, { 0 } },
};

#define N_TABLE	(sizeof(lsm_table) / sizeof(lsm_table[0]))

bool lsm__rides_along(const char *prog)
{
	return !strcmp(prog, LSM_SETUP_PROG) || !strcmp(prog, "stk_exec") ||
	       !strcmp(prog, "stk_exec_fork") || !strcmp(prog, "stk_exec_exit");
}

const struct lsm_hook *lsm__row(size_t i)
{
	return i < N_TABLE ? &lsm_table[i] : NULL;
}

const struct lsm_hook *lsm__hook(const char *prog)
{
	size_t i;

	for (i = 0; prog && i < N_TABLE; i++)
		if (!strcmp(lsm_table[i].prog, prog))
			return &lsm_table[i];
	return NULL;
}

const char *lsm__guarantee(const char *prog, const char *hook)
{
	const struct lsm_hook *h = lsm__hook(prog);

	return h ? h->guarantee : hook;
}

/* A row's k-th name: its guarantee (0) or its second one (1). */
static const char *name_of(size_t row, int k)
{
	return k ? lsm_table[row].also : lsm_table[row].guarantee;
}

/* Is g named before the k-th name of row? Pure counting, no buffer: the
 * count stays right however short the caller's buffer is. */
static bool seen(size_t row, int k, const char *g)
{
	size_t i;
	int kk;

	for (i = 0; i <= row; i++)
		for (kk = 0; kk < 2 && (i < row || kk < k); kk++)
			if (name_of(i, kk) && !strcmp(name_of(i, kk), g))
				return true;
	return false;
}

size_t lsm__guarantees(const char **out, size_t max)
{
	const char *g;
	size_t i, n = 0;
	int k;

	for (i = 0; i < N_TABLE; i++) {
		for (k = 0; k < 2; k++) {
			g = name_of(i, k);
			if (!g || seen(i, k, g))
				continue;
			if (n < max)
				out[n] = g;
			n++;
		}
	}
	return n;
}
