/*
 * Abandoned invocations (plugin ABI 1.5): frames a Leave skipped, and a
 * suspension whose continuation was suspended again before its resume.
 * Each plugin's invocation_abandoned hears of each once, with its storage;
 * then the library forgets the invocation, so that a runtime abandoning
 * them without end does not grow, unless a plugin without the callback
 * holds something for it or predates 1.5: then it stays live and listed.
 * Plugins are added one at a time (none can be removed), each phase
 * checking what the one added changes.  Through the producer API, so
 * every build runs it.
 */
#define ELT_PLUGIN_STATIC 1
#include "tap.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum { OUTER_ID = 0x10, INNER_ID = 0x20, HELD_ID = 0x30, ASYNC_ID = 0x40 };

/* --- keeper: storage, and the callback ----------------------------------- */

struct keeper_storage {
	uint64_t id;            /* written at the call: read back when abandoned */
};

#define MAX_TOLD 8
static struct {
	unsigned long count, storage_wrong;
	elt_invocation inv[MAX_TOLD];   /* the last phase's, in order */
	const elt_function_desc *fn[MAX_TOLD];
	unsigned n;
	/* The distinct record addresses seen (as the inv pointers): few when
	 * records are reused, one per invocation when they are kept. */
	const elt_invocation *distinct[512];
	unsigned ndistinct;
} told;

static void keeper_enter(const elt_info *info, void *state)
{
	struct keeper_storage *s;
	elt_invocation inv;

	(void)state;
	if (elt_get_segment_kind(info) != ELT_SEGMENT_CALL)
		return;
	if ((s = elt_get_invocation_storage(info)) && elt_get_invocation(info, &inv) == ELT_OK)
		s->id = inv.id;
}

static void keeper_abandoned(const elt_invocation *inv, const elt_function_desc *fn,
			     void *slot, void *state)
{
	const struct keeper_storage *s = slot;
	unsigned i;

	(void)state;
	told.count++;
	if (!s || s->id != inv->id)
		told.storage_wrong++;
	if (told.n < MAX_TOLD) {
		told.inv[told.n] = *inv;
		told.fn[told.n] = fn;
	}
	told.n++;
	for (i = 0; i < told.ndistinct && told.distinct[i] != inv; i++)
		;
	if (i == told.ndistinct && told.ndistinct < sizeof(told.distinct) / sizeof(told.distinct[0]))
		told.distinct[told.ndistinct++] = inv;
}

/* What a fini lists as live. */
#define MAX_LISTED 16
struct listed {
	uint64_t id[MAX_LISTED];
	unsigned n;
};
static struct listed keeper_listed, glancer_listed;

static void list_one(const elt_invocation *inv, const elt_function_desc *fn, void *slot,
		     void *arg)
{
	struct listed *l = arg;

	(void)fn;
	(void)slot;
	if (l->n < MAX_LISTED)
		l->id[l->n] = inv->id;
	l->n++;
}

/* Told of them, keeper never sees the abandoned again, kept or not: what
 * it released in its callback is not handed back. */
extern const elt_plugin elt_plugin_keeper;
static elt_status keeper_fini(void *state)
{
	(void)state;
	elt_foreach_live_invocation(&elt_plugin_keeper, list_one, &keeper_listed);
	return ELT_OK;
}

ELT_PLUGIN_DEFINE(keeper, .enter = keeper_enter, .fini = keeper_fini,
		  .invocation_abandoned = keeper_abandoned,
		  .invocation_storage = sizeof(struct keeper_storage));

/* --- the others ------------------------------------------------------------ */

static void nothing(const elt_info *info, void *state)
{
	(void)info;
	(void)state;
}

/* Counts, never asks for invocations: not consulted. */
ELT_PLUGIN_DEFINE(untracked, .enter = nothing, .flags = ELT_PLUGIN_NO_INVOCATIONS);

/* Tracks invocations (asks for them), holds nothing, no callback: lists
 * in fini those the others keep. */
