/*
 * fork() while another thread is inside a plugin callback: the child has
 * no such thread, so its shutdown must not wait for it, and the other
 * thread's in-flight invocation is not the child's.  And fork() while
 * another thread holds a plugin's lock (plugins/common/fork-lock.h, which
 * the shipped plugins' locks are): the fork waits, the child gets it free.
 * And a signal whose handler reports a segment, delivered on the forking
 * thread while the fork's handlers hold the library's and the plugins'
 * locks: it waits until they let go, instead of waiting for itself.
 */
#define ELT_PLUGIN_STATIC 1
#include "tap.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>
#include "../plugins/common/fork-lock.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const elt_function_id WORK = 0x10, BLOCKING = 0x20, SIGNALED = 0x30, PENDING = 0x40;
static char pending[3];         /* continuations: suspended by blocked_thread */
static atomic_int inside, release;

/* Enter of BLOCKING holds its thread inside the callback until released. */
static void enter_cb(const elt_info *info, void *state)
{
	(void)state;
	if (elt_get_function(info) && elt_get_function(info)->id == BLOCKING) {
		atomic_store(&inside, 1);
		while (!atomic_load(&release))
			sched_yield();
	}
}

ELT_PLUGIN_DEFINE(blocker, .enter = enter_cb);

static void *blocked_thread(void *arg)
{
	size_t i;

	(void)arg;
	for (i = 0; i < sizeof(pending); i++) {
		elt_emit_enter(PENDING, NULL, NULL);
		elt_emit_leave(PENDING, NULL, &pending[i]);
	}
	elt_emit_enter(BLOCKING, NULL, NULL);
	elt_emit_leave(BLOCKING, NULL, NULL);
	return NULL;
}

static struct fork_lock plugin_lock;
static atomic_int holding, forked;

/* A plugin's slow step on another thread, holding its lock for 100 ms.
 * The thread then lives on until the fork is done: a thread that ended
 * unjoined before a fork is a leak to ThreadSanitizer in the child. */
static void *lock_holder(void *arg)
{
	(void)arg;
	fork_lock(&plugin_lock);
	atomic_store(&holding, 1);
	usleep(100 * 1000);
	fork_unlock(&plugin_lock);
	while (!atomic_load(&forked))
		sched_yield();
	return NULL;
}

static void fork_with_a_lock_held(void)
{
	pthread_t holder;
	pid_t pid;
	int status = -1;

	fork_lock_init(&plugin_lock);
	pthread_create(&holder, NULL, lock_holder, NULL);
	while (!atomic_load(&holding))
		sched_yield();
	pid = fork();           /* waits until the holder lets go */
	if (pid == 0)
		_exit(pthread_mutex_trylock(&plugin_lock.mutex) == 0 ? 0 : 1);
	atomic_store(&forked, 1);
	ok(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	   WEXITSTATUS(status) == 0,
	   "fork() with a plugin's lock held on another thread: the child has it free");
	pthread_join(holder, NULL);
	fork_lock_destroy(&plugin_lock);
}

/* --- a signal during the fork's handlers ---------------------------------- */

static struct fork_lock signal_lock;
static atomic_int noted, locked;
static volatile sig_atomic_t raise_in_prepare, handled;

static int is_signaled(const elt_info *info)
{
	return elt_get_function(info) && elt_get_function(info)->id == SIGNALED;
}

static void noting_enter(const elt_info *info, void *state)
{
	(void)state;
	if (is_signaled(info))
		atomic_fetch_add(&noted, 1);
}

/* Like every shipped plugin's callback that takes a lock. */
static void locking_enter(const elt_info *info, void *state)
{
	(void)state;
	if (is_signaled(info)) {
		fork_lock(&signal_lock);
		atomic_fetch_add(&locked, 1);
		fork_unlock(&signal_lock);
	}
}

ELT_PLUGIN_DEFINE(noter, .enter = noting_enter);
ELT_PLUGIN_DEFINE(locker, .enter = locking_enter);

static void instrumented_handler(int sig)
{
	(void)sig;
	elt_emit_enter(SIGNALED, NULL, NULL);
	elt_emit_leave(SIGNALED, NULL, NULL);
	handled++;
}

/* Registered before every other fork handler, so it runs after their
 * prepare handlers, with their locks held. */
