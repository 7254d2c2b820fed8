/*
 * A signal whose handler reports a helper segment, delivered in the
 * dispatcher just before it raises the thread's flag (linked with the
 * library built with its test points live, lib/test-points.h).  The
 * handler's segment runs whole there, its plugin seeing the thread's own
 * elt_info (elt_thread.info, dispatch.c); the interrupted segment must
 * then run with its own id, kind and caller SP: the dispatcher writes the
 * thread's info only once the flag is up, and a handler's segment after
 * that is not reported.
 */
#define ELT_PLUGIN_STATIC 1
#include "probes.h"
#include "tap.h"
#include "../lib/test-points.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

static const elt_function_id OUTER = 0x30;
static _Atomic int signals_to_raise;

/* What each callback saw, in order. */
static struct {
	elt_function_id id;
	elt_segment_kind kind;
	uintptr_t caller_sp;
} seen[8];
static unsigned nseen;

static void record(const elt_info *info, void *state)
{
	elt_frame_info frame;

	(void)state;
	if (nseen == sizeof(seen) / sizeof(seen[0]))
		return;
	elt_get_frame_info(info, &frame);
	seen[nseen].id = elt_get_function_id(info);
	seen[nseen].kind = elt_get_segment_kind(info);
	seen[nseen].caller_sp = frame.caller_sp;
	nseen++;
}

ELT_PLUGIN_DEFINE(recorder, .enter = record, .leave = record,
		  .flags = ELT_PLUGIN_NO_INVOCATIONS);

static void handler(int sig)
{
	(void)sig;
	probe_lean_pair();      /* PROBE_LEAN_ID */
}

/* Raises the signal once, at the first segment that reaches the point. */
static void hook(enum elt_test_point point, uintptr_t continuation)
{
	(void)continuation;
	if (point == ELT_POINT_FLAG_RAISING && atomic_fetch_sub(&signals_to_raise, 1) == 1)
		raise(SIGUSR1);
}

int main(void)
{
	tap_plan(5);
	alarm(60);
	signal(SIGUSR1, handler);
	if (elt_register_function(OUTER, "Outer", "v()", 0) != ELT_OK ||
	    elt_register_function(PROBE_LEAN_ID, "InHandler", "v()", 0) != ELT_OK ||
	    elt_plugin_add(&elt_plugin_recorder, NULL) != ELT_OK)
		tap_bail("setup: %s", elt_last_error());
	probe_function = OUTER;
	probe_pair();           /* the thread's first segment: attached */
	nseen = 0;

	elt_test_hook = hook;
	atomic_store(&signals_to_raise, 1);
	probe_pair();
	elt_test_hook = NULL;

	is_int(nseen, 4, "the handler's pair and the interrupted pair were reported");
	ok(nseen == 4 && seen[0].id == PROBE_LEAN_ID && seen[1].id == PROBE_LEAN_ID &&
	   seen[0].kind == ELT_SEGMENT_CALL && seen[1].kind == ELT_SEGMENT_RETURN,
	   "the handler's segments first, whole");
	ok(nseen == 4 && seen[2].id == OUTER && seen[3].id == OUTER &&
	   seen[2].kind == ELT_SEGMENT_CALL && seen[3].kind == ELT_SEGMENT_RETURN,
	   "then the interrupted Enter with its own id and kind, and its Leave");
	ok(nseen == 4 && seen[2].caller_sp == seen[3].caller_sp &&
	   seen[2].caller_sp != seen[0].caller_sp,
	   "the interrupted Enter with its own caller SP, the Leave's");
	is_int(elt_shutdown(), ELT_OK, "shutdown");
	return tap_done();
}
