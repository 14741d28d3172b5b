#!/bin/sh
# SPDX-License-Identifier: MIT
# On the GPU machine: build, run the unit and gpu suites and the GPU
# benchmarks, and print a short summary. One command, a few minutes:
#   sh tests/gpu/run-on-gpu.sh [BUILD_DIR]
set -u
cd "$(dirname "$0")/../.."
build=${1:-build-gpu}
log=${OUT:-/tmp}/gpu-run.log
: > "$log"

say() { echo "$*" | tee -a "$log"; }

say "== machine"
{
	date -u
	uname -r
	head -n 1 /proc/driver/nvidia/version 2> /dev/null || echo "no /proc/driver/nvidia/version"
	nvidia-smi --query-gpu=name,pci.bus_id,driver_version --format=csv,noheader 2> /dev/null
	ls /sys/class/infiniband 2> /dev/null | sed 's/^/rdma device: /'
} 2>&1 | tee -a "$log"

say "== build"
if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" -Dexamples=true > "$build.setup.log" 2>&1 ||
		{ cat "$build.setup.log"; exit 2; }
fi
ninja -C "$build" > "$build.ninja.log" 2>&1 || { cat "$build.ninja.log"; exit 2; }
say "built $(ls "$build"/lib/libgpudirect.so.* | head -n 1)"

say "== unit and gpu suites"
meson test -C "$build" --suite unit --suite gpu --print-errorlogs \
	--num-processes 1 2>&1 | tee -a "$log" | grep -E '^ *[0-9]+/|^(Ok|Fail|Skipped):'
cp "$build/meson-logs/testlog.json" "$build/suites.json"
for t in classify dmabuf context report; do
	say "-- gpu-$t"
	"$build/tests/gpu/test-gpu" "$t" 2>&1 | grep -v '^  ' | tail -n 12 | tee -a "$log"
done

say "== benchmarks"
meson test -C "$build" --benchmark --suite gpu --verbose 2>&1 | tee -a "$log" | grep -E '^bench:|SKIP|FAIL'

say "== gdr-info"
"$build/tools/gdr-info/gdr-info" > "$build/gdr-info.txt" 2>&1
st=$?
tee -a "$log" < "$build/gdr-info.txt" | tail -n 40
say "gdr-info exit status: $st"
"$build/tools/gdr-info/gdr-info" --json > "${OUT:-/tmp}/gdr-info.json" 2>&1

say "== gdr-info --capture, then --from on the snapshot"
"$build/tools/gdr-info/gdr-info" --capture "$build/node.tar" > "$build/live.txt" 2> "$build/capture.err"
"$build/tools/gdr-info/gdr-info" --from "$build/node.tar" > "$build/replay.txt" 2>&1
tee -a "$log" < "$build/capture.err"
tar -tf "$build/node.tar" | grep -v '/$' | tee -a "$log"
if cmp -s "$build/live.txt" "$build/replay.txt"; then
	say "replayed report: identical to the live one"
else
	say "replayed report: DIFFERS"
	diff "$build/live.txt" "$build/replay.txt" | tee -a "$log"
fi

say "== summary"
python3 - "$build/suites.json" <<'PY' | tee -a "$log"
import json, sys
c = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    c[r["result"]] = c.get(r["result"], 0) + 1
print("unit + gpu suites: %s" % ", ".join("%s %d" % kv for kv in sorted(c.items())))
PY
exit 0
