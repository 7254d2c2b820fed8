"""Overhead side by side (make bench-python): the same workloads with no
profiler, cProfile, yappi (wall clock, coroutine-aware) and the adapter
with the counting and with the timing plugin.  Each run is a fresh
interpreter; the time is the workload's own (workloads.py prints it), the
median of --repeat rounds in which the profilers take turns; the ratio is
to no profiler.  A workload or a
profiler whose module this interpreter lacks (aiohttp, yappi: say, on a
pyenv build without them) is reported n/a and its row skipped.

    bench.py [--repeat N] [--requests N] [--tasks N]
"""
import argparse
import importlib.util
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOADS = os.path.join(HERE, "workloads.py")

# yappi has no "python -m yappi script" that keeps coroutine-aware wall
# time on, so bench.py runs the script itself under yappi (--yappi).
# (name, arguments, the third-party module it needs or None)
PROFILERS = [
    ("none", [], None),
    ("cProfile", ["-m", "cProfile", "-o", os.devnull], None),
    ("yappi (wall)", [os.path.abspath(__file__), "--yappi"], "yappi"),
    ("asyncelt counting", ["-m", "asyncelt", "--plugins", "counting:output=" + os.devnull], None),
    ("asyncelt timing", ["-m", "asyncelt", "--plugins", "timing:output=" + os.devnull], None),
]


def missing(module):
    """Why a run needing module cannot be made here, or None."""
    if module is None or importlib.util.find_spec(module) is not None:
        return None
    return "n/a: no %s for %s" % (module, sys.executable)


def run_under_yappi(argv):
    import runpy
    import yappi
    yappi.set_clock_type("wall")
    sys.argv = argv
    yappi.start()
    try:
        runpy.run_path(argv[0], run_name="__main__")
    finally:
        yappi.stop()
        yappi.get_func_stats()  # what a user would do: the report's cost counts too


def run_once(profiler_args, workload_args):
    """The workload's seconds under the profiler, or None and why not."""
    env = dict(os.environ)
    env.pop("ASYNCELT_PLUGINS", None)
    proc = subprocess.run([sys.executable] + profiler_args + [WORKLOADS] + workload_args,
                          capture_output=True, text=True, env=env, timeout=900)
    m = re.search(r"^seconds: ([0-9.]+)$", proc.stdout, re.M)
    if proc.returncode != 0 or not m:
        return None, (proc.stdout + proc.stderr)[-600:]
    return float(m.group(1)), None


def measure(profilers, workload_args, repeat):
    """Each profiler's median seconds (or its error), the profilers taking
    turns in each of `repeat` rounds, so that a stretch of load on a
    shared machine falls on all of them alike."""
    times = {name: [] for name, _ in profilers}
    errors = {}
    for _ in range(repeat):
        for name, profiler in profilers:
            if name in errors:
                continue
            seconds, error = run_once(profiler, workload_args)
            if seconds is None:
                errors[name] = error
            else:
                times[name].append(seconds)
    return {name: (statistics.median(times[name]) if name not in errors else None,
                   errors.get(name)) for name, _ in profilers}


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--yappi":
        return run_under_yappi(sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--tasks", type=int, default=200)
    options = parser.parse_args()
    workloads = [
        ("aiohttp, %d requests" % options.requests,
         ["aiohttp", "--requests", str(options.requests)], "aiohttp"),
        ("pure-CPU coroutines, %d tasks" % options.tasks,
         ["cpu", "--tasks", str(options.tasks)], None),
    ]
    print("# %s, CPython %s" % (sys.executable, sys.version.split()[0]))
    print("%-32s %-20s %10s %8s" % ("workload", "profiler", "seconds", "ratio"))
    for title, args, needs in workloads:
        if missing(needs):
            print("%-32s %-20s %10s %8s   %s" % (title, "all", "-", "-", missing(needs)))
            continue
        runnable = []
        for name, profiler, profiler_needs in PROFILERS:
            if missing(profiler_needs):
                print("%-32s %-20s %10s %8s   %s" % (title, name, "-", "-",
                                                    missing(profiler_needs)))
            else:
                runnable.append((name, profiler))
        results = measure(runnable, args, options.repeat)
        base = results.get("none", (None, None))[0]  # without it, no ratio
        for name, _ in runnable:
            seconds, error = results[name]
            if seconds is None:
                print("%-32s %-20s %10s %8s   %s" % (title, name, "failed", "-",
                                                    error.replace("\n", " | ")))
                continue
            ratio = "%7.2fx" % (seconds / base) if base else "%8s" % "-"
            print("%-32s %-20s %10.3f %s" % (title, name, seconds, ratio), flush=True)


if __name__ == "__main__":
    main()
