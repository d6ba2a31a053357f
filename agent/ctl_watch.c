// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `stockade watch`: the running agent's records, live, from its events
 * socket (agent/watch_server.h), filtered there (agent/watch_filter.h),
 * printed compact for people (agent/watch_format.h) or as logged for
 * tools, or summed up in a table refreshed each second.
 *
 * It follows the agent across restarts: when the socket goes, it says so,
 * retries each second, and asks the next agent for the records after the
 * last seq it printed (since_seq), which that agent's ring still has
 * unless too many came meanwhile (then it says that too).
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>

#include "clock.h"
#include "ctl.h"
#include "watch_filter.h"
#include "watch_format.h"
#include "watch_server.h"

#define PROG		"stockade watch"
#define RETRY_MS	1000
/* The longest line read: a record is at most a few KiB. */
#define LINE_MAX_BYTES	(1u << 20)
#define TOP_N		8
#define SUM_SLOTS	512

static volatile sig_atomic_t stop_sig;

static void on_stop(int sig)
{
	stop_sig = sig;
}

enum out_mode { OUT_COMPACT, OUT_JSON };

struct count {
	char name[128];
	uint64_t n;
};

struct summary {
	struct count sandboxes[SUM_SLOTS], reasons[SUM_SLOTS];
	size_t n_sandboxes, n_reasons;
	uint64_t denials, records, gaps, window, last_rate;
	int64_t window_start_ns, started_ns;
};

struct watch {
	const char *socket;
	struct watch_filter f;
	enum out_mode mode;
	bool color, reconnect, summary, tty_in;
	/* What the stream has shown so far. */
	bool seen_seq, connected_once;
	uint64_t last_seq;
	long agent_pid;
	char agent_start[64];
	struct summary sum;
	struct termios saved_tio;
	bool tio_saved;
};

static void tty_restore(struct watch *w)
{
	if (w->tio_saved) {
		tcsetattr(STDIN_FILENO, TCSANOW, &w->saved_tio);
		w->tio_saved = false;
	}
}

/* Key presses one by one, without echo; restored on every exit path. */
static void tty_raw(struct watch *w)
{
	struct termios t;

	if (!w->tty_in || tcgetattr(STDIN_FILENO, &w->saved_tio))
		return;
	t = w->saved_tio;
	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	if (!tcsetattr(STDIN_FILENO, TCSANOW, &t))
		w->tio_saved = true;
}

static void count_add(struct count *v, size_t *n, const char *name)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (!strcmp(v[i].name, name)) {
			v[i].n++;
			return;
		}
	/* A full table counts the rest as one: the top stays right. */
	if (*n == SUM_SLOTS) {
		i = SUM_SLOTS - 1;
		snprintf(v[i].name, sizeof(v[i].name), "(others)");
		v[i].n++;
		return;
	}
	snprintf(v[*n].name, sizeof(v[*n].name), "%s", name);
	v[(*n)++].n = 1;
}

static int count_cmp(const void *a, const void *b)
{
	const struct count *x = a, *y = b;

	return x->n < y->n ? 1 : x->n > y->n ? -1 : strcmp(x->name, y->name);
}

static void summary_add(struct summary *s, struct json_object *o)
{
	struct json_object *v;
	const char *event = "";
	char buf[16];

	s->records++;
	if (json_object_object_get_ex(o, "event", &v))
		event = json_object_get_string(v);
	if (!strcmp(event, "lost") || !strcmp(event, "watch_lost")) {
		s->gaps++;
		return;
	}
	if (strcmp(event, "deny"))
		return;
	s->denials++;
	s->window++;
	count_add(s->sandboxes, &s->n_sandboxes, watch_format__sandbox(o, buf, sizeof(buf)));
	count_add(s->reasons, &s->n_reasons,
		  json_object_object_get_ex(o, "reason", &v) ? json_object_get_string(v) : "-");
}

static void summary_top(const char *title, struct count *v, size_t n)
{
	struct count top[SUM_SLOTS];
	size_t i;

	memcpy(top, v, n * sizeof(*v));
	qsort(top, n, sizeof(*top), count_cmp);
	printf("%-40s %12s\n", title, "denials");
	for (i = 0; i < n && i < TOP_N; i++)
		printf("  %-38.38s %12llu\n", top[i].name, (unsigned long long)top[i].n);
	if (!n)
		printf("  (none yet)\n");
}

