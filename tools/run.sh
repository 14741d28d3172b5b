#!/bin/sh
# SPDX-License-Identifier: MIT
# One entry point for people and CI.
#   tools/run.sh main         build, then the doctor and its registration
#                             self-test (gdr-info --self-test)
#   tools/run.sh test         build, then every suite, the sanitizers,
#                             valgrind, fuzzing and the format check;
#                             under CI=true also the mutation check, the
#                             Debian packages and the fresh-machine suite
#   tools/run.sh build        build only
#   tools/run.sh mutants      the mutation check (tests/mutants/)
#   tools/run.sh deb          Debian packages into build-deb/
#   tools/run.sh fresh        the README on fresh Debian 12 roots
#   tools/run.sh format [fix] clang-format check (or rewrite)
# BUILD_DIR (default: build) names the build directory; it may be anywhere.
#
# Exit status: main gives gdr-info's (0 usable, 1 not usable, 2 the doctor
# failed); a missing package or a failed build gives 3; test gives 0 when
# everything passed, else 1.
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
build=${BUILD_DIR:-build}
what=${1:-main}

say() { echo "run.sh: $*" >&2; }

# --- packages --------------------------------------------------------------
# What the build needs: without these nothing can be built.
need_build() {
	m=""
	command -v meson > /dev/null 2>&1 || m="$m meson"
	command -v ninja > /dev/null 2>&1 || m="$m ninja-build"
	command -v pkg-config > /dev/null 2>&1 || m="$m pkg-config"
	command -v cc > /dev/null 2>&1 || m="$m gcc libc6-dev"
	pkg-config --exists libibverbs 2> /dev/null || m="$m libibverbs-dev"
	echo "$m"
}

# What the build can use: gdr-write-bw needs librdmacm.
want_build() {
	m=""
	pkg-config --exists librdmacm 2> /dev/null || m="$m librdmacm-dev"
	echo "$m"
}

# What the test suites need.
need_test() {
	m=""
	command -v c++ > /dev/null 2>&1 || m="$m g++"
	command -v python3 > /dev/null 2>&1 || m="$m python3"
	python3 -c 'import jsonschema' 2> /dev/null || m="$m python3-jsonschema"
	python3 -c 'import ensurepip' 2> /dev/null || m="$m python3-venv"
	command -v valgrind > /dev/null 2>&1 || m="$m valgrind"
	command -v clang > /dev/null 2>&1 || m="$m clang"
	command -v clang-format > /dev/null 2>&1 || m="$m clang-format"
	ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a \
		> /dev/null 2>&1 || m="$m libclang-rt-dev"
	command -v tar > /dev/null 2>&1 || m="$m tar"
	command -v cmake > /dev/null 2>&1 || m="$m cmake"
	command -v git > /dev/null 2>&1 || m="$m git"
	echo "$m"
}

