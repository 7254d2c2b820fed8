/*
 * x86-64 System V: the C half of the port.  Checks the frame layout shared
 * with helpers-sysv.S, turns a frame into
 * a segment for the portable dispatcher, and classifies signatures: where
 * each argument and the return value live (AMD64 psABI, section 3.2.3).
 */
#include "internal.h"
#include "frame.h"

#include "aggregate.h"

#include <stddef.h>
#include <string.h>

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
CHECK(x87_depth, ELT_X86_64_X87_DEPTH);
CHECK(mxcsr, ELT_X86_64_MXCSR);
CHECK(x87, ELT_X86_64_X87);
CHECK(fcw, ELT_X86_64_FCW);
CHECK(scratch, ELT_X86_64_SCRATCH);
CHECK(vec, ELT_X86_64_VEC);
_Static_assert(sizeof(struct elt_x86_64_frame) == ELT_X86_64_FRAME_SIZE,
	       "frame size differs from helpers-sysv.S");
_Static_assert(ELT_X86_64_FRAME_SIZE % ELT_X86_64_FRAME_ALIGN == 0,
	       "the frame must keep the stack aligned for the C call");
_Static_assert(ELT_X86_64_VEC % 64 == 0, "zmm slots must be 64-byte aligned");
_Static_assert(sizeof(long double) == ELT_X86_64_X87_SLOT, "x87 slot holds a long double");
#undef CHECK

const char elt_arch_abi[] = "x86_64-sysv";

uintptr_t elt_arch_return_address(const struct elt_info *info)
{
	/* The call into the instrumented function pushed it just below the
	 * caller's SP. */
	return info->caller_sp ? *(const uintptr_t *)(info->caller_sp - 8) : 0;
}

/* --- classification ------------------------------------------------------ */

/*
 * The AMD64 psABI (3.2.3) classifies a value by eightbytes: each 8-byte
 * chunk gets the class that decides which register file carries it.
 * Scalars and aggregates go through the same rules: a scalar is an
 * aggregate of one leaf.
 */
enum eightbyte_class {
	NO_CLASS,       /* padding only, or nothing yet */
	INTEGER,        /* next of rdi rsi rdx rcx r8 r9; rax, rdx */
	SSE,            /* the low 8 bytes of the next xmm */
	SSEUP,          /* the next 8 bytes of the same xmm */
	X87,            /* a long double: memory, st0 when returned */
	X87UP,
	COMPLEX_X87,    /* a complex long double: memory, st0/st1 returned */
	MEMORY,
};

/* Values over eight eightbytes are MEMORY without looking inside. */
#define MAX_EIGHTBYTES 8

struct classification {
	enum eightbyte_class eb[MAX_EIGHTBYTES];
	uint32_t count;         /* eightbytes of the value */
	int memory;             /* the whole value is MEMORY */
	const char *undecodable;        /* why it cannot be decoded, or NULL */
	const elt_type *top;            /* the value being classified */
};

static const char wide_vector_why[] =
	"a vector of more than 16 bytes (or a struct of one) is in ymm/zmm "
	"registers when the caller is built with AVX and in memory otherwise: "
	"not decoded on x86_64-sysv";
static const char vector_int128_member_why[] =
	"an aggregate holding a vector of one __int128 is passed by GCC with "
	"its upper 8 bytes missing: not decoded on x86_64-sysv";

static const uint32_t gpr_offset[6] = {
	ELT_X86_64_RDI, ELT_X86_64_RSI, ELT_X86_64_RDX,
	ELT_X86_64_RCX, ELT_X86_64_R8, ELT_X86_64_R9,
};

#define VEC_OFFSET(n) (ELT_X86_64_VEC + (n) * ELT_X86_64_VEC_SLOT)

/* The merge rules of the psABI, for two classes of one eightbyte. */
static enum eightbyte_class merge(enum eightbyte_class a, enum eightbyte_class b)
{
	if (a == b)
		return a;
	if (a == NO_CLASS)
		return b;
	if (b == NO_CLASS)
		return a;
	if (a == MEMORY || b == MEMORY)
		return MEMORY;
	if (a == INTEGER || b == INTEGER)
		return INTEGER;
	if (a == X87 || a == X87UP || a == COMPLEX_X87 ||
	    b == X87 || b == X87UP || b == COMPLEX_X87)
		return MEMORY;
	return SSE;
}

