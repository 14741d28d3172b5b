#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gdr-info on hostile input, as root: crafted snapshots (--from, --root),
captures aimed at links and odd names (--capture, --host-root), FIFOs,
bombs, loops, huge files, bytes that are not UTF-8, and --nfd over links,
directories and another user's sticky directory. Each case asserts the exit
status, that nothing outside the intended file changed (the case's own
directory is listed before and after), that no temporary file is left, and
that it ends within its time.

    test-hostile.py GDR_INFO [OUTDIR]

The cases live in OUTDIR (default: a directory in /tmp). With OUTDIR, each
gdr-info runs in a mount namespace of its own (unshare(1)) whose /tmp is an
empty directory of the case, which must still be empty afterwards: what
other programs do in /tmp meanwhile cannot be mistaken for gdr-info's.
Without unshare, or without OUTDIR, /tmp itself is listed before and after.

Exits 77 unless root: the dangers it checks are those of root (a tar run
as root keeps owners, modes, devices and FIFOs)."""
import gzip
import hashlib
import io
import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
import time

gdr_info = os.path.abspath(sys.argv[1])
outdir = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else None
if os.geteuid() != 0:
    print("SKIP: the hostile-input suite runs as root (what gdr-info "
          "does on a node); run it with sudo or in CI")
    sys.exit(77)

passed = failed = 0
NV = ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04"
      "  Release Build  (dvs-builder@U22)  Thu Oct 30 2025\n")


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what)
    return cond


def answers(**extra):
    a = {"format": "libgpudirect-snapshot", "version": 2,
         "kernel_release": "6.8.0-test",
         "cuda": {"error": "", "driver_version": 12040, "devices": [
             {"name": "Test GPU", "pci_bus_id": "0000:06:00.0",
              "dmabuf_supported": 1, "gpudirect_rdma_supported": 1,
              "gpudirect_rdma_with_vmm": 1, "c2c": 0, "c2c_why": "",
              "pcie_mapping": -1}]},
         "libibverbs_dmabuf": True, "mlx5dv": 0,
         "rdma_devices": [{"name": "mlx5_0", "dmabuf_probe_errno": 9,
                           "port_state": 4, "link_layer": 2, "mlx5": 0,
                           "data_direct_errno": 19, "data_direct_path": ""}],
         "links": {}}
    for k, v in extra.items():
        a[k] = v
    return json.dumps(a).encode()


def member(t, name, data=b"", type_=tarfile.REGTYPE, mode=0o644, link="",
           dev=(0, 0)):
    info = tarfile.TarInfo(name)
    info.type = type_
    info.mode = mode
    info.size = len(data) if type_ == tarfile.REGTYPE else 0
    info.linkname = link
    info.devmajor, info.devminor = dev
    info.uid = info.gid = 0
    t.addfile(info, io.BytesIO(data) if info.size else None)


def snapshot(path, members, ans=None, fmt=tarfile.GNU_FORMAT):
    with tarfile.open(path, "w", format=fmt) as t:
        member(t, "proc/driver/nvidia/version", NV.encode())
        for m in members:
            member(t, *m[0], **m[1]) if isinstance(m, tuple) else None
        member(t, "answers.json", ans if ans is not None else answers())


def listing(root):
    """Every path below @root with its type, mode, owner and content hash."""
    out = {}
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            p = os.path.join(d, n)
            try:
                st = os.lstat(p)
            except FileNotFoundError:
                continue
            h = ""
            if stat.S_ISREG(st.st_mode) and st.st_size < (1 << 20):
                with open(p, "rb") as f:
                    h = hashlib.sha256(f.read()).hexdigest()
            out[p] = (stat.S_IFMT(st.st_mode), st.st_mode & 0o7777,
                      st.st_uid, h, os.readlink(p) if os.path.islink(p) else "")
    return out


def tmp_names():
    # Other runs of this suite (another build directory) come and go.
    return {n for n in os.listdir("/tmp") if not n.startswith("gdr-hostile-")}


# gdr-info in a mount namespace whose /tmp is the case's empty directory,
# with the real /tmp held at $0 (outside /tmp) and, inside the new /tmp,
# the top-level directories the run needs (the build, the cases) bound
# back to their real ones.
PRIVATE_SH = r"""
hold=$0 priv=$1 tops=$2
shift 2
mount --bind /tmp "$hold" || exit 125
mount --bind "$priv" /tmp || exit 125
for t in $tops; do
        mkdir -p "/tmp/$t" && mount --bind "$hold/$t" "/tmp/$t" || exit 125
