/*
 * timing: per function, how long logical invocations take from their
 * initial call to their final return (wall), how much of that they ran
 * (active: the sum of their segments) or waited (suspended), how long each
 * suspension waited for its resume (latency), how many segments and thread
 * hops they made: counts, means and p50/p90/p99/max, printed at exit as a
 * table, CSV or JSON.  With trace=FILE it also writes a Chrome Trace Event
 * file for Perfetto UI or speedscope.
 *
 *     ASYNCELT_PLUGINS='timing:format=table,trace=trace-%p.json'
 *
 * A template for plugins that measure invocations: the per-invocation
 * record lives in the invocation's slot (elt_get_invocation_slot), comes
 * from a per-thread pool and goes back to one at the final return;
 * statistics are histograms updated with relaxed atomics.  The callbacks
 * read the clock once, take no lock and do not allocate, except to refill
 * a thread's pool (a rare slow step: once per POOL_CHUNK invocations at
 * most).
 */
#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include "../common/tbuf.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern const elt_plugin elt_plugin_timing;      /* for the live invocations */

/* --- histograms ---------------------------------------------------------- */

/*
 * Log-linear: values below 8 exactly, then 8 buckets per power of two, so
 * a percentile is reported within 12.5% (as its bucket's upper bound,
 * never above the exact maximum).  496 buckets cover every uint64_t.
 */
#define SUB_BITS 3
#define SUB (1u << SUB_BITS)
#define BUCKETS (SUB + (64 - SUB_BITS) * SUB)

struct histogram {
	_Atomic uint64_t count, sum, max;
	_Atomic uint64_t bucket[BUCKETS];
};

static unsigned bucket_of(uint64_t v)
{
	unsigned e;

	if (v < SUB)
		return (unsigned)v;
	e = 63u - (unsigned)__builtin_clzll(v);         /* >= SUB_BITS */
	return SUB + (e - SUB_BITS) * SUB + (unsigned)((v >> (e - SUB_BITS)) & (SUB - 1));
}

/* The largest value that falls in bucket i. */
static uint64_t bucket_top(unsigned i)
{
	unsigned e, sub;

	if (i < SUB)
		return i;
	e = (i - SUB) / SUB + SUB_BITS;
	sub = (i - SUB) % SUB;
	return (((uint64_t)(SUB + sub + 1)) << (e - SUB_BITS)) - 1;
}

static void record(struct histogram *h, uint64_t v)
{
	uint64_t max = atomic_load_explicit(&h->max, memory_order_relaxed);

	atomic_fetch_add_explicit(&h->count, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->sum, v, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->bucket[bucket_of(v)], 1, memory_order_relaxed);
	while (v > max && !atomic_compare_exchange_weak_explicit(&h->max, &max, v,
			memory_order_relaxed, memory_order_relaxed))
		;
}

/* The value at fraction q (0.5 for p50) of the recorded ones. */
static uint64_t percentile(struct histogram *h, double q)
{
	uint64_t count = atomic_load(&h->count), max = atomic_load(&h->max);
	uint64_t rank = (uint64_t)(q * (double)count + 0.999999), seen = 0;
	unsigned i;

	for (i = 0; i < BUCKETS && count; i++) {
		seen += atomic_load_explicit(&h->bucket[i], memory_order_relaxed);
		if (seen >= rank)
			return bucket_top(i) < max ? bucket_top(i) : max;
	}
	return max;
}

/* --- per function -------------------------------------------------------- */

enum measure {
	WALL,           /* ns, per invocation: initial Enter to final Leave */
	ACTIVE,         /* ns, per invocation: the sum of its segments */
	SUSPENDED,      /* ns, per invocation: wall - active */
	LATENCY,        /* ns, per resume: since its suspension */
	SEGMENTS,       /* per invocation */
	HOPS,           /* per invocation: resumes on another thread */
	MEASURES
};

static const char *const measure_name[MEASURES] = {
	"wall_us", "active_us", "suspended_us", "latency_us", "segments", "hops",
};

