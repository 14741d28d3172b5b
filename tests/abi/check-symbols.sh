#!/bin/sh
# SPDX-License-Identifier: MIT
# The exported symbols equal the version script, each in its node, and none
# of them collides with gdrcopy's exports.
set -eu
lib=$1
map=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ { print $3 }' |
	grep -v '^GPUDIRECT_' | sort > "$tmp/exported"
# name@@NODE or name@NODE
sed 's/@.*//' "$tmp/exported" | sort > "$tmp/names"
awk '/global:/ { g = 1; next } /local:/ { g = 0 } g && /;/ {
	gsub(/[ \t;]/, ""); print }' "$map" | sort > "$tmp/script"

status=0
if ! diff -u "$tmp/script" "$tmp/names"; then
	echo "FAIL: exported symbols differ from $map (- script, + library)"
	status=1
fi
if grep -v '@@\?GPUDIRECT_' "$tmp/exported"; then
	echo "FAIL: the symbols above carry no GPUDIRECT_ version"
	status=1
fi
# gdrcopy's gdrapi.h exports these; both libraries share one process.
for s in gdr_open gdr_close gdr_pin_buffer gdr_pin_buffer_v2 \
	gdr_unpin_buffer gdr_map gdr_map_v2 gdr_unmap gdr_get_info \
	gdr_get_info_v2 gdr_copy_to_mapping gdr_copy_from_mapping \
	gdr_get_attribute gdr_runtime_get_version gdr_driver_get_version \
	gdr_get_mapping_type_string gdr_get_callback_flag \
	gdr_set_callback_flag; do
	if grep -qx "$s" "$tmp/names"; then
		echo "FAIL: $s is also exported by gdrcopy"
		status=1
	fi
done
n=$(wc -l < "$tmp/names")
if [ "$status" -eq 0 ]; then
	echo "symbols: $n exported, all in the version script, no gdrcopy clash"
	echo "1 passed, 0 failed"
else
	echo "0 passed, 1 failed"
fi
exit $status
