/*
 * The signature language: a compact string such as "l(K i {f f} ...)" that
 * says a function's return and parameter types.  This file parses it and
 * lays every type out the way the compiler of this build does, so the
 * per-ABI code can later find each argument in the saved registers.
 * doc/signature.md is the language reference.
 *
 * Nothing here hard-codes a size or an alignment: every number comes from
 * sizeof/offsetof of real C types, so one source serves every ABI.
 *
 * How it works: a recursive-descent parser (one function per grammar rule)
 * builds the types into temporary growable arrays of nodes that refer to
 * each other by index.  When the whole string is valid, build() measures
 * the result and copies it into ONE allocation (the elt_signature, the
 * types, the pointer and offset arrays, a copy of the text), turning the
 * indices into pointers.  elt_signature_free() is then a single free(),
 * and the result is immutable, so any number of threads may read it.
 */
#include "internal.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PARAMS 127
#define MAX_DEPTH 32                    /* struct/union nesting */
#define MAX_SIZE 0x7fffffffu            /* a type's size is below 2^31 */
#define MAX_COUNT 0x7fffffffu           /* largest array/vector count */
#define MAX_VECTOR 64                   /* largest vector, in bytes */
#define NONE UINT32_MAX                 /* "no node": also the error return */

/* ------------------------------------------------------------------------ */
/* The ABI's numbers, taken from the compiler                                */

/*
 * A type's alignment as a struct member is what decides layout, and it is
 * not always _Alignof: on i386 a double or an int64 is 8-aligned alone but
 * 4-aligned inside a struct.  So each alignment is measured as the offset
 * of a member that follows a char.
 */
#define PROBE(name, T) struct probe_##name { char c; T x; }
#define MEMBER_ALIGN(name) ((uint32_t)offsetof(struct probe_##name, x))

#ifdef __SIZEOF_INT128__
/* __extension__ keeps -pedantic builds quiet about the GNU type. */
__extension__ typedef __int128 sint128;
__extension__ typedef unsigned __int128 uint128;
#endif

PROBE(bool, _Bool);
PROBE(char, char);
PROBE(i8, int8_t);
PROBE(i16, int16_t);
PROBE(i32, int32_t);
PROBE(i64, int64_t);
#ifdef __SIZEOF_INT128__
PROBE(i128, sint128);
#endif
PROBE(ptr, void *);
PROBE(flt, float);
PROBE(dbl, double);
PROBE(ldbl, long double);
PROBE(cflt, _Complex float);
PROBE(cdbl, _Complex double);
PROBE(cldbl, _Complex long double);

struct layout {
	uint32_t size;
	uint32_t align;
};

/* Indexed by kind; size 0 marks a type the compiler lacks (except void). */
static const struct layout scalar_layout[ELT_TYPE_COMPLEX] = {
	[ELT_TYPE_VOID] = { 0, 1 },
	[ELT_TYPE_BOOL] = { sizeof(_Bool), MEMBER_ALIGN(bool) },
	[ELT_TYPE_CHAR] = { sizeof(char), MEMBER_ALIGN(char) },
	[ELT_TYPE_SINT8] = { sizeof(int8_t), MEMBER_ALIGN(i8) },
	[ELT_TYPE_UINT8] = { sizeof(uint8_t), MEMBER_ALIGN(i8) },
	[ELT_TYPE_SINT16] = { sizeof(int16_t), MEMBER_ALIGN(i16) },
	[ELT_TYPE_UINT16] = { sizeof(uint16_t), MEMBER_ALIGN(i16) },
	[ELT_TYPE_SINT32] = { sizeof(int32_t), MEMBER_ALIGN(i32) },
	[ELT_TYPE_UINT32] = { sizeof(uint32_t), MEMBER_ALIGN(i32) },
	[ELT_TYPE_SINT64] = { sizeof(int64_t), MEMBER_ALIGN(i64) },
	[ELT_TYPE_UINT64] = { sizeof(uint64_t), MEMBER_ALIGN(i64) },
#ifdef __SIZEOF_INT128__
	[ELT_TYPE_SINT128] = { sizeof(sint128), MEMBER_ALIGN(i128) },
	[ELT_TYPE_UINT128] = { sizeof(uint128), MEMBER_ALIGN(i128) },
#endif
	[ELT_TYPE_POINTER] = { sizeof(void *), MEMBER_ALIGN(ptr) },
	[ELT_TYPE_FLOAT] = { sizeof(float), MEMBER_ALIGN(flt) },
	[ELT_TYPE_DOUBLE] = { sizeof(double), MEMBER_ALIGN(dbl) },
	[ELT_TYPE_LONGDOUBLE] = { sizeof(long double), MEMBER_ALIGN(ldbl) },
};

/* _Complex float, double, long double; the element kind picks the entry. */
static const struct layout complex_layout[3] = {
	{ sizeof(_Complex float), MEMBER_ALIGN(cflt) },
	{ sizeof(_Complex double), MEMBER_ALIGN(cdbl) },
	{ sizeof(_Complex long double), MEMBER_ALIGN(cldbl) },
};

/*
 * A vector's alignment is measured on a GCC vector of the same element
 * class and byte size: mostly it is the size (capped by the target), but
 * not always, e.g. on i386 an 8-byte integer vector (an MMX mode) is
 * 4-aligned in a struct while an 8-byte float or double vector is
 * 8-aligned.  Signedness does not change a vector's mode, so one probe per
 * element width and class serves both.  Sizes below the element's are
 * impossible and stay 0.
 */
