// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The main loop without the agent (agent/loop.c): timers fire in deadline
 * order and only when due, ready sources run by priority, a disabled fd
 * is not dispatched, signals come through the signalfd, post hooks follow
 * every turn, and an error or loop__exit() ends the run.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "loop.h"

struct trace {
	struct loop *l;
	char seen[64];
	size_t n;
	unsigned int turns;
	uint64_t fired_us[8];
	int exit_after;		/* exit once this many entries are seen */
};

static void note(struct trace *t, char c)
{
	if (t->n + 1 < sizeof(t->seen))
		t->seen[t->n++] = c;
	if ((int)t->n == t->exit_after)
		loop__exit(t->l, 7);
}

/* A source's userdata: its trace, and the letter it notes there. */
struct tag {
	struct trace *t;
	char c;
};

static struct trace *trace_of(void *userdata, char *c)
{
	struct tag *tag = userdata;

	*c = tag->c;
	return tag->t;
}

static int on_timer(struct loop_source *s, uint32_t revents, void *userdata)
{
	char c;
	struct trace *t = trace_of(userdata, &c);

	(void)s;
	assert_int_equal(revents, 0);
	t->fired_us[(c - 'a') & 7] = loop__now_us();
	note(t, c);
	return 0;
}

static int on_io(struct loop_source *s, uint32_t revents, void *userdata)
{
	char c;
	struct trace *t = trace_of(userdata, &c);

	(void)s;
	assert_true(revents & 0x001);	/* EPOLLIN */
	note(t, c);
	return 0;
}

static int on_post(struct loop *l, void *userdata)
{
	(void)l;
	((struct trace *)userdata)->turns++;
	return 0;
}

static int on_fail(struct loop_source *s, uint32_t revents, void *userdata)
{
	(void)s;
	(void)revents;
	(void)userdata;
	return -EIO;
}

static int on_sig(struct loop_source *s, const struct signalfd_siginfo *si,
		  void *userdata)
{
	struct trace *t = userdata;

	(void)s;
	note(t, si->ssi_signo == SIGUSR1 ? 'S' : '?');
	return 0;
}

static struct trace traces[3];
static struct loop *loop_of_out;
static struct tag tags[3][4];

/* The userdata of source number i, letter c, of trace t. */
#define UD(t, i, c)	(tags[(t) - traces][i] = (struct tag){ (t), (c) }, \
			 (void *)&tags[(t) - traces][i])

static void test_timers(void **state)
{
	struct trace *t = &traces[0];
	struct loop_source *a, *b, *c;
	uint64_t start;

	(void)state;
	memset(t, 0, sizeof(*t));
	assert_int_equal(loop__new(&t->l), 0);
	a = loop__add_timer(t->l, 0, on_timer, UD(t, 0, 'a'));
	b = loop__add_timer(t->l, 0, on_timer, UD(t, 1, 'b'));
	c = loop__add_timer(t->l, 0, on_timer, UD(t, 2, 'c'));
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	assert_int_equal(loop__add_post(t->l, on_post, t), 0);
	start = loop__now_us();
	/* Out of order; b re-armed later, c armed then disarmed. */
	assert_int_equal(loop__timer_in(a, 30000), 0);
	assert_int_equal(loop__timer_in(b, 5000), 0);
	assert_int_equal(loop__timer_in(b, 20000), 0);
	assert_int_equal(loop__timer_in(c, 10000), 0);
	assert_true(loop__timer_armed(c));
	assert_int_equal(loop__timer_off(c), 0);
	assert_false(loop__timer_armed(c));
	t->exit_after = 2;
	assert_int_equal(loop__run(t->l), 7);
	assert_string_equal(t->seen, "ba");
	/* Not early, and one turn each: no tick in between. */
	assert_true(t->fired_us[1] - start >= 20000);
	assert_true(t->fired_us[0] - start >= 30000);
	assert_false(loop__timer_armed(a));
	assert_int_equal(t->turns, 1);	/* the last turn exits before its post */
	loop__free(t->l);
}

static void test_priority_and_enable(void **state)
{
	struct trace *t = &traces[1];
	struct loop_source *lo, *hi, *off, *now;
	int p1[2], p2[2], p3[2];

	(void)state;
	memset(t, 0, sizeof(*t));
	assert_int_equal(pipe(p1), 0);
	assert_int_equal(pipe(p2), 0);
	assert_int_equal(pipe(p3), 0);
	assert_int_equal(loop__new(&t->l), 0);
	lo = loop__add_io(t->l, p1[0], LOOP_PRIO_BULK, on_io, UD(t, 1, 'r'));
	hi = loop__add_io(t->l, p2[0], LOOP_PRIO_FIRST, on_io, UD(t, 2, 'i'));
	off = loop__add_io(t->l, p3[0], LOOP_PRIO_FIRST, on_io, UD(t, 3, 'x'));
	now = loop__add_timer(t->l, LOOP_PRIO_NORMAL, on_timer, UD(t, 0, 'a'));
	assert_non_null(lo);
	assert_non_null(hi);
	assert_non_null(off);
	assert_non_null(now);
	assert_int_equal(loop__io_enable(off, false), 0);
	/* All ready before the first epoll_wait(): one turn, by priority. */
	assert_int_equal(write(p1[1], "1", 1), 1);
	assert_int_equal(write(p2[1], "2", 1), 1);
	assert_int_equal(write(p3[1], "3", 1), 1);
	assert_int_equal(loop__timer_in(now, 0), 0);
	t->exit_after = 3;
	assert_int_equal(loop__run(t->l), 7);
	assert_string_equal(t->seen, "iar");
	/* Level-triggered: unread, it is ready again; enabled, x too. */
	assert_int_equal(loop__io_enable(off, true), 0);
	t->exit_after = 6;
	assert_int_equal(loop__run(t->l), 7);
	/* i and x share a priority: either first, r after both. */
	assert_true(!strcmp(t->seen, "iarixr") || !strcmp(t->seen, "iarxir"));
	loop__free(t->l);
	close(p1[0]);
	close(p1[1]);
	close(p2[0]);
	close(p2[1]);
	close(p3[0]);
	close(p3[1]);
}

