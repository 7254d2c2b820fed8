/*
 * The vector width the x86-64 helpers must preserve, worked out by the
 * tests themselves (not by asking the library, which would agree with
 * its own mistakes): 0 SSE, 1 AVX, 2 AVX-512, as the CPU has and the OS
 * saves, or less, as $ASYNCELT_X86_VECTOR_WIDTH tells the library.
 * Shared by the System V and Win64 register fixtures.
 */
#ifndef ELT_TESTS_X86_64_VECTOR_WIDTH_H
#define ELT_TESTS_X86_64_VECTOR_WIDTH_H

#include <cpuid.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline unsigned cpu_vector_width(void)
{
	unsigned a, b, c, d;
	uint32_t lo, hi;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE) || !(c & bit_AVX))
		return 0;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	if ((lo & 6) != 6)
		return 0;
	if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_AVX512F) &&
	    (lo & 0xe6) == 0xe6)
		return 2;
	return 1;
}

static inline unsigned vector_width(void)
{
	const char *limit = getenv("ASYNCELT_X86_VECTOR_WIDTH");
	unsigned width = cpu_vector_width();

	if (limit && strcmp(limit, "16") == 0)
		return 0;
	if (limit && strcmp(limit, "32") == 0 && width > 1)
		return 1;
	return width;
}

/* Bytes of each vector register at that width. */
static const size_t vector_bytes[3] = { 16, 32, 64 };

#endif
