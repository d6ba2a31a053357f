// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* One builder per shared record (agent/records.h). */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "containers.h"
#include "records.h"

void records__detach(struct json *j, const char *policy, const char *cgroup,
		     uint64_t cgroup_id, const char *reason)
{
	json_str(j, "policy", policy);
	json_str_raw(j, "cgroup", cgroup, strlen(cgroup));
	json_u64(j, "cgroup_id", cgroup_id);
	json_str(j, "reason", reason);
}

/*
 * IPv4 in dotted decimal by hand: inet_ntop() formats it with sprintf(),
 * which was an eighth of the logger's time per network denial
 * (tests/bench/events.sh). IPv6 keeps inet_ntop(): its zero-run
 * compression is the library's to get right. Either text is the program's
 * own (digits, dots, hex, colons): a json_name() value.
 */
void records__addr(struct json *j, const char *key, bool v4, const uint8_t *addr)
{
	char buf[INET6_ADDRSTRLEN], *p = buf;
	int i;

	if (!v4) {
		if (!inet_ntop(AF_INET6, addr, buf, sizeof(buf)))
			buf[0] = '\0';
		json_name(j, key, buf);
		return;
	}
	for (i = 0; i < 4; i++) {
		unsigned int v = addr[i];

		if (i)
			*p++ = '.';
		if (v >= 100)
			*p++ = (char)('0' + v / 100);
		if (v >= 10)
			*p++ = (char)('0' + v / 10 % 10);
		*p++ = (char)('0' + v % 10);
	}
	*p = '\0';
	json_name(j, key, buf);
}

void records__lost(struct json *j, uint64_t count, uint64_t total,
		   const char *state)
{
	json_u64(j, "count", count);
	json_u64(j, "lost_total", total);
	json_str(j, "reason", "ring_buffer_full");
	if (state)
		json_str(j, "state", state);
}

struct container_info *records__container_info(const struct container_id *id,
					       const struct container_meta *m)
{
	const char *uid = id->pod_uid[0] ? id->pod_uid : m->pod_uid;
	struct container_info *c = NULL;
	struct json o, pod;

	json_init(&o);
	json_init(&pod);
	json_begin(&o);
	json_str(&o, "runtime", container__runtime_name(id->runtime));
	json_str(&o, "id", id->id);
	if (m->name[0])
		json_str(&o, "name", m->name);
	if (m->image[0])
		json_str(&o, "image", m->image);
	if (id->ns[0])
		json_str(&o, "namespace", id->ns);
	if (uid[0] || m->pod_name[0] || m->pod_namespace[0]) {
		json_begin(&pod);
		if (m->pod_namespace[0])
			json_str(&pod, "namespace", m->pod_namespace);
		if (m->pod_name[0])
			json_str(&pod, "name", m->pod_name);
		if (uid[0])
			json_str(&pod, "uid", uid);
		json_end(&pod);
		/* Nested: without the line's newline. */
		if (!pod.oom) {
			pod.buf[pod.len - 1] = '\0';
			json_raw(&o, "pod", pod.buf);
		}
		o.oom |= pod.oom;
	}
	json_end(&o);
	if (!o.oom)
		c = malloc(sizeof(*c) + o.len);
	if (c) {
		c->id = *id;
		c->meta = *m;
		memcpy(c->json, o.buf, o.len - 1);
		c->json[o.len - 1] = '\0';
	}
	json_free(&pod);
	json_free(&o);
	return c;
}

void records__container(struct json *j, const struct container_info *c)
{
	if (c && c->json[0])
		json_raw(j, "container", c->json);
}
