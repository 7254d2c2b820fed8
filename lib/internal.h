/*
 * Declarations shared by the portable core (lib/) and the ports (arch/).
 * Nothing here is installed.
 */
#ifndef ELT_INTERNAL_H
#define ELT_INTERNAL_H

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>

#include "hook.h"
#include "plan.h"
#include "plugin-state.h"
#include "thread-flags.h"

/* PE/COFF has no symbol visibility: a DLL exports only what is marked
 * dllexport (ELT_API), so everything else is internal already. */
#if defined(_WIN32)
# define ELT_HIDDEN
#else
# define ELT_HIDDEN __attribute__((visibility("hidden")))
#endif

/* Thread-local data: initial-exec, so an access is one instruction and
 * never allocates.  A library with such data that is dlopen()ed takes
 * its whole TLS segment from glibc's static TLS surplus, which is small
 * (a few hundred bytes are left when other modules took theirs), so the
 * segment holds pointers and flags, never buffers (error.c's message is
 * mapped); tests/test-dlopen.c keeps it within 192 bytes.  The TLS
 * models are ELF's: on Windows plain __thread. */
#if defined(_WIN32)
# define ELT_TLS __thread
#else
# define ELT_TLS __thread __attribute__((tls_model("initial-exec")))
#endif

#define ELT_LIKELY(x) __builtin_expect(!!(x), 1)
/* A function every segment runs: each starts a cache line of its own, so
 * how many instruction-fetch windows it takes does not depend on where
 * the linker put it (measured: doc/performance.md, layout noise). */
#define ELT_SEGMENT_PATH __attribute__((aligned(64)))
#define ELT_UNLIKELY(x) __builtin_expect(!!(x), 0)

ELT_HIDDEN elt_status elt_vset_error(elt_status status, const char *fmt,
				     va_list ap);
/* elt_last_error() empty again, without mapping its page. */
ELT_HIDDEN void elt_clear_error(void);
/* At load (init.c): error.c's thread key made. */
ELT_HIDDEN void elt_error_load(void);
/* This thread's message page (error.c) unmapped by threads.c: told at its
 * attach, then asked at the end of its exit. */
ELT_HIDDEN void elt_error_thread_attached(void);
ELT_HIDDEN void elt_error_thread_exit(void);

/* --- pages.c: zeroed memory a signal handler's segment may ask for ------- */

/* NULL when there is none; errno unchanged either way. */
ELT_HIDDEN void *elt_pages_map(size_t size);
ELT_HIDDEN void elt_pages_unmap(void *p, size_t size);

/* --- registry.c: registered functions ------------------------------------ */

struct elt_function {
	elt_function_desc desc;
	/* Non-zero when a helper's segment needs more than a lookup and a
	 * kind known from the hook: the function is async (a segment may be
	 * a resume or a suspension) or its values need scratch.  One test on
	 * the dispatcher's straight path instead of two (registry.c). */
	uint32_t needs_more;
	elt_signature *signature;
	struct elt_plan plan;
	/* What each plugin's function_added returned, by plugin slot. */
	void *_Atomic plugin_data[ELT_MAX_PLUGINS];
	struct elt_function *_Atomic next_registered;  /* registry.c's list */
};

/* The lookup's open-addressing table: slots published with release
 * stores, the table replaced by a larger copy when half full; old tables
 * are never freed while the process runs (registry.c). */
struct elt_registry_table {
	uint32_t mask;                  /* capacity - 1, capacity a power of 2 */
	uint32_t used;
	struct elt_registry_table *retired;     /* the table this one replaced */
	struct elt_function *_Atomic slot[];
};
ELT_HIDDEN extern struct elt_registry_table *_Atomic elt_registry_current;

static inline uint32_t elt_registry_hash(elt_function_id id, uint32_t mask)
{
	uint64_t h = (uint64_t)id * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(h >> 32) & mask;
}

/* The whole lookup, out of line, for where the first probe missed
 * (registry.c). */
ELT_HIDDEN const struct elt_function *elt_registry_probe(elt_function_id id);

