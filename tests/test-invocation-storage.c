/*
 * Per-invocation storage (plugin ABI 1.2, elt_plugin.invocation_storage):
 * zeroed at each invocation's initial call, even when the record is
 * reused, kept across its segments and threads, handed to fini's
 * elt_foreach_live_invocation, NULL for a plugin that asked for none;
 * oversized or contradictory requests are refused when the plugin is
 * added.  Segments come through the producer API.
 */
#define ELT_PLUGIN_STATIC 1
#include "tap.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <pthread.h>
#include <stddef.h>
#include <string.h>

static const elt_function_id ASYNC_ID = 0x51, OPEN_ID = 0x52, NESTED_ID = 0x53;
#define DEPTH 1000                      /* nested calls */
#define STORAGE 40                      /* rounded up to 48 by the library */
#define ROUNDS 20000                    /* reuse every record many times */
#define LIVE 3                          /* suspended at the shutdown */
#define K(i) ((void *)(uintptr_t)(0x7000000u + (uintptr_t)(i) * 16))

struct stored {
	elt_invocation_id id;
	uint32_t segments;              /* callbacks seen */
	unsigned char rest[STORAGE - sizeof(elt_invocation_id) - sizeof(uint32_t)];
};

static unsigned long not_zeroed, misaligned, lost, storage_without, wrong_live;
static unsigned listed;

static void on_segment(const elt_info *info, void *state)
{
	struct stored *s = elt_get_invocation_storage(info);
	elt_invocation inv;
	size_t i;

	(void)state;
	if (!s || elt_get_invocation(info, &inv) != ELT_OK) {
		lost++;
		return;
	}
	if ((uintptr_t)s % 16)
		misaligned++;
	if (elt_get_segment_kind(info) == ELT_SEGMENT_CALL) {
		for (i = 0; i < sizeof(*s); i++)
			not_zeroed += ((unsigned char *)s)[i] != 0;
		s->id = inv.id;
	} else if (s->id != inv.id) {
		lost++;
	}
	s->segments++;
	if (elt_get_segment_kind(info) == ELT_SEGMENT_RETURN)
		memset(s->rest, 0xa5, sizeof(s->rest));     /* reuse must zero it */
}

static void list_live(const elt_invocation *inv, const elt_function_desc *fn, void *slot,
		      void *arg)
{
	const struct stored *s = slot;
	/* suspended: its call and its suspension; else still in its call */
	uint32_t segments = fn && fn->id == ASYNC_ID ? 2 : 1;

	(void)arg;
	listed++;
	if (!s || s->id != inv->id || s->segments != segments)
		wrong_live++;
}

extern const elt_plugin elt_plugin_stored;

static elt_status stored_fini(void *state)
{
	(void)state;
	elt_foreach_live_invocation(&elt_plugin_stored, list_live, NULL);
	return ELT_OK;
}

ELT_PLUGIN_DEFINE(stored, .enter = on_segment, .leave = on_segment, .fini = stored_fini,
		  .invocation_storage = STORAGE);

/* A plugin that asked for none. */
static void no_storage(const elt_info *info, void *state)
{
	(void)state;
	storage_without += elt_get_invocation_storage(info) != NULL;
}
ELT_PLUGIN_DEFINE(plain, .enter = no_storage, .leave = no_storage);

ELT_PLUGIN_DEFINE(too_big, .invocation_storage = ELT_MAX_INVOCATION_STORAGE + 1);
ELT_PLUGIN_DEFINE(contradicts, .invocation_storage = 8,
		  .flags = ELT_PLUGIN_NO_INVOCATIONS);

/* The same contradiction from init (elt_plugin_set_flags), which then
 * refuses its options so that it is not added. */
static elt_status late_flags_st;

static elt_status contradict_late(const char *options, void **state);
ELT_PLUGIN_DEFINE(contradicts_late, .init = contradict_late, .invocation_storage = 8);

static elt_status contradict_late(const char *options, void **state)
{
	(void)options;
	*state = NULL;
	late_flags_st = elt_plugin_set_flags(&elt_plugin_contradicts_late, ELT_PLUGIN_NO_INVOCATIONS);
	return elt_set_error(ELT_E_BAD_OPTION, "only asked");
}

/* Calls that never return: one left by a thread that exits, one still
 * running at the shutdown.  Listed at fini with what their calls stored. */
static void *leave_one_open(void *arg)
{
	(void)arg;
	elt_emit_enter(OPEN_ID, NULL, NULL);
	return NULL;
}

