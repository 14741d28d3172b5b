#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gdr-info --storage PATH.

Live, over the stand-in libcufile (tests/fakes/libcufile: what
GDR_FAKE_CUFILE asks for) and the fake libcuda with memory: every answer
cuFile documents for its driver, handle registration, read, write and
properties, compat and direct (both statistics layouts, and a libcufile
without statistics), hangs bounded by --storage-timeout, a named file only
read, paths that are a FIFO, a device node, a socket or a link, nothing
written outside the path (no file left there, no cufile.log in the working
directory), stdout kept JSON while cuFile chatters, --capture kept and
--from replayed as not measured, the NFD label.

Replayed, on snapshot layouts with a mount table and sysfs: NFS over RDMA
and over TCP, NVMe-oF over RDMA and TCP (and through a multipath head),
local NVMe on a partition, Lustre over o2ib and tcp, overlay, tmpfs, and
hostile tables (escapes, long and malformed lines, a NUL byte, crafted
answers), and a --host-root tree.

    test-storage.py GDR_INFO OUTDIR"""
import hashlib
import json
import os
import shutil
import re
import socket
import stat
import subprocess
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import layouts  # noqa: E402

gdr_info, out = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
passed = failed = 0
SIZE = 64 << 20


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL " + what)
    return cond


cuda_dir = os.environ.get("GDR_FAKE_CUDA_DIR", "")
cufile_dir = os.environ.get("GDR_FAKE_CUFILE_DIR", "")
clean = {k: v for k, v in os.environ.items()
         if not k.startswith(("GPUDIRECT_", "GDR_FAKE_", "CUFILE_", "LD_"))}
LIVE = dict(clean, LD_LIBRARY_PATH="%s:%s" % (cuda_dir, cufile_dir),
            GDR_FAKE_GPU_MEMORY="1")


def items_of(stdout):
    try:
        return {(i["section"], i["key"]): i for i in json.loads(stdout)["items"]}
    except ValueError:
        return {}


def live(args, fake="", env=None, cwd=None, timeout=60):
    e = dict(LIVE, GDR_FAKE_CUFILE=fake, **(env or {}))
    res = subprocess.run([gdr_info, "--json"] + args, capture_output=True, text=True,
                         env=e, cwd=cwd, timeout=timeout)
    return res, items_of(res.stdout)


def want(items, name, key, verdict, words=None, section="storage0"):
    it = items.get((section, key))
    ok = it is not None and it["verdict"] == verdict and (
        words is None or words in it["value"])
    check(ok, "%s: %s/%s is %s, want %s %r" % (
        name, section, key, (it["verdict"], it["value"]) if it else None, verdict, words))
    return it

def in_mount_ns(what, script, args, env):
    """sh -c @script (its $1.. @args) in a mount namespace of its own: the
    result, or None after saying SKIP where there is none (exit 77)."""
    try:
        res = subprocess.run(["unshare", "-m", "sh", "-c", script, "sh"] + args,
                             capture_output=True, text=True, env=env, timeout=60)
    except OSError as e:
        print("SKIP %s: %s" % (what, e))
        return None
    if res.returncode == 77 or "unshare:" in res.stderr:
        print("SKIP %s: no mount namespace here (%s)" % (what, res.stderr.strip()[:100]))
        return None
    return res


def from_snapshot(snap):
    """The items gdr-info --json --from @snap reports (the replay)."""
    res = subprocess.run([gdr_info, "--json", "--from", snap], capture_output=True, text=True,
                         env=clean, timeout=60)
    return items_of(res.stdout)


def listing(d):
    return sorted(os.listdir(d))


if not (os.path.exists(os.path.join(cuda_dir, "libcuda.so.1")) and
        os.path.exists(os.path.join(cufile_dir, "libcufile.so.0"))):
    print("FAIL the fakes are not built (GDR_FAKE_CUDA_DIR, GDR_FAKE_CUFILE_DIR)")
    sys.exit(1)
shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)
data = os.path.join(out, "data")
os.makedirs(data)
work = os.path.join(out, "cwd")  # the working directory: must stay empty
os.makedirs(work)

# --- live: every answer of the stand-in -----------------------------------
CASES = [
    # (GDR_FAKE_CUFILE, {key: (verdict, words)}, NFD label)
    ("", {"cufile_write": ("ok", "64 MiB in"), "cufile_read": ("ok", "every byte as written"),
          "pread": ("info", "into host memory"),
          "served_by": ("wrong", "compat: through host memory (cuFile's statistics: reads 0 "
                                 "through nvidia-fs, 0 P2PDMA, 1 POSIX; writes 0, 0, 1)"),
          "gds": ("wrong", "compat: cuFile moved the bytes through host memory")}, "compat"),
    ("nvfs", {"served_by": ("ok", "direct (cuFile's statistics: reads 1 through nvidia-fs"),
              "gds": ("ok", "direct: cuFile wrote from and read into gpu0's memory")}, "direct"),
    ("nvfs,layout=1.20", {"served_by": ("ok", "direct (cuFile's statistics")}, "direct"),
    ("p2p", {"served_by": ("ok", "1 P2PDMA"), "gds": ("ok", "direct")}, "direct"),
    # counts that are not this check's own: the layout is not trusted, the
    # mode is what the properties and file system allow, never "direct"
    ("nvfs,miscount", {"served_by": ("wrong", "no GPU entry of cuFile's statistics counts"),
                       "gds": ("wrong", "compat")}, "compat"),
    ("nvfs,noreads", {"served_by": ("wrong", "no GPU entry of cuFile's statistics counts"),
                      "gds": ("wrong", "compat")}, "compat"),
    ("corrupt", {"cufile_read": ("wrong", "1 of its bytes differ from what was written"),
                 "gds": ("wrong", "failed")}, "fail"),
    # a read that brings nothing: the GPU buffer was cleared before it
    ("nvfs,empty", {"cufile_read": ("wrong", "of its bytes differ from what was written "
                                             "(the first at byte 0)"),
                    "gds": ("wrong", "failed")}, "fail"),
    ("short", {"cufile_read": ("wrong", "cuFileRead moved 33554432 of 67108864 bytes"),
               "gds": ("wrong", "failed")}, "fail"),
    ("read=-1", {"cufile_read": ("wrong", "cuFileRead failed: EIO"), "gds": ("wrong", "failed")},
     "fail"),
    ("write=-5044", {"cufile_write": ("wrong", "cuFileWrite failed: CU_FILE_IO_ERROR (5044)")},
     "fail"),
    ("register=5008", {"cufile_io": ("wrong", "cuFileHandleRegister answered "
                                              "CU_FILE_IO_NOT_SUPPORTED (5008)")}, "fail"),
    ("open=5001", {"gds": ("missing", "not checked: cuFile's driver did not open")}, "fail"),
    ("props=5011", {"gds": ("wrong", "compat")}, "compat"),
    ("force", {"gds": ("wrong", "compat")}, "compat"),
]
for fake, keys, label in CASES:
    nfd = os.path.join(out, "labels")
    before = listing(data)
    res, items = live(["--storage", data, "--nfd", nfd], fake, cwd=work)
    check(res.returncode == 1, "%r: exit %d (%s)" % (fake, res.returncode, res.stderr[-300:]))
    for key, (verdict, words) in keys.items():
        want(items, fake or "compat", key, verdict, words)
    check(listing(data) == before and listing(work) == [],
          "%r: files left: %s, %s" % (fake, listing(data), listing(work)))
    lab = [line for line in open(nfd).read().splitlines() if "gpudirect-gds.storage=" in line] \
        if os.path.exists(nfd) else []
    check(lab == ["feature.node.kubernetes.io/gpudirect-gds.storage=%s" % label],
          "%r: NFD label %s, want %s" % (fake, lab, label))
# The directory's own temporary file, wherever the working directory is
# (here one where no file can be made).
res, items = live(["--storage", data], "", cwd="/proc")
want(items, "cwd /proc", "cufile_write", "ok", "64 MiB in")
# the node's items
res, items = live(["--storage", data], "")
want(items, "compat", "cufile_driver", "wrong", "open without nvidia-fs", "storage")
want(items, "compat", "cufile_properties", "info", "allow_compat_mode true", "storage")
# cuFile's version as x.y, and every file system nvidia-fs reaches (the
# stand-in's nvfs: bits 0-9, 12 and 13), or none
res, items = live(["--storage", data], "nvfs")
want(items, "nvfs", "cufile_library", "ok", ", cuFile 1.15 (cuFileGetVersion 1150)", "storage")
# LIVE finds the stand-in by LD_LIBRARY_PATH: the loader's search, and
# the file it took named
want(items, "nvfs", "cufile_library", "ok", "(found by the dynamic loader's search)",
     "storage")
want(items, "nvfs", "cufile_library", "ok", "%s/libcufile.so.0" % cufile_dir, "storage")
want(items, "nvfs", "cufile_properties", "info",
     "nvidia-fs reaches: Lustre, WekaFS, NFS, GPFS, NVMe, NVMe-oF, SCSI, ScaleFlux CSD, "
     "NVMesh, BeeGFS, ScateFS, virtiofs; PCI P2PDMA not supported", "storage")
res, items = live(["--storage", data], "")
want(items, "no nvfs", "cufile_properties", "info",
     "nvidia-fs reaches nothing; PCI P2PDMA not supported", "storage")
res, items = live(["--storage", data], "open=5001")
check(items.get(("storage", "cufile_driver"), {}).get("remedy", "").startswith(
    "load nvidia-fs 2.17.5 or newer on the NVIDIA open kernel module"),
      "open=5001: the remedy is %r" % items.get(("storage", "cufile_driver")))
res, items = live(["--storage", data], "nvfs,force")
want(items, "force", "cufile_properties", "wrong", "force_compat_mode true", "storage")
# cuFile's stdout chatter and its log file: stdout stays the report's
res, items = live(["--storage", data], "chatter,log", cwd=work)
check(items and "fake cuFile: opening the driver" in res.stderr and listing(work) == [],
      "chatter,log: stdout %r, cwd %s" % (res.stdout[:80], listing(work)))
# a libcufile before the statistics calls: the mode from the properties
old = os.path.join(cufile_dir, "libcufile-1.14.so.0")
res, items = live(["--storage", data], "", env={"GPUDIRECT_CUFILE_LIB": old})
want(items, "1.14", "served_by", "wrong", "this libcufile has no statistics calls")
want(items, "1.14", "cufile_library", "ok", "(found by GPUDIRECT_CUFILE_LIB)", "storage")
res, items = live(["--storage", data], "nvfs", env={"GPUDIRECT_CUFILE_LIB": old})
want(items, "1.14 nvfs", "gds", "wrong", "compat")
# not installed, or not loadable
# a library that is not cuFile (libm): refused by the entry point it lacks
res, items = live(["--storage", data], "", env={"GPUDIRECT_CUFILE_LIB": "libm.so.6"})
want(items, "not cuFile", "cufile_library", "wrong",
     "this libcufile lacks cuFileDriverOpen", "storage")
res, items = live(["--storage", data], "", env={"GPUDIRECT_CUFILE_LIB": "/nonexistent/libcufile.so.0"})
want(items, "absent lib", "cufile_library", "missing",
     "GPUDIRECT_CUFILE_LIB=/nonexistent/libcufile.so.0 could not be loaded "
     "(/nonexistent/libcufile.so.0: cannot open shared object file", "storage")
nolib = dict(LIVE, LD_LIBRARY_PATH=cuda_dir)
res = subprocess.run([gdr_info, "--json", "--storage", data], capture_output=True,
                     text=True, env=nolib, timeout=60)
items = items_of(res.stdout)
it = items.get(("storage", "cufile_library"))
if it and it["verdict"] == "ok":
    print("SKIP cuFile not installed: this machine has a libcufile.so.0 (%s)" % it["value"])
else:
    want(items, "not installed", "cufile_library", "missing",
         "cuFile is not installed: libcufile.so.0 was not found "
         "(libcufile.so.0: cannot open shared object file", "storage")
    want(items, "not installed", "gds", "missing", "not checked: cuFile is not installed")
# no CUDA device: cuFile is not even loaded
res = subprocess.run([gdr_info, "--json", "--storage", data], capture_output=True,
                     text=True, env=clean, timeout=60)
items = items_of(res.stdout)
gpus = items.get(("node", "cuda_devices"), {}).get("value", "0")
if gpus != "0":
    # The real driver answers here (the GPU machine): no way to hide it.
    print("SKIP no CUDA device: this machine has %s (the real driver)" % gpus)
else:
    want(items, "no CUDA", "cufile_library", "unknown",
         "not asked: no CUDA device 0 to read into", "storage")
# hangs: each step bounded; the run ends, saying which step
for step in ("open", "write", "read"):
    res, items = live(["--storage", data, "--storage-timeout", "1"], "hang=" + step,
                      timeout=30)
    where = "cufile_driver" if step == "open" else "cufile_io"
    it = items.get(("storage" if step == "open" else "storage0", where), {})
    check(res.returncode == 1 and "did not return" in it.get("value", ""),
          "hang=%s: exit %d, %s" % (step, res.returncode, it))
# the path itself hangs (a hard NFS mount whose server is gone): the
# look is bounded too, and said
shim = layouts.io_faults(gdr_info)
if shim:
    hung = os.path.join(out, "hung-mount")
    os.makedirs(hung, exist_ok=True)
    res, items = live(["--storage", hung, "--storage-timeout", "1"], "",
                      env={"LD_PRELOAD": shim, "GDR_IO_OPEN_HANG": "hung-mount"}, timeout=30)
    want(items, "a path that hangs", "path", "missing", "%s: ETIMEDOUT" % hung)
    # (the path in the value is cut where the build directory is deep)
    it = want(items, "a path that hangs", "cufile_library", "unknown", "not asked: looking at ",
              "storage")
    check(it and it["value"].endswith(" did not return within 1000 ms"),
          "a path that hangs: %s" % it)
else:
    print("SKIP a path that hangs: no io-faults preload")
# a named file: only read, never written, and checked against pread
named = os.path.join(out, "named.bin")
with open(named, "wb") as f:
    f.write(os.urandom((1 << 20) + 100))
digest = hashlib.sha256(open(named, "rb").read()).hexdigest()
mtime = os.stat(named).st_mtime_ns
res, items = live(["--storage", named], "nvfs")
want(items, "named", "path", "info", "a regular file of 1048676 bytes (read, never written)")
want(items, "named", "cufile_write", "info", "not written: a named file is only read")
want(items, "named", "cufile_read", "ok", "1 MiB in")
want(items, "named", "gds", "ok", "direct: cuFile read into gpu0's memory")
check(hashlib.sha256(open(named, "rb").read()).hexdigest() == digest and
      os.stat(named).st_mtime_ns == mtime, "the named file changed")
# the fd cuFile is handed: opened afresh with the access mode and O_DIRECT
# alone (the stand-in refuses O_NONBLOCK and O_TMPFILE as cuFile 1.15
# does): read-only for a named file, read-write for a directory's file
fdlog = os.path.join(out, "fdlog")
for path, mode in ((named, "O_RDONLY"), (out, "O_RDWR")):
    if os.path.exists(fdlog):
        os.unlink(fdlog)
    res, items = live(["--storage", path], "nvfs", env={"GDR_FAKE_CUFILE_FDLOG": fdlog})
    want(items, "%s's cuFile fd" % path, "cufile_read", "ok")
    got = open(fdlog).read().split("\n") if os.path.exists(fdlog) else []
    check(got[:1] == ["register %s O_DIRECT" % mode], "%s: cuFile got %s" % (path, got))
# a file system without O_TMPFILE (the io-faults preload says EOPNOTSUPP):
# a new name instead, removed at once, and the bytes measured
shim = layouts.io_faults(gdr_info)
if shim:
    tmpd = os.path.join(out, "no-tmpfile")
    os.makedirs(tmpd, exist_ok=True)
    res, items = live(["--storage", tmpd], "nvfs",
                      env={"LD_PRELOAD": shim, "GDR_IO_NO_TMPFILE": "1"})
    want(items, "no O_TMPFILE", "cufile_write", "ok", "64 MiB in")
    want(items, "no O_TMPFILE", "cufile_read", "ok", "every byte as written")
    check(os.listdir(tmpd) == [], "no O_TMPFILE: left %s" % os.listdir(tmpd))
else:
    print("SKIP a file system without O_TMPFILE: no io-faults preload")
# its capture replays as read, never written
named_snap = os.path.join(out, "named.tar")
if os.path.exists(named_snap):
    os.unlink(named_snap)
res, items = live(["--storage", named, "--capture", named_snap], "nvfs")
bitems = from_snapshot(named_snap)
want(bitems, "named replayed", "cufile_read", "unknown", "every byte as pread reads it")
want(bitems, "named replayed", "gds", "unknown", "cuFile read into gpu0's memory")
# a path with a quote and a backslash in it: its capture is JSON still
qdir = os.path.join(out, 'q"uo\\te')
os.makedirs(qdir, exist_ok=True)
q_snap = os.path.join(out, "quote.tar")
if os.path.exists(q_snap):
    os.unlink(q_snap)
res, items = live(["--storage", qdir, "--capture", q_snap], "nvfs")
want(from_snapshot(q_snap), "a quoted path replayed", "path", "info", qdir + ": a directory")
tiny = os.path.join(out, "tiny.bin")
open(tiny, "wb").write(b"x" * 100)
res, items = live(["--storage", tiny], "")
want(items, "tiny", "cufile_io", "unknown", "shorter than 4 KiB")
# several paths: the NFD label is the worst of them, wherever it comes
nfd2 = os.path.join(out, "labels-two")
for order in ((data, tiny), (tiny, data)):
    res, items = live(["--storage", order[0], "--storage", order[1], "--nfd", nfd2], "nvfs")
    lab = [line for line in open(nfd2).read().splitlines() if "gpudirect-gds.storage=" in line] \
        if os.path.exists(nfd2) else []
    check(lab == ["feature.node.kubernetes.io/gpudirect-gds.storage=unknown"],
          "a direct path and one not measured (%s first): label %s" % (order[0], lab))
# The mount named is the one the kernel's table gives the file's device
# (major:minor as stat says it), where it is mounted, and its type: for a
# file in the build directory and one in /dev/shm (another mount, where
# there is one).


def mount_of(path):
    st = os.stat(path)
    found = None
    for line in open("/proc/self/mountinfo"):
        f = line.split(" - ")[0].split()
        rest = line.split(" - ")[1].split()
        if f[2] == "%d:%d" % (os.major(st.st_dev), os.minor(st.st_dev)):
            point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), f[4])
            if path.startswith(point.rstrip("/") + "/"):
                found = (point, rest[0])
    return found


shm = None
if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
    shm = "/dev/shm/gdr-storage-test-%d" % os.getpid()
    open(shm, "wb").write(b"s" * 8192)
for f in [tiny] + ([shm] if shm else []):
    mounted = mount_of(f)
    if mounted:
        res, items = live(["--storage", f], "")
        want(items, "%s's mount" % f, "mount", "info", " on %s (%s," % mounted)
    else:
        print("SKIP the live mount: no line of the mount table holds %s's device" % f)
if shm:
    os.unlink(shm)
# On a read-only mount (a bind mount made read-only in a mount namespace of
# its own): a named file is read and never opened for writing; a
# directory is not measured, and the item says why.
rod = os.path.join(out, "ro-mount")
os.makedirs(rod, exist_ok=True)
rof = os.path.join(rod, "f")
open(rof, "wb").write(b"z" * 8192)
ro_script = ('mount --make-rprivate / && mount --bind "$2" "$2" && '
             'mount -o remount,bind,ro "$2" "$2" || exit 77; '
             'exec "$1" --json --storage "$3" --storage "$2"')
ro = in_mount_ns("a read-only mount", ro_script, [gdr_info, rod, rof], LIVE)
if ro is not None:
    items = items_of(ro.stdout)
    want(items, "read-only mount", "mount", "info", "read-only")
    want(items, "a file on a read-only mount", "cufile_read", "ok", "every byte as pread reads it")
    want(items, "a file on a read-only mount", "cufile_write", "info",
         "not written: a named file is only read")
    want(items, "a directory on a read-only mount", "cufile_io", "unknown",
         "the mount is read-only (ro)", "storage1")
# ramfs (in a mount namespace of its own) refuses O_DIRECT: a named file
# there is read through the page cache, and said so, as is the directory's
# temporary file
ramd = os.path.join(out, "ramfs")
os.makedirs(ramd, exist_ok=True)
ram_script = ('mount --make-rprivate / && mount -t ramfs none "$2" || exit 77; '
              'head -c 12288 /dev/urandom > "$2/f" || exit 77; '
              'exec "$1" --json --storage "$2/f" --storage "$2"')
ram = in_mount_ns("ramfs", ram_script, [gdr_info, ramd], dict(LIVE, GDR_FAKE_CUFILE="nvfs"))
if ram is not None:
    items = items_of(ram.stdout)
    want(items, "a file on ramfs", "cufile_read", "ok", "12 KiB in")
    want(items, "a file on ramfs", "pread", "info", "into host memory (through the page cache)")
    want(items, "a directory on ramfs", "pread", "info",
         "into host memory (through the page cache)", "storage1")
    want(items, "a directory on ramfs", "cufile_read", "ok", "every byte as written", "storage1")
# a named file longer than the measure (64 MiB): only its first 64 MiB
# are read (a sparse file: no disk is used)
bigf = os.path.join(out, "big.bin")
with open(bigf, "wb") as f:
    f.truncate((64 << 20) + 3 * 4096 + 5)
res, items = live(["--storage", bigf], "nvfs")
want(items, "a named file past 64 MiB", "path", "info", "a regular file of 67121157 bytes")
want(items, "a named file past 64 MiB", "cufile_read", "ok", "64 MiB in")
want(items, "a named file past 64 MiB", "pread", "info", "64 MiB in")
os.unlink(bigf)
# A path longer than any fixed name (a deep directory of long names):
# taken whole, as the kernel takes it.
deep = os.path.join(out, "n" * 200, "m" * 200)
os.makedirs(deep, exist_ok=True)
longfile = os.path.join(deep, "f" * 100)
open(longfile, "wb").write(b"y" * 8192)
res, items = live(["--storage", longfile], "")
# (the item's value is cut to its buffer, with a mark: the path's start)
want(items, "a %d-byte path" % len(longfile), "path", "info", longfile[:400])
want(items, "a %d-byte path" % len(longfile), "mount", "info", " on ")
# a file root cannot read: made unreadable by a mode no one has, run as nobody
# is not possible here; a directory where nothing can be created stands in
ro = os.path.join(out, "ro")
os.makedirs(ro, exist_ok=True)
# FIFO, device node, socket: never opened (a FIFO would block an open)
fifo = os.path.join(out, "fifo")
os.mkfifo(fifo)
sock = socket.socket(socket.AF_UNIX)
sock.bind(os.path.join(out, "sock"))
kinds = [(fifo, "a FIFO"), (os.path.join(out, "sock"), "a socket")]
if os.geteuid() == 0:
    os.mknod(os.path.join(out, "chr"), 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    kinds.append((os.path.join(out, "chr"), "a character device"))
for path, words in kinds:
    res, items = live(["--storage", path], "", timeout=30)
    want(items, words, "path", "wrong", "%s, never opened" % words)
    want(items, words, "gds", "wrong", "not checked")
sock.close()
# None of them stays in the build directory (a copy of it, as the
# mutation check makes, would stop at them).
for path, words in kinds:
    os.unlink(path)
res, items = live(["--storage", os.path.join(out, "no-such")], "")
want(items, "absent", "path", "missing", "ENOENT")
# a link to the directory: resolved, and the check runs where it leads
link = os.path.join(out, "link")
os.symlink(data, link)
res, items = live(["--storage", link], "nvfs")
want(items, "link", "path", "info", "; it resolves to %s" % data)
want(items, "link", "gds", "ok", "direct")
# several paths, in order
res, items = live(["--storage", data, "--storage", named], "nvfs")
want(items, "two", "gds", "ok", "direct", "storage1")
# more than the most paths: refused before anything
res = subprocess.run([gdr_info] + ["--storage", data] * 9, capture_output=True, text=True,
                     env=LIVE, timeout=60)
check(res.returncode == 2 and "at most 8 paths" in res.stderr, "9 paths: %r" % res.stderr)
res = subprocess.run([gdr_info, "--storage", data, "--storage-timeout", "0"],
                     capture_output=True, text=True, env=LIVE, timeout=60)
check(res.returncode == 2, "--storage-timeout 0: exit %d" % res.returncode)

# --- capture and replay ------------------------------------------------------
snap = os.path.join(out, "storage.tar")
res, items = live(["--storage", data, "--capture", snap], "nvfs")
back = subprocess.run([gdr_info, "--json", "--from", snap], capture_output=True, text=True,
                      env=clean, timeout=60)
bitems = items_of(back.stdout)
want(bitems, "replay", "gds", "unknown",
     "not measured here (a snapshot); at capture: direct: cuFile wrote from")
want(bitems, "replay", "cufile_read", "unknown", "not measured here (a snapshot); at capture: 64 MiB")
want(bitems, "replay", "mount", "info", items.get(("storage0", "mount"), {}).get("value"))
want(bitems, "replay", "cufile_driver", "ok", "nvidia-fs 2.24", "storage")
check(back.returncode == 1, "a replayed storage check proves nothing: exit %d" % back.returncode)
names = tarfile.open(snap).getnames() if os.path.exists(snap) else []
check(any(n.endswith("/mountinfo") for n in names), "the capture keeps the mount table: %s"
      % [n for n in names if "mount" in n])
ans = json.load(tarfile.open(snap).extractfile("answers.json")) if names else {}
check(ans.get("storage", {}).get("paths", [{}])[0].get("path") == data,
      "answers.json's storage: %s" % str(ans.get("storage"))[:200])
res = subprocess.run([gdr_info, "--from", snap, "--storage", data], capture_output=True,
                     text=True, env=clean, timeout=60)
check(res.returncode == 2 and "need the live node" in res.stderr,
      "--storage with --from: %d %r" % (res.returncode, res.stderr))

# --- replayed layouts: the transports from the mount table and sysfs ------
NIC = dict(name="mlx5_0", chain=layouts.NIC_SW, ll=2, netdev="ens1f0", addrs=["10.0.0.5"])
CUFILE_LISTS = '{"properties": {"allow_compat_mode": true, "rdma_dev_addr_list": ["10.0.0.5"]}}'
MEASURED = {"state": 1, "gpu": 0, "odirect": 1, "bytes": SIZE, "reg_err": 0, "write_ret": SIZE,
            "write_ns": 10 ** 7, "read_ret": SIZE, "read_ns": 10 ** 7, "pread_ret": SIZE,
            "pread_ns": 2 * 10 ** 7, "checked": 1, "first_differ": -1, "stats": 1,
            "posix_reads": 1, "posix_writes": 1}


def mline(mid, majmin, point, fstype, source, sup, opts="rw,relatime"):
    return "%d 1 %s / %s %s shared:1 - %s %s %s\n" % (mid, majmin, point, opts, fstype,
                                                      source, sup)


def storage_layout(name, table, path="/mnt/data", mnt_id=40, dev=(0, 52), server="",
                   route=("", "", -1), sysfs=None, links=None, cufile=CUFILE_LISTS,
                   dstatus=0x3f, measured=None, extra=None, gpus=None, nics=None):
    root = layouts.node(out, "storage-" + name, gpus=gpus or [dict(chain=layouts.GPU_SW)],
                        nics=nics or [NIC], cufile=cufile)
    layouts.write(root, "proc/self/mountinfo", table, "wb" if isinstance(table, bytes) else "w")
    for rel, text in (sysfs or {}).items():
        layouts.write(root, rel, text)
    for rel, target in (links or {}).items():
        layouts.link(root, rel, target)
    ans = json.load(open(os.path.join(root, "answers.json")))
    p = {"path": path, "errno": 0, "kind": 2, "real": path, "dev_major": dev[0],
         "dev_minor": dev[1], "mnt_id": mnt_id, "size": 4096, "server": server,
         "route_errno": route[2], "route_dev": route[0], "route_src": route[1],
         "measured": measured if measured is not None else MEASURED}
    p.update(extra or {})
    ans["storage"] = {"cufile": {"load_err": 0, "library": "/usr/lib/libcufile.so.0",
                                 "how": "the dynamic loader's search", "version": 1150,
                                 "open_err": 0, "props_err": 0, "nvfs_major": 2,
                                 "nvfs_minor": 24, "dstatusflags": dstatus, "fflags": 0,
                                 "allow_compat": 1, "force_compat": 0, "use_p2pdma": 0},
                      "paths": [p]}
    json.dump(ans, open(os.path.join(root, "answers.json"), "w"))
    return root


def patch_answers(root, change):
    """Apply @change to the layout's answers.json (what a snapshot says)."""
    path = os.path.join(root, "answers.json")
    ans = json.load(open(path))
    change(ans)
    json.dump(ans, open(path, "w"))


