// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `stockade register check REGISTER --log FILE [--since T] [--until T]`:
 * the agent's log over a period judged against the code register
 * (agent/register_check.h). Reads files only: no pins, no agent needed.
 * Exit: 0 pass, 3 a failure, 1 an error, 2 a usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "log.h"
#include "policy.h"
#include "probe.h"
#include "register.h"
#include "register_check.h"

static int usage(void)
{
	fprintf(stderr, "usage: stockade register check REGISTER --log FILE [--since T] [--until T] [--format text|json]\n"
		"  T: an RFC 3339 UTC time (2026-12-01T09:00:00Z)\n");
	return 2;
}

int ctl__register(int argc, char **argv)
{
	enum { OPT_LOG = 256, OPT_SINCE, OPT_UNTIL, OPT_FORMAT };
	static const struct option opts[] = {
		{ "log", required_argument, NULL, OPT_LOG },
		{ "since", required_argument, NULL, OPT_SINCE },
		{ "until", required_argument, NULL, OPT_UNTIL },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ NULL, 0, NULL, 0 },
	};
	const char *log_path = NULL, *format = "text";
	struct policy_diag diag = { 0 };
	struct code_register *r = NULL;
	struct reg_report rep = { 0 };
	int64_t since = 0, until = 0;
	size_t i;
	FILE *f;
	int k, err, rc = 1;

	if (argc < 2 || strcmp(argv[1], "check"))
		return usage();
	optind = 2;
	while ((k = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (k) {
		case OPT_LOG: log_path = optarg; break;
		case OPT_FORMAT: format = optarg; break;
		case OPT_SINCE:
		case OPT_UNTIL:
			if (!(k == OPT_SINCE ? (since = probe_parse_ts(optarg)) :
			      (until = probe_parse_ts(optarg)))) {
				fprintf(stderr, "stockade register check: %s: expected an RFC 3339 UTC time such as 2026-12-01T09:00:00Z\n",
					optarg);
				return 2;
			}
			break;
		default:
			return usage();
		}
	}
	if (optind + 1 != argc || !log_path || (strcmp(format, "text") && strcmp(format, "json")))
		return usage();
	err = register__load(argv[optind], &r, &diag);
	for (i = 0; i < diag.n; i++)
		fprintf(stderr, "%s\n", diag.msgs[i]);
	policy_diag__free(&diag);
	if (err) {
		pr_err("register", "the register %s is invalid (above); nothing was checked", argv[optind]);
		return 1;
	}
	f = fopen(log_path, "re");
	if (!f) {
		pr_err("register", "reading the log %s failed: %s; pass the agent's --log FILE",
		       log_path, strerror(errno));
		goto out;
	}
	err = register__check(r, f, since, until, &rep);
	fclose(f);
	if (err) {
		pr_err("register", "checking %s: %s", log_path, strerror(-err));
		goto out;
	}
	rc = reg_report__print(stdout, &rep, !strcmp(format, "json")) ? 0 : 3;
out:
	reg_report__free(&rep);
	register__free(r);
	return rc;
}
