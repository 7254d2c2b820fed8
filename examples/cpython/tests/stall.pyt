"""CPython 3.11 stalls a profiled thread at a function's start when the
eval breaker is left set for a main thread that blocked
(examples/cpython/gil-nudge.c); signal_stall.py makes it happen every
time.  Under a do-nothing profile function written in Python it stalls:
the control, which shows this interpreter has the bug.  3.12 and 3.13 have
it not, neither under a profile function nor under a sys.monitoring tool:
there the control is that it finishes under both, which is why the
adapter starts no such thread on 3.12+.  Under the adapter
it must finish, with every call reported and balanced, and so must a
child of fork() that meets the same in its turn.  Stopping the adapter
from several threads at once, which stops its thread, must not hang."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402

PROGRAM = os.path.join(tap.HERE, "signal_stall.py")
SECONDS = 1            # the worker's calls last this long
STALLED_AFTER = 10      # seconds: the program ends after about SECONDS
FINISHES_WITHIN = 120   # seconds, under the adapter on a slow machine (and
                        # more than signal_stall.py gives a child)


def main():
    tap.plan(5)
    version = ".".join(map(str, sys.version_info[:3]))
    if sys.version_info < (3, 12):
        try:
            subprocess.run([sys.executable, PROGRAM, "--python-profile", "--seconds",
                            str(SECONDS)], capture_output=True, timeout=STALLED_AFTER)
            tap.skip("the control: a Python profile function stalls the program",
                     "CPython %s does not stall: the next test proves less" % version)
        except subprocess.TimeoutExpired:
            tap.ok(True, "the control: a Python profile function stalls the program "
                   "(CPython %s)" % version)
    else:
        finished = []
        for hook in ("--python-profile", "--python-monitoring"):
            try:
                subprocess.run([sys.executable, PROGRAM, hook, "--seconds", str(SECONDS)],
                               capture_output=True, timeout=STALLED_AFTER)
                finished.append(hook)
            except subprocess.TimeoutExpired:
                pass
        tap.ok(len(finished) == 2,
               "the control: CPython %s does not stall under a Python profile function "
               "nor a Python sys.monitoring tool (no GIL nudge needed)" % version,
               "finished only with %s" % finished)
    try:
        run = tap.Run([PROGRAM, "--seconds", str(SECONDS)], timeout=FINISHES_WITHIN)
    except subprocess.TimeoutExpired:
        tap.ok(False, "under the adapter the program finishes",
               "still running after %d s" % FINISHES_WITHIN)
        tap.ok(False, "every call reported and balanced", "no report: it did not finish")
    else:
        finished = re.search(r"^finished: (\d+) calls$", run.stdout, re.M)
        tap.ok(run.status == 0 and finished, "under the adapter the program finishes",
               run.output())
        calls = int(finished.group(1)) if finished else -1
        row = run.row("tiny")
        try:
            problems = tap.balanced(run)
        except OSError as e:    # no report
            problems = [str(e)]
        tap.ok(tap.segments(row) == (calls, 0, 0, calls) and not problems,
               "every call reported and balanced: tiny %s" % (tap.segments(row),),
               "\n".join(problems[:20]) + "\n" + run.report())
    try:
        run = tap.Run([PROGRAM, "--seconds", str(SECONDS), "--fork"], timeout=FINISHES_WITHIN)
        tap.ok(run.status == 0 and "finished in the child" in run.stdout,
               "in a child of fork() too", run.output())
    except subprocess.TimeoutExpired:
        tap.ok(False, "in a child of fork() too", "still running after %d s" % FINISHES_WITHIN)
    try:
        run = tap.Run([PROGRAM, "--stop-race"], timeout=FINISHES_WITHIN)
        tap.ok(run.status == 0 and "20 times" in run.stdout,
               "stopped from four threads at once, twenty times", run.output())
    except subprocess.TimeoutExpired:
        tap.ok(False, "stopped from four threads at once, twenty times",
               "still running after %d s" % FINISHES_WITHIN)



if __name__ == "__main__":
    main()