/* Lock-free, and inline: every segment does one.  The table is kept at
 * most half full, so the first slot probed usually holds the function:
 * the function registered as `id` when it is there, else NULL (then
 * elt_registry_probe() knows). */
static inline const struct elt_function *elt_registry_first(elt_function_id id)
{
	const struct elt_registry_table *t =
		atomic_load_explicit(&elt_registry_current, memory_order_acquire);
	const struct elt_function *fn;

	/* A pointer-sized index: gcc then folds the slots' offset into the
	 * load instead of adding it to the index first. */
	fn = atomic_load_explicit(t->slot + (uintptr_t)elt_registry_hash(id, t->mask),
				  memory_order_acquire);
	return fn && fn->desc.id == id ? fn : NULL;
}

/* NULL for an id never registered.  There is always a table (registry.c). */
static inline const struct elt_function *elt_registry_lookup(elt_function_id id)
{
	const struct elt_function *fn = elt_registry_first(id);

	return ELT_LIKELY(fn) ? fn : elt_registry_probe(id);
}
/* Registration is serialized by one lock; a plugin being added holds it
 * while it learns of the functions registered so far, so it misses none. */
ELT_HIDDEN void elt_registry_lock(void);
ELT_HIDDEN void elt_registry_unlock(void);
/* Whether this thread holds that lock (a plugin's function_added runs). */
ELT_HIDDEN int elt_registry_held_here(void);
/* Calls `fn` for every registered function, in registration order.
 * Lock-free: one registered meanwhile may be left out, unless the caller
 * holds the lock. */
ELT_HIDDEN void elt_registry_foreach(void (*fn)(struct elt_function *, void *),
				     void *arg);
/* From now on `fn` is called with each function registered, before it can
 * be looked up (the lock held, as it must be here). */
ELT_HIDDEN void elt_registry_announce_to(void (*fn)(struct elt_function *));

/* --- plugin.c: the plugins in use ---------------------------------------- */

typedef void (*elt_segment_callback)(const elt_info *, void *);

struct elt_plugin_slot {
	const elt_plugin *desc;
	void *state;
	void *module;           /* dlopen() handle, NULL when added by the program */
	/* enter, leave, tailcall: indexed by elt_hook_index(), so the
	 * dispatcher picks one with a load, not a branch. */
	elt_segment_callback segment[3];
	void (*thread_exit)(void *);
	elt_status (*fini)(void *);
	void *(*function_added)(void *, const elt_function_desc *);
	void (*invocation_abandoned)(const elt_invocation *, const elt_function_desc *,
				     void *, void *);
	/* Built for plugin ABI 1.5 or later: an abandoned invocation it
	 * holds nothing for may be forgotten (dispatch.c). */
	uint8_t knows_forgetting;
	uint32_t flags;         /* ELT_PLUGIN_*, as the descriptor says */
	char name[64];
};

ELT_HIDDEN extern struct elt_plugin_slot elt_plugins[ELT_MAX_PLUGINS];
/* plugin-state.h: the count and what the plugins need, published with a
 * release store once the slot is filled. */
ELT_HIDDEN extern _Atomic uint32_t elt_plugins_state;
static inline unsigned elt_plugins_in_use(void)
{
	return atomic_load_explicit(&elt_plugins_state, memory_order_acquire) &
	       ELT_PLUGINS_COUNT_MASK;
}
/* Nonzero while a segment has somewhere to go: a plugin is present and the
 * library has not stopped.  The first thing every helper reads (a plain
 * byte load in assembly): clear, it returns at once, saving nothing. */
ELT_HIDDEN extern _Atomic unsigned char elt_armed;
/* ELT_HOOK_ENTER, _LEAVE, _TAILCALL (1, 2, 4) as 0, 1, 2. */
static inline unsigned elt_hook_index(unsigned hook)
{
	return hook >> 1;
}

