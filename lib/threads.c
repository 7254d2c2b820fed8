/*
 * The threads that report segments: each one's "inside a callback" flag,
 * so that shutdown can wait until no plugin code runs before the plugins'
 * fini frees what their callbacks use, and each one's exit, for the hook
 * of the layer above (the plugins' thread_exit).
 *
 * The hot path only stores to its own thread-local flag and then reads
 * elt_armed, or elt_plugins_state for its ELT_PLUGINS_STOPPED, with no
 * fence (elt_callback_begin, dispatch.c).  Shutdown clears elt_armed and
 * sets that bit, then makes every thread pass a memory barrier (membarrier),
 * then reads the flags: either a thread saw the stop, or shutdown sees
 * its flag and waits.
 */
#include "invocation.h"
#include "test-points.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
# include <linux/membarrier.h>
# include <sys/syscall.h>
#elif defined(_WIN32)
# include <windows.h>
#endif

ELT_TLS struct elt_thread_tls elt_thread;
static ELT_TLS struct thread_record *self;

struct thread_record {
	_Atomic unsigned *flags;        /* the thread's elt_thread.flags */
#if defined(__linux__)
	pid_t tid;                      /* for thread_gone() */
#endif
	struct thread_record *prev, *next;
	struct elt_thread_invocations invocations;
	struct elt_thread_tables tables;
	int exit_put_off;               /* thread_exiting() waited a round */
};

static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER;
static struct thread_record *threads;
static pthread_key_t exit_key;

#if defined(_WIN32)
/*
 * The exit key's value once the thread's exit has run.  MinGW's __thread
 * may be libgcc's emulated TLS (the posix thread model), kept on a key of
 * its own whose destructor frees the thread's block, in the round of this
 * exit or a later one: a segment from a later destructor then finds
 * elt_thread zeroed, as in a thread that never attached, and would attach
 * it again.  The key says otherwise: attach reads it.
 */
static char thread_exited;
#endif

/* Every signal but the faults blocked, the old mask saved, around threads_lock held
 * where this thread's flag does not keep a handler's segment away from
 * it (a thread's first segment takes it).  plugins/common/fork-signals.h
 * is the same for the plugins, which are built on the public API alone. */
#if !defined(_WIN32)
typedef sigset_t signal_mask;

static void block_signals(signal_mask *saved)
{
	sigset_t all;

	/* Not the faults: one raised while blocked kills the process without
	 * the host's crash handler (plugin code runs in the walk). */
	sigfillset(&all);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGFPE);
	sigdelset(&all, SIGILL);
	sigdelset(&all, SIGTRAP);
	pthread_sigmask(SIG_SETMASK, &all, saved);
}

static void restore_signals(const signal_mask *saved)
{
	pthread_sigmask(SIG_SETMASK, saved, NULL);
}
#else   /* no POSIX signals there */
typedef int signal_mask;

static void block_signals(signal_mask *saved) { (void)saved; }
static void restore_signals(const signal_mask *saved) { (void)saved; }
#endif

/* What a thread's exit tells the layer above (elt_threads_init). */
static void (*exit_hook)(void);

static void thread_exiting(void *value)
{
	struct thread_record *r = value;

#if defined(_WIN32)
	if (value == &thread_exited) {  /* kept through every round */
		pthread_setspecific(exit_key, &thread_exited);
		return;
	}
#else
	/* The program's destructors of this round may still report segments,
	 * which the plugins should see before their thread_exit.  Set again,
	 * the value has this called in the next round, after every
	 * destructor of this one.  Not a second time: values set in the last
	 * round are dropped, and the round is not known.  Not on Windows,
	 * whose __thread may be freed in the first round (thread_exited). */
	if (!r->exit_put_off) {
		r->exit_put_off = 1;
		if (pthread_setspecific(exit_key, r) == 0)
			return;
	}
#endif
	exit_hook();
	/* A segment this thread reports later (another key's destructor) is
	 * not reported: its plugins' thread_exit has run, and once the
	 * thread leaves the list shutdown would not wait for its callbacks.
	 * The exit hook already said so if it ran plugin code
	 * (elt_callback_end_at_exit); this covers a stopped library. */
	atomic_store_explicit(&elt_thread.flags, ELT_THREAD_UNATTACHABLE, memory_order_relaxed);
	pthread_mutex_lock(&threads_lock);
	/* Under the lock, so that statistics count the thread once. */
	elt_thread.invocations = NULL;
	elt_thread.tables = NULL;
	elt_thread.info.head.function_rows = elt_no_function_rows;
	self = NULL;    /* a fork from a later destructor: not in the child's list */
	elt_invocation_thread_exit(&r->invocations);
	elt_function_storage_release(&r->tables);
	if (r->prev)
		r->prev->next = r->next;
	else
		threads = r->next;
	if (r->next)
		r->next->prev = r->prev;
	pthread_mutex_unlock(&threads_lock);
	elt_pages_unmap(r, sizeof(*r));
	elt_error_thread_exit();        /* after the plugins' thread_exit */
#if defined(_WIN32)
	pthread_setspecific(exit_key, &thread_exited);
#endif
}

