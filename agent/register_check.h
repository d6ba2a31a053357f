/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * `stockade register check` (agent/ctl_register.c), its pure half: the
 * agent's log judged against the code register (policy/register.h). Every
 * `exec` and `attach` record of the period must belong to a registered,
 * unexpired category, run under a policy (name or hash) its entry names,
 * with the limits it requires, in its environment; and the period's
 * sequence numbers must have no gap that `lost` records do not explain.
 * Unit-tested (tests/unit/test_register.c).
 */
#ifndef STOCKADE_REGISTER_CHECK_H
#define STOCKADE_REGISTER_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "register.h"

struct reg_problem {
	char msg[384];		/* without the seq: equal ones are merged */
	uint64_t first_seq;
	int64_t first_ts;
	uint64_t count;
};

struct reg_coverage {
	char category[128];
	uint64_t execs, attaches;
	char **cgroups;		/* distinct sandboxes seen */
	size_t n_cgroups;
	int64_t first_ts, last_ts;
};

struct reg_report {
	struct reg_problem *p;
	size_t n_p;
	struct reg_coverage *c;
	size_t n_c;
	uint64_t records, execs, attaches;
	uint64_t seq_min, seq_max, seq_missing, seq_accounted;
	int err;		/* -ENOMEM */
};

/* Judge log (the agent's --log, JSON lines) over [since, until] (ns since
 * the epoch; 0: open) against r. 0, or -ENOMEM. */
int register__check(const struct code_register *r, FILE *log, int64_t since,
		    int64_t until, struct reg_report *out);
void reg_report__free(struct reg_report *rep);
/* Text (for people) or JSON (one object), true when it passes. */
bool reg_report__print(FILE *f, const struct reg_report *rep, bool json);

#endif
