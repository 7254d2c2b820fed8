/*
 * s390x (z/Architecture ELF ABI, Linux): the C half of the port.  Checks
 * the frame layout shared with helpers.S, detects the vector registers
 * the helpers save, turns a frame into a segment for the portable
 * dispatcher, and classifies signatures: where each argument and the
 * return value live.
 *
 * The rules, as GCC applies them (checked against s390x-linux-gnu-gcc -O2
 * -S output, see doc/abi.md):
 *  - integers up to 64 bits, pointers: r2-r6, then 8-byte stack slots from
 *    160 above the caller SP; extended to 64 bits, so on this big-endian
 *    machine a narrow value is in the last bytes of its register or slot;
 *  - float, double: f0, f2, f4, f6, then stack slots (a float in the last
 *    4 bytes of its slot, the first 4 of its register); variadic
 *    arguments the same;
 *  - a struct whose only member is a float or double: like that member;
 *  - other structs and unions of 1, 2, 4 or 8 bytes: like an integer of
 *    that size;
 *  - long double (IEEE quad), __int128, every complex type, vectors (in
 *    the default ABI) and every other aggregate: a pointer to a copy, in
 *    the next integer register or slot;
 *  - results: integers in r2, float/double in f0; everything else through
 *    a hidden pointer passed in r2 (the arguments then start at r3),
 *    which is back in r2 at the return.
 */
#include "internal.h"
#include "frame.h"

#include <stddef.h>
#include <sys/auxv.h>

