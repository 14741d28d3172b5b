#!/bin/sh
# SPDX-License-Identifier: MIT
# gdr-share's owner on the real driver, as gdr-write-bw --mem=import uses
# it: --fill writes gdr-write-bw's bytes before the export and an importer
# receives it; --check poisons the buffer first, so that, with no writer
# (no NIC here), the check at the end fails, as it must; --fill with
# --check (a check of nothing) is refused. The owner removes its socket
# on SIGINT and SIGTERM; its default buffer is 1 MiB; an importer's -d
# names the device it registers on (the stand-in libibverbs with two), and
# gdr-write-bw --mem=import takes -s up to the owner's buffer, not past it;
# --pcie serves the PCIe-mapped dma-buf too, or refuses.
# Exits 77 without a CUDA device.
# The positive check needs a NIC: docs/field-validation.md.
b=${1:?build dir}
share=$b/examples/gdr-share
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() {
	echo "FAIL $1"
	for f in own imp; do [ -s "$tmp/$f" ] && sed "s/^/     $f: /" "$tmp/$f"; done
	fail=$((fail + 1))
}
# serve OPTION [SIGNAL]: a 64 KiB owner with OPTION ("" for none,
# "default": no option and the default size); one importer once it
# listens ($IMPORTER, a shell command given the socket as $1, else
# gdr-share import); then SIGNAL (INT). Its exit status; the importer's
# in $imp.
serve() {
	rm -f "$tmp/sock"
	imp=-1
	size="-s 65536"
	opt=$1
	if [ "$opt" = default ]; then
		size=""
		opt=""
	fi
	# shellcheck disable=SC2086 # $size: "-s N" or none; $opt: one word or none
	timeout 60 "$share" owner "$tmp/sock" $size $opt > "$tmp/own" 2>&1 &
	own=$!
	i=0
	# "serving on" comes after listen(): a connect then is not refused.
	while ! grep -q "serving on" "$tmp/own" && [ $i -lt 300 ] && kill -0 $own 2> /dev/null; do
		sleep 0.1
		i=$((i + 1))
	done
	if grep -q "serving on" "$tmp/own"; then
		if [ -n "${IMPORTER:-}" ]; then
			timeout 30 sh -c "$IMPORTER" sh "$tmp/sock" > "$tmp/imp" 2>&1
		else
			timeout 30 "$share" import "$tmp/sock" > "$tmp/imp" 2>&1
		fi
		imp=$?
	fi
	kill -"${2:-INT}" $own 2> /dev/null
	wait $own
}
serve --fill=65536
st=$?
if [ $st != 0 ] && grep -q "no CUDA\|not usable\|cuMemAlloc" "$tmp/own"; then
	echo "SKIP: $(head -n 1 "$tmp/own")"
	exit 77
fi
if [ $st = 0 ] && { [ "$imp" = 0 ] || [ "$imp" = 77 ]; } && [ ! -e "$tmp/sock" ] &&
	grep -q "^import: received 65536 bytes" "$tmp/imp" &&
	grep -q "owner: handed the export to an importer" "$tmp/own"; then
	ok "owner --fill: the filled buffer's export received by an importer (exit $imp); the owner stopped on SIGINT, exit 0, its socket removed"
else
	bad "owner --fill"
fi
serve --check=65536
st=$?
if [ $st = 1 ] && grep -q "^import: received 65536 bytes" "$tmp/imp" &&
	grep -q "owner: data check FAILED at byte 0 of 65536" "$tmp/own"; then
	ok "owner --check with no writer: the poisoned bytes fail the check at byte 0, exit 1"
else
	bad "owner --check without a writer"
fi
# The socket is removed at the end, on SIGINT as on SIGTERM (and the
# owner exits 0); the default buffer is 1 MiB.
serve "" TERM
st=$?
if [ $st = 0 ] && [ "$imp" != -1 ] && [ ! -e "$tmp/sock" ]; then
	ok "owner stopped by SIGTERM: exit 0, its socket removed"
else
	bad "owner stopped by SIGTERM (exit $st, socket $(ls "$tmp/sock" 2>&1))"
