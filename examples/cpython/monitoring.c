/*
 * CPython 3.12+'s sys.monitoring events (PEP 669) as libasyncelt segments
 * (core.h).
 *
 * The adapter is a sys.monitoring tool (PROFILER_ID) whose callbacks are C
 * functions (METH_FASTCALL).  The events say what 3.11's profile hook left
 * to guess from the bytecode:
 *
 *   PY_START                    call
 *   PY_RESUME, PY_THROW         resume of a generator seen suspending;
 *                               else its call (suspended before start())
 *   PY_YIELD                    suspension (continuation: the generator)
 *   PY_RETURN                   return, with the value
 *   PY_UNWIND                   return, NULL (an exception)
 *   CALL / C_RETURN, C_RAISE    a builtin's call and return (--c-calls)
 *
 * A throw() that what a coroutine awaits absorbs goes on in the coroutine
 * with PY_THROW (3.11 gave nothing), and a signal handler runs after
 * PY_START: no segment has to be inferred.  Events are the interpreter's,
 * on every thread at once: no per-thread install.
 *
 * The callbacks run no Python code: CPython reports no event while one
 * runs (a Python signal handler or finalizer run here would go unseen).
 * So no str() of an int, and the collector is held off around what
 * allocates (the frame object PyEval_GetFrame makes, registrations).
 *
 * Code that is not reported (the adapter's own package, or outside
 * --include) answers sys.monitoring.DISABLE where the event allows it:
 * that location costs nothing afterwards.  start() undoes it
 * (restart_events), since the filters may have changed.
 */
#include "core.h"

#if ADAPTER_USES_MONITORING

#include <stdarg.h>

#include "pointer-map.h"

static bool running;            /* reporting */
static bool hooked;             /* the tool id is ours and its callbacks set:
                                   while running, and after a stop until every
                                   thread's frames are closed */
static bool report_c_calls;
static PyThreadState *only_thread;     /* threads=False: the starter */

static PyObject *monitoring;    /* sys.monitoring */
static PyObject *disable;       /* sys.monitoring.DISABLE */
static int tool_id;             /* sys.monitoring.PROFILER_ID */

enum event { PY_START, PY_RESUME, PY_THROW, PY_YIELD, PY_RETURN, PY_UNWIND,
	     CALL, C_RETURN, C_RAISE, EVENTS };

static const char *const event_names[EVENTS] = {
	"PY_START", "PY_RESUME", "PY_THROW", "PY_YIELD", "PY_RETURN",
	"PY_UNWIND", "CALL", "C_RETURN", "C_RAISE",
};
static long event_bits[EVENTS];        /* sys.monitoring.events.* */
static PyObject *callbacks[EVENTS];

/* The running frame, which the event is about: a C callback pushes no
 * frame of its own.  Checked against the event's code object all the
 * same; NULL (counted in `dropped`) if it is not. */
static PyFrameObject *frame_of(PyObject *code)
{
	int gc_was_enabled = PyGC_Disable();   /* makes the frame object */
	PyFrameObject *frame = PyEval_GetFrame();
	PyCodeObject *frame_code;

	if (gc_was_enabled)
		PyGC_Enable();
	frame_code = frame ? PyFrame_GetCode(frame) : NULL;
	Py_XDECREF(frame_code);
	if ((PyObject *)frame_code != code) {
		adapter_counters.dropped++;
		return NULL;
	}
	return frame;
}

static void unhook(void);

/*
 * Whether this thread's events are reported.  After a stop, a thread's
 * frames still open end at its first event (as on 3.11, where each
 * thread's hook went at its next event); once no thread has any, the
 * events stop.
 */
static bool reporting(void)
{
	if (running)
		return !only_thread || PyThreadState_Get() == only_thread;
	close_running_frames();
	if (hooked && shadow_threads_open == 0)
		unhook();
	return false;
}

/* The entry of a code object whose events are reported; NULL otherwise,
 * with *skip set when its events may be disabled at this location. */