def replay(root):
    res = subprocess.run([gdr_info, "--json", "--root", root], capture_output=True,
                         text=True, env=clean, timeout=60)
    check(res.returncode == 1, "%s: exit %d %s" % (root, res.returncode, res.stderr[-300:]))
    return items_of(res.stdout)


NFS_RDMA = ("rw,relatime,vers=4.2,rsize=1048576,wsize=1048576,namlen=255,hard,proto=rdma,"
            "port=20049,timeo=600,retrans=2,sec=sys,clientaddr=10.0.0.5,local_lock=none,"
            "addr=10.0.0.1")
ROOTS = mline(1, "0:25", "/", "ext4", "/dev/vda1", "rw") + mline(2, "0:26", "/proc", "proc",
                                                                    "proc", "rw")
items = replay(storage_layout("nfs-rdma", ROOTS + mline(40, "0:52", "/mnt/data", "nfs4",
                                                          "10.0.0.1:/export", NFS_RDMA),
                              server="10.0.0.1", route=("ens1f0", "10.0.0.5", 0)))
want(items, "nfs-rdma", "mount", "info", "10.0.0.1:/export on /mnt/data (nfs4, read-write)")
want(items, "nfs-rdma", "transport", "ok", "NFS 4.2 over rdma to 10.0.0.1 port 20049")
want(items, "nfs-rdma", "rdma_device", "ok",
     "mlx5_0: the route to 10.0.0.1 leaves through ens1f0 from 10.0.0.5")
