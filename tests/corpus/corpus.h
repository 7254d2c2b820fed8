/*
 * The decoding corpus: cases written by gen-corpus.py (corpus-N.c), run
 * and checked by tests/test-corpus.c.
 */
#ifndef ELT_TESTS_CORPUS_H
#define ELT_TESTS_CORPUS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "probes.h"

/*
 * Whether an async function can return a 16-byte vector on this ABI (in a
 * variadic function, for the _VARIADIC one).  Its final return sets the
 * continuation register to 0; on 32-bit ARM that is r2, where the base
 * standard (soft-float, and a variadic function on armhf) returns the
 * third word of such a vector, so no runtime can return one from an async
 * method in registers (doc/abi.md) and those cases are left out.
 */
#if defined(__arm__) && !defined(__ARM_PCS_VFP)
# define CORPUS_ASYNC_VECTOR16_RESULT 0
# define CORPUS_ASYNC_VECTOR16_RESULT_VARIADIC 0
#elif defined(__arm__)
# define CORPUS_ASYNC_VECTOR16_RESULT 1
# define CORPUS_ASYNC_VECTOR16_RESULT_VARIADIC 0
#else
# define CORPUS_ASYNC_VECTOR16_RESULT 1
# define CORPUS_ASYNC_VECTOR16_RESULT_VARIADIC 1
#endif

/* One signature and the values its case passes. */
struct corpus_case {
	unsigned number;                /* from 1, as gen-corpus.py numbered it */
	const char *signature;
	int async;                      /* has a K (passed as NULL: a call) */
	unsigned nargs;                 /* reported arguments: K excluded */
	const void *const *args;        /* the values passed, in that order */
	const void *ret;                /* the value returned; NULL for void */
	/*
	 * The member each union's initializer set, the only one whose bytes
	 * C specifies (C11 6.2.6.1p7): per value, args then ret at [nargs],
	 * one index per union in the order same_value (test-corpus.c) walks
	 * them; NULL for a value without unions, and the whole table NULL
	 * for a case without any.
	 */
	const unsigned char *const *unions;
	void (*run)(void);              /* Enter, then Leave, then the check */
};

/* The parts, each ended by an entry with a NULL signature. */
#define CORPUS_PARTS 6
extern const struct corpus_case corpus_cases_1[], corpus_cases_2[],
	corpus_cases_3[], corpus_cases_4[], corpus_cases_5[], corpus_cases_6[];
extern const unsigned long corpus_seed;

/* probe_enter's target, where the probe needs one (tests/probes.h). */
#if defined(__i386__)
# define CORPUS_ENTER_TARGET(fn) (probe_enter_target = (fn))
#else
# define CORPUS_ENTER_TARGET(fn) ((void)(fn))
#endif

/* Called by a case with the value its caller finally received from
 * probe_leave: it must be the target's, untouched by the helper. */
void corpus_received(const void *value);

#endif
