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
import socket
import subprocess
import sys
import tempfile
import threading

build = sys.argv[1]
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

print("examples: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
