/*
 * What a segment costs: an empty instrumented function calling Enter then
 * Leave through the real helpers, against the same function without them,
 * in one run.  Wall-clock ratios only mean something natively; under
 * emulation use instruction counts (valgrind --tool=callgrind, see
 * doc/performance.md).
 *
 *     bench-helpers [pairs]      default 10 million
 */
#ifndef ELT_PLUGIN_STATIC
#define ELT_PLUGIN_STATIC 1
#endif
#include "probes.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern const elt_plugin elt_plugin_counting;
extern const elt_plugin elt_plugin_logging;

static void empty_cb(const elt_info *info, void *state)
{
	(void)info;
	(void)state;
}
ELT_PLUGIN_DEFINE(empty, .enter = empty_cb, .leave = empty_cb);

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Best of 5 runs, in nanoseconds per call of `fn`. */
static double measure(void (*fn)(void), unsigned long n)
{
	double best = 1e30;
	int run;

	for (run = 0; run < 5; run++) {
		double t = now();
		unsigned long i;

		for (i = 0; i < n; i++)
			fn();
		t = (now() - t) * 1e9 / (double)n;
		if (t < best)
			best = t;
	}
	return best;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 10000000ul;
	double bare, none, empty, counting, binary;

	probe_function = 0x1234;
	elt_register_function(probe_function, "Empty", "v()", 0);

	bare = measure(probe_bare, n);
	none = measure(probe_pair, n);          /* no plugin: dispatch returns at once */
	elt_plugin_add(&elt_plugin_empty, NULL);
	empty = measure(probe_pair, n);
	/* counting replaces nothing: it runs after the empty plugin */
#if defined(_WIN32)
	elt_plugin_add(&elt_plugin_counting, "output=NUL");
#else
	elt_plugin_add(&elt_plugin_counting, "output=/dev/null");
#endif
	counting = measure(probe_pair, n) - empty;
	/* binary logging on top of both: what recording every segment adds */
#if defined(_WIN32)
	elt_plugin_add(&elt_plugin_logging, "format=binary,output=NUL");
#else
	elt_plugin_add(&elt_plugin_logging, "format=binary,output=/dev/null");
#endif
	binary = measure(probe_pair, n) - empty - counting;

	printf("%-44s %8s %8s\n", "per Enter+Leave pair", "ns", "x bare");
	printf("%-44s %8.2f %8.1f\n", "bare function (baseline)", bare, 1.0);
	printf("%-44s %8.2f %8.1f\n", "helpers, no plugin", none, none / bare);
	printf("%-44s %8.2f %8.1f\n", "helpers, one empty plugin", empty, empty / bare);
	printf("%-44s %8.2f %8s\n", "counting plugin, on top of that", counting, "");
	printf("%-44s %8.2f %8s\n", "binary logging, on top of that (2 records)", binary, "");
	elt_shutdown();
	return 0;
}
