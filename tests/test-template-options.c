/* The template plugin's options (examples/profiler/my-plugin.c), which
 * authors copy: each count digits only, all four, nothing after; anything
 * else refused with a reason that names the item. */
#include "tap.h"

#include <asyncelt/plugin.h>

#include <string.h>

extern const elt_plugin elt_plugin_segment_kinds;

static void refused(const char *options)
{
	elt_status st = elt_plugin_add(&elt_plugin_segment_kinds, options);

	ok(st == ELT_E_BAD_OPTION && strstr(elt_last_error(), "want CALLS/RESUMES/SUSPENDS/RETURNS"),
	   "\"%s\" refused (%s)", options, st == ELT_OK ? "added" : elt_last_error());
}

int main(void)
{
	static const char *const bad[] = {
		"Work=-1/2/3/4",        /* strtoul and %lu take it as ULONG_MAX */
		"Work=1/-2/3/4",
		"Work=+1/2/3/4",
		"Work= 1/2/3/4",
		"Work=1/ 2/3/4",
		"Work=1/2/3",
		"Work=1/2/3/4/5",
		"Work=1/2/3/4x",
		"Work=1//3/4",
		"Work=",
		"Work=99999999999999999999999/1/1/1",
	};
	size_t i;

	tap_plan((int)(sizeof(bad) / sizeof(bad[0])) + 3);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		refused(bad[i]);
	/* What is right is taken as written: registered and never run, each
	 * function matches its zeros (one written "00"), so fini passes. */
	ok(elt_plugin_add(&elt_plugin_segment_kinds, "Work=0/00/0/0,Big=0/0/0/0") == ELT_OK,
	   "\"Work=0/00/0/0,Big=0/0/0/0\" added (%s)", elt_last_error());
	ok(elt_register_function(1, "Work", NULL, 0) == ELT_OK &&
	   elt_register_function(2, "Big", NULL, 0) == ELT_OK, "two functions registered");
	ok(elt_shutdown() == ELT_OK, "fini finds both as expected (%s)", elt_last_error());
	return tap_done();
}
