"""Runs CPython's own asyncio test suite (the interpreter's test package;
Debian: libpython3.X-testsuite),
with or without the adapter, and prints one line of counts:

    asyncio_suite.py [--profile SPEC] [MODULE...]
    suite: run=N failures=F errors=E skipped=S expected_failures=X seconds=T

MODULE names test.test_asyncio.MODULE (all of test_asyncio when none).
With --profile, the adapter reports every function and coroutine to the
plugins in SPEC (ASYNCELT_PLUGINS syntax) while the tests run, and the
invocation statistics follow on a line of their own.

Each test's name goes to stderr as it starts.  A test still running after
--test-timeout seconds has every thread's Python stack dumped to stderr
after a "Timeout" line, and the process exits at once with status 1: a
hang names itself (faulthandler's watchdog is a C thread: it fires even
when the hang holds the GIL).
"""
import argparse
import faulthandler
import json
import sys
import time
import unittest


class WatchedResult(unittest.TextTestResult):
    """Arms the watchdog for each test, disarms it after."""
    timeout = None

    def startTest(self, test):
        super().startTest(test)
        self.stream.flush()
        faulthandler.dump_traceback_later(self.timeout, exit=True)

    def stopTest(self, test):
        faulthandler.cancel_dump_traceback_later()
        super().stopTest(test)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--profile", metavar="SPEC")
    parser.add_argument("--test-timeout", type=float, default=300, metavar="S")
    parser.add_argument("modules", nargs="*")
    options = parser.parse_args()
    names = ["test.test_asyncio." + m for m in options.modules] or ["test.test_asyncio"]
    suite = unittest.defaultTestLoader.loadTestsFromNames(names)

    if options.profile:
        import asyncelt
        asyncelt.start(options.profile)
    start = time.monotonic()
    WatchedResult.timeout = options.test_timeout
    # verbosity 2: each test's name is written before it runs.
    result = unittest.TextTestRunner(stream=sys.stderr, verbosity=2,
                                     resultclass=WatchedResult).run(suite)
    seconds = time.monotonic() - start
    if options.profile:
        asyncelt.stop()
    print("suite: run=%d failures=%d errors=%d skipped=%d expected_failures=%d "
          "seconds=%.1f" % (result.testsRun, len(result.failures), len(result.errors),
                            len(result.skipped), len(result.expectedFailures), seconds))
    for test, trace in result.failures + result.errors:
        print("failed: %s" % test.id())
    if options.profile:
        print("stats: " + json.dumps(asyncelt.stats(), sort_keys=True))
        sys.stdout.flush()
        status = asyncelt.shutdown(check=False)
        print("shutdown: %d" % status)


if __name__ == "__main__":
    main()
