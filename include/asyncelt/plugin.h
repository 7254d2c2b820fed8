/*
 * The plugin interface of libasyncelt.
 *
 * A plugin is a descriptor: callbacks the library calls for every segment,
 * plus life-cycle hooks.  It is either linked into a profiler and added with
 * elt_plugin_add(), or built as a shared module and loaded by name from
 * $ASYNCELT_PLUGINS.  doc/plugins.md is the author's guide.
 */
#ifndef ASYNCELT_PLUGIN_H
#define ASYNCELT_PLUGIN_H

#include <asyncelt.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI of the descriptor and of elt_info_head.  The major changes when
 * a field changes meaning; the minor when fields are appended to either
 * (1.4: the head's function_rows; 1.5: invocation_abandoned).  The loader
 * refuses majors it does not know, and reads appended fields only when
 * struct_size covers them. */
#define ELT_PLUGIN_ABI_MAJOR 1
#define ELT_PLUGIN_ABI_MINOR 5

typedef struct elt_plugin {
	uint32_t struct_size;           /* sizeof(elt_plugin) as built */
	uint16_t abi_major;
	uint16_t abi_minor;
	const char *name;
	const char *description;

	/* Parses `options` (never NULL; "" when none were given) and creates
	 * the plugin's state.  Returns ELT_OK, or a status with a reason set
	 * through elt_set_error(): the plugin is then refused. */
	elt_status (*init)(const char *options, void **state);

	/* Segment callbacks; any may be NULL.  They run on the instrumented
	 * thread, between the helper's entry and its return: no locks, no
	 * malloc, no stdio, no syscalls if the hot path is to stay cheap.
	 * Instrumented code called from here is not reported (per-thread
	 * recursion guard). */
	void (*enter)(const elt_info *info, void *state);
	void (*leave)(const elt_info *info, void *state);
	void (*tailcall)(const elt_info *info, void *state);

	/* Called once per function, at registration (or, for functions
	 * registered before the plugin was added, when it is added).  The
	 * result is what elt_get_function_data() returns in the callbacks. */
	void *(*function_added)(void *state, const elt_function_desc *fn);

	/* A thread that reported segments is exiting. */
	void (*thread_exit)(void *state);

	/* Prints reports and frees the state.  ELT_E_CHECK_FAILED makes
	 * elt_shutdown() fail. */
	elt_status (*fini)(void *state);

	/* Appended in plugin ABI 1.1 (a 1.0 plugin reads as 0): ELT_PLUGIN_*
	 * flags. */
	uint32_t flags;

	/* Appended in plugin ABI 1.2 (older plugins read as 0): bytes the
	 * library keeps for this plugin with every invocation, handed out by
	 * elt_get_invocation_storage(); at most ELT_MAX_INVOCATION_STORAGE. */
	uint32_t invocation_storage;

	/* Appended in plugin ABI 1.3: bytes the library keeps for this plugin
	 * per function and per thread, handed out by elt_get_function_storage();
	 * at most ELT_MAX_FUNCTION_STORAGE. */
	uint32_t function_storage;

	/* Appended in plugin ABI 1.5: an invocation was abandoned, so it can
	 * never complete (a Leave skipped its frame, or its continuation was
	 * suspended again before its resume; include/asyncelt.h).  Called at
	 * most once, after the callbacks of a Leave on the thread that found
	 * it, with the plugin's slot value for it or, with invocation_storage,
	 * its storage (NULL if it never asked), so that the plugin can count
	 * it and release what it holds: it never sees the invocation again,
	 * elt_foreach_live_invocation included.  The rules of the segment
	 * callbacks apply (ELT_PLUGIN_NO_FLOAT too); a plugin with
	 * ELT_PLUGIN_NO_INVOCATIONS is not called.  The library then forgets
	 * the invocation (its record is reused) unless a plugin still holds
	 * something for it without this callback, or one built before 1.5
	 * that tracks invocations is in use: a plugin that stores nothing
	 * needs none.  Kept, it stays live and is listed to the fini of the
	 * plugins not told (doc/api.md, "How segments are stitched"). */
	void (*invocation_abandoned)(const elt_invocation *inv,
				     const elt_function_desc *function, void *slot,
				     void *state);
} elt_plugin;

#define ELT_MAX_INVOCATION_STORAGE 1024
#define ELT_MAX_FUNCTION_STORAGE 1024

/* The plugin never asks for invocations (elt_get_invocation, its slot,
 * elt_foreach_live_invocation): while every plugin says so, the library
 * does not track them, which saves a third of an empty segment's cost.
 * Segments reported meanwhile belong to no invocation, and a tracking
 * plugin added later sees their resumes as orphans. */
#define ELT_PLUGIN_NO_INVOCATIONS (1u << 0)

/* The plugin's segment callbacks, and all they call, do no floating-point
 * arithmetic and leave the floating-point control state alone (rounding
 * mode, exception masks).  While every plugin says so, the x86 helpers
 * skip saving and checking that state, about a tenth of an empty
 * segment's cost (doc/abi.md).  A plugin that says so falsely leaks its
 * rounding mode or exception flags into the instrumented code. */
#define ELT_PLUGIN_NO_FLOAT (1u << 1)

/* Declares a plugin in one statement:
 *
 *     ELT_PLUGIN_DEFINE(counting,
 *             .description = "counts segments per function",
 *             .init = counting_init, .enter = counting_enter, ...);
 *
 * defines `const elt_plugin elt_plugin_counting` and, in a shared module
 * (unless ELT_PLUGIN_STATIC is defined), the entry point the loader looks
 * up with dlsym. */
#define ELT_PLUGIN_ENTRY_SYMBOL "elt_plugin_entry"
/* The module exports its entry point (ELT_API would import it from the
 * library on Windows). */
#if defined(_WIN32)
# define ELT_PLUGIN_EXPORT __declspec(dllexport)
#else
# define ELT_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif
#if defined(ELT_PLUGIN_STATIC)
# define ELT_PLUGIN_ENTRY_(ident)
#else
# define ELT_PLUGIN_ENTRY_(ident)                                          \
	ELT_PLUGIN_EXPORT const elt_plugin *elt_plugin_entry(void);        \
	const elt_plugin *elt_plugin_entry(void) { return &elt_plugin_##ident; }
#endif
/* The descriptor comes last, so the statement ends with the user's ';'. */
#define ELT_PLUGIN_DEFINE(ident, ...)                                      \
	extern const elt_plugin elt_plugin_##ident;                        \
	ELT_PLUGIN_ENTRY_(ident)                                           \
	const elt_plugin elt_plugin_##ident = {                            \
		.struct_size = sizeof(elt_plugin),                         \
		.abi_major = ELT_PLUGIN_ABI_MAJOR,                         \
		.abi_minor = ELT_PLUGIN_ABI_MINOR,                         \
		.name = #ident,                                            \
		__VA_ARGS__                                                \
	}

/* Adds a plugin; init runs now with `options` (NULL means none).  Up to
 * ELT_MAX_PLUGINS at once.  Safe while instrumented code runs: segments
 * already in flight may miss the new plugin. */
#define ELT_MAX_PLUGINS 16
ELT_API elt_status elt_plugin_add(const elt_plugin *plugin, const char *options);

/* For a plugin's init, whose options decide what it needs: `self` (its
 * descriptor) is added with `flags` in place of the descriptor's, so
 * pass every ELT_PLUGIN_* flag this instance keeps (logging in its binary
 * format does no floating point, in text it may).  Bits this library
 * does not know are ignored, as in a descriptor.  ELT_E_STATE outside
 * self's init; ELT_E_INVALID_ARGUMENT for ELT_PLUGIN_NO_INVOCATIONS with
 * invocation_storage. */
ELT_API elt_status elt_plugin_set_flags(const elt_plugin *self, unsigned flags);

/* Loads plugins from a specification, the syntax of $ASYNCELT_PLUGINS:
 *
 *     spec     := plugin (';' plugin)*
 *     plugin   := NAME [':' OPTIONS]
 *
 * NAME is a path to a shared module (it contains a '/' or ends in ".so"),
 * or a short name looked up as asyncelt-NAME.so in each directory of
 * $ASYNCELT_PLUGIN_PATH and then in the installed plugin directory.
 * Each plugin that fails is reported with its name and the reason and
 * skipped; the rest are loaded.  Returns the first failure. */
ELT_API elt_status elt_plugin_load(const char *spec);

/* For a plugin's fini: calls fn for every invocation that never completed
 * (include/asyncelt.h, "Logical invocations"), with the calling plugin's
 * slot for it, so that reports can list incomplete invocations.  `function`
 * is NULL for an unregistered function.  Call it only from fini (or when no
 * instrumented thread runs): the records are read without locks.  From a
 * fini, a plugin added twice gets the slots of the instance finishing. */
ELT_API void elt_foreach_live_invocation(const elt_plugin *self,
	void (*fn)(const elt_invocation *inv, const elt_function_desc *function,
		   void *slot, void *arg),
	void *arg);

/* For a plugin's fini: calls fn once per registered function, in
 * registration order, then once with `function` NULL for unregistered
 * ones, with that function's rows of the calling plugin's function
 * storage: `rows[0 .. count)`, one per thread that had storage (live or
 * exited; count may be 0).  Rows a thread never used are zero.  Call it
 * only from fini (or when no instrumented thread runs): the rows are read
 * without locks.  From a fini, a plugin added twice gets the instance
 * finishing.  Sets ELT_E_NO_MEMORY and calls nothing when out of memory. */
typedef void (*elt_function_storage_fn)(const elt_function_desc *function,
					void *const *rows, size_t count, void *arg);
ELT_API void elt_foreach_function_storage(const elt_plugin *self, elt_function_storage_fn fn,
					  void *arg);

/* Plugin options: "key=value,key=value".  An item that does not start
 * with a key (letters, digits, '_', '-', '.') and '=' continues the
 * previous value, so lists read naturally: "expect=Work:25,Other:3,
 * output=report.txt" gives expect = "Work:25,Other:3" and output =
 * "report.txt".
 * Iterate with:
 *
 *     const char *cursor = options;
 *     elt_option opt;
 *     while ((st = elt_option_next(&cursor, &opt)) == ELT_OK && opt.key)
 *             ...
 *
 * At the end opt.key is NULL; a malformed string gives ELT_E_BAD_OPTION
 * with the bad item quoted in elt_last_error(). */
typedef struct elt_option {
	const char *key;
	size_t key_len;
	const char *value;
	size_t value_len;
} elt_option;

ELT_API elt_status elt_option_next(const char **cursor, elt_option *opt);
/* Non-zero when the option's key is `key`. */
ELT_API int elt_option_is(const elt_option *opt, const char *key);
/* The option's value as a decimal number from `min` to `max`: digits
 * only, no sign, space or suffix.  Anything else, or a number out of the
 * range, is ELT_E_BAD_OPTION with a message naming the option, its value
 * and the range; *out is then left alone. */
ELT_API elt_status elt_option_number(const elt_option *opt, uint64_t min, uint64_t max,
				     uint64_t *out);
/* The option's value copied into buf with its NUL, for a file name and
 * the like.  buf must start as "": a second value for the same key is
 * refused, as is an empty one or one that does not fit (cut short, a file
 * name would name another file); each is ELT_E_BAD_OPTION with a message
 * naming the option, and buf is then left alone. */
ELT_API elt_status elt_option_copy(const elt_option *opt, char *buf, size_t size);

/* Prints "asyncelt: message" on stderr (or passes it to the handler set
 * below).  For plugin reports and diagnostics, never on the hot path. */
ELT_API void elt_report(const char *fmt, ...) ELT_PRINTF(1, 2);

typedef void (*elt_diagnostic_handler)(const char *message, void *data);
/* Redirects the library's diagnostics (plugins that fail to load or to
 * start, a shutdown that cannot wait for a thread); NULL restores stderr. */
ELT_API void elt_set_diagnostic_handler(elt_diagnostic_handler handler,
					void *data);

#ifdef __cplusplus
}
#endif

#endif /* ASYNCELT_PLUGIN_H */
