#!/bin/sh
# SPDX-License-Identifier: MIT
# The public header compiles alone as C99 -pedantic -Werror and as C++, and
# next to gdrcopy's names without a clash.
set -u
src=$1
cc=${CC:-cc}
cxx=${CXX:-c++}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

run() {
	what=$1
	shift
	if "$@" > "$tmp/log" 2>&1; then
		echo "ok   $what"
		pass=$((pass + 1))
	else
		echo "FAIL $what"
		sed 's/^/     /' "$tmp/log"
		fail=$((fail + 1))
	fi
}

printf '#include <gpudirect.h>\n' > "$tmp/alone.c"
printf '#include <gpudirect.h>\nint main() { return gdr_path_str(GDR_PATH_HOST)[0] != %sh%s; }\n' "'" "'" > "$tmp/alone.cc"

run "C99 -pedantic -Werror, header alone" \
	$cc -std=c99 -pedantic -Wall -Wextra -Werror -I"$src/include" \
	-c "$tmp/alone.c" -o "$tmp/alone.o"
run "C11 -pedantic -Werror, header alone" \
	$cc -std=c11 -pedantic -Wall -Wextra -Werror -I"$src/include" \
	-c "$tmp/alone.c" -o "$tmp/alone11.o"
if command -v "$cxx" > /dev/null 2>&1; then
	run "C++ -pedantic -Werror" \
		$cxx -std=c++11 -pedantic -Wall -Wextra -Werror \
		-I"$src/include" -c "$tmp/alone.cc" -o "$tmp/alone_cc.o"
else
	echo "FAIL C++: no C++ compiler ($cxx); install g++"
	fail=$((fail + 1))
fi
run "no clash with gdrcopy's gdrapi.h names" \
	$cc -std=c99 -pedantic -Wall -Werror -I"$src/include" \
	-c "$src/tests/abi/gdrcopy-clash.c" -o "$tmp/clash.o"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
