/*
 * A mutex that fork() never copies held.  A plugin's lock taken on a rare
 * slow step may be held by another thread at the moment some thread of the
 * program forks; the child has only the forking thread, so it would wait
 * for that lock forever.  Here fork() waits instead: its prepare handler
 * takes every fork_lock of the plugin (newest first) and both sides
 * release them after, signals held back in between (fork-signals.h).
 * A plugin must not hold one fork_lock while taking another, or take a
 * fork_lock while holding the lock of another mechanism that forks wait
 * for (tbuf's): the prepare handler would deadlock.  Header-only: each plugin is one file, with its own list.
 */
#ifndef ELT_PLUGINS_FORK_LOCK_H
#define ELT_PLUGINS_FORK_LOCK_H

#include <pthread.h>

#include "fork-signals.h"

struct fork_lock {
	pthread_mutex_t mutex;
	struct fork_lock *next;         /* the plugin's others, newest first */
};

static pthread_mutex_t fork_locks_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fork_lock *fork_locks;

static inline void fork_lock(struct fork_lock *l)
{
	pthread_mutex_lock(&l->mutex);
}

static inline void fork_unlock(struct fork_lock *l)
{
	pthread_mutex_unlock(&l->mutex);
}

#if !defined(_WIN32)            /* no fork there */
static fork_signal_mask fork_locks_signals;     /* the forking thread's; fork_locks_lock */

static void fork_locks_prepare(void)
{
	fork_signal_mask signals;
	struct fork_lock *l;

	fork_signals_block(&signals);
	pthread_mutex_lock(&fork_locks_lock);
	fork_locks_signals = signals;
	for (l = fork_locks; l; l = l->next)
		pthread_mutex_lock(&l->mutex);
}

/* Parent and child alike: the child's one thread is the one that locked. */
static void fork_locks_release(void)
{
	fork_signal_mask signals = fork_locks_signals;
	struct fork_lock *l;

	for (l = fork_locks; l; l = l->next)
		pthread_mutex_unlock(&l->mutex);
	pthread_mutex_unlock(&fork_locks_lock);
	fork_signals_restore(&signals);
}

static void fork_locks_register(void)
{
	pthread_atfork(fork_locks_prepare, fork_locks_release, fork_locks_release);
}
#endif

static inline void fork_lock_init(struct fork_lock *l)
{
#if !defined(_WIN32)
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, fork_locks_register);
#endif
	pthread_mutex_init(&l->mutex, NULL);
	pthread_mutex_lock(&fork_locks_lock);
	l->next = fork_locks;
	fork_locks = l;
	pthread_mutex_unlock(&fork_locks_lock);
}

static inline void fork_lock_destroy(struct fork_lock *l)
{
	struct fork_lock **link;

	pthread_mutex_lock(&fork_locks_lock);
	for (link = &fork_locks; *link; link = &(*link)->next)
		if (*link == l) {
			*link = l->next;
			break;
		}
	pthread_mutex_unlock(&fork_locks_lock);
	pthread_mutex_destroy(&l->mutex);
}

#endif