static void glance(const elt_info *info, void *state)
{
	elt_invocation inv;

	(void)state;
	elt_get_invocation(info, &inv);
	elt_get_invocation_slot(info);          /* asked, left NULL */
}
extern const elt_plugin elt_plugin_glancer;
static elt_status glancer_fini(void *state)
{
	(void)state;
	elt_foreach_live_invocation(&elt_plugin_glancer, list_one, &glancer_listed);
	return ELT_OK;
}
ELT_PLUGIN_DEFINE(glancer, .enter = glance, .fini = glancer_fini);

/* Holds its slot for HELD_ID's invocations, without a callback. */
static int held_value;
static void hold(const elt_info *info, void *state)
{
	void **slot;

	(void)state;
	if (elt_get_function_id(info) == HELD_ID && (slot = elt_get_invocation_slot(info)))
		*slot = &held_value;
}
ELT_PLUGIN_DEFINE(holder, .enter = hold);

/* Built before plugin ABI 1.5: its descriptor ends before the callback. */
static elt_plugin old_plugin = {
	.struct_size = offsetof(elt_plugin, invocation_abandoned),
	.abi_major = 1,
	.abi_minor = 4,
	.name = "old",
	.enter = glance,
};

/* --- segments ------------------------------------------------------------ */

static elt_invocation_stats stats(void)
{
	elt_invocation_stats s;

	elt_get_invocation_stats(&s);
	return s;
}

static uint64_t last_id;
static void record_id(const elt_info *info, void *state)
{
	elt_invocation inv;

	(void)state;
	if (elt_get_invocation(info, &inv) == ELT_OK)
		last_id = inv.id;
}
ELT_PLUGIN_DEFINE(ids, .enter = record_id);

/* OUTER calls `inner`, which an exception unwinds without its Leave:
 * OUTER's Leave skips it.  The inner invocation's id. */
static uint64_t unwind_one(elt_function_id inner)
{
	uint64_t id;

	elt_emit_enter(OUTER_ID, NULL, NULL);
	elt_emit_enter(inner, NULL, NULL);
	id = last_id;
	elt_emit_leave(OUTER_ID, NULL, NULL);
	return id;
}

static void begin_phase(void)
{
	told.n = 0;
	told.ndistinct = 0;
}

/* --- the phases ---------------------------------------------------------- */

static void with_keeper_alone(void)
{
	elt_invocation_stats s0 = stats(), s1;
	uint64_t outer, first, second, stale, fresh;
	unsigned long before, i;

	begin_phase();
	elt_emit_enter(OUTER_ID, NULL, NULL);
	outer = last_id;
	elt_emit_enter(INNER_ID, NULL, NULL);
	first = last_id;
	elt_emit_enter(INNER_ID, NULL, NULL);
	second = last_id;
	elt_emit_leave(OUTER_ID, NULL, NULL);
	s1 = stats();
	is_int(told.n, 2, "a Leave skipping two frames: the callback told of both");
	ok(told.inv[0].id == second && told.inv[1].id == first,
	   "... the innermost first (%llu then %llu)", (unsigned long long)told.inv[0].id,
	   (unsigned long long)told.inv[1].id);
	ok(told.fn[0] && told.fn[0]->id == INNER_ID && told.fn[1] == told.fn[0] &&
	   told.inv[0].parent == first && told.inv[1].parent == outer,
	   "... each with its function and parent");
	is_int(told.storage_wrong, 0, "... and the storage its call wrote");
	is_int(s1.abandoned - s0.abandoned, 2, "counted abandoned");
	is_int(s1.live, s0.live, "forgotten: not live");

	begin_phase();
	s0 = stats();
	elt_emit_enter(ASYNC_ID, NULL, NULL);
	stale = last_id;
	elt_emit_leave(ASYNC_ID, NULL, (void *)0xa1);   /* never resumed */
	elt_emit_enter(ASYNC_ID, NULL, NULL);
	fresh = last_id;
	elt_emit_leave(ASYNC_ID, NULL, (void *)0xa1);   /* the runtime reused it */
	is_int(told.n, 1, "a continuation suspended again: the older one told of");
	ok(told.inv[0].id == stale && told.inv[0].flags == ELT_INVOCATION_ASYNC &&
	   told.fn[0] && told.fn[0]->id == ASYNC_ID, "... the stale one, with its function");
	elt_emit_enter(ASYNC_ID, NULL, (void *)0xa1);
	ok(last_id == fresh, "the resume gets the newer");
	elt_emit_leave(ASYNC_ID, NULL, NULL);
	s1 = stats();
	is_int(s1.abandoned - s0.abandoned, 1, "counted abandoned");
	is_int(s1.live, s0.live, "forgotten: not live");
	is_int(told.storage_wrong, 0, "its storage intact");

	/* A runtime that abandons without end: the records are reused. */
	begin_phase();
	s0 = stats();
	before = told.count;
	for (i = 0; i < 100000; i++)
		unwind_one(INNER_ID);
	s1 = stats();
	is_int(told.count - before, 100000, "100000 unwound frames: each told of once");
	ok(told.ndistinct <= 4, "... in %u records, reused", told.ndistinct);
	is_int(s1.live, s0.live, "... none live");
	is_int(told.storage_wrong, 0, "... each with its own storage");
}

