// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The compile check of a policy set (agent/rules_check.h). */
#include <limits.h>
#include <stdio.h>
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

/*
 * May two cgroups p selects give a placeholder the same value? {cgroup_path}
 * never (a path names one cgroup); {cgroup} when p has several selectors,
 * or its one selector has a wildcard before its last component
 * (/k8s/<*>/job-1 and /k8s/b/job-1 are both "job-1").
 */
static bool tmpl_shared(const struct policy *p, const char *path)
{
	const char *sel, *w;

	if (!(policy_tmpl__kinds(path) & (1u << POLICY_TMPL_CGROUP)))
		return false;
	if (p->n_cgroups != 1)
		return true;
	sel = p->cgroups[0];
	w = strpbrk(sel, "*?[");
	return w && strchr(w, '/');
}

/*
 * Can write paths a (of p) and b (of q, another policy) name one folder?
 * Literal ones when they overlap; a templated one expands below its base,
 * so it may meet anything overlapping that base. Two {cgroup_path} paths
 * written alike never meet: the cgroups of two policies differ.
 */
static bool write_overlap(const char *a, const char *b)
{
	char ba[PATH_MAX], bb[PATH_MAX];
	unsigned int ka = policy_tmpl__kinds(a), kb = policy_tmpl__kinds(b);

	if (!ka && !kb)
		return mf_path_overlap(a, b);
	if (ka == (1u << POLICY_TMPL_CGROUP_PATH) && !strcmp(a, b))
		return false;
	policy_tmpl__base(a, ba, sizeof(ba));
	policy_tmpl__base(b, bb, sizeof(bb));
	return mf_path_overlap(ka ? ba : a, kb ? bb : b);
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
		for (a = 0; a < p->files.n_write; a++) {
			const char *w = p->files.write[a].path;

			if (!policy_tmpl__has(w)) {
				policy_diag__add(diag, "%s:%d:%d: files.write[%zu]: %s: %s is writable by every cgroup %s %s selects, so their executions share it (`stockade manifest` fails point 3); give each execution a folder of its own: {cgroup} or {cgroup_path} in the path (/srv/jobs/{cgroup}), or one policy per literal cgroup",
						 p->file, p->files.write[a].pos.line, p->files.write[a].pos.col,
						 a, level, w, glob ? "the glob selector" : "the selectors",
						 glob ? glob : "of this policy");
				n++;
			} else if (tmpl_shared(p, w)) {
				policy_diag__add(diag, "%s:%d:%d: files.write[%zu]: %s: %s: {cgroup} is only the last path component, and two cgroups %s selects can end alike, so their executions would share the folder; write {cgroup_path}",
						 p->file, p->files.write[a].pos.line, p->files.write[a].pos.col,
						 a, level, w, p->n_cgroups > 1 ? "the selectors of this policy" : p->cgroups[0]);
				n++;
			}
		}
	}
	for (i = 0; i < set->n; i++)
		for (j = i + 1; j < set->n; j++) {
			const struct policy *p = set->v[i], *q = set->v[j];

			for (a = 0; a < p->files.n_write; a++)
				for (b = 0; b < q->files.n_write; b++) {
					if (!write_overlap(p->files.write[a].path, q->files.write[b].path))
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
