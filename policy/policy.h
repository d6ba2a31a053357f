/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Policy model, YAML loader (libyaml) and validation.
 *
 * Loading never applies anything: it turns files into `struct policy`
 * values, or into diagnostics of the form
 *     FILE:LINE:COLUMN: KEY: what was expected
 * (LINE and COLUMN 1-based, pointing at the offending node). A set of
 * policies is only usable when every file in it loaded without error.
 */
#ifndef STOCKADE_POLICY_H
#define STOCKADE_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define POLICY_NAME_MAX		63
#define POLICY_MAX_SELECTORS	256
#define POLICY_MAX_NET_RULES	65536
#define POLICY_MAX_PORTS	16	/* entries of one rule's `ports:` */
#define POLICY_DIAG_MAX		512	/* bytes of one diagnostic */
#define POLICY_MAX_OVERRIDES	64	/* entries of `network.overrides:` */
#define POLICY_FILE_MAX		(1 << 20)	/* bytes of one policy file */
#define POLICY_MAX_FILE_PATHS	4096	/* entries of files.read, .write, .deny each */
#define POLICY_MAX_FILE_OVERRIDES 64	/* entries of `files.overrides:` */
#define POLICY_MAX_UNIX_ALLOW	1024	/* entries of `network.unix_allow:` */
#define POLICY_MAX_EXEC_PATHS	4096	/* entries of `exec.paths:` */

enum policy_mode { POLICY_ENFORCE = 0, POLICY_AUDIT = 1 };

struct policy_pos {
	int line;	/* 1-based */
	int col;	/* 1-based */
};

struct policy_ports {
	uint16_t lo, hi;	/* inclusive, host order */
};

/* An address range; IPv4 lives in addr[0..3]. Always normalised: an IPv6
 * CIDR inside a form that carries IPv4 (include/netaddr.h) is stored as
 * the IPv4 CIDR it denotes. Host bits below the prefix are zero. */
struct policy_cidr {
	uint8_t family;		/* 4 or 6 (enum net_family) */
	uint8_t prefix;		/* 0..32 or 0..128 */
	uint8_t addr[16];
};

struct policy_net_rule {
	struct policy_cidr cidr;
	uint8_t proto;			/* enum net_proto */
	size_t n_ports;			/* 0 = every port */
	struct policy_ports ports[POLICY_MAX_PORTS];
	/* Why this exception exists (optional `reason:`): `stockade
	 * manifest` names each allowed destination by it. NULL: none. */
	char *reason;
	struct policy_pos pos;
};

struct policy_net_override {
	/* One built-in endpoint, or a CIDR inside one (169.254.169.254/32
	 * opens only that address of 169.254.0.0/16). */
	struct policy_cidr endpoint;
	char *reason;
	struct policy_pos pos;
};

/* A path as written in the policy: absolute, normalised, <= FILE_PREFIX_MAX
 * bytes (include/file.h). For unix_allow also "@name" (abstract socket). */
struct policy_path {
	char *path;
	struct policy_pos pos;
};

struct policy_file_override {
	char *path;	/* a built-in protected path, or a path inside one */
	char *reason;
	struct policy_pos pos;
};

/* limits: every value validated > 0; has_* says the key was given. */
struct policy_limits {
	bool has_cpu, has_memory, has_memory_swap, has_pids, has_runtime;
	uint32_t cpu_milli;		/* 1.5 -> 1500, 500m -> 500 */
	uint64_t memory;		/* bytes */
	uint64_t memory_swap;		/* bytes; 0 allowed (no swap) */
	uint64_t pids;
	uint64_t runtime_ms;
	struct policy_pos cpu_pos, memory_pos, memory_swap_pos, pids_pos,
			  runtime_pos;
};

/*
 * One container selector (`containers:`, `pods:` or `images:` item): every
 * field set must match; NULL (or runtime 0) is "any". Globs are fnmatch(3)
 * patterns; pod is "namespace/name", its '/' matched only by a '/'.
 */
struct policy_container {
	int runtime;		/* enum container_runtime (policy/container.h) */
	char *name, *id, *image, *pod, *pod_uid;
	char *ns;		/* containerd namespace: selects /<ns>/<id> too */
	const char *key;	/* "containers", "pods" or "images" */
	size_t idx;		/* its index there */
	struct policy_pos pos;
};

