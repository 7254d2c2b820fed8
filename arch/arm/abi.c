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

#include "aggregate.h"

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

#if !VFP_VARIANT
# include <sys/auxv.h>
# ifndef HWCAP_ARM_VFP
#  define HWCAP_ARM_VFP 64
# endif
/* Read by the soft-float helpers.S on every armed call: 1 when the CPU
 * has VFP after all, whose FPSCR (rounding mode, exception masks) glibc's
 * fesetround and feenableexcept then change even on armel, so the helper
 * keeps it for the instrumented code.  Written once, before any helper
 * can run. */
ELT_HIDDEN unsigned char elt_arm_soft_vfp;

__attribute__((constructor)) static void detect_vfp(void)
{
	elt_arm_soft_vfp = (getauxval(AT_HWCAP) & HWCAP_ARM_VFP) != 0;
}
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
	int async;              /* r2 carries the continuation at Leave */
};

/* B.5, C.3, C.7: a value whose natural alignment is over a word (64-bit
 * integers, double, and whatever holds one and is not packed) takes an
 * even register pair or an 8-aligned stack slot; anything else a word. */
static uint32_t slot_align(const elt_type *t)
{
	return t->align > 4 ? 8 : 4;
}

/*
 * A co-processor register candidate of the VFP variant (AAPCS 6.1.2.1):
 * a float, a double, a 64- or 128-bit vector, or an aggregate of one to
 * four of the same of them with no padding; complex values count as two
 * of their element.  Not elt_aggregate_homogeneous(): the AAPCS compares
 * machine types, and long double is double on ARM, so {double, long
 * double} is a candidate of two doubles where that helper sees two bases.
 * So the leaves are checked here: all of one base, each at a multiple of
 * its size, filling the value (an empty member has no leaf: it spoils
 * nothing).
 */
struct candidate {
	uint32_t base_size;     /* 4 (s), 8 (d) or 16 (q); 0: no leaf yet */
	int base_vector;
	uint32_t slots;         /* bit i: a leaf covers base i */
};

#define CANDIDATE_MAX 4

static int candidate_leaf(const elt_type *leaf, uint32_t offset, void *arg)
{
	struct candidate *c = arg;
	int vector = leaf->kind == ELT_TYPE_VECTOR;

	if (vector ? leaf->size != 8 && leaf->size != 16 :
	    leaf->kind != ELT_TYPE_FLOAT && leaf->kind != ELT_TYPE_DOUBLE &&
	    leaf->kind != ELT_TYPE_LONGDOUBLE)
		return 0;
	if (!c->base_size) {
		c->base_size = leaf->size;
		c->base_vector = vector;
	}
	if (leaf->size != c->base_size || vector != c->base_vector ||
	    offset % c->base_size || offset / c->base_size >= CANDIDATE_MAX)
		return 0;
	c->slots |= 1u << (offset / c->base_size);
	return 1;
}

/* 1 with *count bases of *base_size bytes when `t` is a candidate. */
static int vfp_candidate(const elt_type *t, uint32_t *count, uint32_t *base_size)
{
	struct candidate c = { 0, 0, 0 };
	uint32_t n;

	/* also bounds the walk: {float[100000]} is not looked into */
	if (t->size == 0 || t->size > CANDIDATE_MAX * 16)
		return 0;
	if (!elt_aggregate_walk(t, 0, candidate_leaf, &c) || !c.base_size)
		return 0;
	n = t->size / c.base_size;
	/* every base covered once: no padding, no hole */
	if (t->size % c.base_size || c.slots != (1u << n) - 1)
		return 0;
	*count = n;
	*base_size = c.base_size;
	return 1;
}

/* C.7, C.8 (and C.2 for a co-processor candidate): the next slot of the
 * stack, aligned to 4 or 8, rounded up to words. */
static void on_stack(struct elt_plan_builder *b, struct cursor *c, uint32_t size,
		     uint32_t align)
{
	c->nsaa = elt_align_up(c->nsaa, align);
	elt_plan_piece(b, ELT_SRC_STACK, c->nsaa, size, 0);
	c->nsaa += elt_align_up(size, 4);
}

/* C.3-C.8: core registers, possibly split with the stack, then the stack.
 * A value in several core registers is contiguous in the frame, as the
 * registers would be after an stm, which is how the AAPCS lays a
 * composite out in them (as if loaded with an ldm). */
static void core_or_stack(struct elt_plan_builder *b, struct cursor *c,
			  uint32_t size, uint32_t align)
{
	uint32_t words = elt_align_up(size, 4) / 4;

	if (align == 8 && (c->ncrn & 1))                /* C.3: an even pair */
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
		c->nsaa = elt_align_up(size - in_regs, 4);
		c->ncrn = 4;
		return;
	}
	c->ncrn = 4;                                    /* C.6 */
	on_stack(b, c, size, align);
}

