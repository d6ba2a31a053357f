// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <errno.h>
#include <time.h>
#include <bpf/bpf.h>

#include "bpfutil.h"

#define RETRY_FIRST_MS	1
#define RETRY_LAST_MS	1024

uint64_t bpfutil_enomem_retries;

int map_update_retry(int fd, const void *key, const void *value,
		     uint64_t flags)
{
	unsigned int ms = RETRY_FIRST_MS;

	for (;;) {
		struct timespec ts;

		if (!bpf_map_update_elem(fd, key, value, flags))
			return 0;
		if (errno != ENOMEM || ms > RETRY_LAST_MS)
			return -errno;
		bpfutil_enomem_retries++;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)ms * 1000000;
		nanosleep(&ts, NULL);
		ms *= 2;
	}
}