/* Adds one leaf's eightbytes.  A leaf off its natural alignment (in a
 * packed struct) makes the whole value MEMORY, as in GCC. */
static int classify_leaf(const elt_type *leaf, uint32_t offset, void *arg)
{
	struct classification *c = arg;
	enum eightbyte_class first, rest;
	uint32_t i;

	switch (leaf->kind) {
	case ELT_TYPE_FLOAT:
	case ELT_TYPE_DOUBLE:
		first = rest = SSE;
		break;
	case ELT_TYPE_VECTOR:
		/* GCC has no machine mode for a vector of one double here,
		 * so such a vector (and whatever holds it) is passed and
		 * returned in memory, unlike every other 8-byte vector. */
		if (leaf->count == 1 && leaf->element->kind == ELT_TYPE_DOUBLE) {
			c->memory = 1;
			return 0;
		}
		/* A vector of one __int128 alone is in one xmm register;
		 * inside a struct or union small enough for registers, GCC
		 * passes its low half only, so the value is not there. */
		if (leaf->count == 1 && leaf->size == 16 && leaf != c->top &&
		    c->top->size <= 16) {
			c->undecodable = vector_int128_member_why;
			return 0;
		}
		first = SSE;
		rest = SSEUP;
		break;
	case ELT_TYPE_LONGDOUBLE:
		first = X87;
		rest = X87UP;
		break;
	default:                /* bool, char, integers, __int128, pointers */
		first = rest = INTEGER;
		break;
	}
	/* every leaf here is naturally aligned to its size */
	if (leaf->size && offset % leaf->size) {
		c->memory = 1;
		return 0;
	}
	for (i = offset / 8; i * 8 < offset + leaf->size; i++)
		c->eb[i] = merge(c->eb[i], i == offset / 8 ? first : rest);
	return 1;
}

/* Classifies `t`: c->memory, or c->eb[0 .. c->count) with the psABI's
 * post-merger cleanup done. */
static void classify(const elt_type *t, struct classification *c)
{
	uint32_t i;

	memset(c, 0, sizeof(*c));
	c->top = t;
	c->count = (t->size + 7) / 8;
	if (c->count > MAX_EIGHTBYTES) {
		c->memory = 1;
		return;
	}
	if (t->kind == ELT_TYPE_COMPLEX && t->element->kind == ELT_TYPE_LONGDOUBLE) {
		c->eb[0] = COMPLEX_X87;
		return;
	}
	if (!elt_aggregate_walk(t, 0, classify_leaf, c))
		return;
	for (i = 0; i < c->count; i++) {
		if (c->eb[i] == MEMORY ||
		    (c->eb[i] == X87UP && (i == 0 || c->eb[i - 1] != X87)))
			c->memory = 1;
	}
	if (c->count > 2) {
		/* only a vector (alone, or wrapped) may be wider than 16 bytes */
		int one_vector = c->eb[0] == SSE;

		for (i = 1; i < c->count; i++)
			one_vector &= c->eb[i] == SSEUP;
		if (one_vector)
			c->undecodable = wide_vector_why;
		else
			c->memory = 1;
	}
	for (i = 0; i < c->count; i++)
		if (c->eb[i] == SSEUP && (i == 0 || (c->eb[i - 1] != SSE && c->eb[i - 1] != SSEUP)))
			c->eb[i] = SSE;
}

struct cursor {
	unsigned gpr, sse;
	uint32_t stack;         /* next free byte above the caller SP */
};

/* The registers of a value classified INTEGER/SSE/SSEUP, eightbyte by
 * eightbyte: `gprs` lists the integer registers in turn.  The two halves
 * of an xmm register merge into one piece (elt_plan_piece), so a vector is
 * read in place. */
