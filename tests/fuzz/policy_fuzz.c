/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * libFuzzer target for the policy loader, after libbpf's
 * fuzz/bpf-object-fuzzer.c: any bytes in, no crash, no leak, and the
 * loader's contract holds on every input:
 *   - 0 means a policy and no diagnostic; an error means no policy and at
 *     least one diagnostic (allocation failure aside);
 *   - every diagnostic is one printable line shorter than POLICY_DIAG_MAX;
 *   - every CIDR in an accepted policy is masked and fully normalised, and
 *     prints as text that parses back to itself.
 *
 *   make fuzz && build/fuzz/policy_fuzz tests/fuzz/corpus
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "policy_fuzz: contract broken: %s\n", what);
		abort();
	}
}

static void check_cidr(const struct policy_cidr *c)
{
	struct policy_cidr copy = *c, back;
	char text[64];

	check(!policy_cidr__mask(&copy), "host bits in an accepted CIDR");
	policy_cidr__normalize(&copy);
	check(memcmp(&copy, c, sizeof(copy)) == 0, "CIDR not normalised");
	policy_cidr__str(c, text, sizeof(text));
	check(policy_cidr__parse(text, &back) == 0 &&
	      memcmp(&back, c, sizeof(back)) == 0, "CIDR text does not round-trip");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct policy_diag diag = { NULL, 0 };
	struct policy *p = NULL;
	size_t i;
	int err;

	err = policy__parse("fuzz.yaml", (const char *)data, size, &p, &diag);
	check(err == 0 || err == -EINVAL || err == -ENOMEM, "unexpected errno");
	check((err == 0) == (p != NULL), "policy returned with an error");
	check(err != 0 || diag.n == 0, "diagnostics on success");
	check(err != -EINVAL || diag.n > 0, "-EINVAL without a diagnostic");
	for (i = 0; i < diag.n; i++) {
		const char *m = diag.msgs[i];

		check(strlen(m) < POLICY_DIAG_MAX, "diagnostic too long");
		for (; *m; m++)
			check((unsigned char)*m >= 0x20 && *m != 0x7f,
			      "control character in a diagnostic");
	}
	if (p) {
		for (i = 0; i < p->net.n_allow; i++)
			check_cidr(&p->net.allow[i].cidr);
		for (i = 0; i < p->net.n_overrides; i++)
			check_cidr(&p->net.overrides[i].endpoint);
	}
	policy__free(p);
	policy_diag__free(&diag);
	return 0;
}
