// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The daemon: load the policy set, load the BPF object, confine every
 * selected cgroup (and pick up new ones), stream events until told to stop.
 *
 * Everything it sets up is pinned (include/lifecycle.h) and outlives it; an
 * agent that finds pins adopts them instead of building anew (README.md,
 * "Lifecycle").
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "containers.h"
#include "daemon.h"
#include "bpfutil.h"
#include "cgroup.h"
#include "events_agent.h"
#include "limits_agent.h"
#include "log.h"
#include "loop.h"
#include "lsm.h"
#include "notify.h"
#include "metrics_http.h"
#include "watch_server.h"
#include "file_rules.h"
#include "net_rules.h"
#include "preexist_agent.h"
#include "pin.h"
#include "replace.h"
#include "sandbox.h"
#include "records.h"
#include "rules_check.h"
#include "setup_agent.h"
#include "stockade_limits.h"
#include "stockade.skel.h"

/*
 * The agent's signals, from the first line of main(). SIGHUP's default
 * action kills: a `stockade reload` (or a log rotation's HUP) that lands
 * while the agent is still starting must not stop it. So SIGHUP, SIGINT
 * and SIGTERM are blocked at once, and stay blocked: the main loop reads
 * them from a signalfd (agent/loop.h), never in a handler. Blocked, not
 * caught, during start-up too, because a caught signal makes the verifier
 * give up a program load (EAGAIN once a signal is pending) and a storm of
 * them would fail the start. Held pending, a SIGHUP makes one reload once
 * the agent is ready, which applies whatever changed meanwhile; a
 * SIGTERM/SIGINT stops it then, cleanly, rather than halfway through.
 * SIGUSR1 (reopen --log, for logrotate) is blocked for the same reason:
 * its default action kills too, and a rotation may come at any time.
 */
static sigset_t agent_sigs;

