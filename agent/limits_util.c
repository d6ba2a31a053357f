// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Limits and counting without BPF: values of cgroup files, OOM lines of
 * the kernel log, bursts, Prometheus text, status output, the state
 * file's reader (agent/limits_util.h).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "json.h"
#include "container.h"
#include "limits_util.h"

/* ---- cgroup file values ---- */

int cgv_parse(const char *s, uint64_t *v)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	if (!strncmp(s, "max", 3)) {
		end = (char *)s + 3;
		*v = CGV_MAX;
	} else {
		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		errno = 0;
		*v = strtoull(s, &end, 10);
		if (errno)
			return -EINVAL;
	}
	while (isspace((unsigned char)*end))
		end++;
	return *end ? -EINVAL : 0;
}

int cgv_keyed(const char *text, const char *key, uint64_t *v)
{
	size_t n = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, key, n) && p[n] == ' ') {
			char *end;

			errno = 0;
			*v = strtoull(p + n + 1, &end, 10);
			if (!errno && end != p + n + 1)
				return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -ENOENT;
}

void cgv_cpu_max(uint32_t milli, char *buf, size_t len)
{
	/* quota/period = milli/1000; the kernel wants quota >= 1000 us. */
	uint64_t period = milli >= 10 ? 100000 : 1000000;

	snprintf(buf, len, "%" PRIu64 " %" PRIu64,
		 (uint64_t)milli * period / 1000, period);
}

int cgv_cpu_milli(const char *s, uint64_t *milli)
{
	unsigned long long quota, period;

	while (isspace((unsigned char)*s))
		s++;
	if (!strncmp(s, "max", 3)) {
		*milli = CGV_MAX;
		return 0;
	}
	if (sscanf(s, "%llu %llu", &quota, &period) != 2 || !period)
		return -EINVAL;
	*milli = quota * 1000 / period;
	return 0;
}

const char *cgv_human(uint64_t bytes, char *buf, size_t len)
{
	static const char *const unit[] = { "Ki", "Mi", "Gi", "Ti", "Pi", "Ei" };
	double v = (double)bytes;
	int i = -1;

	if (bytes < 1024) {
		snprintf(buf, len, "%" PRIu64, bytes);
		return buf;
	}
	while (v >= 1024 && i < 5) {
		v /= 1024;
		i++;
	}
	snprintf(buf, len, "%.1f%s", v, unit[i]);
	return buf;
}

ssize_t cgv_read(const char *path, char *buf, size_t len)
{
	ssize_t n, got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	/* cgroup files answer in one read; loop for anything else. */
	while ((size_t)got + 1 < len) {
		n = read(fd, buf + got, len - 1 - (size_t)got);
		if (n < 0) {
			n = -errno;
			close(fd);
			return n;
		}
		if (!n)
			break;
		got += n;
	}
	close(fd);
	buf[got] = '\0';
	return got;
}

/* ---- OOM kills in /dev/kmsg ---- */

static void copy_field(char *dst, size_t len, const char *s, size_t n)
{
	if (n >= len)
		n = len - 1;
	memcpy(dst, s, n);
	dst[n] = '\0';
}

/* The value of "key=" in a comma-separated list, up to the next ','. */
static bool kv(const char *msg, size_t mlen, const char *key,
	       const char **val, size_t *vlen)
{
	size_t kn = strlen(key), i;

	for (i = 0; i + kn <= mlen; i++) {
		if ((i == 0 || msg[i - 1] == ',' || msg[i - 1] == ':') &&
		    !strncmp(msg + i, key, kn)) {
			const char *v = msg + i + kn;
			const char *end = memchr(v, ',', mlen - (size_t)(v - msg));

			*val = v;
			*vlen = end ? (size_t)(end - v) : mlen - (size_t)(v - msg);
			return true;
		}
	}
	return false;
}

bool kmsg_parse_oom(const char *rec, size_t len, struct oom_victim *v)
{
	const char *msg = memchr(rec, ';', len), *p, *val;
	size_t mlen, vlen;
	char num[16];

	if (!msg)
		return false;
	msg++;
	/* The message ends at the first newline; dictionary lines follow. */
	p = memchr(msg, '\n', len - (size_t)(msg - rec));
	mlen = p ? (size_t)(p - msg) : len - (size_t)(msg - rec);
	memset(v, 0, sizeof(*v));

	if (mlen > 9 && !strncmp(msg, "oom-kill:", 9)) {
		if (!kv(msg, mlen, "pid=", &val, &vlen) || !vlen || vlen >= sizeof(num))
			return false;
		copy_field(num, sizeof(num), val, vlen);
		v->pid = atoi(num);
		if (kv(msg, mlen, "task_memcg=", &val, &vlen)) {
			copy_field(v->memcg, sizeof(v->memcg), val, vlen);
			v->has_memcg = true;
		}
		if (kv(msg, mlen, "task=", &val, &vlen)) {
			copy_field(v->comm, sizeof(v->comm), val, vlen);
			v->has_comm = true;
		}
		return v->pid > 0;
	}
	/* "<why>: Killed process PID (COMM) total-vm:..."; COMM may hold
	 * spaces and parentheses, so its end is the last ") total-vm". */
	p = memmem(msg, mlen, "Killed process ", 15);
	if (!p)
		return false;
	p += 15;
	v->pid = atoi(p);
	p = memchr(p, '(', mlen - (size_t)(p - msg));
	if (p) {
		const char *end = memmem(p, mlen - (size_t)(p - msg), ") total-vm", 10);

		if (!end)
			end = memrchr(p, ')', mlen - (size_t)(p - msg));
		if (end) {
			copy_field(v->comm, sizeof(v->comm), p + 1, (size_t)(end - p - 1));
			v->has_comm = true;
		}
	}
	return v->pid > 0;
}

