// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `stockade status` and `stockade detach`, from the pins alone
 * (include/lifecycle.h): no BPF program is loaded, and no agent needs to
 * run. status only reads. detach removes enforcement on purpose, links
 * first, then the sandbox entries their programs read, and logs one
 * `detach` record per cgroup, numbered from the pinned sequence counter so
 * that the stream has no unexplained gap.
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

#include "agent.h"
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

/* One link pin: links/cg-<id>-<prog> or links/lsm-<prog>. */
struct link_pin {
	char name[128];
	uint64_t cg_id;		/* 0 for an LSM link */
	const char *prog;	/* points into name */
	__u32 link_id, prog_id;
};

struct ctl {
	const char *bpffs;
	const char *cgroup_root;
	char cgroot[PATH_MAX];
	const char *log_path;
	const char *state_path;	/* status --state: run-time clocks */
	bool json, all;
	const char *target;

	int dir_fd;
	int sb_fd, names_fd, cnt_fd, det_fd, data_fd, bss_fd;
	size_t n_watch_entries;	/* WATCHED and OUTSIDE entries */
	int slots_fd;		/* policy_slots: an entry's slot -> policy id */
	int saved_fd;		/* lim_saved: limit values found (optional) */
	int conf_fd;		/* policies: each id's settings (capabilities) */
	struct stockade__data *data;	/* the pinned .data, mmap()ed */
	size_t data_len;
	bool agent_running;
	struct cgroup_paths paths;
	struct link_pin *pins;
	size_t n_pins;
	struct json j;
	FILE *log;
};

static void ctl_close(struct ctl *c)
{
	int *fds[] = { &c->sb_fd, &c->names_fd, &c->cnt_fd, &c->det_fd,
		       &c->data_fd, &c->bss_fd, &c->dir_fd, &c->saved_fd,
		       &c->slots_fd, &c->conf_fd };
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

/* Options shared by both commands; 0, or 2 on a usage error. */
static int ctl_parse(struct ctl *c, int argc, char **argv, bool detach)
{
	enum { OPT_BPFFS = 256, OPT_CGROOT, OPT_LOG, OPT_JSON, OPT_ALL, OPT_STATE };
	static const struct option opts[] = {
		{ "bpffs", required_argument, NULL, OPT_BPFFS },
		{ "cgroup-root", required_argument, NULL, OPT_CGROOT },
		{ "log", required_argument, NULL, OPT_LOG },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "state", required_argument, NULL, OPT_STATE },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd = argv[0];
	int o;

	memset(c, 0, sizeof(*c));
	c->bpffs = PIN_DIR_DEFAULT;
	c->dir_fd = c->sb_fd = c->names_fd = c->cnt_fd = c->det_fd = -1;
	c->data_fd = c->bss_fd = c->saved_fd = c->slots_fd = c->conf_fd = -1;
	json_init(&c->j);
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
		"usage: stockade status [--bpffs DIR] [--cgroup-root DIR] [--state FILE] [--json]\n");
	(void)cmd;
	return 2;
}

/* Is prog's BPF-LSM link pinned (links/lsm-<prog>)? For lsm__lost(). */
static bool lsm_pinned(const char *prog, void *ctx)
{
	const struct ctl *c = ctx;
	size_t i;

	/* By the pin's own name: .prog points into the name where the pin
	 * was read, and the status sort moves the pins. */
	for (i = 0; i < c->n_pins; i++)
		if (!c->pins[i].cg_id && !strncmp(c->pins[i].name, "lsm-", 4) &&
		    !strcmp(c->pins[i].name + 4, prog))
			return true;
	return false;
}

/* The guarantees lost on this kernel: every one without BPF-LSM. */
static size_t status_degraded(struct ctl *c, size_t n_lsm, const char **out, size_t max)
{
	return n_lsm ? lsm__lost(lsm_pinned, c, out, max) : lsm__guarantees(out, max);
}

