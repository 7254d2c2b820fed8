/*
 * Life cycle: starting (the layers below, then plugins, from the program
 * or the environment), shutdown at the program's request or at exit.  It
 * calls down into the plugins (plugin.c), the threads (threads.c) and the
 * invocations (invocation.c), in that order; none of them calls back up:
 * what a lower layer must tell an upper one (a thread's exit, a new
 * function) goes through a function the upper one hands it.
 */
#include "invocation.h"

#include <asyncelt/helpers.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#if defined(_WIN32)
# include <windows.h>
#endif

static _Atomic int shut_down;           /* elt_shutdown began */
static _Atomic int shutdown_finished;   /* and returned */
/* In a child forked while another thread ran elt_shutdown: no thread of
 * this process runs it, and none will finish it. */
static _Atomic int shutdown_thread_gone;
static __thread int shutting_down_here;
static pthread_once_t core_once = PTHREAD_ONCE_INIT;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static elt_status env_status;
static char env_error[512];     /* env_status's message */

unsigned elt_version_number(void)
{
	return ELT_VERSION_NUMBER;
}

const char *elt_version_string(void)
{
	return ELT_VERSION_STRING;
}

const char *elt_abi_name(void)
{
	return elt_arch_abi;
}

const unsigned char *elt_helpers_armed(void)
{
	/* Generated code reads it with a plain byte load, as the helpers
	 * do: a byte load or store is one instruction on every port, even
	 * where byte read-modify-writes are not (ATOMIC_CHAR_LOCK_FREE is 1
	 * on riscv64 and ARMv5), and the library only loads and stores it. */
	_Static_assert(sizeof(elt_armed) == 1, "the armed flag is one byte");
	return (const unsigned char *)&elt_armed;
}

elt_status elt_check_running(const char *what)
{
	if (atomic_load(&shut_down))
		return elt_set_error(ELT_E_STATE, "%s: the library has shut down", what);
	return ELT_OK;
}

/* A program that never calls elt_shutdown() still gets its reports, and a
 * failed check still fails it. */
static void at_exit(void)
{
	if (atomic_load(&shut_down)) {
		struct timespec start, now;

		/* The shutdown's reports are the parent's (runtime.md). */
		if (atomic_load(&shutdown_thread_gone))
			return;

		/* Another thread's elt_shutdown is running the plugins' fini:
		 * wait for it, or exit would cut their reports and files short.
		 * At most 5 s, as shutdown waits for a callback. */
		clock_gettime(CLOCK_MONOTONIC, &start);
		while (!shutting_down_here && !atomic_load(&shutdown_finished)) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec - start.tv_sec > 5) {
				elt_report("exit: elt_shutdown on another thread has not "
					   "finished in 5 s; exiting without it");
				break;
			}
			nanosleep(&(struct timespec){ 0, 1000 * 1000 }, NULL);
		}
		return;
	}
	if (elt_shutdown() == ELT_E_CHECK_FAILED) {
		fflush(NULL);
		_exit(3);
	}
}

#if !defined(_WIN32)
static void after_fork_child(void)
{
	/* The forking thread is the only one the child has. */
	if (atomic_load(&shut_down) && !shutting_down_here)
		atomic_store(&shutdown_thread_gone, 1);
}
#endif

#if defined(_WIN32)
/* Once loaded the library stays: the thread-specific-data destructors it
 * registers (error.c, threads.c) run at every thread's exit, after a
 * detached profiler's FreeLibrary() too.  ELF gets the same from
 * -z nodelete (Makefile.am). */
static void pin_library(void)
{
	HMODULE self;

	GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_PIN,
			   (LPCWSTR)(void *)pin_library, &self);
}
#endif

/* What is done before the program's own code runs. */
__attribute__((constructor)) static void at_load(void)
{
	/* Their thread keys, before the program makes keys of its own; the
	 * one a first segment sets first (threads.c, elt_threads_load). */
	elt_threads_load();
	elt_error_load();
#if defined(_WIN32)
	pin_library();
#endif
}

static void core_init_once(void)
{
	elt_threads_init(elt_plugins_thread_exit);
	elt_invocations_init();
	atexit(at_exit);
#if !defined(_WIN32)
	pthread_atfork(NULL, NULL, after_fork_child);
#endif
}

void elt_core_init(void)
{
	pthread_once(&core_once, core_init_once);
}

/* A plugin's first segment may come as soon as it is added: the layers it
 * goes through are ready first. */
elt_status elt_plugin_add(const elt_plugin *plugin, const char *options)
{
	int cancel = elt_cancel_disable();
	elt_status st;

	elt_core_init();
	st = elt_plugins_add(plugin, options);
	elt_cancel_restore(cancel);
	return st;
}

elt_status elt_plugin_load(const char *spec)
{
	int cancel = elt_cancel_disable();
	elt_status st;

	elt_core_init();
	st = elt_plugins_load(spec);
	elt_cancel_restore(cancel);
	return st;
}

static void env_init_once(void)
{
	const char *spec = getenv("ASYNCELT_PLUGINS");

	env_status = spec ? elt_plugin_load(spec) : ELT_OK;
	if (env_status != ELT_OK)
		snprintf(env_error, sizeof(env_error), "%s", elt_last_error());
}

elt_status elt_init(void)
{
	elt_status st = elt_check_running("elt_init");

	if (st != ELT_OK)
		return st;
	elt_core_init();
	pthread_once(&env_once, env_init_once);
	return env_status;
}

static elt_status shut_down_once(void)
{
	elt_status status;

	if (elt_plugins_busy_here())
		return elt_set_error(ELT_E_STATE, "elt_shutdown: called from a plugin's init or "
				     "function_added, which would wait for itself");
	if (atomic_exchange(&shut_down, 1))
		return elt_set_error(ELT_E_STATE, "elt_shutdown: already shut down");
	shutting_down_here = 1;         /* a fini that calls exit must not wait */
	elt_plugins_stop();
	/* fini may free what callbacks use: none may still run. */
	elt_threads_quiesce();
	status = elt_plugins_fini();
	elt_invocations_report();
	/* A plugin asked for and never run (a check among them) fails the
	 * run as surely as a failed check, for a program that asks. */
	if (status == ELT_OK && env_status != ELT_OK)
		status = elt_set_error(env_status, "$ASYNCELT_PLUGINS was not loaded whole: %s",
				       env_error);
	atomic_store(&shutdown_finished, 1);
	return status;
}

elt_status elt_shutdown(void)
{
	int cancel = elt_cancel_disable();
	elt_status status = shut_down_once();

	elt_cancel_restore(cancel);
	return status;
}
