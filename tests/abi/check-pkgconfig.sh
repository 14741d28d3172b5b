#!/bin/sh
# SPDX-License-Identifier: MIT
# Install into a staging directory, then build and run a consumer that knows
# the library only through the generated libgpudirect.pc.
set -eu
build=$1
src=$2
cc=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

meson install -C "$build" --no-rebuild --destdir "$tmp/root" > "$tmp/install.log" 2>&1 || {
	cat "$tmp/install.log"
	echo "0 passed, 1 failed"
	exit 1
}
pc=$(find "$tmp/root" -name libgpudirect.pc | head -n 1)
if [ -z "$pc" ]; then
	echo "FAIL: libgpudirect.pc was not installed"
	echo "0 passed, 1 failed"
	exit 1
fi
libdir=$(dirname "$(find "$tmp/root" -name 'libgpudirect.so.*' | head -n 1)")
export PKG_CONFIG_PATH=$(dirname "$pc")
export PKG_CONFIG_SYSROOT_DIR="$tmp/root"
flags=$(pkg-config --cflags --libs libgpudirect)
echo "pkg-config: $flags"
# shellcheck disable=SC2086
$cc -std=c99 -Wall -Werror "$src/tests/abi/consumer.c" -o "$tmp/consumer" $flags
LD_LIBRARY_PATH=$libdir "$tmp/consumer"
# The consumer must have used the staged library, not another one.
LD_LIBRARY_PATH=$libdir ldd "$tmp/consumer" | grep -q "$libdir/libgpudirect.so" || {
	echo "FAIL: the consumer did not load the staged library"
	echo "0 passed, 1 failed"
	exit 1
}
for page in gdr_register.3 gdr_register_ex.3 gdr_deregister.3 \
	gdr_last_error.3 gdr_report_create.3; do
	find "$tmp/root" -name "$page" | grep -q . || {
		echo "FAIL: man page $page was not installed"
		echo "0 passed, 1 failed"
		exit 1
	}
done
echo "1 passed, 0 failed"
