#!/bin/sh
# SPDX-License-Identifier: MIT
# Build each libFuzzer target with clang (ASan + UBSan) and run it for a
# bounded time from the checked-in seed corpus. Any crash, leak or UB report
# fails the run.
#   sh tests/fuzz/run-fuzz.sh [SECONDS] [OUTDIR]
set -u
secs=${1:-15}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=${2:-$top/build-fuzz}
mkdir -p "$out"
if ! command -v clang > /dev/null; then
	echo "SKIP: clang is not installed"
	exit 77
fi
pass=0
fail=0
for t in kernel nvidia number cmdline cufile env bdf json tar desc; do
	T=$(echo "$t" | tr a-z A-Z)
	# Each target builds what it fuzzes: the parsers link alone, the node
	# probe with the layers under it, the doctor's readers without the
	# library, the export descriptor's reader and writer alone.
	case $t in
	kernel | nvidia | number | cmdline | bdf)
		src="$top/lib/base/parse.c $top/lib/base/error.c $top/lib/base/json.c" ;;
	env) src="$top/lib/base/*.c $top/lib/os/*.c $top/lib/node/*.c" ;;
	json) src="$top/lib/base/json.c" ;;
	cufile) src="$top/lib/base/json.c $top/lib/base/parse.c $top/lib/base/error.c" ;;
	tar) src="$top/tools/gdr-info/tree.c $top/tools/gdr-info/replace.c $top/lib/base/walk.c" ;;
	desc) src="$top/lib/base/desc.c $top/lib/base/error.c" ;;
	esac
	inc=""
	for d in lib lib/base lib/os lib/node lib/backends lib/register lib/cache lib/doctor; do
		inc="$inc -I$top/$d"
	done
	# shellcheck disable=SC2086
	if ! clang -g -O1 -std=gnu11 -D_GNU_SOURCE -DTARGET_$T=1 \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-Werror=incompatible-pointer-types -Werror=implicit-function-declaration \
		-I"$top/include" $inc -I"$top/tools/gdr-info" \
		"$here/fuzz-parsers.c" $src -o "$out/fuzz-$t" \
		-libverbs -ldl -lpthread 2> "$out/fuzz-$t.build.log"; then
		cat "$out/fuzz-$t.build.log"
		echo "FAIL fuzz-$t: build"
		fail=$((fail + 1))
		continue
	fi
	mkdir -p "$out/corpus-$t"
	if "$out/fuzz-$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$out/crash-$t-" "$out/corpus-$t" "$here/corpus/$t" \
		> "$out/fuzz-$t.log" 2>&1; then
		echo "ok   fuzz-$t: $(grep -E '^#[0-9]+.*(DONE|pulse)' "$out/fuzz-$t.log" | tail -n 1)"
		pass=$((pass + 1))
	else
		tail -n 30 "$out/fuzz-$t.log"
		echo "FAIL fuzz-$t (artifacts in $out)"
		fail=$((fail + 1))
	fi
done
# The desc seeds are still what desc-seeds.c makes, each answered as it
# expects (a layout change regenerates them).
rm -rf "$out/seeds-desc"
mkdir -p "$out/seeds-desc"
if clang -std=gnu11 -D_GNU_SOURCE -I"$top/include" -I"$top/lib/base" \
	"$here/desc-seeds.c" "$top/lib/base/desc.c" "$top/lib/base/error.c" \
	-o "$out/desc-seeds" && "$out/desc-seeds" "$out/seeds-desc" &&
	diff -r "$out/seeds-desc" "$here/corpus/desc"; then
	echo "ok   desc seeds: as tests/fuzz/desc-seeds.c makes them"
else
	echo "FAIL desc seeds: tests/fuzz/corpus/desc is not what tests/fuzz/desc-seeds.c makes"
	fail=$((fail + 1))
fi
echo "fuzz: $pass passed, $fail failed"
[ "$fail" = 0 ]
