// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The /metrics endpoint (agent/metrics_http.h). libmicrohttpd runs in its
 * external mode with epoll (MHD_USE_EPOLL without an internal thread): it
 * keeps its sockets in an epoll set of its own, whose fd is one io source
 * of the agent's loop, and MHD_run() does whatever is ready, never
 * waiting (it polls its set with a zero timeout). MHD_get_timeout() says
 * when it must run again without any fd ready (an idle connection to time
 * out, or work it left pending): one timer of the loop. A thread would
 * buy nothing: the text is built by the loop anyway, and serving it is a
 * non-blocking write of a buffer already made.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <netinet/in.h>

#include "limits_util.h"
#include "log.h"
#include "loop.h"
#include "metrics_http.h"

#if STOCKADE_METRICS_HTTP
#include <dlfcn.h>
#include <microhttpd.h>

/*
 * libmicrohttpd is loaded when --metrics-listen asks for it, not linked:
 * it brings GnuTLS and p11-kit with it, which an agent that serves no HTTP
 * need not carry (about 2 MiB of its idle RSS: README "Performance",
 * scale), nor run the constructors of, as root. The soname is Debian's
 * (libmicrohttpd12, bookworm and trixie alike); the header, of the same
 * package, gives every pointer its type.
 */
#define MHD_SONAME	"libmicrohttpd.so.12"

static struct {
	void *lib;
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;
	__typeof__(MHD_run) *run;
	__typeof__(MHD_get_timeout) *get_timeout;
	__typeof__(MHD_get_daemon_info) *get_daemon_info;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_destroy_response) *destroy_response;
	__typeof__(MHD_add_response_header) *add_response_header;
} mhd;

/* Load the library once, every function or none. */
static int mhd_load(const char *spec)
{
	const char *missing = NULL;
	void *lib;

	if (mhd.lib)
		return 0;
	lib = dlopen(MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		pr_err("metrics", "--metrics-listen %s: loading the HTTP server library failed (%s): install Debian's libmicrohttpd12, or use --metrics FILE",
		       spec, dlerror());
		return -ENOENT;
	}
#define MHD_SYM(f) do {							\
		if (!missing && !(*(void **)&mhd.f = dlsym(lib, "MHD_" #f)))	\
			missing = "MHD_" #f;					\
	} while (0)
	MHD_SYM(start_daemon);
	MHD_SYM(stop_daemon);
	MHD_SYM(run);
	MHD_SYM(get_timeout);
	MHD_SYM(get_daemon_info);
	MHD_SYM(queue_response);
	MHD_SYM(create_response_from_buffer);
	MHD_SYM(destroy_response);
	MHD_SYM(add_response_header);
#undef MHD_SYM
	if (missing) {
		pr_err("metrics", "--metrics-listen %s: %s has no %s: not the libmicrohttpd this stockade was built for; install Debian's libmicrohttpd12, or use --metrics FILE",
		       spec, MHD_SONAME, missing);
		dlclose(lib);
		memset(&mhd, 0, sizeof(mhd));
		return -ENOENT;
	}
	mhd.lib = lib;
	return 0;
}

/*
 * Bounds for a slow or hostile client. A scrape is one short request and
 * a response of some kilobytes; Prometheus opens one connection per
 * target, kept alive between scrapes (15 s or more apart).
 */
#define METRICS_HTTP_CONNS	8	/* at once; more wait in the backlog */
#define METRICS_HTTP_IDLE_S	5	/* idle time before a connection is closed */
#define METRICS_HTTP_MEM	(16 * 1024)	/* per connection: request headers */
#define METRICS_HTTP_BACKLOG	16

#define CONTENT_TYPE	"text/plain; version=0.0.4; charset=utf-8"

static const char not_found[] = "404 not found: the only path is /metrics\n";
static const char not_allowed[] = "405 method not allowed: GET /metrics only\n";

struct metrics_http {
	struct MHD_Daemon *d;
	struct loop_source *io, *timer;
	/* The text as last published (refcounted by MHD: a response being
	 * sent keeps its buffer until done), and the two error responses. */
	struct MHD_Response *cur, *r404, *r405;
	char addr[64];
	bool running;		/* started: its messages are debug from now */
	bool run_failed_said;
	char last_msg[256];	/* MHD's last message, for a failed start */
};

/* MHD's messages. Once it runs, only at debug level: what a client sends
 * must not be able to fill the agent's log. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct metrics_http *h = cls;
	size_t n;

	vsnprintf(h->last_msg, sizeof(h->last_msg), fmt, ap);
	n = strlen(h->last_msg);
	while (n && h->last_msg[n - 1] == '\n')
		h->last_msg[--n] = '\0';
	if (h->running)
		pr_debug("metrics", "libmicrohttpd: %s", h->last_msg);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
				  const char *url, const char *method,
				  const char *version, const char *upload_data,
				  size_t *upload_data_size, void **req_cls)
{
	struct metrics_http *h = cls;
	struct MHD_Response *r;
	unsigned int code;

	(void)version;
	(void)upload_data;
	(void)upload_data_size;
	(void)req_cls;
	if (strcmp(url, "/metrics")) {
		r = h->r404;
		code = MHD_HTTP_NOT_FOUND;
	} else if (strcmp(method, MHD_HTTP_METHOD_GET)) {
		r = h->r405;
		code = MHD_HTTP_METHOD_NOT_ALLOWED;
	} else if (h->cur) {
		r = h->cur;
		code = MHD_HTTP_OK;
	} else {
		/* Not reached: the first text is built before agent_ready. */
		return MHD_NO;
	}
	/* Answered at the first call, before any body: a request with one
	 * (not GET /metrics) gets its error, and the connection is closed. */
	return mhd.queue_response(c, code, r);
}

