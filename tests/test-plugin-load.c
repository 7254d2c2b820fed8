/*
 * Adding and loading plugins: every way a plugin is refused names the
 * plugin and the reason, and the other plugins carry on.
 */
#define ELT_PLUGIN_STATIC 1
#include "tap.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <unistd.h>

static char messages[4096];

static void capture(const char *message, void *data)
{
	(void)data;
	strncat(messages, message, sizeof(messages) - strlen(messages) - 2);
	strcat(messages, "\n");
}

static int inits;
static elt_status counting_init(const char *options, void **state)
{
	(void)options;
	*state = &inits;
	inits++;
	return ELT_OK;
}

ELT_PLUGIN_DEFINE(good, .init = counting_init);

/* Loads `spec`; returns the status, the messages in `messages`. */
static elt_status load(const char *spec)
{
	messages[0] = '\0';
	return elt_plugin_load(spec);
}

#define HAS(s) (strstr(messages, s) != NULL)

#if defined(_WIN32)
# define MODULE_SUFFIX ".dll"
#else
# define MODULE_SUFFIX ".so"
#endif

/* A path longer than the loader keeps is refused, not cut short: here
 * DIR/././.../asyncelt-counting.so, the counting module, fills 4095
 * bytes, and a path that goes on past it names nothing.  Cut at 4095
 * bytes, it loaded the counting plugin and returned ELT_OK. */
static void check_long_path_refused(void)
{
	static char spec[4200];
	const char *dirs = getenv("ASYNCELT_PLUGIN_PATH");
	const char *file = "asyncelt-counting" MODULE_SUFFIX;
	size_t dir = strcspn(dirs, ":;"), at;
	elt_status st;

	if (memchr(dirs, ':', dir) || dir + strlen(file) + 2 > 4095) {
		tap_skip(1, "the plugin directory does not fit the test");
		return;
	}
	memcpy(spec, dirs, dir);
	at = dir;
	spec[at++] = '/';
	if ((4095 - at - strlen(file)) % 2)
		spec[at++] = '/';
	while (at + strlen(file) < 4095) {
		spec[at++] = '.';
		spec[at++] = '/';
	}
	at += (size_t)snprintf(spec + at, sizeof(spec) - at, "%s.not-here/x" MODULE_SUFFIX, file);
	st = load(spec);
	ok(st == ELT_E_PLUGIN && HAS("at most 4095"),
	   "a %zu-byte path whose first 4095 bytes name a module is refused: %.200s", at,
	   messages);
}

/* A name no module file can have is refused as such, and the message
 * says so: it printed the name whole twice, and the reason was lost past
 * the message's 1 KB. */
static void check_long_name_refused(void)
{
	static char spec[5001];

	memset(spec, 'a', sizeof(spec) - 1);
	ok(load(spec) == ELT_E_PLUGIN && HAS("a name of 5000 bytes, and no file name"),
	   "a 5000-byte plugin name is refused, saying why: %.200s", messages);
}

