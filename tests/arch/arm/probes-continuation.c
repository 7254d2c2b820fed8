/*
 * What probe_leave (probes.S) needs to know that only C can find out
 * easily: whether to set the continuation return register.  A JIT sets r2
 * at the Leave of an async method only; in any other the library does not
 * read it, and r2 may hold the third word of a result (a 16-byte vector,
 * returned in r0-r3 by the base standard), which the probe must leave
 * intact like the JIT would.
 */
#include <asyncelt.h>

#include "probes.h"

int probe_sets_continuation(void);

/* 1 for a function registered async, or not registered at all (tests of
 * unregistered functions set the register as they always did). */
int probe_sets_continuation(void)
{
	const elt_function_desc *f = elt_find_function(probe_function);

	return !f || (f->flags & ELT_FUNCTION_ASYNC);
}
