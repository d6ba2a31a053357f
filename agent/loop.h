/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The daemon's one event loop (agent/loop.c), after systemd's sd-event:
 * everything that can wake the agent is a file descriptor in one epoll
 * set, signals (signalfd) and timers (timerfd) included. There is no
 * fixed tick: an idle agent sleeps in epoll_wait() until a source is
 * ready or its earliest timer expires.
 *
 * Each source has a priority (lower first). The ready sources of one
 * epoll_wait() are dispatched in priority order, so a signal or an
 * inotify event that arrives during a flood of records is handled in the
 * same turn as the records, before them. After every turn the post hooks
 * run (the work that followed every turn of the old loop: limits).
 *
 * Callbacks return 0, or a negative errno, which ends loop__run() with
 * that error. Single-threaded, like the rest of the agent.
 */
#ifndef STOCKADE_LOOP_H
#define STOCKADE_LOOP_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/signalfd.h>

struct loop;
struct loop_source;

/* An fd is ready (revents: EPOLLIN...), or a timer expired (revents 0). */
typedef int (*loop_fn)(struct loop_source *s, uint32_t revents, void *userdata);
/* One signal read from the signalfd. */
typedef int (*loop_signal_fn)(struct loop_source *s,
			      const struct signalfd_siginfo *si, void *userdata);
/* After each turn. */
typedef int (*loop_post_fn)(struct loop *l, void *userdata);

/* Priorities used by the agent: signals and inotify first, the timers,
 * then the records, which may take a few milliseconds a turn. */
enum {
	LOOP_PRIO_FIRST = -10,
	LOOP_PRIO_NORMAL = 0,
	LOOP_PRIO_BULK = 10,
};

int loop__new(struct loop **out);
/* Frees every source, closing the timerfds and the signalfd it made; the
 * fds given to loop__add_io() stay their owners' to close. */
void loop__free(struct loop *l);

/* Watch fd for EPOLLIN (level-triggered). NULL and errno on failure. */
struct loop_source *loop__add_io(struct loop *l, int fd, int prio,
				 loop_fn fn, void *userdata);
/* A CLOCK_MONOTONIC timerfd, disarmed until loop__timer_*(). */
struct loop_source *loop__add_timer(struct loop *l, int prio, loop_fn fn,
				    void *userdata);
/* A signalfd for mask; the signals must be blocked already (they are, from
 * main(): agent__signals_init()). */
struct loop_source *loop__add_signals(struct loop *l, const sigset_t *mask,
				      int prio, loop_signal_fn fn, void *userdata);
int loop__add_post(struct loop *l, loop_post_fn fn, void *userdata);

/* Arm a timer, one-shot: at usec of CLOCK_MONOTONIC (a time already past
 * fires at once), or usec from now (0: at once). Re-arming replaces the
 * previous expiry; an unchanged one costs no system call. */
int loop__timer_at(struct loop_source *s, uint64_t usec);
int loop__timer_in(struct loop_source *s, uint64_t usec);
int loop__timer_off(struct loop_source *s);
/* Is the timer armed (not yet expired)? */
bool loop__timer_armed(const struct loop_source *s);

/* Stop or resume watching an io source's fd (it stays registered). */
int loop__io_enable(struct loop_source *s, bool on);
/* Watch an io source for these events (EPOLLIN, EPOLLOUT...) instead;
 * while disabled, the next loop__io_enable(s, true) restores them. */
int loop__io_events(struct loop_source *s, uint32_t events);
/* Take a source out of the loop for good (a client's fd before it is
 * closed): it is never dispatched again, even later in the same turn, and
 * freed after the turn. A timer's or the signalfd's own fd is closed. */
void loop__remove(struct loop_source *s);

/* Run until loop__exit() or a callback's error: the code, or -errno. */
int loop__run(struct loop *l);
void loop__exit(struct loop *l, int code);

/* CLOCK_MONOTONIC, microseconds: the clock the timers use. */
uint64_t loop__now_us(void);

#endif
