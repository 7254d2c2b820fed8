/*
 * AArch64 (AAPCS64, Linux): what the helpers must preserve (doc/abi.md):
 * x0-x8, the callee-saved x19-x29, q0-q7 at their full 128 bits (z0-z7
 * at the vector length and p0-p3 with SVE), d8-d15, FPCR and FPSR, x30
 * pointing after the call, and SP back above the two words the caller
 * reserved.
 */
#include "registers.h"
#include "registers-aarch64.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>

_Static_assert(offsetof(struct regs, x) == REGS_X, "REGS_X");
_Static_assert(offsetof(struct regs, sp) == REGS_SP, "REGS_SP");
_Static_assert(offsetof(struct regs, q) == REGS_Q, "REGS_Q");
_Static_assert(offsetof(struct regs, fpcr) == REGS_FPCR, "REGS_FPCR");
_Static_assert(offsetof(struct regs, fpsr) == REGS_FPSR, "REGS_FPSR");
_Static_assert(offsetof(struct regs, misalign) == REGS_MISALIGN, "REGS_MISALIGN");
_Static_assert(offsetof(struct regs, function_id) == REGS_FUNCTION_ID, "REGS_FUNCTION_ID");
_Static_assert(offsetof(struct regs, caller_sp) == REGS_CALLER_SP, "REGS_CALLER_SP");
_Static_assert(offsetof(struct regs, vl) == REGS_VL, "REGS_VL");
_Static_assert(offsetof(struct regs, z) == REGS_Z, "REGS_Z");
_Static_assert(offsetof(struct regs, p) == REGS_P, "REGS_P");
_Static_assert(sizeof(struct regs) == REGS_SIZE, "REGS_SIZE");

const size_t regs_size = sizeof(struct regs);

/* FPCR: AHP, DN, FZ and RMode, which every AArch64 FPU has; FPSR: QC and
 * the cumulative exception flags. */
#define FPCR_CONTROL 0x07c00000ull
#define FPSR_FLAGS   0x0800009full

#ifndef HWCAP_SVE
# define HWCAP_SVE (1ul << 22)
#endif

static uint64_t sve_vl(void)
{
	return getauxval(AT_HWCAP) & HWCAP_SVE ? regs_sve_vl() : 0;
}

const char *regs_describe(void)
{
	static char text[96];
	uint64_t vl = sve_vl();

	if (!vl)
		return "AdvSIMD: q0-7, 16 bytes each";
	snprintf(text, sizeof(text), "SVE: z0-7, %llu bytes each, and p0-3",
		 (unsigned long long)vl);
	return text;
}

unsigned regs_leave_variants(void)
{
	return 1;       /* every result lives in x0-x7 or q0-q7 */
}

const char *regs_variant_name(unsigned variant)
{
	return variant == 0 ? "integer/FP/SIMD result" : "?";
}

void regs_fill(struct regs *in, unsigned seed, unsigned variant, int misalign,
	       uintptr_t function_id, uintptr_t caller_sp, int continuation)
{
	int i, j;

	(void)variant;
	memset(in, 0, sizeof(*in));
	for (i = 0; i < 31; i++)
		in->x[i] = 0x1111111111111111ull * (uint64_t)(i + 1) ^ seed;
	for (i = 0; i < 32; i++)
		for (j = 0; j < 16; j++)
			in->q[i][j] = (unsigned char)(i * 16 + j + seed);
	in->vl = sve_vl();
	if (in->vl > REGS_VL_MAX)
		in->vl = 0;             /* beyond the architecture's 2048 bits */
	for (i = 0; in->vl && i < 32; i++)      /* the q values, then more */
		for (j = 0; j < (int)in->vl; j++)
			in->z[i * in->vl + (unsigned)j] = j < 16 ? in->q[i][j] :
				(unsigned char)(0xa5 ^ (i * 7 + j + seed));
	for (i = 0; in->vl && i < 16; i++)
		for (j = 0; j < (int)in->vl / 8; j++)
			in->p[i * in->vl / 8 + (unsigned)j] =
				(unsigned char)(0x3c + i * 16 + j + seed);
	/* round toward zero, flush to zero, default NaN, alternative half
	 * precision: none of them the default */
	in->fpcr = (3ull << 22) | (1ull << 24) | (1ull << 25) | (1ull << 26);
	in->fpsr = (1ull << 27) | (1ull << 4) | (1ull << 0);    /* QC, IXC, IOC */
	in->misalign = (uint32_t)misalign;
	in->function_id = function_id;
	in->caller_sp = caller_sp;
	if (!continuation) {
		in->x[0] = 0;           /* K, when it is the first parameter */
		in->x[2] = 0;           /* the continuation return */
	}
}

