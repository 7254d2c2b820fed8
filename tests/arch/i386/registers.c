/*
 * i386 System V: what the helpers must preserve (doc/abi.md): all 8
 * general registers, xmm0-7 at the full width of the CPU, the x87 st0/st1
 * of a floating-point result on Leave with the x87 status flags, the MXCSR
 * and x87 control words, and the stack pointer after popping the two
 * pushed words.
 */
#include "registers.h"
#include "registers-i386.h"

#include <cpuid.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

_Static_assert(offsetof(struct regs, vec) == REGS_VEC, "REGS_VEC");
_Static_assert(offsetof(struct regs, x87) == REGS_X87, "REGS_X87");
_Static_assert(offsetof(struct regs, x87_depth) == REGS_X87_DEPTH, "REGS_X87_DEPTH");
_Static_assert(offsetof(struct regs, mxcsr) == REGS_MXCSR, "REGS_MXCSR");
_Static_assert(offsetof(struct regs, fpucw) == REGS_FPUCW, "REGS_FPUCW");
_Static_assert(offsetof(struct regs, fpusw) == REGS_FPUSW, "REGS_FPUSW");
_Static_assert(offsetof(struct regs, width) == REGS_WIDTH, "REGS_WIDTH");
_Static_assert(offsetof(struct regs, misalign) == REGS_MISALIGN, "REGS_MISALIGN");
_Static_assert(offsetof(struct regs, function_id) == REGS_FUNCTION_ID, "REGS_FUNCTION_ID");
_Static_assert(offsetof(struct regs, caller_sp) == REGS_CALLER_SP, "REGS_CALLER_SP");
_Static_assert(sizeof(struct regs) == REGS_SIZE, "REGS_SIZE");

const size_t regs_size = sizeof(struct regs);
extern uint16_t regs_fpusw_at_call;     /* registers-call.S */

/* What the OS saves, so what the helper must. */
static unsigned vector_width(void)
{
	unsigned a = 0, b = 0, c = 0, d = 0;
	uint32_t lo, hi;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(d & bit_SSE))
		return WIDTH_NONE;
	if (!(c & bit_OSXSAVE) || !(c & bit_AVX))
		return WIDTH_SSE;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	if ((lo & 6) != 6)
		return WIDTH_SSE;
	if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_AVX512F) &&
	    (lo & 0xe6) == 0xe6)
		return WIDTH_AVX512;
	return WIDTH_AVX;
}

static const size_t vector_bytes[4] = { 0, 16, 32, 64 };

const char *regs_describe(void)
{
	static const char *const names[4] = { "none: no SSE",
		"SSE: xmm0-7, 16 bytes each", "AVX: ymm0-7, 32 bytes each",
		"AVX-512: zmm0-7, 64 bytes each" };

	return names[vector_width()];
}

unsigned regs_leave_variants(void)
{
	return 3;
}

const char *regs_variant_name(unsigned variant)
{
	static const char *const names[3] = { "integer result",
		"float/double/long double result in st0", "two x87 registers, st0 and st1" };

	return variant < 3 ? names[variant] : "?";
}

void regs_fill(struct regs *in, unsigned seed, unsigned variant, int misalign,
	       uintptr_t function_id, uintptr_t caller_sp, int continuation)
{
	int i, j;

	memset(in, 0, sizeof(*in));
	for (i = 0; i < 8; i++)
		in->gpr[i] = 0x11111111u * (uint32_t)(i + 1) ^ seed;
	for (i = 0; i < 8; i++)
		for (j = 0; j < 64; j++)
			in->vec[i][j] = (unsigned char)(i * 64 + j + seed);
	for (i = 0; i < 2; i++) {
		/* not representable as a double: a helper that kept st0 at
		 * double precision would lose it */
		long double v = 1.25L + i + seed + 0x1p-55L;
		memcpy(in->x87[i], &v, 10);
	}
	in->x87_depth = variant;
	in->mxcsr = 0x1f80 | 0x6000;    /* all masked, round toward zero */
	in->fpucw = 0x027f;             /* double precision, all masked */
	in->width = vector_width();
	in->misalign = (uint32_t)misalign;
	in->function_id = (uint32_t)function_id;
	in->caller_sp = (uint32_t)caller_sp;
	if (!continuation)
		in->gpr[ECX] = 0;       /* the continuation return; K is on the stack */
}

int regs_compare(const struct regs *in, const struct regs *out, char *why,
		 size_t why_len)
{
	static const char *const names[8] = { "eax", "ecx", "edx", "ebx", "esp", "ebp",
		"esi", "edi" };
	size_t bytes = vector_bytes[in->width];
	unsigned i;

	if (out->gpr[ESP] != regs_esp_at_call)
		return snprintf(why, why_len, "esp %#x became %#x",
				(unsigned)regs_esp_at_call, (unsigned)out->gpr[ESP]), 0;
	for (i = 0; i < 8; i++)
		if (i != ESP && in->gpr[i] != out->gpr[i])
			return snprintf(why, why_len, "%s %#x became %#x", names[i],
					(unsigned)in->gpr[i], (unsigned)out->gpr[i]), 0;
	for (i = 0; i < 8 && bytes; i++)
		if (memcmp(in->vec[i], out->vec[i], bytes))
			return snprintf(why, why_len, "vector register %u (%zu bytes) changed",
					i, bytes), 0;
	if (in->x87_depth != out->x87_depth)
		return snprintf(why, why_len, "x87 depth %u became %u", in->x87_depth,
				out->x87_depth), 0;
	for (i = 0; i < in->x87_depth; i++)
		if (memcmp(in->x87[i], out->x87[i], 10))
			return snprintf(why, why_len, "st%u changed", i), 0;
	/* Leave with an x87 result gives the whole x87 environment back. */
	if (in->x87_depth && (regs_fpusw_at_call & 0x3f) != (out->fpusw & 0x3f))
		return snprintf(why, why_len, "x87 status flags %#x became %#x",
				regs_fpusw_at_call & 0x3fu, out->fpusw & 0x3fu), 0;
	if (bytes && (in->mxcsr & 0xffc0) != (out->mxcsr & 0xffc0))
		return snprintf(why, why_len, "mxcsr control %#x became %#x", in->mxcsr,
				out->mxcsr), 0;
	if ((in->fpucw & 0x1f3f) != (out->fpucw & 0x1f3f))
		return snprintf(why, why_len, "x87 control %#x became %#x", in->fpucw,
				out->fpucw), 0;
	return 1;
}

void regs_clobber(void)
{
	/* every physical x87 register, then the stack left empty again */
	__asm__ volatile("fldpi; fldpi; fldpi; fldpi; fldpi; fldpi; fldpi; fldpi; "
			 "fstp %%st(0); fstp %%st(0); fstp %%st(0); fstp %%st(0); "
			 "fstp %%st(0); fstp %%st(0); fstp %%st(0); fstp %%st(0)"
			 ::: "st", "st(1)", "st(2)", "st(3)", "st(4)", "st(5)",
			 "st(6)", "st(7)");
	regs_clobber_vectors(vector_width());
	__asm__ volatile("mov $-1, %%eax; mov %%eax, %%ecx; mov %%eax, %%edx"
			 ::: "eax", "ecx", "edx");
}
