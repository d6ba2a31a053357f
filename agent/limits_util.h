/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The parts of limits and counting that need no BPF: cgroup file values,
 * the kernel log's OOM lines, burst accounting, the Prometheus text, the
 * status output and the agent's state file. No libbpf here, so the unit
 * tests link it (Makefile LIB_SRCS); agent/limits.c is the other half.
 */
#ifndef STOCKADE_LIMITS_UTIL_H
#define STOCKADE_LIMITS_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "json.h"
#include "stockade_limits.h"

/* ---- cgroup file values ---- */

#define CGV_MAX		UINT64_MAX	/* the word "max": no limit */

/* "max" or a decimal number, surrounding whitespace allowed. 0 or -EINVAL. */
int cgv_parse(const char *s, uint64_t *v);
/* The value of KEY in a flat-keyed file ("oom_kill 3\n"). 0 or -ENOENT. */
int cgv_keyed(const char *text, const char *key, uint64_t *v);
/* cpu.max for this many millicores: "QUOTA PERIOD" (microseconds). The
 * period is 100 ms, or 1 s below 10 millicores, where 100 ms would need a
 * quota under the kernel's 1 ms minimum. */
void cgv_cpu_max(uint32_t milli, char *buf, size_t len);
/* cpu.max back to millicores; CGV_MAX for "max ...". 0 or -EINVAL. */
int cgv_cpu_milli(const char *s, uint64_t *milli);
/* Bytes as a short human string: "512", "1.5Ki", "32.0Mi". */
const char *cgv_human(uint64_t bytes, char *buf, size_t len);

/*
 * Read a whole small file (cgroup files are a page at most) into buf,
 * NUL-terminated. Returns the length, or a negative errno.
 */
ssize_t cgv_read(const char *path, char *buf, size_t len);

/* ---- OOM kills as the kernel logs them (/dev/kmsg) ---- */

struct oom_victim {
	int pid;
	char comm[16];
	char memcg[256];	/* task_memcg=, relative to the cgroup2 root */
	bool has_comm, has_memcg;
};

/*
 * One /dev/kmsg record ("PRI,SEQ,TS,FLAGS;MESSAGE\n ..."). Returns true and
 * fills v when it is one of the kernel's two lines about an OOM victim:
 *   oom-kill:constraint=...,task_memcg=/x,task=hog,pid=234,uid=0
 *   Memory cgroup out of memory: Killed process 234 (hog) total-vm:...
 * The first names the victim's cgroup (it is rate limited); the second
 * is always printed.
 */
bool kmsg_parse_oom(const char *rec, size_t len, struct oom_victim *v);
/* Is cgroup path `inner` (relative to the cgroup2 root) `outer` or below? */
bool cgv_path_within(const char *inner, const char *outer);

/* ---- bursts: one record per burst of events ---- */

/*
 * Events (refused forks) arrive in bursts. A burst starts with the first
 * event after BURST_QUIET_MS without any, and is logged once, with the
 * count so far, as soon as it has been quiet for BURST_SETTLE_MS or
 * BURST_LOG_MS after it started, whichever comes first: within a second
 * of the first event, whatever its length. Later events of the same
 * burst are counted (total) but logged in no further record.
 */
#define BURST_SETTLE_MS	300
#define BURST_LOG_MS	700
#define BURST_QUIET_MS	1000

struct burst {
	bool active, logged;
	uint64_t first_ms, last_ms;
	uint64_t count;		/* events in this burst */
	uint64_t total;		/* events in all bursts */
};

void burst_add(struct burst *b, uint64_t now_ms, uint64_t n);
/* The count to log now, or 0; also ends a burst that has gone quiet. */
uint64_t burst_due(struct burst *b, uint64_t now_ms);
/* When burst_due() next has a count to log (ms), or 0: none. Ending a
 * quiet burst needs no call at that time (burst_add() does it too). */
uint64_t burst_next_ms(const struct burst *b);

/* ---- what a sandbox used: counters and cgroup files ---- */

enum sb_have {
	SB_COUNTS = 1 << 0,	/* c: the BPF counters */
	SB_CPU = 1 << 1,	/* cpu.stat usage_usec */
	SB_THROTTLE = 1 << 2,	/* cpu.stat nr_throttled, throttled_usec */
	SB_CPU_MAX = 1 << 3,
	SB_MEM = 1 << 4,	/* memory.current, memory.max */
	SB_MEM_PEAK = 1 << 5,	/* memory.peak (Linux 5.19+) */
	SB_OOM = 1 << 6,	/* memory.events oom_kill */
	SB_PIDS = 1 << 7,	/* pids.current, pids.max, pids.events max */
	SB_RUNTIME = 1 << 8,	/* runtime_ms, runtime_left_ms */
};

struct container_info;

