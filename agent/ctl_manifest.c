// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `stockade manifest`: the runtime configuration in force for each
 * sandbox, read back from the pins (which cgroups, which policy id, its
 * hash, generation, mode, flags and capabilities; the BPF-LSM links), the
 * kernel (/proc/PID/status, environ, mountinfo, root of every process
 * inside), the cgroup files (cpu.max, memory.max, memory.swap.max,
 * pids.max) and what the agent recorded of each policy at fill time (its
 * rules with their reasons, scopes and overrides: the policy blob, which
 * the pins cannot hold, found by the pinned hash). Judging and rendering
 * are agent/manifest.c's. Exit: 0 every point passes, 3 one fails, 1 an
 * error, 2 a usage error.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "ctl.h"
#include "limits_agent.h"
#include "log.h"
#include "manifest.h"
#include "sandbox.h"
#include "ctl_int.h"

#define MF_READ_MAX	(4 << 20)

/* The whole of a (small) file; NULL with errno set. */
static char *slurp(const char *path, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap), *nb;
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || !buf) {
		int e = errno;

		free(buf);
		if (fd >= 0)
			close(fd);
		errno = e;
		return NULL;
	}
	for (;;) {
		if (n + 1 >= cap) {
			if (cap >= MF_READ_MAX)
				break;
			nb = realloc(buf, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* One line of a cgroup file, trimmed ("" when absent). */
static void cg_file(const char *dir, const char *name, char *out, size_t len)
{
	char path[PATH_MAX];
	size_t n;
	char *b;

	out[0] = '\0';
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	b = slurp(path, &n);
	if (!b)
		return;
	b[strcspn(b, "\n")] = '\0';
	snprintf(out, len, "%s", b);
	free(b);
}

struct opts {
	const char *format, *out, *boundary, *state;
	char **targets;
	size_t n_targets;
};

static int parse(struct ctl *c, struct opts *o, int argc, char **argv)
{
	enum { OPT_BPFFS = 256, OPT_CGROOT, OPT_FORMAT, OPT_OUT, OPT_BOUNDARY,
	       OPT_STATE, OPT_CONTAINERS_DIR };
	static const struct option opts[] = {
		{ "bpffs", required_argument, NULL, OPT_BPFFS },
		{ "cgroup-root", required_argument, NULL, OPT_CGROOT },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "out", required_argument, NULL, OPT_OUT },
		{ "boundary", required_argument, NULL, OPT_BOUNDARY },
		{ "state", required_argument, NULL, OPT_STATE },
		{ "containers-dir", required_argument, NULL, OPT_CONTAINERS_DIR },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int k;

	ctl_init(c);
	memset(o, 0, sizeof(*o));
	o->format = "json";
	o->boundary = MF_BOUNDARY_DEFAULT;
	optind = 1;
	while ((k = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (k) {
		case OPT_BPFFS:
			c->bpffs = optarg;
			break;
		case OPT_CGROOT:
			c->cgroup_root = optarg;
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "json") && strcmp(optarg, "md"))
				goto usage;
			o->format = optarg;
			break;
		case OPT_OUT:
			o->out = optarg;
			break;
		case OPT_BOUNDARY:
			o->boundary = optarg;
			break;
		case OPT_STATE:
			o->state = optarg;
			break;
		case OPT_CONTAINERS_DIR:
			c->containers_dir = optarg;
			break;
		case 'v':
			log_verbosity = LOG_DEBUG;
			break;
		default:
			goto usage;
		}
	}
	c->state_path = o->state;
	o->targets = argv + optind;
	o->n_targets = (size_t)(argc - optind);
	return 0;
usage:
	fprintf(stderr, "usage: stockade manifest [--format json|md] [--out FILE] [--boundary FILE] [--bpffs DIR] [--cgroup-root DIR] [--state FILE] [--containers-dir DIR] [CGROUP|POLICY...]\n");
	return 2;
}

struct blob {
	uint64_t hash;
	const char *cg;		/* expanded for this sandbox; NULL: as written */
	struct mf_policy p;
	bool ok;
};

int ctl_blob_read(const char *dir, uint64_t hash, struct mf_policy *out)
{
	char path[PATH_MAX + 64];
	size_t len;
	char *buf;
	int err;

	snprintf(path, sizeof(path), "%s/" MF_BLOB_DIR "/%016" PRIx64 ".policy", dir, hash);
	buf = slurp(path, &len);
	if (!buf) {
		err = -errno;
		pr_warn("manifest", "the agent's record of policy hash %016" PRIx64 " (%s) cannot be read: %s; its rules and scopes are not known. A running agent of this build writes it at start and at each reload",
			hash, path, strerror(errno));
		return err;
	}
	err = mf_blob_parse(buf, len, out);
	free(buf);
	if (!err && out->hash != hash) {
		mf_policy_free(out);
		err = -EINVAL;
	}
	if (err)
		pr_warn("manifest", "%s is not a policy record of hash %016" PRIx64 "; restart the agent to write it again",
			path, hash);
	return err;
}

void ctl_run_dir(const char *state, char *out, size_t len)
{
	char *slash;

	snprintf(out, len, "%s", state ? state : LIMITS_STATE_DEFAULT);
	slash = strrchr(out, '/');
	if (slash && slash != out)
		*slash = '\0';
	else
		snprintf(out, len, ".");
}

/* v has room for one blob per sandbox entry: never moved, as sandboxes
 * point into it. Without its blob, points 1-3 fail. */
/* The blob of hash, read once; for a policy with per-execution folders a
 * copy of its own for the sandbox cg, its paths expanded as the agent
 * compiled them, or left out when the kernel holds no scope of cg's own
 * (v holds up to two per sandbox). */
static const struct mf_policy *blob_of(struct blob *v, size_t *n,
				       const char *dir, uint64_t hash,
				       const char *cg, bool own_scope)
{
	struct blob *nv;
	size_t i;

	for (i = 0; i < *n; i++)
		if (v[i].hash == hash && !v[i].cg)
			break;
	if (i == *n) {
		nv = &v[(*n)++];
		memset(nv, 0, sizeof(*nv));
		nv->hash = hash;
		nv->ok = !ctl_blob_read(dir, hash, &nv->p);
	}
	if (!v[i].ok || !mf_policy_templated(&v[i].p))
		return v[i].ok ? &v[i].p : NULL;
	nv = &v[(*n)++];
	memset(nv, 0, sizeof(*nv));
	nv->hash = hash;
	nv->cg = cg;
	/* No scope of its own in the kernel: its folders are not in force
	 * (the base scope refuses them), so they are not listed. */
	nv->ok = !ctl_blob_read(dir, hash, &nv->p) &&
		 mf_policy_expand(&nv->p, own_scope ? cg : NULL) != -ENOMEM;
	return nv->ok ? &nv->p : NULL;
}

/* Processes of dir and every cgroup below it. */
static int add_procs(struct mf_sandbox *s, const char *dir, int depth)
{
	char path[PATH_MAX], *buf, *line, *save = NULL;
	struct dirent *de;
	struct mf_proc *np;
	size_t len;
	DIR *d;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	buf = slurp(path, &len);
	for (line = buf ? strtok_r(buf, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		np = realloc(s->procs, (s->n_procs + 1) * sizeof(*np));
		if (!np) {
			free(buf);
			return -ENOMEM;
		}
		s->procs = np;
		memset(&np[s->n_procs], 0, sizeof(*np));
		np[s->n_procs++].pid = atoi(line);
	}
	free(buf);
	if (depth >= SANDBOX_MAX_DEPTH || !(d = opendir(dir)))
		return 0;
	while ((de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (add_procs(s, path, depth + 1)) {
			closedir(d);
			return -ENOMEM;
		}
	}
	closedir(d);
	return 0;
}

/* Credential files the clouds' CLIs and orchestrators put in place. */
static const char *const secret_files[] = {
	"/var/run/secrets/kubernetes.io/serviceaccount/token",
	"/run/secrets/kubernetes.io/serviceaccount/token",
	"/var/run/secrets/eks.amazonaws.com/serviceaccount/token",
	"/var/run/secrets/azure/tokens/azure-identity-token",
	"/var/run/secrets/tokens",
	"/etc/kubernetes/admin.conf",
	"/var/lib/kubelet/kubeconfig",
};
static const char *const secret_home[] = {
	".aws/credentials", ".aws/config", ".config/gcloud/application_default_credentials.json",
	".config/gcloud/credentials.db", ".azure/accessTokens.json",
	".azure/msal_token_cache.json", ".kube/config", ".docker/config.json",
};

static void add_path(struct mf_sandbox *s, int pid, const char *path)
{
	struct mf_secret_path *np;
	size_t i;

	for (i = 0; i < s->n_paths; i++)
		if (!strcmp(s->paths[i].path, path))
			return;
	np = realloc(s->paths, (s->n_paths + 1) * sizeof(*np));
	if (!np)
		return;
	s->paths = np;
	np[s->n_paths].path = strdup(path);
	np[s->n_paths].pid = pid;
	np[s->n_paths].blocked = false;
	if (np[s->n_paths].path)
		s->n_paths++;
}

static void probe_home(struct mf_sandbox *s, int pid, const char *home)
{
	char path[PATH_MAX + 64], rel[PATH_MAX];
	struct stat st;
	size_t i;

	for (i = 0; i < sizeof(secret_home) / sizeof(secret_home[0]); i++) {
		snprintf(rel, sizeof(rel), "%s/%s", home, secret_home[i]);
		snprintf(path, sizeof(path), "/proc/%d/root%s", pid, rel);
		if (!stat(path, &st))
			add_path(s, pid, rel);
	}
}

/* Secret files in pid's mount namespace, seen through /proc/PID/root. */
static void probe_secrets(struct mf_sandbox *s, int pid)
{
	char path[PATH_MAX], rel[PATH_MAX + 64];
	struct dirent *de;
	struct stat st;
	size_t i;
	DIR *d;

	for (i = 0; i < sizeof(secret_files) / sizeof(secret_files[0]); i++) {
		snprintf(path, sizeof(path), "/proc/%d/root%s", pid, secret_files[i]);
		if (!stat(path, &st))
			add_path(s, pid, secret_files[i]);
	}
	/* Docker and compose secrets: every file in /run/secrets. */
	snprintf(path, sizeof(path), "/proc/%d/root/run/secrets", pid);
	if ((d = opendir(path))) {
		while ((de = readdir(d)))
			if (de->d_type == DT_REG) {
				snprintf(rel, sizeof(rel), "/run/secrets/%s", de->d_name);
				add_path(s, pid, rel);
			}
		closedir(d);
	}
	probe_home(s, pid, "/root");
	snprintf(path, sizeof(path), "/proc/%d/root/home", pid);
	if ((d = opendir(path))) {
		while ((de = readdir(d)))
			if (de->d_name[0] != '.') {
				snprintf(rel, sizeof(rel), "/home/%s", de->d_name);
				probe_home(s, pid, rel);
			}
		closedir(d);
	}
}

/* A read of pid's /proc failed: gone (fine: it is no longer inside), or
 * refused (then nothing can be said of its credentials). */
static void refused(struct mf_sandbox *s, int pid)
{
	if (errno == ENOENT || errno == ESRCH || s->unreadable_pid)
		return;
	s->unreadable_pid = pid;
	s->unreadable_errno = errno;
}

static void gather_procs(struct mf_sandbox *s)
{
	ino_t seen[64];
	size_t n_seen = 0, i, j, len;
	char path[64], *buf;
	struct stat st;

	for (i = 0; i < s->n_procs; i++) {
		struct mf_proc *p = &s->procs[i];

		snprintf(path, sizeof(path), "/proc/%d/status", p->pid);
		if ((buf = slurp(path, &len))) {
			p->have_status = !mf_parse_status(buf, len, &p->st);
			free(buf);
		}
		snprintf(path, sizeof(path), "/proc/%d/environ", p->pid);
		if ((buf = slurp(path, &len))) {
			if (mf_environ_secrets(buf, len, &p->secret_env, &p->n_secret_env))
				p->n_secret_env = 0;
			free(buf);
		} else {
			refused(s, p->pid);
		}
		/* Once per mount namespace: mounts and secret files. */
		snprintf(path, sizeof(path), "/proc/%d/ns/mnt", p->pid);
		if (stat(path, &st))
			continue;
		for (j = 0; j < n_seen && seen[j] != st.st_ino; j++)
			;
		if (j < n_seen || n_seen == 64)
			continue;
		seen[n_seen++] = st.st_ino;
		snprintf(path, sizeof(path), "/proc/%d/root/", p->pid);
		if (access(path, X_OK))
			refused(s, p->pid);
		probe_secrets(s, p->pid);
		if (s->n_mounts)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/mountinfo", p->pid);
		if ((buf = slurp(path, &len))) {
			if (!mf_parse_mountinfo(buf, len, &s->mounts, &s->n_mounts, NULL))
				s->mounts_pid = p->pid;
			free(buf);
		}
	}
}

static bool wanted(const struct opts *o, const char *cgroot, const char *rel,
		   const char *policy)
{
	char full[PATH_MAX];
	size_t i;

	if (!o->n_targets)
		return true;
	snprintf(full, sizeof(full), "%s%s", cgroot, rel);
	for (i = 0; i < o->n_targets; i++)
		if (!strcmp(o->targets[i], rel) || !strcmp(o->targets[i], full) ||
		    !strcmp(o->targets[i], policy))
			return true;
	return false;
}

static void host_of(struct ctl *c, const struct opts *o, struct mf_host *h,
		    size_t n_lsm)
{
	struct utsname u;
	size_t len;
	char *buf;

	if (gethostname(h->hostname, sizeof(h->hostname) - 1))
		snprintf(h->hostname, sizeof(h->hostname), "(unknown)");
	if (!uname(&u))
		snprintf(h->kernel, sizeof(h->kernel), "%s", u.release);
	/* On, in force: BPF-LSM programs are attached (pinned links), not
	 * merely possible on this kernel. */
	h->bpf_lsm = n_lsm > 0;
	h->n_degraded = ctl_degraded(c, n_lsm, h->degraded,
				     sizeof(h->degraded) / sizeof(h->degraded[0]));
	if (h->n_degraded > sizeof(h->degraded) / sizeof(h->degraded[0]))
		h->n_degraded = sizeof(h->degraded) / sizeof(h->degraded[0]);
	snprintf(h->boundary_file, sizeof(h->boundary_file), "%s", o->boundary);
	buf = slurp(o->boundary, &len);
	if (!buf) {
		snprintf(h->boundary_why, sizeof(h->boundary_why),
			 "%s: %s; write it with name: and architecture_record: (README, \"Evidence for assessors\")",
			 o->boundary, strerror(errno));
		return;
	}
	if (!mf_boundary_parse(buf, len, &h->boundary, h->boundary_why,
			       sizeof(h->boundary_why)))
		h->have_boundary = true;
	else {
		char why[256];

		snprintf(why, sizeof(why), "%s", h->boundary_why);
		snprintf(h->boundary_why, sizeof(h->boundary_why), "%s: %.160s", o->boundary, why);
	}
	free(buf);
}

int ctl__manifest(int argc, char **argv)
{
	struct ctl c;
	struct opts o;
	struct mf_host h;
	struct mf_sandbox *v = NULL;
	struct entry *e = NULL;
	struct blob *blobs = NULL;
	struct state_sb *st = NULL;
	size_t n_e = 0, n = 0, n_blobs = 0, n_st = 0, n_lsm = 0, i, j;
	char dir[PATH_MAX], tmp[PATH_MAX + 8], generated[40];
	uint64_t st_pid = 0;
	FILE *f = stdout;
	struct tm tm;
	time_t now;
	bool all;
	int err, rc = 1;

	err = parse(&c, &o, argc, argv);
	if (err)
		return err;
	memset(&h, 0, sizeof(h));
	err = ctl_open(&c);
	if (err == 1) {
		pr_err("manifest", "nothing is pinned at %s: no sandbox is confined, so there is no configuration to report; start the agent (stockade agent --policy ...) or pass --bpffs DIR",
		       c.bpffs);
		goto out;
	}
	if (err)
		goto out;
	for (i = 0; i < c.n_pins; i++)
		n_lsm += !c.pins[i].cg_id;
	host_of(&c, &o, &h, n_lsm);
	ctl_run_dir(o.state, dir, sizeof(dir));
	if (ctl_read_entries(&c, &e, &n_e))
		goto out;
	/* Clocks: only a running agent enforces a run time. */
	limits__state_read(o.state, &st, &n_st, &st_pid);
	v = calloc(n_e + 1, sizeof(*v));
	blobs = calloc(2 * n_e + 1, sizeof(*blobs));
	if (!v || !blobs)
		goto out;
	for (i = 0; i < n_e; i++) {
		struct mf_sandbox *s;
		struct policy_info pi;
		struct policy_conf conf;
		char cgdir[PATH_MAX];

		/* A sandbox is a selected cgroup; the ones below it are part of
		 * it (their processes are gathered with it). */
		if (e[i].sb.root_id != e[i].id)
			continue;
		s = &v[n++];
		s->cgroup = strdup(ctl_path_of(&c, e[i].id));
		if (!s->cgroup)
			goto out;
		s->cgroup_id = e[i].id;
		s->ctr = ctl_container(&c, s->cgroup);
		ctl_policy_of(&c, e[i].sb.policy_id, &pi);
		snprintf(s->policy_name, sizeof(s->policy_name), "%s", pi.name);
		s->hash = pi.hash;
		s->generation = pi.generation;
		s->audit = pi.mode == SANDBOX_AUDIT;
		if (c.conf_fd >= 0 && !bpf_map_lookup_elem(c.conf_fd, &e[i].sb.policy_id, &conf)) {
			s->default_allow = conf.flags & SANDBOX_NET_DEFAULT_ALLOW;
			s->userns = conf.flags & SANDBOX_USERNS;
			s->caps_known = true;
			s->caps = conf.caps;
		}
		/* Read back: what the programs judge it by (include/file.h). */
		{
			const char *fs = ctl_file_scope(&c, e[i].sb.policy_id, s->cgroup_id);

			s->scope_missing = fs && !strcmp(fs, "missing");
		}
		s->pol = e[i].sb.policy_id == POLICY_ID_CONFLICT ? NULL :
			 blob_of(blobs, &n_blobs, dir, pi.hash, s->cgroup, !s->scope_missing);
		snprintf(cgdir, sizeof(cgdir), "%s%s", c.cgroot, s->cgroup);
		cg_file(cgdir, "cpu.max", s->cpu_max, sizeof(s->cpu_max));
		cg_file(cgdir, "memory.max", s->memory_max, sizeof(s->memory_max));
		cg_file(cgdir, "memory.swap.max", s->memory_swap_max, sizeof(s->memory_swap_max));
		cg_file(cgdir, "pids.max", s->pids_max, sizeof(s->pids_max));
		for (j = 0; j < n_st && st[j].id != s->cgroup_id; j++)
			;
		if (j < n_st && st[j].runtime_ms) {
			s->runtime_set = s->runtime_from_agent = true;
			s->runtime_ms = st[j].runtime_ms;
		}
		if (s->cgroup[0] && add_procs(s, cgdir, 0))
			goto out;
		gather_procs(s);
	}
	/* Shares are judged across every sandbox, the filter applies after. */
	if (mf_shared(v, n))
		goto out;
	for (i = 0, j = 0; i < n; i++) {
		mf_judge(&h, &v[i]);
		if (wanted(&o, c.cgroot, v[i].cgroup, v[i].policy_name)) {
			if (i != j) {
				struct mf_sandbox t = v[j];

				v[j] = v[i];
				v[i] = t;
			}
			j++;
		}
	}
	if (o.n_targets && !j) {
		pr_err("manifest", "no confined cgroup or policy matches %s%s: `stockade status` lists what is confined",
		       o.targets[0], o.n_targets > 1 ? " (or the other names given)" : "");
		goto out;
	}
	now = time(NULL);
	gmtime_r(&now, &tm);
	strftime(generated, sizeof(generated), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (o.out) {
		snprintf(tmp, sizeof(tmp), "%s.tmp", o.out);
		f = fopen(tmp, "we");
		if (!f) {
			pr_err("manifest", "cannot write %s: %s; pick a writable --out FILE",
			       tmp, strerror(errno));
			f = stdout;
			goto out;
		}
	}
	all = !strcmp(o.format, "md") ? mf_render_md(f, &h, v, j, generated) :
	      mf_render_json(f, &h, v, j, generated);
	if (o.out) {
		bool bad = ferror(f);

		if (fclose(f) || bad || rename(tmp, o.out)) {
			pr_err("manifest", "writing %s failed: %s", o.out, strerror(errno));
			unlink(tmp);
			f = stdout;
			goto out;
		}
		f = stdout;
	}
	rc = all ? 0 : 3;
out:
	fflush(stdout);
	for (i = 0; i < n; i++)
		mf_sandbox_free(&v[i]);
	free(v);
	for (i = 0; i < n_blobs; i++)
		mf_policy_free(&blobs[i].p);
	free(blobs);
	free(e);
	free(st);
	ctl_close(&c);
	return rc;
}
