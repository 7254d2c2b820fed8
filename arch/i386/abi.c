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

#define CHECK(field, offset) \
	_Static_assert(offsetof(struct elt_i386_frame, field) == (offset), \
		       #field " is not where helpers.S stores it")
CHECK(eax, ELT_I386_EAX);
CHECK(edx, ELT_I386_EDX);
CHECK(ecx, ELT_I386_ECX);
CHECK(hook, ELT_I386_HOOK);
CHECK(function_id, ELT_I386_FUNCTION_ID);
CHECK(caller_sp, ELT_I386_CALLER_SP);
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

/* Read by helpers.S on every call; written once, before any helper can
 * run.  SSE until then (every x86 CPU of this century has it); the
 * constructor lowers it to "none" on a CPU without. */
ELT_HIDDEN unsigned char elt_i386_vector_width = ELT_I386_VEC_SSE;

static uint64_t xgetbv0(void)
{
	uint32_t lo, hi;

	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((uint64_t)hi << 32) | lo;
}

/* The widest vector state the CPU has and the OS saves (XCR0).  Linux
 * enables SSE state (CR4.OSFXSR) on every CPU that has SSE. */
__attribute__((constructor)) static void detect_vector_width(void)
{
	unsigned a = 0, b = 0, c = 0, d = 0;
	uint64_t xcr0;

	/* __get_cpuid also finds out whether this CPU has CPUID at all. */
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(d & bit_SSE)) {
		elt_i386_vector_width = ELT_I386_VEC_NONE;
		return;
	}
	if (!(c & bit_OSXSAVE) || !(c & bit_AVX))
		return;
	xcr0 = xgetbv0();
	if ((xcr0 & 0x6) != 0x6)                /* XMM and YMM state */
		return;
	elt_i386_vector_width = ELT_I386_VEC_AVX;
	if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_AVX512F) &&
	    (xcr0 & 0xe6) == 0xe6)              /* opmask, ZMM_Hi256, Hi16_ZMM */
		elt_i386_vector_width = ELT_I386_VEC_AVX512;
}

ELT_HIDDEN void elt_i386_dispatch(struct elt_i386_frame *frame);

void elt_i386_dispatch(struct elt_i386_frame *frame)
{
	elt_dispatch_frame(frame, frame->function_id, frame->caller_sp, frame->hook, frame->ecx);
}

uintptr_t elt_arch_return_address(const struct elt_info *info)
{
	/* The call into the instrumented function pushed it just below the
	 * caller's SP. */
	return info->caller_sp ? *(const uintptr_t *)(info->caller_sp - 4) : 0;
}

/* --- classification ------------------------------------------------------ */

/* Every argument is on the stack, in order, each in a slot of a multiple
 * of 4 bytes aligned to 4: int64, double, long double (12 bytes) and the
 * complex types included.  Narrow integers sit in the low bytes of their
 * slot (little-endian), so a value's address is its slot's. */
static uint32_t align4(uint32_t v)
{
	return (v + 3) & ~3u;
}

static int is_integer_class(const elt_type *t)
{
	return (t->kind >= ELT_TYPE_BOOL && t->kind <= ELT_TYPE_UINT64) ||
	       t->kind == ELT_TYPE_POINTER;
}

/* Places one argument at `*stack` (bytes above the caller SP); returns 0
 * when its type is not decoded here, since every later argument's place
 * then depends on it. */
/* The cursor: the next free byte above the caller SP. */
struct cursor {
	uint32_t stack;
};

static int place_argument(struct elt_plan_builder *b, void *cursor,
			  const elt_type *t, int variadic, const char **why)
{
	uint32_t *stack = &((struct cursor *)cursor)->stack;

	(void)variadic;         /* every argument is on the stack alike */
	(void)why;
	if (!is_integer_class(t)) {
		switch (t->kind) {
		case ELT_TYPE_FLOAT:            /* not promoted: 4 bytes */
		case ELT_TYPE_DOUBLE:
		case ELT_TYPE_LONGDOUBLE:
		case ELT_TYPE_COMPLEX:          /* both parts, in memory order */
			break;
		default:
			return 0;
		}
	}
	elt_plan_piece(b, ELT_SRC_STACK, *stack, t->size, 0);
	*stack += align4(t->size);
	return 1;
}

enum return_place { RET_UNSUPPORTED, RET_REGISTERS, RET_MEMORY };

static enum return_place classify_return(struct elt_plan_builder *b, const elt_type *t)
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
		/* _Complex double and long double: in memory, through a
		 * hidden pointer the callee pops and hands back in eax. */
		elt_plan_piece(b, ELT_SRC_FRAME_REF, ELT_I386_EAX, t->size, 0);
		return RET_MEMORY;
	default:
		return RET_UNSUPPORTED;
	}
}

static int place_return(struct elt_plan_builder *b, void *cursor, const elt_type *t,
			const char **why)
{
	enum return_place ret = classify_return(b, t);

	(void)why;
	if (ret == RET_MEMORY)  /* the hidden result pointer comes first */
		((struct cursor *)cursor)->stack = 4;
	return ret != RET_UNSUPPORTED;
}

static void begin(void *cursor, const elt_signature *sig)
{
	(void)sig;
	((struct cursor *)cursor)->stack = 0;
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
