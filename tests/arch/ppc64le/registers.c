/*
 * ppc64le (ELFv2): what the helpers must preserve (doc/abi.md): r0, r2-r12
 * and r14-r31, r1 itself, vs0-vs13 at 128 bits (f0-f13 and the halves
 * above them), f14-f31, v0, v2-v13 and v20-v31 at 128 bits, all of CR,
 * ctr, xer, lr, the FPSCR and the VSCR.  r13 (the thread pointer) is never
 * loaded, only checked.
 *
 * The ABI keeps r1 quadword aligned at every instruction, so the
 * "misaligned" call is the most a caller may do: r1 = 16 mod 64 instead
 * of 0 mod 64.
 */
#include "registers.h"
#include "registers-ppc64le.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

_Static_assert(offsetof(struct regs, vsr) == REGS_VSR, "REGS_VSR");
_Static_assert(offsetof(struct regs, cr) == REGS_CR, "REGS_CR");
_Static_assert(offsetof(struct regs, ctr) == REGS_CTR, "REGS_CTR");
_Static_assert(offsetof(struct regs, xer) == REGS_XER, "REGS_XER");
_Static_assert(offsetof(struct regs, lr) == REGS_LR, "REGS_LR");
_Static_assert(offsetof(struct regs, fpscr) == REGS_FPSCR, "REGS_FPSCR");
_Static_assert(offsetof(struct regs, vscr) == REGS_VSCR, "REGS_VSCR");
_Static_assert(offsetof(struct regs, misalign) == REGS_MISALIGN, "REGS_MISALIGN");
_Static_assert(offsetof(struct regs, function_id) == REGS_FUNCTION_ID, "REGS_FUNCTION_ID");
_Static_assert(offsetof(struct regs, caller_sp) == REGS_CALLER_SP, "REGS_CALLER_SP");
_Static_assert(offsetof(struct regs, sp_at_call) == REGS_SP_AT_CALL, "REGS_SP_AT_CALL");
_Static_assert(offsetof(struct regs, lr_expected) == REGS_LR_EXPECTED, "REGS_LR_EXPECTED");
_Static_assert(offsetof(struct regs, r13_at_call) == REGS_R13_AT_CALL, "REGS_R13_AT_CALL");
_Static_assert(sizeof(struct regs) == REGS_SIZE, "REGS_SIZE");

const size_t regs_size = sizeof(struct regs);

/* FPSCR: RN (rounding), the enables VE OE UE ZE XE and NI; the sticky
 * exception bits FX OX UX ZX XX and the VX causes; the result bits FR FI
 * FPRF.  The helper restores the whole register: compare all of the low
 * word (FEX and VX are summaries of the others). */
#define FPSCR_COMPARED 0xffffffffu
#define VSCR_NJ  0x00010000u
#define VSCR_SAT 0x00000001u
#define XER_COMPARED 0xe000007fu        /* SO OV CA, string byte count */

const char *regs_describe(void)
{
	return "VSX: vs0-vs13 (f0-f13) and v0-v13 at 16 bytes each";
}

unsigned regs_leave_variants(void)
{
	return 1;
}

const char *regs_variant_name(unsigned variant)
{
	return variant == 0 ? "every result register (r3 r4, f1-f8, v2-v9)" : "?";
}

void regs_fill(struct regs *in, unsigned seed, unsigned variant, int misalign,
	       uintptr_t function_id, uintptr_t caller_sp, int continuation)
{
	int i, j;

	(void)variant;
	memset(in, 0, sizeof(*in));
	for (i = 0; i < 32; i++)
		in->gpr[i] = 0x0101010101010101ull * (uint64_t)(i + 1) ^ seed ^
			     ((uint64_t)seed << 40);
	for (i = 0; i < 64; i++)
		for (j = 0; j < 16; j++)
			in->vsr[i][j] = (unsigned char)(i * 16 + j + seed * 7);
	in->cr = 0x13579bdfu ^ (seed * 0x11111111u);
	in->ctr = 0xc7c7c7c7c7c7c7c7ull ^ seed;
	in->xer = 0xa0000000u | (seed & 0x7f);  /* SO, CA, a byte count */
	/* round toward zero, +inf or -inf by seed; no exception enabled (the
	 * plugin's arithmetic must not trap); the inexact sticky bit clear, so
	 * a helper that lets the plugin's inexact results through is seen */
	in->fpscr = 1u + seed % 3u;
	in->vscr[0] = (seed & 1) ? VSCR_NJ | VSCR_SAT : VSCR_SAT;
	in->misalign = (uint32_t)misalign;
	in->function_id = function_id;
	in->caller_sp = caller_sp;
	if (!continuation) {
		in->gpr[3] = 0;         /* K, when it is the first parameter */
		in->gpr[5] = 0;         /* the continuation return */
	}
}

