/*
 * The workload's methods (workload.h): their bodies, state machines over
 * their tasks (scheduler.h), and the same computation done plainly, which
 * is what a run must return.
 *
 *   Main(n)            starts Request(0..n-1), awaits them all
 *   Request(id)        yields, starts Fetch(id, 0..DEMO_PARTS-1), awaits
 *                      them all, then awaits Log(id, "request done")
 *   Fetch(id, part)    awaits Lookup(key), a timer, then Score(value)
 *   Lookup(key)        a cache hit (key % 3 == 0) returns at once; a miss
 *                      awaits a timer
 *   Score(value)       awaits a timer; returns a double
 *   Log(id, text)      awaits a timer; returns nothing
 */
#include "workload.h"

#include <asyncelt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The shell instances (methods.S) and the bodies they call. */
void demo_Main(void);
void demo_Request(void);
void demo_Fetch(void);
void demo_Lookup(void);
void demo_Score(void);
void demo_Log(void);
struct shell_int_result demo_main_body(void *k, int32_t requests);
struct shell_int_result demo_request_body(void *k, int32_t id);
struct shell_int_result demo_fetch_body(void *k, int32_t id, int32_t part);
struct shell_int_result demo_lookup_body(void *k, int32_t key);
struct shell_double_result demo_score_body(void *k, int32_t value);
void *demo_log_body(void *k, int32_t id, const char *text);

const struct method demo_methods[DEMO_METHOD_COUNT] = {
	[DEMO_MAIN] = { demo_Main, "Main", "l(K i)", SHELL_RET_INT },
	[DEMO_REQUEST] = { demo_Request, "Request", "l(K i)", SHELL_RET_INT },
	[DEMO_FETCH] = { demo_Fetch, "Fetch", "l(K i i)", SHELL_RET_INT },
	[DEMO_LOOKUP] = { demo_Lookup, "Lookup", "l(K i)", SHELL_RET_INT },
	[DEMO_SCORE] = { demo_Score, "Score", "d(K i)", SHELL_RET_DOUBLE },
	[DEMO_LOG] = { demo_Log, "Log", "v(K i p)", SHELL_RET_VOID },
};

int workload_register(void)
{
	int m;

	for (m = 0; m < DEMO_METHOD_COUNT; m++) {
		const struct method *d = &demo_methods[m];

		if (elt_register_function((elt_function_id)d->code, d->name, d->signature,
					  ELT_FUNCTION_ASYNC) != ELT_OK) {
			fprintf(stderr, "demo: registering %s: %s\n", d->name,
				elt_last_error());
			return -1;
		}
	}
	return 0;
}

/* --- the computation, shared by the bodies and the expectation ---------- */

static int32_t key_of(int32_t id, int32_t part)
{
	return id * DEMO_PARTS + part;
}

static int cache_hit(int32_t key)
{
	return key % 3 == 0;
}

static int32_t lookup_value(int32_t key)
{
	return (int32_t)(((uint64_t)key * 2654435761u) % 100003u);
}

/* The CPU work of a fetch: long enough (0.1 to 0.3 ms natively) that its
 * segments show in a trace next to the timers' milliseconds. */
static int32_t crunch(int32_t key)
{
	uint64_t h = 14695981039346656037u ^ (uint64_t)key;
	unsigned i, rounds = 100000 + 20000 * (unsigned)(key % 8);

	for (i = 0; i < rounds; i++)
		h = (h ^ (i & 0xff)) * 1099511628211u;
	return (int32_t)(h % 1000);
}

static double score_of(int32_t value)
{
	return (double)(value % 1000) / 8.0;    /* exact in binary */
}

static int64_t fetch_value(int32_t key)
{
	int32_t v = lookup_value(key) + crunch(key);

	return v + (int64_t)(score_of(v) * 8.0);
}

/* Timers, in microseconds: staggered so that tasks finish out of order. */
static unsigned lookup_delay(int32_t key) { return 500 + 700 * (unsigned)(key % 4); }
static unsigned fetch_delay(int32_t part) { return 400 * (unsigned)(1 + part); }
#define SCORE_DELAY 300
#define LOG_DELAY 200