/* elt_plugin_add and elt_plugin_load once init.c has readied the layers. */
ELT_HIDDEN elt_status elt_plugins_add(const elt_plugin *plugin, const char *options);
ELT_HIDDEN elt_status elt_plugins_load(const char *spec);
/* Tells every plugin about a new function (registry lock held). */
ELT_HIDDEN void elt_plugins_function_added(struct elt_function *fn);
/* The plugins' thread_exit, as plugin code (not after the stop). */
ELT_HIDDEN void elt_plugins_thread_exit(void);
/* Set by elt_plugins_stop(), at shutdown: no plugin is added, told of a
 * function or called after it (elt_armed goes down, and
 * elt_plugins_state's ELT_PLUGINS_STOPPED up, with it). */
ELT_HIDDEN extern _Atomic int elt_stopped;
/* Sets elt_stopped: no plugin is added, told of a function or called
 * after this. */
ELT_HIDDEN void elt_plugins_stop(void);
/* Whether this thread is inside a plugin's init or function_added, with
 * the locks that adding a plugin, registering or stopping would take. */
ELT_HIDDEN int elt_plugins_busy_here(void);
ELT_HIDDEN elt_status elt_plugins_fini(void);

/* The public calls that run plugin code under the library's locks
 * (adding a plugin, registering a function, shutting down, listing the
 * live invocations) are no cancellation points: a thread cancelled in a
 * plugin's read or write there would leave the locks held, and every
 * later call would wait for them forever (runtime.md).  Returns the state
 * to restore. */
static inline int elt_cancel_disable(void)
{
	int old = PTHREAD_CANCEL_ENABLE;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	return old;
}

static inline void elt_cancel_restore(int old)
{
	pthread_setcancelstate(old, NULL);
}

/* What elt_foreach_live_invocation calls, and the walk itself for the
 * plugin in table slot `plugin` (invocation.c; plugin.c finds the slot). */
typedef void (*elt_live_invocation_fn)(const elt_invocation *inv,
				       const elt_function_desc *function, void *slot,
				       void *arg);
ELT_HIDDEN void elt_invocations_foreach_live(unsigned plugin, elt_live_invocation_fn fn,
					     void *arg);
/* The invocation_storage of the plugin in table slot `plugin`, before it
 * goes live (invocation.c keeps it: it hands the storage out). */
ELT_HIDDEN void elt_invocations_set_storage(unsigned plugin, uint32_t size);

/* --- function-storage.c: plugins' per-thread, per-function storage ------ */

struct elt_function_table;
/* A thread's tables, by plugin slot; in its thread record (threads.c).
 * rows[p]: where table of[p]'s rows are, copied from it so that the
 * getter reads one line instead of following it (only this thread grows
 * the table while it holds it); what segments' heads point to. */
struct elt_thread_tables {
	elt_function_rows rows[ELT_MAX_PLUGINS];
	struct elt_function_table *of[ELT_MAX_PLUGINS];
};
/* The rows of a thread that has no tables: none. */
ELT_HIDDEN extern const elt_function_rows elt_no_function_rows[ELT_MAX_PLUGINS];
/* The function_storage bytes of the plugin in slot `plugin`. */
ELT_HIDDEN void elt_function_storage_set_size(unsigned plugin, uint32_t size);
/* A thread's tables go free for later threads: at its exit, and in a
 * fork child for the threads that do not exist there. */
ELT_HIDDEN void elt_function_storage_release(struct elt_thread_tables *mine);
/* elt_foreach_function_storage for the plugin in slot `plugin`. */
ELT_HIDDEN void elt_function_storage_foreach(unsigned plugin, elt_function_storage_fn fn,
					     void *arg);

/* --- init.c: life cycle -------------------------------------------------- */

/* Once per process: thread-exit key, exit handler.  Needed before the
 * first plugin is added, however it is added. */
ELT_HIDDEN void elt_core_init(void);
/* Fails with ELT_E_STATE once the library has shut down. */
ELT_HIDDEN elt_status elt_check_running(const char *what);

/* --- threads.c: threads that report segments ----------------------------- */

struct elt_thread_invocations;         /* invocation.c's part of a thread */

