// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * bpfquery: what the kernel itself says is attached, for the tests to hold
 * `stockade status` and the agent's adoption against (bpftool is not in
 * the test VM, and this needs no libbpf: plain bpf(2)).
 *
 *   bpfquery cgroup DIR   BPF_PROG_QUERY on DIR for the five socket hooks
 *                         stockade uses: one line "<hook> <prog_id>" per
 *                         program attached to DIR itself (not inherited)
 *   bpfquery links        the kernel's link list (BPF_LINK_GET_NEXT_ID):
 *                         one line per link, "link=ID type=TYPE prog=ID
 *                         name=PROG_NAME" plus " cgroup=ID" for a cgroup
 *                         link
 *   bpfquery stats        each program some link attaches (every program
 *                         stockade runs), once: "prog=ID name=NAME
 *                         run_cnt=N run_time_ns=N", the kernel's own
 *                         accounting, which counts only while
 *                         kernel.bpf_stats_enabled is 1 (the file
 *                         benchmark, tests/vm/bench-files.sh)
 *   bpfquery u64 PIN [KEY]
 *                         the u64 value at key KEY (default 0) of the
 *                         pinned array map PIN (tests/vm/dcache.sh and
 *                         dcache-race.sh: dcache_hits)
 *   bpfquery add PIN OFFSET N
 *                         add N, atomically, to the u64 at byte OFFSET of
 *                         the pinned global data map PIN (mmap: its one
 *                         value), as the agent's sandbox_gen_bump() does
 *                         (tests/live/noentry.sh: a test that deletes a
 *                         sandboxes entry by hand bumps the generation
 *                         after it, as every writer must)
 * Exit status: 0, 1 when a query fails, 2 on a usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return (int)syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static const struct {
	enum bpf_attach_type type;
	const char *name;
} hooks[] = {
	{ BPF_CGROUP_INET4_CONNECT, "connect4" },
	{ BPF_CGROUP_INET6_CONNECT, "connect6" },
	{ BPF_CGROUP_UDP4_SENDMSG, "sendmsg4" },
	{ BPF_CGROUP_UDP6_SENDMSG, "sendmsg6" },
	{ BPF_CGROUP_INET_SOCK_CREATE, "sock_create" },
	{ BPF_CGROUP_INET_EGRESS, "egress" },	/* limits: egress counting */
	{ BPF_CGROUP_INET4_BIND, "bind4" },	/* ingress: network.listen */
	{ BPF_CGROUP_INET6_BIND, "bind6" },
};

static int query_cgroup(const char *dir)
{
	__u32 ids[64], i, h;
	union bpf_attr attr;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "bpfquery: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	for (h = 0; h < sizeof(hooks) / sizeof(hooks[0]); h++) {
		memset(&attr, 0, sizeof(attr));
		attr.query.target_fd = (__u32)fd;
		attr.query.attach_type = hooks[h].type;
		attr.query.prog_ids = (__u64)(uintptr_t)ids;
		attr.query.prog_cnt = sizeof(ids) / sizeof(ids[0]);
		if (sys_bpf(BPF_PROG_QUERY, &attr)) {
			fprintf(stderr, "bpfquery: BPF_PROG_QUERY %s on %s: %s\n",
				hooks[h].name, dir, strerror(errno));
			close(fd);
			return 1;
		}
		for (i = 0; i < attr.query.prog_cnt; i++)
			printf("%s %u\n", hooks[h].name, ids[i]);
	}
	close(fd);
	return 0;
}

static int info_by_fd(int fd, void *info, __u32 len)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = (__u32)fd;
	attr.info.info_len = len;
	attr.info.info = (__u64)(uintptr_t)info;
	return sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &attr);
}

