/*
 * A signal whose handler reports a helper segment, delivered in the
 * dispatcher just before it raises the thread's flag (linked with the
 * library built with its test points live, lib/test-points.h).  The
 * handler's segment runs whole there, its plugin seeing the thread's own
 * elt_info (elt_thread.info, dispatch.c); the interrupted segment must
 * then run with its own id, kind and caller SP: the dispatcher writes the
 * thread's info only once the flag is up, and a handler's segment after
 * that is not reported.  Twice: with one plugin that keeps the
 * floating-point state (on x86-64 System V the helper's body raises the
 * flag itself there, arch/x86_64/helpers-sysv.S), and with another that
 * may change it (the dispatcher raises it).
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
		  .flags = ELT_PLUGIN_NO_INVOCATIONS | ELT_PLUGIN_NO_FLOAT);

static void ignore(const elt_info *info, void *state)
{
	(void)info;
	(void)state;
}

/* Added second: the helpers then save the floating-point state. */
ELT_PLUGIN_DEFINE(float_user, .enter = ignore, .flags = ELT_PLUGIN_NO_INVOCATIONS);

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

/* A pair of OUTER interrupted where its Enter raises the flag, by a
 * signal whose handler reports a pair of PROBE_LEAN_ID. */
static void interrupted_pair(const char *plugins)
{
	nseen = 0;
	elt_test_hook = hook;
	atomic_store(&signals_to_raise, 1);
	probe_pair();
	elt_test_hook = NULL;

	is_int(nseen, 4, "%s: the handler's pair and the interrupted pair were reported",
	       plugins);
	ok(nseen == 4 && seen[0].id == PROBE_LEAN_ID && seen[1].id == PROBE_LEAN_ID &&
	   seen[0].kind == ELT_SEGMENT_CALL && seen[1].kind == ELT_SEGMENT_RETURN,
	   "%s: the handler's segments first, whole", plugins);
	ok(nseen == 4 && seen[2].id == OUTER && seen[3].id == OUTER &&
	   seen[2].kind == ELT_SEGMENT_CALL && seen[3].kind == ELT_SEGMENT_RETURN,
	   "%s: then the interrupted Enter with its own id and kind, and its Leave",
	   plugins);
	ok(nseen == 4 && seen[2].caller_sp == seen[3].caller_sp &&
	   seen[2].caller_sp != seen[0].caller_sp,
	   "%s: the interrupted Enter with its own caller SP, the Leave's", plugins);
}

int main(void)
{
	tap_plan(9);
	alarm(60);
	signal(SIGUSR1, handler);
	if (elt_register_function(OUTER, "Outer", "v()", 0) != ELT_OK ||
	    elt_register_function(PROBE_LEAN_ID, "InHandler", "v()", 0) != ELT_OK ||
	    elt_plugin_add(&elt_plugin_recorder, NULL) != ELT_OK)
		tap_bail("setup: %s", elt_last_error());
	probe_function = OUTER;
	probe_pair();           /* the thread's first segment: attached */
	interrupted_pair("one plugin keeping the FP state");

	if (elt_plugin_add(&elt_plugin_float_user, NULL) != ELT_OK)
		tap_bail("adding a second plugin: %s", elt_last_error());
	interrupted_pair("and one that may change it");
	is_int(elt_shutdown(), ELT_OK, "shutdown");
	return tap_done();
}
