/*
 * elt_format_value: a decoded value rendered as text or JSON, by its type.
 *
 * Plugins call it on the hot path (a logging plugin formats every call's
 * arguments), so it allocates nothing, touches no stdio stream and no
 * locale: integers are converted by hand, and it writes into the caller's
 * buffer only, counting what would not fit so the caller can detect
 * truncation, as snprintf does.
 */
#include "internal.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#ifdef __SIZEOF_INT128__
__extension__ typedef unsigned __int128 widest_unsigned;
__extension__ typedef __int128 widest_signed;
#else
typedef uint64_t widest_unsigned;
typedef int64_t widest_signed;
#endif

/* The output: what fits is stored, `needed` counts everything. */
struct out {
	char *buf;
	size_t size;
	size_t needed;
	bool json;
};

static void put_bytes(struct out *o, const char *s, size_t n)
{
	if (o->needed < o->size) {
		size_t room = o->size - 1 - o->needed;  /* keep one for the NUL */

		memcpy(o->buf + o->needed, s, n < room ? n : room);
	}
	/* saturates: the text of {}[2000000000][2000000000] is longer than
	 * size_t counts */
	o->needed = n > SIZE_MAX - o->needed ? SIZE_MAX : o->needed + n;
}

static void put_str(struct out *o, const char *s)
{
	put_bytes(o, s, strlen(s));
}

static void put_char(struct out *o, char c)
{
	put_bytes(o, &c, 1);
}

static void put_unsigned(struct out *o, widest_unsigned v)
{
	char digits[40];        /* 2^128 has 39 decimal digits */
	size_t at = sizeof(digits);

	do {
		digits[--at] = (char)('0' + (unsigned)(v % 10));
		v /= 10;
	} while (v);
	put_bytes(o, digits + at, sizeof(digits) - at);
}

static void put_signed(struct out *o, widest_signed v)
{
	if (v < 0) {
		put_char(o, '-');
		/* negate in unsigned arithmetic: the minimum has no positive */
		put_unsigned(o, -(widest_unsigned)v);
	} else {
		put_unsigned(o, (widest_unsigned)v);
	}
}

/* Hexadecimal of `bits` bits of v, no leading zeros, "0x" first; in JSON
 * a string, since JSON numbers are decimal. */
static void put_hex(struct out *o, uint64_t v)
{
	static const char hex[] = "0123456789abcdef";
	char text[2 + 16];
	size_t at = sizeof(text);

	do {
		text[--at] = hex[v & 0xf];
		v >>= 4;
	} while (v);
	text[--at] = 'x';
	text[--at] = '0';
	if (o->json)
		put_char(o, '"');
	put_bytes(o, text + at, sizeof(text) - at);
	if (o->json)
		put_char(o, '"');
}

/* A value whose type this build cannot render (a long double of another
 * size, say): its bytes in memory order, so nothing is hidden. */
static void put_raw(struct out *o, const unsigned char *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	put_str(o, o->json ? "\"bytes:" : "<bytes:");
	for (i = 0; i < n; i++) {
		put_char(o, hex[p[i] >> 4]);
		put_char(o, hex[p[i] & 0xf]);
	}
	put_char(o, o->json ? '"' : '>');
}

/*
 * Floating point goes through snprintf into a local array: writing a
 * correctly rounded decimal by hand is a project of its own.  snprintf
 * into memory takes no stream lock and does not allocate for these
 * precisions, but it is not async-signal-safe and honours LC_NUMERIC, so
 * whatever the locale puts for the decimal point is written back as '.'.
 * *_DECIMAL_DIG significant digits read back to the same value.
 */
static void put_float_text(struct out *o, const char *text)
{
	bool point = false;
	const char *s;

	for (s = text; *s; s++) {
		if ((*s >= '0' && *s <= '9') || *s == '-' || *s == '+' ||
		    *s == 'e' || *s == 'E') {
			put_char(o, *s);
		} else if (!point) {
			put_char(o, '.');       /* the locale's point, maybe multibyte */
			point = true;
		}
	}
}

