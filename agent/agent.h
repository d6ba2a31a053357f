/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The daemon, as main() sees it: its options and its entry points. Its
 * state (struct agent) is in agent/daemon.h, which only the daemon's rooms
 * include.
 */
#ifndef STOCKADE_AGENT_H
#define STOCKADE_AGENT_H

#include <stdbool.h>
#include <stddef.h>

struct agent_opts {
	const char **policy_paths;
	size_t n_policy_paths;
	const char *cgroup_root;
	const char *bpffs;
	const char *log_path;
	unsigned int ring_size;
	bool allow_degraded;
	const char *metrics_path;	/* --metrics FILE, or NULL */
	const char *metrics_listen;	/* --metrics-listen ADDR:PORT, or NULL */
	bool metrics_allow_remote;	/* --metrics-allow-remote */
	bool metrics_container_labels;	/* --metrics-container-labels */
	const char *state_path;		/* --state FILE, or NULL: the default */
	/* Remove every link and pin on SIGTERM/SIGINT (the old behaviour);
	 * by default they stay, and the sandboxes stay confined. */
	bool detach_on_exit;
	/* --containers-dir: `stockade oci-hook`'s records, or NULL: the
	 * default (agent/container_meta.h). */
	const char *containers_dir;
	/* --events-socket PATH (agent/watch_server.h): NULL the default,
	 * "none" no socket. */
	const char *events_socket;
};

/* agent/daemon.c */
/* Block SIGHUP, SIGINT and SIGTERM for good (first thing in main()):
 * the main loop reads them from a signalfd once start-up is over. */
void agent__signals_init(void);
int agent__run(const struct agent_opts *opt);
/* `agent --preflight`: the host's prerequisites, one line each on
 * stdout, nothing loaded; 0 all present, 1 one missing. */
int agent__preflight(const struct agent_opts *opt);

#endif