static const struct code_entry *reported(PyObject *code, bool *skip)
{
	const struct code_entry *entry;

	*skip = false;
	if (!reporting() || !PyCode_Check(code))
		return NULL;
	entry = entry_of_code((PyCodeObject *)code);
	if (entry && entry->ignored) {
		*skip = true;
		return NULL;
	}
	return entry;
}

static PyObject *answer(bool skip)
{
	return Py_NewRef(skip ? disable : Py_None);
}

#if PY_VERSION_HEX >= 0x030D0000
/*
 * 3.13 runs pending calls (signal handlers) at a function's first RESUME
 * before its PY_START (3.12 after it): a handler's exception can end the
 * function with no PY_START, and a handler runs with its caller not
 * entered yet.  A frame stopped at its body's start is entered, then:
 * its call is reported at the handler's PY_START or at its own PY_UNWIND,
 * and its PY_START, if it comes, finds it on top.
 */
static void announce_at_body_start(PyFrameObject *frame)
{
	PyCodeObject *code = PyFrame_GetCode(frame);
	const struct code_entry *entry = entry_of_code(code);
	PyObject *gen;

	Py_DECREF(code);
	if (!entry || entry->ignored || shadow_on_top(frame) ||
	    PyFrame_GetLasti(frame) != entry->start)
		return;
	gen = entry->is_async ? PyFrame_GetGenerator(frame) : NULL;
	segment_enter(frame, entry, gen, false);
	Py_XDECREF(gen);
}

/* A frame's caller that is not on top of the shadow stack: its call is
 * reported if it is at its body's start. */
static void announce_caller(PyFrameObject *frame)
{
	int gc_was_enabled = PyGC_Disable();   /* may make the frame object */
	PyFrameObject *caller = PyFrame_GetBack(frame);

	if (gc_was_enabled)
		PyGC_Enable();
	if (caller && !shadow_on_top(caller))
		announce_at_body_start(caller);
	Py_XDECREF(caller);
}
#else
static void announce_at_body_start(PyFrameObject *frame)
{
	(void)frame;
}

static void announce_caller(PyFrameObject *frame)
{
	(void)frame;
}
#endif

#if PY_VERSION_HEX >= 0x030D0000
/*
 * 3.13's close() of a generator suspended at a yield outside any try block
 * (so also its finalization, and an await's close() passed down) marks it
 * completed without running its frame: no event.  Its invocation would
 * stay suspended until stop(), or its address taken by another (vanished).
 * A generator seen suspending is watched, with a weak reference, until it
 * ends where an event says so; if it dies first, its invocation ends as
 * it dies.  One reference per generator, not per suspension.
 */
static struct pointer_map watched;     /* generator -> weak reference */
static struct pointer_map watchers;    /* weak reference -> generator */
static PyObject *gen_died_callback;

static PyObject *gen_died(PyObject *self, PyObject *ref)
{
	PyObject *gen = pointer_map_get(&watchers, ref);

	(void)self;
	if (gen) {
		pointer_map_remove(&watchers, ref);
		pointer_map_remove(&watched, gen);
		(void)segment_end_unseen(gen, &adapter_counters.closed_unseen);
		Py_DECREF(ref);
	}
	Py_RETURN_NONE;
}

static PyMethodDef gen_died_method = { "gen_died", gen_died, METH_O, NULL };

static void watch(PyObject *gen)
{
	PyObject *ref;
	int gc_was_enabled;

	if (pointer_map_get(&watched, gen))
		return;
	gc_was_enabled = PyGC_Disable();
	ref = PyWeakref_NewRef(gen, gen_died_callback);
	if (gc_was_enabled)
		PyGC_Enable();
	if (!ref || !pointer_map_put(&watchers, ref, gen)) {
		PyErr_Clear();
		Py_XDECREF(ref);
		return;         /* unwatched: it may vanish, that is all */
	}
	if (!pointer_map_put(&watched, gen, ref)) {
		pointer_map_remove(&watchers, ref);
		Py_DECREF(ref);
	}
}

