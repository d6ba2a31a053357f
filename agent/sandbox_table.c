// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The table of confined cgroups (agent/sandbox_table.h). */
#include <stdlib.h>
#include <string.h>

#include "sandbox_table.h"

struct sandbox_cg *sandbox_table__find(struct sandbox_table *t, uint64_t id)
{
	size_t i;

	if (t->last < t->n && t->v[t->last].id == id)
		return &t->v[t->last];
	for (i = 0; i < t->n; i++) {
		if (t->v[i].id == id) {
			t->last = i;
			return &t->v[i];
		}
	}
	return NULL;
}

struct sandbox_cg *sandbox_table__add(struct sandbox_table *t, const char *rel,
				      uint64_t id)
{
	struct sandbox_cg *cg;

	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct sandbox_cg *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		t->v = v;
		t->cap = cap;
	}
	cg = &t->v[t->n];
	memset(cg, 0, sizeof(*cg));
	cg->path = strdup(rel);
	if (!cg->path)
		return NULL;
	cg->id = id;
	for (size_t k = 0; k < SANDBOX_N_LINKS; k++)
		cg->link_fd[k] = -1;
	cg->wd = -1;
	cg->pwd = -1;
	cg->pending_us = -1;
	t->n++;
	return cg;
}

void sandbox_table__remove(struct sandbox_table *t, size_t i)
{
	if (i >= t->n)
		return;
	free(t->v[i].path);
	free(t->v[i].ctr);
	t->v[i] = t->v[--t->n];
	t->last = 0;
}

void sandbox_table__free(struct sandbox_table *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		free(t->v[i].path);
		free(t->v[i].ctr);
	}
	free(t->v);
	memset(t, 0, sizeof(*t));
}
