/*
 * Segments reported from a signal handler that interrupts malloc: the
 * invocation code must neither allocate with malloc nor lock on that path
 * (doc/runtime.md, "Invocations: memory and guarantees"), or the handler
 * deadlocks on the lock the interrupted malloc holds.  The main thread
 * sends SIGUSR1 to a second thread, which does nothing but malloc and
 * free; each handler calls and suspends a few invocations and resumes
 * older ones, so that its thread's free list of records runs dry and is
 * refilled inside the handler, and the continuation table grows there.
 * A watchdog (the signalling main thread) turns a deadlock into a failure: no
 * handler finishing for STUCK_S seconds.  Also checks that errno is what
 * the handler found.
 */
#include "tap.h"
#include "remember-invocation.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const elt_function_id ASYNC_ID = 0x61;

#define SIGNALS 20000
#define PER_SIGNAL 4                    /* suspended by each handler */
#define LAG 15000                       /* resumed this many signals later */
#define STUCK_S 30                      /* no progress: deadlocked */
#define CONTINUATION(i) ((void *)(uintptr_t)(0x20000000u + (uintptr_t)(i) * 64))

static elt_invocation_id ids[SIGNALS * PER_SIGNAL];
/* Signals handled; read by the signaller thread: atomic (lock-free, so
 * a handler may write it). */
static _Atomic unsigned long handled;
static unsigned long wrong, errno_changed;
static _Atomic int done;                /* every signal handled */
static _Atomic int started;             /* the interrupted thread is registered */


static void resume(unsigned long k)
{
	elt_emit_enter(ASYNC_ID, NULL, CONTINUATION(k));
	if (last.id != ids[k] || (last.flags & ELT_INVOCATION_ORPHAN))
		wrong++;
	elt_emit_leave(ASYNC_ID, &k, NULL);
}

static void on_signal(int sig)
{
	unsigned long s = atomic_load_explicit(&handled, memory_order_relaxed), i;
	int entry_errno = errno;

	(void)sig;
	if (s >= SIGNALS)
		return;
	for (i = 0; i < PER_SIGNAL; i++) {
		unsigned long k = s * PER_SIGNAL + i;

		elt_emit_enter(ASYNC_ID, NULL, NULL);
		ids[k] = last.id;
		elt_emit_leave(ASYNC_ID, NULL, CONTINUATION(k));
	}
	if (s >= LAG)
		for (i = 0; i < PER_SIGNAL; i++)
			resume((s - LAG) * PER_SIGNAL + i);
	if (errno != entry_errno)
		errno_changed++;
	atomic_store_explicit(&handled, s + 1, memory_order_release);
}

/* The thread the signals interrupt: it does nothing but malloc and free
 * until every signal was handled.  It is the last thread created, so
 * that under qemu-i386, which reloads %gs on sigreturn from a descriptor
 * all threads share (the last one's), it gets its own TLS back
 * (doc/testing.md); the signalling main thread takes no signal. */
static void *interrupted(void *arg)
{
	unsigned long s, i;
	void *held[64] = { 0 };

	(void)arg;
	/* Its first segment registers it, before the first signal: the
	 * handlers here test the invocation code; the registration is
	 * tests/test-attach-malloc.c's. */
	elt_emit_enter(ASYNC_ID, NULL, NULL);
	elt_emit_leave(ASYNC_ID, &s, NULL);
	atomic_store(&started, 1);
	for (i = 0; atomic_load_explicit(&handled, memory_order_acquire) < SIGNALS; i++) {
		unsigned slot = (unsigned)(i * 2654435761u) % 64;

		free(held[slot]);
		held[slot] = malloc(16 + (i * 40503u) % 4000);
	}
	atomic_store(&done, 1);
	sigaction(SIGUSR1, &(struct sigaction){ .sa_handler = SIG_IGN }, NULL);
	for (s = SIGNALS - LAG; s < SIGNALS; s++)
		for (i = 0; i < PER_SIGNAL; i++)
			resume(s * PER_SIGNAL + i);
	for (i = 0; i < 64; i++)
		free(held[i]);
	return NULL;
}

/* Signals the thread until it is done; a watchdog: no handler finishing
 * for STUCK_S seconds is a deadlock. */
static void signal_until_done(pthread_t target)
{
	unsigned long seen = (unsigned long)-1;
	time_t since = time(NULL);

	while (!atomic_load(&done)) {
		pthread_kill(target, SIGUSR1);
		usleep(20);
		unsigned long now = atomic_load_explicit(&handled, memory_order_acquire);

		if (now != seen) {
			seen = now;
			since = time(NULL);
		} else if (time(NULL) - since > STUCK_S) {
			static const char why[] = "not ok 1 - no handler finished for 30 s: "
				"deadlocked (a lock or malloc on the segment path?)\n";

			if (write(1, why, strlen(why)) < 0)
				_exit(2);
			_exit(1);
		}
	}
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	elt_invocation_stats st0, st1;
	pthread_t th;

	tap_plan(3);
	if (elt_plugin_add(&elt_plugin_remember, NULL) != ELT_OK ||
	    elt_register_function(ASYNC_ID, "InHandler", "l(K)", ELT_FUNCTION_ASYNC))
		tap_bail("setup: %s", elt_last_error());
	elt_get_invocation_stats(&st0);

	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	if (pthread_create(&th, NULL, interrupted, NULL))
		tap_bail("pthread_create failed");
	while (!atomic_load(&started))
		usleep(100);
	signal_until_done(th);
	if (pthread_join(th, NULL))
		tap_bail("pthread_join failed");
	elt_get_invocation_stats(&st1);

	is_int(wrong, 0, "%d handlers interrupting malloc suspended and resumed %d "
	       "invocations: no deadlock, each resume stitched", SIGNALS,
	       SIGNALS * PER_SIGNAL);
	ok(st1.orphan_resumes == st0.orphan_resumes && st1.unpublished == st0.unpublished,
	   "... no orphan, none unpublished");
	is_int(errno_changed, 0, "... errno as each handler found it");
	return tap_done();
}
