#!/bin/sh
# SPDX-License-Identifier: MIT
# The README on fresh machines: minbase Debian 12 and Debian 13 roots
# (debootstrap, cached outside the tree) each get a clone of the committed
# tree and run the README's two commands verbatim, as root: main (the
# doctor must build and say NOT usable, exit 1: no GPU there), then test
# (all of it must pass), then main again (so both orders: main before test
# and after it). A further fresh Debian 12 root installs the .deb packages
# from DEBDIR (tools/run.sh deb), builds a consumer with pkg-config and runs
# it and gdr-info. GDR_FRESH_SUITES (default "bookworm trixie") picks the
# releases; GDR_FRESH_TEST (default: the same) those whose root runs test
# too: CI's names none (a full test run per release would take CI past its
# time; tools/run.sh fresh runs them all before a release).
#   run-fresh.sh [DEBDIR]
# Needs root and the Debian mirror; skips (77) without root.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
debs=${1:-$top/build-deb}
case "$debs" in /*) ;; *) debs=$top/$debs ;; esac
RECIPE=1
MIRROR=${GDR_VM_MIRROR:-http://deb.debian.org/debian}
cache=${GDR_FRESH_CACHE:-/var/cache/libgpudirect-fresh}
work=$(mktemp -d /tmp/gdr-fresh.XXXXXX)
pass=0
fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: the fresh-machine suite needs root (debootstrap, chroot)"
	exit 77
fi
# GDR_FRESH_LOGS=DIR keeps the runs' logs there.
trap 'if [ -n "${GDR_FRESH_LOGS:-}" ]; then mkdir -p "$GDR_FRESH_LOGS" && cp "$work"/*.log "$GDR_FRESH_LOGS"/; fi; rm -rf "$work"' EXIT
if ! command -v debootstrap > /dev/null; then
	apt-get update -qq > /dev/null && DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq --no-install-recommends debootstrap > /dev/null
fi
commit=$(git -C "$top" rev-parse HEAD)
if [ -n "$(git -C "$top" status --porcelain --untracked-files=no)" ]; then
	echo "note: uncommitted changes are not tested here; the fresh roots get commit $commit"
fi

# One minbase root per release, cached as a tar.
mkdir -p "$cache"
base_of() { # suite: the cached tar (made once)
	b=$cache/$1-minbase-$RECIPE.tar
	if [ ! -f "$b" ]; then
		echo "fresh: debootstrap --variant=minbase $1 (once; cached in $cache)" >&2
		if ! debootstrap --variant=minbase "$1" "$work/base" "$MIRROR" > "$work/debootstrap.log" 2>&1; then
			tail -n 20 "$work/debootstrap.log" >&2
			rm -rf "$work/base"
			return 1
		fi
		tar -C "$work/base" -cf "$b.tmp" . && mv "$b.tmp" "$b"
		rm -rf "$work/base"
	fi
	echo "$b"
}

# Run a shell command as root in a fresh root, with /proc, /sys, /dev and
# the network; the guest image cache of the vm suite is shared, as a cache.
# The root is bound onto itself so that its / is a mount point, as on a
# machine (unshare --propagation private, which the vm suite's build root
# uses, refuses a / that is not one: EINVAL).
in_root() { # root, command
	r=$1
	shift
	cp /etc/resolv.conf "$r/etc/resolv.conf"
	mkdir -p /var/cache/libgpudirect-vm "$r/var/cache/libgpudirect-vm"
	unshare --mount --propagation private sh -c '
		r=$1; shift
		mount --bind "$r" "$r" &&
		mount -t proc proc "$r/proc" &&
		mount --rbind /sys "$r/sys" &&
		mount --rbind /dev "$r/dev" &&
		mount -t tmpfs tmp "$r/tmp" &&
		mount --bind /var/cache/libgpudirect-vm "$r/var/cache/libgpudirect-vm" &&
		exec chroot "$r" /usr/bin/env -i HOME=/root TERM=dumb \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			LANG=C.UTF-8 sh -c "$*"' sh "$r" "$@"
}

new_root() { # dir, suite
	mkdir -p "$1"
	tar -C "$1" -xf "$(base_of "$2")"
}

# The README's first command in root @1: it must build and the doctor must
# say NOT usable (exit 1: no GPU there).
run_main() { # root, what
	in_root "$1" "cd /root/libgpudirect && tools/run.sh main" > "$work/main.log" 2>&1
	st=$?
	if [ "$st" = 1 ] && grep -q "GPUDirect RDMA: NOT usable" "$work/main.log"; then
		ok "$2: built, the doctor says NOT usable (exit 1)"
	else
		tail -n 30 "$work/main.log"
		bad "$2: exit $st"
	fi
}

# --- the README's two commands, on each release ----------------------------
for suite in ${GDR_FRESH_SUITES:-bookworm trixie}; do
	case $suite in bookworm) rel="Debian 12" ;; trixie) rel="Debian 13" ;; *) rel=$suite ;; esac
	if ! base_of "$suite" > /dev/null; then
		bad "$rel: debootstrap $suite"
		continue
	fi
	a=$work/a-$suite
	new_root "$a" "$suite"
	git clone -q "$top" "$a/root/libgpudirect" && git -C "$a/root/libgpudirect" checkout -q "$commit"
	echo "fresh: $rel: tools/run.sh main in a fresh root (commit $commit)"
	run_main "$a" "$rel: tools/run.sh main"
	case " ${GDR_FRESH_TEST-${GDR_FRESH_SUITES:-bookworm trixie}} " in
	*" $suite "*) ;;
	*)
		echo "fresh: $rel: tools/run.sh test not run ($suite is not in GDR_FRESH_TEST; tools/run.sh fresh runs it)"
		rm -rf "$a"
		continue
		;;
	esac
	echo "fresh: $rel: tools/run.sh test in the same root"
	in_root "$a" "cd /root/libgpudirect && tools/run.sh test" > "$work/test.log" 2>&1
	st=$?
	cp "$work/test.log" "$work/test-$suite.log"
	last=$(tail -n 1 "$work/test.log")
	if [ "$st" = 0 ] && echo "$last" | grep -qE '^[0-9]+ passed, 0 failed'; then
		ok "$rel: tools/run.sh test: $last"
		grep -E '^skipped:' "$work/test.log" | grep -v 'libgpudirect:gpu /' | sed "s/^/     $rel /"
	else
		grep -E '^(failed|skipped):|FAILED' "$work/test.log" | tail -n 30
		tail -n 10 "$work/test.log"
		# what each failed step printed (its last 40 lines)
		awk '/^== .*: fail/ { n = split(buf, l, "\n"); for (i = (n > 40 ? n - 40 : 1); i <= n; i++) print l[i]; print; buf = ""; next }
			/^== / { buf = "" } { buf = buf $0 "\n" }' "$work/test.log" | sed "s/^/     $rel | /"
		# what the failed meson tests said
		for l in "$a"/root/libgpudirect/build/meson-logs/testlog.txt; do
			[ -f "$l" ] && grep -E '^(FAIL|vm: FAIL|vm:)' "$l" | tail -n 20
		done
		bad "$rel: tools/run.sh test: exit $st, last line: $last"
	fi
	if grep -q "configuring it afresh" "$work/test.log"; then
		bad "$rel: tools/run.sh test rebuilt main's build from scratch"
	fi
	run_main "$a" "$rel: tools/run.sh main after test"
	if [ -n "$(git -C "$a/root/libgpudirect" status --porcelain)" ]; then
		git -C "$a/root/libgpudirect" status --porcelain | head -n 5
		bad "$rel: the runs left the clone changed (git status)"
	fi
	rm -rf "$a"
done

# --- the packages in another fresh root ----------------------------------
if ls "$debs"/libgpudirect1_*.deb > /dev/null 2>&1; then
	b=$work/b
	new_root "$b" bookworm
	mkdir -p "$b/root/debs"
	cp "$debs"/libgpudirect1_*.deb "$debs"/libgpudirect-dev_*.deb \
		"$debs"/gpudirect-tools_*.deb "$b/root/debs/"
	cp "$top/tests/abi/consumer.c" "$b/root/"
	in_root "$b" "apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq --no-install-recommends /root/debs/*.deb \
		gcc libc6-dev pkg-config > /dev/null" > "$work/pkgs.log" 2>&1 ||
		{ tail -n 20 "$work/pkgs.log"; bad "installing the packages"; }
	if in_root "$b" 'cd /root && cc consumer.c -o consumer $(pkg-config --cflags --libs libgpudirect) && ./consumer' \
		> "$work/consumer.log" 2>&1; then
		ok "packages: a consumer built with pkg-config runs ($(tail -n 1 "$work/consumer.log"))"
	else
		cat "$work/consumer.log"
		bad "packages: the pkg-config consumer"
	fi
	in_root "$b" "gdr-info" > "$work/info.log" 2>&1
	st=$?
	if [ "$st" = 1 ] && grep -q "NOT usable" "$work/info.log"; then
		ok "packages: gdr-info runs (exit 1, NOT usable: no GPU there)"
	else
		cat "$work/info.log"
		bad "packages: gdr-info exit $st"
	fi
	rm -rf "$b"
else
	bad "no packages in $debs (tools/run.sh deb)"
fi
echo "fresh: $pass passed, $fail failed"
[ "$fail" = 0 ]