int main(void)
{
	elt_plugin old = elt_plugin_good, tiny = elt_plugin_good;
	char spec[512];
	elt_status st;
	int i;

	if (!getenv("ASYNCELT_PLUGIN_PATH"))
		tap_skip_all("ASYNCELT_PLUGIN_PATH unset: run through make check");
	elt_set_diagnostic_handler(capture, NULL);

	st = load("no-such-plugin");
	ok(st == ELT_E_PLUGIN && HAS("no-such-plugin") && HAS("ASYNCELT_PLUGIN_PATH"),
	   "a missing plugin: %s", messages);
	st = load("/nonexistent/dir/x.so");
	ok(st == ELT_E_PLUGIN && HAS("/nonexistent/dir/x.so") && HAS("cannot load"),
	   "a missing file: %s", messages);
	st = load("wrong-abi");
	ok(st == ELT_E_PLUGIN_ABI && HAS("wrong-abi") && HAS("plugin ABI 2.0"),
	   "another ABI major: %s", messages);
	st = load("no-entry");
	ok(st == ELT_E_PLUGIN && HAS("no-entry") && HAS("elt_plugin_entry"),
	   "no entry symbol: %s", messages);
	st = load("refuses:mode=bad");
	ok(st == ELT_E_BAD_OPTION && HAS("refuses") && HAS("mode must be ok"),
	   "options refused by init: %s", messages);
	st = load("counting:bogus=1");
	ok(st == ELT_E_BAD_OPTION && HAS("counting") && HAS("bogus") && HAS("output"),
	   "an unknown counting option names the known ones: %s", messages);
	st = load("counting:expect=Work:1");
	ok(st == ELT_E_BAD_OPTION && HAS("expect") && HAS("known: output"),
	   "counting refuses expect= (the check plugin's option): %s", messages);
	st = load("check:bogus=1");
	ok(st == ELT_E_BAD_OPTION && HAS("check") && HAS("bogus") && HAS("expect"),
	   "an unknown check option names the known ones: %s", messages);
	st = load("check:expect=Work");
	ok(st == ELT_E_BAD_OPTION && HAS("NAME:PAIRS"), "a malformed expectation: %s", messages);
	{
		/* a long option: the reason still ends the message */
		char long_spec[160];

		snprintf(long_spec, sizeof(long_spec), "check:expect=%0100d:1", 0);
		st = load(long_spec);
		ok(st == ELT_E_BAD_OPTION && HAS("is longer than 63 bytes; the other plugins") &&
		   strstr(elt_last_error(), "is longer than 63 bytes"),
		   "a long option's refusal keeps its reason: %s", messages);
	}
	st = load("check:max-pending=lots");
	ok(st == ELT_E_BAD_OPTION && HAS("max-pending") && HAS("lots"),
	   "a malformed bound: %s", messages);
	check_long_path_refused();
	check_long_name_refused();
	st = load("counting:output=/nonexistent/dir/report.txt");
	ok(st == ELT_E_IO && HAS("/nonexistent/dir/report.txt"),
	   "an unwritable output file: %s", messages);

	/* one bad plugin among good ones */
	st = load("no-such-plugin;refuses:mode=ok;;counting");
	ok(st == ELT_E_PLUGIN && HAS("no-such-plugin") && HAS("carry on"),
	   "a bad plugin in a list is reported: %s", messages);
	ok(strchr(messages, '\n') == strrchr(messages, '\n'),
	   "only that one is reported: the good ones load");
	ok(strstr(elt_last_error(), "no-such-plugin") != NULL,
	   "elt_last_error() keeps the first failure: %s", elt_last_error());

	old.abi_major = 0;
	ok(elt_plugin_add(&old, NULL) == ELT_E_PLUGIN_ABI && strstr(elt_last_error(), "good"),
	   "elt_plugin_add refuses ABI 0: %s", elt_last_error());
	tiny.struct_size = 8;
	is_int(elt_plugin_add(&tiny, NULL), ELT_E_PLUGIN_ABI, "a descriptor too small");
	is_int(elt_plugin_add(NULL, NULL), ELT_E_INVALID_ARGUMENT, "a NULL descriptor");

	/* fill the table: refuses:mode=ok and counting hold two slots */
	for (i = 2; i < ELT_MAX_PLUGINS; i++)
		if (elt_plugin_add(&elt_plugin_good, NULL) != ELT_OK)
			break;
	is_int(i, ELT_MAX_PLUGINS, "plugins up to the limit");
	is_int(inits, ELT_MAX_PLUGINS - 2, "each init ran once");
	ok(elt_plugin_add(&elt_plugin_good, NULL) == ELT_E_LIMIT &&
	   strstr(elt_last_error(), "good"), "one more is refused: %s", elt_last_error());

	snprintf(spec, sizeof(spec), "%s", "");
	is_int(load(spec), ELT_OK, "an empty specification loads nothing");
	is_int(elt_shutdown(), ELT_OK, "shutdown");
	is_int(elt_shutdown(), ELT_E_STATE, "a second shutdown is refused");
	return tap_done();
}
