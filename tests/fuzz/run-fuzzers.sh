#!/usr/bin/env bash
# Builds the fuzz harnesses (tests/fuzz/fuzz-NAME.c) with clang, libFuzzer,
# ASan and UBSan, and runs each for a bounded time from its committed seeds
# (tests/fuzz/corpus/NAME/) and, if there is one, its dictionary
# (tests/fuzz/NAME.dict).  Exits 1 when a harness crashed, with the input
# that did it saved under $FUZZ_DIR/crashes/: fix the bug, then commit the
# input in tests/fuzz/corpus/NAME/, where `make check` replays it.
#
#   tests/fuzz/run-fuzzers.sh [SECONDS [tests/fuzz/fuzz-NAME.c ...]]
#                         default: 60 s each, every tests/fuzz/fuzz-*.c
#   FUZZ_DIR=dir          the build and the grown corpora (default: _fuzz in
#                         the source); reused by the next run
#   FUZZ_SOURCES='a.c b.c'  sources every harness links besides the library
#   CLANG=clang-14        the compiler (default: clang)
#
# The library is configured out of tree with clang; a source tree that is
# configured in-tree refuses that, so its tracked files are copied first
# (as tests/cross/run-matrix.sh does).
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
work=${FUZZ_DIR:-$here/_fuzz}
clang=${CLANG:-clang}
seconds=${1:-60}
[ $# -gt 0 ] && shift
harnesses=("$@")
if [ ${#harnesses[@]} -eq 0 ]; then
	harnesses=($(cd "$here" && ls tests/fuzz/fuzz-*.c))
fi
case $seconds in
	''|*[!0-9]*) echo "run-fuzzers.sh: SECONDS must be a whole number, not \"$seconds\"" >&2; exit 2 ;;
esac
command -v "$clang" >/dev/null ||
	{ echo "run-fuzzers.sh: no $clang (apt-get install clang)" >&2; exit 2; }

# Coverage for libFuzzer everywhere in the library; the harnesses add the
# fuzzer's main.  Any UBSan report stops the run, as a crash does.
sanitizers=address,undefined
cflags="-O1 -g -fno-omit-frame-pointer -fno-sanitize-recover=undefined"

mkdir -p "$work" || exit 2
if [ -f "$here/config.status" ]; then
	src=$work/src
	rm -rf "$src" && mkdir -p "$src"
	(cd "$here" && git ls-files -z | tar --null -T - -cf -) | tar -xf - -C "$src" ||
		{ echo "run-fuzzers.sh: cannot copy the tracked files of $here" >&2; exit 2; }
else
	src=$here
fi
build=$work/build
echo "=== the library, with clang and -fsanitize=fuzzer-no-link,$sanitizers ($build)"
if [ ! -x "$src/configure" ]; then
	(cd "$src" && ./autogen.sh >"$work/autogen.log" 2>&1) ||
		{ echo "autogen failed: see $work/autogen.log" >&2; exit 2; }
fi
mkdir -p "$build"
if [ ! -f "$build/config.status" ] || [ "$src/configure" -nt "$build/config.status" ]; then
	(cd "$build" && "$src/configure" CC="$clang" --disable-shared \
		CFLAGS="$cflags -fsanitize=fuzzer-no-link,$sanitizers" >configure.log 2>&1) ||
		{ echo "configure failed: see $build/configure.log and config.log" >&2; exit 2; }
fi
make -C "$build" -j2 libasyncelt.la >"$build/make.log" 2>&1 ||
	{ tail -n 30 "$build/make.log"; echo "build failed: see $build/make.log" >&2; exit 2; }
libs="$(sed -n 's/^LIBS = //p' "$build/Makefile") -lm"

extra=()
for f in ${FUZZ_SOURCES:-}; do
	extra+=("$src/$f")
done

status=0
mkdir -p "$work/bin" "$work/corpus" "$work/crashes" "$work/logs"
for harness in "${harnesses[@]}"; do
	name=$(basename "$harness" .c)
	name=${name#fuzz-}
	seeds=$src/tests/fuzz/corpus/$name
	exe=$work/bin/fuzz-$name
	log=$work/logs/$name.log
	if [ ! -d "$seeds" ] || [ -z "$(ls -A "$seeds")" ]; then
		echo "$name: no seeds in $seeds" >&2
		status=1
		continue
	fi
	"$clang" $cflags -fsanitize=fuzzer,$sanitizers -DELT_LIBFUZZER \
		-I"$src/include" -I"$src/lib" -I"$src/tests" -I"$build" \
		-o "$exe" "$src/$harness" "${extra[@]}" "$build/.libs/libasyncelt.a" $libs ||
		{ echo "$name: the harness does not build" >&2; status=1; continue; }
	# New inputs go to the first directory (the grown corpus); the seeds
	# are only read.
	mkdir -p "$work/corpus/$name"
	# tests/fuzz/NAME.dict: the tokens of the language, when it has one
	dict=()
	[ -f "$src/tests/fuzz/$name.dict" ] && dict=(-dict="$src/tests/fuzz/$name.dict")
	echo "=== $name: ${seconds} s from $(ls "$seeds" | wc -l) seeds"
	if "$exe" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$work/crashes/$name-" "${dict[@]}" \
		"$work/corpus/$name" "$seeds" >"$log" 2>&1; then
		# The last status line: executions, coverage, corpus size.
		grep -E '^#[0-9]+' "$log" | tail -n 1
		grep -E '^stat::(number_of_executed_units|peak_rss_mb)' "$log" | tr '\n' ' '
		echo
	else
		status=1
		grep -E -A 30 '^==[0-9]+==ERROR|check failed|runtime error|^SUMMARY' "$log" | head -n 60
		echo "$name: FAILED; the input is $(ls -t "$work"/crashes/"$name"-* 2>/dev/null | head -n 1)"
		echo "  the whole log: $log"
		echo "  replay it: $exe FILE; once fixed, commit it in tests/fuzz/corpus/$name/"
	fi
done
exit $status
