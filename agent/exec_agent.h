/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Exec and exit records, userspace half (include/exec.h): the kernel's
 * struct exec_event / exit_event into JSON. Pure formatting over the
 * record, the boot id and the names (agent/names.h): no libbpf, so the
 * unit tests link it (tests/unit/test_exec.c).
 */
#ifndef STOCKADE_EXEC_AGENT_H
#define STOCKADE_EXEC_AGENT_H

#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "names.h"

/* "exec" or "exit" for a record type of bpf/exec.bpf.c (the pending bit
 * aside), else NULL: not one of ours. */
const char *exec__event(uint8_t type);

/*
 * The fields of an exec or exit record after ts, seq and event (README,
 * "Log schema"); cgroup: the cgroup's path, "" when unknown. Returns 0,
 * or -EINVAL for a record too short for its type (the caller counts it
 * lost).
 */
int exec__json(struct json *j, const void *rec, size_t size,
	       const struct names *n, const char *cgroup);

/* A #! script's path (EXEC_F_SCRIPT): the name given to execve, made
 * absolute against the record's cwd; buf of EXEC_PATH_MAX * 2 + 2. */
struct exec_event;
void exec__script_path(const struct exec_event *x, char *buf, size_t len);

/* The boot id in exec_ids: /proc/sys/kernel/random/boot_id (read once;
 * 0 or -errno, then every id carries 32 zeros). exec__set_boot_id()
 * takes it as text (dashes dropped): for the tests. */
int exec__read_boot_id(void);
void exec__set_boot_id(const char *text);

/* "<boot_id>-<ns>-<pid>" into buf (at least EXEC_ID_LEN bytes). */
#define EXEC_ID_LEN	72
void exec__id(char *buf, size_t len, uint64_t ns, uint32_t pid);

#endif
