/*
 * The registered functions.  Registration is rare and takes a mutex; the
 * lookup done for every segment takes none: an open-addressing table whose
 * slots are published with release stores, replaced by a larger copy when
 * half full.  Old tables and records are never freed while the process
 * runs, since a helper on another thread may still be reading them.
 */
#include "config.h"
#include "internal.h"
#include "owned-mutex.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static struct elt_owned_mutex registry_lock = ELT_OWNED_MUTEX_INITIALIZER;
static pthread_once_t fork_watch = PTHREAD_ONCE_INIT;
/* Told of each new function before it can be looked up (registry lock
 * held); set by the layer above once it has someone to tell. */
static void (*announce)(struct elt_function *);
/* Before the first registration: a table of one empty slot, so that the
 * lookup needs no test for "no table" (GNU C: a flexible array member
 * initialized, which gives it storage). */
static struct elt_registry_table no_functions = { .mask = 0, .slot = { NULL } };
/* The lookup's table (internal.h), replaced whole when it fills. */
struct elt_registry_table *_Atomic elt_registry_current = &no_functions;
static uint32_t registered;
/* Every function, in registration order: appended under the lock with a
 * release store, walked without it. */
static struct elt_function *_Atomic first_registered;
static struct elt_function *_Atomic *last_registered = &first_registered;

#if !defined(_WIN32)
static void after_fork_child(void);
#endif

static void watch_forks(void)
{
#if !defined(_WIN32)
	pthread_atfork(NULL, NULL, after_fork_child);
#endif
}

static void lock(void)
{
	pthread_once(&fork_watch, watch_forks);
	elt_owned_lock(&registry_lock);
}

static struct elt_registry_table *table_new(uint32_t capacity)
{
	struct elt_registry_table *t = calloc(1, sizeof(*t) + capacity * sizeof(t->slot[0]));

	if (t)
		t->mask = capacity - 1;
	return t;
}

static void table_put(struct elt_registry_table *t, struct elt_function *fn)
{
	uint32_t i = elt_registry_hash(fn->desc.id, t->mask);

	while (atomic_load_explicit(&t->slot[i], memory_order_relaxed))
		i = (i + 1) & t->mask;
	atomic_store_explicit(&t->slot[i], fn, memory_order_release);
	t->used++;
}

/* The whole chain, the first slot again included: the table may have
 * been replaced since the first probe, and this one reads the current. */
const struct elt_function *elt_registry_probe(elt_function_id id)
{
	const struct elt_registry_table *t =
		atomic_load_explicit(&elt_registry_current, memory_order_acquire);
	uint32_t i = elt_registry_hash(id, t->mask);

	for (;;) {
		const struct elt_function *fn = atomic_load_explicit(&t->slot[i],
								     memory_order_acquire);

		if (!fn || fn->desc.id == id)
			return fn;
		i = (i + 1) & t->mask;
	}
}

/* Called with the lock held: makes room for one more entry. */
static int reserve(void)
{
	struct elt_registry_table *t = atomic_load_explicit(&elt_registry_current, memory_order_relaxed);
	struct elt_registry_table *bigger;
	uint32_t i;

	if (t == &no_functions)
		t = NULL;       /* nothing to copy */
	if (t && (t->used + 1) * 2 <= t->mask + 1)
		return 1;
	bigger = table_new(t ? (t->mask + 1) * 2 : 256);
	if (!bigger)
		return 0;
	for (i = 0; t && i <= t->mask; i++) {
		struct elt_function *fn =
			atomic_load_explicit(&t->slot[i], memory_order_relaxed);
		if (fn)
			table_put(bigger, fn);
	}
	bigger->retired = t;
	atomic_store_explicit(&elt_registry_current, bigger, memory_order_release);
	return 1;
}

static elt_status check_async(const char *name, const elt_signature *sig,
			      unsigned flags)
{
	int has_k = sig && sig->continuation_index >= 0;

	if ((flags & ELT_FUNCTION_ASYNC) && !has_k)
		return elt_set_error(ELT_E_BAD_SIGNATURE,
				     "function '%s' is async but its signature %s%s%s has no "
				     "K parameter to say where the continuation is",
				     name, sig ? "'" : "", sig ? sig->text : "(none)",
				     sig ? "'" : "");
	if (!(flags & ELT_FUNCTION_ASYNC) && has_k)
		return elt_set_error(ELT_E_BAD_SIGNATURE,
				     "function '%s' has a K parameter in '%s' but is not "
				     "registered with ELT_FUNCTION_ASYNC", name, sig->text);
	return ELT_OK;
}

#if !defined(ELT_HAVE_HELPERS)
# define ELT_HAVE_HELPERS 0
#endif

static elt_status plan_function(struct elt_function *fn)
{
	struct elt_plan_builder b;
	elt_status st;

	elt_plan_begin(&b, &fn->plan);
	st = elt_plan_signature(&b, fn->signature);
	if (st == ELT_OK)
		st = elt_plan_end(&b);
	/* The helpers find a resume by its continuation argument; without
	 * helpers only a producer reports segments (elt_emit_enter), and it
	 * passes the continuation itself. */
	if (st == ELT_OK && ELT_HAVE_HELPERS && (fn->desc.flags & ELT_FUNCTION_ASYNC) &&
	    !fn->plan.has_continuation)
		st = elt_set_error(ELT_E_UNSUPPORTED,
				   "function '%s': %s", fn->desc.name,
				   fn->plan.args_unsupported ? fn->plan.args_unsupported
				   : "the continuation argument cannot be located");
	fn->needs_more = (fn->desc.flags & ELT_FUNCTION_ASYNC) || fn->plan.scratch_size;
	return st;
}

