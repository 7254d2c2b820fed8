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

struct cursor {
	unsigned ngrn;          /* next general-purpose register */
	unsigned nsrn;          /* next SIMD and floating-point register */
	uint32_t nsaa;          /* next stacked argument address, from the caller SP */
};

static uint32_t align_up(uint32_t v, uint32_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static int is_integer_class(const elt_type *t)
{
	return (t->kind >= ELT_TYPE_BOOL && t->kind <= ELT_TYPE_UINT64) ||
	       t->kind == ELT_TYPE_POINTER;
}

static int is_fp_scalar(const elt_type *t)
{
	return t->kind == ELT_TYPE_FLOAT || t->kind == ELT_TYPE_DOUBLE ||
	       t->kind == ELT_TYPE_LONGDOUBLE;
}

/* C.4/C.12: aligned to 8, or 16 for a 16-aligned type; C.5/C.14: a slot
 * of at least 8 bytes, the value in its low bytes (little-endian). */
static void on_stack(struct elt_plan_builder *b, struct cursor *c, uint32_t size,
		     uint32_t align)
{
	c->nsaa = align_up(c->nsaa, align > 8 ? 16 : 8);
	elt_plan_piece(b, ELT_SRC_STACK, c->nsaa, size, 0);
	c->nsaa += align_up(size, 8);
}

/* Places one argument; returns 0 when its type is not decoded here, since
 * every later argument's place then depends on it.  Variadic arguments
 * follow the same rules as named ones on AAPCS64 Linux. */
static int place_argument(struct elt_plan_builder *b, void *cursor,
			  const elt_type *t, int variadic, const char **why)
{
	struct cursor *c = cursor;
	uint32_t part;

	(void)variadic;         /* placed like fixed arguments */
	(void)why;

	if (is_integer_class(t)) {              /* C.7, else C.11-C.15 */
		if (c->ngrn < 8) {
			elt_plan_piece(b, ELT_SRC_FRAME, X_OFFSET(c->ngrn++), t->size, 0);
		} else {
			on_stack(b, c, t->size, t->align);
		}
		return 1;
	}
	if (is_fp_scalar(t)) {                  /* C.1, else C.4-C.6 */
		if (c->nsrn < 8)
			elt_plan_piece(b, ELT_SRC_FRAME, Q_OFFSET(c->nsrn++), t->size, 0);
		else
			on_stack(b, c, t->size, t->align);
		return 1;
	}
	switch (t->kind) {
	case ELT_TYPE_SINT128:
	case ELT_TYPE_UINT128:
		/* C.8: an even-numbered pair; C.9: both halves in registers
		 * (x[2k] and x[2k+1] are adjacent in the frame, read in
		 * place), else C.11: none left for integers, 16-aligned on
		 * the stack. */
		c->ngrn = align_up(c->ngrn, 2);
		if (c->ngrn + 2 <= 8) {
			elt_plan_piece(b, ELT_SRC_FRAME, X_OFFSET(c->ngrn), 16, 0);
			c->ngrn += 2;
		} else {
			c->ngrn = 8;
			on_stack(b, c, 16, t->align);
		}
		return 1;
	case ELT_TYPE_COMPLEX:
		/* A homogeneous floating-point aggregate of two members:
		 * C.2, one register each, or C.3, none left for floating
		 * point at all, and the stack. */
		part = t->element->size;
		if (c->nsrn + 2 <= 8) {
			elt_plan_piece(b, ELT_SRC_FRAME, Q_OFFSET(c->nsrn), part, 0);
			elt_plan_piece(b, ELT_SRC_FRAME, Q_OFFSET(c->nsrn + 1), part, part);
			c->nsrn += 2;
		} else {
			c->nsrn = 8;
			on_stack(b, c, t->size, t->align);
		}
		return 1;
	default:
		return 0;
	}
}

static int place_return(struct elt_plan_builder *b, void *cursor, const elt_type *t,
			const char **why)
{
	(void)why;
	(void)cursor;
	if (is_integer_class(t)) {
		elt_plan_piece(b, ELT_SRC_FRAME, X_OFFSET(0), t->size, 0);
		return 1;
	}
	if (is_fp_scalar(t)) {
		elt_plan_piece(b, ELT_SRC_FRAME, Q_OFFSET(0), t->size, 0);
		return 1;
	}
	switch (t->kind) {
	case ELT_TYPE_VOID:
		return 1;
	case ELT_TYPE_SINT128:
	case ELT_TYPE_UINT128:
		elt_plan_piece(b, ELT_SRC_FRAME, X_OFFSET(0), 16, 0);  /* x0, x1 */
		return 1;
	case ELT_TYPE_COMPLEX:
		elt_plan_piece(b, ELT_SRC_FRAME, Q_OFFSET(0), t->element->size, 0);
		elt_plan_piece(b, ELT_SRC_FRAME, Q_OFFSET(1), t->element->size,
			       t->element->size);
		return 1;
	default:
		return 0;
	}
}

static void begin(void *cursor, const elt_signature *sig)
{
	(void)sig;
	*(struct cursor *)cursor = (struct cursor){ 0, 0, 0 };
}

_Static_assert(sizeof(struct cursor) <= ELT_CURSOR_MAX, "cursor too large");

const struct elt_abi_rules elt_arch_rules = {
	.begin = begin,
	.place_return = place_return,
	.place_argument = place_argument,
	/* a result in memory has its address in x8, never in an argument
	 * register: an undecoded return type moves no argument */
	.undecoded_return_moves_arguments = 0,
};