# Install @2.. with apt-get where that works; say so where it cannot.
# $1: "required" stops the run when they stay missing; "optional" goes on.
get_pkgs() {
	kind=$1
	shift
	[ -z "$*" ] && return 0
	if [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null 2>&1; then
		say "installing $*"
		if timeout 120 apt-get update -qq -o Acquire::Retries=0 \
			-o Acquire::http::Timeout=15 > /dev/null 2>&1 &&
			DEBIAN_FRONTEND=noninteractive timeout 1200 apt-get install \
				-y -qq --no-install-recommends "$@" > /dev/null 2>&1; then
			return 0
		fi
		say "apt-get could not install$(printf ' %s' "$@") (no package access?)"
	fi
	if [ "$kind" = required ]; then
		say "missing:$(printf ' %s' "$@"); install them (apt-get install$(printf ' %s' "$@")) and run again"
		exit 3
	fi
	say "going on without$(printf ' %s' "$@")"
}

deps() {
	get_pkgs required $(need_build)
	# After the required ones: pkg-config may have just arrived.
	get_pkgs optional $(want_build)
	[ "${1:-}" = test ] && get_pkgs optional $(need_test)
	return 0
}

# --- building ----------------------------------------------------------------
# The configuration run.sh wants; a build directory configured otherwise
# (or with other tools since) is configured again, never used stale.
config_stamp() {
	printf '%s\n' "meson $(meson --version)" "cc $(cc -dumpfullversion 2> /dev/null)" \
		"CUDA_PATH=${CUDA_PATH:-}" "options: $*" \
		"valgrind: $(command -v valgrind || echo none)" \
		"rdmacm: $(pkg-config --modversion librdmacm 2> /dev/null || echo none)" \
		"ibverbs: $(pkg-config --modversion libibverbs 2> /dev/null || echo none)"
}

setup() { # dir, meson options...
	d=$1
	shift
	stamp=$(config_stamp "$@")
	if [ -f "$d/build.ninja" ] && [ "$(cat "$d/.run-sh-config" 2> /dev/null)" = "$stamp" ]; then
		return 0
	fi
	if [ -f "$d/build.ninja" ]; then
		say "$d was configured differently: configuring it again"
		rm -rf "$d"
	fi
	mkdir -p "$d"
	if ! meson setup "$d" "$@" > "$d.setup.log" 2>&1; then
		cat "$d.setup.log" >&2
		say "meson setup $d failed"
		exit 3
	fi
	rm -f "$d.setup.log"
	echo "$stamp" > "$d/.run-sh-config"
}

build() {
	setup "$build"
	if ! ninja -C "$build"; then
		say "the build failed"
		exit 3
	fi
}

# --- test -------------------------------------------------------------------
# Count the results of meson test runs from their JSON logs, plus the steps
# that are not meson tests (FUZZ_RC etc.).
summary() {
	python3 "$top/tools/summary.py" "$@"
}

run_tests() {
	logs=""
	rc=0
	steps="$build/steps.txt"
	: > "$steps"
	# A step; its result counts by itself unless it is a meson test run
	# (whose tests are counted from its log).
	step() { # name, command...
		name=$1
		shift
		echo "== $name"
		st=0
		"$@" || st=$?
		case $st in
		0) res=ok ;;
		77) res=skip ;;
		*) res=fail; rc=1 ;;
		esac
		echo "== $name: $res"
		case $1 in meson) ;; *) echo "$res $name" >> "$steps" ;; esac
	}
	keep() { # build dir, name, [meson log name]
		if [ -f "$1/meson-logs/${3:-testlog}.json" ]; then
			cp "$1/meson-logs/${3:-testlog}.json" "$1/testlog-$2.json"
			logs="$logs $1/testlog-$2.json"
		fi
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
		setup "$d" -Db_sanitize="$s" -Db_lundef=false -Dc_args=-fno-sanitize-recover=all
		ninja -C "$d" > "$d/ninja.log" 2>&1 || { tail -n 30 "$d/ninja.log"; return 1; }
		meson test -C "$d" --print-errorlogs "$@"
	}
	step "ASan+UBSan (unit suite)" san "$build-asan" address,undefined --suite unit
	keep "$build-asan" asan
	step "ASan+UBSan abi" meson test -C "$build-asan" --print-errorlogs symbols header
	keep "$build-asan" asan-abi
	step "TSan (threads, fork, cache-threads)" san "$build-tsan" thread threads fork cache-threads
	keep "$build-tsan" tsan
	step "fuzz" sh tests/fuzz/run-fuzz.sh "${FUZZ_SECONDS:-15}" "$build-fuzz"
	step "format (clang-format)" format_check
	step "Kubernetes manifests (kubernetes-validate, yamllint)" \
		sh tests/kubernetes/check-manifests.sh "$build-k8s-venv"
	if [ "${CI:-}" = true ]; then
		step "mutation check" sh tests/mutants/run-mutants.sh "$build-mutants"
		step "Debian packages" sh packaging/build-deb.sh "$build-deb"
		step "fresh Debian 12 roots" sh tests/fresh/run-fresh.sh "$build-deb"
	fi
	summary --steps "$steps" $logs
	return "$rc"
}

format_check() {
	if ! command -v clang-format > /dev/null 2>&1; then
		echo "SKIP: clang-format is not installed"
		return 77
	fi
	# shellcheck disable=SC2046
	git ls-files '*.c' '*.h' | xargs clang-format --dry-run --Werror
}

case "$what" in
build)
	deps
	build
	;;
main)
	deps
	build
	echo "== gdr-info --self-test (the doctor, then a registration self-test)"
	exec "$build/tools/gdr-info/gdr-info" --self-test
	;;
test)
	deps test
	build
	run_tests
	;;
mutants)
	deps test
	exec sh tests/mutants/run-mutants.sh "$build-mutants"
	;;
deb)
	exec sh packaging/build-deb.sh "$build-deb"
	;;
fresh)
	exec sh tests/fresh/run-fresh.sh "$build-deb"
	;;
format)
	if [ "${2:-}" = fix ]; then
		git ls-files '*.c' '*.h' | xargs clang-format -i
	else
		format_check
	fi
	;;
*)
	echo "usage: $0 main|test|build|mutants|deb|fresh|format [fix]" >&2
	exit 2
	;;
esac