#define VECTOR_PROBE(cls, E, n)                                            \
	typedef E vec_##cls##_##n __attribute__((vector_size(n)));         \
	struct probe_vec_##cls##_##n { char c; vec_##cls##_##n x; }
/* The sizes every element class has: 16, 32 and 64 bytes. */
#define VECTOR_PROBES(cls, E)                                              \
	VECTOR_PROBE(cls, E, 16); VECTOR_PROBE(cls, E, 32);                \
	VECTOR_PROBE(cls, E, 64)
#define VECTOR_ALIGN(cls, n) MEMBER_ALIGN(vec_##cls##_##n)
#define VECTOR_ALIGNS(cls)                                                 \
	[4] = VECTOR_ALIGN(cls, 16), [5] = VECTOR_ALIGN(cls, 32),          \
	[6] = VECTOR_ALIGN(cls, 64)

VECTOR_PROBE(i8, int8_t, 1);
VECTOR_PROBE(i8, int8_t, 2);
VECTOR_PROBE(i8, int8_t, 4);
VECTOR_PROBE(i8, int8_t, 8);
VECTOR_PROBES(i8, int8_t);
VECTOR_PROBE(i16, int16_t, 2);
VECTOR_PROBE(i16, int16_t, 4);
VECTOR_PROBE(i16, int16_t, 8);
VECTOR_PROBES(i16, int16_t);
VECTOR_PROBE(i32, int32_t, 4);
VECTOR_PROBE(i32, int32_t, 8);
VECTOR_PROBES(i32, int32_t);
VECTOR_PROBE(i64, int64_t, 8);
VECTOR_PROBES(i64, int64_t);
#ifdef __SIZEOF_INT128__
VECTOR_PROBES(i128, sint128);
#endif
VECTOR_PROBE(f32, float, 4);
VECTOR_PROBE(f32, float, 8);
VECTOR_PROBES(f32, float);
VECTOR_PROBE(f64, double, 8);
VECTOR_PROBES(f64, double);

enum vector_class { VEC_I8, VEC_I16, VEC_I32, VEC_I64, VEC_I128, VEC_F32,
		    VEC_F64, VEC_CLASSES };

/* Indexed by element class and log2 of the vector's byte size. */
static const uint32_t vector_align[VEC_CLASSES][7] = {
	[VEC_I8] = { VECTOR_ALIGN(i8, 1), VECTOR_ALIGN(i8, 2),
		     VECTOR_ALIGN(i8, 4), VECTOR_ALIGN(i8, 8),
		     VECTOR_ALIGNS(i8) },
	[VEC_I16] = { [1] = VECTOR_ALIGN(i16, 2), VECTOR_ALIGN(i16, 4),
		      VECTOR_ALIGN(i16, 8), VECTOR_ALIGNS(i16) },
	[VEC_I32] = { [2] = VECTOR_ALIGN(i32, 4), VECTOR_ALIGN(i32, 8),
		      VECTOR_ALIGNS(i32) },
	[VEC_I64] = { [3] = VECTOR_ALIGN(i64, 8), VECTOR_ALIGNS(i64) },
#ifdef __SIZEOF_INT128__
	[VEC_I128] = { VECTOR_ALIGNS(i128) },
#endif
	[VEC_F32] = { [2] = VECTOR_ALIGN(f32, 4), VECTOR_ALIGN(f32, 8),
		      VECTOR_ALIGNS(f32) },
	[VEC_F64] = { [3] = VECTOR_ALIGN(f64, 8), VECTOR_ALIGNS(f64) },
};

static enum vector_class vector_class(elt_type_kind kind)
{
	switch (kind) {
	case ELT_TYPE_SINT8: case ELT_TYPE_UINT8: return VEC_I8;
	case ELT_TYPE_SINT16: case ELT_TYPE_UINT16: return VEC_I16;
	case ELT_TYPE_SINT32: case ELT_TYPE_UINT32: return VEC_I32;
	case ELT_TYPE_SINT64: case ELT_TYPE_UINT64: return VEC_I64;
	case ELT_TYPE_SINT128: case ELT_TYPE_UINT128: return VEC_I128;
	case ELT_TYPE_FLOAT: return VEC_F32;
	default: return VEC_F64;
	}
}

static const char *const kind_names[ELT_TYPE_KIND_COUNT] = {
	[ELT_TYPE_VOID] = "void",
	[ELT_TYPE_BOOL] = "bool",
	[ELT_TYPE_CHAR] = "char",
	[ELT_TYPE_SINT8] = "int8",
	[ELT_TYPE_UINT8] = "uint8",
	[ELT_TYPE_SINT16] = "int16",
	[ELT_TYPE_UINT16] = "uint16",
	[ELT_TYPE_SINT32] = "int32",
	[ELT_TYPE_UINT32] = "uint32",
	[ELT_TYPE_SINT64] = "int64",
	[ELT_TYPE_UINT64] = "uint64",
	[ELT_TYPE_SINT128] = "int128",
	[ELT_TYPE_UINT128] = "uint128",
	[ELT_TYPE_POINTER] = "pointer",
	[ELT_TYPE_FLOAT] = "float",
	[ELT_TYPE_DOUBLE] = "double",
	[ELT_TYPE_LONGDOUBLE] = "long double",
	[ELT_TYPE_COMPLEX] = "complex",
	[ELT_TYPE_VECTOR] = "vector",
	[ELT_TYPE_STRUCT] = "struct",
	[ELT_TYPE_UNION] = "union",
	[ELT_TYPE_ARRAY] = "array",
};

