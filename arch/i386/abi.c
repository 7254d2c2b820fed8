/*
 * i386 System V (Linux, cdecl): the C half of the port.  Checks the frame
 * layout shared with helpers.S, picks the vector width the helpers save,
 * turns a frame into a segment for the portable dispatcher, and classifies
 * signatures: where each argument and the return value live (the Intel386
 * psABI as GCC implements it on Linux: every argument on the stack, scalar
 * results in eax, edx:eax or st0, the rest through a hidden pointer).
 */
#include "internal.h"
#include "frame.h"

#include <cpuid.h>
#include <stddef.h>
#include <string.h>

#define CHECK(field, offset) \
	_Static_assert(offsetof(struct elt_i386_frame, field) == (offset), \
		       #field " is not where helpers.S stores it")
CHECK(eax, ELT_I386_EAX);
CHECK(edx, ELT_I386_EDX);
CHECK(ecx, ELT_I386_ECX);
CHECK(mxcsr, ELT_I386_MXCSR);
CHECK(fcw, ELT_I386_FCW);
CHECK(scratch, ELT_I386_SCRATCH);
CHECK(vec_width, ELT_I386_VEC_WIDTH);
CHECK(x87_depth, ELT_I386_X87_DEPTH);
CHECK(st0_double, ELT_I386_ST0_DOUBLE);
CHECK(st0_float, ELT_I386_ST0_FLOAT);
CHECK(x87_env, ELT_I386_X87_ENV);
CHECK(x87, ELT_I386_X87);
CHECK(vec, ELT_I386_VEC);
_Static_assert(sizeof(struct elt_i386_frame) == ELT_I386_FRAME_SIZE,
	       "frame size differs from helpers.S");
_Static_assert(_Alignof(struct elt_i386_frame) == ELT_I386_FRAME_ALIGN,
	       "frame alignment differs from helpers.S");
_Static_assert(ELT_I386_FRAME_SIZE % ELT_I386_FRAME_ALIGN == 0,
	       "the frame must keep the stack aligned for the C call");
_Static_assert(ELT_I386_EDX == ELT_I386_EAX + 4,
	       "edx:eax must be adjacent for 64-bit results read in place");
_Static_assert(ELT_I386_VEC % 64 == 0, "zmm slots must be 64-byte aligned");
_Static_assert(ELT_I386_X87 % 16 == 0, "x87 slots are 16-byte aligned");
_Static_assert(sizeof(long double) <= ELT_I386_X87_SLOT, "x87 slot holds a long double");
_Static_assert(sizeof(void *) == 4 && sizeof(long double) == 12,
	       "the i386 port is built for the i386 psABI");
#undef CHECK

const char elt_arch_abi[] = "i386";

typedef void (*elt_i386_body_fn)(void);

/* Defined by helpers.S: the bodies at each width, and the row in use (SSE
 * until the constructor below runs: every x86 CPU of this century). */
ELT_HIDDEN extern const elt_i386_body_fn
	elt_i386_bodies[ELT_I386_VEC_WIDTHS][ELT_I386_BODY_COUNT];
ELT_HIDDEN extern elt_i386_body_fn elt_i386_body[ELT_I386_BODY_COUNT];
_Static_assert(ELT_I386_BODY_TAILCALL == 3 * sizeof(elt_i386_body_fn),
	       "the body offsets of frame.h");

static uint64_t xgetbv0(void)
{
	uint32_t lo, hi;

	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((uint64_t)hi << 32) | lo;
}

/* The widest vector state the CPU has and the OS saves (XCR0).  Linux
 * enables SSE state (CR4.OSFXSR) on every CPU that has SSE. */
static unsigned vector_width(void)
{
	unsigned a = 0, b = 0, c = 0, d = 0;
	uint64_t xcr0;

	/* __get_cpuid also finds out whether this CPU has CPUID at all. */
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(d & bit_SSE))
		return ELT_I386_VEC_NONE;
	if (!(c & bit_OSXSAVE) || !(c & bit_AVX))
		return ELT_I386_VEC_SSE;
	xcr0 = xgetbv0();
	if ((xcr0 & 0x6) != 0x6)                /* XMM and YMM state */
		return ELT_I386_VEC_SSE;
	if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_AVX512F) &&
	    (xcr0 & 0xe6) == 0xe6)              /* opmask, ZMM_Hi256, Hi16_ZMM */
		return ELT_I386_VEC_AVX512;
	return ELT_I386_VEC_AVX;
}

