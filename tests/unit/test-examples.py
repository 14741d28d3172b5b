#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The example programs' refusals that need no GPU and no RDMA device:
gdr-write-bw --mem=import:SOCKET with what it cannot take, a socket that
is not there, and an owner whose message is not a descriptor (a hostile
or older sender: refused in the library's words, the fd it sent closed);
gdr-share's --fill/--check past the buffer; a --mem whose GPU ordinal is
not a number.

    test-examples.py BUILD_DIR
"""
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading

build = sys.argv[1]
# The stand-in libibverbs (GDR_STANDIN_DIR) is a dependency of this test,
# so meson puts its folder on LD_LIBRARY_PATH: the programs here run on
# the system's libibverbs unless a check asks for the stand-in.
standin = os.environ.get("GDR_STANDIN_DIR")
if standin:
    os.environ["LD_LIBRARY_PATH"] = ":".join(
        p for p in os.environ.get("LD_LIBRARY_PATH", "").split(":")
        if p and os.path.realpath(p) != os.path.realpath(standin))
wbw = os.path.join(build, "examples", "gdr-write-bw")
share = os.path.join(build, "examples", "gdr-share")
passed = failed = 0


def check(what, cond, out=""):
    global passed, failed
    if cond:
        passed += 1
        print("ok   " + what)
    else:
        failed += 1
        print("FAIL " + what)
        for line in out.splitlines():
            print("     " + line)


def run(*args):
    p = subprocess.run(args, capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout + p.stderr


if os.path.exists(wbw):
    for extra in (["-s", "1M"], ["-n", "0x10"], ["-t", "-1"], ["-s", ""]):
        st, out = run(wbw, *extra)
        check("gdr-write-bw %s: not a count, exit 2" % " ".join(extra),
              st == 2 and "is not a count" in out, out)
    for extra in (["--mem=import:"], ["--mem=import:/x", "-a"],
                  ["--mem=import:/x", "--cache"],
                  ["--mem=import:/x", "-d", "auto"]):
        st, out = run(wbw, *extra)
        check("gdr-write-bw %s: refused, exit 2" % " ".join(extra),
              st == 2 and "--mem=import:SOCKET takes a socket" in out, out)
    # -d auto ranks the devices by a GPU: with host memory it says so
    # before looking for any
    for extra in ([], ["--mem", "host"]):
        st, out = run(wbw, "-d", "auto", *extra)
        check("gdr-write-bw -d auto %s: refused, the reason said, exit 1" % " ".join(extra),
              st == 1 and "-d auto: it picks the device nearest a GPU: use it with "
              "--mem cuda:N" in out, out)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "none.sock")
        st, out = run(wbw, "--mem=import:" + path, "-s", "4096")
        check("gdr-write-bw --mem=import: on a missing socket: its name and "
              "the reason, exit 1",
              st == 1 and path in out and "No such file" in out, out)

        # An owner that sends 4 bytes and a memfd: not a descriptor.
        path = os.path.join(d, "own.sock")
        ls = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        ls.bind(path)
        ls.listen(1)
        mfd = os.memfd_create("not-a-dmabuf")
        sent = []

        def owner():
            s, _ = ls.accept()
            socket.send_fds(s, [b"GDRX"], [mfd])
            sent.append(1)
            s.recv(1)  # until the importer has closed its end
            s.close()

        t = threading.Thread(target=owner)
        t.start()
        st, out = run(wbw, "--mem=import:" + path, "-s", "4096")
        t.join(10)
        check("gdr-write-bw --mem=import: from an owner whose message is "
              "not a descriptor: gdr_export_recv's reason, exit 1",
              sent and st == 1 and "gdr_export_recv:" in out and
              "Imported" not in out, out)
        ls.close()
        os.close(mfd)

        # An owner that accepts and never sends: given up after 10 s, said
        # as that (not a hang, not the library's last words).
        path = os.path.join(d, "mute.sock")
        ls = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        ls.bind(path)
        ls.listen(1)
        held = []

        def mute_owner():
            s, _ = ls.accept()
            held.append(s)
            s.settimeout(30)
            try:
                s.recv(1)  # until the importer has gone
            except OSError:
                pass
            s.close()

        t = threading.Thread(target=mute_owner)
        t.start()
        try:
            st, out = run(wbw, "--mem=import:" + path, "-s", "4096")
        except subprocess.TimeoutExpired:
            st, out = -1, "still waiting after 60 s"
        t.join(40)
        check("gdr-write-bw --mem=import: from an owner that sends nothing: "
              "'sent nothing in 10 s', exit 1",
              st == 1 and "the owner sent nothing in 10 s" in out, out)
        ls.close()
    # The usage's exits: -h 0, an unknown --path 2; -F (perftest's) is
    # taken and the run goes on to the device.
    st, out = run(wbw, "-h")
    check("gdr-write-bw -h: usage, exit 0", st == 0 and "usage:" in out, out)
    for path in ("bogus", "Host", ""):
        st, out = run(wbw, "--path=" + path)
        check("gdr-write-bw --path=%s: refused, exit 2" % path,
              st == 2 and "--path must be auto, data-direct" in out, out)
    st, out = run(wbw, "-F", "-s", "4096")
    check("gdr-write-bw -F: accepted (perftest's option)",
          st != 2 and "usage:" not in out, out)
else:
    print("gdr-write-bw is not built here (no librdmacm-dev): its checks skipped")

for opt in ("--fill=8192", "--check=8192"):
    st, out = run(share, "owner", "/nonexistent/sock", "-s", "4096", opt)
    check("gdr-share owner %s past a 4096-byte buffer: refused, exit 2" % opt,
          st == 2 and "at most the buffer's size" in out, out)
for args in (["owner", "/x", "-s", "64K"], ["owner", "/x", "--check=0"],
             ["owner", "/x", "--fill=12abc"], ["owner", "/x", "-s", "-1"]):
    st, out = run(share, *args)
    check("gdr-share %s: not a byte count, exit 2" % " ".join(args),
          st == 2 and "is not a byte count" in out, out)
for args in (["owner", "/x", "--fill=16", "--check=16"],
             ["demo", "--check=16"], ["import", "/x", "--fill=16"]):
    st, out = run(share, *args)
    check("gdr-share %s: refused, exit 2" % " ".join(args),
          st == 2 and "one of them) is for the owner" in out, out)
# --fill and --check take up to the buffer's size, that included: the run
# goes on to the socket (a directory that is not there: exit 1).
for opt in ("--fill=4096", "--check=4096"):
    st, out = run(share, "owner", "/nonexistent/sock", "-s", "4096", opt)
    check("gdr-share owner -s 4096 %s: taken, on to the socket" % opt,
          st == 1 and "at most the buffer's size" not in out and
          "/nonexistent/sock" in out, out)
# owner and import take a socket: without one, a usage error.
for mode in ("owner", "import"):
    st, out = run(share, mode)
    check("gdr-share %s without a socket: usage, exit 2" % mode,
          st == 2 and "usage:" in out, out)

# A GPU's ordinal is digits: "cuda:abc" is refused, not read as GPU 0
# (before any CUDA call, so on any machine).
progs = [[share, "owner", "/nonexistent/sock"]]
if os.path.exists(wbw):
    progs.append([wbw])
for prog in progs:
    for spec in ("cuda:abc", "cuda:1x", "cuda:-1", "cuda:"):
        st, out = run(*prog, "--mem", spec)
        check("%s --mem %s: unknown memory, exit 1"
              % (os.path.basename(prog[0]), spec),
              st == 1 and "unknown memory '%s'" % spec in out, out)


# --- paths: a program never deletes or replaces what it did not make ------
def owner(path, *extra):
    """gdr-share owner on host memory: it claims PATH, then gdr_export
    refuses host memory, and it ends (exit 1) on any machine."""
    return run(share, "owner", path, "--mem", "host", "-s", "4096", *extra)


with tempfile.TemporaryDirectory() as d:
    # A regular file, a directory, a link (to nothing and to a file), a
    # FIFO: refused, each left exactly as it was.
    f = os.path.join(d, "file")
    with open(f, "w") as fh:
        fh.write("keep me\n")
    st, out = owner(f)
    check("gdr-share owner on an existing regular file: refused, exit 1, "
          "the file kept", st == 1 and "exists and is a regular file" in out
          and open(f).read() == "keep me\n", out)
    sub = os.path.join(d, "dir")
    os.mkdir(sub)
    st, out = owner(sub)
    check("gdr-share owner on a directory: refused, kept",
          st == 1 and "is a directory" in out and os.path.isdir(sub), out)
    for target in (os.path.join(d, "nowhere"), f):
        ln = os.path.join(d, "link")
        os.symlink(target, ln)
        st, out = owner(ln)
        check("gdr-share owner on a link to %s: refused, the link and "
              "its target kept" % os.path.basename(target),
              st == 1 and "is a symbolic link" in out and os.path.islink(ln)
              and os.readlink(ln) == target
              and open(f).read() == "keep me\n", out)
        os.unlink(ln)
    fifo = os.path.join(d, "fifo")
    os.mkfifo(fifo)
    st, out = owner(fifo)
    check("gdr-share owner on a FIFO: refused, kept",
          st == 1 and "is a FIFO" in out and
          os.path.exists(fifo), out)

    # A live socket: another owner's (seqpacket) or another program's
    # (stream): refused, and it still answers afterwards.
    for kind, name in ((socket.SOCK_SEQPACKET, "seqpacket"),
                       (socket.SOCK_STREAM, "stream")):
        path = os.path.join(d, name + ".sock")
        ls = socket.socket(socket.AF_UNIX, kind)
        ls.bind(path)
        ls.listen(4)
        st, out = owner(path)
        c = socket.socket(socket.AF_UNIX, kind)
        try:
            c.connect(path)
            alive = True
        except OSError:
            alive = False
        c.close()
        check("gdr-share owner on a live %s socket: refused, exit 1, the "
              "listener untouched" % name,
              st == 1 and "another process listens" in out and alive, out)
        ls.close()

    # A stale socket (its owner gone): replaced; the one made here is
    # removed when the owner ends.
    path = os.path.join(d, "stale.sock")
    ls = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    ls.bind(path)
    ls.close()
    ino = os.lstat(path).st_ino
    st, out = owner(path)
    check("gdr-share owner on a stale socket: taken (no word of the path), "
          "then refused by gdr_export (host memory), its own socket removed",
          st == 1 and "gdr-share owner:" in out and path not in out and
          not os.path.exists(path), out)

    # A new path: made, and removed at the end.
    path = os.path.join(d, "new.sock")
    st, out = owner(path)
    check("gdr-share owner on a new path: the socket it made is removed at "
          "its end", st == 1 and not os.path.exists(path), out)
    # A GPU that cannot be had (no driver here, or no GPU 65535): the
    # socket claimed first is removed all the same.
    path = os.path.join(d, "nogpu.sock")
    st, out = run(share, "owner", path, "--mem", "cuda:65535", "-s", "4096")
    check("gdr-share owner on a GPU it cannot have: exit 1, the socket it "
          "made removed", st == 1 and "cuda" in out.lower() and
          not os.path.exists(path), out)

    # An owner whose message is not a descriptor: the importer says the
    # library's reason and exits 1 (77 is only for a missing RDMA device,
    # after an export was received and checked).
    path = os.path.join(d, "bad-owner.sock")
    ls = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    ls.bind(path)
    ls.listen(1)
    mfd = os.memfd_create("not-a-dmabuf")

    def bad_owner():
        s, _ = ls.accept()
        socket.send_fds(s, [b"GDRX"], [mfd])
        s.recv(1)
        s.close()

    t = threading.Thread(target=bad_owner)
    t.start()
    st, out = run(share, "import", path)
    t.join(10)
    check("gdr-share import from an owner whose message is not a "
          "descriptor: the reason, exit 1 (not 77)",
          st == 1 and "gdr-share import:" in out and
          "import: received" not in out, out)
    ls.close()
    os.close(mfd)

    # A path sun_path cannot hold: said as that, not as a stray errno.
    long_path = os.path.join(d, "x" * 120)
    for args, who in ((["owner", long_path, "--mem", "host"], "owner"),
                      (["import", long_path], "import")):
        st, out = run(share, *args)
        check("gdr-share %s on a %d-byte path: 'takes 1 to 107 bytes', no "
              "stray errno" % (who, len(long_path)),
              st == 1 and "takes 1 to 107 bytes, this one has %d"
              % len(long_path) in out and "No such file" not in out
              and not os.path.exists(long_path), out)
    path = os.path.join(d, "none.sock")
    st, out = run(share, "import", path)
    check("gdr-share import of a missing socket: its name, the errno and "
          "the remedy", st == 1 and path in out and "No such file" in out
          and "start the owner first" in out, out)
    path = os.path.join(d, "stale2.sock")
    ls = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    ls.bind(path)
    ls.close()
    st, out = run(share, "import", path)
    check("gdr-share import of a stale socket: connection refused, said, "
          "the socket left there",
          st == 1 and "Connection refused" in out and
          "nobody listens there" in out and os.path.exists(path), out)
    if os.path.exists(wbw):
        st, out = run(wbw, "--mem=import:" + long_path, "-s", "4096")
        check("gdr-write-bw --mem=import: on a %d-byte path: 'takes 1 to "
              "107 bytes'" % len(long_path),
              st == 1 and "takes 1 to 107 bytes" in out, out)

# --- numbers: the one strict parser, both edges -------------------------
if os.path.exists(wbw):
    # --use_cuda=N: read whole (a zero-padded ordinal is the same GPU, a
    # word past 26 characters is not cut into one), refused otherwise.
    for val, want in (("0" * 40 + "1", "cuda:1:"), ("7", "cuda:7:"),
                      ("65535", "cuda:65535:"), ("0", "cuda:0:")):
        st, out = run(wbw, "--use_cuda=" + val)
        check("gdr-write-bw --use_cuda=%s: GPU %s, read whole"
              % (val if len(val) < 10 else "0...1", want[5:-1]),
              st == 1 and want in out and "ordinal" not in out, out)
    for val in ("0" * 30 + "x", "1abc", "65536", "-1", "", " 1", "0x1",
                "1" * 40):
        st, out = run(wbw, "--use_cuda=" + val)
        check("gdr-write-bw --use_cuda=%r: refused, exit 2" % val[:12],
              st == 2 and "--use_cuda takes a GPU ordinal" in out, out)
    for val in ("0", "65536", "http", "1x", "-5"):
        st, out = run(wbw, "-p", val)
        check("gdr-write-bw -p %s: refused, exit 2" % val,
              st == 2 and "-p takes a port" in out, out)
    # The valid edges are taken: the run goes on to the device (none here:
    # exit 1) or to the size check.
    for args in (["-p", "1"], ["-p", "65535"], ["-s", "1"],
                 ["-s", str(1 << 30)], ["-n", str(2**32 - 1)],
                 ["-t", "1"]):
        st, out = run(wbw, *args)
        check("gdr-write-bw %s: accepted" % " ".join(args),
              st != 2 and "not a count" not in out and "takes a port" not in
              out and "-s must be" not in out, out)
    for args in (["-s", str((1 << 30) + 1)], ["-n", str(2**32)],
                 ["-t", "0"]):
        st, out = run(wbw, *args)
        check("gdr-write-bw %s: refused, exit 2" % " ".join(args),
              st == 2, out)
one = os.path.join(build, "examples", "gdr-register-one")
for val in ("1M", "0x1000", "-1", "0", ""):
    st, out = run(one, "-s", val)
    check("gdr-register-one -s %r: refused, exit 2" % val,
          st == 2 and "-s takes a byte count" in out, out)
st, out = run(one, "-s", "4096")
check("gdr-register-one -s 4096: accepted", st != 2, out)
for args, want in ((["-h"], 0), (["--no-such-option"], 2)):
    st, out = run(one, *args)
    check("gdr-register-one %s: usage, exit %d" % (args[0], want),
          st == want and "usage:" in out, out)


# --- gdr-register-one to the end, over the stand-in libibverbs ------------
def one_over_standin(*args, fail=None, devices=None):
    """gdr-register-one over the stand-in (device standin0): its exit
    status, its output and the stand-in's log of the calls."""
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "log")
        env = dict(os.environ, LD_LIBRARY_PATH=standin, STANDIN_LOG=log,
                   STANDIN_KEYS="1")
        env.pop("STANDIN_FAIL", None)
        if fail:
            env["STANDIN_FAIL"] = fail
        if fail and "ibv_dereg_mr" in fail:
            # The MR stays registered, as said: not a leak (ASan builds).
            env["ASAN_OPTIONS"] = ":".join(
                filter(None, [env.get("ASAN_OPTIONS"), "detect_leaks=0"]))
        if devices:
            env["STANDIN_DEVICES"] = devices
        p = subprocess.run([one, *args], capture_output=True, text=True,
                           timeout=60, env=env)
        calls = open(log).read() if os.path.exists(log) else ""
    return p.returncode, p.stdout + p.stderr, calls


