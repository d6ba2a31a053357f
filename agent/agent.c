// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The daemon: load the policy set, load the BPF object, confine every
 * selected cgroup (and pick up new ones), stream events until told to stop.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "agent.h"
#include "cgroup.h"
#include "limits_agent.h"
#include "log.h"
#include "file_rules.h"
#include "net_rules.h"
#include "sandbox.h"
#include "stockade.skel.h"

#define SCAN_INTERVAL_MS	250	/* new cgroups confined within 1 s */

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

const char *agent__policy_name(struct agent *a, uint32_t policy_id)
{
	if (policy_id == POLICY_ID_CONFLICT)
		return "(conflict)";
	if (policy_id > a->set.n)
		return "(unknown)";
	return a->set.v[policy_id - 1]->name;
}

const struct sandbox_cg *agent__find_cg(struct agent *a, uint64_t id)
{
	size_t i;

	if (a->last_cg < a->n_cgs && a->cgs[a->last_cg].id == id)
		return &a->cgs[a->last_cg];
	for (i = 0; i < a->n_cgs; i++) {
		if (a->cgs[i].id == id) {
			a->last_cg = i;
			return &a->cgs[i];
		}
	}
	return NULL;
}

/* ---- preflight: every check names its fix ---- */

static bool has_caps(void)
{
	unsigned long long eff = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	if (f)
		fclose(f);
	/* CAP_SYS_ADMIN, or CAP_BPF + CAP_NET_ADMIN (cgroup sock programs)
	 * + CAP_PERFMON. */
	return (eff & (1ULL << 21)) ||
	       ((eff & (1ULL << 39)) && (eff & (1ULL << 12)) &&
		(eff & (1ULL << 38)));
}

static int check_bpffs(const char *pin_dir)
{
	char parent[PATH_MAX], *slash;
	struct statfs sf;

	snprintf(parent, sizeof(parent), "%s", pin_dir);
	slash = strrchr(parent, '/');
	if (slash && slash != parent)
		*slash = '\0';
	if (statfs(parent, &sf) || sf.f_type != BPF_FS_MAGIC) {
		pr_err("agent", "bpffs is not mounted at %s; mount it (mount -t bpf bpf %s) or pass --bpffs DIR on a bpffs mount",
		       parent, parent);
		return -ENOENT;
	}
	return 0;
}

/* Is `bpf` in the active LSM list? Mount securityfs if nobody has. */
static bool lsm_bpf_listed(char *why, size_t len)
{
	char buf[512] = "";
	FILE *f = fopen("/sys/kernel/security/lsm", "re");

	if (!f && errno == ENOENT) {
		/* securityfs is commonly unmounted on minimal hosts. */
		if (!system("mount -t securityfs securityfs /sys/kernel/security 2>/dev/null"))
			f = fopen("/sys/kernel/security/lsm", "re");
	}
	if (!f) {
		snprintf(why, len, "cannot read /sys/kernel/security/lsm (%s); mount securityfs",
			 strerror(errno));
		return false;
	}
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	if (!strstr(buf, "bpf")) {
		snprintf(why, len, "BPF LSM is not active: /sys/kernel/security/lsm is '%s', without 'bpf'; add lsm=%s,bpf to the kernel command line",
			 buf, buf);
		return false;
	}
	return true;
}

/* The guarantees that need BPF-LSM; listed in agent_ready when lost
 * (at most the size of agent.degraded[], checked below). */
static const char *const lsm_guarantees[] = {
	"file_scope",		/* files.read/write/deny (bpf/file.bpf.c) */
	"protected_paths",	/* built-in credential paths */
	"fd_receive",		/* SCM_RIGHTS of files out of scope */
	"bpf",			/* bpf() from a sandbox (bpf/lsm.bpf.c) */
	"ptrace",		/* ptrace, /proc/PID/mem... across the edge */
	"signals",		/* signals across the edge */
	"mount",		/* mount, umount, move_mount, pivot_root, chroot */
	"cgroup_escape",	/* cgroup.procs writes, CLONE_INTO_CGROUP */
	"unix_sockets",		/* unix connects across the edge */
	"user_namespaces",	/* namespaces.user */
	"packet_sockets",	/* AF_PACKET creation */
	"socket_owner",		/* sockets made before joining a sandbox */
};

