/*
 * x86-64 Windows (Microsoft x64): the C half of the port.  Checks the
 * frame layout shared with helpers-win64.S, picks the vector width the
 * helpers save, turns a frame into a segment for the portable dispatcher,
 * and classifies signatures: where each argument and the return value
 * live (the x64 calling convention as mingw-w64's GCC implements it).
 *
 * The rules, checked against x86_64-w64-mingw32-gcc -O2 -S (GCC's
 * ix86_pass_by_reference, function_arg_ms_64 and ix86_return_in_memory
 * say the same):
 *   - argument i (counting a hidden result pointer) is in slot i: the
 *     first four in %rcx, %rdx, %r8, %r9 or %xmm0-%xmm3, the four shared
 *     positionally; slot i >= 4 at 8 * i above the caller SP (above the
 *     32-byte home area).
 *   - a value of 1, 2, 4 or 8 bytes is passed by value, in the slot's
 *     integer register, or its xmm register for a float or double
 *     scalar; any other by reference, the slot holding the address of a
 *     copy: structs and unions of other sizes (empty ones too), long
 *     double (x87 in 16 bytes), __int128, complex double and complex
 *     long double, vectors of 16 bytes and more.  So is a vector of one
 *     float or one double: GCC has no machine mode for it, and a
 *     value of no mode has no size to pass by value.
 *   - variadic arguments: a double is in the integer register of its
 *     slot too (and only there is the callee sure to find it).
 *   - results: a float or double scalar in %xmm0, and so are a vector
 *     of 16 bytes and __int128 (GCC, and Clang); anything else of 1, 2,
 *     4 or 8 bytes in %rax, aggregates and vectors included; an empty
 *     struct or union in nothing; every other value in memory: the
 *     caller passes the address as a hidden first argument (%rcx) and
 *     the callee returns it in %rax.
 */
#include "internal.h"
#include "frame-win64.h"

#include <stddef.h>

#define CHECK(field, offset) \
	_Static_assert(offsetof(struct elt_x86_64_win64_frame, field) == (offset), \
		       #field " is not where helpers-win64.S stores it")
CHECK(rcx, ELT_WIN64_RCX);
CHECK(rdx, ELT_WIN64_RDX);
CHECK(r8, ELT_WIN64_R8);
CHECK(r9, ELT_WIN64_R9);
CHECK(rax, ELT_WIN64_RAX);
CHECK(r10, ELT_WIN64_R10);
CHECK(r11, ELT_WIN64_R11);
CHECK(mxcsr, ELT_WIN64_MXCSR);
CHECK(fcw, ELT_WIN64_FCW);
CHECK(scratch, ELT_WIN64_SCRATCH);
CHECK(vec, ELT_WIN64_VEC);
_Static_assert(sizeof(struct elt_x86_64_win64_frame) == ELT_WIN64_FRAME_SIZE,
	       "frame size differs from helpers-win64.S");
_Static_assert(ELT_WIN64_FRAME_SIZE % ELT_WIN64_FRAME_ALIGN == 0,
	       "the frame must keep the stack aligned for the C call");
_Static_assert(ELT_WIN64_VEC % 64 == 0, "zmm slots must be 64-byte aligned");
_Static_assert(sizeof(long double) == 16, "mingw-w64's long double: 80-bit in 16 bytes");
#undef CHECK

const char elt_arch_abi[] = "x86_64-win64";

uintptr_t elt_arch_return_address(const struct elt_info *info)
{
	/* The call into the instrumented function pushed it just below the
	 * caller's SP (the home area is above it). */
	return info->caller_sp ? *(const uintptr_t *)(info->caller_sp - 8) : 0;
}

/* --- classification ------------------------------------------------------ */

static const uint32_t gpr_offset[4] = {
	ELT_WIN64_RCX, ELT_WIN64_RDX, ELT_WIN64_R8, ELT_WIN64_R9,
};

#define VEC_OFFSET(n) (ELT_WIN64_VEC + (n) * ELT_WIN64_VEC_SLOT)

static int is_fp_scalar(const elt_type *t)
{
	return t->kind == ELT_TYPE_FLOAT || t->kind == ELT_TYPE_DOUBLE;
}

/* A vector of one float or double: of no machine mode in GCC. */
static int is_modeless_vector(const elt_type *t)
{
	return t->kind == ELT_TYPE_VECTOR && t->count == 1 &&
	       (t->element->kind == ELT_TYPE_FLOAT || t->element->kind == ELT_TYPE_DOUBLE);
}

static int by_reference(const elt_type *t)
{
	switch (t->size) {
	case 1:
	case 2:
	case 4:
	case 8:
		return is_modeless_vector(t);
	default:
		return 1;
	}
}

/* The cursor: the next of the four register slots, or stack slot; integer
 * and floating-point arguments share them. */
struct cursor {
	unsigned slot;
};

/* Places the argument of the next slot.  An empty struct or union takes
 * a slot (for the address of its copy) but has no bytes to report. */
static int place_argument(struct elt_plan_builder *b, void *cursor,
			  const elt_type *t, int variadic, const char **why)
{
	unsigned slot = ((struct cursor *)cursor)->slot++;

	(void)why;              /* every argument type has a place on Win64 */
	if (t->size == 0)
		return 1;
	if (by_reference(t)) {
		if (slot < 4)
			elt_plan_piece(b, ELT_SRC_FRAME_REF, gpr_offset[slot], t->size, 0);
		else
			elt_plan_piece(b, ELT_SRC_STACK_REF, 8 * slot, t->size, 0);
	} else if (slot >= 4) {
		elt_plan_piece(b, ELT_SRC_STACK, 8 * slot, t->size, 0);
	} else if (is_fp_scalar(t) && !variadic) {
		elt_plan_piece(b, ELT_SRC_FRAME, VEC_OFFSET(slot), t->size, 0);
	} else {
		/* integers, aggregates and small vectors in the low bytes; a
		 * variadic double also in the integer register, where a
		 * variadic callee reads it */
		elt_plan_piece(b, ELT_SRC_FRAME, gpr_offset[slot], t->size, 0);
	}
	return 1;
}

/* Places the return value.  A result that goes through memory has its
 * address in the first slot. */
static int place_return(struct elt_plan_builder *b, void *cursor, const elt_type *t,
			const char **why)
{
	(void)why;
	if (t->size == 0)       /* void, or an empty struct: no hidden pointer */
		return 1;
	if (is_fp_scalar(t) || (t->size == 16 && (t->kind == ELT_TYPE_VECTOR ||
						  t->kind == ELT_TYPE_SINT128 ||
						  t->kind == ELT_TYPE_UINT128))) {
		elt_plan_piece(b, ELT_SRC_FRAME, VEC_OFFSET(0), t->size, 0);
	} else if (t->size == 1 || t->size == 2 || t->size == 4 || t->size == 8) {
		elt_plan_piece(b, ELT_SRC_FRAME, ELT_WIN64_RAX, t->size, 0);
	} else {
		/* at Leave, %rax holds the address the caller passed */
		elt_plan_piece(b, ELT_SRC_FRAME_REF, ELT_WIN64_RAX, t->size, 0);
		((struct cursor *)cursor)->slot = 1;
	}
	return 1;
}

_Static_assert(sizeof(struct cursor) <= ELT_CURSOR_MAX, "cursor too large");

const struct elt_abi_rules elt_arch_rules = {
	/* no .begin: the cursor starts all zero */
	.place_return = place_return,
	.place_argument = place_argument,
	/* every return type is placed; were one not, a hidden pointer in
	 * %rcx could move the arguments */
	.undecoded_return_moves_arguments = 1,
};
