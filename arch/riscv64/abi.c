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

/* What the integer convention passes in registers: two XLEN words.  A
 * larger value is passed by reference and returned through memory. */
#define PAIR_SIZE 16u

struct cursor {
	unsigned gpr, fpr;      /* next free a-register, fa-register */
	uint32_t stack;         /* next free byte above the caller SP */
};

/* The integers the floating-point convention pairs with a real: not
 * pointers (GCC does not count them), nor anything wider than a register. */
static int is_small_integer(const elt_type *t)
{
	return t->kind >= ELT_TYPE_BOOL && t->kind <= ELT_TYPE_UINT64;
}

/* A real an FP register holds: float, double (not the 16-byte long double). */
static int is_small_real(const elt_type *t)
{
	return t->kind == ELT_TYPE_FLOAT || t->kind == ELT_TYPE_DOUBLE;
}

/*
 * The floating-point convention looks at a value as at most two fields,
 * each a real or an integer of at most 8 bytes: a struct flattened through
 * nested structs and arrays, a complex number as its two parts.  Any union,
 * vector, pointer, wider scalar, array of nothing, or a third field makes
 * the value ineligible.  This is GCC's flattening, which differs from a
 * plain leaf walk (elt_aggregate_walk) on exactly those points: a union or
 * an empty array element ends it, and a complex number only counts when it
 * comes first.
 */
struct fp_field {
	const elt_type *type;
	uint32_t offset;
};

/* Adds the fields of `t` (at `offset`) after the `n` found so far; returns
 * the new count, or -1 when the value is not eligible. */
static int flatten(const elt_type *t, struct fp_field field[2], int n, uint32_t offset)
{
	struct fp_field sub[2];
	int nsub, j;
	uint32_t i;

	switch (t->kind) {
	case ELT_TYPE_STRUCT:
		for (i = 0; i < t->count && n >= 0; i++)
			n = flatten(t->members[i], field, n, offset + t->offsets[i]);
		return n;
	case ELT_TYPE_ARRAY:
		nsub = flatten(t->element, sub, 0, offset);
		if (nsub <= 0)
			return -1;
		for (i = 0; i < t->count; i++) {
			for (j = 0; j < nsub; j++) {
				if (n >= 2)
					return -1;
				field[n] = sub[j];
				field[n++].offset += i * t->element->size;
			}
		}
		return n;
	case ELT_TYPE_COMPLEX:
		if (n != 0 || !is_small_real(t->element))
			return -1;
		field[0] = (struct fp_field){ t->element, offset };
		field[1] = (struct fp_field){ t->element, offset + t->element->size };
		return 2;
	default:
		if (n >= 2 || !(is_small_real(t) || is_small_integer(t)))
			return -1;
		field[n] = (struct fp_field){ t, offset };
		return n + 1;
	}
}

enum fp_class {
	FP_NONE,        /* the integer convention */
	FP_REALS,       /* one or two reals: as many fa-registers */
	FP_MIXED,       /* a real and an integer: an fa- and an a-register */
};

/* How the floating-point convention would pass `t` (named arguments and
 * return values only): a struct, a complex number or a lone real; every
 * other kind (unions, vectors, integers) follows the integer convention. */
static enum fp_class fp_classify(const elt_type *t, struct fp_field field[2], int *count)
{
	int n, reals = 0, i;

	if (t->kind != ELT_TYPE_STRUCT && t->kind != ELT_TYPE_COMPLEX && !is_small_real(t))
		return FP_NONE;
	n = flatten(t, field, 0, 0);
	for (i = 0; i < n; i++)
		reals += is_small_real(field[i].type);
	*count = n;
	if (n > 0 && reals == n)
		return FP_REALS;
	if (n == 2 && reals == 1)
		return FP_MIXED;
	return FP_NONE;
}

/* The fields of an FP-convention value, in the registers from *fpr and
 * *gpr on: a real in the next fa-register (a float in its low 4 bytes), an
 * integer in the next a-register (in its low bytes, extended).  Pieces
 * that continue each other (two doubles in fa0 and fa1, adjacent in the
 * image) merge (elt_plan_piece), so such a value is read in place. */
static void fp_registers(struct elt_plan_builder *b, const struct fp_field *field, int n,
			 unsigned *gpr, unsigned *fpr)
{
	int i;

	for (i = 0; i < n; i++) {
		uint32_t size = field[i].type->size;

		if (is_small_real(field[i].type))
			elt_plan_piece(b, ELT_SRC_FRAME, FA_OFFSET((*fpr)++), size, field[i].offset);
		else
			elt_plan_piece(b, ELT_SRC_FRAME, A_OFFSET((*gpr)++), size, field[i].offset);
	}
}

/* Stack arguments take 8-byte slots; a 16-byte aligned one starts on a
 * 16-byte boundary (GCC: the argument boundary is its alignment, at most
 * the 16 of the stack). */
