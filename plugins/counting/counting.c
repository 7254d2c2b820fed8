/*
 * counting: the plugin to copy.  Counts each function's segments by kind;
 * prints a table at exit (ASYNCELT_PLUGINS='counting:output=FILE').  A thread
 * adds to its own counters: no lock, atomic or shared cache line per segment.
 * An exiting thread leaves its counters behind for the next new thread to
 * adopt, and fini sums them all: no lock anywhere, so none can be copied
 * held into a fork() child.  Memory comes from mmap (pages.h), never
 * malloc: a segment may come from a signal handler that interrupted
 * malloc.  Checks that segments pair: plugins/check.
 */
#include <asyncelt.h>
#include <asyncelt/plugin.h>
#include "../common/pages.h"
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct row {                    /* one function's counts */
	const elt_function_desc *fn;    /* NULL: unregistered functions */
	uint64_t n[ELT_SEGMENT_KIND_COUNT];
};

struct tally {                  /* one thread's rows at a time */
	struct row *rows;       /* [0]: unregistered; [i + 1]: function index i */
	size_t nrows;
	struct counting *owner;
	struct tally *next;             /* all of owner's, pushed, never removed */
	struct tally *next_here;        /* this thread's, one per instance */
	/* a live thread counts into it; not atomic_bool: riscv64 has no
	 * byte-wide exchange, gcc would call libatomic */
	atomic_uint taken;
};

struct counting {
	FILE *out;
	struct tally *_Atomic tallies;
};

/* initial-exec: one instruction, no allocation, even in a dlopen()ed module */
#ifdef __ELF__
static __thread struct tally *here __attribute__((tls_model("initial-exec")));
#else
static __thread struct tally *here;
#endif

/* At least `nrows` rows, the new ones zeroed.  The rare slow step. */
static int grow(struct tally *t, size_t nrows)
{
	size_t n = t->nrows ? t->nrows : 16;
	struct row *rows;

	if (nrows <= t->nrows)
		return 0;
	while (n < nrows)
		n *= 2;
	if (!(rows = pages_map(n * sizeof(*rows))))     /* zeroed */
		return -1;
	if (t->nrows)
		memcpy(rows, t->rows, t->nrows * sizeof(*rows));
	pages_unmap(t->rows, t->nrows * sizeof(*rows));
	t->rows = rows;
	t->nrows = n;
	return 0;
}

/* A tally no thread counts into, taken; else a new one, added. */
static struct tally *take_tally(struct counting *c)
{
	struct tally *t;

	for (t = atomic_load_explicit(&c->tallies, memory_order_acquire); t; t = t->next)
		if (!atomic_load_explicit(&t->taken, memory_order_relaxed) &&
		    !atomic_exchange_explicit(&t->taken, 1, memory_order_acquire))
			return t;       /* an exited thread's: its counts stay */
	if (!(t = pages_map(sizeof(*t))))
		return NULL;
	t->owner = c;
	atomic_init(&t->taken, 1);
	t->next = atomic_load_explicit(&c->tallies, memory_order_relaxed);
	while (!atomic_compare_exchange_weak_explicit(&c->tallies, &t->next, t,
						      memory_order_release,
						      memory_order_relaxed))
		;
	return t;
}

/* This thread's tally with room for row i: the rare slow step (the thread's
 * first segment, or a function beyond its rows), kept out of the hot path. */
static __attribute__((noinline, cold)) struct tally *make_room(struct counting *c, size_t i)
{
	struct tally *t;

	for (t = here; t && t->owner != c; t = t->next_here)
		;
	if (!t && (t = take_tally(c))) {
		t->next_here = here;
		here = t;
	}
	return t && grow(t, i + 1) == 0 ? t : NULL;
}

static void count(const elt_info *info, void *state)
{
	const elt_function_desc *fn = elt_get_function(info);
	size_t i = fn ? fn->index + 1 : 0;
	struct tally *t = here;

	if (__builtin_expect(!t || t->owner != state || i >= t->nrows, 0) &&
	    !(t = make_room(state, i)))
		return;         /* out of memory: this segment goes uncounted */
	t->rows[i].fn = fn;
	t->rows[i].n[elt_get_segment_kind(info)]++;
}

