/*
 * Per-thread, per-function storage (plugin ABI 1.3,
 * elt_plugin.function_storage): each thread counts in its own rows, zeroed
 * and 16-byte aligned, one per function and one for unregistered ids; an
 * exited thread's rows go on with a later thread, so fini's
 * elt_foreach_function_storage sees at most as many rows per function as
 * threads ever ran at once, in registration order, summing to every
 * segment; NULL for a plugin that asked for none; an oversized request is
 * refused when the plugin is added; the header's inline getter (plugin
 * ABI 1.4) and the library's function agree.  Segments come through the
 * producer API.
 */
#define ELT_PLUGIN_STATIC 1
#include "tap.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#define FUNCTIONS 40            /* more than a first table holds: it grows */
#define UNREGISTERED_ID 0x9999
#define CALLS 1000              /* per function per thread */
#define WAVES 3                 /* of threads, each joined before the next */
#define AT_ONCE 4               /* threads per wave */
#define STORAGE 24              /* rounded up to 32 by the library */

struct row {
	uint64_t enters, leaves;
	uint64_t first_seen;    /* 1 once the row was handed out to a thread */
};

/* Counted by every thread at once. */
static atomic_ulong misaligned, not_zeroed, missing, storage_without, disagree;

static void on_segment(const elt_info *info, void *state)
{
	struct row *r = elt_get_function_storage(info);

	(void)state;
	atomic_fetch_add(&disagree, (void *)r != (elt_get_function_storage)(info) ||
			 (void *)r != elt_get_function_storage_slow(info));
	if (!r) {
		atomic_fetch_add(&missing, 1);
		return;
	}
	if ((uintptr_t)r % 16)
		atomic_fetch_add(&misaligned, 1);
	if (!r->first_seen) {
		atomic_fetch_add(&not_zeroed, r->enters != 0 || r->leaves != 0);
		r->first_seen = 1;
	}
	if (elt_get_segment_kind(info) == ELT_SEGMENT_CALL)
		r->enters++;
	else
		r->leaves++;
}

/* What fini's walk saw. */
static unsigned long long sums[FUNCTIONS + 1][2];       /* [FUNCTIONS]: unregistered */
static unsigned long out_of_order, max_rows, visits;

static void sum_rows(const elt_function_desc *fn, void *const *rows, size_t count, void *arg)
{
	unsigned *next_index = arg;
	unsigned at = fn ? fn->index : FUNCTIONS;
	size_t i;

	visits++;
	if (fn && fn->index != (*next_index)++)
		out_of_order++;
	if (count > max_rows)
		max_rows = count;
	for (i = 0; i < count; i++) {
		const struct row *r = rows[i];

		sums[at][0] += r->enters;
		sums[at][1] += r->leaves;
	}
}

extern const elt_plugin elt_plugin_per_function;

static elt_status per_function_fini(void *state)
{
	unsigned next_index = 0;

	(void)state;
	elt_foreach_function_storage(&elt_plugin_per_function, sum_rows, &next_index);
	return ELT_OK;
}

ELT_PLUGIN_DEFINE(per_function, .enter = on_segment, .leave = on_segment,
		  .fini = per_function_fini, .function_storage = STORAGE,
		  .flags = ELT_PLUGIN_NO_INVOCATIONS);

/* A plugin that asked for none. */
static void no_storage(const elt_info *info, void *state)
{
	(void)state;
	atomic_fetch_add(&storage_without, elt_get_function_storage(info) != NULL ||
			 (elt_get_function_storage)(info) != NULL);
}
ELT_PLUGIN_DEFINE(plain, .enter = no_storage, .leave = no_storage,
		  .flags = ELT_PLUGIN_NO_INVOCATIONS);

ELT_PLUGIN_DEFINE(too_big, .function_storage = ELT_MAX_FUNCTION_STORAGE + 1);

static void *calls(void *arg)
{
	unsigned f, i;

	(void)arg;
	for (f = 0; f <= FUNCTIONS; f++) {
		elt_function_id id = f < FUNCTIONS ? 0x100 + f : UNREGISTERED_ID;

		for (i = 0; i < CALLS; i++) {
			elt_emit_enter(id, NULL, NULL);
			elt_emit_leave(id, NULL, NULL);
		}
	}
	return NULL;
}

int main(void)
{
	elt_plugin old = elt_plugin_plain;
	pthread_t th[AT_ONCE];
	unsigned f, w, t;
	unsigned long wrong = 0;
	char name[16];

	tap_plan(12);
	is_int(elt_plugin_add(&elt_plugin_too_big, NULL), ELT_E_LIMIT,
	       "function_storage above ELT_MAX_FUNCTION_STORAGE: refused");
	ok(strstr(elt_last_error(), "function_storage") != NULL, "... naming it: %s",
	   elt_last_error());
	/* A plugin built before the field: no storage, like plain. */
	old.struct_size = offsetof(elt_plugin, function_storage);
	old.name = "old";
	if (elt_plugin_add(&elt_plugin_per_function, NULL) != ELT_OK ||
	    elt_plugin_add(&elt_plugin_plain, NULL) != ELT_OK ||
	    elt_plugin_add(&old, NULL) != ELT_OK)
		tap_bail("setup: %s", elt_last_error());
	/* In reverse id order: the walk follows registration, not ids. */
	for (f = FUNCTIONS; f-- > 0;) {
		snprintf(name, sizeof(name), "F%u", f);
		if (elt_register_function(0x100 + f, name, "v()", 0) != ELT_OK)
			tap_bail("register: %s", elt_last_error());
	}

	for (w = 0; w < WAVES; w++) {
		for (t = 0; t < AT_ONCE; t++)
			if (pthread_create(&th[t], NULL, calls, NULL))
				tap_bail("pthread_create failed");
		for (t = 0; t < AT_ONCE; t++)
			pthread_join(th[t], NULL);
	}
	is_int(atomic_load(&missing), 0, "every segment got its function's row");
	is_int(atomic_load(&misaligned), 0, "... 16-byte aligned");
	is_int(atomic_load(&not_zeroed), 0, "... zeroed when first handed out");
	is_int(atomic_load(&disagree), 0,
	       "... the same row from the inline getter, the library's function and its slow step");
	is_int(atomic_load(&storage_without), 0,
	       "NULL for a plugin that asked for none, and for one built before the field");

	is_int(elt_shutdown(), ELT_OK, "shutdown");
	is_int(visits, FUNCTIONS + 1, "fini's walk: each function once, then the unregistered row");
	is_int(out_of_order, 0, "... in registration order");
	ok(max_rows >= 1 && max_rows <= AT_ONCE,
	   "at most %d rows per function for %d threads in waves of %d: exited threads' "
	   "rows go on with later ones (got %lu)", AT_ONCE, WAVES * AT_ONCE, AT_ONCE, max_rows);
	for (f = 0; f <= FUNCTIONS; f++) {
		wrong += sums[f][0] != (unsigned long long)WAVES * AT_ONCE * CALLS ||
			 sums[f][1] != (unsigned long long)WAVES * AT_ONCE * CALLS;
	}
	is_int(wrong, 0, "the rows sum to every thread's %d calls and returns of each function, "
	       "and of the unregistered id", WAVES * AT_ONCE * CALLS);
	return tap_done();
}
