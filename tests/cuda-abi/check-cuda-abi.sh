#!/bin/sh
# SPDX-License-Identifier: MIT
# Compile lib/base/cuda-abi.h's declarations against a CUDA toolkit's cuda.h
# (values, types, signatures at compile time; struct layouts at run time).
#   check-cuda-abi.sh SOURCE_ROOT CC [TOOLKIT_ROOT]
# Skips (77) when no toolkit is found: the library itself needs none.
set -u
src=$1
cc=$2
root=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
inc=""
for d in "$root" "${CUDA_PATH:-}" /usr/local/cuda /usr; do
	[ -n "$d" ] && [ -f "$d/include/cuda.h" ] && { inc=$d/include; break; }
done
if [ -z "$inc" ]; then
	echo "SKIP: no CUDA toolkit cuda.h found (set CUDA_PATH); the check compares lib/base/cuda-abi.h against one"
	exit 77
fi
echo "toolkit: $inc/cuda.h ($(grep -m1 '#define CUDA_VERSION' "$inc/cuda.h"))"
here=$src/tests/cuda-abi
flags="-std=gnu11 -D_GNU_SOURCE -I$src/include"
for d in lib lib/base lib/os lib/node lib/backends lib/register lib/cache lib/doctor; do
	flags="$flags -I$src/$d"
done
if ! $cc $flags -c "$here/ours.c" -o "$tmp/ours.o" ||
	! $cc $flags -isystem "$inc" -c "$here/toolkit.c" -o "$tmp/toolkit.o" ||
	! $cc $flags -c "$here/main.c" -o "$tmp/main.o" ||
	! $cc "$tmp/ours.o" "$tmp/toolkit.o" "$tmp/main.o" -o "$tmp/check"; then
	echo "FAIL: lib/base/cuda-abi.h does not match $inc/cuda.h (see the errors above)"
	echo "0 passed, 1 failed"
	exit 1
fi
exec "$tmp/check"
