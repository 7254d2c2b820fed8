/*
 * The producer API (elt_emit_*): segments whose values are in the
 * producer's memory.  The getters must point at those values, follow the
 * DATAINCOMPLETE contract, give 0 for the machine-frame fields, stitch
 * invocations across threads, and report the producer's mistakes.  Needs
 * no helper: it runs on every build, --disable-helpers included.
 */
#define ELT_PLUGIN_STATIC 1
#include "tap.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <pthread.h>
#include <string.h>

static const elt_function_id ASYNC_ID = 0x10, PLAIN_ID = 0x20, STRUCT_ID = 0x30,
	BARE_ID = 0x40, UNKNOWN_ID = 0x99;

struct pair {
	int32_t i;
	double d;
};

struct triple {
	int64_t a, b, c;
};

#define MAX_ARGS 8

static _Thread_local struct seen {
	unsigned calls;
	elt_segment_kind kind;
	const elt_function_desc *fn;
	void *continuation;
	elt_status continuation_st, enter_st, return_st, tailcall_st, inv_st;
	size_t nargs, total;
	elt_range ranges[MAX_ARGS];
	elt_range ret;
	elt_frame_info frame, tail;
	elt_invocation inv;
} seen;

/* As in test-segments: the header's getters against the library's. */
static struct { unsigned checked, disagreed; } inline_getters;

static void record(const elt_info *info, void *state)
{
	(void)state;
	inline_getters.checked++;
	if (elt_get_segment_kind(info) != (elt_get_segment_kind)(info) ||
	    elt_get_function_id(info) != (elt_get_function_id)(info) ||
	    elt_get_function(info) != (elt_get_function)(info))
		inline_getters.disagreed++;
	seen.calls++;
	seen.kind = elt_get_segment_kind(info);
	seen.fn = elt_get_function(info);
	seen.continuation_st = elt_get_continuation(info, &seen.continuation);
	seen.nargs = MAX_ARGS;
	seen.enter_st = elt_get_enter_info(info, seen.ranges, &seen.nargs, &seen.total);
	seen.return_st = elt_get_return_info(info, &seen.ret);
	memset(&seen.tail, 0xff, sizeof(seen.tail));
	seen.tailcall_st = elt_get_tailcall_info(info, &seen.tail);
	memset(&seen.frame, 0xff, sizeof(seen.frame));
	elt_get_frame_info(info, &seen.frame);
	seen.inv_st = elt_get_invocation(info, &seen.inv);
}

ELT_PLUGIN_DEFINE(recorder, .enter = record, .leave = record, .tailcall = record);

