/*
 * Signals held back while a fork handler holds a plugin's locks.  Between
 * a prepare handler and its parent or child handler the forking thread
 * holds locks that plugin callbacks take; a signal delivered there whose
 * handler runs instrumented code would call into the plugin on that thread
 * and wait for a lock it holds itself.  Each prepare handler blocks every
 * signal but the faults before it takes its first lock (into a local: the
 * handler's static copy is written under that lock) and its other
 * handlers restore the mask after they unlock, so a signal waits until
 * the fork is done (in parent and child alike) and is delivered then.  fork() runs the prepare handlers in
 * reverse order of registration and the others in order, so the masks
 * each handler saves nest.
 */
#ifndef ELT_PLUGINS_FORK_SIGNALS_H
#define ELT_PLUGINS_FORK_SIGNALS_H

#if !defined(_WIN32)
#include <pthread.h>
#include <signal.h>

typedef sigset_t fork_signal_mask;

static inline void fork_signals_block(fork_signal_mask *saved)
{
	sigset_t all;

	/* Not the faults: one raised while blocked would kill the process
	 * without the host's crash handler. */
	sigfillset(&all);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGFPE);
	sigdelset(&all, SIGILL);
	sigdelset(&all, SIGTRAP);
	pthread_sigmask(SIG_SETMASK, &all, saved);
}

static inline void fork_signals_restore(const fork_signal_mask *saved)
{
	pthread_sigmask(SIG_SETMASK, saved, NULL);
}
#else   /* no fork there: the handlers are never called */
typedef int fork_signal_mask;

static inline void fork_signals_block(fork_signal_mask *saved) { (void)saved; }
static inline void fork_signals_restore(const fork_signal_mask *saved) { (void)saved; }
#endif

#endif
