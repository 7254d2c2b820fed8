/*
 * The plugin specification ($ASYNCELT_PLUGINS, elt_plugin_load): split
 * into its items apart from loading them, so that the syntax can be tested
 * and fuzzed (tests/fuzz/fuzz-spec.c) without dlopen()ing anything.
 */
#ifndef ELT_PLUGIN_SPEC_H
#define ELT_PLUGIN_SPEC_H

#include <asyncelt.h>

/* Loads one item: NAME and its OPTIONS ("" when the item has no ':'),
 * both NUL-terminated and valid during the call only. */
typedef elt_status (*elt_plugin_spec_loader)(const char *name, const char *options,
					      void *arg);

/*
 * Calls `load` for each item of `spec` (plugin (';' plugin)*, plugin :=
 * NAME [':' OPTIONS]), left to right; empty items are skipped.  A failing
 * item is reported (elt_report) and the others are still loaded.  Returns
 * the first failure, with its message in elt_last_error().
 */
elt_status elt_plugin_spec_each(const char *spec, elt_plugin_spec_loader load, void *arg);

#endif
