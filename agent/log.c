// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "log.h"

int log_verbosity = LOG_INFO;
bool log_libbpf_quiet;

static const char *const level_names[] = {
	[LOG_ERR] = "error", [LOG_WARN] = "warning",
	[LOG_INFO] = "info", [LOG_DEBUG] = "debug",
};

static void log_vmsg(enum log_level lvl, const char *subsys, const char *fmt,
		     va_list ap)
{
	char *buf = NULL;
	size_t n;

	if ((int)lvl > log_verbosity)
		return;
	/* Heap, not a fixed buffer: a verifier log runs to many KiB. */
	if (vasprintf(&buf, fmt, ap) < 0) {
		fprintf(stderr, "stockade: %s: %s: (out of memory formatting a message)\n",
			subsys, level_names[lvl]);
		return;
	}
	/* libbpf's lines end in '\n' already; ours do not. */
	n = strlen(buf);
	while (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	fprintf(stderr, "stockade: %s: %s: %s\n", subsys, level_names[lvl], buf);
	free(buf);
}

void log_msg(enum log_level lvl, const char *subsys, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(lvl, subsys, fmt, ap);
	va_end(ap);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	enum log_level lvl = level == LIBBPF_WARN ? LOG_WARN :
			     level == LIBBPF_INFO ? LOG_INFO : LOG_DEBUG;

	/* libbpf's INFO lines are load-time chatter: keep them for -v. */
	if (lvl == LOG_INFO || log_libbpf_quiet)
		lvl = LOG_DEBUG;
	log_vmsg(lvl, "libbpf", fmt, ap);
	return 0;
}

void log_setup_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}
