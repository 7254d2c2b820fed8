/*
 * logging:format=binary: each segment becomes a record of a few bytes
 * (recording.h) and the raw bytes of its decoded values, appended to the
 * thread's own buffer.  No text is made on the instrumented thread:
 * asyncelt-dump formats the values later, from the signatures the file
 * carries.
 */
#include "binary.h"
#include "recording.h"

#include "../common/clock.h"
#include "../common/tbuf.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Arguments decoded per call, as the text formats. */
#define MAX_ARGS 16

struct binary_log {
	struct tbuf_set *out;
	uint64_t base_ns;               /* CLOCK_MONOTONIC when opened */
	uint64_t base_ticks;            /* plugin_ticks() then: records count from it */
	bool per_process_file;          /* the path has %p: a fork child starts afresh */
	/* Every REC_FUNCTION record so far, for a fork child's new file. */
	pthread_mutex_t lock;
	char **definitions;
	size_t *definition_sizes;
	size_t ndefinitions, capacity;
	struct binary_log *next;        /* logs_list */
};

/* Nanoseconds since the log was opened. */
static inline uint64_t now_ns(const struct binary_log *log)
{
	return plugin_ticks_to_ns(plugin_ticks() - log->base_ticks);
}

/* --- the hot path ---------------------------------------------------------- */

/* Each thread's run (recording.h): what its next event is told apart from.
 * Kept with the thread's buffer (tbuf's user data). */
struct run {
	uint64_t time;                  /* of the run's last record */
	uint64_t invocation;            /* of its last event, 0 at the start */
	size_t end;                     /* the buffer's length after it */
	unsigned long writes;           /* the buffer's writes then */
	uint32_t thread;
};

/* A value's ranges: a call's arguments or a final return's value. */
struct value {
	elt_range ranges[MAX_ARGS];
	size_t count;
	uint32_t total;
};

/* The flags a value gives the record.  What the signature says is empty
 * (no parameter but the continuation, a void result) needs no getter. */
static unsigned value_flags(elt_status st)
{
	return st == ELT_OK ? REC_VALUE : st == ELT_E_DATAINCOMPLETE ? REC_INCOMPLETE : 0;
}

static unsigned arguments_of(const elt_info *info, const elt_signature *sig, struct value *v)
{
	size_t total = 0;
	elt_status st;

	v->count = 0;
	v->total = 0;
	if (sig->nparams == (sig->continuation_index >= 0 ? 1u : 0u))
		return REC_VALUE;
	v->count = MAX_ARGS;
	st = elt_get_enter_info(info, v->ranges, &v->count, &total);
	v->total = (uint32_t)total;
	return value_flags(st);
}

static unsigned return_of(const elt_info *info, const elt_signature *sig, struct value *v)
{
	elt_status st;

	v->count = 0;
	v->total = 0;
	if (sig->ret->kind == ELT_TYPE_VOID)
		return REC_VALUE;
	st = elt_get_return_info(info, &v->ranges[0]);
	v->count = 1;
	v->total = (uint32_t)v->ranges[0].length;
	return value_flags(st);
}

/* Does the thread's next event continue its run?  Not when the buffer
 * was written out since (a run starts each write) or something else was
 * appended, nor when the event is another thread's (a buffer passed on). */
static bool run_continues(const struct tbuf *b, const struct run *run, uint32_t thread)
{
	return run->writes == b->writes && run->end == b->len && run->end != 0 &&
	       run->thread == thread;
}

static uint8_t *put_run(uint8_t *p, struct run *run, uint32_t thread, uint64_t now)
{
	*p++ = rec_tag(0, REC_RUN);
	p = rec_put_number(p, thread);
	p = rec_put_number(p, now);
	*p++ = REC_END;
	run->thread = thread;
	run->time = now;
	run->invocation = 0;
	return p;
}

