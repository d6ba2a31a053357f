// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The control commands' shared half (agent/ctl_int.h): opening the pins
 * read-only, reading entries, names and capability sets. The commands:
 * agent/ctl_status.c, agent/ctl_detach.c, agent/ctl_reload.c.
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
#include "file.h"
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

void ctl_close(struct ctl *c)
{
	int *fds[] = { &c->sb_fd, &c->names_fd, &c->cnt_fd, &c->det_fd,
		       &c->data_fd, &c->bss_fd, &c->dir_fd, &c->saved_fd,
		       &c->slots_fd, &c->conf_fd, &c->scope_fd };
	size_t i;

	if (c->data)
		munmap(c->data, c->data_len);
	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (*fds[i] >= 0)
			close(*fds[i]);
	cgroup_paths__free(&c->paths);
	free(c->pins);
	json_free(&c->j);
	if (c->log)
		fclose(c->log);
}

/* Nothing open yet, the default pin directory: what ctl_close() takes. */
void ctl_init(struct ctl *c)
{
	memset(c, 0, sizeof(*c));
	c->bpffs = PIN_DIR_DEFAULT;
	c->dir_fd = c->sb_fd = c->names_fd = c->cnt_fd = c->det_fd = -1;
	c->data_fd = c->bss_fd = c->saved_fd = c->slots_fd = c->conf_fd = -1;
	c->scope_fd = -1;
	json_init(&c->j);
}

/* Options shared by both commands; 0, or 2 on a usage error. */
int ctl_parse(struct ctl *c, int argc, char **argv, bool detach)
{
	enum { OPT_BPFFS = 256, OPT_CGROOT, OPT_LOG, OPT_JSON, OPT_ALL, OPT_STATE,
	       OPT_REQUIRE, OPT_CONTAINERS_DIR };
	static const struct option opts[] = {
		{ "bpffs", required_argument, NULL, OPT_BPFFS },
		{ "cgroup-root", required_argument, NULL, OPT_CGROOT },
		{ "log", required_argument, NULL, OPT_LOG },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "state", required_argument, NULL, OPT_STATE },
		{ "require-agent", no_argument, NULL, OPT_REQUIRE },
		{ "containers-dir", required_argument, NULL, OPT_CONTAINERS_DIR },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd = argv[0];
	int o;

	ctl_init(c);
	optind = 1;
	while ((o = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (o) {
		case OPT_BPFFS:
			c->bpffs = optarg;
			break;
		case OPT_CGROOT:
			c->cgroup_root = optarg;
			break;
		case OPT_LOG:
			if (!detach)
				goto usage;
			c->log_path = optarg;
			break;
		case OPT_JSON:
			if (detach)
				goto usage;
			c->json = true;
			break;
		case OPT_ALL:
			if (!detach)
				goto usage;
			c->all = true;
			break;
		case OPT_STATE:
			/* The pins give everything but the run-time clocks,
			 * which the agent's state file holds. */
			if (detach)
				goto usage;
			c->state_path = optarg;
			break;
		case OPT_REQUIRE:
			if (detach)
				goto usage;
			c->require_agent = true;
			break;
		case OPT_CONTAINERS_DIR:
			/* The agent's --containers-dir: names read as it does. */
			if (detach)
				goto usage;
			c->containers_dir = optarg;
			break;
		case 'v':
			log_verbosity = LOG_DEBUG;
			break;
		case 'h':
		default:
			goto usage;
		}
	}
	if (detach) {
		if (c->all == (optind < argc) || argc - optind > 1)
			goto usage;
		c->target = optind < argc ? argv[optind] : NULL;
	} else if (optind < argc) {
		goto usage;
	}
	return 0;
usage:
	fprintf(stderr, detach ?
		"usage: stockade detach [--bpffs DIR] [--cgroup-root DIR] [--log FILE] --all | POLICY | CGROUP\n"
		"  CGROUP: a path below the cgroup2 mount (/sandboxes/job-1) or the full path\n" :
		"usage: stockade status [--bpffs DIR] [--cgroup-root DIR] [--state FILE] [--containers-dir DIR] [--json | --require-agent]\n");
	(void)cmd;
	return 2;
}

/* Is prog's BPF-LSM link pinned (links/lsm-<prog>)? For lsm__lost(). */
static bool lsm_pinned(const char *prog, void *ctx)
{
	const struct ctl *c = ctx;
	size_t i;

	/* By the pin's own name (the status sort moves the pins). */
	for (i = 0; i < c->n_pins; i++)
		if (!c->pins[i].cg_id && !strncmp(c->pins[i].name, "lsm-", 4) &&
		    !strcmp(c->pins[i].name + 4, prog))
			return true;
	return false;
}

/* The guarantees lost on this kernel: every one without BPF-LSM. */
size_t ctl_degraded(struct ctl *c, size_t n_lsm, const char **out, size_t max)
{
	return n_lsm ? lsm__lost(lsm_pinned, c, out, max) : lsm__guarantees(out, max);
}

/* The link pins, parsed. */
static int read_link_pins(struct ctl *c)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct bpf_link_info info;
	struct link_pin *p;
	const char *prog;
	struct dirent *de;
	__u32 len;
	DIR *d;
	int fd;

	snprintf(dir, sizeof(dir), "%s/links", c->bpffs);
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(p->name))
			continue;
		if (c->n_pins % 64 == 0) {
			p = realloc(c->pins, (c->n_pins + 64) * sizeof(*p));
			if (!p) {
				closedir(d);
				return -ENOMEM;
			}
			c->pins = p;
		}
		p = &c->pins[c->n_pins];
		memset(p, 0, sizeof(*p));
		snprintf(p->name, sizeof(p->name), "%s", de->d_name);
		if (pin__parse_cg_link(p->name, &p->cg_id, &prog)) {
			if (strncmp(p->name, "lsm-", 4))
				continue;
			p->cg_id = 0;
			prog = p->name + 4;
		}
		p->prog_off = (size_t)(prog - p->name);
		if (pin__link_path(path, sizeof(path), c->bpffs, p->name))
			continue;
		fd = bpf_obj_get(path);
		if (fd >= 0) {
			memset(&info, 0, sizeof(info));
			len = sizeof(info);
			if (!bpf_obj_get_info_by_fd(fd, &info, &len)) {
				p->link_id = info.id;
				p->prog_id = info.prog_id;
			}
			close(fd);
		}
		c->n_pins++;
	}
	closedir(d);
	return 0;
}

