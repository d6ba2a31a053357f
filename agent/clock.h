/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The one clock helper. Inline, so that the unit tests' library (which
 * links no libbpf, unlike agent/bpfutil.c) and the daemon share it.
 */
#ifndef STOCKADE_CLOCK_H
#define STOCKADE_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Nanoseconds of clock c (CLOCK_REALTIME, CLOCK_MONOTONIC...). */
static inline int64_t clock_now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#endif
