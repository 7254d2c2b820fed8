/*
 * fork() while another thread is half way through a step of the
 * continuation table: the child, which has only the forking thread, must
 * neither stall nor lose a suspended invocation (lib/invocation.c,
 * elt_invocations_after_fork_child).  Linked with the library's test
 * points live (lib/test-points.h): a helper thread is held at the point,
 * the main thread forks, and the child resumes everything suspended,
 * then grows the table once more, with an alarm to end it if it stalls.
 *
 *  1. The helper holds `growing`, about to map a larger table: the child
 *     must grow it itself.
 *  2. The helper's migration froze a slot whose record has not moved:
 *     the child's resume of it must find it.
 *  3. The helper claimed a record in the overflow, on its way back into
 *     the table: the child's resume of it must find it.
 *  4. The helper's move back into the table inserted the record, still
 *     claimed in the overflow, and the table grew since: the child must
 *     keep one copy, or the record's next suspension, which drops stale
 *     copies of its continuation, drops itself.
 *  5. The same, the record resumed before the fork: the child must drop
 *     the claimed copy, or a move back inserts the record again once a
 *     suspension in the child has reused it.
 *
 * Each child then suspends a continuation again (a coroutine's next
 * await), grows the table and finishes that migration.  In the parent
 * the helper then goes on, and every resume there is right too.  64-bit
 * ports only (tests/continuation-rounds.h).
 */
#include "tap.h"
#include "continuation-rounds.h"
#include "fork-child.h"
#include "../lib/test-points.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

static _Atomic enum elt_test_point hold_at;
static _Atomic uint64_t hold_for;       /* the continuation; 0: any */
static atomic_int held, released, helper_done;
static _Thread_local int is_helper;

static void hook(enum elt_test_point point, uintptr_t continuation)
{
	uint64_t k = atomic_load(&hold_for);

	if (!is_helper || atomic_load(&held) || point != atomic_load(&hold_at) ||
	    (k && continuation != k))
		return;
	atomic_store(&held, 1);
	while (!atomic_load(&released))
		sched_yield();
}

/* The helper's work: a suspension, or the migration's next steps. */
static uint64_t helper_suspends;
static elt_invocation_id helper_id;
static unsigned helper_steps;

static void *helper(void *arg)
{
	(void)arg;
	is_helper = 1;
	if (helper_suspends)
		suspend(helper_suspends, &helper_id);
	else
		drive(helper_steps);
	atomic_store(&helper_done, 1);
	return NULL;
}

/* Continuations the test suspended and has not resumed yet. */
#define MAX_WAITING (4 * GROUP + 4)
static uint64_t waiting[MAX_WAITING];
static elt_invocation_id waiting_id[MAX_WAITING];
static unsigned n_waiting;

static void suspend_waiting(uint64_t k)
{
	suspend(k, &waiting_id[n_waiting]);
	waiting[n_waiting++] = k;
}

/* Resumes them all, newest first: the wrong ones.  The first one's
 * record is the next suspension's (a thread's free list is a stack). */
static unsigned resume_waiting(void)
{
	unsigned wrong = 0;

	while (n_waiting > 0) {
		n_waiting--;
		wrong += !resume(waiting[n_waiting], waiting_id[n_waiting]);
	}
	return wrong;
}

/* Grows the table, of 2^bits slots: two buckets filled, one more. */
static void grow(unsigned bits)
{
	const uint64_t mask = ((uint64_t)1 << bits) - 1;
	unsigned i;

	for (i = 0; i <= GROUP; i++)
		suspend_waiting(continuation_in(mask, 8 * STEP + 64, 9 * STEP + 64));
}

/*
 * The child's work, on a table of 2^child_bits slots: every suspended
 * invocation resumed right; `again` suspended anew, before the resumes
 * (`again_first`: it takes the record freed last before the fork) or
 * after them; the table grown and its migration finished; `again`
 * resumed, suspended and resumed.  0 when every resume was right.
 */
static unsigned child_bits;
static uint64_t again;
static int again_first;

static int child_work(void)
{
	elt_invocation_id id = 0;
	unsigned wrong = 0;

	if (again_first)
		suspend(again, &id);
	wrong += resume_waiting();
	if (!again_first)
		suspend(again, &id);
	grow(child_bits);
	wrong += drive((unsigned)((((uint64_t)1 << child_bits) / STEP) + 1));
	wrong += !resume(again, id);
	suspend(again, &id);
	wrong += !resume(again, id);
	return wrong + resume_waiting() != 0;
}

/*
 * Holds the helper at `point` (for continuation k, or any), runs
 * meanwhile() if any, forks, and runs child_work() in the child on a
 * table of 2^bits slots; then lets the helper go on.  The verdict on the
 * child (fork-child.h).
 */
static const char *fork_while_held(enum elt_test_point point, uint64_t k,
				   void (*meanwhile)(void), unsigned bits)
{
	pthread_t thread;

	atomic_store(&hold_at, point);
	atomic_store(&hold_for, k);
	atomic_store(&held, 0);
	atomic_store(&released, 0);
	atomic_store(&helper_done, 0);
	if (pthread_create(&thread, NULL, helper, NULL) != 0)
		tap_bail("pthread_create");
	while (!atomic_load(&held)) {
		if (atomic_load(&helper_done))
			tap_bail("the helper never reached test point %d", (int)point);
		sched_yield();
	}
	if (meanwhile)
		meanwhile();
	child_bits = bits;
	return fork_and_judge(child_work, &released, thread);
}

