/*
 * The CPython adapter: Python's profile events turned into libasyncelt
 * segments through the producer API (doc/runtime.md).  adapter.c holds
 * the translation (core.h), profile-311.c or monitoring.c the hook into
 * the interpreter, module.c the Python face (_asyncelt).
 *
 * Every function here runs with the GIL held.
 */
#ifndef ASYNCELT_CPYTHON_ADAPTER_H
#define ASYNCELT_CPYTHON_ADAPTER_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdbool.h>
#include <stdint.h>

/* 3.12 brought sys.monitoring (PEP 669), and its events have all the
 * adapter needs; 3.11 has the profile hook only. */
#define ADAPTER_USES_MONITORING (PY_VERSION_HEX >= 0x030C0000)

/* What the adapter did, for tests and for the user's sanity. */
struct adapter_counters {
	uint64_t functions;             /* functions registered */
	uint64_t code_objects;          /* code objects alive and known */
	uint64_t c_functions;           /* builtins registered (c_calls) */
	uint64_t enters, leaves;        /* segments reported */
	uint64_t skipped_leaves;        /* frames left whose Enter was not
	                                   reported: running before start() */
	uint64_t vanished;              /* suspended coroutines that ended unseen,
	                                   ended when their address was reused */
	uint64_t unannounced;           /* resumes CPython gave no event for,
	                                   reported at the coroutine's next one
	                                   (3.11 only) */
	uint64_t closed_unseen;         /* 3.13+: generators close() ended with no
	                                   event, ended as they died */
	uint64_t closed_at_stop;        /* frames still running at stop(): their
	                                   segment ends there, as a return */
	uint64_t emit_errors;           /* elt_emit_* refused: must stay 0 */
	uint64_t dropped;               /* out of memory: segment not reported */
};

extern struct adapter_counters adapter_counters;

/* At import: -1 with an exception set on failure. */
int adapter_setup(void);
/* Starts reporting: on 3.11 this thread's (threads started later install
 * the hook through adapter_thread_bootstrap), on 3.12+ every thread's, or
 * this thread's alone without all_threads.  With c_calls, builtins called
 * from Python are reported too.  -1 with an exception set on failure (3.12+:
 * the sys.monitoring tool id is taken). */
int adapter_install(bool c_calls, bool all_threads);
/* Stops reporting: what runs on this thread and the coroutines seen
 * suspending end now, what runs on the other threads at their next event.
 * `final` (shutdown): the hook goes on every thread now, whatever runs. */
void adapter_uninstall(bool final);
bool adapter_running(void);
/* In a child of fork(), from os.register_at_fork: the adapter's own
 * thread (gil-nudge.c) was the parent's; a new one starts if running. */
void adapter_after_fork_child(void);
/* Code from files whose path starts with `prefix` (a str, or NULL for
 * none) is not reported: the profiler's own Python code. */
void adapter_ignore_files(PyObject *prefix);
/* Only code from files whose path starts with one of `prefixes` (a tuple
 * of str, or NULL for no restriction) is reported.  Both filters apply to
 * code objects seen from then on: set them before the first start. */
void adapter_include_files(PyObject *prefixes);
/* The filters changed: code the hook was told to skip is seen again. */
void adapter_filters_changed(void);
#if !ADAPTER_USES_MONITORING
/* threading.setprofile's function: a new thread's first event arrives
 * here, through sys.setprofile; it installs the C hook and reports it. */
PyObject *adapter_thread_bootstrap(PyObject *self, PyObject *const *args,
				   Py_ssize_t nargs);
#endif

#endif