static void summary_print(struct watch *w)
{
	struct summary *s = &w->sum;
	int64_t now = clock_now_ns(CLOCK_MONOTONIC);
	double secs = (double)(now - s->window_start_ns) / 1e9;

	if (secs >= 1.0) {
		s->last_rate = (uint64_t)((double)s->window / secs + 0.5);
		s->window = 0;
		s->window_start_ns = now;
	}
	/* Home and clear: a table in place, not a scroll. */
	if (isatty(STDOUT_FILENO))
		fputs("\033[H\033[2J", stdout);
	printf("stockade watch --summary: agent pid %ld at %s (press s for the stream)\n",
	       w->agent_pid, w->socket);
	printf("denials: %llu/s now, %llu in %.0f s; records %llu; gaps %llu%s\n\n",
	       (unsigned long long)s->last_rate, (unsigned long long)s->denials,
	       (double)(now - s->started_ns) / 1e9, (unsigned long long)s->records,
	       (unsigned long long)s->gaps, s->gaps ? " (lost or watch_lost: see -o compact)" : "");
	summary_top("top sandboxes", s->sandboxes, s->n_sandboxes);
	printf("\n");
	summary_top("top reasons", s->reasons, s->n_reasons);
	fflush(stdout);
}

static int connect_agent(const char *path, int *fd_out)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, err;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		close(fd);
		return err;
	}
	*fd_out = fd;
	return 0;
}

