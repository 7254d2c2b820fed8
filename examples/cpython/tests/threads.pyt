"""Threads: asyncio.to_thread, a ThreadPoolExecutor, and four threads each
running an event loop of its own (workloads.py threads).  Threads started
after the adapter get its hook; nothing is lost and the counts are exact."""
import collections
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402

CALLS, LOOPS, COROUTINES = 200, 4, 50

# A thread already running at start(): not hooked on 3.11 (threading.setprofile
# reaches threads started later), covered on 3.12+ (sys.monitoring's events
# are every thread's); with threads=False, on 3.12+ the calling thread alone.
RUNNING_BEFORE = r"""
import sys, threading
import asyncelt

def early_work():
    return 1

def main_work():
    return 2

go, done = threading.Event(), threading.Event()

def runner():
    go.wait()
    for _ in range(100):
        early_work()
    done.set()

thread = threading.Thread(target=runner)
thread.start()
asyncelt.start(threads=sys.argv[1] == "threads")
for _ in range(10):
    main_work()
go.set()
done.wait()
thread.join()
asyncelt.stop()
"""


def write(text):
    """A script of `text`, removed when the test exits."""
    fd, path = tap.tempfile.mkstemp(suffix=".py")
    tap.atexit.register(os.unlink, path)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    return path


def main():
    tap.plan(11)
    run = tap.Run([tap.WORKLOADS, "threads", "--calls", str(CALLS), "--loops", str(LOOPS),
                   "--coroutines", str(COROUTINES)], logging=True)
    want = sum(k * j for k in range(LOOPS) for j in range(COROUTINES))
    tap.ok(run.status == 0 and
           "threads: to_thread=%d pool=%d loops=%d loop_sum=%d (want %d)"
           % (CALLS, CALLS, LOOPS, want, want) in run.stdout,
           "the workload computes what it must under the adapter", run.output())
    tap.ok(tap.segments(run.row("blocking")) == (CALLS, 0, 0, CALLS),
           "asyncio.to_thread: every call of the function on the pool reported",
           run.report())
    tap.ok(tap.segments(run.row("pooled")) == (CALLS, 0, 0, CALLS),
           "ThreadPoolExecutor.map: every call reported", run.report())
    tap.ok(tap.segments(run.row("thread_main")) == (LOOPS, LOOPS, LOOPS, LOOPS),
           "one main coroutine per thread's loop, suspended once at its gather",
           run.report())
    n = LOOPS * COROUTINES
    tap.ok(tap.segments(run.row("thread_coroutine")) == (n, 2 * n, 2 * n, n),
           "every coroutine of every thread's loop: two suspensions each", run.report())
    problems = tap.balanced(run)
    tap.ok(not problems, "the checker finds every function balanced",
           "\n".join(problems[:20]))
    stats = run.stats()
    tap.ok(tap.clean(stats) and stats["live"] == 0,
           "no orphan resume, no unbalanced Leave, nothing refused or left live",
           json.dumps(stats))

    log = run.log()
    threads_of = collections.defaultdict(set)
    for e in log:
        name = (e["function"] or "").split(" (")[0]
        threads_of[name].add(e["thread"])
    tap.ok(len(threads_of["thread_main"]) == LOOPS and
           not threads_of["thread_main"] & threads_of["threads_workload"],
           "each loop thread's coroutines ran on a thread of their own",
           {k: sorted(v) for k, v in threads_of.items()
            if k in ("thread_main", "threads_workload", "blocking")})
    by_invocation = collections.defaultdict(list)
    for e in log:
        if (e["function"] or "").startswith("thread_coroutine ("):
            by_invocation[e["invocation"]].append(e)
    tap.ok(len(by_invocation) == n and
           all(len({e["thread"] for e in seq}) == 1 and len(seq) == 6
               for seq in by_invocation.values()),
           "each coroutine's 6 segment boundaries stitched into one invocation, "
           "on its loop's thread", len(by_invocation))

    script = write(RUNNING_BEFORE)
    rows = {}
    for mode in ("threads", "alone"):
        early = tap.Run([script, mode], runner=False)
        rows[mode] = (early.status, tap.segments(early.row("early_work")),
                      tap.segments(early.row("main_work")), tap.clean(early.stats()),
                      tap.balanced(early))
    covered = (100, 0, 0, 100) if sys.version_info >= (3, 12) else None
    tap.ok(rows["threads"] == (0, covered, (10, 0, 0, 10), True, []),
           "a thread running at start(): %s" % ("covered (3.12+: the events are every "
                                               "thread's)" if covered else
                                               "not hooked (3.11)"), rows["threads"])
    tap.ok(rows["alone"] == (0, None, (10, 0, 0, 10), True, []),
           "threads=False: the calling thread alone", rows["alone"])


if __name__ == "__main__":
    main()
