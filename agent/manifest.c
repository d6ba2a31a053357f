// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The pure half of `stockade manifest` (agent/manifest.h): /proc parsers,
 * secret-name matching, the policy blob, the boundary file, the shared
 * write paths, the verdict per point and the two renderings. No kernel,
 * no pins: agent/ctl_manifest.c gathers, this judges.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "container.h"
#include "file.h"
#include "json.h"
#include "container.h"
#include "manifest.h"
#include "net.h"
#include "policy.h"

static const char *const point_name[MF_POINTS + 1] = {
	"",
	"no ambient credentials",
	"egress denied by default, with named exceptions",
	"filesystem read-only or task-scoped, no writable path shared between executions",
	"CPU, memory and run-time limits set",
	"a named boundary",
};

/* ---- small helpers --------------------------------------------------- */

static char *xstrndup(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

/* Append p (size sz) to *v of *n; NULL on ENOMEM. */
static void *grow(void *v, size_t *n, size_t sz)
{
	void *nv = realloc(v, (*n + 1) * sz);

	if (nv) {
		memset((char *)nv + *n * sz, 0, sz);
		(*n)++;
	}
	return nv;
}

void mf_strv_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* The next line of buf[*off..len), without '\n'. */
static bool next_line(const char *buf, size_t len, size_t *off,
		      const char **line, size_t *n)
{
	const char *nl;

	if (*off >= len)
		return false;
	*line = buf + *off;
	nl = memchr(*line, '\n', len - *off);
	*n = nl ? (size_t)(nl - *line) : len - *off;
	*off += *n + (nl ? 1 : 0);
	return true;
}

/* ---- /proc/PID/status -------------------------------------------------- */

static bool field(const char *line, size_t n, const char *key, const char **val,
		  size_t *vn)
{
	size_t k = strlen(key);

	if (n <= k || memcmp(line, key, k) || line[k] != ':')
		return false;
	line += k + 1;
	n -= k + 1;
	while (n && (*line == ' ' || *line == '\t'))
		line++, n--;
	*val = line;
	*vn = n;
	return true;
}

/* Up to max decimal numbers separated by blanks; how many were read. */
static size_t numbers(const char *s, size_t n, uint32_t *out, size_t max)
{
	size_t i = 0, got = 0;

	while (got < max) {
		uint64_t v = 0;
		size_t d = 0;

		while (i < n && (s[i] == ' ' || s[i] == '\t'))
			i++;
		while (i < n && isdigit((unsigned char)s[i]) && d < 11)
			v = v * 10 + (uint64_t)(s[i++] - '0'), d++;
		if (!d || v > UINT32_MAX)
			break;
		out[got++] = (uint32_t)v;
	}
	return got;
}

static bool hex64(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (!n || n > 16)
		return false;
	for (i = 0; i < n; i++) {
		int c = tolower((unsigned char)s[i]);

		if (!isxdigit(c))
			return false;
		v = v << 4 | (uint64_t)(isdigit(c) ? c - '0' : c - 'a' + 10);
	}
	*out = v;
	return true;
}

int mf_parse_status(const char *buf, size_t len, struct mf_status *out)
{
	static const char *const caps[] = { "CapInh", "CapPrm", "CapEff",
					    "CapBnd", "CapAmb" };
	uint64_t *capv[] = { &out->cap_inh, &out->cap_prm, &out->cap_eff,
			     &out->cap_bnd, &out->cap_amb };
	unsigned int cap_seen = 0;
	const char *line, *v;
	size_t off = 0, n, vn, i;
	uint32_t num[4];

	memset(out, 0, sizeof(*out));
	out->no_new_privs = out->seccomp = -1;
	while (next_line(buf, len, &off, &line, &n)) {
		if (field(line, n, "Name", &v, &vn)) {
			snprintf(out->name, sizeof(out->name), "%.*s",
				 (int)(vn < sizeof(out->name) ? vn : sizeof(out->name) - 1), v);
		} else if (field(line, n, "Uid", &v, &vn)) {
			if (numbers(v, vn, out->uid, 4) == 4)
				out->have |= MF_ST_UID;
		} else if (field(line, n, "Gid", &v, &vn)) {
			if (numbers(v, vn, out->gid, 4) == 4)
				out->have |= MF_ST_GID;
		} else if (field(line, n, "NoNewPrivs", &v, &vn)) {
			if (numbers(v, vn, num, 1) == 1 && num[0] <= 1) {
				out->no_new_privs = (int)num[0];
				out->have |= MF_ST_NNP;
			}
		} else if (field(line, n, "Seccomp", &v, &vn)) {
			if (numbers(v, vn, num, 1) == 1 && num[0] <= 2) {
				out->seccomp = (int)num[0];
				out->have |= MF_ST_SECCOMP;
			}
		} else {
			for (i = 0; i < 5; i++)
				if (field(line, n, caps[i], &v, &vn) &&
				    hex64(v, vn, capv[i]))
					cap_seen |= 1u << i;
		}
	}
	/* CapAmb is 4.3+, the rest older. */
	if (cap_seen == 0x1f)
		out->have |= MF_ST_CAPS;
	if (!(out->have & MF_ST_UID) || !(out->have & MF_ST_GID) ||
	    !(out->have & MF_ST_CAPS))
		return -EINVAL;
	return 0;
}

/* ---- secret-looking names ------------------------------------------------ */

static bool prefix_ci(const char *s, size_t n, const char *p)
{
	size_t k = strlen(p);

	return n >= k && !strncasecmp(s, p, k);
}

static bool suffix_ci(const char *s, size_t n, const char *p)
{
	size_t k = strlen(p);

	return n >= k && !strncasecmp(s + n - k, p, k);
}

bool mf_secret_name(const char *name, size_t len)
{
	/* Suffixes after a '_' (API_KEY, GITHUB_TOKEN), or the whole name. */
	static const char *const words[] = {
		"TOKEN", "SECRET", "KEY", "PASSWORD", "PASSWD", "PASS",
		"CREDENTIALS", "CREDENTIAL", "APIKEY", "API_KEY", "ACCESS_KEY",
		"PRIVATE_KEY", "SECRET_KEY", "AUTH", "SESSION",
	};
	/* Whole prefixes: every variable of these clouds' SDKs (the issue's
	 * AWS_*, AZURE_*), less the benign ones below. */
	static const char *const prefixes[] = { "AWS_", "AZURE_" };
	/* Whole names that point at credentials without the words above. */
	static const char *const names[] = {
		"GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CREDENTIALS",
		"CLOUDSDK_AUTH_ACCESS_TOKEN_FILE", "KUBECONFIG", "DOCKER_AUTH_CONFIG",
	};
	/* Names of these forms that are not credentials. */
	static const char *const benign[] = {
		"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PAGER", "AWS_DEFAULT_OUTPUT",
		"AWS_CA_BUNDLE", "AWS_ENDPOINT_URL", "AWS_PROFILE", "AWS_SDK_LOAD_CONFIG",
		"AZURE_LOCATION", "AZURE_CLOUD",
	};
	size_t i, k;

	if (!len)
		return false;
	for (i = 0; i < sizeof(benign) / sizeof(benign[0]); i++)
		if (strlen(benign[i]) == len && !strncasecmp(name, benign[i], len))
			return false;
	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (prefix_ci(name, len, prefixes[i]))
			return true;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == len && !strncasecmp(name, names[i], len))
			return true;
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		k = strlen(words[i]);
		if (len == k && !strncasecmp(name, words[i], k))
			return true;
		if (len > k && suffix_ci(name, len, words[i]) && name[len - k - 1] == '_')
			return true;
	}
	return false;
}

