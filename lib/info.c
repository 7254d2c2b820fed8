/*
 * The getters plugins call during a callback: what the segment is, and
 * where its arguments or return value are.  They follow the function's
 * plan (plan.h); the only work done here is reassembling split values.
 */
#include "internal.h"

#include <string.h>

static const char *const kind_names[ELT_SEGMENT_KIND_COUNT] = {
	[ELT_SEGMENT_CALL] = "call",
	[ELT_SEGMENT_RESUME] = "resume",
	[ELT_SEGMENT_SUSPEND] = "suspend",
	[ELT_SEGMENT_RETURN] = "return",
	[ELT_SEGMENT_TAILCALL] = "tailcall",
};

const char *elt_segment_kind_name(elt_segment_kind kind)
{
	return (unsigned)kind < ELT_SEGMENT_KIND_COUNT ? kind_names[kind] : "unknown";
}

elt_segment_kind elt_get_segment_kind(const elt_info *info)
{
	return info->head.kind;
}

elt_function_id elt_get_function_id(const elt_info *info)
{
	return info->head.id;
}

const elt_function_desc *elt_get_function(const elt_info *info)
{
	return info->head.function;
}

void *elt_get_function_data(const elt_info *info)
{
	const struct elt_function *fn = elt_info_function(info);

	if (!fn)
		return NULL;
	return atomic_load_explicit(&fn->plugin_data[info->head.plugin], memory_order_relaxed);
}

elt_status elt_get_frame_info(const elt_info *info, elt_frame_info *out)
{
	if (!out)
		return elt_set_error(ELT_E_INVALID_ARGUMENT, "elt_get_frame_info: out is NULL");
	out->function_id = info->head.id;
	out->caller_sp = info->caller_sp;
	/* A producer's segment has no machine frame: both are 0. */
	out->return_address = info->frame ? elt_arch_return_address(info) : 0;
	return ELT_OK;
}

elt_status elt_get_tailcall_info(const elt_info *info, elt_frame_info *out)
{
	if (info->head.kind != ELT_SEGMENT_TAILCALL)
		return elt_set_error(ELT_E_WRONG_CALLBACK,
				     "tailcall info asked in a %s segment",
				     elt_segment_kind_name(info->head.kind));
	return elt_get_frame_info(info, out);
}

elt_status elt_get_continuation(const elt_info *info, void **out)
{
	if (!out)
		return elt_set_error(ELT_E_INVALID_ARGUMENT, "elt_get_continuation: out is NULL");
	*out = (void *)elt_info_continuation(info);
	if (!elt_info_function(info) && info->head.kind != ELT_SEGMENT_TAILCALL)
		return elt_set_error(ELT_E_UNKNOWN_FUNCTION,
				     "function id %#lx was never registered: nothing says "
				     "where its continuation is", (unsigned long)info->head.id);
	return ELT_OK;
}

/* Why a function's arguments (or return value) cannot be described, or
 * ELT_OK. */
static elt_status describable(const elt_info *info, int ret)
{
	const struct elt_function *fn = elt_info_function(info);
	const char *unsupported;

	if (!fn)
		return elt_set_error(ELT_E_UNKNOWN_FUNCTION,
				     "function id %#lx was never registered",
				     (unsigned long)info->head.id);
	if (!fn->signature)
		return elt_set_error(ELT_E_NO_SIGNATURE,
				     "function '%s' was registered without a signature",
				     fn->desc.name);
	/* Values in the producer's memory need no ABI rule. */
	if (elt_info_emitted(info))
		return ELT_OK;
	unsupported = ret ? fn->plan.ret_unsupported : fn->plan.args_unsupported;
	if (unsupported)
		return elt_set_error(ELT_E_UNSUPPORTED, "function '%s' (%s): %s",
				     fn->desc.name, fn->signature->text, unsupported);
	return ELT_OK;
}

