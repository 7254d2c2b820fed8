/*
 * x86-64 Windows: what the helpers must preserve (doc/abi.md): all 16
 * general registers, xmm0-15 at the full width of the CPU (the upper
 * halves of ymm6-15 are volatile in the ABI, so the helper keeps them
 * itself), the MXCSR and x87 control words, and the stack pointer after
 * popping the two pushed words.  No x87 results: a long double comes back
 * through memory.
 */
#include "registers.h"
#include "registers-x86_64-win64.h"
#include "vector-width.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(offsetof(struct regs, vec) == REGS_VEC, "REGS_VEC");
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
		"SSE: xmm0-15, 16 bytes each", "AVX: ymm0-15, 32 bytes each",
		"AVX-512: zmm0-15, 64 bytes each" };

	return names[vector_width()];
}

unsigned regs_leave_variants(void)
{
	return 1;
}

const char *regs_variant_name(unsigned variant)
{
	return variant == 0 ? "integer/vector result" : "?";
}

void regs_fill(struct regs *in, unsigned seed, unsigned variant, int misalign,
	       uintptr_t function_id, uintptr_t caller_sp, int continuation)
{
	int i, j;

	(void)variant;
	memset(in, 0, sizeof(*in));
	for (i = 0; i < 16; i++)
		in->gpr[i] = 0x1111111111111111ull * (uint64_t)(i + 1) ^ seed;
	for (i = 0; i < 16; i++)
		for (j = 0; j < 64; j++)
			in->vec[i][j] = (unsigned char)(i * 64 + j + seed);
	in->mxcsr = 0x1f80 | 0x6000;    /* all masked, round toward zero */
	in->fpucw = 0x027f;             /* double precision, all masked */
	in->width = vector_width();
	in->misalign = (uint32_t)misalign;
	in->function_id = function_id;
	in->caller_sp = caller_sp;
	if (!continuation)
		in->gpr[RCX] = 0;       /* K as the first parameter, and the continuation return */
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
	for (i = 0; i < 16; i++)
		if (memcmp(in->vec[i], out->vec[i], bytes))
			return snprintf(why, why_len, "vector register %u (%zu bytes) changed",
					i, bytes), 0;
	if ((in->mxcsr & 0xffc0) != (out->mxcsr & 0xffc0))
		return snprintf(why, why_len, "mxcsr control %#x became %#x", in->mxcsr,
				out->mxcsr), 0;
	if ((in->fpucw & 0x1f3f) != (out->fpucw & 0x1f3f))
		return snprintf(why, why_len, "x87 control %#x became %#x", in->fpucw,
				out->fpucw), 0;
	return 1;
}

/* The volatile registers of the Win64 ABI: rax, rcx, rdx, r8-r11,
 * xmm0-5, and the upper halves of ymm0-15 (the compiler saves and
 * restores only the low 128 bits of the xmm6-15 clobbered here). */
void regs_clobber(void)
{
	__asm__ volatile("pxor %%xmm0, %%xmm0; pcmpeqd %%xmm1, %%xmm1; "
			 "movdqa %%xmm1, %%xmm2; movdqa %%xmm1, %%xmm3; "
			 "movdqa %%xmm1, %%xmm4; movdqa %%xmm1, %%xmm5"
			 ::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5");
	if (vector_width() >= 1)
		__asm__ volatile("vpcmpeqd %%ymm0, %%ymm0, %%ymm0; vmovdqa %%ymm0, %%ymm1; "
				 "vmovdqa %%ymm0, %%ymm5; vmovdqa %%ymm0, %%ymm6; "
				 "vmovdqa %%ymm0, %%ymm15; vzeroupper"
				 ::: "xmm0", "xmm1", "xmm5", "xmm6", "xmm15");
	__asm__ volatile("mov $-1, %%rax; mov %%rax, %%rcx; mov %%rax, %%rdx; "
			 "mov %%rax, %%r8; mov %%rax, %%r9; mov %%rax, %%r10; mov %%rax, %%r11"
			 ::: "rax", "rcx", "rdx", "r8", "r9", "r10", "r11");
}