int mf_environ_secrets(const char *buf, size_t len, char ***names, size_t *n)
{
	size_t off = 0, i, k;
	char **v = NULL, **nv;

	*names = NULL;
	*n = 0;
	while (off < len) {
		const char *e = buf + off, *nul = memchr(e, '\0', len - off);
		size_t el = nul ? (size_t)(nul - e) : len - off;
		const char *eq = memchr(e, '=', el);

		off += el + 1;
		/* Only the name: the value is never read past the '='. */
		k = eq ? (size_t)(eq - e) : el;
		if (!k || !mf_secret_name(e, k))
			continue;
		for (i = 0; i < *n && (strlen(v[i]) != k || memcmp(v[i], e, k)); i++)
			;
		if (i < *n)
			continue;
		nv = realloc(v, (*n + 1) * sizeof(*v));
		if (!nv || !(nv[*n] = xstrndup(e, k))) {
			mf_strv_free(nv ? nv : v, *n);
			*n = 0;
			return -ENOMEM;
		}
		v = nv;
		(*n)++;
	}
	*names = v;
	return 0;
}

/* ---- /proc/PID/mountinfo ------------------------------------------------- */

/* A mountinfo field, octal escapes (\040 \011 \012 \134) undone. */
static char *unescape(const char *s, size_t n)
{
	char *d = malloc(n + 1), *o = d;
	size_t i;

	if (!d)
		return NULL;
	for (i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 3 < n && s[i + 1] >= '0' && s[i + 1] <= '3' &&
		    s[i + 2] >= '0' && s[i + 2] <= '7' &&
		    s[i + 3] >= '0' && s[i + 3] <= '7') {
			*o++ = (char)((s[i + 1] - '0') << 6 | (s[i + 2] - '0') << 3 |
				      (s[i + 3] - '0'));
			i += 3;
		} else {
			*o++ = s[i];
		}
	}
	*o = '\0';
	return d;
}

static bool has_opt(const char *s, size_t n, const char *opt)
{
	size_t k = strlen(opt), i = 0;

	while (i < n) {
		size_t j = i;

		while (j < n && s[j] != ',')
			j++;
		if (j - i == k && !memcmp(s + i, opt, k))
			return true;
		i = j + 1;
	}
	return false;
}

int mf_parse_mountinfo(const char *buf, size_t len, struct mf_mount **out,
		       size_t *n, size_t *bad)
{
	struct mf_mount *v = NULL, *nv;
	const char *line;
	size_t off = 0, ln;

	*out = NULL;
	*n = 0;
	if (bad)
		*bad = 0;
	while (next_line(buf, len, &off, &line, &ln)) {
		/* id parent maj:min root point opts [optional...] - fstype source superopts */
		const char *f[16];
		size_t fl[16], nf = 0, i = 0, sep;
		struct mf_mount m;

		if (!ln)
			continue;
		while (i < ln && nf < 16) {
			while (i < ln && line[i] == ' ')
				i++;
			if (i >= ln)
				break;
			f[nf] = line + i;
			while (i < ln && line[i] != ' ')
				i++;
			fl[nf] = (size_t)(line + i - f[nf]);
			nf++;
		}
		for (sep = 6; sep < nf && !(fl[sep] == 1 && f[sep][0] == '-'); sep++)
			;
		if (nf < 10 || sep + 3 >= nf + 1 || sep + 2 >= nf || f[4][0] != '/') {
			if (bad)
				(*bad)++;
			continue;
		}
		m.root = unescape(f[3], fl[3]);
		m.point = unescape(f[4], fl[4]);
		m.fstype = unescape(f[sep + 1], fl[sep + 1]);
		m.source = unescape(f[sep + 2], fl[sep + 2]);
		m.ro = has_opt(f[5], fl[5], "ro") ||
		       (sep + 3 < nf && has_opt(f[sep + 3], fl[sep + 3], "ro"));
		nv = m.root && m.point && m.fstype && m.source ?
		     grow(v, n, sizeof(*v)) : NULL;
		if (!nv) {
			free(m.root);
			free(m.point);
			free(m.fstype);
			free(m.source);
			mf_mounts_free(v, *n);
			*n = 0;
			return -ENOMEM;
		}
		v = nv;
		v[*n - 1] = m;
	}
	*out = v;
	return 0;
}

void mf_mounts_free(struct mf_mount *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].point);
		free(v[i].root);
		free(v[i].fstype);
		free(v[i].source);
	}
	free(v);
}

/* ---- the policy blob ------------------------------------------------------ */

