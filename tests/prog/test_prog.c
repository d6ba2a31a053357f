// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The BPF programs run by the kernel on crafted input, with
 * bpf_prog_test_run_opts (BPF_PROG_TEST_RUN), as the kernel's test_progs
 * does: no attach, no traffic, the maps of a private skeleton (nothing is
 * pinned, nothing the agent uses is touched). Root.
 *
 *   test_egress_*
 *              stk_egress (bpf/limits.bpf.c), the cgroup_skb/egress
 *              counter: one crafted IPv4/UDP packet, run `repeat` times,
 *              from a process in a test cgroup; sb_count must then hold
 *              the bytes and packets, in its own sandbox root's entry, in
 *              its ancestor's when only that is a sandbox, its root's
 *              when its own entry names another, its own when it holds
 *              counters (roots only: taken before any sandboxes lookup),
 *              and nowhere when it is in none. The verdict is always 1
 *              (never drops).
 *   sock_addr_* / sock_create
 *              the cgroup/connect4, connect6, sendmsg4, bind4 and
 *              sock_create programs (bpf/net.bpf.c). 6.18 has no
 *              test_run for these program types (it answers ENOTSUPP):
 *              each is then skipped, with the kernel's answer, never
 *              counted as passed. A kernel that runs them must return a
 *              verdict, 0 or 1.
 * BPF-LSM and tracing programs are not loaded: this project's CI host,
 * like many, refuses them (EPERM); the VM suite covers them live.
 *
 * The skb test run builds its socket in the calling task's cgroup
 * (net/bpf/test_run.c: sk_alloc -> cgroup_sk_alloc), which is what
 * bpf_skb_cgroup_id() then reads: so the test moves itself into the
 * cgroup it means, and back.
 *
 * Environment: CGROUP_ROOT (the cgroup2 mount; detected when unset).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "test.h"
#include "sandbox.h"
#include "stockade_limits.h"
#include "stockade.skel.h"

#define CG_NAME		"stockade-prog"
#define REPEAT		3

static struct stockade *skel;
static char cg_root[128], cg_top[192], cg_kid[224], cg_home[512];
static const char *no_run;	/* why nothing can run here, or NULL */
static char no_run_buf[512];

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	return level == LIBBPF_DEBUG ? 0 : vfprintf(stderr, fmt, ap);
}

static bool is_cgroup2(const char *dir)
{
	char dev[64], mnt[256], type[64];
	bool yes = false;
	FILE *f = fopen("/proc/mounts", "r");

	if (!f)
		return false;
	while (fscanf(f, "%63s %255s %63s %*[^\n]", dev, mnt, type) == 3)
		if (!strcmp(mnt, dir))
			yes = !strcmp(type, "cgroup2");
	fclose(f);
	return yes;
}

static bool find_cgroup_root(void)
{
	static const char *const cand[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
	const char *env = getenv("CGROUP_ROOT");
	size_t i;

	if (env && *env) {
		snprintf(cg_root, sizeof(cg_root), "%s", env);
		return true;
	}
	for (i = 0; i < ARRAY_SIZE(cand); i++) {
		if (is_cgroup2(cand[i])) {
			snprintf(cg_root, sizeof(cg_root), "%s", cand[i]);
			return true;
		}
	}
	return false;
}

/* Where this process runs now (/proc/self/cgroup's "0::" line). */
static bool find_home(void)
{
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/self/cgroup", "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3))
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(cg_home, sizeof(cg_home), "%s%.380s", cg_root, line + 3);
		found = true;
	}
	fclose(f);
	return found;
}

static int join(const char *dir)
{
	char path[600], pid[32];
	int fd, n, ok;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = snprintf(pid, sizeof(pid), "%d\n", getpid());
	ok = write(fd, pid, (size_t)n) == n;
	n = errno;
	close(fd);
	return ok ? 0 : -n;
}

/* A cgroup2 directory's id: its inode number (kernfs node id, 64-bit). */
static __u64 cgroup_id(const char *dir)
{
	struct stat st;

	return stat(dir, &st) ? 0 : (__u64)st.st_ino;
}