static const char *link_type(__u32 t)
{
	switch (t) {
	case BPF_LINK_TYPE_CGROUP: return "cgroup";
	case BPF_LINK_TYPE_TRACING: return "tracing";
	case BPF_LINK_TYPE_RAW_TRACEPOINT: return "raw_tracepoint";
	case BPF_LINK_TYPE_ITER: return "iter";
	case BPF_LINK_TYPE_NETNS: return "netns";
	case BPF_LINK_TYPE_XDP: return "xdp";
	default: return "other";
	}
}

/*
 * The kernel's next link after *id, into li: 1, or 0 once there is none,
 * -1 on an error. A link that went away meanwhile is skipped.
 */
static int next_link(__u32 *id, struct bpf_link_info *li)
{
	union bpf_attr attr;
	int fd, err;

	for (;;) {
		memset(&attr, 0, sizeof(attr));
		attr.start_id = *id;
		if (sys_bpf(BPF_LINK_GET_NEXT_ID, &attr))
			return errno == ENOENT ? 0 : -1;
		*id = attr.next_id;
		memset(&attr, 0, sizeof(attr));
		attr.link_id = *id;
		fd = sys_bpf(BPF_LINK_GET_FD_BY_ID, &attr);
		if (fd < 0)
			continue;	/* gone meanwhile */
		memset(li, 0, sizeof(*li));
		err = info_by_fd(fd, li, sizeof(*li));
		close(fd);
		if (!err)
			return 1;
	}
}

static int list_links(void)
{
	struct bpf_link_info li;
	struct bpf_prog_info pi;
	union bpf_attr attr;
	__u32 id = 0;
	int n, pfd;

	while ((n = next_link(&id, &li)) > 0) {
		memset(&pi, 0, sizeof(pi));
		memset(&attr, 0, sizeof(attr));
		attr.prog_id = li.prog_id;
		pfd = sys_bpf(BPF_PROG_GET_FD_BY_ID, &attr);
		if (pfd >= 0) {
			info_by_fd(pfd, &pi, sizeof(pi));
			close(pfd);
		}
		printf("link=%u type=%s prog=%u name=%s", li.id, link_type(li.type),
		       li.prog_id, pi.name[0] ? pi.name : "?");
		if (li.type == BPF_LINK_TYPE_CGROUP)
			printf(" cgroup=%llu", (unsigned long long)li.cgroup.cgroup_id);
		printf("\n");
	}
	return n < 0;
}

/*
 * The programs behind the kernel's links, each once (a cgroup program is
 * linked to every sandbox), with run_time_ns and run_cnt from
 * BPF_OBJ_GET_INFO_BY_FD.
 */
static int prog_stats(void)
{
	__u32 seen[1024], n_seen = 0, id = 0, i;
	struct bpf_link_info li;
	struct bpf_prog_info pi;
	union bpf_attr attr;
	int n, pfd;

	while ((n = next_link(&id, &li)) > 0) {
		for (i = 0; i < n_seen && seen[i] != li.prog_id; i++)
			;
		if (i < n_seen)
			continue;
		if (n_seen == sizeof(seen) / sizeof(seen[0])) {
			fprintf(stderr, "bpfquery: more than %u linked programs\n", n_seen);
			return 1;
		}
		seen[n_seen++] = li.prog_id;
		memset(&attr, 0, sizeof(attr));
		attr.prog_id = li.prog_id;
		pfd = sys_bpf(BPF_PROG_GET_FD_BY_ID, &attr);
		if (pfd < 0)
			continue;	/* unloaded meanwhile */
		memset(&pi, 0, sizeof(pi));
		if (info_by_fd(pfd, &pi, sizeof(pi))) {
			fprintf(stderr, "bpfquery: BPF_OBJ_GET_INFO_BY_FD of prog %u: %s\n",
				li.prog_id, strerror(errno));
			close(pfd);
			return 1;
		}
		close(pfd);
		printf("prog=%u name=%s run_cnt=%llu run_time_ns=%llu\n", pi.id,
		       pi.name[0] ? pi.name : "?", (unsigned long long)pi.run_cnt,
		       (unsigned long long)pi.run_time_ns);
	}
	return n < 0;
}