static void raise_while_locked(void)
{
	if (raise_in_prepare)
		raise(SIGUSR1);
}

/* From a thread that never reported a segment: its first one, in the
 * handler, also registers the thread (lib/threads.c's lock). */
static void *forking_thread(void *arg)
{
	pid_t pid;
	int status = -1;

	(void)arg;
	raise_in_prepare = 1;
	pid = fork();
	if (pid == 0)
		_exit(0);
	raise_in_prepare = 0;
	ok(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	   WEXITSTATUS(status) == 0, "fork() with a signal raised in its handlers returns");
	return NULL;
}

/* A fork whose prepare handlers raise a signal on the forking thread, the
 * handler reporting a segment: it waits until the fork is done. */
static void fork_with_a_signal_in_its_handlers(const char *whose)
{
	int handled_before = handled, noted_before = atomic_load(&noted);
	pthread_t thread;

	tap_diag("%s", whose);
	alarm(20);      /* a fork that waits for itself ends the test here */
	pthread_create(&thread, NULL, forking_thread, NULL);
	pthread_join(thread, NULL);
	alarm(0);
	is_int(handled - handled_before, 1, "... and the signal is handled in the parent, once");
	is_int(atomic_load(&noted) - noted_before, 1, "... its segment reaching the plugins");
}

static double seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(void)
{
	pthread_t t;
	pid_t pid;
	int status;

	pthread_atfork(raise_while_locked, NULL, NULL);
	if (elt_register_function(SIGNALED, "Signaled", "v()", 0) != ELT_OK ||
	    elt_register_function(WORK, "Work", "v()", 0) != ELT_OK ||
	    elt_register_function(BLOCKING, "Blocking", "v()", 0) != ELT_OK ||
	    elt_register_function(PENDING, "Pending", "v(K)", ELT_FUNCTION_ASYNC) != ELT_OK ||
	    elt_plugin_add(&elt_plugin_blocker, NULL) != ELT_OK)
		tap_bail("setup: %s", elt_last_error());
	pthread_create(&t, NULL, blocked_thread, NULL);
	while (!atomic_load(&inside))
		sched_yield();

	pid = fork();
	if (pid == 0) {
		/* The child: one thread, which never was inside a callback. */
		elt_invocation_stats stats;
		double start;

		size_t i;

		elt_emit_enter(WORK, NULL, NULL);
		elt_emit_leave(WORK, NULL, NULL);
		/* what the other thread suspended resumes here, and ends */
		for (i = 0; i < sizeof(pending); i++) {
			elt_emit_enter(PENDING, NULL, &pending[i]);
			elt_emit_leave(PENDING, NULL, NULL);
		}
		elt_get_invocation_stats(&stats);
		start = seconds();
		elt_shutdown();
		/* 0: quick and clean; 1: waited; 2: counted the other thread's
		 * invocation as its own; 3: completed what it never started */
		_exit(seconds() - start > 1.0 ? 1 : stats.live != 0 ? 2
		      : stats.started != 4 || stats.completed != 4 ? 3 : 0);
	}
	ok(pid > 0, "fork");
	ok(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) != 1,
	   "the child's shutdown does not wait for a thread it does not have");
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "the child does not count the parent thread's running invocation as live, "
	   "and counts the 3 it suspended, which the child completes (status %d)",
	   WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	atomic_store(&release, 1);
	pthread_join(t, NULL);
	if (elt_plugin_add(&elt_plugin_noter, NULL) != ELT_OK ||
	    signal(SIGUSR1, instrumented_handler) == SIG_ERR)
		tap_bail("setup: %s", elt_last_error());
	/* First with only the library's fork handlers, then with a plugin's
	 * locks (plugins/common/fork-lock.h) too. */
	fork_with_a_signal_in_its_handlers("the thread list locked (lib/threads.c)");
	fork_with_a_lock_held();
	fork_lock_init(&signal_lock);
	if (elt_plugin_add(&elt_plugin_locker, NULL) != ELT_OK)
		tap_bail("setup: %s", elt_last_error());
	fork_with_a_signal_in_its_handlers("a plugin's locks too (fork-lock.h)");
	is_int(atomic_load(&locked), 1, "... the plugin taking its lock after the fork");
	fork_lock_destroy(&signal_lock);
	is_int(elt_shutdown(), ELT_OK, "the parent shuts down as usual");
	return tap_done();
}