static void set_lsm_autoload(struct stockade *skel, bool on)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, skel->obj)
		if (bpf_program__type(prog) == BPF_PROG_TYPE_LSM)
			bpf_program__set_autoload(prog, on);
}

/* ---- load ---- */

static int open_skel(struct agent *a, bool with_lsm)
{
	int err;

	a->skel = stockade__open();
	if (!a->skel) {
		err = -errno;
		pr_err("agent", "opening the BPF object failed: %s", strerror(errno));
		return err;
	}
	set_lsm_autoload(a->skel, with_lsm);
	if (a->opt.ring_size)
		bpf_map__set_max_entries(a->skel->maps.rb, a->opt.ring_size);
	err = stockade__load(a->skel);
	if (err) {
		stockade__destroy(a->skel);
		a->skel = NULL;
	}
	return err;
}

static int degrade(struct agent *a, const char *cause)
{
	size_t i;

	if (!a->opt.allow_degraded) {
		pr_err("agent", "%s. Refusing to start: without BPF-LSM the sandbox keeps only its network rules. Fix the kernel, or pass --allow-degraded to run with cgroup socket programs only",
		       cause);
		return -EOPNOTSUPP;
	}
	pr_warn("agent", "%s; running DEGRADED (--allow-degraded)", cause);
	_Static_assert(sizeof(lsm_guarantees) / sizeof(lsm_guarantees[0]) <=
		       sizeof(((struct agent *)0)->degraded) / sizeof(char *),
		       "agent.degraded[] too small for lsm_guarantees[]");
	for (i = 0; i < sizeof(lsm_guarantees) / sizeof(lsm_guarantees[0]); i++) {
		a->degraded[a->n_degraded++] = lsm_guarantees[i];
		pr_warn("agent", "guarantee lost: %s", lsm_guarantees[i]);
	}
	return 0;
}

/*
 * Load with the LSM programs, and prove they work by attaching them; if
 * that fails, load again without them, which tells an LSM problem (degrade,
 * or refuse) from any other (fatal). libbpf's warnings from the first try
 * are demoted to debug: the second try, or our own message, says it all.
 */
static int load_bpf(struct agent *a)
{
	char why[512];
	int err;

	if (!lsm_bpf_listed(why, sizeof(why))) {
		err = degrade(a, why);
		return err ?: open_skel(a, false);
	}
	log_libbpf_quiet = true;
	err = open_skel(a, true);
	log_libbpf_quiet = false;
	if (!err) {
		err = stockade__attach(a->skel);
		if (!err)
			return 0;
		snprintf(why, sizeof(why), "attaching BPF-LSM programs failed: %s (are BPF trampolines blocked on this kernel?)",
			 strerror(-err));
		stockade__destroy(a->skel);
		a->skel = NULL;
	} else if (err == -EACCES || err == -EINVAL || err == -E2BIG) {
		/* The verifier rejected a program: a bug in this build, not a
		 * kernel without BPF-LSM. Load again, loudly, for its log. */
		err = open_skel(a, true);
		pr_err("agent", "the kernel's verifier rejected a BPF program (%s); the log is above. This is a stockade bug: please report it with the log",
		       strerror(-err));
		return err ?: -EINVAL;
	} else {
		snprintf(why, sizeof(why), "loading BPF-LSM programs failed: %s",
			 strerror(-err));
	}
	err = open_skel(a, false);
	if (err) {
		pr_err("agent", "loading the BPF programs failed: %s; run with -v for the verifier's log",
		       strerror(-err));
		return err;
	}
	err = degrade(a, why);
	if (err) {
		stockade__destroy(a->skel);
		a->skel = NULL;
	}
	return err;
}