bool cgv_path_within(const char *inner, const char *outer)
{
	size_t n = strlen(outer);

	return !strncmp(inner, outer, n) && (inner[n] == '\0' || inner[n] == '/');
}

/* ---- bursts ---- */

void burst_add(struct burst *b, uint64_t now_ms, uint64_t n)
{
	if (!n)
		return;
	if (b->active && now_ms - b->last_ms >= BURST_QUIET_MS)
		b->active = false;
	if (!b->active) {
		b->active = true;
		b->logged = false;
		b->first_ms = now_ms;
		b->count = 0;
	}
	b->count += n;
	b->total += n;
	b->last_ms = now_ms;
}

uint64_t burst_due(struct burst *b, uint64_t now_ms)
{
	if (!b->active)
		return 0;
	if (b->logged) {
		if (now_ms - b->last_ms >= BURST_QUIET_MS)
			b->active = false;
		return 0;
	}
	if (now_ms - b->last_ms >= BURST_SETTLE_MS ||
	    now_ms - b->first_ms >= BURST_LOG_MS) {
		b->logged = true;
		return b->count;
	}
	return 0;
}

uint64_t burst_next_ms(const struct burst *b)
{
	uint64_t settle, log;

	if (!b->active || b->logged)
		return 0;
	settle = b->last_ms + BURST_SETTLE_MS;
	log = b->first_ms + BURST_LOG_MS;
	return settle < log ? settle : log;
}

/* ---- sandbox statistics ---- */

static bool read_file(const char *dir, const char *name, char *buf, size_t len)
{
	char path[4096 + 64];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return cgv_read(path, buf, len) >= 0;
}

static bool read_value(const char *dir, const char *name, uint64_t *v)
{
	char buf[64];

	return read_file(dir, name, buf, sizeof(buf)) && !cgv_parse(buf, v);
}

void sb_stats_read_cgroup(struct sb_stats *s, const char *dir)
{
	char buf[4096];

	if (read_file(dir, "cpu.stat", buf, sizeof(buf))) {
		if (!cgv_keyed(buf, "usage_usec", &s->cpu_usage_usec))
			s->have |= SB_CPU;
		/* Only with the cpu controller enabled. */
		if (!cgv_keyed(buf, "nr_throttled", &s->cpu_nr_throttled) &&
		    !cgv_keyed(buf, "throttled_usec", &s->cpu_throttled_usec))
			s->have |= SB_THROTTLE;
	}
	if (read_file(dir, "cpu.max", buf, sizeof(buf)) &&
	    !cgv_cpu_milli(buf, &s->cpu_max_milli))
		s->have |= SB_CPU_MAX;
	if (read_value(dir, "memory.current", &s->mem_current) &&
	    read_value(dir, "memory.max", &s->mem_max))
		s->have |= SB_MEM;
	if (read_value(dir, "memory.peak", &s->mem_peak))
		s->have |= SB_MEM_PEAK;
	if (read_file(dir, "memory.events", buf, sizeof(buf)) &&
	    !cgv_keyed(buf, "oom_kill", &s->oom_kills))
		s->have |= SB_OOM;
	if (read_value(dir, "pids.current", &s->pids_current) &&
	    read_value(dir, "pids.max", &s->pids_max) &&
	    read_file(dir, "pids.events", buf, sizeof(buf)) &&
	    !cgv_keyed(buf, "max", &s->pids_refused))
		s->have |= SB_PIDS;
}

void sb_count_sum(struct sb_count *out, const void *percpu, size_t n,
		  size_t stride)
{
	size_t cpu, k;

	memset(out, 0, sizeof(*out));
	for (cpu = 0; cpu < n; cpu++) {
		const struct sb_count *c = (const void *)((const char *)percpu +
							  cpu * stride);

		for (k = 0; k < LIMITS_KINDS; k++) {
			out->allowed[k] += c->allowed[k];
			out->denied[k] += c->denied[k];
			out->audited[k] += c->audited[k];
		}
		out->egress_bytes += c->egress_bytes;
		out->egress_packets += c->egress_packets;
	}
}

