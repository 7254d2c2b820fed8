#!/bin/sh
# make check-asyncio-suite: asyncio-suite.pyt, judged as automake's TAP
# driver judges make check's tests: the script exits with status 0, prints
# its plan, and runs every planned test, all "ok".  A skipped suite
# ("1..0 # SKIP") passes here; CI, which installs the suite, refuses it.
here=$(dirname "$0")
log=$(mktemp)
errors=$(mktemp)
trap 'rm -f "$log" "$errors"' EXIT
status=0
$SHELL "$here/run-python-test.sh" "$here/asyncio-suite.pyt" >"$log" 2>"$errors" || status=$?
cat "$log" "$errors"
awk -v status="$status" '
	/^1\.\.[0-9]+/ { planned = substr($1, 4) + 0; plans++; skipped = /# *SKIP/ }
	/^ok /         { passed++ }
	/^not ok /     { failed++ }
	END {
		if (status != 0)
			why = "the script exited with status " status
		else if (plans != 1)
			why = plans + 0 " plans printed, not one"
		else if (skipped)
			exit 0
		else if (failed)
			why = failed " test(s) not ok"
		else if (passed != planned)
			why = passed + 0 " of the " planned " planned tests ran"
		if (why != "") {
			print "asyncio-suite: FAIL: " why
			exit 1
		}
	}' "$log"
