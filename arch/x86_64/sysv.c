/*
 * x86-64 System V: the C half of the port.  Checks the frame layout shared
 * with helpers-sysv.S, picks the vector width the helpers save, turns a frame into
 * a segment for the portable dispatcher, and classifies signatures: where
 * each argument and the return value live (AMD64 psABI, section 3.2.3).
 */
#include "internal.h"
#include "frame.h"
#include "cpu.h"

#include <stddef.h>

#define CHECK(field, offset) \
	_Static_assert(offsetof(struct elt_x86_64_frame, field) == (offset), \
		       #field " is not where helpers-sysv.S stores it")
CHECK(rdi, ELT_X86_64_RDI);
CHECK(rsi, ELT_X86_64_RSI);
CHECK(rdx, ELT_X86_64_RDX);
CHECK(rcx, ELT_X86_64_RCX);
CHECK(r8, ELT_X86_64_R8);
CHECK(r9, ELT_X86_64_R9);
CHECK(rax, ELT_X86_64_RAX);
CHECK(r10, ELT_X86_64_R10);
CHECK(r11, ELT_X86_64_R11);
CHECK(hook, ELT_X86_64_HOOK);
CHECK(x87_depth, ELT_X86_64_X87_DEPTH);
CHECK(x87, ELT_X86_64_X87);
CHECK(function_id, ELT_X86_64_FUNCTION_ID);
CHECK(caller_sp, ELT_X86_64_CALLER_SP);
CHECK(vec, ELT_X86_64_VEC);
_Static_assert(sizeof(struct elt_x86_64_frame) == ELT_X86_64_FRAME_SIZE,
	       "frame size differs from helpers-sysv.S");
_Static_assert(ELT_X86_64_FRAME_SIZE % ELT_X86_64_FRAME_ALIGN == 0,
	       "the frame must keep the stack aligned for the C call");
_Static_assert(ELT_X86_64_VEC % 64 == 0, "zmm slots must be 64-byte aligned");
_Static_assert(sizeof(long double) == ELT_X86_64_X87_SLOT, "x87 slot holds a long double");
_Static_assert(ELT_X86_64_VEC_SSE == 0 && ELT_X86_64_VEC_AVX == 1 &&
	       ELT_X86_64_VEC_AVX512 == 2, "the widths of cpu.h");
#undef CHECK

const char elt_arch_abi[] = "x86_64-sysv";

/* Read by helpers-sysv.S on every call; written once, before any helper can run. */
ELT_HIDDEN unsigned char elt_x86_64_vector_width = ELT_X86_64_VEC_SSE;

/* What the helpers save: all of it, or less when $ASYNCELT_X86_VECTOR_WIDTH
 * asks for less (cpu.c). */
__attribute__((constructor)) static void detect_vector_width(void)
{
	elt_x86_64_vector_width = elt_x86_64_detect_vector_width();
}

ELT_HIDDEN void elt_x86_64_dispatch(struct elt_x86_64_frame *frame);

void elt_x86_64_dispatch(struct elt_x86_64_frame *frame)
{
	elt_dispatch_frame(frame, frame->function_id, frame->caller_sp, frame->hook, frame->rcx);
}

uintptr_t elt_arch_return_address(const struct elt_info *info)
{
	/* The call into the instrumented function pushed it just below the
	 * caller's SP. */
	return info->caller_sp ? *(const uintptr_t *)(info->caller_sp - 8) : 0;
}

/* --- classification ------------------------------------------------------ */

static const uint32_t gpr_offset[6] = {
	ELT_X86_64_RDI, ELT_X86_64_RSI, ELT_X86_64_RDX,
	ELT_X86_64_RCX, ELT_X86_64_R8, ELT_X86_64_R9,
};

#define VEC_OFFSET(n) (ELT_X86_64_VEC + (n) * ELT_X86_64_VEC_SLOT)

struct cursor {
	unsigned gpr, sse;
	uint32_t stack;         /* next free byte above the caller SP */
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

static void on_stack(struct elt_plan_builder *b, struct cursor *c, uint32_t size,
		     uint32_t align)
{
	c->stack = align_up(c->stack, align < 8 ? 8 : align);
	elt_plan_piece(b, ELT_SRC_STACK, c->stack, size, 0);
	c->stack += align_up(size, 8);
}

/* Places one argument; returns 0 when its type is not decoded here, since
 * every later argument's place then depends on it. */
static int place_argument(struct elt_plan_builder *b, void *cursor,
			  const elt_type *t, int variadic, const char **why)
{
	struct cursor *c = cursor;

	(void)variadic;         /* placed like fixed arguments */
	(void)why;
	if (is_integer_class(t)) {
		if (c->gpr < 6)
			elt_plan_piece(b, ELT_SRC_FRAME, gpr_offset[c->gpr++], t->size, 0);
		else
			on_stack(b, c, t->size, 8);
		return 1;
	}
	switch (t->kind) {
	case ELT_TYPE_SINT128:
	case ELT_TYPE_UINT128:
		/* Both halves in registers, or all of it on the stack. */
		if (c->gpr + 2 <= 6) {
			elt_plan_piece(b, ELT_SRC_FRAME, gpr_offset[c->gpr++], 8, 0);
			elt_plan_piece(b, ELT_SRC_FRAME, gpr_offset[c->gpr++], 8, 8);
		} else {
			on_stack(b, c, 16, 16);
		}
		return 1;
	case ELT_TYPE_FLOAT:
	case ELT_TYPE_DOUBLE:
		if (c->sse < 8)
			elt_plan_piece(b, ELT_SRC_FRAME, VEC_OFFSET(c->sse++), t->size, 0);
		else
			on_stack(b, c, t->size, 8);
		return 1;
	case ELT_TYPE_LONGDOUBLE:
		on_stack(b, c, t->size, 16);    /* class X87: memory */
		return 1;
	case ELT_TYPE_COMPLEX:
		if (t->element->kind == ELT_TYPE_LONGDOUBLE) {
			on_stack(b, c, t->size, 16);
		} else if (t->size <= 8) {      /* both floats in one eightbyte */
			if (c->sse < 8)
				elt_plan_piece(b, ELT_SRC_FRAME, VEC_OFFSET(c->sse++), 8, 0);
			else
				on_stack(b, c, 8, 8);
		} else if (c->sse + 2 <= 8) {   /* one SSE eightbyte each */
			elt_plan_piece(b, ELT_SRC_FRAME, VEC_OFFSET(c->sse++), 8, 0);
			elt_plan_piece(b, ELT_SRC_FRAME, VEC_OFFSET(c->sse++), 8, 8);
		} else {
			on_stack(b, c, 16, 8);
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
		elt_plan_piece(b, ELT_SRC_FRAME, ELT_X86_64_RAX, t->size, 0);
		return 1;
	}
	switch (t->kind) {
	case ELT_TYPE_VOID:
		return 1;
	case ELT_TYPE_SINT128:
	case ELT_TYPE_UINT128:
		elt_plan_piece(b, ELT_SRC_FRAME, ELT_X86_64_RAX, 8, 0);
		elt_plan_piece(b, ELT_SRC_FRAME, ELT_X86_64_RDX, 8, 8);
		return 1;
	case ELT_TYPE_FLOAT:
	case ELT_TYPE_DOUBLE:
		elt_plan_piece(b, ELT_SRC_FRAME, VEC_OFFSET(0), t->size, 0);
		return 1;
	case ELT_TYPE_LONGDOUBLE:
		elt_plan_piece(b, ELT_SRC_FRAME, ELT_X86_64_X87, t->size, 0);
		return 1;
	case ELT_TYPE_COMPLEX:
		if (t->element->kind == ELT_TYPE_LONGDOUBLE) {
			/* st0 real, st1 imaginary: adjacent slots, read in place */
			elt_plan_piece(b, ELT_SRC_FRAME, ELT_X86_64_X87, t->size, 0);
		} else if (t->size <= 8) {
			elt_plan_piece(b, ELT_SRC_FRAME, VEC_OFFSET(0), 8, 0);
		} else {
			elt_plan_piece(b, ELT_SRC_FRAME, VEC_OFFSET(0), 8, 0);
			elt_plan_piece(b, ELT_SRC_FRAME, VEC_OFFSET(1), 8, 8);
		}
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
	.undecoded_return_moves_arguments = 1,
};