static int fill_policies(struct agent *a)
{
	struct policy_conf conf = { .mode = SANDBOX_ENFORCE, .flags = 0 };
	int allow_fd = bpf_map__fd(a->skel->maps.net_allow);
	int meta_fd = bpf_map__fd(a->skel->maps.net_meta);
	int conf_fd = bpf_map__fd(a->skel->maps.policies);
	int file_fd = bpf_map__fd(a->skel->maps.file_rules);
	int unix_fd = bpf_map__fd(a->skel->maps.unix_allow);
	struct net_compiled c = { 0 };
	struct file_compiled fc = { 0 };
	char err_msg[POLICY_DIAG_MAX], **homes = NULL;
	__u32 id = POLICY_ID_CONFLICT;
	size_t i, j, total = 0, file_total = 0, n_homes = 0;
	__u8 one = 1;
	int err;

	if (a->set.n >= POLICY_MAX) {
		pr_err("agent", "%zu policies; at most %d fit", a->set.n, POLICY_MAX - 1);
		return -E2BIG;
	}
	err = file_rules__homes(&homes, &n_homes);
	if (err) {
		pr_err("policy", "listing home directories for the protected paths failed: %s",
		       strerror(-err));
		goto cleanup;
	}
	/* Id 0: a cgroup claimed by two policies; deny-all, enforce, with a
	 * file scope of nothing: its "/" entry allows no access. */
	err = bpf_map_update_elem(conf_fd, &id, &conf, BPF_ANY);
	if (!err) {
		struct file_entry none = { .val.flags = 0 };

		none.key.prefixlen = 32 + 8;
		none.key.policy_id = POLICY_ID_CONFLICT;
		none.key.path[0] = '/';
		err = bpf_map_update_elem(file_fd, &none.key, &none.val, BPF_ANY);
	}
	for (i = 0; !err && i < a->set.n; i++) {
		const struct policy *p = a->set.v[i];

		id = (__u32)(i + 1);
		err = net_rules__compile(p, id, &c, err_msg, sizeof(err_msg));
		if (err) {
			pr_err("policy", "%s", err_msg);
			break;
		}
		err = file_rules__compile(p, id, (const char *const *)homes, n_homes,
					  &fc, err_msg, sizeof(err_msg));
		if (err) {
			pr_err("policy", "%s: %s", p->name, err_msg);
			net_compiled__free(&c);
			break;
		}
		total += c.n_allow;
		file_total += fc.n;
		if (total > NET_MAX_RULES || file_total > FILE_MAX_RULES) {
			pr_err("policy", "%zu network and %zu file rules in the set; at most %d and %d fit the kernel maps",
			       total, file_total, NET_MAX_RULES, FILE_MAX_RULES);
			err = -E2BIG;
			net_compiled__free(&c);
			file_compiled__free(&fc);
			break;
		}
		for (j = 0; !err && j < fc.n; j++)
			err = bpf_map_update_elem(file_fd, &fc.v[j].key, &fc.v[j].val,
						  BPF_ANY);
		for (j = 0; !err && j < fc.n_unix; j++)
			err = bpf_map_update_elem(unix_fd, &fc.unix_keys[j], &one,
						  BPF_ANY);
		file_compiled__free(&fc);
		for (j = 0; !err && j < c.n_allow; j++)
			err = bpf_map_update_elem(allow_fd, &c.allow[j].key,
						  &c.allow[j].val, BPF_ANY);
		for (j = 0; !err && j < c.n_meta; j++)
			err = bpf_map_update_elem(meta_fd, &c.meta[j].key,
						  &c.meta[j].verdict, BPF_ANY);
		conf.mode = p->mode == POLICY_AUDIT ? SANDBOX_AUDIT : SANDBOX_ENFORCE;
		conf.flags = (p->net.default_allow ? SANDBOX_NET_DEFAULT_ALLOW : 0) |
			     (p->net.raw_sockets ? SANDBOX_RAW_SOCKETS : 0) |
			     (p->net.icmp ? SANDBOX_ICMP : 0) |
			     (p->namespaces.user ? SANDBOX_USERNS : 0);
		/* The policy's settings go in last: until then, id has no
		 * entry and its programs would deny. */
		if (!err)
			err = bpf_map_update_elem(conf_fd, &id, &conf, BPF_ANY);
		if (err)
			pr_err("policy", "%s: writing its rules into the kernel maps failed: %s",
			       p->name, strerror(errno));
		net_compiled__free(&c);
	}
cleanup:
	for (i = 0; i < n_homes; i++)
		free(homes[i]);
	free(homes);
	return err;
}