/* What the main thread does while the helper is held, in 4 and 5. */
static unsigned meanwhile_bits, meanwhile_wrong;
static struct round rd;

static void grow_meanwhile(void)
{
	grow(meanwhile_bits);
}

static void resume_meanwhile(void)
{
	meanwhile_wrong += !resume(rd.mover[0], rd.mover_id[0]);
}

/* A round's movers in the overflow, one step of the migration left for
 * the helper, which ends it: the waiting list is the round's. */
static unsigned round_for_the_helper(unsigned r, unsigned bits)
{
	unsigned i, wrong = round_begin(&rd, r, bits) + drive(1);

	for (i = 0; i < GROUP; i++) {
		waiting[i] = rd.mover[i];
		waiting_id[i] = rd.mover_id[i];
	}
	waiting[GROUP] = rd.grow;
	waiting_id[GROUP] = rd.grow_id;
	n_waiting = GROUP + 1;
	helper_steps = 1;
	return wrong;
}

/* Drives the migration of a table that grew to 2^bits slots to its end. */
static unsigned finish_migration(unsigned bits)
{
	return drive((unsigned)((((uint64_t)1 << bits) / 2) / STEP));
}

int main(void)
{
	const char *verdict;
	unsigned i, bits = ELT_TABLE_MIN_BITS, wrong = 0;
	uint64_t mask;

	if (sizeof(uintptr_t) < sizeof(uint64_t))
		tap_skip_all("continuations are 32 bits here: the test places them by "
			     "undoing a 64-bit hash");
	tap_plan(7);
	if (elt_plugin_add(&elt_plugin_remember, NULL) != ELT_OK ||
	    elt_register_function(CONTINUATION_FN, "Forked", "v(K)", ELT_FUNCTION_ASYNC))
		tap_bail("setup: %s", elt_last_error());
	elt_test_hook = hook;
	again = continuation_in(0xffff, 64, 128);

	/* 1: two buckets full; the helper's next suspension there must grow
	 * the table, and is held with `growing` */
	mask = ((uint64_t)1 << bits) - 1;
	for (i = 0; i < GROUP; i++)
		suspend_waiting(continuation_in(mask, 5 * STEP, 6 * STEP));
	helper_suspends = continuation_in(mask, 5 * STEP, 6 * STEP);
	verdict = fork_while_held(ELT_POINT_GROWING, 0, NULL, bits);
	ok(!*verdict, "1: forked while another thread grows the table: the child "
	   "resumes all and grows it%s%s", *verdict ? ": " : "", verdict);
	waiting[n_waiting] = helper_suspends;
	waiting_id[n_waiting++] = helper_id;
	helper_suspends = 0;
	bits++;                         /* the helper grew it in the parent */
	wrong += resume_waiting() + finish_migration(bits);

	/* 2: grown again, with records in a chunk the helper moves */
	mask = ((uint64_t)1 << bits) - 1;
	for (i = 0; i <= GROUP; i++)    /* the last grows it */
		suspend_waiting(continuation_in(mask, 5 * STEP, 6 * STEP));
	helper_steps = 8;               /* past chunk 5 */
	verdict = fork_while_held(ELT_POINT_MIGRATE_FROZEN, 0, NULL, bits + 1);
	ok(!*verdict, "2: forked while another thread moves a record: the child "
	   "resumes all%s%s", *verdict ? ": " : "", verdict);
	bits++;
	wrong += resume_waiting() + finish_migration(bits);

	/* 3: a round's movers wait in the overflow; the helper ends the
	 * migration and is held with the first one claimed */
	wrong += round_for_the_helper(2, bits);
	verdict = fork_while_held(ELT_POINT_REHOME_CLAIMED, rd.mover[0], NULL, bits + 1);
	ok(!*verdict, "3: forked while another thread holds a record claimed in the "
	   "overflow: the child resumes all%s%s", *verdict ? ": " : "", verdict);
	bits++;
	wrong += resume_waiting();

	/* 4: held with the first one back in the table and still claimed;
	 * meanwhile the table grows */
	wrong += round_for_the_helper(3, bits);
	bits++;
	meanwhile_bits = bits;
	again = rd.mover[0];            /* its next suspension */
	verdict = fork_while_held(ELT_POINT_REHOME_INSERTED, rd.mover[0], grow_meanwhile,
				  bits + 1);
	ok(!*verdict, "4: ... back in the table, which grew since: the child keeps one "
	   "copy%s%s", *verdict ? ": " : "", verdict);
	bits++;
	wrong += resume_waiting() + finish_migration(bits);

	/* 5: the same, and meanwhile the first one resumes */
	wrong += round_for_the_helper(4, bits);
	bits++;
	waiting[0] = waiting[--n_waiting];      /* mover 0 resumes meanwhile */
	waiting_id[0] = waiting_id[n_waiting];
	again = rd.mover[0];
	again_first = 1;
	verdict = fork_while_held(ELT_POINT_REHOME_INSERTED, rd.mover[0], resume_meanwhile,
				  bits);
	ok(!*verdict, "5: ... back in the table and resumed since: the child drops the "
	   "claimed copy%s%s", *verdict ? ": " : "", verdict);
	wrong += resume_waiting() + meanwhile_wrong;

	is_int(wrong, 0, "in the parent, every resume has its call's id");
	{
		elt_invocation_stats s;

		elt_get_invocation_stats(&s);
		ok(s.orphan_resumes == 0 && s.unpublished == 0,
		   "in the parent, no orphan and none unpublished (%llu, %llu)",
		   (unsigned long long)s.orphan_resumes, (unsigned long long)s.unpublished);
	}
	return tap_done();
}
