"""Runs CPython's own asyncio test suite (Debian: libpython3.11-testsuite),
with or without the adapter, and prints one line of counts:

    asyncio_suite.py [--profile SPEC] [MODULE...]
    suite: run=N failures=F errors=E skipped=S expected_failures=X seconds=T

MODULE names test.test_asyncio.MODULE (all of test_asyncio when none).
With --profile, the adapter reports every function and coroutine to the
plugins in SPEC (ASYNCELT_PLUGINS syntax) while the tests run, and the
invocation statistics follow on a line of their own.
"""
import argparse
import json
import sys
import time
import unittest


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--profile", metavar="SPEC")
    parser.add_argument("modules", nargs="*")
    options = parser.parse_args()
    names = ["test.test_asyncio." + m for m in options.modules] or ["test.test_asyncio"]
    suite = unittest.defaultTestLoader.loadTestsFromNames(names)

    if options.profile:
        import asyncelt
        asyncelt.start(options.profile)
    start = time.monotonic()
    result = unittest.TextTestRunner(stream=sys.stderr, verbosity=0).run(suite)
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
