// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The log judged against the code register (agent/register_check.h). */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json.h"
#include "probe.h"
#include "register_check.h"

/* What the log said of a policy, by name: its latest `policy` record. */
struct pol_seen {
	char name[64];
	char hash[20];
	char category[128];
	unsigned int limits;	/* enum register_limit */
};

struct state {
	struct reg_report *rep;
	struct pol_seen *pol;
	size_t n_pol, cap_pol;
	uint64_t *seqs;
	size_t n_seqs, cap_seqs;
};

static bool grow(void **v, size_t *cap, size_t n, size_t size)
{
	size_t c = *cap ? *cap * 2 : 64;
	void *nv;

	if (n < *cap)
		return true;
	nv = realloc(*v, c * size);
	if (!nv)
		return false;
	*v = nv;
	*cap = c;
	return true;
}

static void __attribute__((format(printf, 4, 5)))
problem(struct state *s, uint64_t seq, int64_t ts, const char *fmt, ...)
{
	struct reg_report *rep = s->rep;
	char msg[sizeof(rep->p[0].msg)];
	struct reg_problem *np;
	va_list ap;
	size_t i;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (i = 0; i < rep->n_p; i++) {
		if (!strcmp(rep->p[i].msg, msg)) {
			rep->p[i].count++;
			return;
		}
	}
	np = realloc(rep->p, (rep->n_p + 1) * sizeof(*np));
	if (!np) {
		rep->err = -ENOMEM;
		return;
	}
	rep->p = np;
	np = &rep->p[rep->n_p++];
	memset(np, 0, sizeof(*np));
	snprintf(np->msg, sizeof(np->msg), "%s", msg);
	np->first_seq = seq;
	np->first_ts = ts;
	np->count = 1;
}

static struct pol_seen *pol_of(struct state *s, const char *name, bool add)
{
	size_t i;

	for (i = 0; i < s->n_pol; i++)
		if (!strcmp(s->pol[i].name, name))
			return &s->pol[i];
	if (!add || !grow((void **)&s->pol, &s->cap_pol, s->n_pol, sizeof(*s->pol)))
		return NULL;
	memset(&s->pol[s->n_pol], 0, sizeof(*s->pol));
	snprintf(s->pol[s->n_pol].name, sizeof(s->pol[0].name), "%s", name);
	return &s->pol[s->n_pol++];
}

static struct reg_coverage *cov_of(struct state *s, const char *category)
{
	struct reg_report *rep = s->rep;
	struct reg_coverage *nc;
	size_t i;

	for (i = 0; i < rep->n_c; i++)
		if (!strcmp(rep->c[i].category, category))
			return &rep->c[i];
	nc = realloc(rep->c, (rep->n_c + 1) * sizeof(*nc));
	if (!nc) {
		rep->err = -ENOMEM;
		return NULL;
	}
	rep->c = nc;
	nc = &rep->c[rep->n_c++];
	memset(nc, 0, sizeof(*nc));
	snprintf(nc->category, sizeof(nc->category), "%s", category);
	return nc;
}

static void cov_add(struct state *s, const char *category, const char *cgroup,
		    bool exec, int64_t ts)
{
	struct reg_coverage *c = cov_of(s, category);
	char **nv;
	size_t i;

	if (!c)
		return;
	if (exec)
		c->execs++;
	else
		c->attaches++;
	if (!c->first_ts || ts < c->first_ts)
		c->first_ts = ts;
	if (ts > c->last_ts)
		c->last_ts = ts;
	for (i = 0; i < c->n_cgroups; i++)
		if (!strcmp(c->cgroups[i], cgroup))
			return;
	nv = realloc(c->cgroups, (c->n_cgroups + 1) * sizeof(*nv));
	if (!nv || !(nv[c->n_cgroups] = strdup(cgroup))) {
		if (nv)
			c->cgroups = nv;
		s->rep->err = -ENOMEM;
		return;
	}
	c->cgroups = nv;
	c->n_cgroups++;
}

