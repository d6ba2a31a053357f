// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `stockade status`: what is confined, by which policy, with what
 * counts, limits and guarantees, from the pins alone; it only reads.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cgroup.h"
#include "ctl.h"
#include "limits_agent.h"
#include "limits_util.h"
#include "log.h"
#include "lsm.h"
#include "pin.h"
#include "replace.h"
#include "sandbox.h"
#include "stockade.skel.h"
#include "container_meta.h"
#include "containers.h"
#include "ctl_int.h"

struct row {
	uint64_t id, root;
	uint32_t policy_id, slot;
	bool has_entry;
	const char *path;
	uint64_t denied, audited;	/* sums of sb_count's denied[], audited[] */
	bool has_cnt;
	struct sb_stats use;		/* limits and usage (selector rows) */
	char policy[PIN_POLICY_NAME_LEN];
};

static int row_cmp(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	int d = strcmp(a->path, b->path);

	return d ? d : a->id < b->id ? -1 : a->id > b->id;
}

/* The sandbox's counters and usage (include/stockade_limits.h, cgroup
 * files); denials and audits are the sums over every kind. */
static void counts(struct ctl *c, uint64_t root, struct row *r,
		   const struct state_sb *st, size_t n_st)
{
	unsigned int k;
	size_t i;

	for (i = 0; i < n_st && st[i].id != root; i++)
		;
	r->use.cgroup = r->path;
	r->use.cgroup_id = root;
	limits__usage(c->cgroot, c->cnt_fd, i < n_st ? &st[i] : NULL, &r->use);
	if (!(r->use.have & SB_COUNTS))
		return;
	r->has_cnt = true;
	for (k = 0; k < LIMITS_KINDS; k++) {
		r->denied += r->use.c.denied[k];
		r->audited += r->use.c.audited[k];
	}
}

/* "id,id,..." of root's link pins (or the LSM ones for root 0). */
static void prog_list(struct ctl *c, uint64_t root, bool links, char *buf,
		      size_t len)
{
	size_t i, off = 0;

	buf[0] = '\0';
	for (i = 0; i < c->n_pins && off < len; i++) {
		if (c->pins[i].cg_id != root)
			continue;
		off += (size_t)snprintf(buf + off, len - off, "%s%u", off ? "," : "",
					links ? c->pins[i].link_id : c->pins[i].prog_id);
	}
}

static int pin_cmp(const void *x, const void *y)
{
	const struct link_pin *a = x, *b = y;

	if (a->cg_id != b->cg_id)
		return a->cg_id < b->cg_id ? -1 : 1;
	return strcmp(a->name + a->prog_off, b->name + b->prog_off);
}

/* What status shows, gathered once from the pins. */
struct status {
	struct ctl c;
	struct agent_meta meta;
	struct stockade__bss bss;
	struct entry *v;
	size_t n;
	struct row *rows;
	size_t n_rows, n_lsm, n_deg;
	const char *deg[32];
	struct state_sb *st;
	size_t n_st;
	uint32_t pid;
	bool running;
};

/* The rows: each sandbox entry, and each cgroup with links but no entry
 * (their programs deny all: reason no_policy), so that status covers every
 * link; sorted by path, with their policies, counts and usage. */
