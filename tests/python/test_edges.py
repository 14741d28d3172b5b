# SPDX-License-Identifier: MIT
"""The package's contract at its edges, from both sides: each documented
option and limit accepted at its valid edge and refused past it, and each
option as it reaches the library (the struct gdr_reg_attr the C call
receives, what reached the stand-in verbs)."""

from __future__ import annotations

import ctypes
import fcntl
import json
import os
import uuid

import gpudirect
from gpudirect import GdrError
from gpudirect import _lib as L

import support
from support import DEVICE, Log, raises
from test_register import CudaArrayLike, addr_of, reg_line
from test_share import boot_id, fake_export


def test_nbytes_up_to_the_whole_object():
    buf = bytearray(8192)
    with gpudirect.ProtectionDomain(DEVICE) as pd:
        with pd.register(buf, 8192) as mr:  # exactly its size: accepted
            assert mr.length == 8192
        e = raises(GdrError, pd.register, buf, 0)  # the library's "len 0"
        assert e.errno == 22 and "len is 0" in e.sentence
        e = raises(GdrError, pd.register, buf, 8193)
        assert e.errno == 22 and "has only 8192 bytes" in e.sentence


def test_access_is_an_int_of_bits_not_a_bool():
    buf = bytearray(4096)
    with gpudirect.ProtectionDomain(DEVICE) as pd:
        for bad in (True, False, 1.0, "1", [1]):
            e = raises(GdrError, pd.register, buf, access=bad)
            assert e.errno == 22 and "access" in e.sentence, bad
        with pd.register(buf, access=0) as mr:  # no bits: local read only
            assert mr.length == 4096


def test_local_write_is_a_write():
    """IBV_ACCESS_LOCAL_WRITE lets the NIC write the memory (a receive, an
    RDMA read's target): a read-only object is refused for it."""
    buf = bytearray(4096)
    with gpudirect.ProtectionDomain(DEVICE) as pd:
        ro = CudaArrayLike(buf, (16,), "<f4", readonly=True)
        for acc in (gpudirect.ACCESS_LOCAL_WRITE,
                    L.IBV_ACCESS_REMOTE_WRITE, L.IBV_ACCESS_REMOTE_ATOMIC):
            e = raises(GdrError, pd.register, ro, access=acc)
            assert e.errno == 22 and "read-only" in e.sentence, acc
        with pd.register(ro, access=gpudirect.ACCESS_REMOTE_READ) as mr:
            assert mr.length == 64


def test_auto_stands_alone():
    buf = bytearray(4096)
    with gpudirect.ProtectionDomain(DEVICE) as pd:
        with pd.register(buf, path="auto") as mr:
            assert mr.path == "host"
        with pd.register(buf, path=["auto"]) as mr:
            assert mr.path == "host"
        for bad in (["auto", "host"], ["host", "auto"]):
            e = raises(GdrError, pd.register, buf, path=bad)
            assert e.errno == 22 and "'auto' cannot be combined" in e.sentence


def test_a_unit_dimension_has_any_stride():
    """numpy and PyTorch give a dimension of size 1 any stride: it is
    still contiguous."""
    buf = bytearray(8192)
    with gpudirect.ProtectionDomain(DEVICE) as pd:
        with pd.register(CudaArrayLike(buf, (1, 256), "<f4",
                                       strides=(12345, 4))) as mr:
            assert mr.length == 1024
        with pd.register(CudaArrayLike(buf, (256, 1), "<f4",
                                       strides=(4, 7))) as mr:
            assert mr.length == 1024


def test_a_strided_buffer_is_refused_as_such():
    buf = bytearray(8192)
    with gpudirect.ProtectionDomain(DEVICE) as pd:
        e = raises(GdrError, pd.register, memoryview(buf)[::2])
        assert e.errno == 22 and "not contiguous" in e.sentence


class RaisingInterface:
    """A tensor that requires grad: PyTorch raises from the property."""

    @property
    def __cuda_array_interface__(self):
        raise RuntimeError("Can't get __cuda_array_interface__ on Variable "
                           "that requires grad")