/* `depth` nested calls, each checking at its return that its storage
 * still holds its own id: deeper than the first storage stack. */
static void nest(unsigned depth)
{
	if (depth) {
		elt_emit_enter(NESTED_ID, NULL, NULL);
		nest(depth - 1);
		elt_emit_leave(NESTED_ID, NULL, NULL);
	}
}

static void *resume_elsewhere(void *arg)
{
	unsigned long i;

	for (i = 0; i < ROUNDS / 2; i++) {
		elt_emit_enter(ASYNC_ID, NULL, K(i + (uintptr_t)arg));
		elt_emit_leave(ASYNC_ID, &i, NULL);
	}
	return NULL;
}

int main(void)
{
	elt_plugin old = elt_plugin_stored;
	unsigned long i, r = 0;
	pthread_t th;

	tap_plan(11);
	is_int(elt_plugin_add(&elt_plugin_too_big, NULL), ELT_E_LIMIT,
	       "invocation_storage above ELT_MAX_INVOCATION_STORAGE: refused");
	is_int(elt_plugin_add(&elt_plugin_contradicts, NULL), ELT_E_PLUGIN,
	       "invocation_storage with ELT_PLUGIN_NO_INVOCATIONS: refused");
	elt_plugin_add(&elt_plugin_contradicts_late, NULL);
	is_int(late_flags_st, ELT_E_INVALID_ARGUMENT,
	       "... and ELT_PLUGIN_NO_INVOCATIONS set from its init");
	/* A plugin built before the field: no storage, like plain. */
	old.struct_size = offsetof(elt_plugin, invocation_storage);
	old.name = "old";
	old.enter = old.leave = no_storage;
	old.fini = NULL;
	if (elt_plugin_add(&elt_plugin_stored, NULL) != ELT_OK ||
	    elt_plugin_add(&elt_plugin_plain, NULL) != ELT_OK ||
	    elt_plugin_add(&old, NULL) != ELT_OK ||
	    elt_register_function(ASYNC_ID, "Stored", "l(K)", ELT_FUNCTION_ASYNC) ||
	    elt_register_function(OPEN_ID, "Open", "v()", 0) ||
	    elt_register_function(NESTED_ID, "Nested", "v()", 0))
		tap_bail("setup: %s", elt_last_error());

	nest(DEPTH);
	is_int(lost, 0, "%d nested calls each find their own storage at their return", DEPTH);

	/* Call, suspend, resume, return, over and over on one thread. */
	for (i = 0; i < ROUNDS; i++) {
		elt_emit_enter(ASYNC_ID, NULL, NULL);
		elt_emit_leave(ASYNC_ID, NULL, K(i));
		elt_emit_enter(ASYNC_ID, NULL, K(i));
		elt_emit_leave(ASYNC_ID, &r, NULL);
	}
	/* Suspended here, resumed on another thread. */
	for (i = 0; i < ROUNDS / 2; i++) {
		elt_emit_enter(ASYNC_ID, NULL, NULL);
		elt_emit_leave(ASYNC_ID, NULL, K(ROUNDS + i));
	}
	if (pthread_create(&th, NULL, resume_elsewhere, (void *)(uintptr_t)ROUNDS))
		tap_bail("pthread_create failed");
	pthread_join(th, NULL);
	for (i = 0; i < LIVE; i++) {
		elt_emit_enter(ASYNC_ID, NULL, NULL);
		elt_emit_leave(ASYNC_ID, NULL, K(2 * ROUNDS + i));
	}
	if (pthread_create(&th, NULL, leave_one_open, NULL))
		tap_bail("pthread_create failed");
	pthread_join(th, NULL);
	elt_emit_enter(OPEN_ID, NULL, NULL);

	is_int(lost, 0, "every segment found its invocation's storage, with the id its call "
	       "stored (%d invocations, half resumed on another thread)", ROUNDS + ROUNDS / 2);
	is_int(not_zeroed, 0, "... zeroed at each initial call, though records are reused");
	is_int(misaligned, 0, "... 16-byte aligned");
	is_int(storage_without, 0, "NULL for a plugin that asked for none, and for one built "
	       "before the field");
	is_int(elt_shutdown(), ELT_OK, "shutdown");
	is_int(listed, LIVE + 2, "fini lists the %d invocations still suspended, the call a "
	       "thread left at its exit, and the one still running", LIVE);
	is_int(wrong_live, 0, "... each with its storage as its segments left it");
	return tap_done();
}
