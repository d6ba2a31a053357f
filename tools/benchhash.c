// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * benchhash: the agent's cost of `exec.hash: sha256` per exec record
 * (agent/exec_hash.c), against the record's formatting alone
 * (agent/exec.c), in one run (tests/bench/hash.sh):
 *
 *   benchhash --file PATH [--rounds R] [--iters N]
 *
 * Each round times, interleaved, N exec records of a program PATH whose
 * process has exited (the common case for a short command: the agent
 * opens the path and checks its dev and ino):
 *   format    exec__json() alone: what every exec record costs;
 *   cached    the same + exec_hash__fields(), the digest from the cache
 *             (PATH unchanged since its first record);
 *   uncached  the same, the file read and hashed every time (its first
 *             record, or a file that keeps changing); N/50 records.
 * Prints "ROUND COND NS_PER_RECORD" lines (benchstat ratio's samples),
 * then "# size BYTES".
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "exec.h"
#include "exec_agent.h"
#include "exec_hash.h"
#include "names.h"

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000 + (uint64_t)t.tv_nsec;
}

static const char *pname(const void *ctx, uint32_t id)
{
	(void)ctx;
	(void)id;
	return "bench";
}

static const struct policy *ppol(const void *ctx, uint32_t id)
{
	(void)ctx;
	(void)id;
	return NULL;
}

static uint32_t slot_id(const void *ctx, uint32_t slot)
{
	(void)ctx;
	return slot;
}

static struct sandbox_table cgt;
static const struct names names = { .cgt = &cgt, .policy_name = pname,
				    .policy = ppol, .slot_id = slot_id };

/* n records; hash: with the digest. ns per record. */
static double run(struct exec_hash *h, const struct exec_event *x, struct json *j,
		  unsigned long n)
{
	uint64_t t0 = now_ns();
	unsigned long i;

	for (i = 0; i < n; i++) {
		json_begin(j);
		if (exec__json(j, x, sizeof(*x), &names, "/bench"))
			return -1;
		if (h)
			exec_hash__fields(h, j, x);
		json_end(j);
	}
	return (double)(now_ns() - t0) / (double)n;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "file", required_argument, NULL, 'f' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "iters", required_argument, NULL, 'n' },
		{ 0 },
	};
	static struct exec_event x;
	struct exec_hash *cached, *uncached;
	unsigned long rounds = 15, iters = 20000, r;
	const char *file = NULL;
	struct json j;
	struct stat st;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'f': file = optarg; break;
		case 'r': rounds = strtoul(optarg, NULL, 10); break;
		case 'n': iters = strtoul(optarg, NULL, 10); break;
		default: goto usage;
		}
	}
	if (!file || !rounds || iters < 50 || optind != argc)
		goto usage;
	if (stat(file, &st) || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "benchhash: %s: not a regular file (%s)\n", file, strerror(errno));
		return 2;
	}
	if (exec_hash__new(&cached) || exec_hash__new(&uncached)) {
		fprintf(stderr, "benchhash: out of memory\n");
		return 2;
	}
	/* Cached: whatever the file's age. Uncached: never kept. */
	exec_hash__set_racy(cached, 0);
	exec_hash__set_racy(uncached, INT64_MAX);
	json_init(&j);
	x.e.type = EV_EXEC;
	x.e.pid = 0;		/* exited: no /proc/PID/exe, the path is used */
	x.dev = ((uint64_t)major(st.st_dev) << 20) | minor(st.st_dev);
	x.ino = st.st_ino;
	x.nlink = 1;
	snprintf(x.binary, sizeof(x.binary), "%s", file);
	snprintf(x.filename, sizeof(x.filename), "%s", file);
	snprintf(x.cwd, sizeof(x.cwd), "/");
	memcpy(x.argv, "prog\0--flag\0value\0", 18);
	x.argv_len = 18;
	for (r = 0; r <= rounds; r++) {
		double f = run(NULL, &x, &j, iters);
		double h = run(cached, &x, &j, iters);
		double u = run(uncached, &x, &j, iters / 50);

		if (f < 0 || h < 0 || u < 0) {
			fprintf(stderr, "benchhash: formatting the record failed\n");
			return 1;
		}
		if (!r)
			continue;	/* warm-up */
		printf("%lu format %.1f\n%lu cached %.1f\n%lu uncached %.1f\n", r, f, r, h, r, u);
	}
	printf("# size %lld\n", (long long)st.st_size);
	json_free(&j);
	exec_hash__free(cached);
	exec_hash__free(uncached);
	return 0;
usage:
	fprintf(stderr, "usage: benchhash --file PATH [--rounds R] [--iters N]\n");
	return 2;
}