static void in_registers(struct elt_plan_builder *b, const struct classification *c, uint32_t size,
			 const uint32_t *gprs, unsigned *gpr, unsigned *xmm)
{
	uint32_t i, length, xmm_start = 0;
	unsigned last_xmm = 0;

	for (i = 0; i < c->count; i++) {
		length = size - 8 * i < 8 ? size - 8 * i : 8;
		switch (c->eb[i]) {
		case INTEGER:
			elt_plan_piece(b, ELT_SRC_FRAME, gprs[(*gpr)++], length, 8 * i);
			break;
		case SSE:
			last_xmm = (*xmm)++;
			xmm_start = i;
			elt_plan_piece(b, ELT_SRC_FRAME, VEC_OFFSET(last_xmm), length, 8 * i);
			break;
		case SSEUP:
			elt_plan_piece(b, ELT_SRC_FRAME, VEC_OFFSET(last_xmm) + 8 * (i - xmm_start),
				       length, 8 * i);
			break;
		default:        /* NO_CLASS: padding, in no register */
			break;
		}
	}
}

static void on_stack(struct elt_plan_builder *b, struct cursor *c, uint32_t size,
		     uint32_t align)
{
	c->stack = elt_align_up(c->stack, align < 8 ? 8 : align);
	elt_plan_piece(b, ELT_SRC_STACK, c->stack, size, 0);
	c->stack += elt_align_up(size, 8);
}

/* Places one argument: in registers when all of its eightbytes find one,
 * else wholly on the stack. */
static int place_argument(struct elt_plan_builder *b, void *cursor,
			  const elt_type *t, int variadic, const char **why)
{
	struct cursor *c = cursor;
	struct classification cls;
	unsigned ngpr = 0, nsse = 0, i;

	(void)variadic;         /* placed like fixed arguments */
	classify(t, &cls);
	if (cls.undecodable) {
		*why = cls.undecodable;
		return 0;
	}
	for (i = 0; !cls.memory && i < cls.count; i++) {
		if (cls.eb[i] == INTEGER)
			ngpr++;
		else if (cls.eb[i] == SSE)
			nsse++;
		else if (cls.eb[i] != SSEUP && cls.eb[i] != NO_CLASS)
			cls.memory = 1; /* X87, X87UP, COMPLEX_X87: passed in memory */
	}
	if (cls.memory || c->gpr + ngpr > 6 || c->sse + nsse > 8) {
		if (t->size)
			on_stack(b, c, t->size, t->align);
		return 1;
	}
	in_registers(b, &cls, t->size, gpr_offset, &c->gpr, &c->sse);
	return 1;
}

static int place_return(struct elt_plan_builder *b, void *cursor, const elt_type *t,
			const char **why)
{
	static const uint32_t return_gprs[2] = { ELT_X86_64_RAX, ELT_X86_64_RDX };
	struct cursor *c = cursor;
	struct classification cls;
	unsigned gpr = 0, xmm = 0;

	if (t->kind == ELT_TYPE_VOID || t->size == 0)
		return 1;
	classify(t, &cls);
	if (cls.undecodable) {
		*why = cls.undecodable;
		return 0;
	}
	if (cls.memory) {
		/* The caller's buffer: its address came in %rdi, taking the
		 * first integer register, and goes back in %rax. */
		c->gpr = 1;
		elt_plan_piece(b, ELT_SRC_FRAME_REF, ELT_X86_64_RAX, t->size, 0);
		return 1;
	}
	if (cls.eb[0] == X87 || cls.eb[0] == COMPLEX_X87) {
		/* st0 (and st1), saved in adjacent 16-byte slots */
		elt_plan_piece(b, ELT_SRC_FRAME, ELT_X86_64_X87, t->size, 0);
		return 1;
	}
	in_registers(b, &cls, t->size, return_gprs, &gpr, &xmm);
	return 1;
}

_Static_assert(sizeof(struct cursor) <= ELT_CURSOR_MAX, "cursor too large");

const struct elt_abi_rules elt_arch_rules = {
	/* no .begin: the cursor starts all zero */
	.place_return = place_return,
	.place_argument = place_argument,
	.undecoded_return_moves_arguments = 1,
};
