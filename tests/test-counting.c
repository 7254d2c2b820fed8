/*
 * The counting plugin counts every segment exactly, whichever thread runs
 * it: threads that exit before the shutdown (their function-storage rows
 * left behind), threads started after those exited (which count on in the
 * rows an exited thread left), threads still alive at the shutdown and the
 * main thread; two instances count separately; unregistered functions get
 * a row of their own.  Segments come through the producer API, so the
 * threads need no probe of their own.
 */
#define ELT_PLUGIN_STATIC 1
#include "tap.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

extern const elt_plugin elt_plugin_counting;

static const elt_function_id ASYNC_ID = 0x100, PLAIN_ID = 0x200, IDLE_ID = 0x300,
	UNREGISTERED_ID = 0x999;
#define ROUNDS 1000             /* per thread */
#define EXITING 3               /* threads that exit before the shutdown */
#define LINGERING 2             /* threads still alive at the shutdown */
#define LATER 2                 /* started once the exiting ones ended */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int counted, released;

/* Per round: Async called, suspended, resumed, returned (2 pairs);
 * Plain called, then replaced by a tail call; one unregistered pair. */
static void rounds(uintptr_t first_continuation)
{
	int r;

	for (r = 0; r < ROUNDS; r++) {
		void *k = (void *)(first_continuation + 16 * (uintptr_t)r);

		elt_emit_enter(ASYNC_ID, NULL, NULL);
		elt_emit_leave(ASYNC_ID, NULL, k);
		elt_emit_enter(ASYNC_ID, NULL, k);
		elt_emit_leave(ASYNC_ID, NULL, NULL);
		elt_emit_enter(PLAIN_ID, NULL, NULL);
		elt_emit_tailcall(PLAIN_ID, NULL);
		elt_emit_enter(UNREGISTERED_ID, NULL, NULL);
		elt_emit_leave(UNREGISTERED_ID, NULL, NULL);
	}
}