want(items, "nfs-rdma", "rdma_gpu0", "ok", "mlx5_0 with gpu0: path dmabuf, PCIe PIX")
want(items, "nfs-rdma", "cufile_rdma_addrs", "ok", "/etc/cufile.json lists mlx5_0's address")
want(items, "nfs-rdma", "cufile_support", "ok", "yes: nvidia-fs reaches this file system")
want(items, "nfs-rdma", "gds", "unknown", "not measured here (a snapshot); at capture: compat")
items = replay(storage_layout("nfs-rdma-no-list", ROOTS + mline(40, "0:52", "/mnt/data", "nfs4",
                                                                  "10.0.0.1:/export", NFS_RDMA),
                              server="10.0.0.1", route=("ens1f0", "10.0.0.5", 0),
                              cufile='{"properties": {}}'))
it = want(items, "nfs-no-list", "cufile_rdma_addrs", "wrong",
          "/etc/cufile.json does not list mlx5_0's address")
check(it and "list mlx5_0's address 10.0.0.5 in cufile.json's properties.rdma_dev_addr_list"
      in it["remedy"], "nfs-no-list: remedy %r" % (it or {}).get("remedy"))
items = replay(storage_layout("nfs-tcp", ROOTS + mline(
    40, "0:52", "/mnt/data", "nfs", "10.0.0.1:/export",
    NFS_RDMA.replace("proto=rdma", "proto=tcp").replace("port=20049", "port=2049")),
    server="10.0.0.1", route=("ens1f0", "10.0.0.5", 0)))
