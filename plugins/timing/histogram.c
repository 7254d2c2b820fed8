/*
 * Log-linear histograms: see histogram.h.
 */
#include "histogram.h"

#include <stdlib.h>
#include <string.h>

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
	if (h->count < HISTOGRAM_EXACT)
		h->exact[h->count] = v;
	h->count++;
	h->sum += v;
	h->bucket[bucket_of(v)]++;
	if (v > h->max)
		h->max = v;
}

void histogram_record_n(struct histogram *h, uint64_t v, uint64_t n)
{
	while (n && h->count < HISTOGRAM_EXACT) {
		histogram_record(h, v);
		n--;
	}
	if (!n)
		return;
	h->count += n;
	h->sum += v * n;
	h->bucket[bucket_of(v)] += n;
	if (v > h->max)
		h->max = v;
}

void histogram_add(struct histogram *h, const struct histogram *from)
{
	uint64_t kept = from->count < HISTOGRAM_EXACT ? from->count : HISTOGRAM_EXACT, i;
	unsigned b;

	for (i = 0; i < kept && h->count + i < HISTOGRAM_EXACT; i++)
		h->exact[h->count + i] = from->exact[i];
	h->count += from->count;
	h->sum += from->sum;
	for (b = 0; b < HISTOGRAM_BUCKETS; b++)
		h->bucket[b] += from->bucket[b];
	if (from->max > h->max)
		h->max = from->max;
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

uint64_t histogram_percentile(const struct histogram *h, double q)
{
	uint64_t rank = (uint64_t)(q * (double)h->count + 0.999999), seen = 0;
	unsigned i;

	if (!h->count)
		return 0;
	if (rank < 1)
		rank = 1;
	if (h->count <= HISTOGRAM_EXACT) {
		uint64_t sorted[HISTOGRAM_EXACT];

		memcpy(sorted, h->exact, h->count * sizeof(sorted[0]));
		qsort(sorted, h->count, sizeof(sorted[0]), by_value);
		return sorted[rank - 1];
	}
	for (i = 0; i < HISTOGRAM_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen >= rank)
			return i < HISTOGRAM_BUCKETS - 1 && bucket_top(i) < h->max
				? bucket_top(i) : h->max;
	}
	return h->max;
}