static void test_call_and_return(void)
{
	void *self = (void *)0x5e1f;
	int32_t i = -7;
	double d = 2.5;
	struct pair s = { 3, 4.5 };
	void *const args[] = { &self, &i, &d, &s };
	int64_t result = 30;
	elt_invocation call;

	is_int(elt_emit_enter(ASYNC_ID, args, NULL), ELT_OK, "emit_enter: a call");
	ok(seen.kind == ELT_SEGMENT_CALL && seen.fn && seen.fn->id == ASYNC_ID,
	   "call: classified, the function found");
	ok(seen.enter_st == ELT_OK && seen.nargs == 4,
	   "call: four arguments (this included, K excluded)");
	ok(seen.ranges[0].start == (uintptr_t)&self && seen.ranges[0].length == sizeof(void *) &&
	   seen.ranges[1].start == (uintptr_t)&i && seen.ranges[1].length == 4 &&
	   seen.ranges[2].start == (uintptr_t)&d && seen.ranges[2].length == 8 &&
	   seen.ranges[3].start == (uintptr_t)&s && seen.ranges[3].length == sizeof(s),
	   "call: each range is the producer's value, with its type's size");
	is_int(seen.total, sizeof(void *) + 4 + 8 + sizeof(s), "call: the total size");
	ok(seen.frame.function_id == ASYNC_ID && seen.frame.return_address == 0 &&
	   seen.frame.caller_sp == 0, "call: frame info: the id, 0 for the machine fields");
	ok(seen.continuation == NULL && seen.continuation_st == ELT_OK, "call: no continuation");
	is_int(seen.return_st, ELT_E_WRONG_CALLBACK, "call: no return info in an Enter");
	call = seen.inv;

	is_int(elt_emit_leave(ASYNC_ID, NULL, (void *)0xa0), ELT_OK, "emit_leave: a suspension");
	ok(seen.kind == ELT_SEGMENT_SUSPEND && seen.continuation == (void *)0xa0,
	   "suspend: classified, the continuation");
	ok(seen.return_st == ELT_E_DATAINCOMPLETE && seen.ret.start == 0 && seen.ret.length == 0,
	   "suspend: return DATAINCOMPLETE");
	ok(seen.inv_st == ELT_OK && seen.inv.id == call.id, "suspend: the call's invocation");

	is_int(elt_emit_enter(ASYNC_ID, NULL, (void *)0xa0), ELT_OK,
	       "emit_enter: a resume (no args needed)");
	ok(seen.kind == ELT_SEGMENT_RESUME && seen.continuation == (void *)0xa0,
	   "resume: classified, the continuation");
	ok(seen.enter_st == ELT_E_DATAINCOMPLETE && seen.nargs == 0,
	   "resume: arguments DATAINCOMPLETE");
	ok(seen.inv.id == call.id && seen.inv.segment == 1, "resume: same invocation, segment 1");

	is_int(elt_emit_leave(ASYNC_ID, &result, NULL), ELT_OK, "emit_leave: the final return");
	ok(seen.kind == ELT_SEGMENT_RETURN && seen.return_st == ELT_OK &&
	   seen.ret.start == (uintptr_t)&result && seen.ret.length == 8,
	   "return: the range is the producer's value");
	ok(seen.inv.id == call.id, "return: same invocation");
}

static void test_other_shapes(void)
{
	struct triple t = { 1, 2, 3 };
	void *p = &t;
	void *const args[] = { &p };
	elt_invocation plain;

	elt_emit_enter(PLAIN_ID, NULL, (void *)0xbad);
	ok(seen.kind == ELT_SEGMENT_CALL && seen.continuation == NULL,
	   "not async: a continuation passed is ignored, a call");
	ok(seen.enter_st == ELT_OK && seen.nargs == 0, "no parameters: zero arguments");
	plain = seen.inv;
	elt_emit_leave(PLAIN_ID, NULL, (void *)0xbad);
	ok(seen.kind == ELT_SEGMENT_RETURN && seen.return_st == ELT_OK &&
	   seen.ret.start == 0 && seen.ret.length == 0, "void: a return, range {0, 0}");
	ok(seen.inv.id == plain.id, "not async: one invocation, call to return");

	elt_emit_enter(STRUCT_ID, args, NULL);
	ok(seen.enter_st == ELT_OK && seen.ranges[0].start == (uintptr_t)&p,
	   "a pointer argument");
	elt_emit_leave(STRUCT_ID, &t, NULL);
	ok(seen.return_st == ELT_OK && seen.ret.start == (uintptr_t)&t &&
	   seen.ret.length == sizeof(t), "a struct result: its range, its size");

	is_int(elt_emit_tailcall(PLAIN_ID, NULL), ELT_OK, "emit_tailcall");
	ok(seen.kind == ELT_SEGMENT_TAILCALL && seen.tailcall_st == ELT_OK &&
	   seen.tail.function_id == PLAIN_ID && seen.tail.return_address == 0,
	   "tailcall: classified, its frame info");
	is_int(seen.inv_st, ELT_E_DATAINCOMPLETE,
	       "a tailcall with no call of it running: no invocation");
}