it = want(items, "nfs-tcp", "transport", "wrong", "NFS 4.2 over tcp to 10.0.0.1 port 2049")
check(it and it["remedy"].startswith("mount the export with -o proto=rdma"),
      "nfs-tcp: remedy %r" % (it or {}).get("remedy"))
want(items, "nfs-tcp", "rdma_device", "info", "(over TCP: the RDMA device is not used)")
# each GPU with the storage's RDMA device as the report judged the pair: a
# GPU without DMA-BUF on a node without nvidia-peermem has no path
items = replay(storage_layout("nfs-rdma-no-path", ROOTS + mline(
    40, "0:52", "/mnt/data", "nfs4", "10.0.0.1:/export", NFS_RDMA),
    server="10.0.0.1", route=("ens1f0", "10.0.0.5", 0),
    gpus=[dict(chain=layouts.GPU_SW, dmabuf=0)]))
it = want(items, "no path", "rdma_gpu0", "missing", "mlx5_0 with gpu0: path none")
check(it and it["remedy"], "no path: no remedy in %s" % it)
# nvidia-fs reaches other file systems (every bit but NFS's): not this one
items = replay(storage_layout("nvfs-not-nfs", ROOTS + mline(
    40, "0:52", "/mnt/data", "nfs4", "10.0.0.1:/export", NFS_RDMA),
    server="10.0.0.1", route=("ens1f0", "10.0.0.5", 0), dstatus=0x3b))
