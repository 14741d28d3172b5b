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
# The examples are written against the public API alone: they build from
# the installed header and .pc, with no include path into the tree but
# common/ (devmem and unixsock, which they share with the tools).
for ex in register-one.c gdr-share.c; do
	# shellcheck disable=SC2086
	$cc -std=gnu11 -Wall -Werror -D_GNU_SOURCE -I"$src/common" "$src/examples/$ex" \
		"$src/common/devmem.c" "$src/common/unixsock.c" -o "$tmp/ex" $flags -ldl || {
		echo "FAIL: examples/$ex does not build against the installed library"
		echo "0 passed, 1 failed"
		exit 1
	}
done
if pkg-config --exists librdmacm; then
	# shellcheck disable=SC2086
	$cc -std=gnu11 -Wall -Werror -D_GNU_SOURCE -I"$src/common" \
		"$src/examples/gdr-write-bw.c" "$src/common/devmem.c" "$src/common/unixsock.c" -o "$tmp/ex" $flags \
		$(pkg-config --cflags --libs librdmacm) -ldl || {
		echo "FAIL: examples/gdr-write-bw.c does not build against the installed library"
		echo "0 passed, 1 failed"
		exit 1
	}
fi
echo "examples: built against the installed header and libgpudirect.pc"
# And they include nothing of the library's insides.
if grep -nE '#include +"(internal|gpudirect-private|cuda-abi|private/)' \
	"$src"/examples/*.c "$src"/examples/*.h; then
	echo "FAIL: an example includes a private header (above)"
	echo "0 passed, 1 failed"
	exit 1
fi
for page in gdr_register.3 gdr_register_ex.3 gdr_deregister.3 \
	gdr_last_error.3 gdr_report_create.3; do
	find "$tmp/root" -name "$page" | grep -q . || {
		echo "FAIL: man page $page was not installed"
		echo "0 passed, 1 failed"
		exit 1
	}
done
echo "1 passed, 0 failed"