/* enum ev_kind (include/events.h). */
static const char *const kind_names[LIMITS_KINDS] = {
	[1] = "connect", [2] = "sendmsg", [3] = "socket", [4] = "file",
	[5] = "bpf", [6] = "ptrace", [7] = "signal", [8] = "mount",
	[9] = "cgroup", [10] = "unix", [11] = "userns", [12] = "fd_receive",
	[13] = "task", [14] = "capability", [15] = "kernel", [16] = "perf",
	[17] = "netlink", [18] = "bind", [19] = "listen", [20] = "sockopt",
	[21] = "key", [22] = "ipc", [23] = "notify",
};
#define KIND_CONNECT	1
#define KIND_SENDMSG	2
#define KIND_SOCKET	3
#define KIND_FILE	4

const char *limits_kind_name(unsigned int kind)
{
	return kind < LIMITS_KINDS ? kind_names[kind] : NULL;
}

/* ---- Prometheus text ---- */

void metrics_label(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), l;

	while (n) {
		if (*p == '\\' || *p == '"') {
			fputc('\\', f);
			fputc(*p, f);
			l = 1;
		} else if (*p == '\n') {
			fputs("\\n", f);
			l = 1;
		} else if ((l = json_utf8_len(p, n))) {
			fwrite(p, 1, l, f);
		} else {
			fputs("\xef\xbf\xbd", f);
			l = 1;
		}
		p += l;
		n -= l;
	}
}

enum metric_id {
	M_CONNECT_OK, M_CONNECT_DENY, M_SENDMSG_OK, M_SENDMSG_DENY,
	M_SOCKET_DENY, M_FILE_DENY, M_LSM_DENY, M_EGRESS_BYTES, M_EGRESS_PKTS,
	M_CPU, M_THROTTLED, M_THROTTLED_S, M_CPU_LIMIT, M_MEM, M_MEM_PEAK,
	M_MEM_LIMIT, M_OOM, M_PROCS, M_PROCS_LIMIT, M_FORK_REFUSED,
	M_RUNTIME_LEFT,
};

static const struct metric {
	enum metric_id id;
	unsigned int need;	/* enum sb_have */
	const char *name, *type, *help;
} metrics[] = {
	{ M_CONNECT_OK, SB_COUNTS, "stockade_connect_allowed_total", "counter",
	  "connect() calls the sandbox's policy allowed." },
	{ M_CONNECT_DENY, SB_COUNTS, "stockade_connect_denied_total", "counter",
	  "connect() calls denied (in mode audit: that would have been denied)." },
	{ M_SENDMSG_OK, SB_COUNTS, "stockade_sendmsg_allowed_total", "counter",
	  "sendmsg()/sendto() calls with a destination the policy allowed." },
	{ M_SENDMSG_DENY, SB_COUNTS, "stockade_sendmsg_denied_total", "counter",
	  "sendmsg()/sendto() calls denied (in mode audit: that would have been denied)." },
	{ M_SOCKET_DENY, SB_COUNTS, "stockade_socket_denied_total", "counter",
	  "Raw, ICMP and packet sockets refused at creation." },
	{ M_FILE_DENY, SB_COUNTS, "stockade_file_denials_total", "counter",
	  "File accesses denied by the BPF-LSM file scope." },
	{ M_LSM_DENY, SB_COUNTS, "stockade_lsm_denials_total", "counter",
	  "Other BPF-LSM denials, by kind." },
	{ M_EGRESS_BYTES, SB_COUNTS, "stockade_egress_bytes_total", "counter",
	  "Bytes of IP packets the sandbox sent, headers included." },
	{ M_EGRESS_PKTS, SB_COUNTS, "stockade_egress_packets_total", "counter",
	  "IP packets the sandbox sent." },
	{ M_CPU, SB_CPU, "stockade_cpu_usage_seconds_total", "counter",
	  "CPU time used by the sandbox cgroup (cpu.stat usage_usec)." },
	{ M_THROTTLED, SB_THROTTLE, "stockade_cpu_throttled_periods_total", "counter",
	  "Scheduler periods in which cpu.max throttled the sandbox (cpu.stat nr_throttled)." },
	{ M_THROTTLED_S, SB_THROTTLE, "stockade_cpu_throttled_seconds_total", "counter",
	  "Time the sandbox spent throttled by cpu.max (cpu.stat throttled_usec)." },
	{ M_CPU_LIMIT, SB_CPU_MAX, "stockade_cpu_limit_cores", "gauge",
	  "cpu.max as cores; absent when unlimited." },
	{ M_MEM, SB_MEM, "stockade_memory_bytes", "gauge",
	  "Memory charged to the sandbox cgroup now (memory.current), tmpfs included." },
	{ M_MEM_PEAK, SB_MEM_PEAK, "stockade_memory_peak_bytes", "gauge",
	  "Highest memory.current since the cgroup was created (memory.peak)." },
	{ M_MEM_LIMIT, SB_MEM, "stockade_memory_limit_bytes", "gauge",
	  "memory.max; absent when unlimited." },
	{ M_OOM, SB_OOM, "stockade_oom_kills_total", "counter",
	  "Processes of the sandbox killed by the OOM killer (memory.events oom_kill)." },
	{ M_PROCS, SB_PIDS, "stockade_processes", "gauge",
	  "Tasks in the sandbox cgroup now (pids.current)." },
	{ M_PROCS_LIMIT, SB_PIDS, "stockade_processes_limit", "gauge",
	  "pids.max; absent when unlimited." },
	{ M_FORK_REFUSED, SB_PIDS, "stockade_fork_refused_total", "counter",
	  "fork()/clone() calls refused at pids.max (pids.events max of the sandbox cgroup)." },
	{ M_RUNTIME_LEFT, SB_RUNTIME, "stockade_runtime_remaining_seconds", "gauge",
	  "Run time left before the sandbox is killed; absent until it has a process." },
};