static int status_gather(struct status *S)
{
	struct ctl *cp = &S->c;
	unsigned char bss_buf[4096];
	struct policy_info pi;
	uint64_t st_pid = 0;
	__u32 zero = 0;
	size_t i, j;
	int err;

	S->running = pin__agent_running(cp->bpffs, cp->dir_fd, &S->pid);
	pin__meta_read(cp->bpffs, &S->meta);
	if (!bpf_map_lookup_elem(cp->bss_fd, &zero, bss_buf))
		memcpy(&S->bss, bss_buf, sizeof(S->bss));
	err = ctl_read_entries(cp, &S->v, &S->n);
	if (err)
		return err;
	S->rows = calloc(S->n + cp->n_pins + 1, sizeof(*S->rows));
	if (!S->rows)
		return -ENOMEM;
	for (i = 0; i < S->n; i++) {
		struct row *r = &S->rows[S->n_rows++];

		r->id = S->v[i].id;
		r->root = S->v[i].sb.root_id;
		r->policy_id = S->v[i].sb.policy_id;
		r->slot = S->v[i].sb.slot;
		r->has_entry = true;
	}
	for (i = 0; i < cp->n_pins; i++) {
		if (!cp->pins[i].cg_id)
			continue;
		for (j = 0; j < S->n_rows && S->rows[j].id != cp->pins[i].cg_id; j++)
			;
		if (j == S->n_rows) {
			S->rows[S->n_rows].id = S->rows[S->n_rows].root = cp->pins[i].cg_id;
			S->n_rows++;
		}
	}
	/* The run-time clocks live in the running agent's state file only. */
	limits__state_read(cp->state_path, &S->st, &S->n_st, &st_pid);
	for (i = 0; i < S->n_rows; i++) {
		struct row *r = &S->rows[i];

		r->path = ctl_path_of(cp, r->id);
		if (r->has_entry) {
			ctl_policy_of(cp, r->policy_id, &pi);
			memcpy(r->policy, pi.name, sizeof(r->policy));
		} else {
			snprintf(r->policy, sizeof(r->policy), "(no entry)");
		}
		if (r->root == r->id)
			counts(cp, r->id, r, S->st, S->n_st);
	}
	qsort(S->rows, S->n_rows, sizeof(*S->rows), row_cmp);
	/* After the sort: use.policy points into its own row. */
	for (i = 0; i < S->n_rows; i++)
		S->rows[i].use.policy = S->rows[i].policy;
	qsort(cp->pins, cp->n_pins, sizeof(*cp->pins), pin_cmp);
	for (i = 0; i < cp->n_pins; i++)
		S->n_lsm += !cp->pins[i].cg_id;
	S->n_deg = ctl_degraded(cp, S->n_lsm, S->deg, sizeof(S->deg) / sizeof(S->deg[0]));
	if (S->n_deg > sizeof(S->deg) / sizeof(S->deg[0]))
		S->n_deg = sizeof(S->deg) / sizeof(S->deg[0]);
	return 0;
}

/* What may execute under policy id (README, "Execution"), as in force. */
/* How many rows are a container's own cgroup. */
static uint64_t status_containers(const struct status *S)
{
	struct container_id id;
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < S->n_rows; i++)
		n += S->rows[i].path[0] && !container__resolve(S->rows[i].path, &id) &&
		     id.path_len == strlen(S->rows[i].path);
	return n;
}

static void status_exec_fields(struct ctl *c, struct json *j, uint32_t id)
{
	uint32_t flags;

	if (!ctl_flags_of(c, id, &flags))
		return;
	json_bool(j, "exec_allow_written", flags & SANDBOX_EXEC_WRITTEN);
	json_str(j, "anon_exec", flags & SANDBOX_ANON_EXEC_DENY ? "deny" : "allow");
}