done
exec "$@"
"""


def tmp_tops():
    """The entries of /tmp the runs need: those holding gdr-info, its
    library and the cases."""
    tops = set()
    for p in (gdr_info, outdir or "/"):
        p = os.path.realpath(p)
        if p.startswith("/tmp/"):
            tops.add(p.split("/")[2])
    return sorted(tops)


HOLD = None


def private_tmp_works():
    """Can gdr-info be given a /tmp of its own (unshare, as root)?"""
    global HOLD
    if not outdir or not shutil.which("unshare") or not os.path.isdir("/run"):
        return False
    try:
        HOLD = tempfile.mkdtemp(prefix="gdr-hostile-hold-", dir="/run")
    except OSError:
        return False
    probe = tempfile.mkdtemp(dir=outdir)
    try:
        r = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                            PRIVATE_SH, HOLD, probe, " ".join(tmp_tops()),
                            "sh", "-c", 'touch /tmp/x && test -x "$0"', gdr_info],
                           capture_output=True, timeout=30)
        return r.returncode == 0 and "x" in os.listdir(probe)
    except (OSError, subprocess.TimeoutExpired):
        return False
    finally:
        shutil.rmtree(probe, ignore_errors=True)


def run(args, cwd, timeout=30, tmp=None):
    cmd = [gdr_info] + args
    if tmp:
        cmd = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
               PRIVATE_SH, HOLD, tmp, " ".join(tmp_tops())] + cmd
    t0 = time.monotonic()
    try:
        r = subprocess.run(cmd, cwd=cwd, capture_output=True,
                           timeout=timeout)
        return r.returncode, r.stdout, r.stderr, time.monotonic() - t0
    except subprocess.TimeoutExpired:
        return "timeout", b"", b"", timeout


def private_tmp_left(tmp):
    """What a run left in its /tmp: the mount points of tmp_tops() are
    empty directories there, anything else is the run's."""
    left = set()
    for n in os.listdir(tmp):
        p = os.path.join(tmp, n)
        if n in tmp_tops() and os.path.isdir(p) and not os.path.islink(p) and not os.listdir(p):
            continue
        left.add(n)
    return left


if outdir:
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(outdir)
PRIVATE_TMP = private_tmp_works()


class Case:
    """One case in its own directory; that directory and /tmp checked."""

    def __init__(self, name):
        self.name = name
        self.dir = tempfile.mkdtemp(prefix="gdr-hostile-", dir=outdir)
        # the directory the cases work in; /tmp of gdr-info beside it
        self.tmp = None
        if PRIVATE_TMP:
            self.tmp = tempfile.mkdtemp(prefix="tmp-", dir=outdir)
        self.tmp0 = tmp_names()
        self.failed0 = failed

    def __enter__(self):
        return self

    def run(self, args, want_rc, timeout=30, may_change=()):
        before = listing(self.dir)
        rc, out, err, took = run(args, self.dir, timeout, self.tmp)
        check(rc != "timeout", "%s: no answer within %d s (a hang)" % (self.name, timeout))
        ok = rc in want_rc if isinstance(want_rc, tuple) else rc == want_rc
        check(ok, "%s: exit %s, want %s; stderr %r" % (self.name, rc, want_rc, err[-300:]))
        after = listing(self.dir)
        changed = {p for p in set(before) | set(after)
                   if before.get(p) != after.get(p)} - set(may_change)
        check(not changed, "%s: changed %s" % (self.name, sorted(changed)[:5]))
        return rc, out, err

    def __exit__(self, *exc):
        if self.tmp:
            left = private_tmp_left(self.tmp)
            shutil.rmtree(self.tmp, ignore_errors=True)
        else:
            left = tmp_names() - self.tmp0
        check(not left, "%s: left in /tmp: %s" % (self.name, sorted(left)))
        shutil.rmtree(self.dir, ignore_errors=True)
        print("ok  " if failed == self.failed0 else "BAD ", self.name)


def refused(c, members, word, name):
    snap = os.path.join(c.dir, "s.tar")
    with tarfile.open(snap, "w", format=tarfile.GNU_FORMAT) as t:
        member(t, "proc/driver/nvidia/version", NV.encode())
        for args, kw in members:
            member(t, *args, **kw)
        member(t, "answers.json", answers())
    rc, out, err = c.run(["--from", snap], 2)
    check(word.encode() in err, "%s: the message %r lacks %r" % (name, err, word))


# --- --from: what an archive may not hold --------------------------------
for name, members, word in [
    ("from: a character device", [(("dev/null2",), dict(type_=tarfile.CHRTYPE, mode=0o666, dev=(1, 3)))], "character device"),
    ("from: a FIFO at the driver's version", [(("proc/driver/nvidia/version",), dict(type_=tarfile.FIFOTYPE))], "FIFO"),
    ("from: a symbolic link", [(("sys/module/nvidia_peermem/version",), dict(type_=tarfile.SYMTYPE, link="/etc/hostname"))], "symbolic link"),
    ("from: a hard link", [(("sys/x",), dict(type_=tarfile.LNKTYPE, link="answers.json"))], "hard link"),
    ("from: an absolute name", [(("/etc/gdr-hostile",), dict(data=b"x"))], "absolute"),
    ("from: a '..' name", [(("../gdr-hostile",), dict(data=b"x"))], '".."'),
    ("from: a name of 2000 bytes", [(("a/" * 1000 + "x",), dict(data=b"x"))], "too long"),
]:
    with Case(name) as c:
        refused(c, members, word, name)

