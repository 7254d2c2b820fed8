/*
 * ELT_PLUGIN_NO_INVOCATIONS: while every plugin present says it needs no
 * invocations, segments reach the plugins with none and nothing is
 * counted; the first plugin that wants them turns tracking on for the
 * segments that follow.  Through the producer API: every build.
 */
#define ELT_PLUGIN_STATIC 1
#include "tap.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

static unsigned segments, with_invocation;

static void seen(const elt_info *info, void *state)
{
	elt_invocation inv;

	(void)state;
	segments++;
	with_invocation += elt_get_invocation(info, &inv) == ELT_OK;
}

ELT_PLUGIN_DEFINE(untracked, .enter = seen, .leave = seen,
		  .flags = ELT_PLUGIN_NO_INVOCATIONS);
ELT_PLUGIN_DEFINE(tracked);

static void invocation_of(elt_function_id id)
{
	elt_emit_enter(id, NULL, NULL);
	elt_emit_leave(id, NULL, NULL);
}

int main(void)
{
	elt_invocation_stats stats;

	if (elt_register_function(0x10, "Plain", "v()", 0) != ELT_OK ||
	    elt_plugin_add(&elt_plugin_untracked, NULL) != ELT_OK)
		tap_bail("setup: %s", elt_last_error());

	invocation_of(0x10);
	elt_get_invocation_stats(&stats);
	ok(segments == 2 && with_invocation == 0,
	   "a plugin that needs no invocations gets segments without one (%u of %u had one)",
	   with_invocation, segments);
	ok(stats.started == 0 && stats.completed == 0,
	   "and none were tracked (%llu started)", (unsigned long long)stats.started);

	if (elt_plugin_add(&elt_plugin_tracked, NULL) != ELT_OK)
		tap_bail("setup: %s", elt_last_error());
	invocation_of(0x10);
	elt_get_invocation_stats(&stats);
	ok(segments == 4 && with_invocation == 2,
	   "a plugin that wants them turns tracking on for everyone (%u of %u)",
	   with_invocation, segments);
	ok(stats.started == 1 && stats.completed == 1,
	   "the invocation after it is counted (%llu started, %llu completed)",
	   (unsigned long long)stats.started, (unsigned long long)stats.completed);
	elt_shutdown();
	return tap_done();
}