/* The label set of every per-sandbox sample: the one place to add a
 * sandbox's labels (a pod's, a container's). */
static void label(FILE *f, const char *name, const char *v)
{
	if (!v[0])
		return;
	fprintf(f, ",%s=\"", name);
	metrics_label(f, v);
	fputc('"', f);
}

/* Off by default: a label per container (and per pod) makes a series per
 * container, which a fleet's Prometheus pays for in memory. */
static bool container_labels;

static void sample_head(FILE *f, const char *name, const struct sb_stats *s)
{
	const struct container_info *c = s->ctr;

	fputs(name, f);
	fputs("{policy=\"", f);
	metrics_label(f, s->policy);
	fputs("\",cgroup=\"", f);
	metrics_label(f, s->cgroup);
	fputc('"', f);
	if (!container_labels || !c)
		return;
	label(f, "container_runtime", container__runtime_name(c->id.runtime));
	label(f, "container_id", c->id.id);
	label(f, "container", c->meta.name);
	label(f, "image", c->meta.image);
	label(f, "pod_namespace", c->meta.pod_namespace);
	label(f, "pod", c->meta.pod_name);
}

/* One sample; false when this sandbox has no value for the metric. */
static bool metric_value(const struct metric *m, const struct sb_stats *s,
			 char *buf, size_t len)
{
	uint64_t v;

	switch (m->id) {
	case M_CONNECT_OK: v = s->c.allowed[KIND_CONNECT]; break;
	case M_CONNECT_DENY: v = s->c.denied[KIND_CONNECT]; break;
	case M_SENDMSG_OK: v = s->c.allowed[KIND_SENDMSG]; break;
	case M_SENDMSG_DENY: v = s->c.denied[KIND_SENDMSG]; break;
	case M_SOCKET_DENY: v = s->c.denied[KIND_SOCKET]; break;
	case M_FILE_DENY: v = s->c.denied[KIND_FILE]; break;
	case M_EGRESS_BYTES: v = s->c.egress_bytes; break;
	case M_EGRESS_PKTS: v = s->c.egress_packets; break;
	case M_CPU:
		snprintf(buf, len, "%.6f", s->cpu_usage_usec / 1e6);
		return true;
	case M_THROTTLED: v = s->cpu_nr_throttled; break;
	case M_THROTTLED_S:
		snprintf(buf, len, "%.6f", s->cpu_throttled_usec / 1e6);
		return true;
	case M_CPU_LIMIT:
		if (s->cpu_max_milli == CGV_MAX)
			return false;
		snprintf(buf, len, "%.3f", s->cpu_max_milli / 1e3);
		return true;
	case M_MEM: v = s->mem_current; break;
	case M_MEM_PEAK: v = s->mem_peak; break;
	case M_MEM_LIMIT:
		if (s->mem_max == CGV_MAX)
			return false;
		v = s->mem_max;
		break;
	case M_OOM: v = s->oom_kills; break;
	case M_PROCS: v = s->pids_current; break;
	case M_PROCS_LIMIT:
		if (s->pids_max == CGV_MAX)
			return false;
		v = s->pids_max;
		break;
	case M_FORK_REFUSED: v = s->pids_refused; break;
	case M_RUNTIME_LEFT:
		if (s->runtime_left_ms < 0)
			return false;
		snprintf(buf, len, "%.3f", s->runtime_left_ms / 1e3);
		return true;
	default:
		return false;
	}
	snprintf(buf, len, "%" PRIu64, v);
	return true;
}

static const char *const action_names[MA_N] = {
	[MA_ALLOW] = "allow", [MA_DENY] = "deny", [MA_AUDIT] = "audit",
};
static const char *const limit_names[ML_N] = {
	[ML_MEMORY] = "memory", [ML_PIDS] = "pids", [ML_RUNTIME] = "runtime",
	[ML_CPU] = "cpu",
};

int metrics_limit_of(const char *kind)
{
	int i;

	for (i = 0; i < ML_N; i++)
		if (!strcmp(kind, limit_names[i]))
			return i;
	return -1;
}

