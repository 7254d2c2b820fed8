"""CPython's own asyncio test suite (all of test_asyncio, Debian's
libpython3.11-testsuite) with and without the adapter, side by side:
the same number of tests run, failed, errored and skipped, and under the
adapter a balanced checker report, no orphan resume, no unbalanced Leave.

Not part of `make check` (minutes): `make check-asyncio-suite`, and CI.
The two runs go in parallel: the suite mostly waits (timeouts, sockets)."""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402

DRIVER = os.path.join(tap.HERE, "asyncio_suite.py")
TIMEOUT = 900


class Report:
    """Just enough of tap.Run for tap.balanced()."""
    def __init__(self, counts, report):
        self.counts_path = counts
        self.report_path = report
    report = tap.Run.report
    rows = tap.Run.rows


def counts(text):
    m = re.search(r"^suite: (.*)$", text, re.M)
    return dict(kv.split("=") for kv in m.group(1).split()) if m else None


def main():
    try:
        import test.test_asyncio  # noqa: F401
    except ImportError as e:
        tap.skip_all("the asyncio test suite is not installed "
                     "(Debian: libpython3.11-testsuite): %s" % e)
    tap.plan(5)
    work = tempfile.mkdtemp(prefix="asyncelt-suite-")
    counts_path = os.path.join(work, "counting.txt")
    report = os.path.join(work, "check.txt")
    env = dict(os.environ)
    env.pop("ASYNCELT_PLUGINS", None)
    plain = subprocess.Popen([sys.executable, DRIVER], env=env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    profiled = subprocess.Popen(
        [sys.executable, DRIVER, "--profile",
         "counting:output=%s;%s:output=%s" % (counts_path, tap.CHECKER, report)],
        env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    plain_out, plain_err = plain.communicate(timeout=TIMEOUT)
    prof_out, prof_err = profiled.communicate(timeout=TIMEOUT)
    without, under = counts(plain_out), counts(prof_out)
    print("# without the adapter: %s" % without)
    print("# under the adapter:   %s" % under)

    tap.ok(without is not None and plain.returncode == 0,
           "the suite runs without the adapter", plain_out + plain_err[-3000:])
    same = without and under and all(without[k] == under[k] for k in
                                     ("run", "failures", "errors", "skipped",
                                      "expected_failures"))
    tap.ok(bool(same) and profiled.returncode == 0,
           "under the adapter: the same tests run, failed, errored and skipped",
           prof_out + prof_err[-3000:])
    m = re.search(r"^stats: (.*)$", prof_out, re.M)
    stats = json.loads(m.group(1)) if m else {}
    if m:
        print("# adapter: %s" % m.group(1))
    tap.ok(stats.get("orphan_resumes") == 0 and stats.get("unbalanced_leaves") == 0,
           "no orphan resume, no unbalanced Leave (%s invocations)" % stats.get("started"),
           json.dumps(stats))
    tap.ok(stats.get("emit_errors") == 0 and stats.get("dropped") == 0,
           "the library refused no segment, the adapter dropped none", json.dumps(stats))
    # Coroutines that ended where the hook did not see it (doc/cpython.md):
    # ended late, when their address was reused.
    print("# coroutines ended unseen, closed at their address's reuse: %s"
          % stats.get("vanished"))
    problems = tap.balanced(Report(counts_path, report))
    tap.ok(not problems and "shutdown: 0" in prof_out,
           "the checker finds all %d functions balanced" % len(Report(counts_path, report).rows()),
           "\n".join(problems[:20]))


if __name__ == "__main__":
    main()
