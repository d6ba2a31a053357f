// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* stockade: command-line entry (getopt_long). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "cgroup.h"
#include "ctl.h"
#include "events.h"
#include "limits_agent.h"
#include "log.h"
#include "file_rules.h"
#include "net_rules.h"
#include "oci_hook.h"
#include "pin.h"
#include "policy.h"
#include "register.h"
#include "rules_check.h"
#include "watch_server.h"

#define STOCKADE_VERSION "0.1.0"

static void usage(FILE *f)
{
	fprintf(f,
"usage: stockade <command> [options]\n"
"\n"
"commands:\n"
"  agent [options] [POLICY...]   confine the selected cgroups and log denials\n"
"  check [--strict] FILE|DIR...  validate policies; load nothing (--strict:\n"
"                                shared write paths are errors)\n"
"  status [--json]               what the pins confine, agent running or not,\n"
"                                and what each sandbox used (limits, counters)\n"
"  detach --all|POLICY|CGROUP    remove enforcement (and limits) on purpose\n"
"  reload                        make the agent reload its policy files (also\n"
"                                SIGHUP, and on any change to them)\n"
"  reopen-logs                   make the agent reopen its --log FILE after a\n"
"                                rotation (also SIGUSR1)\n"
"  manifest [CGROUP|POLICY...]   the configuration in force, judged against the\n"
"                                five verification points (--format json|md,\n"
"                                --out FILE, --boundary FILE); exit 0 all pass,\n"
"                                3 one fails, 1 an error\n"
"  probe CGROUP|POLICY --log FILE  the live escape test: attempts from fresh\n"
"                                processes in a probe cgroup of the policy, in\n"
"                                the workload's namespaces (--format text|json,\n"
"                                --timeout S); exit 0 all refused and recorded,\n"
"                                3 one not, 1 an error\n"
"  register check REGISTER --log FILE [--since T] [--until T]\n"
"                                the log's exec and attach records against the\n"
"                                code register; exit 0 pass, 3 fail, 1 an error\n"
"  report --out DIR [--probe CGROUP...] [--register FILE] [--log FILE]\n"
"                                the three pieces of evidence in one bundle\n"
"                                (JSON, Markdown, OSCAL, SHA256SUMS); --verify DIR\n"
"  watch [--policy GLOB] [--kind KIND] [--event deny,...] [--since N] [-o compact|json]\n"
"                                the running agent's records, live, filtered in\n"
"                                the agent (--summary: a table; `watch --help`)\n"
"  oci-hook [--dir DIR] [--remove]  an OCI hook (createRuntime/prestart; --remove\n"
"                                in poststop): the state on stdin, the container's\n"
"                                names in DIR/<id>.json (default /run/stockade/containers)\n"
"\n"
"agent options:\n"
"  -p, --policy FILE|DIR   policy file or directory (repeatable)\n"
"      --cgroup-root DIR   cgroup2 mount (default: detected)\n"
"      --bpffs DIR         pin directory on bpffs (default /sys/fs/bpf/stockade)\n"
"      --log FILE          also append the JSON records to FILE\n"
"      --ring-size BYTES   ring buffer size, a power of two >= 4096 (default 4 MiB)\n"
"      --allow-degraded    run without BPF-LSM (network rules only), listing\n"
"                          every lost guarantee\n"
"      --metrics FILE      write Prometheus text to FILE every second (atomic replace)\n"
"      --metrics-listen ADDR:PORT  serve the same text at GET /metrics over HTTP\n"
"                          (127.0.0.1:9464, [::1]:9464; no TLS, no authentication)\n"
"      --metrics-allow-remote  let --metrics-listen take a non-loopback address\n"
"      --metrics-container-labels  container and pod labels on each sandbox's\n"
"                          samples (a series per container; off by default)\n"
"      --state FILE        where `stockade status` finds the run-time clocks\n"
"                          (default " LIMITS_STATE_DEFAULT ")\n"
"      --containers-dir DIR  where `stockade oci-hook` writes container names\n"
"                          (default /run/stockade/containers)\n"
"      --events-socket PATH  serve the records live to `stockade watch` (default\n"
"                          " WATCH_SOCKET_DEFAULT "; none: no socket)\n"
"      --detach-on-exit    on SIGTERM/SIGINT remove all enforcement, limits and\n"
"                          pins (default: keep them; the sandboxes stay confined)\n"
"      --preflight         check the host (BPF LSM active, BTF, cgroup2, bpffs at\n"
"                          --bpffs's parent, privilege) and exit: one line each,\n"
"                          0 all present, 1 one missing; loads nothing\n"
"  -v, --verbose           debug output, libbpf's included\n"
"  -h, --help, --version\n"
"\n"
"status and detach options:\n"
"      --bpffs DIR         pin directory (default /sys/fs/bpf/stockade)\n"
"      --cgroup-root DIR   cgroup2 mount (default: detected)\n"
"      --log FILE          detach: also append its records to FILE\n"
"      --state FILE        status: the agent's state file (run-time clocks)\n"
"      --require-agent     status: only whether an agent holds the pins; exit 0\n"
"                          yes, 3 no (a liveness probe)\n");
}

