/*
 * The plugin specification ($ASYNCELT_PLUGINS, lib/plugin-spec.c), split
 * into items by the library's own splitter with a loader that loads
 * nothing: each item's name and options lie in order in the text and hold
 * no separator, no non-empty item is lost, and when loaders fail the first
 * failure is what the whole call returns and tells.
 */
#include "fuzz.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include "plugin-spec.h"

#include <string.h>

struct seen {
	const char *text;
	const char *at;         /* where the next item may start */
	size_t items;
	elt_status first;
	char first_message[128];
};

/* Refuses names whose first byte is odd: both paths get exercised. */
static elt_status fake_load(const char *name, const char *options, void *arg)
{
	struct seen *s = arg;
	FUZZ_CHECK(!strpbrk(name, ";:"), "name \"%s\" holds a separator", name);
	FUZZ_CHECK(!strchr(options, ';'), "options \"%s\" hold a ';'", options);
	while (*s->at == ';')           /* empty items are skipped */
		s->at++;
	FUZZ_CHECK(strncmp(s->at, name, strlen(name)) == 0,
		   "item \"%s\" is not the text at offset %zu", name, (size_t)(s->at - s->text));
	s->at += strlen(name);
	if (*options) {
		FUZZ_CHECK(*s->at == ':' && strncmp(s->at + 1, options, strlen(options)) == 0,
			   "options \"%s\" do not follow \"%s:\"", options, name);
		s->at += 1 + strlen(options);
	} else if (*s->at == ':') {     /* "name:": empty options */
		s->at++;
	}
	FUZZ_CHECK(*s->at == ';' || *s->at == 0, "item \"%s\" does not end at a ';'", name);
	s->items++;
	if (!(name[0] & 1))
		return ELT_OK;
	if (s->first == ELT_OK) {
		s->first = ELT_E_PLUGIN;
		snprintf(s->first_message, sizeof(s->first_message), "refused %.80s", name);
	}
	return elt_set_error(ELT_E_PLUGIN, "refused %.80s", name);
}

static void quiet(const char *message, void *data)
{
	(void)message;
	(void)data;
}

FUZZ_HARNESS(spec)
{
	char *text = fuzz_string(data, size);
	struct seen s = { text, text, 0, ELT_OK, "" };
	size_t nonempty = 0, i, run = 0;
	static int quieted;
	elt_status st;

	if (!text)
		return 0;
	if (!quieted) {         /* once: each call keeps the old handler */
		elt_set_diagnostic_handler(quiet, NULL);
		quieted = 1;
	}
	st = elt_plugin_spec_each(text, fake_load, &s);
	for (i = 0; i <= size; i++) {
		if (i == size || text[i] == ';') {
			nonempty += run > 0;
			run = 0;
		} else {
			run++;
		}
	}
	FUZZ_CHECK(s.items == nonempty, "%zu items loaded of %zu", s.items, nonempty);
	FUZZ_CHECK(st == s.first, "returned %s, the first failure was %s",
		   elt_strerror(st), elt_strerror(s.first));
	FUZZ_CHECK(st == ELT_OK || strcmp(elt_last_error(), s.first_message) == 0,
		   "tells \"%s\", the first failure said \"%s\"", elt_last_error(),
		   s.first_message);
	free(text);
	return 0;
}
