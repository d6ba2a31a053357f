/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * `stockade report` (agent/ctl_report.c), its pure half: name-based UUIDs
 * (RFC 4122 version 5, SHA-1, with Nettle) for the OSCAL document, the
 * SHA-256 of the bundle's files, and the OSCAL assessment-results
 * document itself from the verdicts gathered. Unit-tested
 * (tests/unit/test_report.c).
 */
#ifndef STOCKADE_REPORT_H
#define STOCKADE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* stockade's namespace for its version-5 UUIDs (a fixed random v4). */
#define REPORT_UUID_NS "6f1b8d3c-2a47-4e59-9c1e-5b7a0d2f8e64"
#define REPORT_UUID_LEN 37

/* UUID v5 of name in namespace ns (text form); false if ns is malformed. */
bool report_uuid5(const char *ns, const char *name, char out[REPORT_UUID_LEN]);
/* SHA-256 of a file, 64 hex digits: 0 or -errno. */
int report_sha256_file(const char *path, char out[65]);

/* A verification point's verdict, as the report states it. */
struct report_point {
	const char *id;		/* "runtime-configuration.1" */
	const char *title;
	bool pass, shown;	/* shown false: no evidence gathered for it */
	char why[512];
};

/* An observation: one manifest item or probe attempt. */
struct report_obs {
	char title[160];
	char description[512];
	bool test;		/* methods TEST (a probe attempt), else EXAMINE */
	const char *point;	/* the point's id it bears on */
};

struct report_res {
	char title[64];
	char href[128];		/* the bundle's file */
	char sha256[65];
};

struct report_doc {
	const char *node, *run, *generated, *start, *end;
	struct report_point *pt;	size_t n_pt;
	struct report_obs *obs;		size_t n_obs;
	struct report_res *res;		size_t n_res;
};

/* The OSCAL 1.1 assessment-results document (one JSON object). Every
 * array non-empty (a key is left out instead), UUIDs v5 from node and
 * run, date-times in UTC. */
void report_oscal(FILE *f, const struct report_doc *d);

#endif
