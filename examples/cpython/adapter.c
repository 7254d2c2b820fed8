/*
 * The adapter's core: what CPython's events become, whichever way they
 * come (core.h; profile-311.c for 3.11, monitoring.c for 3.12+).
 *
 * A function is registered with libasyncelt at the first sight of a code
 * object of it; each thread keeps a shadow stack of the frames whose Enter
 * was reported, so that only their Leaves are; a coroutine (or generator,
 * or async generator) seen suspending is remembered, with its function
 * id, until it resumes: that entry is a resume, with the generator object
 * for continuation.  The segments are those of doc/runtime.md:
 *
 *   a frame's first entry, or a generator's not seen suspending   call
 *   a generator seen suspending, entered again past its start     resume
 *   a generator leaving at a yield, with a value                  suspend
 *   any other leave (NULL result: an exception)                   return
 *
 * Every function runs with the GIL held, which orders a suspension's
 * Leave before its resume's Enter: the library never has to wait.
 */
#include "core.h"

#include <pthread.h>
#include <stdlib.h>

#include "pointer-map.h"

struct adapter_counters adapter_counters;

static struct pointer_map code_entries;        /* code -> code_entry */
static struct pointer_map entries_by_ref;      /* weak reference -> code_entry */
static PyObject *code_died_callback;           /* the weak references' */
static PyObject *function_ids;  /* (name, is_async) -> id: a dict */
static struct pointer_map c_functions;         /* C function -> (void *)1 */
/* Coroutines (and generators) whose suspension was reported and whose
 * resume was not yet, with their function id: their next entry is a
 * resume. */
static struct pointer_map suspended;

static PyObject *ignored_prefix;       /* files whose code is not reported */
static PyObject *included_prefixes;    /* a tuple: only code from these files
                                          is reported; NULL: all of it */

static int resume_opcode = -1;

int opcode_number(const char *name)
{
	PyObject *dis = PyImport_ImportModule("dis");
	PyObject *opmap = dis ? PyObject_GetAttrString(dis, "opmap") : NULL;
	PyObject *op = opmap ? PyDict_GetItemString(opmap, name) : NULL;
	int number = op ? (int)PyLong_AsLong(op) : -1;

	if (opmap && !op)
		PyErr_Format(PyExc_RuntimeError, "dis.opmap has no %s", name);
	Py_XDECREF(opmap);
	Py_XDECREF(dis);
	return number;
}

static PyObject *code_died(PyObject *self, PyObject *ref);
static PyMethodDef code_died_method = { "code_died", code_died, METH_O, NULL };

int adapter_setup(void)
{
	code_died_callback = PyCFunction_New(&code_died_method, NULL);
	if (!code_died_callback)
		return -1;
	resume_opcode = opcode_number("RESUME");
	if (resume_opcode < 0)
		return -1;
	return backend_setup();
}

/* --- the shadow stack ---------------------------------------------------- */

/* Each thread's frames whose Enter was reported and whose Leave was not,
 * innermost last.  A Leave is reported only for the frame on top, so the
 * library sees balanced segments even when reporting starts or stops with
 * frames running. */
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

size_t shadow_threads_open;

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
	if (shadow.depth == 0)
		shadow_threads_open++;
	shadow.frames[shadow.depth++] = (struct shadow_frame){ key, id, entry };
	return true;
}

void shadow_after_fork(void)
{
	shadow_threads_open = shadow.depth > 0;
}

bool shadow_on_top(const void *key)
{
	return shadow.depth > 0 && shadow.frames[shadow.depth - 1].key == key;
}

const struct shadow_frame *shadow_top(void)
{
	return shadow.depth > 0 ? &shadow.frames[shadow.depth - 1] : NULL;
}

/* The frame on top, popped. */
static struct shadow_frame shadow_pop_top(void)
{
	if (--shadow.depth == 0)
		shadow_threads_open--;
	return shadow.frames[shadow.depth];
}

/* The id of the frame on top if it is `key` (popped), else 0. */
static elt_function_id shadow_pop(const void *key)
{
	return shadow_on_top(key) ? shadow_pop_top().id : 0;
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
	adapter_filters_changed();
}

