/*
 * A fini that fails is told, naming its plugin, whichever plugin it is:
 * here every plugin of the tree writes its report into a full disk
 * (/dev/full), and two plugins of this file fail without a word.  The
 * library reports each failure through the diagnostic handler, since at
 * exit no caller hears elt_shutdown's status; of several failures,
 * elt_shutdown returns a failed check's, with its message.
 */
#define ELT_PLUGIN_STATIC 1
#include "tap.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <errno.h>

#define MAX_TOLD 16

static char told[MAX_TOLD][640];
static int ntold;

static void capture_report(const char *message, void *data)
{
	(void)data;
	if (ntold < MAX_TOLD)
		snprintf(told[ntold++], sizeof(told[0]), "%s", message);
}

/* Whether a report starts with `start`. */
static int was_told(const char *start)
{
	int i;

	for (i = 0; i < ntold; i++)
		if (strncmp(told[i], start, strlen(start)) == 0)
			return 1;
	return 0;
}

static elt_status fail_without_message(void *state)
{
	(void)state;
	return ELT_E_IO;
}

static elt_status check_fails_without_message(void *state)
{
	(void)state;
	return ELT_E_CHECK_FAILED;
}

ELT_PLUGIN_DEFINE(quiet_io, .fini = fail_without_message);
ELT_PLUGIN_DEFINE(quiet_check, .fini = check_fails_without_message);

int main(void)
{
	const elt_function_id id = 0x100;
	const char *full = strerror(ENOSPC);
	char want[256];
	int i;

#if !defined(__linux__)
	tap_skip_all("/dev/full is Linux's");
#endif
	tap_plan(9);
	elt_set_diagnostic_handler(capture_report, NULL);
	if (elt_plugin_load("counting:output=/dev/full;"
			    "check:output=/dev/full,expect=Work:1;"
			    "timing:output=/dev/full;logging:output=/dev/full") != ELT_OK ||
	    elt_plugin_add(&elt_plugin_quiet_io, NULL) != ELT_OK ||
	    elt_plugin_add(&elt_plugin_quiet_check, NULL) != ELT_OK ||
	    elt_register_function(id, "Work", NULL, 0) != ELT_OK)
		tap_bail("setup: %s", elt_last_error());
	elt_emit_enter(id, NULL, NULL);
	elt_emit_leave(id, NULL, NULL);

	is_int(elt_shutdown(), ELT_E_CHECK_FAILED, "a failed check wins over the others");
	is_str(elt_last_error(), "quiet_check: a plugin's checks failed",
	       "and elt_last_error() names it");
	snprintf(want, sizeof(want), "counting: the report could not be written: %s", full);
	ok(was_told(want), "told: %s", want);
	snprintf(want, sizeof(want), "check: the verdict could not be written: %s", full);
	ok(was_told(want), "told: %s", want);
	snprintf(want, sizeof(want), "timing: the report could not be written: %s", full);
	ok(was_told(want), "told: %s", want);
	snprintf(want, sizeof(want), "logging: writing the output failed: %s (", full);
	ok(was_told(want), "told: %s...", want);
	snprintf(want, sizeof(want), "quiet_io: %s", elt_strerror(ELT_E_IO));
	ok(was_told(want), "a fini without a message: its status, told: %s", want);
	ok(!was_told("quiet_check"), "a failed check without a message is not told again");
	is_int(ntold, 5, "five reports in all");
	for (i = 0; i < ntold; i++)
		tap_diag("told: %s", told[i]);
	return tap_done();
}
