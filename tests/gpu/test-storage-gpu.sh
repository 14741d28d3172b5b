#!/bin/sh
# SPDX-License-Identifier: MIT
# On the GPU machine (no nvidia-fs, no RDMA NIC): gdr-info --storage on the
# local file system with the real libcufile. A cuFile write and read into
# GPU memory with every byte checked, reported as compat with the remedy,
# the bandwidth beside pread, a named file only read, nothing written
# outside the path, and the capture replayed as not measured. Prints the
# whole report. Exits 1 when an expectation fails, 77 without cuFile.
#   sh tests/gpu/test-storage-gpu.sh BUILD_DIR [DIR]
set -u
build=${1:-build-gpu}
dir=${2:-${GDS_DIR:-/var/tmp/gdr-info-gds-check}}
gi=$(cd "$build/tools/gdr-info" && pwd)/gdr-info
out=${OUT:-/tmp}
bad=0

echo "-- where libcufile is (the loader's search, the CUDA tree, the wheel)"
ldconfig -p 2> /dev/null | grep 'libcufile\.so' || echo "not in ld.so.cache"
ls -l /usr/local/cuda*/lib64/libcufile.so* /usr/local/cuda*/targets/*/lib/libcufile.so* 2> /dev/null
wheel=$(python3 - <<'PY' 2> /dev/null
import os
try:
    import nvidia
except ImportError:
    raise SystemExit
for base in nvidia.__path__:
    for sub in ("cu13/lib", "cufile/lib", "cu12/lib"):
        p = os.path.join(base, sub, "libcufile.so.0")
        if os.path.exists(p):
            print(p)
            raise SystemExit
PY
)
echo "nvidia-cufile wheel: ${wheel:-none}"
if [ -z "${GPUDIRECT_CUFILE_LIB:-}" ] && [ -n "$wheel" ] &&
	! ldconfig -p 2> /dev/null | grep -q 'libcufile\.so\.0'; then
	export GPUDIRECT_CUFILE_LIB="$wheel"
fi
lib=${GPUDIRECT_CUFILE_LIB:-$(ldconfig -p 2> /dev/null | awk '/libcufile\.so\.0/ {print $NF; exit}')}
if [ -n "$lib" ]; then
	echo "cuFile symbols in $lib: $(nm -D --defined-only "$lib" 2> /dev/null | grep -c ' T cuFile')"
	nm -D --defined-only "$lib" 2> /dev/null | awk '/ T cuFile/ {printf "%s ", $3} END {print ""}'
fi
echo "nvidia-fs: $(cat /sys/module/nvidia_fs/version 2> /dev/null || echo not loaded)"
echo "cufile.json: ${CUFILE_ENV_PATH_JSON:-/etc/cufile.json} $( [ -f "${CUFILE_ENV_PATH_JSON:-/etc/cufile.json}" ] && echo present || echo absent)"

mkdir -p "$dir"
echo "-- the directory: $dir"
df -T "$dir" | tail -n 1
grep " $(stat -c %m "$dir" 2> /dev/null || echo /) " /proc/self/mountinfo | head -n 2

# What is there before, outside the path: the working directory, /dev/shm,
# /tmp and the path itself.
work=$(mktemp -d)
snap() { (cd "$work" && ls -A; ls -A /dev/shm; ls -A /tmp; ls -A "$dir") 2> /dev/null | sort; }
before=$(snap)

echo "-- gdr-info --storage $dir (the whole report)"
(cd "$work" && "$gi" --storage "$dir") > "$out/gds-report.txt" 2> "$out/gds-report.err"
echo "exit status: $?"
cat "$out/gds-report.txt"
echo "stderr:"
cat "$out/gds-report.err"

(cd "$work" && "$gi" --json --storage "$dir") > "$out/gds-report.json" 2> /dev/null
named="$dir/gdr-info-named.bin"
head -c 268435456 /dev/urandom > "$named"
sum=$(sha256sum "$named" | cut -d' ' -f1)
before=$(snap)
(cd "$work" && "$gi" --json --storage "$named" --capture "$out/gds.tar") > "$out/gds-named.json" 2> "$out/gds-named.err"
after=$(snap)
[ "$(sha256sum "$named" | cut -d' ' -f1)" = "$sum" ] || { echo "FAIL the named file changed"; bad=1; }
[ "$before" = "$after" ] || { echo "FAIL files appeared or went outside the path:"; echo "$before" > "$work.b"; echo "$after" > "$work.a"; diff "$work.b" "$work.a"; bad=1; }
rm -f "$named"
"$gi" --json --from "$out/gds.tar" > "$out/gds-replay.json" 2> /dev/null

python3 - "$out/gds-report.json" "$out/gds-named.json" "$out/gds-replay.json" <<'PY' || bad=1
import json, sys
def items(p):
    try:
        return {(i["section"], i["key"]): i for i in json.load(open(p))["items"]}
    except (OSError, ValueError) as e:
        print("FAIL %s: %s" % (p, e))
        return {}
fails = 0
def want(its, what, sec, key, verdicts, words):
    global fails
    it = its.get((sec, key))
    ok = it and it["verdict"] in verdicts and all(w in it["value"] + " " + it["remedy"] for w in words)
    print("%s %s %s/%s: %s %s" % ("ok  " if ok else "FAIL", what, sec, key,
          it and it["verdict"], it and it["value"]))
    fails += not ok
live, named, replay = (items(p) for p in sys.argv[1:4])
if live.get(("storage", "cufile_library"), {}).get("verdict") != "ok":
    print("SKIP no cuFile here: %s" % live.get(("storage", "cufile_library")))
    sys.exit(77)
want(live, "dir", "storage", "cufile_driver", ("wrong", "ok"), [])
# cuFile may refuse the file itself: on the lent H100 (a VM whose root is
# a virtual disk), cuFile 1.15 answered CU_FILE_HANDLE_NOT_REGISTERED for
# ext4 and tmpfs alike, its log saying it could not find the block
# device's udev entry. Then the report must say that answer and the
# remedy, and no byte can be checked: said, not counted as passed.
io = live.get(("storage0", "cufile_io"), {})
if "cuFileHandleRegister answered" in io.get("value", ""):
    want(live, "dir", "storage0", "cufile_io", ("wrong",),
         ["cuFileHandleRegister answered", "CUFILE_LOGFILE_PATH"])
    want(live, "dir", "storage0", "gds", ("wrong",), ["failed"])
    want(named, "named", "storage0", "cufile_io", ("wrong",),
         ["cuFileHandleRegister answered"])
    want(replay, "replay", "storage0", "gds", ("unknown",), ["not measured here"])
    print("NOT RUN the read and write through cuFile: this cuFile registers "
          "no file here (%s); run it where cuFile takes the file" % io["value"])
    sys.exit(1 if fails else 77)
want(live, "dir", "storage0", "cufile_write", ("ok",), ["64 MiB in"])
want(live, "dir", "storage0", "cufile_read", ("ok",), ["every byte as written"])
want(live, "dir", "storage0", "pread", ("info",), ["into host memory"])
# no nvidia-fs: compat, from cuFile's statistics where this cuFile has them
want(live, "dir", "storage0", "served_by", ("wrong",), ["compat"])
want(live, "dir", "storage0", "gds", ("wrong",),
     ["compat", "load nvidia-fs 2.17.5", "allow_compat_mode"])
want(named, "named", "storage0", "cufile_write", ("info",), ["only read"])
want(named, "named", "storage0", "cufile_read", ("ok",), ["every byte as pread reads it"])
want(replay, "replay", "storage0", "gds", ("unknown",), ["not measured here"])
for sec, key in (("storage0", "cufile_write"), ("storage0", "cufile_read"), ("storage0", "pread")):
    print("bandwidth %s: %s" % (key, live.get((sec, key), {}).get("value")))
print("statistics: %s" % live.get(("storage0", "served_by"), {}).get("value"))
sys.exit(1 if fails else 0)
PY
st=$?
[ $st = 77 ] && exit 77
rm -rf "$work" "$work.b" "$work.a"
[ $bad = 0 ] && [ $st = 0 ] && echo "storage on the GPU machine: ok" && exit 0
echo "storage on the GPU machine: FAILED"
exit 1
