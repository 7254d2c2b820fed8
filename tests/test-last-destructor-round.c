/*
 * A thread whose first segment comes in glibc's last round of
 * thread-specific-data destructors: the library's key, set by that
 * segment, has been passed in that round, and glibc clears what is set in
 * the last round without calling its destructor.  So the library never
 * hears of the thread's exit, and its record stays in the list with a
 * pointer to flags that lived in the thread's TLS.  Here the thread runs
 * on a stack of the test's own, unmapped once the thread is gone (as
 * glibc unmaps a stack its cache does not keep): shutdown read those
 * flags and crashed.  "Gone" is when the kernel no longer has the thread
 * id, which is what shutdown asks; a join returns a little before that
 * (the kernel clears the joined id first), long before under qemu-user.
 */
#define ELT_PLUGIN_STATIC 1
#include "tap.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <stdatomic.h>

/* ThreadSanitizer ends a thread's state of its own in glibc's last round
 * of destructors too, before this test's code runs there: the library's
 * first lock there crashes inside TSan. */
#if defined(__SANITIZE_THREAD__)
# define UNDER_TSAN 1
#elif defined(__has_feature)
# if __has_feature(thread_sanitizer)
#  define UNDER_TSAN 1
# endif
#endif

#if defined(__linux__) && !defined(UNDER_TSAN)
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const elt_function_id WORK = 0x10;
static atomic_int entered;
static pthread_key_t late_key;
static int round_seen;
static pid_t worker_tid;

static void on_enter(const elt_info *info, void *state)
{
	(void)info;
	(void)state;
	atomic_fetch_add(&entered, 1);
}

ELT_PLUGIN_DEFINE(watcher, .enter = on_enter);

/* Runs once a round while it sets its value again; in the last round it
 * reports the thread's first segment. */
static void late_destructor(void *value)
{
	(void)value;
	if (++round_seen < PTHREAD_DESTRUCTOR_ITERATIONS) {
		pthread_setspecific(late_key, &late_key);
		return;
	}
	elt_emit_enter(WORK, NULL, NULL);
	elt_emit_leave(WORK, NULL, NULL);
}

static void *worker(void *arg)
{
	(void)arg;
	worker_tid = (pid_t)syscall(SYS_gettid);
	pthread_setspecific(late_key, &late_key);       /* no segment before exit */
	return NULL;
}

int main(void)
{
	size_t size = 1u << 20;
	pthread_attr_t attr;
	pthread_t thread;
	void *stack;
	int waited;

	tap_plan(3);
	/* the plugin first: the library's key is created with it, before
	 * late_key, so glibc runs its destructor first in each round */
	if (elt_register_function(WORK, "Work", "v()", 0) != ELT_OK ||
	    elt_plugin_add(&elt_plugin_watcher, NULL) != ELT_OK)
		tap_bail("setup: %s", elt_last_error());
	stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stack == MAP_FAILED || pthread_key_create(&late_key, late_destructor) != 0 ||
	    pthread_attr_init(&attr) != 0 || pthread_attr_setstack(&attr, stack, size) != 0 ||
	    pthread_create(&thread, &attr, worker, NULL) != 0 || pthread_join(thread, NULL) != 0)
		tap_bail("pthread");
	is_int(round_seen, PTHREAD_DESTRUCTOR_ITERATIONS,
	       "the destructor ran in every round glibc runs");
	is_int(atomic_load(&entered), 1, "its segment in the last round reached the plugin");
	for (waited = 0; syscall(SYS_tgkill, (pid_t)getpid(), worker_tid, 0) == 0; waited++) {
		if (waited == 10000)
			tap_bail("the kernel still has the thread 10 s after its join");
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	if (errno != ESRCH)
		tap_bail("tgkill: %d", errno);
	munmap(stack, size);    /* the thread's TLS with it */
	is_int(elt_shutdown(), ELT_OK, "shutdown, the thread's TLS gone");
	return tap_done();
}
#elif defined(UNDER_TSAN)
int main(void)
{
	tap_skip_all("ThreadSanitizer cannot run code in a thread's last destructor round");
	return 0;
}
#else
int main(void)
{
	tap_skip_all("glibc's rounds of thread-specific-data destructors (Linux)");
	return 0;
}
#endif