def test_a_failing_interface_is_a_gdr_error():
    with gpudirect.ProtectionDomain(DEVICE) as pd:
        e = raises(GdrError, pd.register, RaisingInterface())
        assert e.errno == 22 and "requires grad" in e.sentence
        assert "__cuda_array_interface__ failed" in e.sentence


# --- DLPack: a capsule made by hand (as a producer makes one) ---

_new_capsule = ctypes.pythonapi.PyCapsule_New
_new_capsule.restype = ctypes.py_object
_new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class HandDLPack:
    """A DLPack producer over @buf: int64 elements, @shape and @strides (in
    elements, None for none), @offset bytes in, on @device_type; with
    @versioned a DLPack 1.0 capsule carrying @flags."""

    def __init__(self, buf, shape, strides=None, offset=0, device_type=1,
                 versioned=False, flags=0):
        from gpudirect import _memory as M
        self.buf, self.device_type = buf, device_type
        n = len(shape)
        self.shape = (ctypes.c_int64 * n)(*shape)
        self.strides = (ctypes.c_int64 * n)(*strides) if strides else None
        t = M._DLTensor()
        t.data = addr_of(buf)
        t.device.device_type, t.device.device_id = device_type, 0
        t.ndim = n
        t.dtype.code, t.dtype.bits, t.dtype.lanes = 0, 64, 1
        t.shape = ctypes.cast(self.shape, ctypes.POINTER(ctypes.c_int64))
        if self.strides is not None:
            t.strides = ctypes.cast(self.strides, ctypes.POINTER(ctypes.c_int64))
        t.byte_offset = offset
        if versioned:
            self.m = M._DLManagedTensorVersioned()
            self.m.version.major, self.m.version.minor = 1, 0
            self.m.flags = flags
            self.name = b"dltensor_versioned"
        else:
            self.m = M._DLManagedTensor()
            self.name = b"dltensor"
        self.m.dl_tensor = t

    def __dlpack__(self, **kw):
        if self.name == b"dltensor_versioned" and "max_version" not in kw:
            raise TypeError("asked without max_version")
        return _new_capsule(ctypes.addressof(self.m), self.name, None)

    def __dlpack_device__(self):
        return (self.device_type, 0)


def test_dlpack_offset_strides_and_devices():
    log = Log()
    buf = bytearray(1 << 16)
    a = addr_of(buf)
    with gpudirect.ProtectionDomain(DEVICE) as pd:
        # byte_offset: the tensor starts that far into its data
        with pd.register(HandDLPack(buf, (100,), offset=64)) as mr:
            assert (mr.addr, mr.length) == (a + 64, 800)
            assert reg_line(log, a + 64, 800)["ok"]
        # strides count elements: [1] over 8-byte elements is contiguous,
        # and a row-major [4, 1] of shape (8, 4) too
        with pd.register(HandDLPack(buf, (100,), strides=(1,))) as mr:
            assert mr.length == 800
        with pd.register(HandDLPack(buf, (8, 4), strides=(4, 1))) as mr:
            assert mr.length == 256
        e = raises(GdrError, pd.register, HandDLPack(buf, (100,), strides=(2,)))
        assert e.errno == 22 and "not contiguous" in e.sentence
        # CUDA host (pinned) and managed memory are taken (the library
        # classifies the pointer itself); ROCm is not
        from gpudirect import _memory as M
        assert (M.DL_CUDA_HOST, M.DL_CUDA_MANAGED) == (3, 13)  # dlpack.h
        for dev in (M.DL_CUDA_HOST, M.DL_CUDA_MANAGED):
            with pd.register(HandDLPack(buf, (16,), device_type=dev)) as mr:
                assert mr.length == 128, dev
        e = raises(GdrError, pd.register, HandDLPack(buf, (16,), device_type=10))
        assert e.errno == 22 and "ROCm" in e.sentence