/* Open what both commands read. 1: nothing is pinned; 0; <0 error. */
int ctl_open(struct ctl *c)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);
	int err;

	err = cgroup_root__find(c->cgroup_root, c->cgroot, sizeof(c->cgroot));
	if (err)
		return err;
	c->dir_fd = pin__dir_open(c->bpffs, false);
	if (c->dir_fd == -ENOENT && access(c->bpffs, F_OK))
		return 1;
	if (c->dir_fd < 0)
		return c->dir_fd;
	c->sb_fd = pin__map_get(c->bpffs, "sandboxes");
	if (c->sb_fd == -ENOENT)
		return 1;
	c->names_fd = pin__map_get(c->bpffs, "policy_names");
	c->slots_fd = pin__map_get(c->bpffs, "policy_slots");
	c->cnt_fd = pin__map_get(c->bpffs, "sb_count");
	c->det_fd = pin__map_get(c->bpffs, "detached");
	c->data_fd = pin__map_get(c->bpffs, "data");
	c->bss_fd = pin__map_get(c->bpffs, "bss");
	/* Absent in pins of a build without limits: nothing to put back. */
	c->saved_fd = pin__map_get(c->bpffs, "lim_saved");
	/* Optional too: without it, status shows no capability set. */
	c->conf_fd = pin__map_get(c->bpffs, "policies");
	c->scope_fd = pin__map_get(c->bpffs, "file_cg_rules");
	if (c->sb_fd < 0 || c->names_fd < 0 || c->cnt_fd < 0 || c->det_fd < 0 ||
	    c->data_fd < 0 || c->bss_fd < 0 || c->slots_fd < 0) {
		pr_err("pin", "the pins under %s are incomplete or from another stockade build%s; starting this build's agent replaces them without a gap, `stockade detach --all --bpffs %s` removes them",
		       c->bpffs, replace__interrupted(c->bpffs) ?
		       " (a replacement was interrupted: its new state is in a staging-* directory there)" : "",
		       c->bpffs);
		return -ENOENT;
	}
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(c->data_fd, &info, &len))
		return -errno;
	if (info.value_size < sizeof(struct stockade__data)) {
		pr_err("pin", "%s/maps/data is not this build's .data; starting this build's agent replaces the pins without a gap, `stockade detach --all --bpffs %s` removes them",
		       c->bpffs, c->bpffs);
		return -EINVAL;
	}
	/* Shared with the programs, which take sequence numbers from it
	 * with atomic adds: so do we. */
	c->data_len = ((size_t)info.value_size + 4095) & ~(size_t)4095;
	c->data = mmap(NULL, c->data_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       c->data_fd, 0);
	if (c->data == MAP_FAILED) {
		err = -errno;
		c->data = NULL;
		pr_err("pin", "mapping %s/maps/data failed: %s", c->bpffs, strerror(errno));
		return err;
	}
	err = cgroup_paths__load(c->cgroot, &c->paths);
	if (err) {
		pr_err("cgroup", "walking %s failed: %s", c->cgroot, strerror(-err));
		return err;
	}
	return read_link_pins(c);
}

const char *ctl_path_of(struct ctl *c, uint64_t id)
{
	return cgroup_paths__find(&c->paths, id) ?: "";
}

