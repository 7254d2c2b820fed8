/*
 * The library as a profiler usually gets it: dlopen()ed into a process
 * that is already running (a runtime loads its profiler that way).
 *
 * - Its initial-exec thread-local data comes from glibc's static TLS
 *   surplus, a few hundred bytes shared by every module loaded so, so its
 *   TLS segment must stay small.  tests/dlopen.test runs this program
 *   again with the surplus cut down (--surplus-cut), first checking with a
 *   module that needs more than is left that the cut took effect.
 * - The per-thread message of elt_last_error() lives outside that
 *   segment: each thread's own, a thread from before the dlopen() too,
 *   and its page given back at the thread's exit, by a thread-specific-
 *   data destructor or, for a thread that reported segments, by the
 *   library's own exit of it.
 * - dlclose() (a profiler detached and unloaded) while a thread whose exit
 *   runs the library's destructor lives on.  First, before the plugins
 *   are loaded: they depend on the library and would keep it loaded.
 *   Loaded again after its shutdown, it is the same library, shut down.
 *
 * This program is not linked with the library: it must be the dlopen()
 * that loads it.
 */
#define _GNU_SOURCE     /* dl_iterate_phdr */
#include "mapped.h"
#include "tap.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>

#define TLS_BUDGET 192          /* bytes: lib/internal.h, ELT_TLS */
#define EXITING_THREADS 200
/* The shipped plugins that keep thread-local data in their own module's
 * TLS, taken from the same surplus; their output discarded. */
#define SHIPPED_PLUGINS "counting:output=/dev/null;timing:output=/dev/null;" \
	"logging:format=binary,output=/dev/null"

static const char *(*last_error)(void);
static int (*set_error)(int status, const char *fmt, ...);
static int (*emit_enter)(uintptr_t id, void *const *args, void *continuation);
static int (*emit_leave)(uintptr_t id, const void *ret, void *continuation);

/* The size of the PT_TLS segment of the object that holds `symbol`. */
struct tls_size {
	const void *symbol;
	long size;              /* -1: not found */
};

static int find_tls(struct dl_phdr_info *object, size_t size, void *arg)
{
	struct tls_size *t = arg;
	uintptr_t at = (uintptr_t)t->symbol;
	long tls = 0;
	int mine = 0;
	int i;

	(void)size;
	for (i = 0; i < object->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &object->dlpi_phdr[i];
		uintptr_t start = object->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_TLS)
			tls = (long)ph->p_memsz;
		if (ph->p_type == PT_LOAD && at >= start && at - start < ph->p_memsz)
			mine = 1;
	}
	if (!mine)
		return 0;
	t->size = tls;
	return 1;
}

/* A new thread's first failure: `held` when its message was empty before
 * and its own after, `page` where the message is. */
struct first_failure {
	int held;
	const char *page;
	int reports;            /* it reports a segment first */
};

static void *fail_once(void *arg)
{
	static const char unregistered;  /* an id no one registered */
	struct first_failure *f = arg;

	f->held = strcmp(last_error(), "") == 0;
	if (f->reports)         /* reported (the thread now the library's), then failed */
		f->held &= emit_enter((uintptr_t)&unregistered, NULL, NULL) != 0 &&
			   emit_leave((uintptr_t)&unregistered, NULL, NULL) != 0;
	else
		set_error(2, "thread %p failed", arg);
	f->page = last_error();
	f->held &= strlen(f->page) > 0 && strcmp(f->page, "the main thread's failure") != 0;
	return NULL;
}

/* Threads that fail once and exit, one at a time: whether each one's
 * message was its own and its page unmapped, looked for right after the
 * join, before anything else can be mapped there. */
static void exiting_threads(int reports, const char *what)
{
	int all_held = 1, left_mapped = 0, no_maps = 0, i;
	pthread_t t;

	for (i = 0; i < EXITING_THREADS; i++) {
		struct first_failure f = { 0, NULL, reports };

		pthread_create(&t, NULL, fail_once, &f);
		pthread_join(t, NULL);
		all_held &= f.held;
		left_mapped += mapped((uintptr_t)f.page) == 1;
		no_maps |= mapped((uintptr_t)f.page) < 0;
	}
	if (no_maps)
		tap_skip(1, "no /proc/self/maps here");
	else if (!ok(all_held && left_mapped == 0,
		     "%d threads %s: each message its own, its page unmapped at the exit",
		     EXITING_THREADS, what))
		tap_diag("  %d pages still mapped; every message its own: %s", left_mapped,
			 all_held ? "yes" : "no");
}

/* A thread from before the dlopen(), as a runtime has them: its copy of
 * the library's thread-local data made by the loader. */
static sem_t loaded;

static void *older_thread(void *arg)
{
	sem_wait(&loaded);
	return fail_once(arg);
}

