// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpfutil.h"

#define RETRY_FIRST_MS	1
#define RETRY_LAST_MS	1024
/* The largest map key the walks below copy (a file_rules key is the
 * largest of ours). */
#define KEY_MAX		1024

uint64_t bpfutil_enomem_retries;

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

int key_set_add(struct key_set *ks, const void *key, size_t size)
{
	if (ks->n == ks->cap) {
		size_t cap = ks->cap ? ks->cap * 2 : 256;
		unsigned char *v = realloc(ks->v, cap * size);

		if (!v)
			return -ENOMEM;
		ks->v = v;
		ks->cap = cap;
	}
	ks->size = size;
	memcpy(ks->v + ks->n++ * size, key, size);
	return 0;
}

void key_set_free(struct key_set *ks)
{
	free(ks->v);
	memset(ks, 0, sizeof(*ks));
}

/*
 * Delete the keys of fd that doomed() marks; the number deleted. They are
 * collected first: a deletion during bpf_map_get_next_key()'s walk would
 * send it back to the start of a hash map. Out of memory: the walk stops,
 * and what it collected goes.
 */
static size_t delete_keys(int fd, size_t size,
			  bool (*doomed)(const void *key, const void *ctx),
			  const void *ctx)
{
	unsigned char cur[KEY_MAX], next[KEY_MAX];
	struct key_set gone = { 0 };
	size_t i, n = 0;
	int err;

	if (size > sizeof(cur))
		return 0;
	err = bpf_map_get_next_key(fd, NULL, next);
	while (!err) {
		if (doomed(next, ctx) && key_set_add(&gone, next, size))
			break;
		memcpy(cur, next, size);
		err = bpf_map_get_next_key(fd, cur, next);
	}
	for (i = 0; i < gone.n; i++)
		if (!bpf_map_delete_elem(fd, gone.v + i * size))
			n++;
	key_set_free(&gone);
	return n;
}

static size_t key_cmp_size;

static int key_cmp(const void *x, const void *y)
{
	return memcmp(x, y, key_cmp_size);
}

static bool not_in_set(const void *key, const void *ctx)
{
	const struct key_set *ks = ctx;

	return !ks->n || !bsearch(key, ks->v, ks->n, key_cmp_size, key_cmp);
}

size_t sweep_keys(int fd, struct key_set *ks, size_t size)
{
	if (size > KEY_MAX)
		return 0;
	key_cmp_size = size;
	if (ks->n)
		qsort(ks->v, ks->n, size, key_cmp);
	return delete_keys(fd, size, not_in_set, ks);
}

struct retired_ids {
	const bool *retired;
	size_t id_off;
	uint32_t n_ids;
};

static bool id_retired(const void *key, const void *ctx)
{
	const struct retired_ids *r = ctx;
	__u32 id;

	memcpy(&id, (const unsigned char *)key + r->id_off, sizeof(id));
	return id < r->n_ids && r->retired[id];
}

void retire_keys(int fd, size_t size, size_t id_off, const bool *retired,
		 uint32_t n_ids)
{
	struct retired_ids r = { .retired = retired, .id_off = id_off, .n_ids = n_ids };

	delete_keys(fd, size, id_retired, &r);
}

/* ---- verifier statistics ---- */

/* BPF_LOG_STATS: the verifier's summary lines, and the error of a program
 * it rejects. A few hundred bytes; the room is generous because a log
 * the buffer cannot hold fails the load (ENOSPC). */
#define VSTATS_LEVEL	4
#define VSTATS_BUF	65536

static char *vstats_bufs;	/* one VSTATS_BUF slice per program */
static bool vstats_done;	/* one load only: a retry logs as libbpf does */

int verifier_stats_prepare(struct bpf_object *obj)
{
	const char *on = getenv("STOCKADE_VERIFIER_STATS");
	struct bpf_program *prog;
	size_t n = 0, i = 0;

	if (!on || !on[0] || !strcmp(on, "0") || vstats_done || vstats_bufs)
		return 0;
	bpf_object__for_each_program(prog, obj)
		n++;
	vstats_bufs = calloc(n ? n : 1, VSTATS_BUF);
	if (!vstats_bufs)
		return -ENOMEM;
	bpf_object__for_each_program(prog, obj) {
		bpf_program__set_log_buf(prog, vstats_bufs + i++ * VSTATS_BUF,
					 VSTATS_BUF);
		bpf_program__set_log_level(prog, VSTATS_LEVEL);
	}
	return 0;
}

/* The number after key in log, or -1. */
static long vstats_field(const char *log, const char *key)
{
	const char *p = strstr(log, key);

	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

void verifier_stats_report(struct bpf_object *obj)
{
	struct bpf_program *prog;
	long insns, states, usec, t_insns = 0, t_usec = 0;
	size_t i = 0;
	const char *log;

	if (!vstats_bufs)
		return;
	bpf_object__for_each_program(prog, obj) {
		log = vstats_bufs + i++ * VSTATS_BUF;
		if (!bpf_program__autoload(prog) || !log[0])
			continue;
		if (bpf_program__fd(prog) < 0) {
			/* Rejected: its log says why (libbpf prints none
			 * from a buffer of ours). */
			fprintf(stderr, "verifier: %s rejected:\n%s\n",
				bpf_program__name(prog), log);
			continue;
		}
		insns = vstats_field(log, "processed ");
		states = vstats_field(log, "total_states ");
		usec = vstats_field(log, "verification time ");
		fprintf(stderr, "verifier: %-32s %8ld insns %6ld states %8ld us\n",
			bpf_program__name(prog), insns, states, usec);
		t_insns += insns > 0 ? insns : 0;
		t_usec += usec > 0 ? usec : 0;
	}
	fprintf(stderr, "verifier: total %ld insns, %ld us\n", t_insns, t_usec);
	/* libbpf keeps the pointers, but reads them only while loading,
	 * and an object is loaded once (a retry opens a new one). */
	free(vstats_bufs);
	vstats_bufs = NULL;
	vstats_done = true;
}
