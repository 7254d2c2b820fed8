/*
 * x86-64, both ABIs: which vector registers exist and are saved by the OS
 * (CPUID and XCR0), so the helpers know how much of them to keep.
 */
#include "cpu.h"

#include <cpuid.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t xgetbv0(void)
{
	uint32_t lo, hi;

	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((uint64_t)hi << 32) | lo;
}

/* The widest vector state the CPU has and the OS saves (XCR0). */
static unsigned char cpu_vector_width(void)
{
	unsigned a, b, c, d;
	uint64_t xcr0;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE) || !(c & bit_AVX))
		return 0;
	xcr0 = xgetbv0();
	if ((xcr0 & 0x6) != 0x6)                /* XMM and YMM state */
		return 0;
	if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_AVX512F) &&
	    (xcr0 & 0xe6) == 0xe6)              /* opmask, ZMM_Hi256, Hi16_ZMM */
		return 2;
	return 1;
}

unsigned char elt_x86_64_detect_vector_width(void)
{
	const char *limit = getenv("ASYNCELT_X86_VECTOR_WIDTH");
	unsigned char width = cpu_vector_width();

	if (!limit || strcmp(limit, "64") == 0)
		return width;
	if (strcmp(limit, "16") == 0)
		width = 0;
	else if (strcmp(limit, "32") == 0 && width > 1)
		width = 1;
	else if (strcmp(limit, "32") != 0)
		elt_report("ASYNCELT_X86_VECTOR_WIDTH=\"%s\" is ignored: "
			   "it must be 16, 32 or 64 (bytes)", limit);
	return width;
}
