/*
 * Segments a thread reports from a thread-specific-data destructor of the
 * program's, whose key is made after the library's (which is made at
 * load, so glibc runs its destructor first in each round):
 *
 *  1. In the first round: the library's exit waits a round for it, so the
 *     segment reaches the plugin, before its thread_exit.  With the exit
 *     in the first round, the segment was dropped, as it still is on
 *     Windows, where the exit cannot wait (lib/threads.c).  There, with
 *     MinGW's posix thread model, the thread's emulated TLS is freed in
 *     the first round and comes back zeroed: the thread must not attach
 *     again.
 *  2. In a later round (the destructor set its value again): the thread's
 *     plugins' thread_exit has run and shutdown no longer waits for the
 *     thread, so no plugin callback may run for it.  Before, it reached
 *     the plugin, which could open a buffer nothing would write out, or
 *     run while shutdown freed the plugin's state.  The same destructor
 *     then forks: the child's list of threads must not take in the
 *     exited thread's record, unmapped by then (the child crashed in
 *     fork()).
 */
#define ELT_PLUGIN_STATIC 1
#include "tap.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <pthread.h>
#include <stdatomic.h>
#if !defined(_WIN32)
#include <sys/wait.h>
#include <unistd.h>
#endif

static const elt_function_id WORK = 0x10;
static _Thread_local int exited_here;
static atomic_int entered, late, destructor_rounds;
#if !defined(_WIN32)
static atomic_int child_status = -1;
#endif
static pthread_key_t late_key;
static int second_round;

static void on_enter(const elt_info *info, void *state)
{
	(void)info;
	(void)state;
	atomic_fetch_add(exited_here ? &late : &entered, 1);
}

static void on_thread_exit(void *state)
{
	(void)state;
	exited_here = 1;
}

ELT_PLUGIN_DEFINE(watcher, .enter = on_enter, .thread_exit = on_thread_exit);

static void late_destructor(void *value)
{
	elt_emit_enter(WORK, NULL, NULL);
	elt_emit_leave(WORK, NULL, NULL);
	atomic_fetch_add(&destructor_rounds, 1);
	if (value != &second_round) {
		pthread_setspecific(late_key, &second_round);
		return;
	}
#if !defined(_WIN32)
	{
		int status;
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		if (pid > 0 && waitpid(pid, &status, 0) == pid)
			atomic_store(&child_status, status);
	}
#endif
}

static void *worker(void *arg)
{
	(void)arg;
	elt_emit_enter(WORK, NULL, NULL);       /* attaches: the library's key */
	elt_emit_leave(WORK, NULL, NULL);
	pthread_setspecific(late_key, &late_key);
	return NULL;
}

int main(void)
{
	pthread_t thread;

	tap_plan(5);
	if (elt_register_function(WORK, "Work", "v()", 0) != ELT_OK ||
	    elt_plugin_add(&elt_plugin_watcher, NULL) != ELT_OK)
		tap_bail("setup: %s", elt_last_error());
	if (pthread_key_create(&late_key, late_destructor) != 0 ||
	    pthread_create(&thread, NULL, worker, NULL) != 0 || pthread_join(thread, NULL) != 0)
		tap_bail("pthread");
	is_int(atomic_load(&destructor_rounds), 2, "the later destructor reported a segment in two rounds");
#if !defined(_WIN32)
	is_int(atomic_load(&entered), 2, "the first round's reached the plugin, before its thread_exit");
	is_int(atomic_load(&late), 0, "the second round's did not: no callback after thread_exit");
#else
	is_int(atomic_load(&entered), 1, "the first round's did not reach the plugin (the exit "
	       "ran first, and cannot wait a round on Windows)");
	is_int(atomic_load(&late), 0, "nor did the second round's: no callback after thread_exit");
#endif
#if !defined(_WIN32)
	is_int(atomic_load(&child_status), 0, "a fork from there: the child exits with 0");
#else
	tap_skip(1, "no fork on Windows");
#endif
	is_int(elt_shutdown(), ELT_OK, "shutdown");
	return tap_done();
}
