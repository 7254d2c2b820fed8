#!/bin/sh
# Runs one of the CPython adapter's TAP tests (a Python script) with the
# interpreter configure chose, or reports the whole test skipped with
# configure's reason when this build has no adapter.
if [ -n "$ELT_PYTHON_SKIP" ]; then
	echo "1..0 # SKIP $ELT_PYTHON_SKIP"
	exit 0
fi
exec "$ELT_PYTHON" "$@"
