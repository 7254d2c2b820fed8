/*
 * Plugins: adding them (by the program, or by name from a specification
 * such as $ASYNCELT_PLUGINS), and the life-cycle calls into them.
 *
 * The table only grows while the process runs: a slot is filled, then the
 * count is published with a release store, so the hot path reads it with
 * no lock.
 */
#include "internal.h"
#include "owned-mutex.h"
#include "plugin-spec.h"

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(_WIN32)
# include <windows.h>
#else
# include <dlfcn.h>
#endif

/* ELT_PLUGIN_DIR, the installed plugin directory: written by make from
 * the configured prefix (Makefile.am), so a new prefix rebuilds this. */
#include "install-dirs.h"

/* Module names and the separator of $ASYNCELT_PLUGIN_PATH: Windows
 * paths hold ':' after the drive letter, so its lists use ';'. */
#if defined(_WIN32)
# define MODULE_SUFFIX ".dll"
# define PATH_SEPARATOR ';'
#else
# define MODULE_SUFFIX ".so"
# define PATH_SEPARATOR ':'
#endif

/* Oldest descriptor major this library still understands. */
#define ELT_PLUGIN_ABI_MAJOR_MIN 1

struct elt_plugin_slot elt_plugins[ELT_MAX_PLUGINS];
_Atomic uint32_t elt_plugins_state;
_Static_assert(ELT_MAX_PLUGINS <= ELT_PLUGINS_COUNT_MASK, "the count fits its field");
_Static_assert(ELT_PLUGINS_FLOAT == ELT_PLUGINS_FLOAT_BIT << (8 * ELT_PLUGINS_FLOAT_BYTE),
	       "the helpers' byte test is the bit (little-endian)");
_Atomic unsigned char elt_armed;
_Atomic int elt_stopped;
static struct elt_owned_mutex plugin_lock = ELT_OWNED_MUTEX_INITIALIZER;
static pthread_once_t fork_watch = PTHREAD_ONCE_INIT;

#if !defined(_WIN32)
/* fork(): a plugin another thread was adding (or the stop it was raising)
 * stays half done in the child, with the lock held; the lock is made
 * anew.  A plugin not yet counted is not there, its slot free for the
 * next one; a counted one is whole. */
static void after_fork_child(void)
{
	elt_owned_mutex_reset(&plugin_lock);
}
#endif

static void watch_forks(void)
{
#if !defined(_WIN32)
	pthread_atfork(NULL, NULL, after_fork_child);
#endif
}

int elt_plugins_busy_here(void)
{
	return elt_owned_held_here(&plugin_lock) || elt_registry_held_here();
}

static void lock_plugins(void)
{
	pthread_once(&fork_watch, watch_forks);
	elt_owned_lock(&plugin_lock);
}

/* A field of the descriptor, or NULL when the plugin was built before the
 * field was appended. */
#define DESC_FIELD(d, field) \
	((d)->struct_size >= offsetof(elt_plugin, field) + sizeof((d)->field) \
	 ? (d)->field : NULL)

#define DESC_FLAGS(d) \
	((d)->struct_size >= offsetof(elt_plugin, flags) + sizeof((d)->flags) \
	 ? (d)->flags : 0u)
#define DESC_STORAGE(d) \
	((d)->struct_size >= offsetof(elt_plugin, invocation_storage) + \
	 sizeof((d)->invocation_storage) ? (d)->invocation_storage : 0u)
#define DESC_FUNCTION_STORAGE(d) \
	((d)->struct_size >= offsetof(elt_plugin, function_storage) + \
	 sizeof((d)->function_storage) ? (d)->function_storage : 0u)

