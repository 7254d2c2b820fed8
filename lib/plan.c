/*
 * Building value plans (plan.h): the portable half of argument decoding.
 */
#include "internal.h"
#include "plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void elt_plan_begin(struct elt_plan_builder *b, struct elt_plan *plan)
{
	memset(plan, 0, sizeof(*plan));
	memset(b, 0, sizeof(*b));
	b->plan = plan;
}

static int grow(void **array, uint32_t *cap, uint32_t need, size_t elem)
{
	uint32_t n = *cap ? *cap : 8;
	void *p;

	if (need <= *cap)
		return 1;
	while (n < need)
		n *= 2;
	p = realloc(*array, (size_t)n * elem);
	if (!p)
		return 0;
	*array = p;
	*cap = n;
	return 1;
}

void elt_plan_return(struct elt_plan_builder *b, uint32_t size)
{
	b->plan->ret.size = size;
	b->plan->ret.first = (uint16_t)b->plan->npieces;
	b->current = &b->plan->ret;
}

void elt_plan_argument(struct elt_plan_builder *b, uint32_t size)
{
	struct elt_plan *plan = b->plan;
	struct elt_value_plan *v;

	if (!grow((void **)&plan->args, &b->args_cap, plan->nargs + 1,
		  sizeof(*plan->args))) {
		b->failed = 1;
		b->current = NULL;
		return;
	}
	v = &plan->args[plan->nargs++];
	memset(v, 0, sizeof(*v));
	v->size = size;
	v->first = (uint16_t)plan->npieces;
	b->current = v;
}

void elt_plan_piece(struct elt_plan_builder *b, enum elt_source source,
		    uint32_t offset, uint32_t length, uint32_t dest)
{
	struct elt_plan *plan = b->plan;
	struct elt_piece *p;

	if (!b->current || b->failed)
		return;
	/* A piece that continues the value's previous one in the same place
	 * (the two halves of an xmm register, fa0 and fa1, two stack slots)
	 * extends it: fewer copies, and a value whole in one place is read
	 * in place.  Not for the _REF sources: their offsets name slots
	 * holding addresses, not the bytes. */
	if (b->current->count && (source == ELT_SRC_FRAME || source == ELT_SRC_STACK)) {
		p = &plan->pieces[plan->npieces - 1];
		if (p->source == source && p->offset + p->length == offset &&
		    p->dest + p->length == dest) {
			p->length += length;
			return;
		}
	}
	if (!grow((void **)&plan->pieces, &b->pieces_cap, plan->npieces + 1,
		  sizeof(*plan->pieces))) {
		b->failed = 1;
		return;
	}
	p = &plan->pieces[plan->npieces++];
	p->source = (uint8_t)source;
	p->offset = offset;
	p->length = length;
	p->dest = dest;
	b->current->count++;
}

static void vunsupported(struct elt_plan_builder *b, char **reason,
			 const char *fmt, va_list ap)
{
	char buf[200];

	if (*reason)
		return;         /* the first reason is the one to read */
	vsnprintf(buf, sizeof(buf), fmt, ap);
	*reason = strdup(buf);
	if (!*reason)
		b->failed = 1;
}

void elt_plan_return_unsupported(struct elt_plan_builder *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vunsupported(b, &b->plan->ret_unsupported, fmt, ap);
	va_end(ap);
}

void elt_plan_arguments_unsupported(struct elt_plan_builder *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vunsupported(b, &b->plan->args_unsupported, fmt, ap);
	va_end(ap);
}

/* K, as far as the ABI is concerned: a pointer. */
static const elt_type continuation_type = {
	.kind = ELT_TYPE_POINTER, .size = sizeof(void *), .align = _Alignof(void *),
};

/* Places K like a pointer argument, then takes its piece out of the
 * arguments into plan->continuation.  0 when the ABI could not. */
static int place_continuation(struct elt_plan_builder *b, void *cursor)
{
	struct elt_plan *plan = b->plan;
	const char *why = NULL;

	elt_plan_argument(b, continuation_type.size);
	if (b->failed || !elt_arch_rules.place_argument(b, cursor, &continuation_type, 0, &why) ||
	    plan->args[plan->nargs - 1].count != 1)
		return 0;
	plan->continuation = plan->pieces[--plan->npieces];
	plan->has_continuation = 1;
	plan->nargs--;
	b->current = NULL;
	return 1;
}