static int send_all(int fd, const char *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The reasons a stream ends. */
enum end { END_EOF, END_DROPPED, END_ERROR, END_STOP, END_OUTPUT };

static const char *field(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
		return NULL;
	return json_object_get_string(v);
}

/* watch_start: who serves us, and whether the ring still covered the
 * records after the last one we printed. */
static void on_start(struct watch *w, struct json_object *o)
{
	const char *pid = field(o, "agent_pid"), *start = field(o, "agent_start");
	const char *oldest = field(o, "oldest_seq"), *newest = field(o, "newest_seq");
	uint64_t nseq = newest ? strtoull(newest, NULL, 10) : 0;
	long p = pid ? atol(pid) : 0;

	if (!w->connected_once)
		fprintf(stderr, PROG ": watching the agent (pid %ld) at %s%s\n", p, w->socket,
			w->tty_in ? "; s: summary, Ctrl-C: stop" : "");
	else if (p != w->agent_pid || strcmp(start ?: "", w->agent_start))
		fprintf(stderr, PROG ": the agent restarted (pid %ld, started %s; was pid %ld); resuming after seq %llu\n",
			p, start ?: "?", w->agent_pid, (unsigned long long)w->last_seq);
	else
		fprintf(stderr, PROG ": reconnected to the agent (pid %ld); resuming after seq %llu\n",
			p, (unsigned long long)w->last_seq);
	if (w->connected_once && w->seen_seq && oldest &&
	    strtoull(oldest, NULL, 10) > w->last_seq + 1)
		fprintf(stderr, PROG ": the agent's ring begins at seq %s: records %llu..%llu may be missing from this stream (the --log file has them)\n",
			oldest, (unsigned long long)w->last_seq + 1,
			(unsigned long long)strtoull(oldest, NULL, 10) - 1);
	/* The stream starts after the agent's newest record: a reconnect
	 * asks for what came after it, even if nothing matched meanwhile. */
	if (newest && w->seen_seq && nseq < w->last_seq) {
		fprintf(stderr, PROG ": the agent's sequence restarted (seq %llu, was %llu: its pins were removed); records in between are in its --log file only\n",
			(unsigned long long)nseq, (unsigned long long)w->last_seq);
		w->last_seq = nseq;
	} else if (newest && (!w->seen_seq || nseq > w->last_seq) && !w->connected_once) {
		w->last_seq = nseq;
		w->seen_seq = true;
	}
	w->connected_once = true;
	w->agent_pid = p;
	snprintf(w->agent_start, sizeof(w->agent_start), "%s", start ?: "");
}

/* One line from the agent: false when output failed (a closed pipe). */
static bool on_line(struct watch *w, const char *line, size_t len, enum end *end)
{
	struct json_object *o = json_tokener_parse(line);
	const char *event = o ? field(o, "event") : NULL;
	const char *seq = o ? field(o, "seq") : NULL;
	char out[8192];
	bool ok = true;
	size_t n;

	if (!o || !event) {
		fprintf(stderr, PROG ": the agent sent a line that is not a record: %.80s\n", line);
		json_object_put(o);
		return true;
	}
	if (!strcmp(event, "watch_error")) {
		const char *e = field(o, "error") ?: "?";

		fprintf(stderr, PROG ": the agent refused: %s%s\n", e,
			strstr(e, "permission denied") && !strstr(e, "as root") ?
			" (run stockade watch as root)" : "");
		*end = END_ERROR;
		json_object_put(o);
		return true;
	}
	if (!strcmp(event, "watch_start"))
		on_start(w, o);
	if (!strcmp(event, "watch_lost") && field(o, "dropped"))
		*end = END_DROPPED;
	if (seq) {
		uint64_t v = strtoull(seq, NULL, 10);

		/* The largest: a --since replay is older than the stream. */
		if (!w->seen_seq || v > w->last_seq)
			w->last_seq = v;
		w->seen_seq = true;
	}
	if (w->summary) {
		if (strcmp(event, "watch_start"))
			summary_add(&w->sum, o);
	} else if (w->mode == OUT_JSON) {
		ok = fwrite(line, 1, len, stdout) == len && fputc('\n', stdout) != EOF;
	} else if (strcmp(event, "watch_start")) {
		n = watch_format__compact(o, w->color, out, sizeof(out));
		ok = fwrite(out, 1, n, stdout) == n;
	}
	if (!w->summary)
		summary_add(&w->sum, o);	/* ready when s is pressed */
	json_object_put(o);
	return ok;
}

/* One connection's stream, until it ends: why. */
static enum end stream(struct watch *w, int fd)
{
	struct pollfd p[2] = { { .fd = fd, .events = POLLIN },
			       { .fd = w->tty_in ? STDIN_FILENO : -1, .events = POLLIN } };
	char *buf = malloc(LINE_MAX_BYTES + 1);
	size_t have = 0, i, start;
	enum end end = END_EOF;
	int64_t next_sum = 0;
	ssize_t n;
	int r;

	if (!buf) {
		fprintf(stderr, PROG ": out of memory\n");
		return END_ERROR;
	}
	for (;;) {
		int64_t now = clock_now_ns(CLOCK_MONOTONIC);
		int timeout = -1;

		if (stop_sig) {
			end = END_STOP;
			break;
		}
		if (w->summary) {
			if (now >= next_sum) {
				summary_print(w);
				next_sum = now + 1000000000;
			}
			timeout = (int)((next_sum - now) / 1000000) + 1;
		}
		fflush(stdout);
		if (ferror(stdout)) {
			end = END_OUTPUT;
			break;
		}
		r = poll(p, 2, timeout);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, PROG ": poll failed: %s\n", strerror(errno));
			end = END_ERROR;
			break;
		}
		if (p[1].revents & POLLIN) {
			char key;

			if (read(STDIN_FILENO, &key, 1) == 1 && (key == 's' || key == 'S')) {
				w->summary = !w->summary;
				next_sum = 0;
				if (!w->summary && isatty(STDOUT_FILENO))
					fputs("\033[H\033[2J", stdout);
			} else if (key == 'q') {
				end = END_STOP;
				break;
			}
		} else if (p[1].revents & (POLLHUP | POLLERR)) {
			p[1].fd = -1;
		}
		if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		n = read(fd, buf + have, LINE_MAX_BYTES - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;	/* END_EOF, or what a line said */
		have += (size_t)n;
		start = 0;
		for (i = have - (size_t)n; i < have; i++) {
			if (buf[i] != '\n')
				continue;
			buf[i] = '\0';
			if (!on_line(w, buf + start, i - start, &end)) {
				end = END_OUTPUT;
				goto out;
			}
			start = i + 1;
		}
		memmove(buf, buf + start, have - start);
		have -= start;
		if (have == LINE_MAX_BYTES) {
			fprintf(stderr, PROG ": a line longer than %u bytes from the agent; skipped\n",
				LINE_MAX_BYTES);
			have = 0;
		}
		if (end == END_ERROR)
			break;
	}
out:
	free(buf);
	return end;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: stockade watch [options]\n"
"  the running agent's records, live, from its events socket\n"
"      --socket PATH       the agent's --events-socket (default " WATCH_SOCKET_DEFAULT ")\n"
"      --policy GLOB       only these policies' records\n"
"      --cgroup GLOB       only these cgroups (paths below the cgroup2 mount)\n"
"      --container GLOB    only these containers (name, or id)\n"
"      --pod NS/NAME       only these pods (globs: 'prod/*')\n"
"      --kind KIND         connect, sendmsg, file, ... (the record's kind)\n"
"      --reason REASON     not_allowed, metadata_endpoint, ...\n"
"      --event EVENT       deny, audit, limit, exec, exit, attach, ...\n"
"      --pid PID           only records of this process\n"
"                          (each filter may repeat or take a comma list: any\n"
"                          value matches; different filters must all match;\n"
"                          lost records always pass)\n"
"      --since N           the last N matching records first (the agent keeps\n"
"                          the last %d)\n"
"  -o, --output compact|json  compact lines (the default when stdout is a\n"
"                          terminal) or the records exactly as logged (the\n"
"                          default otherwise)\n"
"      --summary           a table refreshed each second: top sandboxes,\n"
"                          reasons, the denial rate (key s toggles it on a tty)\n"
"      --color auto|always|never  colour the compact lines (auto: on a\n"
"                          terminal, unless NO_COLOR is set)\n"
"      --no-reconnect      exit when the agent is not there or goes away\n"
"exit: 0 on Ctrl-C/SIGTERM, or when the agent ends the stream with\n"
"--no-reconnect; 1 on an error (no agent with --no-reconnect, permission,\n"
"dropped for being too slow with --no-reconnect); 2 a usage error\n",
		WATCH_RING_RECORDS);
}

