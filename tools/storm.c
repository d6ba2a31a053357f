// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * storm: a storm of denials for the event-pipeline benchmark
 * (tests/bench/events.sh), and the kernel-side bookkeeping around it.
 *
 *   storm --bpffs DIR --dst ADDR PORT [--threads N] [--seconds S]
 *         [--rate R | --fill-stopped] [--agent-pid PID] [--log FILE]
 *         [--samples FILE]
 *
 * N threads (default 1) each send 1-byte UDP datagrams with unconnected
 * sendto() to ADDR:PORT, which the sandbox's policy denies: every call
 * must fail with EPERM, and each one makes exactly one `deny` record.
 * Without --rate they send as fast as they can for S seconds (default
 * 10); with --rate R they send R*S datagrams in all, paced to R per second
 * (each thread R/N): datagram i of a thread is due at start + i/(R/N); a
 * thread ahead of its schedule by more than PACE_SLACK_NS sleeps until
 * the next one is due (so bursts stay below ~5 datagrams), one behind
 * sends back to back until it has caught up.
 * --fill-stopped (with --agent-pid) measures the logger alone: it stops
 * the agent (SIGSTOP), fills the ring to 90% of its capacity as fast as
 * it can (no record is lost), resumes the agent (SIGCONT) and times how
 * long the agent takes to write the backlog out; the agent then has a
 * core to itself, with no producer competing for it.
 *
 * Run it inside the sandbox cgroup and a private network namespace; it
 * reads, from the pins under DIR (include/lifecycle.h):
 *   maps/bss         ev_produced and ev_lost, the kernel's counters;
 *   maps/rb          the ring's producer and consumer positions (mapped
 *                    read-only). The agent moves the consumer position
 *                    only after it has written the records before it out
 *                    (agent/events.c), so consumer / record size counts
 *                    records logged, in steps of the agent's batch;
 *   maps/agent_meta  lost_reported: how much of ev_lost the agent has
 *                    turned into `lost` records.
 * A monitor (the main thread) samples them every SAMPLE_US_FAST while no
 * record has been lost yet in the first second, and every SAMPLE_US_SLOW
 * after, with the size
 * of --log FILE (the agent's log: how far its writes have got, byte-exact)
 * and the datagrams sent so far; --samples FILE gets every sample, one a
 * line: "T_NS SENT PRODUCED LOST CONS_RECORDS LOG_BYTES" (T_NS from the
 * start of the storm, counters since it).
 *
 * After the storm it waits (up to DRAIN_TIMEOUT_S) until the agent has
 * drained: the ring is empty and every lost record is reported. Then it
 * prints one "key=value" a line:
 *   sent, eperm, other_errno, allowed   the datagrams, and how they ended
 *   storm_ns, rate                      the storm's length; sent/s over it
 *   drain_ns                            storm end (--fill-stopped: the
 *                                       SIGCONT) to drained
 *   drain_rate                          --fill-stopped: records / drain_ns
 *   produced, lost                      kernel counters, grown since start
 *   cons_records                        records the consumer moved over
 *   first_loss_ns                       first sample that saw ev_lost grow
 *                                       (-1: none); with at_loss_cons and
 *                                       at_loss_log_bytes, sampled then
 *   storm_end_cons, storm_end_log_bytes sampled when the storm ended
 *   agent_cpu_ticks, clk_tck            --agent-pid's utime+stime from the
 *                                       start of the storm to drained
 *   agent_hwm_kb                        its VmHWM, reset at the start
 *                                       (clear_refs 5): its peak RSS
 *                                       during this storm
 * Exit status: 0; 1 when a datagram was not denied with EPERM (the policy
 * or the sandbox is wrong: the benchmark would measure something else);
 * 2 for a usage or setup error; 3 when the agent did not drain in time.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>

#include "events.h"
#include "lifecycle.h"
/* Only for struct stockade__bss: where ev_produced and ev_lost lie in the
 * pinned .bss, as the agent itself reads them (nothing of libbpf is
 * called, so no link against it). */
#include "stockade.skel.h"

#define MAX_THREADS	64
#define PACE_SLACK_NS	50000
#define SAMPLE_US_FAST	250
#define SAMPLE_US_SLOW	5000
#define DRAIN_TIMEOUT_S	60
/* Every record of this storm is a struct event (a network denial): the
 * ring's 8-byte header, then the record, rounded up to 8 bytes. */
#define REC_BYTES	((sizeof(struct event) + BPF_RINGBUF_HDR_SZ + 7) & ~(size_t)7)

struct worker {
	pthread_t th;
	int idx;
	/* Written by the worker only; read by the monitor. */
	uint64_t sent, eperm, other, allowed;
	char pad[64];
};

struct sample {
	int64_t t;
	uint64_t sent, produced, lost, cons, log_bytes;
};

static struct {
	const char *bpffs, *log, *samples;
	struct sockaddr_in dst;
	int threads;
	double seconds, rate;
	int agent_pid;
	bool fill_stopped;
	uint64_t count;	/* --fill-stopped: datagrams in all */
	/* set up by main */
	int bss_fd, meta_fd, rb_fd;
	uint32_t bss_size;
	void *bss_buf;
	unsigned long *cons, *prod;
	void *cons_map, *prod_map;
	size_t page, ring_bytes;
	int64_t t0, t_end;
	pthread_barrier_t go;
	struct worker w[MAX_THREADS];
} S = { .threads = 1, .seconds = 10, .agent_pid = -1,
	.bss_fd = -1, .meta_fd = -1, .rb_fd = -1 };

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_until(int64_t t)
{
	struct timespec ts = { .tv_sec = t / 1000000000, .tv_nsec = t % 1000000000 };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return (int)syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static int pin_get(const char *name)
{
	char path[4096];
	union bpf_attr attr;
	int fd;

	snprintf(path, sizeof(path), "%s/maps/%s", S.bpffs, name);
	memset(&attr, 0, sizeof(attr));
	attr.pathname = (uint64_t)(uintptr_t)path;
	fd = sys_bpf(BPF_OBJ_GET, &attr);
	if (fd < 0)
		fprintf(stderr, "storm: opening the pinned map %s failed: %s; is an agent running with --bpffs %s?\n",
			path, strerror(errno), S.bpffs);
	return fd;
}

static int map_info(int fd, struct bpf_map_info *info)
{
	union bpf_attr attr;

	memset(info, 0, sizeof(*info));
	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = (uint32_t)fd;
	attr.info.info_len = sizeof(*info);
	attr.info.info = (uint64_t)(uintptr_t)info;
	return sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &attr);
}

static int lookup0(int fd, void *value)
{
	union bpf_attr attr;
	uint32_t zero = 0;

	memset(&attr, 0, sizeof(attr));
	attr.map_fd = (uint32_t)fd;
	attr.key = (uint64_t)(uintptr_t)&zero;
	attr.value = (uint64_t)(uintptr_t)value;
	return sys_bpf(BPF_MAP_LOOKUP_ELEM, &attr);
}

/* The kernel's counters; 0 on success. */
static int counters(uint64_t *produced, uint64_t *lost)
{
	struct stockade__bss bss;

	if (lookup0(S.bss_fd, S.bss_buf))
		return -errno;
	memcpy(&bss, S.bss_buf, sizeof(bss));
	*produced = bss.ev_produced;
	*lost = bss.ev_lost;
	return 0;
}

static int setup_maps(void)
{
	struct bpf_map_info info;

	S.bss_fd = pin_get("bss");
	S.meta_fd = pin_get("agent_meta");
	S.rb_fd = pin_get("rb");
	if (S.bss_fd < 0 || S.meta_fd < 0 || S.rb_fd < 0)
		return -1;
	if (map_info(S.bss_fd, &info) || info.value_size < sizeof(struct stockade__bss)) {
		fprintf(stderr, "storm: the pinned bss is not this build's (value size %u); rebuild storm with the agent\n",
			info.value_size);
		return -1;
	}
	S.bss_size = info.value_size;
	S.bss_buf = calloc(1, S.bss_size);
	if (!S.bss_buf)
		return -1;
	if (map_info(S.rb_fd, &info) || info.type != BPF_MAP_TYPE_RINGBUF) {
		fprintf(stderr, "storm: %s/maps/rb is not a ring buffer\n", S.bpffs);
		return -1;
	}
	/* Read-only: the consumer page is the agent's to write. */
	S.page = (size_t)sysconf(_SC_PAGESIZE);
	S.cons_map = mmap(NULL, S.page, PROT_READ, MAP_SHARED, S.rb_fd, 0);
	S.prod_map = mmap(NULL, S.page, PROT_READ, MAP_SHARED, S.rb_fd, (off_t)S.page);
	if (S.cons_map == MAP_FAILED || S.prod_map == MAP_FAILED) {
		fprintf(stderr, "storm: mapping the ring's positions failed: %s\n", strerror(errno));
		return -1;
	}
	S.cons = S.cons_map;
	S.prod = S.prod_map;
	S.ring_bytes = info.max_entries;
	return 0;
}

static uint64_t log_bytes(void)
{
	struct stat st;

	if (!S.log || stat(S.log, &st))
		return 0;
	return (uint64_t)st.st_size;
}

/* utime + stime, in clock ticks; -1 when unreadable. */
static long long agent_cpu(void)
{
	char path[64], buf[4096], *p;
	unsigned long long ut, st;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", S.agent_pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* comm may hold spaces and parentheses: fields count from the last ')'. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
			 &ut, &st) != 2)
		return -1;
	return (long long)(ut + st);
}