/* A thread that has a message, so its exit runs the library's destructor,
 * and lives until the library is closed. */
static pthread_mutex_t closed_lock = PTHREAD_MUTEX_INITIALIZER;
static sem_t failed;

static void *fail_and_outlive(void *arg)
{
	set_error(2, "failed before the dlclose()");
	sem_post(&failed);
	pthread_mutex_lock(&closed_lock);       /* held until then */
	pthread_mutex_unlock(&closed_lock);
	return arg;
}

/* dlclose() with such a thread alive, then its exit. */
static void *close_under_thread(void *lib)
{
	pthread_t t;

	pthread_mutex_lock(&closed_lock);
	sem_init(&failed, 0, 0);
	pthread_create(&t, NULL, fail_and_outlive, NULL);
	sem_wait(&failed);
	dlclose(lib);
	pthread_mutex_unlock(&closed_lock);
	pthread_join(t, NULL);
	return dlopen(ELT_LIBRARY_SO, RTLD_NOW | RTLD_NOLOAD);
}

#define SYMBOL(lib, name) dlsym_or_bail(lib, #name)

static void *dlsym_or_bail(void *lib, const char *name)
{
	void *p = dlsym(lib, name);

	if (!p)
		tap_bail("%s not exported: %s", name, dlerror());
	return p;
}

int main(int argc, char **argv)
{
	int surplus_cut = argc > 1 && strcmp(argv[1], "--surplus-cut") == 0;
	struct first_failure first = { 0, NULL, 0 }, before_load = { 0, NULL, 0 };
	struct tls_size tls = { NULL, -1 };
	int (*load)(const char *spec), (*shutdown)(void);
	pthread_t t, older;
	void *lib;

	tap_plan(13);
	if (!surplus_cut) {
		tap_skip(1, "the surplus is not cut: tests/dlopen.test cuts it");
	} else {
		void *hog = dlopen(ELT_TLS_HOG_SO, RTLD_NOW | RTLD_LOCAL);

		if (!ok(!hog && strstr(dlerror(), "static TLS"),
			"the cut took effect: a module with 1 KiB of initial-exec data does not load"))
			tap_bail("the surplus was not cut (GLIBC_TUNABLES ignored?)");
	}

	sem_init(&loaded, 0, 0);
	pthread_create(&older, NULL, older_thread, &before_load);
	lib = dlopen(ELT_LIBRARY_SO, RTLD_NOW | RTLD_LOCAL);
	if (!ok(lib != NULL, "dlopen(%s)", ELT_LIBRARY_SO))
		tap_bail("%s", dlerror());
	last_error = (const char *(*)(void))SYMBOL(lib, elt_last_error);
	set_error = (int (*)(int, const char *, ...))SYMBOL(lib, elt_set_error);
	emit_enter = (int (*)(uintptr_t, void *const *, void *))SYMBOL(lib, elt_emit_enter);
	emit_leave = (int (*)(uintptr_t, const void *, void *))SYMBOL(lib, elt_emit_leave);
	load = (int (*)(const char *))SYMBOL(lib, elt_plugin_load);
	shutdown = (int (*)(void))SYMBOL(lib, elt_shutdown);

	tls.symbol = (const void *)last_error;
	dl_iterate_phdr(find_tls, &tls);
	ok(tls.size >= 0 && tls.size <= TLS_BUDGET,
	   "its TLS segment, %ld bytes, is within %d", tls.size, TLS_BUDGET);

	lib = close_under_thread(lib);
	if (!ok(lib != NULL, "after dlclose() it stays loaded, and a thread with a message exited"))
		tap_bail("the library was unloaded");

	if (!ok(load(SHIPPED_PLUGINS) == 0, "the shipped plugins load from it"))
		tap_diag("  %s", last_error());

	is_str(last_error(), "", "no failure yet: the message is empty");
	set_error(2, "the main thread's failure");
	is_str(last_error(), "the main thread's failure", "a failure sets it");

	sem_post(&loaded);
	pthread_join(older, NULL);
	ok(before_load.held, "a thread from before the dlopen(): its message its own too");
	pthread_create(&t, NULL, fail_once, &first);
	pthread_join(t, NULL);
	ok(first.held && strcmp(last_error(), "the main thread's failure") == 0,
	   "another thread's message is its own, empty before its first failure");

	exiting_threads(0, "that failed once");
	exiting_threads(1, "that reported a segment, then failed");
	ok(shutdown() == 0, "it shuts down");

	/* A profiler attached again finds the same library, shut down. */
	lib = dlopen(ELT_LIBRARY_SO, RTLD_NOW | RTLD_LOCAL);
	ok(lib && load("counting:output=/dev/null") != 0 && strstr(last_error(), "shut down"),
	   "loaded again, it refuses plugins: \"%s\"", last_error());
	return tap_done();
}