static void disable_all_but_cgroup_programs(void)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, skel->obj) {
		switch (bpf_program__type(prog)) {
		case BPF_PROG_TYPE_CGROUP_SKB:
		case BPF_PROG_TYPE_CGROUP_SOCK_ADDR:
		case BPF_PROG_TYPE_CGROUP_SOCK:
		case BPF_PROG_TYPE_SYSCALL:	/* stk_ksyms */
			break;
		default:
			bpf_program__set_autoload(prog, false);
		}
	}
}

static int group_setup(void **state)
{
	int err;

	(void)state;
	libbpf_set_print(libbpf_quiet);
	if (geteuid() != 0) {
		no_run = "not root: loading BPF programs and moving between cgroups need it";
		return 0;
	}
	if (!find_cgroup_root()) {
		no_run = "no cgroup2 mount at /sys/fs/cgroup or /sys/fs/cgroup/unified (set CGROUP_ROOT)";
		return 0;
	}
	if (!find_home()) {
		no_run = "no cgroup2 line in /proc/self/cgroup";
		return 0;
	}
	snprintf(cg_top, sizeof(cg_top), "%s/" CG_NAME "-%d", cg_root, (int)getpid());
	snprintf(cg_kid, sizeof(cg_kid), "%s/kid", cg_top);
	if ((mkdir(cg_top, 0755) && errno != EEXIST) ||
	    (mkdir(cg_kid, 0755) && errno != EEXIST)) {
		snprintf(no_run_buf, sizeof(no_run_buf), "creating %s: %.200s",
			 cg_kid, strerror(errno));
		no_run = no_run_buf;
		return 0;
	}
	skel = stockade__open();
	if (!skel) {
		print_error("opening the BPF object: %s\n", strerror(errno));
		return -1;
	}
	disable_all_but_cgroup_programs();
	err = stockade__load(skel);
	if (err) {
		print_error("loading the cgroup programs: %s\n", strerror(-err));
		return -1;
	}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	stockade__destroy(skel);
	if (cg_home[0])
		join(cg_home);
	if (cg_kid[0])
		rmdir(cg_kid);
	if (cg_top[0])
		rmdir(cg_top);
	return 0;
}

/* ---- stk_egress --------------------------------------------------------- */

/* Ethernet + IPv4 + UDP + 22 bytes: 64 on the wire. */
struct __attribute__((packed)) udp_pkt {
	struct ethhdr eth;
	struct iphdr ip;
	struct udphdr udp;
	char payload[22];
};

static void craft(struct udp_pkt *p)
{
	memset(p, 0, sizeof(*p));
	p->eth.h_proto = htons(ETH_P_IP);
	p->ip.version = 4;
	p->ip.ihl = 5;
	p->ip.ttl = 64;
	p->ip.protocol = IPPROTO_UDP;
	p->ip.tot_len = htons(sizeof(*p) - sizeof(p->eth));
	p->ip.saddr = htonl(0x7f000001);
	p->ip.daddr = htonl(0x7f000001);
	p->udp.source = htons(40000);
	p->udp.dest = htons(9);
	p->udp.len = htons(sizeof(p->udp) + sizeof(p->payload));
	memcpy(p->payload, "stockade egress test", 20);
}

static void *percpu_counts(int *ncpu)
{
	*ncpu = libbpf_num_possible_cpus();
	return *ncpu > 0 ? calloc((size_t)*ncpu, sizeof(struct sb_count)) : NULL;
}

/* sb_count[root], summed over the CPUs; false when there is no entry. */
static bool counts_of(__u64 root, __u64 *bytes, __u64 *packets)
{
	struct sb_count *v;
	int ncpu, i, err;

	*bytes = *packets = 0;
	v = percpu_counts(&ncpu);
	if (!EXPECT(v))
		return false;
	err = bpf_map__lookup_elem(skel->maps.sb_count, &root, sizeof(root), v,
				   (size_t)ncpu * sizeof(*v), 0);
	for (i = 0; !err && i < ncpu; i++) {
		*bytes += v[i].egress_bytes;
		*packets += v[i].egress_packets;
	}
	free(v);
	return !err;
}

