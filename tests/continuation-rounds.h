/*
 * Driving the continuation table (lib/invocation.c) into its overflow on
 * purpose, for tests/test-continuation-table.c and
 * tests/test-continuation-race.c: continuations chosen through the
 * table's own hashes (lib/continuation-hash.h), suspended and resumed
 * through the producer API, one function (CONTINUATION_FN) that the test
 * registers as async, the remember plugin (remember-invocation.h) added.
 *
 * A round, on a table of 2^bits slots:
 *  1. GROUP continuations ("movers") fill both buckets X and Y near the
 *     end of the table, and the buckets their moves will go to, P and Q
 *     in the doubled table, are the same for all;
 *  2. one more with buckets X and Y grows the table;
 *  3. GROUP more ("fillers") take P and Q in the new table;
 *  4. suspensions that resume at once drive the migration (each moves
 *     ELT_TABLE_MIGRATE_STEP slots) past X and Y, two steps before its
 *     end: the movers find P and Q full and wait in the overflow;
 *  5. the fillers resume, which frees P and Q.
 * round_begin() does that; the migration's last two steps, which move
 * the movers back into the table, are the test's.
 *
 * 64-bit ports only: the first hash is undone to place a continuation in
 * the bucket wanted, which needs all 64 bits of one.
 */
#ifndef ELT_TESTS_CONTINUATION_ROUNDS_H
#define ELT_TESTS_CONTINUATION_ROUNDS_H

#include "remember-invocation.h"
#include "../lib/continuation-hash.h"

#include <stdint.h>

static const elt_function_id CONTINUATION_FN = 0x5a;

#define GROUP (2 * ELT_TABLE_BUCKET)    /* what two buckets hold */
#define STEP ELT_TABLE_MIGRATE_STEP

/* Only one thread draws at a time. */
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
	elt_emit_enter(CONTINUATION_FN, NULL, NULL);
	*id = last.id;
	elt_emit_leave(CONTINUATION_FN, NULL, (void *)(uintptr_t)continuation);
}

/* 1 when the resume finds the invocation suspended as id. */
static int resume(uint64_t continuation, elt_invocation_id id)
{
	int right;

	elt_emit_enter(CONTINUATION_FN, NULL, (void *)(uintptr_t)continuation);
	right = last.id == id && !(last.flags & ELT_INVOCATION_ORPHAN);
	elt_emit_leave(CONTINUATION_FN, NULL, NULL);
	return right;
}

/* Moves the next `steps` steps of the migration, leaving nothing behind;
 * the wrong resumes. */
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

struct round {
	uint64_t mover[GROUP], grow;
	elt_invocation_id mover_id[GROUP], grow_id;
};

/* Round r (each its own buckets, so that an earlier round's movers are
 * not in the way) on the table, of 2^bits slots; the wrong resumes. */
static unsigned round_begin(struct round *rd, unsigned r, unsigned bits)
{
	const uint64_t size = (uint64_t)1 << bits, new_mask = 2 * size - 1,
		       steps = size / STEP;
	/* X and Y moved by the fourth and third steps from the end */
	const uint64_t x = size - 4 * STEP + 64 * r, y = size - 3 * STEP + 64 * r;
	uint64_t filler[GROUP];
	elt_invocation_id filler_id[GROUP];
	unsigned i, wrong = 0;

	for (i = 0; i < GROUP; i++) {
		rd->mover[i] = continuation_in(new_mask, size + x, size + y);
		filler[i] = continuation_in(new_mask, size + x, size + y);
	}
	rd->grow = continuation_in(new_mask, x, y);     /* X and Y in the new table too */
	for (i = 0; i < GROUP; i++)
		suspend(rd->mover[i], &rd->mover_id[i]);
	suspend(rd->grow, &rd->grow_id);        /* grows, and takes the first step */
	for (i = 0; i < GROUP; i++)             /* each takes the next */
		suspend(filler[i], &filler_id[i]);
	wrong += drive((unsigned)(steps - 2 - (1 + GROUP)));
	for (i = 0; i < GROUP; i++)
		wrong += !resume(filler[i], filler_id[i]);
	return wrong;
}

#endif
