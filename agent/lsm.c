// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The BPF-LSM room (agent/lsm.h): is BPF-LSM active, which programs this
 * kernel can take (probed by BTF), what is lost without the others, and
 * attaching, pinning and dropping their links. The table of programs,
 * hooks and guarantees is agent/lsm_table.c.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "file.h"
#include "log.h"
#include "lsm.h"
#include "pin.h"
#include "stockade.skel.h"

#define LSM_LIST	"/sys/kernel/security/lsm"
#define SECURITYFS_MOUNT "mount -t securityfs securityfs /sys/kernel/security"

static int mount_securityfs(void)
{
	return mount("securityfs", "/sys/kernel/security", "securityfs",
		     MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) ? -errno : 0;
}

/*
 * securityfs is commonly unmounted on minimal hosts. The agent mounts it
 * where it is missing (host: the mount stays, as systemd would make it);
 * a probe that must change nothing (private) mounts it only in a mount
 * namespace of its own, which goes with the process, and says so in note.
 */
static bool bpf_listed(bool private, char *why, size_t len, char *note,
		       size_t note_len)
{
	char buf[512] = "";
	FILE *f = fopen(LSM_LIST, "re");
	int err;

	if (!f && errno == ENOENT) {
		if (!private) {
			/* A failed mount is told by the fopen's errno below. */
			if (!mount_securityfs())
				f = fopen(LSM_LIST, "re");
		} else if (unshare(CLONE_NEWNS) ||
			   mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
			err = errno;
			snprintf(why, len, "securityfs is not mounted at /sys/kernel/security, and a private mount namespace to read " LSM_LIST " failed (%s); mount it (" SECURITYFS_MOUNT ")",
				 strerror(err));
			return false;
		} else if ((err = mount_securityfs())) {
			snprintf(why, len, "securityfs is not mounted at /sys/kernel/security, and mounting it failed (%s); mount it (" SECURITYFS_MOUNT ")",
				 strerror(-err));
			return false;
		} else {
			f = fopen(LSM_LIST, "re");
			snprintf(note, note_len, "; securityfs is not mounted at /sys/kernel/security (read through a private mount; the agent mounts it when it starts, or: " SECURITYFS_MOUNT ")");
		}
	}
	if (!f) {
		snprintf(why, len, "cannot read " LSM_LIST " (%s); mount securityfs (" SECURITYFS_MOUNT ")",
			 strerror(errno));
		return false;
	}
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	if (!strstr(buf, "bpf")) {
		snprintf(why, len, "BPF LSM is not active: " LSM_LIST " is '%s', without 'bpf'; add lsm=%s,bpf to the kernel command line",
			 buf, buf);
		return false;
	}
	snprintf(why, len, "'bpf' is in the active LSM list (%s)", buf);
	return true;
}

bool lsm__bpf_listed(char *why, size_t len)
{
	return bpf_listed(false, why, len, NULL, 0);
}

bool lsm__bpf_listed_probe(char *why, size_t len, char *note, size_t note_len)
{
	if (note_len)
		note[0] = '\0';
	return bpf_listed(true, why, len, note, note_len);
}

void lsm__init(struct lsm_state *ls, bool allow_degraded)
{
	*ls = (struct lsm_state){ .allow_degraded = allow_degraded };
}

const char *const *lsm__degraded(const struct lsm_state *ls, size_t *n)
{
	*n = ls->n_degraded;
	return ls->degraded;
}

size_t lsm__n_links(const struct lsm_state *ls)
{
	return ls->n_links;
}

unsigned int lsm__n_attached(const struct lsm_state *ls)
{
	return ls->attached;
}

bool lsm__off(const struct lsm_state *ls)
{
	return ls->n_degraded > 0 && !ls->n_links;
}

/* Names g in ls->degraded once; loads and retries may say it again. */
static void lose(struct lsm_state *ls, const char *g)
{
	size_t i;

	if (!g)
		return;
	for (i = 0; i < ls->n_degraded; i++)
		if (!strcmp(ls->degraded[i], g))
			return;
	if (ls->n_degraded == LSM_MAX_DEGRADED) {
		/* Cannot happen with the table's dozen names; never silent. */
		pr_warn("agent", "guarantee lost: %s (not listed: degraded[] is full)", g);
		return;
	}
	ls->degraded[ls->n_degraded++] = g;
	pr_warn("agent", "guarantee lost: %s", g);
}

