#!/usr/bin/env bash
# Builds libasyncelt for each ABI and runs its whole `make check` there:
# natively for x86-64 SysV, under qemu-user for the Linux cross targets,
# under wine for Win64.  Prints one table row per ABI and exits 1 if any
# ABI failed.  The decoding corpus's counts (tests/test-corpus.c) are the
# last columns: signatures, arguments and return values checked, and the
# signatures that some getter said it cannot decode on that ABI.  Installs missing cross toolchains when run as root.
#
#   tests/cross/run-matrix.sh [ABI ...]      default: every ABI of arch/ports.list
#   tests/cross/run-matrix.sh --instructions [ABI ...]
#                     instead of the tests, the benchmark's instructions per
#                     Enter+Leave pair on each ABI (tests/bench/count-instructions.sh:
#                     callgrind natively, qemu-user's log elsewhere), one row each
#   MATRIX_DIR=dir    where the builds go (default: _matrix in the source)
#   CORPUS_SEED=n CORPUS_COUNT=n   the decoding corpus to build (Makefile.am's
#                     defaults otherwise), to rerun another seed on an ABI
#
# The sources are the working tree's tracked files, copied, so an in-tree
# configure does not get in the way.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
work=${MATRIX_DIR:-$here/_matrix}

# abi  triplet  wrapper  packages: from the one list of ports (its header
# says what each column means); "-" in the abi column: not a matrix ABI.
abis=$(awk '!/^#/ && NF && $1 != "-" { print $1, $5, $6, $7 }' "$here/arch/ports.list")
[ -n "$abis" ] || { echo "no ABI in $here/arch/ports.list" >&2; exit 2; }

# Make variables, not the environment: Makefile.am sets the defaults.
corpus_vars=()
[ -n "${CORPUS_SEED:-}" ] && corpus_vars+=("CORPUS_SEED=$CORPUS_SEED")
[ -n "${CORPUS_COUNT:-}" ] && corpus_vars+=("CORPUS_COUNT=$CORPUS_COUNT")

instructions=
if [ "${1:-}" = --instructions ]; then
	instructions=1
	shift
