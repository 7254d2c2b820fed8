"""An aiohttp server on 127.0.0.1 answering 2,000 requests of an aiohttp
client in the same event loop (workloads.py aiohttp), under the adapter:
the handlers' invocations equal the requests answered, every `sleepy`
invocation is stitched over its two suspensions, the run is balanced with
no orphan resume, the JSON reports parse and the timing trace passes
tests/check-trace.py."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402

REQUESTS = 2000
CHECK_TRACE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(tap.HERE))),
                           "tests", "check-trace.py")


def answered(run):
    for line in run.stdout.splitlines():
        if line.startswith("answered: "):
            return dict((k, int(v)) for k, v in
                        (item.split("=") for item in line.split()[1:]))
    return None


def main():
    tap.require_module("aiohttp", "python3-aiohttp")
    tap.plan(12)

    # Everything reported: aiohttp's and asyncio's code too.
    run = tap.Run([tap.WORKLOADS, "aiohttp", "--requests", str(REQUESTS)], timing=True,
                  timeout=600)
    got = answered(run)
    tap.ok(run.status == 0 and got == {"hello": REQUESTS // 2, "sleepy": REQUESTS // 2},
           "the server answers all %d requests under the adapter" % REQUESTS, run.output())
    got = got or {}
    tap.ok(tap.segments(run.row("hello")) == (got.get("hello"), 0, 0, got.get("hello")),
           "hello: one call and one return per request answered, never suspended",
           run.report())
    n = got.get("sleepy")
    tap.ok(tap.segments(run.row("sleepy")) == (n, 2 * n, 2 * n, n) if n else False,
           "sleepy: per request one call, two suspensions, two resumes, one return",
           run.report())
    tap.ok(tap.segments(run.row("lookup")) == (n, n, n, n) if n else False,
           "lookup (awaited by sleepy): one suspension per call", run.report())
    problems = tap.balanced(run)
    tap.ok(not problems, "the checker finds every function of aiohttp, asyncio and "
           "the workload balanced", "\n".join(problems[:20]))
    stats = run.stats()
    tap.ok(tap.clean(stats), "no orphan resume, no unbalanced Leave, nothing refused",
           json.dumps(stats))
    try:
        timing = run.timing()
        by_name = {f["function"].split(" (")[0]: f for f in timing["functions"]}
    except (OSError, ValueError, KeyError) as e:
        timing, by_name = None, {}
        tap.ok(False, "the timing plugin's JSON report parses", e)
    else:
        tap.ok(True, "the timing plugin's JSON report parses (%d functions)"
               % len(by_name))
    sleepy = by_name.get("sleepy", {})
    segs = sleepy.get("segments", {})
    tap.ok(sleepy.get("calls") == n and segs.get("count") == n and
           segs.get("p50") == segs.get("max") == 3.0 and segs.get("mean") == 3.0,
           "each sleepy invocation is stitched into one of 3 segments", json.dumps(sleepy))
    tap.ok(sleepy.get("hops", {}).get("max") == 0.0,
           "one event loop, one thread: no resume hops to another thread",
           json.dumps(sleepy.get("hops")))

    # The trace of the workload's own code: the same requests, a file of
    # a size tests/check-trace.py reads in seconds.
    traced = tap.Run([tap.WORKLOADS, "aiohttp", "--requests", str(REQUESTS)],
                     timing=True, trace=True, timeout=600,
                     extra=["--include", tap.WORKLOADS])
    tap.ok(traced.status == 0 and tap.segments(traced.row("sleepy")) == (n, 2 * n, 2 * n, n)
           if n else False,
           "with --include workloads.py: the same counts for sleepy", traced.output())
    check = subprocess.run([sys.executable, CHECK_TRACE, traced.trace_path],
                           capture_output=True, text=True, timeout=300)
    tap.ok(check.returncode == 0, "the timing trace passes tests/check-trace.py",
           check.stdout + check.stderr)
    with open(traced.trace_path) as f:
        events = json.load(f)
    events = events["traceEvents"] if isinstance(events, dict) else events
    sleepy_ends = [e for e in events if e.get("ph") == "e"
                   and e.get("name", "").startswith("sleepy (")]
    tap.ok(len(sleepy_ends) == n and all(e["args"].get("segments") == 3 for e in sleepy_ends),
           "the trace has one async track per sleepy request, each of 3 segments",
           json.dumps(sleepy_ends[:2]))


if __name__ == "__main__":
    main()
