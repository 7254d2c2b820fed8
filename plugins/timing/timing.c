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
 * record is the invocation storage the library keeps with each invocation
 * (invocation_storage, elt_get_invocation_storage), zeroed at its initial
 * call: nothing to allocate or free per invocation.  Each thread keeps
 * what it measured as samples in its own buffer, merged into the
 * functions' histograms under the plugin's lock once per
 * SAMPLES_PER_THREAD samples, at thread exit and at fini: no atomic
 * read-modify-write and no shared cache line per invocation.  The
 * callbacks read the clock (clock.h: the TSC where it is invariant) once,
 * and do not allocate but in a rare slow step (a function's histograms,
 * once), with mmap, which a signal handler may call (doc/runtime.md).
 */
#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include "../common/clock.h"
#include "../common/fork-lock.h"
#include "../common/pages.h"
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
#include <sys/stat.h>
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
	/* The wall time, equal to the active time, of the invocations of
	 * one segment (no suspension, no hop): most of them, recorded once
	 * and folded into WALL, ACTIVE, SUSPENDED, SEGMENTS and HOPS at the
	 * report (fold_one_segment). */
	struct histogram one_segment;
};

/* Updated by merge(), under the plugin's lock. */
struct function_times {
	const char *name;
	char *json_name;                /* escaped for the trace */
	uint64_t calls, segments;
	struct measures *m;             /* from its first merged sample on */
	struct function_times *next;
};

/*
 * A function's histograms (21 KB) are allocated when its first sample is
 * merged, not at registration: most functions a JIT registers never run.
 * Under the plugin's lock.
 */
static struct measures *measures_of(struct function_times *f)
{
	if (!f->m)
		f->m = pages_map(sizeof(*f->m));
	return f->m;
}

/* One logical invocation, while it runs: its storage, zeroed at its
 * initial call (segments == 0 until then).  Times in ns since the plugin
 * started, each converted from one clock reading, so that differences add
 * up exactly (the trace's slices to its active time, active and suspended
 * to wall). */
struct invocation_record {
	struct function_times *f;
	uint64_t start;                 /* its initial Enter */
	uint64_t segment_start;         /* the Enter of its current segment */
	uint64_t suspended;             /* its last suspension */
	uint64_t active;
	uint32_t segments, hops;
	uint32_t start_thread, thread;  /* of its first and current segment */
	bool running;                   /* inside a segment */
	bool flow_pending;              /* its last slice drew a flow_out */
};

/* What a thread measured, waiting to be merged: an invocation's start,
 * its end, a resume's latency, or an invocation abandoned.  Durations in
 * ns. */
struct sample {
	struct function_times *f;       /* NULL: abandoned, never timed */
	enum { SAMPLE_CALL, SAMPLE_RETURN, SAMPLE_RESUME, SAMPLE_ABANDONED } kind;
	uint32_t segments, hops;        /* SAMPLE_RETURN; segments: ABANDONED */
	uint64_t wall, active;          /* SAMPLE_RETURN; SAMPLE_RESUME: wall */
};

#define SAMPLES_PER_THREAD 256

struct timing_thread {
	uint32_t named_tid;             /* thread_name written for this tid */
	unsigned long named_process;    /* and for this tbuf_process() */
	uint64_t leave_ns;              /* with a trace: this thread's last Leave */
	unsigned nsamples;
	struct sample samples[SAMPLES_PER_THREAD];
};

struct timing {
	FILE *out;
	char *out_pattern;              /* for a fork child's own report */
	int pid;
	enum { TABLE, CSV, JSON } format;
	struct tbuf_set *threads;       /* per-thread samples, and the trace */
	bool trace;
	uint64_t start;                 /* clock ticks when it started */
	struct fork_lock lock;          /* functions and their measures */
	struct function_times *functions;
	struct function_times **tail;
	struct function_times unregistered;
	uint64_t abandoned;             /* merged from the samples */
	_Atomic uint64_t no_memory;     /* invocations not timed: no storage,
					   or samples with no histograms */
};