#if !defined(_WIN32)
/* fork(): the list stays whole across it, and the child keeps only the
 * thread that forked.  The others do not exist there: waiting for their
 * flags would stall its shutdown, and what they were running belongs to
 * the parent, so they are dropped with their invocation state, uncounted
 * (an invocation they suspended can still be resumed in the child), and
 * what they left half done in the continuation table is repaired.
 *
 * In between, the forking thread holds threads_lock, which its first
 * segment takes (elt_thread_attach): a signal handler reporting one there
 * would wait for itself.  Signals wait instead, blocked from before the
 * lock is taken until it is free again; fork_signals is the thread's mask,
 * under threads_lock. */
static signal_mask fork_signals;

static void before_fork(void)
{
	signal_mask signals;

	block_signals(&signals);
	pthread_mutex_lock(&threads_lock);
	fork_signals = signals;
}

static void after_fork_parent(void)
{
	signal_mask signals = fork_signals;

	pthread_mutex_unlock(&threads_lock);
	restore_signals(&signals);
}

static void after_fork_child(void)
{
	signal_mask signals = fork_signals;
	struct thread_record *r, *next;

	for (r = threads; r; r = next) {
		next = r->next;
		if (r == self)
			continue;
		elt_invocation_thread_forget(&r->invocations);
		elt_function_storage_release(&r->tables);
		elt_pages_unmap(r, sizeof(*r));
	}
	threads = self;
	if (self)
		self->prev = self->next = NULL;
	elt_invocations_after_fork_child(self ? &self->invocations : NULL);
	pthread_mutex_unlock(&threads_lock);
	restore_signals(&signals);
}
#endif

static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

static void exit_key_create(void)
{
	pthread_key_create(&exit_key, thread_exiting);
}

/*
 * At load, before the program makes keys of its own: a thread's first
 * segment sets this key's value, and may come from a signal handler that
 * interrupted malloc.  glibc keeps a thread's values of the first 32 keys
 * in the thread itself, and callocs a block at its first value for any
 * later key, which would deadlock there.  Made when the first plugin was
 * added, the key was past the 32nd in a process that had made that many.
 */
void elt_threads_load(void)
{
	pthread_once(&exit_key_once, exit_key_create);
}

void elt_threads_init(void (*on_thread_exit)(void))
{
	exit_hook = on_thread_exit;
	elt_threads_load();    /* done already, unless called before load */
#if !defined(_WIN32)
	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
#endif
}

