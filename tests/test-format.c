/*
 * elt_format_value: every kind of value, as text and as JSON, and
 * truncation reported like snprintf's.  Portable: types come from parsed
 * signatures, values from C objects of the same types.
 */
#include "tap.h"

#include <asyncelt.h>

#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdint.h>

#ifdef __SIZEOF_INT128__
__extension__ typedef __int128 sint128;
__extension__ typedef unsigned __int128 uint128;
#endif

/* The signatures parsed so far: freed at the end. */
static elt_signature *parsed[64];
static int nparsed;

/* The i-th parameter type of a signature. */
static const elt_type *param(const char *text, uint32_t i)
{
	elt_signature *sig;

	if (nparsed == 64)
		tap_bail("more signatures than the test keeps");
	if (elt_signature_parse(text, &sig, NULL) != ELT_OK)
		tap_bail("signature %s: %s", text, elt_last_error());
	parsed[nparsed++] = sig;
	return sig->params[i];
}

static char text[512];

static const char *fmt(const char *sig, const void *data, unsigned flags)
{
	elt_format_value(param(sig, 0), data, flags, text, sizeof(text));
	return text;
}

int main(void)
{
	int32_t i32 = -42;
	uint64_t u64 = UINT64_MAX;
	int64_t i64 = INT64_MIN;
	int8_t i8 = -128;
	char ch = 'A';
	_Bool yes = 1, no = 0;
	void *ptr = (void *)(uintptr_t)0xdeadbeef;
	float f = 0.1f;
	double d = 0.1, big = 1e300, nan_value = NAN, ninf = -INFINITY;
	long double ld = 1.0L / 3;
	_Complex double z = 1.5 + 2.0 * _Complex_I;
	struct { int32_t a; double b; } st = { 7, 0.5 };
	union { int32_t a; uint32_t b; } un = { -1 };
	struct { int32_t a[3]; } arr = { { 1, 2, 3 } };
	int32_t vec[4] = { 4, 3, 2, 1 };
	size_t need;
	char small[8];

	tap_plan(34);

	is_str(fmt("v(i)", &i32, 0), "-42", "int32 in decimal");
	is_str(fmt("v(L)", &u64, 0), "18446744073709551615", "uint64 max");
	is_str(fmt("v(l)", &i64, 0), "-9223372036854775808", "int64 min");
	is_str(fmt("v(b)", &i8, 0), "-128", "int8 min");
	is_str(fmt("v(c)", &ch, 0), "65", "char as a number");
	is_str(fmt("v(z)", &yes, 0), "true", "bool true");
	is_str(fmt("v(z)", &no, ELT_FORMAT_JSON), "false", "bool false");
	is_str(fmt("v(p)", &ptr, 0), "0xdeadbeef", "pointer in hex");
	is_str(fmt("v(p)", &ptr, ELT_FORMAT_JSON), "\"0xdeadbeef\"",
	       "pointer in JSON: a string, JSON numbers are decimal");

	ok(strtof(fmt("v(f)", &f, 0), NULL) == f, "float round-trips (%s)", text);
	ok(strtod(fmt("v(d)", &d, 0), NULL) == d, "double round-trips (%s)", text);
	ok(strtod(fmt("v(d)", &big, ELT_FORMAT_JSON), NULL) == big,
	   "1e300 round-trips (%s)", text);
#if __LDBL_MANT_DIG__ == 106
	/* IBM double-double (ppc64le): glibc's strtold does not give back
	 * the exact pair for any number of digits (1/3: hi + lo with lo not
	 * the nearest); hold the text to the format's 106 bits instead. */
	ok(fabsl(strtold(fmt("v(D)", &ld, 0), NULL) - ld) <= ld * 0x1p-104L,
	   "long double within 2^-104 of the value (%s)", text);
#else
	ok(strtold(fmt("v(D)", &ld, 0), NULL) == ld, "long double round-trips (%s)", text);
#endif
	is_str(fmt("v(d)", &nan_value, 0), "nan", "NaN as text");
	is_str(fmt("v(d)", &ninf, ELT_FORMAT_JSON), "\"-inf\"",
	       "-inf in JSON: a string, JSON has no infinity");

	is_str(fmt("v(Cd)", &z, 0), "(1.5, 2)", "complex: a pair");
	is_str(fmt("v(Cd)", &z, ELT_FORMAT_JSON), "[1.5,2]", "complex in JSON: an array");
	is_str(fmt("v({i d})", &st, 0), "{7, 0.5}", "struct");
	is_str(fmt("v({i d})", &st, ELT_FORMAT_JSON), "{\"0\":7,\"1\":0.5}",
	       "struct in JSON: an object keyed by member index");
	is_str(fmt("v(<i I>)", &un, 0), "{0: -1, 1: 4294967295}",
	       "union: every member with its index");
	is_str(fmt("v({i[3]})", &arr, 0), "{[1, 2, 3]}", "array member");
	is_str(fmt("v(V4i)", vec, ELT_FORMAT_JSON), "[4,3,2,1]", "vector in JSON");

#ifdef __SIZEOF_INT128__
	{
		sint128 q = -((sint128)1 << 100);
		uint128 uq = ~(uint128)0;

		is_str(fmt("v(q)", &q, 0), "-1267650600228229401496703205376", "int128");
		is_str(fmt("v(Q)", &uq, 0), "340282366920938463463374607431768211455",
		       "uint128 max");
	}
#else
	tap_skip(2, "no __int128 on this ABI");
#endif

	/* truncation, as snprintf reports it */
	need = elt_format_value(param("v({i d})", 0), &st, 0, small, sizeof(small));
	is_int(need, strlen("{7, 0.5}"), "the length needed is returned");
	is_str(small, "{7, 0.5", "a truncated result is cut and NUL-terminated");
	need = elt_format_value(param("v(L)", 0), &u64, 0, small, 1);
	ok(need == 20 && small[0] == '\0', "size 1: just the NUL, length 20");
	need = elt_format_value(param("v(L)", 0), &u64, 0, NULL, 0);
	is_int(need, 20, "size 0: nothing written, the length measured");
	need = elt_format_value(param("v(i)", 0), &i32, 0, small, 4);
	ok(need == 3 && strcmp(small, "-42") == 0, "an exact fit is not truncated");

	/* Empty structs hold no bytes, so their arrays are measured, not
	 * walked: the lengths must still be exact, the buffer full or not. */
	is_str(fmt("v({{}[3][2]})", &i32, 0), "{[[{}, {}], [{}, {}], [{}, {}]]}",
	       "an array of arrays of empty structs");
	need = elt_format_value(param("v({{}[3][2]})", 0), &i32, ELT_FORMAT_JSON, small, 1);
	is_int(need, strlen("{\"0\":[[{},{}],[{},{}],[{},{}]]}"),
	       "its JSON length, measured with no room");
	{
		/* 40 dimensions of 2: 2^40 elements, each level's text twice
		 * its element's plus the brackets and a separator.  Walking
		 * them (or measuring each level twice) would never end. */
		char deep[16 + 40 * 3];
		uint64_t length = 2;    /* {} */
		int k;

		strcpy(deep, "v({{}");
		for (k = 0; k < 40; k++) {
			strcat(deep, "[2]");
			length = 2 * length + 4;
		}
		strcat(deep, "})");
		need = elt_format_value(param(deep, 0), &i32, 0, text, sizeof(text));
		length += 2;            /* the outer struct's braces */
		/* where size_t is 32 bits the count saturates (api.md) */
		if (length > SIZE_MAX)
			length = SIZE_MAX;
		ok(need == length && strncmp(text, "{[[[[", 5) == 0 &&
		   strlen(text) == sizeof(text) - 1,
		   "2^40 empty structs: %zu characters counted at once, the buffer filled",
		   need);
	}

	is_str((elt_format_value(NULL, &i32, 0, text, sizeof(text)), text), "?",
	       "no type: a placeholder, no crash");
	is_str((elt_format_value(param("v(i)", 0), NULL, ELT_FORMAT_JSON, text,
				 sizeof(text)), text), "null",
	       "no data in JSON: null");
	while (nparsed)
		elt_signature_free(parsed[--nparsed]);
	return tap_done();
}
