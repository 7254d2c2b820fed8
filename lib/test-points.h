/*
 * Where a race can happen, named so that a test can make it happen: in
 * a build for tests only (ELT_TEST_HOOKS: the library that
 * tests/test-continuation-race, test-fork-table, test-thread-signals,
 * test-info-signal, test-stop-in-flight and test-error-race link),
 * each point calls elt_test_hook, which may run another thread's work
 * right there, or hold this one there.  In the library itself the points
 * are nothing.
 */
#ifndef ELT_TEST_POINTS_H
#define ELT_TEST_POINTS_H

#include <stdint.h>

enum elt_test_point {
	ELT_POINT_TAKE_MISSED,          /* a resume missed in the tables and
					   is about to scan the overflow */
	ELT_POINT_OVERFLOW_BUSY,        /* a resume met its record claimed in
					   the overflow */
	ELT_POINT_REHOME_CLAIMED,       /* a record claimed in the overflow is
					   about to move back into the table */
	ELT_POINT_MIGRATE_FROZEN,       /* a migration froze a slot holding a
					   record, not yet moved */
	ELT_POINT_GROWING,              /* a suspension holds `growing`, about
					   to map a larger table (continuation 0) */
	ELT_POINT_REHOME_INSERTED,      /* a record claimed in the overflow is
					   in the table, still in the overflow */
	ELT_POINT_ATTACHING,            /* a thread's first segment saw its
					   flags 0 and has not claimed them */
	ELT_POINT_THREADS_LOCKED,       /* the thread list is locked for a
					   walk (continuation 0 for both) */
	ELT_POINT_FLAG_RAISING,         /* a helper's segment found its thread
					   attached, its flag not yet up */
	ELT_POINT_MESSAGE_MAPPED,       /* a thread's first failure mapped the
					   page of its message (the page's
					   address), not yet claimed */
	ELT_POINT_ASYNC_COUNTED,        /* an async segment's start or end is
					   in its thread's count, not yet in
					   its shard's (continuation 0) */
};

#if defined(ELT_TEST_HOOKS)
extern void (*elt_test_hook)(enum elt_test_point point, uintptr_t continuation);
/* ELT_POINT_FLAG_RAISING, for a helper that raises the flag itself
 * (dispatch.c). */
void elt_test_point_flag_raising(void);
# define ELT_TEST_POINT(point, continuation) do {                       \
		if (elt_test_hook)                                      \
			elt_test_hook(point, continuation);             \
	} while (0)
#else
# define ELT_TEST_POINT(point, continuation) ((void)0)
#endif

#endif
