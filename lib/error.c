/*
 * Status strings and the per-thread "last error" message that names the
 * bad input behind a failing call.
 */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>

static const char *const status_text[ELT_STATUS_COUNT] = {
	[ELT_OK] = "success",
	[ELT_E_DATAINCOMPLETE] = "data incomplete: this segment carries no such data",
	[ELT_E_INVALID_ARGUMENT] = "invalid argument",
	[ELT_E_UNKNOWN_FUNCTION] = "unknown function id",
	[ELT_E_NO_SIGNATURE] = "function registered without a signature",
	[ELT_E_INSUFFICIENT_BUFFER] = "insufficient buffer",
	[ELT_E_WRONG_CALLBACK] = "not available in this kind of callback",
	[ELT_E_BAD_SIGNATURE] = "malformed signature",
	[ELT_E_UNSUPPORTED] = "not supported on this ABI",
	[ELT_E_EXISTS] = "function id already registered",
	[ELT_E_NO_MEMORY] = "out of memory",
	[ELT_E_BAD_OPTION] = "malformed or unknown option",
	[ELT_E_PLUGIN] = "plugin could not be loaded",
	[ELT_E_PLUGIN_ABI] = "plugin built for an incompatible ABI",
	[ELT_E_LIMIT] = "table full",
	[ELT_E_CHECK_FAILED] = "a plugin's checks failed",
	[ELT_E_IO] = "input/output error",
	[ELT_E_STATE] = "not valid in the library's current state",
};

const char *elt_strerror(elt_status status)
{
	if ((unsigned)status < ELT_STATUS_COUNT && status_text[status])
		return status_text[status];
	return "unknown status";
}

/* Not initial-exec (ELT_TLS): 256 bytes of static TLS would come out of
 * glibc's small surplus when the library is dlopen()ed, and no hot path
 * reads this. */
static __thread char last_error[256];

const char *elt_last_error(void)
{
	return last_error;
}

elt_status elt_vset_error(elt_status status, const char *fmt, va_list ap)
{
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	return status;
}

elt_status elt_set_error(elt_status status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	elt_vset_error(status, fmt, ap);
	va_end(ap);
	return status;
}
