// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The events socket (agent/watch_server.h). One listening unix socket and
 * its clients, all sources of the agent's one loop: no threads, and no
 * call here ever waits for a client.
 *
 * A client: accepted (SO_PEERCRED: root, or the agent's own uid), sends
 * one request line (agent/watch_filter.h), then gets a watch_start line,
 * the ring's last matching records, and the live stream: every record
 * line exactly as logged, those its filter passes. Lines are queued in the
 * client's buffer (WATCH_CLIENT_BUF) and written, non-blocking, after each
 * turn of the loop (a post hook: one write() per client per turn, not per
 * record) and on EPOLLOUT. A line that does not fit is dropped for that
 * client and counted; once half the buffer is free again, a watch_lost
 * line (count, first_seq, last_seq) goes first and the stream resumes. A
 * client that misses lines for WATCH_STALL_US, or more than
 * WATCH_LOST_MAX, is dropped: a final watch_lost ("dropped": true), what
 * is queued written as it drains for at most WATCH_LINGER_US, then closed.
 *
 * Filtering: the line is parsed with json-c, once per record however many
 * clients, and only while a streaming client has a filter that looks at
 * fields (a bare `stockade watch` costs one memcpy per client). Parsing
 * the line rather than having events.c hand over the fields keeps the
 * records built in one place (agent/events.c, records.c) and the filter
 * seeing exactly what the client gets. It costs about 6 us a record
 * (a 300-byte deny record on the 2-core test host, json-c 0.16; README
 * "Watching live denials"), paid only while someone filters: a filtering
 * watcher during a 100k/s storm adds about 60% of a core. The log never
 * waits for it: a slower agent fills the ring buffer, whose overflow is
 * counted and reported as `lost` like any other.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "json.h"
#include "log.h"
#include "loop.h"
#include "watch_filter.h"
#include "watch_server.h"

#define SUB	"watch"
/* A client's buffer grows from this to WATCH_CLIENT_BUF as it needs. */
#define BUF_START	(64u * 1024)
/* Room kept beyond WATCH_CLIENT_BUF for the final watch_lost line. */
#define BUF_RESERVE	512
/* The stall and request timeouts are judged this often. */
#define TICK_US		(1000ull * 1000)

struct ring_ent {
	char *line;
	size_t len, cap;	/* cap: line's allocation */
	uint64_t seq;
};

enum client_state { C_REQUEST, C_STREAM, C_CLOSING };

struct client {
	struct watch_server *ws;
	int fd;
	struct loop_source *src;
	enum client_state state;
	uint64_t since_us;	/* accepted; or, closing, dropped */
	char req[WATCH_REQ_MAX];
	size_t req_len;
	struct watch_filter f;
	char *buf;		/* queued: buf[off..len) */
	size_t cap, off, len;
	bool out_on;		/* EPOLLOUT asked for */
	/* Lines dropped since the last watch_lost, and since when. */
	uint64_t lost, first_seq, last_seq, lost_since_us;
};

struct watch_server {
	int fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct loop *l;
	struct loop_source *src, *tick;
	uid_t euid;
	pid_t pid;
	char start[40];		/* the server's start: the agent's */
	/* The recent ring: oldest at head, n entries, bytes of lines. */
	struct ring_ent ring[WATCH_RING_RECORDS];
	size_t head, n, bytes;
	struct client *clients[WATCH_MAX_CLIENTS];
	size_t n_clients;
};

static void rfc3339_now(char *buf, size_t len)
{
	int64_t ns = clock_now_ns(CLOCK_REALTIME);
	time_t sec = (time_t)(ns / 1000000000);
	struct tm tm;
	size_t n;

	gmtime_r(&sec, &tm);
	n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, len - n, ".%09ldZ", (long)(ns % 1000000000));
}

/* The seq of a record line: common_fields() writes it second, after the
 * ts, so it is looked for where ts_field()'s fixed 30-byte form puts it
 * first (a memmem() per record was a twentieth of the logger's time), then
 * near the start; none found: 0 and false. */
#define SEQ_AT	(sizeof("{\"ts\":\"YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ\"") - 1)