/* Chosen once, before any helper can be armed. */
__attribute__((constructor)) static void choose_bodies(void)
{
	memcpy(elt_i386_body, elt_i386_bodies[vector_width()], sizeof(elt_i386_body));
}

uintptr_t elt_arch_return_address(const struct elt_info *info)
{
	/* The call into the instrumented function pushed it just below the
	 * caller's SP. */
	return info->caller_sp ? *(const uintptr_t *)(info->caller_sp - 4) : 0;
}

/* --- classification ------------------------------------------------------ */

/*
 * Checked against i686-linux-gnu-gcc -O2 -S, with and without -mmmx,
 * -msse2 and -mavx512f.  Every argument is on the stack, in order, in a
 * slot of a multiple of 4 bytes: aggregates, int64, double, long double
 * (12 bytes) and the complex types included; an empty struct or union
 * takes no slot.  A slot is 4-aligned, or as aligned as its type when
 * that is 16 or more (a vector of 16 bytes or more, or an aggregate
 * holding one).  Narrow integers sit in the low bytes of their slot
 * (little-endian), so a value's address is its slot's.
 *
 * Vectors are where the ISA the code is built for matters: with SSE
 * (AVX, AVX-512) the first three vectors of 16 (32, 64) bytes that a
 * non-variadic function takes are in xmm0-2 (ymm, zmm) and such a result
 * is in xmm0; without, they are on the stack and the result in memory.
 * The classifier follows the ISA this library is built for (the compiler's
 * __SSE__, __AVX__, __AVX512F__), as the layouts follow its sizes: build
 * it with the -m options of the code it profiles.  With MMX, vectors of 8
 * bytes go in mm0-2, x87 registers the helpers do not save as such.
 */
static uint32_t align4(uint32_t v)
{
	return (v + 3) & ~3u;
}

static int is_integer_class(const elt_type *t)
{
	return (t->kind >= ELT_TYPE_BOOL && t->kind <= ELT_TYPE_UINT64) ||
	       t->kind == ELT_TYPE_POINTER;
}

/* A vector this build passes and returns in an xmm, ymm or zmm register. */
static int vector_in_register(const elt_type *t)
{
	if (t->kind != ELT_TYPE_VECTOR)
		return 0;
	switch (t->size) {
#ifdef __SSE__
	case 16:
		return 1;
#endif
#ifdef __AVX__
	case 32:
		return 1;
#endif
#ifdef __AVX512F__
	case 64:
		return 1;
#endif
	default:
		return 0;
	}
}

#ifdef __MMX__
static const char mmx_vector_why[] =
	"this build has MMX: 8-byte vectors are then passed and returned in "
	"%mm registers, which the i386 helpers do not save as such";
#endif

/* 1 when `t` is an 8-byte vector in %mm registers in this build. */
static int vector_in_mmx(const elt_type *t, const char **why)
{
#ifdef __MMX__
	if (t->kind == ELT_TYPE_VECTOR && t->size == 8) {
		*why = mmx_vector_why;
		return 1;
	}
#else
	(void)t;
	(void)why;
#endif
	return 0;
}

#define VECTOR_ARGUMENT_REGISTERS 3     /* xmm0-2 (ymm, zmm) */

/* The cursor: the next free byte above the caller SP, and the vector
 * registers taken; a variadic function takes none. */
struct cursor {
	uint32_t stack;
	unsigned vectors;
	int variadic;
};

static int place_argument(struct elt_plan_builder *b, void *cursor,
			  const elt_type *t, int variadic, const char **why)
{
	struct cursor *c = cursor;
	uint32_t align = t->align >= 16 ? t->align : 4;

	(void)variadic;         /* the cursor knows: a variadic function
	                           passes no argument in a vector register */
	if (vector_in_mmx(t, why))
		return 0;
	if (vector_in_register(t) && !c->variadic && c->vectors < VECTOR_ARGUMENT_REGISTERS) {
		elt_plan_piece(b, ELT_SRC_FRAME, ELT_I386_VEC + ELT_I386_VEC_SLOT * c->vectors++,
			       t->size, 0);
		return 1;
	}
	if (t->size == 0)
		return 1;
	c->stack = elt_align_up(c->stack, align);
	elt_plan_piece(b, ELT_SRC_STACK, c->stack, t->size, 0);
	c->stack += align4(t->size);
	return 1;
}