/* The thread's counts stay in its tally, for fini and the next thread. */
static void counting_thread_exit(void *state)
{
	struct tally *t, **link;

	for (link = &here; (t = *link) && t->owner != state; link = &t->next_here)
		;
	if (!t)
		return;         /* this thread never counted for this instance */
	*link = t->next_here;
	atomic_store_explicit(&t->taken, 0, memory_order_release);
}

static elt_status counting_init(const char *options, void **state)
{
	struct counting *c = calloc(1, sizeof(*c));
	elt_status st = c ? ELT_OK : elt_set_error(ELT_E_NO_MEMORY, "out of memory");
	elt_option opt;
	char path[4096];

	while (st == ELT_OK && (st = elt_option_next(&options, &opt)) == ELT_OK && opt.key) {
		snprintf(path, sizeof(path), "%.*s", (int)opt.value_len, opt.value);
		if (!elt_option_is(&opt, "output"))
			st = elt_set_error(ELT_E_BAD_OPTION, "unknown option \"%.*s\" (known: output)",
					   (int)opt.key_len, opt.key);
		else if (c->out)
			st = elt_set_error(ELT_E_BAD_OPTION, "output given twice");
		else if (!(c->out = fopen(path, "w")))
			st = elt_set_error(ELT_E_IO, "output: cannot write %s: %s", path, strerror(errno));
	}
	if (st == ELT_OK) {
		*state = c;
	} else if (c) {
		if (c->out)
			fclose(c->out);
		free(c);
	}
	return st;
}

static void print_row(FILE *out, const char *name, const uint64_t *n)
{
	fprintf(out, "%-24s %7llu %7llu %8llu %7llu %9llu\n", name,
		(unsigned long long)n[ELT_SEGMENT_CALL], (unsigned long long)n[ELT_SEGMENT_RESUME],
		(unsigned long long)n[ELT_SEGMENT_SUSPEND], (unsigned long long)n[ELT_SEGMENT_RETURN],
		(unsigned long long)n[ELT_SEGMENT_TAILCALL]);
}

static elt_status counting_fini(void *state)
{
	struct counting *c = state;
	FILE *out = c->out ? c->out : stderr;
	struct tally total = { 0 }, *t, *next;
	size_t i, k;

	/* No callback runs now: every thread's counts, live or exited, are
	 * still.  A thread never reads `here` for this instance again. */
	for (t = atomic_load(&c->tallies); t; t = next) {
		next = t->next;
		if (grow(&total, t->nrows) == 0)
			for (i = 0; i < t->nrows; i++) {
				if (t->rows[i].fn)
					total.rows[i].fn = t->rows[i].fn;
				for (k = 0; k < ELT_SEGMENT_KIND_COUNT; k++)
					total.rows[i].n[k] += t->rows[i].n[k];
			}
		pages_unmap(t->rows, t->nrows * sizeof(*t->rows));
		pages_unmap(t, sizeof(*t));
	}
	fprintf(out, "asyncelt counting report\n%-24s %7s %7s %8s %7s %9s\n", "function",
		"calls", "resumes", "suspends", "returns", "tailcalls");
	for (i = 1; i < total.nrows; i++)       /* in registration order */
		if (total.rows[i].fn)
			print_row(out, total.rows[i].fn->name, total.rows[i].n);
	if (total.rows && (total.rows->n[ELT_SEGMENT_CALL] || total.rows->n[ELT_SEGMENT_RETURN] ||
			   total.rows->n[ELT_SEGMENT_TAILCALL]))
		print_row(out, "(unregistered)", total.rows->n);
	if (c->out)
		fclose(c->out);
	pages_unmap(total.rows, total.nrows * sizeof(*total.rows));
	free(c);
	return ELT_OK;
}

ELT_PLUGIN_DEFINE(counting,
	.description = "counts segments per function, per thread, summed at exit",
	.init = counting_init, .enter = count, .leave = count, .tailcall = count,
	.thread_exit = counting_thread_exit, .fini = counting_fini,
	/* It never asks for invocations: none are stitched for it alone. */
	.flags = ELT_PLUGIN_NO_INVOCATIONS);
