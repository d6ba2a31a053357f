// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The daemon's event loop (agent/loop.h): one epoll set, timerfds for the
 * timers, a signalfd for the signals.
 *
 * It logs nothing itself (callers name the step that failed), so that it
 * links into the unit tests without the agent (tests/unit/test_loop.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "loop.h"

/* Ready sources taken per epoll_wait(): more than the agent has. */
#define LOOP_MAX_READY	32

enum source_type { SRC_IO, SRC_TIMER, SRC_SIGNAL };

struct loop_source {
	struct loop *loop;
	struct loop_source *next;
	enum source_type type;
	int fd;
	bool owned;		/* our timerfd or signalfd: we close it */
	bool enabled;		/* io: in the epoll set with its events */
	bool dead;		/* loop__remove(): freed after this turn */
	uint32_t events;	/* io: what it waits for (EPOLLIN by default) */
	int prio;
	uint64_t at_us;		/* timer: armed expiry, 0 if disarmed */
	loop_fn fn;
	loop_signal_fn sig_fn;
	void *userdata;
};

struct loop_post {
	loop_post_fn fn;
	void *userdata;
};

struct loop {
	int epfd;
	struct loop_source *sources;
	struct loop_source *dead;	/* removed during this turn */
	struct loop_post *post;
	size_t n_post;
	bool exiting;
	int code;
};

uint64_t loop__now_us(void)
{
	return (uint64_t)clock_now_ns(CLOCK_MONOTONIC) / 1000;
}

int loop__new(struct loop **out)
{
	struct loop *l = calloc(1, sizeof(*l));
	int err;

	if (!l)
		return -ENOMEM;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0) {
		err = -errno;
		free(l);
		return err;
	}
	*out = l;
	return 0;
}

static void free_dead(struct loop *l)
{
	struct loop_source *s, *next;

	for (s = l->dead; s; s = next) {
		next = s->next;
		free(s);
	}
	l->dead = NULL;
}

void loop__free(struct loop *l)
{
	struct loop_source *s, *next;

	if (!l)
		return;
	free_dead(l);
	for (s = l->sources; s; s = next) {
		next = s->next;
		if (s->owned && s->fd >= 0)
			close(s->fd);
		free(s);
	}
	free(l->post);
	close(l->epfd);
	free(l);
}

/* A new source on fd, in the epoll set; NULL and errno on failure. */
static struct loop_source *source_add(struct loop *l, enum source_type type,
				      int fd, bool owned, int prio)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct loop_source *s = calloc(1, sizeof(*s));

	if (!s)
		goto fail;
	s->loop = l;
	s->type = type;
	s->fd = fd;
	s->owned = owned;
	s->prio = prio;
	s->enabled = true;
	s->events = EPOLLIN;
	ev.data.ptr = s;
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev))
		goto fail;
	s->next = l->sources;
	l->sources = s;
	return s;
fail:
	{
		int err = errno;

		free(s);
		if (owned)
			close(fd);
		errno = err;
	}
	return NULL;
}

struct loop_source *loop__add_io(struct loop *l, int fd, int prio,
				 loop_fn fn, void *userdata)
{
	struct loop_source *s = source_add(l, SRC_IO, fd, false, prio);

	if (s) {
		s->fn = fn;
		s->userdata = userdata;
	}
	return s;
}

struct loop_source *loop__add_timer(struct loop *l, int prio, loop_fn fn,
				    void *userdata)
{
	struct loop_source *s;
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);

	if (fd < 0)
		return NULL;
	s = source_add(l, SRC_TIMER, fd, true, prio);
	if (s) {
		s->fn = fn;
		s->userdata = userdata;
	}
	return s;
}

struct loop_source *loop__add_signals(struct loop *l, const sigset_t *mask,
				      int prio, loop_signal_fn fn, void *userdata)
{
	struct loop_source *s;
	int fd = signalfd(-1, mask, SFD_NONBLOCK | SFD_CLOEXEC);

	if (fd < 0)
		return NULL;
	s = source_add(l, SRC_SIGNAL, fd, true, prio);
	if (s) {
		s->sig_fn = fn;
		s->userdata = userdata;
	}
	return s;
}

int loop__add_post(struct loop *l, loop_post_fn fn, void *userdata)
{
	struct loop_post *p = realloc(l->post, (l->n_post + 1) * sizeof(*p));

	if (!p)
		return -ENOMEM;
	l->post = p;
	p[l->n_post].fn = fn;
	p[l->n_post].userdata = userdata;
	l->n_post++;
	return 0;
}

int loop__timer_at(struct loop_source *s, uint64_t usec)
{
	struct itimerspec its = { 0 };

	if (s->type != SRC_TIMER)
		return -EINVAL;
	if (!usec)
		usec = 1;	/* a zero it_value would disarm */
	if (s->at_us == usec)
		return 0;
	its.it_value.tv_sec = (time_t)(usec / 1000000);
	its.it_value.tv_nsec = (long)(usec % 1000000) * 1000;
	if (timerfd_settime(s->fd, TFD_TIMER_ABSTIME, &its, NULL))
		return -errno;
	s->at_us = usec;
	return 0;
}