/* A sandbox entry for id, confined through root. */
static bool add_entry(__u64 id, __u64 root)
{
	struct sandbox sb = { .policy_id = SANDBOX_ENTRY_SANDBOX, .slot = 0,
			      .root_id = root };

	return EXPECT(bpf_map__update_elem(skel->maps.sandboxes, &id, sizeof(id),
					   &sb, sizeof(sb), BPF_ANY) == 0);
}

/* Zeroed counters for id. */
static bool add_counters(__u64 id)
{
	struct sb_count *v;
	int ncpu, err;

	v = percpu_counts(&ncpu);
	if (!EXPECT(v))
		return false;
	err = bpf_map__update_elem(skel->maps.sb_count, &id, sizeof(id), v,
				   (size_t)ncpu * sizeof(*v), BPF_ANY);
	free(v);
	return EXPECT(err == 0);
}

/* A sandbox root entry for id, with zeroed counters. */
static bool add_sandbox(__u64 id)
{
	return add_entry(id, id) && add_counters(id);
}

static void clear_maps(void)
{
	__u64 ids[2] = { cgroup_id(cg_top), cgroup_id(cg_kid) };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ids); i++) {
		bpf_map__delete_elem(skel->maps.sandboxes, &ids[i], sizeof(ids[i]), 0);
		bpf_map__delete_elem(skel->maps.sb_count, &ids[i], sizeof(ids[i]), 0);
	}
}

/* Run stk_egress REPEAT times on the packet (size bytes at pkt) from the
 * cgroup dir. */
static bool run_egress_pkt(const char *dir, const void *pkt, __u32 size,
			   __u32 *retval)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt,
		    .data_size_in = size, .repeat = REPEAT);
	int err;

	if (!EXPECT_EQ(join(dir), 0))
		return false;
	err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.stk_egress), &opts);
	EXPECT_EQ(join(cg_home), 0);
	if (!EXPECT_EQ(err, 0))
		return false;
	*retval = opts.retval;
	return true;
}

/* Run stk_egress REPEAT times on the plain UDP packet from the cgroup dir. */
static bool run_egress(const char *dir, __u32 *retval)
{
	struct udp_pkt pkt;

	craft(&pkt);
	return run_egress_pkt(dir, &pkt, sizeof(pkt), retval);
}

/* What the program sees as skb->len: the test run pulls the Ethernet
 * header (eth_type_trans) and, for a cgroup_skb program, does not push it
 * back, as on a real egress path, which starts at the network header. */
#define PKT_LEN		(sizeof(struct udp_pkt) - sizeof(struct ethhdr))

/* sb_count[root] holds the REPEAT runs, bytes and packets. */
static void expect_counted(__u64 root)
{
	__u64 bytes, packets;

	if (EXPECT(counts_of(root, &bytes, &packets))) {
		EXPECT_EQ(bytes, REPEAT * PKT_LEN);
		EXPECT_EQ(packets, REPEAT);
	}
}

static void test_egress_own_entry(void **state)
{
	__u64 id = cgroup_id(cg_kid);
	__u32 retval = 0;

	(void)state;
	if (no_run && SKIP("%s", no_run))
		goto out;
	clear_maps();
	if (!add_sandbox(id) || !run_egress(cg_kid, &retval))
		goto out;
	EXPECT_EQ(retval, 1);
	expect_counted(id);
out:
	DONE();
}

/* Only the parent is a sandbox (a cgroup created since the agent's last
 * scan): the packet counts for the parent's root. */
static void test_egress_ancestor(void **state)
{
	__u64 top = cgroup_id(cg_top), bytes, packets;
	__u32 retval = 0;

	(void)state;
	if (no_run && SKIP("%s", no_run))
		goto out;
	clear_maps();
	if (!add_sandbox(top) || !run_egress(cg_kid, &retval))
		goto out;
	EXPECT_EQ(retval, 1);
	expect_counted(top);
	EXPECT(!counts_of(cgroup_id(cg_kid), &bytes, &packets));
out:
	DONE();
}

/* A classified child: its own entry names its parent as root, whose
 * counters alone exist: the packet counts there. */
