#!/bin/sh
# SPDX-License-Identifier: MIT
# libgpudirect as others take it in:
#  - a meson project with libgpudirect as a subproject: it builds the
#    library only, and its meson test lists none of libgpudirect's suites;
#  - a CMake project finding the installed library with pkg_check_modules.
#   check-consumers.sh SOURCE_ROOT BUILD_DIR
set -u
src=$1
build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; [ -f "$tmp/log" ] && sed 's/^/     /' "$tmp/log" | tail -n 30; fail=$((fail + 1)); }

# --- meson subproject -----------------------------------------------------
p=$tmp/sub
mkdir -p "$p/subprojects"
ln -s "$src" "$p/subprojects/libgpudirect"
cp "$src/tests/abi/consumer.c" "$p/"
cat > "$p/meson.build" <<'MESON'
project('consumer', 'c')
gpudirect = dependency('libgpudirect', fallback: ['libgpudirect'])
test('consumer', executable('consumer', 'consumer.c', dependencies: gpudirect))
MESON
if meson setup "$p/b" "$p" > "$tmp/log" 2>&1 && ninja -C "$p/b" >> "$tmp/log" 2>&1; then
	ok "subproject: builds"
	meson test -C "$p/b" --list 2>> "$tmp/log" | grep -v '^ninja' > "$tmp/list"
	# "consumer", or "consumer:consumer" (project:name) in newer meson
	if [ "$(sed 's/^consumer://' "$tmp/list")" = "consumer" ]; then
		ok "subproject: meson test lists only the consumer's test"
	else
		cat "$tmp/list" > "$tmp/log"
		bad "subproject: meson test lists libgpudirect's suites"
	fi
	if [ -e "$p/b/subprojects/libgpudirect/tests/unit/test-decide" ] ||
		[ -e "$p/b/subprojects/libgpudirect/examples/gdr-register-one" ]; then
		: > "$tmp/log"
		bad "subproject: libgpudirect's tests or examples were built"
	else
		ok "subproject: no tests, examples or tools of libgpudirect built"
	fi
	if meson test -C "$p/b" > "$tmp/log" 2>&1; then
		ok "subproject: the consumer runs"
	else
		bad "subproject: the consumer fails"
	fi
else
	bad "subproject: does not build"
fi

# --- CMake with pkg_check_modules -----------------------------------------
if ! command -v cmake > /dev/null 2>&1; then
	echo "skip CMake consumer: cmake is not installed (apt-get install cmake)"
else
	rm -f "$tmp/log"
	meson install -C "$build" --no-rebuild --destdir "$tmp/root" > "$tmp/log" 2>&1 ||
		bad "install into a staging root"
	pc=$(find "$tmp/root" -name libgpudirect.pc | head -n 1)
	# The staged install as if installed with its prefix there.
	mkdir -p "$tmp/pc"
	[ -n "$pc" ] && sed "s|^prefix=|prefix=$tmp/root|" "$pc" > "$tmp/pc/libgpudirect.pc"
	c=$tmp/cmake
	mkdir -p "$c"
	cp "$src/tests/abi/consumer.c" "$c/"
	cat > "$c/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.13)
project(consumer C)
find_package(PkgConfig REQUIRED)
pkg_check_modules(GPUDIRECT REQUIRED IMPORTED_TARGET libgpudirect)
add_executable(consumer consumer.c)
target_link_libraries(consumer PkgConfig::GPUDIRECT)
CMAKE
	if [ -n "$pc" ] && PKG_CONFIG_PATH=$tmp/pc \
		cmake -G Ninja -S "$c" -B "$c/b" > "$tmp/log" 2>&1 &&
		cmake --build "$c/b" >> "$tmp/log" 2>&1 &&
		LD_LIBRARY_PATH=$(dirname "$(find "$tmp/root" -name 'libgpudirect.so.*' | head -n 1)") \
			"$c/b/consumer" >> "$tmp/log" 2>&1; then
		ok "CMake: pkg_check_modules(libgpudirect) builds and runs a consumer"
	else
		bad "CMake consumer"
	fi
fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
