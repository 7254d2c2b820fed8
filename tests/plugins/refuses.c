/* A plugin whose init refuses anything but "mode=ok". */
#include <asyncelt/plugin.h>

#include <string.h>

static elt_status refuses_init(const char *options, void **state)
{
	*state = NULL;
	if (strcmp(options, "mode=ok") == 0)
		return ELT_OK;
	return elt_set_error(ELT_E_BAD_OPTION, "mode must be ok, not \"%s\"", options);
}

ELT_PLUGIN_DEFINE(refuses, .init = refuses_init);
