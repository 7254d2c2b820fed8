/*
 * Status strings, the per-thread "last error" message that names the bad
 * input behind a failing call, and diagnostics (elt_report): every way the
 * library tells of a problem.
 */
#include "internal.h"
#include "test-points.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static const char *const status_text[ELT_STATUS_COUNT] = {
	[ELT_OK] = "success",
	[ELT_E_DATAINCOMPLETE] = "data incomplete: this segment carries no such data",
	[ELT_E_INVALID_ARGUMENT] = "invalid argument",
	[ELT_E_UNKNOWN_FUNCTION] = "unknown function id",
	[ELT_E_NO_SIGNATURE] = "function registered without a signature",
	[ELT_E_INSUFFICIENT_BUFFER] = "insufficient buffer",
	[ELT_E_WRONG_CALLBACK] = "not available in this kind of callback",
	[ELT_E_BAD_SIGNATURE] = "malformed signature",
	[ELT_E_UNSUPPORTED] = "not supported on this ABI",
	[ELT_E_EXISTS] = "function id already registered",
	[ELT_E_NO_MEMORY] = "out of memory",
	[ELT_E_BAD_OPTION] = "malformed or unknown option",
	[ELT_E_PLUGIN] = "plugin could not be loaded",
	[ELT_E_PLUGIN_ABI] = "plugin built for an incompatible ABI",
	[ELT_E_LIMIT] = "table full",
	[ELT_E_CHECK_FAILED] = "a plugin's checks failed",
	[ELT_E_IO] = "input/output error",
	[ELT_E_STATE] = "not valid in the library's current state",
};

const char *elt_strerror(elt_status status)
{
	if ((unsigned)status < ELT_STATUS_COUNT && status_text[status])
		return status_text[status];
	return "unknown status";
}

/*
 * The message of the thread's last failure.  Its bytes are not in the
 * library's TLS segment, which a dlopen()ed library takes whole from
 * glibc's small static TLS surplus (internal.h): the thread's first
 * failure maps them (mapped, not malloc'd: a getter may fail in a callback
 * that a signal handler runs).  They are unmapped at the thread's exit:
 * by threads.c for a thread that reports segments, the only kind that
 * runs callbacks, so that a failure there never calls
 * pthread_setspecific(), which may calloc(); by a thread-specific-data
 * destructor for any other thread.
 */
#define MESSAGE_SIZE 512

static ELT_TLS char *_Atomic thread_message;    /* NULL: none mapped */
static ELT_TLS int thread_message_lost;         /* no memory for the last one */
static ELT_TLS int exit_in_threads;             /* threads.c unmaps it */
static pthread_key_t message_key;
static int message_key_made;
static pthread_once_t message_once = PTHREAD_ONCE_INIT;

static void message_unmap(void)
{
	int saved_errno = errno;

	elt_pages_unmap(atomic_exchange_explicit(&thread_message, NULL, memory_order_relaxed),
			MESSAGE_SIZE);
	errno = saved_errno;
}

/* The key's value only makes glibc call this at the thread's exit. */
static void message_destructor(void *unused)
{
	(void)unused;
	message_unmap();
}

static void message_key_create(void)
{
	message_key_made = pthread_key_create(&message_key, message_destructor) == 0;
}

/* At load, so that no failure is the first to take the once, and so that
 * the key's index is small (threads.c, elt_threads_load). */
void elt_error_load(void)
{
	pthread_once(&message_once, message_key_create);
}

/* The thread's page, mapped now; NULL when there is no memory for it. */
static char *message_map(void)
{
	char *page = elt_pages_map(MESSAGE_SIZE), *none = NULL;

	if (!page)
		return NULL;
	ELT_TEST_POINT(ELT_POINT_MESSAGE_MAPPED, (uintptr_t)page);
	/* A signal handler's failure in between may have mapped one. */
	if (!atomic_compare_exchange_strong_explicit(&thread_message, &none, page,
						     memory_order_relaxed, memory_order_relaxed)) {
		elt_pages_unmap(page, MESSAGE_SIZE);
		return none;
	}
	if (exit_in_threads)
		return page;
	/* A failure in a later key's destructor maps again, and glibc then
	 * runs another round of destructors. */
	pthread_once(&message_once, message_key_create);
	if (message_key_made && pthread_setspecific(message_key, page) == 0)
		return page;
	message_unmap();        /* nothing would unmap it */
	return NULL;
}

void elt_error_thread_attached(void)
{
	exit_in_threads = 1;
}

void elt_error_thread_exit(void)
{
	exit_in_threads = 0;
	message_unmap();
}

const char *elt_last_error(void)
{
	const char *page = atomic_load_explicit(&thread_message, memory_order_relaxed);

	if (thread_message_lost)
		return "the last failure's message was lost: no memory for it";
	return page ? page : "";
}

void elt_clear_error(void)
{
	char *page = atomic_load_explicit(&thread_message, memory_order_relaxed);

	thread_message_lost = 0;
	if (page)
		page[0] = '\0';
}

elt_status elt_vset_error(elt_status status, const char *fmt, va_list ap)
{
	int saved_errno = errno;
	char *page = atomic_load_explicit(&thread_message, memory_order_relaxed);

	if (!page)
		page = message_map();
	thread_message_lost = !page;
	if (page)
		vsnprintf(page, MESSAGE_SIZE, fmt, ap);
	errno = saved_errno;
	return status;
}

elt_status elt_set_error(elt_status status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	elt_vset_error(status, fmt, ap);
	va_end(ap);
	return status;
}

/* --- diagnostics --------------------------------------------------------- */

/* Both in one object, swapped whole, so a report never pairs one
 * handler with another's data. */
struct diagnostics {
	elt_diagnostic_handler handler;
	void *data;
};
static struct diagnostics *_Atomic diagnostics;

void elt_set_diagnostic_handler(elt_diagnostic_handler handler, void *data)
{
	struct diagnostics *d = NULL;

	if (handler) {
		d = malloc(sizeof(*d));
		if (!d)
			return;
		d->handler = handler;
		d->data = data;
	}
	/* The old one stays allocated: a report may be using it. */
	atomic_store_explicit(&diagnostics, d, memory_order_release);
}

void elt_report(const char *fmt, ...)
{
	char message[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	struct diagnostics *d = atomic_load_explicit(&diagnostics, memory_order_acquire);

	if (d)
		d->handler(message, d->data);
	else
		fprintf(stderr, "asyncelt: %s\n", message);
}