/* Now, in ns since the plugin started. */
static inline uint64_t now_ns(const struct timing *t)
{
	return plugin_ticks_to_ns(plugin_ticks() - t->start);
}

/* --- merging a thread's samples ----------------------------------------- */

static void merge_locked(struct timing *t, struct timing_thread *u)
{
	unsigned i;

	for (i = 0; i < u->nsamples; i++) {
		const struct sample *x = &u->samples[i];
		struct measures *m;

		if (x->kind == SAMPLE_CALL) {
			x->f->calls++;
			continue;
		}
		if (x->kind == SAMPLE_ABANDONED) {
			t->abandoned++;
			if (x->f)
				x->f->segments += x->segments;
			continue;
		}
		m = measures_of(x->f);
		if (!m) {
			atomic_fetch_add_explicit(&t->no_memory, 1, memory_order_relaxed);
			continue;
		}
		if (x->kind == SAMPLE_RESUME) {
			histogram_record(&m->h[LATENCY], x->wall);
			continue;
		}
		x->f->segments += x->segments;
		if (x->segments == 1) {         /* active == wall, no hop */
			histogram_record(&m->one_segment, x->wall);
			continue;
		}
		histogram_record(&m->h[WALL], x->wall);
		histogram_record(&m->h[ACTIVE], x->active);
		histogram_record(&m->h[SUSPENDED], x->wall - x->active);
		histogram_record(&m->h[SEGMENTS], x->segments);
		histogram_record(&m->h[HOPS], x->hops);
	}
	u->nsamples = 0;
}

/* What merge_locked recorded once for the invocations of one segment,
 * into every measure, before the histograms are read. */
static void fold_one_segment(struct function_times *f)
{
	struct histogram *once = f->m ? &f->m->one_segment : NULL;

	if (!once || !once->count)
		return;
	histogram_add(&f->m->h[WALL], once);
	histogram_add(&f->m->h[ACTIVE], once);
	histogram_record_n(&f->m->h[SUSPENDED], 0, once->count);
	histogram_record_n(&f->m->h[SEGMENTS], 1, once->count);
	histogram_record_n(&f->m->h[HOPS], 0, once->count);
	memset(once, 0, sizeof(*once));
}

/* The rare slow step of a callback: once per SAMPLES_PER_THREAD samples. */
static void merge(struct timing *t, struct timing_thread *u)
{
	fork_lock(&t->lock);
	merge_locked(t, u);
	fork_unlock(&t->lock);
}

static inline struct sample *new_sample(struct timing *t, struct timing_thread *u,
					 struct function_times *f, int kind)
{
	struct sample *x;

	if (__builtin_expect(u->nsamples == SAMPLES_PER_THREAD, 0))
		merge(t, u);
	x = &u->samples[u->nsamples++];
	x->f = f;
	x->kind = kind;
	return x;
}

/* --- the trace ----------------------------------------------------------- */

/* The slice of the segment r just ended (or that exit cut short). */
static void trace_segment(struct timing *t, struct tbuf *b, struct invocation_record *r,
			  uint64_t id, uint64_t end, bool flow_in, bool flow_out,
			  bool incomplete)
{
	struct trace_slice slice = {
		.name = r->f->json_name, .tid = r->thread,
		.start_ns = r->segment_start, .end_ns = end,
		.invocation = id, .track = id, .segment = r->segments - 1,
		.flow_in = flow_in, .flow_out = flow_out, .incomplete = incomplete,
	};

	trace_slice(b, tbuf_pid(t->threads), &slice);
}

/* The invocation's own async track, from its initial call to its end. */
static void trace_invocation(struct timing *t, struct tbuf *b, struct invocation_record *r,
			     uint64_t id, uint64_t end, bool incomplete)
{
	struct trace_span span = {
		.name = r->f->json_name, .invocation = id, .track = id,
		.begin_tid = r->start_thread, .end_tid = r->thread,
		.begin_ns = r->start, .end_ns = end,
		.segments = r->segments, .hops = r->hops, .active_ns = r->active,
		.incomplete = incomplete,
	};

	trace_span(b, tbuf_pid(t->threads), &span);
}