int metrics_self(uint64_t *rss_bytes, uint64_t *cpu_usec)
{
	unsigned long long size, resident;
	struct rusage ru;
	FILE *f;
	int ok;

	if (getrusage(RUSAGE_SELF, &ru))
		return -errno;
	*cpu_usec = (uint64_t)ru.ru_utime.tv_sec * 1000000 + (uint64_t)ru.ru_utime.tv_usec +
		    (uint64_t)ru.ru_stime.tv_sec * 1000000 + (uint64_t)ru.ru_stime.tv_usec;
	/* statm, not ru_maxrss: the RSS now, not the peak (start-up parses
	 * megabytes of BTF that are given back, agent/daemon.c). */
	f = fopen("/proc/self/statm", "re");
	if (!f)
		return -errno;
	ok = fscanf(f, "%llu %llu", &size, &resident) == 2;
	fclose(f);
	if (!ok)
		return -EINVAL;
	*rss_bytes = (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
	return 0;
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* The agent's families: one sample per label set, policy names escaped. */
static void metrics_write_agent(FILE *f, const struct metrics_agent *a)
{
	size_t i;
	int act, k, lim;

	family(f, "stockade_decisions_total", "counter",
	       "Decisions of the BPF programs in the sandboxes of a policy, by action (allow, deny, audit: a would-be denial in mode audit) and kind; a sample appears at its first decision.");
	for (i = 0; i < a->n_pol; i++)
		for (act = 0; act < MA_N; act++)
			for (k = 0; k < LIMITS_KINDS; k++) {
				if (!a->pol[i].dec[act][k] || !kind_names[k])
					continue;
				fprintf(f, "stockade_decisions_total{action=\"%s\",kind=\"%s\",policy=\"",
					action_names[act], kind_names[k]);
				metrics_label(f, a->pol[i].policy);
				fprintf(f, "\"} %" PRIu64 "\n", a->pol[i].dec[act][k]);
			}
	family(f, "stockade_limit_breaches_total", "counter",
	       "Limit breaches logged (event: limit records), by policy and limit (memory, pids, runtime, cpu).");
	for (i = 0; i < a->n_pol; i++)
		for (lim = 0; lim < ML_N; lim++) {
			fputs("stockade_limit_breaches_total{policy=\"", f);
			metrics_label(f, a->pol[i].policy);
			fprintf(f, "\",limit=\"%s\"} %" PRIu64 "\n", limit_names[lim],
				a->pol[i].breaches[lim]);
		}
	family(f, "stockade_events_produced_total", "counter",
	       "Records given a sequence number since the agent started, by the BPF programs and by the agent.");
	fprintf(f, "stockade_events_produced_total %" PRIu64 "\n", a->events_produced);
	family(f, "stockade_events_logged_total", "counter",
	       "Records the agent wrote out (stdout, --log) since it started.");
	fprintf(f, "stockade_events_logged_total %" PRIu64 "\n", a->events_logged);
	family(f, "stockade_events_lost_total", "counter",
	       "Records lost since the agent started: ring buffer full, or not written out (each said in an event: lost record).");
	fprintf(f, "stockade_events_lost_total %" PRIu64 "\n", a->events_lost);
	if (!a->has_self)
		return;
	family(f, "stockade_agent_resident_memory_bytes", "gauge",
	       "Resident memory of the agent process (/proc/self/statm).");
	fprintf(f, "stockade_agent_resident_memory_bytes %" PRIu64 "\n", a->rss_bytes);
	family(f, "stockade_agent_cpu_seconds_total", "counter",
	       "CPU time of the agent process, user and system.");
	fprintf(f, "stockade_agent_cpu_seconds_total %.6f\n", a->cpu_usec / 1e6);
}

void metrics_write(FILE *f, const struct metrics_agent *agent,
		   const struct sb_stats *v, size_t n)
{
	char val[48];
	size_t i, m;
	unsigned int k;

	fputs("# HELP stockade_sandboxes Cgroups the agent confines through a selector.\n"
	      "# TYPE stockade_sandboxes gauge\n", f);
	fprintf(f, "stockade_sandboxes %zu\n", n);
	container_labels = agent && agent->container_labels;
	if (agent) {
		fputs("# HELP stockade_containers Confined cgroups that are a container's own (README \"Selecting containers\").\n"
		      "# TYPE stockade_containers gauge\n", f);
		fprintf(f, "stockade_containers %" PRIu64 "\n", agent->containers);
		metrics_write_agent(f, agent);
	}
	for (m = 0; m < sizeof(metrics) / sizeof(metrics[0]); m++) {
		const struct metric *mt = &metrics[m];

		fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", mt->name, mt->help,
			mt->name, mt->type);
		for (i = 0; i < n; i++) {
			if ((v[i].have & mt->need) != mt->need)
				continue;
			if (mt->id == M_LSM_DENY) {
				/* Every BPF-LSM kind but file, which has its own. */
				for (k = KIND_FILE + 1; k < LIMITS_KINDS; k++) {
					if (!kind_names[k])
						continue;
					sample_head(f, mt->name, &v[i]);
					fprintf(f, ",kind=\"%s\"} %" PRIu64 "\n",
						kind_names[k], (uint64_t)v[i].c.denied[k]);
				}
				continue;
			}
			if (!metric_value(mt, &v[i], val, sizeof(val)))
				continue;
			sample_head(f, mt->name, &v[i]);
			fprintf(f, "} %s\n", val);
		}
	}
}

int metrics_listen_parse(const char *spec, struct sockaddr_storage *ss,
			 unsigned int *len, bool *loopback, char *why,
			 size_t why_len)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *colon, *port_s;
	unsigned long port;
	char *end;
	size_t hl;
	bool v6 = spec[0] == '[';

	memset(ss, 0, sizeof(*ss));
	if (v6) {
		colon = strchr(spec, ']');
		if (!colon || colon[1] != ':') {
			snprintf(why, why_len, "an IPv6 address is written [ADDR]:PORT, e.g. [::1]:9464");
			return -EINVAL;
		}
		hl = (size_t)(colon - spec - 1);
		port_s = colon + 2;
		spec++;
	} else {
		colon = strrchr(spec, ':');
		if (!colon) {
			snprintf(why, why_len, "no port: expected ADDR:PORT, e.g. 127.0.0.1:9464 or [::1]:9464");
			return -EINVAL;
		}
		hl = (size_t)(colon - spec);
		port_s = colon + 1;
	}
	if (!hl || hl >= sizeof(host)) {
		snprintf(why, why_len, "no address before the port: expected ADDR:PORT, e.g. 127.0.0.1:9464");
		return -EINVAL;
	}
	memcpy(host, spec, hl);
	host[hl] = '\0';
	errno = 0;
	port = strtoul(port_s, &end, 10);
	if (!isdigit((unsigned char)*port_s) || *end || errno || !port || port > 65535) {
		snprintf(why, why_len, "port '%s' is not a number from 1 to 65535", port_s);
		return -EINVAL;
	}
	if (v6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

		if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1) {
			snprintf(why, why_len, "'%s' is not a numeric IPv6 address", host);
			return -EINVAL;
		}
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		*len = sizeof(*a);
		*loopback = IN6_IS_ADDR_LOOPBACK(&a->sin6_addr);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;

		/* Numeric only: a name would need a resolver at start-up,
		 * and could resolve to something else tomorrow. */
		if (inet_pton(AF_INET, host, &a->sin_addr) != 1) {
			snprintf(why, why_len, "'%s' is not a numeric IPv4 address (an IPv6 one is written in brackets, [::1]:9464)",
				 host);
			return -EINVAL;
		}
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		*len = sizeof(*a);
		*loopback = (ntohl(a->sin_addr.s_addr) >> 24) == 127;
	}
	return 0;
}