fi
wanted=("$@")
[ ${#wanted[@]} -gt 0 ] || wanted=($(echo "$abis" | awk 'NF { print $1 }'))

rm -rf "$work/src"
mkdir -p "$work/src"
(cd "$here" && git ls-files -z | tar --null -T - -cf -) | tar -xf - -C "$work/src" || exit 2
(cd "$work/src" && ./autogen.sh >"$work/autogen.log" 2>&1) ||
	{ echo "autogen failed: see $work/autogen.log" >&2; exit 2; }

install_missing() {
	local pkgs=() p
	for p in ${1//,/ }; do
		dpkg -s "$p" >/dev/null 2>&1 || pkgs+=("$p")
	done
	[ ${#pkgs[@]} -eq 0 ] && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "missing packages: ${pkgs[*]} (run as root, or apt-get install them)" >&2
		return 1
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${pkgs[@]}" >/dev/null 2>&1 ||
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${pkgs[@]}" >/dev/null; }
}

count() {       # count KIND LOG
	local n
	n=$(sed -n "s/^# $1: *//p" "$2" 2>/dev/null | head -n 1)
	echo "${n:-0}"
}

# --instructions: the benchmark rows counted, and their column titles.
count_variants=("bare call" "helpers, idle" "caller tests the armed byte"
	"one empty plugin" "empty plugin + invocations" "counting" "timing"
	"binary logging" "producer API")
count_titles=(bare idle "idle, guarded" "one empty plugin" "+ invocations"
	counting timing "binary logging" "producer API")

# count_row ABI TRIPLET RUNNER BUILD: one row of instructions per pair.
count_row() {
	local qemu="" out="$4/instructions.log" row="" v n
	case $3 in
	-) ;;
	# qemu, for the instructions of code the host would run natively too
	ld.so:*) qemu="qemu-${2%%-*} -L /usr/$2 -E LD_LIBRARY_PATH=/usr/$2/lib" ;;
	*) qemu="${3%%:*} -L ${3#*:} -E LD_LIBRARY_PATH=${3#*:}/lib" ;;
	esac
	case $qemu in qemu-i?86*) qemu="qemu-i386${qemu#qemu-i?86}" ;; esac
	if [ -n "$qemu" ] && ! command -v "${qemu%% *}" >/dev/null && ! install_missing qemu-user; then
		rows+=("$(printf '| %-13s | %s is missing' "$1" "${qemu%% *}")")
		failed_abis=$((failed_abis + 1))
		return
	fi
	if ! (cd "$4" && make -j2 tests/bench/bench-helpers >bench-build.log 2>&1 &&
	      ASYNCELT_PLUGIN_PATH="$4/plugins/counting/.libs:$4/plugins/logging/.libs:$4/plugins/timing/.libs" \
	      BENCH_QEMU="$qemu" sh "$work/src/tests/bench/count-instructions.sh" \
		./tests/bench/bench-helpers >"$out" 2>&1); then
		rows+=("$(printf '| %-13s | counting failed: %s' "$1" "$out")")
		failed_abis=$((failed_abis + 1))
		return
	fi
	for v in "${count_variants[@]}"; do
		n=$(grep -F "$v" "$out" | grep -v "2 threads" | head -n 1 | awk '{ print $NF }')
		if [ -n "$n" ]; then
			row="$row $(printf '%5.0f' "$n") |"
		else
			row="$row   n/a |"
		fi
	done
	rows+=("$(printf '| %-13s |%s' "$1" "$row")")
}

# For an ABI the host should run natively but cannot (a sandbox whose
# kernel refuses 32-bit code): qemu-user, and the row says so.  The tests
# that take signals with threads running take them only on the thread
# created last, which qemu-i386's shared %gs descriptor spares
# (doc/testing.md).
use_qemu() {
	local qemu=qemu-${1%%-*}

	case $qemu in qemu-i?86) qemu=qemu-i386 ;; esac
	install_missing qemu-user || return 1
	note="under $qemu: this host cannot run $abi code natively"
	wrap="timeout -k 10 900 $qemu -L /usr/$1 -E LD_LIBRARY_PATH=/usr/$1/lib"
}