/* Its end was seen: the reference goes, without calling back. */
static void unwatch(PyObject *gen)
{
	PyObject *ref = pointer_map_get(&watched, gen);

	if (ref) {
		pointer_map_remove(&watched, gen);
		pointer_map_remove(&watchers, ref);
		Py_DECREF(ref);
	}
}

static void unwatch_one(const void *gen, void *ref)
{
	(void)gen;
	pointer_map_remove(&watchers, ref);
	Py_DECREF((PyObject *)ref);
}

/* At a stop: the suspended invocations are ended already. */
static void unwatch_all(void)
{
	pointer_map_drain(&watched, unwatch_one);
}

static int watch_setup(void)
{
	gen_died_callback = PyCFunction_New(&gen_died_method, NULL);
	return gen_died_callback ? 0 : -1;
}
#else
/* 3.12 runs a generator's frame to close it: PY_THROW, PY_UNWIND. */
static void watch(PyObject *gen)
{
	(void)gen;
}

static void unwatch(PyObject *gen)
{
	(void)gen;
}

static void unwatch_all(void)
{
}

static int watch_setup(void)
{
	return 0;
}
#endif

/* The entry and the frame of an event (code, instruction_offset, ...) to
 * report; NULL if it is not, with *reply the callback's answer. */
static const struct code_entry *event_frame(PyObject *const *args, Py_ssize_t nargs,
					    bool may_disable, PyFrameObject **frame,
					    PyObject **reply)
{
	bool skip;
	const struct code_entry *entry;

	if (nargs < 2 || !(entry = reported(args[0], &skip))) {
		*reply = answer(nargs >= 2 && skip && may_disable);
		return NULL;
	}
	*frame = frame_of(args[0]);
	if (!*frame) {
		*reply = Py_NewRef(Py_None);
		return NULL;
	}
	return entry;
}

/* A frame starts or goes on: its call, or a generator's resume when it was
 * seen suspending and `after_start`. */
static PyObject *entered(PyObject *const *args, Py_ssize_t nargs, bool after_start,
			 bool may_disable)
{
	const struct code_entry *entry;
	PyFrameObject *frame;
	PyObject *gen, *reply;

	if (!(entry = event_frame(args, nargs, may_disable, &frame, &reply)))
		return reply;
	if (shadow_on_top(frame))       /* announced already */
		Py_RETURN_NONE;
	if (!after_start)
		announce_caller(frame);
	gen = entry->is_async ? PyFrame_GetGenerator(frame) : NULL;
	segment_enter(frame, entry, gen, after_start);
	Py_XDECREF(gen);
	PyErr_Clear();
	Py_RETURN_NONE;
}

/* The frame on top of the shadow stack leaves: at a yield (a suspension)
 * or for good, with `result` (NULL: an exception).  A frame not on top
 * began before reporting did: not reported. */
static PyObject *left(PyObject *const *args, Py_ssize_t nargs, bool at_yield,
		      PyObject *result, bool may_disable)
{
	const struct code_entry *entry;
	PyFrameObject *frame;
	PyObject *gen, *reply;

	if (!(entry = event_frame(args, nargs, may_disable, &frame, &reply)))
		return reply;
	if (!shadow_on_top(frame) && !result)
		announce_at_body_start(frame);
	if (!shadow_on_top(frame)) {
		adapter_counters.skipped_leaves++;
		Py_RETURN_NONE;
	}
	gen = entry->is_async ? PyFrame_GetGenerator(frame) : NULL;
	if (at_yield && !gen)
		adapter_counters.dropped++;     /* ended rather than orphaned */
	segment_leave(at_yield ? gen : NULL, result);
	if (gen && at_yield)
		watch(gen);
	else if (gen)
		unwatch(gen);
	Py_XDECREF(gen);
	PyErr_Clear();
	Py_RETURN_NONE;
}

