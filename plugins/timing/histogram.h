/*
 * A fixed log-linear histogram.  Values below 8 have a bucket each, then
 * each power of two is cut in 8, so a percentile is reported within 12.5%
 * (as its bucket's upper bound, never above the exact maximum).  Values
 * from 2^40 (18 minutes in ns) share the last bucket, whose percentiles
 * are reported as the maximum.  The first HISTOGRAM_EXACT values are also
 * kept as they are: up to that many, percentiles are exact.
 *
 * Not atomic: its owner serializes updates (the timing plugin merges each
 * thread's samples under its lock).
 */
#ifndef ELT_TIMING_HISTOGRAM_H
#define ELT_TIMING_HISTOGRAM_H

#include <stdint.h>

#define HISTOGRAM_SUB_BITS 3
#define HISTOGRAM_TOP_BITS 40
#define HISTOGRAM_BUCKETS ((1u << HISTOGRAM_SUB_BITS) * \
			   (1 + HISTOGRAM_TOP_BITS - HISTOGRAM_SUB_BITS))
#define HISTOGRAM_EXACT 64

struct histogram {
	uint64_t count, sum, max;
	uint64_t exact[HISTOGRAM_EXACT];        /* the first values recorded */
	uint64_t bucket[HISTOGRAM_BUCKETS];
};

void histogram_record(struct histogram *h, uint64_t v);
/* Records v n times at once. */
void histogram_record_n(struct histogram *h, uint64_t v, uint64_t n);
/* Records into h every value `from` holds: percentiles stay exact while
 * the two together hold at most HISTOGRAM_EXACT values. */
void histogram_add(struct histogram *h, const struct histogram *from);
/* The value at fraction q (0.5 for the median) of those recorded, by the
 * nearest rank: exact up to HISTOGRAM_EXACT values, else its bucket's top;
 * 0 when none were recorded. */
uint64_t histogram_percentile(const struct histogram *h, double q);

#endif
