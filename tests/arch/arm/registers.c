/*
 * 32-bit ARM: what the helpers must preserve (doc/abi.md): r0-r12, lr as
 * the bl left it, sp once the two pushed words are gone, and on
 * hard-float d0-d15 (d0-d7 carry arguments and results, d8-d15 are
 * callee-saved) and FPSCR.  Each Leave variant puts a result of one kind
 * where the ABI returns it, next to a live continuation in r2.
 */
#include "registers.h"
#include "registers-arm.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

_Static_assert(offsetof(struct regs, r) == REGS_R, "REGS_R");
_Static_assert(offsetof(struct regs, d) == REGS_D, "REGS_D");
_Static_assert(offsetof(struct regs, fpscr) == REGS_FPSCR, "REGS_FPSCR");
_Static_assert(offsetof(struct regs, vfp) == REGS_VFP, "REGS_VFP");
_Static_assert(offsetof(struct regs, misalign) == REGS_MISALIGN, "REGS_MISALIGN");
_Static_assert(offsetof(struct regs, function_id) == REGS_FUNCTION_ID, "REGS_FUNCTION_ID");
_Static_assert(offsetof(struct regs, caller_sp) == REGS_CALLER_SP, "REGS_CALLER_SP");
_Static_assert(sizeof(struct regs) == REGS_SIZE, "REGS_SIZE");

const size_t regs_size = sizeof(struct regs);

#if defined(__ARM_PCS_VFP)
# define VFP 1
#else
# define VFP 0
#endif

/* FPSCR bits with a meaning: N Z C V QC AHP DN FZ RMode Stride Len, the
 * trap enables and the cumulative flags.  The helpers restore it whole. */
#define FPSCR_DEFINED 0xfff79f9fu
/* N, C; default NaN, flush to zero, round toward zero; IXC, DZC. */
#define FPSCR_CANARY 0xa3c00012u

const char *regs_describe(void)
{
	return VFP ? "hard-float VFP: d0-d15 (s0-s31) at 8 bytes each, FPSCR"
		   : "soft-float: none (every argument and result is in core registers)";
}

/* The results a Leave may have to keep, by where the ABI returns them. */
enum { RESULT_VOID, RESULT_INT32, RESULT_INT64, RESULT_DOUBLE_CORE,
       RESULT_FLOAT_CORE, RESULT_DOUBLE_D0, RESULT_FLOAT_S0 };
static const unsigned variants[] = {
	RESULT_VOID, RESULT_INT32, RESULT_INT64, RESULT_DOUBLE_CORE,
#if VFP
	RESULT_DOUBLE_D0, RESULT_FLOAT_S0,
#else
	RESULT_FLOAT_CORE,
#endif
};
#define NVARIANTS (sizeof(variants) / sizeof(variants[0]))

unsigned regs_leave_variants(void)
{
	return NVARIANTS;
}

const char *regs_variant_name(unsigned variant)
{
	static const char *const names[] = {
		[RESULT_VOID] = "no result (void)",
		[RESULT_INT32] = "int32 in r0",
		[RESULT_INT64] = "int64 in r0:r1",
		[RESULT_DOUBLE_CORE] = VFP ? "double in r0:r1 (a variadic function)"
					   : "double in r0:r1",
		[RESULT_FLOAT_CORE] = "float in r0",
		[RESULT_DOUBLE_D0] = "double in d0",
		[RESULT_FLOAT_S0] = "float in s0",
	};

	return variant < NVARIANTS ? names[variants[variant]] : "?";
}

void regs_fill(struct regs *in, unsigned seed, unsigned variant, int misalign,
	       uintptr_t function_id, uintptr_t caller_sp, int continuation)
{
	unsigned result = variant < NVARIANTS ? variants[variant] : RESULT_VOID;
	int64_t i64 = 0x0123456789abcdefll ^ seed;
	double d = -1e300 + seed;
	float f = 2.75f + (float)seed;
	int i;

	memset(in, 0, sizeof(*in));
	for (i = 0; i < 13; i++)
		in->r[i] = 0x11111111u * (uint32_t)(i + 1) ^ seed;
	for (i = 0; VFP && i < 16; i++)
		in->d[i] = 0x0101010101010101ull * (uint64_t)(0x20 + i) ^ ((uint64_t)seed << 40);
	in->fpscr = VFP ? FPSCR_CANARY : 0;
	in->vfp = VFP;
	in->misalign = (uint32_t)misalign;
	in->function_id = (uint32_t)function_id;
	in->caller_sp = (uint32_t)caller_sp;
	if (!continuation) {
		in->r[0] = 0;           /* K, when it is the first parameter */
		in->r[2] = 0;           /* the continuation return */
	}
	switch (result) {
	case RESULT_INT32:
		in->r[0] = (uint32_t)(-123456 - (int32_t)seed);
		break;
	case RESULT_INT64:
		memcpy(&in->r[0], &i64, 8);
		break;
	case RESULT_DOUBLE_CORE:
		memcpy(&in->r[0], &d, 8);
		break;
	case RESULT_FLOAT_CORE:
		memcpy(&in->r[0], &f, 4);
		break;
	case RESULT_DOUBLE_D0:
		memcpy(&in->d[0], &d, 8);
		break;
	case RESULT_FLOAT_S0:           /* s1, the upper half of d0, keeps its canary */
		memcpy(&in->d[0], &f, 4);
		break;
	}
}

int regs_compare(const struct regs *in, const struct regs *out, char *why,
		 size_t why_len)
{
	static const char *const names[13] = { "r0", "r1", "r2", "r3", "r4", "r5",
		"r6", "r7", "r8", "r9", "r10", "r11", "ip" };
	unsigned i;

	if (out->r[SP] != regs_sp_at_call)
		return snprintf(why, why_len, "sp %#x became %#x", (unsigned)regs_sp_at_call,
				(unsigned)out->r[SP]), 0;
	if (out->r[LR] != regs_return_address)
		return snprintf(why, why_len, "lr %#x (the return into the caller) became %#x",
				(unsigned)regs_return_address, (unsigned)out->r[LR]), 0;
	for (i = 0; i < 13; i++)
		if (in->r[i] != out->r[i])
			return snprintf(why, why_len, "%s %#x became %#x", names[i],
					(unsigned)in->r[i], (unsigned)out->r[i]), 0;
	if (!in->vfp)
		return 1;
	for (i = 0; i < 16; i++)
		if (in->d[i] != out->d[i])
			return snprintf(why, why_len, "d%u %#llx became %#llx", i,
					(unsigned long long)in->d[i],
					(unsigned long long)out->d[i]), 0;
	if ((in->fpscr & FPSCR_DEFINED) != (out->fpscr & FPSCR_DEFINED))
		return snprintf(why, why_len, "fpscr %#x became %#x", (unsigned)in->fpscr,
				(unsigned)out->fpscr), 0;
	return 1;
}

/* regs_clobber() is in registers-call.S: inline assembly would have to
 * match the syntax the compiler uses (divided for Thumb-1). */