/* Valid, but worth a second look: say so on stderr, without failing. */
static void check_warnings(const struct policy *p)
{
	uint32_t risky = p->net.netlink & POLICY_NETLINK_RISKY;
	size_t i, unnamed = 0, first = 0;
	unsigned int n;

	/* An exception without a reason is valid, but an assessor's point 2
	 * (named exceptions) fails on it: say so once per policy, at the
	 * first such rule. */
	for (i = p->net.n_allow; i-- > 0;)
		if (!p->net.allow[i].reason) {
			unnamed++;
			first = i;
		}
	if (unnamed)
		fprintf(stderr,
			"%s:%d:%d: network.allow[%zu]: note: %zu of %zu rules have no reason; `stockade manifest` fails point 2 (egress with named exceptions) until each says why (reason:)\n",
			p->file, p->net.allow[first].pos.line, p->net.allow[first].pos.col,
			first, unnamed, p->net.n_allow);

	for (n = 0; risky && n < POLICY_NETLINK_MAX; n++)
		if (risky & (1u << n))
			fprintf(stderr,
				"%s:%d:%d: network.netlink: warning: '%s' lets the sandbox send every message of the family, writes included (%s); list it only for a task that must change the host's network or audit state\n",
				p->file, p->net.netlink_pos.line, p->net.netlink_pos.col,
				policy_netlink_name(n),
				n == 0 ? "addresses, routes, links, rules" :
				n == 6 ? "IPsec policies and states" :
				n == 9 ? "the audit rules and daemon" :
				"nftables rules, NAT included");
}

/*
 * A listed capability that reaches the host or the kernel is allowed (the
 * policy's author may need it) but named, one line each, where it was
 * written. Only a list can hold one: the default set has none.
 */
static void warn_caps(const struct policy *p)
{
	unsigned int cap;

	if (!p->caps.has)
		return;
	for (cap = 0; cap <= POLICY_CAP_LAST; cap++)
		if (p->caps.mask & policy_caps_dangerous & POLICY_CAP_BIT(cap))
			fprintf(stderr, "%s:%d:%d: capabilities: warning: CAP_%s reaches beyond the sandbox (host or kernel); list it only if the workload needs it\n",
				p->file, p->caps.pos[cap].line, p->caps.pos[cap].col,
				policy_cap_name(cap));
}

/*
 * What may execute under p, one line on stdout (README, "Execution"); a
 * policy that lets written files run says so on stderr as a warning.
 */
