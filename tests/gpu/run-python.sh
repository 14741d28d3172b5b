#!/bin/sh
# SPDX-License-Identifier: MIT
# On the GPU machine: the Python package in one command, a few minutes:
#   sh tests/gpu/run-python.sh [BUILD_DIR]
# builds if needed (BUILD_DIR, default build-gpu), then over the stand-in
# verbs (tests/fakes/libibverbs/, device standin0) and the real CUDA driver:
#   - the package's suite (tests/python/: host memory, lifetimes, threads);
#   - the GPU tests (tests/gpu/python/: every tensor case, the caches under
#     PyTorch's allocators against the driver's ground truth, owners and
#     importers in C and Python across processes);
#   - the benchmarks (host memory, then tensors; docs/benchmarks.md);
#   - the example end to end: examples/python/kv_owner.py, imported by
#     gdr-share import (C) and examples/python/kv_importer.py;
#   - the install into a fresh venv with nothing from a package index.
# With pytest where it is installed, else run.py's own runner (no
# packages are needed beyond PyTorch). $PYTHON picks the interpreter that
# has PyTorch (default python3). Prints a summary; exits non-zero when
# anything failed. Everything said is also in $OUT/python-gpu.log.
set -u
cd "$(dirname "$0")/../.." || exit 2
top=$(pwd)
build=${1:-build-gpu}
py=${PYTHON:-python3}
out=${OUT:-/tmp}
log=$out/python-gpu.log
: > "$log"
failed=""

say() { echo "$*" | tee -a "$log"; }
fail() { failed="$failed $1"; say "FAILED: $1"; }

say "== machine"
{
	date -u
	uname -r
	nvidia-smi --query-gpu=name,pci.bus_id,driver_version --format=csv,noheader 2> /dev/null
	"$py" -c 'import sys; print("python", sys.version.split()[0])'
	"$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name() if torch.cuda.is_available() else "(no GPU)")' 2>&1
	"$py" -c 'import cupy; print("cupy", cupy.__version__)' 2>&1 | tail -n 1
	"$py" -c 'import numpy; print("numpy", numpy.__version__)' 2>&1 | tail -n 1
	"$py" -c 'import pytest; print("pytest", pytest.__version__)' 2>&1 | tail -n 1
} 2>&1 | tee -a "$log"

say "== build"
if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" > "$build.setup.log" 2>&1 ||
		{ cat "$build.setup.log"; exit 2; }
fi
ninja -C "$build" > "$build.ninja.log" 2>&1 || { cat "$build.ninja.log"; exit 2; }
b=$(cd "$build" && pwd)

step() { # name, command...: its output to the log, its status judged
	name=$1
	shift
	say "-- $name"
	"$@" > "$out/step.out" 2>&1
	st=$?
	tee -a "$log" < "$out/step.out" | tail -n 40
	case $st in
	0) ;;
	77) say "skipped: $name" ;;
	*) fail "$name" ;;
	esac
}

step "the package's suite (stand-in verbs, host memory)" \
	"$py" tests/python/run.py "$b" tests/python
step "the GPU tests (PyTorch, CuPy)" \
	"$py" tests/python/run.py "$b" tests/gpu/python
step "install into a fresh venv (pip --no-index)" \
	env PYTHON="$py" sh tests/python/check-install.sh "$b"

say "== benchmarks"
step "host memory" "$py" tests/python/bench.py "$b" --host
step "CUDA tensors" "$py" tests/python/bench.py "$b" --gpu

say "== the example: a Python owner, importers in C and Python"
example() {
	"$py" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 77)' 2> /dev/null ||
		{ echo "no PyTorch with a GPU: the example needs one"; return 77; }
	tmp=$(mktemp -d)
	sock=$tmp/kv.sock
	env LD_LIBRARY_PATH="$b/tests/fakes/libibverbs:$b/lib" STANDIN_LOG="$tmp/log" \
		GPUDIRECT_LIBRARY="$b/lib/libgpudirect.so.1" \
		PYTHONPATH="$top/python" PYTHONDONTWRITEBYTECODE=1 \
		"$py" examples/python/kv_owner.py "$sock" --mib 64 > "$tmp/owner.out" 2>&1 &
	own=$!
	i=0
	while ! grep -q "serving on" "$tmp/owner.out" && [ $i -lt 300 ] && kill -0 $own 2> /dev/null; do
		sleep 0.1
		i=$((i + 1))
	done
	rc=0
	env LD_LIBRARY_PATH="$b/tests/fakes/libibverbs:$b/lib" STANDIN_LOG="$tmp/log" \
		timeout 60 "$b/examples/gdr-share" import "$sock" -d standin0 || rc=1
	env LD_LIBRARY_PATH="$b/tests/fakes/libibverbs:$b/lib" STANDIN_LOG="$tmp/log" \
		GPUDIRECT_LIBRARY="$b/lib/libgpudirect.so.1" \
		PYTHONPATH="$top/python" PYTHONDONTWRITEBYTECODE=1 \
		timeout 60 "$py" examples/python/kv_importer.py "$sock" -d standin0 || rc=1
	kill -INT $own 2> /dev/null
	# Bounded: an owner that does not stop on SIGINT fails the step.
	i=0
	while kill -0 $own 2> /dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if kill -0 $own 2> /dev/null; then
		echo "the owner did not stop on SIGINT within 10 s"
		kill -KILL $own
		rc=1
	fi
	wait $own
	cat "$tmp/owner.out"
	grep '^ibv_reg_dmabuf_mr' "$tmp/log" | sed 's/^/stand-in: /'
	n=$(grep -c '^ibv_reg_dmabuf_mr .*exp_name=nv_dmabuf' "$tmp/log")
	[ "$n" = 2 ] || { echo "expected 2 dma-buf registrations, saw $n"; rc=1; }
	[ -e "$sock" ] && { echo "the owner left its socket"; rc=1; }
	rm -rf "$tmp"
	return $rc
}
step "kv_owner.py + gdr-share import + kv_importer.py" example

say "== summary"
grep -E '^(bench:|[0-9]+ (passed|failed|skipped)|=+ .*(passed|failed|skipped))' "$log" | tee "$out/python-summary.txt"
if [ -n "$failed" ]; then
	say "run-python: FAILED:$failed"
	exit 1
fi
say "run-python: all passed"