static int add_filter(struct watch_list *l, const char *opt, const char *v)
{
	int err = watch_list__add(l, v);

	if (!err)
		return 0;
	fprintf(stderr, PROG ": --%s %s: %s\n", opt, v,
		err == -E2BIG ? "more than 32 values" :
		err == -ENAMETOOLONG ? "a value longer than 256 bytes" :
		err == -EINVAL ? "an empty value" : strerror(-err));
	return -EINVAL;
}

static int parse_u64(const char *opt, const char *v, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(v, &end, 10);
	if (errno || end == v || *end || v[0] == '-') {
		fprintf(stderr, PROG ": --%s %s: expected a non-negative number\n", opt, v);
		return -EINVAL;
	}
	return 0;
}

static int parse_args(struct watch *w, int argc, char **argv)
{
	enum { OPT_SOCKET = 256, OPT_POLICY, OPT_CGROUP, OPT_CONTAINER, OPT_POD,
	       OPT_KIND, OPT_REASON, OPT_EVENT, OPT_PID, OPT_SINCE, OPT_SUMMARY,
	       OPT_COLOR, OPT_NO_RECONNECT };
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "policy", required_argument, NULL, OPT_POLICY },
		{ "cgroup", required_argument, NULL, OPT_CGROUP },
		{ "container", required_argument, NULL, OPT_CONTAINER },
		{ "pod", required_argument, NULL, OPT_POD },
		{ "kind", required_argument, NULL, OPT_KIND },
		{ "reason", required_argument, NULL, OPT_REASON },
		{ "event", required_argument, NULL, OPT_EVENT },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "since", required_argument, NULL, OPT_SINCE },
		{ "output", required_argument, NULL, 'o' },
		{ "summary", no_argument, NULL, OPT_SUMMARY },
		{ "color", required_argument, NULL, OPT_COLOR },
		{ "colour", required_argument, NULL, OPT_COLOR },
		{ "no-reconnect", no_argument, NULL, OPT_NO_RECONNECT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *color = "auto", *mode = NULL;
	int c, err = 0;

	optind = 1;
	while (!err && (c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_SOCKET: w->socket = optarg; break;
		case OPT_POLICY: err = add_filter(&w->f.policy, "policy", optarg); break;
		case OPT_CGROUP: err = add_filter(&w->f.cgroup, "cgroup", optarg); break;
		case OPT_CONTAINER: err = add_filter(&w->f.container, "container", optarg); break;
		case OPT_POD: err = add_filter(&w->f.pod, "pod", optarg); break;
		case OPT_KIND: err = add_filter(&w->f.kind, "kind", optarg); break;
		case OPT_REASON: err = add_filter(&w->f.reason, "reason", optarg); break;
		case OPT_EVENT: err = add_filter(&w->f.event, "event", optarg); break;
		case OPT_PID:
			err = parse_u64("pid", optarg, &w->f.pid);
			w->f.has_pid = true;
			break;
		case OPT_SINCE:
			err = parse_u64("since", optarg, &w->f.since);
			w->f.has_since = true;
			break;
		case 'o': mode = optarg; break;
		case OPT_SUMMARY: w->summary = true; break;
		case OPT_COLOR: color = optarg; break;
		case OPT_NO_RECONNECT: w->reconnect = false; break;
		case 'h': usage(stdout); return 1;
		default: usage(stderr); return -EINVAL;
		}
	}
	if (err)
		return err;
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument '%s' (filters are options: --policy, --cgroup...)\n",
			argv[optind]);
		return -EINVAL;
	}
	if (!mode)
		w->mode = isatty(STDOUT_FILENO) ? OUT_COMPACT : OUT_JSON;
	else if (!strcmp(mode, "compact"))
		w->mode = OUT_COMPACT;
	else if (!strcmp(mode, "json"))
		w->mode = OUT_JSON;
	else {
		fprintf(stderr, PROG ": -o %s: expected compact or json\n", mode);
		return -EINVAL;
	}
	if (!strcmp(color, "always"))
		w->color = true;
	else if (!strcmp(color, "never"))
		w->color = false;
	else if (!strcmp(color, "auto"))
		w->color = isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
	else {
		fprintf(stderr, PROG ": --color %s: expected auto, always or never\n", color);
		return -EINVAL;
	}
	return 0;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	/* A signal cuts it short: stop_sig is seen at once. */
	nanosleep(&ts, NULL);
}

