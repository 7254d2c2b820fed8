/* A plugin built for a plugin ABI this library does not know. */
#include <asyncelt/plugin.h>

static const elt_plugin future = {
	.struct_size = sizeof(elt_plugin) + 64,
	.abi_major = ELT_PLUGIN_ABI_MAJOR + 1,
	.abi_minor = 0,
	.name = "wrong-abi",
};

ELT_PLUGIN_EXPORT const elt_plugin *elt_plugin_entry(void);
const elt_plugin *elt_plugin_entry(void)
{
	return &future;
}