struct sbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void sb_put(struct sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->cap ? b->cap * 2 : 1024) + n;
		char *np = realloc(b->p, cap);

		if (!np) {
			b->oom = true;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

/* One field: \t, \n, \\ escaped. */
static void sb_field(struct sbuf *b, const char *s)
{
	sb_put(b, "\t", 1);
	for (; s && *s; s++) {
		if (*s == '\t')
			sb_put(b, "\\t", 2);
		else if (*s == '\n')
			sb_put(b, "\\n", 2);
		else if (*s == '\\')
			sb_put(b, "\\\\", 2);
		else
			sb_put(b, s, 1);
	}
}

static void sb_line(struct sbuf *b, const char *key, const char *a, const char *c)
{
	sb_put(b, key, strlen(key));
	sb_field(b, a);
	if (c)
		sb_field(b, c);
	sb_put(b, "\n", 1);
}

/* "10.0.0.0/8 tcp 443,9000-9100" (every port: "all ports"). */
static void rule_text(const struct policy_net_rule *r, char *buf, size_t len)
{
	char cidr[64];
	size_t o, i;

	policy_cidr__str(&r->cidr, cidr, sizeof(cidr));
	o = (size_t)snprintf(buf, len, "%s %s ", cidr,
			     r->proto == NET_PROTO_TCP ? "tcp" :
			     r->proto == NET_PROTO_UDP ? "udp" : "any");
	if (!r->n_ports)
		snprintf(buf + o, len - o, "all-ports");
	for (i = 0; i < r->n_ports && o < len; i++)
		o += (size_t)(r->ports[i].lo == r->ports[i].hi ?
			      snprintf(buf + o, len - o, "%s%u", i ? "," : "", r->ports[i].lo) :
			      snprintf(buf + o, len - o, "%s%u-%u", i ? "," : "",
				       r->ports[i].lo, r->ports[i].hi));
}

int mf_blob_write(const struct policy *p, char **out, size_t *len)
{
	struct sbuf b = { 0 };
	char t[256];
	size_t i;

	sb_put(&b, MF_BLOB_MAGIC "\n", strlen(MF_BLOB_MAGIC) + 1);
	sb_line(&b, "name", p->name, NULL);
	if (p->category)
		sb_line(&b, "category", p->category, NULL);
	sb_line(&b, "file", p->file, NULL);
	snprintf(t, sizeof(t), "%016" PRIx64, p->hash);
	sb_line(&b, "hash", t, NULL);
	sb_line(&b, "default", p->net.default_allow ? "allow" : "deny", NULL);
	for (i = 0; i < p->net.n_allow; i++) {
		rule_text(&p->net.allow[i], t, sizeof(t));
		sb_line(&b, "allow", t, p->net.allow[i].reason ? p->net.allow[i].reason : "");
	}
	for (i = 0; i < p->net.n_overrides; i++) {
		policy_cidr__str(&p->net.overrides[i].endpoint, t, sizeof(t));
		sb_line(&b, "net_override", t, p->net.overrides[i].reason);
	}
	if (p->files.has_read)
		sb_line(&b, "has_read", "1", NULL);
	for (i = 0; i < p->files.n_read; i++)
		sb_line(&b, "read", p->files.read[i].path, NULL);
	for (i = 0; i < p->files.n_write; i++)
		sb_line(&b, "write", p->files.write[i].path, NULL);
	for (i = 0; i < p->files.n_deny; i++)
		sb_line(&b, "deny", p->files.deny[i].path, NULL);
	for (i = 0; i < p->files.n_overrides; i++)
		sb_line(&b, "file_override", p->files.overrides[i].path,
			p->files.overrides[i].reason);
	if (p->limits.has_runtime) {
		snprintf(t, sizeof(t), "%" PRIu64, p->limits.runtime_ms);
		sb_line(&b, "runtime_ms", t, NULL);
	}
	for (i = 0; i < p->n_cgroups; i++)
		sb_line(&b, "selector", p->cgroups[i], NULL);
	if (p->limits.has_memory) {
		snprintf(t, sizeof(t), "%" PRIu64, p->limits.memory);
		sb_line(&b, "memory", t, NULL);
	}
	if (p->limits.has_pids) {
		snprintf(t, sizeof(t), "%" PRIu64, p->limits.pids);
		sb_line(&b, "pids", t, NULL);
	}
	if (p->exec.has_paths)
		sb_line(&b, "exec_has_paths", "1", NULL);
	for (i = 0; p->exec.has_paths && i < p->exec.n_paths; i++)
		sb_line(&b, "exec_path", p->exec.paths[i].path, NULL);
	if (p->exec.allow_written)
		sb_line(&b, "exec_allow_written", "1", NULL);
	if (p->exec.anon_deny)
		sb_line(&b, "exec_anon_deny", "1", NULL);
	if (p->exec.hash_sha256)
		sb_line(&b, "exec_hash", "sha256", NULL);
	if (b.oom) {
		free(b.p);
		return -ENOMEM;
	}
	*out = b.p;
	*len = b.len;
	return 0;
}

/* Field k (0-based after the key) of a blob line, unescaped; NULL when
 * absent or on ENOMEM (*oom set). */
static char *blob_field(const char *line, size_t n, unsigned int k, bool *oom)
{
	size_t i = 0, start;
	char *d, *o;

	for (;;) {
		while (i < n && line[i] != '\t')
			i++;
		if (i >= n)
			return NULL;
		i++;
		if (!k--)
			break;
	}
	start = i;
	while (i < n && line[i] != '\t')
		i++;
	d = o = malloc(i - start + 1);
	if (!d) {
		*oom = true;
		return NULL;
	}
	for (; start < i; start++) {
		if (line[start] == '\\' && start + 1 < i) {
			char c = line[++start];

			*o++ = c == 't' ? '\t' : c == 'n' ? '\n' : c;
		} else {
			*o++ = line[start];
		}
	}
	*o = '\0';
	return d;
}

static bool key_is(const char *line, size_t n, const char *key)
{
	size_t k = strlen(key);

	return n > k && !memcmp(line, key, k) && line[k] == '\t';
}

static bool add_str(char ***v, size_t *n, char *s)
{
	char **nv;

	if (!s)
		return false;
	nv = realloc(*v, (*n + 1) * sizeof(**v));
	if (!nv) {
		free(s);
		return false;
	}
	nv[(*n)++] = s;
	*v = nv;
	return true;
}

static bool add_reasoned(struct mf_reasoned **v, size_t *n, char *what, char *why)
{
	struct mf_reasoned *nv;

	if (!what) {
		free(why);
		return false;
	}
	nv = grow(*v, n, sizeof(**v));
	if (!nv) {
		free(what);
		free(why);
		return false;
	}
	*v = nv;
	if (why && !why[0]) {
		free(why);
		why = NULL;
	}
	nv[*n - 1].what = what;
	nv[*n - 1].reason = why;
	return true;
}

int mf_blob_parse(const char *buf, size_t len, struct mf_policy *out)
{
	const char *line;
	size_t off = 0, n;
	bool oom = false;

	memset(out, 0, sizeof(*out));
	if (!next_line(buf, len, &off, &line, &n) || n != strlen(MF_BLOB_MAGIC) ||
	    memcmp(line, MF_BLOB_MAGIC, n))
		return -EINVAL;
	while (!oom && next_line(buf, len, &off, &line, &n)) {
		char **one = NULL;

		if (key_is(line, n, "name"))
			one = &out->name;
		else if (key_is(line, n, "category"))
			one = &out->category;
		else if (key_is(line, n, "file"))
			one = &out->file;
		if (one) {
			free(*one);
			*one = blob_field(line, n, 0, &oom);
		} else if (key_is(line, n, "hash") || key_is(line, n, "runtime_ms") ||
			   key_is(line, n, "memory") || key_is(line, n, "pids")) {
			char *v = blob_field(line, n, 0, &oom), *end;
			uint64_t x;

			if (!v)
				continue;
			errno = 0;
			x = strtoull(v, &end, line[0] == 'h' ? 16 : 10);
			if (!errno && end != v && !*end) {
				if (line[0] == 'h') {
					out->hash = x;
				} else if (line[0] == 'r') {
					out->runtime_ms = x;
					out->has_runtime = true;
				} else if (line[0] == 'm') {
					out->memory = x;
					out->has_memory = true;
				} else {
					out->pids = x;
					out->has_pids = true;
				}
			}
			free(v);
		} else if (key_is(line, n, "selector")) {
			oom = !add_str(&out->selectors, &out->n_selectors,
				       blob_field(line, n, 0, &oom)) && oom;
		} else if (key_is(line, n, "default")) {
			out->default_allow = n == 13 && !memcmp(line + 8, "allow", 5);
		} else if (key_is(line, n, "has_read")) {
			out->has_read = true;
		} else if (key_is(line, n, "exec_has_paths")) {
			out->has_exec_paths = true;
		} else if (key_is(line, n, "exec_allow_written")) {
			out->exec_allow_written = true;
		} else if (key_is(line, n, "exec_anon_deny")) {
			out->exec_anon_deny = true;
		} else if (key_is(line, n, "exec_hash")) {
			out->exec_hash = true;
		} else if (key_is(line, n, "exec_path")) {
			oom = !add_str(&out->exec_paths, &out->n_exec_paths,
				       blob_field(line, n, 0, &oom)) && oom;
		} else if (key_is(line, n, "allow")) {
			oom = !add_reasoned(&out->allow, &out->n_allow,
					    blob_field(line, n, 0, &oom),
					    blob_field(line, n, 1, &oom)) && oom;
		} else if (key_is(line, n, "net_override")) {
			oom = !add_reasoned(&out->net_overrides, &out->n_net_overrides,
					    blob_field(line, n, 0, &oom),
					    blob_field(line, n, 1, &oom)) && oom;
		} else if (key_is(line, n, "file_override")) {
			oom = !add_reasoned(&out->file_overrides, &out->n_file_overrides,
					    blob_field(line, n, 0, &oom),
					    blob_field(line, n, 1, &oom)) && oom;
		} else if (key_is(line, n, "read")) {
			oom = !add_str(&out->read, &out->n_read, blob_field(line, n, 0, &oom)) && oom;
		} else if (key_is(line, n, "write")) {
			oom = !add_str(&out->write, &out->n_write, blob_field(line, n, 0, &oom)) && oom;
		} else if (key_is(line, n, "deny")) {
			oom = !add_str(&out->deny, &out->n_deny, blob_field(line, n, 0, &oom)) && oom;
		}
	}
	if (oom) {
		mf_policy_free(out);
		return -ENOMEM;
	}
	return 0;
}

static void reasoned_free(struct mf_reasoned *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].what);
		free(v[i].reason);
	}
	free(v);
}

void mf_policy_free(struct mf_policy *p)
{
	if (!p)
		return;
	free(p->name);
	free(p->category);
	free(p->file);
	reasoned_free(p->allow, p->n_allow);
	reasoned_free(p->net_overrides, p->n_net_overrides);
	reasoned_free(p->file_overrides, p->n_file_overrides);
	mf_strv_free(p->read, p->n_read);
	mf_strv_free(p->write, p->n_write);
	mf_strv_free(p->deny, p->n_deny);
	mf_strv_free(p->exec_paths, p->n_exec_paths);
	mf_strv_free(p->selectors, p->n_selectors);
	memset(p, 0, sizeof(*p));
}

/* ---- the boundary file ----------------------------------------------------- */