static int rearm(struct metrics_http *h)
{
	MHD_UNSIGNED_LONG_LONG ms;

	if (mhd.get_timeout(h->d, &ms) != MHD_YES)
		return loop__timer_off(h->timer);
	return loop__timer_in(h->timer, (uint64_t)ms * 1000);
}

static int run(struct metrics_http *h)
{
	int err;

	/* A failure here is the endpoint's, not the agent's: said once, and
	 * the loop goes on (enforcement and records do not depend on it). */
	if (mhd.run(h->d) != MHD_YES && !h->run_failed_said) {
		pr_warn("metrics", "serving %s failed: %s; the endpoint may not answer until the agent restarts",
			h->addr, h->last_msg[0] ? h->last_msg : "libmicrohttpd gave no reason");
		h->run_failed_said = true;
	}
	err = rearm(h);
	if (err)
		pr_err("metrics", "arming the HTTP timer failed: %s; stopping the agent",
		       strerror(-err));
	return err;
}

static int on_io(struct loop_source *s, uint32_t revents, void *userdata)
{
	(void)s;
	(void)revents;
	return run(userdata);
}

static int on_timer(struct loop_source *s, uint32_t revents, void *userdata)
{
	(void)s;
	(void)revents;
	return run(userdata);
}

/* Our own socket, so that a bind failure is said with its errno. */
static int listen_on(const struct sockaddr_storage *ss, unsigned int len,
		     const char *spec)
{
	int fd, one = 1, err;

	fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		pr_err("metrics", "--metrics-listen %s: socket() failed: %s", spec,
		       strerror(errno));
		return err;
	}
	/* A restarted agent binds again while old connections linger in
	 * TIME_WAIT; [::] means IPv6 only (the address given, nothing more). */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss->ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)ss, len)) {
		err = -errno;
		pr_err("metrics", "--metrics-listen %s: bind failed: %s; %s", spec,
		       strerror(errno),
		       errno == EADDRINUSE ? "another process listens there (ss -ltnp shows which): stop it or choose another port" :
		       errno == EADDRNOTAVAIL ? "no interface of this host has that address" :
		       errno == EACCES ? "a port below 1024 needs CAP_NET_BIND_SERVICE" :
		       "check the address");
		close(fd);
		return err;
	}
	if (listen(fd, METRICS_HTTP_BACKLOG)) {
		err = -errno;
		pr_err("metrics", "--metrics-listen %s: listen failed: %s", spec,
		       strerror(errno));
		close(fd);
		return err;
	}
	return fd;
}

static struct MHD_Response *static_response(const char *text)
{
	struct MHD_Response *r = mhd.create_response_from_buffer(strlen(text),
			(void *)text, MHD_RESPMEM_PERSISTENT);

	if (r && mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
					 "text/plain; charset=utf-8") != MHD_YES) {
		mhd.destroy_response(r);
		r = NULL;
	}
	return r;
}

