/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The table of the cgroups the daemon confines (agent/sandbox_table.c):
 * each one's path, id, policy slot, sandbox root and the handles the
 * other rooms keep for it. No BPF: the rooms that attach links or write
 * maps keep their own state in the entries, this table only holds them,
 * finds them by id (with a one-entry cache, as records of one cgroup come
 * in bursts) and keeps them dense (a removal moves the last into its
 * place, so indexes are not stable across one). Unit-tested
 * (tests/unit/test_sandbox_table.c).
 */
#ifndef STOCKADE_SANDBOX_TABLE_H
#define STOCKADE_SANDBOX_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct container_info;

struct limits_cg;

/* The cgroup programs attached to each directly selected cgroup. */
#define SANDBOX_N_LINKS	8

struct sandbox_cg {
	char *path;		/* relative to the cgroup2 mount, "/a/b" */
	uint64_t id;
	uint32_t policy_id;	/* the id its slot resolves to; 0 = conflict */
	uint32_t slot;		/* what its sandbox entry holds (include/sandbox.h) */
	uint64_t root_id;	/* the directly selected cgroup it is under */
	bool direct;		/* selected itself (has links), or inherited */
	bool released;		/* a reload stopped confining it: forget it */
	int64_t pending_us;	/* creation to classification; -1: not pending */
	bool fresh;		/* created while this agent runs (agent/setup_agent.h) */
	int wd;			/* inotify on its directory (new children, and
				 * their removal), or -1 */
	int pwd;		/* a directly selected one's: on its parent
				 * (its removal), or -1 */
	unsigned int seen;	/* scan generation that last saw it */
	/* Its links' fds (-1: none); their pins keep them attached. Fds,
	 * not libbpf's struct bpf_link: that holds the pin path too. */
	int link_fd[SANDBOX_N_LINKS];
	struct limits_cg *lim;	/* limits, watches, run time: agent/limits.c */
	/* The policy id + 1 its processes' held fds were last checked
	 * under (agent/preexist.c); 0: not yet. */
	uint32_t held_checked;
	/* The policy id + 1 its own file scope (per-execution folders) was
	 * written under (agent/file_scope.c); 0: none. */
	uint32_t file_scope;
	bool file_scope_in;	/* ... and it is in the kernel (not refused) */
	/* Its container (its own cgroup's, or its nearest ancestor's), or
	 * NULL when no path form resolves it (agent/containers.c). */
	struct container_info *ctr;
};

struct sandbox_table {
	struct sandbox_cg *v;
	size_t n, cap;
	size_t last;		/* lookup cache: the index found last */
};

/* The entry of id, or NULL. */
struct sandbox_cg *sandbox_table__find(struct sandbox_table *t, uint64_t id);
/* A new, zeroed entry for rel and id (wd, pwd and link_fd -1, pending_us
 * -1), or NULL when memory ran out (nothing added). */
struct sandbox_cg *sandbox_table__add(struct sandbox_table *t, const char *rel,
				      uint64_t id);
/* Remove entry i (its path freed): the last one takes its place. */
void sandbox_table__remove(struct sandbox_table *t, size_t i);
/* Every entry's path, and the table. */
void sandbox_table__free(struct sandbox_table *t);

#endif
