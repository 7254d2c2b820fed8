"""What the adapter's tests share: TAP output, running a Python program
under the adapter, and reading the plugins' reports.

CHECKER is the one place that names the plugin which checks Enter/Leave
balance: the check plugin, beside counting, whose table gives the counts."""
import atexit
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

CHECKER = "check"
HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOADS = os.path.join(os.path.dirname(HERE), "workloads.py")

_count = 0
_failed = 0


def plan(n):
    print("1..%d" % n, flush=True)


def skip_all(reason):
    print("1..0 # SKIP %s" % reason, flush=True)
    sys.exit(0)


def ok(condition, description, diagnostic=None):
    global _count, _failed
    _count += 1
    if not condition:
        _failed += 1
    print("%sok %d - %s" % ("" if condition else "not ", _count, description))
    if not condition and diagnostic is not None:
        for line in str(diagnostic).splitlines()[-40:]:
            print("# " + line)
    sys.stdout.flush()


def skip(description, reason):
    """A test that cannot run here: counted, neither passed nor failed."""
    global _count
    _count += 1
    print("ok %d - %s # SKIP %s" % (_count, description, reason), flush=True)


def require_module(name, package):
    try:
        __import__(name)
    except ImportError as e:
        skip_all("%s is not installed (Debian: %s): %s" % (name, package, e))


class Run:
    """A program run under `python -m asyncelt`, with the checker's report,
    the logging plugin's JSON lines and the timing plugin's JSON report and
    trace when asked, and the adapter's statistics (ASYNCELT_STATS).  The
    files go in a temporary directory, removed at exit unless
    $ASYNCELT_TEST_KEEP is set."""

    def __init__(self, argv, *, expect=None, logging=False, timing=False,
                 trace=False, c_calls=False, timeout=300, runner=True, extra=()):
        """runner: through `python -m asyncelt --plugins`; else the program
        starts the adapter itself, with the plugins in $ASYNCELT_PLUGINS."""
        self.dir = tempfile.mkdtemp(prefix="asyncelt-test-")
        if not os.environ.get("ASYNCELT_TEST_KEEP"):
            atexit.register(shutil.rmtree, self.dir, True)
        self.counts_path = os.path.join(self.dir, "counting.txt")
        self.report_path = os.path.join(self.dir, "check.txt")
        options = "output=" + self.report_path
        if expect:
            options = "expect=%s,%s" % (",".join("%s:%d" % kv for kv in expect.items()),
                                        options)
        plugins = ["counting:output=" + self.counts_path, "%s:%s" % (CHECKER, options)]
        self.log_path = os.path.join(self.dir, "log.jsonl")
        if logging:
            plugins.append("logging:format=json,output=" + self.log_path)
        self.timing_path = os.path.join(self.dir, "timing.json")
        self.trace_path = os.path.join(self.dir, "trace.json")
        if timing:
            plugins.append("timing:format=json,output=%s%s" % (
                self.timing_path, ",trace=" + self.trace_path if trace else ""))
        self.stats_path = os.path.join(self.dir, "stats.json")
        env = dict(os.environ, ASYNCELT_STATS=self.stats_path)
        env.pop("ASYNCELT_PLUGINS", None)
        if runner:
            cmd = [sys.executable, "-m", "asyncelt", "--plugins", ";".join(plugins)]
            if c_calls:
                cmd.append("--c-calls")
            cmd += list(extra)
        else:
            env["ASYNCELT_PLUGINS"] = ";".join(plugins)
            cmd = [sys.executable]
        proc = subprocess.run(cmd + argv, env=env, capture_output=True, text=True,
                              timeout=timeout)
        self.status = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr

    def output(self):
        return "status %d\nstdout:\n%s\nstderr:\n%s" % (self.status, self.stdout,
                                                        self.stderr)

    def report(self):
        with open(self.report_path) as f:
            return f.read()

    def rows(self):
        """The counting plugin's table: {function: {calls, resumes, ...}}."""
        keys = ("calls", "resumes", "suspends", "returns", "tailcalls")
        rows = {}
        with open(self.counts_path) as f:
            for line in f.read().splitlines():
                m = re.match(r"^(.*?)\s+" + r"\s+".join([r"(\d+)"] * 5) + r"$", line)
                if m:
                    rows[m.group(1)] = dict(zip(keys, map(int, m.groups()[1:])))
        return rows

    def row(self, qualname):
        """The row of the function whose display name starts with qualname."""
        found = [r for name, r in self.rows().items()
                 if name.split(" (", 1)[0] == qualname]
        return found[0] if len(found) == 1 else None

    def stats(self):
        with open(self.stats_path) as f:
            return json.load(f)

    def log(self):
        with open(self.log_path) as f:
            return [json.loads(line) for line in f]

    def timing(self):
        with open(self.timing_path) as f:
            return json.load(f)


def segments(row):
    """calls/resumes/suspends/returns of a checker row, as a tuple."""
    return None if row is None else (row["calls"], row["resumes"], row["suspends"],
                                     row["returns"])


def clean(stats):
    """The invocation statistics a correct adapter produces: nothing
    orphaned, unbalanced, refused, dropped or ended unseen."""
    return all(stats.get(k) == 0 for k in ("orphan_resumes", "unbalanced_leaves",
                                           "emit_errors", "dropped", "vanished"))


def balanced(run):
    """The checker's verdict without expectations (names with "file:line"
    cannot be written in expect=): every function back at depth 0 with as
    many Leaves as Enters and no sequence error, and no continuation
    resumed without a suspension.  Returns the problems found (empty: none)."""
    report = run.report()
    problems = [line for line in report.splitlines()
                if line.startswith(("resumed and never suspended", "sequence error",
                                    "unbalanced at exit"))]
    if "check: PASS" not in report:
        problems.append("no PASS verdict from the check plugin")
    if not run.rows():
        problems.append("no counting table")
    return problems
