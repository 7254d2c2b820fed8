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
#include "../common/fork-signals.h"
#include "../common/tbuf.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct binary_log {
	struct tbuf_set *out;
	uint64_t base_ns;               /* CLOCK_MONOTONIC when opened */
	uint64_t base_ticks;            /* plugin_ticks() then: records count from it */
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

/* One segment's record but its value bytes: what the getters said. */
struct event {
	uint64_t now;
	uint32_t function;              /* fn->index, or REC_UNREGISTERED */
	uint64_t id;                    /* the function's, with REC_UNREGISTERED */
	uint32_t thread;
	unsigned flags;                 /* REC_* */
	elt_segment_kind kind;
	uintptr_t continuation;         /* a resume's or a suspension's */
	uint32_t value_total;           /* bytes of value, with REC_VALUE */
	elt_invocation inv;
};

/* The most a record takes but its value bytes: a run record and the
 * event's fields, then the end byte. */
#define FIXED_MAX (REC_RUN_MAX + REC_EVENT_MAX + 1)
_Static_assert(FIXED_MAX <= BINARY_MIN_BUFFER, "a record's fields fit in any buffer");

/* Does the thread's next event continue its run?  Not when the buffer
 * was written out since (a run starts each write) or something else was
 * appended, nor when the event is another thread's (a buffer passed on). */