/* status --json: one object (README, "CLI"). */
static void status_print_json(struct status *S)
{
	struct ctl *c = &S->c;
	char progs[1024], links[1024], hash[20];
	struct policy_info pi;
	size_t i, j;

	struct json *j2 = &c->j;
	struct json sub;

	json_init(&sub);
	json_begin(j2);
	json_str(j2, "bpffs", c->bpffs);
	json_bool(j2, "pinned", true);
	{
		char agent[96];

		if (S->running)
			snprintf(agent, sizeof(agent), "{\"running\":true,\"pid\":%u}", S->pid);
		else
			snprintf(agent, sizeof(agent), "{\"running\":false,\"last_pid\":%u}",
				 S->meta.pid);
		json_raw(j2, "agent", agent);
	}
	json_str_array(j2, "degraded", S->deg, S->n_deg);
	json_u64(j2, "seq_next", c->data->ev_seq);
	json_u64(j2, "events_lost", S->bss.ev_lost);
	json_u64(j2, "events_lost_reported", S->meta.lost_reported);
	json_u64(j2, "watch_entries", c->n_watch_entries);
	json_u64(j2, "file_scopes", ctl_file_scopes(c));
	json_u64(j2, "containers", status_containers(S));
	fwrite(j2->buf, 1, j2->len, stdout);
	printf(",\"lsm\":[");
	for (i = 0, j = 0; i < c->n_pins; i++) {
		if (c->pins[i].cg_id)
			continue;
		json_begin(&sub);
		json_str(&sub, "program", c->pins[i].name + c->pins[i].prog_off);
		json_u64(&sub, "link_id", c->pins[i].link_id);
		json_u64(&sub, "prog_id", c->pins[i].prog_id);
		printf("%s%s}", j++ ? "," : "", sub.buf);
	}
	printf("],\"cgroups\":[");
	for (i = 0; i < S->n_rows; i++) {
		const struct row *r = &S->rows[i];
		struct container_info *ci = ctl_container(c, r->path);

		json_begin(&sub);
		json_str(&sub, "cgroup", r->path);
		json_u64(&sub, "cgroup_id", r->id);
		records__container(&sub, ci);
		free(ci);
		json_str(&sub, "via", r->root == r->id ? "selector" : "inherited");
		if (r->root != r->id) {
			json_str(&sub, "root", ctl_path_of(c, r->root));
			json_u64(&sub, "root_id", r->root);
		}
		if (r->has_entry) {
			ctl_policy_of(c, r->policy_id, &pi);
			snprintf(hash, sizeof(hash), "%016llx",
				 (unsigned long long)pi.hash);
			json_str(&sub, "policy", pi.name);
			json_u64(&sub, "policy_id", r->policy_id);
			json_u64(&sub, "slot", r->slot);
			json_u64(&sub, "generation", pi.generation);
			json_str(&sub, "hash", hash);
			json_str(&sub, "mode", pi.mode == SANDBOX_AUDIT ? "audit" : "enforce");
			if (r->root == r->id) {
				const char *fs = ctl_file_scope(c, r->policy_id, r->id);

				if (fs)
					json_str(&sub, "file_scope", fs);
			}
			{
				char names[1024], lit[1040];

				if (ctl_caps_of(c, r->policy_id, true, names,
					    sizeof(names))) {
					snprintf(lit, sizeof(lit), "[%s]", names);
					json_raw(&sub, "capabilities", lit);
				}
			}
			status_exec_fields(c, &sub, r->policy_id);
		} else {
			json_str(&sub, "policy", "(no entry)");
		}
		if (r->root == r->id) {
			char lit[1040];

			prog_list(c, r->id, false, progs, sizeof(progs));
			snprintf(lit, sizeof(lit), "[%s]", progs);
			json_raw(&sub, "prog_ids", lit);
			prog_list(c, r->id, true, links, sizeof(links));
			snprintf(lit, sizeof(lit), "[%s]", links);
			json_raw(&sub, "link_ids", lit);
			json_u64(&sub, "denials", r->denied);
			json_u64(&sub, "audits", r->audited);
			/* Limits and usage: the same object. */
			status_json_usage(&sub, &r->use);
		}
		printf("%s%s}", i ? "," : "", sub.buf);
	}
	printf("],\"detached\":[");
	{
		__u64 key, next;
		int e = bpf_map_get_next_key(c->det_fd, NULL, &next);

		for (j = 0; !e; j++) {
			json_begin(&sub);
			json_str(&sub, "cgroup", ctl_path_of(c, next));
			json_u64(&sub, "cgroup_id", next);
			printf("%s%s}", j ? "," : "", sub.buf);
			key = next;
			e = bpf_map_get_next_key(c->det_fd, &key, &next);
		}
	}
	printf("]}\n");
	json_free(&sub);
}

