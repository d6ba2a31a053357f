/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Compile a policy's `files` section, the built-in protected paths and
 * `network.unix_allow` into the kernel's `file_rules` LPM trie and
 * `unix_allow` hash (include/file.h).
 *
 * Every boundary any rule draws (each read, write, deny, protected and
 * override path, and "/") becomes one trie entry, and each entry carries
 * the verdict its covering prefixes imply, so the longest match alone
 * decides:
 *   read   allowed when `files.read` is absent, or the path is under a
 *          read or a write prefix;
 *   write  allowed under a write prefix;
 *   deny   under a deny prefix: no access at all, whatever read/write say;
 *   protected  under a built-in protected path, unless the deepest
 *          protected-or-override prefix covering it is an override.
 */
#ifndef STOCKADE_FILE_RULES_H
#define STOCKADE_FILE_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "file.h"
#include "policy.h"

struct file_entry {
	struct file_key key;
	struct file_rule val;
};

struct file_compiled {
	struct file_entry *v;
	size_t n;
	struct unix_key *unix_keys;
	size_t n_unix;
};

/*
 * homes: the home directories whose policy_protected_home entries are
 * protected ("/root", "/home/alice", ...). Returns 0, or -ENOMEM /
 * -ENAMETOOLONG with a message in err.
 */
int file_rules__compile(const struct policy *p, __u32 policy_id,
			const char *const *homes, size_t n_homes,
			struct file_compiled *out, char *err, size_t errlen);
/*
 * The same for one selected cgroup of a policy with per-execution folders
 * (cg: its path below the cgroup2 mount, "/a/job-7"): each templated
 * read or write path expanded for it. cg NULL: the base scope, templated
 * paths left out (include/file.h). -ENAMETOOLONG when an expansion is
 * longer than FILE_CG_PREFIX_MAX.
 */
int file_rules__compile_cg(const struct policy *p, __u32 policy_id,
			   const char *cg, const char *const *homes,
			   size_t n_homes, struct file_compiled *out, char *err,
			   size_t errlen);
/* A compiled entry's key as it is stored for cgroup cg in file_cg_rules;
 * -ENAMETOOLONG when its prefix does not fit FILE_CG_KEY_PATH. */
int file_rules__cg_key(const struct file_key *k, uint64_t cg,
		       struct file_cg_key *out);
void file_compiled__free(struct file_compiled *c);

/* Reference lookup, as the trie does it: the flags of the longest entry
 * that is a prefix of path + "/"; -1 when none. */
int file_rules__lookup(const struct file_compiled *c, __u32 policy_id,
		       const char *path);

/* The home directories of this machine: /root, /home/x, and every
 * absolute home in the password database. Caller frees each and v. */
int file_rules__homes(char ***v, size_t *n);

#endif
