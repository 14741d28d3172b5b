#!/bin/bash
# SPDX-License-Identifier: MIT
# Soft-RoCE guest harness: Debian 12's kernel and a minimal Debian 12 root
# file system with rdma-core, perftest and rdmacm-utils, booted under QEMU,
# with rxe on a dummy netdev at 10.11.0.1. The kernel comes from the
# guest's own release (fetched by the guest root's apt), not the host's.
# The project tree is shared read-only at the same path as on the host.
# The guest runs programs built against its own userland: a Debian 12
# host's build as it is; on any other host (Debian 13, Ubuntu 24.04, ...)
# a build made from the same tree in a Debian 12 build root (a chroot of
# the guest's release with the build packages).
#
#   vm.sh prepare          build (or find) the cached kernel + rootfs
#   vm.sh run CMD [ARG..]  run CMD in the guest (cwd: the current directory);
#                          its output is printed, its exit status returned.
#                          GDR_VM_BUILD=DIR shares a build directory outside
#                          the tree at the same path too.
#   vm.sh same-userland    exit 0 if this host's builds run in the guest
#   vm.sh guest-build DIR  build the guest's programs from this tree in the
#                          build root, into DIR/guest; prints that path
#                          (GDR_VM_GUEST_BUILD=1: also on Debian 12)
#   vm.sh check            exit 0 if the guest can run here, 77 (with the
#                          reason) if not
#
# The cache lives in $GDR_VM_CACHE (default /var/cache/libgpudirect-vm),
# keyed on the guest package list, the modules and this script's recipe
# version. A guest that crashes or hangs ends the run with a failure (exit 3
# no status / 124 timeout), never a pass.
set -euo pipefail

