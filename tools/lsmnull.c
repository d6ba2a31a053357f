// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * lsmnull: what BPF-LSM itself costs a hook, with no stockade code in it.
 * Attaches, to each hook named, a program with no body (return 0: allow)
 * and holds the links until SIGTERM or SIGINT. The file benchmark
 * (tests/vm/bench-files.sh) times an outsider's opens and setuid(0) with
 * these attached, so that "outside / no agent" splits into what the
 * mechanism costs (the trampoline, the stats, the emulator) and what
 * stockade's own outsider path adds to it.
 *
 *   lsmnull HOOK...     e.g. lsmnull file_open capable
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
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#define HOOKS_MAX 16

static int attach_null(const struct btf *vmlinux, const char *hook)
{
	/* r0 = 0; exit */
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
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

int main(int argc, char **argv)
{
	struct btf *vmlinux;
	sigset_t set;
	int i, sig;

	if (argc < 2 || argc - 1 > HOOKS_MAX || argv[1][0] == '-') {
		fprintf(stderr, "usage: lsmnull HOOK... (at most %d; e.g. file_open capable)\n",
			HOOKS_MAX);
		return 2;
	}
	/* Blocked before any link exists, so no signal is lost. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux) {
		fprintf(stderr, "lsmnull: reading the kernel's BTF: %s (needs /sys/kernel/btf/vmlinux)\n",
			strerror(errno));
		return 1;
	}
	for (i = 1; i < argc; i++)
		if (attach_null(vmlinux, argv[i]) < 0)
			break;	/* the links made so far go with the process */
	/* Freed before the timing starts: the kernel's BTF parsed is
	 * megabytes of the guest's memory. */
	btf__free(vmlinux);
	if (i < argc)
		return 1;
	printf("ready\n");
	fflush(stdout);
	sigwait(&set, &sig);
	return 0;
}
