#!/bin/sh
# The matrix's wrapper for Win64 test programs: wine, with the address
# space laid out the same way every time, and started again when wine
# itself fails to start.
#
# Now and then (twice in about five CI runs, a few hundred starts) wine
# cannot map its shared user data page at its fixed address
# ("err:virtual:virtual_alloc_first_teb ... failed to map the shared user
# data: c0000018", a conflicting address) and exits, 127 or 1, before the
# program runs; most likely a randomized mapping of the new process was
# in the way.  So wine runs without address-space randomization
# (setarch -R, where the kernel allows it), every start with the layout
# that worked before.
# A start that exits 127 is retried as well (no test program exits 127
# itself).  Output is left alone (tests read stdout and stderr merged, in
# order): a failed start's message stays in front of the real run's.
#
#   wine-retry.sh PROGRAM [ARGS...]
norandom=""
if setarch "$(uname -m)" -R true 2>/dev/null; then
	norandom="setarch $(uname -m) -R"
fi
attempt=1
while :; do
	$norandom wine "$@"
	status=$?
	[ $status -eq 127 ] && [ $attempt -lt 3 ] || exit $status
	echo "wine-retry.sh: wine exited 127 (did not start?); starting it again" >&2
	attempt=$((attempt + 1))
done
