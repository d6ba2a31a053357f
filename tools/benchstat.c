// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * benchstat: turn benchmark samples into rows of ratios against a baseline
 * measured in the same run, and rows into the `make bench` table and
 * build/bench/results.json (README "Performance").
 *
 *   benchstat ratio --out ROWS --section S --name NAME --samples FILE
 *                   --base COND --test COND [--goal OPNUM] [--required]
 *                   [--note TEXT]
 *       FILE holds one sample a line, "ROUND COND VALUE" (VALUE: a cost,
 *       such as ns per operation; lower is better), '#' starts a comment.
 *       Conditions are measured interleaved (ABC ABC ...), so samples pair
 *       by round. The row gives
 *         ratio_min     min over rounds of test / min over rounds of base
 *         ratio_median  median(test) / median(base)
 *         ci95          a percentile bootstrap 95% interval of
 *                       ratio_median, resampling whole rounds (2000
 *                       resamples, fixed seed: a rerun on the same
 *                       samples gives the same interval)
 *       and the raw samples. The goal is judged on ratio_median.
 *   benchstat value --out ROWS --section S --name NAME --value V --unit U
 *                   [--goal OPNUM] [--required] [--note TEXT]
 *       A row for a figure that is not a ratio (events/s, ms, MiB).
 *   benchstat report [--json FILE] [--machine TEXT] ROWS...
 *       Print the table of all rows; write them, with the machine, kernel
 *       and date, to FILE.
 *
 * OPNUM is "<=1.03" or ">=1000000". A row with --required whose goal is
 * not met makes `report` exit 1: the run itself is wrong (produced !=
 * logged + lost, say); any other goal not met is only shown as such, since
 * a benchmark must report what it measured, not fail until it looks good.
 *
 * ROWS is a JSON-lines file, appended to; each row is one line.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/utsname.h>

#define MAX_SAMPLES	100000
#define BOOT_N		2000

struct sample {
	long round;
	double v;
};

struct series {
	struct sample *v;
	size_t n, cap;
};

static int usage(void)
{
	fprintf(stderr,
		"usage: benchstat ratio --out ROWS --section S --name N --samples F --base C --test C [--goal OPNUM] [--required] [--note T]\n"
		"       benchstat value --out ROWS --section S --name N --value V --unit U [--goal OPNUM] [--required] [--note T]\n"
		"       benchstat report [--json FILE] [--machine TEXT] ROWS...\n");
	return 2;
}

static int series_add(struct series *s, long round, double v)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct sample *nv;

		if (cap > MAX_SAMPLES)
			return -E2BIG;
		nv = realloc(s->v, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		s->v = nv;
		s->cap = cap;
	}
	s->v[s->n].round = round;
	s->v[s->n].v = v;
	s->n++;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median of n values; sorts them. */
static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* xorshift64*: a fixed, portable stream for the bootstrap. */
static unsigned long long rng_next(unsigned long long *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static bool goal_parse(const char *g, bool *le, double *num)
{
	char *end;

	if (!g)
		return false;
	if (!strncmp(g, "<=", 2))
		*le = true;
	else if (!strncmp(g, ">=", 2))
		*le = false;
	else
		return false;
	errno = 0;
	*num = strtod(g + 2, &end);
	return !errno && end != g + 2 && !*end;
}

/* JSON string body: the names here are ours, but quote them anyway. */
static void put_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void put_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.6g", v);
	else
		fputs("null", f);
}

static void put_goal(FILE *f, const char *goal, double v, bool required)
{
	bool le;
	double num;

	fputs(",\"goal\":", f);
	if (goal)
		put_str(f, goal);
	else
		fputs("null", f);
	fputs(",\"met\":", f);
	if (goal_parse(goal, &le, &num))
		fputs((le ? v <= num : v >= num) ? "true" : "false", f);
	else
		fputs("null", f);
	fprintf(f, ",\"required\":%s", required ? "true" : "false");
}

struct opts {
	const char *out, *section, *name, *samples, *base, *test, *goal, *unit,
		*note, *value, *json, *machine;
	bool required;
};

static int read_samples(const char *path, const char *base, const char *test,
			struct series *b, struct series *t)
{
	char line[512], cond[128];
	FILE *f = fopen(path, "r");
	long round;
	double v;
	int err = 0;

