#!/bin/sh
# SPDX-License-Identifier: MIT
# libgpudirect-preload.so on an unmodified verbs program (reg-program) over
# a stand-in libibverbs.so.1 whose ibv_reg_mr refuses GPU memory as a kernel
# without nvidia-peermem does:
#   host  host memory goes to libibverbs as the program asked, bit for bit,
#         and CUDA is never loaded; GPUDIRECT_PRELOAD=0; gdr-run's usage
#   gpu   cuMemAlloc memory (whole and at an odd offset) gets a DMA-BUF MR
#         of the buffer's dma-buf through the preload, EFAULT without it;
#         managed and default-pool memory get what they get without it
# Exits 77 (gpu) without a CUDA device.
b=${1:?build dir}
mode=${2:-host}
dir=$b/tests/preload
prog=$dir/reg-program
run_sh=$b/tools/gdr-run/gdr-run
export GDR_PRELOAD_LIB="$b/lib/libgpudirect-preload.so"
# In a sanitizer build the preload is instrumented too: it may come
# before the ASan runtime in the library list.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() {
	echo "FAIL $1"
	for f in out err log; do [ -s "$tmp/$f" ] && sed "s/^/     $f: /" "$tmp/$f"; done
	fail=$((fail + 1))
}
# run [gdr-run] ARGS...: the program over the stand-in, its log in $tmp/log.
# Under the valgrind setup ($GDR_VALGRIND), the program runs under valgrind
# with the preload as gdr-run would load it.
run() {
	: > "$tmp/log"
	if [ -n "${GDR_VALGRIND:-}" ] && [ "$1" = "$run_sh" ]; then
		shift
		# shellcheck disable=SC2086
		STANDIN_LOG="$tmp/log" LD_LIBRARY_PATH="$dir:$b/lib" LD_PRELOAD="$GDR_PRELOAD_LIB" \
			$GDR_VALGRIND "$@" > "$tmp/out" 2> "$tmp/err"
		return
	fi
	# shellcheck disable=SC2086
	STANDIN_LOG="$tmp/log" LD_LIBRARY_PATH="$dir:$b/lib" ${GDR_VALGRIND:-} "$@" > "$tmp/out" 2> "$tmp/err"
}
has() { grep -q -- "$2" "$tmp/$1"; }

if [ "$mode" = host ]; then
	run "$prog" host 4096
	st=$?
	cp "$tmp/log" "$tmp/plain.log"
	if [ $st = 0 ] && has out "registered" && has log "^ibv_reg_mr .* access=0x7: ok" &&
		has out "libcuda.so.1 not loaded"; then
		ok "without the preload: the stand-in registers host memory"
	else
		bad "without the preload"
	fi
	run "$run_sh" "$prog" host 4096
	st=$?
	if [ $st = 0 ] && has out "registered" && has out "libcuda.so.1 not loaded" &&
		! has err "libgpudirect-preload" &&
		[ "$(sed 's/0x[0-9a-f]*//g' "$tmp/log")" = "$(sed 's/0x[0-9a-f]*//g' "$tmp/plain.log")" ] &&
		has log "^ibv_reg_mr .* access=0x7: ok"; then
		ok "gdr-run: host memory goes to libibverbs as asked (same call, access, iova), no CUDA loaded, nothing said"
	else
		bad "gdr-run on host memory"
	fi
	GPUDIRECT_DEBUG=1 run "$run_sh" "$prog" host 0
	if has out "registered" && ! has err "registered by libgpudirect" &&
		has err "ibv_reg_mr(.*): not CUDA device memory: passed to libibverbs"; then
		ok "GPUDIRECT_DEBUG=1: the preload saw the call and passed host memory on"
	else
		bad "GPUDIRECT_DEBUG=1 on host memory"
	fi
	GPUDIRECT_PRELOAD=0 run "$run_sh" "$prog" host 0
	if has out "registered" && has log "^ibv_reg_mr"; then
		ok "GPUDIRECT_PRELOAD=0: passed through"
	else
		bad "GPUDIRECT_PRELOAD=0"
	fi
	"$run_sh" > "$tmp/out" 2> "$tmp/err"
	st=$?
	if [ $st = 2 ] && has err "usage: gdr-run PROGRAM"; then ok "gdr-run without a program: usage, exit 2"; else bad "gdr-run usage"; fi
	GDR_PRELOAD_LIB=/nonexistent/libgpudirect-preload.so "$run_sh" true > "$tmp/out" 2> "$tmp/err"
	st=$?
	if [ $st = 127 ] && has err "is missing"; then ok "gdr-run without the library: exit 127, said"; else bad "gdr-run without the library"; fi
else
	run "$prog" cuda 0
	st=$?
	if [ $st = 77 ]; then
		echo "SKIP: $(cat "$tmp/out")"
		exit 77
	fi
	if [ $st = 1 ] && has out "ibv_reg_mr: errno 14" && has log "^ibv_reg_mr .*: EFAULT"; then
		ok "without the preload: cuMemAlloc memory is refused with EFAULT (no nvidia-peermem)"
	else
		bad "cuMemAlloc without the preload"
	fi
	for off in 0 0x1234; do
		run "$run_sh" "$prog" cuda $off
		st=$?
		want=$(printf '%d' $((off & 4095)))
		if [ $st = 0 ] && has out "registered" &&
			has log "^ibv_reg_dmabuf_mr fd offset=$want len=1048576 .*access=0x7 exp_name=nv_dmabuf" &&
			! has log "^ibv_reg_mr " &&
			awk '/^registered/ { split($2, a, "="); split($5, b, ")"); exit !(a[2] == b[1]) }' "$tmp/out"; then
			ok "gdr-run: cuMemAlloc memory at offset $off is a DMA-BUF MR of its dma-buf (offset $want, access as asked, addr the buffer's)"
		else
			bad "gdr-run on cuMemAlloc memory at offset $off"
		fi
	done
	for kind in managed pool; do
		run "$prog" $kind 0
		plain=$(grep -o '^registered\|errno [0-9]*' "$tmp/out")
		run "$run_sh" "$prog" $kind 0
		pre=$(grep -o '^registered\|errno [0-9]*' "$tmp/out")
		# The default pool is not RDMA capable: the library says so,
		# once; managed memory is not the library's: nothing said.
		if [ $kind = pool ]; then
			said=$(grep -c "^libgpudirect-preload: ibv_reg_mr: .*stream-ordered memory pool" "$tmp/err")
		else
			said=$(grep -c "^libgpudirect-preload" "$tmp/err"; true)
			[ "$said" = 0 ] && said=1 || said=0
		fi
		if [ -n "$plain" ] && [ "$plain" = "$pre" ] && ! has log "^ibv_reg_dmabuf_mr" &&
			[ "$said" = 1 ]; then
			ok "gdr-run: $kind memory gets what it gets without the preload ($plain)$([ $kind = pool ] && echo ', the reason said once')"
		else
			echo "     without: $plain; with: $pre"
			bad "gdr-run on $kind memory"
		fi
	done
fi
echo "preload ($mode): $pass passed, $fail failed"
[ $fail = 0 ]
