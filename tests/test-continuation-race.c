/*
 * The continuation table's overflow under the races its code argues
 * about, made to happen: linked with a build of the library whose test
 * points (lib/test-points.h) call back here, so that another thread's
 * work runs at the exact moment a race needs it.  On the table that
 * tests/continuation-rounds.h drives into its overflow:
 *
 *  1. a resume misses its record in the table, and before it looks in
 *     the overflow another thread ends the migration, which moves the
 *     record back into the table: the resume must find it (it scans
 *     again: the overflow's count of moves changed);
 *  2. while the record is claimed, on its way back into the table,
 *     another thread resumes it: the resume must meet the claim, wait,
 *     and find the record once it is back.
 *
 * Neither resume may be an orphan, or wait as a resume that came before
 * its suspension would (`early_resumes`).
 */
#include "tap.h"
#include "continuation-rounds.h"
#include "../lib/test-points.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

/* What the hook does, and for which continuation. */
static _Atomic enum { IDLE, END_MIGRATION, RESUME_WHILE_CLAIMED } plan;
static _Atomic uint64_t target;
static _Atomic int busy_seen;           /* the resume met the claim */
static pthread_t helper;
static int helper_right;                /* the helper's resume was right */
static elt_invocation_id helper_id;

static void *end_migration(void *arg)
{
	(void)arg;
	drive(1);
	return NULL;
}

static void *resume_target(void *arg)
{
	(void)arg;
	helper_right = resume(atomic_load(&target), helper_id);
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void hook(enum elt_test_point point, uintptr_t continuation)
{
	if (continuation != atomic_load(&target))
		return;
	if (point == ELT_POINT_OVERFLOW_BUSY) {
		atomic_store(&busy_seen, 1);
		return;
	}
	if (point == ELT_POINT_TAKE_MISSED && atomic_load(&plan) == END_MIGRATION) {
		atomic_store(&plan, IDLE);      /* once */
		if (pthread_create(&helper, NULL, end_migration, NULL) == 0)
			pthread_join(helper, NULL);
		return;
	}
	if (point == ELT_POINT_REHOME_CLAIMED && atomic_load(&plan) == RESUME_WHILE_CLAIMED) {
		double give_up = now_s() + 10;

		atomic_store(&plan, IDLE);
		if (pthread_create(&helper, NULL, resume_target, NULL) != 0)
			return;
		/* the claim is held until this returns: the resume must meet it */
		while (!atomic_load(&busy_seen) && now_s() < give_up)
			sched_yield();
	}
}

int main(void)
{
	static struct round first, second;
	elt_invocation_stats s0, s1;
	unsigned i, wrong = 0;
	int right;

	if (sizeof(uintptr_t) < sizeof(uint64_t))
		tap_skip_all("continuations are 32 bits here: the test places them by "
			     "undoing a 64-bit hash");
	tap_plan(6);
	if (elt_plugin_add(&elt_plugin_remember, NULL) != ELT_OK ||
	    elt_register_function(CONTINUATION_FN, "Raced", "v(K)", ELT_FUNCTION_ASYNC))
		tap_bail("setup: %s", elt_last_error());
	elt_test_hook = hook;
	elt_get_invocation_stats(&s0);

	/* 1: the migration ends between the resume's two looks */
	wrong += round_begin(&first, 0, ELT_TABLE_MIN_BITS);
	wrong += drive(1);                      /* one step left */
	atomic_store(&target, first.mover[0]);
	atomic_store(&plan, END_MIGRATION);
	right = resume(first.mover[0], first.mover_id[0]);
	ok(atomic_load(&plan) == IDLE, "1: the migration ended while the resume looked");
	ok(right, "... and the resume found its record moved back into the table");

	/* 2: a resume meets the record claimed on its way back */
	wrong += round_begin(&second, 1, ELT_TABLE_MIN_BITS + 1);
	wrong += drive(1);
	atomic_store(&target, second.mover[0]);
	helper_id = second.mover_id[0];
	atomic_store(&plan, RESUME_WHILE_CLAIMED);
	wrong += drive(1);                      /* the end: the movers move back */
	if (atomic_load(&plan) == IDLE)
		pthread_join(helper, NULL);
	ok(atomic_load(&busy_seen), "2: a resume met its record claimed in the overflow");
	ok(helper_right, "... and found it once it was back in the table");

	atomic_store(&target, 0);
	for (i = 1; i < GROUP; i++)
		wrong += !resume(first.mover[i], first.mover_id[i]) +
			 !resume(second.mover[i], second.mover_id[i]);
	wrong += !resume(first.grow, first.grow_id) + !resume(second.grow, second.grow_id);
	elt_get_invocation_stats(&s1);
	is_int(wrong, 0, "every other resume has its call's id");
	ok(s1.orphan_resumes == s0.orphan_resumes && s1.early_resumes == s0.early_resumes &&
	   s1.unpublished == s0.unpublished,
	   "no orphan, no resume waited, none unpublished (%llu, %llu, %llu)",
	   (unsigned long long)(s1.orphan_resumes - s0.orphan_resumes),
	   (unsigned long long)(s1.early_resumes - s0.early_resumes),
	   (unsigned long long)(s1.unpublished - s0.unpublished));
	return tap_done();
}