static int agent_hwm_reset(void)
{
	char path[64];
	int fd, ok;

	snprintf(path, sizeof(path), "/proc/%d/clear_refs", S.agent_pid);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ok = write(fd, "5", 1) == 1;
	close(fd);
	return ok ? 0 : -1;
}

static long agent_hwm_kb(void)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", S.agent_pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* SIGSTOP the agent and wait until it is stopped: the ring then only fills. */
static int agent_stop(void)
{
	char path[64], buf[512], *p;
	int fd, tries;
	ssize_t n;

	if (kill(S.agent_pid, SIGSTOP)) {
		fprintf(stderr, "storm: stopping the agent (pid %d) failed: %s\n", S.agent_pid,
			strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/%d/stat", S.agent_pid);
	for (tries = 0; tries < 1000; tries++) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			break;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			break;
		buf[n] = '\0';
		p = strrchr(buf, ')');
		if (p && p[1] == ' ' && p[2] == 'T')
			return 0;
		usleep(1000);
	}
	fprintf(stderr, "storm: the agent (pid %d) did not stop\n", S.agent_pid);
	kill(S.agent_pid, SIGCONT);
	return -1;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	const char byte = 0;
	uint64_t i, total = 0;
	int64_t period = 0, due, t;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (S.rate > 0) {
		total = (uint64_t)(S.rate * S.seconds / S.threads + 0.5);
		period = (int64_t)(1e9 * S.threads / S.rate);
	} else if (S.count) {
		/* The first thread takes the remainder. */
		total = S.count / S.threads + (w->idx ? 0 : S.count % S.threads);
	}
	pthread_barrier_wait(&S.go);
	if (fd < 0) {
		__atomic_store_n(&w->other, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	for (i = 0;; i++) {
		if (S.rate > 0) {
			if (i == total)
				break;
			/* Integer schedule: no drift over millions of sends. */
			due = S.t0 + (int64_t)i * period;
			t = now_ns();
			if (due - t > PACE_SLACK_NS)
				sleep_until(due);
		} else if (S.count) {
			if (i == total)
				break;
		} else if (!(i & 63) && now_ns() >= S.t_end) {
			break;
		}
		if (sendto(fd, &byte, 1, 0, (struct sockaddr *)&S.dst, sizeof(S.dst)) == 0)
			__atomic_store_n(&w->allowed, w->allowed + 1, __ATOMIC_RELAXED);
		else if (errno == EPERM)
			__atomic_store_n(&w->eperm, w->eperm + 1, __ATOMIC_RELAXED);
		else
			__atomic_store_n(&w->other, w->other + 1, __ATOMIC_RELAXED);
		__atomic_store_n(&w->sent, w->sent + 1, __ATOMIC_RELEASE);
	}
	close(fd);
	return NULL;
}

static uint64_t sent_total(void)
{
	uint64_t n = 0;
	int i;

	for (i = 0; i < S.threads; i++)
		n += __atomic_load_n(&S.w[i].sent, __ATOMIC_ACQUIRE);
	return n;
}

static int usage(void)
{
	fprintf(stderr, "usage: storm --bpffs DIR --dst ADDR PORT [--threads N] [--seconds S] [--rate R]\n"
			"             [--agent-pid PID] [--log FILE] [--samples FILE]\n");
	return 2;
}

/* What main measures: the monitor's samples, and the counters before the
 * storm, at its end and once the agent has drained it. */
struct run {
	struct sample *smp, at_loss, at_end;
	size_t n_smp, cap_smp;
	uint64_t produced0, lost0, produced1, lost1, cons0, cons1;
	uint64_t eperm, other, allowed;
	long long cpu0, cpu1;
	int64_t t_storm_end, t_drained;
};

/* The options into S: 0, or usage()'s 2. */
static int parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "bpffs", required_argument, NULL, 'b' },
		{ "dst", required_argument, NULL, 'd' },
		{ "threads", required_argument, NULL, 't' },
		{ "seconds", required_argument, NULL, 's' },
		{ "rate", required_argument, NULL, 'r' },
		{ "agent-pid", required_argument, NULL, 'p' },
		{ "log", required_argument, NULL, 'l' },
		{ "samples", required_argument, NULL, 'S' },
		{ "fill-stopped", no_argument, NULL, 'F' },
		{ 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'b': S.bpffs = optarg; break;
		case 'd':
			if (optind >= argc || inet_pton(AF_INET, optarg, &S.dst.sin_addr) != 1)
				return usage();
			S.dst.sin_family = AF_INET;
			S.dst.sin_port = htons((uint16_t)atoi(argv[optind++]));
			break;
		case 't': S.threads = atoi(optarg); break;
		case 's': S.seconds = atof(optarg); break;
		case 'r': S.rate = atof(optarg); break;
		case 'p': S.agent_pid = atoi(optarg); break;
		case 'l': S.log = optarg; break;
		case 'S': S.samples = optarg; break;
		case 'F': S.fill_stopped = true; break;
		default: return usage();
		}
	}
	if (!S.bpffs || !S.dst.sin_family || S.threads < 1 || S.threads > MAX_THREADS ||
	    S.seconds <= 0 || S.rate < 0 || optind != argc ||
	    (S.fill_stopped && (S.rate > 0 || S.agent_pid <= 0)))
		return usage();
	return 0;
}