want(items, "nvfs not nfs", "cufile_support", "wrong",
     "no: nvidia-fs does not reach this file system here (driver properties, "
     "dstatusflags 0x3b)")
# bytes partly direct, partly through host memory: mixed, never direct
items = replay(storage_layout("mixed", ROOTS + mline(
    40, "0:52", "/mnt/data", "nfs4", "10.0.0.1:/export", NFS_RDMA),
    server="10.0.0.1", route=("ens1f0", "10.0.0.5", 0),
    measured=dict(MEASURED, nvfs_reads=1, nvfs_writes=1)))
want(items, "mixed", "served_by", "unknown", "not measured here (a snapshot); at capture: "
     "partly direct, partly through host memory (cuFile's statistics: reads 1 through "
     "nvidia-fs, 0 P2PDMA, 1 POSIX; writes 1, 0, 1)")
# no statistics, a file opened without O_DIRECT: that alone rules direct
# I/O out (compat), whatever nvidia-fs reaches
items = replay(storage_layout("buffered", ROOTS + mline(
    40, "0:52", "/mnt/data", "nfs4", "10.0.0.1:/export", NFS_RDMA),
    server="10.0.0.1", route=("ens1f0", "10.0.0.5", 0),
    measured=dict(MEASURED, stats=0, odirect=0)))