/*
 * An invocation that never ends, closed at `now`: at exit, or when the
 * library finds it abandoned.  It goes on a thread of its own, "open at
 * exit": there every such slice ends when it was found, so they nest,
 * whereas on its own thread a segment left running by an unwind would
 * overlap its caller's.
 */
static void trace_never_ended(struct timing *t, struct tbuf *b, struct invocation_record *r,
			      uint64_t id, uint64_t now)
{
	if (r->running) {
		r->thread = TRACE_EXIT_TID;
		trace_segment(t, b, r, id, now, r->flow_pending, false, true);
		r->active += now - r->segment_start;
	} else if (r->flow_pending) {
		/* its arrow must end somewhere: a mark */
		r->segment_start = now;
		r->thread = TRACE_EXIT_TID;
		r->segments++;
		trace_segment(t, b, r, id, now, true, false, true);
	}
	trace_invocation(t, b, r, id, now, true);
}

/* --- the callbacks -------------------------------------------------------- */

struct segment {
	struct timing *t;
	struct timing_thread *mine;     /* this thread's samples */
	struct tbuf *buf;               /* and its trace buffer */
	elt_invocation inv;
	struct invocation_record *record;       /* the invocation's storage */
};

/* What every callback needs; false when the segment cannot be timed.
 * The invocation's id and threads (s->inv) only where `ids` asks: the
 * trace and a resume's hop.  Inlined: as a call of its own, its frame
 * and the struct passed back cost a pair 46 instructions. */
static inline __attribute__((always_inline)) bool
segment_of(const elt_info *info, struct timing *t, struct segment *s, bool ids)
{
	s->t = t;
	s->buf = tbuf_get(t->threads);
	if (!s->buf)
		return false;
	s->mine = tbuf_user(s->buf);
	if (!(s->record = elt_get_invocation_storage(info))) {
		atomic_fetch_add_explicit(&t->no_memory, 1, memory_order_relaxed);
		return false;
	}
	if (ids)
		return elt_get_invocation(info, &s->inv) == ELT_OK;
	s->inv.thread = 0;      /* read, but only used by the trace */
	return true;
}

static struct function_times *times_of(struct timing *t, const elt_info *info)
{
	struct function_times *f = elt_get_function_data(info);

	return f ? f : &t->unregistered;
}

static void timing_enter(const elt_info *info, void *state)
{
	struct timing *t = state;
	uint64_t now = now_ns(t);
	const bool resume = elt_get_segment_kind(info) == ELT_SEGMENT_RESUME;
	struct segment s;
	struct invocation_record *r;

	if (!segment_of(info, t, &s, t->trace || resume))
		return;
	r = s.record;
	/* A resume of an invocation it never saw begin: added since, or a
	 * resume the library never saw suspend (an orphan).  Its times are
	 * unknown: it is left out, as one that began before the plugin. */
	if (!r->segments && resume)
		return;
	if (!r->segments) {     /* its initial call */
		r->f = times_of(t, info);
		r->start = now;
		r->start_thread = s.inv.thread;
		new_sample(t, s.mine, r->f, SAMPLE_CALL);
	} else {        /* a resume */
		if (!r->running)        /* its suspension's Leave was seen */
			new_sample(t, s.mine, r->f, SAMPLE_RESUME)->wall = now - r->suspended;
		r->hops += s.inv.thread != s.inv.previous_thread;
	}
	r->segments++;
	r->segment_start = now;
	r->thread = s.inv.thread;
	r->running = true;
}

