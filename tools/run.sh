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
#   tools/run.sh mutants [--all | --seed S | NAME...]
#                             the mutation check (tests/mutants/): the
#                             hand-made list and a slice of the generated
#                             one; --all: every mutant
#   tools/run.sh deb          Debian packages into BUILD_DIR/deb/
#   tools/run.sh fresh        the README on fresh Debian 12 and 13 roots
#   tools/run.sh format [fix] clang-format check (or rewrite)
# BUILD_DIR (default: build) names the build directory; it may be anywhere.
# Everything a run makes lives in it (the sanitizer builds, the fuzzers,
# the manifest check's environment, the mutants, the packages, the logs).
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
	# The Python package's suite: pytest, NumPy's cases, its lint.
	python3 -c 'import pytest' 2> /dev/null || m="$m python3-pytest"
	python3 -c 'import numpy' 2> /dev/null || m="$m python3-numpy"
	python3 -c 'import pyflakes' 2> /dev/null || m="$m python3-pyflakes"
	python3 -c 'import mypy' 2> /dev/null || m="$m mypy"
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
	if [ "$(id -u)" = 0 ]; then
		how="apt-get install$(printf ' %s' "$@")"
	else
		how="as root: sudo apt-get install$(printf ' %s' "$@") (installing packages needs root)"
	fi
	if [ "$kind" = required ]; then
		say "missing:$(printf ' %s' "$@"); install them ($how) and run again"
		exit 3
	fi
	say "going on without$(printf ' %s' "$@"); to have it: $how"
	for p in "$@"; do
		case $p in
		librdmacm-dev) say "gdr-write-bw will not be built: it needs librdmacm-dev (rdma_cm)" ;;
		valgrind) say "the valgrind step will be skipped" ;;
		clang) say "the fuzzers will be skipped: they need clang" ;;
		clang-format) say "the format check will be skipped" ;;
		esac
	done
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
# What the build was made with: a change of these starts it afresh.
config_stamp() {
	printf '%s\n' "meson $(meson --version)" "cc $(cc -dumpfullversion 2> /dev/null)" \
		"CUDA_PATH=${CUDA_PATH:-}" "options: $*"
}
# What meson looks for that a later run may have installed (test installs
# valgrind): a change reconfigures, and ninja rebuilds only what changed.
found_stamp() {
	printf '%s\n' "valgrind: $(command -v valgrind || echo none)" \
		"rdmacm: $(pkg-config --modversion librdmacm 2> /dev/null || echo none)" \
		"ibverbs: $(pkg-config --modversion libibverbs 2> /dev/null || echo none)"
}

