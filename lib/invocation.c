/*
 * Logical invocations: first compiling version of the API (no stitching
 * yet), so that plugins can be built against it.
 */
#include "internal.h"

#include <string.h>

elt_status elt_get_invocation(const elt_info *info, elt_invocation *out)
{
	(void)info;
	if (!out)
		return elt_set_error(ELT_E_INVALID_ARGUMENT, "elt_get_invocation: out is NULL");
	memset(out, 0, sizeof(*out));
	return ELT_E_DATAINCOMPLETE;
}

void **elt_get_invocation_slot(const elt_info *info)
{
	(void)info;
	return NULL;
}

void elt_get_invocation_stats(elt_invocation_stats *out)
{
	if (out)
		memset(out, 0, sizeof(*out));
}

void elt_foreach_live_invocation(const elt_plugin *self,
	void (*fn)(const elt_invocation *, const elt_function_desc *, void *, void *),
	void *arg)
{
	(void)self;
	(void)fn;
	(void)arg;
}
