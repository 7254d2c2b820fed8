/*
 * The plugins' clock (plugins/common/clock.h): on each ABI the counter
 * its port has, named in the recording format, converted to nanoseconds
 * that follow CLOCK_MONOTONIC, never going back; and the 32-bit-halves
 * product that ABIs without a 128-bit one convert with.
 */
#include "../plugins/common/clock.h"
#include "../plugins/logging/recording.h"
#include "tap.h"

#if defined(__x86_64__) || defined(__i386__)
# include <cpuid.h>
#endif

/* The source this ABI must have chosen (clock.h's list, stated apart). */
static const char *expected_source(void)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;

	if (!__get_cpuid(0x80000000, &a, &b, &c, &d) || a < 0x80000007)
		return "clock_gettime";
	__get_cpuid(0x80000007, &a, &b, &c, &d);
	return (d >> 8) & 1 ? "tsc" : "clock_gettime";
#elif defined(__aarch64__)
	return "cntvct";
#elif defined(__powerpc64__)
	return "timebase";
#elif defined(__s390x__)
	return "tod";
#elif defined(__riscv) && __riscv_xlen == 64
	return "rdtime";
#else
	return "clock_gettime";
#endif
}

static int recording_names(const char *source)
{
	size_t i;

	for (i = 0; i < REC_CLOCK_COUNT; i++)
		if (strcmp(rec_clocks[i][0], source) == 0)
			return 1;
	return 0;
}

/* 100 ms of CLOCK_MONOTONIC against the same in converted ticks: within
 * 5%, which a wrong rate (a factor of 2, or 4096) is far outside. */
static void follows_monotonic(void)
{
	uint64_t ns0 = plugin_clock_gettime_ns(), t0 = plugin_ticks(), ns1, t1;
	double ratio;

	do
		ns1 = plugin_clock_gettime_ns();
	while (ns1 - ns0 < 100000000);
	t1 = plugin_ticks();
	ratio = (double)plugin_ticks_to_ns(t1 - t0) / (double)(ns1 - ns0);
	tap_ok(ratio > 0.95 && ratio < 1.05,
	       "100 ms of CLOCK_MONOTONIC is %.4f times that in converted ticks", ratio);
}

static void never_back(void)
{
	uint64_t last = plugin_ticks(), now;
	int i, back = 0;

	for (i = 0; i < 100000; i++) {
		now = plugin_ticks();
		back += now < last;
		last = now;
	}
	tap_ok(back == 0, "100000 reads in a row never go back (%d did)", back);
}

static const struct {
	uint64_t x, q32, want;
} products[] = {
	{ 0xfedcba9876543210u, (uint64_t)1 << 32, 0xfedcba9876543210u },   /* ns: 1 */
	{ ((uint64_t)1 << 48) - 1, (uint64_t)3 << 30, 211106232532991u },     /* 0.75 */
	{ UINT64_MAX, ((uint64_t)1 << 32) + 1, 4294967294u },                /* wraps */
	{ 0x123456789abcdef0u, 1048576000u, 320255973501901933u },           /* s390x TOD */
	{ ((uint64_t)1 << 63) + 5, ((uint64_t)41 << 32) + 0x9abcdef0u, 14798387986772787408u },
};

static void halves(void)
{
	size_t i, wrong = 0;

	for (i = 0; i < sizeof(products) / sizeof(products[0]); i++)
		if (plugin_mul_q32_halves(products[i].x, products[i].q32) != products[i].want) {
			tap_diag("(%#llx * %#llx) >> 32: %#llx, not %#llx",
				 (unsigned long long)products[i].x, (unsigned long long)products[i].q32,
				 (unsigned long long)plugin_mul_q32_halves(products[i].x, products[i].q32),
				 (unsigned long long)products[i].want);
			wrong++;
		}
	tap_ok(!wrong, "the 32-bit halves' product is right at the edges (%zu wrong)", wrong);
#if defined(__SIZEOF_INT128__)
	{
		uint64_t x = 0x9e3779b97f4a7c15u, q = 0xbf58476d1ce4e5b9u;

		for (i = 0, wrong = 0; i < 100000; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			q ^= q << 13, q ^= q >> 7, q ^= q << 17;
			wrong += plugin_mul_q32_halves(x, q) !=
				 (uint64_t)(((unsigned __int128)x * q) >> 32);
		}
		tap_ok(!wrong, "and the 128-bit product's, 100000 pairs (%zu differ)", wrong);
	}
#else
	tap_skip(1, "no 128-bit product to compare with on this ABI");
#endif
}

int main(void)
{
	tap_plan(6);
	plugin_clock_init();
	tap_ok(strcmp(plugin_clock_name(), expected_source()) == 0,
	       "the source is %s (%s expected here)", plugin_clock_name(), expected_source());
	tap_ok(recording_names(plugin_clock_name()),
	       "the recording format names %s (recording.h's rec_clocks)", plugin_clock_name());
	follows_monotonic();
	never_back();
	halves();
	return tap_done();
}