void ctl_policy_of(struct ctl *c, uint32_t id, struct policy_info *pi)
{
	memset(pi, 0, sizeof(*pi));
	if (id == POLICY_ID_CONFLICT) {
		snprintf(pi->name, sizeof(pi->name), "(conflict)");
		return;
	}
	if (bpf_map_lookup_elem(c->names_fd, &id, pi) || !pi->name[0])
		snprintf(pi->name, sizeof(pi->name), "(unknown)");
	pi->name[sizeof(pi->name) - 1] = '\0';
}

/*
 * The capability set in force for policy id, as names: "CHOWN,KILL" (text)
 * or "\"CHOWN\",\"KILL\"" (json), "" for none; false when unknown
 * (an older build's pins).
 */
bool ctl_caps_of(struct ctl *c, uint32_t id, bool json, char *buf,
		    size_t len)
{
	struct policy_conf conf;
	size_t o = 0;
	unsigned int cap;

	buf[0] = '\0';
	if (c->conf_fd < 0 || bpf_map_lookup_elem(c->conf_fd, &id, &conf))
		return false;
	for (cap = 0; cap < 64 && o < len; cap++)
		if (conf.caps & (1ULL << cap))
			o += (size_t)snprintf(buf + o, len - o, json ? "%s\"%s\"" : "%s%s",
					      o ? "," : "", policy_cap_name(cap));
	return true;
}

bool ctl_flags_of(struct ctl *c, uint32_t id, uint32_t *flags)
{
	struct policy_conf conf;

	if (c->conf_fd < 0 || bpf_map_lookup_elem(c->conf_fd, &id, &conf))
		return false;
	*flags = conf.flags;
	return true;
}

const char *ctl_file_scope(struct ctl *c, uint32_t id, uint64_t cg)
{
	struct file_cg_key k = {
		.prefixlen = 96 + 8, .policy_id = id,
		.cg_lo = (uint32_t)cg, .cg_hi = (uint32_t)(cg >> 32),
	};
	struct file_rule r;
	uint32_t flags;

	if (!ctl_flags_of(c, id, &flags) || !(flags & SANDBOX_FILE_PER_CGROUP))
		return NULL;
	k.path[0] = '/';
	return c->scope_fd >= 0 && !bpf_map_lookup_elem(c->scope_fd, &k, &r) ?
	       "own" : "missing";
}

uint64_t ctl_file_scopes(struct ctl *c)
{
	struct file_cg_key key, next;
	uint64_t n = 0;
	int err;

	if (c->scope_fd < 0)
		return 0;
	err = bpf_map_get_next_key(c->scope_fd, NULL, &next);
	while (!err) {
		n += next.prefixlen == 96 + 8 && next.path[0] == '/';
		key = next;
		err = bpf_map_get_next_key(c->scope_fd, &key, &next);
	}
	return n;
}

/* The policy id a slot holds now, as the programs resolve it
 * (sandbox_current()): POLICY_ID_CONFLICT for a slot out of range or
 * empty. */
static uint32_t slot_policy(struct ctl *c, uint32_t slot)
{
	__u32 key = slot, id;

	if (slot >= POLICY_SLOTS || bpf_map_lookup_elem(c->slots_fd, &key, &id) ||
	    id >= POLICY_MAX)
		return POLICY_ID_CONFLICT;
	return id;
}

int ctl_read_entries(struct ctl *c, struct entry **out, size_t *n_out)
{
	struct entry *v = NULL, *nv;
	size_t n = 0;
	__u64 key, next;
	int err;

	err = bpf_map_get_next_key(c->sb_fd, NULL, &next);
	while (!err) {
		if (n % 256 == 0) {
			nv = realloc(v, (n + 256) * sizeof(*v));
			if (!nv) {
				free(v);
				return -ENOMEM;
			}
			v = nv;
		}
		if (!bpf_map_lookup_elem(c->sb_fd, &next, &v[n].sb) &&
		    v[n].sb.policy_id != SANDBOX_ENTRY_SANDBOX) {
			/* A watched directory, or a cgroup classified outside
			 * (include/sandbox.h): no sandbox. */
			c->n_watch_entries++;
		} else if (!bpf_map_lookup_elem(c->sb_fd, &next, &v[n].sb)) {
			v[n].sb.policy_id = slot_policy(c, v[n].sb.slot);
			v[n].id = next;
			n++;
		}
		key = next;
		err = bpf_map_get_next_key(c->sb_fd, &key, &next);
	}
	*out = v;
	*n_out = n;
	return 0;
}

struct container_info *ctl_container(const struct ctl *c, const char *path)
{
	const struct container_sources src = {
		.root = "", .hook_dir = c->containers_dir ?: CONTAINER_HOOK_DIR_DEFAULT,
	};
	struct container_meta m;
	struct container_id id;

	if (!path[0] || container__resolve(path, &id))
		return NULL;
	if (container_meta__load(&src, &id, &m))
		memset(&m, 0, sizeof(m));
	return records__container_info(&id, &m);
}