static void print_exec(const struct policy *p)
{
	size_t i;

	if (p->exec.allow_written)
		fprintf(stderr, "%s:%d:%d: exec.allow_written: warning: the sandbox may run programs it wrote itself (no W^X for files); a process that is taken over can then download and run any code\n",
			p->file, p->exec.allow_written_pos.line,
			p->exec.allow_written_pos.col);
	printf("%s: policy %s may execute from: ", p->file, p->name);
	if (!p->exec.has_paths)
		printf("the read scope");
	else if (!p->exec.n_paths)
		printf("nowhere");
	for (i = 0; p->exec.has_paths && i < p->exec.n_paths; i++)
		printf("%s%s", i ? ", " : "", p->exec.paths[i].path);
	printf("%s%s%s\n",
	       p->exec.allow_written ? ", files the sandbox can write included (allow_written)" :
	       ", minus the write scope",
	       p->exec.anon_deny ? "; anonymous memory may not become executable (anon_exec: deny)" : "",
	       p->exec.hash_sha256 ? "; exec records carry the program's SHA-256 (hash: sha256)" : "");
}

/* The code registers among check's FILEs (policy/register.h), validated
 * and taken out of argv: -EINVAL when one is invalid (said), else 0. */
static int split_registers(int *argc, char **argv)
{
	char why[POLICY_DIAG_MAX], *buf;
	int i, n = 0, bad = 0;
	size_t len, k;

	for (i = 0; i < *argc; i++) {
		struct policy_diag diag = { 0 };
		struct code_register *r = NULL;

		/* A directory, or unreadable: the policy set's (it says why). */
		if (policy__read_file(argv[i], &buf, &len, why, sizeof(why))) {
			argv[n++] = argv[i];
			continue;
		}
		if (!register__sniff(buf, len)) {
			free(buf);
			argv[n++] = argv[i];
			continue;
		}
		if (register__parse(argv[i], buf, len, &r, &diag))
			bad = -EINVAL;
		for (k = 0; k < diag.n; k++)
			fprintf(stderr, "%s\n", diag.msgs[k]);
		if (r)
			printf("%s: register ok: %zu categor%s\n", argv[i], r->n, r->n == 1 ? "y" : "ies");
		register__free(r);
		policy_diag__free(&diag);
		free(buf);
	}
	*argc = n;
	return bad;
}

/* stockade check [--cgroup-root DIR] FILE|DIR...: the checks of a start
 * and a reload, in their order. The limits check needs the cgroup tree
 * the agent will run on, so it runs only when --cgroup-root names it:
 * a policy is often checked on another machine (CI) than its node. */
static int cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cgroup-root", required_argument, NULL, 'c' },
		{ "strict", no_argument, NULL, 's' },
		{ 0 }
	};
	struct policy_diag shares = { 0 };
	bool strict = false;
	struct policy_diag diag = { 0 };
	struct policy_set set = { 0 };
	const char *cgroot = NULL;
	char root[4096];
	size_t i;
	int err, o, reg_err;

	optind = 0;	/* argv[0] is the first FILE: getopt skips it */
	while ((o = getopt_long(argc + 1, argv - 1, "+", opts, NULL)) != -1) {
		if (o == 's') {
			strict = true;
			continue;
		}
		if (o != 'c')
			return 2;
		cgroot = optarg;
	}
	argc -= optind - 1;
	argv += optind - 1;
	if (argc < 1) {
		fprintf(stderr, "stockade check: name at least one policy FILE or DIR\n");
		return 2;
	}
	if (cgroot) {
		/* It says what is wrong with cgroot. */
		if (cgroup_root__find(cgroot, root, sizeof(root)))
			return 2;
	}
	/* Registers (a top-level `entries:` key) are checked on their own;
	 * the rest is one policy set. */
	reg_err = split_registers(&argc, argv);
	if (!argc) {
		if (reg_err)
			fprintf(stderr, "stockade check: invalid; nothing would be applied\n");
		return reg_err ? 1 : 0;
	}
	err = policy_set__load((const char *const *)argv, (size_t)argc, &set, &diag);
	/* Compiling catches what only the kernel layout limits (port ranges
	 * per address): the reload's own check, so that check and agent
	 * agree, every problem listed. */
	if (!err)
		err = rules__check_set(&set, &diag);
	if (!err && cgroot)
		err = limits__check_set(root, &set, &diag);
	/* Shared write paths: a warning, an error with --strict. */
	if (!err && rules__write_shares(&set, strict, &shares) && strict)
		err = -EINVAL;
	for (i = 0; i < diag.n; i++)
		fprintf(stderr, "%s\n", diag.msgs[i]);
	for (i = 0; i < shares.n; i++)
		fprintf(stderr, "%s\n", shares.msgs[i]);
	policy_diag__free(&shares);
	if (!err)
		for (i = 0; i < set.n; i++) {
			check_warnings(set.v[i]);
			warn_caps(set.v[i]);
			printf("%s: policy %s ok\n", set.v[i]->file, set.v[i]->name);
			print_exec(set.v[i]);
		}
	policy_diag__free(&diag);
	policy_set__free(&set);
	if (err || reg_err)
		fprintf(stderr, "stockade check: invalid; nothing would be applied\n");
	return err || reg_err ? 1 : 0;
}

