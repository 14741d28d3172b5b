#!/bin/sh
# SPDX-License-Identifier: MIT
# The preload's cost, alternating, one process per round: host memory
# through gdr-run against the same without it, and (with a GPU) device
# memory through gdr-run against gdr_register called directly; the
# median and quartiles of the per-round ratios (goal <= 1.02 each).
#   sh bench-preload.sh BUILD_DIR [ROUNDS] [CALLS]
b=${1:?build dir}
rounds=${2:-11}
calls=${3:-20000}
dir=$b/tests/preload
# the stand-in libibverbs.so.1
fakes=$b/tests/fakes/libibverbs
run=$b/tools/gdr-run/gdr-run
export GDR_PRELOAD_LIB="$b/lib/libgpudirect-preload.so"
# The stand-in unless a real device is there (on rxe: the real thing).
if [ ! -d /sys/class/infiniband ] || [ -z "$(ls /sys/class/infiniband 2> /dev/null)" ]; then
	export LD_LIBRARY_PATH="$fakes:$b/lib"
	where="the stand-in libibverbs (no RDMA device)"
else
	export LD_LIBRARY_PATH="$b/lib"
	where="$(ls /sys/class/infiniband | head -n 1)"
fi
stats() { # label: ratios on stdin
	sort -n | awk -v l="$1" 'NF { v[n++] = $1 } END {
		if (!n) { printf "bench: %s: no rounds\n", l; exit }
		printf "bench: %s: median %.4f (quartiles %.4f..%.4f) of %d rounds\n",
			l, v[int(n / 2)], v[int(n / 4)], v[int(3 * n / 4)], n }'
}
pair() { # label, then two commands' ns: ratio of the second to the first
	i=0
	while [ $i -lt "$rounds" ]; do
		if [ $((i % 2)) = 0 ]; then
			a=$(eval "$2") || return 1
			c=$(eval "$3") || return 1
		else
			c=$(eval "$3") || return 1
			a=$(eval "$2") || return 1
		fi
		echo "$a $c" >> /tmp/bench-preload.$$
		awk -v a="$a" -v c="$c" 'BEGIN { printf "%.4f\n", c / a }'
		i=$((i + 1))
	done | stats "$1"
	awk '{ a += $1; c += $2; n++ } END { if (n) printf "bench:   (means: %.0f ns without, %.0f ns with)\n", a / n, c / n }' /tmp/bench-preload.$$
	rm -f /tmp/bench-preload.$$
}
echo "bench: ibv_reg_mr + ibv_dereg_mr of 1 MiB, $calls pairs a round, on $where"
pair "host memory, gdr-run / plain" "$dir/bench-preload host $calls" "$run $dir/bench-preload host $calls"
if "$dir/bench-preload" direct 1 > /dev/null 2>&1; then
	pair "cuMemAlloc memory, gdr-run ibv_reg_mr / gdr_register" "$dir/bench-preload direct $calls" "$run $dir/bench-preload cuda $calls"
else
	echo "bench: no CUDA device memory here: the device comparison needs the GPU machine"
fi
