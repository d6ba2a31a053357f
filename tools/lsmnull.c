// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * lsmnull: what BPF itself costs a hook, with no stockade code in it.
 * Attaches, to each hook named, a program with no body (allow) and holds
 * the links until SIGTERM or SIGINT. The benchmarks time calls with these
 * attached, so that "stockade vs no agent" splits into what the
 * mechanism costs (the trampoline or the cgroup's program array, the
 * stats, the emulator) and what stockade's own code adds to it:
 *
 *   lsmnull HOOK...                 BPF-LSM hooks, e.g. file_open capable
 *                                   (tests/vm/bench-files.sh: an outsider's
 *                                   opens and setuid(0))
 *   lsmnull --cgroup DIR HOOK...    cgroup socket hooks on cgroup DIR:
 *                                   sock_create, connect4, connect6,
 *                                   sendmsg4, sendmsg6, bind4, bind6,
 *                                   egress (tests/bench/net.sh: the
 *                                   caller in DIR)
 *
 * Prints "ready" on stdout once every link is in place; each program is
 * named null_HOOK (cut to the kernel's 15 characters). Exit status: 0
 * after a signal, 1 when a hook cannot be found, loaded or attached (the
 * message says which), 2 on a usage error.
 *
 * Two instructions need no compiler: this is the kernel selftests' way for
 * a program this small, and it lets the hook be chosen at run time.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#define HOOKS_MAX 16

/* r0 = RET; exit */
#define NULL_PROG(ret) {						\
	{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = (ret) }, \
	{ .code = BPF_JMP | BPF_EXIT },					\
}

static int attach_null(const struct btf *vmlinux, const char *hook)
{
	const struct bpf_insn insns[] = NULL_PROG(0);	/* 0: allow */
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_LSM_MAC);
	char func[128], name[BPF_OBJ_NAME_LEN];
	int id, prog, link;

	snprintf(func, sizeof(func), "bpf_lsm_%s", hook);
	id = btf__find_by_name_kind(vmlinux, func, BTF_KIND_FUNC);
	if (id < 0) {
		fprintf(stderr, "lsmnull: %s: no such BPF-LSM hook in this kernel's BTF\n", hook);
		return -ENOENT;
	}
	opts.attach_btf_id = id;
	snprintf(name, sizeof(name), "null_%s", hook);
	prog = bpf_prog_load(BPF_PROG_TYPE_LSM, name, "GPL", insns, 2, &opts);
	if (prog < 0) {
		fprintf(stderr, "lsmnull: loading a program for %s: %s (needs root and CONFIG_BPF_LSM)\n",
			hook, strerror(-prog));
		return prog;
	}
	link = bpf_raw_tracepoint_open(NULL, prog);
	if (link < 0) {
		fprintf(stderr, "lsmnull: attaching to %s: %s (is bpf in the kernel's lsm= list?)\n",
			hook, strerror(-link));
		close(prog);
		return link;
	}
	/* The link holds the program. */
	close(prog);
	return link;
}

/* The cgroup socket hooks stockade attaches (agent/cgattach.c). */
static const struct {
	const char *name;
	enum bpf_prog_type type;
	enum bpf_attach_type attach;
} cg_hooks[] = {
	{ "sock_create", BPF_PROG_TYPE_CGROUP_SOCK, BPF_CGROUP_INET_SOCK_CREATE },
	{ "connect4", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_INET4_CONNECT },
	{ "connect6", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_INET6_CONNECT },
	{ "sendmsg4", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_UDP4_SENDMSG },
	{ "sendmsg6", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_UDP6_SENDMSG },
	{ "bind4", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_INET4_BIND },
	{ "bind6", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_INET6_BIND },
	{ "egress", BPF_PROG_TYPE_CGROUP_SKB, BPF_CGROUP_INET_EGRESS },
};

static int attach_cg_null(int cg, const char *dir, const char *hook)
{
	const struct bpf_insn insns[] = NULL_PROG(1);	/* 1: allow */
	LIBBPF_OPTS(bpf_prog_load_opts, opts);
	char name[BPF_OBJ_NAME_LEN];
	size_t i;
	int prog, link;

	for (i = 0; i < sizeof(cg_hooks) / sizeof(cg_hooks[0]); i++)
		if (!strcmp(cg_hooks[i].name, hook))
			break;
	if (i == sizeof(cg_hooks) / sizeof(cg_hooks[0])) {
		fprintf(stderr, "lsmnull: %s: not a cgroup socket hook (sock_create, connect4, connect6, sendmsg4, sendmsg6, bind4, bind6, egress)\n",
			hook);
		return -EINVAL;
	}
	snprintf(name, sizeof(name), "null_%s", hook);
	opts.expected_attach_type = cg_hooks[i].attach;
	prog = bpf_prog_load(cg_hooks[i].type, name, "GPL", insns, 2, &opts);
	if (prog < 0) {
		fprintf(stderr, "lsmnull: loading a program for %s: %s (needs root)\n",
			hook, strerror(-prog));
		return prog;
	}
	link = bpf_link_create(prog, cg, cg_hooks[i].attach, NULL);
	if (link < 0)
		fprintf(stderr, "lsmnull: attaching %s to %s: %s (is it a cgroup v2 directory?)\n",
			hook, dir, strerror(-link));
	/* The link holds the program. */
	close(prog);
	return link;
}

int main(int argc, char **argv)
{
	struct btf *vmlinux = NULL;
	const char *dir = NULL;
	int i = 1, sig, cg = -1;
	sigset_t set;

	if (argc > 2 && !strcmp(argv[1], "--cgroup")) {
		dir = argv[2];
		i = 3;
	}
	if (argc - i < 1 || argc - i > HOOKS_MAX || argv[i][0] == '-') {
		fprintf(stderr, "usage: lsmnull HOOK... | lsmnull --cgroup DIR HOOK... (at most %d; e.g. file_open capable)\n",
			HOOKS_MAX);
		return 2;
	}
	/* Blocked before any link exists, so no signal is lost. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (dir) {
		cg = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cg < 0) {
			fprintf(stderr, "lsmnull: opening the cgroup %s: %s\n", dir, strerror(errno));
			return 1;
		}
	} else {
		vmlinux = btf__load_vmlinux_btf();
		if (!vmlinux) {
			fprintf(stderr, "lsmnull: reading the kernel's BTF: %s (needs /sys/kernel/btf/vmlinux)\n",
				strerror(errno));
			return 1;
		}
	}
	for (; i < argc; i++)
		if ((dir ? attach_cg_null(cg, dir, argv[i]) : attach_null(vmlinux, argv[i])) < 0)
			break;	/* the links made so far go with the process */
	/* Freed before the timing starts: the kernel's BTF parsed is
	 * megabytes of the guest's memory. */
	btf__free(vmlinux);
	if (cg >= 0)
		close(cg);
	if (i < argc)
		return 1;
	printf("ready\n");
	fflush(stdout);
	sigwait(&set, &sig);
	return 0;
}