static bool run_continues(const struct tbuf *b, const struct run *run, uint32_t thread)
{
	return run->end == b->len && run->writes == b->writes && run->end != 0 &&
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

/* The run record if one is due, then the event's fields up to its value
 * bytes (recording.h).  Inline, so that the hot path keeps its dozen
 * values in registers. */
static inline __attribute__((always_inline)) uint8_t *
put_fields(uint8_t *p, const struct tbuf *b, struct run *run, const struct event *ev)
{
	const elt_invocation *inv = &ev->inv;

	if (!run_continues(b, run, ev->thread))
		p = put_run(p, run, ev->thread, ev->now);
	*p++ = rec_tag(ev->flags, (enum rec_kind)ev->kind);
	p = rec_put_number(p, ev->now - run->time);
	/* REC_UNREGISTERED is UINT32_MAX: its index + 1 wraps to 0 */
	_Static_assert(REC_UNREGISTERED == UINT32_MAX, "an unregistered function is 0");
	p = rec_put_number(p, (uint32_t)(ev->function + 1u));
	if (__builtin_expect(ev->function == REC_UNREGISTERED, 0))
		p = rec_put_number(p, ev->id);
	if (!(ev->flags & REC_NO_INVOCATION)) {
		p = rec_put_number(p, rec_zigzag(inv->id - run->invocation));
		run->invocation = inv->id;
	}
	run->time = ev->now;
	switch (ev->kind) {
	case ELT_SEGMENT_CALL:
		p = rec_put_number(p, inv->parent ? rec_zigzag(inv->id - inv->parent) + 1 : 0);
		break;
	case ELT_SEGMENT_RESUME:
		p = rec_put_number(p, ev->continuation);
		p = rec_put_number(p, inv->segment);
		p = rec_put_number(p, inv->previous_thread);
		break;
	case ELT_SEGMENT_SUSPEND:
		p = rec_put_number(p, ev->continuation);
		break;
	default:
		break;
	}
	if (ev->flags & REC_VALUE)
		p = rec_put_number(p, ev->value_total);
	return p;
}

/* The record is whole: the run goes on after it. */
static inline void end_record(struct tbuf *b, struct run *run)
{
	tbuf_end_line(b);       /* REC_END */
	run->end = b->len;
	run->writes = b->writes;
}

/* A value's ranges: a call's arguments or a final return's value. */
struct value {
	elt_range ranges[REC_ARGS_MAX];
	size_t count;
};

static void put_value_bytes(struct tbuf *b, const struct value *v)
{
	size_t i;

	for (i = 0; i < v->count; i++)
		tbuf_put(b, (const char *)v->ranges[i].start, v->ranges[i].length);
}

/* The rare record with a value that does not fit in the buffer's free
 * space even after its whole records went out: built aside, appended
 * with tbuf_put.  A value that would not fit in the whole buffer is left out
 * (REC_INCOMPLETE): written in pieces, another thread's write could land
 * between them. */
static __attribute__((noinline)) void put_large(struct tbuf *b, struct run *run,
						struct event *ev, const struct value *value)
{
	uint8_t fixed[FIXED_MAX], *p;
	struct run before = *run;

	p = put_fields(fixed, b, run, ev);
	if ((ev->flags & REC_VALUE) &&
	    (size_t)(p - fixed) + ev->value_total + 1 > b->capacity - b->len) {
		*run = before;
		ev->flags = (ev->flags & ~REC_VALUE) | REC_INCOMPLETE;
		p = put_fields(fixed, b, run, ev);
	}
	tbuf_put(b, (const char *)fixed, (size_t)(p - fixed));
	if (ev->flags & REC_VALUE)
		put_value_bytes(b, value);
	end_record(b, run);
}

/* The flags a value gives the record. */
static unsigned value_flags(elt_status st)
{
	return st == ELT_OK ? REC_VALUE : st == ELT_E_DATAINCOMPLETE ? REC_INCOMPLETE : 0;
}

/* Does the signature give this segment a value?  A call with parameters
 * besides the continuation, a final return of a non-void result.  One
 * without carries an empty value (REC_VALUE, 0 bytes) and needs no getter. */
static bool has_value(const elt_signature *sig, elt_segment_kind kind)
{
	if (kind == ELT_SEGMENT_CALL)
		return sig->nparams != (sig->continuation_index >= 0 ? 1u : 0u);
	return kind == ELT_SEGMENT_RETURN && sig->ret->kind != ELT_TYPE_VOID;
}

/* A call's arguments or a final return's value, then the record. */
static __attribute__((noinline)) void put_valued(struct tbuf *b, struct run *run,
						 struct event *ev, const elt_info *info)
{
	struct value value;
	size_t total = 0;
	elt_status st;
	uint8_t *p;

	if (ev->kind == ELT_SEGMENT_CALL) {
		value.count = REC_ARGS_MAX;
		st = elt_get_enter_info(info, value.ranges, &value.count, &total);
	} else {
		st = elt_get_return_info(info, &value.ranges[0]);
		value.count = 1;
		total = value.ranges[0].length;
	}
	ev->flags |= value_flags(st);
	ev->value_total = (uint32_t)total;
	if (!tbuf_reserve(b, FIXED_MAX + (ev->flags & REC_VALUE ? total : 0))) {
		put_large(b, run, ev, &value);
		return;
	}
	p = put_fields((uint8_t *)b->data + b->len, b, run, ev);
	b->len = (size_t)((char *)p - b->data);
	if (ev->flags & REC_VALUE)
		put_value_bytes(b, &value);
	end_record(b, run);
}

/* Is the function in the file's table?  Those registered after
 * REC_FUNCTIONS_MAX are not (a reader would refuse their indexes): their
 * events name them by id, as unregistered ones, and carry no value. */
static inline bool in_table(const elt_function_desc *fn)
{
	return fn && fn->index < REC_FUNCTIONS_MAX;
}

void binary_segment(struct binary_log *log, const elt_info *info)
{
	struct tbuf *b = tbuf_get(log->out);
	const elt_function_desc *fn = elt_get_function(info);
	const bool tabled = __builtin_expect(in_table(fn), 1);
	const elt_signature *sig = tabled ? fn->signature : NULL;
	struct event ev;
	struct run *run;
	uint8_t *p;
	void *k;

	ev.now = now_ns(log);
	if (!b)
		return;         /* out of memory: counted by tbuf */
	run = tbuf_user(b);
	ev.kind = elt_get_segment_kind(info);
	ev.function = tabled ? fn->index : REC_UNREGISTERED;
	if (__builtin_expect(!tabled, 0))
		ev.id = elt_get_function_id(info);
	ev.flags = 0;
	ev.continuation = 0;
	ev.value_total = 0;
	if (elt_get_invocation(info, &ev.inv) == ELT_OK) {
		if (ev.inv.flags & ELT_INVOCATION_ORPHAN)
			ev.flags |= REC_ORPHAN;
	} else {
		ev.flags |= REC_NO_INVOCATION;
	}
	/* the thread is known without an invocation too (0: not tracked) */
	ev.thread = ev.inv.thread ? ev.inv.thread : run->thread;
	if (sig && (ev.kind == ELT_SEGMENT_CALL || ev.kind == ELT_SEGMENT_RETURN)) {
		if (has_value(sig, ev.kind)) {
			put_valued(b, run, &ev, info);
			return;
		}
		ev.flags |= REC_VALUE;
	} else if (fn && (ev.kind == ELT_SEGMENT_RESUME || ev.kind == ELT_SEGMENT_SUSPEND) &&
		   elt_get_continuation(info, &k) == ELT_OK) {
		ev.continuation = (uintptr_t)k;
	}
	/* Never false: records are whole lines, so a write leaves the whole
	 * buffer, at least BINARY_MIN_BUFFER >= FIXED_MAX bytes. */
	if (!tbuf_reserve(b, FIXED_MAX))
		return;
	p = put_fields((uint8_t *)b->data + b->len, b, run, &ev);
	*p++ = REC_END;
	b->len = b->line_start = run->end = (size_t)((char *)p - b->data);
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
	char *rec;

	if (!in_table(fn))
		return;         /* its events name it by id */
	if (!(rec = function_record(fn, &size)))
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

/* The forking thread's signal mask, restored after (fork-signals.h);
 * under logs_lock. */
static fork_signal_mask fork_signals;

static void before_fork(void)
{
	fork_signal_mask signals;
	struct binary_log *log;

	fork_signals_block(&signals);
	pthread_mutex_lock(&logs_lock);
	fork_signals = signals;
	for (log = logs_list; log; log = log->next)
		pthread_mutex_lock(&log->lock);
}

static void after_fork_parent(void)
{
	fork_signal_mask signals = fork_signals;
	struct binary_log *log;

	for (log = logs_list; log; log = log->next)
		pthread_mutex_unlock(&log->lock);
	pthread_mutex_unlock(&logs_lock);
	fork_signals_restore(&signals);
}

/* Runs after tbuf's own handler (registered later), which has opened the
 * child's file and written its preamble: its records name the functions
 * it inherited again. */
static void after_fork_child(void)
{
	fork_signal_mask signals = fork_signals;
	struct binary_log *log;
	size_t i;

	for (log = logs_list; log; log = log->next) {
		if (tbuf_own_file(log->out))
			for (i = 0; i < log->ndefinitions; i++)
				put_definition(log, log->definitions[i],
					       log->definition_sizes[i]);
		pthread_mutex_unlock(&log->lock);
	}
	pthread_mutex_unlock(&logs_lock);
	fork_signals_restore(&signals);
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

/* tbuf_close writes it last: a reader tells a whole file from one cut off. */
static const char close_record[] = { (char)REC_CLOSE, REC_END, '\0' };
_Static_assert(REC_CLOSE != 0 && REC_END != 0, "the close record is a C string");

elt_status binary_open(struct binary_log **out, const char *path, size_t capacity)
{
	struct binary_log *log;
	char preamble[REC_PREAMBLE_MAX];
	elt_status st;

	if (capacity < BINARY_MIN_BUFFER)
		return elt_set_error(ELT_E_BAD_OPTION,
				     "buffer: at least %d bytes with format=binary, so that "
				     "every record goes out in one write", BINARY_MIN_BUFFER);
	log = calloc(1, sizeof(*log));
	if (!log)
		return elt_set_error(ELT_E_NO_MEMORY, "out of memory");
	pthread_mutex_init(&log->lock, NULL);
	plugin_clock_init();
	log->base_ns = plugin_clock_gettime_ns();
	log->base_ticks = plugin_ticks();
	/* %p stays for tbuf to expand: the pid of whichever process writes */
	snprintf(preamble, sizeof(preamble),
		 REC_MAGIC " %d\npid %%p\nabi %s\nbyte-order %s\n"
		 "clock %s\nbase %llu\nbuffer %zu\n" REC_PREAMBLE_END,
		 REC_VERSION, elt_abi_name(), little_endian() ? "little" : "big",
		 clock_line(), (unsigned long long)log->base_ns, capacity);
	st = tbuf_open(&log->out, "output", path, capacity, sizeof(struct run), preamble,
		       close_record);
	if (st != ELT_OK) {
		pthread_mutex_destroy(&log->lock);
		free(log);
		return st;
	}
	/* Two processes' records in one file could not be told apart. */
	tbuf_file_per_process(log->out);
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