/* The link pins, parsed. */
static int read_link_pins(struct ctl *c)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct bpf_link_info info;
	struct link_pin *p;
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
		if (pin__parse_cg_link(p->name, &p->cg_id, &p->prog)) {
			if (strncmp(p->name, "lsm-", 4))
				continue;
			p->cg_id = 0;
			p->prog = p->name + 4;
		}
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
static int ctl_open(struct ctl *c)
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

static const char *path_of(struct ctl *c, uint64_t id)
{
	return cgroup_paths__find(&c->paths, id) ?: "";
}

static void policy_of(struct ctl *c, uint32_t id, struct policy_info *pi)
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
static bool caps_of(struct ctl *c, uint32_t id, bool json, char *buf,
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

/* Every sandbox entry (id -> struct sandbox), its slot resolved into
 * sb.policy_id. */
struct entry {
	uint64_t id;
	struct sandbox sb;
};

static int read_entries(struct ctl *c, struct entry **out, size_t *n_out)
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

/* ---- detach ---- */

static void detach_record(struct ctl *c, uint64_t id, uint32_t policy_id)
{
	struct policy_info pi;
	uint64_t seq = __atomic_fetch_add(&c->data->ev_seq, 1, __ATOMIC_RELAXED);

	policy_of(c, policy_id, &pi);
	events__json_begin(&c->j, seq, "detach");
	json_str(&c->j, "policy", pi.name);
	json_str(&c->j, "cgroup", path_of(c, id));
	json_u64(&c->j, "cgroup_id", id);
	json_str(&c->j, "reason", "detach_command");
	json_end(&c->j);
	fwrite(c->j.buf, 1, c->j.len, stdout);
	if (c->log)
		fwrite(c->j.buf, 1, c->j.len, c->log);
}

/*
 * Remove the sandbox rooted at root: its links (BPF_LINK_DETACH, which
 * ends them even while an agent holds them open), their pins, then every
 * entry confined through it, each with a record. Returns how many
 * cgroups were released.
 */
static size_t detach_root(struct ctl *c, uint64_t root, const struct entry *v,
			  size_t n)
{
	char path[PATH_MAX];
	size_t i, released = 0;
	int fd;

	for (i = 0; i < c->n_pins; i++) {
		if (!c->pins[i].cg_id || c->pins[i].cg_id != root)
			continue;
		if (pin__link_path(path, sizeof(path), c->bpffs, c->pins[i].name))
			continue;
		fd = bpf_obj_get(path);
		if (fd >= 0) {
			if (bpf_link_detach(fd) && errno != EINVAL && errno != ENOLINK)
				pr_warn("detach", "detaching %s failed: %s", path,
					strerror(errno));
			close(fd);
		}
		if (unlink(path) && errno != ENOENT)
			pr_warn("detach", "removing %s failed: %s", path, strerror(errno));
	}
	/* The root's record first, then the cgroups inherited from it. */
	for (i = 0; i < n; i++) {
		if (v[i].id != root || v[i].sb.root_id != root)
			continue;
		if (!bpf_map_delete_elem(c->sb_fd, &v[i].id)) {
			detach_record(c, v[i].id, v[i].sb.policy_id);
			released++;
		}
	}
	for (i = 0; i < n; i++) {
		if (v[i].id == root || v[i].sb.root_id != root)
			continue;
		if (!bpf_map_delete_elem(c->sb_fd, &v[i].id)) {
			detach_record(c, v[i].id, v[i].sb.policy_id);
			released++;
		}
	}
	bpf_map_delete_elem(c->cnt_fd, &root);
	/* Enforcement is gone: so are the limits. A running agent puts them
	 * back itself when it sees the detach (it knows them best). */
	if (!c->agent_running) {
		const char *rel = path_of(c, root);

		limits__restore_saved(c->cgroot, rel[0] ? rel : NULL, c->saved_fd, root);
	}
	return released;
}

/* Resolve CGROUP (relative to the mount, or the full path) to its id. */
static int cgroup_target(struct ctl *c, const char *arg, uint64_t *id,
			 char *rel, size_t len)
{
	size_t rlen = strlen(c->cgroot);
	struct stat st;
	char full[PATH_MAX];

	if (!strncmp(arg, c->cgroot, rlen) && arg[rlen] == '/')
		arg += rlen;
	snprintf(rel, len, "%s", arg);
	/* Drop trailing slashes: "/a/" names "/a". */
	while (strlen(rel) > 1 && rel[strlen(rel) - 1] == '/')
		rel[strlen(rel) - 1] = '\0';
	snprintf(full, sizeof(full), "%s%s", c->cgroot, rel);
	if (stat(full, &st) || !S_ISDIR(st.st_mode)) {
		pr_err("detach", "no cgroup %s under %s (%s)", rel, c->cgroot,
		       strerror(errno ?: ENOTDIR));
		return -ENOENT;
	}
	*id = st.st_ino;
	return 0;
}

int ctl__detach(int argc, char **argv)
{
	struct ctl c;
	struct entry *v = NULL;
	struct timespec now;
	char rel[PATH_MAX];
	uint32_t pid = 0, policy_id = 0;
	uint64_t id, *roots = NULL;
	size_t i, j, n = 0, n_roots = 0, released = 0, lsm = 0;
	int err, rc = 1;

	err = ctl_parse(&c, argc, argv, true);
	if (err)
		return err;
	if (c.log_path) {
		c.log = fopen(c.log_path, "ae");
		if (!c.log) {
			pr_err("detach", "cannot open --log %s: %s", c.log_path,
			       strerror(errno));
			goto out;
		}
	}
	err = ctl_open(&c);
	if (err == 1 && c.all && c.dir_fd >= 0 && replace__interrupted(c.bpffs)) {
		/* Killed while publishing a replacement: all of the state is
		 * in a staging directory. Its links end with their pins. */
		if (pin__lock(c.dir_fd, true)) {
			pr_err("detach", "an agent is running on %s; stop it first, then run detach --all",
			       c.bpffs);
			goto out;
		}
		if (!pin__remove_all(c.bpffs)) {
			fprintf(stderr, "stockade: detach: the state of an interrupted replacement removed, %s removed\n",
				c.bpffs);
			rc = 0;
		}
		goto out;
	}
	if (err == 1) {
		if (c.all) {
			fprintf(stderr, "stockade: detach: nothing is pinned at %s; nothing to detach\n",
				c.bpffs);
			rc = 0;
		} else {
			pr_err("detach", "nothing is pinned at %s: %s is not confined by stockade",
			       c.bpffs, c.target);
		}
		goto out;
	}
	if (err)
		goto out;
	c.agent_running = pin__agent_running(c.bpffs, c.dir_fd, &pid);
	if (c.all && c.agent_running) {
		pr_err("detach", "an agent (pid %u) is running on %s; stop it first (kill -TERM %u), then run detach --all: the BPF-LSM links end only when the agent lets go of them",
		       pid, c.bpffs, pid);
		goto out;
	}
	if (c.all && pin__lock(c.dir_fd, true)) {
		pr_err("detach", "an agent started on %s meanwhile; stop it first", c.bpffs);
		goto out;
	}
	err = read_entries(&c, &v, &n);
	if (err)
		goto out;
	roots = calloc(n + c.n_pins + 1, sizeof(*roots));
	if (!roots)
		goto out;

	if (c.all) {
		for (i = 0; i < n; i++)
			if (v[i].sb.root_id == v[i].id)
				roots[n_roots++] = v[i].id;
		/* Links of a cgroup whose entry is already gone. */
		for (i = 0; i < c.n_pins; i++) {
			for (j = 0; c.pins[i].cg_id && j < n_roots; j++)
				if (roots[j] == c.pins[i].cg_id)
					break;
			if (c.pins[i].cg_id && j == n_roots)
				roots[n_roots++] = c.pins[i].cg_id;
		}
	} else if (c.target[0] == '/') {
		err = cgroup_target(&c, c.target, &id, rel, sizeof(rel));
		if (err)
			goto out;
		for (i = 0; i < n && v[i].id != id; i++)
			;
		if (i == n) {
			pr_err("detach", "%s (cgroup id %" PRIu64 ") is not confined by stockade (see stockade status)",
			       rel, id);
			goto out;
		}
		if (v[i].sb.root_id != id) {
			pr_err("detach", "%s is confined through %s, a cgroup a selector chose, whose programs cover its whole subtree; detach that one",
			       rel, path_of(&c, v[i].sb.root_id));
			goto out;
		}
		roots[n_roots++] = id;
	} else {
		struct policy_info pi;
		__u32 k;

		for (k = 1; k < POLICY_MAX && !policy_id; k++)
			if (!bpf_map_lookup_elem(c.names_fd, &k, &pi) &&
			    !strncmp(pi.name, c.target, sizeof(pi.name)))
				policy_id = k;
		if (!policy_id) {
			pr_err("detach", "no policy named %s is pinned under %s (see stockade status); a cgroup starts with '/'",
			       c.target, c.bpffs);
			goto out;
		}
		/* By name, not by that id: while a reload switches, a policy
		 * may hold two ids (its slot names the one in force). */
		for (i = 0; i < n; i++) {
			if (v[i].sb.root_id != v[i].id)
				continue;
			policy_of(&c, v[i].sb.policy_id, &pi);
			if (!strncmp(pi.name, c.target, sizeof(pi.name)))
				roots[n_roots++] = v[i].id;
		}
		if (!n_roots)
			fprintf(stderr, "stockade: detach: policy %s confines no cgroup\n",
				c.target);
	}

	clock_gettime(CLOCK_REALTIME, &now);
	for (i = 0; i < n_roots; i++) {
		__u64 when = (__u64)now.tv_sec * 1000000000 + (__u64)now.tv_nsec;

		/* First: a running agent must not attach it again. */
		if (!c.all && bpf_map_update_elem(c.det_fd, &roots[i], &when, BPF_ANY)) {
			pr_err("detach", "marking %s detached failed: %s; nothing changed",
			       path_of(&c, roots[i]), strerror(errno));
			goto out;
		}
		released += detach_root(&c, roots[i], v, n);
	}
	if (c.all) {
		/* Entries no root holds any more, then BPF-LSM, then the
		 * maps: nothing pinned is left. */
		for (i = 0; i < n; i++)
			if (!bpf_map_delete_elem(c.sb_fd, &v[i].id)) {
				detach_record(&c, v[i].id, v[i].sb.policy_id);
				released++;
			}
		for (i = 0; i < c.n_pins; i++)
			lsm += !c.pins[i].cg_id;
		/* Limits of sandboxes whose entry went before (the maps go
		 * next, and with them the values found). */
		if (c.saved_fd >= 0) {
			__u64 k;
			size_t guard = 0;

			while (guard++ < SANDBOX_MAX_CGROUPS &&
			       !bpf_map_get_next_key(c.saved_fd, NULL, &k)) {
				const char *rel = path_of(&c, k);

				if (!limits__restore_saved(c.cgroot, rel[0] ? rel : NULL,
							   c.saved_fd, k))
					break;
			}
		}
		fflush(stdout);
		if (c.log)
			fflush(c.log);
		err = pin__remove_all(c.bpffs);
		if (err)
			goto out;
		fprintf(stderr, "stockade: detach: %zu cgroups released, %zu BPF-LSM links removed, %s removed\n",
			released, lsm, c.bpffs);
	}
	rc = 0;
out:
	fflush(stdout);
	free(v);
	free(roots);
	ctl_close(&c);
	return rc;
}

/* ---- status ---- */

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
	return strcmp(a->prog, b->prog);
}

