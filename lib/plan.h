/*
 * Where a function's values live, worked out once at registration by the
 * port's classifier (arch/<arch>/<abi>.c) and only read on the hot path:
 * libffi's prep_cif split, so no ABI rule runs per callback.
 *
 * A value is one or more pieces.  A value of one piece that covers it
 * whole is reported in place; any other is reassembled piece by piece into
 * the callback's scratch buffer, so every range is contiguous.
 */
#ifndef ELT_PLAN_H
#define ELT_PLAN_H

#include <asyncelt.h>
#include <stdint.h>

enum elt_source {
	ELT_SRC_FRAME,          /* offset into the saved register image */
	ELT_SRC_STACK,          /* offset from the caller SP */
	ELT_SRC_FRAME_REF,      /* the image slot holds the value's address */
	ELT_SRC_STACK_REF,      /* the stack slot holds the value's address */
};

struct elt_piece {
	uint8_t source;         /* enum elt_source */
	uint32_t offset;
	uint32_t length;
	uint32_t dest;          /* offset inside the reassembled value */
};

struct elt_value_plan {
	uint32_t size;          /* 0: void */
	uint32_t scratch;       /* where a reassembled value goes */
	uint16_t first;         /* its pieces: pieces[first .. first+count) */
	uint16_t count;
};

/* Reassembled values of one callback share this many bytes; it bounds
 * the stack the dispatcher sets aside for them. */
#define ELT_SCRATCH_SIZE 512

struct elt_plan {
	uint32_t nargs;                 /* reported arguments: K excluded */
	/* Bytes of scratch its reassembled values take: non-zero exactly
	 * when one is not read in place (no value so split is empty), which
	 * is when the dispatcher reserves the buffer. */
	uint32_t scratch_size;
	struct elt_value_plan ret;
	struct elt_value_plan *args;
	struct elt_piece *pieces;
	uint32_t npieces;
	uint32_t has_continuation;
	struct elt_piece continuation;  /* the K argument: one word */
	/* Why values cannot be decoded here, NULL when they can: the return
	 * value and the arguments separately, so one does not hide the other. */
	char *ret_unsupported;
	char *args_unsupported;
};

/* Builds a plan; the classifier calls these in argument order. */
struct elt_plan_builder {
	struct elt_plan *plan;
	uint32_t args_cap, pieces_cap;
	struct elt_value_plan *current;
	int failed;                     /* out of memory */
};

void elt_plan_begin(struct elt_plan_builder *b, struct elt_plan *plan);
/* Starts the return value, or the next argument. */
void elt_plan_return(struct elt_plan_builder *b, uint32_t size);
void elt_plan_argument(struct elt_plan_builder *b, uint32_t size);
/* Adds a piece to the current value; one that continues the previous
 * piece (same place, next bytes) is merged into it. */
void elt_plan_piece(struct elt_plan_builder *b, enum elt_source source,
		    uint32_t offset, uint32_t length, uint32_t dest);
/* Records that this ABI cannot decode the return value, or the arguments;
 * that getter then fails with ELT_E_UNSUPPORTED and this reason (the
 * first one given), the other still works.  A classifier that cannot
 * place an argument stops there: the places of the later ones, K
 * included, depend on it.  One that cannot classify the return value
 * cannot know whether a hidden result pointer takes the first argument
 * register, so it places no argument and no K. */
void elt_plan_return_unsupported(struct elt_plan_builder *b, const char *fmt, ...)
	ELT_PRINTF(2, 3);
void elt_plan_arguments_unsupported(struct elt_plan_builder *b, const char *fmt, ...)
	ELT_PRINTF(2, 3);
/* v rounded up to a multiple of a, a power of two: stack offsets and
 * register numbers in the classifiers. */
static inline uint32_t elt_align_up(uint32_t v, uint32_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* A port's calling convention, as elt_plan_signature() drives it: each
 * port defines one, elt_arch_rules.  The cursor is the port's own
 * (registers and stack used so far), at most ELT_CURSOR_MAX bytes. */
#define ELT_CURSOR_MAX 64
struct elt_abi_rules {
	/* Starts the cursor for `sig`; elt_plan_signature() has zeroed it
	 * first, so a port whose cursor starts all zero leaves this NULL. */
	void (*begin)(void *cursor, const elt_signature *sig);
	/* Places the return value (elt_plan_return was called); 0 when this
	 * ABI does not decode its type, with *why set to the reason or left
	 * NULL ("not decoded yet").  Moves the cursor when a hidden result
	 * pointer takes an argument register. */
	int (*place_return)(struct elt_plan_builder *b, void *cursor,
			    const elt_type *t, const char **why);
	/* Places one argument (elt_plan_argument was called); 0 when not
	 * decoded, *why as above.  `variadic`: it follows the "..." of its
	 * signature. */
	int (*place_argument)(struct elt_plan_builder *b, void *cursor,
			      const elt_type *t, int variadic, const char **why);
	/* A return value this ABI does not decode may come back through a
	 * hidden pointer in an argument register, moving every argument: then
	 * none is placed (and an async function's K cannot be found). */
	int undecoded_return_moves_arguments;
};

/* Classifies a signature with this build's port (elt_arch_rules): the
 * return value, every argument in order, and K, placed like a pointer
 * argument and kept apart (plan->continuation), since it is not reported
 * as an argument. */
elt_status elt_plan_signature(struct elt_plan_builder *b, const elt_signature *sig);

/* Lays out the scratch buffer; fails with ELT_E_NO_MEMORY or
 * ELT_E_UNSUPPORTED (values too large to reassemble). */
int elt_plan_end(struct elt_plan_builder *b);
void elt_plan_free(struct elt_plan *plan);

#endif
