/*
 * The toy runtime's C half: the method bodies, continuations, and a
 * scheduler that resumes every suspended method on a different worker
 * thread than the one it suspended on.
 */
#include "runtime.h"
#include "../method-shell/shell.h"

#include <asyncelt.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

/* The continuation: what a suspended method needs to go on.  A new one
 * per suspension, as a runtime allocates them. */
struct continuation {
	int i, n;
	int64_t sum;
	double dsum;
	pthread_t suspended_on;
};

struct int_result { int64_t value; void *cont; };
struct double_result { double value; void *cont; };

/* Assembly (methods.S). */
void seed_Work(void);
void seed_WorkVoid(void);
void seed_WorkDouble(void);
void seed_invoke(void (*method)(void), struct shell_call *call);
struct int_result seed_work_body(struct continuation *k, int n);
void *seed_work_void_body(struct continuation *k, int n);
struct double_result seed_work_double_body(struct continuation *k, int n);
_Atomic unsigned long seed_continuation_clobbered;

enum { WORK, WORK_VOID, WORK_DOUBLE };
const char *const seed_method_names[3] = { "Work", "WorkVoid", "WorkDouble" };
static void (*const methods[3])(void) = { seed_Work, seed_WorkVoid, seed_WorkDouble };

uintptr_t seed_method_id(int method)
{
	return (uintptr_t)methods[method];
}

int seed_register(void)
{
	int m;

	for (m = 0; m < 3; m++) {
		/* K: the continuation comes first, then the int32 n */
		static const char *const sig[3] = { "l(K i)", "v(K i)", "d(K i)" };
		elt_status st = elt_register_function(seed_method_id(m), seed_method_names[m],
						      sig[m], ELT_FUNCTION_ASYNC);
		if (st != ELT_OK) {
			fprintf(stderr, "seed: registering %s: %s\n", seed_method_names[m],
				elt_last_error());
			return -1;
		}
	}
	return 0;
}

/* --- bodies: one await per iteration ------------------------------------- */

static _Atomic unsigned long same_thread_resumes;

/* Picks up where the last segment stopped, or starts. */
static struct continuation resume_state(struct continuation *k, int n)
{
	struct continuation s = { 0, n, 0, 0.0, pthread_self() };

	if (k) {
		s = *k;
		if (pthread_equal(k->suspended_on, pthread_self()))
			atomic_fetch_add(&same_thread_resumes, 1);
		free(k);
	}
	return s;
}

static struct continuation *suspend(const struct continuation *s)
{
	struct continuation *k = malloc(sizeof(*k));

	if (!k)
		abort();
	*k = *s;
	k->suspended_on = pthread_self();
	return k;
}

struct int_result seed_work_body(struct continuation *k, int n)
{
	struct continuation s = resume_state(k, n);

	if (k)                          /* the awaited value arrives */
		s.sum += s.i++;
	if (s.i < s.n)
		return (struct int_result){ 0, suspend(&s) };
	return (struct int_result){ s.sum, NULL };
}

void *seed_work_void_body(struct continuation *k, int n)
{
	struct continuation s = resume_state(k, n);

	if (k)
		s.i++;
	return s.i < s.n ? suspend(&s) : NULL;
}

struct double_result seed_work_double_body(struct continuation *k, int n)
{
	struct continuation s = resume_state(k, n);

	if (k)
		s.dsum += s.i++ + 0.5;
	if (s.i < s.n)
		return (struct double_result){ 0.0, suspend(&s) };
	return (struct double_result){ s.dsum, NULL };
}

/* --- the scheduler ------------------------------------------------------- */

#define WORKERS 3
#define INVOCATIONS 7

struct invocation {
	int method;
	struct continuation *k;         /* to resume with */
	struct shell_call call;         /* the last segment's */
	int done;
	struct invocation *next;        /* in a worker's queue */
};

struct worker {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct invocation *queue;
	int stop;
};

static struct worker workers[WORKERS];
static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cond = PTHREAD_COND_INITIALIZER;
static unsigned remaining;
static _Atomic unsigned long segments;

static void post(int w, struct invocation *inv)
{
	pthread_mutex_lock(&workers[w].lock);
	inv->next = workers[w].queue;
	workers[w].queue = inv;
	pthread_cond_signal(&workers[w].wake);
	pthread_mutex_unlock(&workers[w].lock);
}

/* Runs one segment on worker `self` (-1: the main thread); a suspended
 * method goes to the next worker, so it never resumes where it stopped. */
static void run_segment(struct invocation *inv, int self)
{
	/* A resume's other arguments are meaningless: pass garbage. */
	int n = inv->k ? -12345 : (inv->method == WORK ? 4 : 2);

	inv->call = (struct shell_call){
		.continuation = (uint64_t)(uintptr_t)inv->k,
		.args = { (uint64_t)(int64_t)n },
	};
	seed_invoke(methods[inv->method], &inv->call);
	atomic_fetch_add(&segments, 1);
	if (inv->call.continuation_out) {
		inv->k = (struct continuation *)(uintptr_t)inv->call.continuation_out;
		post((self + 1) % WORKERS, inv);
		return;
	}
	pthread_mutex_lock(&done_lock);
	inv->done = 1;
	remaining--;
	pthread_cond_broadcast(&done_cond);
	pthread_mutex_unlock(&done_lock);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	int self = (int)(w - workers);

	for (;;) {
		struct invocation *inv;

		pthread_mutex_lock(&w->lock);
		while (!w->queue && !w->stop)
			pthread_cond_wait(&w->wake, &w->lock);
		inv = w->queue;
		if (inv)
			w->queue = inv->next;
		pthread_mutex_unlock(&w->lock);
		if (!inv)
			return NULL;
		run_segment(inv, self);
	}
}

int seed_run(struct seed_results *r)
{
	struct invocation inv[INVOCATIONS] = { { 0 } };
	int i;

	for (i = 0; i < WORKERS; i++) {
		pthread_mutex_init(&workers[i].lock, NULL);
		pthread_cond_init(&workers[i].wake, NULL);
		if (pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]))
			return -1;
	}
	remaining = INVOCATIONS;
	for (i = 0; i < INVOCATIONS; i++) {
		inv[i].method = i < 5 ? WORK : i == 5 ? WORK_VOID : WORK_DOUBLE;
		run_segment(&inv[i], -1);       /* the initial call, on main */
	}
	pthread_mutex_lock(&done_lock);
	while (remaining)
		pthread_cond_wait(&done_cond, &done_lock);
	pthread_mutex_unlock(&done_lock);

	for (i = 0; i < WORKERS; i++) {
		pthread_mutex_lock(&workers[i].lock);
		workers[i].stop = 1;
		pthread_cond_signal(&workers[i].wake);
		pthread_mutex_unlock(&workers[i].lock);
		pthread_join(workers[i].thread, NULL);
	}

	r->work_total = 0;
	for (i = 0; i < 5; i++)
		r->work_total += inv[i].call.int_result;
	r->void_completed = inv[5].done;
	r->work_double = inv[6].call.double_result;
	r->segments = atomic_load(&segments);
	r->same_thread_resumes = atomic_load(&same_thread_resumes);
	r->continuation_clobbered = atomic_load(&seed_continuation_clobbered);
	return 0;
}
