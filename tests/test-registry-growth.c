/*
 * The function registry between a larger table and its mask: a lookup
 * loads the mask and the table at once (lib/internal.h), so it may pair
 * a new table with the old, smaller mask.  Linked with the library's test
 * points live (lib/test-points.h), which stop a registration right there.
 *
 *  1. Lookups made at that point, of every function registered so far,
 *     find each one: the first probe misses with the old mask, and the
 *     rest of the chain must start from the new mask's slot.
 *  2. fork() while another thread is stopped there, with the registry's
 *     lock held: the child finds every function registered before, and
 *     registers and finds more, under an alarm in case it stalls.
 */
#include "tap.h"
#include "fork-child.h"
#include "../lib/test-points.h"

#include <asyncelt.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#define FUNCTIONS 5000          /* tables of 256 to 16384 slots: 7 growths */

static elt_function_id id_of(unsigned i)
{
	return (elt_function_id)(0x10000 + (uintptr_t)i * 24);
}

/* How many of the first n are not found, or found as another. */
static unsigned missing_of_first(unsigned n)
{
	unsigned i, missing = 0;

	for (i = 0; i < n; i++) {
		const elt_function_desc *d = elt_find_function(id_of(i));

		missing += !d || d->id != id_of(i);
	}
	return missing;
}

static int register_one(unsigned i)
{
	return elt_register_function(id_of(i), "f", "v()", 0) == ELT_OK;
}

/* --- 1: lookups at the point ------------------------------------------- */

static atomic_uint registered;  /* how many of the functions are */
static unsigned points_seen, missed_at_point;

static void look_up_at_point(enum elt_test_point point, uintptr_t unused)
{
	(void)unused;
	if (point != ELT_POINT_REGISTRY_PUBLISHED)
		return;
	points_seen++;
	missed_at_point += missing_of_first(atomic_load(&registered));
}

static void test_lookups_at_point(void)
{
	unsigned i, failed = 0;

	elt_test_hook = look_up_at_point;
	for (i = 0; i < FUNCTIONS / 2; i++) {
		failed += !register_one(i);
		atomic_store(&registered, i + 1);
	}
	elt_test_hook = NULL;
	is_int(failed, 0, "%u functions registered", FUNCTIONS / 2);
	ok(points_seen >= 4, "the table grew %u times", points_seen);
	is_int(missed_at_point, 0,
	       "every function registered before is found between a table and its mask");
}

/* --- 2: fork at the point ---------------------------------------------- */

static atomic_int held, released;
static _Thread_local int is_helper;
static int helper_failed;       /* read once fork_and_judge joined it */

static void hold_at_point(enum elt_test_point point, uintptr_t unused)
{
	(void)unused;
	if (!is_helper || point != ELT_POINT_REGISTRY_PUBLISHED || atomic_load(&held))
		return;
	atomic_store(&held, 1);
	while (!atomic_load(&released))
		sched_yield();
}

static void *register_rest(void *arg)
{
	unsigned i;

	(void)arg;
	is_helper = 1;
	for (i = atomic_load(&registered); i < FUNCTIONS; i++) {
		if (!register_one(i)) {
			helper_failed = 1;
			break;
		}
		atomic_store(&registered, i + 1);
	}
	return NULL;
}

/* The child: its helper stopped after publishing a table, lock held. */
static int child_work(void)
{
	unsigned before = atomic_load(&registered), i;

	if (missing_of_first(before))
		return 1;
	/* Stopped at 4096, in a new table of 16384: grows it once more. */
	for (i = before; i < before + 4200; i++)
		if (!register_one(i))
			return 2;
	return missing_of_first(before + 4200) ? 3 : 0;
}

static void test_fork_at_point(void)
{
	pthread_t helper;
	const char *verdict;

	elt_test_hook = hold_at_point;
	pthread_create(&helper, NULL, register_rest, NULL);
	while (!atomic_load(&held))
		sched_yield();
	verdict = fork_and_judge(child_work, &released, helper);
	ok(!*verdict, "a child forked between a table and its mask finds and registers "
	   "functions%s%s", *verdict ? ": " : "", verdict);
	elt_test_hook = NULL;
	ok(!helper_failed, "the parent's helper registered the rest");
	is_int(missing_of_first(FUNCTIONS), 0, "the parent finds all %u", FUNCTIONS);
}

int main(void)
{
	tap_plan(6);
	test_lookups_at_point();
	test_fork_at_point();
	return tap_done();
}