static elt_status check_descriptor(const elt_plugin *d, const char *who)
{
	if (d->struct_size < offsetof(elt_plugin, name) + sizeof(d->name))
		return elt_set_error(ELT_E_PLUGIN_ABI,
				     "plugin %s: descriptor of %u bytes is too small to be one",
				     who, d->struct_size);
	if (d->abi_major < ELT_PLUGIN_ABI_MAJOR_MIN || d->abi_major > ELT_PLUGIN_ABI_MAJOR)
		return elt_set_error(ELT_E_PLUGIN_ABI,
				     "plugin %s: built for plugin ABI %u.%u, this library "
				     "takes %u.x to %u.x; rebuild it against asyncelt %s",
				     who, d->abi_major, d->abi_minor, ELT_PLUGIN_ABI_MAJOR_MIN,
				     ELT_PLUGIN_ABI_MAJOR, ELT_VERSION_STRING);
	if (!d->name || !*d->name)
		return elt_set_error(ELT_E_PLUGIN, "plugin %s: descriptor has no name", who);
	if (DESC_STORAGE(d) > ELT_MAX_INVOCATION_STORAGE)
		return elt_set_error(ELT_E_LIMIT,
				     "plugin %s: invocation_storage of %u bytes, at most %d",
				     who, DESC_STORAGE(d), ELT_MAX_INVOCATION_STORAGE);
	if (DESC_FUNCTION_STORAGE(d) > ELT_MAX_FUNCTION_STORAGE)
		return elt_set_error(ELT_E_LIMIT,
				     "plugin %s: function_storage of %u bytes, at most %d",
				     who, DESC_FUNCTION_STORAGE(d), ELT_MAX_FUNCTION_STORAGE);
	if (DESC_STORAGE(d) && (DESC_FLAGS(d) & ELT_PLUGIN_NO_INVOCATIONS))
		return elt_set_error(ELT_E_PLUGIN,
				     "plugin %s: asks for invocation_storage yet says "
				     "ELT_PLUGIN_NO_INVOCATIONS", who);
	return ELT_OK;
}

static void tell_function(struct elt_function *fn, void *arg)
{
	const struct elt_plugin_slot *p = arg;
	unsigned flags = elt_plugin_code_begin();
	void *data = p->function_added(p->state, &fn->desc);

	elt_plugin_code_end(flags);
	atomic_store_explicit(&fn->plugin_data[p - elt_plugins], data, memory_order_relaxed);
}

void elt_plugins_function_added(struct elt_function *fn)
{
	unsigned n = elt_plugins_in_use();
	unsigned i;

	if (atomic_load_explicit(&elt_stopped, memory_order_relaxed))
		return;         /* their state may be gone */

	for (i = 0; i < n; i++)
		if (elt_plugins[i].function_added)
			tell_function(fn, &elt_plugins[i]);
}

/* The slot whose init runs on this thread, for elt_plugin_set_flags().
 * Not initial-exec (ELT_TLS): no hot path reads it. */
static __thread struct elt_plugin_slot *initializing;

elt_status elt_plugin_set_flags(const elt_plugin *self, unsigned flags)
{
	/* Only self's own init: a live plugin's function_added or callback
	 * may run on this thread meanwhile, and must not speak for it. */
	if (!initializing || !self || initializing->desc != self)
		return elt_set_error(ELT_E_STATE,
				     "elt_plugin_set_flags: called outside the init of plugin %s",
				     self && self->name ? self->name : "(null)");
	/* Unknown bits only let the library skip work: ignored, as in a
	 * descriptor (check_descriptor). */
	flags &= ELT_PLUGIN_NO_INVOCATIONS | ELT_PLUGIN_NO_FLOAT;
	if ((flags & ELT_PLUGIN_NO_INVOCATIONS) && DESC_STORAGE(initializing->desc))
		return elt_set_error(ELT_E_INVALID_ARGUMENT,
				     "elt_plugin_set_flags: plugin %s asks for invocation_storage "
				     "yet would say ELT_PLUGIN_NO_INVOCATIONS", initializing->name);
	initializing->flags = flags;
	return ELT_OK;
}

