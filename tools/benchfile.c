// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * benchfile: the file section of the benchmarks (issue 7, README
 * "Performance"), run in the test VM by tests/vm/bench-files.sh.
 *
 *   benchfile open [--iters N] [--blocks B] [--cond COND=CGDIR]...
 *                  [COND/]NAME:EXPECT:PATH...
 *       Time open(PATH, O_RDONLY)+close() for every PATH, each in the
 *       worker process of its condition COND: --cond COND=CGDIR forks one
 *       that joins CGDIR (writes 0 to CGDIR/cgroup.procs) or, with CGDIR
 *       empty, stays where benchfile is; without --cond, one worker stays
 *       where benchfile is and NAME has no COND. A process in a sandbox
 *       may not leave it, hence a process per condition; the parent only
 *       hands out blocks and adds up, outside the timed part.
 *       Every PATH gets B timed blocks of N calls, after one untimed block
 *       each (cold caches, the dentries of every component). The blocks
 *       of all PATHs of all conditions take turns (ABCD ABCD ...), the
 *       order rotated by one each turn, so that a slow spell of the
 *       emulator's host falls on all of them alike.
 *       EXPECT is "ok" (every open must succeed) or "denied" (every open
 *       must fail with EPERM, stockade's refusal, or EACCES): a benchmark
 *       whose paths are not judged the way it says measures nothing, so
 *       any other result exits 1. Prints one line per PATH:
 *         NAME[.COND] NS_PER_OP OPENS DENIED
 *       NS_PER_OP over the timed blocks; OPENS and DENIED count every
 *       call, the untimed block's too, so that the caller can hold the
 *       denials against the agent's records.
 *       A PATH with one "%u" in it names SPREAD_FILES (1000) distinct
 *       files, "%u" being 0 .. 999 (e.g. /task/in/m/%u/data.txt: a
 *       directory each): the calls cycle over them, carrying on from
 *       block to block, so that no open finds the dentries, the inode
 *       and whatever a program might cache from the last open of the
 *       same file: the miss-heavy mix. The names are made before any
 *       timing, and the time per call includes no formatting.
 *       PATH "@setuid" times setuid(0) instead: as root every call asks
 *       capable(CAP_SETUID), so it prices the lsm/capable hook that every
 *       process of the host pays; EXPECT ok.
 *       PATH "@exec" times fork + execve of benchfile itself (`benchfile
 *       true`, which exits 0 at once) + waitpid: in a sandbox each makes
 *       an exec and an exit record (bpf/exec.bpf.c), outside it prices
 *       the exec tracepoints' sandbox lookup; EXPECT ok. A block makes
 *       one fork+exec per EXEC_DIV calls of the others (at least one),
 *       and NS_PER_OP is per fork+exec.
 *
 *   benchfile true
 *       Exit 0 (the program @exec runs).
 *
 *   benchfile policy --name NAME --cgroup SEL --rules N
 *       Print a policy (YAML) with exactly N file rules in all of
 *       files.read, files.write and files.deny, N >= 10: the two the
 *       measurement needs (tools and the allowed tree readable), then
 *       distinct prefixes as a build farm's jobs would hold them, cycling
 *       over templates that branch off at every level of the measured
 *       paths (/task/in/..., /secret/in/...), so that the LPM trie lookup
 *       of a measured path really walks past them. The measured paths:
 *         allowed  /task/in/data.txt, /task/in/a/b/c/d/e/data.txt
 *         denied   /secret/in/data.txt, /secret/in/a/b/c/d/e/data.txt
 *                  (outside the read scope: reason outside_scope)
 *
 * Exit status: 0, 1 on a failure, 2 on a usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#define MAX_SPECS	32
#define EXEC_DIV	20	/* @exec: one fork+exec per this many opens */
#define SPREAD_FILES	1000	/* the files a "%u" PATH names */
#define SPREAD_PATH	128	/* bytes of one of them, NUL included */

/* @exec's program: benchfile itself, as the kernel resolved it. */
static char self_exe[PATH_MAX];
#define MAX_CONDS	8
#define LIST_MAX	4096	/* README "Limits": files.read/write/deny each */

struct cond {
	const char *name, *cgroup;	/* cgroup NULL or "": stay */
	pid_t pid;
	int req, rep;			/* pipes to and from the worker */
};

struct spec {
	const char *name, *path;
	char (*spread)[SPREAD_PATH];	/* a "%u" PATH's files, or NULL */
	unsigned long next;		/* the worker's next one of them */
	int cond;
	bool expect_denied;
	unsigned long long ns, timed_opens, opens, denied;
	int bad_errno;			/* the first unexpected result */
	bool bad;
};

/* A worker's answer to one block (or, first, to joining its cgroup). */
struct reply {
	uint64_t ns, opens, denied;
	int32_t err;			/* join: -errno; block: 1 if unexpected */
	int32_t bad_errno;
};

static int usage(void)
{
	fprintf(stderr,
		"usage: benchfile open [--iters N] [--blocks B] [--cond COND=CGDIR]... [COND/]NAME:ok|denied:PATH...\n"
		"       benchfile policy --name NAME --cgroup SELECTOR --rules N\n");
	return 2;
}

static bool parse_count(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	return !errno && end != s && !*end && *out >= 1 && *out <= max;
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

static int join_cgroup(const char *dir)
{
	char path[PATH_MAX];
	int fd, err = 0;

	if (snprintf(path, sizeof(path), "%s/cgroup.procs", dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* "0" moves the writing process itself. */
	if (write(fd, "0", 1) != 1)
		err = -errno;
	close(fd);
	return err;
}

static bool read_full(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

static bool write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

/* One block of n open+close calls, timed here, in the worker. */
static void run_block(struct spec *s, unsigned long n, struct reply *r)
{
	unsigned long long t0 = now_ns();
	unsigned long i;

	memset(r, 0, sizeof(*r));
	/* "@setuid": setuid(0) as root, the cheapest syscall that asks
	 * capable() (CAP_SETUID), for the cost of lsm/capable to outsiders. */
	if (!strcmp(s->path, "@setuid")) {
		for (i = 0; i < n; i++)
			if (setuid(0) && !r->err) {
				r->err = 1;
				r->bad_errno = errno;
			}
		r->ns = now_ns() - t0;
		r->opens = n;
		return;
	}
	if (!strcmp(s->path, "@exec")) {
		unsigned long m = n / EXEC_DIV ? n / EXEC_DIV : 1;

		for (i = 0; i < m; i++) {
			char *const av[] = { "benchfile", "true", NULL };
			int st = 0;
			pid_t c = fork();

			if (c == 0) {
				execv(self_exe, av);
				_exit(127);
			}
			if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) ||
			    WEXITSTATUS(st)) {
				if (!r->err) {
					r->err = 1;
					r->bad_errno = c < 0 ? errno : EPERM;
				}
			}
		}
		r->ns = now_ns() - t0;
		r->opens = m;
		return;
	}
	for (i = 0; i < n; i++) {
		const char *path = s->path;
		int fd;

		if (s->spread) {
			path = s->spread[s->next];
			s->next = (s->next + 1) % SPREAD_FILES;
		}
		fd = open(path, O_RDONLY | O_CLOEXEC);

		if (fd >= 0) {
			close(fd);
			if (s->expect_denied && !r->err)
				r->err = 1;
			continue;
		}
		/* stockade refuses with EPERM; EACCES would be a mode-bit
		 * refusal, not ours, but still a denial of the same open. */
		if (s->expect_denied && (errno == EPERM || errno == EACCES)) {
			r->denied++;
			continue;
		}
		if (!r->err) {
			r->err = 1;
			r->bad_errno = errno;
		}
	}
	r->ns = now_ns() - t0;
	r->opens = n;
}

/* The worker: join the cgroup, then one block per spec index asked for,
 * until the parent closes the request pipe. specs is the worker's own
 * copy (after fork): it keeps each spread's place there. */
static int worker(const struct cond *c, struct spec *specs, unsigned long iters)
{
	struct reply r = { 0 };
	uint32_t idx;

	if (c->cgroup && *c->cgroup)
		r.err = join_cgroup(c->cgroup);
	if (!write_full(c->rep, &r, sizeof(r)) || r.err)
		return 1;
	while (read_full(c->req, &idx, sizeof(idx))) {
		if (idx >= MAX_SPECS)
			return 1;
		run_block(&specs[idx], iters, &r);
		if (!write_full(c->rep, &r, sizeof(r)))
			return 1;
	}
	return 0;
}

/* Start the worker of conds[i]; the earlier workers' pipe ends are closed
 * in it, or a worker would keep another's request pipe open past the
 * parent's close, and that one would never see its end. */
static int cond_start(struct cond *conds, int i, struct spec *specs,
		      unsigned long iters)
{
	struct cond *c = &conds[i];
	int req[2], rep[2], j;
	struct reply r;

	if (pipe2(req, O_CLOEXEC))
		return -errno;
	if (pipe2(rep, O_CLOEXEC)) {
		close(req[0]);
		close(req[1]);
		return -errno;
	}
	fflush(stdout);
	c->pid = fork();
	if (c->pid < 0) {
		c->pid = 0;
		close(req[0]);
		close(req[1]);
		close(rep[0]);
		close(rep[1]);
		return -errno;
	}
	if (!c->pid) {
		for (j = 0; j < i; j++) {
			close(conds[j].req);
			close(conds[j].rep);
		}
		close(req[1]);
		close(rep[0]);
		c->req = req[0];
		c->rep = rep[1];
		_exit(worker(c, specs, iters));
	}
	close(req[0]);
	close(rep[1]);
	c->req = req[1];
	c->rep = rep[0];
	if (!read_full(c->rep, &r, sizeof(r)))
		return -EPIPE;
	return r.err;
}

/* One `benchfile open`: its conditions (a worker each) and its specs. */
struct open_run {
	struct cond conds[MAX_CONDS];
	struct spec specs[MAX_SPECS];
	unsigned long iters, blocks;
	int n, nc;
	bool named;	/* --cond given: each spec is COND/NAME:... */
};

/* One [COND/]NAME:ok|denied:PATH into o->specs[o->n]: 0, or the exit
 * status (2). */
static int open_spec(struct open_run *o, char *a)
{
	struct spec *sp = &o->specs[o->n];
	char *slash = strchr(a, '/'), *p1, *p2;
	int k;

	sp->cond = 0;
	if (o->named) {
		if (!slash || slash == a)
			return usage();
		*slash = 0;
		for (k = 0; k < o->nc && strcmp(o->conds[k].name, a); k++)
			;
		if (k == o->nc) {
			fprintf(stderr, "benchfile: %s: no --cond %s=CGDIR\n", a, a);
			return 2;
		}
		sp->cond = k;
		a = slash + 1;
	}
	p1 = strchr(a, ':');
	p2 = p1 ? strchr(p1 + 1, ':') : NULL;
	if (!p1 || !p2 || p1 == a || (p2[1] != '/' && strcmp(p2 + 1, "@setuid") &&
				  strcmp(p2 + 1, "@exec")))
		return usage();
	*p1 = *p2 = 0;
	sp->name = a;
	sp->path = p2 + 1;
	if (strchr(sp->path, '%')) {
		const char *u = strstr(sp->path, "%u");
		unsigned int f;

		/* Exactly one "%u" and no other conversion: the format is
		 * the caller's, so it is checked before printf sees it. */
		if (!u || strchr(u + 1, '%') || strchr(sp->path, '%') != u) {
			fprintf(stderr, "benchfile: %s: a spread PATH has one %%u and no other %%\n",
				sp->path);
			return 2;
		}
		sp->spread = calloc(SPREAD_FILES, sizeof(*sp->spread));
		if (!sp->spread) {
			fprintf(stderr, "benchfile: out of memory for %s\n", sp->path);
			return 1;
		}
		for (f = 0; f < SPREAD_FILES; f++) {
			if (snprintf(sp->spread[f], SPREAD_PATH, sp->path, f) >= SPREAD_PATH) {
				fprintf(stderr, "benchfile: %s: longer than %d bytes\n",
					sp->path, SPREAD_PATH - 1);
				return 2;
			}
		}
	}
	if (!strcmp(p1 + 1, "denied"))
		sp->expect_denied = true;
	else if (strcmp(p1 + 1, "ok"))
		return usage();
	return 0;
}

/* The options and specs: 0, or the exit status (2). */
static int open_args(int argc, char **argv, struct open_run *o)
{
	static const struct option lo[] = {
		{ "iters", required_argument, NULL, 'n' },
		{ "blocks", required_argument, NULL, 'b' },
		{ "cond", required_argument, NULL, 'c' },
		{ 0 }
	};
	int c, i, err;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (!parse_count(optarg, 100000000, &o->iters))
				return usage();
			break;
		case 'b':
			if (!parse_count(optarg, 10000, &o->blocks))
				return usage();
			break;
		case 'c': {
			char *eq = strchr(optarg, '=');

			if (!eq || eq == optarg || o->nc == MAX_CONDS)
				return usage();
			*eq = 0;
			o->conds[o->nc].name = optarg;
			o->conds[o->nc++].cgroup = eq + 1;
			o->named = true;
			break;
		}
		default: return usage();
		}
	}
	if (optind == argc || argc - optind > MAX_SPECS)
		return usage();
	if (!o->nc)
		o->conds[o->nc++].name = "";
	for (i = optind; i < argc; i++, o->n++) {
		err = open_spec(o, argv[i]);
		if (err)
			return err;
	}
	return 0;
}

/* Every spec once a block, each block in a rotated order; block 0 is the
 * untimed one. 0, or -EPIPE when a worker stopped answering. */
static int open_blocks(struct open_run *o)
{
	unsigned long b;
	int k;

	for (b = 0; b <= o->blocks; b++) {
		for (k = 0; k < o->n; k++) {
			struct spec *s = &o->specs[(k + b) % (unsigned long)o->n];
			struct cond *co = &o->conds[s->cond];
			uint32_t idx = (uint32_t)(s - o->specs);
			struct reply r;

			if (!write_full(co->req, &idx, sizeof(idx)) ||
			    !read_full(co->rep, &r, sizeof(r))) {
				fprintf(stderr, "benchfile: the worker of %s stopped answering\n", co->name);
				return -EPIPE;
			}
			s->opens += r.opens;
			s->denied += r.denied;
			if (b) {
				s->ns += r.ns;
				s->timed_opens += r.opens;
			}
			if (r.err && !s->bad) {
				s->bad = true;
				s->bad_errno = r.bad_errno;
			}
		}
	}
	return 0;
}

/* A line a spec; -EINVAL when one had an unexpected result. */
static int open_report(const struct open_run *o)
{
	int k, err = 0;

	for (k = 0; k < o->n; k++) {
		const struct spec *s = &o->specs[k];

		if (s->bad) {
			fprintf(stderr, "benchfile: %s%s%s: open(%s) %s, expected %s\n", s->name,
				o->named ? " in " : "", o->named ? o->conds[s->cond].name : "", s->path,
				s->bad_errno ? strerror(s->bad_errno) : "succeeded",
				s->expect_denied ? "EPERM (denied by stockade)" : "success");
			err = -EINVAL;
		}
		printf("%s%s%s %.1f %llu %llu\n", s->name, o->named ? "." : "",
		       o->named ? o->conds[s->cond].name : "", (double)s->ns / (double)s->timed_opens,
		       s->opens, s->denied);
	}
	if (fflush(stdout) || ferror(stdout))
		err = -EIO;
	return err;
}

/* End the workers; err, or -ECHILD when one failed and nothing had. */
static int open_stop(struct open_run *o, int err)
{
	int k, st;

	for (k = 0; k < o->nc; k++) {
		if (!o->conds[k].pid)
			continue;
		close(o->conds[k].req);
		close(o->conds[k].rep);
		if (waitpid(o->conds[k].pid, &st, 0) == o->conds[k].pid &&
		    !(WIFEXITED(st) && !WEXITSTATUS(st)) && !err) {
			fprintf(stderr, "benchfile: the worker of %s failed\n", o->conds[k].name);
			err = -ECHILD;
		}
	}
	return err;
}

static int cmd_open(int argc, char **argv)
{
	struct open_run o = { .iters = 1000, .blocks = 5 };
	int k, err;

	err = open_args(argc, argv, &o);
	if (err)
		return err;
	for (k = 0; k < o.nc; k++) {
		err = cond_start(o.conds, k, o.specs, o.iters);
		if (err) {
			fprintf(stderr, "benchfile: starting the worker of %s in %s failed: %s; create the cgroup first (mkdir), and start benchfile outside every sandbox\n",
				o.conds[k].name, o.conds[k].cgroup && *o.conds[k].cgroup ? o.conds[k].cgroup : "this cgroup",
				strerror(-err));
			break;
		}
	}
	if (!err)
		err = open_blocks(&o);
	if (!err)
		err = open_report(&o);
	return open_stop(&o, err) ? 1 : 0;
}

/*
 * Templates of the generated rules, taken in turn. Each lies next to a
 * measured path at some level, as the jobs of a build farm would: shards
 * and references beside the inputs, per-job output and scratch folders,
 * private folders and caches denied inside the read scope. "%05u" makes
 * every prefix distinct.
 */
static const struct {
	const char *list;	/* "read", "write" or "deny" */
	const char *fmt;
} templates[] = {
	{ "read", "/task/in/ref-%05u" },
	{ "read", "/task/in/a/b/c/d/e/shard-%05u" },
	{ "read", "/secret/in/public-%05u" },
	{ "read", "/srv/datasets/set-%05u/v1" },
	{ "write", "/task/out/job-%05u" },
	{ "write", "/tmp/task/run-%05u" },
	{ "write", "/home/builder%05u/work" },
	{ "deny", "/task/in/a/b/c/private-%05u" },
	{ "deny", "/task/in/.cache-%05u" },
	{ "deny", "/secret/in/a/b/c/d/e/key-%05u" },
};
#define N_TEMPLATES	(sizeof(templates) / sizeof(templates[0]))

/* The rules every benchmark sandbox needs: its tools, its allowed tree. */
static const char *const base_read[] = { "/opt/stockade", "/task/in" };
#define N_BASE		(sizeof(base_read) / sizeof(base_read[0]))

static int cmd_policy(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "name", required_argument, NULL, 'n' },
		{ "cgroup", required_argument, NULL, 'c' },
		{ "rules", required_argument, NULL, 'r' },
		{ 0 }
	};
	static const char *const lists[] = { "read", "write", "deny" };
	const char *name = NULL, *sel = NULL;
	unsigned long rules = 0, gen, k, per[3] = { N_BASE, 0, 0 };
	unsigned int l;
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'n': name = optarg; break;
		case 'c': sel = optarg; break;
		case 'r':
			if (!parse_count(optarg, 3 * LIST_MAX, &rules))
				return usage();
			break;
		default: return usage();
		}
	}
	if (!name || !sel || optind != argc || rules < 10)
		return usage();
	gen = rules - N_BASE;
	for (k = 0; k < gen; k++)
		for (l = 0; l < 3; l++)
			per[l] += !strcmp(templates[k % N_TEMPLATES].list, lists[l]);
	for (l = 0; l < 3; l++) {
		if (per[l] > LIST_MAX) {
			fprintf(stderr, "benchfile: %lu rules put %lu in files.%s, over its %d; ask for fewer\n",
				rules, per[l], lists[l], LIST_MAX);
			return 1;
		}
	}
	printf("# Generated by benchfile policy: %lu file rules (%lu read, %lu write, %lu deny).\n"
	       "name: %s\nmode: enforce\ncgroups: [%s]\nnetwork:\n  default: deny\nfiles:\n",
	       rules, per[0], per[1], per[2], name, sel);
	for (l = 0; l < 3; l++) {
		printf("  %s:\n", lists[l]);
		if (l == 0)
			for (k = 0; k < N_BASE; k++)
				printf("    - %s\n", base_read[k]);
		for (k = 0; k < gen; k++) {
			if (strcmp(templates[k % N_TEMPLATES].list, lists[l]))
				continue;
			printf("    - ");
			printf(templates[k % N_TEMPLATES].fmt, (unsigned int)(k / N_TEMPLATES));
			putchar('\n');
		}
	}
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "benchfile: writing the policy failed: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	ssize_t n;

	if (argc < 2)
		return usage();
	if (!strcmp(argv[1], "true"))
		return 0;
	n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	if (n > 0)
		self_exe[n] = '\0';
	if (!strcmp(argv[1], "open"))
		return cmd_open(argc - 1, argv + 1);
	if (!strcmp(argv[1], "policy"))
		return cmd_policy(argc - 1, argv + 1);
	return usage();
}