struct function_times {
	const char *name;
	char *json_name;                /* escaped for the trace */
	_Atomic uint64_t calls, segments;
	struct histogram h[MEASURES];
	struct function_times *next;
};

/* One logical invocation, while it runs: the slot's content. */
struct invocation_record {
	struct function_times *f;
	uint64_t start_ns;              /* its initial Enter */
	uint64_t segment_start_ns;      /* the Enter of its current segment */
	uint64_t suspended_ns;          /* its last suspension */
	uint64_t active_ns;
	uint32_t segments, hops;
	uint32_t start_thread, thread;  /* of its first and current segment */
	bool running;                   /* inside a segment */
	bool flow_pending;              /* its last slice drew a flow_out */
	struct invocation_record *next_free;
};

/* --- per thread: a pool of records --------------------------------------- */

#define POOL_CHUNK 256

struct chunk {
	struct chunk *next;
	struct invocation_record records[POOL_CHUNK];
};

struct timing_thread {
	struct invocation_record *free;
	unsigned nfree;
	uint32_t named_tid;             /* thread_name written for this tid */
};

struct timing {
	FILE *out;
	char *out_pattern;              /* for a fork child's own report */
	int pid;
	enum { TABLE, CSV, JSON } format;
	struct tbuf_set *threads;       /* per-thread pools, and the trace */
	bool trace;
	uint64_t start_ns;
	pthread_mutex_t lock;           /* functions, the spare records, chunks */
	struct function_times *functions;
	struct function_times **tail;
	struct function_times unregistered;
	struct invocation_record *spare;
	unsigned nspare;
	struct chunk *chunks;
	_Atomic uint64_t no_memory;     /* invocations not timed: no record */
};

/* Refills a thread's empty pool from the spare records or a new chunk
 * (the slow step: a lock, maybe malloc). */
static void refill(struct timing *t, struct timing_thread *u)
{
	unsigned i;

	pthread_mutex_lock(&t->lock);
	if (!t->spare) {
		struct chunk *c = calloc(1, sizeof(*c));

		if (c) {
			c->next = t->chunks;
			t->chunks = c;
			for (i = 0; i < POOL_CHUNK; i++) {
				c->records[i].next_free = t->spare;
				t->spare = &c->records[i];
			}
			t->nspare += POOL_CHUNK;
		}
	}
	for (i = 0; i < POOL_CHUNK && t->spare; i++) {
		struct invocation_record *r = t->spare;

		t->spare = r->next_free;
		t->nspare--;
		r->next_free = u->free;
		u->free = r;
		u->nfree++;
	}
	pthread_mutex_unlock(&t->lock);
}

static struct invocation_record *new_record(struct timing *t, struct timing_thread *u)
{
	struct invocation_record *r;

	if (!u->free)
		refill(t, u);
	r = u->free;
	if (!r) {
		atomic_fetch_add_explicit(&t->no_memory, 1, memory_order_relaxed);
		return NULL;
	}
	u->free = r->next_free;
	u->nfree--;
	memset(r, 0, sizeof(*r));
	return r;
}

/* Records are freed where invocations end, often not where they began:
 * a thread that gathers too many gives a chunk's worth back. */
static void free_record(struct timing *t, struct timing_thread *u,
			struct invocation_record *r)
{
	unsigned i;

	r->next_free = u->free;
	u->free = r;
	if (++u->nfree < 2 * POOL_CHUNK)
		return;
	pthread_mutex_lock(&t->lock);
	for (i = 0; i < POOL_CHUNK; i++) {
		r = u->free;
		u->free = r->next_free;
		r->next_free = t->spare;
		t->spare = r;
	}
	u->nfree -= POOL_CHUNK;
	t->nspare += POOL_CHUNK;
	pthread_mutex_unlock(&t->lock);
}

/* --- the clock ------------------------------------------------------------ */