void agent__signals_init(void)
{
	sigemptyset(&agent_sigs);
	sigaddset(&agent_sigs, SIGHUP);
	sigaddset(&agent_sigs, SIGINT);
	sigaddset(&agent_sigs, SIGTERM);
	sigaddset(&agent_sigs, SIGUSR1);
	sigprocmask(SIG_BLOCK, &agent_sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
}

const char *agent__policy_name(struct agent *a, uint32_t policy_id)
{
	return policy_table__name(&a->pt, &a->set, policy_id);
}

const struct sandbox_cg *agent__find_cg(struct agent *a, uint64_t id)
{
	return sandbox_table__find(&a->cgt, id);
}

/* The names interface (agent/names.h): the policy table's answers. */
static const char *names_policy_name(const void *ctx, uint32_t id)
{
	const struct agent *a = ctx;

	return policy_table__name(&a->pt, &a->set, id);
}

static const struct policy *names_policy(const void *ctx, uint32_t id)
{
	const struct agent *a = ctx;

	return policy_table__policy(&a->pt, &a->set, id);
}

static uint32_t names_slot_id(const void *ctx, uint32_t slot)
{
	const struct agent *a = ctx;

	return policy_table__slot_id(&a->pt, slot);
}

/* agent_meta's daemon half (events__meta_update() adds the rest). */
static void meta_fill(const void *ctx, struct agent_meta *m)
{
	const struct agent *a = ctx;

	m->pid = a->running ? (__u32)getpid() : 0;
	m->started_ns = (__u64)a->started_ns;
	m->reloads = a->reloads;
	m->reload_result = a->reload_result;
	m->reload_problems = a->reload_problems;
}

/* What a replacement asks of the daemon (struct replace_env). */
static bool rep_watched(void *ctx, uint64_t id)
{
	return agent__watched(ctx, id);
}

static int rep_counters_carry(void *ctx, uint64_t id, int old_fd)
{
	return limits__counters_carry(((struct agent *)ctx)->lim, id, old_fd);
}

static void rep_limits_sweep(void *ctx, const struct cgroup_paths *paths)
{
	limits__sweep(((struct agent *)ctx)->lim, paths);
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

#define VMLINUX_BTF	"/sys/kernel/btf/vmlinux"

/* One line of `agent --preflight`: ok, or missing with its fix. */
static bool preflight_line(bool ok, const char *check, const char *detail,
			   unsigned int *missing)
{
	printf("%-7s %-9s %s\n", ok ? "ok" : "missing", check, detail);
	if (!ok)
		(*missing)++;
	return ok;
}

/*
 * `stockade agent --preflight`: what a start needs of the host, asked
 * without loading, attaching, pinning or mounting anything on the host
 * (an init container runs it before the agent's container starts). Each
 * check is the one the start itself makes, with its message: a line that
 * says ok here cannot fail the start for that reason. 0 all present, 1
 * one missing.
 */
int agent__preflight(const struct agent_opts *o)
{
	char why[2 * PATH_MAX + 256], note[512], root[PATH_MAX];
	unsigned int missing = 0;
	struct btf *btf;
	bool ok;

	log_setup_libbpf();
	/* The LSM list first: where securityfs is unmounted, it is read in a
	 * private mount namespace, which the checks below see alike. */
	preflight_line(lsm__bpf_listed_probe(why, sizeof(why), note, sizeof(note)),
		       "lsm", why, &missing);
	if (note[0])
		printf("%-7s %-9s %s\n", "", "", note + 2);

	/* CO-RE relocates every program against the running kernel's BTF,
	 * and the LSM hooks are probed in it (agent/lsm.c): parse it whole. */
	btf = btf__parse(VMLINUX_BTF, NULL);
	if (btf)
		snprintf(why, sizeof(why), VMLINUX_BTF " parses (%u types)",
			 btf__type_cnt(btf));
	else
		snprintf(why, sizeof(why), "no usable BTF at " VMLINUX_BTF " (%s); the kernel needs CONFIG_DEBUG_INFO_BTF=y (in a container, mount the host's /sys/kernel/btf)",
			 strerror(errno));
	preflight_line(btf != NULL, "btf", why, &missing);
	btf__free(btf);

	if (!cgroup_root__probe(o->cgroup_root, root, sizeof(root), why, sizeof(why)))
		snprintf(why, sizeof(why), "cgroup2 mounted at %s", root);
	else
		root[0] = '\0';
	preflight_line(root[0], "cgroup2", why, &missing);

	ok = !pin__bpffs_check(o->bpffs, why, sizeof(why));
	if (ok)
		snprintf(why, sizeof(why), "bpffs mounted where %s goes", o->bpffs);
	preflight_line(ok, "bpffs", why, &missing);

	ok = has_caps();
	preflight_line(ok, "privilege", ok ?
		       "enough to load and attach the programs (CAP_SYS_ADMIN, or CAP_BPF + CAP_PERFMON + CAP_NET_ADMIN)" :
		       "not enough privilege: run as root, or with CAP_BPF, CAP_PERFMON and CAP_NET_ADMIN (or CAP_SYS_ADMIN)",
		       &missing);

	if (missing)
		printf("preflight: %u missing; fix %s above before starting the agent\n",
		       missing, missing == 1 ? "the line" : "the lines");
	else
		printf("preflight: all present\n");
	return missing ? 1 : 0;
}

/* ---- load ---- */

static int open_skel(struct agent *a, bool with_lsm)
{
	char why[256] = "";
	int err;

	a->skel = stockade__open();
	if (!a->skel) {
		err = -errno;
		pr_err("agent", "opening the BPF object failed: %s", strerror(errno));
		return err;
	}
	err = lsm__set_autoload(&a->lsm, a->skel, with_lsm);
	if (err) {
		stockade__destroy(a->skel);
		a->skel = NULL;
		return err;
	}
	if (a->opt.ring_size)
		events__set_ring_size(a->skel, a->opt.ring_size);
	/* Reuse what an earlier agent pinned, or create and pin. Pins of
	 * another build, or of a replacement that was interrupted, are
	 * replaced instead: fresh maps, in a staging directory. */
	if (a->rep) {
		err = 0;	/* a retry of this load: decided already */
	} else if (replace__interrupted(a->pin_dir)) {
		snprintf(why, sizeof(why), "a replacement was interrupted");
		err = -ESTALE;
	} else {
		err = pin__maps_prepare(a->skel, a->pin_dir, a->opt.ring_size,
					why, sizeof(why));
	}
	if (err == -ESTALE && !a->rep) {
		err = replace__prepare(&a->rep, a->opt.bpffs, why);
		/* From here on the new state is pinned there. */
		if (!err)
			a->pin_dir = replace__staging(a->rep);
	}
	if (a->rep && !err) {
		/* Its sequence and ring size, then our staging pins. */
		replace__configure(a->rep, a->skel, a->opt.ring_size);
		err = pin__maps_prepare(a->skel, a->pin_dir, a->opt.ring_size,
					why, sizeof(why));
	}
	if (err) {
		if (err == -ESTALE)
			pr_err("pin", "the maps pinned under %s do not fit this build: %s",
			       a->pin_dir, why);
		err = -ESTALE;	/* the message is out; not an LSM problem */
	} else {
		int64_t t0 = clock_now_ns(CLOCK_MONOTONIC);

		err = verifier_stats_prepare(a->skel->obj);
		if (!err)
			err = stockade__load(a->skel);
		if (!err)
			err = lsm__find_locks(a->skel);
		a->bpf_load_ns += clock_now_ns(CLOCK_MONOTONIC) - t0;
		verifier_stats_report(a->skel->obj);
	}
	if (err) {
		stockade__destroy(a->skel);
		a->skel = NULL;
	}
	return err;
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

	if (!lsm__bpf_listed(why, sizeof(why))) {
		err = lsm__degrade(&a->lsm, why);
		return err ?: open_skel(a, false);
	}
	log_libbpf_quiet = true;
	err = open_skel(a, true);
	log_libbpf_quiet = false;
	/* -EOPNOTSUPP: a hook is missing and --allow-degraded not given;
	 * lsm__set_autoload said which. */
	if (err == -ESTALE || err == -EOPNOTSUPP)
		return err;
	if (!err) {
		int64_t t0 = clock_now_ns(CLOCK_MONOTONIC);

		err = lsm__attach(&a->lsm, a->skel, a->pin_dir);
		/* A link per BPF-LSM program, each a trampoline the kernel
		 * builds and patches in: a quarter of a start under TCG. */
		a->lsm_attach_ns += clock_now_ns(CLOCK_MONOTONIC) - t0;
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
		if (err != -ESTALE)
			pr_err("agent", "loading the BPF programs failed: %s; run with -v for the verifier's log",
			       strerror(-err));
		return err;
	}
	err = lsm__degrade(&a->lsm, why);
	if (err) {
		stockade__destroy(a->skel);
		a->skel = NULL;
	}
	return err;
}

/* Tell systemd (Type=notify, agent/notify.h) where the agent stands;
 * outside systemd there is no $NOTIFY_SOCKET and nothing is sent. A
 * failure costs the unit its state, not the enforcement: a warning. */
static void notify_state(struct agent *a, const char *state)
{
	size_t n_degraded;
	int err;

	lsm__degraded(&a->lsm, &n_degraded);
	err = notify__sendf("%s\nSTATUS=confining %zu cgroups, %zu policies%s",
			    state, a->cgt.n, a->set.n,
			    n_degraded ? ", degraded (agent_ready lists the guarantees lost)" : "");

	if (err)
		pr_warn("agent", "telling systemd %s failed (NOTIFY_SOCKET=%s): %s; systemctl may report a wrong state",
			state, getenv("NOTIFY_SOCKET"), strerror(-err));
}

static void emit_ready(struct agent *a)
{
	const char *names[POLICY_MAX];
	const char *const *degraded;
	size_t i, confined = 0, n_degraded;

	for (i = 0; i < a->set.n && i < POLICY_MAX; i++)
		names[i] = a->set.v[i]->name;
	for (i = 0; i < a->cgt.n; i++)
		confined += 1;
	events__begin(&a->ev, "agent_ready");
	json_str_array(&a->ev.j, "policies", names, a->set.n);
	json_u64(&a->ev.j, "cgroups", confined);
	json_str(&a->ev.j, "cgroup_root", a->cgroot);
	degraded = lsm__degraded(&a->lsm, &n_degraded);
	json_str_array(&a->ev.j, "degraded", degraded, n_degraded);
	json_u64(&a->ev.j, "pid", (uint64_t)getpid());
	json_str(&a->ev.j, "bpffs", a->pin_dir);
	json_str(&a->ev.j, "pins", a->rep ? "replaced" : a->adopting ? "adopted" : "created");
	json_u64(&a->ev.j, "startup_ms",
		 (uint64_t)(clock_now_ns(CLOCK_MONOTONIC) - a->start_ns) / 1000000);
	json_u64(&a->ev.j, "bpf_load_ms", (uint64_t)a->bpf_load_ns / 1000000);
	json_u64(&a->ev.j, "lsm_attach_ms", (uint64_t)a->lsm_attach_ns / 1000000);
	events__emit(&a->ev);
	/* After the record is written out (events__emit flushes): whoever
	 * waits for READY=1 finds agent_ready in the log. */
	notify_state(a, "READY=1");
}

/*
 * Stop. By default every link and map stays pinned, so the sandboxes stay
 * confined and the next agent adopts them; with detach (--detach-on-exit,
 * or a failed first start) everything is removed, with a detach record per
 * cgroup.
 */
static void agent_cleanup(struct agent *a, bool detach, int sig)
{
	size_t i, n = a->cgt.n;

	if (a->skel) {
		/* Limits are enforcement too: without detach they stay as
		 * written, and the values found stay saved in the pinned
		 * lim_saved map for whoever removes enforcement later. */
		for (i = 0; i < a->cgt.n; i++) {
			if (detach)
				detach_cg(a, &a->cgt.v[i], "agent_exit");
			else
				close_cg(&a->cgt.v[i]);
		}
		for (i = 0; i < a->n_wds; i++) {
			int k;

			if (detach) {
				disarm_wd(a, &a->wds[i]);
				continue;
			}
			for (k = 0; k < WATCH_N_LINKS; k++)
				bpf_link__destroy(a->wds[i].links[k]);
		}
		if (detach) {
			a->scan_gen++;	/* none seen: every OUTSIDE entry goes */
			sweep_outside(a);
		}
		limits__fini(a->lim);
		a->lim = NULL;
		lsm__drop(&a->lsm, detach);
		if (events__reading(&a->ev)) {
			events__close_ring(&a->ev);
			events__begin(&a->ev, "agent_stop");
			if (sig)
				json_u64(&a->ev.j, "signal", (uint64_t)sig);
			json_str(&a->ev.j, "enforcement", detach ? "removed" : "kept");
			json_u64(&a->ev.j, "cgroups", detach ? 0 : n);
			events__emit(&a->ev);
		}
		if (a->running) {
			a->running = false;
			events__meta_update(&a->ev);
		}
		events__close(&a->ev);
	}
	/* After the links and the entries; we hold the lock. */
	if (detach && a->pin_fd >= 0)
		pin__remove_all(a->pin_dir);
	sandbox_table__free(&a->cgt);
	bpf_link__destroy(a->born_link);
	for (i = 0; i < a->n_wds; i++)
		free(a->wds[i].path);
	free(a->wds);
	free(a->disc);
	free(a->outs);
	if (a->cg_ino_fd >= 0)
		close(a->cg_ino_fd);
	containers__free(a);
	free(a->det);
	free(a->det_seen);
	policy_table__free(&a->pt);
	key_set_free(&a->keys_allow);
	key_set_free(&a->keys_exact);
	key_set_free(&a->keys_meta);
	key_set_free(&a->keys_file);
	key_set_free(&a->keys_unix);
	stockade__destroy(a->skel);
	if (a->pin_fd >= 0)
		close(a->pin_fd);	/* releases the lock */
	if (a->ino_fd >= 0)
		close(a->ino_fd);
	policy_watches_free();
	policy_set__free(&a->set);
}

/* Take the pin directory, or say who holds it. */
static int pin_take(struct agent *a)
{
	struct agent_meta m = { 0 };
	int err;

	a->pin_fd = pin__dir_open(a->opt.bpffs, true);
	if (a->pin_fd < 0) {
		err = a->pin_fd;
		a->pin_fd = -1;
		return err;
	}
	err = pin__lock(a->pin_fd, true);
	if (err == -EWOULDBLOCK) {
		pin__meta_read(a->opt.bpffs, &m);
		pr_err("agent", "another agent (pid %u) is running on %s; stop it first, or give this one another --bpffs DIR",
		       m.pid, a->opt.bpffs);
		close(a->pin_fd);
		a->pin_fd = -1;
		return -EBUSY;
	}
	return err;
}

/*
 * Map inserts that met a transient ENOMEM and were retried
 * (map_update_retry()): one record per batch, so a pressure that passed
 * is still said.
 */
/* A counter's growth since *seen, said in one record of event: how much
 * (count), the total (total_key), and why. */
static void report_growth(struct agent *a, const char *event, uint64_t now,
			  uint64_t *seen, const char *total_key, const char *reason)
{
	if (now == *seen)
		return;
	events__begin(&a->ev, event);
	json_u64(&a->ev.j, "count", now - *seen);
	json_u64(&a->ev.j, total_key, now);
	json_str(&a->ev.j, "reason", reason);
	*seen = now;
	events__emit(&a->ev);
}

/* Map inserts retried after a transient ENOMEM (agent/bpfutil.h), and new
 * cgroups the safety scan found before inotify told of them. */
static void report_counters(struct agent *a)
{
	report_growth(a, "map_retry", bpfutil_enomem_retries, &a->retries_seen,
		      "retries_total", "enomem");
	report_growth(a, "scan_found", a->scan_found, &a->scan_found_seen,
		      "found_total", "missed_by_inotify");
}

/* ---- the main loop (agent/loop.h) ---- */

/*
 * What wakes the agent, each an fd in one epoll set: the signals
 * (signalfd), the ring buffer (agent/events.c), inotify on the watched
 * cgroup directories and on the policy files, the limits' inotify and
 * /dev/kmsg (agent/limits.c), and timers: the safety scan, the reload's
 * settling, the limits' next deadline, the ring's coalescing. Nothing else:
 * an idle agent sleeps until one of them is due.
 */
struct agent_loop {
	struct agent *a;
	struct loop *l;
	struct loop_source *scan, *settle;
	int stop_signal;	/* SIGTERM or SIGINT: the loop has ended */
	bool reload_signal;	/* the settle timer runs a SIGHUP's reload */
};

static int timer_armed(int err, const char *what)
{
	if (err)
		pr_err("agent", "arming the %s timer failed: %s; stopping the agent",
		       what, strerror(-err));
	return err;
}

/* SIGUSR1: logrotate moved --log away. A failure keeps the old file
 * (events__log_reopen() says so): never a reason to stop. */
static void reopen_logs(struct agent *a)
{
	events__log_reopen(&a->ev);
	limits__files_rewrite(a->lim);
}

static int on_signal(struct loop_source *s, const struct signalfd_siginfo *si,
		     void *userdata)
{
	struct agent_loop *al = userdata;

	(void)s;
	if (si->ssi_signo == SIGUSR1) {
		reopen_logs(al->a);
		return 0;
	}
	if (si->ssi_signo != SIGHUP) {
		al->stop_signal = (int)si->ssi_signo;
		loop__exit(al->l, 0);
		return 0;
	}
	/*
	 * Reload at once, from the settle timer's next turn rather than
	 * here: a SIGTERM read along with it still stops the agent without
	 * reloading first (both pending at the end of start-up always did).
	 * It takes the place of a settling inotify reload: the files are
	 * read now.
	 */
	al->reload_signal = true;
	al->a->reload_at_ms = 0;
	return timer_armed(loop__timer_in(al->settle, 0), "reload");
}

static int on_settle(struct loop_source *s, uint32_t revents, void *userdata)
{
	struct agent_loop *al = userdata;
	const char *trigger = al->reload_signal ? "signal" : "inotify";
	char state[64];

	(void)s;
	(void)revents;
	al->reload_signal = false;
	al->a->reload_at_ms = 0;
	/* systemd shows "reloading" meanwhile. MONOTONIC_USEC goes with
	 * it because Type=notify-reload (systemd 253) requires it. */
	snprintf(state, sizeof(state), "RELOADING=1\nMONOTONIC_USEC=%llu",
		 (unsigned long long)loop__now_us());
	notify_state(al->a, state);
	reload(al->a, trigger);
	notify_state(al->a, "READY=1");
	return 0;
}

static int on_policy_inotify(struct loop_source *s, uint32_t revents, void *userdata)
{
	struct agent_loop *al = userdata;

	(void)s;
	(void)revents;
	check_inotify(al->a);
	/* A SIGHUP's reload, due at once, reads the change too. */
	if (!al->a->reload_at_ms || al->reload_signal)
		return 0;
	return timer_armed(loop__timer_at(al->settle, (uint64_t)al->a->reload_at_ms * 1000),
			   "reload");
}

static int on_cg_inotify(struct loop_source *s, uint32_t revents, void *userdata)
{
	struct agent_loop *al = userdata;

	(void)s;
	(void)revents;
	drain_cg_inotify(al->a);	/* a pending cgroup waits */
	return 0;
}

static int on_scan(struct loop_source *s, uint32_t revents, void *userdata)
{
	struct agent_loop *al = userdata;
	int err;

	(void)revents;
	/* SCAN_INTERVAL_MS from this scan's start, however long it takes. */
	err = timer_armed(loop__timer_in(s, SCAN_INTERVAL_MS * 1000ULL), "scan");
	if (err)
		return err;
	/* A failed attach is retried next scan; the cgroup is still
	 * confined by inheritance or the ancestor walk where it has a
	 * confined ancestor. An idle agent walks nothing: inotify told it
	 * of every change (scan_needed()). */
	/* A reload whose walk failed (reselect) is retried the same way. */
	if (al->a->rejudge || al->a->reselect)
		rejudge(al->a);
	else if (scan_needed(al->a))
		scan(al->a);
	report_counters(al->a);
	return 0;
}

/* After each turn: an overflowed inotify queue (in any turn's
 * drain_cg_inotify(), a scan's or a reload's included) asks for a scan. */
static int on_turn(struct loop *l, void *userdata)
{
	struct agent_loop *al = userdata;

	(void)l;
	if (!al->a->rescan)
		return 0;
	return timer_armed(loop__timer_in(al->scan, 0), "scan");
}

static int agent_loop_init(struct agent_loop *al, struct agent *a)
{
	const char *step = "epoll_create1";
	int err;

	al->a = a;
	err = loop__new(&al->l);
	if (err)
		goto fail_err;
	step = "signalfd";
	/* Before the others: signals first in any turn (LOOP_PRIO_FIRST),
	 * the inotify sources just before them (a SIGHUP of the same turn
	 * then takes the place of their settling reload). */
	if (!loop__add_signals(al->l, &agent_sigs, LOOP_PRIO_FIRST + 1, on_signal, al))
		goto fail;
	step = "inotify (cgroups)";
	if (a->cg_ino_fd >= 0 &&
	    !loop__add_io(al->l, a->cg_ino_fd, LOOP_PRIO_FIRST, on_cg_inotify, al))
		goto fail;
	step = "inotify (policy files)";
	if (a->ino_fd >= 0 &&
	    !loop__add_io(al->l, a->ino_fd, LOOP_PRIO_FIRST, on_policy_inotify, al))
		goto fail;
	step = "timerfd_create";
	al->settle = loop__add_timer(al->l, LOOP_PRIO_NORMAL, on_settle, al);
	al->scan = al->settle ? loop__add_timer(al->l, LOOP_PRIO_NORMAL, on_scan, al) : NULL;
	if (!al->scan)
		goto fail;
	err = loop__add_post(al->l, on_turn, al);
	if (err)
		goto fail_err;
	err = events__loop_add(&a->ev, al->l);
	if (!err)
		err = containers__loop_add(a, al->l);
	if (!err)
		err = limits__loop_add(a->lim, al->l);
	if (!err)
		err = preexist__loop_add(a->pre, al->l);
	if (!err)
		err = metrics_http__loop_add(a->http, al->l);
	if (!err)
		err = watch_server__loop_add(a->watch, al->l);
	if (err)
		return err;	/* said */
	/* The first turn scans: whatever inotify could not report between
	 * the first scan and agent_ready. */
	return timer_armed(loop__timer_in(al->scan, 0), "scan");
fail:
	err = -errno;
fail_err:
	pr_err("agent", "setting up the main loop failed at %s: %s; raise fs.inotify.max_user_instances or RLIMIT_NOFILE if it is EMFILE",
	       step, strerror(-err));
	return err;
}

/* Before anything is loaded: the policy set valid, the privilege, the
 * cgroup root, the pin directory taken, the limits applicable. *detach:
 * whether a failure from here on removes what this start made. */
static int agent_preflight(struct agent *a, bool *detach)
{
	struct policy_diag diag = { 0 };
	size_t i;
	int err;

	err = policy_set__load(a->opt.policy_paths, a->opt.n_policy_paths, &a->set,
			       &diag);
	for (i = 0; i < diag.n; i++)
		pr_err("policy", "%s", diag.msgs[i]);
	policy_diag__free(&diag);
	if (err) {
		pr_err("policy", "the policy set is invalid; nothing was applied");
		return err;
	}
	if (!has_caps()) {
		pr_err("agent", "not enough privilege: run as root, or with CAP_BPF, CAP_PERFMON and CAP_NET_ADMIN (or CAP_SYS_ADMIN)");
		return -EPERM;
	}
	err = cgroup_root__find(a->opt.cgroup_root, a->cgroot, sizeof(a->cgroot));
	if (err)
		return err;
	err = pin_take(a);
	if (err)
		return err;
	a->adopting = pin__has_maps(a->opt.bpffs);
	/* A first start that fails removes what it made: nothing half-applied.
	 * An adopting one leaves the pins as they are: still enforcing; so
	 * does one that finds an interrupted replacement (its whole state may
	 * sit in a staging directory, which pin__remove_all() would take). */
	*detach = !a->adopting && !replace__interrupted(a->opt.bpffs);
	/* Limits this host cannot apply fail the start like a bad policy. */
	return limits__check(a->cgroot, &a->set);
}

static int limits_init(struct agent *a)
{
	const struct limits_config cfg = {
		.skel = a->skel,
		.cgroot = a->cgroot,
		.names = &a->names,
		.state_path = a->opt.state_path,
		.metrics_path = a->opt.metrics_path,
		.pin_dir = &a->pin_dir,
		.ev = &a->ev,
		.metrics_publish = a->http ? metrics_http__publish : NULL,
		.container_labels = a->opt.metrics_container_labels,
		.metrics_ctx = a->http,
	};

	return limits__init(&a->lim, &cfg);
}

/* The check of fds held from before confinement (agent/preexist.c):
 * files only where a file scope refuses them now. */
static int preexist_init(struct agent *a)
{
	struct preexist_cfg cfg = {
		.skel = a->skel, .names = &a->names, .cgroot = a->cgroot,
		.ev = &a->ev,
	};
	const char *const *degraded;
	size_t i, n;

	degraded = lsm__degraded(&a->lsm, &n);
	for (i = 0; i < n; i++)
		if (!strcmp(degraded[i], "file_scope"))
			cfg.no_files = true;
	return preexist__open(&a->pre, &cfg);
}

/* The BPF object loaded (or adopted, or replacing another build's), the
 * ring opened, the policies written and switched in. */
static int agent_load(struct agent *a, bool *detach)
{
	int err;

	log_setup_libbpf();
	err = load_bpf(a);
	if (a->rep) {
		/* Replacing: fresh maps, nothing adopted; and nothing removed
		 * on failure, the old state's and ours confine together. */
		a->adopting = false;
		*detach = false;
	}
	if (err)
		return err;
	a->setup = (struct setup_ctx){ .skel = a->skel, .names = &a->names,
				       .dir = wd_setup_dir, .ctx = a };
	born_attach(a);
	err = events__open(&a->ev, a->skel, &(struct events_cfg){
				   .log_path = a->opt.log_path,
				   .cgroot = a->cgroot, .names = &a->names,
				   .meta = meta_fill, .ctx = a,
				   .sink = a->watch ? watch_server__line : NULL,
				   .sink_ctx = a->watch });
	if (err)
		return err;
	a->started_ns = (int64_t)time(NULL) * 1000000000;
	a->started_boot_ns = clock_now_ns(CLOCK_BOOTTIME);
	a->running = true;
	events__meta_update(&a->ev);
	if (a->adopting) {
		err = read_old_policies(a);
		if (err)
			return err;
		/* Records written while no agent ran, before anything new. */
		events__drain(&a->ev);
	}
	if (a->rep) {
		err = replace__carry(a->rep, &(struct replace_env){
					     .skel = a->skel, .ev = &a->ev,
					     .names = &a->names, .cgroot = a->cgroot,
					     .watched = rep_watched,
					     .counters_carry = rep_counters_carry,
					     .limits_sweep = rep_limits_sweep, .ctx = a },
				     &a->pt.old);
		if (err)
			return err;
	}
	err = assign_ids(a);
	if (!err)
		err = fill_policies(a, NULL);
	if (!err)
		err = flip_slots(a, NULL);	/* adopted cgroups switch here */
	if (err)
		return err;
	emit_policies(a);
	err = limits_init(a);
	if (!err)
		err = preexist_init(a);
	return err;
}

/* The first scan: every selected cgroup confined; then what an adopted or
 * replaced state held and this set does not, removed. */
static int agent_confine(struct agent *a)
{
	int err = scan(a);

	if (err) {
		pr_err("agent", a->rep ?
		       "could not confine every selected cgroup; exiting half way through the replacement: every cgroup stays confined, by the old programs or the new ones; start the agent again to finish it" :
		       a->adopting ?
		       "could not confine every selected cgroup; exiting, the adopted pins stay in force" :
		       "could not confine every selected cgroup; detaching all and exiting (nothing half-applied)");
		return err;
	}
	if (a->adopting)
		sweep(a);
	if (!a->rep)
		return 0;
	err = replace__finish(a->rep, lsm__n_attached(&a->lsm), lsm__off(&a->lsm));
	if (!err)
		a->pin_dir = a->opt.bpffs;	/* published there */
	return err;
}

/* Just before agent_ready: the state file and metrics, the next fresh
 * id, the policy files watched, the heap given back. */
static void agent_settle(struct agent *a)
{
	limits__tick(a->lim);	/* the state file and metrics exist at agent_ready */
	policy_table__round_robin(&a->pt);
	watch_policies(a);
	/* Loading parsed the kernel's BTF (megabytes) and freed it; glibc
	 * keeps freed heap for reuse, which the agent never needs again at
	 * that size. Give it back, so the long-running agent's RSS is what
	 * it uses (README "Performance": idle RSS). */
	malloc_trim(0);
	report_counters(a);
}

/*
 * Each confined cgroup holds 8 link fds (its cgroup programs), each
 * watched top 8 more: the usual soft limit of 1024 runs out near 120
 * sandboxes, and then a new cgroup cannot be confined (it stays pending,
 * judged deny-first by its watch links, retried at each walk). So the
 * soft limit goes up to the hard one, and the hard one to fs.nr_open
 * where the agent may (CAP_SYS_RESOURCE), as the systemd unit's
 * LimitNOFILE does. The agent runs no other program: no child inherits
 * the higher limit.
 */
#define NOFILE_WANTED	8192
static void raise_nofile(void)
{
	struct rlimit rl;
	unsigned long nr_open = 0;
	FILE *f = fopen("/proc/sys/fs/nr_open", "re");

	if (f) {
		if (fscanf(f, "%lu", &nr_open) != 1)
			nr_open = 0;
		fclose(f);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	if (nr_open > rl.rlim_max &&
	    !setrlimit(RLIMIT_NOFILE, &(struct rlimit){ nr_open, nr_open }))
		rl.rlim_cur = rl.rlim_max = nr_open;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur < NOFILE_WANTED)
		pr_warn("agent", "RLIMIT_NOFILE is %lu and could not be raised: past about %lu sandboxes, new cgroups stay pending (denied) until fds free up; raise it (LimitNOFILE=, ulimit -n) or give the agent CAP_SYS_RESOURCE",
			(unsigned long)rl.rlim_cur, (unsigned long)rl.rlim_cur / 8);
}

int agent__run(const struct agent_opts *opt)
{
	struct agent_loop al = { 0 };
	struct agent *a;
	bool detach = false, ready = false;
	int err = 0;

	agent__signals_init();	/* main() did already; again for other callers */
	raise_nofile();
	/* ~100 KiB of policy tables: the heap, not the stack. */
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->start_ns = clock_now_ns(CLOCK_MONOTONIC);
	a->opt = *opt;
	lsm__init(&a->lsm, opt->allow_degraded);
	a->pin_dir = a->opt.bpffs;
	a->names = (struct names){ .cgt = &a->cgt, .ctx = a,
				   .policy_name = names_policy_name,
				   .policy = names_policy,
				   .slot_id = names_slot_id };
	a->pin_fd = -1;
	a->ino_fd = -1;
	events__init(&a->ev);
	/* Before the first scan: the watched directories' watches go on it. */
	a->cg_ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (a->cg_ino_fd < 0)
		pr_warn("cgroup", "inotify_init1 failed: %s; new cgroups are classified by the periodic scan only (every %d s), pending until then",
			strerror(errno), SCAN_INTERVAL_MS / 1000);

	containers__init(a);
	/* Bound first: a port in use fails the start before anything loads. */
	if (opt->metrics_listen)
		err = metrics_http__open(&a->http, opt->metrics_listen,
					 opt->metrics_allow_remote);
	if (!err)
		err = agent_preflight(a, &detach);
	/* After the pin directory's lock (a stale socket is then ours to
	 * remove), before the first record: the ring has them all. */
	if (!err)
		err = watch_server__open(&a->watch, opt->events_socket ?:
					 WATCH_SOCKET_DEFAULT);
	if (!err)
		err = agent_load(a, &detach);
	if (!err)
		err = agent_confine(a);
	if (err)
		goto cleanup;
	ready = true;
	agent_settle(a);
	err = agent_loop_init(&al, a);
	if (err)
		goto cleanup;
	emit_ready(a);

	err = loop__run(al.l);
	if (err < 0)
		pr_err("agent", "the main loop failed: %s; exiting",
		       strerror(-err));
	detach = opt->detach_on_exit;
	notify_state(a, "STOPPING=1");
	if (al.stop_signal)
		pr_info("agent", "signal %d: %s", al.stop_signal,
			detach ? "detaching everything and exiting (--detach-on-exit)" :
				 "exiting; the sandboxes stay confined by the pinned programs");
cleanup:
	if (!ready && a->pin_fd < 0)
		detach = false;	/* not ours to remove */
	agent_cleanup(a, detach, al.stop_signal);
	/* After the cleanup: its sources point into the agent's rooms. */
	loop__free(al.l);
	preexist__free(a->pre);
	metrics_http__free(a->http);
	watch_server__free(a->watch);
	replace__free(a->rep);
	free(a);
	return err;
}
