// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* One builder per shared record (agent/records.h). */
#include <string.h>

#include "records.h"

void records__detach(struct json *j, const char *policy, const char *cgroup,
		     uint64_t cgroup_id, const char *reason)
{
	json_str(j, "policy", policy);
	json_str_raw(j, "cgroup", cgroup, strlen(cgroup));
	json_u64(j, "cgroup_id", cgroup_id);
	json_str(j, "reason", reason);
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
