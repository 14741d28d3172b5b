#!/bin/sh
# SPDX-License-Identifier: MIT
# On the GPU machine: the named mutants (mutants.txt, gpu.txt or
# generated.txt), each applied in place, built, and judged by the
# gpu-suite commands that can see its file; the tree is restored after
# each. For the survivors of `tools/run.sh mutants` whose code only runs
# with a GPU (the preload's device path, the CUDA half). One line per
# mutant: caught or SURVIVED.
#   sh tests/mutants/gpu-mutants.sh BUILD_DIR NAME...
set -u
cd "$(dirname "$0")/../.." || exit 2
b=${1:?build dir}
shift
if ! nvidia-smi > /dev/null 2>&1; then
	echo "SKIP: no GPU here (nvidia-smi): these mutants are judged on the GPU machine"
	exit 77
fi
[ -f "$b/build.ninja" ] || meson setup "$b" > /dev/null 2>&1 || exit 2
ninja -C "$b" > /dev/null 2>&1 || { echo "the tree does not build"; exit 2; }
# judge FILE: the checks that see FILE; 0 when they all pass.
judge() {
	case $1 in
	lib/preload/*) sh tests/preload/test-preload.sh "$b" gpu ;;
	python/*) meson test -C "$b" --num-processes 1 python gpu-python ;;
	*) meson test -C "$b" --suite gpu --num-processes 1 ;;
	esac
}
caught=0
survived=0
for name in "$@"; do
	file=$(python3 - "$name" <<'PYEOF'
import importlib.util, os, shutil, sys
spec = importlib.util.spec_from_file_location("rm", "tests/mutants/run-mutants.py")
rm = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rm)
name = sys.argv[1]
for f in ("mutants.txt", "gpu.txt", "generated.txt"):
    for m in rm.parse(os.path.join("tests/mutants", f)):
        if m["name"] == name:
            for e in m["edits"]:
                shutil.copy(e["file"], e["file"] + ".orig")
            r = rm.apply(".", m)
            if isinstance(r, str):
                for e in m["edits"]:
                    os.rename(e["file"] + ".orig", e["file"])
                print("stale: " + r)
                sys.exit(0)
            print(" ".join(sorted(set(e["file"] for e in m["edits"]))))
            sys.exit(0)
print("unknown")
PYEOF
)
	case $file in
	stale:* | unknown)
		echo "$name: $file"
		continue
		;;
	esac
	if ! ninja -C "$b" > "$b/mutant.log" 2>&1; then
		verdict="caught (does not build)"
	else
		judge "$file" > "$b/mutant.log" 2>&1
		case $? in
		0) verdict=SURVIVED ;;
		77) verdict="not judged (the check skipped)" ;;
		*) verdict="caught ($(grep -m 1 '^FAIL' "$b/mutant.log" | cut -c1-100))" ;;
		esac
	fi
	for f in $file; do mv "$f.orig" "$f"; done
	echo "$name: $verdict"
	case $verdict in
	SURVIVED) survived=$((survived + 1)) ;;
	caught*) caught=$((caught + 1)) ;;
	esac
done
ninja -C "$b" > /dev/null 2>&1
echo "gpu mutants: $caught caught, $survived survived"
