#!/bin/sh
# The library exports exactly the public API: every elt_ symbol the headers
# promise, nothing else (no internal helper leaks into the ABI).
: "${top_builddir:=.}" "${top_srcdir:=.}"
lib="$top_builddir/.libs/libasyncelt.so"
echo "1..1"
nm=${NM:-nm}
if [ ! -f "$lib" ] || ! command -v ${nm%% *} >/dev/null; then
	echo "ok 1 # SKIP no ELF shared library or no nm in this build"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
$nm -D --defined-only "$lib" | awk '$2 ~ /^[TDRB]$/ { print $3 }' | sed 's/@.*//' |
	sort -u >"$tmp/got"
grep -v '^#' "$top_srcdir/tests/expected-symbols.txt" | sort -u >"$tmp/want"
if cmp -s "$tmp/want" "$tmp/got"; then
	echo "ok 1 - $(wc -l <"$tmp/got") exported symbols match tests/expected-symbols.txt"
else
	echo "not ok 1 - exported symbols match tests/expected-symbols.txt"
	diff "$tmp/want" "$tmp/got" | sed 's/^/# /'
fi
