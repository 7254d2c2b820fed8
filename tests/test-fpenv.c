/*
 * The floating-point environment around the helpers (doc/abi.md, each
 * ABI's "Floating-point environment"): a plugin may change the rounding
 * mode and the exception trap masks as it likes, but the instrumented code
 * must get its own back from every helper, or it would compute other
 * results.
 *
 * The plugin's Enter, Leave and Tailcall switch to another rounding mode
 * (and enable or disable a trap, where the C library can); the caller,
 * running in each rounding mode in turn, checks after each helper returns
 * that fegetround() and the trap mask are its own, and that a division
 * still rounds as it did before the call.
 *
 * First two plugins that do the same while saying ELT_PLUGIN_NO_FLOAT,
 * one from its init (elt_plugin_set_flags), then one in its descriptor,
 * after the logging plugin recording in binary, which says so from its
 * init: on x86 the helpers believe them all and save nothing, so the mode
 * reaches the caller (which shows the saving skipped); elsewhere they
 * save anyway.  They stay for the rest, where the meddler, whose init
 * takes back the ELT_PLUGIN_NO_FLOAT of its descriptor, makes every
 * helper save.
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE 1          /* feenableexcept, fegetexcept (glibc) */
#endif
#define ELT_PLUGIN_STATIC 1
#include "tap.h"
#include "probes.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <fenv.h>
#if defined(_WIN32)
# include <float.h>
#endif

/* --- the rounding modes this <fenv.h> names ------------------------------ */

static const struct { int mode; const char *name; } modes[] = {
#ifdef FE_TONEAREST
	{ FE_TONEAREST, "to nearest" },
#endif
#ifdef FE_UPWARD
	{ FE_UPWARD, "upward" },
#endif
#ifdef FE_DOWNWARD
	{ FE_DOWNWARD, "downward" },
#endif
#ifdef FE_TOWARDZERO
	{ FE_TOWARDZERO, "toward zero" },
#endif
};
#define MODE_COUNT (sizeof(modes) / sizeof(modes[0]))

/* --- one trap (division by zero), where the C library can set it -------- */

/* traps_set: 0 when the trap is now as asked, -1 when it cannot be. */
#if defined(__GLIBC__) && defined(FE_DIVBYZERO)
# define TRAPS_HOW "feenableexcept"
static int traps_get(void)
{
	return (fegetexcept() & FE_DIVBYZERO) != 0;
}

static int traps_set(int on)
{
	fedisableexcept(FE_ALL_EXCEPT);
	if (on && feenableexcept(FE_DIVBYZERO) == -1)
		return -1;
	return traps_get() == on ? 0 : -1;
}
#elif defined(_WIN32)
# define TRAPS_HOW "_controlfp"
static int traps_get(void)
{
	return (_controlfp(0, 0) & _EM_ZERODIVIDE) == 0;   /* set bit: masked */
}

static int traps_set(int on)
{
	_controlfp(on ? 0 : _EM_ZERODIVIDE, _EM_ZERODIVIDE);
	return traps_get() == on ? 0 : -1;
}
#else
# define TRAPS_HOW "no way to set a trap in this C library"
static int traps_get(void)
{
	return 0;
}

static int traps_set(int on)
{
	return on ? -1 : 0;
}
#endif

/* --- the plugin: switches to its own mode and traps in every callback --- */

static int plugin_mode, plugin_traps;
static unsigned calls, changed;         /* changed: callbacks whose change held */

static void meddle(const elt_info *info, void *state)
{
	(void)info;
	(void)state;
	calls++;
	if (fesetround(plugin_mode) == 0 && fegetround() == plugin_mode &&
	    traps_set(plugin_traps) == 0)
		changed++;
}

static elt_status meddler_flags_st = ELT_E_STATE;

static elt_status meddler_init(const char *options, void **state);
ELT_PLUGIN_DEFINE(meddler, .init = meddler_init, .enter = meddle, .leave = meddle,
		  .tailcall = meddle, .flags = ELT_PLUGIN_NO_FLOAT);

