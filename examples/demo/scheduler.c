/*
 * The demo's runtime (scheduler.h): the await protocol, the worker pool
 * with one run queue per worker, and the timer thread with its heap.
 */
#include "scheduler.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The shell's dispatcher side and the clobber counter (methods.S). */
void demo_invoke(void (*method)(void), struct shell_call *call);
_Atomic unsigned long demo_continuation_clobbered;

/* What a resume passes for the arguments: a resume has none, and the
 * runtime does not bother to clear the registers. */
#define RESUME_JUNK ((intptr_t)0x5eed5eed)

#define MAX_WORKERS 16

struct worker {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct task *head, *tail;       /* FIFO of tasks to resume */
	int stop;
};

static struct worker workers[MAX_WORKERS];
static int nworkers;
static _Atomic unsigned next_worker;
static _Thread_local int current_worker = -1;

static _Atomic unsigned long segments, resumes, same_thread_resumes;

/* A task's awaiter once it has finished with nobody awaiting it yet. */
#define FINISHED ((struct task *)&finished_marker)
static const char finished_marker;

/* scheduler_run's call: posted to a worker like a resume (the main
 * thread runs no method), and the task that awaits it. */
static struct {
	struct task base;
	const struct method *method;
	intptr_t arg;
	uint64_t *result;
} root_call = { .base.suspended_on = -1 };
static struct task root_sink;
static pthread_mutex_t root_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t root_done_cond = PTHREAD_COND_INITIALIZER;
static int root_done;

/* --- calls into the shells ----------------------------------------------- */

static void invoke(const struct method *m, intptr_t k, intptr_t a0, intptr_t a1,
		   struct outcome *out)
{
	struct shell_call call = {
		.continuation = (uint64_t)k,
		.args = { (uint64_t)a0, (uint64_t)a1 },
	};

	demo_invoke(m->code, &call);
	atomic_fetch_add_explicit(&segments, 1, memory_order_relaxed);
	out->continuation = (void *)(uintptr_t)call.continuation_out;
	if (m->kind == SHELL_RET_DOUBLE)
		memcpy(&out->value, &call.double_result, sizeof(out->value));
	else if (m->kind == SHELL_RET_INT)
		out->value = (uint64_t)call.int_result;
	else
		out->value = 0;
}

void method_call(const struct method *method, intptr_t a0, intptr_t a1,
		 struct outcome *out)
{
	invoke(method, 0, a0, a1, out);
}

/* --- the await protocol -------------------------------------------------- */

static void post(struct task *t);

static void signal_root_done(void)
{
	pthread_mutex_lock(&root_lock);
	root_done = 1;
	pthread_cond_broadcast(&root_done_cond);
	pthread_mutex_unlock(&root_lock);
}

/* One of t's awaits is over; the last one schedules its resume. */
static void arrive(struct task *t)
{
	if (atomic_fetch_sub(&t->pending, 1) != 1)
		return;
	if (t == &root_sink)
		signal_root_done();
	else
		post(t);
}

void *task_new(const struct method *method, size_t size)
{
	struct task *t = calloc(1, size);

	if (!t) {
		fprintf(stderr, "demo: out of memory\n");
		abort();
	}
	t->method = method;
	t->suspended_on = -1;
	return t;
}

void task_expect(struct task *t, int awaits)
{
	t->suspended_on = current_worker;
	atomic_store(&t->pending, awaits + 1);  /* + 1: task_wait's */
}

/* The awaited task may have finished already, on another worker: then it
 * left its result behind for us, and we free it. */
void task_await(struct task *t, void *continuation, uint64_t *dest)
{
	struct task *awaited = continuation, *nobody = NULL;

	awaited->result_dest = dest;
	if (atomic_compare_exchange_strong(&awaited->awaiter, &nobody, t))
		return;
	*dest = awaited->result;
	free(awaited);
	arrive(t);
}

void task_yield(struct task *t)
{
	arrive(t);
}

void *task_wait(struct task *t)
{
	arrive(t);
	return t;
}

