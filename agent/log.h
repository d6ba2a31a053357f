/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Human-readable diagnostics on stderr, one line each, with a fixed
 * subsystem prefix ("stockade: net: ..."). The JSON event stream goes to
 * stdout (agent/events.c) and never mixes with these.
 */
#ifndef STOCKADE_LOG_H
#define STOCKADE_LOG_H

#include <stdarg.h>
#include <stdbool.h>

enum log_level { LOG_ERR = 0, LOG_WARN = 1, LOG_INFO = 2, LOG_DEBUG = 3 };

extern int log_verbosity;	/* messages above this level are dropped */
/* While set, libbpf's warnings are logged as debug: used for a probe
 * whose failure the caller reports itself. */
extern bool log_libbpf_quiet;

void log_msg(enum log_level lvl, const char *subsys, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Route libbpf's own output through log_msg(); DEBUG only with -v. */
void log_setup_libbpf(void);

#define pr_err(sub, ...)	log_msg(LOG_ERR, sub, __VA_ARGS__)
#define pr_warn(sub, ...)	log_msg(LOG_WARN, sub, __VA_ARGS__)
#define pr_info(sub, ...)	log_msg(LOG_INFO, sub, __VA_ARGS__)
#define pr_debug(sub, ...)	log_msg(LOG_DEBUG, sub, __VA_ARGS__)

#endif
