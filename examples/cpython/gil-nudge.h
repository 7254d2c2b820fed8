/*
 * The cure for CPython 3.11's stall of a profiled thread at a function's
 * start (gil-nudge.c): a thread that takes the GIL now and then.
 *
 * Every function here runs with the GIL held.
 */
#ifndef ASYNCELT_CPYTHON_GIL_NUDGE_H
#define ASYNCELT_CPYTHON_GIL_NUDGE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* Starts the thread, if not running; nothing on an interpreter without
 * the stall.  Not running after it only when no thread could be made. */
void gil_nudge_start(void);
/* Stops the thread and waits for its end, with the GIL released meanwhile;
 * a start meanwhile, on another thread, makes a new one. */
void gil_nudge_stop(void);
/* In a child of fork(): the thread was the parent's; forget it (a start
 * follows). */
void gil_nudge_forget(void);

#endif