def test_dlpack_read_only_flag():
    """DLPack 1.0's DLPACK_FLAG_BITMASK_READ_ONLY (bit 0): such a tensor
    is refused for write access, taken for read-only access."""
    buf = bytearray(4096)
    with gpudirect.ProtectionDomain(DEVICE) as pd:
        ro = HandDLPack(buf, (16,), versioned=True, flags=1)
        e = raises(GdrError, pd.register, ro)
        assert e.errno == 22 and "read-only" in e.sentence
        with pd.register(ro, access=gpudirect.ACCESS_REMOTE_READ) as mr:
            assert mr.length == 128
        # another bit (is_copied, 1 << 1) is no read-only flag
        with pd.register(HandDLPack(buf, (16,), versioned=True,
                                    flags=2)) as mr:
            assert mr.length == 128


def test_register_multi_up_to_its_limit():
    buf = bytearray(4096)
    n = L.REG_MULTI_MAX
    assert n == 256  # gpudirect.h's GDR_REG_MULTI_MAX (test_constants)
    pds = [gpudirect.ProtectionDomain(DEVICE) for _ in range(n + 1)]
    try:
        with gpudirect.register_multi(pds[:n], buf) as m:
            assert len(m) == n and m.regions[-1].pd is pds[n - 1]
        e = raises(GdrError, gpudirect.register_multi, pds, buf)
        assert e.errno == 22 and "1 to 256" in e.sentence
    finally:
        for p in pds:
            p.close()


FLAGS_CHILD = r"""
import ctypes, json, sys
import gpudirect
from gpudirect import _lib as L
g = L.lib()
seen = []
def attr_of(p, cls):
    if not p:
        return None
    a = ctypes.cast(p, ctypes.POINTER(cls)).contents
    return [a.comp_mask, a.flags, a.access, a.path_mask]
real_reg, real_multi, real_cache, real_export = (
    g.gdr_register_ex, g.gdr_register_multi, g.gdr_cache_create, g.gdr_export)
def reg(pd, addr, n, attr, info, size):
    seen.append(["register", attr_of(attr, L.RegAttr)])
    return real_reg(pd, addr, n, attr, info, size)
def multi(pds, num, addr, n, attr, mrs, infos, size):
    seen.append(["multi", attr_of(attr, L.RegAttr)])
    return real_multi(pds, num, addr, n, attr, mrs, infos, size)
def cache(pd, attr):
    a = ctypes.cast(attr, ctypes.POINTER(L.CacheAttr)).contents
    r = a.reg if a.comp_mask & L.CACHE_ATTR_REG else None
    seen.append(["cache", a.comp_mask & L.CACHE_ATTR_FLAGS, a.flags,
                 [r.comp_mask, r.flags, r.access, r.path_mask] if r else None])
    return real_cache(pd, attr)
def export(addr, n, flags, desc, fds):
    seen.append(["export", flags])
    return real_export(addr, n, flags, desc, fds)
g.gdr_register_ex, g.gdr_register_multi, g.gdr_cache_create, g.gdr_export = (
    reg, multi, cache, export)
buf = bytearray(4096)
with gpudirect.ProtectionDomain(sys.argv[1]) as pd:
    for kw in ({}, {"strict_ordering": True}, {"sync_memops": True},
               {"pcie_mapping": True}, {"owner_rdma_capable": True},
               {"access": 0}, {"path": "host"}):
        try:
            pd.register(buf, **kw).close()
        except gpudirect.GdrError as e:
            seen.append(["refused", e.errno])
    try:
        gpudirect.register_multi([pd], buf, strict_ordering=True).close()
    except gpudirect.GdrError as e:
        seen.append(["refused", e.errno])
    for kw in ({}, {"trusted": True}, {"whole_alloc": True}, {"host": True},
               {"trusted": True, "whole_alloc": True, "host": True},
               {"path": "host", "access": 1, "sync_memops": True}):
        gpudirect.Cache(pd, **kw).close()
for kw in ({}, {"pcie": True}):
    try:  # host memory: refused by the library, after the call
        gpudirect.export(buf, **kw).close()
    except gpudirect.GdrError as e:
        seen.append(["refused", e.errno])
print(json.dumps(seen))
"""