/* The maps, the stopped agent (--fill-stopped), the workers waiting at
 * the barrier, the counters before; then the start. 0, or -1 (said). */
static int storm_start(struct run *r)
{
	int i;

	/* Sleeps end on time (default slack: 50 us), for the pacing and the
	 * monitor's sampling both. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	if (setup_maps())
		return -1;
	if (S.agent_pid > 0 && agent_hwm_reset())
		fprintf(stderr, "storm: resetting the agent's VmHWM failed: %s; its peak is over the agent's life\n",
			strerror(errno));
	if (S.fill_stopped) {
		/* 90%: the agent's own records (none expected) and the
		 * rounding of record sizes leave the ring room to spare. */
		S.count = S.ring_bytes / REC_BYTES * 9 / 10;
		if (agent_stop())
			return -1;
	}
	if (pthread_barrier_init(&S.go, NULL, (unsigned)S.threads + 1))
		return -1;
	for (i = 0; i < S.threads; i++) {
		S.w[i].idx = i;
		if (pthread_create(&S.w[i].th, NULL, worker_main, &S.w[i])) {
			fprintf(stderr, "storm: starting thread %d failed\n", i);
			return -1;	/* returning ends the waiting threads */
		}
	}
	if (counters(&r->produced0, &r->lost0)) {
		fprintf(stderr, "storm: reading the pinned bss failed: %s\n", strerror(errno));
		return -1;
	}
	r->cons0 = __atomic_load_n(S.cons, __ATOMIC_ACQUIRE);
	r->cpu0 = S.agent_pid > 0 ? agent_cpu() : -1;
	S.t0 = now_ns();
	S.t_end = S.t0 + (int64_t)(S.seconds * 1e9);
	pthread_barrier_wait(&S.go);
	return 0;
}