/* The text status: the agent, the pins, BPF-LSM, then one row a cgroup. */
static void status_print_rows(struct status *S)
{
	struct ctl *c = &S->c;
	char progs[1024], hash[20];
	struct policy_info pi;
	size_t i;

	if (S->running)
		printf("agent:    running (pid %u)\n", S->pid);
	else if (S->meta.pid)
		printf("agent:    NOT running (pid %u stopped without a clean exit); the pinned programs keep enforcing\n",
		       S->meta.pid);
	else
		printf("agent:    not running; the pinned programs keep enforcing\n");
	printf("pins:     %s\n", c->bpffs);
	printf("events:   next seq %llu, %llu lost in total (%llu reported)\n",
	       (unsigned long long)c->data->ev_seq, (unsigned long long)S->bss.ev_lost,
	       (unsigned long long)S->meta.lost_reported);
	if (c->n_watch_entries)
		printf("watching: %zu entries (directories watched for new cgroups, and cgroups below them classified outside)\n",
		       c->n_watch_entries);
	if (S->n_lsm) {
		prog_list(c, 0, false, progs, sizeof(progs));
		printf("BPF-LSM:  %zu programs attached, prog ids %s\n", S->n_lsm, progs);
		if (S->n_deg) {
			printf("degraded:");
			for (i = 0; i < S->n_deg; i++)
				printf("%s %s", i ? "," : "", S->deg[i]);
			printf(" (hooks this kernel lacks)\n");
		}
	} else {
		printf("BPF-LSM:  none attached (the agent runs degraded: network rules only)\n");
	}
	printf("\n%-28s %-8s %-9s %-16s %-4s %-16s %-7s %-24s %7s %7s  %s\n", "CGROUP",
	       "ID", "VIA", "POLICY", "GEN", "HASH", "MODE", "PROG IDS", "DENIED",
	       "AUDITED", "CONTAINER");
	for (i = 0; i < S->n_rows; i++) {
		const struct row *r = &S->rows[i];
		char d[24] = "-", au[24] = "-", gen[16] = "-", ctr[300] = "-";
		struct container_info *ci = ctl_container(c, r->path);

		/* runtime:name, else runtime:id (12 digits, as docker ps). */
		if (ci)
			snprintf(ctr, sizeof(ctr), "%s:%.*s", container__runtime_name(ci->id.runtime),
				 ci->meta.name[0] ? (int)sizeof(ci->meta.name) : 12,
				 ci->meta.name[0] ? ci->meta.name : ci->id.id);
		free(ci);
		if (r->has_entry) {
			ctl_policy_of(c, r->policy_id, &pi);
			snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)pi.hash);
			snprintf(gen, sizeof(gen), "%u", pi.generation);
		} else {
			memset(&pi, 0, sizeof(pi));
			snprintf(pi.name, sizeof(pi.name), "(no entry)");
			snprintf(hash, sizeof(hash), "-");
		}
		if (r->root == r->id) {
			prog_list(c, r->id, false, progs, sizeof(progs));
			if (r->has_cnt) {
				snprintf(d, sizeof(d), "%llu", (unsigned long long)r->denied);
				snprintf(au, sizeof(au), "%llu", (unsigned long long)r->audited);
			}
		} else {
			snprintf(progs, sizeof(progs), "(%s)", ctl_path_of(c, r->root));
		}
		printf("%-28s %-8" PRIu64 " %-9s %-16s %-4s %-16s %-7s %-24s %7s %7s  %s\n",
		       r->path[0] ? r->path : "(removed)", r->id,
		       r->root == r->id ? "selector" : "inherited", pi.name, gen, hash,
		       !r->has_entry ? "-" : pi.mode == SANDBOX_AUDIT ? "audit" : "enforce",
		       progs[0] ? progs : "-", d, au, ctr);
	}
	if (!S->n_rows)
		printf("(no cgroup is confined)\n");
}

/* The text status, after the rows: each policy's capability set, the
 * sandboxes' usage and limits, the cgroups detached on purpose. */
