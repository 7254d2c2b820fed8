/*
 * A fixed log-linear histogram that any thread updates with relaxed
 * atomics: no lock, no allocation.  Values below 8 have a bucket each,
 * then each power of two is cut in 8, so a percentile is reported within
 * 12.5% (as its bucket's upper bound, never above the exact maximum).
 * Values from 2^40 (18 minutes in ns) share the last bucket, whose
 * percentiles are reported as the maximum.
 */
#ifndef ELT_TIMING_HISTOGRAM_H
#define ELT_TIMING_HISTOGRAM_H

#include <stdatomic.h>
#include <stdint.h>

#define HISTOGRAM_SUB_BITS 3
#define HISTOGRAM_TOP_BITS 40
#define HISTOGRAM_BUCKETS ((1u << HISTOGRAM_SUB_BITS) * \
			   (1 + HISTOGRAM_TOP_BITS - HISTOGRAM_SUB_BITS))

struct histogram {
	_Atomic uint64_t count, sum, max;
	_Atomic uint64_t bucket[HISTOGRAM_BUCKETS];
};

void histogram_record(struct histogram *h, uint64_t v);
/* The value at fraction q (0.5 for the median) of those recorded; 0 when
 * none were.  Reads while others record are approximate. */
uint64_t histogram_percentile(struct histogram *h, double q);

#endif
