/*
 * The demo's workload: a service that answers DEMO_REQUESTS requests, each
 * fanning out to DEMO_PARTS fetches that look keys up behind a cache,
 * score what they found and log, all async, awaiting timers and each
 * other.  Main returns a checksum of every value computed; the workload
 * knows, without running, what it must be and how many segments each
 * method makes.
 */
#ifndef DEMO_WORKLOAD_H
#define DEMO_WORKLOAD_H

#include "scheduler.h"

#define DEMO_REQUESTS 16
#define DEMO_PARTS 6
#define DEMO_WORKERS 4

enum demo_method_index {
	DEMO_MAIN,
	DEMO_REQUEST,
	DEMO_FETCH,
	DEMO_LOOKUP,
	DEMO_SCORE,
	DEMO_LOG,
	DEMO_METHOD_COUNT
};

extern const struct method demo_methods[DEMO_METHOD_COUNT];

/* What a correct run makes. */
struct demo_expected {
	unsigned long invocations[DEMO_METHOD_COUNT];
	unsigned long segments[DEMO_METHOD_COUNT];  /* = Enter/Leave pairs */
	int64_t checksum;                           /* Main's result */
};

/* Registers every method with libasyncelt; 0 on success. */
int workload_register(void);
void workload_expected(struct demo_expected *expected);

#endif
