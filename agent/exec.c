// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Exec and exit records into JSON (agent/exec_agent.h, include/exec.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "containers.h"
#include "exec.h"
#include "exec_agent.h"
#include "policy.h"
#include "sandbox.h"

/* The argv array holds at most this many strings (EXEC_ARGV_MAX bytes
 * hold at most 512 one-byte strings). */
#define ARGV_MAX_STRINGS	(EXEC_ARGV_MAX / 2 + 1)

static char boot_id[33] = "00000000000000000000000000000000";

void exec__set_boot_id(const char *text)
{
	size_t i, k = 0;

	for (i = 0; text[i] && k < 32; i++)
		if (text[i] != '-' && text[i] != '\n')
			boot_id[k++] = text[i];
	while (k < 32)
		boot_id[k++] = '0';
	boot_id[32] = '\0';
}

int exec__read_boot_id(void)
{
	char buf[64] = "";
	ssize_t r;
	int fd, err = 0;

	fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = read(fd, buf, sizeof(buf) - 1);
	if (r <= 0)
		err = r < 0 ? -errno : -EIO;
	else
		exec__set_boot_id(buf);
	close(fd);
	return err;
}

void exec__id(char *buf, size_t len, uint64_t ns, uint32_t pid)
{
	snprintf(buf, len, "%s-%" PRIu64 "-%" PRIu32, boot_id, ns, pid);
}

const char *exec__event(uint8_t type)
{
	switch (type & ~EV_TYPE_PENDING) {
	case EV_EXEC:
		return "exec";
	case EV_EXIT:
		return "exit";
	}
	return NULL;
}

static void id_field(struct json *j, const char *key, const struct exec_ref *r)
{
	char id[EXEC_ID_LEN];

	exec__id(id, sizeof(id), r->ns, r->pid);
	json_str(j, key, id);
}

/* The common part: the sandbox and the task (an exec's pid is the
 * process that exec'd, an exit's the one that ended). */
static void task_fields(struct json *j, const struct event *e,
			const struct names *n, const char *cgroup)
{
	const struct policy *p = names__policy(n, e->policy_id);
	char hash[17];

	json_str(j, "policy", names__policy_name(n, e->policy_id));
	if (p) {
		snprintf(hash, sizeof(hash), "%016" PRIx64, p->hash);
		json_str(j, "policy_hash", hash);
		if (p->category)
			json_str_raw(j, "category", p->category, strlen(p->category));
	}
	json_str_raw(j, "cgroup", cgroup, strlen(cgroup));
	json_u64(j, "cgroup_id", e->cgroup_id);
	{
		const struct sandbox_cg *cg = names__cg(n, e->cgroup_id);

		records__container(j, cg ? cg->ctr : NULL);
	}
	json_u64(j, "pid", e->pid);
}

/* argv: the NUL-separated strings of the new image's stack. */
static void argv_field(struct json *j, const struct exec_event *x, size_t len)
{
	char buf[EXEC_ARGV_MAX + 1];
	const char *v[ARGV_MAX_STRINGS];
	size_t i, nv = 0, start = 0;

	memcpy(buf, x->argv, len);
	buf[len] = '\0';
	/* A last string cut by the cap has no NUL of its own: buf's. */
	for (i = 0; i <= len && nv < ARGV_MAX_STRINGS; i++) {
		if (buf[i])
			continue;
		if (i == len && start == len)
			break;	/* the final NUL already ended the last one */
		v[nv++] = &buf[start];
		start = i + 1;
	}
	json_str_array(j, "argv", v, nv);
	if (x->flags & EXEC_F_ARGV_TRUNC)
		json_bool(j, "argv_truncated", true);
}

static void path_field(struct json *j, const char *key, const char *s,
		       bool cut)
{
	char k[32];

	json_str_raw(j, key, s, strnlen(s, EXEC_PATH_MAX));
	if (cut) {
		snprintf(k, sizeof(k), "%s_truncated", key);
		json_bool(j, k, true);
	}
}