static void on_stack(struct elt_plan_builder *b, struct cursor *c, uint32_t size,
		     uint32_t align)
{
	c->stack = elt_align_up(c->stack, align < 8 ? 8 : align > 16 ? 16 : align);
	elt_plan_piece(b, ELT_SRC_STACK, c->stack, size, 0);
	c->stack += elt_align_up(size, 8);
}

/*
 * The integer convention, for any value of at most 16 bytes (scalars,
 * aggregates, vectors, and what found no FP registers): one or two
 * consecutive a-registers, low bytes first, any pair; a value of two words
 * that finds only a7 is split between a7 and the first stack slot; else
 * the stack.  A variadic one aligned to 16 takes an even-odd pair (a7
 * stays unused) or goes on the stack whole.  The registers of a pair are
 * adjacent in the image: such a value is read in place.
 */
static void integer_words(struct elt_plan_builder *b, struct cursor *c, uint32_t size,
			  uint32_t align, int variadic)
{
	unsigned words = (size + 7) / 8;

	if (size == 0)
		return;         /* an empty struct takes nothing */
	if (variadic && align > 8)
		c->gpr += c->gpr & 1;
	if (c->gpr + words <= ELT_RISCV64_GPR_ARGS) {
		elt_plan_piece(b, ELT_SRC_FRAME, A_OFFSET(c->gpr), size, 0);
		c->gpr += words;
	} else if (c->gpr < ELT_RISCV64_GPR_ARGS) {
		/* two words, one register left: the stack holds the rest,
		 * and this is its first slot (no stack was used yet) */
		elt_plan_piece(b, ELT_SRC_FRAME, A_OFFSET(c->gpr), 8, 0);
		c->gpr++;
		elt_plan_piece(b, ELT_SRC_STACK, c->stack, size - 8, 8);
		c->stack += 8;
	} else {
		on_stack(b, c, size, align);
	}
}

/* Over 16 bytes: the caller passes the address of a copy, in the next
 * a-register or stack slot. */
static void by_reference(struct elt_plan_builder *b, struct cursor *c, uint32_t size)
{
	if (c->gpr < ELT_RISCV64_GPR_ARGS) {
		elt_plan_piece(b, ELT_SRC_FRAME_REF, A_OFFSET(c->gpr++), size, 0);
	} else {
		elt_plan_piece(b, ELT_SRC_STACK_REF, c->stack, size, 0);
		c->stack += 8;
	}
}

/* Places one argument.  Every type the signature language has is placed:
 * the floating-point convention for named reals and FP structs while
 * registers last, the integer convention for the rest. */
static int place_argument(struct elt_plan_builder *b, void *cursor,
			  const elt_type *t, int variadic, const char **why)
{
	struct cursor *c = cursor;
	struct fp_field field[2];
	int n = 0;

	(void)why;
	if (!variadic) {
		switch (fp_classify(t, field, &n)) {
		case FP_REALS:
			if (c->fpr + (unsigned)n <= ELT_RISCV64_FPR_ARGS) {
				fp_registers(b, field, n, &c->gpr, &c->fpr);
				return 1;
			}
			break;
		case FP_MIXED:
			if (c->fpr < ELT_RISCV64_FPR_ARGS && c->gpr < ELT_RISCV64_GPR_ARGS) {
				fp_registers(b, field, n, &c->gpr, &c->fpr);
				return 1;
			}
			break;
		case FP_NONE:
			break;
		}
	}
	if (t->size > PAIR_SIZE)
		by_reference(b, c, t->size);
	else
		integer_words(b, c, t->size, t->align, variadic);
	return 1;
}

/* Places the return value: fa0/fa1 (and a0) by the floating-point
 * convention, a0/a1 by the integer one, or, over 16 bytes, through memory:
 * the caller passes the address in a0, which moves every argument one
 * register on, and a0 holds it at Leave (doc/abi.md: GCC's code returns it
 * there, a JIT puts it there). */
static int place_return(struct elt_plan_builder *b, void *cursor, const elt_type *t,
			const char **why)
{
	struct cursor *c = cursor;
	struct fp_field field[2];
	unsigned gpr = 0, fpr = 0;
	int n = 0;

	(void)why;
	if (t->kind == ELT_TYPE_VOID || t->size == 0)
		return 1;
	if (fp_classify(t, field, &n) != FP_NONE) {
		fp_registers(b, field, n, &gpr, &fpr);
	} else if (t->size > PAIR_SIZE) {
		elt_plan_piece(b, ELT_SRC_FRAME_REF, A_OFFSET(0), t->size, 0);
		c->gpr = 1;
	} else {
		elt_plan_piece(b, ELT_SRC_FRAME, A_OFFSET(0), t->size, 0);     /* a0, a1 */
	}
	return 1;
}

_Static_assert(sizeof(struct cursor) <= ELT_CURSOR_MAX, "cursor too large");

const struct elt_abi_rules elt_arch_rules = {
	/* no .begin: the cursor starts all zero */
	.place_return = place_return,
	.place_argument = place_argument,
	.undecoded_return_moves_arguments = 1,
};
