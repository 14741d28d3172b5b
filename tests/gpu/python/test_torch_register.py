# SPDX-License-Identifier: MIT
"""PyTorch tensors registered from Python on a real GPU, the stand-in verbs
in place of the NIC (it takes any dma-buf and logs offset, length, iova
and the dma-buf's exporter and size): every tensor case torchcomms and
monarch hit, each with mr.addr == the data pointer, the exact length, and
the dma-buf registration the library made for it checked field by field
(offset in the page, length, iova, NVIDIA's dma-buf of the page-aligned
span). Skips without PyTorch or a GPU."""

from __future__ import annotations

import gc
import weakref

import gpudirect
from gpudirect import GdrError

import support
from gpu_support import PAGE, Truth, check_dmabuf_mr, child, cupy, \
    dmabuf_regs, torch_cuda
from support import DEVICE, Log, raises

torch = torch_cuda()
MiB = 1 << 20


def check_dmabuf(mr, addr: int, n: int, log: Log) -> dict:
    return check_dmabuf_mr(mr, addr, n, log, torch.cuda.current_device())


def test_sub_allocation_not_at_the_start_of_its_segment():
    """torchcomms#1171: a tensor the caching allocator carved out of the
    middle of a segment (cuMemAlloc allocation)."""
    truth = Truth()
    ts = [torch.empty(256 * 1024, dtype=torch.uint8, device="cuda")
          for _ in range(6)]
    inner = [t for t in ts if truth.mapping(t.data_ptr())[0] != t.data_ptr()]
    assert inner, "no tensor inside a segment: the allocator changed?"
    t = inner[-1]
    log = Log()
    with gpudirect.ProtectionDomain(DEVICE) as pd, pd.register(t) as mr:
        check_dmabuf(mr, t.data_ptr(), t.nbytes, log)