void adapter_include_files(PyObject *prefixes)
{
	Py_XSETREF(included_prefixes, Py_XNewRef(prefixes));
	adapter_filters_changed();
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
elt_function_id register_c_function(PyObject *callable)
{
	void *fn = (void *)PyCFunction_GetFunction(callable);

	if (!fn) {
		PyErr_Clear();
		return 0;
	}
	if (pointer_map_get(&c_functions, fn))
		return (elt_function_id)fn;

	int gc_was_enabled = PyGC_Disable();    /* see entry_of_code() */
	elt_function_id id = register_new_c_function(callable, fn);

	if (gc_was_enabled)
		PyGC_Enable();
	return id;
}

/* --- segments ----------------------------------------------------------- */

/*
 * The entry of a code object met for the first time is made here, in the
 * interpreter's hook, where CPython delivers no events: nothing here may
 * run Python code, neither what checks for signals nor a collection,
 * whose finalizers would run here.  Registration allocates, and an
 * allocation can start a collection: the collector is held off.
 */
struct code_entry *entry_of_code(PyCodeObject *code)
{
	struct code_entry *entry = pointer_map_get(&code_entries, code);

	if (!entry) {
		int gc_was_enabled = PyGC_Disable();

		entry = register_code((PyObject *)code);
		if (gc_was_enabled)
			PyGC_Enable();
	}
	return entry;
}

/* The invocation of a coroutine seen suspending ends, as a resume and a
 * return without a value, where the coroutine was not seen ending;
 * counted in *counter. */
static void end_suspended(elt_function_id id, const void *gen, uint64_t *counter,
			  const char *what)
{
	PyObject *no_result = NULL;

	(*counter)++;
	adapter_counters.enters++;
	adapter_counters.leaves++;
	report_status(elt_emit_enter(id, NULL, (void *)gen), what);
	report_status(elt_emit_leave(id, &no_result, NULL), what);
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
	end_suspended(id, gen, &adapter_counters.vanished, "ending a vanished coroutine");
}

bool segment_end_unseen(PyObject *gen, uint64_t *counter)
{
	elt_function_id id = suspended_take(gen);

	if (id)
		end_suspended(id, gen, counter, "ending a coroutine ended unseen");
	return id != 0;
}

elt_function_id suspended_take(PyObject *gen)
{
	elt_function_id id = (elt_function_id)pointer_map_get(&suspended, gen);

	if (id)
		pointer_map_remove(&suspended, gen);
	return id;
}

void segment_enter(PyFrameObject *frame, const struct code_entry *entry,
		   PyObject *gen, bool after_start)
{
	void *continuation = NULL;
	/* A resume is an entry after a yield whose suspension was reported.
	 * Not seen suspending: its first entry, or it was suspended before
	 * reporting started (then the first segment seen is reported as its
	 * call).  Seen, but at its first entry: the address belonged to a
	 * coroutine that died unseen, now reused. */
	elt_function_id suspended_id = gen ? suspended_take(gen) : 0;

	if (suspended_id) {
		if (after_start)
			continuation = gen;
		else
			end_vanished(suspended_id, gen);
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

void segment_leave(PyObject *gen, PyObject *result)
{
	elt_function_id id = shadow_pop_top().id;

	adapter_counters.leaves++;
	if (gen) {
		if (pointer_map_put(&suspended, gen, (void *)id)) {
			report_status(elt_emit_leave(id, NULL, gen), "suspend");
			return;
		}
		/* No room to remember it: end the invocation here rather
		 * than make its resume an orphan. */
		adapter_counters.dropped++;
	}
	report_status(elt_emit_leave(id, &result, NULL), "return");
}

/*
 * A coroutine seen suspending runs again, and CPython 3.11 has not said
 * so (profile-311.c): a
 * throw() into it that what it awaits absorbs (returning) goes on past the
 * await without a CALL event (_gen_throw sends the value on), and a signal
 * handler's exception ends a frame at its RESUME before the event.  Its
 * resume is reported at its first sign of life: a frame it calls, a
 * builtin it calls, or its own Leave; a CALL event CPython then gives it
 * finds it resumed.  Its segments pair, and what it calls has it for a
 * parent.  Counted in `unannounced`.
 */
void segment_resume_unannounced(PyFrameObject *frame, const struct code_entry *entry,
				PyObject *gen)
{
	if (gen && (elt_function_id)pointer_map_get(&suspended, gen) == entry->id &&
	    entry->id && shadow_push(frame, entry->id, entry)) {
		pointer_map_remove(&suspended, gen);
		adapter_counters.unannounced++;
		adapter_counters.enters++;
		report_status(elt_emit_enter(entry->id, NULL, gen), "unannounced resume");
	}
}

void builtin_entered(PyObject *callable)
{
	elt_function_id id = register_c_function(callable);

	if (id && shadow_push(callable, id, NULL)) {
		adapter_counters.enters++;
		report_status(elt_emit_enter(id, NULL, NULL), "builtin call");
	}
}

void builtin_left(PyObject *callable)
{
	elt_function_id id = shadow_pop(callable);

	if (!id) {
		adapter_counters.skipped_leaves++;
		return;
	}
	adapter_counters.leaves++;
	report_status(elt_emit_leave(id, NULL, NULL), "builtin return");
}

/* Reporting stops on this thread with frames still running: their
 * segments end here, as returns without a value, so that every Enter
 * reported has its Leave (their real ends will not be seen). */
void close_running_frames(void)
{
	PyObject *no_result = NULL;

	while (shadow.depth > 0) {
		const struct shadow_frame top = shadow_pop_top();

		adapter_counters.leaves++;
		adapter_counters.closed_at_stop++;
		report_status(elt_emit_leave(top.id, top.entry ? &no_result : NULL,
					     NULL), "closing at stop");
	}
}

/* A coroutine seen suspending, as reporting stops. */
static void close_suspended(const void *gen, void *id)
{
	end_suspended((elt_function_id)id, gen, &adapter_counters.closed_at_stop,
		      "closing at stop");
}

/*
 * The coroutines seen suspending end as reporting stops, as a resume and a
 * return without a value.  Nothing is seen while stopped: one that ended
 * then could not be told from a new coroutine at its address, whose
 * segments would go on its invocation.  Ended, their suspensions are no
 * longer open in the library either, and after a start() each is seen
 * from its next resume, as its call.
 */
void close_suspended_coroutines(void)
{
	pointer_map_drain(&suspended, close_suspended);
}
