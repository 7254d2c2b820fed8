"""python3 -m asyncelt [--plugins SPEC] [--c-calls] [--include PATH]...
                     (script.py | -m module) [args...]

Runs a script (or module) the way `python3 -m cProfile` does, with every
function and coroutine reported to libasyncelt's plugins.  Exit status:
the script's, or 3 when a plugin's checks failed (as libasyncelt does).
With ASYNCELT_STATS=FILE, the invocation statistics and the adapter's
counters (asyncelt.stats()) are written to FILE as JSON.
"""
import argparse
import os
import runpy
import sys

import asyncelt
import _asyncelt

DEFAULT_PLUGINS = "timing"


def main():
    parser = argparse.ArgumentParser(
        prog="python3 -m asyncelt",
        description="Profile a Python program's functions and coroutines "
        "with libasyncelt's plugins.")
    parser.add_argument("--plugins", metavar="SPEC",
                        help="plugins, in the ASYNCELT_PLUGINS syntax "
                        "(default: $ASYNCELT_PLUGINS, else %r)" % DEFAULT_PLUGINS)
    parser.add_argument("--c-calls", action="store_true",
                        help="also report builtins called from Python")
    parser.add_argument("--include", metavar="PATH", action="append",
                        help="report only code from this file, or from this "
                        "directory if PATH ends with a /; repeatable "
                        "(default: all code)")
    parser.add_argument("-m", dest="module", action="store_true",
                        help="run a library module as a script, like python -m")
    parser.add_argument("target", help="the script (or, with -m, the module)")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    options = parser.parse_args()
    if not options.module and not os.path.isfile(options.target):
        parser.error("no such script: %s" % options.target)

    plugins = options.plugins
    if plugins is not None:
        os.environ.pop("ASYNCELT_PLUGINS", None)  # one source of plugins
    elif "ASYNCELT_PLUGINS" not in os.environ:
        plugins = DEFAULT_PLUGINS

    sys.argv = [options.target] + options.args
    if not options.module:
        sys.path[0] = os.path.dirname(os.path.abspath(options.target))
    code = 0
    try:
        asyncelt.start(plugins, c_calls=options.c_calls, include=options.include)
    except ValueError as e:
        sys.exit("asyncelt: %s" % e)
    try:
        if options.module:
            runpy.run_module(options.target, run_name="__main__", alter_sys=True)
        else:
            # Absolute, as python itself makes a script's path (3.9+): the
            # code's co_filename is what include= prefixes are matched with.
            runpy.run_path(os.path.abspath(options.target), run_name="__main__")
    except SystemExit as e:
        code = e.code
    finally:
        asyncelt.stop()
    status = asyncelt.shutdown(check=False)
    if status == _asyncelt.CHECK_FAILED:
        sys.exit(3)
    sys.exit(code)


if __name__ == "__main__":
    main()
