#!/bin/sh
# The segment path, lib/dispatch.c (the invocation fast path inlined into
# it), calls nothing outside the library but the toolchain's own runtime:
# no memcpy, no allocation, no lock, no stdio, no system call
# (doc/performance.md#what-the-hot-path-does-not-do).  The source can say
# so and the compiler still add a call: gcc made an 8-byte memcpy a call
# to memcpy on arm-soft until dc35a0e.  Read from the object's undefined
# symbols, on every ABI.
: "${top_builddir:=.}"
echo "1..1"
nm=${NM:-nm}
obj=
for o in "$top_builddir"/lib/.libs/libasyncelt_la-dispatch.o \
	 "$top_builddir"/lib/libasyncelt_la-dispatch.o; do
	if [ -f "$o" ]; then
		obj=$o
		break
	fi
done
if [ -z "$obj" ]; then
	echo "not ok 1 - no lib/libasyncelt_la-dispatch.o in $top_builddir"
	exit 0
fi
if ! command -v ${nm%% *} >/dev/null; then
	echo "ok 1 # SKIP no nm ($nm) to read $obj"
	exit 0
fi
# Allowed: the library's own symbols; errno, which the cold first-segment
# path saves; the GOT and TOC; the compilers' helpers for thread pointers,
# atomics and unwinding (ARM's __aeabi_*, AArch64's outlined atomics,
# __atomic_*/__sync_* where the CPU lacks the width) and MinGW's
# emulated TLS; and what an instrumented build adds (sanitizers,
# coverage, profiling, the stack protector), whose plain build this test
# also checks.
bad=$($nm -u "$obj" | awk '{ print $NF }' |
	grep -Ev '^(elt_|__errno_location$|__imp__errno$|_GLOBAL_OFFSET_TABLE_$|\.TOC\.$|__aeabi_|__aarch64_|__atomic_|__sync_|__emutls_)' |
	grep -Ev '^(__(asan|ubsan|tsan|msan|hwasan|sanitizer|gcov|llvm_gcov|llvm_profile)_|_?mcount$|__fentry__$|__stack_chk_(fail|guard)$)' |
	tr '\n' ' ')
if [ -n "$bad" ]; then
	echo "not ok 1 - the segment path calls outside the library: $bad($obj)"
else
	echo "ok 1 - the segment path calls only the library and the toolchain's runtime"
fi