/* NaN and the infinities have no JSON number: they become strings. */
static bool put_nonfinite(struct out *o, bool nan, bool inf, bool negative)
{
	if (!nan && !inf)
		return false;
	if (o->json)
		put_char(o, '"');
	put_str(o, nan ? "nan" : negative ? "-inf" : "inf");
	if (o->json)
		put_char(o, '"');
	return true;
}

static void put_double(struct out *o, double v, int digits)
{
	char text[64];

	if (put_nonfinite(o, isnan(v), isinf(v), signbit(v)))
		return;
	snprintf(text, sizeof(text), "%.*g", digits, v);
	put_float_text(o, text);
}

static void put_long_double(struct out *o, long double v)
{
	char text[80];

	if (put_nonfinite(o, isnan(v), isinf(v), signbit(v)))
		return;
	snprintf(text, sizeof(text), "%.*Lg", LDBL_DECIMAL_DIG, v);
	put_float_text(o, text);
}

/* Loads an integer of `size` bytes; false when the size is not one a
 * scalar of this kind can have here. */
static bool load_unsigned(const void *p, size_t size, widest_unsigned *v)
{
	switch (size) {
	case 1: { uint8_t x; memcpy(&x, p, 1); *v = x; return true; }
	case 2: { uint16_t x; memcpy(&x, p, 2); *v = x; return true; }
	case 4: { uint32_t x; memcpy(&x, p, 4); *v = x; return true; }
	case 8: { uint64_t x; memcpy(&x, p, 8); *v = x; return true; }
	}
	if (size == sizeof(widest_unsigned)) {
		memcpy(v, p, size);
		return true;
	}
	return false;
}

static bool load_signed(const void *p, size_t size, widest_signed *v)
{
	switch (size) {
	case 1: { int8_t x; memcpy(&x, p, 1); *v = x; return true; }
	case 2: { int16_t x; memcpy(&x, p, 2); *v = x; return true; }
	case 4: { int32_t x; memcpy(&x, p, 4); *v = x; return true; }
	case 8: { int64_t x; memcpy(&x, p, 8); *v = x; return true; }
	}
	if (size == sizeof(widest_signed)) {
		memcpy(v, p, size);
		return true;
	}
	return false;
}

static bool is_signed_kind(elt_type_kind kind)
{
	switch (kind) {
	case ELT_TYPE_CHAR:
		return CHAR_MIN < 0;
	case ELT_TYPE_SINT8: case ELT_TYPE_SINT16: case ELT_TYPE_SINT32:
	case ELT_TYPE_SINT64: case ELT_TYPE_SINT128:
		return true;
	default:
		return false;
	}
}

/* A scalar float, double or long double; false for another size. */
static bool put_floating(struct out *o, const elt_type *t, const void *p)
{
	if (t->kind == ELT_TYPE_FLOAT && t->size == sizeof(float)) {
		float v;

		memcpy(&v, p, sizeof(v));
		put_double(o, v, FLT_DECIMAL_DIG);
		return true;
	}
	if (t->kind == ELT_TYPE_DOUBLE && t->size == sizeof(double)) {
		double v;

		memcpy(&v, p, sizeof(v));
		put_double(o, v, DBL_DECIMAL_DIG);
		return true;
	}
	if (t->kind == ELT_TYPE_LONGDOUBLE && t->size == sizeof(long double)) {
		long double v;

		memcpy(&v, p, sizeof(v));
		put_long_double(o, v);
		return true;
	}
	return false;
}

static void put_value(struct out *o, const elt_type *t, const unsigned char *p);

/* Adds n * each to what `o` needs, saturating like put_bytes. */
static void count_more(struct out *o, size_t each, uint32_t n)
{
	o->needed = n && each > (SIZE_MAX - o->needed) / n ? SIZE_MAX : o->needed + each * n;
}

