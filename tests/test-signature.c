/*
 * Tests of the signature parser and layout (lib/signature.c).
 *
 * Every size, alignment and offset is compared with what this compiler
 * does for an equivalent C declaration, so the test is meaningful on
 * every ABI the library is built for.
 */
#include "tap.h"

#include <asyncelt.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A type's alignment as a struct member (not _Alignof: they differ on
 * i386 for double and int64). */
#define MALIGN(T) offsetof(struct { char c_; T x_; }, x_)

#define NFUZZ_RANDOM 80000
#define NFUZZ_MUTATED 80000
#define NFUZZ_GENERATED 40000

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */

/* Shows a test string with its control bytes escaped. */
static const char *show(const char *s)
{
	static char buf[4][320];
	static int which;
	char *out = buf[which++ & 3];
	size_t o = 0;

	for (; *s && o + 8 < sizeof(buf[0]); s++) {
		unsigned char u = (unsigned char)*s;

		if (u < 0x20 || u >= 0x7f)
			o += (size_t)snprintf(out + o, sizeof(buf[0]) - o,
					      "\\x%02x", u);
		else
			out[o++] = (char)u;
	}
	if (*s)
		o += (size_t)snprintf(out + o, sizeof(buf[0]) - o, "...");
	out[o] = '\0';
	return out;
}

/* Parses text that must be valid; NULL (and a failed test) otherwise. */
static elt_signature *must_parse(const char *text)
{
	elt_signature *sig = NULL;
	elt_parse_error err;
	elt_status st = elt_signature_parse(text, &sig, &err);

	if (st != ELT_OK || !sig) {
		ok(0, "parse '%s'", show(text));
		tap_diag("  status %d: %s", st, err.message);
		return NULL;
	}
	return sig;
}

static bool is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

/* ------------------------------------------------------------------------ */
/* Scalars                                                                   */

struct scalar_case {
	char code;
	elt_type_kind kind;
	size_t size;
	size_t align;
	size_t probe_size;      /* sizeof(struct { char; T; }) */
};

#define SC(code, kind, T) \
	{ code, kind, sizeof(T), MALIGN(T), sizeof(struct { char c_; T x_; }) }

static const struct scalar_case scalars[] = {
	SC('z', ELT_TYPE_BOOL, _Bool),
	SC('c', ELT_TYPE_CHAR, char),
	SC('b', ELT_TYPE_SINT8, int8_t),
	SC('B', ELT_TYPE_UINT8, uint8_t),
	SC('h', ELT_TYPE_SINT16, int16_t),
	SC('H', ELT_TYPE_UINT16, uint16_t),
	SC('i', ELT_TYPE_SINT32, int32_t),
	SC('I', ELT_TYPE_UINT32, uint32_t),
	SC('l', ELT_TYPE_SINT64, int64_t),
	SC('L', ELT_TYPE_UINT64, uint64_t),
#ifdef __SIZEOF_INT128__
	SC('q', ELT_TYPE_SINT128, __int128),
	SC('Q', ELT_TYPE_UINT128, unsigned __int128),
#endif
	SC('p', ELT_TYPE_POINTER, void *),
	SC('f', ELT_TYPE_FLOAT, float),
	SC('d', ELT_TYPE_DOUBLE, double),
	SC('D', ELT_TYPE_LONGDOUBLE, long double),
};
#define NSCALARS (sizeof(scalars) / sizeof(scalars[0]))

static const struct scalar_case *scalar_by_kind(elt_type_kind kind)
{
	for (size_t i = 0; i < NSCALARS; i++)
		if (scalars[i].kind == kind)
			return &scalars[i];
	return NULL;
}

static void test_kind_names(void)
{
	static const char *const want[ELT_TYPE_KIND_COUNT] = {
		"void", "bool", "char", "int8", "uint8", "int16", "uint16",
		"int32", "uint32", "int64", "uint64", "int128", "uint128",
		"pointer", "float", "double", "long double", "complex",
		"vector", "struct", "union", "array",
	};
	int good = 1;

	for (int k = 0; k < ELT_TYPE_KIND_COUNT; k++)
		if (strcmp(elt_type_kind_name((elt_type_kind)k), want[k])) {
			good = 0;
			tap_diag("  kind %d: got %s, want %s", k,
				 elt_type_kind_name((elt_type_kind)k), want[k]);
		}
	ok(good, "elt_type_kind_name names every kind");
	is_str(elt_type_kind_name(ELT_TYPE_KIND_COUNT), "unknown",
	       "kind past the end is unknown");
	is_str(elt_type_kind_name((elt_type_kind)-1), "unknown",
	       "negative kind is unknown");
	is_str(elt_type_kind_name((elt_type_kind)1000), "unknown",
	       "kind 1000 is unknown");
}

static void test_scalars(void)
{
	for (size_t i = 0; i < NSCALARS; i++) {
		const struct scalar_case *c = &scalars[i];
		char param[16], ret[16], member[16];
		elt_signature *p, *r, *m;
		int good;

		snprintf(param, sizeof(param), "v(%c)", c->code);
		snprintf(ret, sizeof(ret), "%c()", c->code);
		snprintf(member, sizeof(member), "v({c %c})", c->code);
		p = must_parse(param);
		r = must_parse(ret);
		m = must_parse(member);
		if (!p || !r || !m) {
			elt_signature_free(p);
			elt_signature_free(r);
			elt_signature_free(m);
			continue;
		}
		good = p->nparams == 1 && p->params[0]->kind == c->kind &&
		       p->params[0]->size == c->size &&
		       p->params[0]->align == c->align &&
		       r->ret->kind == c->kind && r->ret->size == c->size &&
		       r->ret->align == c->align && r->nparams == 0 &&
		       m->params[0]->count == 2 &&
		       m->params[0]->offsets[0] == 0 &&
		       m->params[0]->offsets[1] == c->align &&
		       m->params[0]->size == c->probe_size &&
		       m->params[0]->align == c->align &&
		       m->params[0]->members[1]->kind == c->kind;
		ok(good, "'%c' is %s: size %zu, member alignment %zu",
		   c->code, elt_type_kind_name(c->kind), c->size, c->align);
		if (!good)
			tap_diag("  param size %u align %u; struct size %u "
				 "align %u offset %u",
				 p->params[0]->size, p->params[0]->align,
				 m->params[0]->size, m->params[0]->align,
				 m->params[0]->offsets[1]);
		elt_signature_free(p);
		elt_signature_free(r);
		elt_signature_free(m);
	}

	elt_signature *v = must_parse("v()");
	if (v) {
		ok(v->ret->kind == ELT_TYPE_VOID && v->ret->size == 0 &&
		   v->ret->align == 1 && v->nparams == 0,
		   "'v' return is void, size 0");
		elt_signature_free(v);
	}
}

/* ------------------------------------------------------------------------ */
/* Complex and vectors                                                       */

static void check_complex(const char *code, elt_type_kind ekind, size_t size,
			  size_t align)
{
	char text[32];
	elt_signature *sig;
	const elt_type *t;

	snprintf(text, sizeof(text), "%s(%s)", code, code);
	sig = must_parse(text);
	if (!sig)
		return;
	t = sig->params[0];
	ok(t->kind == ELT_TYPE_COMPLEX && t->size == size && t->align == align &&
	   t->element && t->element->kind == ekind && t->count == 2 &&
	   t->size == 2 * t->element->size && sig->ret->kind == ELT_TYPE_COMPLEX &&
	   sig->ret->size == size,
	   "%s is _Complex %s: size %zu, alignment %zu", code,
	   elt_type_kind_name(ekind), size, align);
	elt_signature_free(sig);
}