int loop__timer_in(struct loop_source *s, uint64_t usec)
{
	return loop__timer_at(s, loop__now_us() + usec);
}

int loop__timer_off(struct loop_source *s)
{
	struct itimerspec its = { 0 };

	if (s->type != SRC_TIMER)
		return -EINVAL;
	if (!s->at_us)
		return 0;
	if (timerfd_settime(s->fd, TFD_TIMER_ABSTIME, &its, NULL))
		return -errno;
	s->at_us = 0;
	return 0;
}

bool loop__timer_armed(const struct loop_source *s)
{
	return s->at_us != 0;
}

int loop__io_enable(struct loop_source *s, bool on)
{
	/* EPOLL_CTL_MOD to no events, not DEL: the fd stays ours to resume
	 * cheaply, and epoll_wait() never reports it meanwhile (EPOLLERR and
	 * EPOLLHUP aside, which a ring buffer or an inotify fd never raise). */
	struct epoll_event ev = { .events = on ? s->events : 0, .data.ptr = s };

	if (s->type != SRC_IO)
		return -EINVAL;
	if (s->enabled == on)
		return 0;
	if (epoll_ctl(s->loop->epfd, EPOLL_CTL_MOD, s->fd, &ev))
		return -errno;
	s->enabled = on;
	return 0;
}

int loop__io_events(struct loop_source *s, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = s };

	if (s->type != SRC_IO)
		return -EINVAL;
	if (s->events == events)
		return 0;
	if (s->enabled && epoll_ctl(s->loop->epfd, EPOLL_CTL_MOD, s->fd, &ev))
		return -errno;
	s->events = events;
	return 0;
}

void loop__remove(struct loop_source *s)
{
	struct loop_source **p;
	struct loop *l;

	if (!s || s->dead)
		return;
	l = s->loop;
	/* Before the fd is closed: a closed fd would leave the epoll
	 * registration behind as long as a dup of it lives. */
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, s->fd, NULL);
	if (s->owned && s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	for (p = &l->sources; *p; p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			break;
		}
	/* Not freed yet: this turn's ready list may still name it. */
	s->dead = true;
	s->next = l->dead;
	l->dead = s;
}

void loop__exit(struct loop *l, int code)
{
	l->exiting = true;
	l->code = code;
}

static int dispatch(struct loop_source *s, uint32_t revents)
{
	struct signalfd_siginfo si;
	uint64_t expirations;
	ssize_t n;
	int err;

	if (s->dead)
		return 0;
	switch (s->type) {
	case SRC_IO:
		/* Disabled by a source dispatched before it this turn. */
		if (!s->enabled)
			return 0;
		return s->fn(s, revents, s->userdata);
	case SRC_TIMER:
		/* Nothing to read: re-armed or disarmed earlier this turn,
		 * which reset the expiration. */
		if (read(s->fd, &expirations, sizeof(expirations)) != sizeof(expirations))
			return errno == EAGAIN ? 0 : -errno;
		s->at_us = 0;	/* one-shot: the callback may arm it again */
		return s->fn(s, 0, s->userdata);
	case SRC_SIGNAL:
		while ((n = read(s->fd, &si, sizeof(si))) == sizeof(si)) {
			err = s->sig_fn(s, &si, s->userdata);
			if (err < 0 || s->loop->exiting)
				return err;
		}
		return n < 0 && errno != EAGAIN ? -errno : 0;
	}
	return -EINVAL;
}

int loop__run(struct loop *l)
{
	struct epoll_event ev[LOOP_MAX_READY];
	struct loop_source *ready[LOOP_MAX_READY];
	uint32_t revents[LOOP_MAX_READY];
	int n, i, j, err = 0;
	size_t k;

	l->exiting = false;
	l->code = 0;
	while (!l->exiting) {
		/* No timeout: the timers are fds like any other. */
		n = epoll_wait(l->epfd, ev, LOOP_MAX_READY, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		/* By priority, stable (insertion sort: a handful at most). */
		for (i = 0; i < n; i++) {
			struct loop_source *s = ev[i].data.ptr;

			for (j = i; j > 0 && ready[j - 1]->prio > s->prio; j--) {
				ready[j] = ready[j - 1];
				revents[j] = revents[j - 1];
			}
			ready[j] = s;
			revents[j] = ev[i].events;
		}
		for (i = 0; i < n && !l->exiting; i++) {
			err = dispatch(ready[i], revents[i]);
			if (err < 0)
				break;
		}
		free_dead(l);
		if (err < 0)
			return err;
		for (k = 0; k < l->n_post && !l->exiting; k++) {
			err = l->post[k].fn(l, l->post[k].userdata);
			if (err < 0)
				return err;
		}
	}
	return l->code;
}