static elt_status add(const elt_plugin *d, const char *options, void *module)
{
	struct elt_plugin_slot *p;
	const char *who = d && d->struct_size >= offsetof(elt_plugin, name) + sizeof(d->name)
		&& d->name ? d->name : "(unnamed)";
	elt_status st;
	uint32_t state;
	unsigned n;

	if (!d)
		return elt_set_error(ELT_E_INVALID_ARGUMENT, "elt_plugin_add: plugin is NULL");
	st = check_descriptor(d, who);
	if (st != ELT_OK)
		return st;
	if (elt_plugins_busy_here())
		return elt_set_error(ELT_E_STATE, "plugin %s: added from a plugin's init or "
				     "function_added, which would wait for itself", who);

	lock_plugins();
	if (atomic_load_explicit(&elt_stopped, memory_order_relaxed)) {
		elt_owned_unlock(&plugin_lock);
		return elt_set_error(ELT_E_STATE, "plugin %s: the library has shut down", who);
	}
	state = atomic_load_explicit(&elt_plugins_state, memory_order_relaxed);
	n = state & ELT_PLUGINS_COUNT_MASK;
	if (n == ELT_MAX_PLUGINS) {
		elt_owned_unlock(&plugin_lock);
		return elt_set_error(ELT_E_LIMIT, "plugin %s: %d plugins are in use already",
				     who, ELT_MAX_PLUGINS);
	}
	p = &elt_plugins[n];
	memset(p, 0, sizeof(*p));
	p->desc = d;
	p->module = module;
	snprintf(p->name, sizeof(p->name), "%s", who);
	p->segment[elt_hook_index(ELT_HOOK_ENTER)] = DESC_FIELD(d, enter);
	p->segment[elt_hook_index(ELT_HOOK_LEAVE)] = DESC_FIELD(d, leave);
	p->segment[elt_hook_index(ELT_HOOK_TAILCALL)] = DESC_FIELD(d, tailcall);
	p->function_added = DESC_FIELD(d, function_added);
	p->thread_exit = DESC_FIELD(d, thread_exit);
	p->fini = DESC_FIELD(d, fini);
	p->invocation_abandoned = DESC_FIELD(d, invocation_abandoned);
	p->knows_forgetting = d->struct_size >= offsetof(elt_plugin, invocation_abandoned) +
			      sizeof(d->invocation_abandoned);
	p->flags = DESC_FLAGS(d);

	if (DESC_FIELD(d, init)) {
		elt_clear_error();
		initializing = p;
		st = d->init(options ? options : "", &p->state);
		initializing = NULL;
		if (st != ELT_OK) {
			char reason[200];

			snprintf(reason, sizeof(reason), "%s",
				 *elt_last_error() ? elt_last_error() : elt_strerror(st));
			const char *o = options ? options : "";

			elt_owned_unlock(&plugin_lock);
			/* The options cut, so that the reason always fits. */
			return elt_set_error(st, "plugin %s refused its options \"%.40s%s\": %s",
					     who, o, strlen(o) > 40 ? "..." : "", reason);
		}
	}

	/* Learn of the functions registered so far, then go live; holding the
	 * registry lock, no registration slips in between. */
	elt_registry_lock();
	elt_registry_announce_to(elt_plugins_function_added);
	if (p->function_added)
		elt_registry_foreach(tell_function, p);
	elt_invocations_set_storage(n, DESC_STORAGE(d));
	elt_function_storage_set_size(n, DESC_FUNCTION_STORAGE(d));
	state = (state & ~(uint32_t)ELT_PLUGINS_COUNT_MASK) | (n + 1);
	if (!(p->flags & ELT_PLUGIN_NO_INVOCATIONS))
		state |= ELT_PLUGINS_TRACKING;
	if (!(p->flags & ELT_PLUGIN_NO_FLOAT))
		state |= ELT_PLUGINS_FLOAT;
	atomic_store_explicit(&elt_plugins_state, state, memory_order_release);
	atomic_store_explicit(&elt_armed, 1, memory_order_release);
	elt_registry_unlock();
	elt_owned_unlock(&plugin_lock);
	return ELT_OK;
}

elt_status elt_plugins_add(const elt_plugin *plugin, const char *options)
{
	elt_status st = add(plugin, options, NULL);

	if (st != ELT_OK)
		elt_report("%s", elt_last_error());
	return st;
}

/* --- modules: dlopen, or LoadLibrary on Windows --------------------------- */

#if defined(_WIN32)
static void *module_open(const char *path, char *why, size_t why_len)
{
	HMODULE m = LoadLibraryA(path);

	if (!m) {
		DWORD code = GetLastError();

		if (!FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS,
				    NULL, code, 0, why, (DWORD)why_len, NULL))
			snprintf(why, why_len, "error %lu", (unsigned long)code);
		why[strcspn(why, "\r\n")] = 0;
	}
	return (void *)m;
}

static void *module_symbol(void *module, const char *name)
{
	void *sym;
	FARPROC p = GetProcAddress((HMODULE)module, name);

	memcpy(&sym, &p, sizeof(sym));
	return sym;
}

static void module_close(void *module)
{
	FreeLibrary((HMODULE)module);
}
#else
static void *module_open(const char *path, char *why, size_t why_len)
{
	void *m = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!m)
		snprintf(why, why_len, "%s", dlerror());
	return m;
}

static void *module_symbol(void *module, const char *name)
{
	return dlsym(module, name);
}

static void module_close(void *module)
{
	dlclose(module);
}
#endif

