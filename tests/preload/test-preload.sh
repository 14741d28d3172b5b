#!/bin/sh
# SPDX-License-Identifier: MIT
# libgpudirect-preload.so on an unmodified verbs program (reg-program) over
# a stand-in libibverbs.so.1 whose ibv_reg_mr refuses GPU memory as a kernel
# without nvidia-peermem does:
#   host  host memory goes to libibverbs as the program asked, bit for bit,
#         in every form verbs.h gives ibv_reg_mr (and ibv_reg_mr_ex, by
#         address and by fd), and CUDA is never loaded; libibverbs' own
#         failures and ibv_rereg_mr pass through; no fd left;
#         GPUDIRECT_PRELOAD=0 (and values that leave it on), GPUDIRECT_DEBUG's
#         values; one host registration handled once though libibverbs'
#         ibv_reg_mr calls ibv_reg_mr_iova2 through its PLT (asked once,
#         said once); libcuda.so.1 loaded after a first registration is
#         noticed; gdr-run's usage
#   model (in host) the preload built with a model of its library
#         (model-library.c: unreadable memory is device memory) entered
#         through each of its symbols: device memory registered through
#         the library at the program's iova, the MR at the program's
#         address; ibv_rereg_mr with every combination of flags; refusals
#         said once per cause, long common beginnings or not
#   gpu   cuMemAlloc and VMM memory (whole and at an odd offset, every
#         form) gets a DMA-BUF MR of the buffer's dma-buf through the
#         preload (exporter and size from the fd), EFAULT without it, also
#         when CUDA is loaded after a first registration; host memory in a
#         CUDA process classified once, said once; VMM memory refused (by
#         the NIC, or made without gpuDirectRDMACapable) said once;
#         managed, default-pool and VMM memory made without
#         gpuDirectRDMACapable get what they get without it; a translation
#         rereg refused, an access rereg passed on; a NIC that refuses
#         dma-bufs (the stand-in failing ibv_reg_dmabuf_mr) leaves the
#         program libibverbs' answer, the reason said once, no fd left
# Exits 77 (gpu) without a CUDA device.
b=$(cd "${1:?build dir}" && pwd)
mode=${2:-host}
dir=$b/tests/preload
# the stand-in libibverbs.so.1
fakes=$b/tests/fakes/libibverbs
# the fake libcuda.so.1 (pointer queries answer "not CUDA memory"): only
# for runs that set RUN_PATH to it
cudafake=$b/tests/fakes/libcuda
# the preload with the model of its library (model-library.c)
mlib=$dir/libgpudirect-preload-model.so
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
		STANDIN_LOG="$tmp/log" LD_LIBRARY_PATH="$fakes:$b/lib${RUN_PATH:+:$RUN_PATH}" LD_PRELOAD="$GDR_PRELOAD_LIB" \
			$GDR_VALGRIND "$@" > "$tmp/out" 2> "$tmp/err"
	else
		# shellcheck disable=SC2086
		STANDIN_LOG="$tmp/log" LD_LIBRARY_PATH="$fakes:$b/lib${RUN_PATH:+:$RUN_PATH}" ${GDR_VALGRIND:-} "$@" > "$tmp/out" 2> "$tmp/err"
	fi
	st=$?
	# In a sanitizer build, a report fails the run whatever its checks
	# look at (several do not look at the exit status).
	if grep -q "ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error:" "$tmp/err"; then
		bad "a sanitizer report from: $*"
	fi
	return $st
}
has() { grep -q -- "$2" "$tmp/$1"; }
# count FILE PATTERN: how many lines of $tmp/FILE match
count() { grep -c -- "$2" "$tmp/$1"; }
# mrun ARGS...: reg-program ARGS through gdr-run with the model preload,
# libcuda.so.1 the fake one
mrun() { GDR_PRELOAD_LIB="$mlib" RUN_PATH="$cudafake" run "$run_sh" "$prog" "$@"; }
# The program's buffer ("(buffer 0x..)" of its registered line), and
# whether the MR's addr is it.
buffer() { sed -n 's/^registered .*(buffer \(0x[0-9a-f]*\)).*/\1/p' "$tmp/out"; }
at_buffer() { awk '/^registered/ { split($2, a, "="); split($5, b, ")"); exit !(a[2] == b[1]) }' "$tmp/out"; }

