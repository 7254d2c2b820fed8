/*
 * Shutdown while other threads run instrumented code: no plugin callback
 * may run during or after its fini (which frees what callbacks use), and
 * nothing reaches a plugin after shutdown: not segments, not thread exits,
 * not new functions.
 */
#define ELT_PLUGIN_STATIC 1
#include "tap.h"
#include "probes.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

static _Atomic int inside, finished, violations, calls, thread_exits_after, added_after;

static void watch_cb(const elt_info *info, void *state)
{
	struct timespec t0, t;

	(void)info;
	(void)state;
	atomic_fetch_add(&inside, 1);
	atomic_fetch_add(&calls, 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do      /* stay inside a while, so shutdown meets callbacks in flight */
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec < 200000);
	if (atomic_load(&finished))
		atomic_fetch_add(&violations, 1);
	atomic_fetch_sub(&inside, 1);
}

static void watch_thread_exit(void *state)
{
	(void)state;
	if (atomic_load(&finished))
		atomic_fetch_add(&thread_exits_after, 1);
}

static void *watch_function_added(void *state, const elt_function_desc *fn)
{
	(void)state;
	(void)fn;
	if (atomic_load(&finished))
		atomic_fetch_add(&added_after, 1);
	return NULL;
}

static elt_status watch_fini(void *state)
{
	(void)state;
	if (atomic_load(&inside))
		atomic_fetch_add(&violations, 1);
	atomic_store(&finished, 1);
	return ELT_OK;
}

ELT_PLUGIN_DEFINE(watch, .enter = watch_cb, .leave = watch_cb,
		  .thread_exit = watch_thread_exit,
		  .function_added = watch_function_added, .fini = watch_fini);

static _Atomic int stop;

static void *worker(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop))
		probe_pair();
	return NULL;
}

int main(void)
{
	pthread_t threads[3];
	int i, after;

	probe_function = 0x77;
	if (elt_plugin_add(&elt_plugin_watch, NULL) != ELT_OK ||
	    elt_register_function(probe_function, "Busy", "v()", 0) != ELT_OK)
		tap_bail("setup: %s", elt_last_error());
	for (i = 0; i < 3; i++)
		pthread_create(&threads[i], NULL, worker, NULL);
	/* Until the workers are well into their callbacks: polled, not a fixed
	 * sleep, since a loaded machine (CI, wine) may not run them for a while. */
	for (i = 0; i < 2000 && atomic_load(&calls) < 30; i++)
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);

	ok(atomic_load(&calls) > 0, "callbacks run before shutdown (%d)", atomic_load(&calls));
	is_int(elt_shutdown(), ELT_OK, "shutdown with callbacks in flight");
	after = atomic_load(&calls);
	nanosleep(&(struct timespec){ 0, 20 * 1000 * 1000 }, NULL);
	is_int(atomic_load(&calls), after, "no callback starts after shutdown");
	is_int(atomic_load(&violations), 0, "no callback ran during or after fini");

	atomic_store(&stop, 1);
	for (i = 0; i < 3; i++)
		pthread_join(threads[i], NULL);
	is_int(atomic_load(&thread_exits_after), 0, "threads exiting later are not reported");
	is_int(elt_register_function(0x78, "Late", "v()", 0), ELT_OK,
	       "functions may still be registered");
	is_int(atomic_load(&added_after), 0, "but plugins do not hear of them");
	ok(elt_plugin_add(&elt_plugin_watch, NULL) == ELT_E_STATE &&
	   strstr(elt_last_error(), "shut down"), "adding a plugin: %s", elt_last_error());
	is_int(elt_init(), ELT_E_STATE, "elt_init after shutdown");
	return tap_done();
}
