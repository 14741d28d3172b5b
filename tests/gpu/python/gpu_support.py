# SPDX-License-Identifier: MIT
"""What the GPU Python tests share: PyTorch on a CUDA device (or a skip),
the CUDA driver's own answer for an address (the ground truth a cached MR
is checked against), the stand-in verbs' dma-buf registrations, and
running a case in a fresh interpreter (allocator settings take effect
only before CUDA starts)."""

from __future__ import annotations

import ctypes
import json
import os
import re
import subprocess
import sys
from ctypes import POINTER, byref, c_int, c_size_t, c_uint64, c_void_p
from typing import Any, Dict, List, Optional, Tuple

import support

PAGE = os.sysconf("SC_PAGESIZE")
HERE = os.path.dirname(os.path.abspath(__file__))


def torch_cuda() -> Any:
    try:
        import torch
    except ImportError:
        support.skip("PyTorch is not installed (the GPU machine has it)")
    if not torch.cuda.is_available():
        support.skip("no CUDA device for PyTorch")
    torch.zeros(1, device="cuda")  # CUDA started: the library sees it
    return torch


def cupy() -> Any:
    try:
        import cupy as cp
    except ImportError:
        support.skip("CuPy is not installed")
    return cp


def align_down(a: int) -> int:
    return a & ~(PAGE - 1)


def align_up(a: int) -> int:
    return (a + PAGE - 1) & ~(PAGE - 1)


class Truth:
    """The CUDA driver's mapping and buffer id at an address now (the
    ground truth: never through the library)."""

    BUFFER_ID = 7  # CU_POINTER_ATTRIBUTE_BUFFER_ID

    def __init__(self) -> None:
        cu = ctypes.CDLL("libcuda.so.1")
        self._range = cu.cuMemGetAddressRange_v2
        self._range.restype = c_int
        self._range.argtypes = [POINTER(c_uint64), POINTER(c_size_t),
                                c_uint64]
        self._attr = cu.cuPointerGetAttribute
        self._attr.restype = c_int
        self._attr.argtypes = [c_void_p, c_int, c_uint64]

    def mapping(self, a: int) -> Optional[Tuple[int, int, int]]:
        base, size, bid = c_uint64(), c_size_t(), c_uint64()
        if self._range(byref(base), byref(size), a) or \
                self._attr(byref(bid), self.BUFFER_ID, a):
            return None
        return base.value, size.value, bid.value

    def snapshot(self, a: int, n: int) -> Optional[List[Tuple[int, int, int]]]:
        out = []
        end = a + n
        while a < end:
            m = self.mapping(a)
            if m is None:
                return None
            out.append(m)
            a = m[0] + m[1]
        return out

    def stale(self, snap: Optional[List[Tuple[int, int, int]]], a: int,
              n: int) -> bool:
        """Whether some mapping under [a, +n) is not the one noted."""
        assert snap is not None, "no ground truth was noted"
        for base, size, bid in snap:
            at = max(a, base)
            if at >= a + n or at >= base + size:
                continue
            if self.mapping(at) != (base, size, bid):
                return True
        return False


def dmabuf_regs(log: support.Log) -> List[Dict[str, Any]]:
    """The stand-in's ibv_reg_dmabuf_mr lines since the mark."""
    out = []
    for x in log.lines():
        if x.startswith("ibv_reg_dmabuf_mr "):
            f = dict(re.findall(r"(\w+)=(\S+)", x))
            out.append({"offset": int(f["offset"]), "len": int(f["len"]),
                        "iova": int(f["iova"], 16),
                        "access": int(f["access"], 16),
                        "exp_name": f["exp_name"], "size": int(f["size"])})
    return out


def check_dmabuf_mr(mr: Any, addr: int, n: int, log: support.Log,
                    device: int) -> Dict[str, Any]:
    """mr is the MR of [addr, +n) through DMA-BUF, registered as the
    library must: the page-aligned span exported, the buffer's offset in
    it, its length, its address as the iova; the keys the verbs gave."""
    assert mr.addr == addr, (hex(mr.addr), hex(addr))
    assert mr.length == n, (mr.length, n)
    assert mr.path == "dmabuf", mr.decision
    assert mr.decision.mem_type in ("cuda-device", "cuda-pool"), mr.decision
    assert mr.decision.device == device, mr.decision
    regs = dmabuf_regs(log)
    assert len(regs) == 1, regs
    r = regs[0]
    assert r["exp_name"] == "nv_dmabuf", r
    assert r["offset"] == addr - align_down(addr), (r, hex(addr))
    assert r["len"] == n and r["iova"] == addr, r
    assert r["size"] == align_up(addr + n) - align_down(addr), r
    assert r["access"] & 7 == 7, r
    assert (mr.lkey, mr.rkey) == log.keys()[-1]
    return r


def child(script: str, case: str, env: Optional[Dict[str, str]] = None,
          timeout: float = 600) -> Dict[str, Any]:
    """Run `python3 SCRIPT CASE` (a file of this folder) in a fresh
    interpreter; its last stdout line is a JSON object."""
    e = dict(os.environ)
    e.update(env or {})
    r = subprocess.run([sys.executable, os.path.join(HERE, script), case],
                       env=e, capture_output=True, text=True, timeout=timeout)
    lines = r.stdout.strip().splitlines()
    if r.returncode == 77:
        support.skip(lines[-1] if lines else "skipped")
    assert r.returncode == 0 and lines, (r.returncode, r.stdout, r.stderr)
    sys.stdout.write(r.stdout)
    return json.loads(lines[-1])
