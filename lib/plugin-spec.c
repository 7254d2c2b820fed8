/*
 * The plugin specification's syntax (lib/plugin-spec.h); lib/plugin.c
 * does the loading.
 */
#include "plugin-spec.h"

#include <asyncelt/plugin.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

elt_status elt_plugin_spec_each(const char *spec, elt_plugin_spec_loader load, void *arg)
{
	elt_status first = ELT_OK;
	char first_message[256] = "";
	const char *s = spec;

	if (!spec)
		return elt_set_error(ELT_E_INVALID_ARGUMENT, "elt_plugin_load: spec is NULL");
	while (*s) {
		size_t len = strcspn(s, ";");
		size_t name_len = strcspn(s, ":;");
		char *item = malloc(len + 1);   /* strndup: not in mingw-w64 */
		elt_status st;

		if (!item)
			return elt_set_error(ELT_E_NO_MEMORY, "out of memory loading plugins");
		memcpy(item, s, len);
		item[len] = 0;
		if (len == 0) {
			st = ELT_OK;    /* ";;" and a trailing ';' are harmless */
		} else {
			item[name_len < len ? name_len : len] = '\0';
			st = load(item, name_len < len ? item + name_len + 1 : "", arg);
		}
		free(item);
		if (st != ELT_OK) {
			elt_report("%s; the other plugins carry on", elt_last_error());
			if (first == ELT_OK) {
				first = st;
				snprintf(first_message, sizeof(first_message), "%s",
					 elt_last_error());
			}
		}
		s += len + (s[len] == ';');
	}
	if (first != ELT_OK)
		elt_set_error(first, "%s", first_message);
	return first;
}