static void *worker(void *arg)
{
	uintptr_t n = (uintptr_t)arg;

	rounds(0x100000 * (n + 1));
	if (n >= EXITING) {     /* linger until after the shutdown */
		pthread_mutex_lock(&lock);
		counted++;
		pthread_cond_broadcast(&changed);
		while (!released)
			pthread_cond_wait(&changed, &lock);
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

struct report {
	char path[64];
	char text[4096];
};

static void add_counting(struct report *r)
{
	char options[128];
	int fd;

	snprintf(r->path, sizeof(r->path), "/tmp/asyncelt-counting-XXXXXX");
	fd = mkstemp(r->path);
	if (fd < 0)
		tap_bail("mkstemp failed");
	close(fd);      /* the plugin opens it by name: Windows refuses while open */
	snprintf(options, sizeof(options), "output=%s", r->path);
	if (elt_plugin_add(&elt_plugin_counting, options) != ELT_OK)
		tap_bail("counting:%s: %s", options, elt_last_error());
}

static void read_report(struct report *r)
{
	int fd = open(r->path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, r->text, sizeof(r->text) - 1);

	r->text[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
	unlink(r->path);
}

static int has_row(const struct report *r, const char *name, unsigned long calls,
		   unsigned long resumes, unsigned long suspends, unsigned long returns,
		   unsigned long tailcalls)
{
	char row[160];

	snprintf(row, sizeof(row), "\n%-24s %7lu %7lu %8lu %7lu %9lu\n", name, calls,
		 resumes, suspends, returns, tailcalls);
	return strstr(r->text, row) != NULL;
}

/* A refused spec leaves the file it names as it was: the file is opened,
 * and emptied, only once every option is known good (it was emptied,
 * then the second output refused). */
static void check_refused_keeps_file(void)
{
	char path[64], options[160];
	struct report kept;
	int fd;

	snprintf(path, sizeof(path), "/tmp/asyncelt-counting-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0 || write(fd, "keep\n", 5) != 5)
		tap_bail("mkstemp or write failed");
	close(fd);
	snprintf(options, sizeof(options), "output=%s,output=%s.2", path, path);
	is_int(elt_plugin_add(&elt_plugin_counting, options), ELT_E_BAD_OPTION,
	       "output given twice is refused");
	snprintf(options, sizeof(options), "output=%s,colour=red", path);
	is_int(elt_plugin_add(&elt_plugin_counting, options), ELT_E_BAD_OPTION,
	       "an unknown option after output is refused");
	snprintf(kept.path, sizeof(kept.path), "%s", path);
	read_report(&kept);
	is_str(kept.text, "keep\n", "the file the refused specs named is as it was");
}

/* An output name longer than the plugin keeps is refused, not cut short
 * to a name that may be another file's: here /tmp/././.../ and a last
 * part that a cut at 4095 bytes leaves shorter, but whole. */
static void check_long_name_refused(void)
{
	static char options[4400];
	const size_t value = 7, length = 4200; /* after "output=" */
	char cut[160];
	size_t at, name;
	int i;

	at = (size_t)snprintf(options, sizeof(options), "output=/tmp/");
	for (i = 0; i < 1998; i++)
		at += (size_t)snprintf(options + at, sizeof(options) - at, "./");
	name = at - value;      /* where the last part starts in the value */
	at += (size_t)snprintf(options + at, sizeof(options) - at, "asyncelt-counting-%ld-",
			       (long)getpid());
	while (at < value + length)
		options[at++] = 'x';
	options[at] = '\0';
	/* the file the value's first 4095 bytes name */
	snprintf(cut, sizeof(cut), "/tmp/%.*s", (int)(4095 - name), options + value + name);
	is_int(elt_plugin_add(&elt_plugin_counting, options), ELT_E_BAD_OPTION,
	       "a %zu-byte output name is refused: %s", length, elt_last_error());
	ok(access(cut, F_OK) != 0, "and the file its first 4095 bytes name is not made");
	unlink(cut);
}

int main(void)
{
	pthread_t threads[EXITING + LINGERING], later[LATER];
	struct report first, second;
	const unsigned long n = ROUNDS * (EXITING + LINGERING + LATER + 1);
	uintptr_t i;

	check_refused_keeps_file();
	check_long_name_refused();
	add_counting(&first);
	add_counting(&second);
	if (elt_register_function(ASYNC_ID, "Async", "v(K)", ELT_FUNCTION_ASYNC) ||
	    elt_register_function(PLAIN_ID, "Plain", NULL, 0) ||
	    elt_register_function(IDLE_ID, "Idle", NULL, 0))
		tap_bail("setup: %s", elt_last_error());

	for (i = 0; i < EXITING + LINGERING; i++)
		if (pthread_create(&threads[i], NULL, worker, (void *)i))
			tap_bail("pthread_create failed");
	for (i = 0; i < EXITING; i++)
		pthread_join(threads[i], NULL);
	for (i = 0; i < LATER; i++)     /* workers 0 and 1 again: they exit */
		if (pthread_create(&later[i], NULL, worker, (void *)i))
			tap_bail("pthread_create failed");
	for (i = 0; i < LATER; i++)
		pthread_join(later[i], NULL);
	rounds(0x10);
	pthread_mutex_lock(&lock);
	while (counted < LINGERING)
		pthread_cond_wait(&changed, &lock);
	pthread_mutex_unlock(&lock);

	is_int(elt_shutdown(), ELT_OK, "shutdown");
	pthread_mutex_lock(&lock);
	released = 1;
	pthread_cond_broadcast(&changed);
	pthread_mutex_unlock(&lock);
	for (i = EXITING; i < EXITING + LINGERING; i++)
		pthread_join(threads[i], NULL);
	read_report(&first);
	read_report(&second);

	ok(has_row(&first, "Async", n, n, n, n, 0),
	   "Async: every call, resume, suspension and return of %d threads, "
	   "exited, started later, lingering and main", EXITING + LATER + LINGERING + 1);
	ok(has_row(&first, "Plain", n, 0, 0, 0, n), "Plain: every call and tail call");
	ok(!strstr(first.text, "\nIdle "),
	   "a function that never ran has no row");
	ok(has_row(&first, "(unregistered)", n, 0, 0, n, 0), "unregistered functions: a row");
	ok(strcmp(first.text, second.text) == 0, "a second instance counts the same, apart");
	if (!has_row(&first, "Async", n, n, n, n, 0))
		tap_diag("report:\n%s", first.text);
	return tap_done();
}
