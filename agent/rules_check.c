// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The compile check of a policy set (agent/rules_check.h). */
#include <stdlib.h>
#include <string.h>

#include "file_rules.h"
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
