/*
 * riscv64 LP64D: what the helpers must preserve (doc/abi.md): a0-a7,
 * t0-t6, s0-s11, ra (the return into the caller), gp, tp, fa0-fa7 and
 * fs0-fs11 at their full 64 bits, the whole fcsr, and the stack pointer
 * after freeing the caller's 16 bytes.  ft0-ft11 may change.
 */
#include "registers.h"
#include "registers-riscv64.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

_Static_assert(offsetof(struct regs, x) == REGS_X, "REGS_X");
_Static_assert(offsetof(struct regs, f) == REGS_F, "REGS_F");
_Static_assert(offsetof(struct regs, fcsr) == REGS_FCSR, "REGS_FCSR");
_Static_assert(offsetof(struct regs, misalign) == REGS_MISALIGN, "REGS_MISALIGN");
_Static_assert(offsetof(struct regs, function_id) == REGS_FUNCTION_ID, "REGS_FUNCTION_ID");
_Static_assert(offsetof(struct regs, caller_sp) == REGS_CALLER_SP, "REGS_CALLER_SP");
_Static_assert(sizeof(struct regs) == REGS_SIZE, "REGS_SIZE");

const size_t regs_size = sizeof(struct regs);

static const char *const xname[32] = {
	"zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1",
	"a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7",
	"s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11",
	"t3", "t4", "t5", "t6" };
static const char *const fname[32] = {
	"ft0", "ft1", "ft2", "ft3", "ft4", "ft5", "ft6", "ft7", "fs0", "fs1",
	"fa0", "fa1", "fa2", "fa3", "fa4", "fa5", "fa6", "fa7",
	"fs2", "fs3", "fs4", "fs5", "fs6", "fs7", "fs8", "fs9", "fs10", "fs11",
	"ft8", "ft9", "ft10", "ft11" };

/* ft0-ft7 and ft8-ft11: temporaries that carry nothing at a helper call. */
static int is_ft(unsigned i)
{
	return i <= 7 || i >= 28;
}

const char *regs_describe(void)
{
	return "a0-a7, t0-t6, s0-s11; fa0-fa7, fs0-fs11 at 8 bytes (D); fcsr";
}

unsigned regs_leave_variants(void)
{
	return 1;
}

const char *regs_variant_name(unsigned variant)
{
	return variant == 0 ? "integer/FP result" : "?";
}

void regs_fill(struct regs *in, unsigned seed, unsigned variant, int misalign,
	       uintptr_t function_id, uintptr_t caller_sp, int continuation)
{
	uint64_t gp, tp;
	int i;

	(void)variant;
	memset(in, 0, sizeof(*in));
	__asm__("mv %0, gp; mv %1, tp" : "=r"(gp), "=r"(tp));
	/* distinct, and never 0 or -1 (what regs_clobber writes) */
	for (i = T0; i < 32; i++)
		in->x[i] = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1) ^ ((uint64_t)seed << 32);
	in->x[GP] = gp;
	in->x[TP] = tp;
	/* Not NaN-boxed floats: a helper that kept only 32 bits (flw/fsw
	 * would box them) or lost the upper half shows. */
	for (i = 0; i < 32; i++)
		in->f[i] = 0x0123456789abcdefull ^ ((uint64_t)(i + 1) << 40) ^
			   ((uint64_t)seed << 8);
	/* rounding mode: toward zero or down; some accrued flags */
	in->fcsr = ((1u + (seed & 1)) << 5) | (seed & 0x1f);
	in->misalign = (uint32_t)misalign;
	in->function_id = function_id;
	in->caller_sp = caller_sp;
	if (!continuation) {
		in->x[A0] = 0;          /* K, when it is the first parameter */
		in->x[A2] = 0;          /* the continuation return */
	}
}

int regs_compare(const struct regs *in, const struct regs *out, char *why,
		 size_t why_len)
{
	unsigned i;

	if (out->x[SP] != regs_sp_at_call)
		return snprintf(why, why_len, "sp %#llx became %#llx",
				(unsigned long long)regs_sp_at_call,
				(unsigned long long)out->x[SP]), 0;
	if (out->x[RA] != (uintptr_t)regs_after_call)
		return snprintf(why, why_len, "ra %#llx is not the return address %#llx",
				(unsigned long long)out->x[RA],
				(unsigned long long)(uintptr_t)regs_after_call), 0;
	for (i = GP; i < 32; i++)
		if (in->x[i] != out->x[i])
			return snprintf(why, why_len, "%s %#llx became %#llx", xname[i],
					(unsigned long long)in->x[i],
					(unsigned long long)out->x[i]), 0;
	for (i = 0; i < 32; i++)
		if (!is_ft(i) && in->f[i] != out->f[i])
			return snprintf(why, why_len, "%s %#llx became %#llx", fname[i],
					(unsigned long long)in->f[i],
					(unsigned long long)out->f[i]), 0;
	if ((in->fcsr & 0xff) != (out->fcsr & 0xff))
		return snprintf(why, why_len, "fcsr %#x became %#x (rounding mode %u, "
				"flags %#x)", in->fcsr, out->fcsr, (out->fcsr >> 5) & 7,
				out->fcsr & 0x1f), 0;
	return 1;
}

void regs_clobber(void)
{
	__asm__ volatile("li t0, -1; fmv.d.x ft0, t0; fmv.d.x ft11, t0; "
			 "fmv.d.x fa0, t0; fmv.d.x fa1, t0; fmv.d.x fa2, t0; "
			 "fmv.d.x fa3, t0; fmv.d.x fa4, t0; fmv.d.x fa5, t0; "
			 "fmv.d.x fa6, t0; fmv.d.x fa7, t0"
			 ::: "t0", "ft0", "ft11", "fa0", "fa1", "fa2", "fa3", "fa4",
			 "fa5", "fa6", "fa7");
	__asm__ volatile("li t0, -1; mv t1, t0; mv t2, t0; mv t3, t0; mv t4, t0; "
			 "mv t5, t0; mv t6, t0; mv a0, t0; mv a1, t0; mv a2, t0; "
			 "mv a3, t0; mv a4, t0; mv a5, t0; mv a6, t0; mv a7, t0"
			 ::: "t0", "t1", "t2", "t3", "t4", "t5", "t6", "a0", "a1",
			 "a2", "a3", "a4", "a5", "a6", "a7");
	/* round up, every flag raised: the helper restores fcsr */
	__asm__ volatile("fsrmi 3; csrsi fflags, 0x1f" ::: "memory");
}
