/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Diagnostics: a growable list of one-line messages. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

int policy_diag__add(struct policy_diag *diag, const char *fmt, ...)
{
	char line[POLICY_DIAG_MAX];
	char **v = diag->msgs;
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		snprintf(line, sizeof(line), "(unformattable diagnostic)");
	else if ((size_t)n >= sizeof(line))
		memcpy(line + sizeof(line) - 4, "...", 4);
	/* Messages quote user input and file names; one line each is what
	 * log parsers and terminals expect, so no control byte survives. */
	for (s = line; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';

	/* Capacity is implicit: the next power of two at or above n. */
	if ((diag->n & (diag->n - 1)) == 0) {
		v = realloc(diag->msgs, (diag->n ? diag->n * 2 : 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		diag->msgs = v;
	}
	s = strdup(line);
	if (!s)
		return -ENOMEM;
	diag->msgs[diag->n++] = s;
	return 0;
}

void policy_diag__free(struct policy_diag *diag)
{
	size_t i;

	if (!diag)
		return;
	for (i = 0; i < diag->n; i++)
		free(diag->msgs[i]);
	free(diag->msgs);
	diag->msgs = NULL;
	diag->n = 0;
}