int ctl__status(int argc, char **argv)
{
	struct ctl c;
	struct agent_meta meta = { 0 };
	struct entry *v = NULL;
	struct row *rows = NULL;
	struct stockade__bss bss = { 0 };
	unsigned char bss_buf[4096];
	char progs[1024], links[1024], hash[20];
	struct policy_info pi;
	struct state_sb *st = NULL;
	struct sb_stats *use = NULL;
	uint64_t st_pid = 0;
	size_t n_st = 0, n_use = 0;
	uint32_t pid = 0;
	bool running = false;
	size_t i, j, n = 0, n_rows = 0, n_lsm = 0, n_deg;
	const char *deg[32];
	__u32 zero = 0;
	int err, rc = 1;

	err = ctl_parse(&c, argc, argv, false);
	if (err)
		return err;
	err = ctl_open(&c);
	if (err == 1) {
		if (c.json)
			printf("{\"bpffs\":\"%s\",\"pinned\":false,\"agent\":{\"running\":false},\"cgroups\":[]}\n",
			       c.bpffs);
		else if (c.dir_fd >= 0 && replace__interrupted(c.bpffs))
			printf("an interrupted replacement holds the state pinned at %s (in a staging-* directory there): the sandboxes stay confined; start the agent to finish it\n",
			       c.bpffs);
		else
			printf("nothing is pinned at %s: stockade confines no cgroup, and no agent runs\n",
			       c.bpffs);
		rc = 0;
		goto out;
	}
	if (err)
		goto out;
	running = pin__agent_running(c.bpffs, c.dir_fd, &pid);
	pin__meta_read(c.bpffs, &meta);
	if (!bpf_map_lookup_elem(c.bss_fd, &zero, bss_buf))
		memcpy(&bss, bss_buf, sizeof(bss));
	err = read_entries(&c, &v, &n);
	if (err)
		goto out;
	rows = calloc(n + c.n_pins + 1, sizeof(*rows));
	if (!rows)
		goto out;
	for (i = 0; i < n; i++) {
		rows[n_rows].id = v[i].id;
		rows[n_rows].root = v[i].sb.root_id;
		rows[n_rows].policy_id = v[i].sb.policy_id;
		rows[n_rows].slot = v[i].sb.slot;
		rows[n_rows].has_entry = true;
		n_rows++;
	}
	/* Links pinned for a cgroup with no entry (their programs deny all:
	 * reason no_policy): shown, so that status covers every link. */
	for (i = 0; i < c.n_pins; i++) {
		if (!c.pins[i].cg_id)
			continue;
		for (j = 0; j < n_rows && rows[j].id != c.pins[i].cg_id; j++)
			;
		if (j == n_rows) {
			rows[n_rows].id = rows[n_rows].root = c.pins[i].cg_id;
			n_rows++;
		}
	}
	/* The run-time clocks live in the running agent's state file only. */
	limits__state_read(c.state_path, &st, &n_st, &st_pid);
	for (i = 0; i < n_rows; i++) {
		rows[i].path = path_of(&c, rows[i].id);
		if (rows[i].has_entry) {
			policy_of(&c, rows[i].policy_id, &pi);
			memcpy(rows[i].policy, pi.name, sizeof(rows[i].policy));
		} else {
			snprintf(rows[i].policy, sizeof(rows[i].policy), "(no entry)");
		}
		if (rows[i].root == rows[i].id)
			counts(&c, rows[i].id, &rows[i], st, n_st);
	}
	qsort(rows, n_rows, sizeof(*rows), row_cmp);
	/* After the sort: use.policy points into its own row. */
	for (i = 0; i < n_rows; i++)
		rows[i].use.policy = rows[i].policy;
	qsort(c.pins, c.n_pins, sizeof(*c.pins), pin_cmp);
	for (i = 0; i < c.n_pins; i++)
		n_lsm += !c.pins[i].cg_id;
	n_deg = status_degraded(&c, n_lsm, deg, sizeof(deg) / sizeof(deg[0]));
	if (n_deg > sizeof(deg) / sizeof(deg[0]))
		n_deg = sizeof(deg) / sizeof(deg[0]);

	if (c.json) {
		struct json *j2 = &c.j;
		struct json sub;

		json_init(&sub);
		json_begin(j2);
		json_str(j2, "bpffs", c.bpffs);
		json_bool(j2, "pinned", true);
		{
			char agent[96];

			if (running)
				snprintf(agent, sizeof(agent), "{\"running\":true,\"pid\":%u}", pid);
			else
				snprintf(agent, sizeof(agent), "{\"running\":false,\"last_pid\":%u}",
					 meta.pid);
			json_raw(j2, "agent", agent);
		}
		json_str_array(j2, "degraded", deg, n_deg);
		json_u64(j2, "seq_next", c.data->ev_seq);
		json_u64(j2, "events_lost", bss.ev_lost);
		json_u64(j2, "events_lost_reported", meta.lost_reported);
		json_u64(j2, "watch_entries", c.n_watch_entries);
		fwrite(j2->buf, 1, j2->len, stdout);
		printf(",\"lsm\":[");
		for (i = 0, j = 0; i < c.n_pins; i++) {
			if (c.pins[i].cg_id)
				continue;
			json_begin(&sub);
			json_str(&sub, "program", c.pins[i].prog);
			json_u64(&sub, "link_id", c.pins[i].link_id);
			json_u64(&sub, "prog_id", c.pins[i].prog_id);
			printf("%s%s}", j++ ? "," : "", sub.buf);
		}
		printf("],\"cgroups\":[");
		for (i = 0; i < n_rows; i++) {
			const struct row *r = &rows[i];

			json_begin(&sub);
			json_str(&sub, "cgroup", r->path);
			json_u64(&sub, "cgroup_id", r->id);
			json_str(&sub, "via", r->root == r->id ? "selector" : "inherited");
			if (r->root != r->id) {
				json_str(&sub, "root", path_of(&c, r->root));
				json_u64(&sub, "root_id", r->root);
			}
			if (r->has_entry) {
				policy_of(&c, r->policy_id, &pi);
				snprintf(hash, sizeof(hash), "%016llx",
					 (unsigned long long)pi.hash);
				json_str(&sub, "policy", pi.name);
				json_u64(&sub, "policy_id", r->policy_id);
				json_u64(&sub, "slot", r->slot);
				json_u64(&sub, "generation", pi.generation);
				json_str(&sub, "hash", hash);
				json_str(&sub, "mode", pi.mode == SANDBOX_AUDIT ? "audit" : "enforce");
				{
					char names[1024], lit[1040];

					if (caps_of(&c, r->policy_id, true, names,
						    sizeof(names))) {
						snprintf(lit, sizeof(lit), "[%s]", names);
						json_raw(&sub, "capabilities", lit);
					}
				}
			} else {
				json_str(&sub, "policy", "(no entry)");
			}
			if (r->root == r->id) {
				char lit[1040];

				prog_list(&c, r->id, false, progs, sizeof(progs));
				snprintf(lit, sizeof(lit), "[%s]", progs);
				json_raw(&sub, "prog_ids", lit);
				prog_list(&c, r->id, true, links, sizeof(links));
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
			int e = bpf_map_get_next_key(c.det_fd, NULL, &next);

			for (j = 0; !e; j++) {
				json_begin(&sub);
				json_str(&sub, "cgroup", path_of(&c, next));
				json_u64(&sub, "cgroup_id", next);
				printf("%s%s}", j ? "," : "", sub.buf);
				key = next;
				e = bpf_map_get_next_key(c.det_fd, &key, &next);
			}
		}
		printf("]}\n");
		json_free(&sub);
		rc = 0;
		goto out;
	}

	if (running)
		printf("agent:    running (pid %u)\n", pid);
	else if (meta.pid)
		printf("agent:    NOT running (pid %u stopped without a clean exit); the pinned programs keep enforcing\n",
		       meta.pid);
	else
		printf("agent:    not running; the pinned programs keep enforcing\n");
	printf("pins:     %s\n", c.bpffs);
	printf("events:   next seq %llu, %llu lost in total (%llu reported)\n",
	       (unsigned long long)c.data->ev_seq, (unsigned long long)bss.ev_lost,
	       (unsigned long long)meta.lost_reported);
	if (c.n_watch_entries)
		printf("watching: %zu entries (directories watched for new cgroups, and cgroups below them classified outside)\n",
		       c.n_watch_entries);
	if (n_lsm) {
		prog_list(&c, 0, false, progs, sizeof(progs));
		printf("BPF-LSM:  %zu programs attached, prog ids %s\n", n_lsm, progs);
		if (n_deg) {
			printf("degraded:");
			for (i = 0; i < n_deg; i++)
				printf("%s %s", i ? "," : "", deg[i]);
			printf(" (hooks this kernel lacks)\n");
		}
	} else {
		printf("BPF-LSM:  none attached (the agent runs degraded: network rules only)\n");
	}
	printf("\n%-28s %-8s %-9s %-16s %-4s %-16s %-7s %-24s %7s %7s\n", "CGROUP",
	       "ID", "VIA", "POLICY", "GEN", "HASH", "MODE", "PROG IDS", "DENIED",
	       "AUDITED");
	for (i = 0; i < n_rows; i++) {
		const struct row *r = &rows[i];
		char d[24] = "-", au[24] = "-", gen[16] = "-";

		if (r->has_entry) {
			policy_of(&c, r->policy_id, &pi);
			snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)pi.hash);
			snprintf(gen, sizeof(gen), "%u", pi.generation);
		} else {
			memset(&pi, 0, sizeof(pi));
			snprintf(pi.name, sizeof(pi.name), "(no entry)");
			snprintf(hash, sizeof(hash), "-");
		}
		if (r->root == r->id) {
			prog_list(&c, r->id, false, progs, sizeof(progs));
			if (r->has_cnt) {
				snprintf(d, sizeof(d), "%llu", (unsigned long long)r->denied);
				snprintf(au, sizeof(au), "%llu", (unsigned long long)r->audited);
			}
		} else {
			snprintf(progs, sizeof(progs), "(%s)", path_of(&c, r->root));
		}
		printf("%-28s %-8" PRIu64 " %-9s %-16s %-4s %-16s %-7s %-24s %7s %7s\n",
		       r->path[0] ? r->path : "(removed)", r->id,
		       r->root == r->id ? "selector" : "inherited", pi.name, gen, hash,
		       !r->has_entry ? "-" : pi.mode == SANDBOX_AUDIT ? "audit" : "enforce",
		       progs[0] ? progs : "-", d, au);
	}
	if (!n_rows)
		printf("(no cgroup is confined)\n");
	/* The capability set of each policy in use, once per policy id. */
	for (i = 0, j = 0; i < n_rows; i++) {
		char names[1024];
		size_t k;

		if (!rows[i].has_entry)
			continue;
		for (k = 0; k < i; k++)
			if (rows[k].has_entry && rows[k].policy_id == rows[i].policy_id)
				break;
		if (k < i || !caps_of(&c, rows[i].policy_id, false, names,
				      sizeof(names)))
			continue;
		policy_of(&c, rows[i].policy_id, &pi);
		printf("%s  %-16s %s\n", j++ ? "" : "\ncapabilities by policy:\n",
		       pi.name, names[0] ? names : "(none)");
	}
	/* Second section: what each sandbox (selected cgroup) used, and its
	 * limits. */
	use = calloc(n_rows + 1, sizeof(*use));
	for (i = 0; use && i < n_rows; i++)
		if (rows[i].root == rows[i].id)
			use[n_use++] = rows[i].use;
	if (n_use) {
		printf("\nusage and limits (connect, sendmsg: allowed/denied; denied: other kinds):\n");
		status_print_table(stdout, use, n_use);
	}
	{
		__u64 key, next;
		int e = bpf_map_get_next_key(c.det_fd, NULL, &next);

		for (j = 0; !e; j++) {
			printf("%s%s (%llu)", j ? ", " : "\ndetached on purpose: ",
			       path_of(&c, next)[0] ? path_of(&c, next) : "(removed)",
			       (unsigned long long)next);
			key = next;
			e = bpf_map_get_next_key(c.det_fd, &key, &next);
		}
		if (j)
			printf("\n");
	}
	rc = 0;