struct sb_stats {
	const char *policy;
	const char *cgroup;
	uint64_t cgroup_id;
	unsigned int have;	/* enum sb_have */
	struct sb_count c;
	uint64_t cpu_usage_usec, cpu_nr_throttled, cpu_throttled_usec;
	uint64_t cpu_max_milli;			/* CGV_MAX: none */
	uint64_t mem_current, mem_peak, mem_max, oom_kills;
	uint64_t pids_current, pids_max, pids_refused;
	uint64_t runtime_ms;
	int64_t runtime_left_ms;		/* -1: not started yet */
	/* Its container, or NULL (labels only with container_labels). */
	const struct container_info *ctr;
};

/* Fill the SB_CPU..SB_PIDS parts from the cgroup directory `dir`; a file
 * that does not exist (controller not enabled) leaves its bit clear. */
void sb_stats_read_cgroup(struct sb_stats *s, const char *dir);
/* Sum n per-CPU copies of struct sb_count (each `stride` bytes apart). */
void sb_count_sum(struct sb_count *out, const void *percpu, size_t n,
		  size_t stride);

/* Names of enum ev_kind values, for counters; NULL for unused ones. */
const char *limits_kind_name(unsigned int kind);

/* ---- the Prometheus text exposition (README "Metrics") ---- */

/* The actions of stockade_decisions_total, and the limits of
 * stockade_limit_breaches_total (an `event: limit` record's kind). */
enum metrics_action { MA_ALLOW, MA_DENY, MA_AUDIT, MA_N };
enum metrics_limit { ML_MEMORY, ML_PIDS, ML_RUNTIME, ML_CPU, ML_N };
/* "memory" -> ML_MEMORY...; -1 for any other name. */
int metrics_limit_of(const char *kind);

/* One policy's counters, summed over its sandboxes and kept when they
 * go (agent/limits.c keeps them monotonic). */
struct metrics_policy {
	const char *policy;
	uint64_t dec[MA_N][LIMITS_KINDS];	/* by enum ev_kind */
	uint64_t breaches[ML_N];		/* limit records logged */
};

/*
 * The agent's own numbers, beside the sandboxes'. A family that a later
 * source adds (containers, say) gets a field here and a block in
 * metrics_write(): the text has one builder.
 */
struct metrics_agent {
	/* Records since this agent started: sequence numbers taken (by the
	 * programs and the agent), lines written out, records lost. */
	uint64_t events_produced, events_logged, events_lost;
	bool has_self;			/* the two below were read */
	uint64_t rss_bytes;		/* /proc/self/statm resident */
	uint64_t cpu_usec;		/* getrusage(): user + system */
	const struct metrics_policy *pol;
	size_t n_pol;
	/* Confined cgroups that are a container's own (stockade_containers),
	 * and --metrics-container-labels: each per-sandbox sample also gets
	 * container and pod labels (one series per container). */
	uint64_t containers;
	bool container_labels;
};

/* The agent's resident memory and CPU time: 0 or a negative errno. */
int metrics_self(uint64_t *rss_bytes, uint64_t *cpu_usec);

/* The whole Prometheus text exposition: the agent's families (a NULL
 * agent: none of them), then these sandboxes'. The --metrics file and
 * the HTTP endpoint both serve what this writes. */
void metrics_write(FILE *f, const struct metrics_agent *agent,
		   const struct sb_stats *v, size_t n);

/*
 * --metrics-listen ADDR:PORT: "127.0.0.1:9464", "[::1]:9464". Fills ss
 * and *len; *loopback says whether the address is a loopback one. 0, or
 * -EINVAL with why filled (what is wrong, and the form expected).
 */
struct sockaddr_storage;
int metrics_listen_parse(const char *spec, struct sockaddr_storage *ss,
			 unsigned int *len, bool *loopback, char *why,
			 size_t why_len);
/* A label value, escaped (\\, \", \n) with invalid UTF-8 as U+FFFD. */
void metrics_label(FILE *f, const char *s);

/* `stockade status`: a table, or one JSON object. */
void status_print_table(FILE *f, const struct sb_stats *v, size_t n);
void status_json(struct json *j, const struct sb_stats *s);
/* The same without policy, cgroup and cgroup_id (`status --json` rows). */
void status_json_usage(struct json *j, const struct sb_stats *s);

/* ---- the agent's state file (/run/stockade/state.json) ---- */

/*
 * One JSON document, written so that each sandbox is one line of it:
 *   {"version":1,"pid":N,"cgroup_root":"...","pin_dir":"...","sandboxes":[
 *   {"policy":"p","cgroup":"/x","cgroup_id":7,"runtime_ms":0,"runtime_deadline_ms":0},
 *   ...
 *   ]}
 * runtime_deadline_ms is CLOCK_REALTIME in ms, 0 while not started.
 * Readers (stockade status) parse it line by line with flatjson_get().
 */
#define STATE_VERSION	1

/*
 * Find KEY among the members of the JSON object that starts at s (leading
 * whitespace allowed). Only string, number, true/false/null members are
 * understood; parsing stops at the first array or object value. A string
 * is unescaped into str (NUL-terminated, cut to len); a number goes to
 * *num. Returns 's' or 'n' for the type found, 0 when KEY is absent, or
 * -EINVAL for malformed input before KEY.
 */
int flatjson_get(const char *s, const char *key, char *str, size_t len,
		 uint64_t *num);

#endif
