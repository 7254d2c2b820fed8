/*
 * The seed's regression scenario through the real helpers: Work(4) x5,
 * WorkVoid(2), WorkDouble(2), every resume on another thread.  Checks the
 * pair counts (check plugin), the kinds of every invocation in order
 * (a recorder stitches segments through their continuations), the
 * continuation intact after every suspension Leave, and the results.
 */
#include "tap.h"
#include "runtime.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <pthread.h>
#include <stdatomic.h>

extern const elt_plugin elt_plugin_check;

/* Every callback, in the order each thread saw them. */
struct event {
	elt_function_id id;
	elt_segment_kind kind;
	uintptr_t continuation;
	pthread_t thread;
	elt_status info_st;             /* enter or return info */
	int64_t value;                  /* first argument or the result */
};
#define MAX_EVENTS 1024
static struct event events[MAX_EVENTS];
static _Atomic unsigned nevents;

static void recorder_cb(const elt_info *info, void *state)
{
	unsigned i = atomic_fetch_add(&nevents, 1);
	struct event *e = &events[i < MAX_EVENTS ? i : MAX_EVENTS - 1];
	void *k = NULL;

	(void)state;
	e->id = elt_get_function_id(info);
	e->kind = elt_get_segment_kind(info);
	elt_get_continuation(info, &k);
	e->continuation = (uintptr_t)k;
	e->thread = pthread_self();
	if (e->kind == ELT_SEGMENT_CALL || e->kind == ELT_SEGMENT_RESUME) {
		elt_range r[2];
		size_t n = 2;

		e->info_st = elt_get_enter_info(info, r, &n, NULL);
		if (e->info_st == ELT_OK)
			e->value = *(const int32_t *)r[0].start;
	} else {
		elt_range r;

		e->info_st = elt_get_return_info(info, &r);
		if (e->info_st == ELT_OK && r.length == 8)
			memcpy(&e->value, (const void *)r.start, 8);
	}
}

ELT_PLUGIN_DEFINE(recorder, .enter = recorder_cb, .leave = recorder_cb);

/* Follows one invocation from its call through its continuations; returns
 * the number of segments, or -1 (with a diagnostic) when out of order. */
static int follow(unsigned call, int method)
{
	static const unsigned want_segments[3] = { 5, 3, 3 };
	unsigned e = call, segments = 0, j;

	for (;;) {
		unsigned leave;

		/* the Leave of this segment: the next event of its thread */
		for (leave = e + 1; leave < nevents; leave++)
			if (pthread_equal(events[leave].thread, events[e].thread))
				break;
		if (leave == nevents || events[leave].id != events[e].id)
			return tap_diag("segment at event %u has no Leave", e), -1;
		segments++;
		if (events[leave].kind == ELT_SEGMENT_RETURN)
			break;
		if (events[leave].kind != ELT_SEGMENT_SUSPEND)
			return tap_diag("event %u: %s", leave,
					elt_segment_kind_name(events[leave].kind)), -1;
		/* its resume: the first later Enter that receives the
		 * continuation (the runtime resumes only after the Leave
		 * returned; an address may be reused afterwards) */
		for (j = leave + 1; j < nevents; j++)
			if (events[j].kind == ELT_SEGMENT_RESUME &&
			    events[j].continuation == events[leave].continuation &&
			    events[j].id == events[leave].id)
				break;
		if (j == nevents)
			return tap_diag("no resume for the suspension at event %u",
					leave), -1;
		if (pthread_equal(events[j].thread, events[leave].thread))
			return tap_diag("event %u resumed on the suspending thread", j), -1;
		if (events[j].info_st != ELT_E_DATAINCOMPLETE ||
		    events[leave].info_st != ELT_E_DATAINCOMPLETE)
			return tap_diag("resume/suspend data not incomplete"), -1;
		e = j;
	}
	return segments == want_segments[method] ? (int)segments : -1;
}

int main(void)
{
	struct seed_results r;
	unsigned i, calls[3] = { 0 }, ordered = 0, returns_ok = 0;

	if (elt_plugin_add(&elt_plugin_recorder, NULL) != ELT_OK ||
	    elt_plugin_add(&elt_plugin_check, "expect=Work:25,WorkVoid:3,WorkDouble:3") != ELT_OK)
		tap_bail("cannot add the plugins: %s", elt_last_error());
	if (seed_register() != 0)
		tap_bail("cannot register the methods: %s", elt_last_error());
	if (seed_run(&r) != 0)
		tap_bail("the scenario did not run");

	is_int(r.work_total, 30, "Work(4) x5 returns 30 in total");
	ok(r.work_double == 2.0, "WorkDouble(2) returns 2.0 (got %g)", r.work_double);
	is_int(r.void_completed, 1, "WorkVoid(2) completes");
	is_int(r.continuation_clobbered, 0, "the continuation survives every Leave");
	is_int(r.same_thread_resumes, 0, "every resume ran on another thread");
	is_int(nevents, 2 * 31, "31 segments: 62 callbacks");

	for (i = 0; i < nevents; i++) {
		int m;

		if (events[i].kind != ELT_SEGMENT_CALL)
			continue;
		for (m = 0; m < 3; m++)
			if (events[i].id == seed_method_id(m))
				break;
		if (m == 3)
			continue;
		calls[m]++;
		ordered += follow(i, m) > 0;
		returns_ok += events[i].info_st == ELT_OK &&
			      events[i].value == (m == 0 ? 4 : 2);
	}
	ok(calls[0] == 5 && calls[1] == 1 && calls[2] == 1, "5, 1, 1 initial calls");
	is_int(ordered, 7, "every invocation runs CALL, SUSPEND, RESUME, ..., RETURN");
	is_int(returns_ok, 7, "every initial call decodes its int32 argument");
	for (i = 0; i < nevents; i++)
		if (events[i].kind == ELT_SEGMENT_RETURN && events[i].id == seed_method_id(0) &&
		    (events[i].info_st != ELT_OK || events[i].value != 6))
			break;
	is_int(i, nevents, "every final Work return decodes 6");

	is_int(elt_shutdown(), ELT_OK, "the check plugin's expectations pass: 25/3/3 pairs");
	return tap_done();
}
