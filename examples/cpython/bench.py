"""Overhead side by side (make bench-python): the same workloads with no
profiler, cProfile, yappi (wall clock, coroutine-aware) and the adapter
with the counting and with the timing plugin.  Each run is a fresh
interpreter; the time is the workload's own (workloads.py prints it), the
median of --repeat runs; the ratio is to no profiler.

    bench.py [--repeat N] [--requests N] [--tasks N]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOADS = os.path.join(HERE, "workloads.py")

# yappi has no "python -m yappi script" that keeps coroutine-aware wall
# time on, so bench.py runs the script itself under yappi (--yappi).
PROFILERS = [
    ("none", []),
    ("cProfile", ["-m", "cProfile", "-o", os.devnull]),
    ("yappi (wall)", [os.path.abspath(__file__), "--yappi"]),
    ("asyncelt counting", ["-m", "asyncelt", "--plugins", "counting:output=" + os.devnull]),
    ("asyncelt timing", ["-m", "asyncelt", "--plugins", "timing:output=" + os.devnull]),
]


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


def measure(profiler_args, workload_args, repeat):
    times = []
    for _ in range(repeat):
        env = dict(os.environ)
        env.pop("ASYNCELT_PLUGINS", None)
        proc = subprocess.run([sys.executable] + profiler_args + [WORKLOADS] + workload_args,
                              capture_output=True, text=True, env=env, timeout=900)
        m = re.search(r"^seconds: ([0-9.]+)$", proc.stdout, re.M)
        if proc.returncode != 0 or not m:
            return None, (proc.stdout + proc.stderr)[-600:]
        times.append(float(m.group(1)))
    return statistics.median(times), None


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
         ["aiohttp", "--requests", str(options.requests)]),
        ("pure-CPU coroutines, %d tasks" % options.tasks, ["cpu", "--tasks", str(options.tasks)]),
    ]
    print("%-32s %-20s %10s %8s" % ("workload", "profiler", "seconds", "ratio"))
    for title, args in workloads:
        base = None
        for name, profiler in PROFILERS:
            seconds, error = measure(profiler, args, options.repeat)
            if seconds is None:
                print("%-32s %-20s %10s %8s   %s" % (title, name, "failed", "-",
                                                    error.replace("\n", " | ")))
                continue
            base = base or seconds
            print("%-32s %-20s %10.3f %7.2fx" % (title, name, seconds, seconds / base),
                  flush=True)


if __name__ == "__main__":
    main()