if [ "$mode" = host ]; then
	run "$prog" host 4096
	st=$?
	cp "$tmp/log" "$tmp/plain.log"
	if [ $st = 0 ] && has out "registered" && has log "^ibv_reg_mr .*: calls ibv_reg_mr_iova2" && has log "^ibv_reg_mr_iova2 .* access=0x7: ok" &&
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
		has log "^ibv_reg_mr .*: calls ibv_reg_mr_iova2" && has log "^ibv_reg_mr_iova2 .* access=0x7: ok"; then
		ok "gdr-run: host memory goes to libibverbs as asked (same call, access, iova), no CUDA loaded, nothing said"
	else
		bad "gdr-run on host memory"
	fi
	# Every form a program's headers give a registration, bit for bit:
	# the same calls, access and iova as without the preload, no fd left.
	# norm: the log with this run's buffer address as BUF (the rest, access
	# and iova included, compared as it is).
	norm() {
		buf=$(sed -n 's/^registered .*(buffer \(0x[0-9a-f]*\)).*/\1/p' "$tmp/out")
		[ -n "$buf" ] && sed "s/$buf/BUF/g" "$tmp/log"
	}
	for form in const var iova ex ex-iova ex-fd; do
		run "$prog" host 0x10 $form leak
		norm > "$tmp/plain.log"
		run "$run_sh" "$prog" host 0x10 $form leak
		st=$?
		first=$(head -n 1 "$tmp/log" | cut -d' ' -f1-2)
		case $form in
		const) want="ibv_reg_mr 0x" ;;
		var) want="ibv_reg_mr_iova2 0x" ;;
		iova) want="ibv_reg_mr_iova 0x" ;;
		ex) want="ibv_reg_mr_ex mask=0x2" ;;
		ex-iova) want="ibv_reg_mr_ex mask=0x3" ;;
		ex-fd) want="ibv_reg_mr_ex mask=0xd" ;;
		esac
		norm > "$tmp/pre.log"
		case $form in
		iova | ex-iova | ex-fd) iova=$(printf 'iova=0x%x ' $((0x7700000 + (buf & 4095)))) ;;
		*) iova="iova=BUF " ;;
		esac
		if [ $st = 0 ] && has out "registered" && has out "^fds: +0" &&
			case $first in "$want"*) true ;; *) false ;; esac &&
			grep -q "$iova.*access=0x7" "$tmp/pre.log" && ! has err "libgpudirect-preload" &&
			[ -s "$tmp/pre.log" ] && cmp -s "$tmp/pre.log" "$tmp/plain.log"; then
			ok "gdr-run, form $form: host memory reaches libibverbs as $want.. as asked, no fd left"
		else
			bad "gdr-run, form $form, on host memory"
		fi
	done
	STANDIN_FAIL=ibv_reg_mr=12 run "$prog" host 0
	plain=$(grep -o 'errno [0-9]*' "$tmp/out")
	STANDIN_FAIL=ibv_reg_mr=12 run "$run_sh" "$prog" host 0
	if [ "$plain" = "errno 12" ] && has out "errno 12" && ! has err "libgpudirect-preload"; then
		ok "libibverbs refusing host memory (ENOMEM): the program sees its errno, nothing said"
	else
		bad "libibverbs' own failure through the preload"
	fi
	run "$run_sh" "$prog" host 0 const rereg
	if has out "rereg translation: 0 errno 0" && has out "rereg access: 0 errno 0" &&
		has log "ibv_rereg_mr flags=0x1 access=0x7" && has log "ibv_rereg_mr flags=0x4 access=0x1"; then
		ok "ibv_rereg_mr of a host-memory MR goes to libibverbs as asked"
	else
		bad "ibv_rereg_mr on host memory"
	fi
	GPUDIRECT_DEBUG=1 run "$run_sh" "$prog" host 0
	if has out "registered" && ! has err "registered by libgpudirect" &&
		has err "ibv_reg_mr(.*): libcuda.so.1 is not loaded, so no device memory: passed to libibverbs"; then
		ok "GPUDIRECT_DEBUG=1: the preload saw the call and, CUDA not loaded, passed host memory on without asking the library"
	else
		bad "GPUDIRECT_DEBUG=1 on host memory"
	fi
	GPUDIRECT_PRELOAD=0 GPUDIRECT_DEBUG=1 run "$run_sh" "$prog" host 0
	if has out "registered" && has log "^ibv_reg_mr" && ! has err "libgpudirect-preload"; then
		ok "GPUDIRECT_PRELOAD=0: passed through, the preload silent even with GPUDIRECT_DEBUG=1"
	else
		bad "GPUDIRECT_PRELOAD=0"
	fi
	# Only 0 turns the preload off: any other value, empty included,
	# leaves it on (its debug line says it saw the call).
	for v in 1 2 no off false 00 ""; do
		GPUDIRECT_PRELOAD=$v GPUDIRECT_DEBUG=1 run "$run_sh" "$prog" host 0
		if has out "registered" && [ "$(count err "^libgpudirect-preload: ibv_reg_mr(")" = 1 ]; then
			ok "GPUDIRECT_PRELOAD='$v': the preload stays on"
		else
			bad "GPUDIRECT_PRELOAD='$v'"
		fi
	done
	# GPUDIRECT_DEBUG: every decision for any value but 0 and empty.
	for v in 1 2 yes true; do
		GPUDIRECT_DEBUG=$v run "$run_sh" "$prog" host 0
		if has out "registered" && [ "$(count err "^libgpudirect-preload: ibv_reg_mr(.*): libcuda.so.1 is not loaded")" = 1 ]; then
			ok "GPUDIRECT_DEBUG=$v: every decision said"
		else
			bad "GPUDIRECT_DEBUG=$v"
		fi
	done
	for v in 0 ""; do
		GPUDIRECT_DEBUG=$v run "$run_sh" "$prog" host 0
		if has out "registered" && ! has err "libgpudirect-preload"; then
			ok "GPUDIRECT_DEBUG='$v': host memory passed on in silence"
		else
			bad "GPUDIRECT_DEBUG='$v'"
		fi
	done
	# One registration is handled once, though libibverbs' own
	# ibv_reg_mr and ibv_reg_mr_iova call ibv_reg_mr_iova2 through its
	# PLT (the stand-in does as rdma-core does): said once, and in a
	# process that loaded libcuda.so.1 (the fake) the library asked once
	# ("not CUDA device memory" is its answer).
	for form in const var iova; do
		GPUDIRECT_DEBUG=1 run "$run_sh" "$prog" host 0x10 $form
		st=$?
		n=$(count err "^libgpudirect-preload")
		GPUDIRECT_DEBUG=1 RUN_PATH="$cudafake" run "$run_sh" "$prog" host-libcuda 0x10 $form
		if [ $st = 0 ] && [ "$n" = 1 ] && has out "registered" && has out "libcuda.so.1 loaded" &&
			[ "$(count err "^libgpudirect-preload")" = 1 ] &&
			[ "$(count err "^libgpudirect-preload: ibv_reg_mr[_iova2]*(.*): not CUDA device memory: passed to libibverbs")" = 1 ] &&
			[ "$(count log "^ibv_reg_mr_iova2 .*: ok$")" = 1 ]; then
			ok "form $form, host memory: handled once though libibverbs enters the preload again (said once, the library asked once)"
		else
			bad "form $form: host memory handled once"
		fi
	done
	# libcuda.so.1 loaded after the first registration: noticed at the
	# next one, which asks the library.
	GPUDIRECT_DEBUG=1 RUN_PATH="$cudafake" run "$run_sh" "$prog" host-libcuda 0x10 const late
	if has out "^first: registered" && has out "^registered" &&
		[ "$(count err "^libgpudirect-preload")" = 2 ] &&
		grep "^libgpudirect-preload" "$tmp/err" | head -n 1 | grep -q "ibv_reg_mr(.*): libcuda.so.1 is not loaded" &&
		grep "^libgpudirect-preload" "$tmp/err" | sed -n 2p | grep -q "ibv_reg_mr(.*): not CUDA device memory"; then
		ok "libcuda.so.1 loaded after a first registration: the next one asks the library"
	else
		bad "libcuda.so.1 loaded after a first registration"
	fi
	run "$run_sh" "$prog" host 0x10 const rereg-all
	if [ "$(count out "^rereg 0x[0-9]: 0 errno 0$")" = 6 ] && [ "$(count log "^ibv_rereg_mr flags=")" = 6 ] &&
		has log "flags=0x5 access=0x1" && has log "flags=0x3 access=0x0" && has log "flags=0x7 access=0x1" &&
		has log "flags=0x6 access=0x1" && has log "flags=0x2 access=0x0" && has log "flags=0x4 access=0x1" &&
		! has err "libgpudirect-preload"; then
		ok "ibv_rereg_mr of a host-memory MR, every combination of flags: libibverbs'"
	else
		bad "ibv_rereg_mr of a host-memory MR, every combination of flags"
	fi

	# The model: device memory through the preload's own symbols.
	RUN_PATH="$cudafake" run "$prog" model 0x1234 iova
	if has out "ibv_reg_mr: errno 14" && has log "^ibv_reg_mr_iova2 .*: EFAULT$"; then
		ok "model: without the preload, its device memory is refused (EFAULT) as GPU memory is"
	else
		bad "model: without the preload"
	fi
	for form in const var iova ex ex-iova; do
		mrun model 0x1234 $form
		st=$?
		buf=$(buffer)
		case $form in
		iova | ex-iova) iova=0x7700234 ;;
		*) iova=$buf ;;
		esac
		if [ $st = 0 ] && [ -n "$buf" ] && at_buffer &&
			[ "$(count log "^library ")" = 1 ] &&
			has log "^library $buf 1048576 iova=$iova access=0x7: device$" &&
			[ "$(count log "^ibv_reg_dmabuf_mr ")" = 1 ] &&
			has log "^ibv_reg_dmabuf_mr fd offset=564 len=1048576 iova=$iova access=0x7 " &&
			! has log "^ibv_reg_mr" && has log "^ibv_dereg_mr $buf 1048576$" && ! has err "^libgpudirect-preload"; then
			ok "model, form $form: the library registers device memory at iova $iova (the program's), the MR at the program's address, released by ibv_dereg_mr"
		else
			bad "model, form $form: device memory"
		fi
	done
	for form in const iova; do
		mrun model 0x1234 $form rereg-all
		if has out "^registered" && has out "^rereg 0x5: -1 errno 22$" && has out "^rereg 0x3: -1 errno 22$" &&
			has out "^rereg 0x7: -1 errno 22$" && has out "^rereg 0x6: 0 errno 0$" &&
			has out "^rereg 0x2: 0 errno 0$" && has out "^rereg 0x4: 0 errno 0$" &&
			[ "$(count log "^ibv_rereg_mr ")" = 3 ] && has log "flags=0x6 access=0x1" &&
			has log "flags=0x2 access=0x0" && has log "flags=0x4 access=0x1" &&
			[ "$(count err "^libgpudirect-preload: ibv_rereg_mr: IBV_REREG_MR_CHANGE_TRANSLATION on an MR of GPU memory")" = 1 ] &&
			[ "$(count err "^libgpudirect-preload")" = 1 ]; then
			ok "model, form $form: ibv_rereg_mr of its DMA-BUF MR, translation with access, PD or both refused (IBV_REREG_MR_ERR_INPUT, EINVAL, said once), PD and access passed on"
		else
			bad "model, form $form: ibv_rereg_mr, every combination of flags"
		fi
	done
	GPUDIRECT_DEBUG=1 mrun model 0x1234 iova late
	if has out "^first: registered" && has out "^registered" && at_buffer &&
		[ "$(head -n 3 "$tmp/log" | grep -c "^library")" = 0 ] &&
		sed -n 4p "$tmp/log" | grep -q "^library .* iova=0x7700234 access=0x7: device$" &&
		has log "^ibv_reg_dmabuf_mr fd offset=564 len=1048576 iova=0x7700234 " &&
		grep "^libgpudirect-preload" "$tmp/err" | head -n 1 | grep -q "ibv_reg_mr_iova(.*): libcuda.so.1 is not loaded" &&
		has err "ibv_reg_mr_iova(.*): registered by libgpudirect"; then
		ok "model: libcuda.so.1 loaded after a first registration of host memory, device memory then goes to the library"
	else
		bad "model: libcuda.so.1 loaded after a first registration"
	fi
	for form in const var iova; do
		mrun host-libcuda 0x10 $form
		if has out "^registered" && [ "$(count log "^library ")" = 1 ] && has log "^library .*: not device$" &&
			[ "$(count log "^ibv_reg_mr_iova2 .*: ok$")" = 1 ] && ! has err "^libgpudirect-preload"; then
			ok "model, form $form, host memory: the library asked once, libibverbs registers it"
		else
			bad "model, form $form, host memory"
		fi
	done
	# Refused device memory: libibverbs' own answer to the program, the
	# reason on stderr once per cause, and two causes alike for 150
	# characters are two.
	long="cannot register [0x7f0000000000, +1048576) (cuda-device on GPU 0) with mlx5_0: dmabuf failed: ibv_reg_dmabuf_mr(offset 564, 1048576 bytes) on mlx5_0 failed with"
	MODEL_REFUSE="95:$long EOPNOTSUPP (Operation not supported)|$long EINVAL (Invalid argument)" mrun model 0x1234 const leak
	if has out "ibv_reg_mr: errno 14" && has out "^fds: +0" && [ "$(count log "^library .*: refused$")" = 9 ] &&
		[ "$(count log "^ibv_reg_mr_iova2 .*: EFAULT$")" = 9 ] && [ "$(count err "^libgpudirect-preload")" = 2 ] &&
		[ "$(count err "^libgpudirect-preload: ibv_reg_mr: cannot register .* EOPNOTSUPP (Operation not supported)$")" = 1 ] &&
		[ "$(count err "^libgpudirect-preload: ibv_reg_mr: cannot register .* EINVAL (Invalid argument)$")" = 1 ]; then
		ok "model: device memory refused 9 times for two causes alike for 150 characters: EFAULT from libibverbs, each cause said once"
	else
		bad "model: two causes with a long common beginning"
	fi
	for form in var iova ex; do
		MODEL_REFUSE="22:0x7f0000000000 is VMM memory the driver does not mark GPUDirect RDMA capable" mrun model 0x1234 $form leak
		if has out "ibv_reg_mr: errno 14" && has out "^fds: +0" && [ "$(count log "^library .*: refused$")" = 9 ] &&
			[ "$(count err "^libgpudirect-preload")" = 1 ] && has err "^libgpudirect-preload: ibv_reg_mr[_a-z0-9]*: 0x7f0000000000 is VMM memory"; then
			ok "model, form $form: device memory the library refuses, 9 times: the reason said once, libibverbs' EFAULT to the program"
		else
			bad "model, form $form: a refusal said once"
		fi
	done
	# gdr-run's own words, under /bin/sh (dash on Debian and Ubuntu)
	# and under bash: the preload is seen loaded by its debug line.
	loaded="ibv_reg_mr(.*): libcuda.so.1 is not loaded"
	for shell in sh bash; do
		command -v $shell > /dev/null || continue
		"$shell" "$run_sh" > "$tmp/out" 2> "$tmp/err"
		st=$?
		if [ $st = 2 ] && has err "usage: gdr-run \[--\] PROGRAM"; then ok "$shell gdr-run without a program: usage, exit 2"; else bad "$shell gdr-run usage"; fi
		for h in -h --help; do
			"$shell" "$run_sh" $h > "$tmp/out" 2> "$tmp/err"
			st=$?
			if [ $st = 0 ] && has err "usage: gdr-run"; then ok "$shell gdr-run $h: usage, exit 0"; else bad "$shell gdr-run $h"; fi
		done
		: > "$tmp/ran"
		"$shell" "$run_sh" -- > "$tmp/out" 2> "$tmp/err"
		st=$?
		if [ $st = 2 ] && has err "usage: gdr-run"; then ok "$shell gdr-run -- alone: usage, exit 2"; else bad "$shell gdr-run -- alone"; fi
		GPUDIRECT_DEBUG=1 run "$shell" "$run_sh" -- "$prog" host 0
		st=$?
		if [ $st = 0 ] && has out "registered" && has err "$loaded"; then
			ok "$shell gdr-run -- PROGRAM: -- ends gdr-run's options, the program runs with the preload"
		else
			bad "$shell gdr-run -- PROGRAM"
		fi
		"$shell" "$run_sh" -- /bin/echo -- marker > "$tmp/out" 2> "$tmp/err"
		if [ "$(cat "$tmp/out")" = "-- marker" ]; then
			ok "$shell gdr-run -- PROGRAM -- ...: only the first -- is gdr-run's (the program got '-- marker')"
		else
			bad "$shell gdr-run -- PROGRAM --: the program's own -- is the program's"
		fi
		"$shell" "$run_sh" -x true > "$tmp/out" 2> "$tmp/err"
		st=$?
		if [ $st = 2 ] && has err "unknown option '-x'"; then ok "$shell gdr-run -x: an unknown option, exit 2"; else bad "$shell gdr-run -x"; fi
	done
	GDR_PRELOAD_LIB=/nonexistent/libgpudirect-preload.so "$run_sh" true > "$tmp/out" 2> "$tmp/err"
	st=$?
	if [ $st = 127 ] && has err "is missing"; then ok "gdr-run without the library: exit 127, said"; else bad "gdr-run without the library"; fi
	GDR_PRELOAD_LIB=$tmp "$run_sh" true > "$tmp/out" 2> "$tmp/err"
	st=$?
	if [ $st = 127 ] && has err "not a readable file"; then ok "gdr-run with a directory as the library: exit 127, said"; else bad "gdr-run with a directory as the library"; fi
	# A path ld.so would split (a space or a colon in it): refused, the
	# program never run without the preload it was asked for.
	for d in "a b" "a:b"; do
		mkdir -p "$tmp/$d"
		cp "$GDR_PRELOAD_LIB" "$tmp/$d/libgpudirect-preload.so"
		rm -f "$tmp/ran"
		GDR_PRELOAD_LIB="$tmp/$d/libgpudirect-preload.so" "$run_sh" touch "$tmp/ran" > "$tmp/out" 2> "$tmp/err"
		st=$?
		if [ $st = 127 ] && [ ! -e "$tmp/ran" ] && has err "holds a space or a colon"; then
			ok "gdr-run with the preload at '$d/...': refused (exit 127), the program not run"
		else
			bad "gdr-run with the preload at '$d/...'"
		fi
	done
	# The same for the path built in (an install prefix with a space).
	src=${3:-}
	if [ -n "$src" ] && [ -f "$src/tools/gdr-run/subst.sh" ]; then
		sh "$src/tools/gdr-run/subst.sh" "$tmp/a b/libgpudirect-preload.so" \
			"$src/tools/gdr-run/gdr-run.in" "$tmp/gdr-run-prefix"
		rm -f "$tmp/ran"
		(unset GDR_PRELOAD_LIB && "$tmp/gdr-run-prefix" touch "$tmp/ran") > "$tmp/out" 2> "$tmp/err"
		st=$?
		if [ $st = 127 ] && [ ! -e "$tmp/ran" ] && has err "'$tmp/a b/libgpudirect-preload.so' holds a space"; then
			ok "gdr-run installed under a prefix with a space: refused (exit 127), the program not run"
		else
			bad "gdr-run installed under a prefix with a space"
		fi
		# A prefix with the shell's own characters is a path, not code.
		tab=$(printf '\t')
		odd="$tmp/q'\$(touch$tab$tmp/ran)&|x.so"
		sh "$src/tools/gdr-run/subst.sh" "$odd" "$src/tools/gdr-run/gdr-run.in" "$tmp/gdr-run-odd"
		rm -f "$tmp/ran"
		(unset GDR_PRELOAD_LIB && "$tmp/gdr-run-odd" true) > "$tmp/out" 2> "$tmp/err"
		st=$?
		if [ $st = 127 ] && [ ! -e "$tmp/ran" ] && grep -qF "$odd is missing" "$tmp/err"; then
			ok "gdr-run installed under a prefix with quotes, \$( ), & and |: taken as the path it is"
		else
			bad "gdr-run installed under a prefix with shell characters"
		fi
	fi
	# A relative GDR_PRELOAD_LIB is the file here, not one ld.so would
	# look for in its own search path (a name found nowhere there).
	mkdir -p "$tmp/rel"
	cp "$GDR_PRELOAD_LIB" "$tmp/rel/libgdr-here-only.so"
	(cd "$tmp/rel" && GPUDIRECT_DEBUG=1 STANDIN_LOG="$tmp/log" LD_LIBRARY_PATH="$fakes:$b/lib" \
		GDR_PRELOAD_LIB=libgdr-here-only.so "$run_sh" "$prog" host 0) > "$tmp/out" 2> "$tmp/err"
	st=$?
	if [ $st = 0 ] && has out "registered" && has err "$loaded"; then
		ok "gdr-run with a relative GDR_PRELOAD_LIB: the file in this directory is loaded"
	else
		bad "gdr-run with a relative GDR_PRELOAD_LIB"
	fi
	# A relative GDR_PRELOAD_LIB in a directory whose name has a space:
	# the path ld.so would get is checked, and refused.
	mkdir -p "$tmp/sp ace"
	cp "$GDR_PRELOAD_LIB" "$tmp/sp ace/libgdr-here-only.so"
	rm -f "$tmp/ran"
	(cd "$tmp/sp ace" && GDR_PRELOAD_LIB=libgdr-here-only.so "$run_sh" touch "$tmp/ran") \
		> "$tmp/out" 2> "$tmp/err"
	st=$?
	if [ $st = 127 ] && [ ! -e "$tmp/ran" ] && has err "holds a space or a colon"; then
		ok "gdr-run with a relative GDR_PRELOAD_LIB in a directory with a space: refused, exit 127"
	else
		bad "gdr-run with a relative GDR_PRELOAD_LIB in a directory with a space"
	fi
	# The caller's LD_PRELOAD is kept, after the preload; the program's
	# arguments reach it as they were given.
	other=$b/lib/libgpudirect.so.1
	# shellcheck disable=SC2016 # expanded by the program's shell
	LD_PRELOAD=$other "$run_sh" sh -c 'printf "%s\n" "$LD_PRELOAD"; printf "[%s]\n" "$@"' sh \
		"a b" '*' > "$tmp/out" 2> "$tmp/err"
	st=$?
	if [ $st = 0 ] && [ "$(sed -n 1p "$tmp/out")" = "$GDR_PRELOAD_LIB $other" ] &&
		[ "$(sed -n 2p "$tmp/out")" = "[a b]" ] && [ "$(sed -n 3p "$tmp/out")" = "[*]" ] &&
		[ "$(wc -l < "$tmp/out")" = 3 ]; then
		ok "gdr-run keeps the caller's LD_PRELOAD after its own, and the program's arguments whole"
	else
		bad "gdr-run: the caller's LD_PRELOAD and the arguments"
	fi
	# A preload the user cannot read is refused (as nobody: root reads it).
	cp "$GDR_PRELOAD_LIB" "$tmp/unreadable.so"
	chmod 000 "$tmp/unreadable.so"
	chmod 755 "$tmp"
	rm -f "$tmp/ran"
	as=""
	if [ "$(id -u)" = 0 ]; then
		command -v setpriv > /dev/null 2>&1 &&
			as="setpriv --reuid=65534 --regid=65534 --clear-groups"
	fi
	if [ "$(id -u)" = 0 ] && [ -z "$as" ]; then
		echo "SKIP an unreadable preload: root reads any file, and no setpriv here"
	elif [ -n "$as" ] && ! { $as test -r "$run_sh" && $as test -x "$run_sh"; }; then
		echo "SKIP an unreadable preload: nobody cannot run $run_sh (a private build directory)"
	else
		# shellcheck disable=SC2086,SC2016 # $as: a command and its options, or none
		GDR_PRELOAD_LIB="$tmp/unreadable.so" $as "$run_sh" sh -c ': > "$1"' sh "$tmp/ran" \
			> "$tmp/out" 2> "$tmp/err"
		st=$?
		if [ $st = 127 ] && [ ! -e "$tmp/ran" ] && has err "not a readable file"; then
			ok "gdr-run with a preload it cannot read: refused, exit 127, the program not run"
		else
			bad "gdr-run with a preload it cannot read (exit $st)"
		fi
	fi
	chmod 700 "$tmp"
	# An empty GDR_PRELOAD_LIB is unset: the preload gdr-run was built with.
	GPUDIRECT_DEBUG=1 STANDIN_LOG="$tmp/log" LD_LIBRARY_PATH="$fakes:$b/lib" \
		GDR_PRELOAD_LIB='' "$run_sh" "$prog" host 0 > "$tmp/out" 2> "$tmp/err"
	st=$?
	if [ $st = 0 ] && has out "registered" && has err "$loaded"; then
		ok "gdr-run with an empty GDR_PRELOAD_LIB: its own preload is loaded"
	else
		bad "gdr-run with an empty GDR_PRELOAD_LIB"
	fi
