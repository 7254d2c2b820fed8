/*
 * Python's profile events as libasyncelt segments.
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
#include "adapter.h"

#include <pthread.h>
#include <stdlib.h>

#include <asyncelt.h>

#include "gil-nudge.h"
#include "pointer-map.h"

struct adapter_counters adapter_counters;

/*
 * What the adapter keeps per code object, while the code object lives: a
 * weak reference's callback drops it when the code object dies, so memory
 * follows the functions a program has, not the code objects it ever ran
 * (eval() and exec() make new ones at every call).  The function id is
 * the function's, shared by every code object of one qualname, file,
 * line and kind.
 */
struct code_entry {
	elt_function_id id;     /* 0: not reported (ignored) */
	const void *code;       /* the code object's address: its key here */
	PyObject *alive;        /* the weak reference to it */
	PyObject *bytecode;     /* co_code, to see where a frame stopped */
	int start;              /* offset of the RESUME that starts the body */
	bool is_async;
	bool ignored;           /* the profiler's own code, or not included */
};

static struct pointer_map code_entries;        /* code -> code_entry */
static struct pointer_map entries_by_ref;      /* weak reference -> code_entry */
static PyObject *code_died_callback;           /* the weak references' */
static PyObject *function_ids;  /* (name, is_async) -> id: a dict */
static struct pointer_map c_functions;         /* C function -> (void *)1 */
/* Coroutines (and generators) whose suspension was reported and whose
 * resume was not yet, with their function id: their next entry is a
 * resume. */
static struct pointer_map suspended;

static int yield_value_opcode = -1;
static int resume_opcode = -1;
static PyObject *ignored_prefix;       /* files whose code is not reported */
static PyObject *included_prefixes;    /* a tuple: only code from these files
                                          is reported; NULL: all of it */
static bool running;
static bool report_c_calls;

static int opcode_number(PyObject *opmap, const char *name)
{
	PyObject *op = PyDict_GetItemString(opmap, name);

	if (!op) {
		PyErr_Format(PyExc_RuntimeError, "dis.opmap has no %s", name);
		return -1;
	}
	return (int)PyLong_AsLong(op);
}

static PyObject *code_died(PyObject *self, PyObject *ref);
static PyMethodDef code_died_method = { "code_died", code_died, METH_O, NULL };

int adapter_setup(void)
{
	PyObject *dis = PyImport_ImportModule("dis");

	code_died_callback = PyCFunction_New(&code_died_method, NULL);
	if (!code_died_callback)
		return -1;
	PyObject *opmap = dis ? PyObject_GetAttrString(dis, "opmap") : NULL;

	if (opmap) {
		yield_value_opcode = opcode_number(opmap, "YIELD_VALUE");
		resume_opcode = opcode_number(opmap, "RESUME");
	}
	Py_XDECREF(opmap);
	Py_XDECREF(dis);
	return yield_value_opcode < 0 || resume_opcode < 0 ? -1 : 0;
}

/* --- the shadow stack ---------------------------------------------------- */

/* Each thread's frames whose Enter was reported and whose Leave was not,
 * innermost last.  A Leave is reported only for the frame on top, so the
 * library sees balanced segments even when reporting starts or stops with
 * frames running. */
struct shadow_frame {
	const void *key;        /* the frame; for a builtin, its function object */
	elt_function_id id;
	const struct code_entry *entry; /* NULL for a builtin; the frame keeps
	                                   its code object, and so this, alive */
};

struct shadow_stack {
	struct shadow_frame *frames;
	size_t depth, capacity;
};

static _Thread_local struct shadow_stack shadow;
static pthread_key_t shadow_owner;      /* frees a thread's stack at its exit */
static pthread_once_t shadow_once = PTHREAD_ONCE_INIT;

static void shadow_free(void *frames)
{
	free(frames);
}

static void shadow_key_create(void)
{
	(void)pthread_key_create(&shadow_owner, shadow_free);
}

