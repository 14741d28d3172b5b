#!/bin/sh
# SPDX-License-Identifier: MIT
# The vm suite, run inside the Soft-RoCE guest: sh guest-tests.sh BUILD_DIR
b=${1:?build dir}
pass=0
fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; sed 's/^/     /' /tmp/t.log; fail=$((fail + 1)); }
has() { grep -qF -- "$1" /tmp/t.log; }

echo "guest: $(uname -r), devices: $(ls /sys/class/infiniband | tr '\n' ' ')"

for t in host probe badinput threads cache dmabuf; do
	if timeout 120 "$b/tests/vm/test-vm" "$t" > /tmp/t.log 2>&1; then
		ok "test-vm $t: $(tail -n 1 /tmp/t.log)"
		grep -v '^[a-z]*: [0-9]* passed' /tmp/t.log | sed 's/^/     /'
	else
		bad "test-vm $t"
	fi
done

# A second rxe device, for this test only (the others see rxe0 alone).
ip link add rdma1 type dummy && ip addr add 10.12.0.1/24 dev rdma1 &&
	ip link set rdma1 up && rdma link add rxe1 type rxe netdev rdma1 ||
	echo "guest: could not add rxe1"
if timeout 120 "$b/tests/vm/test-vm" multi > /tmp/t.log 2>&1; then
	ok "test-vm multi: $(tail -n 1 /tmp/t.log)"
	grep -v '^[a-z]*: [0-9]* passed' /tmp/t.log | sed 's/^/     /'
else
	bad "test-vm multi"
fi
rdma link delete rxe1 2> /dev/null
ip link del rdma1 2> /dev/null

# The preload (gdr-run) on Debian's unmodified programs: ibverbs-utils'
# ibv_rc_pingpong with its buffer check, and perftest's ib_write_bw, both
# sides under gdr-run; GPUDIRECT_DEBUG shows the preload saw each
# registration and passed host memory on.
run="$b/tools/gdr-run/gdr-run"
pp() { # port, then the wrapper (or nothing)
	port=$1
	shift
	GPUDIRECT_DEBUG=1 timeout 120 "$@" ibv_rc_pingpong -d rxe0 -g 1 -c -n 200 -p "$port" > /tmp/pps.log 2>&1 &
	srv=$!
	sleep 1
	GPUDIRECT_DEBUG=1 timeout 120 "$@" ibv_rc_pingpong -d rxe0 -g 1 -c -n 200 -p "$port" 10.11.0.1 > /tmp/t.log 2>&1
	c=$?
	wait $srv
	s=$?
	cat /tmp/pps.log >> /tmp/t.log
	[ $c = 0 ] && [ $s = 0 ]
}
if pp 18510 && grep -q "bytes in .* seconds" /tmp/t.log && ! grep -q "libgpudirect-preload" /tmp/t.log; then
	ok "ibv_rc_pingpong -c on rxe0 without the preload"
else
	bad "ibv_rc_pingpong without the preload"
fi
if pp 18511 "$run" && grep -q "bytes in .* seconds" /tmp/t.log &&
	[ "$(grep -c 'ibv_reg_mr(.*): libcuda.so.1 is not loaded, so no device memory: passed to libibverbs' /tmp/t.log)" -ge 2 ] &&
	! grep -qi "corrupt\|failed" /tmp/t.log; then
	ok "gdr-run ibv_rc_pingpong -c on rxe0: both sides interposed, buffers checked"
else
	bad "gdr-run ibv_rc_pingpong"
