/*
 * counting: the plugin to copy.  Counts each function's segments by kind;
 * prints a table at exit (ASYNCELT_PLUGINS='counting:output=FILE').  A thread
 * adds to its own counters: no lock, atomic or shared cache line per segment.
 * An exiting thread folds them into the total under a lock taken only then;
 * fini adds the live threads'.  Memory comes from mmap (pages.h), never
 * malloc: a segment may come from a signal handler that interrupted
 * malloc.  Checks that segments pair: plugins/check.
 */
#include <asyncelt.h>
#include <asyncelt/plugin.h>
#include "../common/pages.h"
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct row {                    /* one function's counts */
	const elt_function_desc *fn;    /* NULL: unregistered functions */
	uint64_t n[ELT_SEGMENT_KIND_COUNT];
};

struct tally {                  /* one thread's rows, or the exited threads' */
	struct row *rows;       /* [0]: unregistered; [i + 1]: function index i */
	size_t nrows;
	struct counting *owner;
	struct tally *next, *next_here; /* owner's threads; this thread's tallies */
};

struct counting {
	FILE *out;
	pthread_mutex_t lock;   /* for these two */
	struct tally *threads, total;
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

/* This thread's tally with room for row i: the rare slow step (the thread's
 * first segment, or a function beyond its rows), kept out of the hot path. */
static __attribute__((noinline, cold)) struct tally *make_room(struct counting *c, size_t i)
{
	struct tally *t;

	for (t = here; t && t->owner != c; t = t->next_here)
		;
	if (!t && (t = pages_map(sizeof(*t)))) {
		t->owner = c;
		t->next_here = here;
		here = t;
		pthread_mutex_lock(&c->lock);
		t->next = c->threads;
		c->threads = t;
		pthread_mutex_unlock(&c->lock);
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

/* Adds t to the total and frees it; the lock is held. */
static void fold(struct counting *c, struct tally *t)
{
	size_t i, k;

	if (grow(&c->total, t->nrows) == 0)
		for (i = 0; i < t->nrows; i++) {
			if (t->rows[i].fn)
				c->total.rows[i].fn = t->rows[i].fn;
			for (k = 0; k < ELT_SEGMENT_KIND_COUNT; k++)
				c->total.rows[i].n[k] += t->rows[i].n[k];
		}
	pages_unmap(t->rows, t->nrows * sizeof(*t->rows));
	pages_unmap(t, sizeof(*t));
}

static void counting_thread_exit(void *state)
{
	struct counting *c = state;
	struct tally *t, **link;

	for (link = &here; (t = *link) && t->owner != c; link = &t->next_here)
		;
	if (!t)
		return;         /* this thread never counted for this instance */
	*link = t->next_here;
	pthread_mutex_lock(&c->lock);
	for (link = &c->threads; *link != t; link = &(*link)->next)
		;
	*link = t->next;
	fold(c, t);
	pthread_mutex_unlock(&c->lock);
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
		pthread_mutex_init(&c->lock, NULL);
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
	struct row *r;
	size_t i;

	while (c->threads) {    /* no callback runs now: their counts are still */
		struct tally *t = c->threads;

		c->threads = t->next;
		fold(c, t);     /* its thread never reads `here` for us again */
	}
	r = c->total.rows;
	fprintf(out, "asyncelt counting report\n%-24s %7s %7s %8s %7s %9s\n", "function",
		"calls", "resumes", "suspends", "returns", "tailcalls");
	for (i = 1; i < c->total.nrows; i++)    /* in registration order */
		if (r[i].fn)
			print_row(out, r[i].fn->name, r[i].n);
	if (r && (r->n[ELT_SEGMENT_CALL] || r->n[ELT_SEGMENT_RETURN] || r->n[ELT_SEGMENT_TAILCALL]))
		print_row(out, "(unregistered)", r->n);
	if (c->out)
		fclose(c->out);
	pages_unmap(c->total.rows, c->total.nrows * sizeof(*c->total.rows));
	pthread_mutex_destroy(&c->lock);
	free(c);
	return ELT_OK;
}

ELT_PLUGIN_DEFINE(counting,
	.description = "counts segments per function, per thread, merged at exit",
	.init = counting_init, .enter = count, .leave = count, .tailcall = count,
	.thread_exit = counting_thread_exit, .fini = counting_fini,
	/* It never asks for invocations: none are stitched for it alone. */
	.flags = ELT_PLUGIN_NO_INVOCATIONS);