static void test_signal_and_error(void **state)
{
	struct trace *t = &traces[2];
	struct loop_source *f;
	sigset_t mask, old;

	(void)state;
	memset(t, 0, sizeof(*t));
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	assert_int_equal(sigprocmask(SIG_BLOCK, &mask, &old), 0);
	assert_int_equal(loop__new(&t->l), 0);
	assert_non_null(loop__add_signals(t->l, &mask, 0, on_sig, t));
	assert_int_equal(kill(getpid(), SIGUSR1), 0);
	t->exit_after = 1;
	assert_int_equal(loop__run(t->l), 7);
	assert_string_equal(t->seen, "S");
	/* A callback's error ends the run with it. */
	f = loop__add_timer(t->l, 0, on_fail, NULL);
	assert_non_null(f);
	assert_int_equal(loop__timer_in(f, 0), 0);
	assert_int_equal(loop__run(t->l), -EIO);
	loop__free(t->l);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/* A source removed by one dispatched before it in the same turn. */
struct remover {
	struct loop *l;
	struct loop_source *victim;
	int fd;
	int ran, victim_ran;
};

static int on_remover(struct loop_source *s, uint32_t revents, void *userdata)
{
	struct remover *r = userdata;
	char b;

	(void)s;
	(void)revents;
	r->ran++;
	assert_int_equal(read(r->fd, &b, 1), 1);
	if (r->victim) {
		loop__remove(r->victim);
		r->victim = NULL;
	}
	return 0;
}

/* The turn's end, not the remover, ends the run: an exit would stop the
 * turn before the victim's place in it. */
static int on_post_exit(struct loop *l, void *userdata)
{
	(void)userdata;
	loop__exit(l, 0);
	return 0;
}

static int on_victim(struct loop_source *s, uint32_t revents, void *userdata)
{
	(void)s;
	(void)revents;
	((struct remover *)userdata)->victim_ran++;
	return 0;
}

static int on_out(struct loop_source *s, uint32_t revents, void *userdata)
{
	(void)s;
	assert_true(revents & 0x004);	/* EPOLLOUT */
	(*(int *)userdata)++;
	loop__exit(loop_of_out, 0);
	return 0;
}

static void test_remove_and_events(void **state)
{
	struct remover r = { 0 };
	struct loop_source *a;
	int p1[2], p2[2], outs = 0;

	(void)state;
	assert_int_equal(loop__new(&r.l), 0);
	assert_int_equal(pipe(p1), 0);
	assert_int_equal(pipe(p2), 0);
	r.fd = p1[0];
	assert_int_equal(loop__add_post(r.l, on_post_exit, NULL), 0);
	/* The remover first (priority), both ready in one turn. */
	assert_non_null(loop__add_io(r.l, p1[0], -1, on_remover, &r));
	r.victim = loop__add_io(r.l, p2[0], 1, on_victim, &r);
	assert_non_null(r.victim);
	assert_int_equal(write(p1[1], "x", 1), 1);
	assert_int_equal(write(p2[1], "y", 1), 1);
	assert_int_equal(loop__run(r.l), 0);
	assert_int_equal(r.ran, 1);
	assert_int_equal(r.victim_ran, 0);
	/* Never again either, though its fd stays readable. */
	assert_int_equal(write(p1[1], "x", 1), 1);
	assert_int_equal(loop__run(r.l), 0);
	assert_int_equal(r.victim_ran, 0);
	/* EPOLLOUT on a writable pipe end. */
	loop_of_out = r.l;
	a = loop__add_io(r.l, p2[1], 0, on_out, &outs);
	assert_non_null(a);
	assert_int_equal(loop__io_events(a, 0x004), 0);
	assert_int_equal(loop__run(r.l), 0);
	assert_int_equal(outs, 1);
	loop__remove(a);
	loop__free(r.l);
	close(p1[0]);
	close(p1[1]);
	close(p2[0]);
	close(p2[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timers),
		cmocka_unit_test(test_priority_and_enable),
		cmocka_unit_test(test_signal_and_error),
		cmocka_unit_test(test_remove_and_events),
	};

	return cmocka_run_group_tests_name("loop", tests, NULL, NULL);
}