def test_options_reach_the_library():
    """Each registration option as struct gdr_reg_attr carries it to
    gdr_register_ex(3), gdr_register_multi(3) and gdr_cache_create(3);
    Cache(trusted=, whole_alloc=, host=) and export(pcie=) pass exactly
    their GDR_* bits (host memory cannot show trusted, whole-allocation or
    PCIe-mapped behaviour: the GPU tests do that)."""
    r = support.run_python(FLAGS_CHILD.replace("sys.argv[1]", repr(DEVICE)))
    assert r.returncode == 0, r.stderr
    seen = json.loads(r.stdout.strip().splitlines()[-1])
    F, A, P = L.REG_ATTR_FLAGS, L.REG_ATTR_ACCESS, L.REG_ATTR_PATH_MASK
    CF = L.CACHE_ATTR_FLAGS
    t, w, h = L.CACHE_TRUSTED, L.CACHE_WHOLE_ALLOC, L.CACHE_HOST
    assert (t, w, h) == (4, 1, 2)  # gpudirect.h's values (test_constants)
    host = 1 << L.PATH_HOST
    want = [["register", None],
            ["register", [F, L.REG_STRICT_ORDERING, 0, 0]],
            ["register", [F, L.REG_SYNC_MEMOPS, 0, 0]],
            ["register", [F, L.REG_PCIE_MAPPING, 0, 0]],
            ["register", [F, L.REG_OWNER_RDMA_CAPABLE, 0, 0]],
            ["register", [A, 0, 0, 0]],
            ["register", [P, 0, 0, host]],
            ["multi", [F, L.REG_STRICT_ORDERING, 0, 0]],
            ["cache", CF, 0, None], ["cache", CF, t, None], ["cache", CF, w, None],
            ["cache", CF, h, None], ["cache", CF, t | w | h, None],
            ["cache", CF, 0, [F | A | P, L.REG_SYNC_MEMOPS, 1, host]],
            ["export", 0], ["export", L.EXPORT_PCIE_MAPPING]]
    # The library may refuse an option for host memory: what matters is
    # what it was asked.
    assert [s for s in seen if s[0] != "refused"] == want, seen


def test_close_order_and_the_device_context():
    """pd.close() puts the caches' MRs back first, then the regions', then
    the PD, and closes the device context it opened (once)."""
    log = Log()
    a, b = bytearray(4096), bytearray(8192)
    pd = gpudirect.ProtectionDomain(DEVICE)
    mr = pd.register(a)                       # made first
    cache = gpudirect.Cache(pd, host=True)
    with cache.get(b):                        # an idle entry once put back
        pass
    pd.close()
    assert mr.closed and cache.closed
    lines = log.lines()
    deregs = [x for x in lines if x.startswith("ibv_dereg_mr")]
    assert deregs == [f"ibv_dereg_mr {addr_of(b):#x} 8192",
                      f"ibv_dereg_mr {addr_of(a):#x} 4096"], lines
    opened = [x.split()[2] for x in lines if x.startswith("ibv_open_device")]
    closed = [x.split()[2] for x in lines if x.startswith("ibv_close_device")]
    assert len(opened) == 1 and closed == opened, lines
    assert lines.index(deregs[-1]) < lines.index(
        next(x for x in lines if x.startswith("ibv_close_device")))


def test_wrapped_pd_leaves_the_context_open():
    log = Log()
    with gpudirect.ProtectionDomain(DEVICE) as owner:
        gpudirect.ProtectionDomain.wrap(owner.handle).close()
        assert not [x for x in log.lines() if x.startswith("ibv_close_device")]
    assert len([x for x in log.lines() if x.startswith("ibv_close_device")]) == 1