/* Values a producer (elt_emit_*) keeps in its own memory. */
struct elt_emitted {
	void *const *args;              /* each argument, K excluded */
	const void *ret;
};

/* One segment as its plugins see it (dispatch.c), here since each thread
 * keeps one (elt_thread.info).  head: what the header's inline getters
 * read (kind, plugin: the slot of the plugin being called, id, function:
 * NULL when never registered, function_rows). */
struct elt_info {
	elt_info_head head;
	uintptr_t caller_sp;
	/* Set for a resume or a suspension only (elt_info_continuation()):
	 * a helper's segment is bound by how many stores it makes, so none is
	 * spent on what the kind already says. */
	uintptr_t continuation;
	/* The port's saved register image; NULL in a producer's segment,
	 * and only there. */
	const void *frame;
	/* Where elt_emit_*'s values are, set only in a producer's segment,
	 * whose frame is NULL (elt_info_emitted()): the getters then read
	 * memory, not the frame's plan. */
	const struct elt_emitted *emitted;
	/* NULL: none matched.  Set by invocation tracking only: in a
	 * thread's own info (elt_thread.info) NULL until tracking first runs,
	 * which then sets it in every segment. */
	struct elt_shadow_entry *invocation;
};

/* This thread's part of the library: one block of TLS, so that a segment
 * computes one thread-local address.
 *
 * flags: 0 until the thread's first segment registers it, then ATTACHED
 *     (or UNATTACHABLE, out of memory or past its exit: never reported),
 *     with IN_CALLBACK while it runs plugin code (thread-flags.h).  Shutdown reads other
 *     threads' (threads.c), hence atomic.  A signal handler's segment can
 *     come between any two instructions of this thread, so a step that
 *     depends on the flags' old value (the first raise, plugin code outside
 *     a segment) is one atomic read-modify-write, not a load and a store:
 *     a word, not a byte, since gcc 12 makes byte read-modify-writes calls
 *     into libatomic on riscv64.
 * invocations: invocation.c's state of the thread; set by
 *     elt_thread_attach(), NULL again once the thread exits.
 * tables: its function-storage tables (function-storage.c), the same;
 * info: the elt_info of the helper segment the thread reports, whose
 *     plugins it is running: one at a time, since a segment that comes
 *     while the thread runs plugin code (a signal handler's) is not
 *     reported.  Kept here, not on the dispatcher's stack, so that what
 *     is the thread's and not the segment's is stored once and not per
 *     segment, a segment's cost following its stores: head.function_rows,
 *     the tables' rows from elt_thread_attach() (elt_no_function_rows
 *     once the thread exits), never NULL once attached, and copied into
 *     the info of a producer's segment; invocation, NULL until tracking
 *     first runs (see struct elt_info). */
struct elt_thread_tls {
	_Atomic unsigned flags;
	struct elt_thread_invocations *invocations;
	struct elt_thread_tables *tables;
	struct elt_info info;
};
_Static_assert(offsetof(struct elt_thread_tls, flags) == 0 &&
	       sizeof(((struct elt_thread_tls *)0)->flags) == 4,
	       "helpers-sysv.S finds the flags, a 32-bit word, at the block's own address");
ELT_HIDDEN extern ELT_TLS struct elt_thread_tls elt_thread;
/* At load (init.c): the key that tells of a thread's exit made. */
ELT_HIDDEN void elt_threads_load(void);
/* on_thread_exit: called first at every attached thread's exit. */
ELT_HIDDEN void elt_threads_init(void (*on_thread_exit)(void));

/* For an attached thread outside plugin code: */
/* raises this thread's flag and returns 1 when the library is armed, so
 * plugin code may run until elt_callback_end(); else returns 0 with the
 * flag down.  The flag goes up before the stop is read; shutdown stores
 * the stop and then reads the flags, with a barrier on every thread in
 * between (threads.c), so one of the two sees the other. */
