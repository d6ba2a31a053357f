/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * `stockade probe` (agent/ctl_probe.c), its pure half: the probe
 * cgroup's name, and the agent's log records it matches attempts with.
 * No kernel, no libbpf: unit-tested (tests/unit/test_probe.c), and the
 * log parser, which reads a file others write, is fuzzed
 * (tests/fuzz/proc_fuzz.c).
 */
#ifndef STOCKADE_PROBE_H
#define STOCKADE_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A cgroup path a selector matches, next to the ones it selects: its last
 * component's first '*' becomes tag, a '?' or a bracket expression one
 * character it accepts. 0 with the path in out; -ENOENT when the last
 * component is literal (no sibling can be selected); -EINVAL when no
 * candidate matches (a pattern this cannot satisfy); -ENAMETOOLONG.
 */
int probe_sibling(const char *selector, const char *tag, char *out, size_t len);

/* What an attempt's record must say, and what was found. */
struct probe_rec {
	char event[16];		/* deny, audit, limit, lost */
	char kind[24];
	char op[24];
	char cgroup[256];
	uint64_t seq;
	uint64_t pid;
	uint64_t count;		/* lost: records lost */
	int64_t ts_ns;		/* CLOCK_REALTIME ns; 0: unreadable */
	bool has_pid;
};

/* One JSON record line of the agent's log; false when it is not one (no
 * event or seq). Top-level members only: a member name inside a string
 * value is escaped there and never matches. */
bool probe_parse_rec(const char *line, size_t len, struct probe_rec *out);

/* A top-level string member (escapes kept as written; cut to out_len),
 * or a number; false when absent. */
bool logrec_str(const char *line, size_t len, const char *key, char *out,
		size_t out_len);
bool logrec_u64(const char *line, size_t len, const char *key, uint64_t *out);
/* Just past a top-level member's `"key":`, or NULL. */
const char *logrec_raw(const char *line, size_t len, const char *key);

/* RFC 3339 UTC with up to nine fraction digits ("...Z") to ns since the
 * epoch; 0 when malformed. */
int64_t probe_parse_ts(const char *s);

#endif