elt_status elt_plan_signature(struct elt_plan_builder *b, const elt_signature *sig)
{
	const struct elt_abi_rules *rules = &elt_arch_rules;
	unsigned char cursor[ELT_CURSOR_MAX] __attribute__((aligned(16)));
	const char *why = NULL;
	uint32_t i;

	if (!sig)
		return ELT_OK;
	memset(cursor, 0, sizeof cursor);
	if (rules->begin)
		rules->begin(cursor, sig);
	elt_plan_return(b, sig->ret->size);
	if (!rules->place_return(b, cursor, sig->ret, &why)) {
		if (why)
			elt_plan_return_unsupported(b, "%s", why);
		else
			elt_plan_return_unsupported(b, "%s return values are not decoded "
						    "on %s",
						    elt_type_kind_name(sig->ret->kind),
						    elt_arch_abi);
		if (rules->undecoded_return_moves_arguments) {
			elt_plan_arguments_unsupported(b, "where the arguments are depends "
						       "on how the %s return value is "
						       "passed, not decoded on %s",
						       elt_type_kind_name(sig->ret->kind),
						       elt_arch_abi);
			return ELT_OK;
		}
	}

	for (i = 0; i < sig->nparams; i++) {
		const elt_type *t = sig->params[i];
		int variadic = (sig->flags & ELT_SIGNATURE_VARIADIC) && i >= sig->nfixed;

		if ((int32_t)i == sig->continuation_index) {
			if (!place_continuation(b, cursor))
				break;
			continue;
		}
		why = NULL;
		elt_plan_argument(b, t->size);
		if (!rules->place_argument(b, cursor, t, variadic, &why)) {
			/* every later argument's place depends on this one */
			if (why)
				elt_plan_arguments_unsupported(b, "parameter %u: %s", i + 1, why);
			else
				elt_plan_arguments_unsupported(b, "%s arguments are not decoded "
							       "on %s (parameter %u)",
							       elt_type_kind_name(t->kind),
							       elt_arch_abi, i + 1);
			break;
		}
	}
	return ELT_OK;
}

/* A value is read in place when one piece covers all of it. */
static int in_place(const struct elt_plan *plan, const struct elt_value_plan *v)
{
	const struct elt_piece *p = &plan->pieces[v->first];

	return v->count == 1 && p->dest == 0 && p->length == v->size;
}

static void place(struct elt_plan *plan, struct elt_value_plan *v)
{
	if (v->count == 0 || in_place(plan, v))
		return;
	plan->scratch_size = (plan->scratch_size + 15u) & ~15u;
	v->scratch = plan->scratch_size;
	plan->scratch_size += v->size;
}

int elt_plan_end(struct elt_plan_builder *b)
{
	struct elt_plan *plan = b->plan;
	uint32_t i;

	if (b->failed)
		return ELT_E_NO_MEMORY;
	if (plan->npieces > UINT16_MAX)
		return elt_set_error(ELT_E_UNSUPPORTED, "too many pieces to decode");
	place(plan, &plan->ret);
	for (i = 0; i < plan->nargs; i++)
		place(plan, &plan->args[i]);
	if (plan->scratch_size > ELT_SCRATCH_SIZE) {
		/* both: they share the buffer */
		elt_plan_arguments_unsupported(b, "the values of this signature need "
					       "%u bytes of scratch space, more than "
					       "the %u a callback has",
					       plan->scratch_size, ELT_SCRATCH_SIZE);
		elt_plan_return_unsupported(b, "%s", plan->args_unsupported);
	}
	return b->failed ? ELT_E_NO_MEMORY : ELT_OK;
}

void elt_plan_free(struct elt_plan *plan)
{
	free(plan->args);
	free(plan->pieces);
	free(plan->ret_unsupported);
	free(plan->args_unsupported);
	memset(plan, 0, sizeof(*plan));
}