int mf_boundary_parse(const char *buf, size_t len, struct mf_boundary *out,
		      char *why, size_t why_len)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	char key[64] = "";
	int depth = 0, err = -EINVAL;
	bool in_key = true, done = false;

	memset(out, 0, sizeof(*out));
	snprintf(why, why_len, "not a mapping of name and architecture_record");
	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	while (!done) {
		if (!yaml_parser_parse(&parser, &ev)) {
			snprintf(why, why_len, "line %zu: %s",
				 parser.problem_mark.line + 1,
				 parser.problem ? parser.problem : "invalid YAML");
			goto out;
		}
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		case YAML_MAPPING_START_EVENT:
			if (++depth > 1) {
				snprintf(why, why_len, "line %zu: %s: expected a string",
					 ev.start_mark.line + 1, key);
				yaml_event_delete(&ev);
				goto out;
			}
			break;
		case YAML_MAPPING_END_EVENT:
			depth--;
			break;
		case YAML_SEQUENCE_START_EVENT:
		case YAML_ALIAS_EVENT:
			snprintf(why, why_len, "line %zu: %s: expected a string",
				 ev.start_mark.line + 1, key[0] ? key : "(top)");
			yaml_event_delete(&ev);
			goto out;
		case YAML_SCALAR_EVENT: {
			const char *s = (const char *)ev.data.scalar.value;
			size_t sl = ev.data.scalar.length;

			if (depth != 1) {
				yaml_event_delete(&ev);
				goto out;
			}
			if (in_key) {
				snprintf(key, sizeof(key), "%.*s", (int)(sl < 63 ? sl : 63), s);
				if (strcmp(key, "name") && strcmp(key, "architecture_record")) {
					snprintf(why, why_len, "line %zu: unknown key '%s'; expected name or architecture_record",
						 ev.start_mark.line + 1, key);
					yaml_event_delete(&ev);
					goto out;
				}
			} else if (!strcmp(key, "name")) {
				snprintf(out->name, sizeof(out->name), "%.*s",
					 (int)(sl < sizeof(out->name) ? sl : sizeof(out->name) - 1), s);
			} else {
				snprintf(out->record, sizeof(out->record), "%.*s",
					 (int)(sl < sizeof(out->record) ? sl : sizeof(out->record) - 1), s);
			}
			in_key = !in_key;
			break;
		}
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	if (!out->name[0] || !out->record[0]) {
		snprintf(why, why_len, "%s is missing or empty",
			 !out->name[0] ? "name" : "architecture_record");
		goto out;
	}
	why[0] = '\0';
	err = 0;
out:
	yaml_parser_delete(&parser);
	return err;
}

/* ---- per-execution folders ----------------------------------------------- */

bool mf_policy_templated(const struct mf_policy *p)
{
	size_t i;

	for (i = 0; i < p->n_read; i++)
		if (policy_tmpl__has(p->read[i]))
			return true;
	for (i = 0; i < p->n_write; i++)
		if (policy_tmpl__has(p->write[i]))
			return true;
	return false;
}

static int expand_v(char **v, size_t *n, const char *cg)
{
	char path[PATH_MAX], *e;
	size_t i, out = 0;
	int len, ret = 0;

	for (i = 0; i < *n; i++) {
		if (!policy_tmpl__has(v[i])) {
			v[out++] = v[i];
			continue;
		}
		len = policy_tmpl__expand(v[i], cg, path, sizeof(path));
		free(v[i]);
		if (len < 0 || len > FILE_CG_PREFIX_MAX) {
			ret = ret ?: -ENAMETOOLONG;
			continue;
		}
		e = strdup(path);
		if (!e) {
			ret = -ENOMEM;
			continue;
		}
		v[out++] = e;
	}
	*n = out;
	return ret;
}

int mf_policy_expand(struct mf_policy *p, const char *cg)
{
	int r = expand_v(p->read, &p->n_read, cg);
	int w = expand_v(p->write, &p->n_write, cg);

	return r == -ENOMEM || w == -ENOMEM ? -ENOMEM : r ?: w;
}

/* ---- paths, shares, verdicts ---------------------------------------------- */

bool mf_path_covers(const char *a, const char *b)
{
	size_t k = strlen(a);

	if (!strcmp(a, "/"))
		return b[0] == '/';
	return !strncmp(a, b, k) && (b[k] == '\0' || b[k] == '/');
}

bool mf_path_overlap(const char *a, const char *b)
{
	return mf_path_covers(a, b) || mf_path_covers(b, a);
}

int mf_shared(struct mf_sandbox *v, size_t n)
{
	size_t i, j, a, b;

	for (i = 0; i < n; i++) {
		const struct mf_policy *p = v[i].pol;

		for (j = 0; p && j < n; j++) {
			const struct mf_policy *q = v[j].pol;
			bool hit = false;

			if (i == j || !q)
				continue;
			for (a = 0; !hit && a < p->n_write; a++)
				for (b = 0; !hit && b < q->n_write; b++) {
					struct mf_share *ns;

					if (!mf_path_overlap(p->write[a], q->write[b]))
						continue;
					hit = true;
					ns = grow(v[i].shared, &v[i].n_shared, sizeof(*ns));
					if (!ns)
						return -ENOMEM;
					v[i].shared = ns;
					ns += v[i].n_shared - 1;
					ns->cgroup = strdup(v[j].cgroup);
					ns->policy = strdup(v[j].policy_name);
					ns->path = strdup(p->write[a]);
					if (!ns->cgroup || !ns->policy || !ns->path)
						return -ENOMEM;
				}
		}
	}
	return 0;
}

/* Is path inside a built-in protected path (a home entry in /root or any
 * /home/X counts), and no override of p opens it? */
static bool protected_closed(const struct mf_policy *p, const char *path)
{
	char home[512];
	bool prot = false;
	size_t i;

	for (i = 0; !prot && i < policy_n_protected_paths; i++)
		prot = mf_path_covers(policy_protected_paths[i], path);
	for (i = 0; !prot && i < policy_n_protected_home; i++) {
		const char *rest = NULL;

		if (!strncmp(path, "/root/", 6))
			rest = path + 6;
		else if (!strncmp(path, "/home/", 6) && (rest = strchr(path + 6, '/')))
			rest++;
		if (!rest)
			continue;
		snprintf(home, sizeof(home), "/%s", policy_protected_home[i]);
		prot = mf_path_covers(home, rest - 1);
	}
	if (!prot)
		return false;
	for (i = 0; i < p->n_file_overrides; i++)
		if (mf_path_covers(p->file_overrides[i].what, path))
			return false;
	return true;
}

bool mf_path_blocked(const struct mf_policy *p, bool lsm, const char *path)
{
	size_t i;

	if (!lsm || !p)
		return false;
	for (i = 0; i < p->n_deny; i++)
		if (mf_path_covers(p->deny[i], path))
			return true;
	if (protected_closed(p, path))
		return true;
	if (!p->has_read)
		return false;
	for (i = 0; i < p->n_read; i++)
		if (mf_path_covers(p->read[i], path))
			return false;
	for (i = 0; i < p->n_write; i++)
		if (mf_path_covers(p->write[i], path))
			return false;
	return true;
}

