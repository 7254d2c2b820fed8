/*
 * The library as a profiler usually gets it: dlopen()ed into a process
 * that is already running (a runtime loads its profiler that way).  Its
 * initial-exec thread-local data then comes from glibc's static TLS
 * surplus, a few hundred bytes shared by every module loaded so, so its
 * TLS segment must stay small; tests/dlopen.test runs this again with the
 * surplus cut down.  And the per-thread message of elt_last_error(), which
 * lives outside that segment, is each thread's own (a thread from before
 * the dlopen() too) and given back at the thread's exit.  Last, dlclose()
 * (a profiler detached and unloaded) while a thread whose exit runs the
 * library's destructors lives on.
 *
 * This program is not linked with the library: it must be the dlopen()
 * that loads it.
 */
#define _GNU_SOURCE     /* dl_iterate_phdr */
#include "tap.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>

#define TLS_BUDGET 256          /* bytes: lib/internal.h, ELT_TLS */
#define EXITING_THREADS 200

/* Every shipped plugin that keeps thread-local data (their own module's
 * TLS, from the same surplus), their output discarded. */
#define SHIPPED_PLUGINS "counting:output=/dev/null;timing:output=/dev/null;" \
	"logging:format=binary,output=/dev/null"

static const char *(*last_error)(void);
static int (*set_error)(int status, const char *fmt, ...);

struct tls_size {
	const void *symbol;     /* in the library */
	long size;              /* its PT_TLS p_memsz; -1 not found */
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

/* A new thread's message: empty before its first failure, then its own.
 * `held` is set when both hold, `page` to where the message is. */
struct first_failure {
	int held;
	const char *page;
};

static void *fail_once(void *arg)
{
	struct first_failure *f = arg;

	f->held = strcmp(last_error(), "") == 0;
	set_error(2, "thread %p failed", arg);
	f->page = last_error();
	f->held &= strstr(f->page, " failed") != NULL;
	return NULL;
}

/* A thread of the process from before the dlopen(), as a runtime has
 * them: its copy of the library's thread-local data made by the loader.
 * It runs fail_once when told to. */
static sem_t loaded;

static void *older_thread(void *arg)
{
	sem_wait(&loaded);
	return fail_once(arg);
}

/* A thread with a message, whose exit runs the library's destructor for
 * it: it fails, then waits for the library to be closed. */
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

/* Whether `p` is in one of this process's mappings (Linux; qemu-user
 * lists the guest's own): 1, 0, or -1 when there is no /proc/self/maps. */
static int mapped(const void *p)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long long start, end, at = (uintptr_t)p;
	char line[512];
	int found = 0;

	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%llx-%llx", &start, &end) == 2 && at >= start && at < end;
	fclose(f);
	return found;
}

int main(void)
{
	struct tls_size tls = { NULL, -1 };
	pthread_t t, older;
	struct first_failure first = { 0, NULL }, before_load = { 0, NULL };
	int all_held = 1, left_mapped = 0, no_maps = 0, i;
	int (*load)(const char *spec), (*shutdown)(void);
	void *lib;

	tap_plan(9);
	sem_init(&loaded, 0, 0);
	pthread_create(&older, NULL, older_thread, &before_load);
	lib = dlopen(ELT_LIBRARY_SO, RTLD_NOW | RTLD_LOCAL);
	if (!ok(lib != NULL, "dlopen(%s)", ELT_LIBRARY_SO))
		tap_bail("%s", dlerror());
	last_error = (const char *(*)(void))dlsym(lib, "elt_last_error");
	set_error = (int (*)(int, const char *, ...))dlsym(lib, "elt_set_error");
	if (!last_error || !set_error)
		tap_bail("elt_last_error or elt_set_error not exported: %s", dlerror());

	tls.symbol = (const void *)last_error;
	dl_iterate_phdr(find_tls, &tls);
	ok(tls.size >= 0 && tls.size <= TLS_BUDGET,
	   "its TLS segment, %ld bytes, is within %d", tls.size, TLS_BUDGET);

	/* The shipped plugins, loaded by the library with dlopen() in turn,
	 * take their initial-exec data from the same surplus. */
	load = (int (*)(const char *))dlsym(lib, "elt_plugin_load");
	shutdown = (int (*)(void))dlsym(lib, "elt_shutdown");
	if (!load || !shutdown)
		tap_bail("elt_plugin_load or elt_shutdown not exported: %s", dlerror());
	if (!ok(load(SHIPPED_PLUGINS) == 0 && shutdown() == 0,
		"the shipped plugins load from it, and it shuts down"))
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

	/* Each exiting thread's message page given back: looked for right
	 * after the join, before anything else can be mapped there. */
	for (i = 0; i < EXITING_THREADS; i++) {
		struct first_failure f = { 0, NULL };

		pthread_create(&t, NULL, fail_once, &f);
		pthread_join(t, NULL);
		all_held &= f.held;
		left_mapped += mapped(f.page) == 1;
		no_maps |= mapped(f.page) < 0;
	}
	if (no_maps)
		tap_skip(1, "no /proc/self/maps here");
	else if (!ok(all_held && left_mapped == 0,
		     "%d threads that failed once and exited: their message pages unmapped",
		     EXITING_THREADS))
		tap_diag("  %d of them still mapped; every message its own: %s", left_mapped,
			 all_held ? "yes" : "no");

	/* The library's thread-specific-data destructors must still be
	 * there when the thread exits: dlclose() leaves it loaded. */
	pthread_mutex_lock(&closed_lock);
	sem_init(&failed, 0, 0);
	pthread_create(&t, NULL, fail_and_outlive, NULL);
	sem_wait(&failed);
	dlclose(lib);
	pthread_mutex_unlock(&closed_lock);
	pthread_join(t, NULL);
	ok(dlopen(ELT_LIBRARY_SO, RTLD_NOW | RTLD_NOLOAD) != NULL,
	   "after dlclose() it stays loaded, and a thread with a message exited");
	return tap_done();
}
