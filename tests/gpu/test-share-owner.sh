#!/bin/sh
# SPDX-License-Identifier: MIT
# gdr-share's owner on the real driver, as gdr-write-bw --mem=import uses
# it: --fill writes gdr-write-bw's bytes before the export and an importer
# receives it; --check poisons the buffer first, so that, with no writer
# (no NIC here), the check at the end fails, as it must; --fill with
# --check (a check of nothing) is refused. Exits 77 without a CUDA device.
# The positive check needs a NIC: docs/field-validation.md.
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
# serve OPTION: a 64 KiB owner; one import once it listens; then SIGINT.
# Its exit status; the importer's in $imp.
serve() {
	rm -f "$tmp/sock"
	imp=-1
	timeout 60 "$share" owner "$tmp/sock" -s 65536 "$1" > "$tmp/own" 2>&1 &
	own=$!
	i=0
	# "serving on" comes after listen(): a connect then is not refused.
	while ! grep -q "serving on" "$tmp/own" && [ $i -lt 300 ] && kill -0 $own 2> /dev/null; do
		sleep 0.1
		i=$((i + 1))
	done
	if grep -q "serving on" "$tmp/own"; then
		timeout 30 "$share" import "$tmp/sock" > "$tmp/imp" 2>&1
		imp=$?
	fi
	kill -INT $own 2> /dev/null
	wait $own
}
serve --fill=65536
st=$?
if [ $st != 0 ] && grep -q "no CUDA\|not usable\|cuMemAlloc" "$tmp/own"; then
	echo "SKIP: $(head -n 1 "$tmp/own")"
	exit 77
fi
if [ $st = 0 ] && { [ "$imp" = 0 ] || [ "$imp" = 77 ]; } &&
	grep -q "^import: received 65536 bytes" "$tmp/imp" &&
	grep -q "owner: handed the export to an importer" "$tmp/own"; then
	ok "owner --fill: the filled buffer's export received by an importer (exit $imp); the owner stopped on SIGINT, exit 0"
else
	bad "owner --fill"
fi
serve --check=65536
st=$?
if [ $st = 1 ] && grep -q "^import: received 65536 bytes" "$tmp/imp" &&
	grep -q "owner: data check FAILED at byte 0 of 65536" "$tmp/own"; then
	ok "owner --check with no writer: the poisoned bytes fail the check at byte 0, exit 1"
else
	bad "owner --check without a writer"
fi
timeout 30 "$share" owner "$tmp/sock" -s 65536 --fill=65536 --check=65536 > "$tmp/own" 2>&1
if [ $? = 2 ] && grep -q "one of them" "$tmp/own"; then
	ok "--fill with --check (the owner reading what it wrote): refused, exit 2"
else
	bad "--fill with --check"
fi
echo "share-owner: $pass passed, $fail failed"
[ $fail = 0 ]
