#!/bin/sh
# SPDX-License-Identifier: MIT
# gdr-register-one --mem cuda on the real driver, over the stand-in
# libibverbs (no NIC here): device memory goes through DMA-BUF, and the
# line printed says so from the decision record (the memory type
# cuda-device, the path dmabuf, the keys of the MR the stand-in made),
# every path's line below it. Exits 77 without a CUDA device.
b=${1:?build dir}
one=$b/examples/gdr-register-one
log=$(mktemp)
trap 'rm -f "$log"' EXIT
out=$(LD_LIBRARY_PATH="$b/tests/fakes/libibverbs:$b/lib" STANDIN_LOG="$log" \
	STANDIN_KEYS=1 timeout 60 "$one" --mem cuda -s 65536 2>&1)
st=$?
printf '%s\n' "$out"
if [ $st != 0 ] && printf '%s\n' "$out" |
	grep -q "no CUDA driver\|is not usable\|lacks a basic entry point"; then
	echo "SKIP: $(printf '%s\n' "$out" | head -n 1)"
	exit 77
fi
fail=0
keys=$(sed -n 's/.*mr lkey=\(0x[0-9a-f]*\) rkey=\(0x[0-9a-f]*\).*/lkey \1 rkey \2/p' "$log" | head -n 1)
want="registered 65536 bytes of cuda-device memory on standin0 through dmabuf: $keys addr 0x"
if [ $st = 0 ] && [ -n "$keys" ] && printf '%s\n' "$out" | grep -qF "$want" &&
	printf '%s\n' "$out" | grep -q "^  dmabuf   used" &&
	grep -q "^ibv_reg_dmabuf_mr .*len=65536 " "$log"; then
	echo "ok   gdr-register-one --mem cuda: cuda-device memory through dmabuf, the MR's keys, exit 0"
else
	echo "FAIL gdr-register-one --mem cuda (exit $st; want \"$want\")"
	sed 's/^/     stand-in: /' "$log"
	fail=1
fi
exit $fail
