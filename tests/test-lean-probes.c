/*
 * The benchmark's instrumented function, as a JIT compiles it
 * (probe_lean_pair), and the same testing the armed byte before each hook
 * (probe_guarded_pair) or once at its entry (probe_guarded_once), on
 * every ABI: the rows `make bench` and the
 * per-port instruction counts measure must do what they claim.  The lean
 * pair reports a call and a return of PROBE_LEAN_ID whenever the helpers
 * are armed; the guarded ones reach the helpers only while the byte they
 * are pointed at is set.  Pointing it at a byte of the test's own, with a
 * plugin present, tells a skipped hook from one whose helper returned.
 */
#define ELT_PLUGIN_STATIC 1
#include "tap.h"
#include "probes.h"

#include <asyncelt.h>
#include <asyncelt/helpers.h>
#include <asyncelt/plugin.h>

#include <stdint.h>

static struct {
	unsigned calls, returns, other, registered;
	uintptr_t enter_sp, leave_sp;
} seen;

static void count_cb(const elt_info *info, void *state)
{
	elt_frame_info frame;
	int have_frame = elt_get_frame_info(info, &frame) == ELT_OK;

	(void)state;
	seen.registered += elt_get_function(info) != NULL;
	if (elt_get_function_id(info) != PROBE_LEAN_ID) {
		seen.other++;
	} else if (elt_get_segment_kind(info) == ELT_SEGMENT_CALL) {
		seen.calls++;
		seen.enter_sp = have_frame ? frame.caller_sp : 0;
	} else if (elt_get_segment_kind(info) == ELT_SEGMENT_RETURN) {
		seen.returns++;
		seen.leave_sp = have_frame ? frame.caller_sp : 0;
	} else {
		seen.other++;
	}
}
ELT_PLUGIN_DEFINE(counter, .enter = count_cb, .leave = count_cb,
		  .flags = ELT_PLUGIN_NO_INVOCATIONS);

/* The caller SP probe_pair passes from reports()'s call, as an offset
 * from reports()'s frame: main's own depth may differ between its calls
 * of reports() (i386 gcc defers popping the arguments of main's calls),
 * reports()'s frame around its own call does not.  Not checked until
 * known. */
static uintptr_t reports_frame, reference_sp;
static int have_reference;

/* Runs `pair` three times; 1 if it reported `want` Enter+Leave pairs of
 * PROBE_LEAN_ID, with the caller SP probe_pair passes, and nothing else. */
static __attribute__((noinline)) int reports(void (*pair)(void), unsigned want)
{
	int i;

	reports_frame = (uintptr_t)__builtin_frame_address(0);
	seen.calls = seen.returns = seen.other = seen.registered = 0;
	seen.enter_sp = seen.leave_sp = 0;
	for (i = 0; i < 3; i++)
		pair();
	if (seen.calls != 3 * want || seen.returns != 3 * want || seen.other)
		tap_diag("  %u calls, %u returns, %u other segments",
			 seen.calls, seen.returns, seen.other);
	seen.enter_sp -= reports_frame;
	seen.leave_sp -= reports_frame;
	if (want && have_reference && seen.calls &&
	    (seen.enter_sp != reference_sp || seen.leave_sp != reference_sp))
		tap_diag("  caller SP frame%+jd at Enter, frame%+jd at Leave, want frame%+jd",
			 (intmax_t)(intptr_t)seen.enter_sp, (intmax_t)(intptr_t)seen.leave_sp,
			 (intmax_t)(intptr_t)reference_sp);
	return seen.calls == 3 * want && seen.returns == 3 * want && !seen.other &&
	       (!want || !have_reference ||
		(seen.enter_sp == reference_sp && seen.leave_sp == reference_sp));
}

int main(void)
{
	/* The guard must test one byte: a 0 between bytes that are not, and
	 * a 1 between 0s, each at an odd address. */
	static unsigned char bytes[] __attribute__((aligned(8))) = { 0xff, 0, 0xff, 0, 0, 1, 0, 0 };
	const unsigned char *clear = &bytes[1], *set = &bytes[5];
	const unsigned char *armed = elt_helpers_armed();

	tap_diag("ABI: %s", elt_abi_name());

	probe_armed = armed;
	ok(reports(probe_lean_pair, 0) && reports(probe_guarded_pair, 0) &&
	   reports(probe_guarded_once, 0),
	   "no plugin: no pair reports anything, and each returns");
	if (elt_plugin_add(&elt_plugin_counter, NULL) != ELT_OK)
		tap_bail("setup: %s", elt_last_error());
	/* The lookup before any function is registered (registry.c's table
	 * of one empty slot). */
	ok(reports(probe_lean_pair, 1) && seen.registered == 0,
	   "armed, nothing registered yet: the segments arrive without a function");
	if (elt_register_function(PROBE_LEAN_ID, "Lean", "v()", 0) != ELT_OK)
		tap_bail("setup: %s", elt_last_error());
	/* The test probe, which passes probe_function and remembers its
	 * caller SP, gives the caller SP to expect. */
	probe_function = PROBE_LEAN_ID;
	reports(probe_pair, 1);
	reference_sp = probe_caller_sp - reports_frame;
	have_reference = probe_caller_sp != 0;
	ok(have_reference && reports(probe_pair, 1),
	   "armed: the test probe reports a call and a return with its caller SP");
	ok(reports(probe_lean_pair, 1) && seen.registered == 6,
	   "armed: the lean pair reports a call and a return of the function");
	ok(reports(probe_guarded_pair, 1),
	   "armed: the guarded pair, testing the library's byte, reports them too");
	ok(reports(probe_guarded_once, 1),
	   "armed: the pair guarded once at its entry reports them too");
	probe_armed = clear;
	ok(reports(probe_guarded_pair, 0),
	   "armed, its byte pointed at a 0: the guarded pair skips both hooks");
	ok(reports(probe_guarded_once, 0),
	   "... and so does the pair guarded once");
	probe_armed = set;
	ok(reports(probe_guarded_pair, 1),
	   "armed, its byte pointed at a 1: the guarded pair calls both");
	ok(reports(probe_guarded_once, 1),
	   "... and so does the pair guarded once");
	elt_shutdown();
	probe_armed = armed;
	seen.calls = seen.returns = seen.other = 0;
	probe_lean_pair();
	probe_guarded_pair();
	probe_guarded_once();
	ok(!seen.calls && !seen.returns && !seen.other && !*armed,
	   "shut down: the byte is 0 and no pair reaches the plugin");
	return tap_done();
}