/* A task's method returned for good: hand the result to its awaiter. */
static void task_finish(struct task *t, uint64_t value)
{
	struct task *awaiter;

	t->result = value;
	awaiter = atomic_exchange(&t->awaiter, FINISHED);
	if (!awaiter)
		return;                 /* task_await will collect it */
	*t->result_dest = value;
	free(t);
	arrive(awaiter);
}

/* --- the timer thread ---------------------------------------------------- */

struct timer {
	uint64_t deadline;              /* timer_clock, ns */
	struct task *task;
};

static struct {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct timer *heap;             /* a binary min-heap on deadline */
	size_t count, capacity;
	int stop;
} timers = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* The timers' clock, the one the timer thread's condition variable
 * waits on: CLOCK_MONOTONIC where pthread_condattr_setclock takes it, else
 * (winpthreads) CLOCK_REALTIME. */
static clockid_t timer_clock = CLOCK_MONOTONIC;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(timer_clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void heap_swap(size_t a, size_t b)
{
	struct timer tmp = timers.heap[a];

	timers.heap[a] = timers.heap[b];
	timers.heap[b] = tmp;
}

static void heap_push(struct timer timer)
{
	size_t i;

	if (timers.count == timers.capacity) {
		size_t capacity = timers.capacity ? 2 * timers.capacity : 256;
		struct timer *heap = realloc(timers.heap, capacity * sizeof(*heap));

		if (!heap) {
			fprintf(stderr, "demo: out of memory\n");
			abort();
		}
		timers.heap = heap;
		timers.capacity = capacity;
	}
	i = timers.count++;
	timers.heap[i] = timer;
	for (; i > 0 && timers.heap[(i - 1) / 2].deadline > timers.heap[i].deadline;
	     i = (i - 1) / 2)
		heap_swap(i, (i - 1) / 2);
}

static struct task *heap_pop(void)
{
	struct task *t = timers.heap[0].task;
	size_t i = 0;

	timers.heap[0] = timers.heap[--timers.count];
	for (;;) {
		size_t smallest = i, l = 2 * i + 1, r = l + 1;

		if (l < timers.count && timers.heap[l].deadline < timers.heap[smallest].deadline)
			smallest = l;
		if (r < timers.count && timers.heap[r].deadline < timers.heap[smallest].deadline)
			smallest = r;
		if (smallest == i)
			return t;
		heap_swap(i, smallest);
		i = smallest;
	}
}

void task_sleep(struct task *t, unsigned microseconds)
{
	struct timer timer = { now_ns() + microseconds * (uint64_t)1000, t };

	pthread_mutex_lock(&timers.lock);
	heap_push(timer);
	if (timers.heap[0].task == t)   /* a new earliest deadline */
		pthread_cond_signal(&timers.wake);
	pthread_mutex_unlock(&timers.lock);
}

static void *timer_main(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&timers.lock);
	while (!timers.stop) {
		uint64_t now = now_ns();

		if (!timers.count) {
			pthread_cond_wait(&timers.wake, &timers.lock);
		} else if (timers.heap[0].deadline <= now) {
			struct task *t = heap_pop();

			pthread_mutex_unlock(&timers.lock);
			arrive(t);
			pthread_mutex_lock(&timers.lock);
		} else {
			uint64_t deadline = timers.heap[0].deadline;
			struct timespec ts = {
				(time_t)(deadline / 1000000000u),
				(long)(deadline % 1000000000u),
			};

			pthread_cond_timedwait(&timers.wake, &timers.lock, &ts);
		}
	}
	pthread_mutex_unlock(&timers.lock);
	return NULL;
}

/* --- the workers --------------------------------------------------------- */

/* Round robin over the workers, skipping the one the task suspended on. */
static void post(struct task *t)
{
	unsigned w = atomic_fetch_add(&next_worker, 1) % (unsigned)nworkers;

	if ((int)w == t->suspended_on)
		w = (w + 1) % (unsigned)nworkers;
	pthread_mutex_lock(&workers[w].lock);
	t->next = NULL;
	if (workers[w].tail)
		workers[w].tail->next = t;
	else
		workers[w].head = t;
	workers[w].tail = t;
	pthread_cond_signal(&workers[w].wake);
	pthread_mutex_unlock(&workers[w].lock);
}