static void test_errors(void)
{
	unsigned before = seen.calls;
	int32_t i = 1;
	void *const args[] = { &i };

	is_int(elt_emit_enter(0, NULL, NULL), ELT_E_INVALID_ARGUMENT, "id 0: refused");
	ok(strstr(elt_last_error(), "id 0") != NULL, "... with a message naming it");
	is_int(elt_emit_leave(0, NULL, NULL), ELT_E_INVALID_ARGUMENT, "id 0 Leave: refused");
	is_int(elt_emit_tailcall(0, NULL), ELT_E_INVALID_ARGUMENT, "id 0 Tailcall: refused");
	is_int(seen.calls, before, "id 0: nothing reported");

	is_int(elt_emit_enter(UNKNOWN_ID, args, NULL), ELT_E_UNKNOWN_FUNCTION,
	       "unknown id: ELT_E_UNKNOWN_FUNCTION");
	ok(seen.calls == before + 1 && seen.fn == NULL && seen.kind == ELT_SEGMENT_CALL,
	   "... but reported, as a call without a function");
	is_int(seen.enter_st, ELT_E_UNKNOWN_FUNCTION, "... whose getters say so");
	is_int(elt_emit_leave(UNKNOWN_ID, NULL, NULL), ELT_E_UNKNOWN_FUNCTION,
	       "unknown id Leave: ELT_E_UNKNOWN_FUNCTION, reported");
	ok(seen.inv_st == ELT_OK, "... and its invocation still pairs up");

	is_int(elt_emit_enter(ASYNC_ID, NULL, NULL), ELT_E_INVALID_ARGUMENT,
	       "a call without args for a function with parameters: refused");
	ok(strstr(elt_last_error(), "takes 4 parameters") != NULL,
	   "... the message says how many");
	ok(seen.kind == ELT_SEGMENT_CALL && seen.enter_st == ELT_E_DATAINCOMPLETE,
	   "... reported anyway, its arguments DATAINCOMPLETE");
	is_int(elt_emit_leave(ASYNC_ID, NULL, NULL), ELT_E_INVALID_ARGUMENT,
	       "a final return without ret for a non-void function: refused");
	ok(seen.kind == ELT_SEGMENT_RETURN && seen.return_st == ELT_E_DATAINCOMPLETE,
	   "... reported anyway, its value DATAINCOMPLETE");

	elt_emit_enter(BARE_ID, NULL, NULL);
	is_int(seen.enter_st, ELT_E_NO_SIGNATURE, "registered without a signature: says so");
	is_int(elt_emit_leave(BARE_ID, NULL, NULL), ELT_OK,
	       "without a signature nothing is checked");
}

/* Suspended on one thread, resumed on another. */
static elt_invocation resumed;
static void *resume_elsewhere(void *arg)
{
	int64_t r = 0;

	(void)arg;
	elt_emit_enter(ASYNC_ID, NULL, (void *)0xb0);
	resumed = seen.inv;
	elt_emit_leave(ASYNC_ID, &r, NULL);
	return NULL;
}

static void test_threads(void)
{
	void *self = NULL;
	int32_t i = 0;
	double d = 0;
	struct pair s = { 0, 0 };
	void *const args[] = { &self, &i, &d, &s };
	elt_invocation call;
	pthread_t th;

	elt_emit_enter(ASYNC_ID, args, NULL);
	call = seen.inv;
	elt_emit_leave(ASYNC_ID, NULL, (void *)0xb0);
	if (pthread_create(&th, NULL, resume_elsewhere, NULL) || pthread_join(th, NULL))
		tap_bail("pthread_create failed");
	ok(resumed.id == call.id && resumed.segment == 1 &&
	   resumed.thread != call.thread && resumed.previous_thread == call.thread,
	   "resumed on another thread: the same invocation, the threads told");
}

int main(void)
{
	tap_plan(47);
	if (elt_plugin_add(&elt_plugin_recorder, NULL) != ELT_OK ||
	    elt_register_function(ASYNC_ID, "Async", "l(T K i d {i d})", ELT_FUNCTION_ASYNC) ||
	    elt_register_function(PLAIN_ID, "Plain", "v()", 0) ||
	    elt_register_function(STRUCT_ID, "Struct", "{l l l}(p)", 0) ||
	    elt_register_function(BARE_ID, "Bare", NULL, 0))
		tap_bail("setup: %s", elt_last_error());
	test_call_and_return();
	test_other_shapes();
	test_errors();
	test_threads();
	ok(inline_getters.checked >= 15 && !inline_getters.disagreed,
	   "the inline getters agree with the library's in all %u segments (%u differ)",
	   inline_getters.checked, inline_getters.disagreed);
	return tap_done();
}
