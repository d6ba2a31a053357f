/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The event pipeline, the agent's half (agent/events.c): the ring buffer
 * read into one JSON object per line (stdout, and --log FILE), the
 * kernel's loss counter turned into `lost` records, and the agent-side
 * records (events__begin() ... events__emit()). It names cgroups and
 * policies through a names interface (agent/names.h), never through the
 * daemon's state; the daemon embeds one struct events and hands it to
 * every room that writes a record.
 *
 * Not events.h: that name is include/events.h, the record format the BPF
 * programs share, which every file of agent/ includes as "events.h".
 */
#ifndef STOCKADE_EVENTS_AGENT_H
#define STOCKADE_EVENTS_AGENT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/types.h>

#include "json.h"

struct agent_meta;
struct cgroup_paths;
struct evring;
struct exec_hash;
struct loop;
struct names;
struct sandbox_cg;
struct stockade;

/* What the daemon tells events__open(). */
struct events_cfg {
	const char *log_path;		/* --log FILE, or NULL */
	const char *cgroot;		/* the cgroup2 mount: drained records' paths */
	const struct names *names;	/* cgroups and policies by id */
	/* agent_meta's daemon half: pid (while it runs), its start, its
	 * reloads. events__meta_update() adds the layout and the losses
	 * reported, which are events' own. */
	void (*meta)(const void *ctx, struct agent_meta *m);
	const void *ctx;
	/* Every line written out, as written (newline included), once it
	 * is in the batch that goes to stdout and --log: the events
	 * socket's fan-out
	 * (agent/watch_server.h), or NULL. It must not block. */
	void (*sink)(void *sink_ctx, const char *line, size_t len);
	void *sink_ctx;
};

/* The fields are events.c's: the others read and write only j, between
 * events__begin() and events__emit(). Set by events__init() before
 * events__open(), and events__close() takes that too. */
struct events {
	struct events_cfg cfg;
	struct json j;			/* the record being built */
	int log_fd;			/* --log, or -1 */
	/* The records written but not out yet, in one buffer for both
	 * streams (agent/events.c: OUT_BUF). Per stream (stdout, --log):
	 * failed, said, until a write works a second after the last failure
	 * (fail_ns); cut, a failed write left part of a record there.
	 * --log's records missing from it (its writes failed), and how many
	 * of them a log_lost record has told; log_ok: its last write worked. */
	struct out_batch {
		char *buf;
		size_t len;
		bool failed[2], cut[2];
		int64_t fail_ns[2];
		uint64_t log_missing, log_told;
		bool log_ok;
	} out;
	struct evring *ring;		/* NULL: not reading */
	/* Paths of every cgroup, while draining records from before us. */
	struct cgroup_paths *drain_paths;
	__u64 *seq;			/* the BPF programs' ev_seq, shared */
	const __u64 *kernel_lost;	/* their ev_lost */
	int meta_fd;			/* agent_meta */
	uint64_t lost_seen;		/* losses already reported */
	uint64_t lost_agent;		/* records received but not written out */
	uint64_t logged;		/* kernel records written out */
	/* For the metrics (events__counts()): every line written, and the
	 * sequence and the kernel's losses when the ring was opened. */
	uint64_t written, seq_start, lost_start;
	int64_t boot_to_real_ns;	/* CLOCK_BOOTTIME to CLOCK_REALTIME */
	struct exec_hash *hash;		/* exec.hash: sha256 (agent/exec_hash.h) */
};

/* Zeroed, no --log: before events__open() and events__close(). */
void events__init(struct events *ev);
/* Before the load: the ring buffer's size in bytes (--ring-size). */
void events__set_ring_size(struct stockade *skel, unsigned int bytes);
/* After the load: --log opened, the ring mapped, the losses an earlier
 * agent reported read back. */
int events__open(struct events *ev, struct stockade *skel,
		 const struct events_cfg *cfg);
void events__close(struct events *ev);
/* Is the ring being read (open, and not closed yet)? */
bool events__reading(const struct events *ev);
/* Read the ring from the main loop (agent/loop.h): its fd, and the
 * coalescing timer. */
int events__loop_add(struct events *ev, struct loop *l);
/* Write what the ring still holds, and stop reading it. */
void events__close_ring(struct events *ev);
/* Write what the ring holds now (records from before this agent). */
int events__drain(struct events *ev);
/* Write what another ring buffer holds (a replaced state's, agent/replace.c);
 * the number of records, or a negative errno. */
int events__drain_map(struct events *ev, int map_fd);
/* Open --log FILE anew by its name (log rotation), the old one kept when
 * that fails; a log_reopen record says which. 0 or -errno (said). */
int events__log_reopen(struct events *ev);
/* Write agent_meta: the daemon's half (cfg.meta), losses reported. */
void events__meta_update(struct events *ev);
/* Start an agent-side record (takes a sequence number); add its fields to
 * ev->j, finish with events__emit(). */
void events__begin(struct events *ev, const char *event);
void events__emit(struct events *ev);
/* events__emit() of a record that accounts for seqs other records' sequence
 * numbers (a lost record's count, pin_replace's seq_unused): should it
 * miss --log, those are missing from the log's sequence too (log_lost). */
void events__emit_counting(struct events *ev, uint64_t seqs);
/* Records since events__open(): sequence numbers taken (programs and
 * agent), lines written out, lost (kernel and agent). A record from
 * before the agent started that it writes counts as logged only. */
void events__counts(const struct events *ev, uint64_t *produced,
		    uint64_t *logged, uint64_t *lost);
/* A confined cgroup's policy, cgroup and cgroup_id fields. */
void events__cgroup_fields(struct events *ev, const struct sandbox_cg *cg);

#endif
