#!/bin/sh
# SPDX-License-Identifier: MIT
# One entry point for people and CI.
#   tools/run.sh main   install what is missing, build, run the doctor and
#                       its registration self-test (gdr-info --self-test)
#   tools/run.sh test   install what is missing, build, run every suite
#   tools/run.sh build  install what is missing and build
# BUILD_DIR (default: build) names the build directory.
set -eu
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
what=${1:-main}

need_pkgs() {
	missing=""
	command -v meson > /dev/null 2>&1 || missing="$missing meson"
	command -v ninja > /dev/null 2>&1 || missing="$missing ninja-build"
	command -v pkg-config > /dev/null 2>&1 || missing="$missing pkg-config"
	command -v cc > /dev/null 2>&1 || missing="$missing gcc libc6-dev"
	command -v c++ > /dev/null 2>&1 || missing="$missing g++"
	if [ "${WITH_CHECKERS:-0}" = 1 ]; then
		command -v valgrind > /dev/null 2>&1 || missing="$missing valgrind"
		command -v clang > /dev/null 2>&1 || missing="$missing clang"
		[ -e /usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a ] ||
			ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a > /dev/null 2>&1 ||
			missing="$missing libclang-rt-dev"
	fi
	pkg-config --exists libibverbs 2> /dev/null || missing="$missing libibverbs-dev"
	pkg-config --exists librdmacm 2> /dev/null || missing="$missing librdmacm-dev"
	command -v tar > /dev/null 2>&1 || missing="$missing tar"
	python3 -c 'import jsonschema' 2> /dev/null || missing="$missing python3-jsonschema"
	echo "$missing"
}

install_deps() {
	missing=$(need_pkgs)
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" != 0 ] || ! command -v apt-get > /dev/null 2>&1; then
		echo "run.sh: missing:$missing; install them (apt-get install$missing) and run again" >&2
		exit 2
	fi
	echo "run.sh: installing$missing"
	apt-get update -qq
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends $missing ibverbs-providers > /dev/null
}

check_cuda_headers() {
	root=${CUDA_PATH:-/usr/local/cuda}
	if [ ! -f "$root/include/cuda.h" ]; then
		echo "run.sh: no cuda.h under $root/include: install the CUDA toolkit headers" \
			"(Debian: nvidia-cuda-dev from non-free, or NVIDIA's cuda-cudart-dev)" \
			"and set CUDA_PATH to the toolkit root" >&2
		exit 2
	fi
}

build() {
	install_deps
	check_cuda_headers
	if [ ! -f "$build/build.ninja" ]; then
		meson setup "$build" > "$build.setup.log" 2>&1 || {
			cat "$build.setup.log"
			exit 2
		}
		rm -f "$build.setup.log"
	fi
	ninja -C "$build"
}

# Count the results of meson test runs from their JSON logs.
summary() {
	python3 - "$@" <<'PY'
import json, sys
counts = {}
lines = []
for f in sys.argv[1:]:
    try:
        lines += open(f).readlines()
    except OSError:
        pass
for line in lines:
    r = json.loads(line)
    counts[r["result"]] = counts.get(r["result"], 0) + 1
    if r["result"] == "SKIP":
        out = (r.get("stdout") or "").strip().splitlines()
        print("skipped: %s: %s" % (r["name"],
              out[-1] if out else "no reason given"))
import os
fz = os.environ.get("FUZZ_RC")
if fz is not None:
    key = {"0": "OK", "77": "SKIP"}.get(fz, "FAIL")
    counts[key] = counts.get(key, 0) + 1
    if key == "SKIP":
        print("skipped: fuzz: clang is not installed")
ok = counts.get("OK", 0)
bad = sum(v for k, v in counts.items() if k not in ("OK", "SKIP"))
print("%d passed, %d failed, %d skipped" % (ok, bad, counts.get("SKIP", 0)))
PY
}

case "$what" in
build)
	build
	;;
main)
	build
	echo "== gdr-info --self-test (the doctor, then a registration self-test)"
	exec "$build/tools/gdr-info/gdr-info" --self-test
	;;
test)
	export WITH_CHECKERS=1
	build
	logs=""
	rc=0
	step() { # name, command...
		name=$1
		shift
		echo "== $name"
		if "$@"; then echo "== $name: ok"; else echo "== $name: FAILED"; rc=1; fi
	}
	keep() { # build dir, name, [meson log name]
		cp "$1/meson-logs/${3:-testlog}.json" "$1/testlog-$2.json"
		logs="$logs $1/testlog-$2.json"
	}
	step "all suites (unit abi alloc security gpu vm)" \
		meson test -C "$build" --print-errorlogs --num-processes 2
	keep "$build" main
	step "valgrind (unit suite)" \
		meson test -C "$build" --setup valgrind --suite unit --print-errorlogs --num-processes 2
	keep "$build" valgrind testlog-valgrind
	san() { # dir, sanitizer, meson test args...
		d=$1 s=$2
		shift 2
		[ -f "$d/build.ninja" ] || meson setup "$d" -Db_sanitize="$s" -Db_lundef=false \
			-Dc_args=-fno-sanitize-recover=all -Dexamples=true > "$d.setup.log" 2>&1 ||
			{ cat "$d.setup.log"; return 1; }
		ninja -C "$d" > "$d.ninja.log" 2>&1 || { tail -n 30 "$d.ninja.log"; return 1; }
		meson test -C "$d" --print-errorlogs "$@"
	}
	step "ASan+UBSan (unit suite, abi symbols and header)" \
		san "$build-asan" address,undefined --suite unit
	keep "$build-asan" asan
	step "ASan+UBSan abi" meson test -C "$build-asan" --print-errorlogs symbols header
	keep "$build-asan" asan-abi
	step "TSan (threads, fork)" san "$build-tsan" thread threads fork
	keep "$build-tsan" tsan
	fz=0
	sh tests/fuzz/run-fuzz.sh "${FUZZ_SECONDS:-15}" "$build-fuzz" || fz=$?
	case $fz in 0) echo "== fuzz: ok" ;; 77) echo "== fuzz: skipped (no clang)" ;; *) echo "== fuzz: FAILED"; rc=1 ;; esac
	FUZZ_RC=$fz summary $logs
	exit "$rc"
	;;
*)
	echo "usage: $0 main|test|build" >&2
	exit 2
	;;
esac