static unsigned int limits_of(const char *line, size_t len)
{
	static const char *const names[] = { "\"cpu\"", "\"memory\"", "\"pids\"", "\"runtime\"" };
	const char *v = logrec_raw(line, len, "limits"), *end;
	unsigned int m = 0;
	size_t i;

	if (!v || *v != '[')
		return 0;
	end = memchr(v, ']', len - (size_t)(v - line));
	for (i = 0; end && i < 4; i++) {
		const char *p = v;
		size_t k = strlen(names[i]);

		for (; p + k <= end; p++)
			if (!memcmp(p, names[i], k)) {
				m |= 1u << i;
				break;
			}
	}
	return m;
}

/* Is cgroup the environment selector's, or below one it selects? */
static bool in_environment(const char *sel, const char *cgroup)
{
	char buf[512];
	size_t n = strlen(cgroup);

	if (n >= sizeof(buf))
		return false;
	memcpy(buf, cgroup, n + 1);
	for (;;) {
		char *slash;

		if (!fnmatch(sel, buf, FNM_PATHNAME))
			return true;
		slash = strrchr(buf, '/');
		if (!slash || slash == buf)
			return false;
		*slash = '\0';
	}
}

static bool names_policy(const struct register_entry *e, const char *name,
			 const char *hash)
{
	size_t i;

	for (i = 0; i < e->n_policies; i++)
		if (!strcmp(e->policies[i], name) || (hash[0] && !strcmp(e->policies[i], hash)))
			return true;
	return false;
}

static const char *limit_name(unsigned int bit)
{
	switch (bit) {
	case REG_LIMIT_CPU: return "cpu";
	case REG_LIMIT_MEMORY: return "memory";
	case REG_LIMIT_PIDS: return "pids";
	default: return "runtime";
	}
}

