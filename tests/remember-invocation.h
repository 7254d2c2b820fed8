/*
 * The plugin of the invocation tests: every segment's invocation, as the
 * library gave it to the callbacks, in `last` (the reporting thread's
 * own; static TLS, so a signal handler may report too).  Add it with
 * elt_plugin_add(&elt_plugin_remember, NULL).
 */
#ifndef ELT_TESTS_REMEMBER_INVOCATION_H
#define ELT_TESTS_REMEMBER_INVOCATION_H

#define ELT_PLUGIN_STATIC 1
#include <asyncelt.h>
#include <asyncelt/plugin.h>

static _Thread_local elt_invocation last;

static void remember(const elt_info *info, void *state)
{
	(void)state;
	elt_get_invocation(info, &last);
}
ELT_PLUGIN_DEFINE(remember, .enter = remember, .leave = remember);

#endif