fi
for w in "" "$run"; do
	GPUDIRECT_DEBUG=1 timeout 300 $w ib_write_bw -d rxe0 -x 1 -F -p 18520 -s 65536 -n 500 > /tmp/wbs.log 2>&1 &
	srv=$!
	sleep 1
	GPUDIRECT_DEBUG=1 timeout 300 $w ib_write_bw -d rxe0 -x 1 -F -p 18520 -s 65536 -n 500 10.11.0.1 > /tmp/t.log 2>&1
	c=$?
	wait $srv
	s=$?
	cat /tmp/wbs.log >> /tmp/t.log
	name="ib_write_bw 64 KiB on rxe0${w:+ under gdr-run}"
	if [ $c = 0 ] && [ $s = 0 ] && grep -q "^ 65536 *500 " /tmp/t.log &&
		{ [ -z "$w" ] || grep -q "libcuda.so.1 is not loaded, so no device memory: passed to libibverbs" /tmp/t.log; }; then
		ok "$name: $(awk '$1 == 65536 && NF >= 5 { print $4 " MB/s" }' /tmp/t.log | head -n 1)"
	else
		bad "$name"
	fi
done

"$b/examples/gdr-register-one" -d rxe0 > /tmp/t.log 2>&1
if [ $? = 0 ] && has "through host"; then ok "gdr-register-one -d rxe0"; else bad "gdr-register-one -d rxe0"; fi

"$b/tools/gdr-info/gdr-info" > /tmp/t.log 2>&1
st=$?
if [ $st = 1 ] && has "[rxe0]" && has "unsupported (ibv_reg_dmabuf_mr probe answered EOPNOTSUPP)" &&
	has "GPUDirect RDMA: NOT usable"; then
	ok "gdr-info on rxe0: exit 1, DMA-BUF unsupported"
else
	echo "     exit status $st"
	bad "gdr-info on rxe0"
fi
# Data Direct: rxe is no mlx5 device, so the path is ineligible; whether
# the guest's libmlx5 has the Data Direct calls (rdma-core 54 and later:
# MLX5_1.25) is its own fact, looked up here, not assumed.
"$b/tools/gdr-info/gdr-info" > /tmp/t.log 2>&1
mlx5=$(for d in /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib; do
	[ -e "$d/libmlx5.so.1" ] && echo "$d/libmlx5.so.1" && break
done)
if [ -n "$mlx5" ] && grep -qa 'MLX5_1.25' "$mlx5"; then
	want='^  mlx5dv_data_direct .*ok .*present (libmlx5.so.1 MLX5_1.25)'
	what="rdma-core with MLX5_1.25"
else
	want='^  mlx5dv_data_direct .*info .*absent (libmlx5.so.1 lacks the Data Direct calls of MLX5_1.25'
	what="rdma-core without MLX5_1.25"
fi
if grep -q '^  data_direct .*info .*no (not an mlx5 device)' /tmp/t.log && grep -q "$want" /tmp/t.log; then
	ok "gdr-info on rxe0: Data Direct ineligible (not mlx5; $what)"
else
	bad "gdr-info Data Direct items on rxe0"
fi
"$b/tools/gdr-info/gdr-info" --json > /tmp/t.log 2>&1
if has '"section": "rxe0", "key": "dmabuf_mr"' && has '"gpudirect_rdma_usable": false'; then
	ok "gdr-info --json on rxe0"
else
	bad "gdr-info --json on rxe0"
fi

"$b/tools/gdr-info/gdr-info" --self-test > /tmp/t.log 2>&1
st=$?
if [ $st = 1 ] && has "self-test rxe0 x host: ok, host path, 1048576 bytes written by RDMA and checked"; then
	ok "gdr-info --self-test on rxe0 (host memory: no GPU here)"
else
	echo "     exit status $st"
	bad "gdr-info --self-test on rxe0"
fi
# The same as NFD labels: a host-only node whose loopback passed.
mkdir -p /tmp/features.d
"$b/tools/gdr-info/gdr-info" --self-test --nfd /tmp/features.d/gpudirect > /tmp/t.log 2>&1
st=$?
cat /tmp/features.d/gpudirect >> /tmp/t.log 2>&1
l() { grep -qx "feature.node.kubernetes.io/$1" /tmp/features.d/gpudirect; }
if [ $st = 1 ] && l gpudirect-host-only=true && l gpudirect-gpu.count=0 &&
	l gpudirect-rdma.usable=false && l gpudirect-selftest=pass &&
	l gpudirect-host.rxe0.selftest=pass &&
	grep -q '^# +expiry-time=' /tmp/features.d/gpudirect &&
	[ -z "$(ls -A /tmp/features.d | grep '^\.')" ]; then
	ok "gdr-info --self-test --nfd on rxe0: host-only, loopback passed ($(grep -c '^feature' /tmp/features.d/gpudirect) labels)"