def test_slice_crossing_a_page():
    """torchcomms#4138: a slice that starts in one page and ends in the
    next."""
    t = torch.empty(4 * PAGE, dtype=torch.uint8, device="cuda")
    edge = (t.data_ptr() // PAGE + 1) * PAGE - t.data_ptr()  # a page's end
    s = t[edge - 100:edge + 100]
    assert s.data_ptr() // PAGE != (s.data_ptr() + s.nbytes - 1) // PAGE
    log = Log()
    with gpudirect.ProtectionDomain(DEVICE) as pd, pd.register(s) as mr:
        r = check_dmabuf(mr, s.data_ptr(), 200, log)
        assert r["size"] == 2 * PAGE


def test_tensor_under_4k():
    """torchcomms#4138, monarch#4285: a tensor smaller than a page, from
    the small pool."""
    t = torch.empty(100, dtype=torch.uint8, device="cuda")
    log = Log()
    with gpudirect.ProtectionDomain(DEVICE) as pd, pd.register(t) as mr:
        check_dmabuf(mr, t.data_ptr(), 100, log)


def test_view_with_a_storage_offset():
    base = torch.arange(4096, dtype=torch.float32, device="cuda")
    v = base[1000:3000]
    assert v.storage_offset() == 1000
    rows = base.view(64, 64)[10:20]
    assert rows.storage_offset() == 640 and rows.is_contiguous()
    with gpudirect.ProtectionDomain(DEVICE) as pd:
        for t in (v, rows):
            log = Log()
            with pd.register(t) as mr:
                assert t.data_ptr() == base.data_ptr() + \
                    t.storage_offset() * 4
                check_dmabuf(mr, t.data_ptr(), t.nbytes, log)


def test_range_over_two_expandable_segment_chunks():
    """torchcomms#3078: PyTorch's expandable segments map a tensor from
    several physical chunks; the registration covers every one (one
    dma-buf of the whole span), not the first."""
    out = child("torch_cases.py", "expandable-span",
                {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"})
    assert out["chunks"] >= 2 and out["ok"], out


def test_pinned_host_tensor():
    t = torch.empty(MiB, dtype=torch.uint8, pin_memory=True)
    assert t.is_pinned()
    log = Log()
    with gpudirect.ProtectionDomain(DEVICE) as pd, pd.register(t) as mr:
        assert mr.addr == t.data_ptr() and mr.length == MiB
        assert mr.path == "host" and mr.decision.mem_type == "cuda-host"
        regs = log.regs()
        assert len(regs) == 1 and f" {t.data_ptr():#x} {MiB} " in regs[0]
        assert f"iova={t.data_ptr():#x}" in regs[0]


def test_cpu_tensor():
    t = torch.zeros(1000, dtype=torch.float64)
    log = Log()
    with gpudirect.ProtectionDomain(DEVICE) as pd, pd.register(t[10:]) as mr:
        assert mr.addr == t.data_ptr() + 80 and mr.length == 990 * 8
        assert mr.path == "host" and mr.decision.mem_type == "host"
        assert len(log.regs()) == 1


def test_parameter_that_requires_grad():
    p = torch.nn.Parameter(torch.empty(1024, device="cuda"))
    log = Log()
    with gpudirect.ProtectionDomain(DEVICE) as pd, pd.register(p) as mr:
        check_dmabuf(mr, p.data_ptr(), 4096, log)


def test_not_contiguous_is_refused():
    t = torch.empty(64, 64, device="cuda").t()
    with gpudirect.ProtectionDomain(DEVICE) as pd:
        e = raises(GdrError, pd.register, t)
        assert e.errno == 22 and "not contiguous" in e.sentence
        assert ".contiguous()" in e.sentence


class CudaArrayOnly:
    def __init__(self, t):
        self.__cuda_array_interface__ = t.__cuda_array_interface__


class DLPackOnly:
    def __init__(self, t):
        self.t = t

    def __dlpack__(self, **kw):
        return self.t.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


def test_dlpack_and_cuda_array_interface():
    t = torch.empty(3 * MiB, dtype=torch.uint8, device="cuda")[12345:]
    with gpudirect.ProtectionDomain(DEVICE) as pd:
        for obj in (DLPackOnly(t), CudaArrayOnly(t)):
            log = Log()
            with pd.register(obj) as mr:
                check_dmabuf(mr, t.data_ptr(), t.nbytes, log)


def test_cupy_array():
    cp = cupy()
    a = cp.zeros(100000, dtype=cp.float32)[7:]
    log = Log()
    with gpudirect.ProtectionDomain(DEVICE) as pd, pd.register(a) as mr:
        check_dmabuf(mr, a.data.ptr, a.nbytes, log)


def test_region_holds_the_tensor():
    """The tensor's memory cannot go back to the allocator under an open
    MR: the region holds the tensor."""
    t = torch.empty(8 * MiB, dtype=torch.uint8, device="cuda")
    w = weakref.ref(t)
    with gpudirect.ProtectionDomain(DEVICE) as pd:
        mr = pd.register(t)
        before = torch.cuda.memory_allocated()
        del t
        gc.collect()
        assert w() is not None and torch.cuda.memory_allocated() == before
        mr.close()
        gc.collect()
        assert w() is None and torch.cuda.memory_allocated() < before


def test_freed_tensor_address_is_refused():
    t = torch.empty(4 * MiB, dtype=torch.uint8, device="cuda")
    p, n = t.data_ptr(), t.nbytes
    del t
    torch.cuda.empty_cache()
    if Truth().mapping(p) is not None:
        support.skip("the allocator kept the segment: nothing was freed")
    with gpudirect.ProtectionDomain(DEVICE) as pd:
        e = raises(GdrError, pd.register, p, n)
        assert e.errno in (14, 22) and e.sentence, e


def test_register_multi_shares_one_export():
    t = torch.empty(2 * MiB + 100, dtype=torch.uint8, device="cuda")[100:]
    log = Log()
    with gpudirect.ProtectionDomain(DEVICE) as a, \
            gpudirect.ProtectionDomain(DEVICE) as b:
        with gpudirect.register_multi([a, b], t) as m:
            regs = dmabuf_regs(log)
            assert len(regs) == 2 and regs[0] == regs[1], regs
            for r in m.regions:
                assert r.addr == t.data_ptr() and r.length == t.nbytes
                assert r.path == "dmabuf" and r.decision.export_index == 0
