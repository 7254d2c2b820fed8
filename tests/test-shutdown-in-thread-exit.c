/*
 * A plugin's thread_exit that shuts the library down, as plugins.md lets
 * it: the plugins after it in that thread's exit are not called, since
 * their fini has run and may have freed their state.  They were: the
 * second plugin's thread_exit ran after its fini (heap-use-after-free
 * under ASan where the state was freed).
 */
#define ELT_PLUGIN_STATIC 1
#include "tap.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <pthread.h>
#include <stdatomic.h>

static const elt_function_id WORK = 0x10;
static atomic_int shutdown_status = -1, second_finis, second_exits_after_fini;

static void nothing(const elt_info *info, void *state)
{
	(void)info;
	(void)state;
}

static void shut_down(void *state)
{
	(void)state;
	atomic_store(&shutdown_status, elt_shutdown());
}

static void second_thread_exit(void *state)
{
	(void)state;
	if (atomic_load(&second_finis))
		atomic_fetch_add(&second_exits_after_fini, 1);
}

static elt_status second_fini(void *state)
{
	(void)state;
	atomic_fetch_add(&second_finis, 1);
	return ELT_OK;
}

ELT_PLUGIN_DEFINE(first, .enter = nothing, .leave = nothing, .thread_exit = shut_down);
ELT_PLUGIN_DEFINE(second, .thread_exit = second_thread_exit, .fini = second_fini);

static void *worker(void *arg)
{
	(void)arg;
	elt_emit_enter(WORK, NULL, NULL);
	elt_emit_leave(WORK, NULL, NULL);
	return NULL;
}

int main(void)
{
	pthread_t thread;

	tap_plan(4);
	if (elt_plugin_add(&elt_plugin_first, NULL) != ELT_OK ||
	    elt_plugin_add(&elt_plugin_second, NULL) != ELT_OK ||
	    elt_register_function(WORK, "Work", NULL, 0) != ELT_OK)
		tap_bail("setup: %s", elt_last_error());
	if (pthread_create(&thread, NULL, worker, NULL) != 0)
		tap_bail("pthread_create failed");
	pthread_join(thread, NULL);

	is_int(atomic_load(&shutdown_status), ELT_OK, "the first plugin's thread_exit shut down");
	is_int(atomic_load(&second_finis), 1, "the second plugin's fini ran");
	is_int(atomic_load(&second_exits_after_fini), 0,
	       "and its thread_exit was not called after it");
	is_int(elt_shutdown(), ELT_E_STATE, "the library stays shut down");
	return tap_done();
}