/* ---- confine cgroups ---- */

static int attach_cg(struct agent *a, struct sandbox_cg *cg)
{
	struct bpf_program *progs[SANDBOX_N_LINKS] = {
		a->skel->progs.stk_connect4, a->skel->progs.stk_connect6,
		a->skel->progs.stk_sendmsg4, a->skel->progs.stk_sendmsg6,
		a->skel->progs.stk_sock_create, a->skel->progs.stk_egress,
	};
	char path[PATH_MAX];
	int fd, i, err = 0;

	snprintf(path, sizeof(path), "%s%s", a->cgroot, cg->path);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (i = 0; i < SANDBOX_N_LINKS; i++) {
		cg->links[i] = bpf_program__attach_cgroup(progs[i], fd);
		if (!cg->links[i]) {
			err = -errno;
			pr_err("cgroup", "attaching %s to %s failed: %s",
			       bpf_program__name(progs[i]), path, strerror(errno));
			break;
		}
	}
	close(fd);
	if (err) {
		/* Nothing half-applied: drop what did attach. */
		while (i-- > 0) {
			bpf_link__destroy(cg->links[i]);
			cg->links[i] = NULL;
		}
	}
	return err;
}

static void detach_cg(struct agent *a, struct sandbox_cg *cg, const char *why)
{
	int i;

	for (i = 0; i < SANDBOX_N_LINKS; i++) {
		bpf_link__destroy(cg->links[i]);
		cg->links[i] = NULL;
	}
	/* Links first: a program must never run without its entry. */
	bpf_map_delete_elem(bpf_map__fd(a->skel->maps.sandboxes), &cg->id);
	limits__detach(a, cg, why);	/* counters; the limit values found */
	events__begin(a, "detach");
	events__cgroup_fields(a, cg);
	json_str(&a->j, "reason", why);
	events__emit(a);
}

struct scan_ctx {
	struct agent *a;
	int err;		/* first attach failure */
};

/* Which policy selects rel directly? POLICY_ID_CONFLICT when several do,
 * -1 when none. */
static int64_t selected_by(struct agent *a, const char *rel)
{
	int64_t found = -1;
	size_t i, j;

	for (i = 0; i < a->set.n; i++) {
		const struct policy *p = a->set.v[i];

		for (j = 0; j < p->n_cgroups; j++) {
			if (!cgroup__match(p->cgroups[j], rel))
				continue;
			if (found >= 0 && found != (int64_t)(i + 1)) {
				pr_err("cgroup", "%s is selected by both %s and %s; it is confined deny-all until the policies are fixed",
				       rel, a->set.v[found - 1]->name, p->name);
				return POLICY_ID_CONFLICT;
			}
			found = (int64_t)(i + 1);
		}
	}
	return found;
}

static struct sandbox_cg *track(struct agent *a, const char *rel, uint64_t id)
{
	struct sandbox_cg *cg;

	if (a->n_cgs == a->cap_cgs) {
		size_t cap = a->cap_cgs ? a->cap_cgs * 2 : 64;
		struct sandbox_cg *v = realloc(a->cgs, cap * sizeof(*v));

		if (!v)
			return NULL;
		a->cgs = v;
		a->cap_cgs = cap;
	}
	cg = &a->cgs[a->n_cgs];
	memset(cg, 0, sizeof(*cg));
	cg->path = strdup(rel);
	if (!cg->path)
		return NULL;
	cg->id = id;
	a->n_cgs++;
	return cg;
}

/*
 * One cgroup of the walk. parent is the sandbox_cg index + 1 of the nearest
 * confined ancestor (as a pointer-sized int), or 0.
 */
