/*
 * A signal whose handler reports a segment, delivered where a thread that
 * never reported one is registering itself or holding the thread list:
 * linked with the library built with its test points live
 * (lib/test-points.h), so that the signal comes at that exact moment.
 *
 *  1. Between a thread's first segment seeing its flags 0 and claiming
 *     them: the handler's segment registers the thread, and the
 *     interrupted one must then find it registered, not register it a
 *     second time.  A second record stayed in the thread list after the
 *     thread's exit, pointing at its thread-local flags; the thread here
 *     runs on a stack of the test's own, made unreadable after the join
 *     (not unmapped: a later thread's stack could take its place), so that
 *     shutdown reading them there crashes instead of reading stale bytes.
 *  2. While elt_get_invocation_stats() holds the thread list, on a thread
 *     that never reported a segment: the handler's first segment would
 *     wait for that lock, held by its own thread.  The signal must wait
 *     for the walk instead, and be handled after it.
 */
#define ELT_PLUGIN_STATIC 1
#include "tap.h"
#include "../lib/test-points.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <unistd.h>

static const elt_function_id WORK = 0x10, IN_HANDLER = 0x20;
static atomic_int enters, handler_enters, handled;
static _Atomic enum elt_test_point signal_at = -1;
static _Atomic int signals_to_raise;
static _Atomic int handled_at_point = -1;      /* right after the raise */

static void on_enter(const elt_info *info, void *state)
{
	(void)state;
	atomic_fetch_add(elt_get_function_id(info) == IN_HANDLER ? &handler_enters : &enters, 1);
}

ELT_PLUGIN_DEFINE(watcher, .enter = on_enter);

static void handler(int sig)
{
	(void)sig;
	elt_emit_enter(IN_HANDLER, NULL, NULL);
	elt_emit_leave(IN_HANDLER, NULL, NULL);
	atomic_fetch_add(&handled, 1);
}

/* Raises the signal once, at the planned point, on the thread there. */
static void hook(enum elt_test_point point, uintptr_t continuation)
{
	(void)continuation;
	if (point == atomic_load(&signal_at) && atomic_fetch_sub(&signals_to_raise, 1) == 1) {
		raise(SIGUSR1);
		atomic_store(&handled_at_point, atomic_load(&handled));
	}
}

static void *first_segment(void *arg)
{
	(void)arg;
	elt_emit_enter(WORK, NULL, NULL);
	elt_emit_leave(WORK, NULL, NULL);
	return NULL;
}

static void *ask_statistics(void *arg)
{
	elt_invocation_stats stats;

	(void)arg;
	elt_get_invocation_stats(&stats);
	return NULL;
}

int main(void)
{
	enum { STACK = 1 << 20 };
	pthread_attr_t attr;
	pthread_t thread;
	void *stack;

	tap_plan(7);
	alarm(60);      /* a deadlock ends the test instead of stalling it */
	signal(SIGUSR1, handler);
	elt_test_hook = hook;
	if (elt_register_function(WORK, "Work", "v()", 0) != ELT_OK ||
	    elt_register_function(IN_HANDLER, "InHandler", "v()", 0) != ELT_OK ||
	    elt_plugin_add(&elt_plugin_watcher, NULL) != ELT_OK)
		tap_bail("setup: %s", elt_last_error());

	/* 1 */
	stack = mmap(NULL, STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stack == MAP_FAILED || pthread_attr_init(&attr) ||
	    pthread_attr_setstack(&attr, stack, STACK))
		tap_bail("a stack of the test's own");
	atomic_store(&signals_to_raise, 1);
	atomic_store(&signal_at, ELT_POINT_ATTACHING);
	if (pthread_create(&thread, &attr, first_segment, NULL) || pthread_join(thread, NULL))
		tap_bail("pthread");
	atomic_store(&signal_at, -1);
	if (mprotect(stack, STACK, PROT_NONE))
		tap_bail("mprotect");
	is_int(atomic_load(&handled_at_point), 1, "1: the signal came in the thread's first segment");
	is_int(atomic_load(&handler_enters), 1, "1: the handler's segment was reported");
	is_int(atomic_load(&enters), 1, "1: and so was the one it interrupted");

	/* 2 */
	atomic_store(&handled, 0);
	atomic_store(&signals_to_raise, 1);
	atomic_store(&signal_at, ELT_POINT_THREADS_LOCKED);
	if (pthread_create(&thread, NULL, ask_statistics, NULL) ||
	    pthread_join(thread, NULL))
		tap_bail("pthread");
	atomic_store(&signal_at, -1);
	is_int(atomic_load(&handled_at_point), 0, "2: the signal waited while the thread list was held");
	is_int(atomic_load(&handled), 1, "2: and was handled after the walk");
	is_int(atomic_load(&handler_enters), 2, "2: its segment reported");

	/* 1's second record, if any, is read here */
	is_int(elt_shutdown(), ELT_OK, "shutdown");
	return tap_done();
}
