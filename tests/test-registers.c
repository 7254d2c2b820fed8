/*
 * Register preservation: every argument, return, continuation and
 * callee-saved register canaried, each helper called as instrumented code
 * calls it (aligned and misaligned stack, async function with a live
 * continuation, unknown function), while the plugin damages everything C
 * code may: FP and SIMD math, memcpy, printf, libc string functions, and
 * an explicit clobber of every caller-saved register.
 */
#include "tap.h"
#include "registers.h"

#include <asyncelt.h>
#include <asyncelt/helpers.h>
#include <asyncelt/plugin.h>

#include <math.h>
#include <stdlib.h>

/* Windows: no aligned_alloc, no /dev/null. */
#if defined(_WIN32)
# include <malloc.h>
# define regs_alloc(size) _aligned_malloc((size), 64)
# define regs_free _aligned_free
# define NULL_DEVICE "NUL"
#else
# define regs_alloc(size) aligned_alloc(64, (size))
# define regs_free free
# define NULL_DEVICE "/dev/null"
#endif

static unsigned callbacks;

static void clobber_cb(const elt_info *info, void *state)
{
	static unsigned char big_a[8192], big_b[8192];
	static FILE *devnull;
	volatile double x = 1.5;
	char text[128];
	size_t n = 4;
	elt_range r[4];

	(void)state;
	callbacks++;
	/* the getters themselves run on this path too */
	elt_get_enter_info(info, r, &n, NULL);
	elt_get_return_info(info, r);

	if (!devnull)
		devnull = fopen(NULL_DEVICE, "w");
	memset(big_a, 0x5a, sizeof(big_a));
	memcpy(big_b, big_a, sizeof(big_b));    /* glibc: widest vector moves */
	snprintf(text, sizeof(text), "%f %g %Lf", x * 3.25, sqrt(x), (long double)x / 3);
	x = (double)strlen(text) + x * x;       /* glibc: vector compares */
	if (devnull)
		fprintf(devnull, "%s %e\n", text, x / 7);
	regs_clobber();
}

ELT_PLUGIN_DEFINE(clobber, .enter = clobber_cb, .leave = clobber_cb,
		  .tailcall = clobber_cb);

static const elt_function_id ASYNC_ID = 0x1000, UNKNOWN_ID = 0x9999;
static uintptr_t fake_stack[8];

/* Every helper, every variant, both stack alignments, with and without a
 * live continuation; `plugin_runs` is how many times each call must reach
 * the plugin: 1 when armed, 0 on the idle path, which returns before it
 * saves anything and so must leave every register alone by itself. */
static void check_helpers(const char *phase, unsigned plugin_runs,
			  struct regs *in, struct regs *out)
{
	static const struct { const char *name; void (*helper)(void); int leave; } h[] = {
		{ "enter", elt_helper_enter, 0 },
		{ "leave", elt_helper_leave, 1 },
		{ "tailcall", elt_helper_tailcall, 0 },
	};
	static unsigned seed;
	unsigned i, variant;
	int misalign, async;

	for (i = 0; i < sizeof(h) / sizeof(h[0]); i++)
		for (variant = 0; variant < (h[i].leave ? regs_leave_variants() : 1); variant++)
			for (misalign = 0; misalign < 2; misalign++)
				for (async = 0; async < 2; async++) {
					unsigned before = callbacks;
					char why[160] = "";
					int same;

					regs_fill(in, ++seed, variant, misalign,
						  async ? ASYNC_ID : UNKNOWN_ID,
						  (uintptr_t)&fake_stack[1], async);
					memset(out, 0, regs_size);
					regs_call(h[i].helper, in, out);
					same = regs_compare(in, out, why, sizeof(why));
					ok(same && callbacks == before + plugin_runs,
					   "%s: %s preserves every register (%s, %s stack, %s)",
					   phase, h[i].name, regs_variant_name(variant),
					   misalign ? "misaligned" : "aligned",
					   async ? "async with a live continuation" : "unknown function");
					if (!same)
						tap_diag("  %s", why);
					if (callbacks != before + plugin_runs)
						tap_diag("  the plugin ran %u times, not %u",
							 callbacks - before, plugin_runs);
				}
}

int main(void)
{
	struct regs *in = regs_alloc(regs_size);
	struct regs *out = regs_alloc(regs_size);

	if (!in || !out)
		tap_bail("out of memory");
	if (elt_register_function(ASYNC_ID, "AsyncWork", "l(K i)", ELT_FUNCTION_ASYNC))
		tap_bail("setup: %s", elt_last_error());
	tap_diag("vector registers: %s", regs_describe());

	check_helpers("idle, no plugin yet", 0, in, out);
	if (elt_plugin_add(&elt_plugin_clobber, NULL) != ELT_OK)
		tap_bail("setup: %s", elt_last_error());
	check_helpers("armed", 1, in, out);
	elt_shutdown();
	check_helpers("idle, stopped", 0, in, out);
	regs_free(in);
	regs_free(out);
	return tap_done();
}