static void *scan_one(const char *rel, uint64_t id, void *parent, void *vctx)
{
	struct scan_ctx *ctx = vctx;
	struct agent *a = ctx->a;
	const struct sandbox_cg *found = agent__find_cg(a, id);
	struct sandbox_cg *cg;
	struct sandbox sb = { 0 };
	int64_t sel;
	uintptr_t pidx = (uintptr_t)parent;
	bool direct;
	int err;

	if (found) {
		cg = (struct sandbox_cg *)found;
		cg->seen = a->scan_gen;
		return (void *)(uintptr_t)(cg - a->cgs + 1);
	}
	sel = selected_by(a, rel);
	direct = sel >= 0;
	if (!direct && !pidx)
		return NULL;	/* outside every sandbox */

	cg = track(a, rel, id);
	if (!cg) {
		ctx->err = ctx->err ?: -ENOMEM;
		return NULL;
	}
	cg->seen = a->scan_gen;
	cg->direct = direct;
	cg->policy_id = direct ? (uint32_t)sel : a->cgs[pidx - 1].policy_id;
	cg->root_id = direct ? id : a->cgs[pidx - 1].root_id;
	sb.policy_id = cg->policy_id;
	sb.root_id = cg->root_id;
	/* Counters and limits (agent/limits.c) first, then the entry before
	 * the links, so the programs find all they need at once. */
	err = limits__attach(a, cg);
	if (!err && bpf_map_update_elem(bpf_map__fd(a->skel->maps.sandboxes),
					&id, &sb, BPF_ANY)) {
		err = -errno;
		pr_err("cgroup", "recording %s in the sandbox map failed: %s (map full? at most %d cgroups)",
		       rel, strerror(errno), SANDBOX_MAX_CGROUPS);
	} else if (!err && direct && !pidx) {
		/* Nested in a confined cgroup, the ancestor's programs already
		 * run here and pick this entry (nearest wins); links of its
		 * own would judge, and log, every denial twice. */
		err = attach_cg(a, cg);
	}
	if (err) {
		ctx->err = ctx->err ?: err;
		limits__detach(a, cg, "attach_failed");
		bpf_map_delete_elem(bpf_map__fd(a->skel->maps.sandboxes), &id);
		free(cg->path);
		a->n_cgs--;
		return NULL;
	}
	/* After the entry exists: invalidates "outside" cached by the LSM
	 * programs for this cgroup and its descendants (include/sandbox.h). */
	__atomic_fetch_add(&a->skel->data->sandbox_gen, 1, __ATOMIC_SEQ_CST);
	events__begin(a, "attach");
	events__cgroup_fields(a, cg);
	json_str(&a->j, "via", direct ? "selector" : "inherited");
	if (pidx)
		json_str_raw(&a->j, "parent", a->cgs[pidx - 1].path,
			     strlen(a->cgs[pidx - 1].path));
	events__emit(a);
	return (void *)(uintptr_t)(cg - a->cgs + 1);
}

static int scan(struct agent *a)
{
	struct scan_ctx ctx = { .a = a, .err = 0 };
	size_t i;
	int err;

	a->scan_gen++;
	err = cgroup__walk(a->cgroot, scan_one, &ctx);
	if (err) {
		pr_err("cgroup", "walking %s failed: %s", a->cgroot, strerror(-err));
		return err;
	}
	/* Gone since the last scan: the kernel detached their links. */
	for (i = 0; i < a->n_cgs;) {
		if (a->cgs[i].seen == a->scan_gen) {
			i++;
			continue;
		}
		detach_cg(a, &a->cgs[i], "cgroup_removed");
		free(a->cgs[i].path);
		a->cgs[i] = a->cgs[--a->n_cgs];
	}
	a->last_cg = 0;
	return ctx.err;
}

static void notify_systemd(void)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len;
	int fd;

	if (!path || (path[0] != '/' && path[0] != '@') ||
	    strlen(path) >= sizeof(sa.sun_path))
		return;
	strcpy(sa.sun_path, path);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	len = offsetof(struct sockaddr_un, sun_path) + strlen(path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (sendto(fd, "READY=1", 7, 0, (struct sockaddr *)&sa, (socklen_t)len) < 0)
		pr_warn("agent", "telling systemd READY=1 failed: %s", strerror(errno));
	close(fd);
}