const char *elt_type_kind_name(elt_type_kind kind)
{
	if ((unsigned)kind < ELT_TYPE_KIND_COUNT)
		return kind_names[kind];
	return "unknown";
}

/* The kind a one-letter scalar code stands for, or -1. */
static int scalar_kind(char c)
{
	switch (c) {
	case 'v': return ELT_TYPE_VOID;
	case 'z': return ELT_TYPE_BOOL;
	case 'c': return ELT_TYPE_CHAR;
	case 'b': return ELT_TYPE_SINT8;
	case 'B': return ELT_TYPE_UINT8;
	case 'h': return ELT_TYPE_SINT16;
	case 'H': return ELT_TYPE_UINT16;
	case 'i': return ELT_TYPE_SINT32;
	case 'I': return ELT_TYPE_UINT32;
	case 'l': return ELT_TYPE_SINT64;
	case 'L': return ELT_TYPE_UINT64;
	case 'q': return ELT_TYPE_SINT128;
	case 'Q': return ELT_TYPE_UINT128;
	case 'p': return ELT_TYPE_POINTER;
	case 'f': return ELT_TYPE_FLOAT;
	case 'd': return ELT_TYPE_DOUBLE;
	case 'D': return ELT_TYPE_LONGDOUBLE;
	default: return -1;
	}
}

/* ------------------------------------------------------------------------ */
/* Parser state                                                              */

/* A type under construction; the links are indices, not pointers, because
 * the arrays move when they grow. */
struct node {
	elt_type_kind kind;
	uint32_t size;
	uint32_t align;
	uint32_t flags;
	uint32_t count;
	uint32_t element;       /* array, vector, complex: a node, else NONE */
	uint32_t first;         /* struct, union: first entry in cursor.members */
	size_t at;              /* array: where its '[' is, for errors */
};

/* A member of a struct or union: its type and byte offset. */
struct slot {
	uint32_t node;
	uint32_t offset;
};

enum role { ROLE_RETURN, ROLE_PARAM, ROLE_MEMBER };

#define INLINE_CAP 32   /* most signatures fit without a heap allocation */

struct cursor {
	const char *text;
	size_t len;
	size_t pos;
	unsigned depth;                 /* open structs and unions */

	struct node *nodes;
	size_t nnodes, nodes_cap;
	/* Members of the aggregates still open, innermost last: a struct
	 * pushes its members here and moves them to `members` when it
	 * closes, so each aggregate's members end up contiguous there. */
	struct slot *pending;
	size_t npending, pending_cap;
	struct slot *members;
	size_t nmembers, members_cap;
	/* Scalars are shared: one node per kind, whatever the count of uses. */
	uint32_t scalar[ELT_TYPE_COMPLEX];

	uint32_t params[MAX_PARAMS];
	uint32_t ret, nparams, nfixed;
	int32_t this_index, continuation_index;
	bool variadic;

	/* The first error; parsing stops at it. */
	elt_status status;
	size_t err_pos;
	char message[sizeof(((elt_parse_error *)0)->message)];

	struct node nodes_buf[INLINE_CAP];
	struct slot pending_buf[INLINE_CAP];
	struct slot members_buf[INLINE_CAP];
};

static void cursor_init(struct cursor *cur, const char *text)
{
	memset(cur, 0, sizeof(*cur));
	cur->text = text;
	cur->len = strlen(text);
	cur->nodes = cur->nodes_buf;
	cur->nodes_cap = INLINE_CAP;
	cur->pending = cur->pending_buf;
	cur->pending_cap = INLINE_CAP;
	cur->members = cur->members_buf;
	cur->members_cap = INLINE_CAP;
	for (size_t i = 0; i < ELT_TYPE_COMPLEX; i++)
		cur->scalar[i] = NONE;
	cur->ret = NONE;
	cur->this_index = -1;
	cur->continuation_index = -1;
	cur->status = ELT_OK;
}

static void cursor_release(struct cursor *cur)
{
	if (cur->nodes != cur->nodes_buf)
		free(cur->nodes);
	if (cur->pending != cur->pending_buf)
		free(cur->pending);
	if (cur->members != cur->members_buf)
		free(cur->members);
}

/* Records the first error, "position N: ...", and returns NONE so that
 * parse functions can `return fail(...)`. */
static uint32_t fail(struct cursor *cur, elt_status status, size_t pos,
		     const char *fmt, ...) ELT_PRINTF(4, 5);

static uint32_t fail(struct cursor *cur, elt_status status, size_t pos,
		     const char *fmt, ...)
{
	va_list ap;
	int n;

	if (cur->status != ELT_OK)
		return NONE;
	cur->status = status;
	cur->err_pos = pos;
	n = snprintf(cur->message, sizeof(cur->message), "position %zu: ", pos);
	if (n > 0 && (size_t)n < sizeof(cur->message)) {
		va_start(ap, fmt);
		vsnprintf(cur->message + n, sizeof(cur->message) - (size_t)n,
			  fmt, ap);
		va_end(ap);
	}
	return NONE;
}