/* The end of a segment: a suspension, a final return or a tail call. */
static void timing_leave(const elt_info *info, void *state)
{
	struct timing *t = state;
	uint64_t now = now_ns(t);
	struct segment s;
	struct invocation_record *r;
	struct sample *x;
	bool suspends = elt_get_segment_kind(info) == ELT_SEGMENT_SUSPEND;
	bool flow_in;

	bool timed = segment_of(info, t, &s, t->trace);

	if (t->trace && s.buf)
		s.mine->leave_ns = now;         /* where the frames it skipped end */
	if (!timed || !(r = s.record)->segments)
		return;         /* began before the plugin was added */
	r->active += now - r->segment_start;
	r->running = false;
	flow_in = r->flow_pending;
	r->flow_pending = suspends;
	if (t->trace) {
		/* a new thread, a reused buffer, or a fork child's trace */
		if (s.mine->named_tid != r->thread ||
		    s.mine->named_process != tbuf_process(s.buf)) {
			s.mine->named_tid = r->thread;
			s.mine->named_process = tbuf_process(s.buf);
			trace_thread_name(s.buf, tbuf_pid(t->threads), r->thread);
		}
		trace_segment(t, s.buf, r, s.inv.id, now, flow_in, suspends, false);
	}
	if (suspends) {
		r->suspended = now;
		return;
	}
	x = new_sample(t, s.mine, r->f, SAMPLE_RETURN);
	x->wall = now - r->start;
	x->active = r->active;
	x->segments = r->segments;
	x->hops = r->hops;
	if (t->trace)
		trace_invocation(t, s.buf, r, s.inv.id, now, false);
}

/* The library found an invocation abandoned (unwound without its Leave,
 * or its continuation suspended again before its resume): counted, its
 * segments with its function's as fini counts an incomplete one's, and
 * closed in the trace.  A segment a Leave skipped ends with that Leave,
 * on its own thread, inside its caller's slice; a suspension never
 * resumed gets the mark where its arrow ends, now.  Its storage holds no
 * allocation: nothing to free, and fini will not see it again. */
static void timing_abandoned(const elt_invocation *inv, const elt_function_desc *fn,
			     void *slot, void *state)
{
	struct timing *t = state;
	struct invocation_record *r = slot && ((struct invocation_record *)slot)->segments
				      ? slot : NULL;    /* NULL: never timed */
	struct tbuf *b = tbuf_get(t->threads);
	struct timing_thread *mine;
	struct sample *x;
	uint64_t end;

	(void)fn;
	if (!b)
		return;         /* out of memory: counted by tbuf */
	mine = tbuf_user(b);
	x = new_sample(t, mine, r ? r->f : NULL, SAMPLE_ABANDONED);
	x->segments = r ? r->segments : 0;
	if (!r || !t->trace)
		return;
	if (!r->running) {
		trace_never_ended(t, b, r, inv->id, now_ns(t));
		return;
	}
	end = mine->leave_ns >= r->segment_start ? mine->leave_ns : now_ns(t);
	trace_segment(t, b, r, inv->id, end, r->flow_pending, false, true);
	r->active += end - r->segment_start;
	trace_invocation(t, b, r, inv->id, end, true);
}