int lsm__degrade(struct lsm_state *ls, const char *cause)
{
	const char *all[LSM_MAX_DEGRADED];
	size_t i, n;

	if (!ls->allow_degraded) {
		pr_err("agent", "%s. Refusing to start: without BPF-LSM the sandbox keeps only its network rules. Fix the kernel, or pass --allow-degraded to run with cgroup socket programs only",
		       cause);
		return -EOPNOTSUPP;
	}
	pr_warn("agent", "%s; running DEGRADED (--allow-degraded)", cause);
	n = lsm__guarantees(all, sizeof(all) / sizeof(all[0]));
	for (i = 0; i < n && i < sizeof(all) / sizeof(all[0]); i++)
		lose(ls, all[i]);
	return 0;
}

/* Resolve typedefs and modifiers (const, volatile...). */
static const struct btf_type *strip(const struct btf *btf, __u32 *id)
{
	const struct btf_type *t = btf__type_by_id(btf, *id);

	while (t && (btf_is_mod(t) || btf_is_typedef(t))) {
		*id = t->type;
		t = btf__type_by_id(btf, *id);
	}
	return t;
}

/* The BTF function that stands for hook: bpf_lsm_<hook>, or for an
 * fentry row (LSM_FENTRY) the kernel function itself. */
static void btf_func_of(const char *hook, char *name, size_t len)
{
	size_t n = strlen(LSM_FENTRY);

	if (!strncmp(hook, LSM_FENTRY, n))
		snprintf(name, len, "%s", hook + n);
	else
		snprintf(name, len, "bpf_lsm_%s", hook);
}

/* An fentry program attached with the LSM ones (lsm_table.c). */
static bool is_fentry(const struct bpf_program *prog)
{
	return bpf_program__type(prog) == BPF_PROG_TYPE_TRACING &&
	       bpf_program__expected_attach_type(prog) == BPF_TRACE_FENTRY;
}

/*
 * The kernel's bpf_lsm_* functions, found in one pass over its BTF and
 * sorted by name. btf__find_by_name_kind walks every type (over 100,000
 * in a distribution kernel) for each name, and a start asks for about 80
 * hooks: most of a second of every agent start under the test VM's
 * emulation. Other names (the fentry rows), or no table (out of memory),
 * take btf__find_by_name_kind's walk: the same answer either way.
 */
#define HOOK_PREFIX	"bpf_lsm_"

struct hook_func {
	const char *name;
	__u32 id;
};

struct hook_funcs {
	const struct btf *btf;
	struct hook_func *v;
	size_t n;
};

/* By name, then id: of two functions of one name, the lower id first,
 * the one btf__find_by_name_kind would return. */
static int hook_func_cmp(const void *a, const void *b)
{
	const struct hook_func *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->id > y->id) - (x->id < y->id);
}

static void hook_funcs_init(struct hook_funcs *hf, const struct btf *btf)
{
	__u32 id, n = btf__type_cnt(btf);
	size_t cap = 0;

	*hf = (struct hook_funcs){ .btf = btf };
	for (id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const char *name = t && btf_is_func(t) ?
				   btf__name_by_offset(btf, t->name_off) : NULL;
		struct hook_func *v;

		if (!name || strncmp(name, HOOK_PREFIX, strlen(HOOK_PREFIX)))
			continue;
		if (hf->n == cap) {
			cap = cap ? 2 * cap : 512;
			v = realloc(hf->v, cap * sizeof(*v));
			if (!v) {
				free(hf->v);
				*hf = (struct hook_funcs){ .btf = btf };
				return;
			}
			hf->v = v;
		}
		hf->v[hf->n++] = (struct hook_func){ .name = name, .id = id };
	}
	if (hf->n)
		qsort(hf->v, hf->n, sizeof(*hf->v), hook_func_cmp);
}

static void hook_funcs_free(struct hook_funcs *hf)
{
	free(hf->v);
	hf->v = NULL;
	hf->n = 0;
}

/* The id of the BTF function name, or a negative errno: the first of
 * the sorted entries not below name (the lowest id of that name). */