/* One exec or attach record of the period. */
static void judge(struct state *s, const struct code_register *r,
		  const char *line, size_t len, bool exec, uint64_t seq, int64_t ts)
{
	char policy[64] = "", cgroup[256] = "", cat[128] = "", hash[20] = "";
	const struct register_entry *e;
	const struct pol_seen *ps;
	const char *what = exec ? "an exec" : "a sandbox";
	unsigned int miss, b;

	logrec_str(line, len, "policy", policy, sizeof(policy));
	logrec_str(line, len, "cgroup", cgroup, sizeof(cgroup));
	ps = pol_of(s, policy, false);
	if (exec) {
		logrec_str(line, len, "category", cat, sizeof(cat));
		logrec_str(line, len, "policy_hash", hash, sizeof(hash));
	} else if (ps) {
		snprintf(cat, sizeof(cat), "%s", ps->category);
		snprintf(hash, sizeof(hash), "%s", ps->hash);
	}
	if (!cat[0]) {
		problem(s, seq, ts, "%s under policy %s (%s) has no category%s: every category must be in the register",
			what, policy, cgroup, !exec && !ps ? " (no policy record of it in the log)" : "");
		return;
	}
	cov_add(s, cat, cgroup, exec, ts);
	e = register__find(r, cat);
	if (!e) {
		problem(s, seq, ts, "category '%s' (policy %s) is not in the register", cat, policy);
		return;
	}
	if (ts && ts / 1000000000 < e->approved_s)
		problem(s, seq, ts, "category '%s' ran before its approval", cat);
	if (ts && e->expires_s && ts / 1000000000 >= e->expires_s)
		problem(s, seq, ts, "category '%s' ran after its entry expired", cat);
	if (!names_policy(e, policy, hash))
		problem(s, seq, ts, "category '%s' ran under policy %s (hash %s), which its entry does not name",
			cat, policy, hash[0] ? hash : "unknown");
	if (!in_environment(e->environment, cgroup))
		problem(s, seq, ts, "category '%s' ran in %s, outside its environment %s",
			cat, cgroup, e->environment);
	if (!e->limits)
		return;
	if (!ps) {
		problem(s, seq, ts, "policy %s: no policy record in the log before it, so its limits cannot be shown",
			policy);
		return;
	}
	miss = e->limits & ~ps->limits;
	for (b = 1; b <= REG_LIMIT_RUNTIME; b <<= 1)
		if (miss & b)
			problem(s, seq, ts, "category '%s' requires a %s limit; policy %s sets none",
				cat, limit_name(b), policy);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void seq_accounting(struct state *s)
{
	struct reg_report *rep = s->rep;
	uint64_t distinct = 0, first_gap = 0;
	size_t i;

	if (!s->n_seqs)
		return;
	qsort(s->seqs, s->n_seqs, sizeof(*s->seqs), cmp_u64);
	rep->seq_min = s->seqs[0];
	rep->seq_max = s->seqs[s->n_seqs - 1];
	for (i = 0; i < s->n_seqs; i++) {
		if (i && s->seqs[i] == s->seqs[i - 1])
			continue;	/* written twice after a SIGKILL */
		if (i && s->seqs[i] > s->seqs[i - 1] + 1 && !first_gap)
			first_gap = s->seqs[i - 1] + 1;
		distinct++;
	}
	rep->seq_missing = rep->seq_max - rep->seq_min + 1 - distinct;
	if (rep->seq_missing > rep->seq_accounted)
		problem(s, first_gap, 0, "%" PRIu64 " sequence number(s) between %" PRIu64 " and %" PRIu64 " are missing and only %" PRIu64 " are accounted for by lost records: records were lost silently, or the log was cut",
			rep->seq_missing, rep->seq_min, rep->seq_max, rep->seq_accounted);
}

int register__check(const struct code_register *r, FILE *log, int64_t since,
		    int64_t until, struct reg_report *out)
{
	struct state s = { .rep = out };
	char *line = NULL, ev[24], ts_s[48];
	size_t cap = 0;
	ssize_t n;

	memset(out, 0, sizeof(*out));
	while (!out->err && (n = getline(&line, &cap, log)) > 0) {
		size_t len = (size_t)n;
		uint64_t seq, x;
		int64_t ts = 0;
		bool in;

		if (!logrec_str(line, len, "event", ev, sizeof(ev)))
			continue;
		if (logrec_str(line, len, "ts", ts_s, sizeof(ts_s)))
			ts = probe_parse_ts(ts_s);
		in = (!since || ts >= since) && (!until || ts <= until);
		/* log_lost, a note of this log file's with no seq: records
		 * its writes failed for (its file system full). */
		if (!strcmp(ev, "log_lost")) {
			if (in && logrec_u64(line, len, "count", &x))
				out->seq_accounted += x;
			continue;
		}
		if (!logrec_u64(line, len, "seq", &seq))
			continue;
		if (!strcmp(ev, "policy")) {
			char name[64] = "";
			struct pol_seen *ps = NULL;

			/* Before the period too: what was in force then. */
			if ((!until || ts <= until) &&
			    logrec_str(line, len, "policy", name, sizeof(name))) {
				ps = pol_of(&s, name, true);
				if (!ps) {
					out->err = -ENOMEM;
					break;
				}
				ps->hash[0] = ps->category[0] = '\0';
				logrec_str(line, len, "hash", ps->hash, sizeof(ps->hash));
				logrec_str(line, len, "category", ps->category, sizeof(ps->category));
				ps->limits = limits_of(line, len);
			}
		}
		if (!in)
			continue;
		out->records++;
		if (!grow((void **)&s.seqs, &s.cap_seqs, s.n_seqs, sizeof(*s.seqs))) {
			out->err = -ENOMEM;
			break;
		}
		s.seqs[s.n_seqs++] = seq;
		/* lost: records the log never got (the ring was full). */
		if (!strcmp(ev, "lost") && logrec_u64(line, len, "count", &x))
			out->seq_accounted += x;
		else if (!strcmp(ev, "pin_replace") && logrec_u64(line, len, "seq_unused", &x))
			out->seq_accounted += x;
		else if (!strcmp(ev, "exec"))
			out->execs++, judge(&s, r, line, len, true, seq, ts);
		else if (!strcmp(ev, "attach"))
			out->attaches++, judge(&s, r, line, len, false, seq, ts);
	}
	if (!out->err)
		seq_accounting(&s);
	free(line);
	free(s.pol);
	free(s.seqs);
	return out->err;
}

void reg_report__free(struct reg_report *rep)
{
	size_t i, k;

	for (i = 0; i < rep->n_c; i++) {
		for (k = 0; k < rep->c[i].n_cgroups; k++)
			free(rep->c[i].cgroups[k]);
		free(rep->c[i].cgroups);
	}
	free(rep->c);
	free(rep->p);
	memset(rep, 0, sizeof(*rep));
}

static void ts_text(int64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / 1000000000);
	struct tm tm;

	if (!ns || !gmtime_r(&t, &tm))
		snprintf(buf, len, "-");
	else
		strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

bool reg_report__print(FILE *f, const struct reg_report *rep, bool json)
{
	bool pass = !rep->n_p && rep->records;
	char a[32], b[32];
	struct json j;
	size_t i;

	if (!json) {
		for (i = 0; i < rep->n_c; i++) {
			ts_text(rep->c[i].first_ts, a, sizeof(a));
			ts_text(rep->c[i].last_ts, b, sizeof(b));
			fprintf(f, "category %s: %" PRIu64 " exec(s), %zu sandbox(es), first seen %s, last seen %s\n",
				rep->c[i].category, rep->c[i].execs, rep->c[i].n_cgroups, a, b);
		}
		for (i = 0; i < rep->n_p; i++)
			fprintf(f, "FAIL seq %" PRIu64 "%s: %s\n", rep->p[i].first_seq,
				rep->p[i].count > 1 ? " (and more)" : "", rep->p[i].msg);
		fprintf(f, "register check: %" PRIu64 " records (%" PRIu64 " exec, %" PRIu64 " attach), seq %" PRIu64 "..%" PRIu64 ", %" PRIu64 " missing, %" PRIu64 " accounted for: %s\n",
			rep->records, rep->execs, rep->attaches, rep->seq_min, rep->seq_max,
			rep->seq_missing, rep->seq_accounted,
			pass ? "pass" : rep->records ? "FAIL" : "FAIL: no record in the period");
		return pass;
	}
	json_init(&j);
	json_begin(&j);
	json_str(&j, "result", pass ? "pass" : "fail");
	json_u64(&j, "records", rep->records);
	json_u64(&j, "execs", rep->execs);
	json_u64(&j, "attaches", rep->attaches);
	json_u64(&j, "seq_min", rep->seq_min);
	json_u64(&j, "seq_max", rep->seq_max);
	json_u64(&j, "seq_missing", rep->seq_missing);
	json_u64(&j, "seq_accounted", rep->seq_accounted);
	json_end(&j);
	fputs(j.buf, f);
	for (i = 0; i < rep->n_c; i++) {
		json_begin(&j);
		json_str(&j, "category", rep->c[i].category);
		json_u64(&j, "execs", rep->c[i].execs);
		json_u64(&j, "sandboxes", rep->c[i].n_cgroups);
		ts_text(rep->c[i].first_ts, a, sizeof(a));
		ts_text(rep->c[i].last_ts, b, sizeof(b));
		json_str(&j, "first_seen", a);
		json_str(&j, "last_seen", b);
		json_end(&j);
		fputs(j.buf, f);
	}
	for (i = 0; i < rep->n_p; i++) {
		json_begin(&j);
		json_str(&j, "problem", rep->p[i].msg);
		json_u64(&j, "first_seq", rep->p[i].first_seq);
		json_u64(&j, "count", rep->p[i].count);
		json_end(&j);
		fputs(j.buf, f);
	}
	json_free(&j);
	return pass;
}
