/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * libFuzzer target for what `stockade manifest` parses of untrusted bytes
 * (agent/manifest.h): /proc/PID/status, environ and mountinfo, which a
 * sandboxed process shapes (its name, its environment, the mounts it
 * makes in its own namespace), the agent's policy blob and the boundary
 * file. Any bytes in, no crash, no leak, and each contract holds:
 *   - status: success only with uid, gid and every capability set read;
 *   - environ: each name is non-empty, holds no '=' (never a value) and
 *     passes mf_secret_name();
 *   - mountinfo: each mount point is absolute, and every line is a mount
 *     or counted bad;
 *   - blob: parse, write-free; boundary: success only with both keys;
 *   - a log record (`stockade probe` reads the agent's log, which a
 *     sandbox shapes through the strings it makes the agent log): every
 *     string member NUL-terminated within its buffer.
 * The first byte picks the parser, the rest is its input.
 *
 *   make fuzz && build/fuzz/proc_fuzz tests/fuzz/corpus-proc
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manifest.h"
#include "probe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "proc_fuzz: contract broken: %s\n", what);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data + 1;
	size_t len = size ? size - 1 : 0, i, n, bad, lines = 0;
	struct mf_status st;
	struct mf_mount *m;
	struct mf_policy p;
	struct mf_boundary b;
	char why[256], **names;
	int err;

	if (!size)
		return 0;
	switch (data[0] % 6) {
	case 0:
		err = mf_parse_status(buf, len, &st);
		check(err == 0 || err == -EINVAL, "status: unexpected errno");
		if (!err)
			check((st.have & (MF_ST_UID | MF_ST_GID | MF_ST_CAPS)) ==
			      (MF_ST_UID | MF_ST_GID | MF_ST_CAPS), "status: ok without ids or caps");
		check(st.seccomp >= -1 && st.seccomp <= 2, "status: seccomp out of range");
		check(memchr(st.name, '\0', sizeof(st.name)) != NULL, "status: name unterminated");
		break;
	case 1:
		err = mf_environ_secrets(buf, len, &names, &n);
		check(err == 0 || err == -ENOMEM, "environ: unexpected errno");
		for (i = 0; !err && i < n; i++) {
			check(names[i][0] && !strchr(names[i], '='), "environ: empty name or a value");
			check(mf_secret_name(names[i], strlen(names[i])), "environ: a name that is no secret");
		}
		if (!err)
			mf_strv_free(names, n);
		break;
	case 2:
		err = mf_parse_mountinfo(buf, len, &m, &n, &bad);
		check(err == 0 || err == -ENOMEM, "mountinfo: unexpected errno");
		for (i = 0; i < len; i++)
			lines += buf[i] == '\n';
		check(err || n + bad <= lines + 1, "mountinfo: more mounts than lines");
		for (i = 0; !err && i < n; i++)
			check(m[i].point[0] == '/', "mountinfo: relative mount point");
		if (!err)
			mf_mounts_free(m, n);
		break;
	case 3:
		err = mf_blob_parse(buf, len, &p);
		check(err == 0 || err == -EINVAL || err == -ENOMEM, "blob: unexpected errno");
		if (!err)
			mf_policy_free(&p);
		break;
	case 5: {
		struct probe_rec r;

		if (probe_parse_rec(buf, len, &r))
			check(memchr(r.event, 0, sizeof(r.event)) && memchr(r.kind, 0, sizeof(r.kind)) &&
			      memchr(r.op, 0, sizeof(r.op)) && memchr(r.cgroup, 0, sizeof(r.cgroup)),
			      "log record: a string member not terminated");
		break;
	}
	default:
		err = mf_boundary_parse(buf, len, &b, why, sizeof(why));
		check(err == 0 || err == -EINVAL || err == -ENOMEM, "boundary: unexpected errno");
		check(err || (b.name[0] && b.record[0]), "boundary: ok without both keys");
		check(!err || why[0], "boundary: an error without a why");
		break;
	}
	return 0;
}
