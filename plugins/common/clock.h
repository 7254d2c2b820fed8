/*
 * The plugins' clock (timing, logging): the cheapest monotonic counter the
 * CPU lets user code read, read as "ticks" on the hot path and turned into
 * nanoseconds.  Compiled into each plugin that uses it.  By port:
 *
 *   x86-64, i386: rdtsc, where the TSC is invariant (CPUID 0x80000007,
 *            EDX bit 8), its rate calibrated against CLOCK_MONOTONIC;
 *   aarch64: the generic timer's virtual count (cntvct_el0), at the rate
 *            the CPU states (cntfrq_el0);
 *   ppc64le: the time base (mftb), calibrated;
 *   s390x:   the TOD clock (stckf), 4096 ticks a microsecond by the
 *            architecture;
 *   riscv64: the time CSR (rdtime, which Linux lets user code read: its
 *            vDSO does), calibrated;
 *   arm, or where the counter is missing or stands still:
 *            clock_gettime(CLOCK_MONOTONIC), whose ticks are nanoseconds.
 *
 * Calibration spins for 2 ms when the first plugin starts.  rdtsc costs
 * about 10 ns against 23 for the vDSO's clock_gettime on the Zen 5 of
 * doc/performance.md, and a plugin reads it at every segment.
 */
#ifndef ELT_PLUGINS_CLOCK_H
#define ELT_PLUGINS_CLOCK_H

#include <stdint.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
# include <x86intrin.h>
# define PLUGIN_CPU_COUNTER "tsc"
#elif defined(__aarch64__)
# define PLUGIN_CPU_COUNTER "cntvct"
#elif defined(__powerpc64__)
# define PLUGIN_CPU_COUNTER "timebase"
#elif defined(__s390x__)
# define PLUGIN_CPU_COUNTER "tod"
#elif defined(__riscv) && __riscv_xlen == 64
# define PLUGIN_CPU_COUNTER "rdtime"
#endif

enum clock_source { CLOCK_SOURCE_MONOTONIC, CLOCK_SOURCE_COUNTER };

struct plugin_clock {
	enum clock_source source;
	uint64_t ns_per_tick_q32;       /* nanoseconds per tick, times 2^32 */
};

/* Chosen (and calibrated) once, by plugin_clock_init(). */
extern struct plugin_clock plugin_clock;

/* Picks the source, once per module however often it is called. */
void plugin_clock_init(void);
/* The counter's name above, or "clock_gettime". */
const char *plugin_clock_name(void);

static inline uint64_t plugin_clock_gettime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#ifdef PLUGIN_CPU_COUNTER
/* The CPU's counter, as is. */
static inline uint64_t plugin_cpu_counter(void)
{
	uint64_t v;

# if defined(__x86_64__) || defined(__i386__)
	v = __rdtsc();
# elif defined(__aarch64__)
	__asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v) : : "memory");
# elif defined(__powerpc64__)
	__asm__ volatile("mftb %0" : "=r"(v));
# elif defined(__s390x__)
	__asm__ volatile("stckf %0" : "=Q"(v) : : "cc");
# else
	__asm__ volatile("rdtime %0" : "=r"(v));
# endif
	return v;
}
#endif

static inline uint64_t plugin_ticks(void)
{
#ifdef PLUGIN_CPU_COUNTER
	if (__builtin_expect(plugin_clock.source == CLOCK_SOURCE_COUNTER, 1))
		return plugin_cpu_counter();
#endif
	return plugin_clock_gettime_ns();
}

/* (x * q32) >> 32, modulo 2^64, from 32-bit halves: for an ABI with a
 * counter but no 128-bit product (i386). */
static inline uint64_t plugin_mul_q32_halves(uint64_t x, uint64_t q32)
{
	uint64_t xh = x >> 32, xl = (uint32_t)x, qh = q32 >> 32, ql = (uint32_t)q32;

	return ((xh * qh) << 32) + xh * ql + xl * qh + ((xl * ql) >> 32);
}

/* A number of ticks (a duration, or a time since some origin) in ns. */
static inline uint64_t plugin_ticks_to_ns(uint64_t ticks)
{
#if !defined(PLUGIN_CPU_COUNTER)
	return ticks;           /* clock_gettime's, in ns already */
#elif defined(__SIZEOF_INT128__)
	return (uint64_t)(((unsigned __int128)ticks * plugin_clock.ns_per_tick_q32) >> 32);
#else
	/* i386: four 32-bit products, only where the TSC is read */
	if (plugin_clock.source == CLOCK_SOURCE_MONOTONIC)
		return ticks;
	return plugin_mul_q32_halves(ticks, plugin_clock.ns_per_tick_q32);
#endif
}

#endif
