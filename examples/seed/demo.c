/*
 * The demo: the seed scenario under the counting and check plugins.
 * Without $ASYNCELT_PLUGINS it adds them itself, the check plugin
 * expecting the pairs the .NET regression test expects; with it, the
 * plugins named there run instead.
 */
#include "runtime.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <stdio.h>
#include <stdlib.h>

extern const elt_plugin elt_plugin_counting;
extern const elt_plugin elt_plugin_check;

int main(void)
{
	struct seed_results r;
	elt_status st;
	int ok;

	/* A plugin that fails to load is reported; the others run. */
	elt_init();
	if (!getenv("ASYNCELT_PLUGINS") &&
	    (elt_plugin_add(&elt_plugin_counting, NULL) != ELT_OK ||
	     elt_plugin_add(&elt_plugin_check,
			    "expect=Work:25,WorkVoid:3,WorkDouble:3") != ELT_OK))
		return 1;
	if (seed_register() != 0 || seed_run(&r) != 0)
		return 1;

	printf("Work(4) x5 = %lld (want 30), WorkDouble(2) = %.1f (want 2.0), "
	       "WorkVoid(2) %s\n", (long long)r.work_total, r.work_double,
	       r.void_completed ? "completed" : "did NOT complete");
	printf("%lu segments, %lu resumed on the suspending thread, "
	       "%lu continuations clobbered\n", r.segments, r.same_thread_resumes,
	       r.continuation_clobbered);
	fflush(stdout);
	ok = r.work_total == 30 && r.work_double == 2.0 && r.void_completed &&
	     r.same_thread_resumes == 0 && r.continuation_clobbered == 0;

	st = elt_shutdown();            /* the plugins' reports and verdict */
	if (st != ELT_OK)
		fprintf(stderr, "seed-demo: %s\n", elt_strerror(st));
	return ok && st == ELT_OK ? 0 : 1;
}