/* ---- status ---- */

#define ST_COLS 12

static void cell_u64(char *buf, size_t len, bool have, uint64_t v)
{
	if (have)
		snprintf(buf, len, "%" PRIu64, v);
	else
		snprintf(buf, len, "-");
}

static void cell_pair(char *buf, size_t len, bool have, uint64_t a, uint64_t b)
{
	if (have)
		snprintf(buf, len, "%" PRIu64 "/%" PRIu64, a, b);
	else
		snprintf(buf, len, "-");
}

static const char *lim_str(uint64_t v, bool bytes, char *buf, size_t len)
{
	if (v == CGV_MAX)
		return "max";
	if (bytes)
		return cgv_human(v, buf, len);
	snprintf(buf, len, "%" PRIu64, v);
	return buf;
}

void status_print_table(FILE *f, const struct sb_stats *v, size_t n)
{
	static const char *const head[ST_COLS] = {
		"POLICY", "CGROUP", "CONNECT", "SENDMSG", "DENIED", "EGRESS",
		"CPU", "THROTTLED", "MEMORY", "PEAK", "PROCS", "RUNTIME",
	};
	char (*cell)[ST_COLS][64] = calloc(n ? n : 1, sizeof(*cell));
	size_t w[ST_COLS], i, c;

	if (!cell) {
		fprintf(f, "(out of memory)\n");
		return;
	}
	for (i = 0; i < n; i++) {
		const struct sb_stats *s = &v[i];
		bool cnt = s->have & SB_COUNTS;
		char a[24], b[24];
		uint64_t other = 0;
		unsigned int k;

		snprintf(cell[i][0], 64, "%s", s->policy);
		snprintf(cell[i][1], 64, "%s", s->cgroup);
		/* allowed/denied */
		cell_pair(cell[i][2], 64, cnt, s->c.allowed[KIND_CONNECT],
			  s->c.denied[KIND_CONNECT]);
		cell_pair(cell[i][3], 64, cnt, s->c.allowed[KIND_SENDMSG],
			  s->c.denied[KIND_SENDMSG]);
		/* every other denial: sockets and BPF-LSM */
		for (k = KIND_SOCKET; k < LIMITS_KINDS; k++)
			other += s->c.denied[k];
		cell_u64(cell[i][4], 64, cnt, other);
		if (cnt)
			snprintf(cell[i][5], 64, "%s/%" PRIu64 "p",
				 cgv_human(s->c.egress_bytes, a, sizeof(a)),
				 (uint64_t)s->c.egress_packets);
		else
			snprintf(cell[i][5], 64, "-");
		if (s->have & SB_CPU)
			snprintf(cell[i][6], 64, "%.2fs", s->cpu_usage_usec / 1e6);
		else
			snprintf(cell[i][6], 64, "-");
		cell_u64(cell[i][7], 64, s->have & SB_THROTTLE, s->cpu_nr_throttled);
		if (s->have & SB_MEM)
			snprintf(cell[i][8], 64, "%s/%s",
				 cgv_human(s->mem_current, a, sizeof(a)),
				 lim_str(s->mem_max, true, b, sizeof(b)));
		else
			snprintf(cell[i][8], 64, "-");
		if (s->have & SB_MEM_PEAK)
			cgv_human(s->mem_peak, cell[i][9], 64);
		else
			snprintf(cell[i][9], 64, "-");
		if (s->have & SB_PIDS)
			snprintf(cell[i][10], 64, "%" PRIu64 "/%s", s->pids_current,
				 lim_str(s->pids_max, false, b, sizeof(b)));
		else
			snprintf(cell[i][10], 64, "-");
		if (!(s->have & SB_RUNTIME))
			snprintf(cell[i][11], 64, "-");
		else if (s->runtime_left_ms < 0)
			snprintf(cell[i][11], 64, "waiting");
		else
			snprintf(cell[i][11], 64, "%.1fs left",
				 s->runtime_left_ms / 1e3);
	}
	for (c = 0; c < ST_COLS; c++) {
		w[c] = strlen(head[c]);
		for (i = 0; i < n; i++)
			if (strlen(cell[i][c]) > w[c])
				w[c] = strlen(cell[i][c]);
	}
	/* The last column unpadded: no trailing blanks. */
	for (c = 0; c < ST_COLS; c++)
		fprintf(f, "%-*s%s", c + 1 < ST_COLS ? (int)w[c] : 0, head[c],
			c + 1 < ST_COLS ? "  " : "\n");
	for (i = 0; i < n; i++)
		for (c = 0; c < ST_COLS; c++)
			fprintf(f, "%-*s%s", c + 1 < ST_COLS ? (int)w[c] : 0,
				cell[i][c], c + 1 < ST_COLS ? "  " : "\n");
	free(cell);
}