static uint64_t now_ns(void)
{
	struct timespec ts;

	/* CLOCK_MONOTONIC is read in the vDSO on Linux: no system call */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* --- the trace (Chrome Trace Event JSON, one event a line) --------------- */

/* Microseconds with nanosecond digits: 12.345 */
static void put_us(struct tbuf *b, uint64_t ns)
{
	char frac[4] = { '.', (char)('0' + ns / 100 % 10), (char)('0' + ns / 10 % 10),
			 (char)('0' + ns % 10) };

	tbuf_put_u64(b, ns / 1000);
	tbuf_put(b, frac, sizeof(frac));
}

/* ,{"ph":"X","name":"...","pid":P,"tid":T,"ts":... : the common head of
 * an event (the file starts with "[" and a first event: see timing_init). */
static void event_head(struct timing *t, struct tbuf *b, char ph, const char *name,
		       uint32_t tid, uint64_t ts_ns)
{
	tbuf_put_str(b, ",{\"ph\":\"");
	tbuf_put_char(b, ph);
	tbuf_put_str(b, "\",\"name\":\"");
	tbuf_put_str(b, name);
	tbuf_put_str(b, "\",\"pid\":");
	tbuf_put_u64(b, (uint64_t)tbuf_pid(t->threads));
	tbuf_put_str(b, ",\"tid\":");
	tbuf_put_u64(b, tid);
	tbuf_put_str(b, ",\"ts\":");
	put_us(b, ts_ns - t->start_ns);
}

static void name_thread(struct timing *t, struct tbuf *b, struct timing_thread *u,
			uint32_t tid)
{
	if (u->named_tid == tid)
		return;
	u->named_tid = tid;
	event_head(t, b, 'M', "thread_name", tid, t->start_ns);
	tbuf_put_str(b, ",\"args\":{\"name\":\"thread ");
	tbuf_put_u64(b, tid);
	tbuf_put_str(b, "\"}}");
	tbuf_end_line(b);
}

/* One physical segment: an X slice on its thread, with a flow arrow in
 * from the suspension it resumes and out to the resume it waits for, both
 * bound by the invocation's id. */
static void trace_segment(struct timing *t, struct tbuf *b, struct invocation_record *r,
			  uint64_t id, uint64_t end_ns, bool flow_in, bool flow_out,
			  bool incomplete)
{
	event_head(t, b, 'X', r->f->json_name, r->thread, r->segment_start_ns);
	tbuf_put_str(b, ",\"dur\":");
	put_us(b, end_ns - r->segment_start_ns);
	tbuf_put_str(b, ",\"cat\":\"segment\",\"args\":{\"invocation\":");
	tbuf_put_u64(b, id);
	tbuf_put_str(b, ",\"segment\":");
	tbuf_put_u64(b, r->segments - 1);
	tbuf_put_str(b, incomplete ? ",\"incomplete\":true}" : "}");
	if (flow_in || flow_out) {
		tbuf_put_str(b, ",\"bind_id\":");
		tbuf_put_u64(b, id);
	}
	if (flow_in)
		tbuf_put_str(b, ",\"flow_in\":true");
	if (flow_out)
		tbuf_put_str(b, ",\"flow_out\":true");
	tbuf_put_char(b, '}');
	tbuf_end_line(b);
}

/* The invocation's own async track: b at its initial call, e at its end. */
static void trace_invocation(struct timing *t, struct tbuf *b, struct invocation_record *r,
			     uint64_t id, uint64_t end_ns, bool incomplete)
{
	event_head(t, b, 'b', r->f->json_name, r->start_thread, r->start_ns);
	tbuf_put_str(b, ",\"cat\":\"invocation\",\"id\":");
	tbuf_put_u64(b, id);
	tbuf_put_char(b, '}');
	tbuf_end_line(b);
	event_head(t, b, 'e', r->f->json_name, r->thread, end_ns);
	tbuf_put_str(b, ",\"cat\":\"invocation\",\"id\":");
	tbuf_put_u64(b, id);
	tbuf_put_str(b, ",\"args\":{\"segments\":");
	tbuf_put_u64(b, r->segments);
	tbuf_put_str(b, ",\"hops\":");
	tbuf_put_u64(b, r->hops);
	tbuf_put_str(b, incomplete ? ",\"incomplete\":true}}" : "}}");
	tbuf_end_line(b);
}

/* --- the callbacks -------------------------------------------------------- */

struct segment {
	struct timing *t;
	struct timing_thread *u;
	struct tbuf *b;
	elt_invocation inv;
	void **slot;
};

/* What every callback needs; false when the segment cannot be timed. */
static bool segment_of(const elt_info *info, struct timing *t, struct segment *s)
{
	s->t = t;
	s->b = tbuf_get(t->threads);
	if (!s->b)
		return false;
	s->u = tbuf_user(s->b);
	s->slot = elt_get_invocation_slot(info);
	return s->slot && elt_get_invocation(info, &s->inv) == ELT_OK;
}

static struct function_times *times_of(struct timing *t, const elt_info *info)
{
	struct function_times *f = elt_get_function_data(info);

	return f ? f : &t->unregistered;
}

static void timing_enter(const elt_info *info, void *state)
{
	struct timing *t = state;
	uint64_t now = now_ns();
	struct segment s;
	struct invocation_record *r;

	if (!segment_of(info, t, &s))
		return;
	r = *s.slot;
	if (!r) {       /* its initial call (or a resume never seen suspending) */
		r = new_record(t, s.u);
		if (!r)
			return;
		*s.slot = r;
		r->f = times_of(t, info);
		r->start_ns = now;
		r->start_thread = s.inv.thread;
		atomic_fetch_add_explicit(&r->f->calls, 1, memory_order_relaxed);
	} else {        /* a resume */
		if (!r->running)        /* its suspension's Leave was seen */
			record(&r->f->h[LATENCY], now - r->suspended_ns);
		r->hops += s.inv.thread != s.inv.previous_thread;
	}
	atomic_fetch_add_explicit(&r->f->segments, 1, memory_order_relaxed);
	r->segments++;
	r->segment_start_ns = now;
	r->thread = s.inv.thread;
	r->running = true;
}

/* The end of a segment: a suspension, a final return or a tail call. */
static void timing_leave(const elt_info *info, void *state)
{
	struct timing *t = state;
	uint64_t now = now_ns();
	struct segment s;
	struct invocation_record *r;
	bool suspends = elt_get_segment_kind(info) == ELT_SEGMENT_SUSPEND;
	bool flow_in;

	if (!segment_of(info, t, &s) || !(r = *s.slot))
		return;         /* began before the plugin was added */
	r->active_ns += now - r->segment_start_ns;
	r->running = false;
	flow_in = r->flow_pending;
	r->flow_pending = suspends;
	if (t->trace) {
		name_thread(t, s.b, s.u, r->thread);
		trace_segment(t, s.b, r, s.inv.id, now, flow_in, suspends, false);
	}
	if (suspends) {
		r->suspended_ns = now;
		return;
	}
	record(&r->f->h[WALL], now - r->start_ns);
	record(&r->f->h[ACTIVE], r->active_ns);
	record(&r->f->h[SUSPENDED], now - r->start_ns - r->active_ns);
	record(&r->f->h[SEGMENTS], r->segments);
	record(&r->f->h[HOPS], r->hops);
	if (t->trace)
		trace_invocation(t, s.b, r, s.inv.id, now, false);
	*s.slot = NULL;
	free_record(t, s.u, r);
}

static void timing_thread_exit(void *state)
{
	struct timing *t = state;

	tbuf_thread_exit(t->threads);
}

/* --- set-up --------------------------------------------------------------- */

static char *json_escaped(const char *name)
{
	size_t n = strlen(name), i, at = 0;
	char *out = malloc(6 * n + 1);

	if (!out)
		return NULL;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c == '"' || c == '\\')
			out[at++] = '\\';
		if (c < 0x20)
			at += (size_t)sprintf(out + at, "\\u%04x", c);
		else
			out[at++] = (char)c;
	}
	out[at] = '\0';
	return out;
}

