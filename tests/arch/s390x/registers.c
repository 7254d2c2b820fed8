/*
 * s390x: what the helpers must preserve (doc/abi.md): all 16 general
 * registers (%r14 is the return point after the call, %r15 unchanged),
 * f0-f7 and, with the vector facility, v0-v7 and v24-v31 at their full
 * 128 bits, f8-f15 (callee-saved), and the FPC whole.
 */
#include "registers.h"
#include "registers-s390x.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>

_Static_assert(offsetof(struct regs, gpr) == REGS_GPR, "REGS_GPR");
_Static_assert(offsetof(struct regs, vec) == REGS_VEC, "REGS_VEC");
_Static_assert(offsetof(struct regs, fpc) == REGS_FPC, "REGS_FPC");
_Static_assert(offsetof(struct regs, vector) == REGS_VECTOR, "REGS_VECTOR");
_Static_assert(offsetof(struct regs, misalign) == REGS_MISALIGN, "REGS_MISALIGN");
_Static_assert(offsetof(struct regs, function_id) == REGS_FUNCTION_ID, "REGS_FUNCTION_ID");
_Static_assert(offsetof(struct regs, caller_sp) == REGS_CALLER_SP, "REGS_CALLER_SP");
_Static_assert(sizeof(struct regs) == REGS_SIZE, "REGS_SIZE");

const size_t regs_size = sizeof(struct regs);

#ifndef HWCAP_S390_VXRS
# define HWCAP_S390_VXRS 2048
#endif

/* Read by regs_clobber (registers-call.S). */
uint32_t regs_vector;

static uint32_t have_vector(void)
{
	return (getauxval(AT_HWCAP) & HWCAP_S390_VXRS) != 0;
}

const char *regs_describe(void)
{
	return have_vector() ?
		"vector facility: v0-v7 and v24-v31 at 16 bytes, f8-f15 at 8" :
		"no vector facility: f0-f15 at 8 bytes";
}

unsigned regs_leave_variants(void)
{
	return 1;       /* long double and complex results come back in memory */
}

const char *regs_variant_name(unsigned variant)
{
	return variant == 0 ? "integer/FP result" : "?";
}

void regs_fill(struct regs *in, unsigned seed, unsigned variant, int misalign,
	       uintptr_t function_id, uintptr_t caller_sp, int continuation)
{
	int i, j;

	(void)variant;
	memset(in, 0, sizeof(*in));
	for (i = 0; i < 16; i++)
		in->gpr[i] = 0x1111111111111111ull * (uint64_t)(i + 1) ^ seed;
	for (i = 0; i < 32; i++)
		for (j = 0; j < 16; j++)
			in->vec[i][j] = (unsigned char)(i * 16 + j + seed);
	/* no trap enabled, the inexact flag raised, rounding toward zero or
	 * -infinity: none of it what C code normally runs with */
	in->fpc = 0x00080000u | (seed & 1 ? 1u : 3u);
	in->vector = regs_vector = have_vector();
	in->misalign = (uint32_t)misalign;
	in->function_id = function_id;
	in->caller_sp = caller_sp;
	if (!continuation) {
		in->gpr[2] = 0;         /* K, when it is the first parameter */
		in->gpr[4] = 0;         /* the continuation return */
	}
}

int regs_compare(const struct regs *in, const struct regs *out, char *why,
		 size_t why_len)
{
	unsigned i;

	if (out->gpr[15] != regs_sp_at_call)
		return snprintf(why, why_len, "r15 %#llx became %#llx",
				(unsigned long long)regs_sp_at_call,
				(unsigned long long)out->gpr[15]), 0;
	if (out->gpr[14] != regs_return_point)
		return snprintf(why, why_len, "r14 is %#llx, not the return point %#llx",
				(unsigned long long)out->gpr[14],
				(unsigned long long)regs_return_point), 0;
	for (i = 0; i < 14; i++)
		if (in->gpr[i] != out->gpr[i])
			return snprintf(why, why_len, "r%u %#llx became %#llx", i,
					(unsigned long long)in->gpr[i],
					(unsigned long long)out->gpr[i]), 0;
	for (i = 0; i < 32; i++) {
		/* f0-f15 whole; v0-v7 and v24-v31 whole with the vector
		 * facility; the rest of v8-v15 and v16-v23 carry nothing */
		size_t bytes = i < 16 ? 8 : 0;

		if (in->vector && (i < 8 || i >= 24))
			bytes = 16;
		if (memcmp(in->vec[i], out->vec[i], bytes))
			return snprintf(why, why_len, "%s%u (%zu bytes) changed",
					bytes == 16 ? "v" : "f", i, bytes), 0;
	}
	if (in->fpc != out->fpc)
		return snprintf(why, why_len, "fpc %#x became %#x", in->fpc, out->fpc), 0;
	return 1;
}
