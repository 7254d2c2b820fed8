/*
 * The producer API: first compiling version (reports nothing yet).
 */
#include "internal.h"

elt_status elt_emit_enter(elt_function_id id, void *const *args, void *continuation)
{
	(void)args;
	(void)continuation;
	if (!id)
		return elt_set_error(ELT_E_INVALID_ARGUMENT, "elt_emit_enter: function id 0");
	return ELT_E_UNSUPPORTED;
}

elt_status elt_emit_leave(elt_function_id id, const void *ret, void *continuation)
{
	(void)ret;
	(void)continuation;
	if (!id)
		return elt_set_error(ELT_E_INVALID_ARGUMENT, "elt_emit_leave: function id 0");
	return ELT_E_UNSUPPORTED;
}

elt_status elt_emit_tailcall(elt_function_id id, void *const *args)
{
	(void)args;
	if (!id)
		return elt_set_error(ELT_E_INVALID_ARGUMENT, "elt_emit_tailcall: function id 0");
	return ELT_E_UNSUPPORTED;
}