static void json_lim(struct json *j, const char *key, uint64_t v)
{
	if (v == CGV_MAX)
		json_raw(j, key, "null");
	else
		json_u64(j, key, v);
}

void status_json(struct json *j, const struct sb_stats *s)
{
	json_str(j, "policy", s->policy);
	json_str(j, "cgroup", s->cgroup);
	json_u64(j, "cgroup_id", s->cgroup_id);
	status_json_usage(j, s);
}

void status_json_usage(struct json *j, const struct sb_stats *s)
{
	char key[40];
	unsigned int k;

	if (s->have & SB_COUNTS) {
		json_u64(j, "connect_allowed", s->c.allowed[KIND_CONNECT]);
		json_u64(j, "connect_denied", s->c.denied[KIND_CONNECT]);
		json_u64(j, "sendmsg_allowed", s->c.allowed[KIND_SENDMSG]);
		json_u64(j, "sendmsg_denied", s->c.denied[KIND_SENDMSG]);
		for (k = KIND_SOCKET; k < LIMITS_KINDS; k++) {
			if (!kind_names[k])
				continue;
			snprintf(key, sizeof(key), "%s_denied", kind_names[k]);
			json_u64(j, key, s->c.denied[k]);
		}
		/* Would-be denials in mode audit, by the same kinds. */
		for (k = 0; k < LIMITS_KINDS; k++) {
			if (!kind_names[k])
				continue;
			snprintf(key, sizeof(key), "%s_audited", kind_names[k]);
			json_u64(j, key, s->c.audited[k]);
		}
		json_u64(j, "egress_bytes", s->c.egress_bytes);
		json_u64(j, "egress_packets", s->c.egress_packets);
	}
	if (s->have & SB_CPU)
		json_u64(j, "cpu_usage_usec", s->cpu_usage_usec);
	if (s->have & SB_THROTTLE) {
		json_u64(j, "cpu_nr_throttled", s->cpu_nr_throttled);
		json_u64(j, "cpu_throttled_usec", s->cpu_throttled_usec);
	}
	if (s->have & SB_CPU_MAX)
		json_lim(j, "cpu_limit_millicores", s->cpu_max_milli);
	if (s->have & SB_MEM) {
		json_u64(j, "memory_bytes", s->mem_current);
		json_lim(j, "memory_limit_bytes", s->mem_max);
	}
	if (s->have & SB_MEM_PEAK)
		json_u64(j, "memory_peak_bytes", s->mem_peak);
	if (s->have & SB_OOM)
		json_u64(j, "oom_kills", s->oom_kills);
	if (s->have & SB_PIDS) {
		json_u64(j, "processes", s->pids_current);
		json_lim(j, "processes_limit", s->pids_max);
		json_u64(j, "fork_refused", s->pids_refused);
	}
	if (s->have & SB_RUNTIME) {
		json_u64(j, "runtime_ms", s->runtime_ms);
		if (s->runtime_left_ms >= 0)
			json_u64(j, "runtime_left_ms", (uint64_t)s->runtime_left_ms);
		else
			json_raw(j, "runtime_left_ms", "null");
	}
}