typedef int8_t v1b __attribute__((vector_size(1)));
typedef int8_t v2b __attribute__((vector_size(2)));
typedef uint8_t v4B __attribute__((vector_size(4)));
typedef int8_t v8b __attribute__((vector_size(8)));
typedef int8_t v16b __attribute__((vector_size(16)));
typedef uint8_t v32B __attribute__((vector_size(32)));
typedef int8_t v64b __attribute__((vector_size(64)));
typedef int16_t v4h __attribute__((vector_size(8)));
typedef int16_t v8h __attribute__((vector_size(16)));
typedef uint16_t v32H __attribute__((vector_size(64)));
typedef int32_t v1i __attribute__((vector_size(4)));
typedef uint32_t v2I __attribute__((vector_size(8)));
typedef int32_t v4i __attribute__((vector_size(16)));
typedef int32_t v8i __attribute__((vector_size(32)));
typedef int32_t v16i __attribute__((vector_size(64)));
typedef uint64_t v1L __attribute__((vector_size(8)));
typedef int64_t v2l __attribute__((vector_size(16)));
typedef int64_t v4l __attribute__((vector_size(32)));
typedef uint64_t v8L __attribute__((vector_size(64)));
typedef float v1f __attribute__((vector_size(4)));
typedef float v2f __attribute__((vector_size(8)));
typedef float v4f __attribute__((vector_size(16)));
typedef float v8f __attribute__((vector_size(32)));
typedef float v16f __attribute__((vector_size(64)));
typedef double v1d __attribute__((vector_size(8)));
typedef double v2d __attribute__((vector_size(16)));
typedef double v4d __attribute__((vector_size(32)));
typedef double v8d __attribute__((vector_size(64)));
#ifdef __SIZEOF_INT128__
typedef __int128 v1q __attribute__((vector_size(16)));
typedef unsigned __int128 v2Q __attribute__((vector_size(32)));
typedef __int128 v4q __attribute__((vector_size(64)));
#endif

struct vector_case {
	const char *code;
	elt_type_kind ekind;
	uint32_t count;
	size_t size;
	size_t align;
};

#define VC(code, ekind, count, T) { code, ekind, count, sizeof(T), MALIGN(T) }

static const struct vector_case vectors[] = {
	VC("V1b", ELT_TYPE_SINT8, 1, v1b),
	VC("V2b", ELT_TYPE_SINT8, 2, v2b),
	VC("V4B", ELT_TYPE_UINT8, 4, v4B),
	VC("V8b", ELT_TYPE_SINT8, 8, v8b),
	VC("V16b", ELT_TYPE_SINT8, 16, v16b),
	VC("V32B", ELT_TYPE_UINT8, 32, v32B),
	VC("V64b", ELT_TYPE_SINT8, 64, v64b),
	VC("V4h", ELT_TYPE_SINT16, 4, v4h),
	VC("V8h", ELT_TYPE_SINT16, 8, v8h),
	VC("V32H", ELT_TYPE_UINT16, 32, v32H),
	VC("V1i", ELT_TYPE_SINT32, 1, v1i),
	VC("V2I", ELT_TYPE_UINT32, 2, v2I),
	VC("V4i", ELT_TYPE_SINT32, 4, v4i),
	VC("V8i", ELT_TYPE_SINT32, 8, v8i),
	VC("V16i", ELT_TYPE_SINT32, 16, v16i),
	VC("V1L", ELT_TYPE_UINT64, 1, v1L),
	VC("V2l", ELT_TYPE_SINT64, 2, v2l),
	VC("V4l", ELT_TYPE_SINT64, 4, v4l),
	VC("V8L", ELT_TYPE_UINT64, 8, v8L),
	VC("V1f", ELT_TYPE_FLOAT, 1, v1f),
	VC("V2f", ELT_TYPE_FLOAT, 2, v2f),
	VC("V4f", ELT_TYPE_FLOAT, 4, v4f),
	VC("V8f", ELT_TYPE_FLOAT, 8, v8f),
	VC("V16f", ELT_TYPE_FLOAT, 16, v16f),
	VC("V1d", ELT_TYPE_DOUBLE, 1, v1d),
	VC("V2d", ELT_TYPE_DOUBLE, 2, v2d),
	VC("V4d", ELT_TYPE_DOUBLE, 4, v4d),
	VC("V8d", ELT_TYPE_DOUBLE, 8, v8d),
#ifdef __SIZEOF_INT128__
	VC("V1q", ELT_TYPE_SINT128, 1, v1q),
	VC("V2Q", ELT_TYPE_UINT128, 2, v2Q),
	VC("V4q", ELT_TYPE_SINT128, 4, v4q),
#endif
};

static void test_complex_and_vectors(void)
{
	check_complex("Cf", ELT_TYPE_FLOAT, sizeof(_Complex float),
		      MALIGN(_Complex float));
	check_complex("Cd", ELT_TYPE_DOUBLE, sizeof(_Complex double),
		      MALIGN(_Complex double));
	check_complex("CD", ELT_TYPE_LONGDOUBLE, sizeof(_Complex long double),
		      MALIGN(_Complex long double));

	for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		const struct vector_case *c = &vectors[i];
		char text[32];
		elt_signature *sig;
		const elt_type *t;

		snprintf(text, sizeof(text), "%s(%s)", c->code, c->code);
		sig = must_parse(text);
		if (!sig)
			continue;
		t = sig->params[0];
		ok(t->kind == ELT_TYPE_VECTOR && t->size == c->size &&
		   t->align == c->align && t->count == c->count &&
		   t->element && t->element->kind == c->ekind &&
		   t->size == t->count * t->element->size &&
		   sig->ret->size == c->size && sig->ret->align == c->align,
		   "%s: size %zu, alignment %zu", c->code, c->size, c->align);
		elt_signature_free(sig);
	}
}

/* ------------------------------------------------------------------------ */
/* Structs, unions, arrays                                                   */

struct s_cd { char a; double b; };
struct s_blh { int8_t a; int64_t b; int16_t c; };
struct s_nested { char a; struct { double x; int32_t y; } b; int8_t c; };
struct __attribute__((packed)) s_packed { int8_t a; int64_t b; };
struct s_inpacked {
	char a;
	struct __attribute__((packed)) { int8_t x; int64_t y; } b;
	int32_t c;
};
struct __attribute__((packed)) s_packedouter {
	char a;
	struct { int8_t x; int64_t y; } b;
	int16_t c;
};
union u_if3 { int32_t a; float b[3]; };
union __attribute__((packed)) u_packed { int8_t a; int64_t b; };
union __attribute__((packed)) u_packed2 { char a[3]; int16_t b; };
struct s_arr2d { int32_t a[2][3]; char b; };
struct s_arrstruct { struct { char x; double y; } a[3]; int8_t b; };
struct s_vec { int8_t a; v4f b; };
struct __attribute__((packed)) s_packedvec { char a; v4f b; };
struct s_cld { char a; _Complex long double b; };
struct s_cf { char a; _Complex float b; int8_t c; };
struct s_empty {};
union u_empty {};
struct s_withempty { char a; struct {} b; int32_t c; };
struct s_mixed {
	_Bool a; char b; uint8_t c; uint16_t d; uint32_t e; uint64_t f;
	void *g; long double h; float i;
};
struct s_dc { double a; char b; };
union u_mix { struct { char x; double y; } a; int32_t b[5]; };
struct s_bigvec { char a; v2d b; v8f c; v16i d; };
struct s_deep {
	char a;
	struct { char b; struct { char c; struct { double d; } e; } f; } g;
};
struct s_packarr {
	struct __attribute__((packed)) { char x; int32_t y; } a[3];
	char b;
};
struct s_pc { void *a; char b; };
struct s_lc { int64_t a; char b; };
struct s_ptrarr { char a; void *b[4][2]; int16_t c[3]; };
struct s_bools { _Bool a[3]; int16_t b; };
union u_nested {
	struct { int8_t a; int16_t b; } s;
	union { int64_t c; char d[9]; } u;
};
struct s_ld { char a; long double b[2]; int8_t c; };
#ifdef __SIZEOF_INT128__
struct s_q { char a; __int128 b; unsigned __int128 c; int8_t d; };
#endif

/* Parses "v(desc)" and compares its one parameter with a C declaration. */
static void check_layout(const char *desc, elt_type_kind kind, uint32_t flags,
			 size_t size, size_t align, const size_t *offsets,
			 size_t n)
{
	char text[256];
	elt_signature *sig;
	const elt_type *t;
	int good;

	snprintf(text, sizeof(text), "v(%s)", desc);
	sig = must_parse(text);
	if (!sig)
		return;
	t = sig->params[0];
	good = t->kind == kind && t->flags == flags && t->size == size &&
	       t->align == align && t->count == n && t->members && t->offsets;
	for (size_t i = 0; good && i < n; i++)
		good = t->offsets[i] == offsets[i] && t->members[i];
	ok(good, "%s lays out like C: size %zu, alignment %zu", desc, size,
	   align);
	if (!good) {
		tap_diag("  got kind %s flags %u size %u align %u count %u",
			 elt_type_kind_name(t->kind), t->flags, t->size,
			 t->align, t->count);
		for (size_t i = 0; i < n && i < t->count; i++)
			tap_diag("  member %zu: offset %u, want %zu", i,
				 t->offsets[i], offsets[i]);
	}
	elt_signature_free(sig);
}

