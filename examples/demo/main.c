/*
 * The demo (`make demo`): the workload of workload.h on DEMO_WORKERS
 * worker threads, its methods entering and leaving through the real
 * helpers, under the counting plugin (segments per method), the check
 * plugin (every method's Enter/Leave pairs against what the workload must
 * make) and the timing plugin (which writes the Chrome trace, trace.json
 * or argv[1]).
 *
 * Without $ASYNCELT_PLUGINS it adds those plugins itself; with it, the
 * plugins named there run instead.  Exits 0 only when the checksum, the
 * segment counts and every plugin's checks are right, and says so in its
 * last line.
 */
#include "workload.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <stdio.h>
#include <stdlib.h>

extern const elt_plugin elt_plugin_counting;
extern const elt_plugin elt_plugin_check;
extern const elt_plugin elt_plugin_timing;

/* "expect=Main:3,Request:64,...": the pairs each method must make. */
static void check_options(const struct demo_expected *e, char *buf, size_t size)
{
	size_t used = (size_t)snprintf(buf, size, "expect=");
	int m;

	for (m = 0; m < DEMO_METHOD_COUNT && used < size; m++)
		used += (size_t)snprintf(buf + used, size - used, "%s%s:%lu", m ? "," : "",
					 demo_methods[m].name, e->segments[m]);
}

static int add_default_plugins(const struct demo_expected *e, const char *trace)
{
	char options[4352];

	if (elt_plugin_add(&elt_plugin_counting, NULL) != ELT_OK) {
		fprintf(stderr, "demo: counting plugin: %s\n", elt_last_error());
		return -1;
	}
	check_options(e, options, sizeof(options));
	if (elt_plugin_add(&elt_plugin_check, options) != ELT_OK) {
		fprintf(stderr, "demo: check plugin: %s\n", elt_last_error());
		return -1;
	}
	snprintf(options, sizeof(options), "trace=%s", trace);
	if (elt_plugin_add(&elt_plugin_timing, options) != ELT_OK) {
		fprintf(stderr, "demo: timing plugin: %s\n", elt_last_error());
		return -1;
	}
	return 0;
}

/* What the reports that follow call things: printed before them. */
static void print_legend(void)
{
	printf("how to read the reports below:\n"
	       "  counting: segments per method, by kind; a call or a resume is an Enter,\n"
	       "    a suspension, a return or a tail call a Leave\n"
	       "  check: Enter/Leave pairs per method against what the workload must make;\n"
	       "    depth = its segments still running (0 at exit), errors = sequence errors\n"
	       "    (a Leave with no Enter, a continuation suspended or resumed twice)\n"
	       "  timing, per invocation: wall_us = from the call to the final return,\n"
	       "    active_us = time running, suspended_us = time waiting, segments,\n"
	       "    hops = resumes on another thread than the suspension's; per resume:\n"
	       "    latency_us = from the suspension's Leave to the resume's Enter\n"
	       "    (us: microseconds)\n");
}

int main(int argc, char **argv)
{
	const char *trace = argc > 1 ? argv[1] : "trace.json";
	struct demo_expected want;
	struct scheduler_stats stats;
	unsigned long invocations = 0, segments = 0;
	uint64_t checksum = 0;
	elt_status st;
	int m, ok;

	workload_expected(&want);
	for (m = 0; m < DEMO_METHOD_COUNT; m++) {
		invocations += want.invocations[m];
		segments += want.segments[m];
	}

	elt_init();                     /* the plugins of $ASYNCELT_PLUGINS */
	if (!getenv("ASYNCELT_PLUGINS") && add_default_plugins(&want, trace) != 0)
		return 1;
	if (workload_register() != 0 || scheduler_start(DEMO_WORKERS) != 0)
		return 1;

	printf("demo (%s): %lu async invocations on %d worker threads and a timer thread;\n"
	       "every method enters and leaves through the library's helpers\n",
	       elt_abi_name(), invocations, DEMO_WORKERS);
	printf("%-10s %11s  %s\n", "method", "invocations", "signature");
	for (m = 0; m < DEMO_METHOD_COUNT; m++)
		printf("%-10s %11lu  %s\n", demo_methods[m].name, want.invocations[m],
		       demo_methods[m].signature);

	if (scheduler_run(&demo_methods[DEMO_MAIN], DEMO_REQUESTS, &checksum) != 0)
		return 1;
	scheduler_stop(&stats);

	printf("Main(%d) = %lld (want %lld): %s\n", DEMO_REQUESTS, (long long)checksum,
	       (long long)want.checksum, (int64_t)checksum == want.checksum ? "OK" : "WRONG");
	printf("%lu segments (want %lu), %lu of them resumes: %lu on the thread that "
	       "suspended, %lu continuations clobbered by a Leave\n", stats.segments,
	       segments, stats.resumes, stats.same_thread_resumes,
	       stats.continuation_clobbered);
	ok = (int64_t)checksum == want.checksum && stats.segments == segments &&
	     stats.same_thread_resumes == 0 && stats.continuation_clobbered == 0;
	if (!getenv("ASYNCELT_PLUGINS"))
		print_legend();
	fflush(stdout);

	st = elt_shutdown();            /* the plugins' reports */
	fflush(stderr);
	if (st != ELT_OK)
		fprintf(stderr, "demo: %s\n", elt_strerror(st));
	else if (!getenv("ASYNCELT_PLUGINS"))
		fprintf(stderr, "demo: wrote %s: open it in https://ui.perfetto.dev "
			"(Open trace file) or speedscope\n", trace);
	fflush(stderr);
	printf("demo: %s (checksum %s; %lu of %lu segments; %lu resumes, %lu on the "
	       "suspending thread; %lu continuations clobbered; plugins' checks: %s)\n",
	       ok && st == ELT_OK ? "PASS" : "FAIL",
	       (int64_t)checksum == want.checksum ? "right" : "WRONG", stats.segments,
	       segments, stats.resumes, stats.same_thread_resumes,
	       stats.continuation_clobbered, st == ELT_OK ? "passed" : elt_strerror(st));
	return ok && st == ELT_OK ? 0 : 1;
}