static elt_status meddler_init(const char *options, void **state)
{
	(void)options;
	*state = NULL;
	meddler_flags_st = elt_plugin_set_flags(&elt_plugin_meddler, 0);
	return ELT_OK;
}

static unsigned liar_calls;

static void meddle_quietly(const elt_info *info, void *state)
{
	(void)info;
	(void)state;
	liar_calls++;
	fesetround(plugin_mode);
}

ELT_PLUGIN_DEFINE(liar, .enter = meddle_quietly, .leave = meddle_quietly,
		  .tailcall = meddle_quietly, .flags = ELT_PLUGIN_NO_FLOAT);

/* The same, saying so from its init, as a plugin whose options decide;
 * a bit from a later library is ignored; another plugin's descriptor is
 * refused. */
static elt_status others_flags_st, set_flags_st;

static elt_status liar_init(const char *options, void **state);
ELT_PLUGIN_DEFINE(liar_by_init, .init = liar_init, .enter = meddle_quietly,
		  .leave = meddle_quietly, .tailcall = meddle_quietly);

static elt_status liar_init(const char *options, void **state)
{
	(void)options;
	*state = NULL;
	others_flags_st = elt_plugin_set_flags(&elt_plugin_liar, ELT_PLUGIN_NO_FLOAT);
	set_flags_st = elt_plugin_set_flags(&elt_plugin_liar_by_init,
					    ELT_PLUGIN_NO_FLOAT | 1u << 15);
	return ELT_OK;
}

#if defined(_WIN32)
# define NULL_DEVICE "NUL"
#else
# define NULL_DEVICE "/dev/null"
#endif

/* Whether the helper a probe calls skips the FP control state while every
 * plugin says ELT_PLUGIN_NO_FLOAT (doc/abi.md): the x86 helpers do, but
 * for i386's x87 Leave (the probes' Leave), whose fnstenv and fldenv keep
 * the x87 state anyway; the other ports always keep it. */
#if defined(__x86_64__)
# define SKIPS_ENTER 1
# define SKIPS_LEAVE 1
#elif defined(__i386__)
# define SKIPS_ENTER 1
# define SKIPS_LEAVE 0
#else
# define SKIPS_ENTER 0
# define SKIPS_LEAVE 0
#endif

/* --- the instrumented side ------------------------------------------------ */

static void target(void)
{
}

static void call_enter(void)
{
	probe_enter();
}

static void call_leave(void)
{
	PROBE_AS(void (*)(void), probe_leave)();
}

static void call_tailcall(void)
{
	probe_tailcall();
}

/* 1/3 rounds differently upward, downward and to nearest: a result that
 * shows which mode the FPU really used (on x86-64, the SSE one, which
 * fegetround does not read). */
static double third(void)
{
	volatile double one = 1.0, three = 3.0;
	volatile double q = one / three;

	return q;
}