/* Once per thread, on its first segment, before it sets its flag. */
int elt_thread_attach(void)
{
	struct thread_record *r;
	unsigned flags = 0;

	ELT_TEST_POINT(ELT_POINT_ATTACHING, 0);
	/* A segment from a signal handler that interrupts this (which holds
	 * threads_lock) finds the thread busy and is not reported.  Claimed
	 * in one step: a handler that came after the caller saw the flags 0
	 * may have attached the thread already, and a second record would
	 * stay in the list after the thread's exit, its flags pointer
	 * dangling. */
	if (!atomic_compare_exchange_strong_explicit(&elt_thread.flags, &flags,
						     ELT_THREAD_IN_CALLBACK,
						     memory_order_relaxed, memory_order_relaxed))
		return flags == ELT_THREAD_ATTACHED;
	atomic_signal_fence(memory_order_seq_cst);
#if defined(_WIN32)
	if (pthread_getspecific(exit_key) == &thread_exited) {  /* its TLS lost */
		atomic_store_explicit(&elt_thread.flags, ELT_THREAD_UNATTACHABLE,
				      memory_order_relaxed);
		return 0;
	}
#endif
	r = elt_pages_map(sizeof(*r));  /* not malloc: see pages.c */
	/* Not reported: shutdown could not wait for it. */
	if (!r || !elt_invocation_thread_init(&r->invocations)) {
		elt_pages_unmap(r, sizeof(*r));
		atomic_store_explicit(&elt_thread.flags, ELT_THREAD_UNATTACHABLE,
				      memory_order_relaxed);
		return 0;
	}
	r->flags = &elt_thread.flags;
#if defined(__linux__)
	r->tid = (pid_t)syscall(SYS_gettid);
#endif
	pthread_mutex_lock(&threads_lock);
	r->next = threads;
	if (threads)
		threads->prev = r;
	threads = r;
	pthread_mutex_unlock(&threads_lock);
	pthread_setspecific(exit_key, r);
	self = r;
	elt_thread.invocations = &r->invocations;
	elt_thread.tables = &r->tables;
	elt_thread.info.head.function_rows = r->tables.rows;
	elt_thread.info.invocation = NULL;      /* a fork child's may be the parent's */
	elt_error_thread_attached();
	atomic_store_explicit(&elt_thread.flags, ELT_THREAD_ATTACHED, memory_order_relaxed);
	return 1;
}

void elt_threads_foreach(void (*fn)(struct elt_thread_invocations *, void *), void *arg)
{
	struct thread_record *r;
	signal_mask signals;

	/* A thread's first segment takes threads_lock: from a signal handler
	 * here it would wait for itself (a thread that never reported a
	 * segment, asking for the statistics).  Signals wait instead. */
	block_signals(&signals);
	pthread_mutex_lock(&threads_lock);
	ELT_TEST_POINT(ELT_POINT_THREADS_LOCKED, 0);
	for (r = threads; r; r = r->next)
		fn(&r->invocations, arg);
	pthread_mutex_unlock(&threads_lock);
	restore_signals(&signals);
}

/* Makes every thread's earlier stores visible here, or waits long enough
 * for them to be. */
static void barrier_everywhere(void)
{
#if defined(__linux__) && defined(SYS_membarrier)
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0)
		return;
#elif defined(_WIN32)
	/* Windows' membarrier: an interrupt to every processor running a
	 * thread of this process, which flushes its store buffer. */
	FlushProcessWriteBuffers();
	return;
#endif
	/* A store buffer drains in nanoseconds, and a thread preempted in
	 * between passed a barrier in the context switch. */
	nanosleep(&(struct timespec){ 0, 20 * 1000 * 1000 }, NULL);
}

/*
 * Whether a thread in the list has exited without thread_exiting(): one
 * whose first segment came in glibc's last round of thread-specific-data
 * destructors, when that round had passed the library's key (glibc drops
 * what is set then without calling its destructor).  Its flags were in
 * its TLS, which may be unmapped with its stack.  Its kernel thread id is
 * gone once it has exited, unless a new thread took the id meanwhile.
 */
static int thread_gone(const struct thread_record *r)
{
#if defined(__linux__)
	int saved_errno = errno, gone;

	gone = syscall(SYS_tgkill, (pid_t)getpid(), r->tid, 0) != 0 && errno == ESRCH;
	errno = saved_errno;
	return gone;
#else
	(void)r;
	return 0;
#endif
}

void elt_threads_quiesce(void)
{
	struct timespec start, now;
	struct thread_record *r;

	atomic_thread_fence(memory_order_seq_cst);
	barrier_everywhere();
	clock_gettime(CLOCK_MONOTONIC, &start);
	pthread_mutex_lock(&threads_lock);
	for (r = threads; r; r = r->next) {
		if (r == self)
			continue;       /* shutdown called from a callback */
		if (thread_gone(r))
			continue;       /* not in a callback: not anywhere */
		while (atomic_load_explicit(r->flags, memory_order_acquire) &
		       ELT_THREAD_IN_CALLBACK) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec - start.tv_sec > 5) {
				elt_report("shutdown: a thread has been inside a plugin "
					   "callback for 5 s; finishing without it");
				pthread_mutex_unlock(&threads_lock);
				return;
			}
			sched_yield();
		}
	}
	pthread_mutex_unlock(&threads_lock);
}
