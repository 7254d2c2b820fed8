#!/bin/sh
# Instructions per unit of each bench-helpers variant, under callgrind:
# the loop (run() and what it calls) counted for 1000 and for 3000 units,
# the difference divided by 2000 (and by the threads, for the rows that
# run two), so that set-up drops out.
# Timing-independent: valgrind has no AVX-512 (the AVX bodies run), and it
# cannot see stalls such as the AVX/SSE transition (doc/performance.md).
#
#   count-instructions.sh BENCH_HELPERS [VARIANT]
set -eu
bench=${1:?usage: count-instructions.sh BENCH_HELPERS [VARIANT]}
only=${2:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# count UNITS: one callgrind file per child, named by its pid
count() {
	mkdir -p "$work/$1"
	BENCH_UNITS=$1 ASYNCELT_X86_VECTOR_WIDTH=32 valgrind --tool=callgrind \
		--toggle-collect=run --callgrind-out-file="$work/$1/%p" \
		"$bench" 1 "$only" >"$work/$1.table" 2>/dev/null
}
count 1000
count 3000
# The children run the variants in the table's order, so do their pids;
# the first file is the parent's, which runs no unit.
for units in 1000 3000; do
	for f in $(ls "$work/$units" | sort -n | sed 1d); do
		sed -n 's/^summary: //p' "$work/$units/$f"
	done >"$work/$units.ir"
done
grep '^| ' "$work/1000.table" | sed 1d | cut -d'|' -f2 | sed 's/ *$//' |
	paste -d'|' - "$work/1000.ir" "$work/3000.ir" |
	awk -F'|' '{ threads = $1 ~ /2 threads/ ? 2 : 1     # units are per thread
		     printf "%-44s %8.1f\n", $1, ($3 - $2) / 2000 / threads }'