static void *timing_function_added(void *state, const elt_function_desc *fn)
{
	struct timing *t = state;
	struct function_times *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;    /* its segments count as unregistered */
	f->name = fn->name;
	f->json_name = json_escaped(fn->name);
	if (!f->json_name) {
		free(f);
		return NULL;
	}
	pthread_mutex_lock(&t->lock);
	*t->tail = f;
	t->tail = &f->next;
	pthread_mutex_unlock(&t->lock);
	return f;
}

static elt_status parse_options(struct timing *t, const char *options, char **trace)
{
	const char *cursor = options;
	elt_option opt;
	elt_status st;

	while ((st = elt_option_next(&cursor, &opt)) == ELT_OK && opt.key) {
		char **path = NULL;

		if (elt_option_is(&opt, "output"))
			path = &t->out_pattern;
		else if (elt_option_is(&opt, "trace"))
			path = trace;
		if (path) {
			free(*path);
			*path = strndup(opt.value, opt.value_len);
			if (!*path)
				return elt_set_error(ELT_E_NO_MEMORY, "out of memory");
		} else if (elt_option_is(&opt, "format")) {
			static const char *const names[] = { "table", "csv", "json" };
			unsigned i;

			for (i = 0; i < 3; i++)
				if (strlen(names[i]) == opt.value_len &&
				    memcmp(names[i], opt.value, opt.value_len) == 0)
					break;
			if (i == 3)
				return elt_set_error(ELT_E_BAD_OPTION,
						     "format: \"%.*s\" is not table, csv or json",
						     (int)opt.value_len, opt.value);
			t->format = i == 0 ? TABLE : i == 1 ? CSV : JSON;
		} else {
			return elt_set_error(ELT_E_BAD_OPTION,
					     "unknown option \"%.*s\" (known: output, format, trace)",
					     (int)opt.key_len, opt.key);
		}
	}
	return st;
}

