#!/bin/sh
# SPDX-License-Identifier: MIT
# A netdev's addresses and the host network under --host-root, on the
# kernel's own namespaces (lib/os/netdev.c through netdev-probe):
#   - in a network namespace of its own with veth ends "eth" and "eth0",
#     each name gets its own addresses, never a prefix's, and a name that
#     is not there is ENODEV;
#   - a ROOT whose proc is a procfs of the pid namespace above this one:
#     its pid 1 is that namespace's init, in this network namespace (1)
#     or not (0, after unshare -n); a procfs of this process's own pid
#     namespace (not the initial one) proves nothing (0).
# Needs root, unshare and ip (iproute2) with veth.
set -u
probe=$1
if [ "$(id -u)" != 0 ] || ! command -v unshare > /dev/null ||
	! command -v ip > /dev/null; then
	echo "SKIP: needs root, unshare and ip"
	exit 77
fi
if ! unshare -n sh -c 'ip link add eth type veth peer name eth0' 2> /dev/null; then
	echo "SKIP: no network namespace with veth here"
	exit 77
fi
fail=0
want() { # name, wanted, got
	if [ "$2" = "$3" ]; then
		echo "ok   $1: $3"
	else
		echo "FAIL $1: got '$3', want '$2'"
		fail=1
	fi
}
got=$(unshare -n sh -c '
	ip link add eth type veth peer name eth0 &&
	ip addr add 10.1.0.1/24 dev eth && ip addr add 10.2.0.1/24 dev eth0 &&
	"$0" addrs eth && "$0" addrs eth0 && "$0" addrs et' "$probe" 2>&1)
want "addresses of eth" "0 10.1.0.1" "$(echo "$got" | sed -n 1p)"
want "addresses of eth0" "0 10.2.0.1" "$(echo "$got" | sed -n 2p)"
want "addresses of et (not there)" "19 " "$(echo "$got" | sed -n 3p)"
# getifaddrs failing (no fd left for its netlink socket): its errno
# (EMFILE), never "no addresses".
want "getifaddrs without an fd to open" "24" "$("$probe" nofd lo)"
# getifaddrs' list is freed: 100 more calls keep no heap (no tcache, so
# that what is freed is counted free).
got=$(GLIBC_TUNABLES=glibc.malloc.tcache_count=0 "$probe" leak lo)
want "heap kept by 100 calls" "0" "$got"
# A tun device has no link-level address: getifaddrs lists it with none.
if unshare -n sh -c 'ip tuntap add tun0 mode tun' 2> /dev/null; then
	got=$(unshare -n sh -c 'ip tuntap add tun0 mode tun && "$0" addrs tun0' \
		"$probe" 2>&1)
	want "addresses of tun0 (an entry without an address)" "0 " "$got"
else
	echo "not tried: a tun device (no /dev/net/tun here)"
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/gdr-netdev.XXXXXX")
trap 'rm -rf "$dir"' EXIT
got=$(unshare -m -p -f --mount-proc sh -c '
	mkdir -p "$1/proc" && mount -t proc proc "$1/proc" &&
	"$0" host "$1" && unshare -p -f "$0" host "$1" &&
	unshare -p -f -n "$0" host "$1"' "$probe" "$dir" 2>&1)
want "ROOT's proc is this pid namespace's" "0" "$(echo "$got" | sed -n 1p)"
want "ROOT's proc is the pid namespace above, same network" "1" \
	"$(echo "$got" | sed -n 2p)"
want "ROOT's proc is the pid namespace above, another network" "0" \
	"$(echo "$got" | sed -n 3p)"
# A hostPID process (the initial pid namespace, 0xEFFFFFFC) with a ROOT
# whose proc is that namespace's: pid 1 is the host's init. Only where
# pid 1's namespaces can be looked at (CAP_SYS_PTRACE over it).
if [ "$(stat -L -c %i /proc/self/ns/pid)" = 4026531836 ] &&
	stat -L /proc/1/ns/net > /dev/null 2>&1; then
	got=$(unshare -m sh -c 'mkdir -p "$1/proc" && mount -t proc proc "$1/proc" &&
		"$0" host "$1"' "$probe" "$dir" 2>&1)
	want "ROOT's proc is the initial pid namespace's (hostPID)" "1" "$got"
else
	echo "not tried: the hostPID case (not in the initial pid namespace, or pid 1's namespaces are not ours to look at)"
fi
exit $fail