/* The event's fields up to its value bytes (recording.h). */
static uint8_t *put_event(uint8_t *p, struct run *run, uint64_t now, uint32_t function,
			  unsigned flags, elt_segment_kind kind, const elt_invocation *inv,
			  uintptr_t continuation, const struct value *value)
{
	*p++ = rec_tag(flags, (enum rec_kind)kind);
	p = rec_put_number(p, now - run->time);
	p = rec_put_number(p, function == REC_UNREGISTERED ? 0 : (uint64_t)function + 1);
	if (!(flags & REC_NO_INVOCATION)) {
		p = rec_put_number(p, rec_zigzag(inv->id - run->invocation));
		run->invocation = inv->id;
	}
	run->time = now;
	switch (kind) {
	case ELT_SEGMENT_CALL:
		p = rec_put_number(p, inv->parent ? rec_zigzag(inv->id - inv->parent) + 1 : 0);
		break;
	case ELT_SEGMENT_RESUME:
		p = rec_put_number(p, continuation);
		p = rec_put_number(p, inv->segment);
		p = rec_put_number(p, inv->previous_thread);
		break;
	case ELT_SEGMENT_SUSPEND:
		p = rec_put_number(p, continuation);
		break;
	default:
		break;
	}
	if (flags & REC_VALUE)
		p = rec_put_number(p, value->total);
	return p;
}

static void put_value_bytes(struct tbuf *b, const struct value *v)
{
	size_t i;

	for (i = 0; i < v->count; i++)
		tbuf_put(b, (const char *)v->ranges[i].start, v->ranges[i].length);
}

/* The run record if one is due, then the event's fields.  Inline, so
 * that the hot path passes its dozen values in registers. */
static inline __attribute__((always_inline)) uint8_t *put_start(uint8_t *p, const struct tbuf *b, struct run *run, uint64_t now,
			  uint32_t function, unsigned flags, elt_segment_kind kind,
			  const elt_invocation *inv, uintptr_t continuation,
			  const struct value *value, uint32_t thread)
{
	if (!run_continues(b, run, thread))
		p = put_run(p, run, thread, now);
	return put_event(p, run, now, function, flags, kind, inv, continuation, value);
}

/* The rare record that does not fit in the buffer's free space even
 * after its whole records went out: built aside, appended with tbuf_put.
 * A value that would not fit in the whole buffer is left out
 * (REC_INCOMPLETE): written in pieces, another thread's write could land
 * between them. */
static __attribute__((noinline)) void put_large(struct tbuf *b, struct run *run, uint64_t now,
						uint32_t function, unsigned flags,
						elt_segment_kind kind, const elt_invocation *inv,
						uintptr_t continuation, const struct value *value,
						uint32_t thread)
{
	uint8_t fixed[REC_RUN_MAX + REC_EVENT_MAX], *p;
	struct run before = *run;

	p = put_start(fixed, b, run, now, function, flags, kind, inv, continuation, value, thread);
	if ((flags & REC_VALUE) && (size_t)(p - fixed) + value->total + 1 > b->capacity - b->len) {
		*run = before;
		flags = (flags & ~REC_VALUE) | REC_INCOMPLETE;
		p = put_start(fixed, b, run, now, function, flags, kind, inv, continuation,
			      value, thread);
	}
	tbuf_put(b, (const char *)fixed, (size_t)(p - fixed));
	if (flags & REC_VALUE)
		put_value_bytes(b, value);
	tbuf_end_line(b);
	run->end = b->len;
	run->writes = b->writes;
}