struct policy {
	char *file;			/* as given to the loader */
	uint64_t hash;			/* FNV-1a 64 of the file's bytes */
	char *name;
	char *category;
	enum policy_mode mode;
	struct policy_pos pos;		/* of the document */
	struct policy_pos name_pos;	/* of the name's value */

	char **cgroups;			/* selectors, each starting with '/' */
	struct policy_pos *cgroups_pos;
	size_t n_cgroups;
	/* cgroups[0..n_cgroups_user) are the `cgroups:` the file lists; the
	 * rest are the path forms its container selectors can select
	 * (policy/container.c, policy__container_globs), which select a
	 * cgroup only where one of ctrs[] matches its container. Everything
	 * that reads the selectors as globs (watched directories, the setup
	 * pass, the manifest) thus sees the runtimes' directories. */
	size_t n_cgroups_user;
	struct policy_container *ctrs;	/* containers:, pods:, images: */
	size_t n_ctrs;

	struct {
		bool default_allow;
		bool raw_sockets;
		bool icmp;
		struct policy_net_rule *allow;
		size_t n_allow;
		struct policy_net_override *overrides;
		size_t n_overrides;
		struct policy_path *unix_allow;	/* "/run/x.sock" or "@name" */
		size_t n_unix_allow;
		/* network.listen: judged against the local address and port
		 * of bind() and listen(); none means no server at all. */
		struct policy_net_rule *listen;
		size_t n_listen;
		/* network.netlink: bit n allows every message of netlink
		 * protocol n; without it only NETLINK_ROUTE reads pass. */
		uint32_t netlink;
		struct policy_pos netlink_pos;
	} net;

	struct {
		bool has_read;		/* key absent: reads allowed everywhere */
		struct policy_path *read;
		size_t n_read;
		bool has_write;		/* key absent: no writes anywhere */
		struct policy_path *write;
		size_t n_write;
		struct policy_path *deny;
		size_t n_deny;
		struct policy_file_override *overrides;
		size_t n_overrides;
		/* files.preexisting: what the agent does about an fd a
		 * process held from before its confinement that the policy
		 * refuses (agent/preexist.c): report it, or also kill the
		 * holder. */
		enum policy_preexisting { POLICY_PREEXISTING_REPORT = 0,
					  POLICY_PREEXISTING_KILL } preexisting;
	} files;

	/* exec: where programs may be executed or mapped PROT_EXEC from
	 * (README, "Execution"). has false (key absent): the read scope
	 * minus the write scope. has_paths false with has true: the
	 * mapping form without `paths`, the same default scope. */
	struct {
		bool has;
		bool has_paths;
		struct policy_path *paths;
		size_t n_paths;
		bool allow_written;	/* drop the write-scope subtraction */
		bool anon_deny;		/* anon_exec: deny (JIT memory refused) */
		bool hash_sha256;	/* hash: sha256 (exec records carry it) */
		struct policy_pos pos, allow_written_pos;
	} exec;

	struct {
		bool user;		/* may create user namespaces; default false */
	} namespaces;

	/* capabilities: bit N = CAP_* number N. Key absent: has false and
	 * policy_caps() gives the default set. pos[N]: where N was listed. */
	struct {
		bool has;
		uint64_t mask;
		struct policy_pos pos[64];
	} caps;
	bool perf_allow;		/* perf: allow; default deny */
	bool userfaultfd;		/* userfaultfd: true; default false */

	/* setup: a container runtime's own setup in a new cgroup (README,
	 * "Zero window"). pass: auto (for cgroups a selector with a
	 * wildcard picks), on, off; deadline in milliseconds. */
	struct {
		enum policy_setup_pass { POLICY_SETUP_AUTO = 0, POLICY_SETUP_ON,
					 POLICY_SETUP_OFF } pass;
		uint32_t deadline_ms;	/* 0: POLICY_SETUP_DEADLINE_MS */
	} setup;

	struct policy_limits limits;
};

/* The setup pass's deadline when setup.deadline is not given. */
#define POLICY_SETUP_DEADLINE_MS	10000
#define POLICY_SETUP_DEADLINE_MAX_MS	300000	/* 5m */