int main(void)
{
	static const struct { const char *name; void (*call)(void); int skips; } h[] = {
		{ "enter", call_enter, SKIPS_ENTER },
		{ "leave", call_leave, SKIPS_LEAVE },
		{ "tailcall", call_tailcall, SKIPS_ENTER },
	};
	int can_trap, traps;
	unsigned i, m, liars, expected_calls = 0;

	if (MODE_COUNT < 2)
		tap_skip_all("this <fenv.h> names fewer than two rounding modes");
	if (fesetround(modes[1].mode) != 0 || fegetround() != modes[1].mode) {
		fesetround(modes[0].mode);
		tap_skip_all("this CPU has one rounding mode only");
	}
	fesetround(modes[0].mode);
	can_trap = traps_set(1) == 0;
	traps_set(0);
	if (!can_trap)
		tap_diag("trap masks: not checked, %s cannot enable one here (%s)",
			 "the C library", TRAPS_HOW);

	probe_function = 0xf0e1;
	probe_target = target;
	if (elt_register_function(probe_function, "FloatingWork", "v()", 0) != ELT_OK)
		tap_bail("setup: %s", elt_last_error());
	ok(elt_plugin_set_flags(&elt_plugin_liar_by_init, ELT_PLUGIN_NO_FLOAT) == ELT_E_STATE &&
	   strstr(elt_last_error(), "outside the init of plugin liar_by_init"),
	   "elt_plugin_set_flags outside an init: refused: %s", elt_last_error());
	/* Its flags decide the leaks below as much as the liars' do. */
	if (getenv("ASYNCELT_PLUGIN_PATH"))
		is_int(elt_plugin_load("logging:format=binary,output=" NULL_DEVICE), ELT_OK,
		       "logging:format=binary added first (ELT_PLUGIN_NO_FLOAT from its init)");
	else
		tap_skip(1, "ASYNCELT_PLUGIN_PATH unset: logging not added (run through make check)");

	for (liars = 1; liars <= 2; liars++) {
		if (elt_plugin_add(liars == 1 ? &elt_plugin_liar_by_init : &elt_plugin_liar,
				   NULL) != ELT_OK)
			tap_bail("setup: %s", elt_last_error());
		if (liars == 1) {
			is_int(others_flags_st, ELT_E_STATE,
			       "elt_plugin_set_flags from an init for another plugin: refused");
			is_int(set_flags_st, ELT_OK, "for its own: ELT_PLUGIN_NO_FLOAT taken, "
			       "a bit this library does not know ignored");
		}
		for (i = 0; i < sizeof(h) / sizeof(h[0]); i++) {
			unsigned before = liar_calls;
			int mode_after;

			plugin_mode = modes[1].mode;
			fesetround(modes[0].mode);
			h[i].call();
			mode_after = fegetround();
			fesetround(modes[0].mode);
			ok(liar_calls == before + liars &&
			   (mode_after == modes[1].mode) == h[i].skips,
			   "%s, only ELT_PLUGIN_NO_FLOAT plugins (%s): %s", h[i].name,
			   liars == 1 ? "said from init" : "and one in its descriptor",
			   h[i].skips ? "the helper saves nothing, so a plugin that says "
					"it falsely leaks its rounding mode"
				      : "the helper keeps the caller's rounding mode anyway");
			if (liar_calls != before + liars)
				tap_diag("  the plugins ran %u times, not %u", liar_calls - before,
					 liars);
		}
	}

	if (elt_plugin_add(&elt_plugin_meddler, NULL) != ELT_OK)
		tap_bail("setup: %s", elt_last_error());
	is_int(meddler_flags_st, ELT_OK,
	       "a plugin whose init takes back its descriptor's ELT_PLUGIN_NO_FLOAT");

	for (i = 0; i < sizeof(h) / sizeof(h[0]); i++)
		for (m = 0; m < MODE_COUNT; m++)
			for (traps = 0; traps <= can_trap; traps++) {
				int mode = modes[m].mode, mode_after, traps_after;
				double before, after;

				plugin_mode = modes[(m + 1) % MODE_COUNT].mode;
				plugin_traps = can_trap && !traps;

				fesetround(mode);
				traps_set(traps);
				before = third();
				h[i].call();
				after = third();
				mode_after = fegetround();
				traps_after = traps_get();
				/* back to the defaults before any output */
				traps_set(0);
				fesetround(modes[0].mode);
				expected_calls++;

				ok(mode_after == mode && traps_after == traps && after == before,
				   "%s: the caller keeps rounding %s and division-by-zero "
				   "traps %s (the plugin set %s, traps %s)", h[i].name,
				   modes[m].name, traps ? "on" : "off",
				   modes[(m + 1) % MODE_COUNT].name, plugin_traps ? "on" : "off");
				if (mode_after != mode)
					tap_diag("  fegetround() is %#x, not %#x", (unsigned)mode_after,
						 (unsigned)mode);
				if (traps_after != traps)
					tap_diag("  the trap is %s", traps_after ? "on" : "off");
				if (after != before)
					tap_diag("  1/3 rounded to %a after the call, %a before",
						 after, before);
			}

	/* Without this the test would pass with a plugin that changed nothing. */
	ok(calls == expected_calls && changed == calls,
	   "the plugin ran once per helper call and its changes took effect each time");
	if (calls != expected_calls || changed != calls)
		tap_diag("  %u calls, %u expected, %u changes that held", calls,
			 expected_calls, changed);
	elt_shutdown();
	return tap_done();
}