/* C.1: the lowest run of free s registers for `count` values of `unit`
 * single registers each (1: s, 2: d, 4: q), aligned to the unit; -1 when
 * there is none. */
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

/* Places one argument: every type the signature language has can be
 * passed on ARM, by value, in registers, on the stack or split. */
static int place_argument(struct elt_plan_builder *b, void *cursor,
			  const elt_type *t, int variadic, const char **why)
{
	struct cursor *c = cursor;
	uint32_t count, base_size;

	(void)variadic;         /* begin() chose the variant for all of them */
	(void)why;
	/* An empty struct takes no register and no stack (GCC: zero words
	 * in C.4). */
	if (t->size == 0)
		return 1;
	if (c->vfp && vfp_candidate(t, &count, &base_size)) {
		int s = vfp_allocate(c, count, base_size / 4);

		if (s >= 0) {
			/* consecutive s/d/q registers: contiguous in the frame */
			elt_plan_piece(b, ELT_SRC_FRAME, S_OFFSET(s), t->size, 0);
			return 1;
		}
		/* C.2: no back-filling after a candidate went to the stack,
		 * and never a split. */
		c->vfp_free = 0;
		on_stack(b, c, t->size, slot_align(t));
		return 1;
	}
	/* B.2: narrow integers are extended to a word: the low bytes of
	 * their register or slot. */
	core_or_stack(b, c, t->size, slot_align(t));
	return 1;
}

/* What the AAPCS calls a composite for results (6.4): aggregates, and
 * GCC returns vectors and complex values by the same size rules. */
static int is_composite(const elt_type *t)
{
	return t->kind == ELT_TYPE_STRUCT || t->kind == ELT_TYPE_UNION ||
	       t->kind == ELT_TYPE_ARRAY || t->kind == ELT_TYPE_VECTOR ||
	       t->kind == ELT_TYPE_COMPLEX;
}

static int place_return(struct elt_plan_builder *b, void *cursor, const elt_type *t,
			const char **why)
{
	struct cursor *c = cursor;
	uint32_t count, base_size;

	(void)why;
	if (t->kind == ELT_TYPE_VOID || t->size == 0)
		return 1;
	if (c->vfp && vfp_candidate(t, &count, &base_size)) {
		/* s0.., d0.. or q0..: contiguous in the frame */
		elt_plan_piece(b, ELT_SRC_FRAME, S_OFFSET(0), t->size, 0);
		return 1;
	}
	/* Scalars in r0 or r0:r1 (float and double too, in the base
	 * variant); a composite of up to a word in r0, as if loaded with
	 * ldr; a vector of up to 16 bytes in r0-r3. */
	if (!is_composite(t) || t->size <= 4 ||
	    (t->kind == ELT_TYPE_VECTOR && t->size <= 16)) {
		if (c->async && t->size > 8) {
			/* r2 is the continuation at Leave: the arguments are
			 * where they always are, only the result is lost. */
			elt_plan_return_unsupported(b, "a 16-byte vector result is "
				"returned in r0-r3, but at an async function's "
				"Leave r2 holds the continuation, not the value's "
				"third word (doc/abi.md): not decoded on %s",
				elt_arch_abi);
			return 1;
		}
		elt_plan_piece(b, ELT_SRC_FRAME, CORE_OFFSET(0), t->size, 0);
		return 1;
	}
	/* Any other composite is written to memory at the address the
	 * caller passed in r0, which takes the first argument register.  At
	 * Leave r0 holds that address again (doc/abi.md: GCC returns it
	 * there, other code must reload it). */
	elt_plan_piece(b, ELT_SRC_FRAME_REF, CORE_OFFSET(0), t->size, 0);
	c->ncrn = 1;
	return 1;
}

static void begin(void *cursor, const elt_signature *sig)
{
	/* A variadic function uses the base variant for every argument and
	 * the result, even on armhf (AAPCS 6.4.1 / 6.5). */
	*(struct cursor *)cursor = (struct cursor){
		.ncrn = 0, .nsaa = 0, .vfp_free = 0xffff,
		.vfp = VFP_VARIANT && !(sig->flags & ELT_SIGNATURE_VARIADIC),
		.async = sig->continuation_index >= 0,
	};
}

_Static_assert(sizeof(struct cursor) <= ELT_CURSOR_MAX, "cursor too large");

const struct elt_abi_rules elt_arch_rules = {
	.begin = begin,
	.place_return = place_return,
	.place_argument = place_argument,
	.undecoded_return_moves_arguments = 1,
};