static void test_egress_child_entry(void **state)
{
	__u64 top = cgroup_id(cg_top), kid = cgroup_id(cg_kid), bytes, packets;
	__u32 retval = 0;

	(void)state;
	if (no_run && SKIP("%s", no_run))
		goto out;
	clear_maps();
	if (!add_sandbox(top) || !add_entry(kid, top) || !run_egress(cg_kid, &retval))
		goto out;
	EXPECT_EQ(retval, 1);
	expect_counted(top);
	EXPECT(!counts_of(kid, &bytes, &packets));
out:
	DONE();
}

/* sb_count holds sandbox roots only, so counters under the socket's own
 * cgroup are its root's: taken in one lookup, before any sandboxes
 * lookup (with none here, the packet still counts there). */
static void test_egress_root_counters_first(void **state)
{
	__u64 kid = cgroup_id(cg_kid), bytes, packets;
	__u32 retval = 0;

	(void)state;
	if (no_run && SKIP("%s", no_run))
		goto out;
	clear_maps();
	if (!add_counters(kid) || !run_egress(cg_kid, &retval))
		goto out;
	EXPECT_EQ(retval, 1);
	expect_counted(kid);
	EXPECT(!counts_of(cgroup_id(cg_top), &bytes, &packets));
out:
	DONE();
}

/* In no sandbox: allowed, counted nowhere (no entry is created). */
static void test_egress_outside(void **state)
{
	__u64 bytes, packets;
	__u32 retval = 0;

	(void)state;
	if (no_run && SKIP("%s", no_run))
		goto out;
	clear_maps();
	if (!run_egress(cg_kid, &retval))
		goto out;
	EXPECT_EQ(retval, 1);
	EXPECT(!counts_of(cgroup_id(cg_kid), &bytes, &packets));
	EXPECT(!counts_of(cgroup_id(cg_top), &bytes, &packets));
out:
	DONE();
}

/* A sandbox whose counters entry is missing: allowed, nothing written. */
static void test_egress_no_counters(void **state)
{
	__u64 id = cgroup_id(cg_kid), bytes, packets;
	__u32 retval = 0;

	(void)state;
	if (no_run && SKIP("%s", no_run))
		goto out;
	clear_maps();
	if (!add_entry(id, id))
		goto out;
	if (!run_egress(cg_kid, &retval))
		goto out;
	EXPECT_EQ(retval, 1);
	EXPECT(!counts_of(id, &bytes, &packets));
out:
	DONE();
}

/* The UDP packet with 8 bytes of IPv4 options: a no-op, then option
 * kind with length 7 (pointer 4, one address, 127.0.0.3). */
struct __attribute__((packed)) opt_pkt {
	struct ethhdr eth;
	struct iphdr ip;
	__u8 opt[8];
	struct udphdr udp;
	char payload[22];
};

static void craft_opt(struct opt_pkt *p, __u8 kind)
{
	struct udp_pkt u;

	craft(&u);
	memset(p, 0, sizeof(*p));
	p->eth = u.eth;
	p->ip = u.ip;
	p->ip.ihl = 7;
	p->ip.tot_len = htons(sizeof(*p) - sizeof(p->eth));
	p->opt[0] = 1;
	p->opt[1] = kind;
	p->opt[2] = 7;
	p->opt[3] = 4;
	p->opt[4] = 127;
	p->opt[7] = 3;
	p->udp = u.udp;
	memcpy(p->payload, u.payload, sizeof(p->payload));
}

/* A source route (LSRR, SSRR) from a sandbox: dropped, whatever its
 * counters; a record route option (7) is no source route: let through. */
static void test_egress_source_route(void **state)
{
	__u64 id = cgroup_id(cg_kid), bytes, packets;
	static const __u8 kinds[] = { 0x83, 0x89, 0x07 };
	struct opt_pkt pkt;
	__u32 retval = 9;
	size_t i;

	(void)state;
	if (no_run && SKIP("%s", no_run))
		goto out;
	for (i = 0; i < ARRAY_SIZE(kinds); i++) {
		clear_maps();
		if (!add_sandbox(id))
			goto out;
		craft_opt(&pkt, kinds[i]);
		if (!run_egress_pkt(cg_kid, &pkt, sizeof(pkt), &retval))
			goto out;
		EXPECT_EQ(retval, kinds[i] == 0x07 ? 1 : 0);
		/* Counted as sent either way: the counters come first. */
		if (EXPECT(counts_of(id, &bytes, &packets)))
			EXPECT_EQ(packets, REPEAT);
	}
	/* No entry anywhere, yet the program ran (attached above): closed. */
	clear_maps();
	craft_opt(&pkt, 0x83);
	if (run_egress_pkt(cg_kid, &pkt, sizeof(pkt), &retval))
		EXPECT_EQ(retval, 0);
out:
	DONE();
}