static void timing_thread_exit(void *state)
{
	struct timing *t = state;
	struct tbuf *b = tbuf_peek(t->threads);

	if (b)
		merge(t, tbuf_user(b));
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
	fork_lock(&t->lock);
	*t->tail = f;
	t->tail = &f->next;
	fork_unlock(&t->lock);
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
			st = elt_option_copy(&opt, path, PATH_SIZE);
			if (st != ELT_OK)
				return st;
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

/* Opens the report file (a fork child opens its own when the name has
 * %p), not emptied: init empties it (empty_report) once the trace has
 * opened too, so that a refused spec leaves an existing report whole. */
static elt_status open_report(struct timing *t)
{
	char path[4096];

	t->pid = (int)getpid();
	if (!t->out_pattern) {
		t->out = stderr;
		return ELT_OK;
	}
	tbuf_expand_path(path, sizeof(path), t->out_pattern);
	t->out = fopen(path, "a");
	if (!t->out)
		return elt_set_error(ELT_E_IO, "output: cannot write %s: %s", path,
				     strerror(errno));
	return ELT_OK;
}

/* A regular file only: "w" never emptied a device or a pipe either
 * (/dev/null, /dev/stdout), where ftruncate() fails. */
static void empty_report(struct timing *t)
{
	struct stat st;

	fflush(t->out);
	if (t->out != stderr && fstat(fileno(t->out), &st) == 0 && S_ISREG(st.st_mode) &&
	    ftruncate(fileno(t->out), 0) != 0)
		elt_report("timing: output: cannot empty the file: %s", strerror(errno));
}

static void free_timing(struct timing *t)
{
	struct function_times *f, *next;

	for (f = t->functions; f; f = next) {
		next = f->next;
		free(f->json_name);
		if (f->m)
			pages_unmap(f->m, sizeof(*f->m));
		free(f);
	}
	if (t->unregistered.m)
		pages_unmap(t->unregistered.m, sizeof(*t->unregistered.m));
	if (t->out && t->out != stderr)
		fclose(t->out);
	free(t->out_pattern);
	fork_lock_destroy(&t->lock);
	free(t);
}

static elt_status timing_init(const char *options, void **state)
{
	struct timing *t = calloc(1, sizeof(*t));
	char output[PATH_SIZE] = "", trace[PATH_SIZE] = "";
	elt_status st;

	if (!t)
		return elt_set_error(ELT_E_NO_MEMORY, "out of memory");
	fork_lock_init(&t->lock);
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
		/* one JSON document: a second process's events would spoil it */
		if (st == ELT_OK && t->trace)
			tbuf_file_per_process(t->threads);
	}
	if (st != ELT_OK) {
		free_timing(t);
		return st;
	}
	empty_report(t);
	t->unregistered.json_name = (char *)"(unregistered)";
	plugin_clock_init();
	t->start = plugin_ticks();
	*state = t;
	return ELT_OK;
}

/* --- the report ----------------------------------------------------------- */


/* Times are kept in ns and shown in us; counts as they are. */
static double shown(enum measure m, uint64_t v)
{
	return m <= LATENCY ? (double)v / 1000.0 : (double)v;
}

struct live_count {
	struct timing *t;
	uint64_t now;                   /* ns since the plugin started */
	unsigned long long n;
};

/* An invocation that never completed still counts its segments. */
static void count_live(const elt_invocation *inv, const elt_function_desc *fn,
		       void *slot, void *arg)
{
	struct invocation_record *r = slot;

	(void)inv;
	(void)fn;
	(void)arg;
	if (r && r->segments)   /* else: never timed (began before the plugin) */
		r->f->segments += r->segments;
}

/* Every thread's samples, at fini: no callback runs any more. */
static void merge_thread(void *user, void *arg)
{
	merge_locked(arg, user);
}

/* An invocation that never completed: listed, and closed in the trace. */
static void report_live(const elt_invocation *inv, const elt_function_desc *fn,
			void *slot, void *arg)
{
	struct live_count *lc = arg;
	struct invocation_record *r = slot && ((struct invocation_record *)slot)->segments
				      ? slot : NULL;    /* NULL: never timed */
	struct timing *t = lc->t;
	struct tbuf *b;

	if (lc->n++ < 20 && t->format == TABLE)
		fprintf(t->out, "  invocation %llu of %s: %s, segments: %u\n",
			(unsigned long long)inv->id, fn ? fn->name : "(unregistered)",
			!r ? "not timed" : r->running ? "still running" : "suspended",
			r ? r->segments : 0);
	if (r && t->trace && (b = tbuf_get(t->threads)))
		trace_never_ended(t, b, r, inv->id, lc->now);
}

/* One measure of one function, as the report shows it. */
struct summary {
	unsigned long long count;
	double mean, p50, p90, p99, max;
};