else
	run "$prog" cuda 0
	st=$?
	if [ $st = 77 ]; then
		echo "SKIP: $(cat "$tmp/out")"
		exit 77
	fi
	# libibverbs' own ibv_reg_mr answers through ibv_reg_mr_iova2, as
	# rdma-core 33 and later do (the stand-in logs both).
	if [ $st = 1 ] && has out "ibv_reg_mr: errno 14" && has log "^ibv_reg_mr .*calls ibv_reg_mr_iova2" &&
		has log "^ibv_reg_mr_iova2 .*: EFAULT"; then
		ok "without the preload: cuMemAlloc memory is refused with EFAULT (no nvidia-peermem)"
	else
		bad "cuMemAlloc without the preload"
	fi
	# dma [ROUNDS]: the log's dma-buf registrations, each checked: offset
	# within the page, 1 MiB, iova and access as asked, the dma-buf is
	# NVIDIA's and holds the buffer; never a registration by address.
	dma() {
		awk -v want="$1" -v iova="$2" -v n="${3:-1}" '
			/^ibv_reg_dmabuf_mr / {
				split($3, o, "="); split($7, x, "="); split($8, s, "=")
				good += (o[2] == want && $4 == "len=1048576" && $5 == "iova=" iova &&
					$6 == "access=0x7" && x[2] == "nv_dmabuf" &&
					s[2] + 0 >= o[2] + 1048576)
				all++
			}
			/: (ok|EFAULT)$/ { byaddr++ }
			END { exit !(all == n && good == n && !byaddr) }' "$tmp/log"
	}
	for kind in cuda vmm; do
		for form in const var iova ex ex-iova; do
			for off in 0 0x1234; do
				[ $off = 0 ] && [ $form != const ] && continue
				run "$run_sh" "$prog" $kind $off $form
				st=$?
				[ $st = 77 ] && [ $kind = vmm ] && { echo "SKIP: VMM: $(cat "$tmp/out")"; continue 3; }
				want=$(printf '%d' $((off & 4095)))
				buf=$(sed -n 's/^registered .*(buffer \(0x[0-9a-f]*\)).*/\1/p' "$tmp/out")
				case $form in
				iova | ex-iova) iova=$(printf '0x%x' $((0x7700000 + (off & 4095)))) ;;
				*) iova=$buf ;;
				esac
				if [ $st = 0 ] && [ -n "$buf" ] && dma "$want" "$iova" && ! has log "^ibv_reg_mr_ex" &&
					awk '/^registered/ { split($2, a, "="); split($5, b, ")"); exit !(a[2] == b[1]) }' "$tmp/out"; then
					ok "gdr-run: $kind memory at offset $off, form $form: a DMA-BUF MR of its nv_dmabuf (offset $want, iova $iova, access as asked, addr the buffer's)"
				else
					bad "gdr-run on $kind memory at offset $off, form $form"
				fi
			done
		done
	done
	run "$prog" cuda 0x1234 const leak
	plain=$(grep -o '^registered\|errno [0-9]*' "$tmp/out")
	run "$run_sh" "$prog" cuda 0x1234 const leak
	if [ "$plain" = "errno 14" ] && has out "^registered" && has out "^fds: +0" &&
		[ "$(grep -c '^ibv_reg_dmabuf_mr .*exp_name=nv_dmabuf' "$tmp/log")" = 9 ] &&
		[ "$(grep -c '^ibv_dereg_mr' "$tmp/log")" = 9 ]; then
		ok "9 registrations and deregistrations of cuMemAlloc memory through gdr-run: 9 DMA-BUF MRs, 9 released, no fd left"
	else
		bad "gdr-run: fds after 9 registrations"
	fi
	run "$run_sh" "$prog" cuda 0 const rereg
	if has out "^registered" && has out "rereg translation: -1 errno 22" &&
		has out "rereg access: 0 errno 0" && ! has log "ibv_rereg_mr flags=0x1" &&
		has log "ibv_rereg_mr flags=0x4 access=0x1" &&
		has err "IBV_REREG_MR_CHANGE_TRANSLATION on an MR of GPU memory"; then
		ok "ibv_rereg_mr of a DMA-BUF MR: a new translation refused (IBV_REREG_MR_ERR_INPUT, EINVAL, said), new access passed on"
	else
		bad "ibv_rereg_mr of a DMA-BUF MR"
	fi
	STANDIN_FAIL=ibv_reg_dmabuf_mr=95 run "$run_sh" "$prog" cuda 0x1234 const leak
	if has out "errno 14" && has out "^fds: +0" && ! has log "^ibv_reg_dmabuf_mr fd" &&
		[ "$(grep -c '^libgpudirect-preload: ibv_reg_mr:' "$tmp/err")" = 1 ]; then
		ok "a NIC refusing dma-bufs (EOPNOTSUPP): libibverbs' EFAULT to the program, the reason said once in 9 calls, no fd left"
	else
		bad "gdr-run over a NIC that refuses dma-bufs"
	fi
	STANDIN_FAIL=ibv_dereg_mr=16 run "$run_sh" "$prog" cuda 0
	if has out "^registered" && has out "ibv_dereg_mr failed: 16"; then
		ok "ibv_dereg_mr refused by libibverbs (EBUSY): the program sees it"
	else
		bad "gdr-run: a refused ibv_dereg_mr"
	fi
	run "$prog" host-cuda 0x10 var
	cp "$tmp/log" "$tmp/plain.log"
	GPUDIRECT_DEBUG=1 run "$run_sh" "$prog" host-cuda 0x10 var
	if has out "^registered" && has out "libcuda.so.1 loaded" &&
		has err "ibv_reg_mr_iova2(.*): not CUDA device memory: passed to libibverbs" &&
		[ "$(sed 's/0x[0-9a-f]*//g' "$tmp/log")" = "$(sed 's/0x[0-9a-f]*//g' "$tmp/plain.log")" ]; then
		ok "gdr-run: host memory in a CUDA process: classified, then to libibverbs as asked"
	else
		bad "gdr-run on host memory in a CUDA process"
	fi
	# One host registration in a CUDA process, however verbs.h expands
	# it: the library asked once, said once (libibverbs' ibv_reg_mr and
	# ibv_reg_mr_iova enter the preload again through ibv_reg_mr_iova2).
	for form in const var iova; do
		GPUDIRECT_DEBUG=1 run "$run_sh" "$prog" host-cuda 0x10 $form
		if has out "^registered" && [ "$(count err "^libgpudirect-preload")" = 1 ] &&
			has err "(.*): not CUDA device memory: passed to libibverbs"; then
			ok "gdr-run, form $form: host memory in a CUDA process classified once, said once"
		else
			bad "gdr-run, form $form: host memory in a CUDA process handled once"
		fi
	done
	# A process that registers host memory before it loads CUDA: its
	# device memory, registered after, goes through the library.
	run "$run_sh" "$prog" cuda 0x1234 iova late
	if has out "^first: registered" && has out "^registered" && at_buffer &&
		[ "$(count log "^ibv_reg_mr_iova2 .*: ok$")" = 1 ] &&
		[ "$(count log "^ibv_reg_dmabuf_mr .* iova=0x7700234 access=0x7 exp_name=nv_dmabuf ")" = 1 ]; then
		ok "gdr-run: host memory registered before CUDA is loaded, then cuMemAlloc memory: a DMA-BUF MR at the program's iova"
	else
		bad "gdr-run: CUDA loaded after a first registration"
	fi
	run "$run_sh" "$prog" cuda 0 const rereg-all
	if has out "^registered" && has out "^rereg 0x5: -1 errno 22$" && has out "^rereg 0x3: -1 errno 22$" &&
		has out "^rereg 0x7: -1 errno 22$" && has out "^rereg 0x6: 0 errno 0$" &&
		has out "^rereg 0x2: 0 errno 0$" && has out "^rereg 0x4: 0 errno 0$" &&
		[ "$(count log "^ibv_rereg_mr ")" = 3 ] &&
		[ "$(count err "IBV_REREG_MR_CHANGE_TRANSLATION on an MR of GPU memory")" = 1 ]; then
		ok "ibv_rereg_mr of a DMA-BUF MR: translation with access, PD or both refused (EINVAL, said once), PD and access without it passed on"
	else
		bad "ibv_rereg_mr of a DMA-BUF MR, every combination of flags"
	fi
	# VMM memory refused, by the NIC or by the library: libibverbs'
	# answer to the program, the reason said once in 9 calls.
	STANDIN_FAIL=ibv_reg_dmabuf_mr=95 run "$run_sh" "$prog" vmm 0x1234 const leak
	if [ $? != 77 ]; then
		if has out "errno 14" && has out "^fds: +0" &&
			[ "$(count err "^libgpudirect-preload: ibv_reg_mr:")" = 1 ]; then
			ok "VMM memory on a NIC refusing dma-bufs: libibverbs' EFAULT to the program, the reason said once in 9 calls"
		else
			bad "VMM memory on a NIC refusing dma-bufs"
		fi
	fi
	run "$run_sh" "$prog" vmm-noflag 0 iova leak
	if [ $? != 77 ]; then
		if has out "errno 14" && has out "^fds: +0" &&
			[ "$(count err "^libgpudirect-preload: ibv_reg_mr_iova: .*gpuDirectRDMACapable")" = 1 ]; then
			ok "VMM memory without gpuDirectRDMACapable, 9 times: libibverbs' EFAULT, the reason said once"
		else
			bad "VMM memory without gpuDirectRDMACapable, 9 times"
		fi
	fi
	for kind in managed pool vmm-noflag; do
		run "$prog" $kind 0
		if [ $? = 77 ]; then
			echo "SKIP: $kind: $(cat "$tmp/out")"
			continue
		fi
		plain=$(grep -o '^registered\|errno [0-9]*' "$tmp/out")
		run "$run_sh" "$prog" $kind 0
		pre=$(grep -o '^registered\|errno [0-9]*' "$tmp/out")
		# The default pool is not RDMA capable: the library says so,
		# once; managed memory is not the library's: nothing said.
		if [ $kind = pool ]; then
			said=$(grep -c "^libgpudirect-preload: ibv_reg_mr: .*stream-ordered memory pool" "$tmp/err")
		elif [ $kind = vmm-noflag ]; then
			said=$(grep -c "^libgpudirect-preload: ibv_reg_mr: .*gpuDirectRDMACapable" "$tmp/err")
		else
			said=$(grep -c "^libgpudirect-preload" "$tmp/err"; true)
			[ "$said" = 0 ] && said=1 || said=0
		fi
		if [ -n "$plain" ] && [ "$plain" = "$pre" ] && ! has log "^ibv_reg_dmabuf_mr" &&
			[ "$said" = 1 ]; then
			ok "gdr-run: $kind memory gets what it gets without the preload ($plain)$([ $kind != managed ] && echo ', the reason said once')"
		else
			echo "     without: $plain; with: $pre"
			bad "gdr-run on $kind memory"
		fi
	done
fi
echo "preload ($mode): $pass passed, $fail failed"
[ $fail = 0 ]