static PyObject *on_py_start(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	(void)self;
	return entered(args, nargs, false, true);
}

static PyObject *on_py_resume(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	(void)self;
	return entered(args, nargs, true, true);
}

/* Not an event that can be disabled. */
static PyObject *on_py_throw(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	(void)self;
	return entered(args, nargs, true, false);
}

static PyObject *on_py_yield(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	(void)self;
	return left(args, nargs, true, nargs == 3 ? args[2] : NULL, true);
}

static PyObject *on_py_return(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	(void)self;
	return left(args, nargs, false, nargs == 3 ? args[2] : NULL, true);
}

/* Not an event that can be disabled. */
static PyObject *on_py_unwind(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	(void)self;
	return left(args, nargs, false, NULL, false);
}

/*
 * CALL comes for every callable, Python's too (whose frame then has
 * PY_START): only builtins are reported, so the location stays enabled.
 * C_RETURN and C_RAISE follow any callable that is not Python code.
 */
static PyObject *on_call(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	bool skip;

	(void)self;
	if (nargs != 4 || !reported(args[0], &skip))
		return answer(nargs == 4 && skip);
	if (report_c_calls && PyCFunction_Check(args[2]))
		builtin_entered(args[2]);
	PyErr_Clear();
	Py_RETURN_NONE;
}

/* Not events that can be disabled. */
static PyObject *on_c_return(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	bool skip;

	(void)self;
	if (nargs == 4 && reported(args[0], &skip) && report_c_calls &&
	    PyCFunction_Check(args[2]))
		builtin_left(args[2]);
	Py_RETURN_NONE;
}

static PyMethodDef callback_methods[EVENTS] = {
	[PY_START] = { "py_start", (PyCFunction)(void (*)(void))on_py_start, METH_FASTCALL, NULL },
	[PY_RESUME] = { "py_resume", (PyCFunction)(void (*)(void))on_py_resume, METH_FASTCALL, NULL },
	[PY_THROW] = { "py_throw", (PyCFunction)(void (*)(void))on_py_throw, METH_FASTCALL, NULL },
	[PY_YIELD] = { "py_yield", (PyCFunction)(void (*)(void))on_py_yield, METH_FASTCALL, NULL },
	[PY_RETURN] = { "py_return", (PyCFunction)(void (*)(void))on_py_return, METH_FASTCALL, NULL },
	[PY_UNWIND] = { "py_unwind", (PyCFunction)(void (*)(void))on_py_unwind, METH_FASTCALL, NULL },
	[CALL] = { "call", (PyCFunction)(void (*)(void))on_call, METH_FASTCALL, NULL },
	[C_RETURN] = { "c_return", (PyCFunction)(void (*)(void))on_c_return, METH_FASTCALL, NULL },
	[C_RAISE] = { "c_raise", (PyCFunction)(void (*)(void))on_c_return, METH_FASTCALL, NULL },
};

int backend_setup(void)
{
	PyObject *sys = PyImport_ImportModule("sys");
	PyObject *events = NULL, *id = NULL;

	monitoring = sys ? PyObject_GetAttrString(sys, "monitoring") : NULL;
	Py_XDECREF(sys);
	if (!monitoring)
		return -1;
	disable = PyObject_GetAttrString(monitoring, "DISABLE");
	events = PyObject_GetAttrString(monitoring, "events");
	id = PyObject_GetAttrString(monitoring, "PROFILER_ID");
	if (!disable || !events || !id)
		goto fail;
	tool_id = (int)PyLong_AsLong(id);
	for (int i = 0; i < EVENTS; i++) {
		PyObject *bit = PyObject_GetAttrString(events, event_names[i]);

		event_bits[i] = bit ? PyLong_AsLong(bit) : -1;
		Py_XDECREF(bit);
		callbacks[i] = PyCFunction_New(&callback_methods[i], NULL);
		if (event_bits[i] < 0 || !callbacks[i])
			goto fail;
	}
	Py_DECREF(events);
	Py_DECREF(id);
	return PyErr_Occurred() ? -1 : watch_setup();
fail:
	Py_XDECREF(events);
	Py_XDECREF(id);
	return -1;
}