/* The monitor: sample until the storm has ended. 0, or -1 out of memory. */
static int storm_monitor(struct run *r)
{
	int64_t next = S.t0;
	struct sample cur;

	for (;;) {
		/* Fine-grained until the first loss, which then is placed to
		 * within SAMPLE_US_FAST (or 0.5% after the first second). */
		next += r->at_loss.t < 0 && next - S.t0 < 1000000000 ?
			SAMPLE_US_FAST * 1000 : SAMPLE_US_SLOW * 1000;
		sleep_until(next);
		cur.t = now_ns() - S.t0;
		cur.sent = sent_total();
		if (counters(&cur.produced, &cur.lost))
			break;
		cur.produced -= r->produced0;
		cur.lost -= r->lost0;
		cur.cons = (__atomic_load_n(S.cons, __ATOMIC_ACQUIRE) - r->cons0) / REC_BYTES;
		cur.log_bytes = log_bytes();
		if (r->n_smp == r->cap_smp) {
			struct sample *ns;

			r->cap_smp = r->cap_smp ? 2 * r->cap_smp : 4096;
			ns = realloc(r->smp, r->cap_smp * sizeof(*r->smp));
			if (!ns)
				return -1;
			r->smp = ns;
		}
		r->smp[r->n_smp++] = cur;
		if (r->at_loss.t < 0 && cur.lost)
			r->at_loss = cur;
		/* Done when every worker has returned (paced: its count sent;
		 * unthrottled: the clock ran out). */
		if (S.rate > 0 ? cur.sent >= (uint64_t)(S.rate * S.seconds / S.threads + 0.5) * (uint64_t)S.threads :
		    S.count ? cur.sent >= S.count : cur.t >= S.t_end - S.t0)
			break;
	}
	return 0;
}