int regs_compare(const struct regs *in, const struct regs *out, char *why,
		 size_t why_len)
{
	static const unsigned preserved[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 19, 20, 21,
		22, 23, 24, 25, 26, 27, 28, 29 };
	unsigned i;

	if (out->sp != regs_sp_at_call)
		return snprintf(why, why_len, "sp %#llx became %#llx (the helper must "
				"release the two words it was given)",
				(unsigned long long)regs_sp_at_call,
				(unsigned long long)out->sp), 0;
	if (out->x[30] != regs_return_point)
		return snprintf(why, why_len, "x30 %#llx is not the return point %#llx",
				(unsigned long long)out->x[30],
				(unsigned long long)regs_return_point), 0;
	for (i = 0; i < sizeof(preserved) / sizeof(preserved[0]); i++) {
		unsigned r = preserved[i];

		if (in->x[r] != out->x[r])
			return snprintf(why, why_len, "x%u %#llx became %#llx", r,
					(unsigned long long)in->x[r],
					(unsigned long long)out->x[r]), 0;
	}
	for (i = 0; i < 8; i++)
		if (memcmp(in->q[i], out->q[i], 16))
			return snprintf(why, why_len, "q%u (16 bytes) changed", i), 0;
	for (i = 8; i < 16; i++)
		if (memcmp(in->q[i], out->q[i], 8))
			return snprintf(why, why_len, "d%u (callee-saved) changed", i), 0;
	for (i = 0; in->vl && i < 8; i++)
		if (memcmp(in->z + i * in->vl, out->z + i * in->vl, in->vl))
			return snprintf(why, why_len, "z%u (%llu bytes) changed", i,
					(unsigned long long)in->vl), 0;
	for (i = 0; in->vl && i < 4; i++)
		if (memcmp(in->p + i * in->vl / 8, out->p + i * in->vl / 8, in->vl / 8))
			return snprintf(why, why_len, "p%u changed", i), 0;
	if ((in->fpcr & FPCR_CONTROL) != (out->fpcr & FPCR_CONTROL))
		return snprintf(why, why_len, "fpcr %#llx became %#llx",
				(unsigned long long)in->fpcr,
				(unsigned long long)out->fpcr), 0;
	if ((in->fpsr & FPSR_FLAGS) != (out->fpsr & FPSR_FLAGS))
		return snprintf(why, why_len, "fpsr %#llx became %#llx",
				(unsigned long long)in->fpsr,
				(unsigned long long)out->fpsr), 0;
	return 1;
}

void regs_clobber(void)
{
	__asm__ volatile(
		"movi v0.2d, #0xffffffffffffffff\n\t"
		"movi v1.2d, #0\n\t"
		"mov v2.16b, v0.16b\n\tmov v3.16b, v0.16b\n\t"
		"mov v4.16b, v0.16b\n\tmov v5.16b, v0.16b\n\t"
		"mov v6.16b, v0.16b\n\tmov v7.16b, v0.16b\n\t"
		"mov v8.16b, v0.16b\n\tmov v9.16b, v0.16b\n\t"
		"mov v10.16b, v0.16b\n\tmov v11.16b, v0.16b\n\t"
		"mov v12.16b, v0.16b\n\tmov v13.16b, v0.16b\n\t"
		"mov v14.16b, v0.16b\n\tmov v15.16b, v0.16b\n\t"
		"mov v16.16b, v0.16b\n\tmov v31.16b, v0.16b"
		::: "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10",
		    "v11", "v12", "v13", "v14", "v15", "v16", "v31");
	__asm__ volatile(
		"mov x0, #-1\n\tmov x1, x0\n\tmov x2, x0\n\tmov x3, x0\n\t"
		"mov x4, x0\n\tmov x5, x0\n\tmov x6, x0\n\tmov x7, x0\n\t"
		"mov x8, x0\n\tmov x9, x0\n\tmov x10, x0\n\tmov x11, x0\n\t"
		"mov x12, x0\n\tmov x13, x0\n\tmov x14, x0\n\tmov x15, x0\n\t"
		"mov x16, x0\n\tmov x17, x0"
		::: "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10",
		    "x11", "x12", "x13", "x14", "x15", "x16", "x17");
	/* the default rounding mode and no flags: a plugin may change both */
	__asm__ volatile("msr fpcr, xzr\n\tmsr fpsr, xzr" ::: "memory");
	if (sve_vl())
		regs_clobber_sve();
}
