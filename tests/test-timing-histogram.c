/*
 * The timing plugin's histograms (plugins/timing/histogram.c): counts,
 * sums and maxima exact, percentiles within one bucket (12.5%) above the
 * exact value and never above the maximum, small values exact, huge
 * values in the last bucket, and no update lost between threads.
 */
#include "tap.h"

#include "../plugins/timing/histogram.h"

#include <pthread.h>

static struct histogram shared;

static void *hammer(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 100000; i++)
		histogram_record(&shared, (uint64_t)i % 1000);
	return NULL;
}

int main(void)
{
	static struct histogram h, one, big;
	pthread_t threads[4];
	uint64_t v, p50, p90, p99;
	int t;

	tap_plan(10);
	is_int(histogram_percentile(&h, 0.5), 0, "an empty histogram: percentiles 0");

	for (v = 1; v <= 1000; v++)
		histogram_record(&h, v);
	ok(atomic_load(&h.count) == 1000 && atomic_load(&h.sum) == 500500 &&
	   atomic_load(&h.max) == 1000, "count, sum and max are exact");
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

	histogram_record(&one, 5);
	histogram_record(&one, 7);
	is_int(histogram_percentile(&one, 0.5), 5, "values below 8 are exact");

	histogram_record(&big, (uint64_t)1 << 50);
	histogram_record(&big, ((uint64_t)1 << 50) + 12345);
	is_int(histogram_percentile(&big, 0.5), ((uint64_t)1 << 50) + 12345,
	       "values past 2^40 share the last bucket, reported as the maximum");
	ok(histogram_percentile(&big, 0.01) <= atomic_load(&big.max), "and never above it");

	for (t = 0; t < 4; t++)
		pthread_create(&threads[t], NULL, hammer, NULL);
	for (t = 0; t < 4; t++)
		pthread_join(threads[t], NULL);
	ok(atomic_load(&shared.count) == 400000 &&
	   atomic_load(&shared.sum) == 4ull * 100 * 499500 && atomic_load(&shared.max) == 999,
	   "four threads at once: no update lost");
	return tap_done();
}