/* ---- flat JSON objects (the state file) ---- */

static const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	return s;
}

static void put_utf8(char *out, size_t len, size_t *o, uint32_t cp)
{
	unsigned char b[4];
	size_t n, i;

	if (cp < 0x80) {
		b[0] = (unsigned char)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (unsigned char)(0xc0 | (cp >> 6));
		b[1] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (unsigned char)(0xe0 | (cp >> 12));
		b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		b[0] = (unsigned char)(0xf0 | (cp >> 18));
		b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
		b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		b[3] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	for (i = 0; i < n; i++)
		if (out && *o + 1 < len)
			out[(*o)++] = (char)b[i];
}

static int hex4(const char *s, uint32_t *v)
{
	int i;

	*v = 0;
	for (i = 0; i < 4; i++) {
		if (!isxdigit((unsigned char)s[i]))
			return -EINVAL;
		*v = *v * 16 + (uint32_t)(isdigit((unsigned char)s[i]) ? s[i] - '0' :
					  tolower((unsigned char)s[i]) - 'a' + 10);
	}
	return 0;
}

/* A JSON string at s (its opening quote); unescaped into out when given.
 * Returns the position after the closing quote, or NULL. */
static const char *json_string(const char *s, char *out, size_t len)
{
	size_t o = 0;
	uint32_t cp, lo;

	if (*s++ != '"')
		return NULL;
	while (*s != '"') {
		char c = *s++;

		if (!c || (unsigned char)c < 0x20)
			return NULL;
		if (c != '\\') {
			if (out && o + 1 < len)
				out[o++] = c;
			continue;
		}
		c = *s++;
		switch (c) {
		case '"': case '\\': case '/': break;
		case 'b': c = '\b'; break;
		case 'f': c = '\f'; break;
		case 'n': c = '\n'; break;
		case 'r': c = '\r'; break;
		case 't': c = '\t'; break;
		case 'u':
			if (hex4(s, &cp))
				return NULL;
			s += 4;
			if (cp >= 0xd800 && cp <= 0xdbff && s[0] == '\\' &&
			    s[1] == 'u' && !hex4(s + 2, &lo) && lo >= 0xdc00 &&
			    lo <= 0xdfff) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				s += 6;
			} else if (cp >= 0xd800 && cp <= 0xdfff) {
				cp = 0xfffd;
			}
			put_utf8(out, len, &o, cp);
			continue;
		default:
			return NULL;
		}
		if (out && o + 1 < len)
			out[o++] = c;
	}
	if (out && len)
		out[o] = '\0';
	return s + 1;
}

int flatjson_get(const char *s, const char *key, char *str, size_t len,
		 uint64_t *num)
{
	char k[64];

	s = skip_ws(s);
	if (*s != '{')
		return -EINVAL;
	s = skip_ws(s + 1);
	if (*s == '}')
		return 0;
	for (;;) {
		bool match;

		s = json_string(s, k, sizeof(k));
		if (!s)
			return -EINVAL;
		match = strlen(key) < sizeof(k) - 1 && !strcmp(k, key);
		s = skip_ws(s);
		if (*s++ != ':')
			return -EINVAL;
		s = skip_ws(s);
		if (*s == '"') {
			s = json_string(s, match ? str : NULL, len);
			if (!s)
				return -EINVAL;
			if (match)
				return 's';
		} else if (isdigit((unsigned char)*s) || *s == '-') {
			char *end;
			uint64_t v;

			errno = 0;
			v = *s == '-' ? 0 : strtoull(s, &end, 10);
			if (*s == '-')
				end = (char *)s + 1;
			while (isdigit((unsigned char)*end) || *end == '.' ||
			       *end == 'e' || *end == 'E' || *end == '+' || *end == '-')
				end++;
			s = end;
			if (match) {
				if (num)
					*num = v;
				return 'n';
			}
		} else if (!strncmp(s, "true", 4) || !strncmp(s, "null", 4)) {
			if (match && s[0] == 't') {
				if (num)
					*num = 1;
				return 'n';
			}
			if (match)
				return 0;
			s += 4;
		} else if (!strncmp(s, "false", 5)) {
			if (match) {
				if (num)
					*num = 0;
				return 'n';
			}
			s += 5;
		} else {
			return 0;	/* an array or object: not understood */
		}
		s = skip_ws(s);
		if (*s == ',') {
			s = skip_ws(s + 1);
			continue;
		}
		return *s == '}' ? 0 : -EINVAL;
	}
}