static void emit_ready(struct agent *a)
{
	const char *names[POLICY_MAX];
	size_t i, confined = 0;

	for (i = 0; i < a->set.n && i < POLICY_MAX; i++)
		names[i] = a->set.v[i]->name;
	for (i = 0; i < a->n_cgs; i++)
		confined += 1;
	events__begin(a, "agent_ready");
	json_str_array(&a->j, "policies", names, a->set.n);
	json_u64(&a->j, "cgroups", confined);
	json_str(&a->j, "cgroup_root", a->cgroot);
	json_str_array(&a->j, "degraded", a->degraded, a->n_degraded);
	json_u64(&a->j, "pid", (uint64_t)getpid());
	events__emit(a);
	notify_systemd();
}

static void agent_cleanup(struct agent *a)
{
	size_t i;

	if (a->skel) {
		for (i = 0; i < a->n_cgs; i++)
			detach_cg(a, &a->cgs[i], "agent_exit");
		limits__fini(a);
		events__close(a);
	}
	for (i = 0; i < a->n_cgs; i++)
		free(a->cgs[i].path);
	free(a->cgs);
	stockade__destroy(a->skel);
	policy_set__free(&a->set);
}

int agent__run(const struct agent_opts *opt)
{
	struct policy_diag diag = { 0 };
	struct agent a;
	struct sigaction sa = { .sa_handler = on_signal };
	struct timespec last = { 0 }, now;
	size_t i;
	int err;

	memset(&a, 0, sizeof(a));
	a.opt = *opt;

	err = policy_set__load(opt->policy_paths, opt->n_policy_paths, &a.set,
			       &diag);
	for (i = 0; i < diag.n; i++)
		pr_err("policy", "%s", diag.msgs[i]);
	policy_diag__free(&diag);
	if (err) {
		pr_err("policy", "the policy set is invalid; nothing was applied");
		goto cleanup;
	}
	if (!has_caps()) {
		pr_err("agent", "not enough privilege: run as root, or with CAP_BPF, CAP_PERFMON and CAP_NET_ADMIN (or CAP_SYS_ADMIN)");
		err = -EPERM;
		goto cleanup;
	}
	err = cgroup_root__find(opt->cgroup_root, a.cgroot, sizeof(a.cgroot));
	if (err)
		goto cleanup;
	err = check_bpffs(opt->bpffs);
	if (err)
		goto cleanup;
	/* Limits this host cannot apply fail the start like a bad policy. */
	err = limits__check(&a);
	if (err)
		goto cleanup;

	log_setup_libbpf();
	err = load_bpf(&a);
	if (err)
		goto cleanup;
	err = fill_policies(&a);
	if (err)
		goto cleanup;
	err = events__open(&a);
	if (err)
		goto cleanup;
	err = limits__init(&a);
	if (err)
		goto cleanup;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	err = scan(&a);
	if (err) {
		pr_err("agent", "could not confine every selected cgroup; detaching all and exiting (nothing half-applied)");
		goto cleanup;
	}
	limits__tick(&a);	/* the state file and metrics exist at agent_ready */
	emit_ready(&a);

	while (!stop_signal) {
		err = events__poll(&a, 100);
		if (err < 0)
			break;
		err = 0;
		limits__tick(&a);	/* breaches, run time, metrics */
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - last.tv_sec) * 1000 +
		    (now.tv_nsec - last.tv_nsec) / 1000000 >= SCAN_INTERVAL_MS) {
			last = now;
			/* A failed attach is retried next scan; the cgroup is
			 * still confined by inheritance or the ancestor walk
			 * where it has a confined ancestor. */
			scan(&a);
		}
	}
	if (stop_signal)
		pr_info("agent", "signal %d: detaching and exiting", (int)stop_signal);
cleanup:
	agent_cleanup(&a);
	return err;
}