/* Opens the report file (a fork child opens its own when the name has %p). */
static elt_status open_report(struct timing *t)
{
	char path[4096];

	t->pid = (int)getpid();
	if (!t->out_pattern) {
		t->out = stderr;
		return ELT_OK;
	}
	tbuf_expand_path(path, sizeof(path), t->out_pattern);
	t->out = fopen(path, "w");
	if (!t->out)
		return elt_set_error(ELT_E_IO, "output: cannot write %s: %s", path,
				     strerror(errno));
	return ELT_OK;
}

static void free_timing(struct timing *t)
{
	struct function_times *f, *next;
	struct chunk *c, *cnext;

	for (f = t->functions; f; f = next) {
		next = f->next;
		free(f->json_name);
		free(f);
	}
	for (c = t->chunks; c; c = cnext) {
		cnext = c->next;
		free(c);
	}
	if (t->out && t->out != stderr)
		fclose(t->out);
	free(t->out_pattern);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

/* The first event opens the array, so that every later one starts with a
 * comma; tid 0 holds the marks of invocations still suspended at exit. */
#define TRACE_HEADER "[{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%p,\"tid\":0," \
	"\"args\":{\"name\":\"asyncelt timing\"}}\n" \
	",{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%p,\"tid\":0," \
	"\"args\":{\"name\":\"suspended at exit\"}}\n"

static elt_status timing_init(const char *options, void **state)
{
	struct timing *t = calloc(1, sizeof(*t));
	char *trace = NULL;
	elt_status st;

	if (!t)
		return elt_set_error(ELT_E_NO_MEMORY, "out of memory");
	pthread_mutex_init(&t->lock, NULL);
	t->tail = &t->functions;
	t->unregistered.name = "(unregistered)";
	t->unregistered.json_name = NULL;
	st = parse_options(t, options, &trace);
	if (st == ELT_OK)
		st = open_report(t);
	if (st == ELT_OK) {
		t->trace = trace != NULL;
		st = tbuf_open(&t->threads, "trace", trace, TBUF_DEFAULT_CAPACITY,
			       sizeof(struct timing_thread), trace ? TRACE_HEADER : NULL,
			       trace ? "]\n" : NULL);
	}
	free(trace);
	if (st != ELT_OK) {
		free_timing(t);
		return st;
	}
	t->unregistered.json_name = (char *)"(unregistered)";
	t->start_ns = now_ns();
	*state = t;
	return ELT_OK;
}

/* --- the report ----------------------------------------------------------- */

#define LOAD(x) atomic_load_explicit(&(x), memory_order_relaxed)

/* Times are kept in ns and shown in us; counts as they are. */
static double shown(enum measure m, uint64_t v)
{
	return m <= LATENCY ? (double)v / 1000.0 : (double)v;
}

struct live_count {
	struct timing *t;
	uint64_t now;
	unsigned long long n;
};

/* An invocation that never completed: listed, and closed in the trace. */
static void report_live(const elt_invocation *inv, const elt_function_desc *fn,
			void *slot, void *arg)
{
	struct live_count *lc = arg;
	struct invocation_record *r = slot;
	struct timing *t = lc->t;
	struct tbuf *b;

	if (lc->n++ < 20 && t->format == TABLE)
		fprintf(t->out, "  invocation %llu of %s: %u segments, %s\n",
			(unsigned long long)inv->id, fn ? fn->name : "(unregistered)",
			r ? r->segments : 0,
			!r ? "not timed" : r->running ? "still running" : "suspended");
	if (!r || !t->trace || !(b = tbuf_get(t->threads)))
		return;
	if (r->running)
		trace_segment(t, b, r, inv->id, lc->now, r->flow_pending, false, true);
	else if (r->flow_pending) {
		/* its arrow must end somewhere: a mark at exit on thread 0 */
		r->segment_start_ns = lc->now;
		r->thread = 0;
		r->segments++;
		trace_segment(t, b, r, inv->id, lc->now, true, false, true);
	}
	trace_invocation(t, b, r, inv->id, lc->now, true);
}

static void print_table(struct timing *t, struct function_times *f)
{
	int m;

	fprintf(t->out, "%-24s %9llu %9llu\n", f->name, (unsigned long long)LOAD(f->calls),
		(unsigned long long)LOAD(f->segments));
	for (m = 0; m < MEASURES; m++) {
		struct histogram *h = &f->h[m];
		uint64_t n = LOAD(h->count);

		if (!n)
			continue;
		fprintf(t->out, "  %-14s %9llu %12.3f %12.3f %12.3f %12.3f %12.3f\n",
			measure_name[m], (unsigned long long)n,
			shown(m, LOAD(h->sum)) / (double)n, shown(m, percentile(h, 0.50)),
			shown(m, percentile(h, 0.90)), shown(m, percentile(h, 0.99)),
			shown(m, LOAD(h->max)));
	}
}

static void print_csv(struct timing *t, struct function_times *f)
{
	const char *c;
	int m;

	for (m = 0; m < MEASURES; m++) {
		struct histogram *h = &f->h[m];
		uint64_t n = LOAD(h->count);

		/* a CSV field in quotes, its quotes doubled */
		fputc('"', t->out);
		for (c = f->name; *c; c++)
			fputs(*c == '"' ? "\"\"" : (char[2]){ *c, 0 }, t->out);
		fprintf(t->out, "\",%llu,%llu,%s,%llu,%.3f,%.3f,%.3f,%.3f,%.3f\n",
			(unsigned long long)LOAD(f->calls),
			(unsigned long long)LOAD(f->segments), measure_name[m],
			(unsigned long long)n, n ? shown(m, LOAD(h->sum)) / (double)n : 0.0,
			shown(m, percentile(h, 0.50)), shown(m, percentile(h, 0.90)),
			shown(m, percentile(h, 0.99)), shown(m, LOAD(h->max)));
	}
}

static void print_json(struct timing *t, struct function_times *f, bool first)
{
	int m;

	fprintf(t->out, "%s\n  {\"function\": \"%s\", \"calls\": %llu, \"segments\": %llu",
		first ? "" : ",", f->json_name, (unsigned long long)LOAD(f->calls),
		(unsigned long long)LOAD(f->segments));
	for (m = 0; m < MEASURES; m++) {
		struct histogram *h = &f->h[m];
		uint64_t n = LOAD(h->count);

		fprintf(t->out, ",\n   \"%s\": {\"count\": %llu, \"mean\": %.3f, \"p50\": %.3f, "
			"\"p90\": %.3f, \"p99\": %.3f, \"max\": %.3f}", measure_name[m],
			(unsigned long long)n, n ? shown(m, LOAD(h->sum)) / (double)n : 0.0,
			shown(m, percentile(h, 0.50)), shown(m, percentile(h, 0.90)),
			shown(m, percentile(h, 0.99)), shown(m, LOAD(h->max)));
	}
	fprintf(t->out, "}");
}

static void report(struct timing *t, struct live_count *lc)
{
	struct function_times *f;
	bool first = true;

	if (t->format == TABLE) {
		fprintf(t->out, "asyncelt timing report (times in us; percentiles "
			"within 12.5%%, never above max)\n");
		fprintf(t->out, "%-24s %9s %9s\n  %-14s %9s %12s %12s %12s %12s %12s\n",
			"function", "calls", "segments", "measure", "count", "mean", "p50",
			"p90", "p99", "max");
	} else if (t->format == CSV) {
		fprintf(t->out, "function,calls,segments,measure,count,mean,p50,p90,p99,max\n");
	} else {
		fprintf(t->out, "{\"functions\": [");
	}
	for (f = t->functions; ; f = f->next) {
		if (!f)
			f = &t->unregistered;
		if (LOAD(f->segments)) {
			if (t->format == TABLE)
				print_table(t, f);
			else if (t->format == CSV)
				print_csv(t, f);
			else
				print_json(t, f, first);
			first = false;
		}
		if (f == &t->unregistered)
			break;
	}
	if (t->format == TABLE)
		fprintf(t->out, "incomplete invocations (never returned):\n");
	elt_foreach_live_invocation(&elt_plugin_timing, report_live, lc);
	if (t->format == TABLE && lc->n > 20)
		fprintf(t->out, "  ... %llu more\n", lc->n - 20);
	if (t->format == TABLE)
		fprintf(t->out, "  total: %llu\n", lc->n);
	else if (t->format == JSON)
		fprintf(t->out, "\n], \"incomplete\": %llu}\n", lc->n);
	if (LOAD(t->no_memory))
		fprintf(t->format == TABLE ? t->out : stderr,
			"timing: %llu invocations not timed (out of memory)\n",
			(unsigned long long)LOAD(t->no_memory));
}

static elt_status timing_fini(void *state)
{
	struct timing *t = state;
	struct live_count lc = { t, now_ns(), 0 };
	elt_status st = ELT_OK, closed;

	/* A fork child reports to its own file when the name has %p. */
	if (t->out_pattern && t->pid != (int)getpid() && strstr(t->out_pattern, "%p")) {
		fclose(t->out);
		if (open_report(t) != ELT_OK) {
			elt_report("timing: %s", elt_last_error());
			t->out = stderr;
		}
	}
	report(t, &lc);
	if (fflush(t->out) != 0)
		st = elt_set_error(ELT_E_IO, "timing: the report could not be written: %s",
				   strerror(errno));
	closed = tbuf_close(t->threads);
	if (closed != ELT_OK) {
		elt_report("timing: trace: %s", elt_last_error());
		st = st ? st : closed;
	}
	free_timing(t);
	return st;
}

ELT_PLUGIN_DEFINE(timing,
	.description = "wall, active and suspended time per logical invocation; Chrome traces",
	.init = timing_init,
	.enter = timing_enter,
	.leave = timing_leave,
	.tailcall = timing_leave,
	.function_added = timing_function_added,
	.thread_exit = timing_thread_exit,
	.fini = timing_fini);