want(items, "buffered", "served_by", "unknown", "at capture: compat: through host memory (from "
     "cuFile's properties and the file system: the file was not opened with O_DIRECT")
# cufile.json lists another RDMA device's address, not the storage's
NIC_B = dict(name="mlx5_1", chain=layouts.NIC_SW_B, ll=2, netdev="ens2f0", addrs=["10.0.0.6"])
items = replay(storage_layout("nfs-other-listed", ROOTS + mline(
    40, "0:52", "/mnt/data", "nfs4", "10.0.0.1:/export", NFS_RDMA),
    server="10.0.0.1", route=("ens1f0", "10.0.0.5", 0), nics=[NIC, NIC_B],
    cufile='{"properties": {"rdma_dev_addr_list": ["10.0.0.6"]}}'))
want(items, "other listed", "cufile_rdma_addrs", "wrong",
     "/etc/cufile.json does not list mlx5_0's address")
items = replay(storage_layout("nfs-route-elsewhere", ROOTS + mline(
    40, "0:52", "/mnt/data", "nfs4", "10.0.0.1:/export", NFS_RDMA),
    server="10.0.0.1", route=("eth0", "192.168.1.5", 0)))
want(items, "route-elsewhere", "rdma_device", "wrong",
     "none: the route to 10.0.0.1 leaves through eth0, which is no RDMA device's")
# NVMe-oF: the namespace's controller and its transport
NVME_F = "devices/virtual/nvme-fabrics/ctl/nvme1"
for tr, verdict in (("rdma", "ok"), ("tcp", "wrong")):
    items = replay(storage_layout(
        "nvmeof-" + tr, ROOTS + mline(40, "259:1", "/mnt/data", "xfs", "/dev/nvme1n1", "rw"),
        dev=(259, 1), server="10.0.0.2", route=("ens1f0", "10.0.0.5", 0),
        sysfs={NVME_F.join(["sys/", "/transport"]): tr + "\n",
               NVME_F.join(["sys/", "/address"]): "traddr=10.0.0.2,trsvcid=4420\n"},
        links={"sys/dev/block/259:1": "../../" + NVME_F + "/nvme1n1",
               "sys/class/block/nvme1n1": "../../" + NVME_F + "/nvme1n1",
               "sys/" + NVME_F + "/nvme1n1/device": "../../nvme1",
               "sys/class/nvme/nvme1": "../../" + NVME_F}))
    want(items, "nvmeof-" + tr, "transport", verdict,
         "nvme1n1 on nvme1 (transport %s, traddr=10.0.0.2,trsvcid=4420)" % tr)
    if tr == "rdma":
        want(items, "nvmeof-rdma", "rdma_device", "ok", "mlx5_0: the route to 10.0.0.2")
# NVMe-oF through a multipath head: nvme0n1's path nvme0c1n1 on controller nvme1
SUBSYS = "devices/virtual/nvme-subsystem/nvme-subsys0"
items = replay(storage_layout(
    "nvmeof-multipath", ROOTS + mline(40, "259:3", "/mnt/data", "ext4", "/dev/nvme0n1", "rw"),
    dev=(259, 3), server="10.0.0.2", route=("ens1f0", "10.0.0.5", 0),
    sysfs={NVME_F.join(["sys/", "/transport"]): "rdma\n",
           NVME_F.join(["sys/", "/address"]): "traddr=10.0.0.2,trsvcid=4420\n"},
    links={"sys/dev/block/259:3": "../../" + SUBSYS + "/nvme0n1",
           "sys/class/block/nvme0n1": "../../" + SUBSYS + "/nvme0n1",
           "sys/" + SUBSYS + "/nvme0n1/multipath/nvme0c1n1": "../../../../../" + NVME_F +
           "/nvme0c1n1",
           "sys/class/nvme/nvme1": "../../" + NVME_F}))
want(items, "multipath", "transport", "ok", "nvme0n1 on nvme1 (transport rdma")
# local NVMe, on a partition
PCI_NVME = "devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0"
items = replay(storage_layout(
    "nvme-local", ROOTS + mline(40, "259:2", "/mnt/data", "ext4", "/dev/nvme0n1p2", "rw"),
    dev=(259, 2),
    sysfs={"sys/%s/transport" % PCI_NVME: "pcie\n", "sys/%s/address" % PCI_NVME: "0000:3d:00.0\n",
           "sys/%s/nvme0n1/nvme0n1p2/partition" % PCI_NVME: "2\n"},
    links={"sys/dev/block/259:2": "../../%s/nvme0n1/nvme0n1p2" % PCI_NVME,
           "sys/class/block/nvme0n1": "../../%s/nvme0n1" % PCI_NVME,
           "sys/%s/nvme0n1/device" % PCI_NVME: "../../nvme0",
           "sys/class/nvme/nvme0": "../../%s" % PCI_NVME}))
want(items, "nvme-local", "transport", "ok", "nvme0n1 on nvme0 (transport pcie, 0000:3d:00.0)")
# direct I/O possible there, and a libcufile without statistics: the mode
# is not known, never guessed
items = replay(storage_layout(
    "nvme-local-no-stats", ROOTS + mline(40, "259:2", "/mnt/data", "ext4", "/dev/nvme0n1p2", "rw"),
    dev=(259, 2), measured=dict(MEASURED, stats=0, posix_reads=0, posix_writes=0,
                                stats_why="this libcufile has no statistics calls"),
    sysfs={"sys/%s/transport" % PCI_NVME: "pcie\n",
           "sys/%s/nvme0n1/nvme0n1p2/partition" % PCI_NVME: "2\n"},
    links={"sys/dev/block/259:2": "../../%s/nvme0n1/nvme0n1p2" % PCI_NVME,
           "sys/class/block/nvme0n1": "../../%s/nvme0n1" % PCI_NVME,
           "sys/%s/nvme0n1/device" % PCI_NVME: "../../nvme0",
           "sys/class/nvme/nvme0": "../../%s" % PCI_NVME}))
want(items, "no-stats", "served_by", "unknown", "nothing shows which mode served the bytes")
want(items, "no-stats", "gds", "unknown", "at capture: not known")
check(("storage0", "rdma_device") not in items, "nvme-local: an RDMA device item")
# Lustre over o2ib, and over tcp
for nid, verdict in (("o2ib", "ok"), ("tcp", "wrong")):
    items = replay(storage_layout(
        "lustre-" + nid, ROOTS + mline(40, "0:60", "/mnt/data", "lustre",
                                       "10.0.0.3@%s:/lfs" % nid, "rw,flock"),
        dev=(0, 60), sysfs={"sys/module/lustre/version": "2.15.4\n"}))
    want(items, "lustre-" + nid, "transport", verdict, "lustre, client module lustre loaded")
