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

#include "aggregate.h"

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

#define NVR_FIRST 2             /* v2-v13 */
#define NVR_LAST 13

struct cursor {
	unsigned dw;            /* next doubleword of the parameter save area */
	unsigned fpr;           /* next FPR, 1..13; 14: none left */
	unsigned vr;            /* next vector register, 2..13; 14: none left */
};

static const char binary128_why[] =
	"an IEEE binary128 long double (-mabi=ieeelongdouble) is not decoded "
	"on ppc64le";

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

/* An ELFv2 homogeneous aggregate: at most eight floating-point registers'
 * worth of one floating type (an IBM long double takes two), or at most
 * eight 16-byte vectors.  *regs: the registers it takes; *part: the size of
 * what each holds (4 for a float, 8 for a double or half a long double, 16
 * for a vector).  A lone scalar qualifies too: callers take those first. */
static int homogeneous(const elt_type *t, struct elt_homogeneous *h, unsigned *regs,
		       uint32_t *part)
{
	uint32_t per = 1;

	if (!elt_aggregate_homogeneous(t, h))
		return 0;
	switch (h->base->kind) {
	case ELT_TYPE_VECTOR:
		/* only the 16-byte vectors are AltiVec/VSX ones */
		if (h->base->size != 16)
			return 0;
		*part = 16;
		break;
	case ELT_TYPE_LONGDOUBLE:
		if (fp_parts(h->base, part) == 0)
			return 0;       /* binary128: see place_argument */
		per = h->base->size / 8;
		break;
	default:
		*part = h->base->size;
		break;
	}
	*regs = h->count * per;
	return *regs <= 8;
}

/* A range of bytes of the parameter save area image, from byte `at` of it:
 * the first 64 bytes are r3-r10 (little-endian: a register's low byte is
 * the first in memory, as the helper stores them, consecutively), the
 * rest is on the stack.  Split where it crosses from r10 to the stack. */
static void psa_bytes(struct elt_plan_builder *b, uint32_t at, uint32_t length,
		      uint32_t dest)
{
	const uint32_t in_gprs = 8 * NGPR;
	uint32_t n;

	if (length && at < in_gprs) {
		n = in_gprs - at < length ? in_gprs - at : length;
		elt_plan_piece(b, ELT_SRC_FRAME, ELT_PPC64LE_GPR_AT(3) + at, n, dest);
		at += n;
		dest += n;
		length -= n;
	}
	if (length)
		elt_plan_piece(b, ELT_SRC_STACK, ELT_PPC64LE_PARAM_SAVE + at, length, dest);
}

/* GCC aligns to an even doubleword (r3, r5, r7 or r9) what it passes in
 * vector registers, vectors of 16 bytes or more and homogeneous vector
 * aggregates (packed ones too), and any other aggregate of 16-byte
 * alignment except a homogeneous floating-point one (aligned like its
 * members: to a doubleword). */
static void quadword_align(struct cursor *c, const elt_type *t)
{
	struct elt_homogeneous h;
	uint32_t part;
	unsigned regs;
	int quadword;

	if (t->kind == ELT_TYPE_VECTOR)
		quadword = t->size >= 16;
	else if (homogeneous(t, &h, &regs, &part))
		quadword = h.base->kind == ELT_TYPE_VECTOR;
	else
		quadword = t->align >= 16;
	if (quadword)
		c->dw = (c->dw + 1) & ~1u;
}

/* An aggregate (or a small GCC vector) as its memory image in whole
 * doublewords, split between r3-r10 and the stack if it must be. */
static void in_doublewords(struct elt_plan_builder *b, struct cursor *c, const elt_type *t)
{
	quadword_align(c, t);
	psa_bytes(b, 8 * c->dw, t->size, 0);
	c->dw += (t->size + 7) / 8;
}

/* A value passed by reference: the caller's copy, its address in the next
 * doubleword. */
static void by_reference(struct elt_plan_builder *b, struct cursor *c, uint32_t size)
{
	enum elt_source source;
	uint32_t offset;

	dw_place(c->dw++, &source, &offset);
	elt_plan_piece(b, source == ELT_SRC_FRAME ? ELT_SRC_FRAME_REF : ELT_SRC_STACK_REF,
		       offset, size, 0);
}

/* The members of a homogeneous aggregate that starts at doubleword `dw`:
 * each in the next FPR (or vector register) while there is one, the
 * rest where they are in the parameter save area image. */
