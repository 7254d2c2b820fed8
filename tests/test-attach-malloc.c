/*
 * A thread's first segment allocates nothing with malloc, in a program
 * that made many thread keys of its own after loading the library: that
 * segment may come from a signal handler that interrupted malloc
 * (doc/runtime.md, "a segment from a signal handler").  The thread's
 * registration sets the value of the library's thread-exit key, and glibc
 * callocs a block for a key past its first 32 (lib/threads.c,
 * elt_threads_load).  malloc, calloc and realloc are replaced here by
 * counting wrappers around glibc's own.
 */
#define ELT_PLUGIN_STATIC 1
#include "tap.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#include <pthread.h>
#include <stdatomic.h>

/* More than glibc's 32 keys held in each thread itself. */
#define PROGRAM_KEYS 40

static const elt_function_id FIRST = 0x31;
/* volatile: gcc takes malloc for its builtin, which reads no variable of
 * the program, and would drop the stores around it. */
static __thread volatile int counting;
static atomic_int allocations, enters, thread_exits;

void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);
void *malloc(size_t size);
void *calloc(size_t n, size_t size);
void *realloc(void *p, size_t size);

void *malloc(size_t size)
{
	if (counting)
		atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
	return __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
	if (counting)
		atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
	return __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
	if (counting)
		atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
	return __libc_realloc(p, size);
}

static void on_enter(const elt_info *info, void *state)
{
	(void)state;
	if (elt_get_function_id(info) == FIRST)
		atomic_fetch_add(&enters, 1);
}

static void on_thread_exit(void *state)
{
	(void)state;
	atomic_fetch_add(&thread_exits, 1);
}

ELT_PLUGIN_DEFINE(watcher, .enter = on_enter, .thread_exit = on_thread_exit);

static void *first_segment(void *arg)
{
	int *during = arg;

	counting = 1;
	elt_emit_enter(FIRST, NULL, NULL);
	elt_emit_leave(FIRST, NULL, NULL);
	counting = 0;
	*during = atomic_exchange(&allocations, 0);
	return NULL;
}

int main(void)
{
	pthread_key_t keys[PROGRAM_KEYS];
	pthread_t thread;
	int i, during = -1, made = 0;
	void *volatile p;       /* nor the pairs of malloc and free */

	tap_plan(5);

	/* The wrappers count, or the check below could not fail. */
	counting = 1;
	p = malloc(8);
	p = realloc(p, 4096);
	free(p);
	p = calloc(2, 8);
	free(p);
	counting = 0;
	is_int(atomic_exchange(&allocations, 0), 3, "the wrappers count malloc, realloc, calloc");

	/* As a host program does after loading the library; then the first
	 * plugin, as a profiler attaching late does. */
	for (i = 0; i < PROGRAM_KEYS; i++)
		made += pthread_key_create(&keys[i], NULL) == 0;
	is_int(made, PROGRAM_KEYS, "the program made %d keys", PROGRAM_KEYS);
	if (elt_register_function(FIRST, "First", "v()", 0) != ELT_OK ||
	    elt_plugin_add(&elt_plugin_watcher, NULL) != ELT_OK)
		tap_bail("setup: %s", elt_last_error());

	if (pthread_create(&thread, NULL, first_segment, &during) != 0)
		tap_bail("pthread_create");
	pthread_join(thread, NULL);
	is_int(atomic_load(&enters), 1, "the thread's first segment was reported");
	is_int(during, 0, "and allocated nothing (a calloc: the thread-exit key "
	       "made after the program's keys)");
	is_int(atomic_load(&thread_exits), 1, "the thread's exit was told to the plugin");

	for (i = 0; i < PROGRAM_KEYS; i++)
		pthread_key_delete(keys[i]);
	elt_shutdown();
	return tap_done();
}
#else
int main(void)
{
	tap_skip_all("counts allocations by replacing glibc's malloc: not glibc here, or a sanitizer replaces it");
}
#endif