static bool shadow_push(const void *key, elt_function_id id, const struct code_entry *entry)
{
	if (shadow.depth == shadow.capacity) {
		size_t capacity = shadow.capacity ? 2 * shadow.capacity : 256;
		struct shadow_frame *frames = realloc(shadow.frames,
						      capacity * sizeof(*frames));

		if (!frames) {
			adapter_counters.dropped++;
			return false;
		}
		pthread_once(&shadow_once, shadow_key_create);
		(void)pthread_setspecific(shadow_owner, frames);
		shadow.frames = frames;
		shadow.capacity = capacity;
	}
	shadow.frames[shadow.depth++] = (struct shadow_frame){ key, id, entry };
	return true;
}

static bool shadow_on_top(const void *key)
{
	return shadow.depth > 0 && shadow.frames[shadow.depth - 1].key == key;
}

/* The id of the frame on top if it is `key` (popped), else 0. */
static elt_function_id shadow_pop(const void *key)
{
	return shadow_on_top(key) ? shadow.frames[--shadow.depth].id : 0;
}

/* --- registration -------------------------------------------------------- */

#define ASYNC_CODE_FLAGS (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR | \
			  CO_ITERABLE_COROUTINE)

static void report_status(elt_status st, const char *what)
{
	if (st == ELT_OK)
		return;
	/* Once: a broken setup would otherwise print on every segment. */
	if (adapter_counters.emit_errors++ == 0)
		PySys_WriteStderr("asyncelt: %s: %s (%s)\n", what, elt_strerror(st),
				  elt_last_error());
}

/*
 * "qualname (file:line)": what a user reads in every report.  The line is
 * formatted from a C long: str() of an int checks for signals, and a
 * Python signal handler run here, inside the profile hook, would run with
 * CPython's events paused and never be reported.
 */
static PyObject *code_display_name(PyObject *code)
{
	PyObject *qualname = PyObject_GetAttrString(code, "co_qualname");
	PyObject *filename = PyObject_GetAttrString(code, "co_filename");
	PyObject *line = PyObject_GetAttrString(code, "co_firstlineno");
	PyObject *name = NULL;

	if (qualname && filename && line)
		name = PyUnicode_FromFormat("%U (%U:%ld)", qualname, filename,
					    PyLong_AsLong(line));
	Py_XDECREF(qualname);
	Py_XDECREF(filename);
	Py_XDECREF(line);
	return name;
}

void adapter_ignore_files(PyObject *prefix)
{
	Py_XSETREF(ignored_prefix, Py_XNewRef(prefix));
}

void adapter_include_files(PyObject *prefixes)
{
	Py_XSETREF(included_prefixes, Py_XNewRef(prefixes));
}

/* Whether filename starts with prefixes (a str, or a tuple of str). */
static bool starts_with(PyObject *filename, PyObject *prefixes)
{
	if (PyUnicode_Check(prefixes))
		return PyUnicode_Tailmatch(filename, prefixes, 0, PY_SSIZE_T_MAX, -1) == 1;
	for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(prefixes); i++) {
		PyObject *prefix = PyTuple_GET_ITEM(prefixes, i);

		if (PyUnicode_Check(prefix) &&
		    PyUnicode_Tailmatch(filename, prefix, 0, PY_SSIZE_T_MAX, -1) == 1)
			return true;
	}
	return false;
}

static bool is_ignored(PyObject *code)
{
	PyObject *filename;
	bool ignored = false;

	if (!ignored_prefix && !included_prefixes)
		return false;
	filename = PyObject_GetAttrString(code, "co_filename");
	if (filename && PyUnicode_Check(filename))
		ignored = (ignored_prefix && starts_with(filename, ignored_prefix)) ||
			  (included_prefixes && !starts_with(filename, included_prefixes));
	Py_XDECREF(filename);
	PyErr_Clear();
	return ignored;
}

/* The first RESUME: what precedes it (cell set-up, RETURN_GENERATOR) runs
 * before a generator's first entry. */
static int start_of_body(PyObject *bytecode)
{
	const unsigned char *code = (const unsigned char *)PyBytes_AS_STRING(bytecode);

	for (Py_ssize_t i = 0; i + 1 < PyBytes_GET_SIZE(bytecode); i += 2) {
		if (code[i] == resume_opcode)
			return (int)i;
	}
	return 0;
}

