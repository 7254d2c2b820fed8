/*
 * What the two ways of hooking CPython share (adapter.c): the code objects
 * and builtins registered with libasyncelt, each thread's shadow stack,
 * the coroutines seen suspending, and the segments themselves.  A backend
 * turns its interpreter's events into calls of these:
 *
 *   profile-311.c   CPython 3.11's profile hook (PyEval_SetProfile)
 *   monitoring.c    CPython 3.12+'s sys.monitoring (PEP 669)
 *
 * One of them is compiled in, by PY_VERSION_HEX.  Every function here runs
 * with the GIL held.
 */
#ifndef ASYNCELT_CPYTHON_CORE_H
#define ASYNCELT_CPYTHON_CORE_H

#include "adapter.h"

#include <asyncelt.h>

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

/* The entry of `code`, registered at its first sight; NULL if it could
 * not be (counted in `dropped`; tried again at the next sight). */
struct code_entry *entry_of_code(PyCodeObject *code);
/* A builtin's id (its C function), registered at its first call; 0 if it
 * could not be. */
elt_function_id register_c_function(PyObject *callable);

/* --- the shadow stack: a thread's frames whose Enter was reported and
 * whose Leave was not, innermost last --------------------------------- */

struct shadow_frame {
	const void *key;        /* the frame; for a builtin, its function object */
	elt_function_id id;
	const struct code_entry *entry; /* NULL for a builtin; the frame keeps
	                                   its code object, and so this, alive */
};

bool shadow_on_top(const void *key);
/* The frame on top, or NULL. */
const struct shadow_frame *shadow_top(void);
/* Threads whose shadow stack is not empty. */
extern size_t shadow_threads_open;
/* In a child of fork(): the other threads' stacks are the parent's. */
void shadow_after_fork(void);

/* --- segments -------------------------------------------------------- */

/* `frame`, of `entry` (not ignored), starts a segment.  A generator (gen,
 * else NULL) entered `after_start` of its body and seen suspending is
 * resumed; otherwise this is a call, with the frame for its argument. */
void segment_enter(PyFrameObject *frame, const struct code_entry *entry,
		   PyObject *gen, bool after_start);
/* The frame on top of the shadow stack leaves: a suspension of `gen` when
 * given (the generator, left at a yield), else its return with `result`
 * (NULL: an exception). */
void segment_leave(PyObject *gen, PyObject *result);
/* A coroutine seen suspending: its id, forgotten (0 if not seen). */
elt_function_id suspended_take(PyObject *gen);
/* The coroutine `gen` ended where no event said so: its invocation, if
 * it was seen suspending, ends now (counted in *counter; true). */
bool segment_end_unseen(PyObject *gen, uint64_t *counter);
/* Resumed where the interpreter gave no event: see profile-311.c. */
void segment_resume_unannounced(PyFrameObject *frame, const struct code_entry *entry,
				PyObject *gen);
void builtin_entered(PyObject *callable);
void builtin_left(PyObject *callable);
/* This thread's frames still running end here, as returns without a
 * value (their real ends will not be seen). */
void close_running_frames(void);
/* The coroutines seen suspending end here, as a resume and a return
 * without a value: see adapter.c. */
void close_suspended_coroutines(void);

/* dis.opmap[name]; -1 with an exception set if there is none. */
int opcode_number(const char *name);
/* The backend's setup, at import: -1 with an exception set on failure. */
int backend_setup(void);

#endif
