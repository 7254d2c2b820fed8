/*
 * ppc64le (PowerPC64 ELFv2): the C half of the port.  Checks the frame
 * layout shared with helpers.S, turns a frame into a segment for the
 * portable dispatcher, and classifies signatures: where each argument and
 * the return value live (64-bit ELF V2 ABI, "Parameter Passing"), as GCC
 * for Linux ppc64le does it (checked against `gcc -O2 -S` callers and
 * callees; doc/abi.md lists the rules).
 */
#include "internal.h"
#include "frame.h"

#include <stddef.h>

#define CHECK(field, offset) \
	_Static_assert(offsetof(struct elt_ppc64le_frame, field) == (offset), \
		       #field " is not where helpers.S stores it")
CHECK(header, ELT_PPC64LE_HEADER);
CHECK(function_id, ELT_PPC64LE_FUNCTION_ID);
CHECK(caller_sp, ELT_PPC64LE_CALLER_SP);
CHECK(hook, ELT_PPC64LE_HOOK);
CHECK(cr, ELT_PPC64LE_CR);
CHECK(ctr, ELT_PPC64LE_CTR);
CHECK(xer, ELT_PPC64LE_XER);
CHECK(fpscr, ELT_PPC64LE_FPSCR);
CHECK(gpr, ELT_PPC64LE_GPR);
CHECK(fs, ELT_PPC64LE_FS);
CHECK(vsr, ELT_PPC64LE_VSR);
CHECK(vr, ELT_PPC64LE_VR);
CHECK(vscr, ELT_PPC64LE_VSCR);
_Static_assert(sizeof(struct elt_ppc64le_frame) == ELT_PPC64LE_FRAME_SIZE,
	       "frame size differs from helpers.S");
_Static_assert(ELT_PPC64LE_FRAME_SIZE % 16 == 0,
	       "the frame must keep r1 quadword aligned for the C call");
_Static_assert(ELT_PPC64LE_VSR % 16 == 0 && ELT_PPC64LE_VR % 16 == 0 &&
	       ELT_PPC64LE_VSCR % 16 == 0, "stvx needs 16-byte aligned slots");
_Static_assert(ELT_PPC64LE_FS_AT(ELT_PPC64LE_VEC_COUNT) <= ELT_PPC64LE_VSR,
	       "single-precision copies overlap the vector slots");
#undef CHECK

const char elt_arch_abi[] = "ppc64le-elfv2";

ELT_HIDDEN void elt_ppc64le_dispatch(struct elt_ppc64le_frame *frame);

void elt_ppc64le_dispatch(struct elt_ppc64le_frame *frame)
{
	/* r5: the continuation return register (doc/abi.md) */
	elt_dispatch_frame(frame, frame->function_id, frame->caller_sp, frame->hook,
			   frame->gpr[5]);
}

uintptr_t elt_arch_return_address(const struct elt_info *info)
{
	/* The instrumented function's prolog saved its link register in the
	 * LR save doubleword of its caller's frame, as every ELFv2 function
	 * that makes a call does. */
	return info->caller_sp
		? *(const uintptr_t *)(info->caller_sp + ELT_PPC64LE_LR_SAVE) : 0;
}

/* --- classification ------------------------------------------------------ */

/*
 * Every argument takes whole doublewords of the parameter save area, in
 * order and never aligned further (GCC aligns only 16-byte vectors and
 * some aggregates).  The first eight doublewords are r3-r10: an integer
 * there is in the register, any other on the stack at caller SP + 32 +
 * 8 * doubleword.  A floating-point value (each half of a long double, each
 * part of a complex) takes the next of f1-f13 and still takes its
 * doubleword; with no FPR left it is in the doubleword (on the stack, as
 * 13 FPRs use up more than the eight GPR doublewords).  Variadic
 * floating-point values are passed in the doubleword too (GCC also copies
 * them into FPRs): they are read from there.
 */

#define NGPR 8                  /* r3-r10 */
#define NFPR 13                 /* f1-f13 */

struct cursor {
	unsigned dw;            /* next doubleword of the parameter save area */
	unsigned fpr;           /* next FPR, 1..13; 14: none left */
};

static int is_integer_class(const elt_type *t)
{
	return (t->kind >= ELT_TYPE_BOOL && t->kind <= ELT_TYPE_UINT64) ||
	       t->kind == ELT_TYPE_POINTER;
}

/* Where doubleword `dw` of the parameter save area is. */
static void dw_place(unsigned dw, enum elt_source *source, uint32_t *offset)
{
	if (dw < NGPR) {
		*source = ELT_SRC_FRAME;
		*offset = ELT_PPC64LE_GPR_AT(3 + dw);
	} else {
		*source = ELT_SRC_STACK;
		*offset = ELT_PPC64LE_PARAM_SAVE + 8 * dw;
	}
}

/* `length` bytes at the start of the next doubleword (little-endian: the
 * low-order bytes of a register, or a single-precision float). */
static void next_dw(struct elt_plan_builder *b, struct cursor *c, uint32_t length,
		    uint32_t dest)
{
	enum elt_source source;
	uint32_t offset;

	dw_place(c->dw++, &source, &offset);
	elt_plan_piece(b, source, offset, length, dest);
}

/* One float or double: the next FPR, else its doubleword.  `variadic`:
 * read the doubleword, where a variadic value always is. */
static void next_fp(struct elt_plan_builder *b, struct cursor *c, uint32_t length,
		    uint32_t dest, int variadic)
{
	if (!variadic && c->fpr <= NFPR) {
		uint32_t at = length == 4 ? ELT_PPC64LE_FS_AT(c->fpr)
					  : ELT_PPC64LE_VSR_AT(c->fpr);

		elt_plan_piece(b, ELT_SRC_FRAME, at, length, dest);
		c->fpr++;
		c->dw++;
		return;
	}
	if (c->fpr <= NFPR)
		c->fpr++;
	next_dw(b, c, length, dest);
}

/* The floating-point parts a value of this type is passed as: their
 * count and size (a long double is a pair of doubles, high part first;
 * a complex value its real then its imaginary part).  0: not one. */
static unsigned fp_parts(const elt_type *t, uint32_t *part_size)
{
	const elt_type *e = t->kind == ELT_TYPE_COMPLEX ? t->element : t;
	unsigned n = t->kind == ELT_TYPE_COMPLEX ? 2 : 1;

	switch (e->kind) {
	case ELT_TYPE_FLOAT:
		*part_size = 4;
		return n;
	case ELT_TYPE_DOUBLE:
		*part_size = 8;
		return n;
	case ELT_TYPE_LONGDOUBLE:
		*part_size = 8;
		if (e->size == 8)               /* -mlong-double-64: a double */
			return n;
#if defined(__LONG_DOUBLE_IEEE128__)
		return 0;                       /* binary128: vector registers */
#else
		return 2 * n;                   /* IBM double-double */
#endif
	default:
		return 0;
	}
}

/* Places one argument; returns 0 when its type is not decoded here, since
 * every later argument's place then depends on it.  `why` gets the reason
 * when it is not the usual "not decoded yet". */
static int place_argument(struct elt_plan_builder *b, void *cursor,
			  const elt_type *t, int variadic, const char **why)
{
	struct cursor *c = cursor;
	uint32_t part;
	unsigned n, i;

	if (is_integer_class(t)) {
		next_dw(b, c, t->size, 0);
		return 1;
	}
	switch (t->kind) {
	case ELT_TYPE_SINT128:
	case ELT_TYPE_UINT128:
		/* Low doubleword first, no pair alignment: r4:r5 after one
		 * integer, split between r10 and the stack after seven. */
		next_dw(b, c, 8, 0);
		next_dw(b, c, 8, 8);
		return 1;
	case ELT_TYPE_FLOAT:
	case ELT_TYPE_DOUBLE:
	case ELT_TYPE_LONGDOUBLE:
	case ELT_TYPE_COMPLEX:
		n = fp_parts(t, &part);
		if (!n) {
			*why = "an IEEE binary128 long double (-mabi=ieeelongdouble) is "
			       "not decoded on ppc64le yet";
			return 0;
		}
		if (variadic && part == 4 && t->kind == ELT_TYPE_FLOAT) {
			*why = "a variadic float is promoted to double in C: describe it as d";
			return 0;
		}
		/* Part by part: a long double or a complex value may start in
		 * f13 and end on the stack. */
		for (i = 0; i < n; i++)
			next_fp(b, c, part, i * part, variadic);
		return 1;
	default:
		return 0;
	}
}

static int place_return(struct elt_plan_builder *b, void *cursor, const elt_type *t,
			const char **why)
{
	uint32_t part;
	unsigned n, i;

	(void)why;
	(void)cursor;

	if (is_integer_class(t)) {
		elt_plan_piece(b, ELT_SRC_FRAME, ELT_PPC64LE_GPR_AT(3), t->size, 0);
		return 1;
	}
	switch (t->kind) {
	case ELT_TYPE_VOID:
		return 1;
	case ELT_TYPE_SINT128:
	case ELT_TYPE_UINT128:
		elt_plan_piece(b, ELT_SRC_FRAME, ELT_PPC64LE_GPR_AT(3), 8, 0);
		elt_plan_piece(b, ELT_SRC_FRAME, ELT_PPC64LE_GPR_AT(4), 8, 8);
		return 1;
	case ELT_TYPE_FLOAT:
	case ELT_TYPE_DOUBLE:
	case ELT_TYPE_LONGDOUBLE:
	case ELT_TYPE_COMPLEX:
		/* f1, f2, ...: one part each (f1-f4 for a complex long double) */
		n = fp_parts(t, &part);
		if (!n)
			return 0;
		for (i = 0; i < n; i++)
			elt_plan_piece(b, ELT_SRC_FRAME,
				       part == 4 ? ELT_PPC64LE_FS_AT(1 + i)
						 : ELT_PPC64LE_VSR_AT(1 + i),
				       part, i * part);
		return 1;
	default:
		return 0;
	}
}

static void begin(void *cursor, const elt_signature *sig)
{
	(void)sig;
	*(struct cursor *)cursor = (struct cursor){ 0, 1 };
}

_Static_assert(sizeof(struct cursor) <= ELT_CURSOR_MAX, "cursor too large");

const struct elt_abi_rules elt_arch_rules = {
	.begin = begin,
	.place_return = place_return,
	.place_argument = place_argument,
	.undecoded_return_moves_arguments = 1,
};