static inline __attribute__((always_inline)) int elt_callback_begin(void)
{
	atomic_store_explicit(&elt_thread.flags,
			      ELT_THREAD_ATTACHED | ELT_THREAD_IN_CALLBACK,
			      memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&elt_armed, memory_order_relaxed))
		return 1;
	atomic_store_explicit(&elt_thread.flags, ELT_THREAD_ATTACHED, memory_order_relaxed);
	return 0;
}

/* Everything the plugin code wrote happens before shutdown sees the flag
 * down (its acquire load) and lets fini free what that code used. */
static inline __attribute__((always_inline)) void elt_callback_end(void)
{
	atomic_store_explicit(&elt_thread.flags, ELT_THREAD_ATTACHED, memory_order_release);
}
/* elt_callback_end() for the thread's last plugin code (its plugins'
 * thread_exit): in the same store the thread becomes UNATTACHABLE, so that
 * no segment it reports from then on, a signal handler's included, runs a
 * plugin that has said goodbye to it. */
static inline void elt_callback_end_at_exit(void)
{
	atomic_store_explicit(&elt_thread.flags, ELT_THREAD_UNATTACHABLE, memory_order_release);
}
/* Around plugin code the library calls outside a segment on a live
 * plugin (function_added): a signal handler's segment on this thread is
 * not reported meanwhile, as in a callback, so that it cannot write into
 * what the interrupted code was writing (the thread's own buffer).  Any
 * thread, attached or not; returns the flags to restore (a handler does
 * not change them while the flag is up). */
static inline unsigned elt_plugin_code_begin(void)
{
	unsigned was = atomic_fetch_or_explicit(&elt_thread.flags, ELT_THREAD_IN_CALLBACK,
						memory_order_relaxed);

	atomic_signal_fence(memory_order_seq_cst);
	return was;
}

static inline void elt_plugin_code_end(unsigned was)
{
	atomic_store_explicit(&elt_thread.flags, was, memory_order_release);
}
/* Registers this thread (its flags, its exit) and sets its flags to
 * ATTACHED, or UNATTACHABLE and returns 0 when out of memory. */
ELT_HIDDEN int elt_thread_attach(void);
/* Returns once no other thread is inside a plugin callback; called after
 * elt_stopped is set. */
ELT_HIDDEN void elt_threads_quiesce(void);
/* Calls fn with every attached thread's invocation state, the thread list
 * locked (thread exits wait). */
ELT_HIDDEN void elt_threads_foreach(void (*fn)(struct elt_thread_invocations *, void *),
				    void *arg);

/* --- invocation.c: logical invocations (its hot path: invocation.h) ----- */

struct elt_shadow_entry;

/* --- dispatch.c: one segment --------------------------------------------- */

/* A helper's segment whose function has values split across registers
 * and the stack, on the dispatcher's stack: its info, then where the
 * getters reassemble them (info.c), which the plugins of one segment
 * share.  Any other segment's info stands alone: a producer's values are
 * whole, and the plan of a function with none split asks for no room. */
struct elt_frame_segment {
	struct elt_info info;
	unsigned char scratch[ELT_SCRATCH_SIZE] __attribute__((aligned(16)));
};

_Static_assert(offsetof(struct elt_frame_segment, info) == 0,
	       "a helper's info is its segment's address");
_Static_assert(offsetof(struct elt_info, head) == 0,
	       "the header's getters read an elt_info as its head");
/* Plugins compiled these offsets in: they may change only with the plugin
 * ABI's major (doc/plugins.md#abi-versioning). */
_Static_assert(offsetof(elt_info_head, kind) == 0 && offsetof(elt_info_head, plugin) == 4 &&
	       offsetof(elt_info_head, id) == 8 &&
	       offsetof(elt_info_head, function) == 8 + sizeof(elt_function_id) &&
	       offsetof(elt_info_head, function_rows) ==
	       8 + sizeof(elt_function_id) + sizeof(void *),
	       "elt_info_head's layout is part of plugin ABI 1");
_Static_assert(offsetof(struct elt_function, desc) == 0,
	       "an elt_info's function is its elt_function's desc");