static int hook_func_id(const struct hook_funcs *hf, const char *name)
{
	size_t lo = 0, hi = hf->n;

	if (!hf->v || strncmp(name, HOOK_PREFIX, strlen(HOOK_PREFIX)))
		return btf__find_by_name_kind(hf->btf, name, BTF_KIND_FUNC);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(hf->v[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < hf->n && !strcmp(hf->v[lo].name, name))
		return (int)hf->v[lo].id;
	return -ENOENT;
}

/*
 * Is bpf_lsm_<hook> in this kernel, shaped as row expects? Returns 0, or
 * -ENOENT (no such hook) or -EPROTO (another prototype) with why set.
 */
static int hook_fits(const struct hook_funcs *hf, const char *hook,
		     const struct lsm_hook *row, char *why, size_t len)
{
	const struct btf *btf = hf->btf;
	const struct btf_param *p;
	const struct btf_type *fn, *proto, *t;
	char name[128];
	__u32 id;
	int i = 0, fid;

	btf_func_of(hook, name, sizeof(name));
	fid = hook_func_id(hf, name);
	if (fid < 0) {
		snprintf(why, len, "this kernel has no LSM hook %s (no %s in its BTF)",
			 hook, name);
		return -ENOENT;
	}
	if (!row)
		return 0;
	fn = btf__type_by_id(btf, fid);
	proto = fn ? btf__type_by_id(btf, fn->type) : NULL;
	if (!proto || !btf_is_func_proto(proto))
		goto other;
	p = btf_params(proto);
	for (i = 0; i < LSM_MAX_ARGS && row->args[i]; i++) {
		if (i >= btf_vlen(proto))
			goto other;
		if (!row->args[i][0])
			continue;
		id = p[i].type;
		t = strip(btf, &id);
		if (!strcmp(row->args[i], LSM_ARG_SCALAR)) {
			if (!t || btf_is_ptr(t))
				goto other;
			continue;
		}
		if (!t || !btf_is_ptr(t))
			goto other;
		id = t->type;
		t = strip(btf, &id);
		if (!t || !(btf_is_struct(t) || btf_is_union(t)) ||
		    strcmp(btf__name_by_offset(btf, t->name_off), row->args[i]))
			goto other;
	}
	return 0;
other:
	snprintf(why, len, "this kernel's LSM hook %s has another prototype than stockade's program %s expects (argument %d: want %s%s%s)",
		 hook, row->prog, i + 1,
		 i < LSM_MAX_ARGS && row->args[i] && strcmp(row->args[i], LSM_ARG_SCALAR) ? "struct " : "",
		 i < LSM_MAX_ARGS && row->args[i] ?
		 (strcmp(row->args[i], LSM_ARG_SCALAR) ? row->args[i] : "a number") : "?",
		 i < LSM_MAX_ARGS && row->args[i] && strcmp(row->args[i], LSM_ARG_SCALAR) ? " *" : "");
	return -EPROTO;
}

/*
 * STOCKADE_TEST_HIDE_HOOKS=a,b: treat those hooks as missing from this
 * kernel, so the VM suite can prove the missing-hook path on kernels that
 * have every hook (tests/vm/lsm-probe.sh). It only takes programs away,
 * never adds one, and says so on stderr.
 */
static bool hidden(const char *hook)
{
	const char *list = getenv("STOCKADE_TEST_HIDE_HOOKS"), *p;
	size_t n = strlen(hook);

	for (p = list; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
		if (strcspn(p, ",") == n && !strncmp(p, hook, n)) {
			pr_warn("agent", "STOCKADE_TEST_HIDE_HOOKS: treating the LSM hook %s as missing (a test setting)",
				hook);
			return true;
		}
	}
	return false;
}

static const char *hook_of(const struct bpf_program *prog)
{
	const char *sec = bpf_program__section_name(prog);

	return sec && !strncmp(sec, "lsm/", 4) ? sec + 4 : sec;
}

/*
 * Does another LSM program of skel, for the same hook, fit this kernel?
 * A hook whose prototype changed between kernels gets one program per
 * prototype (each with its row); the one that does not fit is then no
 * loss. Judged by BTF alone, before any autoload is changed.
 */
static bool twin_fits(const struct hook_funcs *hf, struct stockade *skel,
		      const struct bpf_program *self, const char *hook)
{
	struct bpf_program *prog;
	char why[256];

	bpf_object__for_each_program(prog, skel->obj) {
		const char *h = hook_of(prog);

		if (prog == self || bpf_program__type(prog) != BPF_PROG_TYPE_LSM ||
		    !h || strcmp(h, hook))
			continue;
		if (!hook_fits(hf, hook, lsm__hook(bpf_program__name(prog)), why,
			       sizeof(why)))
			return true;
	}
	return false;
}

static size_t add_name(const char **out, size_t n, size_t max, const char *g)
{
	size_t i;

	for (i = 0; g && i < n && i < max; i++)
		if (!strcmp(out[i], g))
			return n;
	if (!g)
		return n;
	if (n < max)
		out[n] = g;
	return n + 1;
}

size_t lsm__lost(bool (*attached)(const char *prog, void *ctx), void *ctx,
		 const char **out, size_t max)
{
	const struct lsm_hook *row, *twin;
	struct btf *btf = btf__load_vmlinux_btf();
	char name[128];
	size_t i, k, n = 0;
	bool ok;

	for (i = 0; (row = lsm__row(i)); i++) {
		if (attached(row->prog, ctx))
			continue;
		btf_func_of(row->hook, name, sizeof(name));
		if (row->newer && btf && btf__find_by_name_kind(btf, name, BTF_KIND_FUNC) < 0)
			continue;	/* the older hook covers it */
		for (ok = false, k = 0; !ok && (twin = lsm__row(k)); k++)
			ok = twin != row && !strcmp(twin->hook, row->hook) &&
			     attached(twin->prog, ctx);
		if (ok)
			continue;
		n = add_name(out, n, max, row->guarantee);
		n = add_name(out, n, max, row->also);
	}
	btf__free(btf);
	return n;
}

bool lsm__is_ours(const struct bpf_program *prog)
{
	return bpf_program__type(prog) == BPF_PROG_TYPE_LSM || is_fentry(prog) ||
	       lsm__rides_along(bpf_program__name(prog));
}

/*
 * May file_open's decision cache (include/file.h) be on? Its read takes
 * no lock, which x86's memory order alone makes sound: the kernel's
 * machine, not only this binary's (an x86-64 agent may run emulated
 * elsewhere). And its entries hold only while every rename, link,
 * unlink of a linked file, chroot, pivot_root, mount, umount and mount
 * move ends them: an agent started --allow-degraded without one of
 * those hooks caches nothing.
 * Anywhere the answer is no, every open goes the whole way.
 */
static bool dcache_sound(struct stockade *skel)
{
	const struct bpf_program *bumps[] = {
		skel->progs.stk_path_rename, skel->progs.stk_path_link,
		skel->progs.stk_inode_unlink, skel->progs.stk_path_chroot,
		skel->progs.stk_sb_pivotroot, skel->progs.stk_sb_mount,
		skel->progs.stk_sb_umount, skel->progs.stk_move_mount,
	};
	struct utsname u;
	size_t i;

	if (uname(&u) || strcmp(u.machine, "x86_64"))
		return false;
	for (i = 0; i < sizeof(bumps) / sizeof(bumps[0]); i++)
		if (!bpf_program__autoload(bumps[i]))
			return false;
	return true;
}

/*
 * The majors of the raw storage character devices (include/file.h) that
 * /proc/devices lists now, into out[] (0 = none). Not there (no such
 * driver yet, or no /proc): none; sg's fixed major is in the programs.
 */
static void raw_chr_majors(volatile __u32 *out)
{
	static const char *const names[] = FILE_RAW_CHR_NAMES;
	char line[128], name[64];
	bool chr = false;
	unsigned int major;
	size_t i, n = 0;
	FILE *f = fopen("/proc/devices", "re");

	if (!f) {
		pr_warn("agent", "reading /proc/devices failed: %s; bsg and NVMe character devices are judged as files (sg's are refused)",
			strerror(errno));
		return;
	}
	while (n < FILE_RAW_CHR_MAJORS && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Character devices:", 18))
			chr = true;
		else if (!strncmp(line, "Block devices:", 14))
			chr = false;
		else if (chr && sscanf(line, "%u %63s", &major, name) == 2)
			for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
				if (!strcmp(name, names[i]))
					out[n++] = major;
	}
	fclose(f);
}

int lsm__set_autoload(struct lsm_state *ls, struct stockade *skel, bool on)
{
	struct hook_funcs hf = {};
	struct bpf_program *prog;
	struct btf *btf = NULL;
	bool lost = false;
	char why[256];
	int err = 0;

	if (on) {
		btf = btf__load_vmlinux_btf();
		if (!btf) {
			/* CO-RE needs it too: the load fails and says so. */
			pr_warn("agent", "reading the kernel's BTF failed (%s): BPF-LSM hooks are not probed",
				strerror(errno));
		} else {
			hook_funcs_init(&hf, btf);
		}
	}
	bpf_object__for_each_program(prog, skel->obj) {
		const char *hook = hook_of(prog);
		const struct lsm_hook *row;

		if (lsm__rides_along(bpf_program__name(prog))) {
			/* The setup pass's tracepoint (bpf/setup.bpf.c) serves
			 * the BPF-LSM programs only, and the exec records need
			 * their trampolines: loaded with them. */
			bpf_program__set_autoload(prog, on);
			continue;
		}
		if (bpf_program__type(prog) != BPF_PROG_TYPE_LSM && !is_fentry(prog))
			continue;
		if (!on || !btf || !hook) {
			bpf_program__set_autoload(prog, on);
			continue;
		}
		/* An unlisted program is still probed for its hook; its
		 * guarantee is then its hook's name (lsm__guarantee). */
		row = lsm__hook(bpf_program__name(prog));
		if (hidden(hook)) {
			snprintf(why, sizeof(why), "the LSM hook %s is hidden by STOCKADE_TEST_HIDE_HOOKS",
				 hook);
			err = -ENOENT;
		} else {
			err = hook_fits(&hf, hook, row, why, sizeof(why));
		}
		bpf_program__set_autoload(prog, !err);
		if (!err)
			continue;
		if (err == -ENOENT && row && row->newer) {
			/* Older kernels route the call through the old hook. */
			pr_debug("agent", "%s: %s not loaded; an older hook covers it",
				 why, bpf_program__name(prog));
			err = 0;
			continue;
		}
		if (err == -EPROTO && twin_fits(&hf, skel, prog, hook)) {
			pr_debug("agent", "%s: %s not loaded; its twin for this prototype is",
				 why, bpf_program__name(prog));
			err = 0;
			continue;
		}
		pr_warn("agent", "%s: %s not loaded", why, bpf_program__name(prog));
		if (!ls->allow_degraded) {
			pr_err("agent", "%s. Refusing to start: that loses '%s'. Run a kernel with this hook, or pass --allow-degraded to run without it",
			       why, lsm__guarantee(bpf_program__name(prog), hook));
			err = -EOPNOTSUPP;
			goto out;
		}
		lost = true;
		lose(ls, lsm__guarantee(bpf_program__name(prog), hook));
		if (row)
			lose(ls, row->also);
		err = 0;
	}
	skel->rodata->dcache_on = on && dcache_sound(skel);
	/* Only the cache reads the locks stk_ksyms finds. */
	bpf_program__set_autoload(skel->progs.stk_ksyms, skel->rodata->dcache_on);
	raw_chr_majors(skel->rodata->raw_chr_majors);
	if (lost)
		pr_warn("agent", "running DEGRADED (--allow-degraded): some BPF-LSM hooks are missing on this kernel");
out:
	hook_funcs_free(&hf);
	btf__free(btf);
	return err;
}

int lsm__find_locks(struct stockade *skel)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	const struct stockade__bss *b = skel->bss;
	int run;

	if (!bpf_program__autoload(skel->progs.stk_ksyms))
		return 0;
	/* Any failure leaves an address 0: nothing is cached, which is
	 * slower, never less safe. Addresses an earlier agent of this boot
	 * found, in the .bss pinned and reused, are as good as new. */
	run = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.stk_ksyms), &opts) ?
	      -errno : 0;

	if (b->rename_lock_addr && b->mount_lock_addr)
		return 0;
	if (run)
		pr_warn("agent", "running stk_ksyms failed (%s): file_open's decision cache stays off, and every open is judged the whole way. It needs a kernel that test-runs BPF_PROG_TYPE_SYSCALL programs (5.14 and later)",
			strerror(-run));
	else
		pr_warn("agent", "finding rename_lock and mount_lock in the kernel's symbol table failed (%s): file_open's decision cache stays off, and every open is judged the whole way. EPERM: the kernel hides addresses from the agent: give it CAP_SYSLOG and keep kernel.kptr_restrict below 2; ENOENT: the kernel was built without CONFIG_KALLSYMS_ALL",
			strerror(opts.retval ? -(int)opts.retval : ENOENT));
	return 0;
}

