/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The code register (issue 15; README, "The code register"): the
 * categories of external code the operator approved, each with the
 * policies it may run under, the limits it needs, the environment (a
 * cgroup selector) that confines it, who approved it and when. A YAML
 * file, loaded by policy/parse.c with the policy loader's located errors;
 * `stockade register check` judges the agent's log against it
 * (agent/register.c), and `stockade check` validates one.
 */
#ifndef STOCKADE_REGISTER_H
#define STOCKADE_REGISTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.h"

#define REGISTER_MAX_ENTRIES	256

enum register_limit {
	REG_LIMIT_CPU = 1 << 0,
	REG_LIMIT_MEMORY = 1 << 1,
	REG_LIMIT_PIDS = 1 << 2,
	REG_LIMIT_RUNTIME = 1 << 3,
};

struct register_entry {
	char *category, *description, *environment, *approver;
	/* Policy names, or content hashes (16 hex digits, as records carry
	 * them); an item that is 16 hex digits is a hash. */
	char **policies;
	size_t n_policies;
	unsigned int limits;	/* enum register_limit: required */
	int64_t approved_s;	/* epoch seconds (a date: its 00:00 UTC) */
	int64_t expires_s;	/* 0: never */
	struct policy_pos pos;
};

struct code_register {
	char *file;
	struct register_entry *v;
	size_t n;
};

/* Does the YAML text look like a register (a top-level `entries:` key)?
 * For `stockade check`, which takes policies and registers alike. */
bool register__sniff(const char *buf, size_t len);
int register__parse(const char *file, const char *buf, size_t len,
		    struct code_register **out, struct policy_diag *diag);
int register__load(const char *path, struct code_register **out,
		   struct policy_diag *diag);
void register__free(struct code_register *r);
/* The entry of category, or NULL. */
const struct register_entry *register__find(const struct code_register *r,
					    const char *category);

#endif