fi
serve default
st=$?
if [ $st = 0 ] && [ ! -e "$tmp/sock" ] && grep -q "^import: received 1048576 bytes" "$tmp/imp"; then
	ok "owner with no -s: 1 MiB exported; stopped by SIGINT, its socket removed"
else
	bad "owner with the default size"
fi
# import -d names the device: over the stand-in libibverbs with two
# devices, the second one is the one registered on (or, where the
# stand-in cannot take this dma-buf, named in the refusal)
IMPORTER="LD_LIBRARY_PATH='$b/tests/fakes/libibverbs:$b/lib' STANDIN_DEVICES=2 '$share' import \"\$1\" -d standin1"
serve ""
unset IMPORTER
if grep -q "standin1" "$tmp/imp" && ! grep -q "standin0" "$tmp/imp"; then
	ok "import -d standin1: registered on standin1, not the first device"
else
	bad "import -d standin1"
fi
IMPORTER="LD_LIBRARY_PATH='$b/tests/fakes/libibverbs:$b/lib' '$share' import \"\$1\" -d nosuch0"
serve ""
unset IMPORTER
if [ "$imp" = 77 ] && grep -q "no RDMA device nosuch0 here" "$tmp/imp"; then
	ok "import -d nosuch0: received, not registered, exit 77"
else
	bad "import -d nosuch0 (exit $imp)"
fi
# --pcie asks for the PCIe-mapped dma-buf beside the plain one: both are
# served, or, on a GPU that cannot export it (the lent H100 answers
# CUDA_ERROR_NOT_SUPPORTED), the owner refuses with the reason, never
# serving the plain one alone as if asked for nothing.
serve --pcie
st=$?
if grep -q "as 2 dma-bufs (plain, PCIe-mapped)" "$tmp/own" &&
	grep -q "^import: received 65536 bytes.*, 2 dma-bufs of" "$tmp/imp"; then
	ok "owner --pcie: two dma-bufs (plain, PCIe-mapped) served"
elif [ $st = 1 ] && [ "$imp" = -1 ] && grep -q "PCIe" "$tmp/own" &&
	! grep -q "serving on" "$tmp/own"; then
	ok "owner --pcie on a GPU without the PCIe-mapped export: refused, exit 1: $(head -n 1 "$tmp/own")"
else
	bad "owner --pcie (exit $st)"
fi
# gdr-write-bw --mem=import takes -s up to the owner's buffer, not past it
wbw=$b/examples/gdr-write-bw
if [ -x "$wbw" ]; then
	IMPORTER="'$wbw' --mem=import:\"\$1\" -s 65536 -n 1"
	serve ""
	if grep -q "Imported *: 65536 bytes" "$tmp/imp"; then
		ok "gdr-write-bw --mem=import -s 65536 of a 65536-byte buffer: taken"
	else
		bad "gdr-write-bw -s equal to the buffer"
	fi
	IMPORTER="'$wbw' --mem=import:\"\$1\" -s 65537 -n 1"
	serve ""
	unset IMPORTER
	if [ "$imp" = 1 ] && grep -q "fewer than -s 65537: give -s at most 65536" "$tmp/imp"; then
		ok "gdr-write-bw --mem=import -s 65537 of a 65536-byte buffer: refused, exit 1"
	else
		bad "gdr-write-bw -s past the buffer (exit $imp)"
	fi
else
	# Built only with librdmacm (not on the GPU machine); the guest suite
	# runs the same two cases against a real dma-buf.
	echo "skip gdr-write-bw --mem=import -s at and past the buffer: $wbw not built (no librdmacm)"
fi
timeout 30 "$share" owner "$tmp/sock" -s 65536 --fill=65536 --check=65536 > "$tmp/own" 2>&1
if [ $? = 2 ] && grep -q "one of them" "$tmp/own"; then
	ok "--fill with --check (the owner reading what it wrote): refused, exit 2"
else
	bad "--fill with --check"
fi
echo "share-owner: $pass passed, $fail failed"
[ $fail = 0 ]
