"""CPython's own asyncio test suite (all of test_asyncio: the interpreter's
own test package, Debian's libpython3.X-testsuite) with and without the
adapter, side by side:
the same number of tests run, failed, errored and skipped, and under the
adapter a balanced checker report, no orphan resume, no unbalanced Leave.

Not part of `make check` (minutes): `make check-asyncio-suite`, and CI.
The two runs go in parallel: the suite mostly waits (timeouts, sockets).
A test that hangs fails the run after TEST_TIMEOUT seconds with its name
and every thread's stack (asyncio_suite.py); a run that still has not
finished after TIMEOUT, or that leaves processes behind, is killed with
its whole process group and reported, never waited for."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402

DRIVER = os.path.join(tap.HERE, "asyncio_suite.py")
TEST_TIMEOUT = 240      # each test takes seconds
TIMEOUT = 1200          # the whole suite: 80 s here, and CI machines vary


def start(argv, env, work, name):
    """The driver in a process group of its own, so that what it leaves
    running can be killed; its output in files, not pipes, which a hung
    child of a test would hold open."""
    out = open(os.path.join(work, name + ".out"), "w+")
    err = open(os.path.join(work, name + ".err"), "w+")
    proc = subprocess.Popen([sys.executable, DRIVER, "--test-timeout", str(TEST_TIMEOUT)]
                            + argv, env=env, text=True, start_new_session=True,
                            stdout=out, stderr=err)
    return proc, out, err


def finish(run, timeout):
    """(stdout, stderr) once the driver ended, its process group killed;
    a note on stderr when the driver had to be killed."""
    proc, out, err = run
    note = ""
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        note = "\nkilled: still running after %d s" % timeout
    try:
        os.killpg(proc.pid, signal.SIGKILL)     # whatever it left behind
    except ProcessLookupError:
        pass
    proc.wait()
    out.seek(0)
    err.seek(0)
    return out.read(), err.read() + note


def hang(err):
    """What faulthandler wrote for a hung test, from the test's name on."""
    at = err.find("Timeout (")
    if at < 0:
        return None
    named = err.rfind(" ... ", 0, at)
    return err[err.rfind("\n", 0, named) + 1 if named >= 0 else at:][:20000]


class Report:
    """What tap.balanced() reads of a tap.Run: the checker's report and
    the counting plugin's table, from their files."""

    def __init__(self, counts_path, report_path):
        self.counts_path = counts_path
        self.report_path = report_path

    report = tap.Run.report
    rows = tap.Run.rows


def counts(text):
    m = re.search(r"^suite: (.*)$", text, re.M)
    return dict(kv.split("=") for kv in m.group(1).split()) if m else None


def main():
    try:
        import test.test_asyncio  # noqa: F401
    except ImportError as e:
        tap.skip_all("the asyncio test suite is not installed for %s "
                     "(Debian: libpython3.%d-testsuite): %s"
                     % (sys.executable, sys.version_info[1], e))
    tap.plan(5)
    work = tempfile.mkdtemp(prefix="asyncelt-suite-")
    try:
        check(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def check(work):
    """Both runs, in `work`, and the five tests on what they left there."""
    counts_path = os.path.join(work, "counting.txt")
    report = os.path.join(work, "check.txt")
    env = dict(os.environ)
    env.pop("ASYNCELT_PLUGINS", None)
    plain = start([], env, work, "plain")
    profiled = start(["--profile", "counting:output=%s;%s:output=%s"
                      % (counts_path, tap.CHECKER, report)], env, work, "profiled")
    plain_out, plain_err = finish(plain, TIMEOUT)
    prof_out, prof_err = finish(profiled, TIMEOUT)
    without, under = counts(plain_out), counts(prof_out)
    for name, err in (("without the adapter", plain_err), ("under the adapter", prof_err)):
        if hang(err):
            print("# a test hung %s:" % name)
            print("\n".join("# " + line for line in hang(err).splitlines()[:300]))
    print("# without the adapter: %s" % without)
    print("# under the adapter:   %s" % under)

    tap.ok(without is not None and plain[0].returncode == 0,
           "the suite runs without the adapter", plain_out + plain_err[-3000:])
    same = without and under and all(without[k] == under[k] for k in
                                     ("run", "failures", "errors", "skipped",
                                      "expected_failures"))
    tap.ok(bool(same) and profiled[0].returncode == 0,
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
    # ended late, when their address was reused; on 3.13, as they died.
    print("# coroutines ended unseen, closed at their address's reuse: %s"
          % stats.get("vanished"))
    print("# generators close()d with no event, ended as they died (3.13): %s"
          % stats.get("closed_unseen"))
    checked = Report(counts_path, report)
    try:
        problems, functions = tap.balanced(checked), len(checked.rows())
    except OSError as e:        # the profiled run wrote no report
        problems, functions = ["no report: %s" % e], 0
    tap.ok(not problems and "shutdown: 0" in prof_out,
           "the checker finds all %d functions balanced" % functions,
           "\n".join(problems[:20]))


if __name__ == "__main__":
    main()
