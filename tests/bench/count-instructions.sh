#!/bin/sh
# Instructions per unit of each bench-helpers variant: the loop counted
# for 1024 and for 3072 units, the difference divided by 2048 (and by the
# threads, for the rows that run two), so that set-up drops out; whole
# periods of the timing plugin's merges (every 256 samples).
#
#   count-instructions.sh BENCH_HELPERS [VARIANT]
#
# Natively, under callgrind (run() and what it calls).  valgrind has no
# AVX-512, so x86-64 runs its AVX bodies; and it cannot see stalls such as
# the AVX/SSE transition (doc/performance.md).
#
# With $BENCH_QEMU set to a qemu-user command (e.g. "qemu-aarch64 -L
# /usr/aarch64-linux-gnu"), under it instead, for another ABI: qemu logs
# every guest instruction it executes (one instruction a block:
# -singlestep up to qemu 8, -one-insn-per-tb from 8.1; -d exec,nochain) and
# the system calls (strace), and what a child executes between its two
# clock_gettime(CLOCK_THREAD_CPUTIME_ID) calls, the measured loop, is
# counted.  Instruction counts under emulation are the guest's, exact;
# its times mean nothing.
set -eu
bench=${1:?usage: count-instructions.sh BENCH_HELPERS [VARIANT]}
only=${2:-}
work=$(mktemp -d)
reader=
# The log's reader waits on a fifo: gone with the script, however it ends.
trap '[ -z "$reader" ] || kill "$reader" 2>/dev/null || :; rm -rf "$work"' EXIT

# count_callgrind UNITS: the loop's instructions in each measuring child,
# in the children's order (that of the table's rows), one line each.
count_callgrind() {
	mkdir -p "$work/$1"
	BENCH_UNITS=$1 ASYNCELT_X86_VECTOR_WIDTH=32 valgrind --tool=callgrind \
		--toggle-collect=run --callgrind-out-file="$work/$1/%p" \
		"$bench" 1 "$only" >"$work/$1.table" 2>"$work/$1.err" || failed "$1"
	# One file per process, written as it exits: the children one after
	# the other, in the table's order, then the parent, which runs no
	# unit (by time, not by pid: pids wrap).  A variant that could not
	# run (n/a) left one too, with nothing counted: left out, as under
	# qemu.
	table_rows "$work/$1.table" >"$work/$1.all"
	for f in $(ls -tr "$work/$1" | sed '$d'); do
		sed -n 's/^summary: //p' "$work/$1/$f"
	done >"$work/$1.summaries"
	if [ "$(wc -l <"$work/$1.summaries")" -ne "$(wc -l <"$work/$1.all")" ]; then
		echo "count-instructions.sh: $(wc -l <"$work/$1.summaries") processes counted" \
		     "for $(wc -l <"$work/$1.all") rows of the table ($1 units)" >&2
		exit 1
	fi
	paste -d'|' "$work/$1.all" "$work/$1.summaries" | grep -v '| *n/a *|' >"$work/$1.both" || :
	cut -d'|' -f1-6 "$work/$1.both" >"$work/$1.rows"
	cut -d'|' -f7 "$work/$1.both" >"$work/$1.ir"
}

# table_rows FILE: the variants' rows of a bench table, header left out
# (the targets' table after it is not theirs).
table_rows() {
	sed -n '/^| variant /,/^$/{/^| /p}' "$1" | sed 1d
}

failed() {
	echo "count-instructions.sh: the bench failed ($1 units):" >&2
	cat "$work/$1.err" >&2
	exit 1
}

# count_qemu UNITS: the same from qemu's log, read as it is written (it
# is one line per instruction: gigabytes for the slower variants).
# Processes run one at a time (the parent waits for each child), so the
# lines between a process's first and last clock call are its loop's,
# both threads' for the two-thread rows; a variant that cannot run (n/a)
# makes no clock call and no line.
count_qemu() {
	mkfifo "$work/log"
	# The reader sees the end of the log when qemu and its children have
	# all closed it; if qemu fails, the EXIT trap kills the reader.
	awk '/^Trace / { n++; next }
	     /^[0-9]+ clock_gettime[0-9]*\(CLOCK_THREAD_CPUTIME_ID/ {
		if (!($1 in first)) { first[$1] = n; order[++procs] = $1 }
		last[$1] = n
	     }
	     END { for (i = 1; i <= procs; i++) print last[order[i]] - first[order[i]] }' \
		<"$work/log" >"$work/$1.ir" &
	reader=$!
	# shellcheck disable=SC2086  # the command and its options, split
	BENCH_UNITS=$1 $BENCH_QEMU $one_insn -d exec,nochain,strace -D "$work/log" \
		"$bench" 1 "$only" >"$work/$1.table" 2>"$work/$1.err" || failed "$1"
	wait "$reader"
	reader=
	rm -f "$work/log"
	# Rows that ran, in order; an n/a row made no clock call.
	table_rows "$work/$1.table" | grep -v '| *n/a *|' >"$work/$1.rows" || :
}

if [ -n "${BENCH_QEMU:-}" ]; then
	# shellcheck disable=SC2086
	if $BENCH_QEMU -h 2>/dev/null | grep -q -- '-one-insn-per-tb'; then
		one_insn=-one-insn-per-tb
	elif $BENCH_QEMU -h 2>/dev/null | grep -q -- '-singlestep'; then
		one_insn=-singlestep
	else
		echo "count-instructions.sh: \"$BENCH_QEMU -h\" lists neither" \
		     "-one-insn-per-tb nor -singlestep (is it installed?)" >&2
		exit 1
	fi
fi

for units in 1024 3072; do
	if [ -n "${BENCH_QEMU:-}" ]; then
		count_qemu $units
	else
		count_callgrind $units
	fi
done
for units in 1024 3072; do
	if [ "$(wc -l <"$work/$units.ir")" -ne "$(wc -l <"$work/$units.rows")" ]; then
		echo "count-instructions.sh: $(wc -l <"$work/$units.ir") processes counted" \
		     "for $(wc -l <"$work/$units.rows") rows of the table ($units units)" >&2
		exit 1
	fi
done
cut -d'|' -f2 "$work/1024.rows" | sed 's/ *$//' |
	paste -d'|' - "$work/1024.ir" "$work/3072.ir" |
	awk -F'|' '{ threads = $1 ~ /2 threads/ ? 2 : 1     # units are per thread
		     printf "%-44s %8.1f\n", $1, ($3 - $2) / 2048 / threads }'