/*
 * The id of the function `name` (qualname, file, line) of this kind,
 * registered with the library at its first code object.  The id is an
 * address of the adapter's own, never freed: no other function, Python's
 * or a builtin's C function, has it.  0 when out of memory.
 */
static elt_function_id function_id(PyObject *name, bool is_async)
{
	PyObject *key = PyTuple_Pack(2, name, is_async ? Py_True : Py_False);
	PyObject *known = NULL, *value = NULL;
	const char *utf8 = PyUnicode_AsUTF8(name);
	void *id = NULL;

	if (!function_ids)
		function_ids = PyDict_New();
	if (!key || !utf8 || !function_ids)
		goto out;
	known = PyDict_GetItemWithError(function_ids, key);
	if (known) {
		id = PyLong_AsVoidPtr(known);
		goto out;
	}
	id = malloc(1);
	value = id ? PyLong_FromVoidPtr(id) : NULL;
	if (!value || PyDict_SetItem(function_ids, key, value) < 0) {
		free(id);
		id = NULL;
		goto out;
	}
	/* The argument is the frame (f_locals, f_back...: everything about
	 * the call), the result the returned object (NULL: an exception). */
	report_status(elt_register_function((elt_function_id)id, utf8,
					    is_async ? "p(K p)" : "p(p)",
					    is_async ? ELT_FUNCTION_ASYNC : 0),
		      "registering a function");
	adapter_counters.functions++;
out:
	Py_XDECREF(key);
	Py_XDECREF(value);
	PyErr_Clear();
	return (elt_function_id)id;
}

static void free_entry(struct code_entry *entry)
{
	Py_XDECREF(entry->bytecode);
	Py_XDECREF(entry->alive);
	free(entry);
}

/* The weak reference's callback, as the code object dies (before its
 * memory goes, so no other code object has the address yet). */
static PyObject *code_died(PyObject *self, PyObject *ref)
{
	struct code_entry *entry = pointer_map_get(&entries_by_ref, ref);

	(void)self;
	if (entry) {
		pointer_map_remove(&entries_by_ref, ref);
		if (pointer_map_get(&code_entries, entry->code) == entry)
			pointer_map_remove(&code_entries, entry->code);
		adapter_counters.code_objects--;
		free_entry(entry);      /* its reference to `ref` the last */
	}
	Py_RETURN_NONE;
}

static struct code_entry *register_code(PyObject *code)
{
	struct code_entry *entry = calloc(1, sizeof(*entry));
	PyObject *flags = PyObject_GetAttrString(code, "co_flags");
	PyObject *name = code_display_name(code);

	if (!entry || !flags || !name)
		goto fail;
	entry->code = code;
	entry->is_async = (PyLong_AsLong(flags) & ASYNC_CODE_FLAGS) != 0;
	entry->ignored = is_ignored(code);
	entry->bytecode = PyCode_GetCode((PyCodeObject *)code);
	if (!entry->bytecode)
		goto fail;
	entry->start = start_of_body(entry->bytecode);
	if (!entry->ignored && !(entry->id = function_id(name, entry->is_async)))
		goto fail;
	entry->alive = PyWeakref_NewRef(code, code_died_callback);
	if (!entry->alive || !pointer_map_put(&entries_by_ref, entry->alive, entry))
		goto fail;
	if (!pointer_map_put(&code_entries, code, entry)) {
		pointer_map_remove(&entries_by_ref, entry->alive);
		goto fail;
	}
	adapter_counters.code_objects++;
	Py_DECREF(flags);
	Py_DECREF(name);
	return entry;
fail:
	/* Not reported; tried again at its next call. */
	PyErr_Clear();
	adapter_counters.dropped++;
	if (entry)
		free_entry(entry);
	Py_XDECREF(flags);
	Py_XDECREF(name);
	return NULL;
}

