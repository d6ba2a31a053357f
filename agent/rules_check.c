// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The compile check of a policy set (agent/rules_check.h). */
#include <stdlib.h>
#include <string.h>

#include "file_rules.h"
#include "manifest.h"
#include "net_rules.h"
#include "rules_check.h"

int rules__check_set(const struct policy_set *set, struct policy_diag *diag)
{
	struct net_compiled c;
	struct file_compiled fc;
	char msg[POLICY_DIAG_MAX], **homes = NULL;
	size_t i, n_homes = 0;
	int err, ret = 0;

	err = file_rules__homes(&homes, &n_homes);
	if (err)
		return err;
	for (i = 0; i < set->n; i++) {
		memset(&c, 0, sizeof(c));
		memset(&fc, 0, sizeof(fc));
		err = net_rules__compile(set->v[i], 1, &c, msg, sizeof(msg));
		if (err) {
			policy_diag__add(diag, "%s", msg);
			ret = err;
		} else {
			net_compiled__free(&c);
		}
		err = file_rules__compile(set->v[i], 1, (const char *const *)homes, n_homes,
					  &fc, msg, sizeof(msg));
		if (err) {
			policy_diag__add(diag, "%s: %s", set->v[i]->file, msg);
			ret = err;
		} else {
			file_compiled__free(&fc);
		}
	}
	for (i = 0; i < n_homes; i++)
		free(homes[i]);
	free(homes);
	return ret;
}

size_t rules__write_shares(const struct policy_set *set, bool strict,
			   struct policy_diag *diag)
{
	const char *level = strict ? "error" : "warning";
	size_t i, j, a, b, n = 0;

	for (i = 0; i < set->n; i++) {
		const struct policy *p = set->v[i];
		const char *glob = NULL;

		for (a = 0; a < p->n_cgroups && !glob; a++)
			if (!select__is_literal(p->cgroups[a]))
				glob = p->cgroups[a];
		if (!glob && p->n_cgroups <= 1)
			continue;
		for (a = 0; a < p->files.n_write; a++, n++)
			policy_diag__add(diag, "%s:%d:%d: files.write[%zu]: %s: %s is writable by every cgroup %s %s selects, so their executions share it (`stockade manifest` fails point 3); give each execution a folder of its own: one policy per literal cgroup, or no write path",
					 p->file, p->files.write[a].pos.line, p->files.write[a].pos.col,
					 a, level, p->files.write[a].path,
					 glob ? "the glob selector" : "the selectors",
					 glob ? glob : "of this policy");
	}
	for (i = 0; i < set->n; i++)
		for (j = i + 1; j < set->n; j++) {
			const struct policy *p = set->v[i], *q = set->v[j];

			for (a = 0; a < p->files.n_write; a++)
				for (b = 0; b < q->files.n_write; b++) {
					if (!mf_path_overlap(p->files.write[a].path, q->files.write[b].path))
						continue;
					policy_diag__add(diag, "%s:%d:%d: files.write[%zu]: %s: %s overlaps %s, a write path of policy %s (%s:%d:%d): the sandboxes of both share it (`stockade manifest` fails point 3); give each policy folders of its own",
							 p->file, p->files.write[a].pos.line,
							 p->files.write[a].pos.col, a, level,
							 p->files.write[a].path, q->files.write[b].path,
							 q->name, q->file, q->files.write[b].pos.line,
							 q->files.write[b].pos.col);
					n++;
				}
		}
	return n;
}
