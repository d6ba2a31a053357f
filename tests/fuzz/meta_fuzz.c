/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * libFuzzer target for the JSON readers of agent/container_meta.c: the
 * OCI state a runtime hands `stockade oci-hook`, an OCI config.json's
 * annotations (containerd, CRI-O, podman), docker's config.v2.json and
 * the hook's own records. A container's creator chooses its name, image
 * and annotations, so any bytes in, no crash, no leak, and each contract
 * holds:
 *   - the errno is one of those the header names;
 *   - on success, every field is NUL-terminated inside its buffer and
 *     holds no control character (C0, DEL, C1); a state's id can name a
 *     file, its pid is a pid, its bundle is absolute or empty;
 *   - on an error, nothing is left behind (have false, every field "").
 * The first byte picks the reader ('0'..'3' in the seeds), the rest is
 * its input.
 *
 *   make fuzz && build/fuzz/meta_fuzz tests/fuzz/corpus-meta
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "container_meta.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "meta_fuzz: contract broken: %s\n", what);
		abort();
	}
}

static bool clean(const char *s, size_t cap)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i, n;

	if (!memchr(s, '\0', cap))
		return false;
	n = strlen(s);
	for (i = 0; i < n; i++)
		if (p[i] < 0x20 || p[i] == 0x7f ||
		    (p[i] == 0xc2 && i + 1 < n && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f))
			return false;
	return true;
}

static void check_meta(const struct container_meta *m, int err)
{
	check(err == 0 || err == -EINVAL || err == -ENAMETOOLONG || err == -EFBIG ||
	      err == -ENOMEM, "unexpected errno");
	check(clean(m->name, sizeof(m->name)) && clean(m->image, sizeof(m->image)) &&
	      clean(m->pod_namespace, sizeof(m->pod_namespace)) &&
	      clean(m->pod_name, sizeof(m->pod_name)) && clean(m->pod_uid, sizeof(m->pod_uid)),
	      "a field unterminated or with a control character");
	if (err)
		check(!m->have && !m->name[0] && !m->image[0] && !m->pod_namespace[0] &&
		      !m->pod_name[0] && !m->pod_uid[0], "an error left a value behind");
	else
		check(m->have, "success without have");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data + 1;
	size_t len = size ? size - 1 : 0;
	struct container_meta m;
	struct oci_state st;
	char why[256];
	int err;

	if (!size)
		return 0;
	switch (data[0] % 4) {
	case 0:
		err = container_meta__parse_state(buf, len, &st, why, sizeof(why));
		check(err == 0 || err == -EINVAL || err == -ENAMETOOLONG || err == -EFBIG ||
		      err == -ENOMEM, "state: unexpected errno");
		if (!err) {
			check(container_meta__id_ok(st.id), "state: an id that cannot name a file");
			check(st.pid >= 0 && st.pid <= (1 << 22), "state: pid out of range");
			check(clean(st.bundle, sizeof(st.bundle)) &&
			      (!st.bundle[0] || st.bundle[0] == '/'), "state: bundle not absolute");
			check(clean(st.status, sizeof(st.status)), "state: status");
			check(st.meta.have == st.have_annotations, "state: have without annotations");
			if (st.have_annotations)
				check_meta(&st.meta, 0);
		} else {
			check(!st.id[0] && !st.meta.have, "state: an error left a value behind");
		}
		break;
	case 1:
		err = container_meta__parse_config(buf, len, &m, why, sizeof(why));
		check_meta(&m, err);
		break;
	case 2:
		err = container_meta__parse_docker(buf, len, &m, why, sizeof(why));
		check_meta(&m, err);
		break;
	default:
		err = container_meta__parse_record(buf, len, "abc", &m, why, sizeof(why));
		check_meta(&m, err);
		break;
	}
	return 0;
}
