/*
 * logging:format=binary: each segment becomes a 24-byte header and the raw
 * bytes of its decoded values (recording.h), appended to the thread's own
 * buffer.  No text is made on the instrumented thread: asyncelt-dump
 * formats the values later, from the signatures the file carries.
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

/* A value: u32 n, then n bytes from the ranges. */
static void put_value(struct tbuf *b, const struct value *v)
{
	size_t i;

	tbuf_put(b, (const char *)&v->total, sizeof(v->total));
	for (i = 0; i < v->count; i++)
		tbuf_put(b, (const char *)v->ranges[i].start, v->ranges[i].length);
}

void binary_segment(struct binary_log *log, const elt_info *info)
{
	uint64_t now = now_ns(log);
	struct tbuf *b = tbuf_get(log->out);
	const elt_function_desc *fn = elt_get_function(info);
	const elt_signature *sig = fn ? fn->signature : NULL;
	elt_segment_kind kind = elt_get_segment_kind(info);
	struct rec_header h;
	elt_invocation inv;
	unsigned flags = 0;
	struct value value;
	void *k = NULL;

	if (!b)
		return;         /* out of memory: counted by tbuf */
	if (elt_get_invocation(info, &inv) != ELT_OK) {
		memset(&inv, 0, sizeof(inv));
		flags |= REC_NO_INVOCATION;
	}
	if (inv.flags & ELT_INVOCATION_ORPHAN)
		flags |= REC_ORPHAN;
	if (sig && kind == ELT_SEGMENT_CALL)
		flags |= arguments_of(info, sig, &value);
	else if (sig && kind == ELT_SEGMENT_RETURN)
		flags |= return_of(info, sig, &value);
	else if (fn && (kind == ELT_SEGMENT_RESUME || kind == ELT_SEGMENT_SUSPEND))
		elt_get_continuation(info, &k);

	h.time = now;
	h.invocation = inv.id;
	h.function = fn ? fn->index : REC_UNREGISTERED;
	h.thread_kind = rec_pack(inv.thread, flags, (enum rec_kind)kind);
	/* each piece of a constant size: tbuf_put's copy is inlined */
	tbuf_put(b, (const char *)&h, sizeof(h));
	if (kind == ELT_SEGMENT_CALL) {
		tbuf_put(b, (const char *)&inv.parent, sizeof(uint64_t));
	} else if (kind == ELT_SEGMENT_RESUME) {
		struct rec_resume r = { (uintptr_t)k, inv.segment, inv.previous_thread };

		tbuf_put(b, (const char *)&r, sizeof(r));
	} else if (kind == ELT_SEGMENT_SUSPEND) {
		uint64_t continuation = (uintptr_t)k;

		tbuf_put(b, (const char *)&continuation, sizeof(continuation));
	}
	if (flags & REC_VALUE)
		put_value(b, &value);
	tbuf_end_line(b);       /* REC_END */
}

/* --- the function table ---------------------------------------------------- */

/* A REC_FUNCTION record in a new allocation; NULL when out of memory. */
static char *function_record(const elt_function_desc *fn, uint64_t time, size_t *size)
{
	const char *sig = fn->signature && fn->signature->text ? fn->signature->text : "";
	size_t name_len = strlen(fn->name) + 1, sig_len = strlen(sig) + 1;
	uint32_t n = (uint32_t)(sizeof(uint32_t) + name_len + sig_len);
	uint32_t fn_flags = fn->flags;
	struct rec_header h = {
		.time = time, .invocation = fn->id, .function = fn->index,
		.thread_kind = rec_pack(0, 0, REC_FUNCTION),
	};
	char *rec, *at;

	*size = REC_HEADER_SIZE + sizeof(n) + n;
	rec = at = malloc(*size);
	if (!rec)
		return NULL;
	memcpy(at, &h, sizeof(h));
	at += sizeof(h);
	memcpy(at, &n, sizeof(n));
	at += sizeof(n);
	memcpy(at, &fn_flags, sizeof(fn_flags));
	at += sizeof(fn_flags);
	memcpy(at, fn->name, name_len);
	memcpy(at + name_len, sig, sig_len);
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
	tbuf_put(b, rec, size);
	tbuf_end_line(b);
	tbuf_thread_exit(log->out);     /* the one way tbuf writes a thread out */
}

void binary_function_added(struct binary_log *log, const elt_function_desc *fn)
{
	size_t size;
	char *rec = function_record(fn, now_ns(log), &size);

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
	st = tbuf_open(&log->out, "output", path, capacity, 0, preamble, NULL);
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