/* The UDP packet with the most IPv4 options, 40 bytes (ihl 15). */
struct __attribute__((packed)) opt40_pkt {
	struct ethhdr eth;
	struct iphdr ip;
	__u8 opt[40];
	struct udphdr udp;
	char payload[22];
};

/* opt40_pkt with ENDS of its options: 'n' a no-op, 'r' a record route
 * (7) of length 11, 's' a loose source route of length 7, 'x' a loose
 * source route's type alone, 'e' the end of the list; the rest of the
 * 40 bytes no-ops too. */
static void craft_opt40(struct opt40_pkt *p, const char *ends)
{
	struct udp_pkt u;
	size_t i = 0;

	craft(&u);
	memset(p, 0, sizeof(*p));
	p->eth = u.eth;
	p->ip = u.ip;
	p->ip.ihl = 15;
	p->ip.tot_len = htons(sizeof(*p) - sizeof(p->eth));
	memset(p->opt, 1, sizeof(p->opt));
	for (; *ends && i < sizeof(p->opt); ends++) {
		switch (*ends) {
		case 'r':
			p->opt[i] = 7;
			p->opt[i + 1] = 11;
			p->opt[i + 2] = 4;
			i += 11;
			break;
		case 's':
			p->opt[i] = 0x83;
			p->opt[i + 1] = 7;
			p->opt[i + 2] = 4;
			p->opt[i + 3] = 127;
			p->opt[i + 6] = 3;
			i += 7;
			break;
		case 'e':
			p->opt[i++] = 0;
			break;
		case 'x':
			p->opt[i++] = 0x83;
			break;
		default:
			i++;
		}
	}
	p->udp = u.udp;
	memcpy(p->payload, u.payload, sizeof(p->payload));
}

/* The option walk goes through the whole 40 bytes: a source route last,
 * behind a record route and no-ops (33 no-ops, then one: its 34th
 * option), is found; none behind the list's end is looked for; 40
 * no-ops are no source route. A header with nothing after it (bare: a
 * raw socket's) whose last byte is a source route's type: dropped; one
 * whose last byte is a no-op: sent. */
static void test_egress_source_route_last(void **state)
{
	static const struct {
		const char *ends;
		bool bare;
		__u32 want;
	} cases[] = {
		{ "r" "nnnnnnnnnnnnnnnnnnnnnn" "s", false, 0 },
		{ "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn" "s", false, 0 },
		{ "r" "e" "nnnnnnnnnnnnnnnnnnnnn" "s", false, 1 },
		{ "r" "r" "r" "nnnnnnn", false, 1 },
		{ "", false, 1 },	/* 40 no-ops: 40 options walked */
		{ "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn" "x", true, 0 },
		{ "", true, 1 },
	};
	__u64 id = cgroup_id(cg_kid);
	struct opt40_pkt pkt;
	__u32 retval = 9, size;
	size_t i;

	(void)state;
	if (no_run && SKIP("%s", no_run))
		goto out;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		clear_maps();
		if (!add_sandbox(id))
			goto out;
		craft_opt40(&pkt, cases[i].ends);
		size = sizeof(pkt);
		if (cases[i].bare) {
			size = offsetof(struct opt40_pkt, udp);
			pkt.ip.tot_len = htons(size - sizeof(pkt.eth));
		}
		if (!run_egress_pkt(cg_kid, &pkt, size, &retval))
			goto out;
		if (retval != cases[i].want)
			print_error("case %zu (%s): retval %u, want %u\n", i,
				    cases[i].ends, retval, cases[i].want);
		EXPECT_EQ(retval, cases[i].want);
	}
out:
	DONE();
}

/* IPv6 + a destination options header + a routing header + UDP: the
 * routing header is found past the first extension header. */