struct policy_set {
	struct policy **v;
	size_t n;
};

/* Diagnostics collected while loading; each is one line, no newline. */
struct policy_diag {
	char **msgs;
	size_t n;
};

/* The built-in cloud metadata and credential endpoints (policy/builtin.c). */
struct policy_endpoint {
	const char *text;		/* as documented, e.g. "169.254.0.0/16" */
	struct policy_cidr cidr;
};
extern const struct policy_endpoint policy_meta_endpoints[];
extern const size_t policy_n_meta_endpoints;

/*
 * Built-in protected paths (policy/builtin.c): always denied to a sandbox
 * unless the policy overrides them. policy_protected_paths are absolute;
 * policy_protected_home are relative to every home directory (/root and
 * each home the agent finds), e.g. ".ssh".
 */
extern const char *const policy_protected_paths[];
extern const size_t policy_n_protected_paths;
extern const char *const policy_protected_home[];
extern const size_t policy_n_protected_home;

/*
 * Parse one YAML document held in memory; `file` names it in diagnostics.
 * Returns 0 and sets *out, or -EINVAL with at least one diagnostic added to
 * diag (or -ENOMEM). Validation of a single policy happens here.
 */
int policy__parse(const char *file, const char *buf, size_t len,
		  struct policy **out, struct policy_diag *diag);

/*
 * Load FILE or DIR (every *.yaml / *.yml directly inside it, in name order)
 * for each path, then check the set as a whole: unique names, no cgroup
 * selector claimed twice. Returns 0, or a negative errno with every
 * problem found added to diag; on error *set is left empty.
 */
int policy_set__load(const char *const *paths, size_t n_paths,
		     struct policy_set *set, struct policy_diag *diag);

/*
 * Append one diagnostic (printf-style), truncated to POLICY_DIAG_MAX - 1
 * bytes with control characters replaced, so it stays one line. 0 or
 * -ENOMEM. The loader uses it; callers may add their own lines too.
 */