void binary_segment(struct binary_log *log, const elt_info *info)
{
	uint64_t now = now_ns(log);
	struct tbuf *b = tbuf_get(log->out);
	const elt_function_desc *fn = elt_get_function(info);
	const elt_signature *sig = fn ? fn->signature : NULL;
	elt_segment_kind kind = elt_get_segment_kind(info);
	uint32_t function = fn ? fn->index : REC_UNREGISTERED;
	elt_invocation inv;
	unsigned flags = 0;
	struct value value;
	uintptr_t continuation = 0;
	uint32_t thread;
	struct run *run;
	uint8_t *p;
	void *k;

	if (!b)
		return;         /* out of memory: counted by tbuf */
	run = tbuf_user(b);
	if (elt_get_invocation(info, &inv) != ELT_OK) {
		memset(&inv, 0, sizeof(inv));
		flags |= REC_NO_INVOCATION;
	}
	if (inv.flags & ELT_INVOCATION_ORPHAN)
		flags |= REC_ORPHAN;
	value.total = 0;
	if (sig && kind == ELT_SEGMENT_CALL)
		flags |= arguments_of(info, sig, &value);
	else if (sig && kind == ELT_SEGMENT_RETURN)
		flags |= return_of(info, sig, &value);
	else if (fn && (kind == ELT_SEGMENT_RESUME || kind == ELT_SEGMENT_SUSPEND) &&
		 elt_get_continuation(info, &k) == ELT_OK)
		continuation = (uintptr_t)k;
	/* an event the library placed on no thread joins the run it is in */
	thread = flags & REC_NO_INVOCATION ? run->thread : inv.thread;
	if (!tbuf_reserve(b, REC_RUN_MAX + REC_EVENT_MAX + 1 +
			      (flags & REC_VALUE ? value.total : 0))) {
		put_large(b, run, now, function, flags, kind, &inv, continuation, &value, thread);
		return;
	}
	p = put_start((uint8_t *)b->data + b->len, b, run, now, function, flags, kind, &inv,
		      continuation, &value, thread);
	b->len = (size_t)((char *)p - b->data);
	if (flags & REC_VALUE)
		put_value_bytes(b, &value);
	tbuf_end_line(b);       /* REC_END */
	run->end = b->len;
	run->writes = b->writes;
}

/* --- the function table ---------------------------------------------------- */

/* A REC_FUNCTION record, its end byte included, in a new allocation;
 * NULL when out of memory. */
static char *function_record(const elt_function_desc *fn, size_t *size)
{
	const char *sig = fn->signature && fn->signature->text ? fn->signature->text : "";
	size_t name_len = strlen(fn->name) + 1, sig_len = strlen(sig) + 1;
	uint8_t fixed[1 + 3 * REC_NUMBER_MAX], *p = fixed;
	char *rec;

	*p++ = rec_tag(0, REC_FUNCTION);
	p = rec_put_number(p, fn->index);
	p = rec_put_number(p, fn->id);
	p = rec_put_number(p, fn->flags);
	*size = (size_t)(p - fixed) + name_len + sig_len + 1;
	rec = malloc(*size);
	if (!rec)
		return NULL;
	memcpy(rec, fixed, (size_t)(p - fixed));
	memcpy(rec + (p - fixed), fn->name, name_len);
	memcpy(rec + (p - fixed) + name_len, sig, sig_len);
	rec[*size - 1] = REC_END;
	return rec;
}

/* Puts a definition and writes this thread's buffer out at once, so that
 * a killed process's file still names every function its records use.
 * (Registration is rare: a write(2) each is cheap enough.) */
static void put_definition(struct binary_log *log, const char *rec, size_t size)
{
	struct tbuf *b = tbuf_get(log->out);

	if (!b)
		return;
	tbuf_put_line(b, rec, size);    /* whole, however long its name */
	tbuf_thread_exit(log->out);     /* the one way tbuf writes a thread out */
}

void binary_function_added(struct binary_log *log, const elt_function_desc *fn)
{
	size_t size;
	char *rec = function_record(fn, &size);

	if (!rec)
		return;         /* the reader shows it as "#index" */
	put_definition(log, rec, size);
	pthread_mutex_lock(&log->lock);
	if (log->ndefinitions == log->capacity) {
		size_t cap = log->capacity ? 2 * log->capacity : 64;
		char **defs = realloc(log->definitions, cap * sizeof(*defs));
		size_t *sizes = defs ? realloc(log->definition_sizes, cap * sizeof(*sizes)) : NULL;

		if (defs)
			log->definitions = defs;
		if (sizes) {
			log->definition_sizes = sizes;
			log->capacity = cap;
		}
	}
	if (log->ndefinitions < log->capacity) {
		log->definitions[log->ndefinitions] = rec;
		log->definition_sizes[log->ndefinitions++] = size;
	} else {
		free(rec);
	}
	pthread_mutex_unlock(&log->lock);
}