with Case("from: a setuid file and a ./ entry of mode 0777 (modes are data)") as c:
    snap = os.path.join(c.dir, "s.tar")
    with tarfile.open(snap, "w", format=tarfile.GNU_FORMAT) as t:
        member(t, ".", type_=tarfile.DIRTYPE, mode=0o777)
        member(t, "proc/driver/nvidia/version", NV.encode())
        member(t, "sys/evil", b"#!/bin/sh\nid\n", mode=0o4755)
        member(t, "answers.json", answers())
    os.chmod(c.dir, 0o700)
    rc, out, err = c.run(["--from", snap], (0, 1))
    check(stat.S_IMODE(os.stat(c.dir).st_mode) == 0o700, "the directory's mode changed")
    check(b"580.159.04" in out, "the replayed report lacks the driver version")

with Case("from: a gzip bomb (1 GB of zeros)") as c:
    bomb = os.path.join(c.dir, "bomb.tar.gz")
    with gzip.open(bomb, "wb", compresslevel=9) as g:
        z = bytes(1 << 20)
        for _ in range(1024):
            g.write(z)
    check(os.path.getsize(bomb) < (2 << 20), "the bomb is small")
    rc, out, err = c.run(["--from", bomb], 2, timeout=60)
    check(b"decompresses to more than" in err, "bomb: %r" % err)

with Case("from: a gzip'd snapshot that is fine") as c:
    snap = os.path.join(c.dir, "s.tar")
    snapshot(snap, [])
    with open(snap, "rb") as f, gzip.open(snap + ".gz", "wb") as g:
        g.write(f.read())
    rc, out, err = c.run(["--from", snap + ".gz"], (0, 1))
    check(b"580.159.04" in out, "gzip'd: %r" % err)

with Case("from: a host:file name is a local file") as c:
    t0 = time.monotonic()
    rc, out, err = c.run(["--from", "node1.invalid:snap.tar"], 2, timeout=10)
    check(b"No such file" in err, "host:file: %r" % err)

with Case("from: not a tar archive") as c:
    junk = os.path.join(c.dir, "junk")
    with open(junk, "wb") as f:
        f.write(os.urandom(4096))
    c.run(["--from", junk], 2)

with Case("from: a link to /etc/hostname inside the snapshot") as c:
    snap = os.path.join(c.dir, "s.tar")
    links = {"sys/module/nvidia_peermem/version": "/etc/hostname",
             "sys/a": "b", "sys/b": "a",
             "sys/module/nv_peer_mem/version": "../../../../../etc/hostname"}
    snapshot(snap, [], answers(links=links))
    rc, out, err = c.run(["--from", snap], (0, 1))
    check(b"nvidia_peermem/version)" not in out and b"nv_peer_mem/version)" not in out,
          "the host's /etc/hostname was read: %r" % out[-400:])
    # An absolute link resolves from the snapshot's root, as on the node.
    with tarfile.open(snap, "w", format=tarfile.GNU_FORMAT) as t:
        member(t, "proc/driver/nvidia/version", NV.encode())
        member(t, "sys/kernel/peer/version", b"7.7\n")
        member(t, "answers.json", answers(links={
            "sys/module/nvidia_peermem/version": "/sys/kernel/peer/version"}))
    rc, out, err = c.run(["--from", snap], (0, 1))
    check(b"7.7 (/sys/module/nvidia_peermem/version)" in out,
          "an absolute link inside the snapshot did not resolve: %r" % out[-400:])

with Case("from: GNU, pax and ustar archives with a long name replay alike") as c:
    # A member whose name is over 100 bytes is stored as a GNU long-name
    # record, a pax path= record or a ustar prefix: each must read as the
    # same path (a link in answers.json points the peermem item at it).
    deep = "sys/" + "d" * 120 + "/version"
    got = {}
    for fmt, fname in [(tarfile.GNU_FORMAT, "gnu"), (tarfile.PAX_FORMAT, "pax"),
                       (tarfile.USTAR_FORMAT, "ustar")]:
        snap = os.path.join(c.dir, fname + ".tar")
        with tarfile.open(snap, "w", format=fmt) as t:
            member(t, "proc/driver/nvidia/version", NV.encode())
            member(t, deep, b"7.7\n")
            member(t, "answers.json", answers(links={
                "sys/module/nvidia_peermem/version": "/" + deep}))
        rc, out, err = c.run(["--from", snap], (0, 1))
        check(b"7.7 (/sys/module/nvidia_peermem/version)" in out,
              "%s: the long-named member was not read: %r %r" % (fname, out[-300:], err[-300:]))
        got[fname] = out
    check(got["gnu"] == got["pax"] == got["ustar"], "the three formats replay differently")

with Case("from: a member given twice: the later one wins") as c:
    snap = os.path.join(c.dir, "s.tar")
    with tarfile.open(snap, "w", format=tarfile.GNU_FORMAT) as t:
        member(t, "proc/driver/nvidia/version", NV.replace("580.159.04", "111.11.11").encode())
        member(t, "proc/driver/nvidia/version", NV.encode())
        member(t, "answers.json", answers())
    rc, out, err = c.run(["--from", snap], (0, 1))
    check(b"580.159.04" in out and b"111.11.11" not in out,
          "the earlier member won: %r" % out[:400])