	if (!f) {
		fprintf(stderr, "benchstat: cannot open the samples %s: %s\n", path,
			strerror(errno));
		return -errno;
	}
	while (!err && fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "%ld %127s %lf", &round, cond, &v) != 3 || !(v >= 0)) {
			fprintf(stderr, "benchstat: %s: bad sample line: %s", path, line);
			err = -EINVAL;
		} else if (!strcmp(cond, base)) {
			err = series_add(b, round, v);
		} else if (!strcmp(cond, test)) {
			err = series_add(t, round, v);
		}
	}
	fclose(f);
	return err;
}

static void put_samples(FILE *f, const struct series *s)
{
	size_t i;

	fputc('[', f);
	for (i = 0; i < s->n; i++) {
		if (i)
			fputc(',', f);
		put_num(f, s->v[i].v);
	}
	fputc(']', f);
}

static int cmd_ratio(const struct opts *o)
{
	struct series b = { 0 }, t = { 0 };
	double *bv = NULL, *tv = NULL, *boot = NULL, *rb = NULL, *rt = NULL;
	double bmin, tmin, rmin, rmed, lo, hi;
	unsigned long long seed = 0x9e3779b97f4a7c15ULL;
	size_t i, k, n;
	FILE *f = NULL;
	int err;

	if (!o->out || !o->section || !o->name || !o->samples || !o->base || !o->test)
		return usage();
	err = read_samples(o->samples, o->base, o->test, &b, &t);
	if (err)
		goto out;
	/* Pair by round: keep rounds that have both conditions. */
	n = 0;
	for (i = 0; i < b.n && i < t.n; i++) {
		if (b.v[i].round != t.v[i].round) {
			fprintf(stderr, "benchstat: %s: rounds of %s and %s do not pair (round %ld vs %ld): measure them interleaved\n",
				o->samples, o->base, o->test, b.v[i].round, t.v[i].round);
			err = -EINVAL;
			goto out;
		}
		n++;
	}
	if (!n || b.n != t.n) {
		fprintf(stderr, "benchstat: %s: %zu samples of %s, %zu of %s: need the same number, at least one\n",
			o->samples, b.n, o->base, t.n, o->test);
		err = -EINVAL;
		goto out;
	}
	bv = calloc(n, sizeof(*bv));
	tv = calloc(n, sizeof(*tv));
	rb = calloc(n, sizeof(*rb));
	rt = calloc(n, sizeof(*rt));
	boot = calloc(BOOT_N, sizeof(*boot));
	if (!bv || !tv || !rb || !rt || !boot) {
		err = -ENOMEM;
		goto out;
	}
	bmin = tmin = INFINITY;
	for (i = 0; i < n; i++) {
		bv[i] = b.v[i].v;
		tv[i] = t.v[i].v;
		bmin = fmin(bmin, bv[i]);
		tmin = fmin(tmin, tv[i]);
	}
	rmin = tmin / bmin;
	for (k = 0; k < BOOT_N; k++) {
		for (i = 0; i < n; i++) {
			size_t r = rng_next(&seed) % n;

			rb[i] = bv[r];
			rt[i] = tv[r];
		}
		boot[k] = median(rt, n) / median(rb, n);
	}
	rmed = median(tv, n) / median(bv, n);
	qsort(boot, BOOT_N, sizeof(*boot), cmp_double);
	lo = boot[(size_t)(BOOT_N * 0.025)];
	hi = boot[(size_t)(BOOT_N * 0.975) - 1];

	f = fopen(o->out, "a");
	if (!f) {
		err = -errno;
		fprintf(stderr, "benchstat: cannot append to %s: %s\n", o->out, strerror(errno));
		goto out;
	}
	fputs("{\"section\":", f);
	put_str(f, o->section);
	fputs(",\"name\":", f);
	put_str(f, o->name);
	fputs(",\"kind\":\"ratio\",\"unit\":\"x\",\"base\":", f);
	put_str(f, o->base);
	fputs(",\"test\":", f);
	put_str(f, o->test);
	fprintf(f, ",\"rounds\":%zu,\"ratio_min\":", n);
	put_num(f, rmin);
	fputs(",\"ratio_median\":", f);
	put_num(f, rmed);
	fputs(",\"ci95\":[", f);
	put_num(f, lo);
	fputc(',', f);
	put_num(f, hi);
	fputs("],\"value\":", f);
	put_num(f, rmed);
	put_goal(f, o->goal, rmed, o->required);
	if (o->note) {
		fputs(",\"note\":", f);
		put_str(f, o->note);
	}
	fputs(",\"samples\":{\"base\":", f);
	put_samples(f, &b);
	fputs(",\"test\":", f);
	put_samples(f, &t);
	fputs("}}\n", f);
	if (fclose(f)) {
		err = -errno;
		fprintf(stderr, "benchstat: writing %s: %s\n", o->out, strerror(errno));
	}
out:
	free(b.v);
	free(t.v);
	free(bv);
	free(tv);
	free(rb);
	free(rt);
	free(boot);
	return err ? 1 : 0;
}

