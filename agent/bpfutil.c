// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <errno.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "bpfutil.h"

#define RETRY_FIRST_MS	1
#define RETRY_LAST_MS	1024

uint64_t bpfutil_enomem_retries;

int64_t clock_now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int bpf_rcu_sync(int sync_fd, int inner_fd)
{
	__u32 zero = 0;

	if (!bpf_map_update_elem(sync_fd, &zero, &inner_fd, BPF_ANY))
		return 0;
	usleep(100000);
	return -errno;
}

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