/* Names the byte `c` for a message: "'x'", "byte 0x07" or "the end". */
struct found {
	char text[32];
};

static struct found found(char c)
{
	struct found f;
	unsigned char u = (unsigned char)c;

	if (u == 0)
		snprintf(f.text, sizeof(f.text), "the end of the signature");
	else if (u > 0x20 && u < 0x7f)
		snprintf(f.text, sizeof(f.text), "'%c'", c);
	else
		snprintf(f.text, sizeof(f.text), "byte 0x%02x", u);
	return f;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Skips whitespace and returns the next byte ('\0' at the end). */
static char skip_ws(struct cursor *cur)
{
	while (is_space(cur->text[cur->pos]))
		cur->pos++;
	return cur->text[cur->pos];
}

/* Doubles an array that starts in the cursor's inline buffer `inline_buf`
 * and moves to the heap when it outgrows it. */
static bool grow(void **data, size_t *cap, size_t esize, void *inline_buf)
{
	size_t ncap;
	void *p;

	if (*cap > SIZE_MAX / 2 / esize)
		return false;
	ncap = *cap * 2;
	if (*data == inline_buf) {
		p = malloc(ncap * esize);
		if (p)
			memcpy(p, *data, *cap * esize);
	} else {
		p = realloc(*data, ncap * esize);
	}
	if (!p)
		return false;
	*data = p;
	*cap = ncap;
	return true;
}

static uint32_t new_node(struct cursor *cur, elt_type_kind kind,
			 uint32_t size, uint32_t align)
{
	struct node *n;

	/* Node indices must stay below NONE. */
	if (cur->nnodes >= NONE)
		return fail(cur, ELT_E_NO_MEMORY, cur->pos, "out of memory");
	if (cur->nnodes == cur->nodes_cap &&
	    !grow((void **)&cur->nodes, &cur->nodes_cap, sizeof(struct node),
		  cur->nodes_buf))
		return fail(cur, ELT_E_NO_MEMORY, cur->pos, "out of memory");
	n = &cur->nodes[cur->nnodes];
	memset(n, 0, sizeof(*n));
	n->kind = kind;
	n->size = size;
	n->align = align;
	n->element = NONE;
	return (uint32_t)cur->nnodes++;
}

static uint32_t scalar_node(struct cursor *cur, elt_type_kind kind)
{
	if (cur->scalar[kind] == NONE)
		cur->scalar[kind] = new_node(cur, kind, scalar_layout[kind].size,
					     scalar_layout[kind].align);
	return cur->scalar[kind];
}

static bool push_slot(struct cursor *cur, struct slot **data, size_t *n,
		      size_t *cap, struct slot *inline_buf, struct slot s)
{
	if (*n == *cap &&
	    !grow((void **)data, cap, sizeof(struct slot), inline_buf)) {
		fail(cur, ELT_E_NO_MEMORY, cur->pos, "out of memory");
		return false;
	}
	(*data)[(*n)++] = s;
	return true;
}

static uint64_t align_up(uint64_t x, uint32_t align)
{
	return (x + align - 1) / align * align;
}

/* ------------------------------------------------------------------------ */
/* The grammar, one function per rule                                        */

static uint32_t parse_type(struct cursor *cur, enum role role);

/* A scalar code at the cursor, already known to be one. */
static uint32_t parse_scalar(struct cursor *cur, enum role role)
{
	size_t at = cur->pos;
	int code = scalar_kind(cur->text[at]);
	elt_type_kind kind = (elt_type_kind)code;

	if (kind == ELT_TYPE_VOID && role == ROLE_PARAM)
		return fail(cur, ELT_E_BAD_SIGNATURE, at,
			    "void is only valid as the return type "
			    "(write () for no parameters)");
	if (kind == ELT_TYPE_VOID && role != ROLE_RETURN)
		return fail(cur, ELT_E_BAD_SIGNATURE, at,
			    "void is only valid as the return type");
	/* Types this compiler lacks are the ABI's limit, not a typo. */
	if (kind != ELT_TYPE_VOID && scalar_layout[kind].size == 0)
		return fail(cur, ELT_E_UNSUPPORTED, at,
			    "%s (%c) is not supported on this ABI",
			    kind == ELT_TYPE_SINT128 ? "__int128"
						     : "unsigned __int128",
			    cur->text[at]);
	cur->pos++;
	return scalar_node(cur, kind);
}

/*
 * A decimal count: for "[N]" and "V N".  Digits are one token, so no
 * whitespace inside.  Values past MAX_COUNT are rejected whole (rather than
 * wrapping), however many digits they have.
 */
static bool parse_count(struct cursor *cur, const char *what, uint32_t *out)
{
	size_t at = cur->pos;
	uint64_t value = 0;
	bool huge = false;

	while (is_digit(cur->text[cur->pos])) {
		value = value * 10 + (uint64_t)(cur->text[cur->pos] - '0');
		if (value > MAX_COUNT) {
			huge = true;
			value = MAX_COUNT;  /* keeps the product from wrapping */
		}
		cur->pos++;
	}
	if (huge) {
		fail(cur, ELT_E_BAD_SIGNATURE, at,
		     "%s is too large (at most %u)", what, MAX_COUNT);
		return false;
	}
	if (value == 0) {
		fail(cur, ELT_E_BAD_SIGNATURE, at, "%s must be at least 1",
		     what);
		return false;
	}
	*out = (uint32_t)value;
	return true;
}

/* complex := 'C' ('f' | 'd' | 'D') */
static uint32_t parse_complex(struct cursor *cur)
{
	uint32_t elem, node;
	int which;
	char c;

	cur->pos++;                     /* 'C' */
	c = skip_ws(cur);
	switch (c) {
	case 'f': which = 0; break;
	case 'd': which = 1; break;
	case 'D': which = 2; break;
	default:
		return fail(cur, ELT_E_BAD_SIGNATURE, cur->pos,
			    "complex element must be f, d or D, found %s",
			    found(c).text);
	}
	elem = parse_scalar(cur, ROLE_MEMBER);
	if (elem == NONE)
		return NONE;
	node = new_node(cur, ELT_TYPE_COMPLEX, complex_layout[which].size,
			complex_layout[which].align);
	if (node == NONE)
		return NONE;
	cur->nodes[node].element = elem;
	cur->nodes[node].count = 2;     /* real and imaginary parts */
	return node;
}

/* vector := 'V' COUNT elem */
static uint32_t parse_vector(struct cursor *cur)
{
	size_t at = cur->pos;
	uint32_t count, elem, node, log2;
	uint64_t size;
	char c;
	int kind;

	cur->pos++;                     /* 'V' */
	c = skip_ws(cur);
	if (!is_digit(c))
		return fail(cur, ELT_E_BAD_SIGNATURE, cur->pos,
			    "expected the element count after 'V', found %s",
			    found(c).text);
	if (!parse_count(cur, "vector element count", &count))
		return NONE;
	c = skip_ws(cur);
	kind = scalar_kind(c);
	/* Integer and float/double elements only, as GCC's vector_size. */
	if (kind < ELT_TYPE_SINT8 || kind > ELT_TYPE_DOUBLE ||
	    kind == ELT_TYPE_POINTER)
		return fail(cur, ELT_E_BAD_SIGNATURE, cur->pos,
			    "vector element must be one of b B h H i I l L q Q "
			    "f d, found %s", found(c).text);
	elem = parse_scalar(cur, ROLE_MEMBER);
	if (elem == NONE)
		return NONE;
	size = (uint64_t)count * cur->nodes[elem].size;
	if (size & (size - 1))
		return fail(cur, ELT_E_BAD_SIGNATURE, at,
			    "vector of %llu bytes: the size must be a power "
			    "of two", (unsigned long long)size);
	if (size > MAX_VECTOR)
		return fail(cur, ELT_E_UNSUPPORTED, at,
			    "vector of %llu bytes is larger than %d bytes",
			    (unsigned long long)size, MAX_VECTOR);
	for (log2 = 0; (1u << log2) < size; log2++)
		;
	node = new_node(cur, ELT_TYPE_VECTOR, (uint32_t)size,
			vector_align[vector_class((elt_type_kind)kind)][log2]);
	if (node == NONE)
		return NONE;
	cur->nodes[node].element = elem;
	cur->nodes[node].count = count;
	return node;
}

/*
 * The "[N][M]..." after a member's type.  int[2][3] is an array of 2
 * arrays of 3 ints, so the last bracket is the innermost type.  The
 * dimensions are parsed left to right into consecutive nodes (each the
 * element of the one before), then sized right to left: a loop rather than
 * recursion, so no input can exhaust the stack.
 */
static uint32_t parse_array_dims(struct cursor *cur, uint32_t elem)
{
	uint32_t first = (uint32_t)cur->nnodes, last, count, node;
	char c = skip_ws(cur);

	if (c != '[')
		return elem;
	while (c == '[') {
		size_t open = cur->pos;

		cur->pos++;
		c = skip_ws(cur);
		if (!is_digit(c))
			return fail(cur, ELT_E_BAD_SIGNATURE, cur->pos,
				    "expected an array count after '[', "
				    "found %s", found(c).text);
		if (!parse_count(cur, "array count", &count))
			return NONE;
		c = skip_ws(cur);
		if (c != ']')
			return fail(cur, ELT_E_BAD_SIGNATURE, cur->pos,
				    "expected ']' to close the array count "
				    "opened at position %zu, found %s", open,
				    found(c).text);
		cur->pos++;
		node = new_node(cur, ELT_TYPE_ARRAY, 0, 1);
		if (node == NONE)
			return NONE;
		cur->nodes[node].count = count;
		cur->nodes[node].at = open;
		cur->nodes[node].element = node + 1;
		c = skip_ws(cur);
	}
	last = (uint32_t)cur->nnodes - 1;
	cur->nodes[last].element = elem;
	for (uint32_t i = last + 1; i-- > first;) {
		struct node *n = &cur->nodes[i];
		const struct node *e = &cur->nodes[n->element];
		uint64_t size = (uint64_t)n->count * e->size;

		if (size > MAX_SIZE)
			return fail(cur, ELT_E_BAD_SIGNATURE, n->at,
				    "array is too large: a type's size must "
				    "be below 2^31 bytes");
		n->size = (uint32_t)size;
		n->align = e->align;
	}
	return first;
}

/* member := type { '[' COUNT ']' } */
static uint32_t parse_member(struct cursor *cur)
{
	uint32_t t = parse_type(cur, ROLE_MEMBER);

	if (t == NONE)
		return NONE;
	return parse_array_dims(cur, t);
}

/*
 * struct := ['!'] '{' { member } '}'
 * union  := ['!'] '<' { member } '>'
 * C layout: each member at the next multiple of its alignment, the size
 * rounded up to the largest alignment.  Packed (GCC's attribute) means
 * alignment 1 for every member and for the whole, so no padding at all; a
 * nested unpacked struct keeps its own inner layout.
 */
static uint32_t parse_aggregate(struct cursor *cur)
{
	bool packed = false, is_union;
	const char *what;
	char c = cur->text[cur->pos], close;
	size_t open, base;
	uint64_t size = 0, rounded;
	uint32_t align = 1, node;

	if (c == '!') {
		packed = true;
		cur->pos++;
		c = skip_ws(cur);
		if (c != '{' && c != '<')
			return fail(cur, ELT_E_BAD_SIGNATURE, cur->pos,
				    "expected '{' or '<' after '!' (packed), "
				    "found %s", found(c).text);
	}
	open = cur->pos;
	is_union = c == '<';
	close = is_union ? '>' : '}';
	what = is_union ? "union" : "struct";
	/* The depth bound is also what bounds this parser's recursion. */
	if (cur->depth == MAX_DEPTH)
		return fail(cur, ELT_E_BAD_SIGNATURE, open,
			    "structs and unions may nest at most %d deep",
			    MAX_DEPTH);
	cur->depth++;
	cur->pos++;
	base = cur->npending;

	for (;;) {
		size_t at;
		uint32_t m, offset;
		const struct node *mn;

		c = skip_ws(cur);
		if (c == close)
			break;
		if (c == '\0' || c == ')' || c == '}' || c == '>')
			return fail(cur, ELT_E_BAD_SIGNATURE, cur->pos,
				    "expected '%c' to close the %s opened at "
				    "position %zu, found %s", close, what, open,
				    found(c).text);
		at = cur->pos;
		m = parse_member(cur);
		if (m == NONE)
			return NONE;
		mn = &cur->nodes[m];
		if (is_union) {
			offset = 0;
			if (mn->size > size)
				size = mn->size;
		} else {
			uint64_t o = packed ? size : align_up(size, mn->align);

			size = o + mn->size;
			/* o <= size; checked below before any narrowing. */
			offset = size > MAX_SIZE ? 0 : (uint32_t)o;
		}
		if (!packed && mn->align > align)
			align = mn->align;
		if (size > MAX_SIZE)
			return fail(cur, ELT_E_BAD_SIGNATURE, at,
				    "%s is too large: a type's size must be "
				    "below 2^31 bytes", what);
		if (!push_slot(cur, &cur->pending, &cur->npending,
			       &cur->pending_cap, cur->pending_buf,
			       (struct slot){ m, offset }))
			return NONE;
	}
	cur->pos++;                     /* the closing bracket */
	cur->depth--;

	rounded = align_up(size, align);
	if (rounded > MAX_SIZE)
		return fail(cur, ELT_E_BAD_SIGNATURE, open,
			    "%s is too large: a type's size must be below "
			    "2^31 bytes", what);
	node = new_node(cur, is_union ? ELT_TYPE_UNION : ELT_TYPE_STRUCT,
			(uint32_t)rounded, align);
	if (node == NONE)
		return NONE;
	cur->nodes[node].flags = packed ? ELT_TYPE_PACKED : 0;
	cur->nodes[node].count = (uint32_t)(cur->npending - base);
	cur->nodes[node].first = (uint32_t)cur->nmembers;
	for (size_t i = base; i < cur->npending; i++)
		if (!push_slot(cur, &cur->members, &cur->nmembers,
			       &cur->members_cap, cur->members_buf,
			       cur->pending[i]))
			return NONE;
	cur->npending = base;
	return node;
}

/* type := scalar | complex | vector | struct | union */
static uint32_t parse_type(struct cursor *cur, enum role role)
{
	char c = skip_ws(cur);
	size_t at = cur->pos;

	if (scalar_kind(c) >= 0)
		return parse_scalar(cur, role);
	switch (c) {
	case 'C':
		return parse_complex(cur);
	case 'V':
		return parse_vector(cur);
	case '!':
	case '{':
	case '<':
		return parse_aggregate(cur);
	case 'T':
		return fail(cur, ELT_E_BAD_SIGNATURE, at,
			    "T (this) is only valid as a parameter");
	case 'K':
		return fail(cur, ELT_E_BAD_SIGNATURE, at,
			    "K (the continuation) is only valid as a "
			    "parameter");
	case '.':
		return fail(cur, ELT_E_BAD_SIGNATURE, at,
			    "'...' is only valid in the parameter list");
	case '[':
		return fail(cur, ELT_E_BAD_SIGNATURE, at,
			    "expected a type before '['");
	}
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
		return fail(cur, ELT_E_BAD_SIGNATURE, at,
			    "unknown type code '%c'", c);
	return fail(cur, ELT_E_BAD_SIGNATURE, at, "expected a type, found %s",
		    found(c).text);
}

/* "...": marks where the fixed parameters end. */
static bool parse_ellipsis(struct cursor *cur)
{
	size_t at = cur->pos;

	if (strncmp(cur->text + at, "...", 3) != 0) {
		fail(cur, ELT_E_BAD_SIGNATURE, at, "expected '...'");
		return false;
	}
	if (cur->variadic) {
		fail(cur, ELT_E_BAD_SIGNATURE, at,
		     "'...' may appear only once");
		return false;
	}
	cur->variadic = true;
	cur->nfixed = cur->nparams;
	cur->pos += 3;
	return true;
}

/* T and K: hidden pointer parameters whose index is remembered. */
static uint32_t parse_hidden(struct cursor *cur)
{
	size_t at = cur->pos;
	char c = cur->text[at];
	const char *name = c == 'T' ? "T (this)" : "K (the continuation)";
	int32_t *index = c == 'T' ? &cur->this_index
				  : &cur->continuation_index;

	/* Hidden parameters belong to the function, not to one call site. */
	if (cur->variadic)
		return fail(cur, ELT_E_BAD_SIGNATURE, at,
			    "%s must come before '...'", name);
	if (*index >= 0)
		return fail(cur, ELT_E_BAD_SIGNATURE, at,
			    "%c may appear only once", c);
	cur->pos++;
	*index = (int32_t)cur->nparams;
	return scalar_node(cur, ELT_TYPE_POINTER);
}

/* A variadic argument undergoes C's default argument promotions: no call
 * passes a bool, char, short or float there, and describing one would have
 * the getters read a narrower value than the one passed. */
static uint32_t check_promoted(struct cursor *cur, uint32_t t, size_t at)
{
	switch (cur->nodes[t].kind) {
	case ELT_TYPE_FLOAT:
		return fail(cur, ELT_E_BAD_SIGNATURE, at,
			    "a variadic float is passed as a double: write d");
	case ELT_TYPE_BOOL:
	case ELT_TYPE_CHAR:
	case ELT_TYPE_SINT8:
	case ELT_TYPE_UINT8:
	case ELT_TYPE_SINT16:
	case ELT_TYPE_UINT16:
		return fail(cur, ELT_E_BAD_SIGNATURE, at,
			    "a variadic %s is passed as an int: write i",
			    elt_type_kind_name(cur->nodes[t].kind));
	default:
		return t;
	}
}

/* params := { param } [ '...' { param } ]   (after the '(') */
static void parse_params(struct cursor *cur)
{
	size_t open = cur->pos;

	cur->pos++;                     /* '(' */
	for (;;) {
		char c = skip_ws(cur);
		size_t at = cur->pos;
		uint32_t t;

		if (c == ')') {
			cur->pos++;
			return;
		}
		if (c == '\0') {
			fail(cur, ELT_E_BAD_SIGNATURE, at,
			     "expected ')' to close the parameter list opened "
			     "at position %zu", open);
			return;
		}
		if (c == '.') {
			if (!parse_ellipsis(cur))
				return;
			continue;
		}
		if (cur->nparams == MAX_PARAMS) {
			fail(cur, ELT_E_BAD_SIGNATURE, at,
			     "too many parameters (at most %d)", MAX_PARAMS);
			return;
		}
		if (c == 'T' || c == 'K') {
			t = parse_hidden(cur);
		} else {
			t = parse_type(cur, ROLE_PARAM);
			if (t != NONE && skip_ws(cur) == '[')
				t = fail(cur, ELT_E_BAD_SIGNATURE, cur->pos,
					 "an array parameter decays to a "
					 "pointer: write p");
			if (t != NONE && cur->variadic)
				t = check_promoted(cur, t, at);
		}
		if (t == NONE)
			return;
		cur->params[cur->nparams++] = t;
	}
}

/* signature := type '(' params ')' */
static void parse_signature(struct cursor *cur)
{
	char c = skip_ws(cur);

	if (c == '\0') {
		fail(cur, ELT_E_BAD_SIGNATURE, cur->pos, "empty signature");
		return;
	}
	if (c == '(') {
		fail(cur, ELT_E_BAD_SIGNATURE, cur->pos,
		     "expected the return type before '('");
		return;
	}
	cur->ret = parse_type(cur, ROLE_RETURN);
	if (cur->ret == NONE)
		return;
	c = skip_ws(cur);
	if (c == '[') {
		fail(cur, ELT_E_BAD_SIGNATURE, cur->pos,
		     "a function cannot return an array (wrap it in a "
		     "struct)");
		return;
	}
	if (c != '(') {
		fail(cur, ELT_E_BAD_SIGNATURE, cur->pos,
		     "expected '(' after the return type, found %s",
		     found(c).text);
		return;
	}
	parse_params(cur);
	if (cur->status != ELT_OK)
		return;
	c = skip_ws(cur);
	if (c != '\0') {
		fail(cur, ELT_E_BAD_SIGNATURE, cur->pos,
		     "unexpected %s after the closing ')'", found(c).text);
		return;
	}
	if (!cur->variadic)
		cur->nfixed = cur->nparams;
}

/* ------------------------------------------------------------------------ */
/* The result: one allocation                                               */

static size_t align_size(size_t x, size_t align)
{
	return (x + align - 1) / align * align;
}

/*
 * Block layout, each part aligned for what it holds:
 *   elt_signature | elt_type[nnodes] | const elt_type *[nparams + nmembers]
 *   | uint32_t offsets[nmembers] | text + '\0'
 */
static elt_signature *build(const struct cursor *cur)
{
	size_t ntypes = cur->nnodes, nptrs = cur->nparams + cur->nmembers;
	size_t off_types = align_size(sizeof(elt_signature), _Alignof(elt_type));
	size_t off_ptrs = align_size(off_types + ntypes * sizeof(elt_type),
				     _Alignof(const elt_type *));
	size_t off_offsets = align_size(off_ptrs + nptrs * sizeof(elt_type *),
					_Alignof(uint32_t));
	size_t off_text = off_offsets + cur->nmembers * sizeof(uint32_t);
	char *block = malloc(off_text + cur->len + 1);
	elt_signature *sig;
	elt_type *types;
	const elt_type **ptrs, **member_ptrs;
	uint32_t *offsets;
	char *text;

	if (!block)
		return NULL;
	/* The offsets above are aligned for each part. */
	sig = (elt_signature *)(void *)block;
	types = (elt_type *)(void *)(block + off_types);
	ptrs = (const elt_type **)(void *)(block + off_ptrs);
	member_ptrs = ptrs + cur->nparams;
	offsets = (uint32_t *)(void *)(block + off_offsets);
	text = block + off_text;

	for (size_t i = 0; i < ntypes; i++) {
		const struct node *n = &cur->nodes[i];
		elt_type *t = &types[i];

		memset(t, 0, sizeof(*t));
		t->kind = n->kind;
		t->size = n->size;
		t->align = n->align;
		t->flags = n->flags;
		t->count = n->count;
		if (n->element != NONE)
			t->element = &types[n->element];
		if (n->kind == ELT_TYPE_STRUCT || n->kind == ELT_TYPE_UNION) {
			/* Never NULL, even for an empty struct. */
			t->members = member_ptrs + n->first;
			t->offsets = offsets + n->first;
		}
	}
	for (size_t i = 0; i < cur->nmembers; i++) {
		member_ptrs[i] = &types[cur->members[i].node];
		offsets[i] = cur->members[i].offset;
	}
	for (size_t i = 0; i < cur->nparams; i++)
		ptrs[i] = &types[cur->params[i]];
	memcpy(text, cur->text, cur->len + 1);

	memset(sig, 0, sizeof(*sig));
	sig->ret = &types[cur->ret];
	sig->nparams = cur->nparams;
	sig->nfixed = cur->nfixed;
	sig->this_index = cur->this_index;
	sig->continuation_index = cur->continuation_index;
	sig->flags = cur->variadic ? ELT_SIGNATURE_VARIADIC : 0;
	sig->params = ptrs;             /* never NULL, even for () */
	sig->text = text;
	return sig;
}

/*
 * Quotes the text for elt_last_error(): control and non-ASCII bytes
 * escaped, and a long text cut to a window around the error position so
 * that the message after it still fits in the 256-byte buffer.
 */
#define QUOTE_BODY 72

static void quote_text(const char *text, size_t len, size_t pos, char *out,
		       size_t outsz)
{
	size_t start = 0, end = len, o = 0, i;

	if (len > QUOTE_BODY) {
		start = pos > QUOTE_BODY / 2 ? pos - QUOTE_BODY / 2 : 0;
		if (start > len - QUOTE_BODY)
			start = len - QUOTE_BODY;
	}
	if (start > 0)
		o += (size_t)snprintf(out + o, outsz - o, "...");
	for (i = start; i < len; i++) {
		unsigned char u = (unsigned char)text[i];
		char esc[8];
		size_t n;

		if (u == '\n')
			n = (size_t)snprintf(esc, sizeof(esc), "\\n");
		else if (u == '\t')
			n = (size_t)snprintf(esc, sizeof(esc), "\\t");
		else if (u < 0x20 || u >= 0x7f)
			n = (size_t)snprintf(esc, sizeof(esc), "\\x%02x", u);
		else
			n = (size_t)snprintf(esc, sizeof(esc), "%c", u);
		if (o + n > QUOTE_BODY + 3)
			break;
		memcpy(out + o, esc, n);
		o += n;
	}
	end = i;
	if (end < len)
		o += (size_t)snprintf(out + o, outsz - o, "...");
	out[o] = '\0';
}

static elt_status report(const struct cursor *cur, elt_parse_error *err)
{
	char quoted[QUOTE_BODY + 16];

	if (err) {
		err->position = cur->err_pos;
		snprintf(err->message, sizeof(err->message), "%s",
			 cur->message);
	}
	quote_text(cur->text, cur->len, cur->err_pos, quoted, sizeof(quoted));
	return elt_set_error(cur->status, "signature '%s': %s", quoted,
			     cur->message);
}

elt_status elt_signature_parse(const char *text, elt_signature **out,
			       elt_parse_error *err)
{
	struct cursor cur;
	elt_signature *sig = NULL;

	if (out)
		*out = NULL;
	if (!text || !out) {
		const char *why = !text ? "the signature text is NULL"
					: "the output pointer is NULL";

		if (err) {
			err->position = 0;
			snprintf(err->message, sizeof(err->message), "%s", why);
		}
		return elt_set_error(ELT_E_INVALID_ARGUMENT,
				     "elt_signature_parse: %s", why);
	}

	cursor_init(&cur, text);
	parse_signature(&cur);
	if (cur.status == ELT_OK) {
		sig = build(&cur);
		if (!sig)
			fail(&cur, ELT_E_NO_MEMORY, 0, "out of memory");
	}
	cursor_release(&cur);
	if (cur.status != ELT_OK)
		return report(&cur, err);

	if (err) {
		err->position = 0;
		err->message[0] = '\0';
	}
	*out = sig;
	return ELT_OK;
}

void elt_signature_free(elt_signature *sig)
{
	free(sig);              /* everything lives in the one block */
}