# allow_compat_mode unknown (a libcufile without cuFileGetParameterBool):
# possibly allowed, so not ok
root = storage_layout("compat-unknown", ROOTS + mline(40, "0:52", "/mnt/data", "nfs4",
                                                      "10.0.0.1:/export", NFS_RDMA))
patch_answers(root, lambda ans: ans["storage"]["cufile"].update(allow_compat=-1))
items = replay(root)
want(items, "compat unknown", "cufile_properties", "info", "nvidia-fs reaches: Lustre", "storage")
# NFS over RDMA on IPv6 (proto=rdma6) is RDMA; options that name no
# proto= say so, not TCP
items = replay(storage_layout("nfs-rdma6", ROOTS + mline(
    40, "0:52", "/mnt/data", "nfs4", "[fd00::1]:/export",
    NFS_RDMA.replace("proto=rdma", "proto=rdma6").replace("addr=10.0.0.1", "addr=fd00::1")),
    server="fd00::1", route=("ens1f0", "fd00::5", 0)))
want(items, "nfs-rdma6", "transport", "ok", "NFS 4.2 over rdma6 to fd00::1 port 20049")
items = replay(storage_layout("nfs-no-proto", ROOTS + mline(
    40, "0:52", "/mnt/data", "nfs4", "10.0.0.1:/export", "rw,vers=4.2,addr=10.0.0.1"),
    server="10.0.0.1"))
want(items, "nfs-no-proto", "transport", "unknown", "unknown: the mount's options name no proto=")
# a SCSI disk's partition, a virtio disk, and a file system on an
# anonymous device that is not known by name
SCSI = "devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sda"
items = replay(storage_layout(
    "scsi", ROOTS + mline(40, "8:2", "/mnt/data", "xfs", "/dev/sda2", "rw"), dev=(8, 2),
    sysfs={"sys/%s/sda2/partition" % SCSI: "2\n"},
    links={"sys/dev/block/8:2": "../../%s/sda2" % SCSI}))
want(items, "scsi", "transport", "info", "sda")
VDA = "devices/pci0000:00/0000:00:04.0/virtio1/block/vda"
items = replay(storage_layout(
    "virtio-blk", ROOTS + mline(40, "254:0", "/mnt/data", "ext4", "/dev/vda", "rw"),
    dev=(254, 0), links={"sys/dev/block/254:0": "../../" + VDA}))
want(items, "virtio-blk", "transport", "wrong", "vda: not known to GPUDirect Storage")
items = replay(storage_layout("anon", ROOTS + mline(40, "0:80", "/mnt/data", "fuse.sshfs",
                                                     "u@h:/d", "rw"), dev=(0, 80),
                              links={"sys/dev/block/0:80": "../../devices/virtual/block/x"}))
want(items, "anon", "transport", "wrong", "fuse.sshfs: not known to GPUDirect Storage")
# a table past 256 KiB whose mount is beyond what was read: said so
big = ROOTS + "".join(mline(1000 + i, "0:99", "/m/%06d" % i, "tmpfs", "t", "rw")
                      for i in range(5000))
check(len(big) > 256 << 10, "the big table is %d bytes" % len(big))
items = replay(storage_layout("cut", big + mline(40, "0:52", "/mnt/data", "nfs4",
                                                  "10.0.0.1:/export", NFS_RDMA)))
want(items, "cut", "mount", "unknown", "no line of /proc/self/mountinfo is its mount "
     "(mount id 40, device 0:52); the table was read only to 256 KiB")
items = replay(storage_layout("not-cut", ROOTS + mline(40, "0:52", "/mnt/data", "nfs4",
                                                       "10.0.0.1:/export", NFS_RDMA), mnt_id=41))
it = want(items, "not-cut", "mount", "unknown", "no line of /proc/self/mountinfo is its mount")
check(it and "256 KiB" not in it["value"], "not-cut: %r" % (it or {}).get("value"))
# overlay and tmpfs: not known to GPUDirect Storage
for fs, words in (("overlay", "overlay (a container's layered file system)"),
                  ("tmpfs", "tmpfs (memory, not storage)")):
    items = replay(storage_layout(fs, ROOTS + mline(40, "0:70", "/mnt/data", fs, fs,
                                                     "rw,lowerdir=/a,upperdir=/b,workdir=/c"),
                                  dev=(0, 70), dstatus=0x3f))
    it = want(items, fs, "transport", "wrong", words)
    want(items, fs, "cufile_support", "wrong", "no: cuFile has no direct path to")
    if fs == "overlay":
        check(it and "not on the container's layered root" in it["remedy"],
              "overlay: remedy %r" % (it or {}).get("remedy"))
# hostile tables: escapes, a long line, malformed lines, a NUL, the device
# and longest mount point where the kernel gives no mount id
esc = ROOTS + "x" * 70000 + "\n" + "3 1 0:1 / /bad\\999 rw - ext4 a rw\n" + \
    mline(40, "0:52", "/mnt/my\\040data\\011x", "nfs4", "10.0.0.1:/ex\\134port", NFS_RDMA)
items = replay(storage_layout("escapes", esc, path="/mnt/my data\tx",
                              server="10.0.0.1", route=("ens1f0", "10.0.0.5", 0)))
want(items, "escapes", "mount", "info",
     "10.0.0.1:/ex\\port on /mnt/my data\tx (nfs4, read-write); 2 lines of the table not in "
     "mountinfo's form were passed over")
items = replay(storage_layout("by-device", ROOTS + mline(50, "0:52", "/mnt", "tmpfs", "t", "rw") +
                              mline(51, "0:52", "/mnt/data", "nfs4", "10.0.0.1:/e", NFS_RDMA) +
                              mline(52, "0:53", "/mnt/data/deeper", "nfs4", "x:/y", NFS_RDMA),
                              path="/mnt/data/sub", mnt_id=-1, extra={"real": "/mnt/data/sub"}))
want(items, "by-device", "mount", "info", "10.0.0.1:/e on /mnt/data (nfs4")
# by device: of two mounts at one point the later (the one that hides the
# other) is the file's; a mount of another minor of the same major is
# not, even where its point holds the path
items = replay(storage_layout("by-device-hidden",
                              ROOTS +
                              mline(51, "0:52", "/mnt/data", "nfs4", "10.0.0.9:/old", NFS_RDMA) +
                              mline(52, "0:52", "/mnt/data", "nfs4", "10.0.0.1:/e", NFS_RDMA) +
                              mline(53, "0:53", "/mnt/data/sub", "nfs4", "x:/y", NFS_RDMA),
                              path="/mnt/data/sub", mnt_id=-1, extra={"real": "/mnt/data/sub"}))