def raw_header(name, size=0, type_=b"0", magic=b"ustar\x0000", tail=b""):
    """A 512-byte tar header built by hand (what tarfile will not write):
    @magic at 257, @tail at 345 (a ustar prefix, or junk), checksummed."""
    h = bytearray(512)
    h[0:len(name)] = name
    h[100:108] = b"0000644\0"
    h[108:116] = h[116:124] = b"0000000\0"
    h[124:136] = b"%011o\0" % size
    h[136:148] = b"00000000000\0"
    h[156:157] = type_
    h[257:257 + len(magic)] = magic
    h[345:345 + len(tail)] = tail
    h[148:156] = b" " * 8
    h[148:156] = b"%06o\0 " % sum(h)
    return bytes(h)


def raw_member(name, data=b"", **kw):
    pad = b"\0" * (-len(data) % 512)
    return raw_header(name, len(data), **kw) + data + pad


with Case("from: a member of a tar type no snapshot holds (a volume label)") as c:
    snap = os.path.join(c.dir, "s.tar")
    with tarfile.open(snap, "w", format=tarfile.GNU_FORMAT) as t:
        member(t, "proc/driver/nvidia/version", NV.encode())
        member(t, "label", type_=b"V")
        member(t, "answers.json", answers())
    rc, out, err = c.run(["--from", snap], 2)
    check(b"of tar type 'V'" in err, "type V: %r" % err)

with Case("from: a pre-POSIX header: bytes past its name are no prefix") as c:
    # Without the ustar magic, byte 345 on is not a name prefix: the
    # member is its 100-byte name only.
    snap = os.path.join(c.dir, "s.tar")
    with open(snap, "wb") as f:
        f.write(raw_member(b"proc/driver/nvidia/version", NV.encode(), magic=b"",
                           tail=b"junk"))
        f.write(raw_member(b"answers.json", answers()))
        f.write(b"\0" * 1024)
    rc, out, err = c.run(["--from", snap], (0, 1))
    check(b"580.159.04" in out, "v7 header: the version file was not read: %r %r"
          % (out[-300:], err[-300:]))

with Case("from: a pax path record too short to hold its value") as c:
    # "7 path=" is 7 bytes: the record ends before its value begins.
    snap = os.path.join(c.dir, "s.tar")
    with open(snap, "wb") as f:
        f.write(raw_member(b"././@PaxHeader", b"7 path=", type_=b"x"))
        f.write(raw_member(b"proc/driver/nvidia/version", NV.encode()))
        f.write(raw_member(b"answers.json", answers()))
        f.write(b"\0" * 1024)
    rc, out, err = c.run(["--from", snap], 2)
    check(b"a pax header is malformed" in err, "short pax record: %r" % err)

with Case("from: a link whose target and the rest are longer than a path") as c:
    # /sys/module/nvidia_peermem -> 4090 bytes: with "/version" after it
    # the name is past PATH_MAX, and the read fails with ENAMETOOLONG.
    snap = os.path.join(c.dir, "s.tar")
    snapshot(snap, [], answers(links={"sys/module/nvidia_peermem": "/" + "d" * 4089}))
    rc, out, err = c.run(["--from", snap], (0, 1))
    check(b"unreadable: ENAMETOOLONG (/sys/module/nvidia_peermem/version)" in out,
          "a too long link: %r" % out[-400:])

with Case("from: an empty archive") as c:
    snap = os.path.join(c.dir, "empty.tar")
    with tarfile.open(snap, "w", format=tarfile.GNU_FORMAT):
        pass
    rc, out, err = c.run(["--from", snap], 2)
    check(b"the archive is empty" in err, "empty: %r" % err)

with Case("from: an archive over the input cap (a sparse 65 MiB file)") as c:
    big = os.path.join(c.dir, "big.tar")
    with open(big, "wb") as f:
        f.truncate(65 << 20)
    rc, out, err = c.run(["--from", big], 2)
    check(b"is larger than 67108864 bytes" in err, "big: %r" % err)