/* A producer's values, NULL in a helper's segment. */
static inline const struct elt_emitted *elt_info_emitted(const struct elt_info *info)
{
	return info->frame ? NULL : info->emitted;
}

/* The continuation a resume received or a suspension returns, else 0. */
static inline uintptr_t elt_info_continuation(const struct elt_info *info)
{
	elt_segment_kind kind = info->head.kind;

	return kind == ELT_SEGMENT_RESUME || kind == ELT_SEGMENT_SUSPEND ? info->continuation : 0;
}

/* The function's registration, NULL when never registered. */
static inline const struct elt_function *elt_info_function(const struct elt_info *info)
{
	return (const struct elt_function *)info->head.function;
}

static inline void elt_info_set_function(struct elt_info *info, const struct elt_function *fn)
{
	info->head.function = fn ? &fn->desc : NULL;
}

/* Called by a port's helper (through its C entry) with the saved register
 * image, the function id and caller SP the instrumented code passed, which
 * helper it was (ELT_HOOK_*), and the continuation return register. */
ELT_HIDDEN void elt_dispatch_frame(const void *frame, elt_function_id id,
				   uintptr_t caller_sp, unsigned hook,
				   uintptr_t continuation_out);
/* The same with the hook fixed, one set per kind of helper (suffix): a
 * port whose helpers are one body per hook calls these and saves the
 * switch (the continuation return register matters only to a Leave).
 * dispatch.c defines them with the same suffixes. */
#define ELT_DISPATCHERS_DECLARE(suffix)                                         \
	ELT_HIDDEN void elt_dispatch_enter##suffix(const void *frame, elt_function_id id, \
						   uintptr_t caller_sp);       \
	ELT_HIDDEN void elt_dispatch_leave##suffix(const void *frame, elt_function_id id, \
						   uintptr_t caller_sp,        \
						   uintptr_t continuation_out); \
	ELT_HIDDEN void elt_dispatch_tailcall##suffix(const void *frame,       \
						      elt_function_id id,      \
						      uintptr_t caller_sp);
/* A helper that saved the floating-point control state. */
ELT_DISPATCHERS_DECLARE()
/* A helper that did not, having found ELT_PLUGINS_FLOAT clear: they run
 * no plugin that may change it (one added meanwhile waits for the next
 * segment). */
ELT_DISPATCHERS_DECLARE(_nofloat)
/* A helper that raised the thread's flag itself, having found it
 * ATTACHED, and lowers it after the return (x86-64 System V, whose TLS is
 * one GOT load away): they may end in a jump to the plugin's callback.
 * Floating-point state as the `_nofloat` entries. */
ELT_DISPATCHERS_DECLARE(_flag_up)
/* The same for a segment whose values are in memory (emit.c): info has
 * id, fn (its one lookup), emitted and caller_sp set, and frame NULL,
 * which marks it a producer's; `continuation` is the one the producer
 * passed, an argument (Enter) or a return value (Leave). */
ELT_HIDDEN void elt_dispatch_emitted(struct elt_info *info, unsigned hook,
				     uintptr_t continuation);

/* Where a piece of a value is, for this callback. */
static inline uintptr_t elt_piece_address(const struct elt_info *info,
					  const struct elt_piece *p)
{
	uintptr_t base = (p->source == ELT_SRC_FRAME || p->source == ELT_SRC_FRAME_REF)
		? (uintptr_t)info->frame : info->caller_sp;
	uintptr_t at = base + p->offset;

	if (p->source == ELT_SRC_FRAME_REF || p->source == ELT_SRC_STACK_REF)
		at = *(const uintptr_t *)at;
	return at;
}

/* --- the port (arch/<arch>/) --------------------------------------------- */

ELT_HIDDEN extern const char elt_arch_abi[];
/* This ABI's calling convention, for elt_plan_signature(). */
ELT_HIDDEN extern const struct elt_abi_rules elt_arch_rules;
/* The return address of the instrumented function. */
ELT_HIDDEN uintptr_t elt_arch_return_address(const struct elt_info *info);

#endif