static elt_range value_range(const elt_info *info, const struct elt_value_plan *v)
{
	const struct elt_plan *plan = &elt_info_function(info)->plan;
	const struct elt_piece *p = &plan->pieces[v->first];
	elt_range r = { 0, v->size };
	unsigned char *dst;
	uint16_t i;

	if (v->count == 0)
		return (elt_range){ 0, 0 };
	if (v->count == 1 && p->dest == 0 && p->length == v->size) {
		r.start = elt_piece_address(info, p);
		return r;
	}
	/* Only a helper's segment splits values, and the plan of a function
	 * that has one asks for scratch room: its info then begins an
	 * elt_frame_segment (dispatch.c). */
	dst = ((struct elt_frame_segment *)(uintptr_t)info)->scratch + v->scratch;
	for (i = 0; i < v->count; i++, p++)
		memcpy(dst + p->dest, (const void *)elt_piece_address(info, p), p->length);
	r.start = (uintptr_t)dst;
	return r;
}

/* A producer's arguments (elt_emit_enter): one pointer each, in the
 * signature's order without K; sizes from the signature. */
static uint32_t emitted_argument_count(const elt_signature *sig)
{
	return sig->nparams - (sig->continuation_index >= 0);
}

static elt_range emitted_argument(const elt_info *info, uint32_t i)
{
	const elt_signature *sig = elt_info_function(info)->signature;
	uint32_t param = i + (sig->continuation_index >= 0 &&
			      i >= (uint32_t)sig->continuation_index);

	return (elt_range){ (uintptr_t)elt_info_emitted(info)->args[i], sig->params[param]->size };
}

elt_status elt_get_enter_info(const elt_info *info, elt_range *ranges,
			      size_t *count, size_t *total_size)
{
	const struct elt_emitted *emitted = elt_info_emitted(info);
	const struct elt_function *fn;
	const struct elt_plan *plan;
	size_t total = 0;
	elt_status st;
	uint32_t i, nargs;

	if (!count || (*count && !ranges))
		return elt_set_error(ELT_E_INVALID_ARGUMENT,
				     "elt_get_enter_info: count is NULL, or ranges is NULL "
				     "with a non-zero count");
	if (info->head.kind != ELT_SEGMENT_CALL && info->head.kind != ELT_SEGMENT_RESUME)
		return elt_set_error(ELT_E_WRONG_CALLBACK,
				     "enter info asked in a %s segment",
				     elt_segment_kind_name(info->head.kind));
	if (info->head.kind == ELT_SEGMENT_RESUME) {
		*count = 0;
		if (total_size)
			*total_size = 0;
		return ELT_E_DATAINCOMPLETE;
	}
	st = describable(info, 0);
	if (st != ELT_OK)
		return st;
	fn = elt_info_function(info);
	plan = &fn->plan;
	nargs = emitted ? emitted_argument_count(fn->signature) : plan->nargs;
	if (*count < nargs) {
		*count = nargs;         /* the protocol, not an error: no message */
		return ELT_E_INSUFFICIENT_BUFFER;
	}
	if (emitted && nargs && !emitted->args) {
		*count = 0;             /* the producer gave none (elt_emit_enter) */
		if (total_size)
			*total_size = 0;
		return ELT_E_DATAINCOMPLETE;
	}
	for (i = 0; i < nargs; i++) {
		ranges[i] = emitted ? emitted_argument(info, i)
				    : value_range(info, &plan->args[i]);
		total += ranges[i].length;
	}
	*count = nargs;
	if (total_size)
		*total_size = total;
	return ELT_OK;
}

elt_status elt_get_return_info(const elt_info *info, elt_range *range)
{
	const struct elt_emitted *emitted = elt_info_emitted(info);
	elt_status st;

	if (!range)
		return elt_set_error(ELT_E_INVALID_ARGUMENT, "elt_get_return_info: range is NULL");
	*range = (elt_range){ 0, 0 };
	if (info->head.kind != ELT_SEGMENT_RETURN && info->head.kind != ELT_SEGMENT_SUSPEND)
		return elt_set_error(ELT_E_WRONG_CALLBACK,
				     "return info asked in a %s segment",
				     elt_segment_kind_name(info->head.kind));
	if (info->head.kind == ELT_SEGMENT_SUSPEND)
		return ELT_E_DATAINCOMPLETE;
	st = describable(info, 1);
	if (st != ELT_OK)
		return st;
	if (emitted) {
		size_t size = elt_info_function(info)->signature->ret->size;

		if (size && !emitted->ret)
			return ELT_E_DATAINCOMPLETE;    /* the producer gave none */
		*range = (elt_range){ size ? (uintptr_t)emitted->ret : 0, size };
		return ELT_OK;
	}
	*range = value_range(info, &elt_info_function(info)->plan.ret);
	return ELT_OK;
}