static void homogeneous_in_registers(struct elt_plan_builder *b, struct cursor *c,
				     const struct elt_homogeneous *h, unsigned regs,
				     uint32_t part, uint32_t dw)
{
	int vector = h->base->kind == ELT_TYPE_VECTOR;
	unsigned i;

	for (i = 0; i < regs; i++) {
		uint32_t at = i * part;

		if (vector && c->vr <= NVR_LAST) {
			elt_plan_piece(b, ELT_SRC_FRAME, ELT_PPC64LE_VR_AT(c->vr++), part, at);
		} else if (!vector && c->fpr <= NFPR) {
			elt_plan_piece(b, ELT_SRC_FRAME,
				       part == 4 ? ELT_PPC64LE_FS_AT(c->fpr)
						 : ELT_PPC64LE_VSR_AT(c->fpr),
				       part, at);
			c->fpr++;
		} else {
			psa_bytes(b, 8 * dw + at, part, at);
		}
	}
}

/* Places one argument; returns 0 when its type is not decoded here, since
 * every later argument's place then depends on it.  `why` gets the reason
 * when it is not the usual "not decoded". */
static int place_argument(struct elt_plan_builder *b, void *cursor,
			  const elt_type *t, int variadic, const char **why)
{
	struct cursor *c = cursor;
	struct elt_homogeneous h;
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
			*why = binary128_why;
			return 0;
		}
		/* Part by part: a long double or a complex value may start in
		 * f13 and end on the stack. */
		for (i = 0; i < n; i++)
			next_fp(b, c, part, i * part, variadic);
		return 1;
	case ELT_TYPE_VECTOR:
	case ELT_TYPE_STRUCT:
	case ELT_TYPE_UNION:
	case ELT_TYPE_ARRAY:
		break;
	default:
		return 0;
	}
	if (t->kind == ELT_TYPE_VECTOR && t->size > 16) {
		/* GCC's extension: a vector wider than the registers */
		by_reference(b, c, t->size);
		return 1;
	}
	if (t->kind != ELT_TYPE_VECTOR && elt_aggregate_homogeneous(t, &h) &&
	    h.base->kind == ELT_TYPE_LONGDOUBLE && !fp_parts(h.base, &part)) {
		*why = binary128_why;
		return 0;
	}
	if (!variadic && homogeneous(t, &h, &n, &part)) {
		uint32_t dw;

		quadword_align(c, t);
		dw = c->dw;
		homogeneous_in_registers(b, c, &h, n, part, dw);
		c->dw += (t->size + 7) / 8;
		return 1;
	}
	/* Everything else, and every variadic aggregate or vector (GCC
	 * also copies those into FPRs or vector registers, not all of
	 * them), is read from its doublewords. */
	in_doublewords(b, c, t);
	return 1;
}

static int place_return(struct elt_plan_builder *b, void *cursor, const elt_type *t,
			const char **why)
{
	struct cursor *c = cursor;
	struct elt_homogeneous h;
	uint32_t part;
	unsigned n, i;

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
		if (!n) {
			*why = binary128_why;
			return 0;
		}
		for (i = 0; i < n; i++)
			elt_plan_piece(b, ELT_SRC_FRAME,
				       part == 4 ? ELT_PPC64LE_FS_AT(1 + i)
						 : ELT_PPC64LE_VSR_AT(1 + i),
				       part, i * part);
		return 1;
	default:
		break;
	}
	if (t->size == 0)       /* an empty struct (a GNU C extension) */
		return 1;
	if (elt_aggregate_homogeneous(t, &h) && h.base->kind == ELT_TYPE_LONGDOUBLE &&
	    !fp_parts(h.base, &part)) {
		*why = binary128_why;
		return 0;
	}
	if (homogeneous(t, &h, &n, &part)) {
		/* f1-f8, or v2-v9 */
		for (i = 0; i < n; i++) {
			uint32_t at = h.base->kind == ELT_TYPE_VECTOR ? ELT_PPC64LE_VR_AT(2 + i)
				    : part == 4 ? ELT_PPC64LE_FS_AT(1 + i)
				    : ELT_PPC64LE_VSR_AT(1 + i);

			elt_plan_piece(b, ELT_SRC_FRAME, at, part, i * part);
		}
		return 1;
	}
	if (t->size <= 16) {
		/* r3 and r4, their memory image (little-endian) */
		elt_plan_piece(b, ELT_SRC_FRAME, ELT_PPC64LE_GPR_AT(3), t->size, 0);
		return 1;
	}
	/* In the caller's buffer, whose address the caller passed in r3, the
	 * first argument doubleword; GCC's callees return it in r3, where
	 * Leave reads it (doc/abi.md). */
	elt_plan_piece(b, ELT_SRC_FRAME_REF, ELT_PPC64LE_GPR_AT(3), t->size, 0);
	c->dw = 1;
	return 1;
}

static void begin(void *cursor, const elt_signature *sig)
{
	(void)sig;
	*(struct cursor *)cursor = (struct cursor){ 0, 1, NVR_FIRST };
}

_Static_assert(sizeof(struct cursor) <= ELT_CURSOR_MAX, "cursor too large");

const struct elt_abi_rules elt_arch_rules = {
	.begin = begin,
	.place_return = place_return,
	.place_argument = place_argument,
	.undecoded_return_moves_arguments = 1,
};