static int cmd_value(const struct opts *o)
{
	double v;
	char *end;
	FILE *f;

	if (!o->out || !o->section || !o->name || !o->value || !o->unit)
		return usage();
	errno = 0;
	v = strtod(o->value, &end);
	if (errno || end == o->value || *end) {
		fprintf(stderr, "benchstat: --value %s is not a number\n", o->value);
		return 2;
	}
	f = fopen(o->out, "a");
	if (!f) {
		fprintf(stderr, "benchstat: cannot append to %s: %s\n", o->out, strerror(errno));
		return 1;
	}
	fputs("{\"section\":", f);
	put_str(f, o->section);
	fputs(",\"name\":", f);
	put_str(f, o->name);
	fputs(",\"kind\":\"value\",\"unit\":", f);
	put_str(f, o->unit);
	fputs(",\"value\":", f);
	put_num(f, v);
	put_goal(f, o->goal, v, o->required);
	if (o->note) {
		fputs(",\"note\":", f);
		put_str(f, o->note);
	}
	fputs("}\n", f);
	if (fclose(f)) {
		fprintf(stderr, "benchstat: writing %s: %s\n", o->out, strerror(errno));
		return 1;
	}
	return 0;
}

/*
 * The report reads back only what this program wrote, so a tiny scanner
 * for our own flat members is enough: find "key": and read a string or a
 * number after it. (The samples arrays are copied through unread.)
 */
static bool row_str(const char *row, const char *key, char *out, size_t len)
{
	char pat[64];
	const char *p;
	size_t n = 0;

	snprintf(pat, sizeof(pat), "\"%s\":\"", key);
	p = strstr(row, pat);
	if (!p)
		return false;
	for (p += strlen(pat); *p && *p != '"' && n + 1 < len; p++) {
		if (*p == '\\' && p[1])
			p++;
		out[n++] = *p;
	}
	out[n] = 0;
	return true;
}

static bool row_num(const char *row, const char *key, double *v)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(row, pat);
	if (!p || !strncmp(p + strlen(pat), "null", 4))
		return false;
	*v = strtod(p + strlen(pat), NULL);
	return true;
}

static void fmt_value(char *out, size_t len, double v, const char *unit)
{
	if (!strcmp(unit, "x"))
		snprintf(out, len, "%.3fx", v);
	else if (fabs(v) >= 1e6)
		snprintf(out, len, "%.3g %s", v, unit);
	else
		snprintf(out, len, "%.4g %s", v, unit);
}

