/*
 * The continuation table's rarest path, driven on purpose: while the
 * table grows, suspended invocations moving to the new table find both of
 * their buckets there full.  They must wait in the overflow, move back
 * into the table once the migration is done, and be found by their
 * resumes all the while.
 *
 * The continuations are chosen through the table's own hashes
 * (lib/continuation-hash.h).  Each round, on a table of 2^bits slots:
 *  1. 16 continuations ("movers") fill both buckets X and Y, near the end
 *     of the table, and the buckets their moves will go to, P and Q in
 *     the doubled table, are the same for all 16;
 *  2. a 17th with buckets X and Y grows the table;
 *  3. 16 more ("fillers") take P and Q in the new table;
 *  4. suspensions that resume at once drive the migration (each moves
 *     ELT_TABLE_MIGRATE_STEP slots) past X and Y, two chunks before its
 *     end: the 16 movers find P and Q full and wait in the overflow;
 *  5. the fillers resume, which frees P and Q, and the migration ends:
 *     the movers move into P and Q.
 * Five rounds put 80 movers through the overflow, which holds 64: without
 * the last step the fifth round would lose its movers.  In the first, one
 * mover resumes while in the overflow, and another suspends again under
 * its continuation there (a runtime that reused it): the waiting one is
 * abandoned, and the resume gets the new.  At the end every mover is resumed: each must get its own
 * (latest) call's id, with no orphan and nothing unpublished.
 *
 * 64-bit ports only: the first hash is undone to place a continuation in
 * the bucket wanted, which needs all 64 bits of one.  One thread only:
 * the races (a resume meeting a claimed overflow word, or missing a record
 * as it moves back) are not driven here; lib/invocation.c argues them.
 */
#include "tap.h"
#include "remember-invocation.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include "../lib/continuation-hash.h"

#include <stdint.h>
#include <stdlib.h>

static const elt_function_id ASYNC_ID = 0x5a;



#define ROUNDS 5
#define GROUP (2 * ELT_TABLE_BUCKET)    /* what two buckets hold */
#define STEP ELT_TABLE_MIGRATE_STEP

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

static void suspend(uint64_t continuation, elt_invocation_id *id)
{
	elt_emit_enter(ASYNC_ID, NULL, NULL);
	*id = last.id;
	elt_emit_leave(ASYNC_ID, NULL, (void *)(uintptr_t)continuation);
}

/* 1 when the resume finds the invocation suspended as id. */
static int resume(uint64_t continuation, elt_invocation_id id)
{
	int right;

	elt_emit_enter(ASYNC_ID, NULL, (void *)(uintptr_t)continuation);
	right = last.id == id && !(last.flags & ELT_INVOCATION_ORPHAN);
	elt_emit_leave(ASYNC_ID, NULL, NULL);
	return right;
}

/* Moves the next MIGRATE_STEP slots, leaving nothing behind. */
static unsigned drive(unsigned steps)
{
	unsigned i, wrong = 0;

	for (i = 0; i < steps; i++) {
		uint64_t k = next_random() | 1;
		elt_invocation_id id;

		suspend(k, &id);
		wrong += !resume(k, id);
	}
	return wrong;
}

static uint64_t mover[ROUNDS][GROUP];
static elt_invocation_id mover_id[ROUNDS][GROUP];       /* 0: resumed already */
static int resumed_waiting;     /* the first round's, from the overflow */

/* One round on a table of 2^bits slots (above); the wrong resumes. */
static unsigned round_on(unsigned r, unsigned bits)
{
	const uint64_t size = (uint64_t)1 << bits, new_mask = 2 * size - 1,
		       chunks = size / STEP;
	/* X and Y in the fourth and third chunks from the end; each round
	 * its own buckets, so that the last round's movers are not in the
	 * way */
	const uint64_t x = size - 4 * STEP + 64 * r, y = size - 3 * STEP + 64 * r;
	uint64_t filler[GROUP], grow;
	elt_invocation_id filler_id[GROUP], grow_id;
	unsigned i, wrong = 0;

	for (i = 0; i < GROUP; i++) {
		mover[r][i] = continuation_in(new_mask, size + x, size + y);
		filler[i] = continuation_in(new_mask, size + x, size + y);
	}
	grow = continuation_in(new_mask, x, y); /* X and Y, in the new table too */
	for (i = 0; i < GROUP; i++)
		suspend(mover[r][i], &mover_id[r][i]);
	suspend(grow, &grow_id);        /* grows, and moves the first chunk */
	for (i = 0; i < GROUP; i++)     /* each moves the next chunk */
		suspend(filler[i], &filler_id[i]);
	/* up to Y's chunk, two before the end */
	wrong += drive((unsigned)(chunks - 2 - (1 + GROUP)));
	if (r == 0) {   /* one mover resumes from the overflow */
		resumed_waiting = resume(mover[r][1], mover_id[r][1]);
		mover_id[r][1] = 0;
	}
	for (i = 0; i < GROUP; i++)
		wrong += !resume(filler[i], filler_id[i]);
	/* A mover suspends again while in the overflow (it moves the last
	 * chunk but one, so the migration is not done yet). */
	if (r == 0)
		suspend(mover[r][0], &mover_id[r][0]);
	wrong += drive(r == 0 ? 1 : 2);         /* the end: the movers move back */
	wrong += !resume(grow, grow_id);
	return wrong;
}

int main(void)
{
	elt_invocation_stats s0, s1;
	unsigned r, i, wrong = 0, wrong_movers = 0;

	if (sizeof(uintptr_t) < sizeof(uint64_t))
		tap_skip_all("continuations are 32 bits here: the test places them by "
			     "undoing a 64-bit hash");
	tap_plan(6);
	if (elt_plugin_add(&elt_plugin_remember, NULL) != ELT_OK ||
	    elt_register_function(ASYNC_ID, "Moved", "v(K)", ELT_FUNCTION_ASYNC))
		tap_bail("setup: %s", elt_last_error());

	elt_get_invocation_stats(&s0);
	for (r = 0; r < ROUNDS; r++)
		wrong += round_on(r, ELT_TABLE_MIN_BITS + r);
	for (r = 0; r < ROUNDS; r++)
		for (i = 0; i < GROUP; i++)
			if (mover_id[r][i] && !resume(mover[r][i], mover_id[r][i]) &&
			    wrong_movers++ < 5)
				tap_diag("round %u, mover %u (%#llx): resumed as %llu, "
					 "suspended as %llu", r, i,
					 (unsigned long long)mover[r][i],
					 (unsigned long long)last.id,
					 (unsigned long long)mover_id[r][i]);
	elt_get_invocation_stats(&s1);
	is_int(wrong, 0, "%d rounds of growth: every other resume has its call's id",
	       ROUNDS);
	ok(resumed_waiting, "a mover resumed while waiting in the overflow has its call's id");
	is_int(wrong_movers, 0, "the %d others, each through the overflow and back, resume "
	       "with their calls' ids", ROUNDS * GROUP - 1);
	is_int(s1.unpublished - s0.unpublished, 0, "... none unpublished");
	is_int(s1.orphan_resumes - s0.orphan_resumes, 0, "... no orphan");
	is_int(s1.abandoned - s0.abandoned, 1, "... the one suspended again under its "
	       "continuation abandoned");
	return tap_done();
}
