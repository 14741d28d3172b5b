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

NP=${BENCH_PRELOAD_ITERS:-500}
echo "bench: ib_write_bw under gdr-run (both sides) against the same without it,"
echo "bench: alternating, ${BENCH_PRELOAD_ROUNDS:-7} rounds of $NP iterations: the preload's cost on host memory"
run="$b/tools/gdr-run/gdr-run"
for s in 65536; do
	rs=""
	i=0
	while [ $i -lt ${BENCH_PRELOAD_ROUNDS:-7} ]; do
		perf -s $s -n $NP
		p=$(avg_of $s /tmp/pc.log)
		port=$((port + 1))
		timeout 600 "$run" ib_write_bw -d rxe0 -x 1 -F -p $port -s $s -n $NP > /tmp/ps.log 2>&1 &
		srv=$!
		sleep 1
		timeout 600 "$run" ib_write_bw -d rxe0 -x 1 -F -p $port -s $s -n $NP 10.11.0.1 > /tmp/pc.log 2>&1
		wait $srv
		g=$(avg_of $s /tmp/pc.log)
		rs="$rs $(awk -v p="$p" -v g="$g" 'BEGIN { printf "%.4f", (p > 0 ? g / p : 0) }')"
		i=$((i + 1))
	done
	echo "$rs" | tr ' ' '\n' | sort -n | awk -v s=$s 'NF { v[n++] = $1 } END {
		printf "bench: %-10s gdr-run/plain ib_write_bw: median %.4f (quartiles %.4f..%.4f) of %d rounds (goal >= 0.98)\n",
			s, v[int(n / 2)], v[int(n / 4)], v[int(3 * n / 4)], n }'
done

# The registration itself on a real kernel: ibv_reg_mr + ibv_dereg_mr of
# 1 MiB of host memory under gdr-run against the same without it.
sh "$(dirname "$0")/../preload/bench-preload.sh" "$b" "${BENCH_PRELOAD_ROUNDS:-11}" \
	"${BENCH_PRELOAD_CALLS:-200}"

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

R=${BENCH_CACHE_ROUNDS:-7}
echo "bench: gdr-write-bw --cache (a gdr_cache_get/put per write) against the"
echo "bench: pre-registered buffer, $R rounds alternating which runs first"
for spec in "65536 1000" "1048576 100"; do
	set -- $spec
	: > /tmp/ratios
	r=0
	while [ $r -lt $R ]; do
		if [ $((r % 2)) = 0 ]; then order="pre cache"; else order="cache pre"; fi
		for m in $order; do
			if [ $m = cache ]; then ours -s $1 -n $2 --cache; else ours -s $1 -n $2; fi
			avg_of $1 /tmp/gc.log > /tmp/bw.$m
		done
		echo "$(cat /tmp/bw.cache) $(cat /tmp/bw.pre)" >> /tmp/ratios
		r=$((r + 1))
	done
	awk '{ print $1 / $2, $1, $2 }' /tmp/ratios | sort -g | awk -v s=$1 -v n=$2 '
		{ r[NR] = $1; c[NR] = $2; p[NR] = $3 }
		END {
			q1 = r[int((NR + 3) / 4)]; med = r[int((NR + 1) / 2)]; q3 = r[int((3 * NR + 3) / 4)]
			printf "bench: cache %-8s x %-5s median ratio cache/pre %.3f (quartiles %.3f .. %.3f) over %d rounds\n", s, n, med, q1, q3, NR
			for (i = 1; i <= NR; i++) printf "bench:   round: cache %s MB/s, pre-registered %s MB/s\n", c[i], p[i]
		}'
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