#define LAYOUT(desc, kind, flags, CT, ...)                                 \
	do {                                                               \
		static const size_t offs_[] = { __VA_ARGS__ };             \
		check_layout(desc, kind, flags, sizeof(CT), MALIGN(CT), offs_, \
			     sizeof(offs_) / sizeof(offs_[0]));            \
	} while (0)

#define S ELT_TYPE_STRUCT
#define U ELT_TYPE_UNION
#define P ELT_TYPE_PACKED

static void test_aggregates(void)
{
	LAYOUT("{c d}", S, 0, struct s_cd,
	       offsetof(struct s_cd, a), offsetof(struct s_cd, b));
	LAYOUT("{b l h}", S, 0, struct s_blh, offsetof(struct s_blh, a),
	       offsetof(struct s_blh, b), offsetof(struct s_blh, c));
	LAYOUT("{c {d i} b}", S, 0, struct s_nested,
	       offsetof(struct s_nested, a), offsetof(struct s_nested, b),
	       offsetof(struct s_nested, c));
	LAYOUT("!{b l}", S, P, struct s_packed, offsetof(struct s_packed, a),
	       offsetof(struct s_packed, b));
	LAYOUT("{c !{b l} i}", S, 0, struct s_inpacked,
	       offsetof(struct s_inpacked, a), offsetof(struct s_inpacked, b),
	       offsetof(struct s_inpacked, c));
	LAYOUT("!{c {b l} h}", S, P, struct s_packedouter,
	       offsetof(struct s_packedouter, a),
	       offsetof(struct s_packedouter, b),
	       offsetof(struct s_packedouter, c));
	LAYOUT("<i f[3]>", U, 0, union u_if3, offsetof(union u_if3, a),
	       offsetof(union u_if3, b));
	LAYOUT("!<b l>", U, P, union u_packed, offsetof(union u_packed, a),
	       offsetof(union u_packed, b));
	LAYOUT("! < c[3] h >", U, P, union u_packed2,
	       offsetof(union u_packed2, a), offsetof(union u_packed2, b));
	LAYOUT("{i[2][3] c}", S, 0, struct s_arr2d,
	       offsetof(struct s_arr2d, a), offsetof(struct s_arr2d, b));
	LAYOUT("{{c d}[3] b}", S, 0, struct s_arrstruct,
	       offsetof(struct s_arrstruct, a), offsetof(struct s_arrstruct, b));
	LAYOUT("{b V4f}", S, 0, struct s_vec, offsetof(struct s_vec, a),
	       offsetof(struct s_vec, b));
	LAYOUT("!{c V4f}", S, P, struct s_packedvec,
	       offsetof(struct s_packedvec, a), offsetof(struct s_packedvec, b));
	LAYOUT("{c CD}", S, 0, struct s_cld, offsetof(struct s_cld, a),
	       offsetof(struct s_cld, b));
	LAYOUT("{c Cf b}", S, 0, struct s_cf, offsetof(struct s_cf, a),
	       offsetof(struct s_cf, b), offsetof(struct s_cf, c));
	check_layout("{}", S, 0, sizeof(struct s_empty), MALIGN(struct s_empty),
		     NULL, 0);
	check_layout("<>", U, 0, sizeof(union u_empty), MALIGN(union u_empty),
		     NULL, 0);
	check_layout("!{}", S, P, 0, 1, NULL, 0);
	LAYOUT("{c {} i}", S, 0, struct s_withempty,
	       offsetof(struct s_withempty, a), offsetof(struct s_withempty, b),
	       offsetof(struct s_withempty, c));
	LAYOUT("{z c B H I L p D f}", S, 0, struct s_mixed,
	       offsetof(struct s_mixed, a), offsetof(struct s_mixed, b),
	       offsetof(struct s_mixed, c), offsetof(struct s_mixed, d),
	       offsetof(struct s_mixed, e), offsetof(struct s_mixed, f),
	       offsetof(struct s_mixed, g), offsetof(struct s_mixed, h),
	       offsetof(struct s_mixed, i));
	LAYOUT("{d c}", S, 0, struct s_dc, offsetof(struct s_dc, a),
	       offsetof(struct s_dc, b));
	LAYOUT("<{c d} i[5]>", U, 0, union u_mix, offsetof(union u_mix, a),
	       offsetof(union u_mix, b));
	LAYOUT("{c V2d V8f V16i}", S, 0, struct s_bigvec,
	       offsetof(struct s_bigvec, a), offsetof(struct s_bigvec, b),
	       offsetof(struct s_bigvec, c), offsetof(struct s_bigvec, d));
	LAYOUT("{c {c {c {d}}}}", S, 0, struct s_deep,
	       offsetof(struct s_deep, a), offsetof(struct s_deep, g));
	LAYOUT("{!{c i}[3] c}", S, 0, struct s_packarr,
	       offsetof(struct s_packarr, a), offsetof(struct s_packarr, b));
	LAYOUT("{p c}", S, 0, struct s_pc, offsetof(struct s_pc, a),
	       offsetof(struct s_pc, b));
	LAYOUT("{l c}", S, 0, struct s_lc, offsetof(struct s_lc, a),
	       offsetof(struct s_lc, b));
	LAYOUT("{c p[4][2] h[3]}", S, 0, struct s_ptrarr,
	       offsetof(struct s_ptrarr, a), offsetof(struct s_ptrarr, b),
	       offsetof(struct s_ptrarr, c));
	LAYOUT("{z[3] h}", S, 0, struct s_bools, offsetof(struct s_bools, a),
	       offsetof(struct s_bools, b));
	LAYOUT("<{b h} <l c[9]>>", U, 0, union u_nested,
	       offsetof(union u_nested, s), offsetof(union u_nested, u));
	LAYOUT("{c D[2] b}", S, 0, struct s_ld, offsetof(struct s_ld, a),
	       offsetof(struct s_ld, b), offsetof(struct s_ld, c));
#ifdef __SIZEOF_INT128__
	LAYOUT("{c q Q b}", S, 0, struct s_q, offsetof(struct s_q, a),
	       offsetof(struct s_q, b), offsetof(struct s_q, c),
	       offsetof(struct s_q, d));
#else
	tap_skip(1, "no __int128 on this ABI");
#endif

	/* The inner structure of arrays: int[2][3] is 2 x (3 x int). */
	elt_signature *sig = must_parse("v({i[2][3] c} {{c d}[3] b} <i f[3]>)");
	if (sig) {
		const elt_type *a = sig->params[0]->members[0];
		const elt_type *b = sig->params[1]->members[0];
		const elt_type *c = sig->params[2]->members[1];

		ok(a->kind == ELT_TYPE_ARRAY && a->count == 2 &&
		   a->size == sizeof(((struct s_arr2d *)0)->a) &&
		   a->align == MALIGN(int32_t) &&
		   a->element->kind == ELT_TYPE_ARRAY &&
		   a->element->count == 3 &&
		   a->element->size == sizeof(((struct s_arr2d *)0)->a[0]) &&
		   a->element->element->kind == ELT_TYPE_SINT32 &&
		   !a->members && !a->offsets,
		   "i[2][3] is an array of 2 arrays of 3 int32");
		ok(b->kind == ELT_TYPE_ARRAY && b->count == 3 &&
		   b->size == sizeof(((struct s_arrstruct *)0)->a) &&
		   b->element->kind == ELT_TYPE_STRUCT &&
		   b->element->size == sizeof(((struct s_arrstruct *)0)->a[0]) &&
		   b->element->count == 2 &&
		   b->element->offsets[1] == sizeof(((struct s_arrstruct *)0)->a[0]) - sizeof(double),
		   "{c d}[3] is an array of 3 structs");
		ok(c->kind == ELT_TYPE_ARRAY && c->count == 3 &&
		   c->size == 3 * sizeof(float) &&
		   c->element->kind == ELT_TYPE_FLOAT,
		   "f[3] in a union is an array of 3 floats");
		elt_signature_free(sig);
	}

	/* The same layout as a return type. */
	sig = must_parse("{c {d i} b}()");
	if (sig) {
		ok(sig->ret->kind == ELT_TYPE_STRUCT &&
		   sig->ret->size == sizeof(struct s_nested) &&
		   sig->ret->offsets[2] == offsetof(struct s_nested, c) &&
		   sig->ret->members[1]->kind == ELT_TYPE_STRUCT &&
		   sig->ret->members[1]->offsets[1] ==
			   offsetof(struct s_nested, b.y) -
			   offsetof(struct s_nested, b),
		   "a struct return type is laid out too");
		elt_signature_free(sig);
	}
}