/* --- loading by name ----------------------------------------------------- */

static int is_path(const char *name)
{
	size_t n = strlen(name);

	size_t k = sizeof(MODULE_SUFFIX) - 1;

	return strchr(name, '/') ||
#if defined(_WIN32)
	       strchr(name, '\\') ||
#endif
	       (n > k && strcmp(name + n - k, MODULE_SUFFIX) == 0);
}

/* Whether snprintf's `written` fit in `size`: a path cut short may name
 * another module, which would load in its place. */
static int fits(int written, size_t size)
{
	return written >= 0 && (size_t)written < size;
}

/* Finds asyncelt-NAME.so (.dll) on $ASYNCELT_PLUGIN_PATH, then in the install
 * directory.  Returns 0 and fills `path` with the last candidate tried; a
 * candidate too long for `path` is not tried. */
static int find_module(const char *name, char *path, size_t size)
{
	const char *dirs = getenv("ASYNCELT_PLUGIN_PATH");
	const char *d = dirs;

	while (d && *d) {
		const char sep[2] = { PATH_SEPARATOR, 0 };
		size_t len = strcspn(d, sep);

		if (len && len <= INT_MAX &&
		    fits(snprintf(path, size, "%.*s/asyncelt-%s" MODULE_SUFFIX, (int)len, d, name),
			 size) &&
		    access(path, F_OK) == 0)
			return 1;
		d += len + (d[len] == PATH_SEPARATOR);
	}
	return fits(snprintf(path, size, "%s/asyncelt-%s" MODULE_SUFFIX, ELT_PLUGIN_DIR, name),
		    size) &&
	       access(path, F_OK) == 0;
}

/* The longest NAME a module file asyncelt-NAME.so can have: a file name
 * is at most 255 bytes on every system the library runs on. */
#define MODULE_NAME_MAX (255 - (sizeof("asyncelt-" MODULE_SUFFIX) - 1))

static elt_status load_one(const char *name, const char *options)
{
	const elt_plugin *(*entry)(void), *desc;
	char path[4096], why[256];
	void *module;
	elt_status st;

	if (!*name)
		return elt_set_error(ELT_E_PLUGIN, "empty plugin name in the specification");
	if (is_path(name)) {
		if (!fits(snprintf(path, sizeof(path), "%s", name), sizeof(path)))
			return elt_set_error(ELT_E_PLUGIN, "plugin %.40s...: a path of %zu bytes, "
					     "at most %zu", name, strlen(name), sizeof(path) - 1);
	} else if (strlen(name) > MODULE_NAME_MAX) {
		/* said before the search: the message then has room for why */
		return elt_set_error(ELT_E_PLUGIN, "plugin %.40s...: a name of %zu bytes, "
				     "and no file name asyncelt-NAME" MODULE_SUFFIX " has over %zu",
				     name, strlen(name), MODULE_NAME_MAX);
	} else if (!find_module(name, path, sizeof(path)))
		return elt_set_error(ELT_E_PLUGIN,
				     "plugin %s: no asyncelt-%s" MODULE_SUFFIX " in $ASYNCELT_PLUGIN_PATH "
				     "(%s) nor in %s", name, name,
				     getenv("ASYNCELT_PLUGIN_PATH") ? getenv("ASYNCELT_PLUGIN_PATH")
				     : "unset", ELT_PLUGIN_DIR);
	module = module_open(path, why, sizeof(why));
	if (!module)
		return elt_set_error(ELT_E_PLUGIN, "plugin %s: cannot load %s: %s",
				     name, path, why);
	*(void **)&entry = module_symbol(module, ELT_PLUGIN_ENTRY_SYMBOL);
	if (!entry) {
		module_close(module);
		return elt_set_error(ELT_E_PLUGIN,
				     "plugin %s: %s has no %s() (declare it with "
				     "ELT_PLUGIN_DEFINE)", name, path, ELT_PLUGIN_ENTRY_SYMBOL);
	}
	desc = entry();
	if (!desc) {
		module_close(module);
		return elt_set_error(ELT_E_PLUGIN, "plugin %s: %s() in %s returned NULL",
				     name, ELT_PLUGIN_ENTRY_SYMBOL, path);
	}
	st = add(desc, options, module);
	if (st != ELT_OK)
		module_close(module);
	return st;
}

static elt_status load_item(const char *name, const char *options, void *arg)
{
	(void)arg;
	return load_one(name, options);
}