static struct shell_int_result suspend_int(void *k)
{
	return (struct shell_int_result){ 0, k };
}

static struct shell_int_result return_int(int64_t value)
{
	return (struct shell_int_result){ value, NULL };
}

/* --- Main ---------------------------------------------------------------- */

struct main_task {
	struct task base;
	int32_t requests;
	uint64_t results[DEMO_REQUESTS];
};

enum { MAIN_FAN_OUT, MAIN_FAN_IN };

struct shell_int_result demo_main_body(void *k, int32_t requests)
{
	struct main_task *t = k;
	struct outcome o;
	int64_t sum = 0;
	int32_t i;

	if (!t) {
		t = task_new(&demo_methods[DEMO_MAIN], sizeof(*t));
		t->requests = requests < DEMO_REQUESTS ? requests : DEMO_REQUESTS;
	}
	switch (t->base.step) {
	case MAIN_FAN_OUT:
		t->base.step = MAIN_FAN_IN;
		task_expect(&t->base, t->requests);
		for (i = 0; i < t->requests; i++) {
			method_call(&demo_methods[DEMO_REQUEST], i, 0, &o);
			task_await(&t->base, o.continuation, &t->results[i]);
		}
		return suspend_int(task_wait(&t->base));
	default:
		for (i = 0; i < t->requests; i++)
			sum += (int64_t)(i + 1) * (int64_t)t->results[i];
		return return_int(sum);
	}
}

/* --- Request ------------------------------------------------------------- */

struct request_task {
	struct task base;
	int32_t id;
	uint64_t parts[DEMO_PARTS];
	uint64_t logged;
};

enum { REQUEST_START, REQUEST_FAN_OUT, REQUEST_LOG, REQUEST_DONE };

struct shell_int_result demo_request_body(void *k, int32_t id)
{
	static const char done_text[] = "request done";
	struct request_task *t = k;
	struct outcome o;
	int64_t sum = 0;
	int32_t part;

	if (!t) {
		t = task_new(&demo_methods[DEMO_REQUEST], sizeof(*t));
		t->id = id;
	}
	switch (t->base.step) {
	case REQUEST_START:
		t->base.step = REQUEST_FAN_OUT;
		task_expect(&t->base, 1);
		task_yield(&t->base);
		return suspend_int(task_wait(&t->base));
	case REQUEST_FAN_OUT:
		t->base.step = REQUEST_LOG;
		task_expect(&t->base, DEMO_PARTS);
		for (part = 0; part < DEMO_PARTS; part++) {
			method_call(&demo_methods[DEMO_FETCH], t->id, part, &o);
			task_await(&t->base, o.continuation, &t->parts[part]);
		}
		return suspend_int(task_wait(&t->base));
	case REQUEST_LOG:
		t->base.step = REQUEST_DONE;
		method_call(&demo_methods[DEMO_LOG], t->id, (intptr_t)done_text, &o);
		task_expect(&t->base, 1);
		task_await(&t->base, o.continuation, &t->logged);
		return suspend_int(task_wait(&t->base));
	default:
		for (part = 0; part < DEMO_PARTS; part++)
			sum += (int64_t)t->parts[part];
		return return_int(sum);
	}
}

/* --- Fetch --------------------------------------------------------------- */

struct fetch_task {
	struct task base;
	int32_t id, part;
	uint64_t found;                 /* Lookup's result */
	int32_t value;
	uint64_t score;                 /* Score's result: a double's bits */
};

enum { FETCH_START, FETCH_FOUND, FETCH_DELAYED, FETCH_SCORED };

struct shell_int_result demo_fetch_body(void *k, int32_t id, int32_t part)
{
	struct fetch_task *t = k;
	struct outcome o;
	double score;
	int64_t value;