setup() { # dir, meson options...
	d=$1
	shift
	stamp=$(config_stamp "$@")
	found=$(found_stamp)
	if [ -f "$d/build.ninja" ] && [ "$(cat "$d/.run-sh-config" 2> /dev/null)" = "$stamp" ]; then
		if [ "$(cat "$d/.run-sh-found" 2> /dev/null)" != "$found" ]; then
			# Packages appeared (or went): meson looks again.
			if ! meson setup --reconfigure "$d" "$@" > "$d/reconfigure.log" 2>&1; then
				cat "$d/reconfigure.log" >&2
				say "meson setup --reconfigure $d failed"
				exit 3
			fi
			echo "$found" > "$d/.run-sh-found"
		fi
		return 0
	fi
	if [ -f "$d/build.ninja" ]; then
		say "$d was configured with another compiler, meson or options: configuring it afresh"
		rm -rf "$d"
	fi
	mkdir -p "$d"
	log=$(mktemp)
	if ! meson setup "$d" "$@" > "$log" 2>&1; then
		cat "$log" >&2
		rm -f "$log"
		say "meson setup $d failed"
		exit 3
	fi
	# What will not be built, and why, where a newcomer reads it.
	if grep -q 'gdr-write-bw *: *NO\|librdmacm *: *NO' "$log"; then
		say "gdr-write-bw is not built: librdmacm-dev is missing"
	fi
	mv "$log" "$d/setup.log"
	echo "$stamp" > "$d/.run-sh-config"
	echo "$found" > "$d/.run-sh-found"
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
	# A step that is not a test run: its result counts as one.
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
		echo "$res $name" >> "$steps"
	}
	# A step that runs meson tests in DIR: its tests count, one by one,
	# from the log; the step itself counts only when it failed before
	# any test ran (a build that broke).
	tstep() { # name, build dir, log name, [meson log name], command...
		name=$1 tdir=$2 tlog=$3 mlog=$4
		shift 4
		echo "== $name"
		rm -f "$tdir/meson-logs/$mlog.json"
		st=0
		"$@" || st=$?
		[ "$st" = 0 ] || rc=1
		if [ -f "$tdir/meson-logs/$mlog.json" ]; then
			cp "$tdir/meson-logs/$mlog.json" "$tdir/testlog-$tlog.json"
			logs="$logs $tdir/testlog-$tlog.json"
			echo "== $name: $([ "$st" = 0 ] && echo ok || echo fail)"
		else
			echo "== $name: fail (no test ran)"
			echo "fail $name" >> "$steps"
		fi
	}
	tstep "all suites (unit abi alloc security gpu vm python)" "$build" main testlog \
		meson test -C "$build" --print-errorlogs --num-processes 2
	tstep "valgrind (unit suite)" "$build" valgrind testlog-valgrind \
		meson test -C "$build" --setup valgrind --suite unit --print-errorlogs --num-processes 2
	san() { # dir, sanitizer, meson test args...
		d=$1 s=$2
		shift 2
		setup "$d" -Db_sanitize="$s" -Db_lundef=false -Dc_args=-fno-sanitize-recover=all
		ninja -C "$d" > "$d/ninja.log" 2>&1 || { tail -n 30 "$d/ninja.log"; return 1; }
		meson test -C "$d" --print-errorlogs "$@"
	}
	tstep "ASan+UBSan (unit suite)" "$build/asan" asan testlog \
		san "$build/asan" address,undefined --suite unit
	tstep "ASan+UBSan abi" "$build/asan" asan-abi testlog \
		meson test -C "$build/asan" --print-errorlogs symbols header
	tstep "TSan (threads, fork, cache-threads)" "$build/tsan" tsan testlog \
		san "$build/tsan" thread threads fork cache-threads
	step "fuzz" sh tests/fuzz/run-fuzz.sh "${FUZZ_SECONDS:-15}" "$build/fuzz"
	step "format (clang-format)" format_check
	step "Kubernetes manifests (kubernetes-validate, yamllint)" \
		sh tests/kubernetes/check-manifests.sh "$build/k8s-venv"
	if [ "${CI:-}" = true ]; then
		step "mutation check" sh tests/mutants/run-mutants.sh "$build/mutants"
		step "Debian packages" sh packaging/build-deb.sh "$build/deb"
		# The README's main on fresh Debian 12 and 13 roots and the
		# packages on another; test there too (tools/run.sh fresh)
		# would take CI past its 45 minutes.
		step "fresh Debian 12 and 13 roots (main, packages)" env GDR_FRESH_TEST= \
			sh tests/fresh/run-fresh.sh "$build/deb"
	fi
	summary --steps "$steps" $logs
	return "$rc"
}

format_check() {
	if ! command -v clang-format > /dev/null 2>&1; then
		echo "SKIP: clang-format is not installed"
		return 77
	fi
	# The tree is formatted by clang-format 14 (Debian 12's): other
	# versions lay out the same .clang-format differently.
	v=$(clang-format --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
	if [ "$v" != 14 ]; then
		echo "SKIP: clang-format $v is not 14, the version the tree is formatted with (Debian 12's clang-format)"
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
	shift
	exec sh tests/mutants/run-mutants.sh "$build/mutants" "$@"
	;;
deb)
	exec sh packaging/build-deb.sh "$build/deb"
	;;
fresh)
	exec sh tests/fresh/run-fresh.sh "$build/deb"
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
