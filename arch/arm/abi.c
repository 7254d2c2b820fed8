/*
 * 32-bit ARM: the C half of the port, for both procedure-call variants of
 * the AAPCS (ARM IHI 0042), chosen by the compiler: the VFP variant when
 * __ARM_PCS_VFP (armhf), the base variant otherwise (armel, and softfp).
 * Checks the frame layout shared with helpers.S, turns a frame into a
 * segment for the portable dispatcher, and classifies signatures: where
 * each argument and the return value live (AAPCS section 6.5, rules
 * C.1-C.9 for arguments, 6.4 / 6.1.2 for results).
 */
#include "internal.h"
#include "frame.h"

#include <stddef.h>

#if !defined(__ARMEL__)
# error "the arm port is written for little-endian ARM: s<2n> is the low half of d<n>"
#endif

#define CHECK(field, offset) \
	_Static_assert(offsetof(struct elt_arm_frame, field) == (offset), \
		       #field " is not where helpers.S stores it")
CHECK(hook, ELT_ARM_HOOK);
CHECK(fpscr, ELT_ARM_FPSCR);
CHECK(vfp, ELT_ARM_VFP);
CHECK(r, ELT_ARM_R0);
CHECK(r[2], ELT_ARM_R2);
CHECK(r4, ELT_ARM_R4);
CHECK(ip, ELT_ARM_IP);
CHECK(lr, ELT_ARM_LR);
CHECK(function_id, ELT_ARM_FUNCTION_ID);
CHECK(caller_sp, ELT_ARM_CALLER_SP);
_Static_assert(sizeof(struct elt_arm_frame) == ELT_ARM_FRAME_SIZE,
	       "frame size differs from helpers.S");
_Static_assert(ELT_ARM_FRAME_SIZE - ELT_ARM_R0 == 8 * 4 + 8,
	       "the helper's push {r0-r5, ip, lr} and the caller's two words "
	       "end the frame");
_Static_assert(_Alignof(struct elt_arm_frame) == 4,
	       "the frame may start 4 mod 8 (a caller's misaligned sp)");
_Static_assert(sizeof(double) == ELT_ARM_VFP_SLOT && sizeof(long double) == 8,
	       "a d register holds a double; long double is double on ARM");
#undef CHECK

#if defined(__ARM_PCS_VFP)
const char elt_arch_abi[] = "arm-vfp";
# define VFP_VARIANT 1
#else
const char elt_arch_abi[] = "arm-soft";
# define VFP_VARIANT 0
#endif

ELT_HIDDEN void elt_arm_dispatch(struct elt_arm_frame *frame);

void elt_arm_dispatch(struct elt_arm_frame *frame)
{
	/* r2: the continuation */
	elt_dispatch_frame(frame, frame->function_id, frame->caller_sp, frame->hook,
			   frame->r[2]);
}

uintptr_t elt_arch_return_address(const struct elt_info *info)
{
	/* The instrumented function's lr on entry, which its prolog saved
	 * first, at the top of its frame: push {..., lr} puts it just below
	 * the caller SP (doc/abi.md).  Bit 0 set: it returns to Thumb code. */
	return info->caller_sp ? *(const uint32_t *)(info->caller_sp - 4) : 0;
}

/* --- classification ------------------------------------------------------ */

#define CORE_OFFSET(n) (ELT_ARM_R0 + 4 * (n))
/* s<n>: d<n/2> holds s<2k> in its low half (little-endian). */
#define S_OFFSET(n) (ELT_ARM_VFP + 4 * (n))

struct cursor {
	unsigned ncrn;          /* next core register, r0-r3; 4: none left */
	uint32_t nsaa;          /* next stacked argument, from the caller SP */
	uint32_t vfp_free;      /* bit n: s<n> unallocated (VFP variant) */
	int vfp;                /* the VFP variant's rules apply */
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

static int is_floating(const elt_type *t)
{
	return t->kind == ELT_TYPE_FLOAT || t->kind == ELT_TYPE_DOUBLE ||
	       t->kind == ELT_TYPE_LONGDOUBLE || t->kind == ELT_TYPE_COMPLEX;
}

/* C.7, C.8 (and C.2 for a co-processor candidate): the next slot of the
 * stack, aligned as the type (4 or 8), rounded up to words. */
static void on_stack(struct elt_plan_builder *b, struct cursor *c, uint32_t size,
		     uint32_t align)
{
	c->nsaa = align_up(c->nsaa, align < 4 ? 4 : align);
	elt_plan_piece(b, ELT_SRC_STACK, c->nsaa, size, 0);
	c->nsaa += align_up(size, 4);
}

/* C.3-C.8: core registers, possibly split with the stack, then the stack.
 * A value in several core registers is contiguous in the frame, as the
 * registers would be after an stm. */
static void core_or_stack(struct elt_plan_builder *b, struct cursor *c,
			  uint32_t size, uint32_t align)
{
	uint32_t words = align_up(size, 4) / 4;

	if (align >= 8 && (c->ncrn & 1))                /* C.3: an even pair */
		c->ncrn++;
	if (c->ncrn + words <= 4) {                     /* C.4 */
		elt_plan_piece(b, ELT_SRC_FRAME, CORE_OFFSET(c->ncrn), size, 0);
		c->ncrn += words;
		return;
	}
	if (c->ncrn < 4 && c->nsaa == 0) {              /* C.5: split */
		uint32_t in_regs = (4 - c->ncrn) * 4;

		elt_plan_piece(b, ELT_SRC_FRAME, CORE_OFFSET(c->ncrn), in_regs, 0);
		elt_plan_piece(b, ELT_SRC_STACK, 0, size - in_regs, in_regs);
		c->nsaa = align_up(size - in_regs, 4);
		c->ncrn = 4;
		return;
	}
	c->ncrn = 4;                                    /* C.6 */
	on_stack(b, c, size, align);
}

/* C.1: the lowest run of free s registers for `count` values of `unit`
 * single registers each (1: float, 2: double), aligned to the unit; -1
 * when there is none. */
static int vfp_allocate(struct cursor *c, unsigned count, unsigned unit)
{
	uint32_t need = (1u << (count * unit)) - 1;
	unsigned start;

	for (start = 0; start + count * unit <= 16; start += unit)
		if ((c->vfp_free & (need << start)) == (need << start)) {
			c->vfp_free &= ~(need << start);
			return (int)start;
		}
	return -1;
}

/* float, double, long double (= double) and their complex types: a
 * co-processor register candidate (a homogeneous aggregate of one or two
 * elements) in the VFP variant, a fundamental or composite type of core
 * words in the base one. */
static void place_floating(struct elt_plan_builder *b, struct cursor *c,
			   const elt_type *t)
{
	if (c->vfp) {
		const elt_type *e = t->kind == ELT_TYPE_COMPLEX ? t->element : t;
		int s = vfp_allocate(c, t->kind == ELT_TYPE_COMPLEX ? 2 : 1,
				     e->size == 4 ? 1 : 2);

		if (s >= 0) {
			elt_plan_piece(b, ELT_SRC_FRAME, S_OFFSET(s), t->size, 0);
			return;
		}
		/* C.2: no back-filling after a candidate went to the stack,
		 * and never a split. */
		c->vfp_free = 0;
		on_stack(b, c, t->size, t->align);
		return;
	}
	core_or_stack(b, c, t->size, t->align);
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
		/* Narrow values are extended to a word; 64-bit ones take an
		 * even register pair or an 8-aligned stack slot. */
		core_or_stack(b, c, t->size, t->size == 8 ? 8 : 4);
		return 1;
	}
	if (is_floating(t)) {
		place_floating(b, c, t);
		return 1;
	}
	return 0;
}

/* Returns 1 when placed; *indirect says the result is in memory at the
 * address the caller passed in r0 (and the callee gives back in r0). */
static int place_result(struct elt_plan_builder *b, const struct cursor *c,
			const elt_type *t, int *indirect)
{
	*indirect = 0;
	if (t->kind == ELT_TYPE_VOID)
		return 1;
	if (is_integer_class(t)) {                      /* r0, or r0:r1 */
		elt_plan_piece(b, ELT_SRC_FRAME, CORE_OFFSET(0), t->size, 0);
		return 1;
	}
	if (!is_floating(t))
		return 0;
	if (c->vfp) {           /* s0, d0, s0-s1 or d0-d1: contiguous */
		elt_plan_piece(b, ELT_SRC_FRAME, S_OFFSET(0), t->size, 0);
		return 1;
	}
	if (t->kind != ELT_TYPE_COMPLEX) {              /* r0, or r0:r1 */
		elt_plan_piece(b, ELT_SRC_FRAME, CORE_OFFSET(0), t->size, 0);
		return 1;
	}
	/* Base variant: a complex value is a composite larger than a word,
	 * returned in memory through a pointer passed in r0. */
	elt_plan_piece(b, ELT_SRC_FRAME_REF, CORE_OFFSET(0), t->size, 0);
	*indirect = 1;
	return 1;
}

static int place_return(struct elt_plan_builder *b, void *cursor, const elt_type *t,
			const char **why)
{
	struct cursor *c = cursor;
	int indirect;

	(void)why;
	if (!place_result(b, c, t, &indirect))
		return 0;
	if (indirect)
		c->ncrn = 1;    /* r0 carries the result address */
	return 1;
}

static void begin(void *cursor, const elt_signature *sig)
{
	/* A variadic function uses the base variant for every argument and
	 * the result, even on armhf (AAPCS 6.4.1 / 6.5). */
	*(struct cursor *)cursor = (struct cursor){ 0, 0, 0xffff,
		VFP_VARIANT && !(sig->flags & ELT_SIGNATURE_VARIADIC) };
}

_Static_assert(sizeof(struct cursor) <= ELT_CURSOR_MAX, "cursor too large");

const struct elt_abi_rules elt_arch_rules = {
	.begin = begin,
	.place_return = place_return,
	.place_argument = place_argument,
	.undecoded_return_moves_arguments = 1,
};
