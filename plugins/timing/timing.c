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
#include "histogram.h"
#include "trace.h"

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

struct measures {
	struct histogram h[MEASURES];
};

struct function_times {
	const char *name;
	char *json_name;                /* escaped for the trace */
	_Atomic uint64_t calls, segments;
	struct measures *_Atomic m;     /* from its first segment on */
	struct function_times *next;
};

/*
 * A function's histograms (12 KB) are allocated at its first segment,
 * not at registration: most functions a JIT registers never run.  This is
 * a rare slow step (once per function); two threads racing for it keep
 * the first allocation.
 */
static struct measures *measures_of(struct function_times *f)
{
	struct measures *m = atomic_load_explicit(&f->m, memory_order_acquire);
	struct measures *fresh;

	if (m)
		return m;
	fresh = calloc(1, sizeof(*fresh));
	if (fresh && !atomic_compare_exchange_strong(&f->m, &m, fresh)) {
		free(fresh);
		return m;
	}
	return fresh;
}

/* One logical invocation, while it runs: the slot's content. */
struct invocation_record {
	struct function_times *f;
	struct measures *m;             /* f's */
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
	if (!r)
		return NULL;
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

/* --- the trace ----------------------------------------------------------- */

/* The slice of the segment r just ended (or that exit cut short). */
static void trace_segment(struct timing *t, struct tbuf *b, struct invocation_record *r,
			  uint64_t id, uint64_t end_ns, bool flow_in, bool flow_out,
			  bool incomplete)
{
	struct trace_slice slice = {
		.name = r->f->json_name, .tid = r->thread,
		.start_ns = r->segment_start_ns - t->start_ns, .end_ns = end_ns - t->start_ns,
		.invocation = id, .segment = r->segments - 1,
		.flow_in = flow_in, .flow_out = flow_out, .incomplete = incomplete,
	};

	trace_slice(b, tbuf_pid(t->threads), &slice);
}

/* The invocation's own async track, from its initial call to its end. */
static void trace_invocation(struct timing *t, struct tbuf *b, struct invocation_record *r,
			     uint64_t id, uint64_t end_ns, bool incomplete)
{
	struct trace_span span = {
		.name = r->f->json_name, .invocation = id,
		.begin_tid = r->start_thread, .end_tid = r->thread,
		.begin_ns = r->start_ns - t->start_ns, .end_ns = end_ns - t->start_ns,
		.segments = r->segments, .hops = r->hops, .active_ns = r->active_ns,
		.incomplete = incomplete,
	};

	trace_span(b, tbuf_pid(t->threads), &span);
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
		struct function_times *f = times_of(t, info);
		struct measures *m = measures_of(f);

		r = m ? new_record(t, s.u) : NULL;
		if (!r) {
			atomic_fetch_add_explicit(&t->no_memory, 1, memory_order_relaxed);
			return;
		}
		*s.slot = r;
		r->f = f;
		r->m = m;
		r->start_ns = now;
		r->start_thread = s.inv.thread;
		atomic_fetch_add_explicit(&r->f->calls, 1, memory_order_relaxed);
	} else {        /* a resume */
		if (!r->running)        /* its suspension's Leave was seen */
			histogram_record(&r->m->h[LATENCY], now - r->suspended_ns);
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
		if (s.u->named_tid != r->thread) {      /* a new thread, or a reused buffer */
			s.u->named_tid = r->thread;
			trace_thread_name(s.b, tbuf_pid(t->threads), r->thread);
		}
		trace_segment(t, s.b, r, s.inv.id, now, flow_in, suspends, false);
	}
	if (suspends) {
		r->suspended_ns = now;
		return;
	}
	histogram_record(&r->m->h[WALL], now - r->start_ns);
	histogram_record(&r->m->h[ACTIVE], r->active_ns);
	histogram_record(&r->m->h[SUSPENDED], now - r->start_ns - r->active_ns);
	histogram_record(&r->m->h[SEGMENTS], r->segments);
	histogram_record(&r->m->h[HOPS], r->hops);
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

#define PATH_SIZE 4096

static elt_status parse_options(struct timing *t, const char *options, char *output,
				char *trace)
{
	const char *cursor = options;
	elt_option opt;
	elt_status st;

	while ((st = elt_option_next(&cursor, &opt)) == ELT_OK && opt.key) {
		char *path = elt_option_is(&opt, "output") ? output
			   : elt_option_is(&opt, "trace") ? trace : NULL;

		if (path) {
			if (opt.value_len == 0 || opt.value_len >= PATH_SIZE)
				return elt_set_error(ELT_E_BAD_OPTION,
						     "%.*s: a file name of 1 to %d bytes",
						     (int)opt.key_len, opt.key, PATH_SIZE - 1);
			memcpy(path, opt.value, opt.value_len);
			path[opt.value_len] = '\0';
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
		free(atomic_load(&f->m));
		free(f);
	}
	free(atomic_load(&t->unregistered.m));
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

static elt_status timing_init(const char *options, void **state)
{
	struct timing *t = calloc(1, sizeof(*t));
	char output[PATH_SIZE] = "", trace[PATH_SIZE] = "";
	elt_status st;

	if (!t)
		return elt_set_error(ELT_E_NO_MEMORY, "out of memory");
	pthread_mutex_init(&t->lock, NULL);
	t->tail = &t->functions;
	t->unregistered.name = "(unregistered)";
	t->unregistered.json_name = NULL;
	st = parse_options(t, options, output, trace);
	if (st == ELT_OK && *output && !(t->out_pattern = strdup(output)))
		st = elt_set_error(ELT_E_NO_MEMORY, "out of memory");
	if (st == ELT_OK)
		st = open_report(t);
	if (st == ELT_OK) {
		t->trace = *trace != '\0';
		st = tbuf_open(&t->threads, "trace", t->trace ? trace : NULL,
			       TBUF_DEFAULT_CAPACITY, sizeof(struct timing_thread),
			       t->trace ? TRACE_HEADER : NULL, t->trace ? TRACE_FOOTER : NULL);
	}
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
		fprintf(t->out, "  invocation %llu of %s: %s, segments: %u\n",
			(unsigned long long)inv->id, fn ? fn->name : "(unregistered)",
			!r ? "not timed" : r->running ? "still running" : "suspended",
			r ? r->segments : 0);
	if (!r || !t->trace || !(b = tbuf_get(t->threads)))
		return;
	/*
	 * What is still open goes on a thread of its own, "open at exit":
	 * there every slice ends now, so they nest, whereas on its own thread
	 * a segment left running by an unwind would overlap its caller's.
	 */
	if (r->running) {
		r->thread = TRACE_EXIT_TID;
		trace_segment(t, b, r, inv->id, lc->now, r->flow_pending, false, true);
		r->active_ns += lc->now - r->segment_start_ns;
	} else if (r->flow_pending) {
		/* its arrow must end somewhere: a mark */
		r->segment_start_ns = lc->now;
		r->thread = TRACE_EXIT_TID;
		r->segments++;
		trace_segment(t, b, r, inv->id, lc->now, true, false, true);
	}
	trace_invocation(t, b, r, inv->id, lc->now, true);
}

/* One measure of one function, as the report shows it. */
struct summary {
	unsigned long long count;
	double mean, p50, p90, p99, max;
};

static struct summary summarize(struct function_times *f, enum measure m)
{
	struct measures *ms = atomic_load(&f->m);
	struct histogram *h = ms ? &ms->h[m] : NULL;
	struct summary s = { 0, 0, 0, 0, 0, 0 };

	if (!h || !(s.count = LOAD(h->count)))
		return s;
	s.mean = shown(m, LOAD(h->sum)) / (double)s.count;
	s.p50 = shown(m, histogram_percentile(h, 0.50));
	s.p90 = shown(m, histogram_percentile(h, 0.90));
	s.p99 = shown(m, histogram_percentile(h, 0.99));
	s.max = shown(m, LOAD(h->max));
	return s;
}

static void print_table(struct timing *t, struct function_times *f)
{
	int m;

	fprintf(t->out, "%-24s %9llu %9llu\n", f->name, (unsigned long long)LOAD(f->calls),
		(unsigned long long)LOAD(f->segments));
	for (m = 0; m < MEASURES; m++) {
		struct summary s = summarize(f, m);

		if (s.count)
			fprintf(t->out, "  %-14s %9llu %12.3f %12.3f %12.3f %12.3f %12.3f\n",
				measure_name[m], s.count, s.mean, s.p50, s.p90, s.p99, s.max);
	}
}

static void print_csv(struct timing *t, struct function_times *f)
{
	const char *c;
	int m;

	for (m = 0; m < MEASURES; m++) {
		struct summary s = summarize(f, m);

		/* a CSV field in quotes, its quotes doubled */
		fputc('"', t->out);
		for (c = f->name; *c; c++) {
			if (*c == '"')
				fputc('"', t->out);
			fputc(*c, t->out);
		}
		fprintf(t->out, "\",%llu,%llu,%s,%llu,%.3f,%.3f,%.3f,%.3f,%.3f\n",
			(unsigned long long)LOAD(f->calls), (unsigned long long)LOAD(f->segments),
			measure_name[m], s.count, s.mean, s.p50, s.p90, s.p99, s.max);
	}
}

static void print_json(struct timing *t, struct function_times *f, bool first)
{
	int m;

	fprintf(t->out, "%s\n  {\"function\": \"%s\", \"calls\": %llu, \"segments\": %llu",
		first ? "" : ",", f->json_name, (unsigned long long)LOAD(f->calls),
		(unsigned long long)LOAD(f->segments));
	for (m = 0; m < MEASURES; m++) {
		struct summary s = summarize(f, m);

		fprintf(t->out, ",\n   \"%s\": {\"count\": %llu, \"mean\": %.3f, \"p50\": %.3f, "
			"\"p90\": %.3f, \"p99\": %.3f, \"max\": %.3f}", measure_name[m],
			s.count, s.mean, s.p50, s.p90, s.p99, s.max);
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