static int vsr_compared(unsigned i, size_t *bytes)
{
	if (i <= 13 || i == 32 || (i >= 34 && i <= 45) || i >= 52) {
		*bytes = 16;            /* vs0-13, v0, v2-v13, v20-v31 */
		return 1;
	}
	if (i >= 14 && i <= 31) {
		*bytes = 8;             /* f14-f31: doubleword 0 only */
		return 1;
	}
	return 0;                       /* v1, v14-v19: caller-saved, never used */
}

int regs_compare(const struct regs *in, const struct regs *out, char *why,
		 size_t why_len)
{
	unsigned i;
	size_t bytes;

	if (out->gpr[1] != out->sp_at_call)
		return snprintf(why, why_len, "r1 %#llx became %#llx",
				(unsigned long long)out->sp_at_call,
				(unsigned long long)out->gpr[1]), 0;
	if (out->gpr[13] != out->r13_at_call)
		return snprintf(why, why_len, "r13 %#llx became %#llx",
				(unsigned long long)out->r13_at_call,
				(unsigned long long)out->gpr[13]), 0;
	for (i = 0; i < 32; i++)
		if (i != 1 && i != 13 && in->gpr[i] != out->gpr[i])
			return snprintf(why, why_len, "r%u %#llx became %#llx", i,
					(unsigned long long)in->gpr[i],
					(unsigned long long)out->gpr[i]), 0;
	for (i = 0; i < 64; i++)
		if (vsr_compared(i, &bytes) && memcmp(in->vsr[i], out->vsr[i], bytes))
			return snprintf(why, why_len, "vs%u (%s%u, %zu bytes) changed", i,
					i < 32 ? "f" : "v", i < 32 ? i : i - 32, bytes), 0;
	if (out->lr != out->lr_expected)
		return snprintf(why, why_len, "lr %#llx became %#llx",
				(unsigned long long)out->lr_expected,
				(unsigned long long)out->lr), 0;
	if ((uint32_t)in->cr != (uint32_t)out->cr)
		return snprintf(why, why_len, "cr %#x became %#x", (unsigned)in->cr,
				(unsigned)out->cr), 0;
	if (in->ctr != out->ctr)
		return snprintf(why, why_len, "ctr %#llx became %#llx",
				(unsigned long long)in->ctr,
				(unsigned long long)out->ctr), 0;
	if ((in->xer & XER_COMPARED) != (out->xer & XER_COMPARED))
		return snprintf(why, why_len, "xer %#llx became %#llx",
				(unsigned long long)in->xer,
				(unsigned long long)out->xer), 0;
	if ((in->fpscr & FPSCR_COMPARED) != (out->fpscr & FPSCR_COMPARED))
		return snprintf(why, why_len, "fpscr %#llx became %#llx",
				(unsigned long long)in->fpscr,
				(unsigned long long)out->fpscr), 0;
	if ((in->vscr[0] & (VSCR_NJ | VSCR_SAT)) != (out->vscr[0] & (VSCR_NJ | VSCR_SAT)))
		return snprintf(why, why_len, "vscr %#x became %#x", in->vscr[0],
				out->vscr[0]), 0;
	return 1;
}

void regs_clobber(void)
{
	/* f0-f13 and the halves above them, v0-v19, VSCR */
	__asm__ volatile("xxleqv 0,0,0; xxleqv 1,1,1; xxleqv 2,2,2; xxleqv 3,3,3; "
			 "xxleqv 4,4,4; xxleqv 5,5,5; xxleqv 6,6,6; xxleqv 7,7,7; "
			 "xxleqv 8,8,8; xxleqv 9,9,9; xxleqv 10,10,10; xxleqv 11,11,11; "
			 "xxleqv 12,12,12; xxleqv 13,13,13"
			 ::: "vs0", "vs1", "vs2", "vs3", "vs4", "vs5", "vs6", "vs7",
			 "vs8", "vs9", "vs10", "vs11", "vs12", "vs13");
	__asm__ volatile("vspltisb 0,-1; vspltisb 1,-1; vspltisb 2,-1; vspltisb 3,-1; "
			 "vspltisb 4,-1; vspltisb 5,-1; vspltisb 6,-1; vspltisb 7,-1; "
			 "vspltisb 8,-1; vspltisb 9,-1; vspltisb 10,-1; vspltisb 11,-1; "
			 "vspltisb 12,-1; vspltisb 13,-1; vspltisb 14,-1; vspltisb 15,-1; "
			 "vspltisb 16,-1; vspltisb 17,-1; vspltisb 18,-1; vspltisb 19,-1; "
			 "vspltisw 0,0; mtvscr 0"       /* SAT and NJ cleared */
			 ::: "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9",
			 "v10", "v11", "v12", "v13", "v14", "v15", "v16", "v17", "v18", "v19");
	__asm__ volatile("li 0,-1; mr 3,0; mr 4,0; mr 5,0; mr 6,0; mr 7,0; mr 8,0; "
			 "mr 9,0; mr 10,0; mr 11,0; mr 12,0; mtctr 0; mtxer 0; "
			 "mtcrf 0xc7,0"
			 ::: "r0", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11",
			 "r12", "ctr", "xer", "cr0", "cr1", "cr5", "cr6", "cr7");
}