static struct summary summarize(struct function_times *f, enum measure m)
{
	const struct histogram *h = f->m ? &f->m->h[m] : NULL;
	struct summary s = { 0, 0, 0, 0, 0, 0 };

	if (!h || !(s.count = h->count))
		return s;
	s.mean = shown(m, h->sum) / (double)s.count;
	s.p50 = shown(m, histogram_percentile(h, 0.50));
	s.p90 = shown(m, histogram_percentile(h, 0.90));
	s.p99 = shown(m, histogram_percentile(h, 0.99));
	s.max = shown(m, h->max);
	return s;
}

static void print_table(struct timing *t, struct function_times *f)
{
	int m;

	fprintf(t->out, "%-24s %9llu %9llu\n", f->name, (unsigned long long)f->calls,
		(unsigned long long)f->segments);
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
			(unsigned long long)f->calls, (unsigned long long)f->segments,
			measure_name[m], s.count, s.mean, s.p50, s.p90, s.p99, s.max);
	}
}

static void print_json(struct timing *t, struct function_times *f, bool first)
{
	int m;

	fprintf(t->out, "%s\n  {\"function\": \"%s\", \"calls\": %llu, \"total_segments\": %llu",
		first ? "" : ",", f->json_name, (unsigned long long)f->calls,
		(unsigned long long)f->segments);
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

	tbuf_foreach_user(t->threads, merge_thread, t);
	elt_foreach_live_invocation(&elt_plugin_timing, count_live, NULL);
	if (t->format == TABLE) {
		fprintf(t->out, "asyncelt timing report (times in us; percentiles "
			"exact up to %d samples, else within 12.5%%, never above max)\n",
			HISTOGRAM_EXACT);
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
		fold_one_segment(f);
		if (f->segments) {
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
	if (t->format == TABLE) {
		fprintf(t->out, "  total: %llu\n", lc->n);
		if (t->abandoned)
			fprintf(t->out, "abandoned invocations (unwound, or their "
				"continuation reused), not listed: %llu\n",
				(unsigned long long)t->abandoned);
	} else if (t->format == JSON) {
		fprintf(t->out, "\n], \"abandoned\": %llu, \"incomplete\": %llu}\n",
			(unsigned long long)t->abandoned, lc->n);
	}
	if (atomic_load(&t->no_memory))
		fprintf(t->format == TABLE ? t->out : stderr,
			"timing: %llu invocations not timed (out of memory)\n",
			(unsigned long long)atomic_load(&t->no_memory));
}

static elt_status timing_fini(void *state)
{
	struct timing *t = state;
	struct live_count lc = { t, now_ns(t), 0 };
	elt_status st = ELT_OK, traced;
	char trace_why[512] = "";

	/* A fork child reports to its own file when the name has %p. */
	if (t->out_pattern && t->pid != (int)getpid() && strstr(t->out_pattern, "%p")) {
		fclose(t->out);
		if (open_report(t) != ELT_OK) {
			elt_report("timing: %s", elt_last_error());
			t->out = stderr;
		}
		empty_report(t);
	}
	report(t, &lc);
	traced = tbuf_close(t->threads);
	if (traced != ELT_OK)
		snprintf(trace_why, sizeof(trace_why), "%s", elt_last_error());
	/* The library reports the message set here.  A full disk shows at
	 * the flush, or earlier, in the error flag. */
	if (fflush(t->out) != 0 || ferror(t->out)) {
		if (traced != ELT_OK)   /* one status for two failures */
			elt_report("timing: trace: %s", trace_why);
		st = elt_set_error(ELT_E_IO, "the report could not be written: %s",
				   strerror(errno));
	} else if (traced != ELT_OK) {
		st = elt_set_error(traced, "trace: %s", trace_why);
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
	.fini = timing_fini,
	.invocation_abandoned = timing_abandoned,
	/* Integer clocks and histograms in the callbacks; only fini's
	 * report computes in floating point. */
	.flags = ELT_PLUGIN_NO_FLOAT,
	.invocation_storage = sizeof(struct invocation_record));
