#!/bin/sh
# SPDX-License-Identifier: MIT
# Side by side in the Soft-RoCE guest, in one run: perftest's ib_write_bw
# and gdr-write-bw on the same rxe link at the same sizes, the ratio of
# their average bandwidths per size; then the system calls of a steady-state
# gdr_register against a bare ibv_reg_mr of the same buffer (strace).
#   sh bench-vm.sh BUILD_DIR
b=${1:?build dir}
N=${BENCH_ITERS:-2000}
NA=${BENCH_SWEEP_ITERS:-50}
port=18600

avg_of() { # the BW average column of the row for size $1 in file $2
	awk -v s="$1" '$1 == s && NF >= 5 { print $4; exit }' "$2"
}

perf() { # ib_write_bw args...
	port=$((port + 1))
	timeout 600 ib_write_bw -d rxe0 -x 1 -F -p $port "$@" > /tmp/ps.log 2>&1 &
	srv=$!
	sleep 1
	timeout 600 ib_write_bw -d rxe0 -x 1 -F -p $port "$@" 10.11.0.1 > /tmp/pc.log 2>&1
	wait $srv
}
ours() {
	port=$((port + 1))
	timeout 600 "$b/examples/gdr-write-bw" -d rxe0 -p $port "$@" > /tmp/gs.log 2>&1 &
	srv=$!
	sleep 1
	timeout 600 "$b/examples/gdr-write-bw" -d rxe0 -p $port "$@" 10.11.0.1 > /tmp/gc.log 2>&1
	wait $srv
	grep -q "Data check      : passed" /tmp/gc.log || echo "DATA CHECK FAILED" >&2
}

echo "bench: Soft-RoCE rxe0 on $(uname -r), same guest, same link, one run"
echo "bench: fixed sizes, $N iterations each, tx depth 128"
printf 'bench: %-10s %14s %14s %8s\n' bytes "ib_write_bw" "gdr-write-bw" ratio
for s in 65536 262144 1048576; do
	perf -s $s -n $N
	ours -s $s -n $N
	p=$(avg_of $s /tmp/pc.log)
	g=$(avg_of $s /tmp/gc.log)
	awk -v s=$s -v p="$p" -v g="$g" 'BEGIN { printf "bench: %-10s %9s MB/s %9s MB/s %8.3f\n", s, p, g, (p > 0 ? g / p : 0) }'
done

echo "bench: -a sweep, $NA iterations per size"
perf -a -n $NA
cp /tmp/pc.log /tmp/pa.log
ours -a -n $NA
printf 'bench: %-10s %14s %14s %8s\n' bytes "ib_write_bw" "gdr-write-bw" ratio
s=2
while [ $s -le 8388608 ]; do
	p=$(avg_of $s /tmp/pa.log)
	g=$(avg_of $s /tmp/gc.log)
	awk -v s=$s -v p="$p" -v g="$g" 'BEGIN { printf "bench: %-10s %9s MB/s %9s MB/s %8.3f\n", s, p, g, (p > 0 ? g / p : 0) }'
	s=$((s * 2))
done

echo "bench: system calls per steady-state register+deregister (strace -f)"
for mode in ibv gdr; do
	strace -f -o /tmp/st.$mode "$b/tests/vm/vm-syscalls" $mode 100 || echo "vm-syscalls $mode failed"
	awk '/close\(-1\)/ { m++; next } m == 1 { n++ } END { printf "%d\n", n }' /tmp/st.$mode > /tmp/n.$mode
	echo "bench:   $mode: $(cat /tmp/n.$mode) calls for 100 pairs; kinds:" \
		"$(awk '/close\(-1\)/ { m++; next } m == 1 { sub(/\(.*/, "", $2); print $2 }' /tmp/st.$mode | sort | uniq -c | tr '\n' ' ')"
done
ibv=$(cat /tmp/n.ibv)
gdr=$(cat /tmp/n.gdr)
echo "bench: gdr_register beyond the registration itself: $(( (gdr - ibv) / 100 )) system calls per call (goal 0)"
