// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* SHA-256 of executed programs (agent/exec_hash.h), with Nettle. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <nettle/sha2.h>

#include "exec.h"
#include "exec_agent.h"
#include "exec_hash.h"

#define CACHE_SLOTS	1024	/* direct-mapped by (dev, ino) */
#define READ_CHUNK	(64 * 1024)

struct cache_entry {
	uint64_t dev, ino, size;
	int64_t mtime_ns, ctime_ns;
	bool valid;
	uint8_t d[EXEC_HASH_LEN];
};

struct exec_hash {
	struct cache_entry v[CACHE_SLOTS];
	uint64_t max;
	int64_t racy_ns;
	struct exec_hash_stats st;
	uint8_t buf[READ_CHUNK];
};

int exec_hash__new(struct exec_hash **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	(*out)->max = EXEC_HASH_MAX_BYTES;
	(*out)->racy_ns = EXEC_HASH_RACY_NS;
	return 0;
}

void exec_hash__free(struct exec_hash *h)
{
	free(h);
}

void exec_hash__set_max(struct exec_hash *h, uint64_t max)
{
	h->max = max;
}

void exec_hash__set_racy(struct exec_hash *h, int64_t ns)
{
	h->racy_ns = ns;
}

void exec_hash__stats(const struct exec_hash *h, struct exec_hash_stats *s)
{
	*s = h->st;
}

/* The kernel's dev_t (major in the bits above 20), as records carry it. */
static uint64_t kdev(dev_t d)
{
	return ((uint64_t)major(d) << 20) | minor(d);
}

static int64_t ns_of(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

int exec_hash__fd(struct exec_hash *h, int fd, const struct stat *st,
		  uint8_t out[EXEC_HASH_LEN])
{
	uint64_t dev = kdev(st->st_dev), ino = st->st_ino, size = (uint64_t)st->st_size;
	/* ctime too: a write that restores mtime (touch -d) still moves it. */
	int64_t mt = ns_of(&st->st_mtim), ct = ns_of(&st->st_ctim);
	struct cache_entry *c = &h->v[(dev * 0x9e3779b97f4a7c15ull ^ ino) % CACHE_SLOTS];
	struct sha256_ctx ctx;
	struct timespec now;
	off_t off = 0;
	ssize_t r;

	if (c->valid && c->dev == dev && c->ino == ino && c->size == size &&
	    c->mtime_ns == mt && c->ctime_ns == ct) {
		memcpy(out, c->d, EXEC_HASH_LEN);
		h->st.cached++;
		return 0;
	}
	if (size > h->max)
		return -EFBIG;
	sha256_init(&ctx);
	while ((r = pread(fd, h->buf, sizeof(h->buf), off)) > 0) {
		sha256_update(&ctx, (size_t)r, h->buf);
		off += r;
		if ((uint64_t)off > h->max)
			return -EFBIG;	/* grew while read */
	}
	if (r < 0)
		return -errno;
	sha256_digest(&ctx, EXEC_HASH_LEN, out);
	h->st.hashed++;
	h->st.bytes += (uint64_t)off;
	/* Timestamps tick coarsely (a jiffy): a file changed within the
	 * racy window could change again with the same mtime, ctime and
	 * size, so its digest is not kept (git's "racy" rule). */
	clock_gettime(CLOCK_REALTIME, &now);
	if (ns_of(&now) - (mt > ct ? mt : ct) < h->racy_ns)
		return 0;
	*c = (struct cache_entry){ .dev = dev, .ino = ino, .size = size,
				   .mtime_ns = mt, .ctime_ns = ct, .valid = true };
	memcpy(c->d, out, EXEC_HASH_LEN);
	return 0;
}

/* Open path; with want_dev/want_ino set, only if it is that file. */
static int open_same(const char *path, bool check, uint64_t want_dev,
		     uint64_t want_ino, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0)
		return -errno;
	if (fstat(fd, st) || !S_ISREG(st->st_mode) ||
	    (check && (kdev(st->st_dev) != want_dev || st->st_ino != want_ino))) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

static void digest_field(struct exec_hash *h, struct json *j, const char *key,
			 int fd, const struct stat *st)
{
	static const char hex[] = "0123456789abcdef";
	uint8_t d[EXEC_HASH_LEN];
	char txt[EXEC_HASH_LEN * 2 + 1], ekey[48];
	int err = fd < 0 ? fd : exec_hash__fd(h, fd, st, d), i;

	if (!err) {
		for (i = 0; i < EXEC_HASH_LEN; i++) {
			txt[2 * i] = hex[d[i] >> 4];
			txt[2 * i + 1] = hex[d[i] & 15];
		}
		txt[EXEC_HASH_LEN * 2] = '\0';
		json_str(j, key, txt);
		return;
	}
	snprintf(ekey, sizeof(ekey), "%s_error", key);
	json_str(j, ekey, err == -ESTALE || err == -ENOENT ? "changed" :
			  err == -EFBIG ? "too_large" : "unreadable");
}

void exec_hash__fields(struct exec_hash *h, struct json *j,
		       const struct exec_event *x)
{
	bool script = x->flags & EXEC_F_SCRIPT;
	char path[64], sp[EXEC_PATH_MAX * 2 + 2], bin[EXEC_PATH_MAX + 1];
	struct stat st;
	int fd;

	/* The image: the process's own while it runs it, else the path,
	 * either only when it is the file that ran (dev, ino). */
	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/exe", x->e.pid);
	fd = open_same(path, true, x->dev, x->ino, &st);
	if (fd < 0 && !(x->flags & EXEC_F_BINARY_TRUNC)) {
		snprintf(bin, sizeof(bin), "%.*s", EXEC_PATH_MAX, x->binary);
		fd = open_same(bin, true, x->dev, x->ino, &st);
	}
	digest_field(h, j, script ? "interpreter_sha256" : "sha256", fd, &st);
	if (fd >= 0)
		close(fd);
	if (!script)
		return;
	exec__script_path(x, sp, sizeof(sp));
	fd = open_same(sp, false, 0, 0, &st);
	digest_field(h, j, "sha256", fd, &st);
	if (fd >= 0)
		close(fd);
}
