/*
 * The producer API: segments reported by a runtime written in C (an
 * interpreter), whose values are in its memory rather than in registers.
 * A segment goes through the same dispatcher as a helper's; its info
 * carries the producer's pointers (struct elt_emitted), which the getters
 * read instead of a saved register image.  Works on every build, with or
 * without helpers.
 */
#include "internal.h"

/* Values the signature says exist but the producer did not give: the
 * getters answer ELT_E_DATAINCOMPLETE for them, and the producer hears of
 * its mistake. */
static elt_status check_values(const char *what, const struct elt_function *fn,
			       unsigned hook, const struct elt_emitted *values,
			       uintptr_t continuation)
{
	const elt_signature *sig = fn->signature;
	/* Only an async function resumes or suspends (dispatch.c). */
	int carries_values = !continuation || !(fn->desc.flags & ELT_FUNCTION_ASYNC);
	uint32_t nargs = sig->nparams - (sig->continuation_index >= 0);

	if (hook == ELT_HOOK_ENTER && carries_values && nargs && !values->args)
		return elt_set_error(ELT_E_INVALID_ARGUMENT,
				     "%s: args is NULL but '%s' (%s) takes %u parameters",
				     what, fn->desc.name, sig->text, (unsigned)nargs);
	if (hook == ELT_HOOK_LEAVE && carries_values && sig->ret->size && !values->ret)
		return elt_set_error(ELT_E_INVALID_ARGUMENT,
				     "%s: ret is NULL but '%s' (%s) returns a value",
				     what, fn->desc.name, sig->text);
	return ELT_OK;
}

/* Reports one segment; the status tells the producer what was wrong with
 * its call, but the segment is reported anyway (unless the id is 0) so
 * that Enter and Leave keep pairing up. */
static elt_status emit(const char *what, elt_function_id id, unsigned hook,
		       const struct elt_emitted *values, uintptr_t continuation)
{
	const struct elt_function *fn;
	struct elt_info info;

	if (!id)
		return elt_set_error(ELT_E_INVALID_ARGUMENT,
				     "%s: function id 0 (ids are non-zero)", what);
	fn = elt_registry_lookup(id);
	info.head.id = id;
	elt_info_set_function(&info, fn);
	info.caller_sp = 0;
	info.frame = NULL;
	info.emitted = values;
	elt_dispatch_emitted(&info, hook, continuation);
	if (ELT_UNLIKELY(!fn))
		return elt_set_error(ELT_E_UNKNOWN_FUNCTION,
				     "%s: function id %#lx was never registered; the "
				     "segment was reported without a name or values",
				     what, (unsigned long)id);
	return fn->signature ? check_values(what, fn, hook, values, continuation) : ELT_OK;
}

ELT_SEGMENT_PATH elt_status
elt_emit_enter(elt_function_id id, void *const *args, void *continuation)
{
	const struct elt_emitted values = { .args = args };

	return emit("elt_emit_enter", id, ELT_HOOK_ENTER, &values,
		    (uintptr_t)continuation);
}

ELT_SEGMENT_PATH elt_status
elt_emit_leave(elt_function_id id, const void *ret, void *continuation)
{
	const struct elt_emitted values = { .ret = ret };

	return emit("elt_emit_leave", id, ELT_HOOK_LEAVE, &values,
		    (uintptr_t)continuation);
}

ELT_SEGMENT_PATH elt_status
elt_emit_tailcall(elt_function_id id, void *const *args)
{
	const struct elt_emitted values = { .args = args };

	return emit("elt_emit_tailcall", id, ELT_HOOK_TAILCALL, &values, 0);
}
