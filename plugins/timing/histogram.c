/*
 * Log-linear histograms: see histogram.h.
 */
#include "histogram.h"

#define SUB (1u << HISTOGRAM_SUB_BITS)

static unsigned bucket_of(uint64_t v)
{
	unsigned e;

	if (v < SUB)
		return (unsigned)v;
	if (v >> HISTOGRAM_TOP_BITS)
		return HISTOGRAM_BUCKETS - 1;
	e = 63u - (unsigned)__builtin_clzll(v);         /* >= HISTOGRAM_SUB_BITS */
	return SUB + (e - HISTOGRAM_SUB_BITS) * SUB +
	       (unsigned)((v >> (e - HISTOGRAM_SUB_BITS)) & (SUB - 1));
}

/* The largest value that falls in bucket i. */
static uint64_t bucket_top(unsigned i)
{
	unsigned e, sub;

	if (i < SUB)
		return i;
	e = (i - SUB) / SUB + HISTOGRAM_SUB_BITS;
	sub = (i - SUB) % SUB;
	return ((uint64_t)(SUB + sub + 1) << (e - HISTOGRAM_SUB_BITS)) - 1;
}

void histogram_record(struct histogram *h, uint64_t v)
{
	uint64_t max = atomic_load_explicit(&h->max, memory_order_relaxed);

	atomic_fetch_add_explicit(&h->count, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->sum, v, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->bucket[bucket_of(v)], 1, memory_order_relaxed);
	while (v > max && !atomic_compare_exchange_weak_explicit(&h->max, &max, v,
			memory_order_relaxed, memory_order_relaxed))
		;
}

uint64_t histogram_percentile(struct histogram *h, double q)
{
	uint64_t count = atomic_load(&h->count), max = atomic_load(&h->max);
	uint64_t rank = (uint64_t)(q * (double)count + 0.999999), seen = 0;
	unsigned i;

	for (i = 0; i < HISTOGRAM_BUCKETS && count; i++) {
		seen += atomic_load_explicit(&h->bucket[i], memory_order_relaxed);
		if (seen >= rank)
			return i < HISTOGRAM_BUCKETS - 1 && bucket_top(i) < max
				? bucket_top(i) : max;
	}
	return max;
}