want(items, "by-device, hidden and other minor", "mount", "info", "10.0.0.1:/e on /mnt/data (nfs4")
items = replay(storage_layout("nul", ROOTS.encode() + b"\0junk\n"))
want(items, "nul", "mount", "unknown", "not the kernel's table")
items = replay(storage_layout("no-line", ROOTS, mnt_id=99))
want(items, "no-line", "mount", "unknown", "no line of /proc/self/mountinfo is its mount")
# crafted answers: kinds, numbers and texts no check gives
items = replay(storage_layout("crafted", ROOTS, extra={"kind": 99, "mnt_id": 1e300,
                                                      "path": "\x1b[2J" + "p" * 5000},
                              measured={"state": 1, "bytes": -5, "write_ret": "x",
                                        "differ": 2 ** 60, "reg_err": 0}))
check(items.get(("storage0", "path"), {}).get("verdict") == "wrong", "crafted: %s" %
      items.get(("storage0", "path")))
# a mount id that is not a whole number is not taken (the mount is found
# by its device), never cut to another mount's (line 2 is /proc's)
items = replay(storage_layout("fraction", ROOTS + mline(40, "0:52", "/mnt/data", "nfs4",
                                                       "10.0.0.1:/export", NFS_RDMA),
                              extra={"mnt_id": 2.5}))
want(items, "fraction", "mount", "info", "10.0.0.1:/export on /mnt/data (nfs4")
# a mount id past 2^53 (no longer an exact integer in JSON) is not taken
items = replay(storage_layout("huge-id", ROOTS + mline(40, "0:52", "/mnt/data", "nfs4",
                                                      "10.0.0.1:/export", NFS_RDMA),
                              extra={"mnt_id": 2 ** 60}))
want(items, "huge id", "mount", "info", "10.0.0.1:/export on /mnt/data (nfs4")
# a path whose measurement says neither a state nor why: said so
items = replay(storage_layout("no-why", ROOTS + mline(40, "0:52", "/mnt/data", "nfs4",
                                                     "10.0.0.1:/export", NFS_RDMA), measured={}))
want(items, "no why", "cufile_io", "unknown", "not measured: not in this snapshot")
# the step that did not return is kept in a capture, and said in its replay
hung_snap = os.path.join(out, "hung-open.tar")
if os.path.exists(hung_snap):
    os.unlink(hung_snap)
res, items = live(["--storage", data, "--storage-timeout", "1", "--capture", hung_snap],
                  "hang=open", timeout=30)
want(from_snapshot(hung_snap), "hung open replayed", "cufile_driver", "unknown",
     "not opened: cuFileDriverOpen did not return in time", "storage")
# a capture whose read brought other bytes replays as such
items = replay(storage_layout("differ", ROOTS + mline(40, "0:52", "/mnt/data", "nfs4",
                                                     "10.0.0.1:/export", NFS_RDMA),
                              measured=dict(MEASURED, differ=3, first_differ=4096)))
want(items, "differ replayed", "cufile_read", "unknown", "3 of its bytes differ")
# a snapshot's cufile without load_err: not taken as loaded
root = storage_layout("no-load-err", ROOTS + mline(40, "0:52", "/mnt/data", "nfs4",
                                                  "10.0.0.1:/export", NFS_RDMA))
patch_answers(root, lambda ans: ans["storage"]["cufile"].pop("load_err"))
it = replay(root).get(("storage", "cufile_library"), {})
check(it.get("verdict") == "unknown", "no load_err: cufile_library %s" % it)
# "storage" that is not an object: the snapshot is refused, saying why
root = storage_layout("not-object", ROOTS)
patch_answers(root, lambda ans: ans.update(storage=[1, 2]))
res = subprocess.run([gdr_info, "--json", "--root", root], capture_output=True, text=True,
                     env=clean, timeout=60)
check(res.returncode not in (0, 1) and '"storage" is not an object' in res.stderr,
      "storage not an object: exit %d %r" % (res.returncode, res.stderr[-200:]))
# --host-root: the live path's mount found in the tree's table by its mount id
hr = layouts.node(out, "storage-host-root", gpus=[dict(chain=layouts.GPU_SW)], nics=[NIC])
fd = os.open(data, os.O_RDONLY)
mnt = [line.split()[1] for line in open("/proc/self/fdinfo/%d" % fd) if line.startswith("mnt_id")]
os.close(fd)
st = os.stat(data)
layouts.write(hr, "proc/self/mountinfo", mline(int(mnt[0]) if mnt else 1, "%d:%d" % (
    os.major(st.st_dev), os.minor(st.st_dev)), "/", "nfs4", "10.0.0.1:/e", NFS_RDMA))
snap = os.path.join(out, "host-root.tar")
res = subprocess.run([gdr_info, "--json", "--host-root", hr, "--storage", data, "--capture", snap],
                     capture_output=True, text=True, env=dict(LIVE, GDR_FAKE_CUFILE="nvfs"),
                     timeout=60)
items = items_of(res.stdout)
want(items, "host-root", "transport", "ok", "NFS 4.2 over rdma to 10.0.0.1")
want(items, "host-root", "rdma_device", "unknown", "no route to 10.0.0.1")
want(from_snapshot(snap), "host-root replay", "transport", "ok", "NFS 4.2 over rdma")
# --host-root, the live path as an NVMe-oF namespace: the server whose
# route is asked is the controller's traddr (not its port)
hr = layouts.node(out, "storage-host-root-nvmeof", gpus=[dict(chain=layouts.GPU_SW)], nics=[NIC])
layouts.write(hr, "proc/self/mountinfo", mline(int(mnt[0]) if mnt else 1, "259:1", "/", "xfs",
                                               "/dev/nvme1n1", "rw"))
layouts.write(hr, NVME_F.join(["sys/", "/transport"]), "rdma\n")
layouts.write(hr, NVME_F.join(["sys/", "/address"]), "traddr=10.0.0.2,trsvcid=4420\n")
for rel, target in (("sys/dev/block/259:1", "../../" + NVME_F + "/nvme1n1"),
                    ("sys/class/block/nvme1n1", "../../" + NVME_F + "/nvme1n1"),
                    ("sys/" + NVME_F + "/nvme1n1/device", "../../nvme1"),
                    ("sys/class/nvme/nvme1", "../../" + NVME_F)):
    layouts.link(hr, rel, target)
res = subprocess.run([gdr_info, "--json", "--host-root", hr, "--storage", data],
                     capture_output=True, text=True, env=dict(LIVE, GDR_FAKE_CUFILE="nvfs"),
                     timeout=60)
items = items_of(res.stdout)
want(items, "host-root nvmeof", "transport", "ok",
     "nvme1n1 on nvme1 (transport rdma, traddr=10.0.0.2,trsvcid=4420)")
want(items, "host-root nvmeof", "rdma_device", "unknown", "no route to 10.0.0.2")

print("storage: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
