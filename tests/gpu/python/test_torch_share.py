# SPDX-License-Identifier: MIT
"""Memory another process owns, on a real GPU: a PyTorch owner in Python
exports a tensor; an importer in Python (another process) and in C
(gdr-share import) register it on the stand-in verbs at the owner's
address, one dma-buf of the page-aligned span; a C owner (gdr-share
owner) is imported by Python. Skips without PyTorch or a GPU."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

import gpudirect
from gpudirect import GdrError

import support
from gpu_support import PAGE, align_down, align_up, dmabuf_regs, torch_cuda
from support import DEVICE, Log, raises

torch = torch_cuda()
MiB = 1 << 20

IMPORTER = """
import json, socket, sys, gpudirect
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
with gpudirect.recv(s) as x, gpudirect.ProtectionDomain(sys.argv[2]) as pd:
    mr = pd.import_register(x)
    print(json.dumps({"addr": mr.addr, "length": mr.length, "path": mr.path,
                      "mem_type": mr.decision.mem_type, "iova": x.iova,
                      "offset": x.offset, "dmabuf_size": x.dmabuf_size,
                      "owner_pid": x.owner_pid, "keys": [mr.lkey, mr.rkey]}))
    mr.close()
"""


def serve(x: gpudirect.Export, path: str, n: int) -> threading.Thread:
    """Hand @x to the next @n importers that connect to @path."""
    ls = socket.socket(socket.AF_UNIX)
    ls.bind(path)
    ls.listen(4)

    def run() -> None:
        try:
            for _ in range(n):
                c, _ = ls.accept()
                with c:
                    x.send(c)
        finally:
            ls.close()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def test_export_fields():
    t = torch.empty(3 * MiB, dtype=torch.uint8, device="cuda")[1000:]
    with gpudirect.export(t) as x:
        assert x.length == t.nbytes and x.iova == t.data_ptr()
        assert x.offset == t.data_ptr() - align_down(t.data_ptr())
        assert x.dmabuf_size == align_up(t.data_ptr() + t.nbytes) - \
            align_down(t.data_ptr())
        assert x.mem_type == "cuda-device" and x.num_fds == len(x.fds) >= 1
        assert x.mapping[0] == "default" and x.owner_pid == os.getpid()
        assert x.gpu_bus_id and x.obj is t and len(x.packed) == 160
        y = gpudirect.unpack(x.packed, x.fds)
        assert (y.iova, y.length, y.buffer_id) == (x.iova, x.length,
                                                   x.buffer_id)
        y.close()
    assert x.closed and x.obj is None


def test_python_owner_python_importer():
    t = torch.arange(MiB, dtype=torch.int32, device="cuda")[77:]
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "kv.sock")
        with gpudirect.export(t) as x:
            srv = serve(x, path, 1)
            log = Log()
            r = subprocess.run([sys.executable, "-c", IMPORTER, path, DEVICE],
                               capture_output=True, text=True, timeout=120)
            srv.join(10)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["addr"] == out["iova"] == t.data_ptr(), out
    assert out["length"] == t.nbytes and out["path"] == "dmabuf", out
    assert out["mem_type"] == "dma-buf" and out["owner_pid"] == os.getpid()
    regs = dmabuf_regs(log)
    assert len(regs) == 1, regs
    reg = regs[0]
    assert reg["exp_name"] == "nv_dmabuf" and reg["iova"] == t.data_ptr()
    assert reg["offset"] == out["offset"] == t.data_ptr() % PAGE
    assert reg["len"] == t.nbytes and reg["size"] == out["dmabuf_size"]
    assert tuple(out["keys"]) == log.keys()[-1]


def test_python_owner_c_importer():
    prog = os.path.join(support.need_build(), "examples", "gdr-share")
    t = torch.empty(4 * MiB, dtype=torch.uint8, device="cuda")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "kv.sock")
        with gpudirect.export(t) as x:
            srv = serve(x, path, 1)
            r = subprocess.run([prog, "import", path, "-d", DEVICE],
                               capture_output=True, text=True, timeout=120)
            srv.join(10)
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert f"received {t.nbytes} bytes" in r.stdout, r.stdout
    assert f"registered on {DEVICE} through dmabuf" in r.stdout, r.stdout
    assert f"iova {t.data_ptr():#x}" in r.stdout, r.stdout


def test_c_owner_python_importer():
    prog = os.path.join(support.need_build(), "examples", "gdr-share")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "kv.sock")
        owner = subprocess.Popen([prog, "owner", path, "--mem", "cuda:0",
                                  "-s", str(2 * MiB)], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        try:
            line = ""
            end = time.monotonic() + 60
            while "serving on" not in line and time.monotonic() < end:
                line = owner.stdout.readline()
                if not line and owner.poll() is not None:
                    break
            assert "serving on" in line, (line, owner.stderr.read())
            # gdr-share's owner listens on a SOCK_SEQPACKET socket.
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            s.connect(path)
            with s, gpudirect.recv(s) as x, \
                    gpudirect.ProtectionDomain(DEVICE) as pd:
                assert x.owner_pid == owner.pid and x.length == 2 * MiB
                log = Log()
                with pd.import_register(x) as mr:
                    assert mr.addr == x.iova and mr.length == 2 * MiB
                    assert mr.path == "dmabuf"
                    reg = dmabuf_regs(log)[0]
                    assert reg["iova"] == x.iova and reg["len"] == 2 * MiB
                with pd.import_register(x, iova=0x1000) as mr:
                    assert mr.addr == 0x1000
        finally:
            owner.terminate()
            owner.wait(30)


def test_export_refuses_what_the_library_refuses():
    t = torch.empty(MiB, dtype=torch.uint8, pin_memory=True)
    e = raises(GdrError, gpudirect.export, t)
    assert e.errno == 22 and e.call == "gdr_export" and e.sentence
