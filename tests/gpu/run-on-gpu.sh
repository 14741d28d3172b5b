#!/bin/sh
# SPDX-License-Identifier: MIT
# On the GPU machine: build, run the unit and gpu suites and the GPU
# benchmarks, the Python package's tests and benchmarks (run-python.sh),
# the doctor and its capture/replay, and print a summary.
# Exits non-zero when anything failed. One command, a few minutes:
#   sh tests/gpu/run-on-gpu.sh [BUILD_DIR]
set -u
cd "$(dirname "$0")/../.."
build=${1:-build-gpu}
out=${OUT:-/tmp}
log=$out/gpu-run.log
: > "$log"
failed=""

say() { echo "$*" | tee -a "$log"; }
fail() { failed="$failed $1"; say "FAILED: $1"; }

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
	meson setup "$build" > "$build.setup.log" 2>&1 ||
		{ cat "$build.setup.log"; exit 2; }
fi
ninja -C "$build" > "$build.ninja.log" 2>&1 || { cat "$build.ninja.log"; exit 2; }
say "built $(ls "$build"/lib/libgpudirect.so.* | head -n 1)"

say "== unit and gpu suites"
meson test -C "$build" --suite unit --suite gpu --print-errorlogs \
	--num-processes 1 > "$build/suites.out" 2>&1 || fail "unit/gpu suites"
tee -a "$log" < "$build/suites.out" | grep -E '^ *[0-9]+/|^(Ok|Fail|Skipped):'
cp "$build/meson-logs/testlog.json" "$build/suites.json"
for t in classify dmabuf regress context report multi; do
	say "-- gpu-$t"
	"$build/tests/gpu/test-gpu" "$t" 2>&1 | grep -v '^  ' | tail -n 12 | tee -a "$log"
done
for t in no-init fork-child primary bar1; do
	say "-- gpu-$t"
	"$build/tests/gpu/test-gpu-process" "$t" 2>&1 | tail -n 12 | tee -a "$log"
done
for t in churn purge vmm; do
	say "-- gpu-cache-$t"
	"$build/tests/gpu/test-gpu-cache" "$t" 2>&1 | tail -n 12 | tee -a "$log"
done
say "-- gpu-conform"
"$build/tests/gpu/test-gpu-conform" tests/conform/record-h200.txt 2>&1 | tail -n 14 | tee -a "$log"
for t in expandable default trusted control; do
	say "-- gpu-torch-$t"
	python3 tests/gpu/test-torch.py "$build/tests/gpu/libgdrtorch.so" "$t" 2>&1 |
		grep -v '^FAIL: MR' | tail -n 8 | tee -a "$log"
done
for t in share lifetime; do
	say "-- gpu-share-$t"
	"$build/tests/gpu/test-gpu-share" "$t" 2>&1 | grep -v '^ok' | tail -n 16 | tee -a "$log"
done
say "-- gpu-preload (an unmodified program under gdr-run, over the stand-in verbs)"
sh tests/preload/test-preload.sh "$build" gpu 2>&1 | tail -n 12 | tee -a "$log"
say "-- gpu-preload under ASan+UBSan (every interposed call; leaks outside libcuda)"
asan=$build-asan
if [ ! -f "$asan/build.ninja" ]; then
	meson setup "$asan" -Db_sanitize=address,undefined -Db_lundef=false \
		> "$asan.setup.log" 2>&1 || cat "$asan.setup.log"
fi
if ninja -C "$asan" lib/libgpudirect-preload.so tests/preload/reg-program \
	tests/fakes/libibverbs/libibverbs.so.1.0.0 tools/gdr-run/gdr-run > "$asan.ninja.log" 2>&1; then
	# The CUDA driver maps memory where ASan's shadow gap would be, and
	# keeps allocations of its own until exit.
	printf 'leak:libcuda.so\n' > "$asan/lsan.supp"
	# test-preload.sh fails any run whose stderr holds a report.
	ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=1 \
		LSAN_OPTIONS="suppressions=$(cd "$asan" && pwd)/lsan.supp" \
		UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		sh tests/preload/test-preload.sh "$asan" gpu > "$asan/preload.out" 2>&1
	st=$?
	tail -n 40 "$asan/preload.out" | tee -a "$log"
	grep -c "ERROR: \(Address\|Leak\)Sanitizer\|runtime error:" "$asan/preload.out" |
		sed 's/^/sanitizer reports: /' | tee -a "$log"
	[ $st = 0 ] || [ $st = 77 ] || fail "gpu-preload under ASan"
else
	tail -n 20 "$asan.ninja.log" | tee -a "$log"
	fail "the ASan build"
fi
say "-- gpu-pcie"
"$build/tests/gpu/test-gpu-pcie" 2>&1 | tail -n 12 | tee -a "$log"

say "== benchmarks"
meson test -C "$build" --benchmark --suite gpu --verbose > "$build/bench.out" 2>&1 ||
	fail "benchmarks"
tee -a "$log" < "$build/bench.out" | grep -E '^bench(-parts)?:|SKIP|FAIL'
# Beside UCX where a bench-ucx built on Debian was carried (.carry/ucx/):
# the GPU machine has no libucx.
if [ -x .carry/ucx/bench-ucx ]; then
	say "-- cache beside UCX (carried build)"
	LD_LIBRARY_PATH=.carry/ucx .carry/ucx/bench-ucx 2>&1 | tee -a "$log"
fi

say "== the Python package (tests/gpu/run-python.sh: its suite, the GPU tests, benchmarks, the example)"
OUT=$out sh tests/gpu/run-python.sh "$build" > "$build/python.out" 2>&1 || fail "Python (see $out/python-gpu.log)"
tee -a "$log" < "$out/python-summary.txt"
tail -n 1 "$build/python.out" | tee -a "$log"

say "== gdr-info"
"$build/tools/gdr-info/gdr-info" > "$build/gdr-info.txt" 2>&1
st=$?
tee -a "$log" < "$build/gdr-info.txt" | tail -n 40
say "gdr-info exit status: $st (1 expected: no RDMA device here)"
[ "$st" = 1 ] || fail "gdr-info exit status $st"
"$build/tools/gdr-info/gdr-info" --json > "$out/gdr-info.json" 2>&1

say "== gdr-info --capture, then --from on the snapshot"
"$build/tools/gdr-info/gdr-info" --capture "$build/node.tar" > "$build/live.txt" 2> "$build/capture.err"
"$build/tools/gdr-info/gdr-info" --from "$build/node.tar" > "$build/replay.txt" 2>&1
tee -a "$log" < "$build/capture.err"
tar -tf "$build/node.tar" | grep -v '/$' | tee -a "$log"
if cmp -s "$build/live.txt" "$build/replay.txt"; then
	say "replayed report: identical to the live one"
else
	diff "$build/live.txt" "$build/replay.txt" | tee -a "$log"
	fail "replayed report differs"
fi

say "== gdr-info --storage on the local file system (real libcufile, no nvidia-fs)"
sh tests/gpu/test-storage-gpu.sh "$build" > "$build/storage.out" 2>&1
st=$?
tee -a "$log" < "$build/storage.out"
[ $st = 0 ] || [ $st = 77 ] || fail "gdr-info --storage"

say "== summary"
python3 - "$build/suites.json" <<'PY' | tee -a "$log"
import json, sys
c = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    c[r["result"]] = c.get(r["result"], 0) + 1
print("unit + gpu suites: %s" % ", ".join("%s %d" % kv for kv in sorted(c.items())))
PY
if [ -n "$failed" ]; then
	say "run-on-gpu: FAILED:$failed"
	exit 1
fi
say "run-on-gpu: all passed"