def test_cache_gets_at_their_edges():
    buf = bytearray(4096)
    with gpudirect.ProtectionDomain(DEVICE) as pd:
        cache = gpudirect.Cache(pd)
        # host memory in a cache without host=True: registered for this
        # get only, and the library's reason is given
        with cache.get(buf) as r:
            assert r.result == "uncached"
            assert "GDR_CACHE_HOST" in r.reason, r.reason
        for addr, n in ((-1, 10), (1 << 64, 10)):
            e = raises(GdrError, cache.get, addr, n)
            assert e.errno == 22 and "not a pointer" in e.sentence, addr
        e = raises(GdrError, cache.get, addr_of(buf), -1)
        assert e.errno == 22
        cache.close()
        # a cache whose access lets nothing write takes read-only objects
        ro = CudaArrayLike(buf, (16,), "<f4", readonly=True)
        rc = gpudirect.Cache(pd, access=gpudirect.ACCESS_REMOTE_READ)
        with rc.get(ro) as r:
            assert r.length >= 64
        rc.close()
        wc = gpudirect.Cache(pd)
        e = raises(GdrError, wc.get, ro)
        assert e.errno == 22 and "read-only" in e.sentence
        wc.close()


PUT_CHILD = r"""
import json, sys
import gpudirect
buf = bytearray(4096)
out = {}
pd = gpudirect.ProtectionDomain(sys.argv[1])
cache = gpudirect.Cache(pd)          # host memory: deregistered at put
r = cache.get(buf)
try:
    r.put()
    out["put"] = "returned"
except gpudirect.GdrError as e:
    out["put"] = [e.errno, e.call]
r = cache.get(buf)
try:
    with r:
        pass
    out["with"] = "returned"
except gpudirect.GdrError as e:
    out["with"] = [e.errno, e.call]
print(json.dumps(out))
sys.stdout.flush()
import os
os._exit(0)  # the MRs stay registered, as the stand-in said
"""


def test_a_failed_put_raises_its_errno():
    """gdr_cache_put's answer (ibv_dereg_mr refused: EBUSY, an MR still
    bound to a memory window) reaches the caller of put() and of a with
    block."""
    r = support.run_python(PUT_CHILD.replace("sys.argv[1]", repr(DEVICE)),
                           env={"STANDIN_FAIL": "ibv_dereg_mr=16"})
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["put"] == [16, "gdr_cache_put"], out
    assert out["with"] == [16, "gdr_cache_put"], out


def test_cache_with_block_invalidate_and_limits():
    buf, other = bytearray(4096), bytearray(4096)
    with gpudirect.ProtectionDomain(DEVICE) as pd:
        # A with block that ends normally with a region out: EBUSY, and
        # the cache stays open for the region's put.
        c = gpudirect.Cache(pd, host=True)
        r = None
        try:
            with c:
                r = c.get(buf)
            raise AssertionError("the with block closed a cache with a "
                                 "region out")
        except GdrError as e:
            assert e.errno == 16 and "still out" in e.sentence
        assert not c.closed
        r.put()
        # invalidate takes read-only objects (it writes nothing) and says
        # the library's refusal (a range past the end of the address space)
        ro = CudaArrayLike(buf, (16,), "<f4", readonly=True)
        with c.get(buf):
            pass
        c.invalidate(ro)
        assert c.stats().invalidations == 1
        e = raises(GdrError, c.invalidate, (1 << 64) - 16, 32)
        assert e.errno == 22 and e.call == "gdr_cache_invalidate"
        c.close()
        # max_bytes limits the bytes the idle entries register: a second
        # 4 KiB entry over a 4 KiB limit evicts the first
        c = gpudirect.Cache(pd, host=True, max_bytes=4096, max_entries=100)
        for b in (buf, other):
            with c.get(b):
                pass
        s = c.stats()
        assert (s.entries, s.bytes, s.evictions) == (1, 4096, 1), s
        c.close()
        c = gpudirect.Cache(pd, host=True, max_entries=1, max_bytes=1 << 20)
        for b in (buf, other):
            with c.get(b):
                pass
        s = c.stats()
        assert (s.entries, s.evictions) == (1, 1), s
        c.close()


# --- exports: the descriptor's fields as read, and what an import sends ---

GPU_UUID = uuid.UUID("00112233-4455-6677-8899-aabbccddeeff")


