/*
 * Walking aggregates to their leaves (aggregate.h), for the port
 * classifiers.
 */
#include "aggregate.h"

int elt_aggregate_walk(const elt_type *t, uint32_t base, elt_leaf_visitor visit,
		       void *arg)
{
	uint32_t i;

	switch (t->kind) {
	case ELT_TYPE_STRUCT:
	case ELT_TYPE_UNION:
		for (i = 0; i < t->count; i++)
			if (!elt_aggregate_walk(t->members[i], base + t->offsets[i], visit, arg))
				return 0;
		return 1;
	case ELT_TYPE_ARRAY:
	case ELT_TYPE_COMPLEX:
		for (i = 0; i < t->count; i++)
			if (!elt_aggregate_walk(t->element, base + i * t->element->size,
						visit, arg))
				return 0;
		return 1;
	default:
		return visit(t, base, arg);
	}
}

static int is_floating(const elt_type *t)
{
	return t->kind == ELT_TYPE_FLOAT || t->kind == ELT_TYPE_DOUBLE ||
	       t->kind == ELT_TYPE_LONGDOUBLE || t->kind == ELT_TYPE_VECTOR;
}

/* Two bases are the same when they are the same floating type, or
 * vectors of the same size (whatever their elements). */
static int same_base(const elt_type *a, const elt_type *b)
{
	return a->kind == b->kind && a->size == b->size;
}

/* How many bases `t` counts as, with *base set by the first leaf found:
 * 0 for an empty aggregate (which a homogeneous one may hold, as in GCC),
 * -1 when `t` is not homogeneous. */
static int64_t count_bases(const elt_type *t, const elt_type **base)
{
	int64_t n, total = 0;
	uint32_t i;

	switch (t->kind) {
	case ELT_TYPE_STRUCT:
	case ELT_TYPE_UNION:
		for (i = 0; i < t->count; i++) {
			n = count_bases(t->members[i], base);
			if (n < 0)
				return -1;
			if (t->kind == ELT_TYPE_UNION)
				total = n > total ? n : total;
			else
				total += n;
		}
		break;
	case ELT_TYPE_ARRAY:
	case ELT_TYPE_COMPLEX:
		n = count_bases(t->element, base);
		if (n < 0)
			return -1;
		total = n * t->count;   /* sizes are below 2^31: no overflow */
		break;
	default:
		if (!is_floating(t) || (*base && !same_base(*base, t)))
			return -1;
		*base = t;
		return 1;
	}
	/* padding anywhere disqualifies it */
	if (*base && total * (*base)->size != t->size)
		return -1;
	return total;
}

int elt_aggregate_homogeneous(const elt_type *t, struct elt_homogeneous *out)
{
	const elt_type *base = NULL;
	int64_t n = count_bases(t, &base);

	if (n <= 0 || n > UINT32_MAX)
		return 0;
	out->base = base;
	out->count = (uint32_t)n;
	return 1;
}