if standin:
    # The defaults: 1 MiB of host memory on the first device, registered
    # whole, the keys as the MR has them, every path's line to the last.
    st, out, calls = one_over_standin(devices="2")
    # The stand-in logs each MR's keys (STANDIN_KEYS), lkey and rkey apart.
    keys = re.findall(r"mr lkey=(0x[0-9a-f]+) rkey=(0x[0-9a-f]+)", calls)
    check("gdr-register-one over the stand-in: 1 MiB of host memory on the "
          "first device (standin0), through host, lkey and rkey as the MR's, "
          "every path said, exit 0",
          st == 0 and len(keys) == 1 and keys[0][0] != keys[0][1] and
          "registered 1048576 bytes of host memory on standin0 "
          "through host: lkey %s rkey %s" % keys[0] in out and
          "  host     used" in out and "  dmabuf   skipped: " in out and
          " 1048576 iova=" in calls and "ibv_dereg_mr" in calls, out + calls)
    st, out, calls = one_over_standin("-s", "4096", "-d", "standin0")
    check("gdr-register-one -s 4096 -d standin0: 4096 bytes registered on it",
          st == 0 and "registered 4096 bytes of host memory on standin0" in out
          and " 4096 iova=" in calls, out + calls)
    st, out, calls = one_over_standin("-d", "standin1", devices="2")
    check("gdr-register-one -d standin1: the device named, not the first",
          st == 0 and "on standin1 through host" in out, out + calls)
    st, out, calls = one_over_standin("-d", "mlx5_9")
    check("gdr-register-one -d mlx5_9 (not there): said as that device, "
          "exit 77", st == 77 and "that RDMA device was not found" in out and
          "registered" not in out, out + calls)
    st, out, calls = one_over_standin("-s", "4096",
                                      fail="ibv_reg_mr_iova2=12")
    check("gdr-register-one whose registration fails: the path's line says "
          "failed, exit 1", st == 1 and "  host     failed: " in out and
          "registered" not in out, out + calls)
    st, out, calls = one_over_standin("-s", "4096", fail="ibv_dereg_mr=16")
    check("gdr-register-one whose deregistration fails: said, exit 1",
          st == 1 and "registered 4096 bytes" in out and
          "ibv_dereg_mr failed" in out, out + calls)
    st, out, calls = one_over_standin("--mem", "cuda:65535", "-s", "4096")
    check("gdr-register-one --mem cuda:65535: no such GPU here (or no "
          "driver): said, nothing registered, exit 1",
          st == 1 and "cuda" in out.lower() and "registered" not in out and
          "ibv_reg" not in calls, out + calls)
else:
    print("GDR_STANDIN_DIR is not set: gdr-register-one's run over the "
          "stand-in skipped")

print("examples: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
