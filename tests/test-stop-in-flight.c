/*
 * A segment in flight when the library stops: it passed the helper's
 * test of the armed byte, then shutdown ran (here, from the test point
 * where the segment found its thread attached and is about to raise its
 * flag; linked with the library built with its test points live,
 * lib/test-points.h).  Once its flag is up the segment must read the
 * stop and run no plugin: the plugin's fini has run.  On x86-64 System V
 * the helper's body raises the flag and the dispatcher's one load of the
 * plugins' state is its read of the stop (ELT_PLUGINS_STOPPED,
 * lib/plugin-state.h); elsewhere the dispatcher reads elt_armed.
 */
#define ELT_PLUGIN_STATIC 1
#include "probes.h"
#include "tap.h"
#include "../lib/test-points.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <unistd.h>

static const elt_function_id STOPPING = 0x31;
static int finished, calls, calls_after_fini, shutdown_status = -1;

static void count(const elt_info *info, void *state)
{
	(void)info;
	(void)state;
	calls++;
	if (finished)
		calls_after_fini++;
}

static elt_status finish(void *state)
{
	(void)state;
	finished = 1;
	return ELT_OK;
}

/* One plugin that needs nothing more: the dispatcher's straight path. */
ELT_PLUGIN_DEFINE(counter, .enter = count, .leave = count, .fini = finish,
		  .flags = ELT_PLUGIN_NO_INVOCATIONS | ELT_PLUGIN_NO_FLOAT);

/* Shuts the library down at the first segment that reaches the point. */
static void hook(enum elt_test_point point, uintptr_t continuation)
{
	(void)continuation;
	if (point == ELT_POINT_FLAG_RAISING && shutdown_status == -1)
		shutdown_status = elt_shutdown();
}

int main(void)
{
	tap_plan(4);
	alarm(60);
	if (elt_register_function(STOPPING, "Stopping", "v()", 0) != ELT_OK ||
	    elt_plugin_add(&elt_plugin_counter, NULL) != ELT_OK)
		tap_bail("setup: %s", elt_last_error());
	probe_function = STOPPING;
	probe_pair();           /* the thread's first segment: attached */
	is_int(calls, 2, "before the stop, both segments of a pair reach the plugin");

	elt_test_hook = hook;
	probe_pair();
	elt_test_hook = NULL;
	is_int(shutdown_status, ELT_OK, "shutdown ran in the Enter, before its flag went up");
	ok(finished, "the plugin's fini ran");
	is_int(calls_after_fini, 0, "no callback after fini: the segment in flight read the stop");
	return tap_done();
}
