/*
 * The continuation table's rarest path, driven on purpose: while the
 * table grows, a suspended invocation moving to the new table finds both
 * of its buckets there full.  It must still be found by its resume.
 *
 * The continuations are chosen through the table's own hashes
 * (lib/continuation-hash.h): 17 that share both buckets of the first
 * table, so that the 17th makes it grow; then 16 that fill, in the new
 * table, the two buckets where one of the first 16 (the "mover") will
 * have to go; then more suspensions, each of which moves the next
 * ELT_TABLE_MIGRATE_STEP slots, until the mover's slot, placed near the
 * end of the old table, moves.  The mover then suspends again under the
 * same continuation, which abandons the waiting one.  Then every one is
 * resumed: each must get its own (latest) call's id, with no orphan and
 * nothing unpublished.
 *
 * 64-bit ports only: the first hash is undone to place a continuation in
 * the bucket wanted, which needs all 64 bits of one.
 */
#define ELT_PLUGIN_STATIC 1
#include "tap.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include "../lib/continuation-hash.h"

#include <stdint.h>
#include <stdlib.h>

static const elt_function_id ASYNC_ID = 0x5a;

static _Thread_local elt_invocation last;

static void remember(const elt_info *info, void *state)
{
	(void)state;
	elt_get_invocation(info, &last);
}
ELT_PLUGIN_DEFINE(table, .enter = remember, .leave = remember);

#define OLD_MASK (((uint64_t)1 << ELT_TABLE_MIN_BITS) - 1)
#define NEW_MASK (((uint64_t)1 << (ELT_TABLE_MIN_BITS + 1)) - 1)
/* Both buckets near the end of the first table: moved last. */
#define OLD_BUCKET_1 (OLD_MASK + 1 - 4 * ELT_TABLE_MIGRATE_STEP)
#define OLD_BUCKET_2 (OLD_MASK + 1 - 2 * ELT_TABLE_MIGRATE_STEP)

#define SHARING (2 * ELT_TABLE_BUCKET + 1)     /* the first table's two buckets, and one */
#define FILLING (2 * ELT_TABLE_BUCKET)         /* the new table's two buckets */
/* Enough for the migration to pass the end of the first table. */
#define DRIVING ((OLD_MASK + 1) / ELT_TABLE_MIGRATE_STEP + 8)
#define TOTAL (SHARING + FILLING + DRIVING)

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint64_t next_random(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* The inverse of the first hash's odd multiplier, mod 2^64 (Newton). */
static uint64_t hash1_inverse(void)
{
	uint64_t x = ELT_CONTINUATION_HASH1;
	int i;

	for (i = 0; i < 6; i++)
		x *= 2 - ELT_CONTINUATION_HASH1 * x;
	return x;
}

/* A continuation whose two buckets in a table of mask + 1 slots are b1
 * and b2: the first is set by construction, the second found by trying
 * (one in mask / 8 tries). */
static uint64_t continuation_in(uint64_t mask, uint64_t b1, uint64_t b2)
{
	const uint64_t field = (mask & ~(uint64_t)(ELT_TABLE_BUCKET - 1)) << 32;
	const uint64_t inverse = hash1_inverse();

	for (;;) {
		uint64_t k = ((next_random() & ~field) | b1 << 32) * inverse;

		if (k && elt_continuation_bucket(elt_continuation_hash2(k), mask) == b2)
			return k;
	}
}

int main(void)
{
	static uint64_t continuation[TOTAL];
	static elt_invocation_id id[TOTAL];
	elt_invocation_stats s0, s1;
	uint64_t mover, p1, p2;
	unsigned i, wrong = 0, placed = 0;

	if (sizeof(uintptr_t) < sizeof(uint64_t))
		tap_skip_all("continuations are 32 bits here: the test places them by "
			     "undoing a 64-bit hash");
	tap_plan(6);
	if (elt_plugin_add(&elt_plugin_table, NULL) != ELT_OK ||
	    elt_register_function(ASYNC_ID, "Moved", "v(K)", ELT_FUNCTION_ASYNC))
		tap_bail("setup: %s", elt_last_error());

	for (i = 0; i < SHARING; i++) {
		continuation[i] = continuation_in(OLD_MASK, OLD_BUCKET_1, OLD_BUCKET_2);
		placed += elt_continuation_bucket(elt_continuation_hash1(continuation[i]),
						  OLD_MASK) == OLD_BUCKET_1;
	}
	is_int(placed, SHARING, "%d continuations share both buckets of the first table",
	       SHARING);
	/* The mover: one of the first 16, which stay in the old table. */
	mover = continuation[0];
	p1 = elt_continuation_bucket(elt_continuation_hash1(mover), NEW_MASK);
	p2 = elt_continuation_bucket(elt_continuation_hash2(mover), NEW_MASK);
	for (i = SHARING; i < SHARING + FILLING; i++)
		continuation[i] = continuation_in(NEW_MASK, p1, p2);
	for (; i < TOTAL; i++)
		continuation[i] = next_random() | 1;

	/* Suspended in this order: the 17th sharing one grows the table,
	 * the filling ones take the mover's new buckets, the rest move the
	 * old table's slots out, the mover's last. */
	elt_get_invocation_stats(&s0);
	for (i = 0; i < TOTAL; i++) {
		elt_emit_enter(ASYNC_ID, NULL, NULL);
		id[i] = last.id;
		elt_emit_leave(ASYNC_ID, NULL, (void *)(uintptr_t)continuation[i]);
	}
	/* The mover suspends again under the same continuation before it is
	 * resumed (a runtime that reused it): the waiting one is abandoned,
	 * in the overflow as in the table, and the resume gets the new. */
	elt_emit_enter(ASYNC_ID, NULL, NULL);
	id[0] = last.id;
	elt_emit_leave(ASYNC_ID, NULL, (void *)(uintptr_t)mover);
	for (i = 0; i < TOTAL; i++) {
		elt_emit_enter(ASYNC_ID, NULL, (void *)(uintptr_t)continuation[i]);
		if (last.id != id[i] || (last.flags & ELT_INVOCATION_ORPHAN)) {
			if (wrong++ < 5)
				tap_diag("continuation %u (%#llx) resumed as invocation %llu, "
					 "suspended as %llu", i,
					 (unsigned long long)continuation[i],
					 (unsigned long long)last.id,
					 (unsigned long long)id[i]);
		}
		elt_emit_leave(ASYNC_ID, NULL, NULL);
	}
	elt_get_invocation_stats(&s1);
	is_int(wrong, 0, "%d suspended while the table grew under them: each resume has "
	       "its call's id", TOTAL);
	is_int(s1.unpublished - s0.unpublished, 0, "... none unpublished");
	is_int(s1.orphan_resumes - s0.orphan_resumes, 0, "... no orphan");
	is_int(s1.abandoned - s0.abandoned, 1, "... the one suspended again under its "
	       "continuation abandoned");
	is_int(s1.completed - s0.completed, TOTAL, "... all %d resumed completed", TOTAL);
	return tap_done();
}
