/*
 * A profiler's side of libasyncelt, built against the installed library
 * (see Makefile).  It adds its own plugin (my-plugin.c), runs an
 * instrumented workload, the seed runtime of examples/seed: Work(4) five
 * times, WorkVoid(2) and WorkDouble(2), each await resuming on another
 * thread, and shuts the library down, which prints the plugin's report.
 * It exits 0 only when the workload's results and the report are right.
 */
#include "runtime.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <stdio.h>

extern const elt_plugin elt_plugin_segment_kinds;   /* my-plugin.c */

/* What the seed scenario must produce, per function:
 * calls/resumes/suspends/returns.  Work(4) suspends 4 times per call. */
#define EXPECT "Work=5/20/20/5,WorkVoid=1/2/2/1,WorkDouble=1/2/2/1"

int main(void)
{
	struct seed_results r;
	elt_status st;
	int ok;

	st = elt_plugin_add(&elt_plugin_segment_kinds, EXPECT);
	if (st != ELT_OK) {
		fprintf(stderr, "profiler: %s: %s\n", elt_strerror(st), elt_last_error());
		return 1;
	}
	if (seed_register() != 0 || seed_run(&r) != 0) {
		fprintf(stderr, "profiler: the seed runtime failed\n");
		return 1;
	}
	ok = r.work_total == 30 && r.work_double == 2.0 && r.void_completed &&
	     r.continuation_clobbered == 0;
	printf("workload (%s): %s\n", elt_abi_name(),
	       ok ? "results right" : "results WRONG");

	st = elt_shutdown();            /* the plugin's fini prints its report */
	if (st != ELT_OK)
		fprintf(stderr, "profiler: %s\n", elt_strerror(st));
	return ok && st == ELT_OK ? 0 : 1;
}