static elt_function_id register_new_c_function(PyObject *callable, void *fn)
{
	PyObject *qualname = PyObject_GetAttrString(callable, "__qualname__");
	const char *utf8 = qualname ? PyUnicode_AsUTF8(qualname) : NULL;

	if (!utf8 || !pointer_map_put(&c_functions, fn, (void *)1)) {
		PyErr_Clear();
		Py_XDECREF(qualname);
		adapter_counters.dropped++;
		return 0;
	}
	char name[200];

	snprintf(name, sizeof(name), "%s (built-in)", utf8);
	/* The profile hook sees neither a builtin's arguments nor its result. */
	report_status(elt_register_function((elt_function_id)fn, name, "v()", 0),
		      "registering a builtin");
	adapter_counters.c_functions++;
	Py_DECREF(qualname);
	return (elt_function_id)fn;
}

/* A builtin's id is its C function: bound methods are new objects at every
 * access, the function behind them is not. */
static elt_function_id register_c_function(PyObject *callable)
{
	void *fn = (void *)PyCFunction_GetFunction(callable);

	if (!fn) {
		PyErr_Clear();
		return 0;
	}
	if (pointer_map_get(&c_functions, fn))
		return (elt_function_id)fn;

	int gc_was_enabled = PyGC_Disable();    /* see caller_of() */
	elt_function_id id = register_new_c_function(callable, fn);

	if (gc_was_enabled)
		PyGC_Enable();
	return id;
}

/* --- the events ----------------------------------------------------------- */

static struct code_entry *entry_of(PyFrameObject *frame)
{
	PyCodeObject *code = PyFrame_GetCode(frame);
	struct code_entry *entry = pointer_map_get(&code_entries, code);