#define CHECK(field, offset) \
	_Static_assert(offsetof(struct elt_s390x_frame, field) == (offset), \
		       #field " is not where helpers.S stores it")
CHECK(gpr, ELT_S390X_GPR);
CHECK(vec, ELT_S390X_VEC);
CHECK(vec_high, ELT_S390X_VEC_HIGH);
CHECK(function_id, ELT_S390X_FUNCTION_ID);
CHECK(caller_sp, ELT_S390X_CALLER_SP);
CHECK(fpc, ELT_S390X_FPC);
CHECK(hook, ELT_S390X_HOOK);
_Static_assert(sizeof(struct elt_s390x_frame) == ELT_S390X_FRAME_SIZE,
	       "frame size differs from helpers.S");
_Static_assert(sizeof(((struct elt_s390x_frame *)0)->gpr[0]) == ELT_S390X_GPR_SLOT,
	       "a general register slot is 8 bytes");
_Static_assert(ELT_S390X_HELPER_FRAME % 8 == 0,
	       "the helper's frame must keep %r15 8-byte aligned");
_Static_assert(ELT_S390X_IMAGE + ELT_S390X_FRAME_SIZE <= 4095,
	       "the image must be reachable with 12-bit displacements (std, vstm)");
_Static_assert(sizeof(long double) == 16, "long double is IEEE quad on s390x Linux");
#undef CHECK

const char elt_arch_abi[] = "s390x";

/* Read by helpers.S on every call: nonzero when the vector registers exist
 * (so v24-v31 can carry arguments, and glibc's string functions use
 * them).  Written once, before any helper can run. */
ELT_HIDDEN unsigned elt_s390x_vector;     /* an int: larl needs an even address */

#ifndef HWCAP_S390_VXRS
# define HWCAP_S390_VXRS 2048
#endif

__attribute__((constructor)) static void detect_vector(void)
{
	elt_s390x_vector = (getauxval(AT_HWCAP) & HWCAP_S390_VXRS) != 0;
}

ELT_HIDDEN void elt_s390x_dispatch(struct elt_s390x_frame *frame);

void elt_s390x_dispatch(struct elt_s390x_frame *frame)
{
	/* %r4: the continuation */
	elt_dispatch_frame(frame, frame->function_id, frame->caller_sp, frame->hook,
			   frame->gpr[4]);
}

uintptr_t elt_arch_return_address(const struct elt_info *info)
{
	/* Before calling a helper, the instrumented function has saved the
	 * %r14 it was entered with in the save area its caller provided. */
	return info->caller_sp ?
		*(const uintptr_t *)(info->caller_sp + ELT_S390X_SAVE_R14) : 0;
}

/* --- classification ------------------------------------------------------ */

#define GPR_ARGS 5              /* r2-r6 */
#define FPR_ARGS 4              /* f0, f2, f4, f6 */
#define VR_ARGS 8               /* v24-v31, vector ABI only */

struct cursor {
	unsigned gpr, fpr, vr;
	uint32_t stack;         /* next slot, from the caller SP */
};

static int is_integer_class(const elt_type *t)
{
	return (t->kind >= ELT_TYPE_BOOL && t->kind <= ELT_TYPE_UINT64) ||
	       t->kind == ELT_TYPE_POINTER;
}

static int is_aggregate(const elt_type *t)
{
	return t->kind == ELT_TYPE_STRUCT || t->kind == ELT_TYPE_UNION;
}

/* A float or double, or a struct of one member (nested as deep as it
 * goes) that is one: the ABI treats such a struct as that member, in an
 * FP register.  Not a union, not an array of one. */
static const elt_type *single_real(const elt_type *t)
{
	while (t->kind == ELT_TYPE_STRUCT) {
		if (t->count != 1)
			return NULL;
		t = t->members[0];
	}
	return t->kind == ELT_TYPE_FLOAT || t->kind == ELT_TYPE_DOUBLE ? t : NULL;
}

/* A struct or union of 1, 2, 4 or 8 bytes: passed like an integer of its
 * size (and, like every aggregate, returned through memory). */
static int is_integer_sized(const elt_type *t)
{
	return is_aggregate(t) && t->size <= 8 && (t->size & (t->size - 1)) == 0 &&
	       t->size != 0;
}

#ifdef __VX__
/*
 * Built for the z13 vector ABI (-march=z13 or -mvx: GCC defines __VX__),
 * as the code that calls the helpers must be too: a vector of at most 16
 * bytes, or a struct of one member that is one (through nested one-member
 * structs, with no padding), is passed by value: named ones in v24 v26
 * v28 v30 v25 v27 v29 v31 (the leftmost bytes), the others and those that
 * find no register in the next stack slots.  A lone vector is returned in
 * v24, a struct of one in memory like any aggregate.
 */
static int is_vector_abi_value(const elt_type *t)
{
	while (t->kind == ELT_TYPE_STRUCT) {
		if (t->count != 1 || t->members[0]->size != t->size)
			return 0;
		t = t->members[0];
	}
	return t->kind == ELT_TYPE_VECTOR && t->size <= 16;
}

/* v24 + n: the image keeps v24-v31 in register order */
#define VR_OFFSET(n) (ELT_S390X_VEC_HIGH + (n) * ELT_S390X_VEC_SLOT)

/* The order the ABI hands them out in, like f0 f2 f4 f6 for floats. */
static const unsigned char vr_order[VR_ARGS] = { 0, 2, 4, 6, 1, 3, 5, 7 };

static void vector_argument(struct elt_plan_builder *b, struct cursor *c,
			    const elt_type *t, int variadic)
{
	if (!variadic && c->vr < VR_ARGS) {
		elt_plan_piece(b, ELT_SRC_FRAME, VR_OFFSET(vr_order[c->vr++]), t->size, 0);
	} else {
		elt_plan_piece(b, ELT_SRC_STACK, c->stack, t->size, 0);
		c->stack += (t->size + 7) & ~7u;
	}
}
#endif

/* An 8-byte integer register or stack slot holding a value of `size`
 * bytes, right-aligned (big-endian, extended to 64 bits). */
static void integer_slot(struct elt_plan_builder *b, struct cursor *c, uint32_t size)
{
	if (c->gpr < GPR_ARGS)
		elt_plan_piece(b, ELT_SRC_FRAME, ELT_S390X_GPR_AT(2 + c->gpr++) + 8 - size,
			       size, 0);
	else {
		elt_plan_piece(b, ELT_SRC_STACK, c->stack + 8 - size, size, 0);
		c->stack += 8;
	}
}

/* Places one argument.  Every type the signature language has is placed:
 * by value in a register or slot when it fits one of them, else as a
 * pointer to a copy.  Variadic arguments follow the same rules. */
static int place_argument(struct elt_plan_builder *b, void *cursor,
			  const elt_type *t, int variadic, const char **why)
{
	struct cursor *c = cursor;
	const elt_type *real = single_real(t);

	(void)why;
#ifdef __VX__
	if (is_vector_abi_value(t)) {
		vector_argument(b, c, t, variadic);
		return 1;
	}
#else
	(void)variadic;
#endif
	if (real) {
		if (c->fpr < FPR_ARGS) {
			/* the leftmost bytes of f0, f2, f4, f6 */
			elt_plan_piece(b, ELT_SRC_FRAME, ELT_S390X_FPR_AT(2 * c->fpr++),
				       real->size, 0);
		} else {
			elt_plan_piece(b, ELT_SRC_STACK, c->stack + 8 - real->size,
				       real->size, 0);
			c->stack += 8;
		}
		return 1;
	}
	if (is_integer_class(t) || is_integer_sized(t)) {
		integer_slot(b, c, t->size);
		return 1;
	}
	/* long double, __int128, complex, vectors, other aggregates (empty
	 * ones too): the address of a copy */
	if (c->gpr < GPR_ARGS)
		elt_plan_piece(b, ELT_SRC_FRAME_REF, ELT_S390X_GPR_AT(2 + c->gpr++), t->size, 0);
	else {
		elt_plan_piece(b, ELT_SRC_STACK_REF, c->stack, t->size, 0);
		c->stack += 8;
	}
	return 1;
}

/* Integers come back in r2, float and double in f0; every other type
 * (aggregates of any size, complex, vectors, long double, __int128)
 * through memory: the caller passes the buffer's address in r2, so the
 * arguments start at r3, and r2 holds it again at the return. */
static int place_return(struct elt_plan_builder *b, void *cursor, const elt_type *t,
			const char **why)
{
	struct cursor *c = cursor;

	(void)why;
#ifdef __VX__
	if (t->kind == ELT_TYPE_VECTOR && t->size <= 16) {
		elt_plan_piece(b, ELT_SRC_FRAME, VR_OFFSET(0), t->size, 0);
		return 1;
	}
#endif
	if (t->kind == ELT_TYPE_VOID)
		return 1;
	if (is_integer_class(t)) {
		elt_plan_piece(b, ELT_SRC_FRAME, ELT_S390X_GPR_AT(2) + 8 - t->size, t->size, 0);
		return 1;
	}
	if (t->kind == ELT_TYPE_FLOAT || t->kind == ELT_TYPE_DOUBLE) {
		elt_plan_piece(b, ELT_SRC_FRAME, ELT_S390X_FPR_AT(0), t->size, 0);
		return 1;
	}
	elt_plan_piece(b, ELT_SRC_FRAME_REF, ELT_S390X_GPR_AT(2), t->size, 0);
	c->gpr = 1;     /* the first argument register carries the result's address */
	return 1;
}

static void begin(void *cursor, const elt_signature *sig)
{
	(void)sig;
	*(struct cursor *)cursor = (struct cursor){ 0, 0, 0, ELT_S390X_STACK_ARGS };
}

_Static_assert(sizeof(struct cursor) <= ELT_CURSOR_MAX, "cursor too large");

const struct elt_abi_rules elt_arch_rules = {
	.begin = begin,
	.place_return = place_return,
	.place_argument = place_argument,
	.undecoded_return_moves_arguments = 1,
};
