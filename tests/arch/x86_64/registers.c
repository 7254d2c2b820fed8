/*
 * x86-64 System V: what the helpers must preserve (doc/abi.md): all 16
 * general registers, xmm0-7 at the full width of the CPU, x87 st0/st1 of
 * a long double result on Leave, the MXCSR and x87 control words, and the
 * stack pointer after popping the two pushed words.
 */
#include "registers.h"
#include "registers-x86_64.h"
#include "vector-width.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(offsetof(struct regs, vec) == REGS_VEC, "REGS_VEC");
_Static_assert(offsetof(struct regs, x87) == REGS_X87, "REGS_X87");
_Static_assert(offsetof(struct regs, x87_depth) == REGS_X87_DEPTH, "REGS_X87_DEPTH");
_Static_assert(offsetof(struct regs, mxcsr) == REGS_MXCSR, "REGS_MXCSR");
_Static_assert(offsetof(struct regs, fpucw) == REGS_FPUCW, "REGS_FPUCW");
_Static_assert(offsetof(struct regs, width) == REGS_WIDTH, "REGS_WIDTH");
_Static_assert(offsetof(struct regs, misalign) == REGS_MISALIGN, "REGS_MISALIGN");
_Static_assert(offsetof(struct regs, function_id) == REGS_FUNCTION_ID, "REGS_FUNCTION_ID");
_Static_assert(offsetof(struct regs, caller_sp) == REGS_CALLER_SP, "REGS_CALLER_SP");
_Static_assert(sizeof(struct regs) == REGS_SIZE, "REGS_SIZE");

const size_t regs_size = sizeof(struct regs);

const char *regs_describe(void)
{
	static const char *const names[3] = {
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
	static const char *const names[3] = { "integer/vector result",
		"long double result in st0", "complex long double in st0, st1" };

	return variant < 3 ? names[variant] : "?";
}

void regs_fill(struct regs *in, unsigned seed, unsigned variant, int misalign,
	       uintptr_t function_id, uintptr_t caller_sp, int continuation)
{
	int i, j;

	memset(in, 0, sizeof(*in));
	for (i = 0; i < 16; i++)
		in->gpr[i] = 0x1111111111111111ull * (uint64_t)(i + 1) ^ seed;
	for (i = 0; i < 16; i++)
		for (j = 0; j < 64; j++)
			in->vec[i][j] = (unsigned char)(i * 64 + j + seed);
	for (i = 0; i < 2; i++) {
		long double v = 1.25L + i + seed;
		memcpy(in->x87[i], &v, 10);
	}
	in->x87_depth = variant;
	in->mxcsr = 0x1f80 | 0x6000;    /* all masked, round toward zero */
	in->fpucw = 0x027f;             /* double precision, all masked */
	in->width = vector_width();
	in->misalign = (uint32_t)misalign;
	in->function_id = function_id;
	in->caller_sp = caller_sp;
	if (!continuation) {
		in->gpr[RDI] = 0;       /* K, when it is the first parameter */
		in->gpr[RCX] = 0;       /* the continuation return */
	}
}

int regs_compare(const struct regs *in, const struct regs *out, char *why,
		 size_t why_len)
{
	static const char *const names[16] = { "rax", "rcx", "rdx", "rbx", "rsp", "rbp",
		"rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15" };
	size_t bytes = vector_bytes[in->width];
	unsigned i;

	if (out->gpr[RSP] != regs_rsp_at_call)
		return snprintf(why, why_len, "rsp %#llx became %#llx",
				(unsigned long long)regs_rsp_at_call,
				(unsigned long long)out->gpr[RSP]), 0;
	for (i = 0; i < 16; i++)
		if (i != RSP && in->gpr[i] != out->gpr[i])
			return snprintf(why, why_len, "%s %#llx became %#llx", names[i],
					(unsigned long long)in->gpr[i],
					(unsigned long long)out->gpr[i]), 0;
	for (i = 0; i < 8; i++)
		if (memcmp(in->vec[i], out->vec[i], bytes))
			return snprintf(why, why_len, "vector register %u (%zu bytes) changed",
					i, bytes), 0;
	if (in->x87_depth != out->x87_depth)
		return snprintf(why, why_len, "x87 depth %u became %u", in->x87_depth,
				out->x87_depth), 0;
	for (i = 0; i < in->x87_depth; i++)
		if (memcmp(in->x87[i], out->x87[i], 10))
			return snprintf(why, why_len, "st%u changed", i), 0;
	if ((in->mxcsr & 0xffc0) != (out->mxcsr & 0xffc0))
		return snprintf(why, why_len, "mxcsr control %#x became %#x", in->mxcsr,
				out->mxcsr), 0;
	if ((in->fpucw & 0x1f3f) != (out->fpucw & 0x1f3f))
		return snprintf(why, why_len, "x87 control %#x became %#x", in->fpucw,
				out->fpucw), 0;
	return 1;
}

void regs_clobber(void)
{
	__asm__ volatile("pxor %%xmm0, %%xmm0; pcmpeqd %%xmm1, %%xmm1; "
			 "movdqa %%xmm1, %%xmm2; movdqa %%xmm1, %%xmm3; "
			 "movdqa %%xmm1, %%xmm4; movdqa %%xmm1, %%xmm5; "
			 "movdqa %%xmm1, %%xmm6; movdqa %%xmm1, %%xmm7"
			 ::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7");
	if (vector_width() >= 1)
		__asm__ volatile("vpcmpeqd %%ymm0, %%ymm0, %%ymm0; vmovdqa %%ymm0, %%ymm1; "
				 "vmovdqa %%ymm0, %%ymm7; vzeroupper"
				 ::: "xmm0", "xmm1", "xmm7");
	/* fill the whole x87 stack, then empty it: with a long double result
	 * left on it by the helper, this overflows and destroys it */
	__asm__ volatile("fldpi; fldpi; fldpi; fldpi; fldpi; fldpi; fldpi; fldpi; "
			 "fstp %%st(0); fstp %%st(0); fstp %%st(0); fstp %%st(0); "
			 "fstp %%st(0); fstp %%st(0); fstp %%st(0); fstp %%st(0)"
			 ::: "st", "st(1)", "st(2)", "st(3)", "st(4)", "st(5)", "st(6)", "st(7)");
	__asm__ volatile("mov $-1, %%rax; mov %%rax, %%rcx; mov %%rax, %%rdx; "
			 "mov %%rax, %%rsi; mov %%rax, %%rdi; mov %%rax, %%r8; "
			 "mov %%rax, %%r9; mov %%rax, %%r10; mov %%rax, %%r11"
			 ::: "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11");
}
