/*
 * Register preservation: every argument, return, continuation and
 * callee-saved register canaried, each helper called as instrumented code
 * calls it (aligned and misaligned stack, async function with a live
 * continuation, unknown function), while the plugin damages everything C
 * code may: FP and SIMD math, memcpy, printf, libc string functions, and
 * an explicit clobber of every caller-saved register.  First with a plugin
 * that says ELT_PLUGIN_NO_FLOAT alone (on x86-64 the helpers then save no
 * FP control state and call other dispatchers), then with both.
 */
#define ELT_PLUGIN_STATIC 1     /* two plugins here, neither a module */
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
static unsigned char big_a[8192], big_b[8192];

/* What both plugins do first: count, run the getters (they are on this
 * path too) and libc's widest vector moves and compares. */
static void damage_without_float(const elt_info *info)
{
	size_t n = 4;
	elt_range r[4];

	callbacks++;
	elt_get_enter_info(info, r, &n, NULL);
	elt_get_return_info(info, r);
	memset(big_a, 0x5a, sizeof(big_a));
	memcpy(big_b, big_a, sizeof(big_b));
	if (memcmp(big_a, big_b, sizeof(big_b)) != 0 || memchr(big_a, 0, sizeof(big_a)))
		callbacks += 1000;      /* a wrong count shows it */
}

static void clobber_cb(const elt_info *info, void *state)
{
	static FILE *devnull;
	volatile double x = 1.5;
	char text[128];

	(void)state;
	damage_without_float(info);
	if (!devnull)
		devnull = fopen(NULL_DEVICE, "w");
	snprintf(text, sizeof(text), "%f %g %Lf", x * 3.25, sqrt(x), (long double)x / 3);
	x = (double)strlen(text) + x * x;       /* glibc: vector compares */
	if (devnull)
		fprintf(devnull, "%s %e\n", text, x / 7);
	regs_clobber();
}

ELT_PLUGIN_DEFINE(clobber, .enter = clobber_cb, .leave = clobber_cb,
		  .tailcall = clobber_cb);

/* The same damage without floating-point arithmetic, every caller-saved
 * register included (vector ones too: moves set no MXCSR flag). */
static void clobber_integers_cb(const elt_info *info, void *state)
{
	(void)state;
	damage_without_float(info);
	regs_clobber();
}

ELT_PLUGIN_DEFINE(clobber_integers, .enter = clobber_integers_cb,
		  .leave = clobber_integers_cb, .tailcall = clobber_integers_cb,
		  .flags = ELT_PLUGIN_NO_FLOAT);

static const elt_function_id ASYNC_ID = 0x1000, UNKNOWN_ID = 0x9999;
static uintptr_t fake_stack[8];

/* Which of the Leave variants (registers.h) a helper is called with: on
 * the x87 ABIs a result on the x87 stack goes through its own Leave. */
enum variants { ONE, ALL_BUT_X87, ALL };

static const struct helper {
	const char *name;
	void (*helper)(void);
	enum variants variants;
} helpers[] = {
	{ "enter", elt_helper_enter, ONE },
#if (defined(__x86_64__) && !defined(_WIN32)) || defined(__i386__)
	{ "leave", elt_helper_leave, ALL_BUT_X87 },
	{ "leave_x87", elt_helper_leave_x87, ALL },
#else
	{ "leave", elt_helper_leave, ALL },
#endif
	{ "tailcall", elt_helper_tailcall, ONE },
};

static unsigned variant_count(const struct helper *h)
{
	switch (h->variants) {
	case ONE:
		return 1;
#if (defined(__x86_64__) && !defined(_WIN32)) || defined(__i386__)
	case ALL_BUT_X87:
		return 1;       /* variant 0: no x87 value */
#endif
	default:
		return regs_leave_variants();
	}
}

/* Every helper, every variant, both alignments, async or not; `armed`:
 * how many plugins each call must reach, once each (none: the helper
 * returns early). */
static void check_helpers(struct regs *in, struct regs *out, unsigned armed)
{
	static unsigned seed;
	unsigned i, variant;
	int misalign, async;

	for (i = 0; i < sizeof(helpers) / sizeof(helpers[0]); i++)
		for (variant = 0; variant < variant_count(&helpers[i]); variant++)
			for (misalign = 0; misalign < 2; misalign++)
				for (async = 0; async < 2; async++) {
					unsigned before = callbacks, want = before + armed;
					char why[160] = "";
					int same;

					regs_fill(in, ++seed, variant, misalign,
						  async ? ASYNC_ID : UNKNOWN_ID,
						  (uintptr_t)&fake_stack[1], async);
					memset(out, 0, regs_size);
					regs_call(helpers[i].helper, in, out);
					same = regs_compare(in, out, why, sizeof(why));
					ok(same && callbacks == want,
					   "%s %s preserves every register (%s, %s stack, %s)",
					   armed == 2 ? "armed (FP-changing plugin too)" :
					   armed ? "armed (ELT_PLUGIN_NO_FLOAT)" : "idle",
					   helpers[i].name,
					   regs_variant_name(variant),
					   misalign ? "misaligned" : "aligned",
					   async ? "async with a live continuation" : "unknown function");
					if (!same)
						tap_diag("  %s", why);
					if (callbacks != want)
						tap_diag("  the plugin ran %u times", callbacks - before);
				}
}

/* What instrumented code that tests the armed byte would see: set
 * exactly while the helpers reach the plugins. */
static void check_armed_byte(int armed)
{
	const unsigned char *flag = elt_helpers_armed();

	ok(flag && flag == elt_helpers_armed() &&
	   __atomic_load_n(flag, __ATOMIC_RELAXED) == armed,
	   "elt_helpers_armed() reads %d %s", armed,
	   armed ? "with a plugin" : "without one");
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

	/* No plugin yet: every helper takes its early return. */
	check_helpers(in, out, 0);
	check_armed_byte(0);
	if (elt_plugin_add(&elt_plugin_clobber_integers, NULL) != ELT_OK)
		tap_bail("setup: %s", elt_last_error());
	check_helpers(in, out, 1);
	check_armed_byte(1);
	if (elt_plugin_add(&elt_plugin_clobber, NULL) != ELT_OK)
		tap_bail("setup: %s", elt_last_error());
	check_helpers(in, out, 2);
	check_armed_byte(1);
	elt_shutdown();
	/* Shut down: idle again. */
	check_helpers(in, out, 0);
	check_armed_byte(0);
	regs_free(in);
	regs_free(out);
	return tap_done();
}
