/*
 * The plugins' clock (timing, logging): the cheapest monotonic counter the
 * CPU has, read as "ticks" on the hot path and turned into nanoseconds.
 * Compiled into each plugin that uses it.
 *
 *   x86-64 with an invariant TSC (CPUID 0x80000007, EDX bit 8): rdtsc,
 *          calibrated against CLOCK_MONOTONIC when the plugin starts;
 *   aarch64: the generic timer's virtual count (cntvct_el0), whose
 *          frequency the CPU states (cntfrq_el0);
 *   anywhere else, or when those are missing: clock_gettime(CLOCK_MONOTONIC),
 *          whose ticks are nanoseconds.
 *
 * rdtsc costs about 7 ns here against 18 for the vDSO clock_gettime
 * (doc/performance.md), and a plugin reads it at every segment.
 */
#ifndef ELT_PLUGINS_CLOCK_H
#define ELT_PLUGINS_CLOCK_H

#include <stdint.h>
#include <time.h>

#if defined(__x86_64__) && defined(__SIZEOF_INT128__)
# include <x86intrin.h>
#endif

enum clock_source { CLOCK_SOURCE_MONOTONIC, CLOCK_SOURCE_TSC, CLOCK_SOURCE_CNTVCT };

struct plugin_clock {
	enum clock_source source;
	uint64_t ns_per_tick_q32;       /* nanoseconds per tick, times 2^32 */
};

/* Chosen (and calibrated) once, by plugin_clock_init(). */
extern struct plugin_clock plugin_clock;

/* Picks the source, once per module however often it is called; the
 * TSC's calibration spins for about 2 ms. */
void plugin_clock_init(void);
/* "tsc", "cntvct" or "clock_gettime". */
const char *plugin_clock_name(void);

static inline uint64_t plugin_clock_gettime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t plugin_ticks(void)
{
#if defined(__x86_64__) && defined(__SIZEOF_INT128__)
	if (__builtin_expect(plugin_clock.source == CLOCK_SOURCE_TSC, 1))
		return __rdtsc();
#elif defined(__aarch64__)
	if (__builtin_expect(plugin_clock.source == CLOCK_SOURCE_CNTVCT, 1)) {
		uint64_t v;

		__asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v) : : "memory");
		return v;
	}
#endif
	return plugin_clock_gettime_ns();
}

/* A number of ticks (a duration, or a time since some origin) in ns. */
static inline uint64_t plugin_ticks_to_ns(uint64_t ticks)
{
#if defined(__SIZEOF_INT128__)
	return (uint64_t)(((unsigned __int128)ticks * plugin_clock.ns_per_tick_q32) >> 32);
#else
	return ticks;   /* clock_gettime only: ticks are ns */
#endif
}

#endif
