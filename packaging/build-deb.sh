#!/bin/sh
# SPDX-License-Identifier: MIT
# Build the Debian packages libgpudirect1, libgpudirect-dev and
# gpudirect-tools from this tree (its committed and uncommitted files) with
# dpkg-buildpackage, and check them with lintian (no errors allowed).
#   build-deb.sh [OUTDIR]     (default build-deb; the .deb files land there)
# As root with apt-get it installs what is missing; otherwise it names it.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
out=${1:-$top/build-deb}
case "$out" in /*) ;; *) out=$top/$out ;; esac
version=$(sed -n "s/^\s*version: '\([0-9.]*\)',.*/\1/p" "$top/meson.build" | head -n 1)

missing=""
for p in dpkg-buildpackage:dpkg-dev dh:debhelper lintian:lintian meson:meson \
	ninja:ninja-build pkg-config:pkg-config python3:python3 fakeroot:fakeroot; do
	command -v "${p%%:*}" > /dev/null 2>&1 || missing="$missing ${p#*:}"
done
pkg-config --exists libibverbs 2> /dev/null || missing="$missing libibverbs-dev"
pkg-config --exists librdmacm 2> /dev/null || missing="$missing librdmacm-dev"
if [ -n "$missing" ]; then
	if [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
		echo "build-deb: installing$missing"
		apt-get update -qq > /dev/null
		# shellcheck disable=SC2086
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends $missing > /dev/null
	else
		echo "build-deb: missing:$missing (apt-get install$missing)"
		exit 3
	fi
fi

rm -rf "$out"
src=$out/libgpudirect-$version
mkdir -p "$src"
# The tree as it is now: tracked files plus new ones not ignored.
(cd "$top" && git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$src" 2> /dev/null) ||
	(cd "$top" && tar --exclude='./build*' --exclude=./.git -cf - . | tar -xf - -C "$src")
cp -r "$here/debian" "$src/debian"
echo "build-deb: dpkg-buildpackage in $src"
if ! (cd "$src" && dpkg-buildpackage -us -uc -b > "$out/build.log" 2>&1); then
	tail -n 40 "$out/build.log"
	echo "build-deb: dpkg-buildpackage failed ($out/build.log)"
	exit 1
fi
ls "$out"/*.deb
# lintian: errors fail the build; warnings are shown.
if ! lintian --fail-on error --tag-display-limit 0 "$out"/*.changes > "$out/lintian.log" 2>&1; then
	cat "$out/lintian.log"
	echo "build-deb: lintian reports errors"
	exit 1
fi
grep -c '^W:' "$out/lintian.log" > /dev/null && sed -n '/^W:/p' "$out/lintian.log" | head -n 20
echo "build-deb: $(ls "$out"/*.deb | wc -l) packages, lintian: $(grep -c '^E:' "$out/lintian.log" || true) errors, $(grep -c '^W:' "$out/lintian.log" || true) warnings"
