/*
 * The plugins' clock: see clock.h.
 */
#include "clock.h"

#include <pthread.h>

#if defined(__x86_64__) && defined(__SIZEOF_INT128__)
# include <cpuid.h>
#endif

struct plugin_clock plugin_clock = { CLOCK_SOURCE_MONOTONIC, (uint64_t)1 << 32 };

#if defined(__x86_64__) && defined(__SIZEOF_INT128__)
/* The TSC ticks at one rate in every P-, C- and T-state, on every core. */
static int invariant_tsc(void)
{
	unsigned a, b, c, d;

	if (!__get_cpuid(0x80000000, &a, &b, &c, &d) || a < 0x80000007)
		return 0;
	__get_cpuid(0x80000007, &a, &b, &c, &d);
	return (d >> 8) & 1;
}

/* ns per TSC tick, times 2^32: both clocks read across about 2 ms. */
static uint64_t calibrate_tsc(void)
{
	uint64_t ns0 = plugin_clock_gettime_ns(), tsc0 = __rdtsc(), ns1, tsc1;

	do
		ns1 = plugin_clock_gettime_ns();
	while (ns1 - ns0 < 2000000);
	tsc1 = __rdtsc();
	return tsc1 > tsc0 ? (uint64_t)(((unsigned __int128)(ns1 - ns0) << 32) / (tsc1 - tsc0)) : 0;
}
#endif

static void choose_source(void)
{
#if defined(__x86_64__) && defined(__SIZEOF_INT128__)
	if (invariant_tsc()) {
		uint64_t q32 = calibrate_tsc();

		if (q32) {
			plugin_clock.ns_per_tick_q32 = q32;
			plugin_clock.source = CLOCK_SOURCE_TSC;
		}
	}
#elif defined(__aarch64__)
	uint64_t hz;

	__asm__ volatile("mrs %0, cntfrq_el0" : "=r"(hz));
	if (hz) {
		plugin_clock.ns_per_tick_q32 = (uint64_t)(((unsigned __int128)1000000000u << 32) / hz);
		plugin_clock.source = CLOCK_SOURCE_CNTVCT;
	}
#endif
}

void plugin_clock_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	/* Once per module: a second instance must not recalibrate the
	 * clock the first one's times were converted with. */
	pthread_once(&once, choose_source);
}

const char *plugin_clock_name(void)
{
	switch (plugin_clock.source) {
	case CLOCK_SOURCE_TSC:
		return "tsc";
	case CLOCK_SOURCE_CNTVCT:
		return "cntvct";
	default:
		return "clock_gettime";
	}
}