int metrics_http__open(struct metrics_http **out, const char *spec,
		       bool allow_remote)
{
	struct sockaddr_storage ss;
	struct metrics_http *h;
	unsigned int len;
	bool loopback;
	char why[160];
	int fd = -1, err;

	*out = NULL;
	err = metrics_listen_parse(spec, &ss, &len, &loopback, why, sizeof(why));
	if (err) {
		pr_err("metrics", "--metrics-listen %s: %s", spec, why);
		return err;
	}
	if (!loopback && !allow_remote) {
		pr_err("metrics", "--metrics-listen %s: not a loopback address, and the endpoint has no TLS and no authentication; bind 127.0.0.1 or [::1] and scrape through a sidecar or a port-forward, or add --metrics-allow-remote and restrict who reaches it (NetworkPolicy, firewall)",
		       spec);
		return -EPERM;
	}
	if (!loopback)
		pr_warn("metrics", "--metrics-listen %s: serving beyond loopback (--metrics-allow-remote), without TLS or authentication: whoever reaches the port reads every policy and cgroup name",
			spec);
	err = mhd_load(spec);
	if (err)
		return err;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	snprintf(h->addr, sizeof(h->addr), "%s", spec);
	err = -ENOMEM;
	h->r404 = static_response(not_found);
	h->r405 = static_response(not_allowed);
	if (!h->r404 || !h->r405 ||
	    mhd.add_response_header(h->r405, MHD_HTTP_HEADER_ALLOW, "GET") != MHD_YES)
		goto fail;
	fd = listen_on(&ss, len, spec);
	if (fd < 0) {
		err = fd;
		goto fail;
	}
	h->d = mhd.start_daemon(MHD_USE_EPOLL | MHD_USE_ERROR_LOG |
				(ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
				0, NULL, NULL, on_request, h,
				MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h,
				MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)METRICS_HTTP_CONNS,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)METRICS_HTTP_IDLE_S,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)METRICS_HTTP_MEM,
				/* SIGPIPE is ignored (agent__signals_init()). */
				MHD_OPTION_SIGPIPE_HANDLED_BY_APP, 1,
				MHD_OPTION_END);
	if (!h->d) {
		err = -EIO;
		pr_err("metrics", "--metrics-listen %s: starting the HTTP server (libmicrohttpd) failed: %s",
		       spec, h->last_msg[0] ? h->last_msg : "no reason given");
		goto fail;
	}
	fd = -1;	/* the daemon's: MHD_stop_daemon() closes it */
	h->running = true;
	pr_info("metrics", "serving GET /metrics on %s", spec);
	*out = h;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	metrics_http__free(h);
	return err;
}

int metrics_http__loop_add(struct metrics_http *h, struct loop *l)
{
	const union MHD_DaemonInfo *info;
	int err;

	if (!h)
		return 0;
	info = mhd.get_daemon_info(h->d, MHD_DAEMON_INFO_EPOLL_FD);
	if (!info || info->epoll_fd < 0) {
		pr_err("metrics", "libmicrohttpd gave no epoll fd for the main loop; this build of it lacks epoll support");
		return -EINVAL;
	}
	h->io = loop__add_io(l, info->epoll_fd, LOOP_PRIO_BULK, on_io, h);
	h->timer = h->io ? loop__add_timer(l, LOOP_PRIO_BULK, on_timer, h) : NULL;
	if (!h->timer) {
		err = -errno;
		pr_err("metrics", "adding the HTTP server to the main loop failed: %s; raise RLIMIT_NOFILE if it is EMFILE",
		       strerror(errno));
		return err;
	}
	return rearm(h);
}

void metrics_http__publish(void *ctx, char *text, size_t len)
{
	struct metrics_http *h = ctx;
	struct MHD_Response *r;

	r = mhd.create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(text);
		return;	/* the previous text stays served */
	}
	if (mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, CONTENT_TYPE) != MHD_YES) {
		mhd.destroy_response(r);
		return;
	}
	/* A response still being sent holds its own reference. */
	if (h->cur)
		mhd.destroy_response(h->cur);
	h->cur = r;
}

void metrics_http__free(struct metrics_http *h)
{
	if (!h)
		return;
	/* The loop's sources are the loop's to free (loop__free()); the
	 * daemon goes first, as its epoll fd is one of them. */
	if (h->d)
		mhd.stop_daemon(h->d);
	if (h->cur)
		mhd.destroy_response(h->cur);
	if (h->r404)
		mhd.destroy_response(h->r404);
	if (h->r405)
		mhd.destroy_response(h->r405);
	free(h);
}

#else /* !STOCKADE_METRICS_HTTP */

int metrics_http__open(struct metrics_http **out, const char *spec,
		       bool allow_remote)
{
	(void)allow_remote;
	*out = NULL;
	pr_err("metrics", "--metrics-listen %s: this stockade was built without the HTTP server (STOCKADE_METRICS_HTTP=0: a static build, as GnuTLS, which libmicrohttpd needs, cannot be linked statically on Debian); use --metrics FILE, or the dynamically linked build",
	       spec);
	return -EOPNOTSUPP;
}

int metrics_http__loop_add(struct metrics_http *h, struct loop *l)
{
	(void)h;
	(void)l;
	return 0;
}

void metrics_http__publish(void *ctx, char *text, size_t len)
{
	(void)ctx;
	(void)len;
	free(text);
}

void metrics_http__free(struct metrics_http *h)
{
	(void)h;
}

#endif /* STOCKADE_METRICS_HTTP */
