/*
 * The signature parser (elt_signature_parse, lib/signature.c): any text is
 * either refused with a position inside it and a message, or laid out as a
 * consistent tree of types.
 */
#include "fuzz.h"

#include <asyncelt.h>

#include <string.h>

static int is_power_of_two(uint32_t v)
{
	return v && !(v & (v - 1));
}

static int is_floating(elt_type_kind k)
{
	return k == ELT_TYPE_FLOAT || k == ELT_TYPE_DOUBLE || k == ELT_TYPE_LONGDOUBLE;
}

static void check_type(const elt_type *t, unsigned depth)
{
	uint32_t i;

	FUZZ_CHECK(t != NULL, "a NULL type");
	FUZZ_CHECK(depth < 64, "types nested %u deep", depth);
	FUZZ_CHECK((unsigned)t->kind < ELT_TYPE_KIND_COUNT, "kind %u", (unsigned)t->kind);
	FUZZ_CHECK(elt_type_kind_name(t->kind) != NULL, "kind %u has no name", (unsigned)t->kind);
	FUZZ_CHECK(is_power_of_two(t->align), "%s: alignment %u",
		   elt_type_kind_name(t->kind), t->align);
	FUZZ_CHECK(t->size % t->align == 0, "%s: size %u, alignment %u",
		   elt_type_kind_name(t->kind), t->size, t->align);
	switch (t->kind) {
	case ELT_TYPE_STRUCT: case ELT_TYPE_UNION:
		FUZZ_CHECK(t->members && t->offsets, "aggregate without member arrays");
		for (i = 0; i < t->count; i++) {
			const elt_type *m = t->members[i];

			check_type(m, depth + 1);
			FUZZ_CHECK((uint64_t)t->offsets[i] + m->size <= t->size,
				   "member %u at %u, %u bytes, outside the %u of its aggregate",
				   i, t->offsets[i], m->size, t->size);
			FUZZ_CHECK((t->flags & ELT_TYPE_PACKED) || t->offsets[i] % m->align == 0,
				   "member %u misaligned at %u", i, t->offsets[i]);
			FUZZ_CHECK(t->kind == ELT_TYPE_STRUCT || t->offsets[i] == 0,
				   "union member %u at %u", i, t->offsets[i]);
			FUZZ_CHECK(t->kind == ELT_TYPE_UNION || i == 0 ||
				   t->offsets[i] >= t->offsets[i - 1] + t->members[i - 1]->size,
				   "member %u overlaps the one before", i);
		}
		break;
	case ELT_TYPE_ARRAY: case ELT_TYPE_VECTOR:
		check_type(t->element, depth + 1);
		FUZZ_CHECK((uint64_t)t->element->size * t->count <= t->size,
			   "%u elements of %u bytes in %u", t->count, t->element->size, t->size);
		FUZZ_CHECK(t->kind == ELT_TYPE_ARRAY || t->size <= 64, "a %u-byte vector", t->size);
		break;
	case ELT_TYPE_COMPLEX:
		check_type(t->element, depth + 1);
		FUZZ_CHECK(is_floating(t->element->kind) && t->count == 2 &&
			   t->size == 2 * t->element->size, "complex of %s, %u bytes",
			   elt_type_kind_name(t->element->kind), t->size);
		break;
	default:
		FUZZ_CHECK(t->kind == ELT_TYPE_VOID ? t->size == 0 : t->size > 0,
			   "%s of %u bytes", elt_type_kind_name(t->kind), t->size);
		break;
	}
}

static void check_signature(const elt_signature *sig, const char *text)
{
	uint32_t i;

	FUZZ_CHECK(sig->text && strcmp(sig->text, text) == 0, "text not kept");
	check_type(sig->ret, 0);
	FUZZ_CHECK(sig->nfixed <= sig->nparams, "%u fixed of %u", sig->nfixed, sig->nparams);
	FUZZ_CHECK(sig->nparams == 0 || sig->params, "no parameter array");
	for (i = 0; i < sig->nparams; i++) {
		check_type(sig->params[i], 0);
		FUZZ_CHECK(sig->params[i]->kind != ELT_TYPE_VOID, "a void parameter %u", i);
	}
	FUZZ_CHECK(sig->this_index == -1 ||
		   ((uint32_t)sig->this_index < sig->nparams &&
		    sig->params[sig->this_index]->kind == ELT_TYPE_POINTER),
		   "this at %d", sig->this_index);
	FUZZ_CHECK(sig->continuation_index == -1 ||
		   ((uint32_t)sig->continuation_index < sig->nparams &&
		    sig->params[sig->continuation_index]->kind == ELT_TYPE_POINTER),
		   "continuation at %d", sig->continuation_index);
	FUZZ_CHECK(!(sig->flags & ~ELT_SIGNATURE_VARIADIC), "flags %#x", sig->flags);
}

FUZZ_HARNESS(signature)
{
	char *text = fuzz_string(data, size);
	elt_signature *sig = (elt_signature *)1;
	elt_parse_error err;
	elt_status st;

	if (!text)
		return 0;
	memset(&err, 0x55, sizeof(err));
	st = elt_signature_parse(text, &sig, &err);
	if (st == ELT_OK) {
		FUZZ_CHECK(sig != NULL, "OK without a signature");
		FUZZ_CHECK(err.message[0] == 0, "OK with a message");
		check_signature(sig, text);
		elt_signature_free(sig);
	} else {
		FUZZ_CHECK(st == ELT_E_BAD_SIGNATURE || st == ELT_E_UNSUPPORTED,
			   "status %s", elt_strerror(st));
		FUZZ_CHECK(sig == NULL, "a failure left *out set");
		FUZZ_CHECK(memchr(err.message, 0, sizeof(err.message)) && err.message[0],
			   "no message, or not terminated");
		FUZZ_CHECK(err.position <= size, "position %zu past the %zu bytes",
			   err.position, size);
		FUZZ_CHECK(elt_last_error()[0], "elt_last_error() empty");
	}
	free(text);
	return 0;
}
