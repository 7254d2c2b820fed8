/*
 * fork() while another thread is between the two counts of an async
 * segment's start or end: its own (async_running) and its shard's, which
 * a resume whose continuation is not published reads to decide whether to
 * wait (lib/invocation.h).  In the child that thread does not exist; the
 * shards must be counted again from the forking thread alone, else one
 * is off by one for good and every orphan resume in the child waits its
 * whole $ASYNCELT_RESUME_WAIT_MS (set to 5 s here: a child's resume must
 * take well under that).  Linked with the library's test points live.
 */
#define ELT_PLUGIN_STATIC 1
#include "tap.h"
#include "fork-child.h"
#include "../lib/test-points.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

enum { ASYNC_ID = 0x40 };

static _Thread_local int is_helper;
static atomic_int held, released, hold_on;

static void hook(enum elt_test_point point, uintptr_t continuation)
{
	(void)continuation;
	if (!is_helper || point != ELT_POINT_ASYNC_COUNTED || !atomic_load(&hold_on) ||
	    atomic_load(&held))
		return;
	atomic_store(&held, 1);
	while (!atomic_load(&released))
		sched_yield();
}

/* Tracks invocations, so that resumes are looked up (and may wait). */
static void nothing(const elt_info *info, void *state)
{
	(void)info;
	(void)state;
}
ELT_PLUGIN_DEFINE(tracker, .enter = nothing);

/* The helper's call of the async function: held at its start's counts,
 * or, with hold_at_end, at its return's. */
static int hold_at_end;

static void *helper(void *arg)
{
	(void)arg;
	is_helper = 1;
	atomic_store(&hold_on, !hold_at_end);
	elt_emit_enter(ASYNC_ID, NULL, NULL);
	atomic_store(&hold_on, 1);
	elt_emit_leave(ASYNC_ID, NULL, NULL);
	return NULL;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* In the child: a resume of a continuation nobody suspended is an orphan
 * at once, as no other thread runs an async segment there. */
static int child_work(void)
{
	static char never_suspended;
	double start = now_ms();

	elt_emit_enter(ASYNC_ID, NULL, &never_suspended);
	elt_emit_leave(ASYNC_ID, NULL, NULL);
	return now_ms() - start > 2500;
}

static const char *fork_while_held(int at_end)
{
	pthread_t thread;

	hold_at_end = at_end;
	atomic_store(&held, 0);
	atomic_store(&released, 0);
	if (pthread_create(&thread, NULL, helper, NULL) != 0)
		tap_bail("pthread_create");
	while (!atomic_load(&held))
		sched_yield();
	return fork_and_judge(child_work, &released, thread);
}

int main(void)
{
	const char *verdict;

	setenv("ASYNCELT_RESUME_WAIT_MS", "5000", 1);
	tap_plan(2);
	if (elt_plugin_add(&elt_plugin_tracker, NULL) != ELT_OK ||
	    elt_register_function(ASYNC_ID, "Forked", "v(K)", ELT_FUNCTION_ASYNC))
		tap_bail("setup: %s", elt_last_error());
	elt_test_hook = hook;

	verdict = fork_while_held(0);
	ok(!*verdict, "forked while another thread counts an async call's start: the "
	   "child's orphan resume waits for nothing%s%s", *verdict ? ": " : "", verdict);
	verdict = fork_while_held(1);
	ok(!*verdict, "... its return's end%s%s", *verdict ? ": " : "", verdict);
	return tap_done();
}
