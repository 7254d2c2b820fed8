/*
 * Per-thread, per-function storage for plugins (plugin ABI 1.3): the
 * `function_storage` bytes a plugin asks for, one row per function (and
 * one for unregistered functions) in a table of the thread's own, so
 * that a counter or a sum per function costs no atomic and shares no
 * cache line with another thread.  fini reads every table.
 *
 * A table belongs to one thread at a time.  When its thread exits it is
 * marked free and the next thread that needs one for that plugin takes
 * it over, rows and all: tables number at most the threads alive at once,
 * and a sum over every table is still the sum over every thread.  Tables
 * come from mmap (a segment may come from a signal handler that
 * interrupted malloc) and stay until the process exits: a thread record
 * may point to one until its thread ends, after the plugin's fini.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct elt_function_table {
	unsigned char *rows;    /* row 0: unregistered; row i + 1: function index i */
	uint32_t nrows;
	/* a live thread uses it; a word, not a byte: riscv64 has no byte
	 * exchange without libatomic */
	atomic_uint taken;
	struct elt_function_table *next;        /* its plugin's, pushed, never removed */
};

/* Row sizes, set when each plugin slot is filled; 0: none asked for. */
static uint32_t row_size[ELT_MAX_PLUGINS];
/* Every table, per plugin slot. */
static struct elt_function_table *_Atomic tables[ELT_MAX_PLUGINS];

void elt_function_storage_set_size(unsigned plugin, uint32_t size)
{
	row_size[plugin] = (size + 15) & ~15u;
}

/* A free table of plugin p, taken; else a new one, added; NULL when out
 * of memory. */
static struct elt_function_table *take_table(unsigned p)
{
	struct elt_function_table *t;

	for (t = atomic_load_explicit(&tables[p], memory_order_acquire); t; t = t->next)
		if (!atomic_load_explicit(&t->taken, memory_order_relaxed) &&
		    !atomic_exchange_explicit(&t->taken, 1, memory_order_acquire))
			return t;
	if (!(t = elt_pages_map(sizeof(*t))))
		return NULL;
	atomic_init(&t->taken, 1);
	t->next = atomic_load_explicit(&tables[p], memory_order_relaxed);
	while (!atomic_compare_exchange_weak_explicit(&tables[p], &t->next, t,
						      memory_order_release,
						      memory_order_relaxed))
		;
	return t;
}

/* At least `nrows` rows in t, the new ones zeroed; 0 when out of memory. */
static int grow(struct elt_function_table *t, uint32_t nrows, uint32_t size)
{
	uint32_t n = t->nrows ? t->nrows : 16, old_nrows = t->nrows;
	unsigned char *rows, *old_rows = t->rows;
	size_t bytes;

	while (n < nrows) {
		if (n > UINT32_MAX / 2)
			return 0;
		n *= 2;
	}
	if (__builtin_mul_overflow((size_t)n, (size_t)size, &bytes) ||
	    !(rows = elt_pages_map(bytes)))
		return 0;
	if (old_nrows)
		memcpy(rows, old_rows, (size_t)old_nrows * size);
	/* The new rows in place before the old go: a fork child may take
	 * this table over at any moment and must find mapped rows. */
	t->rows = rows;
	atomic_signal_fence(memory_order_seq_cst);     /* rows before their count */
	t->nrows = n;
	if (old_nrows)
		elt_pages_unmap(old_rows, (size_t)old_nrows * size);
	return 1;
}

const elt_function_rows elt_no_function_rows[ELT_MAX_PLUGINS];

/* The getter's rare step: the thread's first row for this plugin, or a
 * function beyond its table (and, called otherwise, any row it has). */
void *elt_get_function_storage_slow(const elt_info *info)
{
	struct elt_thread_tables *mine = elt_thread.tables;
	const elt_function_desc *fn = info->head.function;
	unsigned p = info->head.plugin;
	uint32_t row = fn ? fn->index + 1 : 0;
	struct elt_function_table *t;
	int saved_errno = errno;        /* mapping may set it */

	if (!mine || !row_size[p])
		return NULL;
	if (!(t = mine->of[p]) && (t = take_table(p)))
		mine->of[p] = t;
	if (t && row >= t->nrows && !grow(t, row + 1, row_size[p]))
		t = NULL;
	errno = saved_errno;
	if (!t)
		return NULL;
	mine->rows[p] = (elt_function_rows){ t->rows, t->nrows, row_size[p] };
	return t->rows + (size_t)row * row_size[p];
}

void *elt_get_function_storage(const elt_info *info)
{
	return elt_function_storage_inline(info);
}

void elt_function_storage_release(struct elt_thread_tables *mine)
{
	unsigned p;

	for (p = 0; p < ELT_MAX_PLUGINS; p++) {
		if (mine->of[p])
			/* what the thread wrote, before the next one adds to it */
			atomic_store_explicit(&mine->of[p]->taken, 0, memory_order_release);
		mine->of[p] = NULL;
		mine->rows[p] = (elt_function_rows){ NULL, 0, 0 };
	}
}

struct table_walk {
	unsigned plugin;
	elt_function_storage_fn fn;
	void *arg;
	void **rows;            /* room for one per table */
	size_t capacity;
};

/* Calls the walk's fn with row `row` of every table that has one. */
static void visit_row(struct table_walk *w, const elt_function_desc *desc, uint32_t row)
{
	const struct elt_function_table *t;
	size_t n = 0;

	for (t = atomic_load_explicit(&tables[w->plugin], memory_order_acquire);
	     t && n < w->capacity; t = t->next)
		if (row < t->nrows)
			w->rows[n++] = t->rows + (size_t)row * row_size[w->plugin];
	w->fn(desc, w->rows, n, w->arg);
}

static void visit_function(struct elt_function *f, void *arg)
{
	visit_row(arg, &f->desc, f->desc.index + 1);
}

void elt_function_storage_foreach(unsigned plugin, elt_function_storage_fn fn, void *arg)
{
	struct table_walk w = { plugin, fn, arg, NULL, 0 };
	struct elt_function_table *t;
	size_t n = 0;

	if (!row_size[plugin])
		return;
	/* Tables only come with segments, and none should run now; one that
	 * does cannot overrun the walk's room. */
	for (t = atomic_load_explicit(&tables[plugin], memory_order_acquire); t; t = t->next) {
		/* after what an exited thread wrote (its release) */
		(void)atomic_load_explicit(&t->taken, memory_order_acquire);
		n++;
	}
	w.capacity = n;
	if (!(w.rows = malloc((n ? n : 1) * sizeof(*w.rows)))) {
		elt_set_error(ELT_E_NO_MEMORY, "elt_foreach_function_storage: out of memory");
		return;
	}
	elt_registry_foreach(visit_function, &w);
	visit_row(&w, NULL, 0);         /* unregistered functions */
	free(w.rows);
}
