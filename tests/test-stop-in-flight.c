/*
 * A segment in flight when the library stops: it passed the helper's
 * test of the armed byte, then shutdown ran (here, from the test point
 * where the segment found its thread attached and is about to raise its
 * flag; linked with the library built with its test points live,
 * lib/test-points.h).  Once its flag is up the segment must read the
 * stop and run no plugin: the plugin's fini has run.  On x86-64 System V
 * the helper's body raises the flag and the dispatcher's one load of the
 * plugins' state is its read of the stop (ELT_PLUGINS_STOPPED,
 * lib/plugin-state.h); elsewhere the dispatcher reads elt_armed.  Twice,
 * since shutdown is final: in a child with a second plugin, so that the
 * segment leaves the straight path and the general path's test of the
 * bit is the one that counts, and in the process itself with the one
 * plugin.
 */
#define ELT_PLUGIN_STATIC 1
#include "probes.h"
#include "tap.h"
#include "../lib/test-points.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <sys/wait.h>
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

static void ignore(const elt_info *info, void *state)
{
	(void)info;
	(void)state;
}

/* A second plugin: the segment takes the general path (the helper's FP
 * policy unchanged). */
ELT_PLUGIN_DEFINE(second, .enter = ignore,
		  .flags = ELT_PLUGIN_NO_INVOCATIONS | ELT_PLUGIN_NO_FLOAT);

/* Shuts the library down at the first segment that reaches the point. */
static void hook(enum elt_test_point point, uintptr_t continuation)
{
	(void)continuation;
	if (point == ELT_POINT_FLAG_RAISING && shutdown_status == -1)
		shutdown_status = elt_shutdown();
}

/* The stop in flight with `plugins` added; returns 1 if all went as it
 * must, saying what did not (in the child, diagnostics only). */
static int stop_in_flight(int plugins, int report)
{
	int good;

	if (elt_register_function(STOPPING, "Stopping", "v()", 0) != ELT_OK ||
	    elt_plugin_add(&elt_plugin_counter, NULL) != ELT_OK ||
	    (plugins > 1 && elt_plugin_add(&elt_plugin_second, NULL) != ELT_OK))
		tap_bail("setup: %s", elt_last_error());
	probe_function = STOPPING;
	probe_pair();           /* the thread's first segment: attached */
	if (report)
		is_int(calls, 2, "before the stop, both segments of a pair reach the plugin");

	elt_test_hook = hook;
	probe_pair();
	elt_test_hook = NULL;
	good = calls == 2 && shutdown_status == ELT_OK && finished && !calls_after_fini;
	if (report) {
		is_int(shutdown_status, ELT_OK, "shutdown ran in the Enter, before its flag went up");
		ok(finished, "the plugin's fini ran");
		is_int(calls_after_fini, 0,
		       "no callback after fini: the segment in flight read the stop");
	} else if (!good) {
		tap_diag("two plugins: calls %d, shutdown %d, fini %s, calls after fini %d",
			 calls, shutdown_status, finished ? "ran" : "did not run",
			 calls_after_fini);
	}
	return good;
}

int main(void)
{
	int status;
	pid_t child;

	tap_plan(5);
	alarm(60);
	child = fork();
	if (child < 0)
		tap_bail("fork failed");
	if (child == 0)
		_exit(stop_in_flight(2, 0) ? 0 : 1);
	ok(waitpid(child, &status, 0) == child && WIFEXITED(status) &&
	   WEXITSTATUS(status) == 0,
	   "with two plugins (the general path): no callback after fini");
	stop_in_flight(1, 1);
	return tap_done();
}