#undef S
#undef U
#undef P

/* ------------------------------------------------------------------------ */
/* Whole signatures                                                          */

static void test_signatures(void)
{
	elt_signature *sig;
	const char *ws = " \t\n v \n( T\tK  i ) \n";

	sig = must_parse("l(K i)");
	if (sig) {
		ok(sig->ret->kind == ELT_TYPE_SINT64 && sig->nparams == 2 &&
		   sig->nfixed == 2 && sig->flags == 0 &&
		   sig->continuation_index == 0 && sig->this_index == -1 &&
		   sig->params[0]->kind == ELT_TYPE_POINTER &&
		   sig->params[0]->size == sizeof(void *) &&
		   sig->params[1]->kind == ELT_TYPE_SINT32,
		   "l(K i): K at 0, int32 at 1, not variadic");
		is_str(sig->text, "l(K i)", "text is kept");
		elt_signature_free(sig);
	}

	sig = must_parse("v(T p d)");
	if (sig) {
		ok(sig->ret->kind == ELT_TYPE_VOID && sig->nparams == 3 &&
		   sig->this_index == 0 && sig->continuation_index == -1 &&
		   sig->params[0]->kind == ELT_TYPE_POINTER &&
		   sig->params[1]->kind == ELT_TYPE_POINTER &&
		   sig->params[2]->kind == ELT_TYPE_DOUBLE,
		   "v(T p d): this at 0");
		elt_signature_free(sig);
	}

	sig = must_parse("{ld}(i {f f} ...)");
	if (sig) {
		struct r { int64_t a; double b; };
		ok(sig->ret->kind == ELT_TYPE_STRUCT &&
		   sig->ret->size == sizeof(struct r) && sig->nparams == 2 &&
		   sig->nfixed == 2 && (sig->flags & ELT_SIGNATURE_VARIADIC) &&
		   sig->params[1]->size == 2 * sizeof(float),
		   "{ld}(i {f f} ...): variadic, no variadic arguments given");
		elt_signature_free(sig);
	}

	sig = must_parse("i(p ... d i)");
	if (sig) {
		ok(sig->nparams == 3 && sig->nfixed == 1 &&
		   sig->flags == ELT_SIGNATURE_VARIADIC &&
		   sig->params[1]->kind == ELT_TYPE_DOUBLE &&
		   sig->params[2]->kind == ELT_TYPE_SINT32,
		   "i(p ... d i): 1 fixed, 2 variadic arguments");
		elt_signature_free(sig);
	}

	sig = must_parse("v(...)");
	if (sig) {
		ok(sig->nparams == 0 && sig->nfixed == 0 &&
		   sig->flags == ELT_SIGNATURE_VARIADIC && sig->params,
		   "v(...): variadic with no fixed parameters");
		elt_signature_free(sig);
	}

	sig = must_parse("<i f[3]>(!{b l})");
	if (sig) {
		ok(sig->ret->kind == ELT_TYPE_UNION &&
		   sig->ret->size == sizeof(union u_if3) &&
		   sig->params[0]->flags == ELT_TYPE_PACKED &&
		   sig->params[0]->size == sizeof(struct s_packed),
		   "<i f[3]>(!{b l})");
		elt_signature_free(sig);
	}

	sig = must_parse("V4f(V2d)");
	if (sig) {
		ok(sig->ret->kind == ELT_TYPE_VECTOR && sig->ret->count == 4 &&
		   sig->params[0]->kind == ELT_TYPE_VECTOR &&
		   sig->params[0]->count == 2,
		   "V4f(V2d)");
		elt_signature_free(sig);
	}

	sig = must_parse("CD()");
	if (sig) {
		ok(sig->ret->kind == ELT_TYPE_COMPLEX && sig->nparams == 0 &&
		   sig->nfixed == 0 && sig->params && sig->this_index == -1 &&
		   sig->continuation_index == -1,
		   "CD(): no parameters");
		elt_signature_free(sig);
	}

	sig = must_parse("{}()");
	if (sig) {
		ok(sig->ret->kind == ELT_TYPE_STRUCT && sig->ret->size == 0 &&
		   sig->ret->align == 1 && sig->ret->count == 0 &&
		   sig->ret->members && sig->ret->offsets,
		   "{}(): empty struct, size 0, arrays not NULL");
		elt_signature_free(sig);
	}

	sig = must_parse(ws);
	if (sig) {
		ok(sig->this_index == 0 && sig->continuation_index == 1 &&
		   sig->nparams == 3 && sig->params[2]->kind == ELT_TYPE_SINT32,
		   "whitespace between tokens is ignored");
		ok(sig->text != ws && strcmp(sig->text, ws) == 0,
		   "text is a copy, whitespace included");
		elt_signature_free(sig);
	}

	sig = must_parse("v(K T)");
	if (sig) {
		ok(sig->continuation_index == 0 && sig->this_index == 1,
		   "v(K T): K at 0, T at 1");
		elt_signature_free(sig);
	}

	sig = must_parse("i(i T d K ... l)");
	if (sig) {
		ok(sig->this_index == 1 && sig->continuation_index == 3 &&
		   sig->nfixed == 4 && sig->nparams == 5 &&
		   sig->params[3]->kind == ELT_TYPE_POINTER &&
		   sig->params[4]->kind == ELT_TYPE_SINT64,
		   "i(i T d K ... l): indices count every parameter");
		elt_signature_free(sig);
	}

	sig = must_parse("i( V 4 f ! { b l } C d {i [ 2 ] [3]} )");
	if (sig) {
		ok(sig->nparams == 4 && sig->params[0]->kind == ELT_TYPE_VECTOR &&
		   sig->params[0]->count == 4 &&
		   sig->params[1]->flags == ELT_TYPE_PACKED &&
		   sig->params[2]->kind == ELT_TYPE_COMPLEX &&
		   sig->params[3]->members[0]->count == 2 &&
		   sig->params[3]->members[0]->element->count == 3,
		   "whitespace inside V, C, ! and array brackets");
		elt_signature_free(sig);
	}

	sig = must_parse("v({i[007]})");
	if (sig) {
		ok(sig->params[0]->size == 7 * sizeof(int32_t),
		   "leading zeros in a count");
		elt_signature_free(sig);
	}
}

/* Every pointer of a parsed signature lies in its one block, which ends
 * with the copy of the text. */
static bool in_block(const elt_signature *sig, const void *p, size_t n)
{
	const char *lo = (const char *)sig;
	const char *hi = sig->text + strlen(sig->text) + 1;

	return (const char *)p >= lo && (const char *)p + n <= hi;
}

static void test_one_block(void)
{
	elt_signature *sig = must_parse("{c{d V2d}[2] CD}(T K <i f[3]> !{b} p ... d)");
	if (!sig)
		return;
	const elt_type *r = sig->ret;
	bool good = in_block(sig, sig, sizeof(*sig)) &&
		    in_block(sig, sig->params, sig->nparams * sizeof(void *)) &&
		    in_block(sig, r, sizeof(*r)) &&
		    in_block(sig, r->members, r->count * sizeof(void *)) &&
		    in_block(sig, r->offsets, r->count * sizeof(uint32_t)) &&
		    in_block(sig, r->members[1], sizeof(elt_type)) &&
		    in_block(sig, r->members[1]->element, sizeof(elt_type)) &&
		    in_block(sig, r->members[1]->element->members[1], sizeof(elt_type)) &&
		    in_block(sig, r->members[1]->element->members[1]->element,
			     sizeof(elt_type)) &&
		    in_block(sig, r->members[2]->element, sizeof(elt_type));
	for (uint32_t i = 0; i < sig->nparams; i++)
		good = good && in_block(sig, sig->params[i], sizeof(elt_type));
	ok(good, "the signature, its types, arrays and text are one block");
	elt_signature_free(sig);
}

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */

