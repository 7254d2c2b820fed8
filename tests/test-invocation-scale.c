/*
 * Invocations suspended at once, by the million: N calls of an async
 * function each suspend under their own continuation (a distinct address,
 * as a runtime's continuation objects are), and only then are all resumed
 * and returned.  Every resume must find its own call's invocation (same
 * id, no orphan, nothing unpublished), so the continuation table must grow
 * far beyond its first 65,536 slots.  Prints what it costs: ns per
 * suspend+resume beyond a plain call+return, and the memory each suspended
 * invocation adds (the process's resident size, minus the record itself).
 * Then THREADS threads at once each suspend their share and resume
 * another's, while the table grows under them: every resume stitched.
 *
 * Usage: test-invocation-scale [N]   (default 500,000: `make check`;
 * `make stress-invocation` runs 10,000,000).
 */
#include "tap.h"
#include "remember-invocation.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static const elt_function_id ASYNC_ID = 0x51;

/* Continuations 64 bytes apart, as heap objects would be. */
#define CONTINUATION(i) ((void *)(uintptr_t)(0x10000000u + (uintptr_t)(i) * 64))

static elt_invocation_id *ids;          /* the call's id, by invocation */


/* This thread's CPU time: the machine may be shared, and what a
 * suspension costs is the CPU it takes. */
/* --- threads suspending and resuming each other's, the table growing -- */

#define THREADS 4

struct share {
	unsigned long first, count;
	_Atomic unsigned long suspended;        /* how many of ours are published */
	struct share *other;                    /* whose we resume */
	unsigned long wrong;
};

static void resume_one(struct share *from, unsigned long j, unsigned long *wrong)
{
	unsigned long k = from->first + j;

	elt_emit_enter(ASYNC_ID, NULL, CONTINUATION(k));
	if (last.id != ids[k] || (last.flags & ELT_INVOCATION_ORPHAN))
		(*wrong)++;
	elt_emit_leave(ASYNC_ID, &k, NULL);
}

static void *suspend_and_resume(void *arg)
{
	struct share *me = arg, *other = me->other;
	unsigned long i, j = 0;

	for (i = 0; i < me->count; i++) {
		unsigned long k = me->first + i;

		elt_emit_enter(ASYNC_ID, NULL, NULL);
		ids[k] = last.id;
		elt_emit_leave(ASYNC_ID, NULL, CONTINUATION(k));
		atomic_store_explicit(&me->suspended, i + 1, memory_order_release);
		/* Every fourth step, one of the other thread's: at the end
		 * three quarters of all are suspended, more than the table
		 * the first part left can hold, so it grows under us. */
		if (i % 4 == 3 && j < atomic_load_explicit(&other->suspended, memory_order_acquire))
			resume_one(other, j++, &me->wrong);
	}
	while (j < other->count) {
		if (j < atomic_load_explicit(&other->suspended, memory_order_acquire))
			resume_one(other, j++, &me->wrong);
		else
			sched_yield();
	}
	return NULL;
}

