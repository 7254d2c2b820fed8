#!/bin/sh
# 1: the library exports exactly the public API: every elt_ symbol the
# headers promise, nothing else (no internal helper leaks into the ABI).
# 2: a module that asks for its function storage through the header's
# inline getter imports elt_get_function_storage_slow, which libraries
# older than plugin ABI 1.4 lack: such a library refuses to load it
# rather than let it read past its shorter elt_info_head
# (doc/plugins.md#abi-versioning).
: "${top_builddir:=.}" "${top_srcdir:=.}"
lib="$top_builddir/.libs/libasyncelt.so"
echo "1..2"
nm=${NM:-nm}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A Windows DLL (libasyncelt-0.dll): its export table, read by objdump.
dll=$(ls "$top_builddir"/.libs/libasyncelt*.dll 2>/dev/null | head -n 1)
objdump=${OBJDUMP:-objdump}
if [ -n "$dll" ] && command -v ${objdump%% *} >/dev/null; then
	$objdump -p "$dll" | sed -n '/^\[Ordinal\/Name Pointer\] Table/,/^$/p' |
		sed -n 's/^[[:space:]]*\[ *[0-9]*\] //p' | sort -u >"$tmp/got"
	lib=$dll
elif [ ! -f "$lib" ] || ! command -v ${nm%% *} >/dev/null; then
	echo "ok 1 # SKIP no shared library, or no nm or objdump for it, in this build"
	lib=
else
	$nm -D --defined-only "$lib" | awk '$2 ~ /^[TDRB]$/ { print $3 }' | sed 's/@.*//' |
		sort -u >"$tmp/got"
fi
# A build without helpers (ELT_ABI none) has no elt_helper_* to export;
# only the ABIs that return values on the x87 stack have its Leave.
grep -v '^#' "$top_srcdir/tests/expected-symbols.txt" |
	case "${ELT_ABI:-}" in
	none) grep -v '^elt_helper_' ;;
	x86_64-sysv|i386) cat ;;
	*) grep -v '^elt_helper_leave_x87$' ;;
	esac |
	sort -u >"$tmp/want"
if [ -z "$lib" ]; then
	:
elif cmp -s "$tmp/want" "$tmp/got"; then
	echo "ok 1 - $(wc -l <"$tmp/got") exported symbols match tests/expected-symbols.txt"
else
	echo "not ok 1 - exported symbols match tests/expected-symbols.txt"
	diff "$tmp/want" "$tmp/got" | sed 's/^/# /'
fi

module=$(ls "$top_builddir"/plugins/counting/.libs/asyncelt-counting.so \
	    "$top_builddir"/plugins/counting/.libs/asyncelt-counting*.dll 2>/dev/null | head -n 1)
case $module in *.dll) tool=$objdump ;; *) tool=$nm ;; esac
if [ -z "$module" ]; then
	echo "ok 2 # SKIP no counting module in this build"
elif ! command -v ${tool%% *} >/dev/null; then
	echo "ok 2 # SKIP no ${tool%% *} to read $module"
else
	case $module in
	*.dll) $objdump -p "$module" | awk '{ print $NF }' >"$tmp/imports" ;;
	*) $nm -u "$module" | awk '{ print $NF }' | sed 's/@.*//' >"$tmp/imports" ;;
	esac
	if grep -qx elt_get_function_storage_slow "$tmp/imports" &&
	   ! grep -qx elt_get_function_storage "$tmp/imports"; then
		echo "ok 2 - the counting module needs elt_get_function_storage_slow, not the old getter"
	else
		echo "not ok 2 - the counting module needs elt_get_function_storage_slow," \
		     "not the old getter"
		grep '^elt_' "$tmp/imports" | sed 's/^/# imports: /'
	fi
fi
