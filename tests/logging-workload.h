/*
 * The workload both logging tests run (test-logging.c for text and JSON,
 * test-logging-binary.c for binary recordings), through the producer API:
 * THREADS threads of INVOCATIONS invocations of Work, each a call, a
 * suspension, its resume and a return, with a call of Plain nested in its
 * first segment.  Work is "l(K i d)", Plain "v(p)".
 */
#ifndef ELT_TESTS_LOGGING_WORKLOAD_H
#define ELT_TESTS_LOGGING_WORKLOAD_H

#include <asyncelt.h>

#include <stdint.h>

#define THREADS 4
#define INVOCATIONS 100         /* per thread */
#define ALL (THREADS * INVOCATIONS)

static const elt_function_id WORK = 0x100, PLAIN = 0x200;

/* arg: the thread's number, which makes its continuations its own. */
static void *worker(void *arg)
{
	uintptr_t base = ((uintptr_t)arg + 1) << 20;
	int32_t i32 = 7;
	double d = 0.5;
	int64_t result = 42;
	void *work_args[] = { &i32, &d };
	void *pointer = (void *)(uintptr_t)0xfeed;
	void *plain_args[] = { &pointer };
	int i;

	for (i = 0; i < INVOCATIONS; i++) {
		void *k = (void *)(base + (uintptr_t)i * 16);

		elt_emit_enter(WORK, work_args, NULL);
		elt_emit_enter(PLAIN, plain_args, NULL);
		elt_emit_leave(PLAIN, NULL, NULL);
		elt_emit_leave(WORK, NULL, k);
		elt_emit_enter(WORK, NULL, k);
		elt_emit_leave(WORK, &result, NULL);
	}
	return NULL;
}

#endif
