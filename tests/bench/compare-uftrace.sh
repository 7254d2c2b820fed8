#!/bin/sh
# make bench-compare: the CPU a recorded call costs under `uftrace record`
# (a leaf loop built with -pg, recorded to disk; per call, from two
# lengths of the loop) next to what an Enter+Leave pair costs with the
# logging plugin's binary recording (bench-helpers), on this machine, in
# one run.
#
#   compare-uftrace.sh BENCH_HELPERS [CC]
#
# Installs uftrace from Debian when run as root and it is missing.
set -eu
bench=${1:?usage: compare-uftrace.sh BENCH_HELPERS [CC]}
cc=${2:-cc}
calls=${CALLS:-2000000}

if ! command -v uftrace >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		apt-get install -y -qq uftrace >/dev/null
	else
		echo "bench-compare: uftrace is not installed (Debian: apt-get install uftrace)" >&2
		exit 1
	fi
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/leaf.c" <<'C'
#include <stdlib.h>
__attribute__((noinline)) void leaf(void) { __asm__ volatile(""); }
int main(int argc, char **argv)
{
	long i, n = atol(argv[1]);

	for (i = 0; i < n; i++)
		leaf();
	return 0;
}
C
"$cc" -O2 -pg -o "$work/leaf" "$work/leaf.c"

# User + system CPU seconds of a command and the children it waited for.
cpu() {
	/usr/bin/time -f '%U %S' -o "$work/time" "$@" >/dev/null 2>&1
	awk '{ print $1 + $2 }' "$work/time"
}

# The median of five runs each: time(1) counts in 10 ms steps, and one
# run can meet a busy disk.
median() {
	sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
plain_cpu() { for i in 1 2 3 4 5; do cpu "$work/leaf" "$1"; done | median; }
traced_cpu() {
	for i in 1 2 3 4 5; do
		rm -rf "$work/data"
		cpu uftrace record -d "$work/data" "$work/leaf" "$1"
	done | median
}
# Per call, the difference between recording 4 x calls and calls: what
# uftrace costs once per run (starting, reading symbols, writing its
# info) drops out, as set-up does from bench-helpers' loops; so does the
# -pg loop's own cost (the plain runs).
long=$((4 * calls))
uftrace_ns=$(awk -v t1="$(traced_cpu "$calls")" -v t4="$(traced_cpu "$long")" \
		 -v p1="$(plain_cpu "$calls")" -v p4="$(plain_cpu "$long")" -v n="$((long - calls))" \
		 'BEGIN { printf "%.1f", ((t4 - t1) - (p4 - p1)) * 1e9 / n }')

table=$(TMPDIR=$work "$bench" 5 "binary logging to a file" | tee "$work/bench")
ours=$(awk -F'|' '$2 ~ /^ binary logging to a file +$/ { gsub(/ /, "", $3); print $3 }' "$work/bench")
grep '^CPU:' "$work/bench"
echo "uftrace $(uftrace --version 2>/dev/null | head -n 1 | awk '{ print $2 }'), $long calls of a -pg leaf less $calls, recorded to disk:"
printf '| %-44s | %10s |\n' "per call (Enter+Leave)" "CPU ns"
printf '|%s|%s|\n' "----------------------------------------------" "------------"
printf '| %-44s | %10s |\n' "uftrace record (recorder included)" "$uftrace_ns"
if [ -n "$ours" ] && [ "$ours" != "n/a" ]; then
	printf '| %-44s | %10s |\n' "asyncelt, logging:format=binary to a file" "$ours"
	awk -v u="$uftrace_ns" -v o="$ours" 'BEGIN { printf "uftrace costs %.1fx what binary logging costs per call\n", u / o }'
else
	echo "binary logging did not run here:"
	echo "$table"
	exit 1
fi