int policy_diag__add(struct policy_diag *diag, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Capability names without CAP_ (policy/builtin.c), indexed by number:
 * "CHOWN" is 0. policy_cap_name() gives "unknown" past the table;
 * policy_cap_parse() takes a name with or without CAP_, any case, and
 * returns its number or -EINVAL.
 */
#define POLICY_CAP_LAST		40	/* CAP_CHECKPOINT_RESTORE */
extern const char *const policy_cap_names[POLICY_CAP_LAST + 1];
const char *policy_cap_name(unsigned int cap);
int policy_cap_parse(const char *name);

/*
 * Netlink protocol names (policy/builtin.c), indexed by NETLINK_* number:
 * "route" is 0; NULL for numbers without a name. policy_netlink_name()
 * gives "unknown" for those; policy_netlink_parse() returns the number of
 * a name (exact, lower case) or -EINVAL. POLICY_NETLINK_RISKY: the
 * families whose every message `stockade check` warns about, as they
 * change the host's network or audit state.
 */
#define POLICY_NETLINK_MAX	32	/* MAX_LINKS */
extern const char *const policy_netlink_names[POLICY_NETLINK_MAX];
const char *policy_netlink_name(unsigned int proto);
int policy_netlink_parse(const char *name);
#define POLICY_NETLINK_RISKY	((1u << 0) | (1u << 6) | (1u << 9) | (1u << 12))

/*
 * The capability set a sandbox of p may use: `capabilities:` as listed
 * (SYS_ADMIN bringing SYSLOG, PERFMON, BPF and CHECKPOINT_RESTORE, which
 * the kernel accepts it for), else policy_caps_default, plus NET_RAW when
 * network.raw_sockets is true. POLICY_CAPS_DANGEROUS: the ones that reach the host or the kernel
 * (module loading, raw I/O, the clock, kernel logs, tracing, namespaces
 * and mounts...); allowed when listed, but `stockade check` warns.
 */
#define POLICY_CAP_BIT(n)	(1ULL << (n))
extern const uint64_t policy_caps_default;
extern const uint64_t policy_caps_dangerous;
uint64_t policy_caps(const struct policy *p);

/*
 * Selectors before their cgroups exist (policy/select.c). Paths are "/a/b"
 * below the cgroup2 mount; "" is the mount's root.
 *   select__depth("/docker/<*>/x") is 3;
 *   select__prefix_match(sel, rel): rel is shallower than sel, and each of
 *     its components matches sel's: a cgroup below rel could be selected;
 *   select__watch_base(sel): the components before the first wildcard
 *     ("/docker" for /docker/<*>), or a literal selector's parent;
 *     0 or -ENAMETOOLONG;
 *   select__is_literal(sel): no wildcard at all.
 */
int select__depth(const char *sel);
bool select__prefix_match(const char *sel, const char *rel);
int select__watch_base(const char *sel, char *out, size_t len);
bool select__is_literal(const char *sel);

/* FNV-1a, 64 bits: the content hash of a policy file (policy.hash). */
uint64_t policy__hash(const void *buf, size_t len);

void policy__free(struct policy *p);
void policy_set__free(struct policy_set *set);
void policy_diag__free(struct policy_diag *diag);
/* A policy (or register) file's bytes, at most POLICY_FILE_MAX, into a
 * malloc()ed *out: 0, or -errno with why filled in (naming the file). */
int policy__read_file(const char *path, char **out, size_t *out_len,
		      char *why, size_t why_len);

/* Parse "a.b.c.d[/n]" or "x:y::z[/n]" into a normalised CIDR; 0 or -EINVAL
 * (also when bits below the prefix are set: "10.0.0.1/8" is refused). */
int policy_cidr__parse(const char *s, struct policy_cidr *out);
/* Does a contain (or equal) b?  Do they overlap at all? */
bool policy_cidr__contains(const struct policy_cidr *a,
			   const struct policy_cidr *b);
bool policy_cidr__overlaps(const struct policy_cidr *a,
			   const struct policy_cidr *b);
/*
 * The steps of policy_cidr__parse, for callers that explain a failure.
 * parse_raw keeps the address as written (no masking, no normalising) and
 * returns 0, -EINVAL (not an address) or -ERANGE (prefix too long for the
 * family). mask clears host bits and says whether any were set. normalize
 * turns an IPv6 CIDR lying wholly inside one IPv4-carrying form into the
 * IPv4 CIDR it denotes (mapped, compatible, NAT64: prefix >= 96 gives /
 * prefix-96; 6to4: prefix >= 16 gives /min(prefix-16, 32)); expects no
 * host bits.
 */
int policy_cidr__parse_raw(const char *s, struct policy_cidr *out);
bool policy_cidr__mask(struct policy_cidr *c);
void policy_cidr__normalize(struct policy_cidr *c);
/* Format as text ("10.0.0.0/8", "fd00:ec2::254/128"); buf >= 64 bytes. */
const char *policy_cidr__str(const struct policy_cidr *c, char *buf,
			     size_t len);

/*
 * Per-execution folders (policy/template.c). A files.read or files.write
 * path may hold `{cgroup}` (the selected cgroup's last path component,
 * "job-7" for /sandboxes/job-7) and `{cgroup_path}` (its path below the
 * cgroup2 root without the leading '/', "sandboxes/job-7"); the file rules
 * are compiled once per selected cgroup with them expanded. Nothing is
 * created.
 *   policy_tmpl__at(s): the placeholder s starts with, or -1.
 *   policy_tmpl__has(path), policy_tmpl__kinds(path): any placeholder;
 *     which ones (bit POLICY_TMPL_*).
 *   policy__has_templates(p): any read or write path has one.
 *   policy_tmpl__expand(): path with cg ("/a/b") put in; its length, or
 *     -ENAMETOOLONG (out too small) or -EINVAL (cg is no cgroup path, or
 *     has a control character).
 */
enum { POLICY_TMPL_CGROUP = 0, POLICY_TMPL_CGROUP_PATH = 1 };
int policy_tmpl__at(const char *s);
bool policy_tmpl__has(const char *path);
unsigned int policy_tmpl__kinds(const char *path);
bool policy__has_templates(const struct policy *p);
int policy_tmpl__expand(const char *tmpl, const char *cg, char *out, size_t len);
/* The literal directory above path's first placeholder ("/srv/jobs" for
 * /srv/jobs/{cgroup}/out): every expansion lies below it. */
void policy_tmpl__base(const char *path, char *out, size_t len);

#endif /* STOCKADE_POLICY_H */
