/*
 * Status strings, the per-thread "last error" message that names the bad
 * input behind a failing call, and diagnostics (elt_report): every way the
 * library tells of a problem.
 */
#include "internal.h"

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
 * failure maps them, and its exit unmaps them.  Mapped, not malloc'd: a
 * getter may fail in a callback that a signal handler runs.
 */
#define MESSAGE_SIZE 512

static ELT_TLS char *thread_message;    /* NULL until the first failure */
static ELT_TLS int thread_message_lost; /* no memory for the last one */
static pthread_key_t message_key;       /* unmaps it at the thread's exit */
static pthread_once_t message_once = PTHREAD_ONCE_INIT;

static void message_unmap(void *page)
{
	thread_message = NULL;
	elt_pages_unmap(page, MESSAGE_SIZE);
}

static void message_key_create(void)
{
	pthread_key_create(&message_key, message_unmap);
}

/* At load, so that no failure, a signal handler's included, is the
 * first to take the once. */
__attribute__((constructor)) static void message_init(void)
{
	pthread_once(&message_once, message_key_create);
}

const char *elt_last_error(void)
{
	if (thread_message_lost)
		return "the last failure's message was lost: no memory for it";
	return thread_message ? thread_message : "";
}

elt_status elt_vset_error(elt_status status, const char *fmt, va_list ap)
{
	if (!thread_message) {
		pthread_once(&message_once, message_key_create);
		/* A failure in a later key's destructor at the thread's exit
		 * maps again: glibc then runs another round of destructors. */
		if ((thread_message = elt_pages_map(MESSAGE_SIZE)))
			pthread_setspecific(message_key, thread_message);
	}
	thread_message_lost = !thread_message;
	if (thread_message)
		vsnprintf(thread_message, MESSAGE_SIZE, fmt, ap);
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
