#!/bin/sh
# The matrix's wrapper for Win64 test programs: wine, started again when
# wine itself fails to start.  Under some address-space layouts wine cannot
# map its shared user data page ("err:virtual:virtual_alloc_first_teb ...
# failed to map the shared user data: c0000018") and exits 127 before the
# program runs; a second start gets another layout.  No test program exits
# 127 itself, so that status alone says wine did not start.  Output is
# left alone (tests read stdout and stderr merged, in order): a failed
# start's message stays in front of the real run's output.
#
#   wine-retry.sh PROGRAM [ARGS...]
attempt=1
while :; do
	wine "$@"
	status=$?
	[ $status -eq 127 ] && [ $attempt -lt 3 ] || exit $status
	echo "wine-retry.sh: wine exited 127 (did not start?); starting it again" >&2
	attempt=$((attempt + 1))
done
