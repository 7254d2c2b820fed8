/*
 * lib/aggregate.c, the leaf walk and the homogeneous-aggregate test the
 * port classifiers share, on types laid out by the signature parser.
 * Layout-dependent expectations use sizeof/offsetof of the same C types.
 */
#include "tap.h"
#include "aggregate.h"

#include <asyncelt.h>

#include <stddef.h>

/* The first parameter of "v(TYPE)". */
static elt_signature *parsed;
static const elt_type *type_of(const char *type)
{
	char text[128];

	elt_signature_free(parsed);
	snprintf(text, sizeof(text), "v(%s)", type);
	if (elt_signature_parse(text, &parsed, NULL) != ELT_OK)
		tap_bail("cannot parse %s: %s", text, elt_last_error());
	return parsed->params[0];
}

/* The leaves a walk saw, as "kind@offset kind@offset ...". */
struct trail {
	char text[256];
	size_t len;
	unsigned stop_after;    /* 0: never stop */
	unsigned seen;
};

static int record_leaf(const elt_type *leaf, uint32_t offset, void *arg)
{
	struct trail *t = arg;

	t->len += (size_t)snprintf(t->text + t->len, sizeof(t->text) - t->len, "%s%s@%u",
				   t->len ? " " : "", elt_type_kind_name(leaf->kind),
				   (unsigned)offset);
	return !(t->stop_after && ++t->seen == t->stop_after);
}

static void walk_is(const char *type, uint32_t base, const char *want)
{
	struct trail t = { .len = 0 };
	int done = elt_aggregate_walk(type_of(type), base, record_leaf, &t);

	ok(done == 1, "walk %s: not stopped", type);
	is_str(t.text, want, "walk %s at %u: the leaves", type, (unsigned)base);
}

struct fd { float f; double d; };
struct hic { int16_t h; int32_t i; char c; };
struct ld_i { long double x; int32_t i; };

static void test_walk(void)
{
	char want[128];
	struct trail t = { .len = 0, .stop_after = 2 };

	walk_is("i", 0, "int32@0");
	walk_is("i", 8, "int32@8");
	walk_is("{}", 0, "");
	snprintf(want, sizeof(want), "float@0 double@%u", (unsigned)offsetof(struct fd, d));
	walk_is("{f d}", 0, want);
	snprintf(want, sizeof(want), "int16@0 int32@%u int8@%u",
		 (unsigned)offsetof(struct hic, i), (unsigned)offsetof(struct hic, c));
	walk_is("{h i b}", 0, want);
	walk_is("!{b i}", 0, "int8@0 int32@1");
	walk_is("<b l f>", 4, "int8@4 int64@4 float@4");
	walk_is("{h[3]}", 0, "int16@0 int16@2 int16@4");
	walk_is("{b[2][2]}", 0, "int8@0 int8@1 int8@2 int8@3");
	walk_is("Cf", 0, "float@0 float@4");
	walk_is("{Cd}", 0, "double@0 double@8");
	walk_is("{V4f b}", 0, "vector@0 int8@16");
	snprintf(want, sizeof(want), "long double@0 int32@%u",
		 (unsigned)offsetof(struct ld_i, i));
	walk_is("{D i}", 0, want);

	ok(elt_aggregate_walk(type_of("{b b b b}"), 0, record_leaf, &t) == 0,
	   "a visitor that returns 0 stops the walk");
	is_str(t.text, "int8@0 int8@1", "and no leaf is visited after it");
}

static void homogeneous_is(const char *type, elt_type_kind base, uint32_t count)
{
	struct elt_homogeneous h = { NULL, 0 };
	int yes = elt_aggregate_homogeneous(type_of(type), &h);

	ok(yes && h.base && h.base->kind == base && h.count == count,
	   "%s: homogeneous, %u of %s", type, (unsigned)count, elt_type_kind_name(base));
}

static void not_homogeneous(const char *type)
{
	struct elt_homogeneous h = { NULL, 0 };

	ok(!elt_aggregate_homogeneous(type_of(type), &h), "%s: not homogeneous", type);
}

static void test_homogeneous(void)
{
	homogeneous_is("f", ELT_TYPE_FLOAT, 1);
	homogeneous_is("{f}", ELT_TYPE_FLOAT, 1);
	homogeneous_is("{d d d d}", ELT_TYPE_DOUBLE, 4);
	homogeneous_is("{f[3]}", ELT_TYPE_FLOAT, 3);
	homogeneous_is("{{f f} f}", ELT_TYPE_FLOAT, 3);
	homogeneous_is("{f[2][3]}", ELT_TYPE_FLOAT, 6);
	homogeneous_is("Cd", ELT_TYPE_DOUBLE, 2);
	homogeneous_is("{Cf f}", ELT_TYPE_FLOAT, 3);
	homogeneous_is("<f f[2]>", ELT_TYPE_FLOAT, 2);
	homogeneous_is("{D D}", ELT_TYPE_LONGDOUBLE, 2);
	homogeneous_is("{V4f V4i}", ELT_TYPE_VECTOR, 2);       /* vectors: by size */
	homogeneous_is("{d[5] d[4]}", ELT_TYPE_DOUBLE, 9);     /* the ABI sets the limit */
	homogeneous_is("{d {}}", ELT_TYPE_DOUBLE, 1);          /* empty members count 0 */

	not_homogeneous("i");
	not_homogeneous("{}");
	not_homogeneous("{f d}");
	not_homogeneous("{f i}");
	not_homogeneous("{{} <>}");
	not_homogeneous("<f d>");
	not_homogeneous("{V2f V4f}");
	not_homogeneous("{f V4f}");
	not_homogeneous("{p}");
}

int main(void)
{
	test_walk();
	test_homogeneous();
	elt_signature_free(parsed);
	return tap_done();
}
