/*
 * CPython 3.11's profile events as libasyncelt segments (core.h).
 *
 * CPython 3.11 calls a profile function (PyEval_SetProfile) with
 * PyTrace_CALL every time a frame starts running and PyTrace_RETURN every
 * time it stops, for coroutine and generator frames too: their first send,
 * every resume, every yield (an await that suspends is a yield of the
 * whole chain of awaiting frames), the final return and an exception
 * leaving the frame.  These are the segments of doc/runtime.md exactly:
 *
 *   PyTrace_CALL, past the body's start, of a        resume (continuation:
 *   coroutine seen suspending                        the coroutine object)
 *   PyTrace_CALL otherwise                           initial call
 *   PyTrace_RETURN at a YIELD_VALUE, with a value    suspension
 *   PyTrace_RETURN anywhere else, or arg NULL        final return (NULL:
 *                                                    an exception)
 *
 * A throw() into a suspended coroutine enters at its YIELD_VALUE and,
 * when the exception escapes, leaves from there with arg NULL: the NULL
 * is what tells that exit from a yield.  Only public API is used:
 * PyFrame_GetCode, PyFrame_GetGenerator, PyFrame_GetLasti, PyCode_GetCode
 * (all 3.11+) and attribute lookups done once per code object.
 *
 * Every function runs with the GIL held, which orders a suspension's
 * Leave before its resume's Enter: the library never has to wait.
 */
#include "core.h"

#if !ADAPTER_USES_MONITORING

#include "gil-nudge.h"

static bool running;
static bool report_c_calls;
static int yield_value_opcode = -1;

int backend_setup(void)
{
	yield_value_opcode = opcode_number("YIELD_VALUE");
	return yield_value_opcode < 0 ? -1 : 0;
}

/* --- the events ----------------------------------------------------------- */

static struct code_entry *entry_of(PyFrameObject *frame)
{
	PyCodeObject *code = PyFrame_GetCode(frame);
	struct code_entry *entry = entry_of_code(code);

	Py_DECREF(code);
	return entry;
}

/* Stopped at the RESUME that begins the function's body, which checks for
 * signals before CPython's CALL event: a frame there that runs something
 * (a signal handler) or leaves (the handler's exception) was entered,
 * and CPython has not said so. */
static bool at_body_start(const struct code_entry *entry, PyFrameObject *frame)
{
	return PyFrame_GetLasti(frame) == entry->start;
}

/* Entered after its start: past the RESUME that begins the function's
 * body.  A first entry (a send, or a throw() or close() before it ran) is
 * at or before it.  A resume is anywhere after: at the RESUME following
 * a yield, at the YIELD_VALUE (a throw() there), or back at the SEND of
 * an await whose awaited coroutine a throw() ended. */
static bool entered_after_start(const struct code_entry *entry, PyFrameObject *frame)
{
	return PyFrame_GetLasti(frame) > entry->start;
}

/* See segment_resume_unannounced (adapter.c). */
static void resume_unannounced(PyFrameObject *frame, const struct code_entry *entry)
{
	PyObject *gen = entry->is_async ? PyFrame_GetGenerator(frame) : NULL;

	segment_resume_unannounced(frame, entry, gen);
	Py_XDECREF(gen);
}

static void frame_entered(PyFrameObject *frame);

/*
 * The frame's caller.  CPython delivers no events while the hook runs, so
 * nothing here may run Python code: nothing that checks for signals, and
 * no collection, whose finalizers would run here.  An allocation can start
 * one: a registration's, or PyFrame_GetBack's when the caller has no frame
 * object yet (one that began before reporting did).
 */
static PyFrameObject *caller_of(PyFrameObject *frame)
{
	int gc_was_enabled = PyGC_Disable();
	PyFrameObject *caller = PyFrame_GetBack(frame);

	if (gc_was_enabled)
		PyGC_Enable();
	return caller;
}

/*
 * `frame` runs something or leaves, and is not on top of the shadow stack:
 * it was entered where CPython gave no event, or began before reporting
 * did (then it is not reported).  At its body's start, a signal handler
 * ran before its CALL event, or ended it: its call is reported now (the
 * event, if it comes, finds it on top).  A coroutine seen suspending is
 * resumed (resume_unannounced).
 */
static void announce_running(PyFrameObject *frame)
{
	struct code_entry *entry = entry_of(frame);

	if (!entry || entry->ignored)
		return;
	if (at_body_start(entry, frame))
		frame_entered(frame);
	else
		resume_unannounced(frame, entry);
}

static void frame_entered(PyFrameObject *frame)
{
	struct code_entry *entry = entry_of(frame);
	PyFrameObject *caller;
	PyObject *gen;
	bool resuming;

	if (!entry || entry->ignored)
		return;
	/* Announced already (announce_running). */
	if (shadow_on_top(frame))
		return;
	/* A resume's caller runs only when it called: a throw() delegated
	 * down an await chain links each coroutine as the caller of the
	 * next, and one that is not ran no code of its own if the frame
	 * below suspends again. */
	resuming = entry->is_async && entered_after_start(entry, frame);
	caller = resuming ? NULL : caller_of(frame);
	if (caller && !shadow_on_top(caller))
		announce_running(caller);
	Py_XDECREF(caller);
	gen = entry->is_async ? PyFrame_GetGenerator(frame) : NULL;
	segment_enter(frame, entry, gen, resuming);
	Py_XDECREF(gen);
}