	if (!t) {
		t = task_new(&demo_methods[DEMO_FETCH], sizeof(*t));
		t->id = id;
		t->part = part;
	}
	switch (t->base.step) {
	case FETCH_START:
		method_call(&demo_methods[DEMO_LOOKUP], (intptr_t)key_of(t->id, t->part), 0, &o);
		if (o.continuation) {   /* a miss: await it */
			t->base.step = FETCH_FOUND;
			task_expect(&t->base, 1);
			task_await(&t->base, o.continuation, &t->found);
			return suspend_int(task_wait(&t->base));
		}
		t->found = o.value;     /* a hit goes on at once */
		/* fall through */
	case FETCH_FOUND:
		t->base.step = FETCH_DELAYED;
		task_expect(&t->base, 1);
		task_sleep(&t->base, fetch_delay(t->part));
		return suspend_int(task_wait(&t->base));
	case FETCH_DELAYED:
		t->value = (int32_t)t->found + crunch(key_of(t->id, t->part));
		t->base.step = FETCH_SCORED;
		method_call(&demo_methods[DEMO_SCORE], (intptr_t)t->value, 0, &o);
		task_expect(&t->base, 1);
		task_await(&t->base, o.continuation, &t->score);
		return suspend_int(task_wait(&t->base));
	default:
		memcpy(&score, &t->score, sizeof(score));
		value = t->value + (int64_t)(score * 8.0);
		return return_int(value);
	}
}

/* --- Lookup, Score, Log: leaves that await timers ------------------------- */

struct lookup_task {
	struct task base;
	int32_t key;
};

struct shell_int_result demo_lookup_body(void *k, int32_t key)
{
	struct lookup_task *t = k;

	if (!t) {
		if (cache_hit(key))
			return return_int(lookup_value(key));
		t = task_new(&demo_methods[DEMO_LOOKUP], sizeof(*t));
		t->key = key;
		t->base.step = 1;
		task_expect(&t->base, 1);
		task_sleep(&t->base, lookup_delay(key));
		return suspend_int(task_wait(&t->base));
	}
	key = t->key;
	return return_int(lookup_value(key));
}

struct score_task {
	struct task base;
	int32_t value;
};

struct shell_double_result demo_score_body(void *k, int32_t value)
{
	struct score_task *t = k;

	if (!t) {
		t = task_new(&demo_methods[DEMO_SCORE], sizeof(*t));
		t->value = value;
		task_expect(&t->base, 1);
		task_sleep(&t->base, SCORE_DELAY);
		return (struct shell_double_result){ 0.0, task_wait(&t->base) };
	}
	value = t->value;
	return (struct shell_double_result){ score_of(value), NULL };
}

void *demo_log_body(void *k, int32_t id, const char *text)
{
	struct task *t = k;

	(void)id;
	(void)text;             /* the plugins print the arguments */
	if (!t) {
		t = task_new(&demo_methods[DEMO_LOG], sizeof(*t));
		task_expect(t, 1);
		task_sleep(t, LOG_DELAY);
		return task_wait(t);
	}
	return NULL;
}

/* --- what a run must give ------------------------------------------------ */

void workload_expected(struct demo_expected *e)
{
	int32_t id, part;

	memset(e, 0, sizeof(*e));
	e->invocations[DEMO_MAIN] = 1;
	e->segments[DEMO_MAIN] = 2;             /* call, fan-in */
	for (id = 0; id < DEMO_REQUESTS; id++) {
		int64_t sum = 0;

		e->invocations[DEMO_REQUEST]++;
		e->segments[DEMO_REQUEST] += 4; /* call, yield, fan-in, log */
		e->invocations[DEMO_LOG]++;
		e->segments[DEMO_LOG] += 2;
		for (part = 0; part < DEMO_PARTS; part++) {
			int32_t key = key_of(id, part);

			e->invocations[DEMO_FETCH]++;
			e->invocations[DEMO_LOOKUP]++;
			e->invocations[DEMO_SCORE]++;
			/* the lookup, a miss awaited, the timer, the score */
			e->segments[DEMO_FETCH] += cache_hit(key) ? 3 : 4;
			e->segments[DEMO_LOOKUP] += cache_hit(key) ? 1 : 2;
			e->segments[DEMO_SCORE] += 2;
			sum += fetch_value(key);
		}
		e->checksum += (int64_t)(id + 1) * sum;
	}
}
