#!/bin/bash
# SPDX-License-Identifier: MIT
# Soft-RoCE guest harness: a Debian kernel and a minimal Debian root file
# system with rdma-core, perftest and rdmacm-utils, booted under QEMU, with
# rxe on a dummy netdev at 10.11.0.1. The project tree is shared read-only
# at the same path as on the host, so a host build (Debian 12, the same
# libraries as the bookworm guest) runs there unchanged.
#
#   vm.sh prepare          build (or find) the cached kernel + rootfs
#   vm.sh run CMD [ARG..]  run CMD in the guest (cwd: the current directory);
#                          its output is printed, its exit status returned.
#                          GDR_VM_BUILD=DIR shares a build directory outside
#                          the tree at the same path too.
#   vm.sh check            exit 0 if QEMU can run here, 77 (with why) if not
#
# The cache lives in $GDR_VM_CACHE (default /var/cache/libgpudirect-vm),
# keyed on the guest package list, the kernel package and this script's
# recipe version. A guest that crashes or hangs ends the run with a failure
# (exit 3 no status / 124 timeout), never a pass.
set -euo pipefail

RECIPE=4
SUITE=bookworm
MIRROR=${GDR_VM_MIRROR:-http://deb.debian.org/debian}
GUEST_PKGS="rdma-core ibverbs-providers ibverbs-utils perftest rdmacm-utils iproute2 kmod libibverbs1 librdmacm1 procps strace"
MODULES="virtio_pci 9pnet_virtio 9p crc32_generic dummy rdma_rxe ib_uverbs rdma_ucm"
CACHE=${GDR_VM_CACHE:-/var/cache/libgpudirect-vm}
TIMEOUT=${GDR_VM_TIMEOUT:-900}
here=$(cd "$(dirname "$0")" && pwd)

log() { echo "vm: $*" >&2; }

host_deps() {
	local missing=""
	command -v qemu-system-x86_64 > /dev/null || missing="$missing qemu-system-x86"
	command -v debootstrap > /dev/null || missing="$missing debootstrap"
	command -v depmod > /dev/null || missing="$missing kmod"
	command -v cpio > /dev/null || missing="$missing cpio"
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" != 0 ]; then
		log "missing host packages:$missing (run as root or install them)"
		return 77
	fi
	log "installing$missing"
	apt-get update -qq
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing > /dev/null
}

kernel_pkg() {
	apt-cache depends linux-image-amd64 2> /dev/null |
		awk '/Depends: linux-image-[0-9]/ { print $2; exit }'
}

cache_dir() {
	local kpkg=$1
	local key
	# The init script is baked into the image: its content is in the key.
	key=$( (printf '%s\n' "$RECIPE" "$SUITE" "$GUEST_PKGS" "$MODULES" "$kpkg"
		cat "$here/guest-init.sh") | sha256sum | cut -c1-16)
	echo "$CACHE/$key"
}

prepare() {
	host_deps
	local kpkg dir tmp kver
	kpkg=$(kernel_pkg)
	if [ -z "$kpkg" ]; then
		apt-get update -qq
		kpkg=$(kernel_pkg)
	fi
	[ -n "$kpkg" ] || { log "cannot find the Debian kernel package (apt-cache depends linux-image-amd64)"; return 2; }
	dir=$(cache_dir "$kpkg")
	if [ -f "$dir/ready" ]; then
		echo "$dir"
		return 0
	fi
	log "building guest image in $dir ($kpkg; about two minutes)"
	rm -rf "$dir"
	mkdir -p "$dir"
	tmp="$dir/tmp"
	mkdir -p "$tmp"
	(cd "$tmp" && apt-get download -qq "$kpkg" > /dev/null)
	dpkg -x "$tmp"/"$kpkg"_*.deb "$tmp/kroot"
	kver=${kpkg#linux-image-}
	depmod -b "$tmp/kroot" "$kver"
	cp "$tmp/kroot/boot/vmlinuz-$kver" "$dir/vmlinuz"

	debootstrap --variant=minbase --include="${GUEST_PKGS// /,}" \
		"$SUITE" "$tmp/rootfs" "$MIRROR" > "$tmp/debootstrap.log" 2>&1 || {
		tail -n 30 "$tmp/debootstrap.log" >&2
		log "debootstrap failed"
		return 2
	}
	# The modules the guest loads, with what they depend on.
	local m f
	for m in $MODULES; do
		modprobe -d "$tmp/kroot" -S "$kver" --show-depends "$m" |
			awk '$1 == "insmod" { print $2 }'
	done | sort -u | while read -r f; do
		f=${f#"$tmp/kroot"}
		mkdir -p "$tmp/rootfs$(dirname "$f")"
		cp "$tmp/kroot$f" "$tmp/rootfs$f"
	done
	cp "$tmp/kroot/lib/modules/$kver"/modules.order "$tmp/kroot/lib/modules/$kver"/modules.builtin* \
		"$tmp/rootfs/lib/modules/$kver/" 2> /dev/null || true
	depmod -b "$tmp/rootfs" "$kver"
	install -m 755 "$here/guest-init.sh" "$tmp/rootfs/init.sh"
	rm -rf "$tmp/rootfs/var/cache/apt/archives"/*.deb "$tmp/rootfs/usr/share/doc" \
		"$tmp/rootfs/usr/share/man" "$tmp/rootfs/usr/share/locale"
	(cd "$tmp/rootfs" && find . | cpio -o -H newc --quiet) > "$dir/rootfs.cpio"
	echo "$kpkg" > "$dir/kernel"
	rm -rf "$tmp"
	touch "$dir/ready"
	log "guest image ready: $(du -sh "$dir" | cut -f1)"
	echo "$dir"
}

accel() {
	if [ "${GDR_VM_KVM:-0}" = 1 ] && [ -w /dev/kvm ]; then
		echo "-accel kvm -accel tcg,thread=multi"
	else
		echo "-accel tcg,thread=multi"
	fi
}

run() {
	local dir share top rc
	# The guest runs the host's build: both must be Debian 12 (bookworm).
	if ! grep -q '^VERSION_CODENAME=bookworm' /etc/os-release 2> /dev/null; then
		log "FAIL: the guest runs this machine's build, which needs a Debian 12 (bookworm) host;" \
			"this is $(. /etc/os-release 2> /dev/null; echo "${PRETTY_NAME:-unknown}")"
		return 2
	fi
	dir=$(prepare | tail -n 1)
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
	if ! host_deps; then
		echo "SKIP: QEMU and debootstrap are not installed and cannot be (not root)"
		return 77
	fi
	command -v qemu-system-x86_64 > /dev/null || { echo "SKIP: no qemu-system-x86_64"; return 77; }
	return 0
}

cmd=${1:-}
shift || true
case "$cmd" in
prepare) prepare ;;
run) run "$@" ;;
check) check ;;
*) echo "usage: $0 prepare | run CMD [ARGS] | check" >&2; exit 2 ;;
esac