RECIPE=5
SUITE=bookworm
MIRROR=${GDR_VM_MIRROR:-http://deb.debian.org/debian}
# python3: the Python package's case (test-python.py), about 20 MB more.
GUEST_PKGS="rdma-core ibverbs-providers ibverbs-utils perftest rdmacm-utils iproute2 kmod libibverbs1 librdmacm1 procps strace python3"
MODULES="virtio_pci 9pnet_virtio 9p crc32_generic dummy rdma_rxe ib_uverbs rdma_ucm vgem"
# What building the guest's programs needs, in the build root.
BUILD_PKGS="gcc libc6-dev meson ninja-build pkg-config python3 libibverbs-dev librdmacm-dev"
# The programs the guest suite runs.
VM_TARGETS="tools/gdr-info/gdr-info examples/gdr-register-one examples/gdr-write-bw tests/vm/test-vm tests/vm/vm-syscalls lib/libgpudirect-preload.so tools/gdr-run/gdr-run tests/vm/libgdrpyloop.so"
CACHE=${GDR_VM_CACHE:-/var/cache/libgpudirect-vm}
TIMEOUT=${GDR_VM_TIMEOUT:-900}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
here=$(cd "$(dirname "$0")" && pwd)

log() { echo "vm: $*" >&2; }

# The host packages the harness needs, installed where that is possible.
# 0, or 77 with the true reason said.
host_deps() {
	local missing=""
	command -v qemu-system-x86_64 > /dev/null || missing="$missing qemu-system-x86"
	command -v debootstrap > /dev/null || missing="$missing debootstrap"
	command -v depmod > /dev/null || missing="$missing kmod"
	command -v cpio > /dev/null || missing="$missing cpio"
	command -v unshare > /dev/null || missing="$missing util-linux"
	# debootstrap checks Debian's signatures (an Ubuntu host lacks the keys)
	[ -f "$KEYRING" ] || missing="$missing debian-archive-keyring"
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" != 0 ]; then
		log "SKIP: missing host packages:$missing; installing them needs root (sudo apt-get install$missing)"
		return 77
	fi
	if ! command -v apt-get > /dev/null; then
		log "SKIP: missing host packages:$missing, and there is no apt-get to install them"
		return 77
	fi
	log "installing$missing"
	# shellcheck disable=SC2086
	if ! timeout 120 apt-get update -qq -o Acquire::Retries=0 -o Acquire::http::Timeout=15 > /dev/null 2>&1 ||
		! DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -qq \
			--no-install-recommends $missing > /dev/null 2>&1; then
		log "SKIP: missing host packages:$missing, and apt-get cannot install them (no package access?)"
		return 77
	fi
}

# Run @2.. in the root file system @1, with /proc, /sys, /dev and the network.
in_root() {
	local r=$1
	shift
	cp /etc/resolv.conf "$r/etc/resolv.conf" 2> /dev/null || true
	# shellcheck disable=SC2016
	unshare --mount --propagation private sh -c '
		r=$1; shift
		mount -t proc proc "$r/proc" &&
		mount --rbind /sys "$r/sys" &&
		mount --rbind /dev "$r/dev" &&
		exec chroot "$r" /usr/bin/env -i HOME=/root LANG=C.UTF-8 \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"' sh "$r" "$@"
}

bootstrap() { # dir, packages, log
	debootstrap --variant=minbase --keyring="$KEYRING" --include="${2// /,}" \
		"$SUITE" "$1" "$MIRROR" > "$3" 2>&1 || {
		tail -n 30 "$3" >&2
		log "debootstrap $SUITE failed (see above)"
		return 2
	}
}

cache_dir() {
	local key
	# The init script is baked into the image: its content is in the key.
	key=$( (printf '%s\n' "$RECIPE" "$SUITE" "$GUEST_PKGS" "$MODULES"
		cat "$here/guest-init.sh") | sha256sum | cut -c1-16)
	echo "$CACHE/$key"
}

prepare() {
	host_deps || return $?
	local dir tmp kpkg kver mods m f
	dir=$(cache_dir)
	if [ -f "$dir/ready" ]; then
		echo "$dir"
		return 0
	fi
	log "building guest image in $dir (about two minutes)"
	rm -rf "$dir"
	mkdir -p "$dir"
	tmp="$dir/tmp"
	mkdir -p "$tmp"
	bootstrap "$tmp/rootfs" "$GUEST_PKGS" "$tmp/debootstrap.log" || return 2
	# The guest's own kernel: its release's linux-image-amd64, fetched
	# with the guest root's apt and unpacked beside it (not installed).
	# shellcheck disable=SC2016
	if ! in_root "$tmp/rootfs" sh -c 'apt-get update -qq > /dev/null && cd /tmp &&
		apt-get download -qq "$(apt-cache depends linux-image-amd64 |
			awk "/Depends: linux-image-[0-9]/ { print \$2; exit }")"' \
		> "$tmp/kernel.log" 2>&1; then
		cat "$tmp/kernel.log" >&2
		log "cannot fetch the $SUITE kernel package"
		return 2
	fi
	kpkg=$(cd "$tmp/rootfs/tmp" && ls linux-image-*.deb 2> /dev/null | head -n 1)
	[ -n "$kpkg" ] || { log "no kernel package was fetched"; return 2; }
	dpkg -x "$tmp/rootfs/tmp/$kpkg" "$tmp/kroot"
	rm -f "$tmp/rootfs/tmp/$kpkg"
	kver=$(ls "$tmp/kroot/boot" | sed -n 's/^vmlinuz-//p' | head -n 1)
	[ -n "$kver" ] || { log "$kpkg has no vmlinuz"; return 2; }
	# Where the package keeps its modules (Debian 13 on: /usr/lib/modules):
	# looked up, never assumed.
	mods=""
	for m in lib/modules usr/lib/modules; do
		[ -d "$tmp/kroot/$m/$kver" ] && mods=$m
	done
	[ -n "$mods" ] || { log "$kpkg has no modules for $kver"; return 2; }
	mkdir -p "$tmp/mods/lib/modules"
	cp -a "$tmp/kroot/$mods/$kver" "$tmp/mods/lib/modules/"
	depmod -b "$tmp/mods" "$kver" || { log "depmod on $kpkg's modules failed"; return 2; }
	cp "$tmp/kroot/boot/vmlinuz-$kver" "$dir/vmlinuz"
	# The modules the guest loads, with what they depend on.
	for m in $MODULES; do
		modprobe -d "$tmp/mods" -S "$kver" --show-depends "$m" ||
			{ log "no module $m in $kpkg"; return 2; }
	done | awk '$1 == "insmod" { print $2 }' | sort -u | while read -r f; do
		f=${f#"$tmp/mods"}
		mkdir -p "$tmp/rootfs$(dirname "$f")"
		cp "$tmp/mods$f" "$tmp/rootfs$f"
	done
	cp "$tmp/mods/lib/modules/$kver"/modules.order "$tmp/mods/lib/modules/$kver"/modules.builtin* \
		"$tmp/rootfs/lib/modules/$kver/" 2> /dev/null || true
	depmod -b "$tmp/rootfs" "$kver" || { log "depmod in the guest root failed"; return 2; }
	install -m 755 "$here/guest-init.sh" "$tmp/rootfs/init.sh"
	rm -rf "$tmp/rootfs/var/cache/apt/archives"/*.deb "$tmp/rootfs/var/lib/apt/lists"/* \
		"$tmp/rootfs/usr/share/doc" "$tmp/rootfs/usr/share/man" "$tmp/rootfs/usr/share/locale"
	(cd "$tmp/rootfs" && find . | cpio -o -H newc --quiet) > "$dir/rootfs.cpio"
	echo "$kpkg" > "$dir/kernel"
	rm -rf "$tmp"
	touch "$dir/ready"
	log "guest image ready: $(du -sh "$dir" | cut -f1) ($kpkg)"
	echo "$dir"
}

# Do this host's builds run in the guest (the same release)?
# GDR_VM_GUEST_BUILD=1 says no (to try the other way on a Debian 12 host).
same_userland() {
	[ "${GDR_VM_GUEST_BUILD:-0}" = 1 ] && return 1
	grep -q "^VERSION_CODENAME=$SUITE\$" /etc/os-release 2> /dev/null
}

# The build root: the guest's release with the build packages, cached.
build_root() {
	local dir
	dir="$CACHE/buildroot-$( (printf '%s\n' "$RECIPE" "$SUITE" "$BUILD_PKGS") | sha256sum | cut -c1-16)"
	if [ ! -f "$dir/ready" ]; then
		log "building the $SUITE build root in $dir (once, about two minutes)"
		rm -rf "$dir"
		mkdir -p "$dir"
		bootstrap "$dir/root" "$BUILD_PKGS" "$dir/debootstrap.log" || return 2
		touch "$dir/ready"
	fi
	echo "$dir/root"
}

# Build the guest's programs from this tree in the build root, into
# @1/guest; the tree (read-only) and that directory appear in the root at
# their own paths, so that the guest finds them where the host has them.
guest_build() {
	local top out root
	if [ "$(id -u)" != 0 ]; then
		log "SKIP: the guest's programs are built in a $SUITE chroot, which needs root"
		return 77
	fi
	host_deps || return $?
	top=$(cd "$here/../.." && pwd)
	mkdir -p "$1"
	out="$(cd "$1" && pwd)/guest"
	root=$(build_root | tail -n 1)
	[ -f "$root/../ready" ] || return 2
	mkdir -p "$root$top" "$root$out" "$out"
	# What runs in the root (it sees $out at the same path).
	{
		echo "set -e"
		echo "cd /"
		echo "[ -f '$out/build.ninja' ] || meson setup '$out' '$top'"
		echo "ninja -C '$out' $VM_TARGETS"
	} > "$out/build-in-root.sh"
	# shellcheck disable=SC2016
	if ! unshare --mount --propagation private sh -c '
		r=$1 top=$2 out=$3
		mount --bind "$top" "$r$top" && mount -o remount,bind,ro "$r$top" &&
		mount --bind "$out" "$r$out" && mount -t proc proc "$r/proc" &&
		exec chroot "$r" /usr/bin/env -i HOME=/root LANG=C.UTF-8 \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			sh "$out/build-in-root.sh"' sh "$root" "$top" "$out" > "$1/guest-build.log" 2>&1; then
		tail -n 30 "$1/guest-build.log" >&2
		log "the build for the guest (in the $SUITE build root) failed"
		return 2
	fi
	echo "$out"
}

accel() {
	if [ "${GDR_VM_KVM:-0}" = 1 ] && [ -w /dev/kvm ]; then
		echo "-accel kvm -accel tcg,thread=multi"
	else
		echo "-accel tcg,thread=multi"
	fi
}

run() {
	local dir share top rc extra bdir
	dir=$(prepare | tail -n 1)
	[ -f "$dir/ready" ] || { log "FAIL: no guest image"; return 2; }
	top=$(cd "$here/../.." && pwd)
	share=$(mktemp -d /tmp/gdr-vm-share.XXXXXX)
	# shellcheck disable=SC2064
	trap "rm -rf '$share'" EXIT
	printf '%s\n' "$top" > "$share/srcdir"
	extra=""
	if [ -n "${GDR_VM_BUILD:-}" ]; then
		bdir=$(cd "$GDR_VM_BUILD" && pwd)
		case "$bdir/" in
		"$top"/*) ;; # inside the tree: shared already
		*)
			printf '%s\n' "$bdir" > "$share/builddir"
			extra="-virtfs local,path=$bdir,mount_tag=build,security_model=none"
			;;
		esac
	fi
	pwd > "$share/cwd"
	{
		printf '%q ' "$@"
		echo
	} > "$share/cmd"
	rc=0
	# shellcheck disable=SC2046
	timeout "$TIMEOUT" qemu-system-x86_64 $(accel) -cpu max -smp 2 -m 2G \
		-nographic -no-reboot -nodefaults -serial stdio \
		-kernel "$dir/vmlinuz" -initrd "$dir/rootfs.cpio" \
		-append "console=ttyS0 rdinit=/init.sh panic=-1 quiet loglevel=3" \
		-virtfs "local,path=$share,mount_tag=share,security_model=none" \
		-virtfs "local,path=$top,mount_tag=src,security_model=none,readonly=on" \
		$extra > "$share/console" 2>&1 || rc=$?
	[ -f "$share/log" ] && cat "$share/log"
	if [ "$rc" = 124 ]; then
		tail -n 20 "$share/console" >&2
		log "FAIL: the guest did not finish within ${TIMEOUT}s (hang)"
		return 124
	fi
	if [ ! -f "$share/rc" ]; then
		tail -n 40 "$share/console" >&2
		log "FAIL: the guest ended without an exit status (crash or panic; qemu exit $rc)"
		return 3
	fi
	return "$(cat "$share/rc")"
}

check() {
	local rc=0
	host_deps || rc=$?
	if [ "$rc" != 0 ]; then
		echo "SKIP: the guest cannot be built here (the reason is above)"
		return 77
	fi
	if ! same_userland && [ "$(id -u)" != 0 ]; then
		echo "SKIP: this host is not Debian 12: the guest's programs are built in a Debian 12 chroot, which needs root"
		return 77
	fi
	return 0
}

cmd=${1:-}
shift || true
case "$cmd" in
prepare) prepare ;;
run) run "$@" ;;
check) check ;;
same-userland) same_userland ;;
guest-build) guest_build "${1:?build dir}" ;;
*) echo "usage: $0 prepare | run CMD [ARGS] | check | same-userland | guest-build DIR" >&2; exit 2 ;;
esac