def test_export_fields_as_the_owner_wrote_them():
    fd = os.memfd_create("not-a-dmabuf")
    x = fake_export(fd)
    x._desc.gpu_uuid[:] = list(GPU_UUID.bytes)  # as nvidia-smi prints it
    assert x.gpu_uuid == GPU_UUID
    assert x.boot_id == uuid.UUID(bytes=boot_id()) != x.gpu_uuid
    for bad in (True, False, 1.5, "3"):
        e = raises(GdrError, x.send, bad)
        assert e.errno == 22 and "sock" in e.sentence, bad
    x.close()


IMPORT_CHILD = r"""
import ctypes, json, os, sys
sys.path.insert(0, sys.argv[2])
import gpudirect
from gpudirect import _lib as L
from test_share import fake_export
g = L.lib()
seen = []
real = g.gdr_import_register
def imp(pd, desc, fds, attr, info, size):
    d = ctypes.cast(desc, ctypes.POINTER(L.ExportDesc)).contents
    seen.append(d.iova)
    return real(pd, desc, fds, attr, info, size)
g.gdr_import_register = imp
x = fake_export(os.memfd_create("x"))
with gpudirect.ProtectionDomain(sys.argv[1]) as pd:
    for iova in (None, 0x1000, None):
        try:
            pd.import_register(x, iova=iova).close()
        except gpudirect.GdrError:
            pass  # a memfd is no dma-buf: refused after the call
print(json.dumps([seen, x.iova]))
"""


def test_import_iova_reaches_the_library_and_only_it():
    """import_register(iova=X) sends X in its own copy of the descriptor:
    the Export keeps the owner's address for later imports."""
    here = os.path.dirname(os.path.abspath(__file__))
    code = IMPORT_CHILD.replace("sys.argv[1]", repr(DEVICE)) \
        .replace("sys.argv[2]", repr(here))
    r = support.run_python(code)
    assert r.returncode == 0, r.stderr
    seen, kept = json.loads(r.stdout.strip().splitlines()[-1])
    owner = 0x7f0000001064  # fake_export's iova
    assert seen == [owner, 0x1000, owner] and kept == owner, (seen, kept)


def test_unpack_edges():
    fd = os.memfd_create("not-a-dmabuf")
    x = fake_export(fd)
    p = x.packed
    # the length the library is told is the data's own: cut or padded on
    # the way is EPROTO, with both numbers said
    for d in (p[:-1], p + b"\0"):
        e = raises(GdrError, gpudirect.unpack, d)
        assert e.errno == 71 and f"is {len(d)} bytes" in e.sentence, len(d)
    # a bad fd is EBADF, and the fds already duplicated are closed again
    before = len(os.listdir("/proc/self/fd"))
    e = raises(GdrError, gpudirect.unpack, p, [fd, 10 ** 6])
    assert e.errno == 9 and str(10 ** 6) in e.sentence
    assert len(os.listdir("/proc/self/fd")) == before
    # the duplicates are close-on-exec, as the library's own fds are
    y = gpudirect.unpack(p, [fd])
    assert fcntl.fcntl(y.fds[0], fcntl.F_GETFD) & fcntl.FD_CLOEXEC
    y.close()
    # an iova is an address: 0 to 2**64-1
    with gpudirect.ProtectionDomain(DEVICE) as pd:
        for bad in (-1, 1 << 64, True, 1.0):
            e = raises(GdrError, pd.import_register, x, iova=bad)
            assert e.errno == 22 and "not an address" in e.sentence, bad
    x.close()


def test_a_descriptor_with_no_fd_is_not_packed():
    """num_fds 0, with every per-fd field 0 as well: refused for what it
    is (an export has 1 or 2 dma-bufs)."""
    x = fake_export(os.memfd_create("x"))
    x._desc.num_fds = 0
    x._desc.dmabuf_ino[0] = 0
    x._desc.mapping[0] = 0
    e = raises(GdrError, lambda: x.packed)
    assert e.errno == 22 and "num_fds 0" in e.sentence, e.sentence
    x.close()