int ctl__watch(int argc, char **argv)
{
	struct watch w = { .socket = WATCH_SOCKET_DEFAULT, .reconnect = true };
	struct sigaction sa = { .sa_handler = on_stop };
	char req[WATCH_REQ_MAX + 1];
	bool said_absent = false;
	int fd = -1, err, rc = 1, n;
	enum end end;

	err = parse_args(&w, argc, argv);
	if (err) {
		watch_filter__free(&w.f);
		return err > 0 ? 0 : 2;
	}
	/* No SA_RESTART: poll() and read() return at once on Ctrl-C. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	w.tty_in = isatty(STDIN_FILENO);
	w.sum.started_ns = w.sum.window_start_ns = clock_now_ns(CLOCK_MONOTONIC);
	tty_raw(&w);
	while (!stop_sig) {
		err = connect_agent(w.socket, &fd);
		if (err == -EACCES || err == -EPERM) {
			fprintf(stderr, PROG ": %s: permission denied (connect: %s); the socket is root's (0600): run stockade watch as root\n",
				w.socket, strerror(-err));
			goto out;
		}
		if (err) {
			if (!w.reconnect) {
				fprintf(stderr, PROG ": no agent at %s (connect: %s); start stockade agent, or name its socket with --socket\n",
					w.socket, strerror(-err));
				goto out;
			}
			if (!said_absent)
				fprintf(stderr, PROG ": no agent at %s (connect: %s); retrying\n",
					w.socket, strerror(-err));
			said_absent = true;
			sleep_ms(RETRY_MS);
			continue;
		}
		said_absent = false;
		/* After a reconnect: what came after the last record shown,
		 * not the last N again. */
		if (w.seen_seq) {
			w.f.has_since = false;
			w.f.has_since_seq = true;
			w.f.since_seq = w.last_seq;
		}
		n = watch_req__format(&w.f, req, sizeof(req));
		if (n < 0 || (err = send_all(fd, req, (size_t)n))) {
			fprintf(stderr, PROG ": sending the request to %s failed: %s\n", w.socket,
				n < 0 ? "the filters are too long (4 KiB)" : strerror(-err));
			close(fd);
			if (n < 0)
				goto out;
			sleep_ms(RETRY_MS);
			continue;
		}
		end = stream(&w, fd);
		close(fd);
		switch (end) {
		case END_STOP:
		case END_OUTPUT:
			rc = 0;
			goto out;
		case END_ERROR:
			goto out;
		case END_DROPPED:
			fprintf(stderr, PROG ": the agent dropped this watcher: it read too slowly (the watch_lost line above says what it missed); filter more, or write -o json to a file%s\n",
				w.reconnect ? "; reconnecting" : "");
			if (!w.reconnect)
				goto out;
			break;
		case END_EOF:
			if (!w.reconnect) {
				fprintf(stderr, PROG ": the agent closed the stream (it stopped); end of input\n");
				rc = 0;
				goto out;
			}
			fprintf(stderr, PROG ": the agent closed the stream (it stopped or restarts); reconnecting\n");
			break;
		}
		sleep_ms(RETRY_MS / 10);
	}
	rc = 0;	/* a signal */
out:
	tty_restore(&w);
	fflush(stdout);
	watch_filter__free(&w.f);
	return rc;
}
