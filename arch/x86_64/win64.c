/*
 * x86-64 Windows (Microsoft x64): the C half of the port.  Checks the
 * frame layout shared with helpers-win64.S, picks the vector width the
 * helpers save, turns a frame into a segment for the portable dispatcher,
 * and classifies signatures: where each argument and the return value
 * live (the x64 calling convention as mingw-w64's GCC implements it).
 *
 * The rules, checked against x86_64-w64-mingw32-gcc -O2 -S:
 *   - argument i (counting a hidden result pointer) is in slot i: the
 *     first four in %rcx, %rdx, %r8, %r9 (integers, pointers) or
 *     %xmm0-%xmm3 (float, double), the four shared positionally; slot
 *     i >= 4 at 8 * i above the caller SP (above the 32-byte home area).
 *   - values of 1, 2, 4 or 8 bytes are passed by value (complex float as
 *     an 8-byte aggregate, in the integer register); any other by
 *     reference: long double (80-bit x87, 16 bytes), __int128, complex
 *     double and complex long double: the slot holds the address.
 *   - variadic arguments: a double is in the integer register of its
 *     slot too (and only there is the callee sure to find it).
 *   - results: integers and complex float in %rax, float and double in
 *     %xmm0, __int128 in %xmm0 (GCC, and Clang); long double, complex
 *     double and complex long double in memory: the caller passes the
 *     address as a hidden first argument (%rcx) and the callee returns it
 *     in %rax.
 */
#include "internal.h"
#include "frame-win64.h"
#include "cpu.h"

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
CHECK(hook, ELT_WIN64_HOOK);
CHECK(function_id, ELT_WIN64_FUNCTION_ID);
CHECK(caller_sp, ELT_WIN64_CALLER_SP);
CHECK(vec, ELT_WIN64_VEC);
_Static_assert(sizeof(struct elt_x86_64_win64_frame) == ELT_WIN64_FRAME_SIZE,
	       "frame size differs from helpers-win64.S");
_Static_assert(ELT_WIN64_FRAME_SIZE % ELT_WIN64_FRAME_ALIGN == 0,
	       "the frame must keep the stack aligned for the C call");
_Static_assert(ELT_WIN64_VEC % 64 == 0, "zmm slots must be 64-byte aligned");
_Static_assert(sizeof(long double) == 16, "mingw-w64's long double: 80-bit in 16 bytes");
#undef CHECK

const char elt_arch_abi[] = "x86_64-win64";

/* Read by helpers-win64.S on every call; written once, before any helper can run. */
unsigned char elt_x86_64_vector_width = ELT_X86_64_VEC_SSE;

__attribute__((constructor)) static void detect_vector_width(void)
{
	elt_x86_64_vector_width = elt_x86_64_detect_vector_width();
}

void elt_x86_64_win64_dispatch(struct elt_x86_64_win64_frame *frame);

void elt_x86_64_win64_dispatch(struct elt_x86_64_win64_frame *frame)
{
	elt_dispatch_frame(frame, frame->function_id, frame->caller_sp, frame->hook,
			   frame->rcx);
}

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

static int is_integer_class(const elt_type *t)
{
	return (t->kind >= ELT_TYPE_BOOL && t->kind <= ELT_TYPE_UINT64) ||
	       t->kind == ELT_TYPE_POINTER ||
	       (t->kind == ELT_TYPE_COMPLEX && t->size == 8);  /* complex float */
}

static int by_reference(const elt_type *t)
{
	return t->kind == ELT_TYPE_LONGDOUBLE || t->kind == ELT_TYPE_SINT128 ||
	       t->kind == ELT_TYPE_UINT128 ||
	       (t->kind == ELT_TYPE_COMPLEX && t->size != 8);
}

/* The cursor: the next of the four register slots, or stack slot; integer
 * and floating-point arguments share them. */
struct cursor {
	unsigned slot;
};

/* Places the argument of the next slot; returns 0 when its type is not
 * decoded here. */
static int place_argument(struct elt_plan_builder *b, void *cursor,
			  const elt_type *t, int variadic, const char **why)
{
	int fp = t->kind == ELT_TYPE_FLOAT || t->kind == ELT_TYPE_DOUBLE;
	unsigned slot = ((struct cursor *)cursor)->slot++;

	(void)why;
	if (!fp && !is_integer_class(t) && !by_reference(t))
		return 0;
	if (slot >= 4) {
		elt_plan_piece(b, by_reference(t) ? ELT_SRC_STACK_REF : ELT_SRC_STACK,
			       8 * slot, t->size, 0);
	} else if (by_reference(t)) {
		elt_plan_piece(b, ELT_SRC_FRAME_REF, gpr_offset[slot], t->size, 0);
	} else if (fp && !variadic) {
		elt_plan_piece(b, ELT_SRC_FRAME, VEC_OFFSET(slot), t->size, 0);
	} else {
		/* a variadic double: also in the integer register, where a
		 * variadic callee reads it */
		elt_plan_piece(b, ELT_SRC_FRAME, gpr_offset[slot], t->size, 0);
	}
	return 1;
}

/* Places the return value; returns 0 when not decoded here.  A result that
 * goes through memory has its address in the first slot. */
static int place_return(struct elt_plan_builder *b, void *cursor, const elt_type *t,
			const char **why)
{
	(void)why;
	if (t->kind == ELT_TYPE_VOID)
		return 1;
	if (is_integer_class(t)) {
		elt_plan_piece(b, ELT_SRC_FRAME, ELT_WIN64_RAX, t->size, 0);
		return 1;
	}
	switch (t->kind) {
	case ELT_TYPE_FLOAT:
	case ELT_TYPE_DOUBLE:
	case ELT_TYPE_SINT128:
	case ELT_TYPE_UINT128:
		elt_plan_piece(b, ELT_SRC_FRAME, VEC_OFFSET(0), t->size, 0);
		return 1;
	case ELT_TYPE_LONGDOUBLE:
	case ELT_TYPE_COMPLEX:
		/* at Leave, %rax holds the address the caller passed */
		elt_plan_piece(b, ELT_SRC_FRAME_REF, ELT_WIN64_RAX, t->size, 0);
		((struct cursor *)cursor)->slot = 1;
		return 1;
	default:
		return 0;
	}
}

static void begin(void *cursor, const elt_signature *sig)
{
	(void)sig;
	((struct cursor *)cursor)->slot = 0;
}

_Static_assert(sizeof(struct cursor) <= ELT_CURSOR_MAX, "cursor too large");

const struct elt_abi_rules elt_arch_rules = {
	.begin = begin,
	.place_return = place_return,
	.place_argument = place_argument,
	/* an aggregate may come back through a hidden pointer in %rcx */
	.undecoded_return_moves_arguments = 1,
};