static void verdict(struct mf_sandbox *s, int pt, bool ok, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The first failure of a point gives its why; a pass keeps its note until
 * a failure replaces it. */
static void verdict(struct mf_sandbox *s, int pt, bool ok, const char *fmt, ...)
{
	va_list ap;

	if (ok && !s->pass[pt])
		return;
	if (!ok && !s->pass[pt] && s->why[pt][0])
		return;
	s->pass[pt] = ok;
	va_start(ap, fmt);
	vsnprintf(s->why[pt], sizeof(s->why[pt]), fmt, ap);
	va_end(ap);
}

static bool limit_set(const char *v)
{
	return v[0] && strncmp(v, "max", 3);
}

void mf_judge(const struct mf_host *h, struct mf_sandbox *s)
{
	const struct mf_policy *p = s->pol;
	size_t i, env = 0;
	int pt;

	for (pt = 1; pt <= MF_POINTS; pt++) {
		s->pass[pt] = true;
		s->why[pt][0] = '\0';
	}
	for (i = 0; i < s->n_paths; i++)
		s->paths[i].blocked = mf_path_blocked(p, h->bpf_lsm, s->paths[i].path);
	if (!p)
		for (pt = 1; pt <= 3; pt++)
			verdict(s, pt, false, "the agent's record of policy %s (hash %016" PRIx64 ") was not found: start this build's agent so that it writes one",
				s->policy_name, s->hash);

	/* 1: what could not be read cannot be said to be clean. */
	if (s->unreadable_pid)
		verdict(s, 1, false, "/proc/%d/environ or /proc/%d/root could not be read (%s): run stockade manifest as root",
			s->unreadable_pid, s->unreadable_pid, strerror(s->unreadable_errno));
	/* An environment variable cannot be taken back by any policy. */
	for (i = 0; i < s->n_procs; i++)
		env += s->procs[i].n_secret_env;
	if (env)
		verdict(s, 1, false, "%zu secret-looking environment variable%s in the sandbox's processes (names listed); no policy can take them back: start the workload without them",
			env, env > 1 ? "s" : "");
	for (i = 0; i < s->n_paths; i++)
		if (!s->paths[i].blocked)
			verdict(s, 1, false, "%s is reachable%s", s->paths[i].path,
				h->bpf_lsm ? ": the policy opens it" :
				" (BPF-LSM is off: the file scope is not enforced)");
	for (i = 0; p && i < p->n_net_overrides; i++)
		verdict(s, 1, false, "metadata endpoint %s is opened by network.overrides (%s)",
			p->net_overrides[i].what, p->net_overrides[i].reason ?: "");
	verdict(s, 1, true, "no secret-looking variable, no reachable secret path, every metadata endpoint denied");

	/* 2 */
	if (s->audit)
		verdict(s, 2, false, "mode: audit: nothing is enforced");
	if (s->default_allow)
		verdict(s, 2, false, "network.default is allow");
	for (i = 0; p && i < p->n_allow; i++)
		if (!p->allow[i].reason)
			verdict(s, 2, false, "network.allow[%zu] (%s) has no reason: name the exception with reason:",
				i, p->allow[i].what);
	verdict(s, 2, true, "default deny, %zu named exception%s", p ? p->n_allow : 0,
		p && p->n_allow == 1 ? "" : "s");

	/* 3 */
	if (s->audit)
		verdict(s, 3, false, "mode: audit: nothing is enforced");
	/* What the policy itself gets wrong first: that holds on any kernel. */
	for (i = 0; p && i < p->n_write; i++)
		if (!strcmp(p->write[i], "/"))
			verdict(s, 3, false, "files.write holds /: the whole filesystem is writable");
	if (s->scope_missing)
		verdict(s, 3, false, "its per-execution folders are not in force: the kernel holds no file scope of this cgroup's own (file_cg_rules), so they are refused; restart the agent, or see its log for why it could not write them");
	if (s->n_shared)
		verdict(s, 3, false, "write path %s is shared with %s (policy %s)%s", s->shared[0].path,
			s->shared[0].cgroup, s->shared[0].policy,
			s->n_shared > 1 ? " and others (writable_shared_with)" : "");
	if (!h->bpf_lsm)
		verdict(s, 3, false, "BPF-LSM is off on this kernel: the file scope is not enforced, so it cannot be shown here");
	verdict(s, 3, true, p && p->n_write ? "writes only under the task's own folders" :
		"read-only: no write path");

	/* 4 */
	if (!limit_set(s->cpu_max))
		verdict(s, 4, false, "cpu.max is %s: set limits.cpu", s->cpu_max[0] ? s->cpu_max : "absent");
	if (!limit_set(s->memory_max))
		verdict(s, 4, false, "memory.max is %s: set limits.memory",
			s->memory_max[0] ? s->memory_max : "absent");
	if (!s->runtime_set)
		verdict(s, 4, false, "no run-time limit in force%s",
			p && p->has_runtime ? " (the policy sets one, but only a running agent enforces it: start the agent)" :
			": set limits.runtime");
	verdict(s, 4, true, "cpu, memory and run time limited");

	/* 5 */
	if (!h->have_boundary)
		verdict(s, 5, false, "no boundary named: %s", h->boundary_why);
	verdict(s, 5, true, "%s", h->have_boundary ? h->boundary.name : "");
}

void mf_sandbox_free(struct mf_sandbox *s)
{
	size_t i;

	free(s->cgroup);
	free(s->ctr);
	for (i = 0; i < s->n_procs; i++)
		mf_strv_free(s->procs[i].secret_env, s->procs[i].n_secret_env);
	free(s->procs);
	for (i = 0; i < s->n_paths; i++)
		free(s->paths[i].path);
	free(s->paths);
	mf_mounts_free(s->mounts, s->n_mounts);
	for (i = 0; i < s->n_shared; i++) {
		free(s->shared[i].cgroup);
		free(s->shared[i].policy);
		free(s->shared[i].path);
	}
	free(s->shared);
	memset(s, 0, sizeof(*s));
}

/* ---- JSON ------------------------------------------------------------------ */

static void jstr(FILE *f, const char *s)
{
	struct json e;

	json_init(&e);
	json_escape(&e, s ? s : "", strlen(s ? s : ""));
	fputc('"', f);
	if (e.buf)
		fwrite(e.buf, 1, e.len, f);
	fputc('"', f);
	json_free(&e);
}

static void jkey(FILE *f, bool *first, const char *k)
{
	fprintf(f, "%s\"%s\":", *first ? "" : ",", k);
	*first = false;
}

static void jkstr(FILE *f, bool *first, const char *k, const char *v)
{
	jkey(f, first, k);
	jstr(f, v);
}

static void jverdict(FILE *f, bool *first, int pt, bool ok)
{
	jkey(f, first, "point");
	fprintf(f, "%d", pt);
	jkstr(f, first, "verdict", ok ? "pass" : "fail");
}

static void jstrv(FILE *f, bool *first, const char *k, char *const *v, size_t n)
{
	size_t i;

	jkey(f, first, k);
	fputc('[', f);
	for (i = 0; i < n; i++) {
		if (i)
			fputc(',', f);
		jstr(f, v[i]);
	}
	fputc(']', f);
}

/* The policy's exec scope (README, "Execution"): where programs may
 * run from, whether the sandbox may run what it wrote (W^X for files
 * off: allow_written), JIT memory, digests in exec records. */
static void exec_json(FILE *f, bool *first, const struct mf_policy *p)
{
	bool fe = true;

	jkey(f, first, "exec");
	if (!p) {
		fputs("null", f);
		return;
	}
	fputc('{', f);
	if (p->has_exec_paths) {
		jstrv(f, &fe, "paths", p->exec_paths, p->n_exec_paths);
	} else {
		jkey(f, &fe, "paths");
		fputs("\"read scope\"", f);
	}
	jkey(f, &fe, "allow_written");
	fputs(p->exec_allow_written ? "true" : "false", f);
	jkstr(f, &fe, "anon_exec", p->exec_anon_deny ? "deny" : "allow");
	jkstr(f, &fe, "hash", p->exec_hash ? "sha256" : "none");
	fputc('}', f);
}

static void exec_md(FILE *f, const struct mf_policy *p)
{
	size_t j;

	if (!p)
		return;
	fputs("\nExec: ", f);
	for (j = 0; p->has_exec_paths && j < p->n_exec_paths; j++)
		fprintf(f, "%s`%s`", j ? ", " : "", p->exec_paths[j]);
	if (p->has_exec_paths && !p->n_exec_paths)
		fputs("nowhere", f);
	if (!p->has_exec_paths)
		fputs("the read scope", f);
	fputs(p->exec_allow_written ?
	      "; **allow_written: the sandbox may run files it can write (no W^X for files)**" :
	      ", minus the write scope (W^X for files)", f);
	fprintf(f, "; anonymous executable memory %s; exec records %s.\n",
		p->exec_anon_deny ? "refused" : "allowed",
		p->exec_hash ? "carry each program's SHA-256" : "carry no digest");
}

static void caps_hex(char *buf, uint64_t v)
{
	snprintf(buf, 17, "%016" PRIx64, v);
}

/* The other address forms that carry an IPv4 endpoint; the kernel side
 * judges each as the IPv4 address (README, "Network addresses"). */
static void meta_forms(FILE *f, const struct policy_endpoint *e)
{
	const uint8_t *a = e->cidr.addr;
	unsigned int pfx = e->cidr.prefix;

	fputc('[', f);
	jstr(f, e->text);
	if (e->cidr.family == 4) {
		fprintf(f, ",\"::ffff:%u.%u.%u.%u/%u\",\"::%u.%u.%u.%u/%u\",\"64:ff9b::%u.%u.%u.%u/%u\",\"2002:%02x%02x:%02x%02x::/%u\"",
			a[0], a[1], a[2], a[3], pfx + 96, a[0], a[1], a[2], a[3], pfx + 96,
			a[0], a[1], a[2], a[3], pfx + 96, a[0], a[1], a[2], a[3], pfx + 16);
	}
	fputc(']', f);
}

static bool meta_open(const struct mf_policy *p, const struct policy_endpoint *e)
{
	struct policy_cidr c;
	size_t i;

	for (i = 0; p && i < p->n_net_overrides; i++)
		if (!policy_cidr__parse(p->net_overrides[i].what, &c) &&
		    policy_cidr__overlaps(&c, &e->cidr))
			return true;
	return false;
}

static void json_sandbox(FILE *f, const struct mf_host *h, const struct mf_sandbox *s)
{
	const struct mf_policy *p = s->pol;
	char hex[24];
	bool first = true, fo;
	size_t i, j;
	int pt;

	fputc('{', f);
	jkstr(f, &first, "cgroup", s->cgroup);
	jkey(f, &first, "cgroup_id");
	fprintf(f, "%" PRIu64, s->cgroup_id);
	if (s->ctr && s->ctr->json[0]) {
		jkey(f, &first, "container");
		fputs(s->ctr->json, f);
	}

	jkey(f, &first, "policy");
	fo = true;
	fputc('{', f);
	jkstr(f, &fo, "name", s->policy_name);
	if (p && p->category)
		jkstr(f, &fo, "category", p->category);
	if (p)
		jkstr(f, &fo, "file", p->file);
	snprintf(hex, sizeof(hex), "%016" PRIx64, s->hash);
	jkstr(f, &fo, "hash", hex);
	jkey(f, &fo, "generation");
	fprintf(f, "%u", s->generation);
	jkstr(f, &fo, "mode", s->audit ? "audit" : "enforce");
	jkey(f, &fo, "record_found");
	fprintf(f, "%s}", p ? "true" : "false");

	jkey(f, &first, "privileges");
	fo = true;
	fputc('{', f);
	jkey(f, &fo, "user_namespaces_allowed");
	fputs(s->userns ? "true" : "false", f);
	if (s->caps_known) {
		jkey(f, &fo, "capabilities_allowed");
		fputc('[', f);
		for (i = 0, j = 0; i < 64; i++)
			if (s->caps & (1ULL << i)) {
				fputs(j++ ? "," : "", f);
				jstr(f, policy_cap_name((unsigned int)i));
			}
		fputc(']', f);
	}
	jkey(f, &fo, "processes");
	fputc('[', f);
	for (i = 0; i < s->n_procs; i++) {
		const struct mf_proc *pr = &s->procs[i];
		bool fp = true;

		fputs(i ? ",{" : "{", f);
		jkey(f, &fp, "pid");
		fprintf(f, "%d", pr->pid);
		if (pr->have_status) {
			jkstr(f, &fp, "name", pr->st.name);
			jkey(f, &fp, "uid");
			fprintf(f, "[%u,%u,%u,%u]", pr->st.uid[0], pr->st.uid[1], pr->st.uid[2], pr->st.uid[3]);
			jkey(f, &fp, "gid");
			fprintf(f, "[%u,%u,%u,%u]", pr->st.gid[0], pr->st.gid[1], pr->st.gid[2], pr->st.gid[3]);
			caps_hex(hex, pr->st.cap_eff);
			jkstr(f, &fp, "cap_eff", hex);
			caps_hex(hex, pr->st.cap_prm);
			jkstr(f, &fp, "cap_prm", hex);
			caps_hex(hex, pr->st.cap_bnd);
			jkstr(f, &fp, "cap_bnd", hex);
			caps_hex(hex, pr->st.cap_amb);
			jkstr(f, &fp, "cap_amb", hex);
			jkey(f, &fp, "no_new_privs");
			fputs(pr->st.no_new_privs == 1 ? "true" : pr->st.no_new_privs == 0 ? "false" : "null", f);
			jkey(f, &fp, "seccomp");
			if (pr->st.seccomp < 0)
				fputs("null", f);
			else
				jstr(f, pr->st.seccomp == 2 ? "filter" : pr->st.seccomp == 1 ? "strict" : "off");
		}
		fputc('}', f);
	}
	fputs("]}", f);

	jkey(f, &first, "credentials");
	fo = true;
	fputc('{', f);
	jkey(f, &fo, "environment");
	fputc('[', f);
	for (i = 0, j = 0; i < s->n_procs; i++) {
		size_t k;

		for (k = 0; k < s->procs[i].n_secret_env; k++) {
			bool fe = true;

			fputs(j++ ? ",{" : "{", f);
			jkey(f, &fe, "pid");
			fprintf(f, "%d", s->procs[i].pid);
			jkstr(f, &fe, "name", s->procs[i].secret_env[k]);
			jkey(f, &fe, "blocked");
			fputs("false", f);
			jverdict(f, &fe, 1, false);
			fputc('}', f);
		}
	}
	fputc(']', f);
	jkey(f, &fo, "paths");
	fputc('[', f);
	for (i = 0; i < s->n_paths; i++) {
		bool fe = true;

		fputs(i ? ",{" : "{", f);
		jkstr(f, &fe, "path", s->paths[i].path);
		jkey(f, &fe, "pid");
		fprintf(f, "%d", s->paths[i].pid);
		jkey(f, &fe, "blocked");
		fputs(s->paths[i].blocked ? "true" : "false", f);
		jverdict(f, &fe, 1, s->paths[i].blocked);
		fputc('}', f);
	}
	fputs("]}", f);

	jkey(f, &first, "egress");
	fo = true;
	fputc('{', f);
	jkstr(f, &fo, "default", s->default_allow ? "allow" : "deny");
	jverdict(f, &fo, 2, !s->default_allow);
	jkey(f, &fo, "allow");
	fputc('[', f);
	for (i = 0; p && i < p->n_allow; i++) {
		bool fe = true;

		fputs(i ? ",{" : "{", f);
		jkstr(f, &fe, "rule", p->allow[i].what);
		if (p->allow[i].reason)
			jkstr(f, &fe, "reason", p->allow[i].reason);
		jverdict(f, &fe, 2, p->allow[i].reason != NULL);
		fputc('}', f);
	}
	fputs("],", f);
	fo = true;
	jkey(f, &fo, "metadata_endpoints");
	fputc('[', f);
	for (i = 0; i < policy_n_meta_endpoints; i++) {
		const struct policy_endpoint *e = &policy_meta_endpoints[i];
		bool fe = true, open = meta_open(p, e);

		fputs(i ? ",{" : "{", f);
		jkstr(f, &fe, "endpoint", e->text);
		jkstr(f, &fe, "state", open ? "opened by an override" : "denied");
		jkey(f, &fe, "forms");
		meta_forms(f, e);
		jverdict(f, &fe, 1, !open && p);
		fputc('}', f);
	}
	fputc(']', f);
	jkey(f, &fo, "overrides");
	fputc('[', f);
	for (i = 0; p && i < p->n_net_overrides; i++) {
		bool fe = true;

		fputs(i ? ",{" : "{", f);
		jkstr(f, &fe, "endpoint", p->net_overrides[i].what);
		jkstr(f, &fe, "reason", p->net_overrides[i].reason);
		jverdict(f, &fe, 1, false);
		fputc('}', f);
	}
	fputs("]}", f);

	jkey(f, &first, "filesystem");
	fo = true;
	fputc('{', f);
	jkey(f, &fo, "enforced");
	fputs(h->bpf_lsm && !s->audit ? "true" : "false", f);
	if (p && p->has_read)
		jstrv(f, &fo, "read", p->read, p->n_read);
	else {
		jkey(f, &fo, "read");
		fputs("\"everywhere\"", f);
	}
	jstrv(f, &fo, "write", p ? p->write : NULL, p ? p->n_write : 0);
	jstrv(f, &fo, "deny", p ? p->deny : NULL, p ? p->n_deny : 0);
	exec_json(f, &fo, p);
	jkey(f, &fo, "protected_overrides");
	fputc('[', f);
	for (i = 0; p && i < p->n_file_overrides; i++) {
		bool fe = true;

		fputs(i ? ",{" : "{", f);
		jkstr(f, &fe, "path", p->file_overrides[i].what);
		jkstr(f, &fe, "reason", p->file_overrides[i].reason);
		fputc('}', f);
	}
	fputc(']', f);
	jkey(f, &fo, "mounts");
	fputc('[', f);
	for (i = 0; i < s->n_mounts; i++) {
		bool fe = true;

		fputs(i ? ",{" : "{", f);
		jkstr(f, &fe, "mount_point", s->mounts[i].point);
		jkstr(f, &fe, "fstype", s->mounts[i].fstype);
		jkstr(f, &fe, "source", s->mounts[i].source);
		jkstr(f, &fe, "mode", s->mounts[i].ro ? "ro" : "rw");
		fputc('}', f);
	}
	fputc(']', f);
	if (s->n_mounts) {
		jkey(f, &fo, "mounts_of_pid");
		fprintf(f, "%d", s->mounts_pid);
	}
	jkey(f, &fo, "writable_shared_with");
	fputc('[', f);
	for (i = 0; i < s->n_shared; i++) {
		bool fe = true;

		fputs(i ? ",{" : "{", f);
		jkstr(f, &fe, "cgroup", s->shared[i].cgroup);
		jkstr(f, &fe, "policy", s->shared[i].policy);
		jkstr(f, &fe, "path", s->shared[i].path);
		jverdict(f, &fe, 3, false);
		fputc('}', f);
	}
	fputs("]}", f);

	jkey(f, &first, "limits");
	fo = true;
	fputc('{', f);
	jkstr(f, &fo, "cpu.max", s->cpu_max);
	jkstr(f, &fo, "memory.max", s->memory_max);
	jkstr(f, &fo, "memory.swap.max", s->memory_swap_max);
	jkstr(f, &fo, "pids.max", s->pids_max);
	jkey(f, &fo, "runtime_ms");
	if (s->runtime_set)
		fprintf(f, "%" PRIu64, s->runtime_ms);
	else
		fputs("null", f);
	jkstr(f, &fo, "runtime_from", s->runtime_from_agent ? "agent" : "none");
	jverdict(f, &fo, 4, s->pass[4]);
	fputc('}', f);

	jkey(f, &first, "points");
	fputc('[', f);
	for (pt = 1; pt <= MF_POINTS; pt++) {
		bool fe = true;

		fputs(pt > 1 ? ",{" : "{", f);
		jverdict(f, &fe, pt, s->pass[pt]);
		jkstr(f, &fe, "title", point_name[pt]);
		jkstr(f, &fe, "why", s->why[pt]);
		fputc('}', f);
	}
	fputs("]}", f);
}

bool mf_render_json(FILE *f, const struct mf_host *h, struct mf_sandbox *v,
		    size_t n, const char *generated)
{
	bool first = true, fo = true, all = true;
	size_t i;
	int pt;

	for (i = 0; i < n; i++)
		for (pt = 1; pt <= MF_POINTS; pt++)
			all = all && v[i].pass[pt];
	if (!n)
		all = false;
	fputc('{', f);
	jkey(f, &first, "manifest_version");
	fputc('1', f);
	jkstr(f, &first, "generated", generated);
	jkey(f, &first, "host");
	fputc('{', f);
	jkstr(f, &fo, "hostname", h->hostname);
	jkstr(f, &fo, "kernel", h->kernel);
	jkey(f, &fo, "bpf_lsm");
	fputs(h->bpf_lsm ? "true" : "false", f);
	jkey(f, &fo, "degraded");
	fputc('[', f);
	for (i = 0; i < h->n_degraded; i++) {
		if (i)
			fputc(',', f);
		jstr(f, h->degraded[i]);
	}
	fputs("]}", f);
	jkey(f, &first, "boundary");
	fo = true;
	fputc('{', f);
	jkstr(f, &fo, "kind", MF_BOUNDARY_KIND);
	if (h->have_boundary) {
		jkstr(f, &fo, "name", h->boundary.name);
		jkstr(f, &fo, "architecture_record", h->boundary.record);
	} else {
		jkstr(f, &fo, "why", h->boundary_why);
	}
	jkstr(f, &fo, "file", h->boundary_file);
	jverdict(f, &fo, 5, h->have_boundary);
	fputc('}', f);
	jkey(f, &first, "sandboxes");
	fputc('[', f);
	for (i = 0; i < n; i++) {
		if (i)
			fputc(',', f);
		json_sandbox(f, h, &v[i]);
	}
	fputc(']', f);
	/* Each point over every sandbox shown, with the first failure:
	 * what `stockade report` turns into findings. */
	jkey(f, &first, "points");
	fputc('{', f);
	fo = true;
	for (pt = 1; pt <= MF_POINTS; pt++) {
		const struct mf_sandbox *bad = NULL;
		char k[4], why[512];
		bool fe = true;

		for (i = 0; i < n && !bad; i++)
			if (!v[i].pass[pt])
				bad = &v[i];
		snprintf(k, sizeof(k), "%d", pt);
		jkey(f, &fo, k);
		fputc('{', f);
		jkstr(f, &fe, "result", n && !bad ? "pass" : "fail");
		jkstr(f, &fe, "title", point_name[pt]);
		snprintf(why, sizeof(why), "%s%s%s", bad ? bad->cgroup : n ? "" : "no sandbox",
			 bad ? ": " : "", bad ? bad->why[pt] : "");
		jkstr(f, &fe, "why", why);
		fputc('}', f);
	}
	fputc('}', f);
	jkstr(f, &first, "result", all ? "pass" : "fail");
	fputs("}\n", f);
	return all;
}

/* ---- Markdown -------------------------------------------------------------- */

/* A table cell: '|' and newlines would break the row. */
static void md(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '|')
			fputs("\\|", f);
		else if (*s == '\n' || *s == '\r')
			fputc(' ', f);
		else
			fputc(*s, f);
	}
}

