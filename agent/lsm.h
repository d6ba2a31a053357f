/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The BPF-LSM room: which hook each LSM program judges, which guarantee
 * is lost without it, and loading/attaching them (agent/lsm.c).
 *
 * Kernels differ in their hooks: a hook is judged present when the
 * running kernel's BTF has the FUNC bpf_lsm_<hook>, and of the shape the
 * program was written for (lsm_hook.args). A program whose hook is
 * missing is not loaded; what that costs depends on the hook:
 *   - a hook newer kernels added in front of an old one (`newer`), e.g.
 *     file_truncate (6.2, ftruncate no longer reaches path_truncate): on
 *     a kernel without it the old hook still sees the call, nothing lost;
 *   - a hook whose prototype changed (inode_setattr gained a first
 *     argument after 6.1): one program per prototype, each with its row;
 *     the one that does not fit is not loaded, and nothing is lost while
 *     its twin (same hook) fits;
 *   - any other: its guarantee is named in agent_ready's `degraded`, and
 *     the agent starts only with --allow-degraded.
 */
#ifndef STOCKADE_AGENT_LSM_H
#define STOCKADE_AGENT_LSM_H

#include <stdbool.h>
#include <stddef.h>

#define LSM_MAX_ARGS	4
/* A row whose hook starts so is an fentry program on that kernel
 * function ("fentry/<func>", its section), not an LSM hook: probed by the
 * function's BTF, attached and pinned with the LSM programs. */
#define LSM_FENTRY	"fentry/"
#define LSM_ARG_SCALAR	"="

struct lsm_hook {
	const char *prog;	/* the BPF program's name, in bpf/ */
	const char *hook;	/* the LSM hook, "lsm/<hook>" */
	const char *guarantee;	/* named in `degraded` without it */
	const char *also;	/* a second guarantee it carries, or NULL */
	bool newer;		/* missing = the older hook covers it */
	/* The struct each leading argument points to, as the program reads
	 * it ("" = any pointer or scalar, not checked; LSM_ARG_SCALAR = not
	 * a pointer); a kernel whose prototype differs there has another
	 * hook under the same name. */
	const char *args[LSM_MAX_ARGS];
};

/* The table's i-th row, NULL past the end. */
const struct lsm_hook *lsm__row(size_t i);
/* The table's row for a program, or NULL if it is not listed. */
const struct lsm_hook *lsm__hook(const char *prog);
/* What a missing prog costs: its row's guarantee, else (a program added
 * without a row) its hook's name, so nothing is ever lost unnamed. */
const char *lsm__guarantee(const char *prog, const char *hook);
/* Every guarantee the table names, each once, in table order; returns
 * how many (at most max are stored). */
size_t lsm__guarantees(const char **out, size_t max);

struct stockade;
struct bpf_link;
struct bpf_program;

/* The BPF-LSM programs: at most this many links. */
#define LSM_MAX_LINKS		128
#define LSM_MAX_DEGRADED	32

/*
 * The room's state, embedded in the daemon: agent/lsm.c alone reads and
 * writes it; the daemon's other rooms ask the functions below.
 */
struct lsm_state {
	bool allow_degraded;		/* --allow-degraded */
	struct bpf_link *links[LSM_MAX_LINKS];
	size_t n_links;
	unsigned int adopted, replaced, attached;	/* by lsm__attach() */
	/* Guarantees this kernel cannot give, each named once. */
	const char *degraded[LSM_MAX_DEGRADED];
	size_t n_degraded;
};

void lsm__init(struct lsm_state *ls, bool allow_degraded);
/* Is `bpf` in the active LSM list? Mounts securityfs if nobody has.
 * why: the problem and its fix, or (true) the list. */
bool lsm__bpf_listed(char *why, size_t len);
/* The same question, changing nothing on the host (`agent --preflight`):
 * where securityfs is not mounted, it is read through a mount of this
 * process's own (a private mount namespace: the process must exit soon
 * after), and note says so. why: the finding, or the problem and its fix. */
bool lsm__bpf_listed_probe(char *why, size_t len, char *note, size_t note_len);
/* Autoload every LSM program (on), or none; with on, leave out those
 * whose hook this kernel lacks, naming their guarantees in ls->degraded
 * (set_lsm_autoload of old). Fails (-EOPNOTSUPP) when a guarantee is lost
 * without --allow-degraded. */
int lsm__set_autoload(struct lsm_state *ls, struct stockade *skel, bool on);
/* Is prog one of the set attached, and pinned as lsm-<name>, with
 * BPF-LSM: the LSM programs and the setup pass's tracepoint. */
bool lsm__is_ours(const struct bpf_program *prog);
/* The setup pass's tracepoint (bpf/setup.bpf.c), loaded with BPF-LSM. */
#define LSM_SETUP_PROG	"stk_setup_attach"
/* A tracing program loaded, attached and pinned with the LSM programs:
 * the setup pass's, and the exec records' (bpf/exec.bpf.c). */
bool lsm__rides_along(const char *prog);
/* Every LSM guarantee lost (no BPF-LSM at all): refuses without
 * --allow-degraded. */
int lsm__degrade(struct lsm_state *ls, const char *cause);
/* Attach skel's loaded LSM programs, each pinned as pin_dir/links/lsm-<name>
 * (an earlier agent's adopted, another build's replaced). On failure no
 * link is held, and the pins this call made are removed. */
int lsm__attach(struct lsm_state *ls, struct stockade *skel, const char *pin_dir);
/* After the load, before lsm__attach: run stk_ksyms, which stores the
 * addresses of the kernel's rename_lock and mount_lock in the .bss for
 * file_open's decision cache. Where it fails, the kernel lacks either, or
 * it hides addresses from the agent, an address stays 0 and the cache
 * off (a warning says so and names the fix); nothing to do when the
 * cache is off anyway. Returns 0. */
int lsm__find_locks(struct stockade *skel);
/* For `stockade status`: the guarantees lost, given which programs are
 * attached (attached(prog, ctx)): a row with no attached program is lost
 * unless it is `newer` and this kernel lacks its hook, or a twin for its
 * hook is attached. Returns how many (at most max stored). */
size_t lsm__lost(bool (*attached)(const char *prog, void *ctx), void *ctx,
		 const char **out, size_t max);
/* Let go of the links; with unpin, remove their pins too (enforcement
 * removed), else they stay pinned and judge on. */
void lsm__drop(struct lsm_state *ls, bool unpin);

/* The guarantees lost (*n of them), for agent_ready's `degraded`. */
const char *const *lsm__degraded(const struct lsm_state *ls, size_t *n);
/* How many LSM links this agent holds. */
size_t lsm__n_links(const struct lsm_state *ls);
/* Links lsm__attach() made where no link was pinned (neither adopted
 * nor replacing another build's). */
unsigned int lsm__n_attached(const struct lsm_state *ls);
/* Degraded with no LSM link: this agent runs without BPF-LSM at all. */
bool lsm__off(const struct lsm_state *ls);

#endif