out:
	fflush(stdout);
	free(v);
	free(rows);
	free(st);
	free(use);
	ctl_close(&c);
	return rc;
}

/* ---- reload ---- */

/* Is pid a stockade agent (its comm, as the kernel holds it)? */
static bool is_stockade(uint32_t pid)
{
	char path[64], comm[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = '\0';
	fclose(f);
	return !strncmp(comm, "stockade", 8);
}

/*
 * Print the problems of the reload m reports, as the agent found them
 * (`reload_msgs`, include/lifecycle.h): one `check`-style line each on
 * stderr. Why the agent's answer, not a validation of our own: only the
 * agent knows its policy paths (relative to its working directory), the
 * cgroups its limits would land on and the room left in its maps, so a
 * second check here could pass what the agent refused, or the reverse.
 * An entry numbered for another reload (one that started since) is not
 * ours: we say so rather than print another reload's problems.
 */
static void print_problems(const char *bpffs, const struct agent_meta *m)
{
	struct reload_msg msg;
	int fd = pin__map_get(bpffs, "reload_msgs");
	__u32 k;

	if (fd < 0) {
		pr_err("reload", "cannot read %s/maps/reload_msgs: %s; the agent's policy_error records list the problems",
		       bpffs, strerror(-fd));
		return;
	}
	for (k = 0; k < m->reload_problems && k < RELOAD_MSGS_MAX; k++) {
		if (bpf_map_lookup_elem(fd, &k, &msg) || msg.reload != m->reloads) {
			pr_err("reload", "another reload ran meanwhile; the agent's policy_error records list the problems");
			break;
		}
		msg.text[sizeof(msg.text) - 1] = '\0';
		fprintf(stderr, "%s\n", msg.text);
	}
	close(fd);
}

int ctl__reload(int argc, char **argv)
{
	struct agent_meta before = { 0 }, m = { 0 };
	uint32_t pid = 0;
	int dir_fd, i, rc = 1;
	const char *bpffs = PIN_DIR_DEFAULT;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--bpffs") && i + 1 < argc) {
			bpffs = argv[++i];
		} else {
			fprintf(stderr, "usage: stockade reload [--bpffs DIR]\n");
			return 2;
		}
	}
	dir_fd = pin__dir_open(bpffs, false);
	if (dir_fd < 0) {
		pr_err("reload", "nothing is pinned at %s: no agent to reload", bpffs);
		return 1;
	}
	if (!pin__agent_running(bpffs, dir_fd, &pid) || !pid || !is_stockade(pid)) {
		pr_err("reload", "no agent is running on %s; start one (stockade agent --bpffs %s ...): it reads the policy files when it starts",
		       bpffs, bpffs);
		goto out;
	}
	if (pin__meta_read(bpffs, &before)) {
		pr_err("reload", "cannot read %s/maps/agent_meta", bpffs);
		goto out;
	}
	if (kill((pid_t)pid, SIGHUP)) {
		pr_err("reload", "signalling the agent (pid %u) failed: %s", pid, strerror(errno));
		goto out;
	}
	/* The agent counts each reload it finished; wait for ours (loading
	 * and compiling a large set takes a while, verifying nothing). */
	for (i = 0; i < 3000; i++) {
		if (!pin__meta_read(bpffs, &m) && m.reloads > before.reloads)
			break;
		if (!pin__agent_running(bpffs, dir_fd, &pid)) {
			pr_err("reload", "the agent stopped before it reloaded");
			goto out;
		}
		usleep(10000);
	}
	if (i == 3000) {
		pr_err("reload", "the agent (pid %u) did not reload within 30 s", pid);
		goto out;
	}
	switch (m.reload_result) {
	case RELOAD_APPLIED:
		printf("reload: applied; the new policy set is in force\n");
		rc = 0;
		break;
	case RELOAD_UNCHANGED:
		printf("reload: unchanged; the policy files hold what is in force\n");
		rc = 0;
		break;
	default:
		print_problems(bpffs, &m);
		pr_err("reload", "rejected: the policy set is invalid, and the agent (pid %u) keeps enforcing the previous one; fix the problems above (its policy_error records say the same) and reload again",
		       pid);
		break;
	}
out:
	close(dir_fd);
	return rc;
}
