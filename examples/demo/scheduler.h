/*
 * The demo's async runtime: tasks (the continuations of suspended
 * methods), a pool of worker threads that resume them, and a timer thread.
 *
 * A method's body is a state machine over its task.  To await, it sets
 * its next step, announces how many things it awaits (task_expect), names
 * them (task_await for a suspended method it called, task_sleep for a
 * timer, task_yield for nothing but a trip through the pool), and returns
 * task_wait(): from then on the task may be resumed on another thread at
 * any moment, so the body touches it no more.  When a resumed body
 * returns for good, the runtime hands its result to the awaiter and frees
 * the task.  Every await suspends, even
 * when what it awaits has finished already: a run always has the same
 * number of segments, which the demo checks.
 *
 * A resume never runs on the thread the task suspended on.
 */
#ifndef DEMO_SCHEDULER_H
#define DEMO_SCHEDULER_H

#include <stdatomic.h>
#include <stdint.h>

#include "../method-shell/shell.h"

/* An instrumented method, as the runtime registers it. */
struct method {
	void (*code)(void);     /* the shell instance: also its function id */
	const char *name;
	const char *signature;  /* K first, then the arguments */
	int kind;               /* SHELL_RET_INT, _DOUBLE or _VOID */
};

struct task {
	const struct method *method;
	int step;                       /* where the body goes on */
	int suspended_on;               /* worker index, -1: not a worker */
	_Atomic int pending;            /* awaits outstanding, plus one */
	_Atomic(struct task *) awaiter; /* who awaits this one */
	uint64_t *result_dest;          /* where the awaiter wants the result */
	uint64_t result;                /* kept when it finishes unawaited */
	struct task *next;              /* in a run queue or nowhere */
};

/* What a call or resume of a method gave back. */
struct outcome {
	uint64_t value;         /* the result's bits (int64 or double) */
	void *continuation;     /* non-NULL: it suspended */
};

struct scheduler_stats {
	unsigned long segments;         /* method calls and resumes run */
	unsigned long resumes;
	unsigned long same_thread_resumes;      /* want 0 */
	unsigned long continuation_clobbered;   /* by a Leave helper: want 0 */
};

/* For the method bodies. */
void *task_new(const struct method *method, size_t size);
void task_expect(struct task *t, int awaits);
void task_await(struct task *t, void *continuation, uint64_t *dest);
void task_sleep(struct task *t, unsigned microseconds);
void task_yield(struct task *t);
void *task_wait(struct task *t);

/* Calls a method (K = NULL), as its caller's code would. */
void method_call(const struct method *method, intptr_t a0, intptr_t a1,
		 struct outcome *out);

/* Starts the workers and the timer thread; 0 on success. */
int scheduler_start(int workers);
/* From a thread that is no worker: has a worker call `method` and waits
 * until it has finished.  Its result's bits go to *result. */
int scheduler_run(const struct method *method, intptr_t a0, uint64_t *result);
/* Stops the threads. */
void scheduler_stop(struct scheduler_stats *stats);

#endif