/* The workers joined and their counts summed; a stopped agent goes on. */
static void storm_end(struct run *r)
{
	int i;

	for (i = 0; i < S.threads; i++)
		pthread_join(S.w[i].th, NULL);
	r->t_storm_end = now_ns();
	r->at_end.t = r->t_storm_end - S.t0;
	r->at_end.cons = (__atomic_load_n(S.cons, __ATOMIC_ACQUIRE) - r->cons0) / REC_BYTES;
	r->at_end.log_bytes = log_bytes();
	for (i = 0; i < S.threads; i++) {
		r->eperm += S.w[i].eperm;
		r->other += S.w[i].other;
		r->allowed += S.w[i].allowed;
	}
	if (S.fill_stopped) {
		r->t_storm_end = now_ns();
		kill(S.agent_pid, SIGCONT);
	}
}

/* Drained: the ring empty, every loss reported (the agent writes the
 * lost record, flushes, then updates agent_meta). 0; 2, the counters
 * could not be read; 3, not drained within DRAIN_TIMEOUT_S. */
static int storm_drain(struct run *r)
{
	int64_t deadline = now_ns() + DRAIN_TIMEOUT_S * 1000000000LL;
	struct agent_meta meta;

	for (;;) {
		unsigned long cons = __atomic_load_n(S.cons, __ATOMIC_ACQUIRE);
		unsigned long prod = __atomic_load_n(S.prod, __ATOMIC_ACQUIRE);

		if (counters(&r->produced1, &r->lost1) || lookup0(S.meta_fd, &meta)) {
			fprintf(stderr, "storm: reading the pinned counters failed: %s\n", strerror(errno));
			return 2;
		}
		if (cons == prod && meta.lost_reported >= r->lost1)
			break;
		if (now_ns() > deadline) {
			fprintf(stderr, "storm: the agent did not drain within %d s (ring %lu bytes behind, %llu lost not reported)\n",
				DRAIN_TIMEOUT_S, prod - cons,
				(unsigned long long)(r->lost1 - meta.lost_reported));
			return 3;
		}
		sleep_until(now_ns() + (S.fill_stopped ? 100000 : 1000000));
	}
	r->t_drained = now_ns();
	r->cons1 = __atomic_load_n(S.cons, __ATOMIC_ACQUIRE);
	if (S.agent_pid > 0)
		r->cpu1 = agent_cpu();
	return 0;
}

