#!/bin/sh
# SPDX-License-Identifier: MIT
# GPUDIRECT_PATH and GPUDIRECT_DEBUG are ignored by setuid programs: the
# same binary, run as nobody, honours them without the setuid bit and
# ignores them with it. Needs root (to set the bit) and setpriv.
set -u
probe=$1
if [ "$(id -u)" != 0 ] || ! command -v setpriv > /dev/null; then
	echo "SKIP: needs root and setpriv to make and run a setuid binary"
	exit 77
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/gdr-setuid.XXXXXX")
trap 'rm -rf "$dir"' EXIT
chmod 755 "$dir"
cp "$probe" "$dir/probe"
chmod 755 "$dir/probe"
run() {
	env GPUDIRECT_PATH=bogus GPUDIRECT_DEBUG=1 \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$dir/probe"
}
plain=$(run)
chmod 4755 "$dir/probe"
suid=$(run)
echo "plain:"; echo "$plain" | sed 's/^/  /'
echo "setuid:"; echo "$suid" | sed 's/^/  /'
if ! echo "$plain" | grep -q "env_error=GPUDIRECT_PATH=bogus"; then
	echo "FAIL: without setuid the environment was not read"
	echo "0 passed, 1 failed"
	exit 1
fi
if echo "$suid" | grep -q "env_error=$" && echo "$suid" | grep -q "debug=0"; then
	echo "1 passed, 0 failed"
	exit 0
fi
if mount | grep -q " $(df --output=target "$dir" | tail -n 1) .*nosuid"; then
	echo "SKIP: $dir is on a nosuid mount"
	exit 77
fi
echo "FAIL: the setuid binary read GPUDIRECT_PATH/GPUDIRECT_DEBUG"
echo "0 passed, 1 failed"
exit 1