static int parse_size(const char *s, unsigned int *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -EINVAL;
	if (*end == 'K' || *end == 'k')
		v <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		v <<= 20, end++;
	if (*end || v < 4096 || v > (1ULL << 30) || (v & (v - 1)))
		return -EINVAL;
	*out = (unsigned int)v;
	return 0;
}

static int cmd_agent(int argc, char **argv)
{
	enum { OPT_CGROOT = 256, OPT_BPFFS, OPT_LOG, OPT_RING, OPT_DEGRADED,
	       OPT_METRICS, OPT_STATE, OPT_DETACH_EXIT, OPT_CONTAINERS_DIR,
	       OPT_METRICS_LISTEN, OPT_METRICS_REMOTE, OPT_METRICS_LABELS, OPT_PREFLIGHT,
	       OPT_EVENTS_SOCKET };
	static const struct option opts[] = {
		{ "policy", required_argument, NULL, 'p' },
		{ "cgroup-root", required_argument, NULL, OPT_CGROOT },
		{ "bpffs", required_argument, NULL, OPT_BPFFS },
		{ "log", required_argument, NULL, OPT_LOG },
		{ "ring-size", required_argument, NULL, OPT_RING },
		{ "allow-degraded", no_argument, NULL, OPT_DEGRADED },
		{ "metrics", required_argument, NULL, OPT_METRICS },
		{ "metrics-listen", required_argument, NULL, OPT_METRICS_LISTEN },
		{ "metrics-allow-remote", no_argument, NULL, OPT_METRICS_REMOTE },
		{ "metrics-container-labels", no_argument, NULL, OPT_METRICS_LABELS },
		{ "state", required_argument, NULL, OPT_STATE },
		{ "containers-dir", required_argument, NULL, OPT_CONTAINERS_DIR },
		{ "detach-on-exit", no_argument, NULL, OPT_DETACH_EXIT },
		{ "preflight", no_argument, NULL, OPT_PREFLIGHT },
		{ "events-socket", required_argument, NULL, OPT_EVENTS_SOCKET },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct agent_opts o = { .bpffs = PIN_DIR_DEFAULT };
	const char **paths;
	bool preflight = false;
	int c, err;

	paths = calloc((size_t)argc + 1, sizeof(*paths));
	if (!paths)
		return 1;
	o.policy_paths = paths;
	optind = 1;
	while ((c = getopt_long(argc, argv, "p:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			paths[o.n_policy_paths++] = optarg;
			break;
		case OPT_CGROOT:
			o.cgroup_root = optarg;
			break;
		case OPT_BPFFS:
			o.bpffs = optarg;
			break;
		case OPT_LOG:
			o.log_path = optarg;
			break;
		case OPT_RING:
			if (parse_size(optarg, &o.ring_size)) {
				fprintf(stderr, "stockade agent: --ring-size %s: expected a power of two from 4096 to 1G (K/M suffixes allowed)\n",
					optarg);
				free(paths);
				return 2;
			}
			break;
		case OPT_DEGRADED:
			o.allow_degraded = true;
			break;
		case OPT_METRICS:
			o.metrics_path = optarg;
			break;
		case OPT_CONTAINERS_DIR:
			o.containers_dir = optarg;
			break;
		case OPT_METRICS_LISTEN:
			o.metrics_listen = optarg;
			break;
		case OPT_METRICS_REMOTE:
			o.metrics_allow_remote = true;
			break;
		case OPT_METRICS_LABELS:
			o.metrics_container_labels = true;
			break;
		case OPT_STATE:
			o.state_path = optarg;
			break;
		case OPT_DETACH_EXIT:
			o.detach_on_exit = true;
			break;
		case OPT_PREFLIGHT:
			preflight = true;
			break;
		case OPT_EVENTS_SOCKET:
			o.events_socket = optarg;
			break;
		case 'v':
			log_verbosity = LOG_DEBUG;
			break;
		case 'h':
			usage(stdout);
			free(paths);
			return 0;
		default:
			usage(stderr);
			free(paths);
			return 2;
		}
	}
	while (optind < argc)
		paths[o.n_policy_paths++] = argv[optind++];
	if (preflight) {
		/* The host's side only: policies are `stockade check`'s. */
		err = agent__preflight(&o);
		free(paths);
		return err;
	}
	if (!o.n_policy_paths) {
		fprintf(stderr, "stockade agent: no policy given; pass --policy FILE|DIR\n");
		free(paths);
		return 2;
	}
	err = agent__run(&o);
	free(paths);
	return err ? 1 : 0;
}

/*
 * fds 0 to 2 open before anything else is: an agent started with stdout
 * closed (`>&-`, a careless unit) would find the next file it opens there
 * (--log, an inotify fd) and write every record into it as stdout too.
 * /dev/null stands in for a closed one, as a service manager's does.
 */
static void std_fds_open(void)
{
	int fd;

	for (fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF &&
		    open("/dev/null", O_RDWR) < 0) {
			fprintf(stderr, "stockade: fd %d is closed and /dev/null cannot be opened in its place: %s; start stockade with fds 0 to 2 open\n",
				fd, strerror(errno));
			return;
		}
}

int main(int argc, char **argv)
{
	std_fds_open();
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "agent")) {
		/* Before anything: a SIGHUP must never kill a starting agent. */
		agent__signals_init();
		return cmd_agent(argc - 1, argv + 1);
	}
	if (!strcmp(argv[1], "check"))
		return cmd_check(argc - 2, argv + 2);
	if (!strcmp(argv[1], "status"))
		return ctl__status(argc - 1, argv + 1);
	if (!strcmp(argv[1], "detach"))
		return ctl__detach(argc - 1, argv + 1);
	if (!strcmp(argv[1], "reload"))
		return ctl__reload(argc - 1, argv + 1);
	if (!strcmp(argv[1], "reopen-logs"))
		return ctl__reopen_logs(argc - 1, argv + 1);
	if (!strcmp(argv[1], "manifest"))
		return ctl__manifest(argc - 1, argv + 1);
	if (!strcmp(argv[1], "probe"))
		return ctl__probe(argc - 1, argv + 1);
	if (!strcmp(argv[1], "register"))
		return ctl__register(argc - 1, argv + 1);
	if (!strcmp(argv[1], "report"))
		return ctl__report(argc - 1, argv + 1);
	if (!strcmp(argv[1], "watch"))
		return ctl__watch(argc - 1, argv + 1);
	if (!strcmp(argv[1], "oci-hook"))
		return oci_hook__main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("stockade %s\n", STOCKADE_VERSION);
		return 0;
	}
	fprintf(stderr, "stockade: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