struct bad_case {
	const char *text;
	elt_status status;
	size_t position;
	const char *message;    /* a substring of the message */
};

#define BAD ELT_E_BAD_SIGNATURE
#define UNS ELT_E_UNSUPPORTED

static const struct bad_case bad_cases[] = {
	{ "", BAD, 0, "empty signature" },
	{ "  \t\n", BAD, 4, "empty signature" },
	{ "(i)", BAD, 0, "expected the return type before '('" },
	{ "()", BAD, 0, "expected the return type" },
	{ "i", BAD, 1, "expected '(' after the return type, found the end" },
	{ "i i)", BAD, 2, "expected '(' after the return type, found 'i'" },
	{ "i(", BAD, 2, "expected ')' to close the parameter list opened at position 1" },
	{ "i(i", BAD, 3, "expected ')' to close the parameter list opened at position 1" },
	{ "v({i}", BAD, 5, "expected ')' to close the parameter list" },
	{ "i()x", BAD, 3, "unexpected 'x' after the closing ')'" },
	{ "v(i))", BAD, 4, "unexpected ')' after the closing ')'" },
	{ "v(i)\n x", BAD, 6, "unexpected 'x'" },
	{ "i(v)", BAD, 2, "void is only valid as the return type" },
	{ "v(v)", BAD, 2, "write () for no parameters" },
	{ "v({v})", BAD, 3, "void is only valid as the return type" },
	{ "v(TT)", BAD, 3, "T may appear only once" },
	{ "v(K i K)", BAD, 6, "K may appear only once" },
	{ "v(i ... T)", BAD, 8, "T (this) must come before '...'" },
	{ "v(... K)", BAD, 6, "K (the continuation) must come before '...'" },
	{ "v(... ...)", BAD, 6, "'...' may appear only once" },
	{ "v(..)", BAD, 2, "expected '...'" },
	{ "v(i.)", BAD, 3, "expected '...'" },
	{ "v(. ..)", BAD, 2, "expected '...'" },
	{ "v(i ... f)", BAD, 8, "a variadic float is passed as a double: write d" },
	{ "v(i ... d h)", BAD, 10, "a variadic int16 is passed as an int: write i" },
	{ "v(... z)", BAD, 6, "a variadic bool is passed as an int: write i" },
	{ "T()", BAD, 0, "T (this) is only valid as a parameter" },
	{ "K()", BAD, 0, "K (the continuation) is only valid as a parameter" },
	{ "v({T})", BAD, 3, "T (this) is only valid as a parameter" },
	{ "v(<K>)", BAD, 3, "K (the continuation) is only valid" },
	{ "v({i ...})", BAD, 5, "'...' is only valid in the parameter list" },
	{ "v(a)", BAD, 2, "unknown type code 'a'" },
	{ "x()", BAD, 0, "unknown type code 'x'" },
	{ "v(i,i)", BAD, 3, "expected a type, found ','" },
	{ "v(1)", BAD, 2, "expected a type, found '1'" },
	{ "v(i}", BAD, 3, "expected a type, found '}'" },
	{ "v(\x01)", BAD, 2, "expected a type, found byte 0x01" },
	{ "v(\xc3\xa9)", BAD, 2, "found byte 0xc3" },
	{ "v(i[2])", BAD, 3, "an array parameter decays to a pointer: write p" },
	{ "v(Cf [2])", BAD, 5, "an array parameter decays to a pointer" },
	{ "i[2]()", BAD, 1, "a function cannot return an array" },
	{ "v({i)", BAD, 4, "expected '}' to close the struct opened at position 2, found ')'" },
	{ "v(<i)", BAD, 4, "expected '>' to close the union opened at position 2" },
	{ "v({i>)", BAD, 4, "expected '}' to close the struct opened at position 2, found '>'" },
	{ "v(!<i})", BAD, 5, "expected '>' to close the union opened at position 3" },
	{ "l(i{", BAD, 4, "expected '}' to close the struct opened at position 3, found the end" },
	{ "v(!i)", BAD, 3, "expected '{' or '<' after '!' (packed), found 'i'" },
	{ "v(!)", BAD, 3, "expected '{' or '<' after '!'" },
	{ "v(!!{})", BAD, 3, "expected '{' or '<' after '!'" },
	{ "v({i[0]})", BAD, 5, "array count must be at least 1" },
	{ "v({i[]})", BAD, 5, "expected an array count after '[', found ']'" },
	{ "v({i[-1]})", BAD, 5, "expected an array count after '['" },
	{ "v({i[2})", BAD, 6, "expected ']' to close the array count opened at position 4" },
	{ "v({i[2 3]})", BAD, 7, "expected ']' to close the array count" },
	{ "v({i[99999999999999999999]})", BAD, 5, "array count is too large (at most 2147483647)" },
	{ "v({b[2147483648]})", BAD, 5, "array count is too large" },
	{ "v({[2]})", BAD, 3, "expected a type before '['" },
	{ "v([2])", BAD, 2, "expected a type before '['" },
	{ "v(C)", BAD, 3, "complex element must be f, d or D, found ')'" },
	{ "v(Ci)", BAD, 3, "complex element must be f, d or D, found 'i'" },
	{ "v(Cv)", BAD, 3, "complex element must be f, d or D" },
	{ "v(CCf)", BAD, 3, "complex element must be f, d or D" },
	{ "v(V)", BAD, 3, "expected the element count after 'V', found ')'" },
	{ "v(Vf)", BAD, 3, "expected the element count after 'V'" },
	{ "v(V0f)", BAD, 3, "vector element count must be at least 1" },
	{ "v(V99999999999f)", BAD, 3, "vector element count is too large" },
	{ "v(V4)", BAD, 4, "vector element must be one of b B h H i I l L q Q f d, found ')'" },
	{ "v(V4c)", BAD, 4, "vector element must be one of b B h H i I l L q Q f d, found 'c'" },
	{ "v(V4z)", BAD, 4, "found 'z'" },
	{ "v(V4p)", BAD, 4, "found 'p'" },
	{ "v(V4D)", BAD, 4, "found 'D'" },
	{ "v(V4v)", BAD, 4, "found 'v'" },
	{ "v(V2V2f)", BAD, 4, "vector element must be one of" },
	{ "v(V2{f})", BAD, 4, "vector element must be one of" },
	{ "v(V3f)", BAD, 2, "vector of 12 bytes: the size must be a power of two" },
	{ "v(V6b)", BAD, 2, "vector of 6 bytes: the size must be a power of two" },
	{ "v(V32d)", UNS, 2, "vector of 256 bytes is larger than 64 bytes" },
	{ "v(i V128b)", UNS, 4, "vector of 128 bytes is larger than 64 bytes" },
	{ "v({i[536870912]})", BAD, 4, "array is too large: a type's size must be below 2^31 bytes" },
	{ "v({b[65536][32768]})", BAD, 4, "array is too large" },
	{ "v({b[2147483647] b})", BAD, 17, "struct is too large" },
	{ "v({i[536870911] c})", BAD, 2, "struct is too large" },
	{ "v(<{i[536870911] c}>)", BAD, 3, "struct is too large" },
	{ "v(<b[2147483647] c> {c <b[2147483647] c>})", BAD, 23, "struct is too large" },
#ifndef __SIZEOF_INT128__
	{ "v(iq)", UNS, 3, "__int128 (q) is not supported on this ABI" },
	{ "Q()", UNS, 0, "unsigned __int128 (Q) is not supported on this ABI" },
	{ "v({V1q})", UNS, 5, "__int128 (q) is not supported" },
#endif
};

