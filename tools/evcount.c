// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * evcount: the kernel's record counters from the pins, for the tests that
 * check produced == logged + lost (tests/vm/exec-records.sh).
 *
 *   evcount BPFFS    prints "produced=N lost=N" (ev_produced and ev_lost
 *                    of the pinned .bss under BPFFS/maps/bss)
 *
 * Exit status: 0, 1 when the pin cannot be read, 2 on a usage error.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>

/* Only for struct stockade__bss (where the counters lie), as storm reads
 * them: nothing of libbpf is called. */
#include "stockade.skel.h"

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return (int)syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

int main(int argc, char **argv)
{
	struct stockade__bss bss;
	struct bpf_map_info info;
	union bpf_attr attr;
	char path[4096];
	uint32_t zero = 0;
	void *buf;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: evcount BPFFS\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/maps/bss", argv[1]);
	memset(&attr, 0, sizeof(attr));
	attr.pathname = (uint64_t)(uintptr_t)path;
	fd = sys_bpf(BPF_OBJ_GET, &attr);
	if (fd < 0) {
		fprintf(stderr, "evcount: opening %s failed: %s\n", path, strerror(errno));
		return 1;
	}
	memset(&info, 0, sizeof(info));
	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = (uint32_t)fd;
	attr.info.info_len = sizeof(info);
	attr.info.info = (uint64_t)(uintptr_t)&info;
	if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &attr) || info.value_size < sizeof(bss)) {
		fprintf(stderr, "evcount: %s is not this build's .bss\n", path);
		return 1;
	}
	buf = calloc(1, info.value_size);
	if (!buf)
		return 1;
	memset(&attr, 0, sizeof(attr));
	attr.map_fd = (uint32_t)fd;
	attr.key = (uint64_t)(uintptr_t)&zero;
	attr.value = (uint64_t)(uintptr_t)buf;
	if (sys_bpf(BPF_MAP_LOOKUP_ELEM, &attr)) {
		fprintf(stderr, "evcount: reading %s failed: %s\n", path, strerror(errno));
		return 1;
	}
	memcpy(&bss, buf, sizeof(bss));
	printf("produced=%" PRIu64 " lost=%" PRIu64 "\n", (uint64_t)bss.ev_produced,
	       (uint64_t)bss.ev_lost);
	free(buf);
	close(fd);
	return 0;
}
