/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * SHA-256 of the programs exec records name (`exec.hash: sha256`; README,
 * "Exec and exit records"), computed by the agent as it writes the
 * record, with Nettle, and cached by (dev, ino, mtime, ctime, size): a
 * program run again costs an open and an fstat (a file changed in the
 * last two seconds is not cached: EXEC_HASH_RACY_NS). Why not in the kernel: the
 * BPF-LSM helper (bpf_ima_file_hash) hashes the whole file at every exec
 * when no IMA policy keeps the digest, inside the exec of the sandboxed
 * process, and needs a sleepable program; the agent's cache does it once
 * per file version, off the exec path.
 *
 * Which file: the image the process runs, through /proc/PID/exe when the
 * process still runs that image (its dev and ino are the record's), else
 * the resolved path when it names that same file; a file that changed or
 * is gone since has no digest, and the record says why. A #! script is
 * read by its path when the record is written (the kernel has closed it
 * by then): its digest is of what the path holds at that moment.
 *
 * No libbpf: the unit tests link it (tests/unit/test_exec_hash.c).
 */
#ifndef STOCKADE_EXEC_HASH_H
#define STOCKADE_EXEC_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "json.h"

struct exec_event;
struct exec_hash;

#define EXEC_HASH_LEN		32
/* Larger files are not hashed (sha256_error: too_large): hashing runs in
 * the agent's one loop, and 256 MiB take it about a second. */
#define EXEC_HASH_MAX_BYTES	(256ull << 20)

/* A file changed less than this long ago is hashed but not cached: its
 * timestamps may not move on a second change (they tick by jiffies). */
#define EXEC_HASH_RACY_NS	(2ll * 1000000000)

struct exec_hash_stats {
	uint64_t hashed;	/* files read and hashed */
	uint64_t cached;	/* digests the cache answered */
	uint64_t bytes;		/* bytes read */
};

int exec_hash__new(struct exec_hash **out);
void exec_hash__free(struct exec_hash *h);
/* For the tests: files over max bytes are not hashed. */
void exec_hash__set_max(struct exec_hash *h, uint64_t max);
void exec_hash__set_racy(struct exec_hash *h, int64_t ns);
void exec_hash__stats(const struct exec_hash *h, struct exec_hash_stats *s);

/*
 * The digest of the file open as fd (st: its fstat), from the cache or
 * read now: 0, -EFBIG over the size cap, or -errno of a read.
 */
int exec_hash__fd(struct exec_hash *h, int fd, const struct stat *st,
		  uint8_t out[EXEC_HASH_LEN]);

/*
 * The fields of exec record x (size bytes): "sha256" of the program (for
 * a script: of the script, and "interpreter_sha256" of its interpreter),
 * or "sha256_error" / "interpreter_sha256_error": "changed" (the file is
 * not the one that ran any more), "too_large", "unreadable".
 */
void exec_hash__fields(struct exec_hash *h, struct json *j,
		       const struct exec_event *x);

#endif
