// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `stockade report [--probe CGROUP...] [--register FILE] [--log FILE]
 * --out DIR`, and `stockade report --verify DIR`: the three pieces of
 * evidence in one bundle (README, "Evidence for assessors"). Each piece
 * is the command an assessor would run, run by this binary itself
 * (/proc/self/exe), its machine output kept as a file of the bundle:
 *   manifest.json, manifest.md   stockade manifest
 *   probe-N.jsonl                stockade probe, one per --probe
 *   register.jsonl               stockade register check
 *   log-slice.jsonl              the agent's log over the run (--log)
 * then report.json (the canonical form: every verdict, and the pieces),
 * report.md (for people), oscal-assessment-results.json (OSCAL 1.1,
 * agent/report.c) and SHA256SUMS. --verify checks a bundle against its
 * SHA256SUMS. Exit: 0 every point of every piece passes, 3 one fails
 * (the bundle is still whole), 1 an error, 2 a usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"
#include "json.h"
#include "log.h"
#include "probe.h"
#include "report.h"

#define MAX_PROBES	16
#define MAX_FILES	(8 + MAX_PROBES)
#define MAX_OBS		512

struct ropts {
	const char *out, *reg, *log, *boundary, *bpffs, *cgroot, *state;
	const char *probes[MAX_PROBES];
	int n_probes;
	int timeout;
};

struct bundle {
	char files[MAX_FILES][64];
	int n_files;
	struct report_point pt[14];
	int n_pt;
	struct report_obs obs[MAX_OBS];
	size_t n_obs;
	char node[256], run[64], generated[40], start[40], end[40];
	int64_t start_ns;
};

static void now_text(char *buf, size_t len, int64_t *ns)
{
	struct timespec t;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &t);
	gmtime_r(&t.tv_sec, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (ns)
		*ns = (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Run this binary with args, stdout to DIR/out (NULL: inherited). Its
 * exit status, or -1 when it did not run. */
static int self(const char *dir, const char *out, char *const *args)
{
	char path[PATH_MAX + 64];
	int st, fd = -1;
	pid_t pid;

	if (out) {
		snprintf(path, sizeof(path), "%s/%s", dir, out);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		if (fd >= 0 && dup2(fd, STDOUT_FILENO) < 0)
			_exit(127);
		execv("/proc/self/exe", args);
		_exit(127);
	}
	if (fd >= 0)
		close(fd);
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* The common options every piece takes. */
static int common_args(const struct ropts *o, char **a, int n)
{
	if (o->bpffs) {
		a[n++] = "--bpffs";
		a[n++] = (char *)o->bpffs;
	}
	if (o->cgroot) {
		a[n++] = "--cgroup-root";
		a[n++] = (char *)o->cgroot;
	}
	if (o->state) {
		a[n++] = "--state";
		a[n++] = (char *)o->state;
	}
	return n;
}

static void add_file(struct bundle *b, const char *name)
{
	if (b->n_files < MAX_FILES)
		snprintf(b->files[b->n_files++], sizeof(b->files[0]), "%s", name);
}

static struct report_point *point(struct bundle *b, const char *id, const char *title)
{
	struct report_point *p = &b->pt[b->n_pt++];

	memset(p, 0, sizeof(*p));
	p->id = id;
	p->title = title;
	return p;
}

static void obs(struct bundle *b, bool test, const char *pt, const char *title,
		const char *desc)
{
	struct report_obs *o;

	if (b->n_obs == MAX_OBS)
		return;
	o = &b->obs[b->n_obs++];
	o->test = test;
	o->point = pt;
	snprintf(o->title, sizeof(o->title), "%.150s", title);
	snprintf(o->description, sizeof(o->description), "%s", desc);
}

/* A whole small file (NULL on error); *len its size. */
static char *slurp(const char *dir, const char *name, size_t *len)
{
	char path[PATH_MAX + 64], *buf;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) ||
	    !(buf = malloc((size_t)n + 1))) {
		fclose(f);
		return NULL;
	}
	*len = fread(buf, 1, (size_t)n, f);
	buf[*len] = '\0';
	fclose(f);
	return buf;
}

/* ---- the three pieces ---------------------------------------------------- */

static const char *const mf_titles[] = {
	NULL,
	"no ambient credentials",
	"egress denied by default, with named exceptions",
	"a filesystem read-only or scoped to the task, no writable path shared",
	"processor, memory and run-time limits set",
	"a boundary named in the architecture record",
};
static const char *const mf_ids[] = { NULL, "runtime-configuration.1", "runtime-configuration.2",
	"runtime-configuration.3", "runtime-configuration.4", "runtime-configuration.5" };

static int manifest(const struct ropts *o, struct bundle *b)
{
	char *a[16] = { "stockade", "manifest", "--out", NULL };
	char out[PATH_MAX + 32], *buf, key[4];
	const char *pts;
	size_t len;
	int n, rc, k;

	snprintf(out, sizeof(out), "%s/manifest.json", o->out);
	a[3] = out;
	n = common_args(o, a, 4);
	if (o->boundary) {
		a[n++] = "--boundary";
		a[n++] = (char *)o->boundary;
	}
	a[n] = NULL;
	rc = self(o->out, NULL, a);
	if (rc != 0 && rc != 3) {
		pr_err("report", "stockade manifest failed (exit %d, above); the report needs the runtime configuration", rc);
		return -EIO;
	}
	add_file(b, "manifest.json");
	snprintf(out, sizeof(out), "%s/manifest.md", o->out);
	{
		char *m[16] = { "stockade", "manifest", "--format", "md", "--out", out };

		n = common_args(o, m, 6);
		if (o->boundary) {
			m[n++] = "--boundary";
			m[n++] = (char *)o->boundary;
		}
		m[n] = NULL;
		if (self(o->out, NULL, m) >= 0)
			add_file(b, "manifest.md");
	}
	buf = slurp(o->out, "manifest.json", &len);
	pts = buf ? logrec_raw(buf, len, "points") : NULL;
	for (k = 1; k <= 5; k++) {
		struct report_point *p = point(b, mf_ids[k], mf_titles[k]);
		char result[8] = "", why[512] = "";

		snprintf(key, sizeof(key), "%d", k);
		if (pts) {
			const char *v = logrec_raw(pts, len - (size_t)(pts - buf), key);

			if (v) {
				logrec_str(v, len - (size_t)(v - buf), "result", result, sizeof(result));
				logrec_str(v, len - (size_t)(v - buf), "why", why, sizeof(why));
			}
		}
		p->shown = result[0];
		p->pass = !strcmp(result, "pass");
		snprintf(p->why, sizeof(p->why), "%s", p->pass ? "" : why[0] ? why : "not shown by the manifest");
		obs(b, false, p->id, mf_titles[k], p->pass ? "stockade manifest: pass" : p->why);
	}
	free(buf);
	return 0;
}

/* Probe attempts bear on the live test's points by their id. */
static const char *probe_point(const char *id)
{
	if (!strncmp(id, "credentials/", 12))
		return "live-test.1";
	if (!strncmp(id, "egress/", 7))
		return "live-test.2";
	if (!strncmp(id, "filesystem/", 11))
		return "live-test.3";
	if (!strncmp(id, "limits/", 7))
		return "live-test.4";
	return NULL;	/* the kernel doors: point 5 only */
}

static void probes(const struct ropts *o, struct bundle *b)
{
	static const char *const titles[] = {
		"an attempt to read the host credential endpoint fails",
		"a request to a destination outside the allow list is refused",
		"a write outside the scoped filesystem fails",
		"an execution that exceeds the run time or memory limit is terminated",
		"each attempt appears in the execution log with its denial",
	};
	static const char *const ids[] = { "live-test.1", "live-test.2", "live-test.3",
		"live-test.4", "live-test.5" };
	struct report_point *p[5];
	bool any[5] = { false }, ok[5] = { true, true, true, true, true };
	int i, k;

	for (k = 0; k < 5; k++)
		p[k] = point(b, ids[k], titles[k]);
	for (i = 0; i < o->n_probes; i++) {
		char name[32], tmo[16], *a[20] = { "stockade", "probe", "--format", "json",
						   "--log", (char *)o->log, "--timeout", tmo };
		char *buf, *line, *save = NULL;
		size_t len;
		int n, rc;

		snprintf(tmo, sizeof(tmo), "%d", o->timeout);
		snprintf(name, sizeof(name), "probe-%d.jsonl", i + 1);
		n = common_args(o, a, 8);
		a[n++] = (char *)o->probes[i];
		a[n] = NULL;
		rc = self(o->out, name, a);
		add_file(b, name);
		if (rc != 0 && rc != 3) {
			for (k = 0; k < 5; k++)
				ok[k] = false;
			snprintf(p[4]->why, sizeof(p[4]->why), "stockade probe %s failed (exit %d)", o->probes[i], rc);
			continue;
		}
		buf = slurp(o->out, name, &len);
		for (line = buf ? strtok_r(buf, "\n", &save) : NULL; line;
		     line = strtok_r(NULL, "\n", &save)) {
			char id[96] = "", res[16] = "", call[192] = "", why[256] = "", t[200], d[512];
			const char *pt;
			size_t ll = strlen(line);

			if (!logrec_str(line, ll, "attempt", id, sizeof(id)))
				continue;
			logrec_str(line, ll, "result", res, sizeof(res));
			logrec_str(line, ll, "call", call, sizeof(call));
			logrec_str(line, ll, "why", why, sizeof(why));
			if (!strcmp(res, "absent"))
				continue;
			pt = probe_point(id);
			k = pt ? pt[10] - '1' : -1;
			if (k >= 0) {
				any[k] = true;
				if (strcmp(res, "pass")) {
					ok[k] = false;
					if (!p[k]->why[0])
						snprintf(p[k]->why, sizeof(p[k]->why), "%s %s: %s", o->probes[i], id, why);
				}
			}
			/* Point 5: every refusal recorded. */
			if (strcmp(res, "pass") && strstr(why, "record")) {
				ok[4] = false;
				if (!p[4]->why[0])
					snprintf(p[4]->why, sizeof(p[4]->why), "%s %s: %s", o->probes[i], id, why);
			}
			any[4] = true;
			snprintf(t, sizeof(t), "probe %s: %s", o->probes[i], id);
			snprintf(d, sizeof(d), "%s: %s%s%s", call, res, why[0] ? ": " : "", why);
			obs(b, true, pt ? pt : "live-test.5", t, d);
		}
		free(buf);
	}
	for (k = 0; k < 5; k++) {
		p[k]->shown = any[k];
		p[k]->pass = any[k] && ok[k];
		if (!any[k] && !p[k]->why[0])
			snprintf(p[k]->why, sizeof(p[k]->why), "%s", o->n_probes ?
				 "no attempt bore on this point (for limits: set limits.runtime or limits.memory)" :
				 "no probe was run (--probe CGROUP)");
	}
}

static void reg(const struct ropts *o, struct bundle *b)
{
	static const char *const titles[] = {
		"each category a running service executes appears in the register",
		"each entry names its conditions and the environment that confines it",
		"each entry carries an approver and a date",
		"no service executes a category absent from the register, tested against the execution log",
	};
	static const char *const ids[] = { "code-register.1", "code-register.2",
		"code-register.3", "code-register.4" };
	struct report_point *p[4];
	char *buf = NULL, *line, *save = NULL, first[384] = "";
	bool loaded = false, pass = false;
	size_t len;
	int k, rc = -1;

	for (k = 0; k < 4; k++)
		p[k] = point(b, ids[k], titles[k]);
	if (o->reg && o->log) {
		char *a[12] = { "stockade", "register", "check", (char *)o->reg, "--log",
				(char *)o->log, "--format", "json", NULL };

		rc = self(o->out, "register.jsonl", a);
		add_file(b, "register.jsonl");
		buf = slurp(o->out, "register.jsonl", &len);
	}
	for (line = buf ? strtok_r(buf, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
		char res[8] = "", prob[384] = "";
		size_t ll = strlen(line);

		if (logrec_str(line, ll, "result", res, sizeof(res))) {
			loaded = true;
			pass = !strcmp(res, "pass");
		}
		if (logrec_str(line, ll, "problem", prob, sizeof(prob))) {
			if (!first[0])
				snprintf(first, sizeof(first), "%s", prob);
			obs(b, false, "code-register.4", "register check problem", prob);
		}
	}
	free(buf);
	/* Loaded at all: the loader requires conditions, environment,
	 * approver and date of every entry (points 2 and 3). */
	for (k = 0; k < 4; k++) {
		p[k]->shown = loaded;
		p[k]->pass = loaded && (k == 1 || k == 2 || pass);
		if (!loaded)
			snprintf(p[k]->why, sizeof(p[k]->why), "%s", !o->reg ? "no register given (--register FILE)" :
				 !o->log ? "no log given (--log FILE)" : rc == 1 ? "the register is invalid (stockade check REGISTER)" :
				 "stockade register check failed");
		else if (!p[k]->pass)
			snprintf(p[k]->why, sizeof(p[k]->why), "%s", first);
	}
	obs(b, false, "code-register.2", "the register loaded", loaded ? "every entry has category, description, conditions, environment, approver and approved" : p[1]->why);
}

/* The log over the run (since its start), as it was. */
static void log_slice(const struct ropts *o, struct bundle *b)
{
	char path[PATH_MAX + 32], *line = NULL;
	FILE *in, *out;
	size_t cap = 0;
	ssize_t n;

	if (!o->log || !(in = fopen(o->log, "re")))
		return;
	snprintf(path, sizeof(path), "%s/log-slice.jsonl", o->out);
	out = fopen(path, "we");
	if (!out) {
		fclose(in);
		return;
	}
	while ((n = getline(&line, &cap, in)) > 0) {
		char ts[48];

		if (logrec_str(line, (size_t)n, "ts", ts, sizeof(ts)) &&
		    probe_parse_ts(ts) >= b->start_ns - 1000000000)
			fwrite(line, 1, (size_t)n, out);
	}
	free(line);
	fclose(in);
	if (!fclose(out))
		add_file(b, "log-slice.jsonl");
}

/* ---- writing ------------------------------------------------------------- */

static bool piece_pass(const struct bundle *b, const char *prefix)
{
	int i;

	for (i = 0; i < b->n_pt; i++)
		if (!strncmp(b->pt[i].id, prefix, strlen(prefix)) &&
		    (!b->pt[i].pass || !b->pt[i].shown))
			return false;
	return true;
}

static void write_json(FILE *f, const struct bundle *b, const struct ropts *o)
{
	static const char *const pieces[] = { "runtime-configuration", "live-test", "code-register" };
	struct json j;
	char *buf;
	size_t len;
	int i, k;

	json_init(&j);
	json_begin(&j);
	json_u64(&j, "report_version", 1);
	json_str(&j, "generated", b->generated);
	json_str(&j, "node", b->node);
	json_str(&j, "run", b->run);
	json_str(&j, "control", "APP-016 Sandboxed Execution of Untrusted Code");
	fwrite(j.buf, 1, j.len, f);
	fputs(",\"evidence\":{", f);
	for (k = 0; k < 3; k++) {
		bool first = true;

		fprintf(f, "%s\"%s\":{\"result\":\"%s\",\"points\":[", k ? "," : "", pieces[k],
			piece_pass(b, pieces[k]) ? "pass" : "fail");
		for (i = 0; i < b->n_pt; i++) {
			if (strncmp(b->pt[i].id, pieces[k], strlen(pieces[k])))
				continue;
			json_begin(&j);
			json_str(&j, "point", b->pt[i].id);
			json_str(&j, "title", b->pt[i].title);
			json_str(&j, "result", b->pt[i].pass && b->pt[i].shown ? "pass" : "fail");
			if (b->pt[i].why[0])
				json_str(&j, "why", b->pt[i].why);
			json_end(&j);
			fprintf(f, "%s%.*s", first ? "" : ",", (int)j.len - 1, j.buf);
			first = false;
		}
		fputs("]}", f);
	}
	fputs("}", f);
	/* The pieces themselves. */
	buf = slurp(o->out, "manifest.json", &len);
	if (buf && len > 1) {
		fputs(",\"manifest\":", f);
		fwrite(buf, 1, buf[len - 1] == '\n' ? len - 1 : len, f);
	}
	free(buf);
	fputs(",\"files\":[", f);
	for (i = 0; i < b->n_files; i++)
		fprintf(f, "%s\"%s\"", i ? "," : "", b->files[i]);
	fputs("]}\n", f);
	json_free(&j);
}

static void write_md(FILE *f, const struct bundle *b)
{
	static const char *const pieces[] = { "runtime-configuration", "live-test", "code-register" };
	static const char *const names[] = {
		"Runtime configuration of the confined environment (`stockade manifest`)",
		"Live test of the confinement (`stockade probe`)",
		"Register of permitted external code (`stockade register check`)",
	};
	int i, k;

	fprintf(f, "# APP-016 evidence: %s\n\nGenerated %s by stockade (run %s). The files of this bundle and their SHA-256 are in `SHA256SUMS`; `stockade report --verify DIR` checks them.\n",
		b->node, b->generated, b->run);
	for (k = 0; k < 3; k++) {
		fprintf(f, "\n## %d. %s: %s\n\n| point | verdict | why |\n| --- | --- | --- |\n", k + 1, names[k],
			piece_pass(b, pieces[k]) ? "**pass**" : "**FAIL**");
		for (i = 0; i < b->n_pt; i++) {
			if (strncmp(b->pt[i].id, pieces[k], strlen(pieces[k])))
				continue;
			fprintf(f, "| %s %s | %s | %s |\n", b->pt[i].id + strlen(pieces[k]) + 1, b->pt[i].title,
				b->pt[i].pass && b->pt[i].shown ? "pass" : "fail", b->pt[i].why);
		}
	}
	fputs("\n## Files\n\n", f);
	for (i = 0; i < b->n_files; i++)
		fprintf(f, "- `%s`\n", b->files[i]);
}

static int write_file(const char *dir, const char *name, struct bundle *b,
		      const struct ropts *o, int which)
{
	struct report_res res[MAX_FILES];
	struct report_doc d = { 0 };
	char path[PATH_MAX + 64];
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "we");
	if (!f) {
		pr_err("report", "cannot write %s: %s", path, strerror(errno));
		return -errno;
	}
	if (which == 0) {
		write_json(f, b, o);
	} else if (which == 1) {
		write_md(f, b);
	} else {
		for (i = 0; i < b->n_files; i++) {
			char p2[PATH_MAX + 64];

			snprintf(res[i].title, sizeof(res[i].title), "%s", b->files[i]);
			snprintf(res[i].href, sizeof(res[i].href), "%s", b->files[i]);
			snprintf(p2, sizeof(p2), "%s/%s", dir, b->files[i]);
			if (report_sha256_file(p2, res[i].sha256))
				snprintf(res[i].sha256, sizeof(res[i].sha256), "%064d", 0);
		}
		d = (struct report_doc){ .node = b->node, .run = b->run, .generated = b->generated,
					 .start = b->start, .end = b->end, .pt = b->pt,
					 .n_pt = (size_t)b->n_pt, .obs = b->obs, .n_obs = b->n_obs,
					 .res = res, .n_res = (size_t)b->n_files };
		report_oscal(f, &d);
	}
	if (fclose(f)) {
		pr_err("report", "writing %s failed: %s", path, strerror(errno));
		return -EIO;
	}
	add_file(b, name);
	return 0;
}

static int write_sums(const char *dir, const struct bundle *b)
{
	char path[PATH_MAX + 64], sum[65];
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "%s/SHA256SUMS", dir);
	f = fopen(path, "we");
	if (!f)
		return -errno;
	for (i = 0; i < b->n_files; i++) {
		char p2[PATH_MAX + 64];

		snprintf(p2, sizeof(p2), "%s/%s", dir, b->files[i]);
		if (report_sha256_file(p2, sum)) {
			fclose(f);
			return -EIO;
		}
		fprintf(f, "%s  %s\n", sum, b->files[i]);
	}
	return fclose(f) ? -EIO : 0;
}

static int verify(const char *dir)
{
	char path[PATH_MAX + 64], line[512], sum[65];
	int bad = 0, n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/SHA256SUMS", dir);
	f = fopen(path, "re");
	if (!f) {
		pr_err("report", "%s: %s; a bundle of stockade report has one", path, strerror(errno));
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		char want[65], name[256], p2[PATH_MAX + 300];

		if (sscanf(line, "%64s  %255s", want, name) != 2 || strchr(name, '/')) {
			printf("FAIL: malformed line in SHA256SUMS: %s", line);
			bad++;
			continue;
		}
		n++;
		snprintf(p2, sizeof(p2), "%s/%s", dir, name);
		if (report_sha256_file(p2, sum)) {
			printf("FAIL %s: cannot be read\n", name);
			bad++;
		} else if (strcmp(sum, want)) {
			printf("FAIL %s: SHA-256 %s, SHA256SUMS says %s\n", name, sum, want);
			bad++;
		} else {
			printf("ok %s\n", name);
		}
	}
	fclose(f);
	printf("stockade report --verify: %d file(s), %d changed or missing: %s\n", n, bad,
	       bad || !n ? "FAIL" : "the bundle is as written");
	return bad || !n ? 3 : 0;
}

int ctl__report(int argc, char **argv)
{
	enum { OPT_OUT = 256, OPT_PROBE, OPT_REG, OPT_LOG, OPT_VERIFY, OPT_BOUNDARY,
	       OPT_BPFFS, OPT_CGROOT, OPT_STATE, OPT_TIMEOUT };
	static const struct option opts[] = {
		{ "out", required_argument, NULL, OPT_OUT },
		{ "probe", required_argument, NULL, OPT_PROBE },
		{ "register", required_argument, NULL, OPT_REG },
		{ "log", required_argument, NULL, OPT_LOG },
		{ "verify", required_argument, NULL, OPT_VERIFY },
		{ "boundary", required_argument, NULL, OPT_BOUNDARY },
		{ "bpffs", required_argument, NULL, OPT_BPFFS },
		{ "cgroup-root", required_argument, NULL, OPT_CGROOT },
		{ "state", required_argument, NULL, OPT_STATE },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ NULL, 0, NULL, 0 },
	};
	struct ropts o = { .timeout = 10 };
	struct bundle *b;
	char run_name[320];
	int k, rc;
	bool all;

	optind = 1;
	while ((k = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (k) {
		case OPT_OUT: o.out = optarg; break;
		case OPT_PROBE:
			if (o.n_probes == MAX_PROBES) {
				fprintf(stderr, "stockade report: at most %d --probe\n", MAX_PROBES);
				return 2;
			}
			o.probes[o.n_probes++] = optarg;
			break;
		case OPT_REG: o.reg = optarg; break;
		case OPT_LOG: o.log = optarg; break;
		case OPT_VERIFY: return verify(optarg);
		case OPT_BOUNDARY: o.boundary = optarg; break;
		case OPT_BPFFS: o.bpffs = optarg; break;
		case OPT_CGROOT: o.cgroot = optarg; break;
		case OPT_STATE: o.state = optarg; break;
		case OPT_TIMEOUT: o.timeout = atoi(optarg); break;
		default: goto usage;
		}
	}
	if (optind != argc || !o.out || o.timeout <= 0 || (o.n_probes && !o.log))
		goto usage;
	if (mkdir(o.out, 0755) && errno != EEXIST) {
		pr_err("report", "cannot create %s: %s", o.out, strerror(errno));
		return 1;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return 1;
	gethostname(b->node, sizeof(b->node) - 1);
	now_text(b->start, sizeof(b->start), &b->start_ns);
	snprintf(b->generated, sizeof(b->generated), "%s", b->start);
	/* Deterministic ids from the node and the run (its start). */
	snprintf(run_name, sizeof(run_name), "%s@%" PRId64, b->node, b->start_ns);
	report_uuid5(REPORT_UUID_NS, run_name, b->run);
	rc = 1;
	if (manifest(&o, b))
		goto out;
	probes(&o, b);
	reg(&o, b);
	now_text(b->end, sizeof(b->end), NULL);
	log_slice(&o, b);
	if (write_file(o.out, "oscal-assessment-results.json", b, &o, 2) ||
	    write_file(o.out, "report.md", b, &o, 1) ||
	    write_file(o.out, "report.json", b, &o, 0) || write_sums(o.out, b))
		goto out;
	all = piece_pass(b, "runtime-configuration") && piece_pass(b, "live-test") &&
	      piece_pass(b, "code-register");
	printf("stockade report: %s (runtime configuration %s, live test %s, code register %s); the bundle is in %s\n",
	       all ? "every point passes" : "FAIL",
	       piece_pass(b, "runtime-configuration") ? "pass" : "fail",
	       piece_pass(b, "live-test") ? "pass" : "fail",
	       piece_pass(b, "code-register") ? "pass" : "fail", o.out);
	rc = all ? 0 : 3;
out:
	free(b);
	return rc;
usage:
	fprintf(stderr, "usage: stockade report --out DIR [--probe CGROUP|POLICY...] [--register FILE] [--log FILE]\n"
		"                       [--boundary FILE] [--timeout S] [--bpffs DIR] [--cgroup-root DIR] [--state FILE]\n"
		"       stockade report --verify DIR\n"
		"  --probe needs --log (the agent's --log FILE, where each refusal's record is)\n");
	return 2;
}
