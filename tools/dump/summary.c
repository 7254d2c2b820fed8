/*
 * The timing plugin's table, from a recording: per function, calls and
 * segments, then wall, active, suspended, latency, segments and hops of
 * its completed invocations (count, mean, p50/p90/p99 through the same
 * histograms, plugins/timing/histogram.c, and max), then the invocations
 * that never returned.
 */
#include "output.h"
#include "../../plugins/timing/histogram.h"

#include <stdlib.h>

enum measure { WALL, ACTIVE, SUSPENDED, LATENCY, SEGMENTS, HOPS, MEASURES };

static const char *const measure_name[MEASURES] = {
	"wall_us", "active_us", "suspended_us", "latency_us", "segments", "hops",
};

static double shown(enum measure m, uint64_t v)
{
	return m <= LATENCY ? (double)v / 1000.0 : (double)v;
}

static void print_function(FILE *out, const struct model_function *f, struct histogram *h)
{
	int k;

	fprintf(out, "%-24s %9llu %9llu\n", f->name, (unsigned long long)f->calls,
		(unsigned long long)f->segments);
	for (k = 0; k < MEASURES; k++) {
		unsigned long long count = h[k].count;

		if (count)
			fprintf(out, "  %-14s %9llu %12.3f %12.3f %12.3f %12.3f %12.3f\n",
				measure_name[k], count,
				shown(k, h[k].sum) / (double)count,
				shown(k, histogram_percentile(&h[k], 0.50)),
				shown(k, histogram_percentile(&h[k], 0.90)),
				shown(k, histogram_percentile(&h[k], 0.99)),
				shown(k, h[k].max));
	}
}

void output_summary(FILE *out, const struct model *m)
{
	struct histogram *h = calloc((size_t)m->nfunctions * MEASURES + 1, sizeof(*h));
	unsigned long long open = 0;
	uint32_t k, f;
	size_t i;

	if (!h) {
		fprintf(stderr, "asyncelt-dump: out of memory\n");
		return;
	}
	for (k = 0; k < m->ninvocations; k++) {
		const struct model_invocation *r = &m->invocations[k];
		struct histogram *fh = &h[(size_t)r->function * MEASURES];

		if (!r->complete || !r->called)  /* its start unknown: left out */
			continue;
		histogram_record(&fh[WALL], r->end - r->start);
		histogram_record(&fh[ACTIVE], r->active);
		histogram_record(&fh[SUSPENDED], r->end - r->start - r->active);
		histogram_record(&fh[SEGMENTS], r->nsegments);
		histogram_record(&fh[HOPS], r->hops);
	}
	for (f = 0; f < m->nfunctions; f++)
		for (i = 0; i < m->functions[f].nlatencies; i++)
			histogram_record(&h[(size_t)f * MEASURES + LATENCY],
					 m->functions[f].latencies[i]);

	fprintf(out, "asyncelt timing report (times in us; percentiles "
		"exact up to %d samples, else within 12.5%%, never above max)\n",
		HISTOGRAM_EXACT);
	fprintf(out, "%-24s %9s %9s\n  %-14s %9s %12s %12s %12s %12s %12s\n", "function",
		"calls", "segments", "measure", "count", "mean", "p50", "p90", "p99", "max");
	for (f = 0; f < m->nfunctions; f++)
		if (m->functions[f].segments)
			print_function(out, &m->functions[f], &h[(size_t)f * MEASURES]);
	fprintf(out, "incomplete invocations (never returned):\n");
	for (k = 0; k < m->ninvocations; k++) {
		const struct model_invocation *r = &m->invocations[k];

		if (r->complete)
			continue;
		if (open++ < 20)
			fprintf(out, "  invocation %llu of %s: %s, segments: %u\n",
				(unsigned long long)r->id, m->functions[r->function].name,
				r->running ? "still running" : "suspended", r->nsegments);
	}
	if (open > 20)
		fprintf(out, "  ... %llu more\n", open - 20);
	fprintf(out, "  total: %llu\n", open);
	free(h);
}