static void with_a_plugin_holding_nothing(void)
{
	elt_invocation_stats s0 = stats(), s1;

	begin_phase();
	unwind_one(INNER_ID);
	s1 = stats();
	ok(told.n == 1 && s1.live == s0.live,
	   "a plugin that asks but holds nothing, no callback: still forgotten");
}

static uint64_t kept_held, kept_old;

static void with_a_plugin_holding_a_slot(void)
{
	elt_invocation_stats s0 = stats(), s1;

	begin_phase();
	kept_held = unwind_one(HELD_ID);
	s1 = stats();
	ok(told.n == 1 && told.inv[0].id == kept_held, "its slot held: keeper still told");
	is_int(s1.live - s0.live, 1, "... and it stays live for the holder");
	s0 = s1;
	unwind_one(INNER_ID);
	s1 = stats();
	is_int(s1.live, s0.live, "the holder holding nothing for another: forgotten");
}

static void with_a_plugin_older_than_1_5(void)
{
	elt_invocation_stats s0 = stats(), s1;

	begin_phase();
	kept_old = unwind_one(INNER_ID);
	s1 = stats();
	ok(told.n == 1, "with a 1.4 plugin in use: keeper still told");
	is_int(s1.live - s0.live, 1, "... and it stays live, as before 1.5");
}

int main(void)
{
	elt_status st;
	unsigned i;
	int found_held = 0, found_old = 0;

	tap_plan(26);
	if (elt_register_function(OUTER_ID, "Outer", NULL, 0) ||
	    elt_register_function(INNER_ID, "Inner", NULL, 0) ||
	    elt_register_function(HELD_ID, "Held", NULL, 0) ||
	    elt_register_function(ASYNC_ID, "Async", "v(K)", ELT_FUNCTION_ASYNC))
		tap_bail("registration failed: %s", elt_last_error());
	if (elt_plugin_add(&elt_plugin_ids, NULL) || elt_plugin_add(&elt_plugin_untracked, NULL) ||
	    elt_plugin_add(&elt_plugin_keeper, NULL))
		tap_bail("plugins: %s", elt_last_error());
	with_keeper_alone();
	if (elt_plugin_add(&elt_plugin_glancer, NULL))
		tap_bail("glancer: %s", elt_last_error());
	with_a_plugin_holding_nothing();
	if (elt_plugin_add(&elt_plugin_holder, NULL))
		tap_bail("holder: %s", elt_last_error());
	with_a_plugin_holding_a_slot();
	st = elt_plugin_add(&old_plugin, NULL);
	is_int(st, ELT_OK, "a 1.4 descriptor is taken (%s)", elt_last_error());
	with_a_plugin_older_than_1_5();

	st = elt_shutdown();
	is_int(st, ELT_OK, "shutdown (%s)", elt_last_error());
	for (i = 0; i < glancer_listed.n && i < MAX_LISTED; i++) {
		found_held |= glancer_listed.id[i] == kept_held;
		found_old |= glancer_listed.id[i] == kept_old;
	}
	ok(glancer_listed.n == 2 && found_held && found_old,
	   "a plugin never told lists the two kept in fini, nothing forgotten (%u listed)",
	   glancer_listed.n);
	is_int(keeper_listed.n, 0, "keeper, told of them, is not handed them again");
	return tap_done();
}
