#!/bin/sh
# Generates ./configure.  Installs the autotools first when they are missing
# (as root, with apt-get), or says exactly what to install.
set -e
cd "$(dirname "$0")"
need=""
for tool in cc:gcc make:make autoreconf:autoconf automake:automake libtoolize:libtool pkg-config:pkg-config \
	python3:python3; do
	command -v "${tool%%:*}" >/dev/null 2>&1 || need="$need ${tool#*:}"
done
if [ -n "$need" ]; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "autogen.sh: installing$need" >&2
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need >/dev/null
	else
		echo "autogen.sh: missing$need; install them with:" >&2
		echo "    sudo apt-get install -y$need" >&2
		exit 1
	fi
fi
mkdir -p m4 build-aux
autoreconf -fi