static void test_bad(void)
{
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *c = &bad_cases[i];
		elt_signature *sig = (elt_signature *)&sig;  /* not NULL */
		elt_parse_error err;
		char prefix[48];
		elt_status st;
		bool good;

		memset(&err, 'x', sizeof(err));
		elt_set_error(ELT_OK, "%s", "");
		st = elt_signature_parse(c->text, &sig, &err);
		snprintf(prefix, sizeof(prefix), "position %zu: ", c->position);
		good = st == c->status && sig == NULL &&
		       err.position == c->position &&
		       strncmp(err.message, prefix, strlen(prefix)) == 0 &&
		       strstr(err.message, c->message) != NULL &&
		       strncmp(elt_last_error(), "signature '", 11) == 0 &&
		       strstr(elt_last_error(), err.message) != NULL;
		ok(good, "'%s' is rejected at %zu: %s", show(c->text),
		   c->position, c->message);
		if (!good)
			tap_diag("  got status %d at %zu: %s | last error: %s",
				 st, err.position, show(err.message),
				 show(elt_last_error()));
	}

	/* The whole message, exactly. */
	elt_signature *sig;
	elt_signature_parse("v(TT)", &sig, NULL);
	is_str(elt_last_error(),
	       "signature 'v(TT)': position 3: T may appear only once",
	       "elt_last_error() quotes the text and the message");
	elt_signature_parse("l(i{", &sig, NULL);
	is_str(elt_last_error(),
	       "signature 'l(i{': position 4: expected '}' to close the "
	       "struct opened at position 3, found the end of the signature",
	       "an unterminated struct says where it was opened");
	elt_signature_parse("v(\n\x7f)", &sig, NULL);
	is_str(elt_last_error(),
	       "signature 'v(\\n\\x7f)': position 3: expected a type, found "
	       "byte 0x7f",
	       "control bytes are escaped in the quoted text");

}

static void test_api(void)
{
	elt_signature *sig = (elt_signature *)&sig;
	elt_parse_error err;
	elt_status st;

	st = elt_signature_parse(NULL, &sig, &err);
	ok(st == ELT_E_INVALID_ARGUMENT && sig == NULL &&
	   strstr(err.message, "NULL") && strstr(elt_last_error(), "NULL"),
	   "NULL text: invalid argument");
	st = elt_signature_parse("v()", NULL, &err);
	ok(st == ELT_E_INVALID_ARGUMENT && strstr(err.message, "NULL"),
	   "NULL out: invalid argument");
	st = elt_signature_parse(NULL, NULL, NULL);
	ok(st == ELT_E_INVALID_ARGUMENT, "all NULL: invalid argument");
	st = elt_signature_parse("v(", &sig, NULL);
	ok(st == ELT_E_BAD_SIGNATURE && sig == NULL &&
	   strstr(elt_last_error(), "position 2"),
	   "err may be NULL; elt_last_error() still has the message");

	memset(&err, 'x', sizeof(err));
	st = elt_signature_parse("v()", &sig, &err);
	ok(st == ELT_OK && sig && err.position == 0 && err.message[0] == '\0',
	   "success clears err");
	elt_signature_free(sig);
	/* A no-op, and a successful call: it leaves the last error alone
	 * (doc/api.md, elt_last_error).  A crash here fails the run. */
	char before[256];              /* elt_last_error()'s size */
	snprintf(before, sizeof(before), "%s", elt_last_error());
	elt_signature_free(NULL);
	ok(before[0] != '\0' && strcmp(elt_last_error(), before) == 0,
	   "elt_signature_free(NULL) is a no-op that keeps the last error: %s",
	   elt_last_error());

	/* A long text is cut around the error in elt_last_error(), and the
	 * message itself is never cut. */
	char text[600];
	size_t n = 0;
	n += (size_t)snprintf(text + n, sizeof(text) - n, "v(");
	for (int i = 0; i < 100; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "i ");
	n += (size_t)snprintf(text + n, sizeof(text) - n, "x");
	for (int i = 0; i < 100; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, " i");
	snprintf(text + n, sizeof(text) - n, ")");
	st = elt_signature_parse(text, &sig, &err);
	ok(st == ELT_E_BAD_SIGNATURE && err.position == 202 &&
	   strstr(err.message, "unknown type code 'x'") &&
	   strstr(elt_last_error(), err.message) &&
	   strncmp(elt_last_error(), "signature '...i i", 17) == 0 &&
	   strstr(elt_last_error(), "i i x i i") &&
	   strstr(elt_last_error(), "...': position 202: ") &&
	   strlen(elt_last_error()) < 200,
	   "a long text is quoted around the error: %s", elt_last_error());
}

/* ------------------------------------------------------------------------ */
/* Limits                                                                    */

static elt_status parse_status(const char *text, elt_parse_error *err,
			       elt_signature **out)
{
	elt_signature *sig = NULL;
	elt_status st = elt_signature_parse(text, &sig, err);

	if (out)
		*out = sig;
	else
		elt_signature_free(sig);
	return st;
}

static void test_limits(void)
{
	char text[2048];
	elt_parse_error err;
	elt_signature *sig;
	elt_status st;
	size_t n;

	/* 127 parameters, T and K and variadic ones included. */
	n = (size_t)snprintf(text, sizeof(text), "v(T K");
	for (int i = 2; i < 100; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, " i");
	n += (size_t)snprintf(text + n, sizeof(text) - n, " ...");
	for (int i = 100; i < 127; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, " d");
	snprintf(text + n, sizeof(text) - n, ")");
	st = parse_status(text, &err, &sig);
	ok(st == ELT_OK && sig && sig->nparams == 127 && sig->nfixed == 100 &&
	   sig->params[126]->kind == ELT_TYPE_DOUBLE,
	   "127 parameters are accepted");
	elt_signature_free(sig);
	snprintf(text + n, sizeof(text) - n, " z)");
	st = parse_status(text, &err, NULL);
	ok(st == ELT_E_BAD_SIGNATURE && err.position == n + 1 &&
	   strstr(err.message, "too many parameters (at most 127)"),
	   "the 128th parameter is rejected: %s", err.message);

	/* Nesting: 32 levels of structs and unions, not 33. */
	n = (size_t)snprintf(text, sizeof(text), "v(");
	for (int i = 0; i < 32; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%s",
				      i % 3 == 0 ? "{" : i % 3 == 1 ? "!<" : "<");
	n += (size_t)snprintf(text + n, sizeof(text) - n, "d");
	for (int i = 31; i >= 0; i--)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%s",
				      i % 3 == 0 ? "}" : ">");
	snprintf(text + n, sizeof(text) - n, ")");
	st = parse_status(text, &err, &sig);
	ok(st == ELT_OK && sig && sig->params[0]->size == sizeof(double),
	   "structs and unions nested 32 deep are accepted");
	elt_signature_free(sig);
	n = (size_t)snprintf(text, sizeof(text), "v(");
	for (int i = 0; i < 33; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "{");
	for (int i = 0; i < 33; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "}");
	snprintf(text + n, sizeof(text) - n, ")");
	st = parse_status(text, &err, NULL);
	ok(st == ELT_E_BAD_SIGNATURE && err.position == 34 &&
	   strstr(err.message, "nest at most 32 deep"),
	   "nesting 33 deep is rejected: %s", err.message);

	/* Deep nesting that is not struct nesting costs no stack. */
	n = (size_t)snprintf(text, sizeof(text), "v({i");
	for (int i = 0; i < 500; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "[1]");
	snprintf(text + n, sizeof(text) - n, "})");
	st = parse_status(text, &err, &sig);
	ok(st == ELT_OK && sig && sig->params[0]->size == 4 &&
	   sig->params[0]->members[0]->kind == ELT_TYPE_ARRAY,
	   "500 array dimensions are fine");
	elt_signature_free(sig);

	/* Sizes: up to 2^31 - 1. */
	st = parse_status("v({b[2147483647]})", &err, &sig);
	ok(st == ELT_OK && sig && sig->params[0]->size == 2147483647u,
	   "a struct of 2^31 - 1 bytes is accepted");
	elt_signature_free(sig);
	st = parse_status("v({b[65536][32767]} <c[2147483647]>)", &err, &sig);
	ok(st == ELT_OK && sig && sig->params[0]->size == 65536u * 32767u &&
	   sig->params[1]->size == 2147483647u,
	   "multi-dimensional arrays and unions near the limit");
	elt_signature_free(sig);
	st = parse_status("v({{}[2147483647] {}[2147483647]})", &err, &sig);
	ok(st == ELT_OK && sig && sig->params[0]->size == 0 &&
	   sig->params[0]->members[0]->count == 2147483647u,
	   "arrays of empty structs have size 0 at any count");
	elt_signature_free(sig);
	st = parse_status("v(V64b V16f V8d)", &err, &sig);
	ok(st == ELT_OK && sig && sig->params[0]->size == 64,
	   "64-byte vectors are accepted");
	elt_signature_free(sig);

	/* Many members: the temporary arrays grow past their first size. */
	n = (size_t)snprintf(text, sizeof(text), "v({");
	for (int i = 0; i < 300; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%s",
				      i % 2 ? "b" : "{h V2f}");
	snprintf(text + n, sizeof(text) - n, "})");
	st = parse_status(text, &err, &sig);
	{
		/* Members 2k and 2k+1 repeat with the period and offsets of
		 * this pair. */
		struct pair { struct { int16_t a; v2f b; } x; int8_t y; };
		size_t want = 149 * sizeof(struct pair) + offsetof(struct pair, y);

		ok(st == ELT_OK && sig && sig->params[0]->count == 300 &&
		   sig->params[0]->offsets[299] == want,
		   "300 members: the last one at %zu", want);
	}
	elt_signature_free(sig);
}

