/*
 * The timing plugin's histograms (plugins/timing/histogram.c): counts,
 * sums and maxima exact, percentiles exact up to HISTOGRAM_EXACT values
 * and within one bucket (12.5%) above the exact value past that, never
 * above the maximum, huge values in the last bucket.
 */
#include "tap.h"

#include "../plugins/timing/histogram.h"

#include <string.h>

/* Adding b's histogram to a's is recording b's values into a: counts,
 * sum, maximum and buckets equal, and every percentile (exact while the
 * two hold at most HISTOGRAM_EXACT values together, as one would be). */
static void check_add(unsigned in_a, unsigned in_b)
{
	static struct histogram a, b, all;
	static const double q[] = { 0.01, 0.25, 0.5, 0.9, 0.99, 1.0 };
	unsigned i, same = 1;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&all, 0, sizeof(all));
	for (i = 0; i < in_a + in_b; i++) {
		uint64_t v = (uint64_t)i * 7919 % 10007 + 1;

		histogram_record(i < in_a ? &a : &b, v);
		histogram_record(&all, v);
	}
	histogram_add(&a, &b);
	for (i = 0; i < sizeof(q) / sizeof(q[0]); i++)
		same &= histogram_percentile(&a, q[i]) == histogram_percentile(&all, q[i]);
	ok(a.count == all.count && a.sum == all.sum && a.max == all.max &&
	   memcmp(a.bucket, all.bucket, sizeof(a.bucket)) == 0 && same,
	   "%u values added to %u: as if all were recorded into one", in_b, in_a);
}

int main(void)
{
	static struct histogram h, small, big, one, many;
	uint64_t v, p50, p90, p99;
	unsigned n;

	tap_plan(21);
	is_int(histogram_percentile(&h, 0.5), 0, "an empty histogram: percentiles 0");

	for (v = 1; v <= 1000; v++)
		histogram_record(&h, v);
	ok(h.count == 1000 && h.sum == 500500 && h.max == 1000, "count, sum and max are exact");
	p50 = histogram_percentile(&h, 0.50);
	p90 = histogram_percentile(&h, 0.90);
	p99 = histogram_percentile(&h, 0.99);
	ok(p50 >= 500 && p50 <= 500 * 9 / 8, "p50 of 1..1000 within 12.5%% above 500: %llu",
	   (unsigned long long)p50);
	ok(p90 >= 900 && p90 <= 900 * 9 / 8 + 1, "p90 within 12.5%% above 900: %llu",
	   (unsigned long long)p90);
	ok(p99 >= 990 && p99 <= 1000, "p99 never above the maximum: %llu",
	   (unsigned long long)p99);
	is_int(histogram_percentile(&h, 1.0), 1000, "p100 is the maximum");

	/* 16 samples, recorded out of order: 1000, 2000, ... 16000 */
	for (v = 16; v >= 1; v--)
		histogram_record(&small, v * 1000);
	is_int(histogram_percentile(&small, 0.50), 8000,
	       "16 samples: p50 exact (the 8th smallest), not a bucket bound");
	is_int(histogram_percentile(&small, 0.90), 15000, "16 samples: p90 exact (the 15th)");

	for (v = 0; v < 2 * HISTOGRAM_EXACT; v++)
		histogram_record(&big, ((uint64_t)1 << 50) + v);
	is_int(histogram_percentile(&big, 0.5), ((uint64_t)1 << 50) + 2 * HISTOGRAM_EXACT - 1,
	       "values past 2^40 share the last bucket, reported as the maximum");
	ok(histogram_percentile(&big, 0.01) <= big.max, "and never above it");

	/* n at once is n one by one, whether the exact values fill up or not */
	for (n = 1; n <= 2 * HISTOGRAM_EXACT; n *= 4) {
		memset(&one, 0, sizeof(one));
		memset(&many, 0, sizeof(many));
		histogram_record(&one, 9);
		histogram_record(&many, 9);
		for (v = 0; v < n; v++)
			histogram_record(&one, 3);
		histogram_record_n(&many, 3, n);
		ok(memcmp(&one, &many, sizeof(one)) == 0,
		   "recording 3 %u times at once is recording it %u times", n, n);
	}
	histogram_record_n(&many, 20, 0);
	ok(memcmp(&one, &many, sizeof(one)) == 0, "recording a value 0 times changes nothing");

	check_add(10, 20);                      /* exact percentiles throughout */
	check_add(HISTOGRAM_EXACT - 1, 1);
	check_add(50, 30);                      /* together past the exact ones */
	check_add(HISTOGRAM_EXACT + 6, 10);
	check_add(0, 5);
	check_add(5, 0);
	return tap_done();
}