else
	echo "     exit status $st"
	bad "gdr-info --self-test --nfd"
fi
# Exit 1 (not usable) is expected from both; the reports must match.
"$b/tools/gdr-info/gdr-info" --capture /tmp/snap.tar > /tmp/live.txt 2> /tmp/t.log
"$b/tools/gdr-info/gdr-info" --from /tmp/snap.tar > /tmp/replay.txt 2>> /tmp/t.log
tar -tf /tmp/snap.tar > /tmp/snap.list 2>> /tmp/t.log
# The snapshot holds real sysfs files, not only the answers: rxe0's netdev.
if diff /tmp/live.txt /tmp/replay.txt >> /tmp/t.log 2>&1 && [ -s /tmp/replay.txt ] &&
	grep -q answers.json /tmp/snap.list &&
	grep -q 'sys/.*/infiniband/rxe0/ports/1/gid_attrs/ndevs/0$' /tmp/snap.list &&
	grep -q 'netdev .* rdma0' /tmp/replay.txt; then
	ok "gdr-info --capture on rxe0, then --from: the same report ($(grep -vc '/$' /tmp/snap.list) entries, sysfs included)"
else
	cat /tmp/snap.list >> /tmp/t.log
	bad "gdr-info --capture/--from round trip"
fi

wbw() {
	# Each run takes seconds; a server whose client died (a broken build)
	# must not hold the suite for long.
	timeout 90 "$b/examples/gdr-write-bw" -d rxe0 "$@" > /tmp/srv.log 2>&1 &
	srv=$!
	sleep 1
	timeout 90 "$b/examples/gdr-write-bw" -d rxe0 "$@" 10.11.0.1 > /tmp/t.log 2>&1
	st=$?
	wait $srv
	sst=$?
	cat /tmp/srv.log >> /tmp/t.log
	[ $st = 0 ] && [ $sst = 0 ] && has "Data check      : passed"
}
if wbw -s 65536 -n 500; then ok "gdr-write-bw 64 KiB x 500, data checked"; else bad "gdr-write-bw 64 KiB"; fi
if wbw -a -n 20 -p 18516; then ok "gdr-write-bw -a sweep, data checked at every size"; else bad "gdr-write-bw -a"; fi
grep -E '^ [0-9]' /tmp/t.log | head -n 23 | sed 's/^/     /'
# --cache: every write takes its MR from the cache; one registration in all.
if wbw -s 65536 -n 500 -p 18518 --cache && has "Cache           : 500 hits, 1 misses, 1 entries"; then
	ok "gdr-write-bw --cache 64 KiB x 500: data checked, 500 hits, 1 miss"
else
	bad "gdr-write-bw --cache"
fi

# Steady state: gdr_register makes the same system calls as ibv_reg_mr.
if command -v strace > /dev/null; then
	for mode in ibv gdr; do
		strace -f -o /tmp/st.$mode "$b/tests/vm/vm-syscalls" $mode 100 > /dev/null 2>&1
		awk '/close\(-1\)/ { m++; next } m == 1 { n++ } END { print n + 0 }' /tmp/st.$mode > /tmp/n.$mode
	done
	awk '/close\(-1\)/ { m++; next } m == 1' /tmp/st.gdr > /tmp/t.log
	if [ "$(cat /tmp/n.gdr)" = "$(cat /tmp/n.ibv)" ] && [ "$(cat /tmp/n.ibv)" -gt 0 ]; then
		ok "100 gdr_register+deregister: $(cat /tmp/n.gdr) system calls, as many as ibv_reg_mr's"
	else
		echo "     gdr $(cat /tmp/n.gdr), ibv $(cat /tmp/n.ibv) system calls" >> /tmp/t.log
		bad "gdr_register makes system calls of its own"
	fi
else
	echo "strace is missing from the guest image (vm.sh GUEST_PKGS)" > /tmp/t.log
	bad "system call count"