/* ------------------------------------------------------------------------ */
/* Fuzzing                                                                   */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	/* xorshift64*: deterministic, so a failure can be reproduced. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static unsigned rnd(unsigned n)
{
	return (unsigned)(rng() % n);
}

static const char alphabet[] =
	"vzcbBhHiIlLqQpfdDCVTK!{}<>[]().0123456789 \t\nxa,";

/* Checks a type against the layout rules; 0 when it breaks one. */
static int check_type(const elt_signature *sig, const elt_type *t, bool ret)
{
	const struct scalar_case *sc;
	uint64_t end = 0, maxsize = 0;
	uint32_t maxalign = 1;

	if (!t || !in_block(sig, t, sizeof(*t)) ||
	    (unsigned)t->kind >= ELT_TYPE_KIND_COUNT || !is_pow2(t->align) ||
	    t->size > 0x7fffffffu)
		return 0;
	switch (t->kind) {
	case ELT_TYPE_VOID:
		return ret && t->size == 0;
	case ELT_TYPE_COMPLEX:
		return t->element && in_block(sig, t->element, sizeof(elt_type)) &&
		       (t->element->kind == ELT_TYPE_FLOAT ||
			t->element->kind == ELT_TYPE_DOUBLE ||
			t->element->kind == ELT_TYPE_LONGDOUBLE) &&
		       t->size == 2 * t->element->size && t->count == 2;
	case ELT_TYPE_VECTOR:
		return t->element && check_type(sig, t->element, false) &&
		       t->element->kind >= ELT_TYPE_SINT8 &&
		       t->element->kind <= ELT_TYPE_DOUBLE &&
		       t->element->kind != ELT_TYPE_POINTER &&
		       t->size == (uint64_t)t->count * t->element->size &&
		       is_pow2(t->size) && t->size <= 64;
	case ELT_TYPE_ARRAY:
		return t->count >= 1 && t->element &&
		       check_type(sig, t->element, false) &&
		       t->size == (uint64_t)t->count * t->element->size &&
		       t->align == t->element->align && !t->members;
	case ELT_TYPE_STRUCT:
	case ELT_TYPE_UNION:
		if (!t->members || !t->offsets ||
		    !in_block(sig, t->members, t->count * sizeof(void *)) ||
		    !in_block(sig, t->offsets, t->count * sizeof(uint32_t)))
			return 0;
		for (uint32_t i = 0; i < t->count; i++) {
			const elt_type *m = t->members[i];
			uint32_t off = t->offsets[i];

			if (!check_type(sig, m, false))
				return 0;
			if (t->kind == ELT_TYPE_UNION && off != 0)
				return 0;
			if (t->kind == ELT_TYPE_STRUCT && off < end)
				return 0;       /* overlap */
			if (!(t->flags & ELT_TYPE_PACKED) && off % m->align)
				return 0;
			if ((t->flags & ELT_TYPE_PACKED) && off != end)
				return 0;       /* packed: no padding */
			if (t->kind == ELT_TYPE_STRUCT)
				end = (uint64_t)off + m->size;
			if (m->size > maxsize)
				maxsize = m->size;
			if (m->align > maxalign)
				maxalign = m->align;
		}
		if (t->kind == ELT_TYPE_UNION)
			end = maxsize;
		if (t->flags & ELT_TYPE_PACKED)
			return t->align == 1 && t->size == end;
		return t->align == maxalign &&
		       t->size == (end + maxalign - 1) / maxalign * maxalign;
	default:
		sc = scalar_by_kind(t->kind);
		return sc && t->size == sc->size && t->align == sc->align &&
		       !t->element && !t->members;
	}
}

static int check_signature(const elt_signature *sig, const char *text)
{
	if (!sig->text || sig->text == text || strcmp(sig->text, text) ||
	    sig->nparams > 127 || sig->nfixed > sig->nparams ||
	    !sig->params || !check_type(sig, sig->ret, true))
		return 0;
	if (!(sig->flags & ELT_SIGNATURE_VARIADIC) &&
	    sig->nfixed != sig->nparams)
		return 0;
	if (sig->flags & ~ELT_SIGNATURE_VARIADIC)
		return 0;
	if (sig->this_index >= (int32_t)sig->nfixed ||
	    sig->continuation_index >= (int32_t)sig->nfixed ||
	    sig->this_index < -1 || sig->continuation_index < -1 ||
	    (sig->this_index >= 0 &&
	     sig->this_index == sig->continuation_index))
		return 0;
	if (sig->this_index >= 0 &&
	    sig->params[sig->this_index]->kind != ELT_TYPE_POINTER)
		return 0;
	if (sig->continuation_index >= 0 &&
	    sig->params[sig->continuation_index]->kind != ELT_TYPE_POINTER)
		return 0;
	for (uint32_t i = 0; i < sig->nparams; i++)
		if (!check_type(sig, sig->params[i], false))
			return 0;
	return 1;
}

struct fuzz_stats {
	unsigned failures;
	unsigned accepted;
	unsigned rejected;
};

/* Parses one fuzz input: it must succeed with a sound result, or fail with
 * a positioned message. */
static void fuzz_one(const char *text, struct fuzz_stats *fs, bool must_pass)
{
	elt_signature *sig = (elt_signature *)&sig;
	elt_parse_error err;
	elt_status st;
	bool good;

	elt_set_error(ELT_OK, "%s", "");
	err.message[0] = 'x';
	err.position = (size_t)-1;
	st = elt_signature_parse(text, &sig, &err);
	if (st == ELT_OK) {
		fs->accepted++;
		good = sig && check_signature(sig, text);
		elt_signature_free(sig);
	} else {
		char prefix[48];

		fs->rejected++;
		snprintf(prefix, sizeof(prefix), "position %zu: ", err.position);
		good = !must_pass && sig == NULL &&
		       (st == ELT_E_BAD_SIGNATURE || st == ELT_E_UNSUPPORTED) &&
		       err.position <= strlen(text) &&
		       strncmp(err.message, prefix, strlen(prefix)) == 0 &&
		       strlen(err.message) > strlen(prefix) &&
		       strncmp(elt_last_error(), "signature '", 11) == 0 &&
		       strstr(elt_last_error(), err.message) != NULL;
	}
	if (!good) {
		if (fs->failures++ < 5)
			tap_diag("  '%s': status %d, %s", show(text), st,
				 st == ELT_OK ? "bad result" : err.message);
	}
}

