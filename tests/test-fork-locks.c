/*
 * fork() while another thread is half way through one of the library's
 * rare locked steps (lib/owned-mutex.h): the child, which has only the
 * forking thread, must not wait for the lock forever.
 *
 *  1. A function being registered, its plugin's function_added running:
 *     the child registers another, and finds both.
 *  2. A plugin being added, its init running: the child adds another.
 *
 * Each child has an alarm (fork-child.h): one still running then has
 * stalled.
 */
#define ELT_PLUGIN_STATIC 1
#include "tap.h"
#include "fork-child.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

static const elt_function_id SLOW = 0x30, FRESH = 0x31, LATER = 0x32;
static atomic_int held, released;

/* Holds the calling thread until released, once. */
static void hold(void)
{
	atomic_store(&held, 1);
	while (!atomic_load(&released))
		sched_yield();
}

static void *announced(void *state, const elt_function_desc *fn)
{
	if (fn->id == SLOW)
		hold();
	return state;
}

ELT_PLUGIN_DEFINE(announcer, .function_added = announced);

static elt_status slow_init(const char *options, void **state)
{
	(void)options;
	*state = NULL;
	hold();
	return ELT_OK;
}

ELT_PLUGIN_DEFINE(slow_starter, .init = slow_init);
ELT_PLUGIN_DEFINE(plain);

static void *register_slow(void *arg)
{
	(void)arg;
	elt_register_function(SLOW, "Slow", "v()", 0);
	return NULL;
}

static void *add_slow_starter(void *arg)
{
	(void)arg;
	elt_plugin_add(&elt_plugin_slow_starter, NULL);
	return NULL;
}

/* Runs `helper` until it is held, forks, runs child() in the child, lets
 * the helper go on; the verdict on the child (fork-child.h). */
static const char *fork_while_held(void *(*helper)(void *), int (*child)(void))
{
	pthread_t thread;

	atomic_store(&held, 0);
	atomic_store(&released, 0);
	if (pthread_create(&thread, NULL, helper, NULL) != 0)
		tap_bail("pthread_create");
	while (!atomic_load(&held))
		sched_yield();
	return fork_and_judge(child, &released, thread);
}

/* 0, or 1 + which check failed. */
static int child_registers(void)
{
	if (elt_register_function(FRESH, "Fresh", "v()", 0) != ELT_OK)
		return 2;
	if (!elt_find_function(FRESH))
		return 3;
	if (!elt_find_function(SLOW))
		return 4;
	return 0;
}

static int child_adds_a_plugin(void)
{
	if (elt_plugin_add(&elt_plugin_plain, NULL) != ELT_OK)
		return 2;
	if (elt_register_function(LATER, "Later", "v()", 0) != ELT_OK)
		return 3;
	return 0;
}

int main(void)
{
	const char *verdict;

	tap_plan(4);
	if (elt_plugin_add(&elt_plugin_announcer, NULL) != ELT_OK)
		tap_bail("setup: %s", elt_last_error());

	verdict = fork_while_held(register_slow, child_registers);
	ok(!*verdict, "1: forked while another thread registers a function: the child "
	   "registers another and finds both%s%s", *verdict ? ": " : "", verdict);
	ok(elt_find_function(SLOW) != NULL, "... and in the parent the function is there");

	verdict = fork_while_held(add_slow_starter, child_adds_a_plugin);
	ok(!*verdict, "2: forked while another thread adds a plugin: the child adds "
	   "another%s%s", *verdict ? ": " : "", verdict);
	is_int(elt_shutdown(), ELT_OK, "the parent shuts down as usual");
	return tap_done();
}
