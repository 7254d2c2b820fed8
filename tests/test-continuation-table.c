/*
 * The continuation table's rarest path, driven on purpose
 * (tests/continuation-rounds.h): while the table grows, suspended
 * invocations moving to the new table find both of their buckets there
 * full.  They must wait in the overflow, move back into the table once
 * the migration is done, and be found by their resumes all the while.
 *
 * Five rounds put 80 movers through the overflow, which holds 64: without
 * the move back the fifth round would lose its movers.  In the first, one
 * mover resumes while in the overflow, and another suspends again under
 * its continuation there (a runtime that reused it): the waiting one is
 * abandoned, and the resume gets the new.  At the end every mover is
 * resumed: each must get its own (latest) call's id, with no orphan and
 * nothing unpublished.  One thread only: tests/test-continuation-race.c
 * makes the races happen.
 */
#include "tap.h"
#include "continuation-rounds.h"

#define ROUNDS 5

static struct round rounds[ROUNDS];
static int resumed_waiting;     /* the first round's, from the overflow */

/* Round r, to its end; the wrong resumes.  A mover resumed already has
 * id 0. */
static unsigned round_on(unsigned r, unsigned bits)
{
	struct round *rd = &rounds[r];
	unsigned wrong = round_begin(rd, r, bits);

	if (r == 0) {
		/* one mover resumes from the overflow */
		resumed_waiting = resume(rd->mover[1], rd->mover_id[1]);
		rd->mover_id[1] = 0;
		/* another suspends again while in the overflow (it takes the
		 * last step but one: the migration is not done yet) */
		suspend(rd->mover[0], &rd->mover_id[0]);
	}
	wrong += drive(r == 0 ? 1 : 2);         /* the end: the movers move back */
	wrong += !resume(rd->grow, rd->grow_id);
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
	    elt_register_function(CONTINUATION_FN, "Moved", "v(K)", ELT_FUNCTION_ASYNC))
		tap_bail("setup: %s", elt_last_error());

	elt_get_invocation_stats(&s0);
	for (r = 0; r < ROUNDS; r++)
		wrong += round_on(r, ELT_TABLE_MIN_BITS + r);
	for (r = 0; r < ROUNDS; r++)
		for (i = 0; i < GROUP; i++)
			if (rounds[r].mover_id[i] &&
			    !resume(rounds[r].mover[i], rounds[r].mover_id[i]) &&
			    wrong_movers++ < 5)
				tap_diag("round %u, mover %u (%#llx): resumed as %llu, "
					 "suspended as %llu", r, i,
					 (unsigned long long)rounds[r].mover[i],
					 (unsigned long long)last.id,
					 (unsigned long long)rounds[r].mover_id[i]);
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