static int call_monitoring(const char *function, const char *format, ...)
{
	va_list ap;
	PyObject *callable = PyObject_GetAttrString(monitoring, function);
	PyObject *args, *result = NULL;

	va_start(ap, format);
	args = callable ? Py_VaBuildValue(format, ap) : NULL;
	va_end(ap);
	if (args)
		result = PyObject_CallObject(callable, args);
	Py_XDECREF(callable);
	Py_XDECREF(args);
	Py_XDECREF(result);
	return result ? 0 : -1;
}

static int set_events(long bits)
{
	return call_monitoring("set_events", "(il)", tool_id, bits);
}

/* The tool id is ours, or an exception says whose it is. */
static int take_tool_id(void)
{
	PyObject *get_tool = PyObject_GetAttrString(monitoring, "get_tool");
	PyObject *owner = get_tool ? PyObject_CallFunction(get_tool, "i", tool_id) : NULL;
	int rc = -1;

	if (owner == Py_None)
		rc = call_monitoring("use_tool_id", "(is)", tool_id, "asyncelt");
	else if (owner)
		PyErr_Format(PyExc_RuntimeError,
			     "start: sys.monitoring tool id %d (PROFILER_ID) is "
			     "taken by %R: one profiler at a time", tool_id, owner);
	Py_XDECREF(get_tool);
	Py_XDECREF(owner);
	return rc;
}

static int hook(void)
{
	if (take_tool_id() < 0)
		return -1;
	for (int i = 0; i < EVENTS; i++) {
		if (call_monitoring("register_callback", "(ilO)", tool_id,
				    event_bits[i], callbacks[i]) < 0) {
			unhook();
			return -1;
		}
	}
	hooked = true;
	return 0;
}

/* Events off, callbacks and tool id given back.  Nothing here fails but
 * out of memory; an exception then is not the program's. */
static void unhook(void)
{
	PyObject *type, *value, *traceback;

	PyErr_Fetch(&type, &value, &traceback);
	(void)set_events(0);
	for (int i = 0; i < EVENTS; i++)
		(void)call_monitoring("register_callback", "(ilO)", tool_id,
				      event_bits[i], Py_None);
	(void)call_monitoring("free_tool_id", "(i)", tool_id);
	hooked = false;
	PyErr_Clear();
	PyErr_Restore(type, value, traceback);
}

int adapter_install(bool c_calls, bool all_threads)
{
	long bits = event_bits[PY_START] | event_bits[PY_RESUME] |
		    event_bits[PY_THROW] | event_bits[PY_YIELD] |
		    event_bits[PY_RETURN] | event_bits[PY_UNWIND];

	if (c_calls)
		bits |= event_bits[CALL] | event_bits[C_RETURN] | event_bits[C_RAISE];
	/* Still ours after a stop whose other threads' frames are open. */
	if (!hooked && hook() < 0)
		return -1;
	/* What was disabled last time may be reported now. */
	if (call_monitoring("restart_events", "()") < 0 || set_events(bits) < 0) {
		unhook();
		return -1;
	}
	report_c_calls = c_calls;
	only_thread = all_threads ? NULL : PyThreadState_Get();
	running = true;
	return 0;
}

void adapter_uninstall(bool final)
{
	running = false;
	close_running_frames();
	close_suspended_coroutines();
	unwatch_all();
	if (hooked && (final || shadow_threads_open == 0))
		unhook();
}

void adapter_filters_changed(void)
{
	if (hooked)
		(void)call_monitoring("restart_events", "()");
	PyErr_Clear();
}

void adapter_after_fork_child(void)
{
	shadow_after_fork();
}

bool adapter_running(void)
{
	return running;
}

#endif