static void test_threads(unsigned long n)
{
	struct share shares[THREADS];
	pthread_t th[THREADS];
	elt_invocation_stats s0, s1;
	unsigned long wrong = 0;
	unsigned i;

	elt_get_invocation_stats(&s0);
	for (i = 0; i < THREADS; i++) {
		shares[i].first = n + i * n;
		shares[i].count = n;
		atomic_init(&shares[i].suspended, 0);
		shares[i].other = &shares[(i + 1) % THREADS];
		shares[i].wrong = 0;
	}
	for (i = 0; i < THREADS; i++)
		if (pthread_create(&th[i], NULL, suspend_and_resume, &shares[i]))
			tap_bail("pthread_create failed");
	for (i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		wrong += shares[i].wrong;
	}
	elt_get_invocation_stats(&s1);
	is_int(wrong, 0, "%d threads suspending %lu and resuming another's as the table "
	       "grows: each resume has its call's id", THREADS, n * THREADS);
	ok(s1.orphan_resumes == s0.orphan_resumes && s1.unpublished == s0.unpublished,
	   "... no orphan, none unpublished (%llu, %llu)",
	   (unsigned long long)(s1.orphan_resumes - s0.orphan_resumes),
	   (unsigned long long)(s1.unpublished - s0.unpublished));
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Resident bytes, or 0 where /proc is not there (Windows: none). */
static double resident_bytes(void)
{
#if defined(_WIN32)
	return 0;
#else
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long size, resident = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%lu %lu", &size, &resident) != 2)
		resident = 0;
	fclose(f);
	return (double)resident * (double)sysconf(_SC_PAGESIZE);
#endif
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 500000;
	unsigned long i, wrong = 0, not_async = 0;
	elt_invocation_stats s0, s1;
	double t0, t_plain, t_suspend, t_resume, t_pairs, rss0, rss1;

	tap_plan(6);
	if (n == 0)
		tap_bail("usage: %s [N > 0]", argv[0]);
	if (!(ids = malloc((1 + THREADS) * n * sizeof(*ids))))
		tap_bail("no memory for %lu ids", n);
	if (elt_plugin_add(&elt_plugin_remember, NULL) != ELT_OK ||
	    elt_register_function(ASYNC_ID, "Scaled", "l(K)", ELT_FUNCTION_ASYNC))
		tap_bail("setup: %s", elt_last_error());

	/* The reference: the same segments, returning instead of suspending. */
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		elt_emit_enter(ASYNC_ID, NULL, NULL);
		elt_emit_leave(ASYNC_ID, &i, NULL);
	}
	t_plain = now_ns() - t0;

	elt_get_invocation_stats(&s0);
	rss0 = resident_bytes();
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		elt_emit_enter(ASYNC_ID, NULL, NULL);
		ids[i] = last.id;
		elt_emit_leave(ASYNC_ID, NULL, CONTINUATION(i));
	}
	t_suspend = now_ns() - t0;
	rss1 = resident_bytes();

	t0 = now_ns();
	for (i = 0; i < n; i++) {
		elt_emit_enter(ASYNC_ID, NULL, CONTINUATION(i));
		if (last.id != ids[i] || (last.flags & ELT_INVOCATION_ORPHAN))
			wrong++;
		if (!(last.flags & ELT_INVOCATION_ASYNC) || last.segment != 1)
			not_async++;
		elt_emit_leave(ASYNC_ID, &i, NULL);
	}
	t_resume = now_ns() - t0;
	elt_get_invocation_stats(&s1);

	/* The common case: few suspended at a time, the table already large. */
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		elt_emit_enter(ASYNC_ID, NULL, NULL);
		elt_emit_leave(ASYNC_ID, NULL, CONTINUATION(i));
		elt_emit_enter(ASYNC_ID, NULL, CONTINUATION(i));
		elt_emit_leave(ASYNC_ID, &i, NULL);
	}
	t_pairs = now_ns() - t0;

	is_int(wrong, 0, "%lu suspended at once, then resumed: each resume has its call's id",
	       n);
	is_int(not_async, 0, "... flagged async, segment 1");
	ok(s1.orphan_resumes == s0.orphan_resumes && s1.unpublished == s0.unpublished &&
	   s1.abandoned == s0.abandoned,
	   "... no orphan, none unpublished, none abandoned (%llu, %llu, %llu)",
	   (unsigned long long)(s1.orphan_resumes - s0.orphan_resumes),
	   (unsigned long long)(s1.unpublished - s0.unpublished),
	   (unsigned long long)(s1.abandoned - s0.abandoned));
	ok(s1.completed - s0.completed == n && s1.started - s0.started == n,
	   "... %lu started, as many completed", n);
	tap_diag("ns per call+return: %.1f; per call+suspend: %.1f; per resume+return: %.1f",
		 t_plain / n, t_suspend / n, t_resume / n);
	tap_diag("all suspended at once: a suspend+resume costs %.1f ns beyond a call+return",
		 (t_suspend + t_resume - t_plain) / n - t_plain / n);
	tap_diag("one suspended at a time: a suspend+resume costs %.1f ns beyond a call+return",
		 (t_pairs - t_plain) / n - t_plain / n);
	if (rss0 > 0)
		tap_diag("memory per suspended invocation: %.1f bytes, record included",
			 (rss1 - rss0) / n);
	/* Continuations from n on: none of the above is still in the table.
	 * 3n suspended at the end, where the table holds at most 2n. */
	test_threads(n);
	free(ids);
	return tap_done();
}
