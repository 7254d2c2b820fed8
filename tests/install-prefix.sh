#!/usr/bin/env bash
# The new user's path: configure, install, configure again in the same
# build tree for another --prefix, install again.  Everything must land in
# the second prefix, whole (the plugin directory compiled into the library,
# the .la files relinked), working once the first one is gone: the
# README's example is built there with the README's own command and run,
# and a program calling elt_init() finds the counting plugin with no
# $ASYNCELT_PLUGIN_PATH.  For CI (.ci/run); needs a host C compiler.
#
#   tests/install-prefix.sh BUILD-DIR
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: tests/install-prefix.sh BUILD-DIR}
mkdir -p "$build"
cd "$build"
first=$PWD/first second=$PWD/second
rm -rf "$first" "$second"

fail() { echo "install-prefix: $*" >&2; exit 1; }

"$src/configure" -q --prefix="$first"
make -j2 install >make-first.log 2>&1 || { tail -20 make-first.log; fail "install to $first"; }
"$src/configure" -q --prefix="$second"
make -j2 install >make-second.log 2>&1 ||
	{ tail -20 make-second.log; fail "install to $second after $first"; }
rm -rf "$first"

for f in include/asyncelt.h include/asyncelt/plugin.h lib/pkgconfig/asyncelt.pc \
	lib/libasyncelt/asyncelt-counting.so; do
	[ -f "$second/$f" ] || fail "not installed: $second/$f"
done

export PKG_CONFIG_PATH="$second/lib/pkgconfig"
flags="$(pkg-config --cflags --libs asyncelt) -Wl,-rpath,$(pkg-config --variable=libdir asyncelt)"
sed -n '/^<!-- complete, prints: Work returned 30 -->$/,/^```$/p' "$src/README.md" |
	sed '1,2d;$d' >printer.c
[ -s printer.c ] || fail "no README block marked 'prints: Work returned 30'"
cc -o printer printer.c $flags || fail "the README's example does not build with its command"
out=$(./printer) || fail "the README's example exits $?"
[ "$out" = "Work returned 30" ] || fail "the README's example prints '$out'"

printf '#include <asyncelt.h>\nint main(void) { return elt_init() != ELT_OK; }\n' >init.c
cc -o init init.c $flags || fail "a program calling elt_init does not build"
env -u ASYNCELT_PLUGIN_PATH ASYNCELT_PLUGINS=counting ./init 2>init.err ||
	{ cat init.err >&2; fail "the counting plugin is not found in $second"; }
echo "install-prefix: $first then $second: installed whole, example and plugins work"