rows=() failed_abis=0
for abi in "${wanted[@]}"; do
	line=$(echo "$abis" | awk -v a="$abi" '$1 == a')
	if [ -z "$line" ]; then
		echo "unknown ABI: $abi" >&2
		exit 2
	fi
	read -r _ triplet wrapper pkgs <<<"$line"
	build="$work/$abi"
	rm -rf "$build"
	mkdir -p "$build"
	host_args=() wrap="" loader="" note=""
	if [ "$triplet" != - ]; then
		host_args=(--host="$triplet")
		case $wrapper in
		# wine, started again if wine itself cannot start
		wine) wrap="sh $work/src/tests/cross/wine-retry.sh" ;;
		# On the real CPU (i386 on an x86-64 kernel), with the cross
		# sysroot's glibc.  Not qemu-i386: on sigreturn it reloads %gs
		# from a descriptor table all guest threads share, so after a
		# signal the main thread runs on another thread's TLS
		# (doc/testing.md, "The matrix").
		# A host that cannot run it falls back to qemu-i386 (below).
		ld.so:*)
			loader=${wrapper#ld.so:}
			wrap="$loader --library-path ${loader%/*}" ;;
		# The target's libraries first: a cross ld.so that reads the
		# host's ld.so.cache may load a multilib glibc of another build.
		*) wrap="${wrapper%%:*} -L ${wrapper#*:} -E LD_LIBRARY_PATH=${wrapper#*:}/lib" ;;
		esac
		# A test that hangs under emulation fails after 15 minutes
		# instead of holding the whole matrix (and CI) forever.
		wrap="timeout -k 10 900 $wrap"
	fi
	echo "=== $abi" >&2
	if [ -n "$instructions" ] && [ "$wrapper" = wine ]; then
		rows+=("$(printf '| %-13s | no benchmark on Windows (it forks)' "$abi")")
		continue
	fi
	status=ok
	if [ "$pkgs" != - ] && ! install_missing "$pkgs"; then
		status=FAIL note="toolchain missing"
	elif [ -n "$loader" ] && ! "$loader" --version >/dev/null 2>&1 && ! use_qemu "$triplet"; then
		status=FAIL note="this host cannot run $abi code natively ($loader --version fails), and qemu-user is missing"
	elif ! (cd "$build" && "$work/src/configure" "${host_args[@]}" --enable-werror \
			ELT_TEST_WRAPPER="$wrap" >configure.log 2>&1); then
		status=FAIL note="configure failed: $build/configure.log"
	elif ! (cd "$build" && make -j2 "${corpus_vars[@]}" >build.log 2>&1); then
		status=FAIL note="build failed: $build/build.log"
	elif [ -n "$instructions" ]; then
		count_row "$abi" "$triplet" "$wrapper" "$build"
		continue
	elif ! (cd "$build" && make -j2 "${corpus_vars[@]}" check >check.log 2>&1); then
		status=FAIL note="tests failed: $build/test-suite.log"
	fi
	if [ -n "$instructions" ]; then
		rows+=("$(printf '| %-13s | %s' "$abi" "$note")")
		failed_abis=$((failed_abis + 1))
		continue
	fi
	log="$build/test-suite.log"
	pass=$(count PASS "$log") fail=$(( $(count FAIL "$log") + $(count ERROR "$log") ))
	skip=$(count SKIP "$log")
	# "# corpus: ABI: S signatures, A arguments and R return values checked, U unsupported"
	corpus=$(sed -n 's/^# corpus: [^:]*: \([0-9]*\) signatures, \([0-9]*\) arguments and \([0-9]*\) return values checked, \([0-9]*\) unsupported.*/\1 \2 \3 \4/p' \
		"$build/tests/test-corpus.log" 2>/dev/null | head -n 1)
	read -r c_sigs c_args c_rets c_unsup <<<"${corpus:-- - - -}"
	abi_name=$(grep -ho 'ABI: [a-z0-9_-]*' "$build"/tests/test-segments.log 2>/dev/null | head -n 1)
	if [ "$status" = ok ] && [ -z "$abi_name" ]; then
		note="no helpers for this ABI yet: only the portable API is built and tested"
	fi
	[ "$status" = ok ] && [ "$fail" = 0 ] || { status=FAIL; failed_abis=$((failed_abis + 1)); }
	rows+=("$(printf '| %-13s | %6s | %6s | %7s | %-4s | %10s | %9s | %7s | %11s | %s' \
		"$abi" "$pass" "$fail" "$skip" "$status" "$c_sigs" "$c_args" "$c_rets" "$c_unsup" \
		"${note:-${abi_name#ABI: }}")")
done

if [ -n "$instructions" ]; then
	printf '| %-13s |%s\n' ABI "$(printf ' %s |' "${count_titles[@]}")"
	printf '|---------------|%s\n' "$(printf -- '%.0s------|' "${count_titles[@]}")"
	printf '%s\n' "${rows[@]}"
	[ "$failed_abis" = 0 ]
	exit
fi
printf '| %-13s | %6s | %6s | %7s | %-4s | %10s | %9s | %7s | %11s | %s\n' ABI passed failed skipped \
	result signatures arguments returns unsupported note
printf '|%s|\n' "---------------|--------|--------|---------|------|------------|-----------|---------|-------------|------"
printf '%s\n' "${rows[@]}"
[ "$failed_abis" = 0 ]