elt_status elt_plugins_load(const char *spec)
{
	return elt_plugin_spec_each(spec, load_item, NULL);
}

/* --- life cycle ---------------------------------------------------------- */

void elt_plugins_thread_exit(void)
{
	unsigned n = elt_plugins_in_use();
	unsigned i;

	/* Plugin code, like a segment: shutdown waits for it, and once the
	 * library has stopped (fini may have freed the plugins' state) it
	 * does not run. */
	if (!elt_callback_begin())
		return;
	for (i = 0; i < n; i++) {
		/* One before may have shut the library down (run_callbacks). */
		if (i && !atomic_load_explicit(&elt_armed, memory_order_relaxed))
			break;
		if (elt_plugins[i].thread_exit)
			elt_plugins[i].thread_exit(elt_plugins[i].state);
	}
	elt_callback_end_at_exit();
}

void elt_plugins_stop(void)
{
	/* With both locks no plugin is being added and no function_added
	 * runs while the stop goes up. */
	lock_plugins();
	elt_registry_lock();
	atomic_store(&elt_stopped, 1);
	atomic_fetch_or(&elt_plugins_state, ELT_PLUGINS_STOPPED);
	atomic_store(&elt_armed, 0);
	elt_registry_unlock();
	elt_owned_unlock(&plugin_lock);
}

/* The slot whose fini runs now, -1 outside elt_plugins_fini(): one
 * descriptor may be added twice, and a fini asking for its own slots
 * means this instance. */
static int plugin_finishing = -1;

/*
 * Every failed fini is told, naming the plugin, whatever the status: at
 * exit nobody hears elt_shutdown's, and of several failures it returns
 * one, whose message elt_last_error() then gives.  A failed check
 * without a message printed its own verdict.
 */
elt_status elt_plugins_fini(void)
{
	unsigned n = elt_plugins_in_use();
	elt_status result = ELT_OK;
	char why[512] = "", failure[512];
	unsigned i;

	for (i = 0; i < n; i++) {
		struct elt_plugin_slot *p = &elt_plugins[i];
		elt_status st;
		bool said;

		elt_clear_error();
		plugin_finishing = (int)i;
		st = p->fini ? p->fini(p->state) : ELT_OK;
		plugin_finishing = -1;
		if (st == ELT_OK)
			continue;
		said = *elt_last_error();
		snprintf(failure, sizeof(failure), "%s: %s", p->name,
			 said ? elt_last_error() : elt_strerror(st));
		if (said || st != ELT_E_CHECK_FAILED)
			elt_report("%s", failure);
		/* a failed check is what the caller must hear of first */
		if (result == ELT_OK || (st == ELT_E_CHECK_FAILED && result != st)) {
			result = st;
			memcpy(why, failure, sizeof(why));
		}
		/* Modules stay mapped: a thread still in a helper may be
		 * returning through one. */
	}
	if (result != ELT_OK)
		elt_set_error(result, "%s", why);
	return result;
}

/* The table slot of `self` for a walk from its fini (the instance
 * finishing, if it was added twice), or -1 with the error set. */
static int slot_of(const elt_plugin *self, const char *what)
{
	unsigned n = elt_plugins_in_use();
	unsigned plugin;

	if (plugin_finishing >= 0 && elt_plugins[plugin_finishing].desc == self)
		return plugin_finishing;
	for (plugin = 0; plugin < n && elt_plugins[plugin].desc != self; plugin++)
		;
	if (plugin < n)
		return (int)plugin;
	elt_set_error(ELT_E_INVALID_ARGUMENT, "%s: plugin '%s' was never added", what,
		      self && self->name ? self->name : "(null)");
	return -1;
}

void elt_foreach_live_invocation(const elt_plugin *self, elt_live_invocation_fn fn, void *arg)
{
	int plugin = fn ? slot_of(self, "elt_foreach_live_invocation") : -1;
	/* A cancellation in fn would leak the walk's copy (internal.h) */
	int cancel = elt_cancel_disable();

	if (plugin >= 0)
		elt_invocations_foreach_live((unsigned)plugin, fn, arg);
	elt_cancel_restore(cancel);
}

void elt_foreach_function_storage(const elt_plugin *self, elt_function_storage_fn fn, void *arg)
{
	int plugin = fn ? slot_of(self, "elt_foreach_function_storage") : -1;

	if (plugin >= 0)
		elt_function_storage_foreach((unsigned)plugin, fn, arg);
}
