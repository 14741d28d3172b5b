# SPDX-License-Identifier: MIT
"""The Python package on a real kernel, in the Soft-RoCE guest:

    python3 tests/vm/test-python.py BUILD_DIR

host memory registered from Python on rxe0, its keys used by a real RDMA
write from a C peer (pyloop.c: two RC QPs on the package's PD, given only
the addresses and keys Python read), the data checked; a wrong rkey
refused by the kernel (the keys are what counts); the keys of a cached MR
used the same way; the kernel's own EFAULT in the library's words; a real
dma-buf (vgem) received from an owner and rxe's refusal of a dma-buf MR;
the report as gdr-info gives it. Prints one line per check; exit 1 on a
failure."""

from __future__ import annotations

import ctypes
import errno
import json
import mmap
import os
import socket
import subprocess
import sys
import time

build = os.path.abspath(sys.argv[1])
top = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(top, "python"))
os.environ.setdefault("GPUDIRECT_LIBRARY",
                      os.path.join(build, "lib", "libgpudirect.so.1"))

import gpudirect  # noqa: E402
from gpudirect import GdrError  # noqa: E402

passed = failed = 0


def check(ok: bool, what: str, detail: str = "") -> None:
    global passed, failed
    if ok:
        passed += 1
        print(f"ok   {what}")
    else:
        failed += 1
        print(f"FAIL {what}" + (f": {detail}" if detail else ""))


peer = ctypes.CDLL(os.path.join(build, "tests", "vm", "libgdrpyloop.so"))
peer.gdrpy_rdma_write.restype = ctypes.c_int
peer.gdrpy_rdma_write.argtypes = [ctypes.c_void_p, ctypes.c_uint64,
                                  ctypes.c_uint32, ctypes.c_uint64,
                                  ctypes.c_uint32, ctypes.c_size_t,
                                  ctypes.c_char_p, ctypes.c_size_t]


def write(pd, src_addr: int, lkey: int, dst_addr: int, rkey: int,
          n: int) -> str:
    """An RDMA write through the C peer; '' or its reason."""
    err = ctypes.create_string_buffer(256)
    rc = peer.gdrpy_rdma_write(pd.handle, src_addr, lkey, dst_addr, rkey, n,
                               err, len(err))
    return "" if rc == 0 else err.value.decode() or "failed"


N = 1 << 20
check("rxe0" in gpudirect.devices(), "rxe0 listed",
      str(gpudirect.devices()))
pd = gpudirect.ProtectionDomain("rxe0")
src = bytearray(os.urandom(N))
dst = mmap.mmap(-1, N)
with pd.register(src) as ms, pd.register(dst) as md:
    addr = ctypes.addressof(ctypes.c_char.from_buffer(dst))
    check(ms.path == "host" and md.length == N and md.addr == addr and
          ms.decision.mem_type == "host",
          "bytearray and mmap registered on rxe0 through host, addr and "
          "length exact")
    why = write(pd, ms.addr, ms.lkey, md.addr, md.rkey, N)
    check(why == "" and dst[:] == bytes(src),
          f"an RDMA write of {N} bytes with the keys Python read "
          f"(lkey {ms.lkey:#x}, rkey {md.rkey:#x}): data checked", why)
    dst[:] = bytes(N)
    why = write(pd, ms.addr, ms.lkey, md.addr, md.rkey ^ 0x5a5a00, N)
    check(why != "" and dst[:] == bytes(N),
          "with a wrong rkey the kernel refuses the write", why)

with gpudirect.Cache(pd, host=True) as c:
    a = bytearray(os.urandom(65536))
    b = bytearray(65536)
    results = []
    for i in range(3):
        with c.get(a) as ra, c.get(b) as rb:
            results.append((ra.result, rb.result))
            why = write(pd, ra.addr, ra.lkey, rb.addr, rb.rkey, len(a))
    check(why == "" and a == b and results[0] == ("miss", "miss") and
          results[2] == ("hit", "hit") and c.stats().hits == 4,
          "cached MRs' keys in a real write; hits after the first get",
          f"{why} {results}")

e = None
try:
    pd.register(4096, 4096)
except GdrError as x:
    e = x
check(e is not None and e.errno == errno.EFAULT and "rxe0" in e.sentence,
      "unmapped memory: the kernel's EFAULT, in the library's words",
      str(e))

# A real dma-buf (vgem) from an owner; rxe takes no dma-buf MR.
sock = "/tmp/py-own.sock"
if os.path.exists(sock):
    os.unlink(sock)
own = subprocess.Popen([os.path.join(build, "tests", "vm", "test-vm"),
                        "serve", sock], stdout=subprocess.PIPE, text=True)
line = ""
while own.stdout and "a 1 MiB dma-buf on" not in line:
    line = own.stdout.readline()  # its words before it listens, if any
    if not line:
        break
if "a 1 MiB dma-buf on" not in line:
    rc = own.wait(60)
    if rc == 77:
        print(f"skip a received dma-buf: no exporter in this guest "
              f"({line.strip()})")
    else:
        check(False, "test-vm serve", f"exit {rc}: {line.strip()}")
else:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)  # as it listens
    for _ in range(50):
        try:
            s.connect(sock)
            break
        except OSError:
            time.sleep(0.1)
    with s, gpudirect.recv(s) as x:
        e = None
        try:
            pd.import_register(x)
        except GdrError as err:
            e = err
        check(x.length == N and len(x.fds) == x.num_fds >= 1 and
              e is not None and e.errno == errno.EOPNOTSUPP and
              "does not support DMA-BUF memory regions" in e.sentence,
              "a vgem dma-buf received from an owner; rxe's EOPNOTSUPP said "
              "in the library's words", str(e))
    own.wait(60)

r = gpudirect.report()
g = subprocess.run([os.path.join(build, "tools", "gdr-info", "gdr-info"),
                    "--json"], capture_output=True, text=True)
check(r == json.loads(g.stdout) and not r["gpudirect_rdma_usable"] and
      any(i["section"] == "rxe0" for i in r["items"]),
      "gpudirect.report() is gdr-info --json")
pd.close()
print(f"python: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
