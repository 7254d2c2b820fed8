/*
 * pthread_cancel() of an instrumented thread, inside and outside plugin
 * code (doc/runtime.md).
 *
 * A thread cancelled at a cancellation point inside a callback unwinds
 * through the plugin, the dispatcher and the helper (their unwind tables)
 * and exits like any cancelled thread: its plugins' thread_exit runs, and
 * shutdown does not wait for it.
 *
 * A logging thread whose buffer goes out to a full pipe blocks in
 * write(2) inside its callback, a cancellation point.  Cancelled there
 * after part of the buffer went out, the thread would lose the count of
 * what was written, and its exit would write the whole buffer again: the
 * log would hold a stretch twice.  The plugins' writes are no cancellation
 * points, so the thread is cancelled at its own next one, and the log
 * holds every pair it completed, once.
 *
 * A thread cancelled in a plugin's init, function_added or fini, or in
 * what it gave elt_foreach_live_invocation(), at a read(2): the library
 * holds its locks there.  Those calls are no cancellation points, so each
 * finishes, and the locks are free for the next one.
 */
#define _GNU_SOURCE 1
#define ELT_PLUGIN_STATIC 1
#include "tap.h"
#include "probes.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

void probe_lean_pair(void);

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* --- a plugin that blocks in a cancellation point, on one thread -------- */

static __thread int block_here;
static atomic_int blocked, thread_exits_of_blocked;

static void block_cb(const elt_info *info, void *state)
{
	(void)info;
	(void)state;
	if (!block_here)
		return;
	atomic_store(&blocked, 1);
	for (;;) {
#if defined(__SANITIZE_THREAD__)
		/* ThreadSanitizer loses the locks a thread takes in its exit
		 * destructors after a cancellation acted inside a blocking
		 * call it intercepts (pause), and then reports the library's
		 * accesses under them as races: cancelled outside one here. */
		pthread_testcancel();
		sched_yield();
#else
		pause();        /* a cancellation point, blocked in the kernel */
#endif
	}
}

static void block_thread_exit(void *state)
{
	(void)state;
	if (block_here)
		atomic_fetch_add(&thread_exits_of_blocked, 1);
}
ELT_PLUGIN_DEFINE(blocker, .enter = block_cb, .thread_exit = block_thread_exit,
		  .flags = ELT_PLUGIN_NO_INVOCATIONS);

static void *blocked_thread(void *arg)
{
	(void)arg;
	block_here = 1;
	probe_lean_pair();
	return NULL;            /* never: cancelled in its Enter */
}

/* --- a plugin whose init, function_added and fini wait at a gate -------- */

static int gate[2];                     /* a pipe: a byte opens it once */
static const char *_Atomic at_gate;     /* where a thread waits at it */
static atomic_int fini_waits, fini_done;

static void wait_at_gate(const char *where)
{
	char byte;

	atomic_store(&at_gate, where);
	while (read(gate[0], &byte, 1) < 0 && errno == EINTR)   /* a cancellation point */
		;
	atomic_store(&at_gate, NULL);
	/* Another, which acts at once where signals held the read's back. */
	pthread_testcancel();
}

static elt_status gated_init(const char *options, void **state)
{
	(void)options;
	*state = NULL;
	wait_at_gate("init");
	return ELT_OK;
}

static void *gated_function_added(void *state, const elt_function_desc *fn)
{
	(void)state;
	if (strcmp(fn->name, "gated") == 0)
		wait_at_gate("function_added");
	return NULL;
}

static elt_status gated_fini(void *state)
{
	(void)state;
	if (atomic_load(&fini_waits))
		wait_at_gate("fini");
	atomic_store(&fini_done, 1);
	return ELT_OK;
}
static void gated_live(const elt_invocation *inv, const elt_function_desc *fn, void *slot,
		       void *arg)
{
	(void)inv;
	(void)fn;
	(void)slot;
	(void)arg;
	wait_at_gate("live invocation");
}

ELT_PLUGIN_DEFINE(gated, .init = gated_init, .function_added = gated_function_added,
		  .fini = gated_fini, .flags = ELT_PLUGIN_NO_INVOCATIONS);
ELT_PLUGIN_DEFINE(plain, .flags = ELT_PLUGIN_NO_INVOCATIONS);

enum call { ADD, REGISTER, LIST_LIVE, SHUTDOWN };
static elt_status call_status;

