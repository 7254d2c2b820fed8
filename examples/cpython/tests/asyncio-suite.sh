#!/bin/sh
# make check-asyncio-suite: asyncio-suite.pyt, failing on any "not ok".
here=$(dirname "$0")
log=$(mktemp)
trap 'rm -f "$log"' EXIT
$SHELL "$here/run-python-test.sh" "$here/asyncio-suite.pyt" | tee "$log"
grep -q '^ok' "$log" && ! grep -q '^not ok' "$log"