/*
 * Pin link at path. With replace, an older link is pinned there: pin the
 * new one beside it and rename it over the old pin, which swaps them in one
 * step, so that at no moment is neither pinned (a SIGKILL between two
 * steps leaves both, never none).
 */
static int link_pin(struct bpf_link *link, const char *path, bool replace)
{
	char tmp[PATH_MAX];
	int err;

	if (!replace)
		return bpf_link__pin(link, path);
	/* bpffs refuses '.' in names. */
	if (snprintf(tmp, sizeof(tmp), "%s-new", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	unlink(tmp);	/* left by an agent killed at this very step */
	err = bpf_link__pin(link, tmp);
	if (err)
		return err;
	if (rename(tmp, path)) {
		err = -errno;
		unlink(tmp);
	}
	return err;
}

/* Let go of our LSM links; unpin each that is_new marks (this agent
 * attached it: a failed attach), or every one with unpin_all. */
static void drop_links(struct lsm_state *ls, bool unpin_all, const bool *is_new)
{
	char path[PATH_MAX];
	size_t i;

	for (i = 0; i < ls->n_links; i++) {
		if ((unpin_all || (is_new && is_new[i])) &&
		    bpf_link__pin_path(ls->links[i])) {
			snprintf(path, sizeof(path), "%s",
				 bpf_link__pin_path(ls->links[i]));
			unlink(path);
		}
		bpf_link__destroy(ls->links[i]);
		ls->links[i] = NULL;
	}
	ls->n_links = 0;
}

void lsm__drop(struct lsm_state *ls, bool unpin)
{
	drop_links(ls, unpin, NULL);
}

/*
 * Attach the BPF-LSM programs, each once, system-wide; this is also the
 * proof that BPF-LSM works here. A pinned link of the same program is
 * adopted as it is. One of another build is replaced by a new link made
 * first: both programs judge for a moment, and neither is ever missing.
 */
int lsm__attach(struct lsm_state *ls, struct stockade *skel, const char *pin_dir)
{
	bool is_new[LSM_MAX_LINKS] = { false };
	char name[128], path[PATH_MAX];
	struct bpf_program *prog;
	struct bpf_link *old, *link;
	int err = 0;

	bpf_object__for_each_program(prog, skel->obj) {
		/* Not loaded: its hook is missing here (lsm__set_autoload). */
		if (!lsm__is_ours(prog) || !bpf_program__autoload(prog))
			continue;
		if (ls->n_links == LSM_MAX_LINKS) {
			err = -E2BIG;
			break;
		}
		snprintf(name, sizeof(name), "lsm-%s", bpf_program__name(prog));
		err = pin__link_path(path, sizeof(path), pin_dir, name);
		if (err)
			break;
		/* access() first: libbpf warns about any link it cannot open. */
		old = access(path, F_OK) ? NULL : bpf_link__open(path);
		if (!old && errno != ENOENT) {
			err = -errno;
			pr_err("pin", "opening the pinned link %s failed: %s", path,
			       strerror(errno));
			break;
		}
		if (old && pin__same_prog(old, prog)) {
			ls->links[ls->n_links++] = old;
			ls->adopted++;
			continue;
		}
		link = bpf_program__attach(prog);	/* lsm/ or tp_btf/ */
		if (!link) {
			err = -errno;
			bpf_link__destroy(old);	/* closes; its pin keeps it */
			break;
		}
		err = link_pin(link, path, old != NULL);
		if (err) {
			pr_err("pin", "pinning %s failed: %s", path, strerror(-err));
			bpf_link__destroy(link);
			bpf_link__destroy(old);
			break;
		}
		/* The old program's last reference: it stops judging now. */
		bpf_link__destroy(old);
		is_new[ls->n_links] = !old;
		ls->links[ls->n_links++] = link;
		if (old)
			ls->replaced++;
		else
			ls->attached++;
	}
	if (err)
		drop_links(ls, false, is_new);
	else if (ls->replaced)
		pr_info("agent", "BPF-LSM: %u programs of another build replaced (overlapping), %u adopted, %u attached",
			ls->replaced, ls->adopted, ls->attached);
	return err;
}
