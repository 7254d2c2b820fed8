#!/bin/sh
# `make stress`: runs tests/stress/stress (see its header) and checks the
# Chrome trace it leaves with tests/check-trace.py.  Exits 1 on any failure.
#
#   run-stress.sh PROGRAM DIR
#   STRESS_SEGMENTS=n   segments (default 10000000; 200000 for a short run)
#   STRESS_THREADS=n    threads (default 8)
#   STRESS_WRAPPER=cmd  runs the program under cmd, e.g.
#                       "valgrind --tool=helgrind --error-exitcode=1"
#   PYTHON=python3      the trace checker's interpreter
#
# The logs of a full run take 4.3 GB in DIR, and checking its trace 9.4 GB
# of memory; the short run needs a fiftieth of that.
set -u
program=$1
dir=$2
here=$(cd "$(dirname "$0")/../.." && pwd)

rm -rf "$dir" && mkdir -p "$dir" || exit 1
${STRESS_WRAPPER:-} "$program" "$dir" || { echo "stress: FAIL (the program)"; exit 1; }
echo "stress: the trace (tests/check-trace.py)"
${PYTHON:-python3} "$here/tests/check-trace.py" --trace "$dir/trace.json" ||
	{ echo "stress: FAIL (the trace)"; exit 1; }
echo "stress: PASS"