fi

# Memory another process owns, served as gdr-share's owner serves it: the
# client receives the descriptor and fd before it connects, and rxe
# refuses the dma-buf MR with its real answer. (No NIC here takes a
# dma-buf; where one does, a server and this command move the owner's
# memory: docs/field-validation.md.)
# import_wbw SIZE: one owner of a 1 MiB dma-buf, and gdr-write-bw -s SIZE
# importing it; $st and $ost their exit statuses, /tmp/t.log both outputs.
import_wbw() {
	rm -f /tmp/own.sock
	timeout 60 "$b/tests/vm/test-vm" serve /tmp/own.sock > /tmp/own.log 2>&1 &
	own=$!
	i=0
	# The line comes after listen(): a connect then is not refused.
	while ! grep -q "^serve: a 1 MiB dma-buf" /tmp/own.log && [ $i -lt 100 ] && kill -0 $own 2> /dev/null; do
		sleep 0.1
		i=$((i + 1))
	done
	timeout 60 "$b/examples/gdr-write-bw" -d rxe0 -p 18519 -s "$1" -n 10 --mem=import:/tmp/own.sock 10.11.0.1 > /tmp/t.log 2>&1
	st=$?
	wait $own
	ost=$?
	cat /tmp/own.log >> /tmp/t.log
}
import_wbw 65536
if [ $ost = 77 ]; then
	echo "skip gdr-write-bw --mem=import: no dma-buf exporter in this guest (neither udmabuf nor vgem)"
elif [ $st = 1 ] && [ $ost = 0 ] && has "Imported        : 1048576 bytes of GPU 0000:00:00.0" &&
	has "gdr_import_register:" && has "does not support DMA-BUF memory regions"; then
	ok "gdr-write-bw --mem=import: the owner's descriptor and fd received, rxe's EOPNOTSUPP said in the library's words"
else
	bad "gdr-write-bw --mem=import"
fi
# -s up to the owner's buffer is taken, one byte more is refused before
# any registration.
if [ $ost != 77 ]; then
	import_wbw 1048576
	if [ $st = 1 ] && has "Imported        : 1048576 bytes" && has "does not support DMA-BUF memory regions"; then
		ok "gdr-write-bw --mem=import -s 1048576 of a 1 MiB buffer: taken (then rxe's EOPNOTSUPP)"
	else
		bad "gdr-write-bw --mem=import -s equal to the buffer"
	fi
	import_wbw 1048577
	if [ $st = 1 ] && has "fewer than -s 1048577: give -s at most 1048576" && ! has "Imported"; then
		ok "gdr-write-bw --mem=import -s 1048577 of a 1 MiB buffer: refused, exit 1"
	else
		bad "gdr-write-bw --mem=import -s past the buffer"
	fi
fi

# The Python package (python/): host memory registered from Python, its
# keys used by a real RDMA write from a C peer, and the rest of
# test-python.py. Python is in the guest image (vm.sh GUEST_PKGS).
top=$(cd "$(dirname "$0")/../.." && pwd)
if command -v python3 > /dev/null; then
	if PYTHONDONTWRITEBYTECODE=1 timeout 300 python3 "$top/tests/vm/test-python.py" "$b" > /tmp/t.log 2>&1; then
		ok "Python on rxe0: $(tail -n 1 /tmp/t.log)"
		grep -v '^python: ' /tmp/t.log | sed 's/^/     /'
	else
		bad "Python on rxe0"
	fi
else
	echo "python3 is missing from the guest image (vm.sh GUEST_PKGS)" > /tmp/t.log
	bad "Python on rxe0"
fi

timeout 60 "$b/examples/gdr-write-bw" --mem cuda -p 18517 > /tmp/t.log 2>&1
if [ $? != 0 ] && has "no CUDA driver on this machine"; then
	ok "gdr-write-bw --mem cuda without a GPU: clear error"
else
	bad "gdr-write-bw --mem cuda without a GPU"
fi

echo "vm: $pass passed, $fail failed"
[ "$fail" = 0 ]
