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
	# in $work, where the -pg leaf leaves its gmon.out
	(cd "$work" && /usr/bin/time -f '%U %S' -o "$work/time" "$@") >/dev/null 2>&1
	awk '{ print $1 + $2 }' "$work/time"
}

# Rounds alternate the two recorders, so that a slow stretch of the
# machine (on a shared host it lasts minutes) falls on both alike; each
# round's ratio is taken within the round, and the medians are printed.
median() {
	sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
traced_cpu() {
	rm -rf "$work/data"
	cpu uftrace record -d "$work/data" "$work/leaf" "$1"
}
# Per call, the difference between recording 4 x calls and calls: what
# uftrace costs once per run (starting, reading symbols, writing its
# info) drops out, as set-up does from bench-helpers' loops; so does the
# -pg loop's own cost (the plain runs).  time(1) counts in 10 ms steps:
# 1-2% of the difference.
long=$((4 * calls))
rounds=${ROUNDS:-7}
: >"$work/rounds"
for r in $(seq "$rounds"); do
	u=$(awk -v t1="$(traced_cpu "$calls")" -v t4="$(traced_cpu "$long")" \
		-v p1="$(cpu "$work/leaf" "$calls")" -v p4="$(cpu "$work/leaf" "$long")" \
		-v n="$((long - calls))" 'BEGIN { printf "%.1f", ((t4 - t1) - (p4 - p1)) * 1e9 / n }')
	# time(1) counts in 10 ms steps: too few calls and the difference
	# rounds to nothing, which no ratio can be taken of.
	if awk -v u="$u" 'BEGIN { exit !(u <= 0) }'; then
		echo "bench-compare: uftrace's $((long - calls)) more calls measured ${u} ns each:" \
		     "too few for time(1)'s 10 ms steps (raise CALLS=, now $calls)" >&2
		exit 1
	fi
	TMPDIR=$work "$bench" 1 "binary logging to a file" >"$work/bench"
	o=$(awk -F'|' '$2 ~ /^ binary logging to a file +$/ { gsub(/ /, "", $3); print $3 }' "$work/bench")
	case $o in
	"" | n/a)
		echo "binary logging did not run here:"
		cat "$work/bench"
		exit 1 ;;
	esac
	# About the least an asyncelt recorder costs, measured in the same
	# round: the empty plugin with invocations less the bare call (which
	# uftrace's figure leaves out too), plus two reads of the plugins'
	# clock.  Not a strict bound: inside a segment the clock reads
	# overlap with other work.
	"$bench" 1 "helpers, empty plugin + invocations" >"$work/floor"
	"$bench" 1 "the plugins' clock, read twice" >>"$work/floor"
	row() {
		awk -F'|' -v row="$1" '{ name = $2; gsub(/^ +| +$/, "", name) }
			name == row { gsub(/ /, "", $3); print $3; exit }' "$work/floor"
	}
	inv=$(row "helpers, empty plugin + invocations")
	bare=$(row "bare call")
	clock=$(row "the plugins' clock, read twice")
	for v in "$inv" "$bare" "$clock"; do
		case $v in
		"" | n/a)
			echo "the floor's rows did not run here:"
			cat "$work/floor"
			exit 1 ;;
		esac
	done
	f=$(awk -v i="$inv" -v b="$bare" -v c="$clock" 'BEGIN { printf "%.2f", i - b + c }')
	echo "$u $o $f" >>"$work/rounds"
done
uftrace_ns=$(awk '{ print $1 }' "$work/rounds" | median)
ours=$(awk '{ print $2 }' "$work/rounds" | median)
ratio=$(awk '{ printf "%.2f\n", $1 / $2 }' "$work/rounds" | median)
floor=$(awk '{ print $3 }' "$work/rounds" | median)
best=$(awk '{ printf "%.2f\n", $1 / $3 }' "$work/rounds" | median)
range=$(awk '{ printf "%.2f\n", $1 / $2 }' "$work/rounds" | sort -n | sed -n '1p;$p' | paste -sd- -)

grep '^CPU:' "$work/bench"
echo "uftrace $(uftrace --version 2>/dev/null | head -n 1 | awk '{ print $2 }'), $long calls of a -pg leaf less $calls, recorded to disk;"
echo "medians of $rounds rounds, each recording with uftrace and then with asyncelt:"
printf '| %-44s | %10s |\n' "per call (Enter+Leave)" "CPU ns"
printf '|%s|%s|\n' "----------------------------------------------" "------------"
printf '| %-44s | %10s |\n' "uftrace record (recorder included)" "$uftrace_ns"
printf '| %-44s | %10s |\n' "asyncelt, logging:format=binary to a file" "$ours"
printf '| %-44s | %10s |\n' "floor, about (empty+inv. - bare + 2 clocks)" "$floor"
echo "uftrace costs ${ratio}x what binary logging costs per call (${range}x across rounds),"
echo "and ${best}x the floor of an asyncelt recorder: the empty plugin with invocations,"
echo "less the bare call, plus two clock reads (medians of the rounds' ratios)"
echo "target (doc/performance.md#targets): uftrace at least 3x binary logging;" \
     "within: $(awk -v r="$ratio" 'BEGIN { print (r >= 3 ? "yes" : "no") }')"