static int cmd_report(const struct opts *o, int argc, char **argv)
{
	char *line = NULL, sec[64], name[160], unit[32], goal[32], note[200];
	char cur_sec[64] = "", val[48], mn[48], ci[64];
	size_t cap = 0, rows = 0, unmet = 0, bad = 0;
	FILE *json = NULL;
	struct utsname u;
	time_t now = time(NULL);
	int i, ret = 0;

	uname(&u);
	if (o->json) {
		json = fopen(o->json, "w");
		if (!json) {
			fprintf(stderr, "benchstat: cannot write %s: %s\n", o->json, strerror(errno));
			return 1;
		}
		fprintf(json, "{\"kernel\":");
		put_str(json, u.release);
		fprintf(json, ",\"machine\":");
		put_str(json, o->machine ? o->machine : u.machine);
		fprintf(json, ",\"date_unix\":%lld,\"figures\":\"ratios against a baseline measured in the same run, not absolute times (value rows say their unit)\",\"rows\":[\n",
			(long long)now);
	}
	printf("%-10s %-58s %10s %10s %17s %10s %s\n", "section", "measurement",
	       "median", "min", "95% CI", "goal", "met");
	for (i = 0; i < argc; i++) {
		FILE *f = fopen(argv[i], "r");
		ssize_t n;

		if (!f) {
			fprintf(stderr, "benchstat: cannot open %s: %s\n", argv[i], strerror(errno));
			ret = 1;
			continue;
		}
		while ((n = getline(&line, &cap, f)) > 0) {
			double v, lo, hi, rmin;
			bool has_goal, met = false, required = strstr(line, "\"required\":true");

			if (line[0] != '{')
				continue;
			if (!row_str(line, "section", sec, sizeof(sec)) ||
			    !row_str(line, "name", name, sizeof(name)) ||
			    !row_str(line, "unit", unit, sizeof(unit))) {
				fprintf(stderr, "benchstat: %s: not a benchstat row: %.80s\n", argv[i], line);
				ret = 1;
				continue;
			}
			has_goal = row_str(line, "goal", goal, sizeof(goal));
			if (has_goal)
				met = strstr(line, "\"met\":true") != NULL;
			if (!row_num(line, "value", &v))
				v = NAN;
			fmt_value(val, sizeof(val), v, unit);
			mn[0] = ci[0] = 0;
			if (row_num(line, "ratio_min", &rmin))
				fmt_value(mn, sizeof(mn), rmin, unit);
			if (strstr(line, "\"ci95\":[")) {
				sscanf(strstr(line, "\"ci95\":[") + 8, "%lf,%lf", &lo, &hi);
				snprintf(ci, sizeof(ci), "%.3f-%.3f", lo, hi);
			}
			if (strcmp(sec, cur_sec)) {
				snprintf(cur_sec, sizeof(cur_sec), "%s", sec);
				if (rows)
					putchar('\n');
			}
			printf("%-10s %-58.58s %10s %10s %17s %10s %s\n", sec, name, val, mn, ci,
			       has_goal ? goal : "-",
			       !has_goal ? "-" : met ? "met" : required ? "FAILED" : "not met");
			if (row_str(line, "note", note, sizeof(note)))
				printf("%-10s   note: %s\n", "", note);
			if (has_goal && !met)
				unmet++;
			if (required && has_goal && !met)
				bad++;
			if (json) {
				if (line[n - 1] == '\n')
					line[n - 1] = 0;
				fprintf(json, "%s%s", rows ? ",\n" : "", line);
			}
			rows++;
		}
		fclose(f);
	}
	free(line);
	if (json) {
		fprintf(json, "\n]}\n");
		if (fclose(json)) {
			fprintf(stderr, "benchstat: writing %s: %s\n", o->json, strerror(errno));
			ret = 1;
		}
	}
	printf("\n%zu rows, %zu goals not met%s\n", rows, unmet,
	       bad ? ", and a required check FAILED: the run is invalid" : "");
	if (!rows) {
		fprintf(stderr, "benchstat: no rows: the benchmark produced nothing\n");
		ret = 1;
	}
	return bad ? 1 : ret;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "section", required_argument, NULL, 's' },
		{ "name", required_argument, NULL, 'n' },
		{ "samples", required_argument, NULL, 'S' },
		{ "base", required_argument, NULL, 'b' },
		{ "test", required_argument, NULL, 't' },
		{ "goal", required_argument, NULL, 'g' },
		{ "unit", required_argument, NULL, 'u' },
		{ "value", required_argument, NULL, 'v' },
		{ "note", required_argument, NULL, 'N' },
		{ "json", required_argument, NULL, 'j' },
		{ "machine", required_argument, NULL, 'm' },
		{ "required", no_argument, NULL, 'r' },
		{ 0 }
	};
	struct opts o = { 0 };
	const char *cmd;
	bool le;
	double num;
	int c;

	if (argc < 2)
		return usage();
	cmd = argv[1];
	optind = 2;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'o': o.out = optarg; break;
		case 's': o.section = optarg; break;
		case 'n': o.name = optarg; break;
		case 'S': o.samples = optarg; break;
		case 'b': o.base = optarg; break;
		case 't': o.test = optarg; break;
		case 'g': o.goal = optarg; break;
		case 'u': o.unit = optarg; break;
		case 'v': o.value = optarg; break;
		case 'N': o.note = optarg; break;
		case 'j': o.json = optarg; break;
		case 'm': o.machine = optarg; break;
		case 'r': o.required = true; break;
		default: return usage();
		}
	}
	if (o.goal && !goal_parse(o.goal, &le, &num)) {
		fprintf(stderr, "benchstat: --goal %s: expected <=NUMBER or >=NUMBER\n", o.goal);
		return 2;
	}
	if (!strcmp(cmd, "ratio"))
		return cmd_ratio(&o);
	if (!strcmp(cmd, "value"))
		return cmd_value(&o);
	if (!strcmp(cmd, "report"))
		return cmd_report(&o, argc - optind, argv + optind);
	return usage();
}
