/*
 * A thread that takes the GIL and hands it back every NUDGE_INTERVAL_MS
 * while the hook is installed: the cure for a CPython 3.11 stall that any
 * profile or trace function brings on (cProfile's, a pure-Python one's).
 *
 * With a profile function set, 3.11 runs every instruction through its
 * tracing path (DO_TRACING in ceval.c).  At the RESUME that starts a
 * function, that path checks the eval breaker before it steps past the
 * instruction, so after the pending work it dispatches the same RESUME
 * again.  A thread other than the main one cannot run signal handlers:
 * when the breaker was set for the main thread, such a thread spins at
 * the RESUME, holding the GIL, for as long as the breaker stays set.
 * The main thread sets it when a signal with a Python handler (asyncio's
 * SIGCHLD) reaches it just after it released the GIL to block, before the
 * wait began: it never wakes to ask for the GIL back, and if it waits for
 * the spinning thread (a join), nothing else will.  CPython's asyncio
 * suite hit it about once in ten runs of test_get_event_loop_new_process,
 * and tests/signal_stall.py makes it happen every time.
 *
 * A thread that takes the GIL recomputes the breaker for itself, which
 * clears the signals' part on any thread but the main one.  So this one
 * asks for the GIL now and then: the spinning thread honours the drop
 * request (that part of its pending work it can do), and takes the GIL
 * back with the breaker clear.  A stall lasts about one interval; the
 * cost otherwise is one hand-over of the GIL per interval.  3.12 steps
 * past the instruction before the check: nothing to cure there.
 */
#include "gil-nudge.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#define NUDGE_INTERVAL_MS 100

#if PY_VERSION_HEX < 0x030C0000

/* One per thread started: a stop lets go of it (with the GIL, which
 * orders starts and stops) before it waits for the thread's end, so a
 * start meanwhile makes a new one and shares nothing with the old. */
struct nudge {
	pthread_mutex_t lock;
	pthread_cond_t wake;            /* on CLOCK_MONOTONIC */
	pthread_t thread;
	bool stopping;
};

static struct nudge *running;          /* under the GIL */

static void deadline_after(struct timespec *at, long ms)
{
	clock_gettime(CLOCK_MONOTONIC, at);
	at->tv_sec += ms / 1000;
	at->tv_nsec += (ms % 1000) * 1000000L;
	if (at->tv_nsec >= 1000000000L) {
		at->tv_sec++;
		at->tv_nsec -= 1000000000L;
	}
}

static void *nudge_loop(void *arg)
{
	struct nudge *n = arg;
	/* Its own thread state, made and freed here, so that it carries
	 * this thread's id. */
	PyGILState_STATE gil = PyGILState_Ensure();
	PyThreadState *self = PyEval_SaveThread();
	struct timespec at;

	pthread_mutex_lock(&n->lock);
	while (!n->stopping) {
		deadline_after(&at, NUDGE_INTERVAL_MS);
		if (pthread_cond_timedwait(&n->wake, &n->lock, &at) != ETIMEDOUT)
			continue;
		pthread_mutex_unlock(&n->lock);
		PyEval_RestoreThread(self);     /* the GIL, and straight back */
		self = PyEval_SaveThread();
		pthread_mutex_lock(&n->lock);
	}
	pthread_mutex_unlock(&n->lock);
	PyEval_RestoreThread(self);
	PyGILState_Release(gil);
	return NULL;
}

void gil_nudge_start(void)
{
	struct nudge *n;
	pthread_condattr_t attr;
	sigset_t all, old;
	int made;

	if (running || !(n = calloc(1, sizeof(*n))))
		return;
	pthread_mutex_init(&n->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&n->wake, &attr);
	pthread_condattr_destroy(&attr);
	/* The program's signals go to the program's threads, never here. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	made = pthread_create(&n->thread, NULL, nudge_loop, n) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (made) {
		running = n;
		return;
	}
	pthread_cond_destroy(&n->wake);
	pthread_mutex_destroy(&n->lock);
	free(n);
}

void gil_nudge_stop(void)
{
	struct nudge *n = running;

	if (!n)
		return;
	running = NULL;
	pthread_mutex_lock(&n->lock);
	n->stopping = true;
	pthread_cond_signal(&n->wake);
	pthread_mutex_unlock(&n->lock);
	/* It may be waiting for the GIL, to see the stop or to end. */
	Py_BEGIN_ALLOW_THREADS
	pthread_join(n->thread, NULL);
	Py_END_ALLOW_THREADS
	pthread_cond_destroy(&n->wake);
	pthread_mutex_destroy(&n->lock);
	free(n);
}

void gil_nudge_forget(void)
{
	/* The thread is the parent's, and so may be its lock: left as is. */
	running = NULL;
}

#else

void gil_nudge_start(void)
{
}

void gil_nudge_stop(void)
{
}

void gil_nudge_forget(void)
{
}

#endif