static void fuzz_random(void)
{
	static const char tokens[] = "vzcbBhHiIlLqQpfdDCVTK!{}<>[]. 0123";
	struct fuzz_stats fs = { 0, 0, 0 };
	char text[64];

	for (int i = 0; i < NFUZZ_RANDOM; i++) {
		unsigned len = rnd(48), j = 0;

		/* Half of the strings get a return type and parentheses, so
		 * that some of them are valid and reach the layout code. */
		if (i & 1) {
			text[j++] = tokens[rnd(17)];
			text[j++] = '(';
			for (; j < len + 2; j++)
				text[j] = tokens[rnd(sizeof(tokens) - 1)];
			text[j++] = ')';
		} else {
			for (; j < len; j++)
				text[j] = rnd(10) ? alphabet[rnd(sizeof(alphabet) - 1)]
						  : (char)(1 + rnd(255));
		}
		text[j] = '\0';
		fuzz_one(text, &fs, false);
	}
	ok(fs.failures == 0 && fs.accepted > 0,
	   "%d random strings: no failure (%u accepted, %u rejected)",
	   NFUZZ_RANDOM, fs.accepted, fs.rejected);
}

static const char *const corpus[] = {
	"l(K i)", "v(T p d)", "{ld}(i {f f} ...)", "i(p ... d i)",
	"<i f[3]>(!{b l})", "V4f(V2d)", "CD()", "{}()", "v()",
	"z(c b B h H i I l L p f d D)", "v(T K {c {d i} b} <i f[3]>)",
	"{c{d V2d}[2] CD}(T K <i f[3]> !{b} p ... d)", "Cf(Cd CD V8h)",
	"!{c {b l} h}(!<c[3] h> {i[2][3] c})", "p(K {z[3] h} ... {} <>)",
	"V16b(V1i V2I V4l V8L V16f V8d)", "v(T {p c} {l c} {c p[4][2] h[3]})",
};

static void fuzz_mutated(void)
{
	struct fuzz_stats fs = { 0, 0, 0 };
	const size_t ncorpus = sizeof(corpus) / sizeof(corpus[0]);
	char text[128];

	for (int i = 0; i < NFUZZ_MUTATED; i++) {
		size_t len;
		unsigned edits = 1 + rnd(4);

		snprintf(text, sizeof(text), "%s", corpus[rnd((unsigned)ncorpus)]);
		for (unsigned e = 0; e < edits; e++) {
			len = strlen(text);
			unsigned at = rnd((unsigned)len + 1);
			char c = alphabet[rnd(sizeof(alphabet) - 1)];

			switch (rnd(4)) {
			case 0:         /* replace */
				if (at < len)
					text[at] = c;
				break;
			case 1:         /* insert */
				if (len + 2 < sizeof(text)) {
					memmove(text + at + 1, text + at,
						len - at + 1);
					text[at] = c;
				}
				break;
			case 2:         /* delete */
				if (at < len)
					memmove(text + at, text + at + 1,
						len - at);
				break;
			default:        /* truncate */
				text[at] = '\0';
				break;
			}
		}
		fuzz_one(text, &fs, false);
	}
	ok(fs.failures == 0, "%d mutated signatures: no failure (%u accepted, "
	   "%u rejected)", NFUZZ_MUTATED, fs.accepted, fs.rejected);
}

/* Writes a random valid type to the buffer. */
struct gen {
	char buf[1024];
	size_t n;
	bool variadic;          /* generating the arguments after "..." */
};

static void gen_put(struct gen *g, const char *s)
{
	size_t len = strlen(s);

	if (g->n + len + 1 < sizeof(g->buf)) {
		memcpy(g->buf + g->n, s, len + 1);
		g->n += len;
	}
}

static void gen_ws(struct gen *g)
{
	static const char *const spaces[] = { "", "", "", " ", "\t", "\n", "  " };

	gen_put(g, spaces[rnd(7)]);
}

static void gen_type(struct gen *g, int depth)
{
	static const char scal[] = "zcbBhHiIlLpfdD"
#ifdef __SIZEOF_INT128__
		"qQ"
#endif
		;
	static const char vec[] = "bBhHiIlLfd"
#ifdef __SIZEOF_INT128__
		"qQ"
#endif
		;
	char tmp[32];
	unsigned r = rnd(depth < 4 ? 10 : 7);

	gen_ws(g);
	if (r < 5) {
		tmp[0] = scal[rnd(sizeof(scal) - 1)];
		tmp[1] = '\0';
		/* a variadic argument has been through the default promotions */
		if (g->variadic && depth == 1 && strchr("zcbBhH", tmp[0]))
			tmp[0] = 'i';
		if (g->variadic && depth == 1 && tmp[0] == 'f')
			tmp[0] = 'd';
		gen_put(g, tmp);
	} else if (r == 5) {
		gen_put(g, "C");
		gen_ws(g);
		gen_put(g, rnd(3) == 0 ? "f" : rnd(2) ? "d" : "D");
	} else if (r == 6) {
		char e = vec[rnd(sizeof(vec) - 1)];
		unsigned esize = e == 'b' || e == 'B' ? 1 : e == 'h' || e == 'H' ? 2
			       : e == 'i' || e == 'I' || e == 'f' ? 4
			       : e == 'q' || e == 'Q' ? 16 : 8;
		unsigned total = esize << rnd(esize == 16 ? 3 : esize == 8 ? 4 : 5);

		snprintf(tmp, sizeof(tmp), "V%u", total / esize);
		gen_put(g, tmp);
		gen_ws(g);
		tmp[0] = e;
		tmp[1] = '\0';
		gen_put(g, tmp);
	} else {
		bool is_union = rnd(3) == 0;
		unsigned n = rnd(5);

		if (rnd(4) == 0)
			gen_put(g, "!");
		gen_ws(g);
		gen_put(g, is_union ? "<" : "{");
		for (unsigned i = 0; i < n; i++) {
			gen_type(g, depth + 1);
			if (rnd(4) == 0) {
				snprintf(tmp, sizeof(tmp), "[%u]", 1 + rnd(5));
				gen_put(g, tmp);
			}
		}
		gen_ws(g);
		gen_put(g, is_union ? ">" : "}");
	}
}

static void fuzz_generated(void)
{
	struct fuzz_stats fs = { 0, 0, 0 };
	unsigned wrong_shape = 0;

	for (int i = 0; i < NFUZZ_GENERATED; i++) {
		struct gen g = { .n = 0 };
		unsigned nparams = rnd(8), nfixed;
		int this_at = -1, k_at = -1;
		bool variadic = rnd(4) == 0;
		elt_signature *sig = NULL;

		g.buf[0] = '\0';
		if (rnd(5) == 0)
			gen_put(&g, "v");
		else
			gen_type(&g, 1);
		gen_ws(&g);
		gen_put(&g, "(");
		nfixed = variadic ? rnd(nparams + 1) : nparams;
		for (unsigned p = 0; p < nparams; p++) {
			if (p == nfixed) {
				gen_ws(&g);
				gen_put(&g, "...");
				g.variadic = true;
			}
			gen_ws(&g);
			if (p < nfixed && this_at < 0 && rnd(4) == 0) {
				gen_put(&g, "T");
				this_at = (int)p;
			} else if (p < nfixed && k_at < 0 && rnd(4) == 0) {
				gen_put(&g, "K");
				k_at = (int)p;
			} else {
				gen_type(&g, 1);
			}
		}
		if (variadic && nfixed == nparams) {
			gen_ws(&g);
			gen_put(&g, "...");
		}
		gen_ws(&g);
		gen_put(&g, ")");
		gen_ws(&g);

		fuzz_one(g.buf, &fs, true);
		if (elt_signature_parse(g.buf, &sig, NULL) == ELT_OK) {
			if (sig->nparams != nparams || sig->nfixed != nfixed ||
			    sig->this_index != this_at ||
			    sig->continuation_index != k_at ||
			    !!(sig->flags & ELT_SIGNATURE_VARIADIC) != variadic) {
				if (wrong_shape++ < 5)
					tap_diag("  '%s': wrong shape", show(g.buf));
			}
			elt_signature_free(sig);
		}
	}
	ok(fs.failures == 0 && fs.rejected == 0 && wrong_shape == 0,
	   "%d generated valid signatures all parse, with sound layouts",
	   NFUZZ_GENERATED);
}

int main(void)
{
	test_kind_names();
	test_scalars();
	test_complex_and_vectors();
	test_aggregates();
	test_signatures();
	test_one_block();
	test_bad();
	test_api();
	test_limits();
	fuzz_random();
	fuzz_mutated();
	fuzz_generated();
	return tap_done();
}