struct __attribute__((packed)) rt6_pkt {
	struct ethhdr eth;
	struct ipv6hdr ip6;
	__u8 dst[8];		/* next 43, length 0, PadN */
	__u8 rt[24];		/* next 17, length 2, type 4, one segment */
	struct udphdr udp;
	char payload[8];
};

static void test_egress_ipv6_routing(void **state)
{
	__u64 id = cgroup_id(cg_kid);
	struct rt6_pkt pkt;
	__u32 retval = 9;

	(void)state;
	if (no_run && SKIP("%s", no_run))
		goto out;
	memset(&pkt, 0, sizeof(pkt));
	pkt.eth.h_proto = htons(ETH_P_IPV6);
	pkt.ip6.version = 6;
	pkt.ip6.payload_len = htons(sizeof(pkt) - sizeof(pkt.eth) - sizeof(pkt.ip6));
	pkt.ip6.nexthdr = 60;
	pkt.ip6.hop_limit = 64;
	pkt.ip6.saddr.s6_addr[15] = 1;
	pkt.ip6.daddr.s6_addr[15] = 1;
	pkt.dst[0] = 43;
	pkt.dst[2] = 1;		/* PadN, 4 bytes of padding */
	pkt.dst[3] = 4;
	pkt.rt[0] = IPPROTO_UDP;
	pkt.rt[1] = 2;
	pkt.rt[2] = 4;
	pkt.rt[23] = 1;
	pkt.udp.source = htons(40000);
	pkt.udp.dest = htons(9);
	pkt.udp.len = htons(sizeof(pkt.udp) + sizeof(pkt.payload));
	clear_maps();
	if (!add_sandbox(id))
		goto out;
	if (run_egress_pkt(cg_kid, &pkt, sizeof(pkt), &retval))
		EXPECT_EQ(retval, 0);
	/* The same with the destination options pointing at UDP: sent. */
	pkt.dst[0] = IPPROTO_UDP;
	if (run_egress_pkt(cg_kid, &pkt, sizeof(pkt), &retval))
		EXPECT_EQ(retval, 1);
out:
	DONE();
}

/* ---- the socket programs: test_run where the kernel has it -------------- */

struct sock_case {
	struct bpf_program *(*prog)(void);
	bool sock_addr;		/* struct bpf_sock_addr, else struct bpf_sock */
	__u32 family;
};

static struct bpf_program *p_connect4(void) { return skel->progs.stk_connect4; }
static struct bpf_program *p_connect6(void) { return skel->progs.stk_connect6; }
static struct bpf_program *p_sendmsg4(void) { return skel->progs.stk_sendmsg4; }
static struct bpf_program *p_bind4(void) { return skel->progs.stk_bind4; }
static struct bpf_program *p_sock_create(void) { return skel->progs.stk_sock_create; }

static const struct sock_case sock_cases[] = {
	{ p_connect4, true, 2 /* AF_INET */ },
	{ p_connect6, true, 10 /* AF_INET6 */ },
	{ p_sendmsg4, true, 2 },
	{ p_bind4, true, 2 },
	{ p_sock_create, false, 2 },
};

static void test_sock_prog(void **state)
{
	const struct sock_case *c = *state;
	struct bpf_sock_addr sa;
	struct bpf_sock sk;
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	int err;

	if (no_run && SKIP("%s", no_run))
		goto out;
	memset(&sa, 0, sizeof(sa));
	memset(&sk, 0, sizeof(sk));
	sa.user_family = c->family;
	sa.family = c->family;
	sa.type = 1;		/* SOCK_STREAM */
	sa.protocol = 6;	/* TCP */
	sa.user_ip4 = htonl(0x7f000001);
	sa.user_port = htons(9);
	sk.family = c->family;
	sk.type = 1;
	sk.protocol = 6;
	opts.ctx_in = c->sock_addr ? (void *)&sa : (void *)&sk;
	opts.ctx_size_in = c->sock_addr ? sizeof(sa) : sizeof(sk);
	err = bpf_prog_test_run_opts(bpf_program__fd(c->prog()), &opts);
	if (err) {
		/* ENOTSUPP (524) is the kernel's own, not in libc. */
		err = -err;
		SKIP("%s: BPF_PROG_TEST_RUN refused: %s (%d); this kernel cannot "
		     "test-run %s programs", bpf_program__name(c->prog()),
		     err == 524 ? "ENOTSUPP" : strerrorname_np(err) ?: "E?", err,
		     c->sock_addr ? "cgroup/sock_addr" : "cgroup/sock");
		goto out;
	}
	EXPECT(opts.retval == 0 || opts.retval == 1);
out:
	DONE();
}