/* --- fork: a child's own file names the functions again -------------------- */

static pthread_mutex_t logs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct binary_log *logs_list;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void before_fork(void)
{
	struct binary_log *log;

	pthread_mutex_lock(&logs_lock);
	for (log = logs_list; log; log = log->next)
		pthread_mutex_lock(&log->lock);
}

static void after_fork_parent(void)
{
	struct binary_log *log;

	for (log = logs_list; log; log = log->next)
		pthread_mutex_unlock(&log->lock);
	pthread_mutex_unlock(&logs_lock);
}

/* Runs after tbuf's own handler (registered later), which has opened the
 * child's file and written its preamble. */
static void after_fork_child(void)
{
	struct binary_log *log;
	size_t i;

	for (log = logs_list; log; log = log->next) {
		if (log->per_process_file)
			for (i = 0; i < log->ndefinitions; i++)
				put_definition(log, log->definitions[i],
					       log->definition_sizes[i]);
		pthread_mutex_unlock(&log->lock);
	}
	pthread_mutex_unlock(&logs_lock);
}

static void register_atfork(void)
{
#if !defined(_WIN32)
	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
#else
	(void)before_fork;
	(void)after_fork_parent;
	(void)after_fork_child;
#endif
}

/* --- open and close -------------------------------------------------------- */

static int little_endian(void)
{
	const uint16_t one = 1;

	return *(const unsigned char *)&one;
}

static const char *clock_line(void)
{
	const char *source = plugin_clock_name();
	size_t i;

	for (i = 0; i < REC_CLOCK_COUNT; i++)
		if (strcmp(rec_clocks[i][0], source) == 0)
			return rec_clocks[i][1];
	return NULL;    /* clock.h has a source recording.h does not name */
}

elt_status binary_open(struct binary_log **out, const char *path, size_t capacity)
{
	struct binary_log *log = calloc(1, sizeof(*log));
	char preamble[REC_PREAMBLE_MAX];
	elt_status st;

	if (!log)
		return elt_set_error(ELT_E_NO_MEMORY, "out of memory");
	pthread_mutex_init(&log->lock, NULL);
	plugin_clock_init();
	log->base_ns = plugin_clock_gettime_ns();
	log->base_ticks = plugin_ticks();
	log->per_process_file = strstr(path, "%p") != NULL;
	/* %p stays for tbuf to expand: the pid of whichever process writes */
	snprintf(preamble, sizeof(preamble),
		 REC_MAGIC " %d\npid %%p\nabi %s\nbyte-order %s\n"
		 "clock %s\nbase %llu\n" REC_PREAMBLE_END,
		 REC_VERSION, elt_abi_name(), little_endian() ? "little" : "big",
		 clock_line(), (unsigned long long)log->base_ns);
	st = tbuf_open(&log->out, "output", path, capacity, sizeof(struct run), preamble,
		       NULL);
	if (st != ELT_OK) {
		pthread_mutex_destroy(&log->lock);
		free(log);
		return st;
	}
	pthread_once(&atfork_once, register_atfork);
	pthread_mutex_lock(&logs_lock);
	log->next = logs_list;
	logs_list = log;
	pthread_mutex_unlock(&logs_lock);
	*out = log;
	return ELT_OK;
}

void binary_thread_exit(struct binary_log *log)
{
	tbuf_thread_exit(log->out);
}

elt_status binary_close(struct binary_log *log)
{
	struct binary_log **link;
	elt_status st;
	size_t i;

	pthread_mutex_lock(&logs_lock);
	for (link = &logs_list; *link; link = &(*link)->next)
		if (*link == log) {
			*link = log->next;
			break;
		}
	pthread_mutex_unlock(&logs_lock);
	st = tbuf_close(log->out);
	for (i = 0; i < log->ndefinitions; i++)
		free(log->definitions[i]);
	free(log->definitions);
	free(log->definition_sizes);
	pthread_mutex_destroy(&log->lock);
	free(log);
	return st;
}
