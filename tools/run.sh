#!/bin/sh
# SPDX-License-Identifier: MIT
# One entry point for people and CI.
#   tools/run.sh main   install what is missing, build, run gdr-info and a
#                       registration self-test (gdr-register-one)
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
	pkg-config --exists libibverbs 2> /dev/null || missing="$missing libibverbs-dev"
	pkg-config --exists librdmacm 2> /dev/null || missing="$missing librdmacm-dev"
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

# Count the results of the last meson test run from its JSON log.
summary() {
	python3 - "$build/meson-logs/testlog.json" <<'PY'
import json, sys
counts = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    counts[r["result"]] = counts.get(r["result"], 0) + 1
    if r["result"] == "SKIP":
        out = (r.get("stdout") or "").strip().splitlines()
        print("skipped: %s/%s: %s" % (r.get("suite", ["?"])[0], r["name"],
              out[-1] if out else "no reason given"))
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
	echo "== gdr-info"
	rc=0
	"$build/examples/gdr-info" || rc=$?
	echo "== gdr-register-one (registration self-test)"
	"$build/examples/gdr-register-one" || rc2=$?
	case "${rc2:-0}" in
	0) ;;
	77) echo "self-test skipped: no RDMA device on this machine" ;;
	*) rc=${rc2} ;;
	esac
	exit "$rc"
	;;
test)
	build
	rc=0
	meson test -C "$build" --print-errorlogs --num-processes 2 || rc=$?
	summary
	exit "$rc"
	;;
*)
	echo "usage: $0 main|test|build" >&2
	exit 2
	;;
esac