static void *calling_thread(void *arg)
{
	switch ((enum call)(intptr_t)arg) {
	case ADD:
		call_status = elt_plugin_add(&elt_plugin_gated, NULL);
		break;
	case REGISTER:
		call_status = elt_register_function(0x6a7ed, "gated", NULL, 0);
		break;
	case LIST_LIVE:
		elt_foreach_live_invocation(&elt_plugin_gated, gated_live, NULL);
		call_status = ELT_OK;
		break;
	case SHUTDOWN:
		call_status = elt_shutdown();
		break;
	}
	pthread_testcancel();
	return NULL;
}

/* Starts a thread making `call`, cancels it while a plugin has it wait at
 * the gate `where`, then opens the gate: 1 if the call finished (with
 * ELT_OK) and the thread ended cancelled after it. */
static int cancelled_at_gate(enum call call, const char *where)
{
	pthread_t t;
	void *ret;
	char byte = 0;

	call_status = ELT_E_STATE;
	if (pthread_create(&t, NULL, calling_thread, (void *)(intptr_t)call) != 0)
		tap_bail("pthread_create");
	while (atomic_load(&at_gate) != where)
		sleep_ms(1);
	sleep_ms(50);           /* inside read(2) */
	pthread_cancel(t);
	sleep_ms(50);
	if (write(gate[1], &byte, 1) != 1)
		tap_bail("write: %s", strerror(errno));
	return pthread_join(t, &ret) == 0 && ret == PTHREAD_CANCELED && call_status == ELT_OK;
}

/* --- a logging thread whose output is a pipe ----------------------------- */

static atomic_ulong pairs_done;

static void *logging_thread(void *arg)
{
	(void)arg;
	for (;;) {
		probe_lean_pair();
		atomic_fetch_add(&pairs_done, 1);
		pthread_testcancel();   /* its only cancellation point of its own */
	}
	return NULL;
}

#define PIPE_SIZE 65536

static int pipe_bytes(int fd)
{
	int n = 0;

	return ioctl(fd, FIONREAD, &n) == 0 ? n : -1;
}

/* Waits until the pipe holds at least `at_least` bytes and no more came
 * for 300 ms (its writer is blocked, or stopped): the bytes in it, or -1
 * after 30 s. */
static int pipe_settled(int fd, int at_least)
{
	int last = -1, same = 0, n, i;

	for (i = 0; i < 300; i++) {
		sleep_ms(100);
		n = pipe_bytes(fd);
		same = n == last ? same + 1 : 0;
		last = n;
		if (n >= at_least && same >= 3)
			return n;
	}
	return -1;
}

struct drain {
	int fd;
	char *data;
	size_t len, cap;
};