void exec__script_path(const struct exec_event *x, char *buf, size_t len)
{
	/* The script's own file is closed once its interpreter is open:
	 * its path is the name given, made absolute. */
	const char *f = x->filename;

	if (f[0] != '/' && x->cwd[0])
		snprintf(buf, len, "%.*s/%.*s", EXEC_PATH_MAX, x->cwd,
			 EXEC_PATH_MAX, f);
	else
		snprintf(buf, len, "%.*s", EXEC_PATH_MAX, f);
}

static void exec_fields(struct json *j, const struct exec_event *x, size_t size,
			const struct names *n, const char *cgroup)
{
	size_t alen = x->argv_len;
	char dev[32], script[EXEC_PATH_MAX * 2 + 2];

	if (alen > EXEC_ARGV_MAX ||
	    alen > size - offsetof(struct exec_event, argv))
		alen = size - offsetof(struct exec_event, argv);
	task_fields(j, &x->e, n, cgroup);
	json_u64(j, "ppid", x->ppid);
	json_u64(j, "uid", x->e.uid);
	json_u64(j, "euid", x->euid);
	json_str_raw(j, "comm", x->e.comm, strnlen(x->e.comm, sizeof(x->e.comm)));
	id_field(j, "exec_id", &x->self);
	id_field(j, "parent_exec_id", &x->parent);
	if (x->flags & EXEC_F_PARENT_UNSEEN)
		json_bool(j, "parent_exec_seen", false);
	if (x->flags & EXEC_F_PREV)
		id_field(j, "prev_exec_id", &x->prev);
	if (x->flags & EXEC_F_SCRIPT) {
		exec__script_path(x, script, sizeof(script));
		json_str_raw(j, "binary", script, strlen(script));
		path_field(j, "interpreter", x->binary,
			   x->flags & EXEC_F_BINARY_TRUNC);
		path_field(j, "interpreter_line", x->interp,
			   x->flags & EXEC_F_INTERP_TRUNC);
	} else {
		path_field(j, "binary", x->binary, x->flags & EXEC_F_BINARY_TRUNC);
	}
	json_str_raw(j, "filename", x->filename, strnlen(x->filename, EXEC_PATH_MAX));
	argv_field(j, x, alen);
	path_field(j, "cwd", x->cwd, x->flags & EXEC_F_CWD_TRUNC);
	/* The kernel's dev_t: major in the bits above 20. */
	snprintf(dev, sizeof(dev), "%" PRIu64 ":%" PRIu64, (uint64_t)(x->dev >> 20),
		 (uint64_t)(x->dev & ((1u << 20) - 1)));
	json_str(j, "dev", dev);
	json_u64(j, "ino", x->ino);
	json_u64(j, "nlink", x->nlink);
}

static void exit_fields(struct json *j, const struct exit_event *x,
			const struct names *n, const char *cgroup)
{
	unsigned int sig = x->exit_code & 0x7f;

	task_fields(j, &x->e, n, cgroup);
	json_str_raw(j, "comm", x->e.comm, strnlen(x->e.comm, sizeof(x->e.comm)));
	id_field(j, "exec_id", &x->self);
	if (sig) {
		json_u64(j, "signal", sig);
		if (x->exit_code & 0x80)
			json_bool(j, "core_dumped", true);
	} else {
		json_u64(j, "status", (x->exit_code >> 8) & 0xff);
	}
	json_u64(j, "run_ms", x->run_ns / 1000000);
	json_u64(j, "run_us", x->run_ns / 1000);
	json_u64(j, "maxrss_kb", x->maxrss_kb);
}

int exec__json(struct json *j, const void *rec, size_t size,
	       const struct names *n, const char *cgroup)
{
	const struct event *e = rec;

	if (size < sizeof(*e))
		return -EINVAL;
	switch (e->type & ~EV_TYPE_PENDING) {
	case EV_EXEC:
		if (size < offsetof(struct exec_event, argv))
			return -EINVAL;
		exec_fields(j, rec, size, n, cgroup);
		break;
	case EV_EXIT:
		if (size < sizeof(struct exit_event))
			return -EINVAL;
		exit_fields(j, rec, n, cgroup);
		break;
	default:
		return -EINVAL;
	}
	if (e->type & EV_TYPE_PENDING)
		json_bool(j, "pending", true);
	return 0;
}
