/*
 * AArch64 (AAPCS64, Linux): the C half of the port.  Checks the frame
 * layout shared with helpers.S, turns a frame into a segment for the
 * portable dispatcher, finds the instrumented function's return address
 * in its frame record, and classifies signatures: where each argument and
 * the return value live (AAPCS64, "Parameter passing", stages B and C;
 * the rule numbers below are that section's).
 */
#include "internal.h"
#include "frame.h"

#include "aggregate.h"

#include <stddef.h>
#include <sys/auxv.h>

#if defined(__AARCH64EB__)
# error "big-endian AArch64 is not supported: values sit in the low bytes of their slots here"
#endif

#define CHECK(field, offset) \
	_Static_assert(offsetof(struct elt_aarch64_frame, field) == (offset), \
		       #field " is not where helpers.S stores it")
CHECK(fp, ELT_AARCH64_FP);
CHECK(lr, ELT_AARCH64_LR);
CHECK(x, ELT_AARCH64_X0);
CHECK(x[2], ELT_AARCH64_X2);
CHECK(x[8], ELT_AARCH64_X8);
CHECK(hook, ELT_AARCH64_HOOK);
CHECK(fpcr, ELT_AARCH64_FPCR);
CHECK(fpsr, ELT_AARCH64_FPSR);
CHECK(q, ELT_AARCH64_Q0);
CHECK(function_id, ELT_AARCH64_FUNCTION_ID);
CHECK(caller_sp, ELT_AARCH64_CALLER_SP);
_Static_assert(sizeof(((struct elt_aarch64_frame *)0)->x) == ELT_AARCH64_X_COUNT * 8,
	       "x0-x8");
_Static_assert(sizeof(((struct elt_aarch64_frame *)0)->q) ==
	       ELT_AARCH64_Q_COUNT * ELT_AARCH64_Q_SLOT, "q0-q7");
_Static_assert(sizeof(struct elt_aarch64_frame) ==
	       ELT_AARCH64_FRAME_SIZE + ELT_AARCH64_CALLER_WORDS,
	       "the frame must end with the caller's two words");
_Static_assert(ELT_AARCH64_FRAME_SIZE % 16 == 0,
	       "the frame must keep SP 16-byte aligned for the C call");
_Static_assert(ELT_AARCH64_Q0 % 16 == 0, "q slots are 16-byte aligned");
_Static_assert(ELT_AARCH64_FUNCTION_ID == ELT_AARCH64_FRAME_SIZE,
	       "the caller's words start where the frame ends");
_Static_assert(sizeof(long double) == 16 && __LDBL_MANT_DIG__ == 113,
	       "long double is IEEE binary128, passed in one q register");
#undef CHECK

const char elt_arch_abi[] = "aarch64";

#ifndef HWCAP_SVE
# define HWCAP_SVE (1ul << 22)
#endif

/* Read by helpers.S on every call: 1 when the CPU has SVE, whose z0-z7
 * and p0-p3 carry arguments and results wider than q0-q7.  Written once,
 * before any helper can run. */
ELT_HIDDEN unsigned char elt_aarch64_sve;

__attribute__((constructor)) static void detect_sve(void)
{
	elt_aarch64_sve = (getauxval(AT_HWCAP) & HWCAP_SVE) != 0;
}

ELT_HIDDEN void elt_aarch64_dispatch(struct elt_aarch64_frame *frame);

void elt_aarch64_dispatch(struct elt_aarch64_frame *frame)
{
	/* x2: the continuation */
	elt_dispatch_frame(frame, frame->function_id, frame->caller_sp, frame->hook,
			   frame->x[2]);
}

/* A return address without its pointer authentication code, if the
 * instrumented function signed it (pac-ret); xpaclri is a NOP where
 * there is no PAC. */
static uintptr_t strip_pac(uintptr_t address)
{
	register uintptr_t x30 __asm__("x30") = address;

	__asm__("hint #7" : "+r"(x30));         /* xpaclri */
	return x30;
}

uintptr_t elt_arch_return_address(const struct elt_info *info)
{
	const struct elt_aarch64_frame *frame = info->frame;
	uintptr_t record = frame->fp;           /* the caller's x29 */

	/* The link register holds the return into the instrumented code, not
	 * its own return address: that one is in its frame record, which x29
	 * points at when it calls a helper (doc/abi.md).  The record lies in
	 * its frame: above the two words it reserved for the helper, below
	 * its caller's SP.  Anything else is not a frame record. */
	if (record % 8 || record < (uintptr_t)(frame + 1) || info->caller_sp < 16 ||
	    record > info->caller_sp - 16)
		return 0;
	return strip_pac(((const uintptr_t *)record)[1]);
}

/* --- classification ------------------------------------------------------ */

#define X_OFFSET(n) (ELT_AARCH64_X0 + (n) * 8)
#define Q_OFFSET(n) (ELT_AARCH64_Q0 + (n) * ELT_AARCH64_Q_SLOT)

/* B.4: a composite larger than this (not an HFA or HVA) is passed as a
 * pointer to a copy the caller made, and returned through x8. */
#define MAX_COMPOSITE_IN_REGISTERS 16

struct cursor {
	unsigned ngrn;          /* next general-purpose register */
	unsigned nsrn;          /* next SIMD and floating-point register */
	uint32_t nsaa;          /* next stacked argument address, from the caller SP */
};

/* An HFA or HVA (B.2): one to four members of one floating-point type or
 * of short vectors of one size.  A lone float, double, long double, short
 * vector or complex value is one too, which gives the same places as the
 * scalar rules (C.1-C.3). */
static int homogeneous(const elt_type *t, struct elt_homogeneous *h)
{
	if (!elt_aggregate_homogeneous(t, h) || h->count > 4)
		return 0;
	/* short vectors are 8 or 16 bytes; a wider one is not a member */
	return h->base->kind != ELT_TYPE_VECTOR ||
	       h->base->size == 8 || h->base->size == 16;
}

/* Passed like a composite: aggregates, and GCC vectors that are not
 * short vectors (of 1, 2 or 4 bytes, or more than 16), once the HFA and
 * HVA rules have not taken them. */
static int is_composite(const elt_type *t)
{
	return t->kind == ELT_TYPE_STRUCT || t->kind == ELT_TYPE_UNION ||
	       t->kind == ELT_TYPE_ARRAY || t->kind == ELT_TYPE_VECTOR;
}

/* C.4/C.12/C.14: aligned to 8, or 16 for a 16-aligned type; C.5/C.14: a
 * slot of at least 8 bytes, the value in its low bytes (little-endian). */
static void on_stack(struct elt_plan_builder *b, struct cursor *c, uint32_t size,
		     uint32_t align)
{
	c->nsaa = elt_align_up(c->nsaa, align > 8 ? 16 : 8);
	if (size)
		elt_plan_piece(b, ELT_SRC_STACK, c->nsaa, size, 0);
	c->nsaa += elt_align_up(size, 8);
}

/* The members of an HFA or HVA in v<first>..: each in the low bytes of
 * its own register. */
static void in_vector_registers(struct elt_plan_builder *b, const struct elt_homogeneous *h,
				unsigned first)
{
	uint32_t i, part = h->base->size;

	for (i = 0; i < h->count; i++)
		elt_plan_piece(b, ELT_SRC_FRAME, Q_OFFSET(first + i), part, i * part);
}

/* Places one argument.  Variadic arguments follow the same rules as named
 * ones on AAPCS64 Linux (not on Apple's variant). */
static int place_argument(struct elt_plan_builder *b, void *cursor,
			  const elt_type *t, int variadic, const char **why)
{
	struct cursor *c = cursor;
	struct elt_homogeneous h;
	uint32_t size = t->size, words;

	(void)variadic;
	(void)why;

	if (homogeneous(t, &h)) {
		/* C.2: all members in registers, else C.3: no SIMD and
		 * floating-point register is used any more, and C.4/C.5:
		 * the stack */
		if (c->nsrn + h.count <= 8) {
			in_vector_registers(b, &h, c->nsrn);
			c->nsrn += h.count;
		} else {
			c->nsrn = 8;
			on_stack(b, c, size, t->align);
		}
		return 1;
	}
	if (is_composite(t) && size > MAX_COMPOSITE_IN_REGISTERS) {
		/* B.4: a pointer to the caller's copy, itself passed like a
		 * pointer (C.9, else C.13) */
		if (c->ngrn < 8) {
			elt_plan_piece(b, ELT_SRC_FRAME_REF, X_OFFSET(c->ngrn++), size, 0);
		} else {
			c->nsaa = elt_align_up(c->nsaa, 8);
			elt_plan_piece(b, ELT_SRC_STACK_REF, c->nsaa, size, 0);
			c->nsaa += 8;
		}
		return 1;
	}
	if (size == 0)          /* an empty struct (a GNU C extension): nothing */
		return 1;
	if (t->kind == ELT_TYPE_VECTOR && t->size == 4 &&
	    t->element->kind == ELT_TYPE_FLOAT) {
		/* GCC's way with a vector of one float (no AdvSIMD type, no
		 * integer one): in a stack slot, and no later argument is in
		 * an x register (checked against its callers and callees) */
		c->ngrn = 8;
		on_stack(b, c, size, t->align);
		return 1;
	}
	/* Integers, pointers, __int128 and composites of at most 16 bytes:
	 * B.5 rounds a composite up to whole doublewords; C.8 starts a
	 * 16-aligned value at an even register (x[2k] and x[2k+1] are
	 * adjacent in the frame, read in place); C.9/C.12: all in
	 * registers, else C.11: none left for integers, and the stack.  A
	 * composite is never split between registers and the stack. */
	words = (size + 7) / 8;
	if (t->align >= 16)
		c->ngrn = elt_align_up(c->ngrn, 2);
	if (c->ngrn + words <= 8) {
		elt_plan_piece(b, ELT_SRC_FRAME, X_OFFSET(c->ngrn), size, 0);
		c->ngrn += words;
	} else {
		c->ngrn = 8;
		on_stack(b, c, size, t->align);
	}
	return 1;
}

static int place_return(struct elt_plan_builder *b, void *cursor, const elt_type *t,
			const char **why)
{
	struct elt_homogeneous h;

	(void)why;
	(void)cursor;
	if (t->kind == ELT_TYPE_VOID || t->size == 0)
		return 1;
	if (homogeneous(t, &h)) {                       /* v0.. */
		in_vector_registers(b, &h, 0);
		return 1;
	}
	if (is_composite(t) && t->size > MAX_COMPOSITE_IN_REGISTERS) {
		/* The caller's buffer, whose address the caller passed in x8;
		 * the callee need not keep it there, so the JIT reloads x8
		 * before Leave (doc/abi.md).  x8 is no argument register:
		 * no argument moves. */
		elt_plan_piece(b, ELT_SRC_FRAME_REF, X_OFFSET(8), t->size, 0);
		return 1;
	}
	/* integers, pointers, __int128, small composites: x0 (and x1) */
	elt_plan_piece(b, ELT_SRC_FRAME, X_OFFSET(0), t->size, 0);
	return 1;
}

_Static_assert(sizeof(struct cursor) <= ELT_CURSOR_MAX, "cursor too large");

const struct elt_abi_rules elt_arch_rules = {
	/* no .begin: the cursor starts all zero */
	.place_return = place_return,
	.place_argument = place_argument,
	/* a result in memory has its address in x8, never in an argument
	 * register: a return type moves no argument */
	.undecoded_return_moves_arguments = 0,
};
