#!/bin/sh
# SPDX-License-Identifier: MIT
# meson's vm test: boot the guest and run guest-tests.sh (or bench-vm.sh)
# against BUILD_DIR, or, on a host whose userland is not the guest's,
# against the same programs built in the guest's release (vm.sh
# guest-build). Skips (77) only where the guest cannot run at all, saying
# why.
set -u
build=$1
script=${2:-guest-tests.sh}
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
bash "$here/vm.sh" check
rc=$?
[ "$rc" = 0 ] || exit "$rc"
case "$build" in /*) ;; *) build=$(pwd)/$build ;; esac
if ! bash "$here/vm.sh" same-userland; then
	echo "vm: this host is $(. /etc/os-release 2> /dev/null; echo "${PRETTY_NAME:-not Debian 12}"): building the guest's programs in a Debian 12 root"
	guest=$(bash "$here/vm.sh" guest-build "$build") || exit $?
	build=$guest
fi
# A build directory outside the tree is shared into the guest as well.
export GDR_VM_BUILD="$build"
exec bash "$here/vm.sh" run sh "$here/$script" "$build"