	if (!entry) {
		int gc_was_enabled = PyGC_Disable();     /* see caller_of() */

		entry = register_code((PyObject *)code);
		if (gc_was_enabled)
			PyGC_Enable();
	}
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

/* The coroutine suspended at `gen`'s address ended where no hook saw it,
 * and a new one took the address.  CPython closes a suspended coroutine
 * when it is freed, through a frame entry the hook sees; yet the asyncio
 * suite has a few dozen that end unseen (freed where no hook runs: a
 * thread not hooked yet, or while CPython delivers no event; not pinned
 * down).  Its invocation ends now, as a resume and a return without a
 * value: late, but every suspension keeps its resume.  Counted in
 * `vanished`. */
static void end_vanished(elt_function_id id, PyObject *gen)
{
	PyObject *no_result = NULL;

	adapter_counters.vanished++;
	adapter_counters.enters++;
	adapter_counters.leaves++;
	report_status(elt_emit_enter(id, NULL, gen), "ending a vanished coroutine");
	report_status(elt_emit_leave(id, &no_result, NULL), "ending a vanished coroutine");
}

/*
 * A coroutine seen suspending runs again, and CPython has not said so: a
 * throw() into it that what it awaits absorbs (returning) goes on past the
 * await without a CALL event (_gen_throw sends the value on), and a signal
 * handler's exception ends a frame at its RESUME before the event.  Its
 * resume is reported at its first sign of life: a frame it calls, a
 * builtin it calls, or its own Leave; a CALL event CPython then gives it
 * finds it resumed.  Its segments pair, and what it calls has it for a
 * parent.  Counted in `unannounced`.
 */
static void resume_unannounced(PyFrameObject *frame, const struct code_entry *entry)
{
	PyObject *gen = entry->is_async ? PyFrame_GetGenerator(frame) : NULL;

	if (gen && (elt_function_id)pointer_map_get(&suspended, gen) == entry->id &&
	    entry->id && shadow_push(frame, entry->id, entry)) {
		pointer_map_remove(&suspended, gen);
		adapter_counters.unannounced++;
		adapter_counters.enters++;
		report_status(elt_emit_enter(entry->id, NULL, gen), "unannounced resume");
	}
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
	void *continuation = NULL;
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
	if (entry->is_async) {
		PyObject *gen = PyFrame_GetGenerator(frame);

		/* A resume is an entry after a yield whose suspension was
		 * reported.  Not seen suspending: its first entry, or it was
		 * suspended before reporting started (then the first segment
		 * seen is reported as its call).  Seen, but at its first
		 * entry: the address belonged to a coroutine that died unseen,
		 * now reused. */
		elt_function_id suspended_id =
			gen ? (elt_function_id)pointer_map_get(&suspended, gen) : 0;

		if (suspended_id) {
			pointer_map_remove(&suspended, gen);
			if (entered_after_start(entry, frame))
				continuation = gen;
			else
				end_vanished(suspended_id, gen);
		}
		Py_XDECREF(gen);
	}
	if (!shadow_push(frame, entry->id, entry))
		return;
	adapter_counters.enters++;
	if (continuation) {
		report_status(elt_emit_enter(entry->id, NULL, continuation), "resume");
	} else {
		void *const args[] = { &frame };

		report_status(elt_emit_enter(entry->id, args, NULL), "call");
	}
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
	struct shadow_frame top;

	if (!shadow_on_top(frame))
		announce_running(frame);
	if (!shadow_on_top(frame)) {
		adapter_counters.skipped_leaves++;
		return;
	}
	top = shadow.frames[--shadow.depth];
	elt_function_id id = top.id;

	adapter_counters.leaves++;
	if (left_at_yield(top.entry, frame, result)) {
		PyObject *gen = PyFrame_GetGenerator(frame);

		if (gen && pointer_map_put(&suspended, gen, (void *)id)) {
			report_status(elt_emit_leave(id, NULL, gen), "suspend");
			Py_DECREF(gen);
			return;
		}
		/* No room to remember it: end the invocation here rather
		 * than make its resume an orphan. */
		Py_XDECREF(gen);
		adapter_counters.dropped++;
	}
	report_status(elt_emit_leave(id, &result, NULL), "return");
}

static void builtin_entered(PyObject *callable)
{
	elt_function_id id = register_c_function(callable);

	if (id && shadow_push(callable, id, NULL)) {
		adapter_counters.enters++;
		report_status(elt_emit_enter(id, NULL, NULL), "builtin call");
	}
}

static void builtin_left(PyObject *callable)
{
	elt_function_id id = shadow_pop(callable);

	if (!id) {
		adapter_counters.skipped_leaves++;
		return;
	}
	adapter_counters.leaves++;
	report_status(elt_emit_leave(id, NULL, NULL), "builtin return");
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

/* Reporting stops on this thread with frames still running: their
 * segments end here, as returns without a value, so that every Enter
 * reported has its Leave (their real ends will not be seen). */
static void close_running_frames(void)
{
	PyObject *no_result = NULL;

	while (shadow.depth > 0) {
		const struct shadow_frame *top = &shadow.frames[--shadow.depth];

		adapter_counters.leaves++;
		adapter_counters.closed_at_stop++;
		report_status(elt_emit_leave(top->id, top->entry ? &no_result : NULL,
					     NULL), "closing at stop");
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

/* A coroutine seen suspending, as reporting stops: see adapter_uninstall. */
static void close_suspended(const void *gen, void *id)
{
	PyObject *no_result = NULL;

	adapter_counters.enters++;
	adapter_counters.leaves++;
	adapter_counters.closed_at_stop++;
	report_status(elt_emit_enter((elt_function_id)id, NULL, (void *)gen), "closing at stop");
	report_status(elt_emit_leave((elt_function_id)id, &no_result, NULL), "closing at stop");
}

void adapter_install(bool c_calls)
{
	report_c_calls = c_calls;
	running = true;
	PyEval_SetProfile(profile_hook, NULL);
	gil_nudge_start();
}

void adapter_uninstall(void)
{
	running = false;
	close_running_frames();
	PyEval_SetProfile(NULL, NULL);
	/* The coroutines seen suspending end here too, as a resume and a
	 * return without a value.  Nothing is seen while stopped: one that
	 * ended then could not be told from a new coroutine at its address,
	 * whose segments would go on its invocation.  Ended, their
	 * suspensions are no longer open in the library either, and after a
	 * start() each is seen from its next resume, as its call. */
	pointer_map_drain(&suspended, close_suspended);
	/* Last: it lets the other threads run, which now see the stop. */
	gil_nudge_stop();
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