static bool line_seq(const char *line, size_t len, uint64_t *seq)
{
	static const char key[] = ",\"seq\":";
	const char *end = line + len, *p;
	uint64_t v = 0;

	if (len > SEQ_AT + sizeof(key) - 1 &&
	    !memcmp(line + SEQ_AT, key, sizeof(key) - 1))
		p = line + SEQ_AT + 1;
	else
		p = memmem(line, len < 64 ? len : 64, "\"seq\":", 6);
	if (!p)
		return false;
	for (p += 6; p < end && *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (uint64_t)(*p - '0');
	*seq = v;
	return true;
}

/*
 * Keep a copy of the line, dropping the oldest as the bounds require. The
 * oldest line's buffer takes the new one when it fits and is not much
 * larger (so the held memory stays within twice WATCH_RING_BYTES, plus
 * 256 bytes a record): a full ring, every record of a storm, then
 * allocates nothing; a malloc and a free per record were a twentieth of
 * the logger's time. A malloc that fails after the evictions loses them
 * and the new line alike: only the replay is poorer, the log has them.
 */
#define RING_MIN_ALLOC	256
#define RING_ALLOC_STEP	128

/* What a line of len gets: rounded up, so that the next line of about the
 * same length (a storm's records differ by an address or a port) fits the
 * buffer it takes over. A 256-byte floor, not 512: an attach record is
 * about 190 bytes, and 1,000 cgroups confined made 1,000 of them, a
 * quarter of a MiB of slack held for good. */
static size_t ring_alloc_size(size_t len)
{
	return len < RING_MIN_ALLOC ? RING_MIN_ALLOC :
	       (len + RING_ALLOC_STEP - 1) & ~(size_t)(RING_ALLOC_STEP - 1);
}

static void ring_push(struct watch_server *ws, const char *line, size_t len)
{
	size_t cap = 0, fit = 2 * ring_alloc_size(len);
	struct ring_ent *e;
	char *copy = NULL;

	if (len > WATCH_RING_BYTES)
		return;
	while (ws->n && (ws->n == WATCH_RING_RECORDS ||
			 ws->bytes + len > WATCH_RING_BYTES)) {
		e = &ws->ring[ws->head];
		ws->bytes -= e->len;
		if (!copy && e->cap >= len && e->cap <= fit) {
			copy = e->line;
			cap = e->cap;
		} else {
			free(e->line);
		}
		ws->head = (ws->head + 1) % WATCH_RING_RECORDS;
		ws->n--;
	}
	if (!copy) {
		cap = ring_alloc_size(len);
		copy = malloc(cap);
		if (!copy)
			return;	/* only the replay is poorer: the log has it */
	}
	memcpy(copy, line, len);
	e = &ws->ring[(ws->head + ws->n) % WATCH_RING_RECORDS];
	e->line = copy;
	e->len = len;
	e->cap = cap;
	if (!line_seq(line, len, &e->seq))
		e->seq = 0;
	ws->n++;
	ws->bytes += len;
}

static struct ring_ent *ring_at(struct watch_server *ws, size_t i)
{
	return &ws->ring[(ws->head + i) % WATCH_RING_RECORDS];
}

static size_t queued(const struct client *c)
{
	return c->len - c->off;
}

/* Append to the client's buffer, past WATCH_CLIENT_BUF by at most
 * `extra`: false when it does not fit. */
static bool buf_put(struct client *c, const char *s, size_t n, size_t extra)
{
	size_t want, cap;
	char *b;

	if (queued(c) + n > WATCH_CLIENT_BUF + extra)
		return false;
	if (c->off && c->len + n > c->cap) {
		memmove(c->buf, c->buf + c->off, queued(c));
		c->len -= c->off;
		c->off = 0;
	}
	if (c->len + n > c->cap) {
		want = c->len + n;
		cap = c->cap ? c->cap : BUF_START;
		while (cap < want)
			cap *= 2;
		if (cap > WATCH_CLIENT_BUF + BUF_RESERVE)
			cap = WATCH_CLIENT_BUF + BUF_RESERVE;
		if (cap < want)
			return false;
		b = realloc(c->buf, cap);
		if (!b)
			return false;
		c->buf = b;
		c->cap = cap;
	}
	memcpy(c->buf + c->len, s, n);
	c->len += n;
	return true;
}

static int out_want(struct client *c, bool on)
{
	uint32_t ev = EPOLLIN | (on ? EPOLLOUT : 0);

	if (c->out_on == on)
		return 0;
	c->out_on = on;
	return loop__io_events(c->src, ev);
}

static void client_free(struct watch_server *ws, struct client *c)
{
	size_t i;

	for (i = 0; i < ws->n_clients; i++)
		if (ws->clients[i] == c) {
			ws->clients[i] = ws->clients[--ws->n_clients];
			break;
		}
	if (c->src)
		loop__remove(c->src);
	close(c->fd);
	watch_filter__free(&c->f);
	free(c->buf);
	free(c);
}

/* Write what is queued, as much as the socket takes now: 0, or -EPIPE
 * when the client is gone. */
static int client_write(struct client *c)
{
	ssize_t n;

	while (queued(c)) {
		n = send(c->fd, c->buf + c->off, queued(c), MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			return -EPIPE;
		}
		c->off += (size_t)n;
	}
	if (!queued(c))
		c->off = c->len = 0;
	if (c->src)
		out_want(c, queued(c) > 0);
	return 0;
}

/* The watch_* lines: the log's format (agent/json.h), without a seq:
 * they are this client's, not records of the log. */
static void line_begin(struct json *j, const char *event)
{
	char ts[48];

	rfc3339_now(ts, sizeof(ts));
	json_begin(j);
	json_str(j, "ts", ts);
	json_str(j, "event", event);
}

/* Queue j's line, past the bound by at most extra; false: it did not fit. */
static bool put_json(struct client *c, struct json *j, size_t extra)
{
	bool ok;

	json_end(j);
	ok = !j->oom && buf_put(c, j->buf, j->len, extra);
	json_free(j);
	return ok;
}

static bool put_lost(struct client *c, bool dropped, size_t extra)
{
	struct json j;

	json_init(&j);
	line_begin(&j, "watch_lost");
	json_u64(&j, "count", c->lost);
	json_u64(&j, "first_seq", c->first_seq);
	json_u64(&j, "last_seq", c->last_seq);
	if (dropped) {
		json_bool(&j, "dropped", true);
		json_str(&j, "reason", "too_slow");
	}
	return put_json(c, &j, extra);
}

/* Once half the buffer is free again: the watch_lost line, then the
 * stream resumes (half, not one line's room: a client that reads a
 * little at a time would otherwise get a watch_lost per line). */
static void client_resume(struct client *c)
{
	if (!c->lost || queued(c) > WATCH_CLIENT_BUF / 2)
		return;
	if (put_lost(c, false, 0)) {
		c->lost = 0;
		c->lost_since_us = 0;
	}
}

/* Too slow: the final watch_lost, then only draining. */
static void client_drop(struct client *c, const char *why)
{
	pr_warn(SUB, "dropping a watcher (fd %d): %s; %llu lines it missed since its last watch_lost",
		c->fd, why, (unsigned long long)c->lost);
	put_lost(c, true, BUF_RESERVE);
	c->state = C_CLOSING;
	c->since_us = loop__now_us();
}

static void client_push(struct client *c, const char *line, size_t len, uint64_t seq)
{
	if (c->state != C_STREAM)
		return;
	if (!c->lost && buf_put(c, line, len, 0))
		return;
	if (!c->lost++) {
		c->first_seq = seq;
		c->lost_since_us = loop__now_us();
	}
	c->last_seq = seq;
	if (c->lost > WATCH_LOST_MAX)
		client_drop(c, "it missed more than 100000 lines");
}

static void say_error(struct client *c, const char *msg)
{
	struct json j;

	json_init(&j);
	line_begin(&j, "watch_error");
	json_str(&j, "error", msg);
	put_json(c, &j, BUF_RESERVE);
	client_write(c);
}

/* The request read: watch_start, the replay, then the stream. */
static void client_start(struct client *c)
{
	struct watch_server *ws = c->ws;
	size_t i, first, n_match = 0, *idx = NULL;
	char err[256];
	struct json j;

	if (watch_req__parse(c->req, c->req_len, &c->f, err, sizeof(err))) {
		say_error(c, err);
		c->state = C_CLOSING;
		c->since_us = loop__now_us();
		return;
	}
	/* The ring's matching records, oldest first; then the last N. */
	if ((c->f.has_since && c->f.since) || c->f.has_since_seq) {
		idx = ws->n ? calloc(ws->n, sizeof(*idx)) : NULL;
		for (i = 0; idx && i < ws->n; i++) {
			struct ring_ent *e = ring_at(ws, i);
			struct watch_line wl = { .buf = e->line, .len = e->len };

			if (c->f.has_since_seq && e->seq <= c->f.since_seq)
				continue;
			if (watch_filter__match_line(&c->f, &wl))
				idx[n_match++] = i;
			watch_line__done(&wl);
		}
	}
	first = c->f.has_since && n_match > c->f.since ? n_match - c->f.since : 0;
	if (c->f.has_since && !c->f.since)
		first = n_match;
	json_init(&j);
	line_begin(&j, "watch_start");
	json_u64(&j, "agent_pid", (uint64_t)ws->pid);
	json_str(&j, "agent_start", ws->start);
	if (ws->n) {
		json_u64(&j, "newest_seq", ring_at(ws, ws->n - 1)->seq);
		json_u64(&j, "oldest_seq", ring_at(ws, 0)->seq);
	} else {
		json_raw(&j, "newest_seq", "null");
		json_raw(&j, "oldest_seq", "null");
	}
	json_u64(&j, "ring_records", ws->n);
	json_u64(&j, "ring_max_records", WATCH_RING_RECORDS);
	json_u64(&j, "ring_max_bytes", WATCH_RING_BYTES);
	json_u64(&j, "replay", n_match - first);
	put_json(c, &j, BUF_RESERVE);
	c->state = C_STREAM;
	for (i = first; i < n_match; i++) {
		struct ring_ent *e = ring_at(ws, idx[i]);

		client_push(c, e->line, e->len, e->seq);
	}
	free(idx);
	client_write(c);
}

static void on_request_bytes(struct client *c)
{
	char *nl;
	ssize_t n;

	n = recv(c->fd, c->req + c->req_len, sizeof(c->req) - c->req_len, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		client_free(c->ws, c);
		return;
	}
	c->req_len += (size_t)n;
	nl = memchr(c->req, '\n', c->req_len);
	if (!nl) {
		if (c->req_len == sizeof(c->req)) {
			say_error(c, "request longer than 4095 bytes, or without its newline");
			c->state = C_CLOSING;
			c->since_us = loop__now_us();
		}
		return;
	}
	c->req_len = (size_t)(nl - c->req);
	client_start(c);
}

static int on_client(struct loop_source *s, uint32_t revents, void *userdata)
{
	struct client *c = userdata;
	char sink[512];
	ssize_t n;

	(void)s;
	if (c->state == C_REQUEST && (revents & EPOLLIN)) {
		on_request_bytes(c);
		return 0;	/* c may be freed */
	}
	if (revents & (EPOLLERR | EPOLLHUP)) {
		client_free(c->ws, c);
		return 0;
	}
	if (revents & EPOLLIN) {
		/* Streaming: nothing more is expected but the end. */
		n = recv(c->fd, sink, sizeof(sink), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			client_free(c->ws, c);
			return 0;
		}
	}
	if (revents & EPOLLOUT) {
		if (client_write(c)) {
			client_free(c->ws, c);
			return 0;
		}
		if (c->state == C_STREAM)
			client_resume(c);
	}
	if (c->state == C_CLOSING && !queued(c))
		client_free(c->ws, c);
	return 0;
}

static void refuse(int fd, const char *msg)
{
	struct json j;

	json_init(&j);
	line_begin(&j, "watch_error");
	json_str(&j, "error", msg);
	json_end(&j);
	if (!j.oom && send(fd, j.buf, j.len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		pr_debug(SUB, "refusing a watcher: %s", strerror(errno));
	json_free(&j);
	close(fd);
}

static int on_accept(struct loop_source *s, uint32_t revents, void *userdata)
{
	struct watch_server *ws = userdata;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct client *c;
	char msg[256];
	int fd, k;

	(void)s;
	(void)revents;
	/* A few per turn: a flood of connections must not starve the log. */
	for (k = 0; k < 16; k++) {
		fd = accept4(ws->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
				pr_warn(SUB, "accept on %s failed: %s; raise RLIMIT_NOFILE if it is EMFILE",
					ws->path, strerror(errno));
			return 0;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
			refuse(fd, "permission denied: the agent could not read the peer's credentials (SO_PEERCRED)");
			continue;
		}
		if (cred.uid != 0 && cred.uid != ws->euid) {
			snprintf(msg, sizeof(msg), "permission denied: uid %u may not watch; run stockade watch as root",
				 (unsigned)cred.uid);
			pr_info(SUB, "refused a watcher: pid %d, uid %u", (int)cred.pid, (unsigned)cred.uid);
			refuse(fd, msg);
			continue;
		}
		if (ws->n_clients >= WATCH_MAX_CLIENTS) {
			snprintf(msg, sizeof(msg), "too many watchers (%d); stop one and retry",
				 WATCH_MAX_CLIENTS);
			refuse(fd, msg);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			refuse(fd, "out of memory in the agent");
			continue;
		}
		c->ws = ws;
		c->fd = fd;
		c->since_us = loop__now_us();
		c->src = loop__add_io(ws->l, fd, LOOP_PRIO_NORMAL, on_client, c);
		if (!c->src) {
			pr_warn(SUB, "adding a watcher to the main loop failed: %s", strerror(errno));
			free(c);
			close(fd);
			continue;
		}
		ws->clients[ws->n_clients++] = c;
		pr_debug(SUB, "watcher connected: pid %d, uid %u", (int)cred.pid, (unsigned)cred.uid);
	}
	return 0;
}

/* After each turn: what the turn queued, one write per client. */
static int on_turn(struct loop *l, void *userdata)
{
	struct watch_server *ws = userdata;
	size_t i;

	(void)l;
	for (i = ws->n_clients; i-- > 0;) {
		struct client *c = ws->clients[i];

		if (!queued(c) || c->out_on)
			continue;
		if (client_write(c)) {
			client_free(ws, c);
			continue;
		}
		if (c->state == C_STREAM)
			client_resume(c);
		if (c->state == C_CLOSING && !queued(c))
			client_free(ws, c);
	}
	return 0;
}

/* Once a second: the stalled, the silent and the lingering. */
static int on_tick(struct loop_source *s, uint32_t revents, void *userdata)
{
	struct watch_server *ws = userdata;
	uint64_t now = loop__now_us();
	size_t i;
	int err;

	(void)revents;
	for (i = ws->n_clients; i-- > 0;) {
		struct client *c = ws->clients[i];

		if (c->state == C_REQUEST && now - c->since_us > WATCH_REQ_TIMEOUT_US) {
			say_error(c, "no request line within 5 s");
			client_free(ws, c);
		} else if (c->state == C_STREAM && c->lost &&
			   now - c->lost_since_us > WATCH_STALL_US) {
			client_drop(c, "its buffer stayed full for 5 s");
			client_write(c);
		} else if (c->state == C_CLOSING && now - c->since_us > WATCH_LINGER_US) {
			client_free(ws, c);
		}
	}
	err = loop__timer_in(s, TICK_US);
	if (err)
		pr_err(SUB, "arming the watchers' timer failed: %s", strerror(-err));
	return err;
}

void watch_server__line(void *ctx, const char *line, size_t len)
{
	struct watch_server *ws = ctx;
	struct watch_line wl = { .buf = line, .len = len };
	uint64_t seq = 0;
	size_t i;

	ring_push(ws, line, len);
	if (!ws->n_clients)
		return;
	line_seq(line, len, &seq);
	for (i = 0; i < ws->n_clients; i++) {
		struct client *c = ws->clients[i];

		if (c->state != C_STREAM)
			continue;
		if (!watch_filter__match_line(&c->f, &wl))
			continue;
		client_push(c, line, len, seq);
	}
	watch_line__done(&wl);
}

int watch_server__open(struct watch_server **out, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct watch_server *ws = NULL;
	char dir[sizeof(sa.sun_path)], *slash;
	const char *step = "socket";
	struct stat st;
	bool bound = false;
	mode_t old;
	int err = 0;

	*out = NULL;
	if (!path || !strcmp(path, "none"))
		return 0;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		pr_err(SUB, "--events-socket %s: longer than %zu bytes; choose a shorter path",
		       path, sizeof(sa.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	ws = calloc(1, sizeof(*ws));
	if (!ws)
		return -ENOMEM;
	ws->fd = -1;
	snprintf(ws->path, sizeof(ws->path), "%s", path);
	memcpy(sa.sun_path, path, strlen(path));
	/* The run directory, as the state file makes it. */
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		mkdir(dir, 0755);
	}
	/* We hold the pin directory's lock: no agent of these pins serves a
	 * socket still there; a previous one was killed. Anything but a
	 * socket is not ours to remove. */
	if (!lstat(path, &st)) {
		step = "removing the stale socket";
		if (!S_ISSOCK(st.st_mode)) {
			pr_err(SUB, "--events-socket %s exists and is not a socket; remove it or choose another path (--events-socket none: no socket)",
			       path);
			err = -EEXIST;
			goto out;
		}
		if (unlink(path))
			goto fail;
	}
	step = "socket";
	ws->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (ws->fd < 0)
		goto fail;
	/* 0600 from its creation: the umask covers bind(), and the socket's
	 * own mode (fchmod) is what Linux gives the file; no moment in which
	 * another user could connect. */
	step = "fchmod";
	if (fchmod(ws->fd, 0600))
		goto fail;
	old = umask(0177);
	step = "bind";
	err = bind(ws->fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (err)
		goto fail;
	bound = true;
	step = "chown";
	if (chown(path, 0, 0) && geteuid() == 0)
		goto fail;
	step = "listen";
	if (listen(ws->fd, WATCH_MAX_CLIENTS))
		goto fail;
	ws->euid = geteuid();
	ws->pid = getpid();
	rfc3339_now(ws->start, sizeof(ws->start));
	pr_info(SUB, "serving records at %s (stockade watch)", path);
	*out = ws;
	return 0;
fail:
	err = -errno;
	pr_err(SUB, "--events-socket %s: %s failed: %s; choose another path, or --events-socket none to serve no watchers",
	       path, step, strerror(errno));
out:
	if (ws->fd >= 0)
		close(ws->fd);
	if (bound)
		unlink(path);
	free(ws);
	return err;
}

int watch_server__loop_add(struct watch_server *ws, struct loop *l)
{
	int err;

	if (!ws)
		return 0;
	ws->l = l;
	ws->src = loop__add_io(l, ws->fd, LOOP_PRIO_NORMAL, on_accept, ws);
	ws->tick = ws->src ? loop__add_timer(l, LOOP_PRIO_NORMAL, on_tick, ws) : NULL;
	if (!ws->tick) {
		err = -errno;
		goto fail;
	}
	err = loop__add_post(l, on_turn, ws);
	if (!err)
		err = loop__timer_in(ws->tick, TICK_US);
	if (!err)
		return 0;
fail:
	pr_err(SUB, "adding the events socket to the main loop failed: %s", strerror(-err));
	return err;
}

void watch_server__free(struct watch_server *ws)
{
	size_t i;

	if (!ws)
		return;
	/* The loop is gone (loop__free() freed the sources): no removal. */
	while (ws->n_clients) {
		struct client *c = ws->clients[0];

		c->src = NULL;
		client_write(c);	/* agent_stop, where it fits */
		client_free(ws, c);
	}
	if (ws->fd >= 0) {
		close(ws->fd);
		unlink(ws->path);
	}
	for (i = 0; i < ws->n; i++)
		free(ring_at(ws, i)->line);
	free(ws);
}