/* ---- stk_ksyms ---------------------------------------------------------- */

/* name's address in /proc/kallsyms into *addr (0: not listed). */
static bool kallsyms_addr(const char *name, __u64 *addr)
{
	char line[512], sym[256], type;
	unsigned long long a;
	bool listed = false;
	FILE *f = fopen("/proc/kallsyms", "re");

	*addr = 0;
	if (!f)
		return false;
	while (!listed && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &type, sym) == 3 &&
		    !strcmp(sym, name)) {
			*addr = a;
			listed = true;
		}
	fclose(f);
	return listed;
}

/* Does /proc/kallsyms hide addresses from us (kptr_restrict), as the
 * helper then does (-EPERM)? Its first symbol's address is 0 then. */
static bool kallsyms_hidden(void)
{
	unsigned long long a = 0;
	FILE *f = fopen("/proc/kallsyms", "re");
	bool hidden = !f || fscanf(f, "%llx", &a) != 1 || !a;

	if (f)
		fclose(f);
	return hidden;
}

/* stk_ksyms (bpf/file.bpf.c) stores the addresses of rename_lock and
 * mount_lock that /proc/kallsyms lists (the decision cache's keys read
 * their sequences there), and leaves one it does not list as it was (0
 * in the agent's fresh .bss), returning -ENOENT. A kernel without
 * CONFIG_KALLSYMS_ALL lists neither: the test then sees only that; the
 * VM's kernels list both, and tests/vm/dcache.sh's answered cases fail
 * when the addresses are not found. */
static void test_ksyms(void **state)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	__u64 rename, mount;
	bool r = kallsyms_addr("rename_lock", &rename);
	bool m = kallsyms_addr("mount_lock", &mount);

	(void)state;
	if (no_run && SKIP("%s", no_run))
		goto out;
	if (kallsyms_hidden() &&
	    SKIP("/proc/kallsyms hides kernel addresses here (kptr_restrict): nothing to compare with"))
		goto out;
	/* A sentinel, left where the kernel lists no such symbol. */
	skel->bss->rename_lock_addr = 1;
	skel->bss->mount_lock_addr = 1;
	EXPECT_EQ(bpf_prog_test_run_opts(bpf_program__fd(skel->progs.stk_ksyms), &opts), 0);
	/* The first lookup's error: -ENOENT for a name not listed. */
	EXPECT_EQ((int)opts.retval, r && m ? 0 : -ENOENT);
	EXPECT_EQ(skel->bss->rename_lock_addr, r ? rename : 1);
	EXPECT_EQ(skel->bss->mount_lock_addr, m ? mount : 1);
out:
	DONE();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_egress_own_entry),
		cmocka_unit_test(test_egress_ancestor),
		cmocka_unit_test(test_egress_child_entry),
		cmocka_unit_test(test_egress_root_counters_first),
		cmocka_unit_test(test_egress_outside),
		cmocka_unit_test(test_egress_no_counters),
		cmocka_unit_test(test_egress_source_route),
		cmocka_unit_test(test_egress_source_route_last),
		cmocka_unit_test(test_egress_ipv6_routing),
#define SOCK(n, name) { name, test_sock_prog, NULL, NULL, (void *)&sock_cases[n] }
		SOCK(0, "sock_addr_connect4"),
		SOCK(1, "sock_addr_connect6"),
		SOCK(2, "sock_addr_sendmsg4"),
		SOCK(3, "sock_addr_bind4"),
		SOCK(4, "sock_create"),
#undef SOCK
		cmocka_unit_test(test_ksyms),
	};

	return cmocka_run_group_tests_name("prog", tests, group_setup,
					   group_teardown);
}