static const char *pf(bool ok)
{
	return ok ? "pass" : "**fail**";
}

bool mf_render_md(FILE *f, const struct mf_host *h, struct mf_sandbox *v,
		  size_t n, const char *generated)
{
	bool all = n > 0;
	size_t i, j, k;
	int pt;

	for (i = 0; i < n; i++)
		for (pt = 1; pt <= MF_POINTS; pt++)
			all = all && v[i].pass[pt];
	fprintf(f, "# Sandbox runtime manifest\n\n");
	fprintf(f, "- Generated: %s\n- Host: ", generated);
	md(f, h->hostname);
	fprintf(f, ", kernel ");
	md(f, h->kernel);
	fprintf(f, "\n- BPF-LSM: %s\n- Degraded: ", h->bpf_lsm ? "on" : "**off**");
	for (i = 0; i < h->n_degraded; i++)
		fprintf(f, "%s%s", i ? ", " : "", h->degraded[i]);
	fprintf(f, "%s\n- Boundary: %s; ", h->n_degraded ? "" : "none", MF_BOUNDARY_KIND);
	if (h->have_boundary) {
		fputs("name ", f);
		md(f, h->boundary.name);
		fputs(", architecture record ", f);
		md(f, h->boundary.record);
	} else {
		fputs("**no name**: ", f);
		md(f, h->boundary_why);
	}
	fprintf(f, " (point 5: %s)\n- Result: %s\n", pf(h->have_boundary), all ? "pass" : "**fail**");
	if (!n)
		fprintf(f, "\nNo sandbox is confined.\n");
	for (i = 0; i < n; i++) {
		const struct mf_sandbox *s = &v[i];
		const struct mf_policy *p = s->pol;

		fprintf(f, "\n## `");
		md(f, s->cgroup);
		fprintf(f, "`: policy %s, generation %u, hash %016" PRIx64 ", %s\n\n",
			s->policy_name, s->generation, s->hash, s->audit ? "audit" : "enforce");
		if (s->ctr) {
			fprintf(f, "Container: %s ", container__runtime_name(s->ctr->id.runtime));
			md(f, s->ctr->meta.name[0] ? s->ctr->meta.name : s->ctr->id.id);
			if (s->ctr->meta.image[0]) {
				fputs(", image ", f);
				md(f, s->ctr->meta.image);
			}
			if (s->ctr->meta.pod_name[0]) {
				fputs(", pod ", f);
				md(f, s->ctr->meta.pod_namespace);
				fputc('/', f);
				md(f, s->ctr->meta.pod_name);
			}
			fputs("\n\n", f);
		}
		if (p) {
			fputs("Category: ", f);
			md(f, p->category ? p->category : "(none)");
			fputs("; file: ", f);
			md(f, p->file);
			fputs("\n\n", f);
		}
		fprintf(f, "| Point | Verdict | Why |\n| --- | --- | --- |\n");
		for (pt = 1; pt <= MF_POINTS; pt++) {
			fprintf(f, "| %d %s | %s | ", pt, point_name[pt], pf(s->pass[pt]));
			md(f, s->why[pt]);
			fputs(" |\n", f);
		}
		fprintf(f, "\n### Privileges\n\nUser namespaces: %s.\n\n",
			s->userns ? "allowed" : "denied");
		fprintf(f, "| PID | Name | UID (r/e/s/fs) | GID | CapEff | CapPrm | CapBnd | CapAmb | NoNewPrivs | Seccomp |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
		for (j = 0; j < s->n_procs; j++) {
			const struct mf_status *st = &s->procs[j].st;

			if (!s->procs[j].have_status)
				continue;
			fprintf(f, "| %d | ", s->procs[j].pid);
			md(f, st->name);
			fprintf(f, " | %u/%u/%u/%u | %u/%u/%u/%u | %016" PRIx64 " | %016" PRIx64 " | %016" PRIx64 " | %016" PRIx64 " | %s | %s |\n",
				st->uid[0], st->uid[1], st->uid[2], st->uid[3],
				st->gid[0], st->gid[1], st->gid[2], st->gid[3],
				st->cap_eff, st->cap_prm, st->cap_bnd, st->cap_amb,
				st->no_new_privs == 1 ? "yes" : "no",
				st->seccomp == 2 ? "filter" : st->seccomp == 1 ? "strict" : "off");
		}
		fprintf(f, "\n### Ambient credentials (point 1)\n\n| Item | Where | Blocked | Verdict |\n| --- | --- | --- | --- |\n");
		for (j = 0; j < s->n_procs; j++)
			for (k = 0; k < s->procs[j].n_secret_env; k++) {
				fputs("| env ", f);
				md(f, s->procs[j].secret_env[k]);
				fprintf(f, " (name only) | pid %d | no | %s |\n", s->procs[j].pid, pf(false));
			}
		for (j = 0; j < s->n_paths; j++) {
			fputs("| ", f);
			md(f, s->paths[j].path);
			fprintf(f, " | pid %d's mounts | %s | %s |\n", s->paths[j].pid,
				s->paths[j].blocked ? "yes" : "no", pf(s->paths[j].blocked));
		}
		for (j = 0; p && j < p->n_net_overrides; j++) {
			fputs("| metadata ", f);
			md(f, p->net_overrides[j].what);
			fputs(" opened: ", f);
			md(f, p->net_overrides[j].reason);
			fprintf(f, " | network.overrides | no | %s |\n", pf(false));
		}
		fprintf(f, "\n### Egress (point 2)\n\nDefault: %s (%s).\n\n| Allowed | Reason | Verdict |\n| --- | --- | --- |\n",
			s->default_allow ? "allow" : "deny", pf(!s->default_allow));
		for (j = 0; p && j < p->n_allow; j++) {
			fputs("| ", f);
			md(f, p->allow[j].what);
			fputs(" | ", f);
			md(f, p->allow[j].reason ? p->allow[j].reason : "(none)");
			fprintf(f, " | %s |\n", pf(p->allow[j].reason != NULL));
		}
		fputs("\nMetadata endpoints (each also as ::ffff:, ::a.b.c.d, 64:ff9b:: and 2002: forms): ", f);
		for (j = 0; j < policy_n_meta_endpoints; j++)
			fprintf(f, "%s%s %s", j ? ", " : "", policy_meta_endpoints[j].text,
				meta_open(p, &policy_meta_endpoints[j]) ? "**opened**" : "denied");
		fprintf(f, ".\n\n### Filesystem (point 3)\n\nEnforced: %s. Read: ",
			h->bpf_lsm && !s->audit ? "yes" : "**no**");
		if (p && p->has_read)
			for (j = 0; j < p->n_read; j++)
				fprintf(f, "%s`%s`", j ? ", " : "", p->read[j]);
		else
			fputs("everywhere", f);
		fputs(". Write: ", f);
		for (j = 0; p && j < p->n_write; j++)
			fprintf(f, "%s`%s`", j ? ", " : "", p->write[j]);
		if (!p || !p->n_write)
			fputs("nowhere", f);
		fputs(". Deny: ", f);
		for (j = 0; p && j < p->n_deny; j++)
			fprintf(f, "%s`%s`", j ? ", " : "", p->deny[j]);
		if (!p || !p->n_deny)
			fputs("none", f);
		fputs(".\n", f);
		exec_md(f, p);
		for (j = 0; p && j < p->n_file_overrides; j++) {
			fputs("\n- protected path opened: `", f);
			md(f, p->file_overrides[j].what);
			fputs("`: ", f);
			md(f, p->file_overrides[j].reason);
		}
		fputs("\nWritable paths shared with: ", f);
		for (j = 0; j < s->n_shared; j++) {
			fprintf(f, "%s`", j ? ", " : "");
			md(f, s->shared[j].cgroup);
			fprintf(f, "` (%s, %s) **fail**", s->shared[j].policy, s->shared[j].path);
		}
		if (!s->n_shared)
			fputs("none", f);
		fprintf(f, "\n\n| Mount (pid %d) | Type | Mode |\n| --- | --- | --- |\n", s->mounts_pid);
		for (j = 0; j < s->n_mounts; j++) {
			fputs("| ", f);
			md(f, s->mounts[j].point);
			fputs(" | ", f);
			md(f, s->mounts[j].fstype);
			fprintf(f, " | %s |\n", s->mounts[j].ro ? "ro" : "rw");
		}
		fprintf(f, "\n### Limits (point 4: %s)\n\n| cpu.max | memory.max | memory.swap.max | pids.max | run time |\n| --- | --- | --- | --- | --- |\n| ",
			pf(s->pass[4]));
		md(f, s->cpu_max[0] ? s->cpu_max : "absent");
		fputs(" | ", f);
		md(f, s->memory_max[0] ? s->memory_max : "absent");
		fputs(" | ", f);
		md(f, s->memory_swap_max[0] ? s->memory_swap_max : "absent");
		fputs(" | ", f);
		md(f, s->pids_max[0] ? s->pids_max : "absent");
		if (s->runtime_set)
			fprintf(f, " | %" PRIu64 " ms |\n", s->runtime_ms);
		else
			fputs(" | none |\n", f);
	}
	return all;
}
