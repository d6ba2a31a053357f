/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The setup pass (zero window, README "Zero window"): a container
 * runtime's own setup in a new cgroup, before the payload's first
 * instruction.
 *
 * runc moves its init process into the container's cgroup first, then
 * prepares the container from the host's side (a cloned runc binary under
 * /run/runc/<id>, the host's / opened, mounts), then execs the payload in
 * the container's mount namespace. A policy describes the payload's
 * world, so with the cgroup confined from its creation the runtime's own
 * steps would be refused. A task that a process outside every sandbox
 * moved into such a cgroup is therefore "in setup": the BPF-LSM programs
 * let it through until it execs in another mount namespace than its
 * mover's (the payload), or execs a file that is not memory-backed in any
 * namespace (a runtime re-executing its own memfd copy stays in setup),
 * or its deadline passes; from then on it is judged. The cgroup socket
 * programs give no pass: they judge it from the start.
 *
 * Who gets it, decided in bpf/setup.bpf.c when the kernel moves a task:
 *   - the mover is outside every sandbox (and not pending), and another
 *     process than the one moved (a process joining a cgroup itself is
 *     the sandbox's first process: judged from its first syscall);
 *   - the moved task was never judged in a sandbox, nor is it a child of
 *     one that was (SETUP_F_SANDBOXED, set by the first judgement and
 *     inherited at fork): a task already inside at confinement, or its
 *     children, never get it;
 *   - the cgroup has a grant (`setup_grants`, written by the agent): it
 *     was created while the agent ran and its policy's setup.pass allows
 *     it (SETUP_GRANT_SELF), or it is new below a cgroup whose grant has
 *     SETUP_GRANT_CHILDREN (a watched directory, a confined cgroup).
 * A task in setup is out of reach of sandboxed tasks: their ptrace and
 * signals to it are refused (reason in_setup). Its children inherit the
 * pass with the same deadline; each ends its own by its exec.
 */
#ifndef STOCKADE_SETUP_H
#define STOCKADE_SETUP_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Task storage `setup_tasks`. */
struct setup_state {
	__u64 deadline_ns;	/* bpf_ktime_get_boot_ns(); 0: not in setup */
	__u64 begin_ns;
	__u64 cgroup_id;	/* the cgroup it was moved into */
	__u32 mntns;		/* the mover's mount namespace (inode number) */
	__u32 flags;		/* SETUP_F_* */
	/* 1 + the task's self_exec_id during an exec of the runtime's own
	 * clone: the ELF interpreter that exec opens next is part of it.
	 * Never trusted for an exec's binary (bprm_check): a failed clone
	 * exec leaves it set for the next exec at the same id. */
	__u64 clone_xid;
};
#define SETUP_F_SANDBOXED	(1u << 0)	/* judged in a sandbox: never a pass */

/* Task storage `setup_clones`: an exec of a runtime's clone (a copy with
 * no path: "memory-backed" above) that a task made while it had no pass,
 * noted at its bprm_check; the task's next exec of anything else drops
 * the note. runc moves its init while the init re-executes its clone: a
 * pass that begins after that exec's bprm_check and before it opens its
 * ELF interpreter learns here that this open belongs to the clone's exec
 * (struct setup_state's clone_xid is for an exec made in a pass). The
 * note keeps the pass at one exec open that is not an exec's binary for
 * certain (bprm_check's), then is spent. */
struct setup_clone {
	__u64 xid1;		/* 1 + the task's self_exec_id in that exec */
	__u32 mntns;		/* the namespace it ran in (inode number) */
	__u32 pad;
};

/* Hash `setup_grants`: cgroup id -> grant. */
struct setup_grant {
	__u32 deadline_ms;
	__u32 flags;		/* SETUP_GRANT_* */
};
#define SETUP_GRANT_SELF	(1u << 0)	/* moves into this cgroup */
#define SETUP_GRANT_CHILDREN	(1u << 1)	/* into a new, unseen child */
#define SETUP_GRANTS_MAX	16384		/* SANDBOX_MAX_CGROUPS */

#endif /* STOCKADE_SETUP_H */
