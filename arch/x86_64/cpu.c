/*
 * x86-64, both ABIs: which vector registers exist and are saved by the OS
 * (CPUID and XCR0), so the helpers know how much of them to keep: chosen
 * once, at load time, as the row of helper bodies they jump to.
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
		return ELT_X86_64_VEC_SSE;
	xcr0 = xgetbv0();
	if ((xcr0 & 0x6) != 0x6)                /* XMM and YMM state */
		return ELT_X86_64_VEC_SSE;
	if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_AVX512F) &&
	    (xcr0 & 0xe6) == 0xe6)              /* opmask, ZMM_Hi256, Hi16_ZMM */
		return ELT_X86_64_VEC_AVX512;
	return ELT_X86_64_VEC_AVX;
}

unsigned char elt_x86_64_detect_vector_width(void)
{
	const char *limit = getenv("ASYNCELT_X86_VECTOR_WIDTH");
	unsigned char width = cpu_vector_width();

	if (!limit || strcmp(limit, "64") == 0)
		return width;
	if (strcmp(limit, "16") == 0)
		width = ELT_X86_64_VEC_SSE;
	else if (strcmp(limit, "32") == 0 && width > ELT_X86_64_VEC_AVX)
		width = ELT_X86_64_VEC_AVX;
	else if (strcmp(limit, "32") != 0)
		elt_report("ASYNCELT_X86_VECTOR_WIDTH=\"%s\" is ignored: "
			   "it must be 16, 32 or 64 (bytes)", limit);
	return width;
}

_Static_assert(sizeof(elt_x86_64_body) ==
	       ELT_X86_64_BODY_COUNT * sizeof(elt_x86_64_body_fn) &&
	       ELT_X86_64_BODY_TAILCALL == 3 * sizeof(elt_x86_64_body_fn),
	       "the body offsets of cpu.h");

/* Before any helper can be armed: a plugin is added by code that runs
 * after this library's constructors. */
__attribute__((constructor)) static void choose_bodies(void)
{
	memcpy(elt_x86_64_body, elt_x86_64_bodies[elt_x86_64_detect_vector_width()],
	       sizeof(elt_x86_64_body));
}
