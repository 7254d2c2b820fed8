/*
 * A toy runtime with runtime-async methods, enough to replay the .NET
 * regression scenario of the seed: Work(4) five times (a 64-bit sum),
 * WorkVoid(2), WorkDouble(2) (a double), each await suspending and the
 * resume running on another thread.  The methods' prologs and epilogs are
 * assembly that calls the helpers exactly as a JIT's code would
 * (methods.S); their bodies are C.
 */
#ifndef SEED_RUNTIME_H
#define SEED_RUNTIME_H

#include <stdint.h>

struct seed_results {
	int64_t work_total;             /* 5 x Work(4): want 30 */
	double work_double;             /* WorkDouble(2): want 2.0 */
	unsigned void_completed;        /* WorkVoid(2) finished: want 1 */
	unsigned long segments;         /* physical segments run */
	unsigned long same_thread_resumes;      /* want 0 */
	unsigned long continuation_clobbered;   /* by a Leave helper: want 0 */
};

/* The methods, by the id they are registered under. */
extern const char *const seed_method_names[3];
uintptr_t seed_method_id(int method);

/* Registers the three methods with libasyncelt. */
int seed_register(void);
/* Runs the scenario on a pool of worker threads; 0 on success. */
int seed_run(struct seed_results *results);

#endif