static void status_print_tail(struct status *S)
{
	struct ctl *c = &S->c;
	struct sb_stats *use;
	struct policy_info pi;
	size_t i, j, n_use = 0;

	/* The capability set of each policy in use, once per policy id. */
	for (i = 0, j = 0; i < S->n_rows; i++) {
		char names[1024];
		size_t k;

		if (!S->rows[i].has_entry)
			continue;
		for (k = 0; k < i; k++)
			if (S->rows[k].has_entry && S->rows[k].policy_id == S->rows[i].policy_id)
				break;
		if (k < i || !ctl_caps_of(c, S->rows[i].policy_id, false, names,
				      sizeof(names)))
			continue;
		ctl_policy_of(c, S->rows[i].policy_id, &pi);
		printf("%s  %-16s %s\n", j++ ? "" : "\ncapabilities by policy:\n",
		       pi.name, names[0] ? names : "(none)");
	}
	/* Second section: what each sandbox (selected cgroup) used, and its
	 * limits. */
	use = calloc(S->n_rows + 1, sizeof(*use));
	for (i = 0; use && i < S->n_rows; i++)
		if (S->rows[i].root == S->rows[i].id)
			use[n_use++] = S->rows[i].use;
	if (n_use) {
		printf("\nusage and limits (connect, sendmsg: allowed/denied; denied: other kinds):\n");
		status_print_table(stdout, use, n_use);
	}
	{
		__u64 key, next;
		int e = bpf_map_get_next_key(c->det_fd, NULL, &next);

		for (j = 0; !e; j++) {
			printf("%s%s (%llu)", j ? ", " : "\ndetached on purpose: ",
			       ctl_path_of(c, next)[0] ? ctl_path_of(c, next) : "(removed)",
			       (unsigned long long)next);
			key = next;
			e = bpf_map_get_next_key(c->det_fd, &key, &next);
		}
		if (j)
			printf("\n");
	}
	free(use);
}

/*
 * status --require-agent, a liveness probe (deploy/kubernetes/): is an
 * agent holding the pin directory's lock? The agent takes it before it
 * loads anything and holds it until it exits, so a hung start or a dead
 * agent fails the probe, while its pins keep enforcing. Only the lock is
 * asked (no map is read, no cgroup walked): cheap every few seconds.
 * 0 held, 3 not (said on stdout), 1 an error.
 */
static int require_agent(const char *bpffs)
{
	uint32_t pid = 0;
	int fd = pin__dir_open(bpffs, false);	/* it says what is wrong */

	if (fd < 0) {
		printf("agent: not running (nothing pinned at %s)\n", bpffs);
		return fd == -ENOENT ? 3 : 1;
	}
	if (!pin__agent_running(bpffs, fd, &pid)) {
		printf("agent: not running (no agent holds %s); the pinned programs keep enforcing\n",
		       bpffs);
		close(fd);
		return 3;
	}
	printf("agent: running (pid %u) on %s\n", pid, bpffs);
	close(fd);
	return 0;
}

int ctl__status(int argc, char **argv)
{
	struct status S = { 0 };
	int err, rc = 1;

	err = ctl_parse(&S.c, argc, argv, false);
	if (err)
		return err;
	if (S.c.require_agent)
		return require_agent(S.c.bpffs);
	err = ctl_open(&S.c);
	if (err == 1) {
		if (S.c.json)
			printf("{\"bpffs\":\"%s\",\"pinned\":false,\"agent\":{\"running\":false},\"cgroups\":[]}\n",
			       S.c.bpffs);
		else if (S.c.dir_fd >= 0 && replace__interrupted(S.c.bpffs))
			printf("an interrupted replacement holds the state pinned at %s (in a staging-* directory there): the sandboxes stay confined; start the agent to finish it\n",
			       S.c.bpffs);
		else
			printf("nothing is pinned at %s: stockade confines no cgroup, and no agent runs\n",
			       S.c.bpffs);
		rc = 0;
		goto out;
	}
	if (err || status_gather(&S))
		goto out;
	if (S.c.json) {
		status_print_json(&S);
	} else {
		status_print_rows(&S);
		status_print_tail(&S);
	}
	rc = 0;
out:
	fflush(stdout);
	free(S.v);
	free(S.rows);
	free(S.st);
	ctl_close(&S.c);
	return rc;
}
