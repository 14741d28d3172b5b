#!/bin/sh
# SPDX-License-Identifier: MIT
# meson's vm test: boot the guest and run guest-tests.sh (or bench-vm.sh)
# against BUILD_DIR. Skips (77) only where QEMU cannot run at all.
set -u
build=$1
script=${2:-guest-tests.sh}
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
bash "$here/vm.sh" check
rc=$?
[ "$rc" = 0 ] || exit "$rc"
case "$build" in /*) ;; *) build=$(pwd)/$build ;; esac
# A build directory outside the tree is shared into the guest as well.
export GDR_VM_BUILD="$build"
exec bash "$here/vm.sh" run sh "$here/$script" "$build"