/* The root method's initial call, on a worker. */
static void call_root(void)
{
	struct outcome out;

	method_call(root_call.method, root_call.arg, 0, &out);
	if (!out.continuation) {
		*root_call.result = out.value;
		signal_root_done();
		return;
	}
	task_expect(&root_sink, 1);
	task_await(&root_sink, out.continuation, root_call.result);
	task_wait(&root_sink);
}

static void resume(struct task *t)
{
	struct outcome out;

	if (t == &root_call.base) {
		call_root();
		return;
	}

	atomic_fetch_add_explicit(&resumes, 1, memory_order_relaxed);
	if (t->suspended_on == current_worker)
		atomic_fetch_add_explicit(&same_thread_resumes, 1, memory_order_relaxed);
	invoke(t->method, (intptr_t)t, RESUME_JUNK, RESUME_JUNK, &out);
	if (!out.continuation)
		task_finish(t, out.value);
	/* else: it awaits again, and has said what it awaits */
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	current_worker = (int)(w - workers);
	for (;;) {
		struct task *t;

		pthread_mutex_lock(&w->lock);
		while (!w->head && !w->stop)
			pthread_cond_wait(&w->wake, &w->lock);
		t = w->head;
		if (t) {
			w->head = t->next;
			if (!w->head)
				w->tail = NULL;
		}
		pthread_mutex_unlock(&w->lock);
		if (!t)
			return NULL;
		resume(t);
	}
}

int scheduler_start(int count)
{
	pthread_condattr_t attr;
	int i;

	if (count < 2 || count > MAX_WORKERS) {
		fprintf(stderr, "demo: %d workers: want 2 to %d\n", count, MAX_WORKERS);
		return -1;
	}
	if (pthread_condattr_init(&attr))
		return -1;
	if (pthread_condattr_setclock(&attr, CLOCK_MONOTONIC))
		timer_clock = CLOCK_REALTIME;
	if (pthread_cond_init(&timers.wake, &attr) ||
	    pthread_create(&timers.thread, NULL, timer_main, NULL)) {
		fprintf(stderr, "demo: cannot start the timer thread\n");
		return -1;
	}
	pthread_condattr_destroy(&attr);
	nworkers = count;
	for (i = 0; i < count; i++) {
		pthread_mutex_init(&workers[i].lock, NULL);
		pthread_cond_init(&workers[i].wake, NULL);
		if (pthread_create(&workers[i].thread, NULL, worker_main, &workers[i])) {
			fprintf(stderr, "demo: cannot start worker %d\n", i);
			return -1;
		}
	}
	return 0;
}

int scheduler_run(const struct method *method, intptr_t a0, uint64_t *result)
{
	root_call.method = method;
	root_call.arg = a0;
	root_call.result = result;
	post(&root_call.base);
	pthread_mutex_lock(&root_lock);
	while (!root_done)
		pthread_cond_wait(&root_done_cond, &root_lock);
	pthread_mutex_unlock(&root_lock);
	return 0;
}

void scheduler_stop(struct scheduler_stats *stats)
{
	int i;

	for (i = 0; i < nworkers; i++) {
		pthread_mutex_lock(&workers[i].lock);
		workers[i].stop = 1;
		pthread_cond_signal(&workers[i].wake);
		pthread_mutex_unlock(&workers[i].lock);
		pthread_join(workers[i].thread, NULL);
	}
	pthread_mutex_lock(&timers.lock);
	timers.stop = 1;
	pthread_cond_signal(&timers.wake);
	pthread_mutex_unlock(&timers.lock);
	pthread_join(timers.thread, NULL);
	free(timers.heap);

	stats->segments = atomic_load(&segments);
	stats->resumes = atomic_load(&resumes);
	stats->same_thread_resumes = atomic_load(&same_thread_resumes);
	stats->continuation_clobbered = atomic_load(&demo_continuation_clobbered);
}
