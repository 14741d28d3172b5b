#!/bin/sh
# SPDX-License-Identifier: MIT
# gdr-share's owner on the real driver, as gdr-write-bw --mem=import uses
# it: --fill writes gdr-write-bw's bytes before the export, an importer
# receives the export, and --check, once the owner is interrupted, finds
# the bytes (and fails on a buffer nobody filled). Exits 77 without a
# CUDA device.
b=${1:?build dir}
share=$b/examples/gdr-share
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() {
	echo "FAIL $1"
	for f in own imp; do [ -s "$tmp/$f" ] && sed "s/^/     $f: /" "$tmp/$f"; done
	fail=$((fail + 1))
}
# serve FILL: an owner of 64 KiB checking 64 KiB at the end; one import.
serve() {
	rm -f "$tmp/sock"
	"$share" owner "$tmp/sock" -s 65536 ${1:+"$1"} --check=65536 > "$tmp/own" 2>&1 &
	own=$!
	i=0
	while [ ! -S "$tmp/sock" ] && [ $i -lt 100 ] && kill -0 $own 2> /dev/null; do
		sleep 0.1
		i=$((i + 1))
	done
	if [ ! -S "$tmp/sock" ]; then
		wait $own
		return $?
	fi
	"$share" import "$tmp/sock" > "$tmp/imp" 2>&1
	imp=$?
	kill -INT $own
	wait $own
}
serve --fill=65536
st=$?
if grep -q "no CUDA\|not usable\|cuMemAlloc" "$tmp/own" && [ $st != 0 ]; then
	echo "SKIP: $(head -n 1 "$tmp/own")"
	exit 77
fi
if [ $st = 0 ] && { [ "$imp" = 0 ] || [ "$imp" = 77 ]; } &&
	grep -q "^import: received 65536 bytes" "$tmp/imp" &&
	grep -q "owner: data check passed: the 65536 bytes gdr-write-bw -s 65536 writes" "$tmp/own"; then
	ok "owner --fill/--check: the export received by an importer (exit $imp), the bytes found at the end"
else
	bad "owner --fill/--check"
fi
serve ""
st=$?
if [ $st = 1 ] && grep -q "owner: data check FAILED at byte" "$tmp/own"; then
	ok "owner --check on a buffer nobody wrote: FAILED, exit 1"
else
	bad "owner --check without the bytes"
fi
"$share" owner "$tmp/sock" -s 4096 --fill=8192 > "$tmp/own" 2>&1
if [ $? = 2 ] && grep -q "at most the buffer's size" "$tmp/own"; then
	ok "--fill past the buffer: refused, exit 2"
else
	bad "--fill past the buffer"
fi
echo "share-owner: $pass passed, $fail failed"
[ $fail = 0 ]