enum return_place { RET_UNSUPPORTED, RET_REGISTERS, RET_MEMORY };

/* Vectors of up to 8 bytes that come back in eax (edx:eax) when not in
 * %mm0: those GCC gives an integer machine mode, i.e. all of less than 8
 * bytes but the one-float vector, and the one-int64 vector. */
static int vector_in_eax(const elt_type *t)
{
	if (t->size < 8)
		return !(t->count == 1 && t->element->kind == ELT_TYPE_FLOAT);
	return t->size == 8 && t->count == 1 && t->element->size == 8 &&
	       t->element->kind != ELT_TYPE_DOUBLE;
}

static enum return_place classify_return(struct elt_plan_builder *b, const elt_type *t,
					 const char **why)
{
	if (is_integer_class(t)) {
		/* eax; a 64-bit one in edx:eax, adjacent in the frame */
		elt_plan_piece(b, ELT_SRC_FRAME, ELT_I386_EAX, t->size, 0);
		return RET_REGISTERS;
	}
	switch (t->kind) {
	case ELT_TYPE_VOID:
		return RET_REGISTERS;
	case ELT_TYPE_FLOAT:
		elt_plan_piece(b, ELT_SRC_FRAME, ELT_I386_ST0_FLOAT, 4, 0);
		return RET_REGISTERS;
	case ELT_TYPE_DOUBLE:
		elt_plan_piece(b, ELT_SRC_FRAME, ELT_I386_ST0_DOUBLE, 8, 0);
		return RET_REGISTERS;
	case ELT_TYPE_LONGDOUBLE:
		elt_plan_piece(b, ELT_SRC_FRAME, ELT_I386_X87, t->size, 0);
		return RET_REGISTERS;
	case ELT_TYPE_COMPLEX:
		if (t->element->kind == ELT_TYPE_FLOAT) {
			/* real part in eax, imaginary in edx */
			elt_plan_piece(b, ELT_SRC_FRAME, ELT_I386_EAX, 8, 0);
			return RET_REGISTERS;
		}
		break;          /* _Complex double and long double: in memory */
	case ELT_TYPE_VECTOR:
		if (vector_in_mmx(t, why))
			return RET_UNSUPPORTED;
		if (vector_in_register(t)) {
			elt_plan_piece(b, ELT_SRC_FRAME, ELT_I386_VEC, t->size, 0);
			return RET_REGISTERS;
		}
		if (vector_in_eax(t)) {
			elt_plan_piece(b, ELT_SRC_FRAME, ELT_I386_EAX, t->size, 0);
			return RET_REGISTERS;
		}
		break;
	default:
		/* Linux returns every struct and union in memory, whatever
		 * its size (-fpcc-struct-return), empty ones included */
		break;
	}
	/* In memory, through a hidden pointer the callee pops and hands back
	 * in eax. */
	elt_plan_piece(b, ELT_SRC_FRAME_REF, ELT_I386_EAX, t->size, 0);
	return RET_MEMORY;
}

static int place_return(struct elt_plan_builder *b, void *cursor, const elt_type *t,
			const char **why)
{
	enum return_place ret = classify_return(b, t, why);

	if (ret == RET_MEMORY)  /* the hidden result pointer comes first */
		((struct cursor *)cursor)->stack = 4;
	return ret != RET_UNSUPPORTED;
}

static void begin(void *cursor, const elt_signature *sig)
{
	*(struct cursor *)cursor = (struct cursor){
		.variadic = !!(sig->flags & ELT_SIGNATURE_VARIADIC),
	};
}

_Static_assert(sizeof(struct cursor) <= ELT_CURSOR_MAX, "cursor too large");

const struct elt_abi_rules elt_arch_rules = {
	.begin = begin,
	.place_return = place_return,
	.place_argument = place_argument,
	/* structs come back through a hidden pointer pushed before every
	 * argument: an undecoded one moves them all */
	.undecoded_return_moves_arguments = 1,
};