# --- --root: odd trees ---------------------------------------------------
def root_tree(c, files, links=(), fifos=()):
    r = os.path.join(c.dir, "root")
    for rel, data in files.items():
        p = os.path.join(r, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)
    for rel, target in links:
        p = os.path.join(r, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        os.symlink(target, p)
    for rel in fifos:
        p = os.path.join(r, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        os.mkfifo(p)
    return r


with Case("root: FIFOs where the doctor reads files") as c:
    r = root_tree(c, {"answers.json": answers()},
                  fifos=["proc/driver/nvidia/version", "sys/module/nvidia_peermem/version",
                         "sys/bus/pci/devices/0000:06:00.0/numa_node"])
    rc, out, err = c.run(["--root", r], (0, 1))
    check(b"not a regular file" in out, "root FIFO: %r" % out[-300:])

with Case("host-root: a FIFO where the driver's version is (live reads)") as c:
    r = root_tree(c, {}, fifos=["proc/driver/nvidia/version"])
    os.makedirs(os.path.join(r, "sys"), exist_ok=True)
    rc, out, err = c.run(["--host-root", r], (0, 1))
    check(b"not a regular file" in out, "live FIFO: %r" % out[-300:])

def writer_blocked(fifo):
    """A thread blocked opening @fifo for writing until a reader opens it:
    whether it is still blocked tells whether anything opened the FIFO."""
    import threading
    opened = []

    def wait():
        fd = os.open(fifo, os.O_WRONLY)  # returns once a reader opens it
        opened.append(True)
        os.close(fd)
    t = threading.Thread(target=wait, daemon=True)
    t.start()
    return opened, t


def unblock(fifo, t):
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    t.join(5)
    os.close(fd)


with Case("host-root: a FIFO is never opened, live or captured (opening acts)") as c:
    r = root_tree(c, {"proc/driver/nvidia/version": NV.encode()},
                  fifos=["sys/module/nvidia_peermem/version"])
    fifo = os.path.join(r, "sys/module/nvidia_peermem/version")
    opened, t = writer_blocked(fifo)
    snap = os.path.join(c.dir, "s.tar")
    rc, out, err = c.run(["--host-root", r, "--capture", snap], (0, 1), may_change=[snap])
    time.sleep(0.2)
    check(not opened, "gdr-info opened a FIFO where a file was read")
    check(b"not a regular file" in out, "the FIFO is not named: %r" % out[-300:])
    unblock(fifo, t)

with Case("from: FILE is a FIFO: refused, never opened") as c:
    fifo = os.path.join(c.dir, "snap.tar")
    os.mkfifo(fifo)
    opened, t = writer_blocked(fifo)
    rc, out, err = c.run(["--from", fifo], 2)
    time.sleep(0.2)
    check(not opened, "--from opened a FIFO")
    check(b"is not a regular file" in err, "--from FIFO: %r" % err)
    unblock(fifo, t)

with Case("from: an answers.json holding a NUL byte") as c:
    snap = os.path.join(c.dir, "s.tar")
    with tarfile.open(snap, "w", format=tarfile.GNU_FORMAT) as t:
        member(t, "proc/driver/nvidia/version", NV.encode())
        member(t, "answers.json", answers() + b"\0{{{{ garbage")
    rc, out, err = c.run(["--from", snap], 2)
    check(b"holds a NUL byte" in err, "NUL in answers.json: %r" % err)

with Case("host-root: DIR/sys a link to the container's /sys: refused") as c:
    h = os.path.join(c.dir, "host")
    os.makedirs(os.path.join(h, "proc"))
    os.symlink("/sys", os.path.join(h, "sys"))
    rc, out, err = c.run(["--host-root", h], 2)
    check(b"sys is not a directory inside" in err, "sys -> /sys: %r" % err)

with Case("host-root: a directory swapped for an outside link while it is read") as c:
    # A tree someone else changes as the doctor reads it: etc/ and a link
    # to a directory outside the tree trade places in a loop. Neither the
    # live report nor the capture may ever show the outside file, with
    # openat2 or with the walk done without it.
    import ctypes
    import threading
    outside = os.path.join(c.dir, "outside")
    os.makedirs(outside)
    with open(os.path.join(outside, "cufile.json"), "w") as f:
        f.write('{"properties": {"allow_compat_mode": true, "rdma_dev_addr_list": ["OUTSIDE"]}}')
    h = root_tree(c, {"proc/driver/nvidia/version": NV.encode(),
                      "etc/cufile.json": b'{"properties": {"allow_compat_mode": false}}'},
                  links=[("etclink", outside)])
    os.makedirs(os.path.join(h, "sys"), exist_ok=True)
    libc = ctypes.CDLL(None, use_errno=True)
    stop = threading.Event()

    def swap():
        a, b = os.path.join(h, "etc").encode(), os.path.join(h, "etclink").encode()
        while not stop.is_set():
            libc.renameat2(-100, a, -100, b, 2)  # RENAME_EXCHANGE
    t = threading.Thread(target=swap, daemon=True)
    t.start()
    shim = os.environ.get("GDR_IO_FAULTS")
    escapes = 0
    runs = 0
    try:
        for i in range(100):
            for extra in ([{}] + ([{"LD_PRELOAD": shim, "GDR_IO_NO_OPENAT2": "1"}]
                                  if shim else [])):
                cap = os.path.join(c.dir, "cap%d.tar" % i)
                p = subprocess.run([gdr_info, "--host-root", h, "--capture", cap],
                                   capture_output=True, timeout=30, cwd=c.dir,
                                   env=dict(os.environ, **extra))
                runs += 1
                kept = b""
                if os.path.exists(cap):
                    with tarfile.open(cap) as tf:
                        for m in tf.getmembers():
                            if m.isfile():
                                kept += tf.extractfile(m).read()
                    os.unlink(cap)
                escapes += b"OUTSIDE" in p.stdout or b"OUTSIDE" in kept
    finally:
        stop.set()
        t.join(5)
    check(escapes == 0, "%d of %d reads or captures showed a file outside the host tree"
          % (escapes, runs))

with Case("host-root: links that point outside resolve inside the host tree") as c:
    # The container's own files (outside the host tree) must never be read
    # in place of the host's: absolute links, and links that climb.
    outside = os.path.join(c.dir, "container-only")
    os.makedirs(outside)
    with open(os.path.join(outside, "version"), "w") as f:
        f.write("6.6.6-container\n")
    r = root_tree(c, {"proc/driver/nvidia/version": NV.encode(),
                      outside.lstrip("/") + "/version": b"1.2-host\n"},
                  links=[("sys/module/nvidia_peermem/version", outside + "/version"),
                         ("sys/module/nvidia_fs/version",
                          "../../../../../../../../.." + outside + "/version")])
    snap = os.path.join(c.dir, "s.tar")
    rc, live, err = c.run(["--host-root", r, "--capture", snap], (0, 1), may_change=[snap])
    check(b"6.6.6-container" not in live, "a container file was read through a link")
    check(b"1.2-host (/sys/module/nvidia_peermem/version)" in live,
          "the host's file was not read through an absolute link: %r" % live[-600:])
    rc2, replay, err2 = c.run(["--from", snap], rc)
    check(live == replay, "replay differs from the live report")

with Case("root: a FIFO as answers.json") as c:
    r = root_tree(c, {"proc/driver/nvidia/version": NV.encode()}, fifos=["answers.json"])
    c.run(["--root", r], 2)

with Case("root: a symlink loop") as c:
    r = root_tree(c, {"answers.json": answers(), "proc/driver/nvidia/version": NV.encode()},
                  links=[("sys/module/nvidia_peermem", "loop"), ("sys/module/loop", "nvidia_peermem")])
    rc, out, err = c.run(["--root", r], (0, 1), timeout=60)
    check(b"580.159.04" in out, "the version file beside a loop: %r" % out[-300:])

with Case("root: a 1 GB file is refused as --from refuses it, never cut silently") as c:
    r = root_tree(c, {"answers.json": answers()})
    big = os.path.join(r, "proc/driver/nvidia/version")
    os.makedirs(os.path.dirname(big), exist_ok=True)
    with open(big, "wb") as f:
        f.write(NV.encode())
        f.truncate(1 << 30)
    rc, out, err = c.run(["--root", r], 2, timeout=60)
    check(b"is larger than 1048576 bytes" in err, "the 1 GB version file: %r" % err[-300:])

with Case("root: nested 100 deep") as c:
    r = root_tree(c, {"answers.json": answers(), "/".join(["d"] * 100) + "/f": b"x"})
    c.run(["--root", r], 2)

# --- what a snapshot says, printed ----------------------------------------
with Case("replay: a driver older than the library can use") as c:
    r = root_tree(c, {"answers.json": answers(cuda={"error": "", "driver_version": 3000,
                                                    "devices": [{"name": "old"}]})})
    rc, out, err = c.run(["--root", r], 1)
    check(b"lacks" in out, "old driver: %r" % out[-300:])

with Case("replay: names that are not UTF-8, escapes, control bytes") as c:
    a = json.loads(answers())
    a["kernel_release"] = "6.8\u00e9\U0001F600"
    a["rdma_devices"][0]["name"] = "mlx5_\x1b[2J0"
    a["rdma_devices"][0]["dmabuf_probe_errno"] = 200
    raw = json.dumps(a).encode().replace(b"6.8\\u00e9", b"6.8\xff\\u00e9")
    r = root_tree(c, {"answers.json": raw, "proc/driver/nvidia/version": b"\0" * 64})
    rc, out, err = c.run(["--root", r, "--json"], (0, 1))
    try:
        rep = json.loads(out.decode("utf-8", errors="strict"))
        ok = True
    except (UnicodeDecodeError, ValueError) as e:
        ok = False
        print("  ", e)
    check(ok, "--json output is not valid UTF-8 JSON")
    if ok:
        vals = {(i["section"], i["key"]): i["value"] for i in rep["items"]}
        check("\U0001F600" in json.dumps(rep, ensure_ascii=False), "the surrogate pair decoded")
        nv = [v for (s, k), v in vals.items() if k == "nvidia_driver"]
        check(nv and "absent" not in nv[0], "a NUL-filled version file reads as absent: %s" % nv)
    rc, out, err = c.run(["--root", r], (0, 1))
    check(b"\x1b" not in out, "an escape byte reached the text report")
    check(b"errno 200" in out, "an errno without a name: %r" % out[-500:])

# --- --capture: where it writes -------------------------------------------
with Case("capture: FILE is a link to a file that must not change") as c:
    victim = os.path.join(c.dir, "victim")
    with open(victim, "w") as f:
        f.write("keep me\n")
    link = os.path.join(c.dir, "snap.tar")
    os.symlink(victim, link)
    rc, out, err = c.run(["--capture", link], 2)
    check(open(victim).read() == "keep me\n", "the link's target was written")
    check(os.path.islink(link), "the link was replaced")
    check(b"is a symbolic link" in err and b"nothing was changed" in err,
          "capture over a link: %r" % err)


def special_outputs(c):
    """A device node, a FIFO and a socket in the case's directory: what an
    output must never replace (as root, --nfd /dev/null would have replaced
    the system's /dev/null)."""
    import socket
    made = []
    dev = os.path.join(c.dir, "null")
    os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    made.append((dev, "a character device"))
    fifo = os.path.join(c.dir, "fifo")
    os.mkfifo(fifo)
    made.append((fifo, "a FIFO"))
    sock = os.path.join(c.dir, "sock")
    s = socket.socket(socket.AF_UNIX)
    s.bind(sock)
    s.close()
    made.append((sock, "a socket"))
    d = os.path.join(c.dir, "adir")
    os.mkdir(d)
    made.append((d, "a directory"))
    return made


for opt in ("--capture", "--nfd"):
    with Case("%s: FILE is a device, FIFO, socket or directory: refused, "
              "nothing changed" % opt) as c:
        for path, what in special_outputs(c):
            st0 = os.lstat(path)
            rc, out, err = c.run([opt, path], 2)
            st1 = os.lstat(path)
            check((st0.st_mode, st0.st_ino, st0.st_rdev) == (st1.st_mode, st1.st_ino, st1.st_rdev),
                  "%s over %s: it was replaced" % (opt, what))
            check(("is %s" % what).encode() in err and b"nothing was changed" in err,
                  "%s over %s: %r" % (opt, what, err))
            check(not out, "%s over %s: a report was printed before the refusal" % (opt, what))

with Case("capture: a host:file name is a local file") as c:
    c.run(["--capture", "node1.invalid:snap.tar"], (0, 1),
          may_change=[os.path.join(c.dir, "node1.invalid:snap.tar")], timeout=20)
    check(tarfile.is_tarfile(os.path.join(c.dir, "node1.invalid:snap.tar")), "no local archive")

for how in ("absolute", "relative", "through a link"):
    with Case("capture: --host-root %s leaves the host tree as it was" % how) as c:
        real = os.path.join(c.dir, "host")
        os.makedirs(os.path.join(real, "sys/module/nvidia_peermem"))
        os.makedirs(os.path.join(real, "proc/driver/nvidia"))
        with open(os.path.join(real, "proc/driver/nvidia/version"), "w") as f:
            f.write(NV)
        with open(os.path.join(real, "sys/module/nvidia_peermem/version"), "w") as f:
            f.write("1.2\n")
        arg = real
        if how == "relative":
            arg = "host"
        elif how == "through a link":
            os.symlink(real, os.path.join(c.dir, "via"))
            arg = "via"
        snap = os.path.join(c.dir, "snap.tar")
        before = listing(real)
        rc, live, err = c.run(["--host-root", arg, "--capture", snap], (0, 1), may_change=[snap])
        check(listing(real) == before, "%s: the host tree changed" % how)
        rc2, replay, err2 = c.run(["--from", snap], rc)
        check(b"580.159.04" in replay and b"1.2 (/sys/module/nvidia_peermem/version)" in replay,
              "%s: the snapshot lacks the host's files: %r" % (how, replay[-400:]))
        check(live == replay, "%s: replay differs from the live report" % how)

with Case("capture: files whose real names are 100 bytes and longer") as c:
    # The links lead to long directory names: the archive must keep each
    # file under its whole name, whether the header splits it into prefix
    # and name (the last 100 bytes do not fit a name field; what follows
    # the prefix does) or takes a pax record, and replay as live.
    real = os.path.join(c.dir, "host")
    peer = "sys/" + "a" * 92 + "/version"  # 100 bytes after "sys/"
    nv = "proc/" + "b" * 120 + "/version"  # a prefix, then "version"
    pax = "sys/" + "p" * 200 + "/version"  # no split fits
    for rel, data in ((peer, "1.2\n"), (nv, NV), (pax, "2.24.3\n")):
        os.makedirs(os.path.dirname(os.path.join(real, rel)), exist_ok=True)
        with open(os.path.join(real, rel), "w") as f:
            f.write(data)
    os.makedirs(os.path.join(real, "sys/module"))
    os.makedirs(os.path.join(real, "proc/driver"))
    os.symlink("../" + "a" * 92, os.path.join(real, "sys/module/nvidia_peermem"))
    os.symlink("../" + "b" * 120, os.path.join(real, "proc/driver/nvidia"))
    os.symlink("../" + "p" * 200, os.path.join(real, "sys/module/nvidia_fs"))
    snap = os.path.join(c.dir, "snap.tar")
    rc, live, err = c.run(["--host-root", real, "--capture", snap], (0, 1), may_change=[snap])
    with tarfile.open(snap) as t:
        names = set(t.getnames())
    for rel in (peer, nv, pax):
        check(rel in names, "the archive lacks %s (it has %s)" % (rel, sorted(
            n for n in names if len(n) > 90)))
    rc2, replay, err2 = c.run(["--from", snap], rc)
    check(b"580.159.04" in replay and b"1.2 (/sys/module/nvidia_peermem/version)" in replay,
          "the long-named files did not replay: %r" % replay[-400:])
    check(live == replay, "replay differs from the live report")

# --- --nfd: where it writes (these held before; they keep holding) ---------
with Case("nfd: FILE is a link, a directory, in another user's sticky dir") as c:
    r = root_tree(c, {"answers.json": answers(), "proc/driver/nvidia/version": NV.encode()})
    victim = os.path.join(c.dir, "victim")
    with open(victim, "w") as f:
        f.write("keep me\n")
    link = os.path.join(c.dir, "labels")
    os.symlink(victim, link)
    c.run(["--root", r, "--nfd", link], 2)
    check(open(victim).read() == "keep me\n" and os.path.islink(link),
          "--nfd wrote through a link or replaced it")
    d = os.path.join(c.dir, "adir")
    os.mkdir(d)
    c.run(["--root", r, "--nfd", d], 2)
    sticky = os.path.join(c.dir, "sticky")
    os.mkdir(sticky)
    nobody = pwd.getpwnam("nobody")
    os.chown(sticky, nobody.pw_uid, nobody.pw_gid)
    os.chmod(sticky, 0o1777)
    planted = os.path.join(sticky, "labels")
    os.symlink(victim, planted)
    os.lchown(planted, nobody.pw_uid, nobody.pw_gid)
    c.run(["--root", r, "--nfd", planted], 2)
    check(open(victim).read() == "keep me\n", "--nfd followed a link planted in a sticky dir")
    left = [n for n in os.listdir(c.dir) + os.listdir(sticky) if n.startswith(".")]
    check(not left, "dot-files left: %s" % left)
    # A regular file and a new name are written.
    out = os.path.join(c.dir, "labels.txt")
    with open(out, "w") as f:
        f.write("old\n")
    c.run(["--root", r, "--nfd", out], (0, 1), may_change=[out])
    check(open(out).read().startswith("# "), "--nfd did not replace a regular file")
    new = os.path.join(c.dir, "new-labels")
    c.run(["--root", r, "--nfd", new], (0, 1), may_change=[new])
    check(os.path.isfile(new), "--nfd did not write a new name")

# --- --storage: what is at PATH is looked at, never opened ---------------
with Case("storage: a FIFO with a writer waiting, a device node, a link loop") as c:
    fifo = os.path.join(c.dir, "fifo")
    os.mkfifo(fifo)
    opened, t = writer_blocked(fifo)
    os.mknod(os.path.join(c.dir, "dev"), 0o600 | stat.S_IFCHR, os.makedev(1, 5))
    os.symlink("loop", os.path.join(c.dir, "loop"))
    rc, out, err = c.run(["--json", "--storage", fifo, "--storage", os.path.join(c.dir, "dev"),
                          "--storage", os.path.join(c.dir, "loop")], 1, timeout=60)
    check(not opened, "--storage opened the FIFO (its writer was let go)")
    unblock(fifo, t)
    try:
        items = {(i["section"], i["key"]): i["value"] for i in json.loads(out)["items"]}
    except ValueError:
        items = {}
    check("a FIFO, never opened" in items.get(("storage0", "path"), "") and
          "a character device, never opened" in items.get(("storage1", "path"), "") and
          "ELOOP" in items.get(("storage2", "path"), ""),
          "--storage on odd paths: %s" % {k: v for k, v in items.items() if k[0] != "node"})
with Case("storage: a snapshot's crafted storage answers") as c:
    crafted = {"cufile": {"load_err": 0, "library": "\x1b]0;owned\x07" * 50, "version": 1e300,
                          "open_err": 0, "props_err": 0, "dstatusflags": -1, "fflags": "x",
                          "allow_compat": 7, "stuck": None},
               "paths": [{"path": "p%d\x1b[2J" % i, "errno": i % 3, "kind": i * 7 - 20,
                          "mnt_id": -2 ** 70, "dev_major": 2 ** 60, "real": [1],
                          "route_errno": 2 ** 40, "route_dev": "x" * 10000,
                          "measured": {"state": 1, "bytes": 2 ** 53, "write_ret": -2 ** 53,
                                       "read_ret": 1e300, "differ": -1, "first_differ": "y",
                                       "stats": 1, "posix_reads": 2 ** 64}}
                         for i in range(40)]}
    snap = os.path.join(c.dir, "s.tar")
    with tarfile.open(snap, "w", format=tarfile.GNU_FORMAT) as t2:
        member(t2, "proc/driver/nvidia/version", NV.encode())
        member(t2, "proc/self/mountinfo", b"1 0 0:1 / / rw - x y z\n" * 3 + b"\\999" * 9000)
        member(t2, "answers.json", answers(storage=crafted))
    rc, out, err = c.run(["--from", snap], (0, 1))
    check(b"\x1b" not in out.encode() if isinstance(out, str) else b"\x1b" not in out,
          "a control byte of a snapshot reached the report")
    check(out.count("[storage") == 9 if isinstance(out, str) else out.count(b"[storage") == 9,
          "a snapshot's 40 storage paths were not cut to 8")

if outdir and not failed:
    shutil.rmtree(outdir, ignore_errors=True)
if HOLD:
    os.rmdir(HOLD)
print("/tmp: %s" % ("each gdr-info had its own, checked empty" if PRIVATE_TMP
                    else "listed before and after each case"))
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