/* count elements of `element`, `stride` bytes apart, between open/close. */
static void put_sequence(struct out *o, const elt_type *element, uint32_t count,
			 size_t stride, const unsigned char *p, char open, char close)
{
	size_t separator = o->json ? 1 : 2, length = 0;
	uint32_t i;

	/* An array of empty structs holds no data, but can have 2^31
	 * elements, nested 32 deep: its elements all read the same, so one
	 * is measured (once per level, never per element) and, once the
	 * buffer is full, the rest are counted in one step.  Formatting then
	 * takes time in proportion to the data and the buffer, never to the
	 * counts. */
	if (stride == 0 && count) {
		struct out measure = { NULL, 0, 0, o->json };

		put_value(&measure, element, p);
		length = measure.needed;
	}
	put_char(o, open);
	for (i = 0; i < count; i++) {
		if (stride == 0 && o->needed >= o->size) {
			count_more(o, length, count - i);
			count_more(o, separator, count - i - (i == 0));
			break;
		}
		if (i)
			put_str(o, o->json ? "," : ", ");
		put_value(o, element, p + i * stride);
	}
	put_char(o, close);
}

/* A struct is {a, b} as text; a union shows every member, each with its
 * index, since only the program knows which one is live.  In JSON both
 * are objects keyed by the member index. */
static void put_members(struct out *o, const elt_type *t, const unsigned char *p)
{
	bool indexed = o->json || t->kind == ELT_TYPE_UNION;
	uint32_t i;

	put_char(o, '{');
	for (i = 0; i < t->count; i++) {
		if (i)
			put_str(o, o->json ? "," : ", ");
		if (indexed) {
			if (o->json)
				put_char(o, '"');
			put_unsigned(o, i);
			put_str(o, o->json ? "\":" : ": ");
		}
		put_value(o, t->members[i], p + t->offsets[i]);
	}
	put_char(o, '}');
}

static void put_value(struct out *o, const elt_type *t, const unsigned char *p)
{
	widest_unsigned u;
	widest_signed s;

	switch (t->kind) {
	case ELT_TYPE_VOID:
		put_str(o, o->json ? "null" : "void");
		return;
	case ELT_TYPE_BOOL:
		if (!load_unsigned(p, t->size, &u))
			break;
		put_str(o, u ? "true" : "false");
		return;
	case ELT_TYPE_CHAR: case ELT_TYPE_SINT8: case ELT_TYPE_UINT8:
	case ELT_TYPE_SINT16: case ELT_TYPE_UINT16:
	case ELT_TYPE_SINT32: case ELT_TYPE_UINT32:
	case ELT_TYPE_SINT64: case ELT_TYPE_UINT64:
	case ELT_TYPE_SINT128: case ELT_TYPE_UINT128:
		if (is_signed_kind(t->kind)) {
			if (!load_signed(p, t->size, &s))
				break;
			put_signed(o, s);
		} else {
			if (!load_unsigned(p, t->size, &u))
				break;
			put_unsigned(o, u);
		}
		return;
	case ELT_TYPE_POINTER:
		if (t->size > sizeof(uint64_t) || !load_unsigned(p, t->size, &u))
			break;
		put_hex(o, (uint64_t)u);
		return;
	case ELT_TYPE_FLOAT: case ELT_TYPE_DOUBLE: case ELT_TYPE_LONGDOUBLE:
		if (!put_floating(o, t, p))
			break;
		return;
	case ELT_TYPE_COMPLEX:
		/* (re, im) reads as a pair in text; JSON has arrays */
		put_sequence(o, t->element, 2, t->element->size, p,
			     o->json ? '[' : '(', o->json ? ']' : ')');
		return;
	case ELT_TYPE_VECTOR: case ELT_TYPE_ARRAY:
		put_sequence(o, t->element, t->count, t->element->size, p, '[', ']');
		return;
	case ELT_TYPE_STRUCT: case ELT_TYPE_UNION:
		put_members(o, t, p);
		return;
	case ELT_TYPE_KIND_COUNT:
		break;
	}
	put_raw(o, p, t->size);
}

size_t elt_format_value(const elt_type *t, const void *data, unsigned flags,
			char *buf, size_t size)
{
	struct out o = { buf, size, 0, (flags & ELT_FORMAT_JSON) != 0 };

	if (!t || (!data && t->size))
		put_str(&o, o.json ? "null" : "?");
	else
		put_value(&o, t, data);
	if (size)
		buf[o.needed < size ? o.needed : size - 1] = '\0';
	return o.needed;
}
