"""libasyncelt for CPython: profile asyncio programs segment by segment.

Every Python function is reported to libasyncelt as it runs; a coroutine
(or generator, or async generator) is an async function whose segments are
its first run, each resume after an await that suspended, each suspension
and its final return.  libasyncelt's plugins (counting, logging, timing, or
your own) see them; choose them with the ASYNCELT_PLUGINS syntax::

    with asyncelt.profile("timing:trace=trace.json"):
        asyncio.run(main())

    python3 -m asyncelt --plugins 'counting' script.py args...

Reports are written at shutdown(): at exit, or when you call it.
"""
import atexit
import json
import os
import threading

import _asyncelt

# This package's own frames (start, stop, __exit__...) are not the program's.
_asyncelt.ignore_files(os.path.dirname(os.path.abspath(__file__)) + os.sep)

__all__ = ["start", "stop", "profile", "shutdown", "stats", "CheckFailed"]

stats = _asyncelt.stats


class CheckFailed(Exception):
    """A plugin's checks failed (its report says which)."""


def start(plugins=None, *, c_calls=False, threads=True, include=None):
    """Start reporting the calling thread's Python code.

    plugins: an ASYNCELT_PLUGINS specification ("counting;timing:trace=t.json"),
    loaded at the first start only, after $ASYNCELT_PLUGINS.
    c_calls: also report builtins called from Python (off: they are many).
    threads: also report other threads: on 3.11 those started from now on
    (threading.setprofile), on 3.12+ all of them (sys.monitoring's events
    are every thread's).
    include: report only code from files whose path starts with one of these
    (a list of paths: a file, or a directory with a trailing separator);
    fixed by the first start, like the plugins.
    """
    if include is not None:
        _asyncelt.include_files(tuple(os.path.abspath(p) + (os.sep if p.endswith(os.sep) else "")
                                      for p in include))
    _asyncelt.start(plugins, c_calls, threads)
    if threads and hasattr(_asyncelt, "thread_bootstrap"):  # 3.11's per-thread hook
        threading.setprofile(_asyncelt.thread_bootstrap)


def stop():
    """Stop reporting, on every thread; start() may follow.  What runs or is
    suspended now ends here (doc/cpython.md, "Segments in Python terms")."""
    threading.setprofile(None)
    _asyncelt.stop()


def shutdown(check=True):
    """Stop for good and let the plugins write their reports.

    Raises CheckFailed when a plugin's checks failed and `check` is true;
    returns the library's status (0: all good) otherwise.  With
    $ASYNCELT_STATS set, first writes stats() to that file as JSON.
    """
    threading.setprofile(None)
    _asyncelt.stop()
    if os.environ.get("ASYNCELT_STATS"):
        with open(os.environ["ASYNCELT_STATS"], "w") as f:
            json.dump(stats(), f)
    status, message = _asyncelt.shutdown()
    if status and check:
        raise CheckFailed(message)
    return status


class profile:
    """A context manager: start() on entry, stop() on exit."""

    def __init__(self, plugins=None, *, c_calls=False, threads=True, include=None):
        self.options = dict(plugins=plugins, c_calls=c_calls, threads=threads,
                            include=include)

    def __enter__(self):
        start(**self.options)
        return self

    def __exit__(self, *exc):
        stop()
        return False


def _shutdown_at_exit():
    # The library would shut down in its own atexit handler, after the
    # interpreter is gone; here the plugins still run under a live Python.
    try:
        shutdown(check=False)
    except RuntimeError:
        pass  # shut down already


atexit.register(_shutdown_at_exit)
os.register_at_fork(after_in_child=_asyncelt.after_fork_in_child)
