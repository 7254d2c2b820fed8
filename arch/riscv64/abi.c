/*
 * riscv64 LP64D: the C half of the port.  Checks the frame layout shared
 * with helpers.S, turns a frame into a segment for the portable dispatcher,
 * and classifies signatures: where each argument and the return value live
 * (the RISC-V ELF psABI, integer and hardware floating-point calling
 * conventions, as GCC implements them: doc/abi.md lists the rules and the
 * compiler output each one was checked against).
 */
#include "internal.h"
#include "frame.h"

#include <stddef.h>

#if !defined(__riscv) || __riscv_xlen != 64 || !defined(__riscv_float_abi_double)
# error "arch/riscv64 is the LP64D ABI: RV64 with double-precision FP registers"
#endif

#define CHECK(field, offset) \
	_Static_assert(offsetof(struct elt_riscv64_frame, field) == (offset), \
		       #field " is not where helpers.S stores it")
CHECK(a, ELT_RISCV64_A0);
CHECK(t, ELT_RISCV64_T0);
CHECK(function_id, ELT_RISCV64_FUNCTION_ID);
CHECK(fa, ELT_RISCV64_FA0);
CHECK(caller_sp, ELT_RISCV64_CALLER_SP);
CHECK(fcsr, ELT_RISCV64_FCSR);
CHECK(hook, ELT_RISCV64_HOOK);
#undef CHECK
_Static_assert(sizeof(struct elt_riscv64_frame) == ELT_RISCV64_FRAME_SIZE,
	       "frame size differs from helpers.S");
_Static_assert(ELT_RISCV64_FRAME_SIZE % 16 == 0,
	       "the frame must keep the stack 16-byte aligned for the C call");
_Static_assert(sizeof(long double) == 16 && sizeof(__int128) == 16,
	       "LP64D: long double is IEEE quad, __int128 exists");

const char elt_arch_abi[] = "riscv64-lp64d";

ELT_HIDDEN void elt_riscv64_dispatch(struct elt_riscv64_frame *frame);

void elt_riscv64_dispatch(struct elt_riscv64_frame *frame)
{
	elt_dispatch_frame(frame, frame->function_id, frame->caller_sp, frame->hook, frame->a[2]);
}

uintptr_t elt_arch_return_address(const struct elt_info *info)
{
	/* The instrumented function keeps the standard frame record: its ra
	 * saved just below the caller's SP (doc/abi.md). */
	return info->caller_sp ? *(const uintptr_t *)(info->caller_sp - 8) : 0;
}

/* --- classification ------------------------------------------------------ */

#define A_OFFSET(n) (ELT_RISCV64_A0 + (n) * 8u)
#define FA_OFFSET(n) (ELT_RISCV64_FA0 + (n) * 8u)

struct cursor {
	unsigned gpr, fpr;      /* next free a-register, fa-register */
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

/* Stack arguments take 8-byte slots; a 16-byte aligned one starts on a
 * 16-byte boundary (GCC: the argument boundary is its alignment, at most
 * the 16 of the stack). */
static void on_stack(struct elt_plan_builder *b, struct cursor *c, uint32_t size,
		     uint32_t align)
{
	c->stack = align_up(c->stack, align < 8 ? 8 : align > 16 ? 16 : align);
	elt_plan_piece(b, ELT_SRC_STACK, c->stack, size, 0);
	c->stack += align_up(size, 8);
}

/* A value of at most 8 bytes by the integer convention: the next
 * a-register, else an 8-byte stack slot; either way in the low bytes. */
static void integer_word(struct elt_plan_builder *b, struct cursor *c, uint32_t size)
{
	if (c->gpr < ELT_RISCV64_GPR_ARGS)
		elt_plan_piece(b, ELT_SRC_FRAME, A_OFFSET(c->gpr++), size, 0);
	else
		on_stack(b, c, size, 8);
}

/* A 16-byte value by the integer convention (__int128, long double, a
 * complex double that found no FP registers): two consecutive a-registers,
 * low half first, any pair; a named one that finds only a7 is split
 * between a7 and the first stack slot.  A variadic one aligned to 16 takes
 * an even-odd pair (a7 stays unused) or goes on the stack whole. */
static void integer_pair(struct elt_plan_builder *b, struct cursor *c, uint32_t align,
			 int variadic)
{
	if (variadic && align > 8)
		c->gpr += c->gpr & 1;
	if (c->gpr + 2 <= ELT_RISCV64_GPR_ARGS) {
		/* the slots of consecutive registers are adjacent */
		elt_plan_piece(b, ELT_SRC_FRAME, A_OFFSET(c->gpr), 16, 0);
		c->gpr += 2;
	} else if (c->gpr + 1 == ELT_RISCV64_GPR_ARGS) {
		elt_plan_piece(b, ELT_SRC_FRAME, A_OFFSET(c->gpr), 8, 0);
		c->gpr++;
		elt_plan_piece(b, ELT_SRC_STACK, c->stack, 8, 8);
		c->stack += 8;
	} else {
		on_stack(b, c, 16, align);
	}
}

/* Places one argument; returns 0 when its type is not decoded here, since
 * every later argument's place then depends on it. */
static int place_argument(struct elt_plan_builder *b, void *cursor,
			  const elt_type *t, int variadic, const char **why)
{
	struct cursor *c = cursor;

	(void)why;
	if (is_integer_class(t)) {
		integer_word(b, c, t->size);
		return 1;
	}
	switch (t->kind) {
	case ELT_TYPE_SINT128:
	case ELT_TYPE_UINT128:
	case ELT_TYPE_LONGDOUBLE:       /* IEEE quad: wider than an FP register */
		integer_pair(b, c, t->align, variadic);
		return 1;
	case ELT_TYPE_FLOAT:
	case ELT_TYPE_DOUBLE:
		/* Named: an fa-register while one is free, then the integer
		 * convention.  Variadic: always the integer convention. */
		if (!variadic && c->fpr < ELT_RISCV64_FPR_ARGS)
			elt_plan_piece(b, ELT_SRC_FRAME, FA_OFFSET(c->fpr++), t->size, 0);
		else
			integer_word(b, c, t->size);
		return 1;
	case ELT_TYPE_COMPLEX:
		if (t->element->kind == ELT_TYPE_LONGDOUBLE) {
			/* 32 bytes: by reference, the address in an a-register
			 * or a stack slot */
			if (c->gpr < ELT_RISCV64_GPR_ARGS) {
				elt_plan_piece(b, ELT_SRC_FRAME_REF, A_OFFSET(c->gpr++),
					       t->size, 0);
			} else {
				elt_plan_piece(b, ELT_SRC_STACK_REF, c->stack, t->size, 0);
				c->stack += 8;
			}
		} else if (!variadic && c->fpr + 2 <= ELT_RISCV64_FPR_ARGS) {
			/* like a struct of two reals: two fa-registers */
			if (t->element->kind == ELT_TYPE_FLOAT) {
				elt_plan_piece(b, ELT_SRC_FRAME, FA_OFFSET(c->fpr), 4, 0);
				elt_plan_piece(b, ELT_SRC_FRAME, FA_OFFSET(c->fpr + 1), 4, 4);
			} else {
				elt_plan_piece(b, ELT_SRC_FRAME, FA_OFFSET(c->fpr), 16, 0);
			}
			c->fpr += 2;
		} else if (t->element->kind == ELT_TYPE_FLOAT) {
			integer_word(b, c, 8);          /* both parts in one word */
		} else {
			integer_pair(b, c, t->align, variadic);
		}
		return 1;
	default:
		return 0;
	}
}

/* Places the return value; 0 when it is not decoded here.  *hidden is set
 * when the caller passes the result's address in a0 (a value returned by
 * reference), which moves every argument one register on. */
static int place_result(struct elt_plan_builder *b, const elt_type *t, int *hidden)
{
	*hidden = 0;
	if (is_integer_class(t)) {
		elt_plan_piece(b, ELT_SRC_FRAME, A_OFFSET(0), t->size, 0);
		return 1;
	}
	switch (t->kind) {
	case ELT_TYPE_VOID:
		return 1;
	case ELT_TYPE_SINT128:
	case ELT_TYPE_UINT128:
	case ELT_TYPE_LONGDOUBLE:
		elt_plan_piece(b, ELT_SRC_FRAME, A_OFFSET(0), 16, 0);  /* a0:a1 */
		return 1;
	case ELT_TYPE_FLOAT:
	case ELT_TYPE_DOUBLE:
		elt_plan_piece(b, ELT_SRC_FRAME, FA_OFFSET(0), t->size, 0);
		return 1;
	case ELT_TYPE_COMPLEX:
		if (t->element->kind == ELT_TYPE_LONGDOUBLE) {
			/* Through memory: at Leave a0 holds the address
			 * (doc/abi.md: GCC's code returns it there, a JIT
			 * puts it there). */
			elt_plan_piece(b, ELT_SRC_FRAME_REF, A_OFFSET(0), t->size, 0);
			*hidden = 1;
		} else if (t->element->kind == ELT_TYPE_FLOAT) {
			elt_plan_piece(b, ELT_SRC_FRAME, FA_OFFSET(0), 4, 0);
			elt_plan_piece(b, ELT_SRC_FRAME, FA_OFFSET(1), 4, 4);
		} else {
			elt_plan_piece(b, ELT_SRC_FRAME, FA_OFFSET(0), 16, 0);  /* fa0:fa1 */
		}
		return 1;
	default:
		return 0;
	}
}

static int place_return(struct elt_plan_builder *b, void *cursor, const elt_type *t,
			const char **why)
{
	struct cursor *c = cursor;
	int hidden;

	(void)why;
	if (!place_result(b, t, &hidden))
		return 0;
	if (hidden)
		c->gpr = 1;      /* the first argument register carries the result's address */
	return 1;
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
