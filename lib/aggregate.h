/*
 * Aggregates as calling conventions see them: a struct, union or array is
 * classified by the scalars it is made of and where they sit.  Every port
 * needs that (x86-64 eightbytes, the homogeneous aggregates of AArch64,
 * ARM and PowerPC, the floating-point structs of RISC-V), so it lives here
 * once, for the classifiers in arch/ to use at registration.  Nothing here
 * runs on the hot path.
 */
#ifndef ELT_AGGREGATE_H
#define ELT_AGGREGATE_H

#include <asyncelt.h>
#include <stdint.h>

/* Called for each leaf with its byte offset from the start of the
 * outermost value; returns 0 to stop the walk. */
typedef int (*elt_leaf_visitor)(const elt_type *leaf, uint32_t offset, void *arg);

/*
 * Visits the scalar leaves of `t` (at `base`): struct and union members
 * at their offsets, in declaration order; every element of an array; each
 * part of a complex number, as a leaf of the element type (psABIs treat
 * `_Complex float` as two floats); a vector as one leaf.  A scalar is its
 * own only leaf, an empty struct has none.  Returns 0 when the visitor
 * stopped the walk, 1 otherwise.
 *
 * An array is walked element by element: check the size of a type before
 * walking it when a bound matters (a `{b[100000]}` has 100000 leaves).
 */
int elt_aggregate_walk(const elt_type *t, uint32_t base, elt_leaf_visitor visit,
		       void *arg);

/*
 * A homogeneous aggregate (AAPCS64's HFA and HVA, AAPCS's VFP candidates,
 * ELFv2's homogeneous float and vector aggregates): every leaf is the same
 * floating-point type, or vectors of one same size, with no padding
 * anywhere.  Complex values count as two of their element, arrays as their
 * element count times the element's, unions as their largest member (all
 * of the same base), structs as the sum of their members; an empty struct
 * or union inside counts as nothing (GCC's view), but one alone is not
 * homogeneous.
 */
struct elt_homogeneous {
	const elt_type *base;   /* float, double, long double or a vector */
	uint32_t count;         /* how many of them */
};

/* 1 and *out filled when `t` (any kind, a lone scalar included) is made of
 * one base type only and has no padding; 0 otherwise (nothing in it,
 * integers, mixed bases).  The ABI then checks count against its own
 * limit (4 on ARM and AArch64, 8 on ppc64le). */
int elt_aggregate_homogeneous(const elt_type *t, struct elt_homogeneous *out);

#endif
