/*
 * A mutex that knows its holder, for the library's rare steps (a function
 * registered, a plugin added) and for what fork() leaves of them.  The
 * child of fork() has only the thread that forked: a lock another thread
 * held at that moment stays held there, and the child's next
 * registration would wait for it forever.  elt_owned_mutex_reset(), from
 * a pthread_atfork child handler, makes such a lock anew and says so, so
 * that the caller can finish or undo the step its holder left half done.
 * A lock that the forking thread holds itself (a plugin's init that
 * forks) stays as it is: its holder carries on in the child.
 */
#ifndef ELT_OWNED_MUTEX_H
#define ELT_OWNED_MUTEX_H

#include "internal.h"

#include <pthread.h>
#include <stdatomic.h>

struct elt_owned_mutex {
	pthread_mutex_t mutex;
	const void *_Atomic owner;      /* while held: the holder's elt_thread */
	_Atomic int held;               /* set after `owner`, cleared before
	                                   the unlock */
};
#define ELT_OWNED_MUTEX_INITIALIZER { .mutex = PTHREAD_MUTEX_INITIALIZER }

/* A thread's own address for the holder: its TLS block (internal.h),
 * unique among the live threads, and the same in a fork child. */
static inline const void *elt_owned_self(void)
{
	return &elt_thread;
}

static inline void elt_owned_lock(struct elt_owned_mutex *m)
{
	pthread_mutex_lock(&m->mutex);
	atomic_store_explicit(&m->owner, elt_owned_self(), memory_order_relaxed);
	atomic_store_explicit(&m->held, 1, memory_order_release);
}

/* Whether this thread holds it: a step that would lock it again (a
 * plugin's init adding a plugin) must refuse rather than wait for itself.
 * `held` is set after `owner`, so it never vouches for an owner another
 * holder has not yet overwritten. */
static inline int elt_owned_held_here(struct elt_owned_mutex *m)
{
	return atomic_load_explicit(&m->held, memory_order_acquire) &&
	       atomic_load_explicit(&m->owner, memory_order_relaxed) == elt_owned_self();
}

static inline void elt_owned_unlock(struct elt_owned_mutex *m)
{
	atomic_store_explicit(&m->held, 0, memory_order_relaxed);
	pthread_mutex_unlock(&m->mutex);
}

/* In a fork child only: 1 when another thread held it, 0 when it was free
 * or the forking thread holds it.  Free afterwards in the first case. */
static inline int elt_owned_mutex_reset(struct elt_owned_mutex *m)
{
	if (pthread_mutex_trylock(&m->mutex) == 0) {
		pthread_mutex_unlock(&m->mutex);
		return 0;
	}
	/* Held: by this thread only if it got as far as saying so, since it
	 * could not fork in between. */
	if (elt_owned_held_here(m))
		return 0;
	pthread_mutex_init(&m->mutex, NULL);
	atomic_store_explicit(&m->held, 0, memory_order_relaxed);
	return 1;
}

#endif