/* The map pinned at pin, or -1 with a message. */
static int pin_open(const char *pin)
{
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.pathname = (__u64)(unsigned long)pin;
	fd = sys_bpf(BPF_OBJ_GET, &attr);
	if (fd < 0)
		fprintf(stderr, "bpfquery: opening the pin %s failed: %s\n", pin, strerror(errno));
	return fd;
}

/* A decimal number from 0 to max, all of arg, or -1 with a message. */
static int number(const char *what, const char *arg, unsigned long long max,
		  unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || *arg == '-' || *out > max) {
		fprintf(stderr, "bpfquery: %s '%s' is not a number (0 to %llu)\n",
			what, arg, max);
		return -1;
	}
	return 0;
}

static int map_u64(const char *pin, const char *key_arg)
{
	union bpf_attr attr;
	unsigned long long k = 0;
	__u32 key;
	__u64 val = 0;
	int fd;

	if (key_arg && number("key", key_arg, UINT32_MAX, &k))
		return 2;
	key = (__u32)k;

	fd = pin_open(pin);
	if (fd < 0)
		return 1;
	memset(&attr, 0, sizeof(attr));
	attr.map_fd = fd;
	attr.key = (__u64)(unsigned long)&key;
	attr.value = (__u64)(unsigned long)&val;
	if (sys_bpf(BPF_MAP_LOOKUP_ELEM, &attr)) {
		fprintf(stderr, "bpfquery: reading key %u of %s failed: %s\n", key, pin,
			strerror(errno));
		close(fd);
		return 1;
	}
	close(fd);
	printf("%llu\n", (unsigned long long)val);
	return 0;
}

static int map_add(const char *pin, const char *off_arg, const char *n_arg)
{
	unsigned long long off, n;
	struct bpf_map_info info;
	union bpf_attr attr;
	long page = sysconf(_SC_PAGESIZE);
	void *mem;
	int fd, rc = 1;

	if (number("offset", off_arg, UINT32_MAX, &off) ||
	    number("addend", n_arg, ULLONG_MAX, &n))
		return 2;
	fd = pin_open(pin);
	if (fd < 0)
		return 1;
	memset(&info, 0, sizeof(info));
	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = fd;
	attr.info.info_len = sizeof(info);
	attr.info.info = (__u64)(unsigned long)&info;
	if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &attr)) {
		fprintf(stderr, "bpfquery: reading %s's info failed: %s\n", pin, strerror(errno));
		goto out;
	}
	if (info.type != BPF_MAP_TYPE_ARRAY || !(info.map_flags & BPF_F_MMAPABLE) ||
	    off % 8 || off + 8 > info.value_size || info.value_size > (__u32)page) {
		fprintf(stderr, "bpfquery: %s is not a mmapable array whose value holds a u64 at %llu\n",
			pin, off);
		goto out;
	}
	mem = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED) {
		fprintf(stderr, "bpfquery: mapping %s failed: %s\n", pin, strerror(errno));
		goto out;
	}
	printf("%llu\n", (unsigned long long)__atomic_add_fetch((__u64 *)((char *)mem + off),
								n, __ATOMIC_SEQ_CST));
	munmap(mem, (size_t)page);
	rc = 0;
out:
	close(fd);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "cgroup"))
		return query_cgroup(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "links"))
		return list_links();
	if (argc == 2 && !strcmp(argv[1], "stats"))
		return prog_stats();
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "u64"))
		return map_u64(argv[2], argc == 4 ? argv[3] : NULL);
	if (argc == 5 && !strcmp(argv[1], "add"))
		return map_add(argv[2], argv[3], argv[4]);
	fprintf(stderr, "usage: bpfquery cgroup DIR | bpfquery links | bpfquery stats | bpfquery u64 PIN [KEY] | bpfquery add PIN OFFSET N\n");
	return 2;
}