/* Left at a yield: the instruction the frame stopped at is YIELD_VALUE
 * and a value was produced (an exception thrown in at a YIELD_VALUE and
 * escaping leaves from the same instruction, with no value). */
static bool left_at_yield(const struct code_entry *entry, PyFrameObject *frame,
			  PyObject *result)
{
	int lasti = PyFrame_GetLasti(frame);

	return entry->is_async && result && lasti >= 0 &&
	       lasti < PyBytes_GET_SIZE(entry->bytecode) &&
	       (unsigned char)PyBytes_AS_STRING(entry->bytecode)[lasti] == yield_value_opcode;
}

static void frame_left(PyFrameObject *frame, PyObject *result)
{
	PyObject *gen = NULL;

	if (!shadow_on_top(frame))
		announce_running(frame);
	if (!shadow_on_top(frame)) {
		adapter_counters.skipped_leaves++;
		return;
	}
	if (left_at_yield(shadow_top()->entry, frame, result)) {
		gen = PyFrame_GetGenerator(frame);
		if (!gen)
			adapter_counters.dropped++;     /* ended rather than orphaned */
	}
	segment_leave(gen, result);
	Py_XDECREF(gen);
}

/* Builtins called by the profiler's own code (stop() itself) are not the
 * program's either. */
static bool called_from_ignored(PyFrameObject *frame)
{
	struct code_entry *entry = entry_of(frame);

	return !entry || entry->ignored;
}

static void dispatch(PyFrameObject *frame, int what, PyObject *arg)
{
	switch (what) {
	case PyTrace_CALL:
		frame_entered(frame);
		break;
	case PyTrace_RETURN:
		frame_left(frame, arg);
		break;
	case PyTrace_C_CALL:
		if (report_c_calls && !called_from_ignored(frame)) {
			if (!shadow_on_top(frame))
				announce_running(frame);
			builtin_entered(arg);
		}
		break;
	case PyTrace_C_RETURN:
	case PyTrace_C_EXCEPTION:
		if (report_c_calls)
			builtin_left(arg);
		break;
	}
}

/* An exception here would be raised in the profiled program: none is. */
static int profile_hook(PyObject *obj, PyFrameObject *frame, int what,
			PyObject *arg)
{
	(void)obj;
	if (!running) {
		/* stop() ran on another thread: this one's hook goes now. */
		close_running_frames();
		PyEval_SetProfile(NULL, NULL);
		return 0;
	}
	PyObject *type, *value, *traceback;

	PyErr_Fetch(&type, &value, &traceback);
	dispatch(frame, what, arg);
	PyErr_Restore(type, value, traceback);
	return 0;
}

int adapter_install(bool c_calls, bool all_threads)
{
	(void)all_threads;      /* threading.setprofile's business here */
	report_c_calls = c_calls;
	running = true;
	PyEval_SetProfile(profile_hook, NULL);
	gil_nudge_start();
	return 0;
}

void adapter_uninstall(bool final)
{
	(void)final;            /* the other threads' hooks go at their next event */
	running = false;
	close_running_frames();
	PyEval_SetProfile(NULL, NULL);
	/* The coroutines seen suspending end here too (adapter.c). */
	close_suspended_coroutines();
	/* Last: it lets the other threads run, which now see the stop. */
	gil_nudge_stop();
}

void adapter_filters_changed(void)
{
	/* Nothing to do: the filters apply to code objects seen from now on. */
}

void adapter_after_fork_child(void)
{
	gil_nudge_forget();
	if (running)
		gil_nudge_start();
}

bool adapter_running(void)
{
	return running;
}

static const struct {
	const char *name;
	int what;
} event_names[] = {
	{ "call", PyTrace_CALL }, { "return", PyTrace_RETURN },
	{ "c_call", PyTrace_C_CALL }, { "c_return", PyTrace_C_RETURN },
	{ "c_exception", PyTrace_C_EXCEPTION },
};

PyObject *adapter_thread_bootstrap(PyObject *self, PyObject *const *args,
				   Py_ssize_t nargs)
{
	(void)self;
	if (nargs != 3 || !PyFrame_Check(args[0]) || !PyUnicode_Check(args[1])) {
		PyErr_SetString(PyExc_TypeError,
				"thread_bootstrap(frame, event, arg): a profile function");
		return NULL;
	}
	if (!running) {
		PyEval_SetProfile(NULL, NULL);
		Py_RETURN_NONE;
	}
	/* From now on this thread's events go to the C hook directly. */
	PyEval_SetProfile(profile_hook, NULL);
	for (size_t i = 0; i < sizeof(event_names) / sizeof(event_names[0]); i++) {
		if (PyUnicode_CompareWithASCIIString(args[1], event_names[i].name) == 0) {
			/* A "return" with None may be a yield of None or an
			 * exception: no matter, no Enter on this thread was
			 * reported yet, so no Leave is. */
			dispatch((PyFrameObject *)args[0], event_names[i].what,
				 args[2]);
			break;
		}
	}
	Py_RETURN_NONE;
}

#endif