static void function_free(struct elt_function *fn)
{
	elt_plan_free(&fn->plan);
	elt_signature_free(fn->signature);
	free(fn);
}

static elt_status register_function(elt_function_id id, const char *name,
				    const char *signature, unsigned flags)
{
	struct elt_function *fn;
	size_t name_len;
	elt_status st;

	if (id == 0)
		return elt_set_error(ELT_E_INVALID_ARGUMENT, "function id 0 is reserved");
	if (flags & ~ELT_FUNCTION_ASYNC)
		return elt_set_error(ELT_E_INVALID_ARGUMENT,
				     "unknown function flags 0x%x", flags & ~ELT_FUNCTION_ASYNC);
	if (!name)
		name = "";
	name_len = strlen(name);
	fn = calloc(1, sizeof(*fn) + name_len + 1);
	if (!fn)
		return elt_set_error(ELT_E_NO_MEMORY, "out of memory registering '%s'", name);
	memcpy(fn + 1, name, name_len + 1);
	fn->desc.id = id;
	fn->desc.name = (const char *)(fn + 1);
	fn->desc.flags = flags;

	if (signature) {
		elt_parse_error err;

		st = elt_signature_parse(signature, &fn->signature, &err);
		if (st != ELT_OK) {
			/* The text is cut so the parser's message always fits. */
			elt_set_error(st, "function '%.40s': signature '%.48s%s': %s",
				      name, signature, strlen(signature) > 48 ? "..." : "",
				      err.message);
			function_free(fn);
			return st;
		}
		fn->desc.signature = fn->signature;
	}
	st = check_async(name, fn->signature, flags);
	if (st == ELT_OK)
		st = plan_function(fn);
	if (st != ELT_OK) {
		function_free(fn);
		return st;
	}

	if (elt_registry_held_here()) {
		function_free(fn);
		return elt_set_error(ELT_E_STATE, "function '%s': registered from a plugin's "
				     "function_added, which would wait for itself", name);
	}
	lock();
	if (elt_registry_lookup(id)) {
		elt_owned_unlock(&registry_lock);
		function_free(fn);
		return elt_set_error(ELT_E_EXISTS,
				     "function id %#lx ('%s') is registered already",
				     (unsigned long)id, name);
	}
	if (!reserve()) {
		elt_owned_unlock(&registry_lock);
		function_free(fn);
		return elt_set_error(ELT_E_NO_MEMORY, "out of memory registering '%s'", name);
	}
	fn->desc.index = registered++;
	atomic_store_explicit(last_registered, fn, memory_order_release);
	last_registered = &fn->next_registered;
	/* Plugins see the function before any segment of it can be looked up. */
	if (announce)
		announce(fn);
	table_put(atomic_load_explicit(&elt_registry_current, memory_order_relaxed), fn);
	elt_owned_unlock(&registry_lock);
	return ELT_OK;
}

elt_status elt_register_function(elt_function_id id, const char *name,
				 const char *signature, unsigned flags)
{
	int cancel = elt_cancel_disable();       /* function_added, under the lock */
	elt_status st = register_function(id, name, signature, flags);

	elt_cancel_restore(cancel);
	return st;
}

const elt_function_desc *elt_find_function(elt_function_id id)
{
	const struct elt_function *fn = elt_registry_lookup(id);

	return fn ? &fn->desc : NULL;
}

int elt_registry_held_here(void)
{
	return elt_owned_held_here(&registry_lock);
}

void elt_registry_lock(void)
{
	lock();
}

void elt_registry_unlock(void)
{
	elt_owned_unlock(&registry_lock);
}

void elt_registry_announce_to(void (*fn)(struct elt_function *))
{
	announce = fn;
}

void elt_registry_foreach(void (*fn)(struct elt_function *, void *), void *arg)
{
	struct elt_function *f;

	for (f = atomic_load_explicit(&first_registered, memory_order_acquire); f;
	     f = atomic_load_explicit(&f->next_registered, memory_order_acquire))
		fn(f, arg);
}

#if !defined(_WIN32)
/*
 * fork(): the child has only the forking thread.  A registration another
 * thread was making (or a plugin being added, which holds this lock too)
 * stays half done there, with the lock held.  The lock is made anew, and
 * the registration finished as far as it matters: the newest function in
 * the list is the last, and in the table.  Its plugins may not have been
 * told of it: its segments then reach them without their data for it, as
 * when their function_added finds no memory.
 */
static void after_fork_child(void)
{
	struct elt_function *fn, *newest = NULL;

	if (!elt_owned_mutex_reset(&registry_lock))
		return;
	for (fn = atomic_load_explicit(&first_registered, memory_order_relaxed); fn;
	     fn = atomic_load_explicit(&fn->next_registered, memory_order_relaxed))
		newest = fn;
	last_registered = newest ? &newest->next_registered : &first_registered;
	registered = newest ? newest->desc.index + 1 : 0;
	if (newest && elt_registry_lookup(newest->desc.id) != newest && reserve())
		table_put(atomic_load_explicit(&elt_registry_current, memory_order_relaxed),
			  newest);
}
#endif