/* --samples FILE: every sample, one line each. 0, or -1 (said). */
static int write_samples(const struct run *r)
{
	FILE *sf;

	if (!S.samples)
		return 0;
	sf = fopen(S.samples, "we");
	if (!sf) {
		fprintf(stderr, "storm: cannot write %s: %s\n", S.samples, strerror(errno));
		return -1;
	}
	fprintf(sf, "# T_NS SENT PRODUCED LOST CONS_RECORDS LOG_BYTES\n");
	for (size_t k = 0; k < r->n_smp; k++)
		fprintf(sf, "%lld %llu %llu %llu %llu %llu\n", (long long)r->smp[k].t,
			(unsigned long long)r->smp[k].sent,
			(unsigned long long)r->smp[k].produced,
			(unsigned long long)r->smp[k].lost,
			(unsigned long long)r->smp[k].cons,
			(unsigned long long)r->smp[k].log_bytes);
	if (fclose(sf)) {
		fprintf(stderr, "storm: writing %s failed\n", S.samples);
		return -1;
	}
	return 0;
}

/* The KEY=VALUE report; 1 when a datagram was not denied. */
static int report(const struct run *r)
{
	printf("sent=%llu\neperm=%llu\nother_errno=%llu\nallowed=%llu\n",
	       (unsigned long long)sent_total(), (unsigned long long)r->eperm,
	       (unsigned long long)r->other, (unsigned long long)r->allowed);
	printf("storm_ns=%lld\nrate=%.1f\ndrain_ns=%lld\n", (long long)r->at_end.t,
	       (double)sent_total() * 1e9 / (double)r->at_end.t,
	       (long long)(r->t_drained - r->t_storm_end));
	if (S.fill_stopped)
		printf("drain_rate=%.0f\n", (double)(r->cons1 - r->cons0) / REC_BYTES * 1e9 /
					   (double)(r->t_drained - r->t_storm_end));
	printf("produced=%llu\nlost=%llu\ncons_records=%llu\n",
	       (unsigned long long)(r->produced1 - r->produced0),
	       (unsigned long long)(r->lost1 - r->lost0),
	       (unsigned long long)((r->cons1 - r->cons0) / REC_BYTES));
	printf("first_loss_ns=%lld\nat_loss_cons=%llu\nat_loss_log_bytes=%llu\n",
	       (long long)r->at_loss.t, (unsigned long long)r->at_loss.cons,
	       (unsigned long long)r->at_loss.log_bytes);
	printf("storm_end_cons=%llu\nstorm_end_log_bytes=%llu\n",
	       (unsigned long long)r->at_end.cons, (unsigned long long)r->at_end.log_bytes);
	if (S.agent_pid > 0)
		printf("agent_cpu_ticks=%lld\nclk_tck=%ld\nagent_hwm_kb=%ld\n",
		       r->cpu0 >= 0 && r->cpu1 >= 0 ? r->cpu1 - r->cpu0 : -1,
		       sysconf(_SC_CLK_TCK), agent_hwm_kb());
	if (r->other || r->allowed) {
		fprintf(stderr, "storm: %llu datagrams were allowed and %llu failed otherwise than EPERM: the sandbox's policy must deny every one\n",
			(unsigned long long)r->allowed, (unsigned long long)r->other);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct run r = { .at_loss = { .t = -1 }, .cpu0 = -1, .cpu1 = -1 };
	int rc = parse_args(argc, argv);

	if (rc)
		return rc;
	rc = 2;
	if (storm_start(&r) || storm_monitor(&r))
		goto out;
	storm_end(&r);
	rc = storm_drain(&r);
	if (rc)
		goto out;
	rc = write_samples(&r) ? 2 : report(&r);
out:
	/* Whatever went wrong, the agent must not stay stopped. */
	if (S.fill_stopped)
		kill(S.agent_pid, SIGCONT);
	free(r.smp);
	free(S.bss_buf);
	return rc;
}
