/*
 * _asyncelt: the Python face of the adapter.  The asyncelt package
 * (asyncelt/__init__.py) wraps it in the API users call.
 */
#include "adapter.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

static bool started_once, shut_down;

/* Raises `type` with the library's own explanation of `st`. */
static PyObject *raise_status(PyObject *type, const char *what, elt_status st)
{
	const char *detail = elt_last_error();

	PyErr_Format(type, "%s: %s%s%s", what, elt_strerror(st),
		     *detail ? ": " : "", detail);
	return NULL;
}

static PyObject *start(PyObject *self, PyObject *args, PyObject *kwargs)
{
	static char *keywords[] = { "plugins", "c_calls", "threads", NULL };
	const char *plugins = NULL;
	int c_calls = 0, threads = 1;
	elt_status st;

	(void)self;
	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|zpp:start", keywords,
					 &plugins, &c_calls, &threads))
		return NULL;
	if (shut_down)
		return PyErr_Format(PyExc_RuntimeError,
				    "start: the profiler was shut down (its reports are written)");
	if (adapter_running())
		return PyErr_Format(PyExc_RuntimeError, "start: already started");
	if (!started_once) {
		/* $ASYNCELT_PLUGINS, then the plugins asked for. */
		st = elt_init();
		if (st != ELT_OK)
			return raise_status(PyExc_ValueError, "ASYNCELT_PLUGINS", st);
		if (plugins && (st = elt_plugin_load(plugins)) != ELT_OK)
			return raise_status(PyExc_ValueError, plugins, st);
		started_once = true;
	} else if (plugins) {
		return PyErr_Format(PyExc_RuntimeError,
				    "start: plugins are chosen at the first start only");
	}
	if (adapter_install(c_calls, threads) < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *stop(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	adapter_uninstall(false);
	Py_RETURN_NONE;
}

/* The plugins' reports are written now; returns (status, message) where
 * status is 0 when every plugin's checks passed. */
static PyObject *shutdown(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	if (shut_down)
		return PyErr_Format(PyExc_RuntimeError, "shutdown: already shut down");
	/* First: the uninstall lets other threads run (gil-nudge.c), and a
	 * start() or shutdown() of theirs must see it. */
	shut_down = true;
	adapter_uninstall(true);
	elt_status st = elt_shutdown();

	return Py_BuildValue("(is)", (int)st, st == ELT_OK ? "" : elt_strerror(st));
}

static PyObject *after_fork_in_child(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	adapter_after_fork_child();
	Py_RETURN_NONE;
}

static int set_count(PyObject *dict, const char *key, uint64_t value)
{
	PyObject *v = PyLong_FromUnsignedLongLong(value);
	int rc = v ? PyDict_SetItemString(dict, key, v) : -1;

	Py_XDECREF(v);
	return rc;
}

static PyObject *stats(PyObject *self, PyObject *unused)
{
	elt_invocation_stats inv;
	const struct adapter_counters *a = &adapter_counters;
	PyObject *d = PyDict_New();

	(void)self;
	(void)unused;
	elt_get_invocation_stats(&inv);
	if (!d || set_count(d, "started", inv.started) ||
	    set_count(d, "completed", inv.completed) || set_count(d, "live", inv.live) ||
	    set_count(d, "orphan_resumes", inv.orphan_resumes) ||
	    set_count(d, "early_resumes", inv.early_resumes) ||
	    set_count(d, "unbalanced_leaves", inv.unbalanced_leaves) ||
	    set_count(d, "abandoned", inv.abandoned) ||
	    set_count(d, "unpublished", inv.unpublished) ||
	    set_count(d, "functions", a->functions) ||
	    set_count(d, "code_objects", a->code_objects) ||
	    set_count(d, "c_functions", a->c_functions) ||
	    set_count(d, "enters", a->enters) || set_count(d, "leaves", a->leaves) ||
	    set_count(d, "skipped_leaves", a->skipped_leaves) ||
	    set_count(d, "closed_at_stop", a->closed_at_stop) ||
	    set_count(d, "closed_unseen", a->closed_unseen) ||
	    set_count(d, "vanished", a->vanished) ||
	    set_count(d, "unannounced", a->unannounced) ||
	    set_count(d, "emit_errors", a->emit_errors) ||
	    set_count(d, "dropped", a->dropped)) {
		Py_XDECREF(d);
		return NULL;
	}
	return d;
}

static PyObject *ignore_files(PyObject *self, PyObject *prefix)
{
	(void)self;
	if (prefix != Py_None && !PyUnicode_Check(prefix))
		return PyErr_Format(PyExc_TypeError, "ignore_files: a str or None");
	adapter_ignore_files(prefix == Py_None ? NULL : prefix);
	Py_RETURN_NONE;
}

static PyObject *include_files(PyObject *self, PyObject *prefixes)
{
	(void)self;
	if (prefixes != Py_None && !PyTuple_Check(prefixes))
		return PyErr_Format(PyExc_TypeError, "include_files: a tuple of str or None");
	adapter_include_files(prefixes == Py_None ? NULL : prefixes);
	Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
	{ "include_files", include_files, METH_O,
	  "include_files(prefixes): only code from files whose path starts with "
	  "one of the prefixes (a tuple) is reported (None: all code)." },
	{ "ignore_files", ignore_files, METH_O,
	  "ignore_files(prefix): code from files whose path starts with prefix "
	  "is not reported (None: report everything)." },
	{ "start", (PyCFunction)(void (*)(void))start, METH_VARARGS | METH_KEYWORDS,
	  "start(plugins=None, c_calls=False, threads=True): report Python "
	  "functions and coroutines to libasyncelt: this thread's (3.11: new "
	  "threads install the hook through thread_bootstrap), or every "
	  "thread's (3.12+; this one's alone without threads).  The first "
	  "start loads $ASYNCELT_PLUGINS, then `plugins` (the same syntax)." },
	{ "stop", stop, METH_NOARGS, "stop(): stop reporting, on every thread." },
	{ "shutdown", shutdown, METH_NOARGS,
	  "shutdown() -> (status, message): the plugins report; status 0 when "
	  "their checks passed.  No start() after it." },
	{ "after_fork_in_child", after_fork_in_child, METH_NOARGS,
	  "For os.register_at_fork: the adapter's own thread starts anew in "
	  "the child." },
	{ "stats", stats, METH_NOARGS,
	  "stats() -> dict: the library's invocation statistics and the "
	  "adapter's counters." },
#if !ADAPTER_USES_MONITORING
	{ "thread_bootstrap", (PyCFunction)(void (*)(void))adapter_thread_bootstrap,
	  METH_FASTCALL,
	  "The profile function for threading.setprofile: installs the C hook "
	  "in a new thread." },
#endif
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = {
	PyModuleDef_HEAD_INIT,
	.m_name = "_asyncelt",
	.m_doc = "libasyncelt's CPython adapter (use the asyncelt package).",
	.m_size = -1,
	.m_methods = methods,
};

PyMODINIT_FUNC PyInit__asyncelt(void);

PyMODINIT_FUNC PyInit__asyncelt(void)
{
	if (adapter_setup() < 0)
		return NULL;
	PyObject *m = PyModule_Create(&module);

	if (m && PyModule_AddIntConstant(m, "CHECK_FAILED", ELT_E_CHECK_FAILED) < 0)
		Py_CLEAR(m);
	return m;
}
