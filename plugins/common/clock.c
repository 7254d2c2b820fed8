/*
 * The plugins' clock: see clock.h.
 */
#include "clock.h"

#include <pthread.h>

#if defined(__x86_64__) || defined(__i386__)
# include <cpuid.h>
#endif

struct plugin_clock plugin_clock = { CLOCK_SOURCE_MONOTONIC, (uint64_t)1 << 32 };

#ifdef PLUGIN_CPU_COUNTER
/* Both clocks at one moment: the counter read on either side of
 * clock_gettime, the closest of five tries, so that the thread being
 * preempted between two reads (under load, for milliseconds) does not
 * skew the rate. */
static __attribute__((unused)) void read_both(uint64_t *ticks, uint64_t *ns)
{
	uint64_t closest = UINT64_MAX, before, now, after;
	int i;

	for (i = 0; i < 5; i++) {
		before = plugin_cpu_counter();
		now = plugin_clock_gettime_ns();
		after = plugin_cpu_counter();
		if (after - before < closest) {
			closest = after - before;
			*ticks = before + (after - before) / 2;
			*ns = now;
		}
	}
}

/* ns per tick of the counter, times 2^32, from both clocks read 2 ms
 * apart; 0 when the counter did not advance (or the thread slept for
 * seconds, which the shift below would overflow with). */
static __attribute__((unused)) uint64_t calibrate(void)
{
	uint64_t ns0, ticks0, ns1, ticks1;

	read_both(&ticks0, &ns0);
	while (plugin_clock_gettime_ns() - ns0 < 2000000)
		;
	read_both(&ticks1, &ns1);
	if (ticks1 <= ticks0 || ns1 - ns0 >= (uint64_t)1 << 31)
		return 0;
	return ((ns1 - ns0) << 32) / (ticks1 - ticks0);
}
#endif

#if defined(__x86_64__) || defined(__i386__)
/* The TSC ticks at one rate in every P-, C- and T-state, on every core. */
static int invariant_tsc(void)
{
	unsigned a, b, c, d;

	if (!__get_cpuid(0x80000000, &a, &b, &c, &d) || a < 0x80000007)
		return 0;
	__get_cpuid(0x80000007, &a, &b, &c, &d);
	return (d >> 8) & 1;
}
#endif

/* The counter's ns per tick times 2^32, or 0 to keep clock_gettime. */
static uint64_t counter_rate(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return invariant_tsc() ? calibrate() : 0;
#elif defined(__aarch64__)
	uint64_t hz;

	__asm__ volatile("mrs %0, cntfrq_el0" : "=r"(hz));
	return hz ? ((uint64_t)1000000000 << 32) / hz : 0;
#elif defined(__s390x__)
	/* Bit 51 of the TOD clock is one microsecond. */
	return ((uint64_t)1000 << 32) / 4096;
#elif defined(PLUGIN_CPU_COUNTER)
	return calibrate();
#else
	return 0;
#endif
}

static void choose_source(void)
{
	uint64_t q32 = counter_rate();

	if (q32) {
		plugin_clock.ns_per_tick_q32 = q32;
		plugin_clock.source = CLOCK_SOURCE_COUNTER;
	}
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
#ifdef PLUGIN_CPU_COUNTER
	if (plugin_clock.source == CLOCK_SOURCE_COUNTER)
		return PLUGIN_CPU_COUNTER;
#endif
	return "clock_gettime";
}