static void *drain_pipe(void *arg)
{
	struct drain *d = arg;
	ssize_t n;

	for (;;) {
		if (d->cap - d->len < 65536) {
			char *more = realloc(d->data, d->cap * 2);

			if (!more)
				tap_bail("out of memory");
			d->data = more;
			d->cap *= 2;
		}
		n = read(d->fd, d->data + d->len, d->cap - d->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return NULL;
		d->len += (size_t)n;
	}
}

/* The log's lines, each "... kind=call invocation=N ..." or the return of
 * the same N, calls in increasing N: the number of whole pairs, or -1
 * (with a diagnostic) at the first line out of order or not whole. */
static long pairs_in_log(char *log, size_t len)
{
	unsigned long long last = 0, n;
	long pairs = 0;
	size_t at = 0;
	int in_call = 0;

	while (at < len) {
		char *line = log + at, *end = memchr(line, '\n', len - at), *kind, *inv;

		if (!end) {
			tap_diag("the log ends in half a line");
			return -1;
		}
		*end = '\0';
		at = (size_t)(end - log) + 1;
		kind = strstr(line, " kind=");
		inv = strstr(line, " invocation=");
		if (!kind || !inv || sscanf(inv, " invocation=%llu", &n) != 1) {
			tap_diag("not a whole line: %.120s", line);
			return -1;
		}
		if (!in_call && strncmp(kind, " kind=call ", 11) == 0 && n > last) {
			in_call = 1;
			last = n;
		} else if (in_call && strncmp(kind, " kind=return ", 13) == 0 && n == last) {
			in_call = 0;
			pairs++;
		} else {
			tap_diag("out of order after invocation %llu: %.120s", last, line);
			return -1;
		}
	}
	return pairs;
}

int main(void)
{
	pthread_t t, reader;
	void *ret;
	int fds[2], filled;
	char spec[256], page[4096];
	struct drain d = { 0, NULL, 0, 1 << 20 };
	long pairs;

	tap_plan(14);
	alarm(120);             /* a stall fails the test rather than hanging it */
	probe_function = PROBE_LEAN_ID;
	if (pipe(fds) != 0 || pipe(gate) != 0)
		tap_bail("pipe: %s", strerror(errno));
#if defined(F_SETPIPE_SZ)
	fcntl(fds[1], F_SETPIPE_SZ, PIPE_SIZE);   /* the usual 16 pages (1 over the user's limit) */
#endif
	/* The logging plugin first, so that the blocker's Enter cannot keep
	 * it from a segment; its buffer four pipe pages. */
	snprintf(spec, sizeof(spec), "logging:output=/dev/fd/%d,buffer=16384", fds[1]);
	if (elt_plugin_load(spec) != ELT_OK || elt_plugin_add(&elt_plugin_blocker, NULL) != ELT_OK)
		tap_bail("plugins: %s", elt_last_error());

	/* In a plugin's init and function_added, under the library's locks. */
	ok(cancelled_at_gate(ADD, "init"),
	   "a thread cancelled in a plugin's init: the plugin is added, then the thread ends");
	is_int(elt_plugin_add(&elt_plugin_plain, NULL), ELT_OK, "... and the next plugin is added");
	ok(cancelled_at_gate(REGISTER, "function_added"),
	   "a thread cancelled in a plugin's function_added: the function is registered, "
	   "then the thread ends");
	is_int(elt_register_function(0x6a7ee, "next", NULL, 0), ELT_OK,
	   "... and the next function is registered");

	/* Inside a callback.  The logging plugin's Enter ran first: the
	 * thread's buffer holds its call, without a return, written out at
	 * its exit and read apart from the pairs checked at the end. */
	if (pthread_create(&t, NULL, blocked_thread, NULL) != 0)
		tap_bail("pthread_create");
	while (!atomic_load(&blocked))
		sleep_ms(1);
	/* Its invocation is live, listed with the thread list locked. */
	ok(cancelled_at_gate(LIST_LIVE, "live invocation"),
	   "a thread cancelled while it lists the live invocations: the list ends, "
	   "then the thread ends");
	{
		elt_invocation_stats stats;

		elt_get_invocation_stats(&stats);       /* locks the thread list */
		ok(stats.started > stats.completed, "... and the thread list is free");
	}
	pthread_cancel(t);
	ok(pthread_join(t, &ret) == 0 && ret == PTHREAD_CANCELED,
	   "a thread cancelled inside a callback ends, cancelled");
	is_int(atomic_load(&thread_exits_of_blocked), 1, "... and its plugins' thread_exit ran");

	/* Its buffer went out at its exit: the pipe holds its line now. */
	d.data = malloc(d.cap);
	if (!d.data)
		tap_bail("out of memory");
	d.fd = fds[0];
	filled = pipe_settled(fds[0], 1);
	if (filled > 0) {
		ssize_t n = read(fds[0], d.data, (size_t)filled);

		d.len = n > 0 ? (size_t)n : 0;
	}
	ok(d.len > 0 && memchr(d.data, '\n', d.len) == d.data + d.len - 1,
	   "... its one line went out at its exit");
	d.len = 0;              /* not part of the pairs below */

	/* In write(2), with part of the buffer gone out. */
	if (pthread_create(&t, NULL, logging_thread, NULL) != 0)
		tap_bail("pthread_create");
	filled = pipe_settled(fds[0], PIPE_SIZE / 2);
	ok(filled > 0, "the logging thread filled the pipe (%d bytes) and blocked", filled);
	/* One page out of the full pipe: the blocked write puts a page of
	 * its buffer in and blocks again. */
	if (read(fds[0], page, sizeof(page)) != (ssize_t)sizeof(page))
		tap_bail("read: %s", strerror(errno));
	memcpy(d.data, page, sizeof(page));
	d.len = sizeof(page);
	pipe_settled(fds[0], 1);
	pthread_cancel(t);
	if (pthread_create(&reader, NULL, drain_pipe, &d) != 0)
		tap_bail("pthread_create");
	ok(pthread_join(t, &ret) == 0 && ret == PTHREAD_CANCELED,
	   "the logging thread, cancelled in the plugin's write, ends cancelled");
	/* In a plugin's fini: the shutdown finishes (logging's fini closes its
	 * output, which the reader waits for). */
	atomic_store(&fini_waits, 1);
	ok(cancelled_at_gate(SHUTDOWN, "fini") && atomic_load(&fini_done),
	   "a thread cancelled in a plugin's fini: the shutdown finishes, then the thread ends");
	close(fds[1]);
	pthread_join(reader, NULL);

	pairs = pairs_in_log(d.data, d.len);
	ok(pairs >= 0, "its log is whole lines, each pair once, in order (%zu bytes)", d.len);
	ok(pairs == (long)atomic_load(&pairs_done),
	   "... every pair it completed: %ld logged, %lu done", pairs, atomic_load(&pairs_done));
	free(d.data);
	return tap_done();
}
