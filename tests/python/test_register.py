# SPDX-License-Identifier: MIT
"""Registration from Python over the stand-in verbs: every kind of object,
its address and length exact, the keys the verbs gave, what reached the
verbs (call, access flags, iova), the decision record, path and access
options, several PDs, a wrapped PD."""

from __future__ import annotations

import ctypes
import mmap
import re

import gpudirect
from gpudirect import GdrError

import support
from support import DEVICE, Log, raises


def addr_of(buf) -> int:
    return ctypes.addressof(ctypes.c_char.from_buffer(buf))


def reg_line(log: Log, addr: int, n: int) -> dict:
    """The stand-in's registration line for [addr, +n): its call and
    fields."""
    want = f" {addr:#x} {n} "
    lines = [x for x in log.regs() if want in x]
    assert len(lines) == 1, (want, log.lines())
    f = dict(p.split("=") for p in re.findall(r"\w+=[^\s:]+", lines[0]))
    f["call"] = lines[0].split()[0]
    f["ok"] = lines[0].endswith(": ok")
    return f


def check_mr(mr, log: Log, addr: int, n: int) -> None:
    assert mr.addr == addr and mr.length == n
    f = reg_line(log, addr, n)
    assert f["ok"] and int(f["iova"], 16) == addr, f
    assert int(f["access"], 16) == (gpudirect.ACCESS_LOCAL_WRITE |
                                    gpudirect.ACCESS_REMOTE_WRITE |
                                    gpudirect.ACCESS_REMOTE_READ), f
    # The keys are the ones the verbs gave this MR (the stand-in gives
    # each MR its own and logs them).
    assert (mr.lkey, mr.rkey) in log.keys(), (hex(mr.lkey), log.keys())
    assert mr.lkey != mr.rkey


def test_bytearray():
    log = Log()
    buf = bytearray(8192)
    with gpudirect.ProtectionDomain(DEVICE) as pd:
        with pd.register(buf) as mr:
            check_mr(mr, log, addr_of(buf), 8192)
            d = mr.decision
            assert mr.path == d.path == "host"
            assert d.mem_type == "host" and d.device == -1
            assert d.export_index is None
            assert [a.path for a in d.attempts][-1] == "host"
            assert d.attempts[-1].result == "used" and d.attempts[-1].errno == 0
            assert all(a.result == "skipped" and a.reason
                       for a in d.attempts[:-1])
            assert mr.obj is buf and mr.pd is pd
            assert "addr=" in repr(mr)
        assert mr.closed and mr.obj is None
    assert any(x.startswith("ibv_dereg_mr") for x in log.lines())


def test_nbytes_prefix_and_int_address():
    log = Log()
    buf = bytearray(1 << 16)
    a = addr_of(buf)
    with gpudirect.ProtectionDomain(DEVICE) as pd:
        with pd.register(buf, 100) as mr:
            check_mr(mr, log, a, 100)
        with pd.register(a + 4096, 5000) as mr:
            check_mr(mr, log, a + 4096, 5000)
            assert mr.obj is None  # an int keeps nothing alive
        e = raises(GdrError, pd.register, buf, (1 << 16) + 1)
        assert e.errno == 22 and "has only 65536 bytes" in e.sentence


def test_memoryview_slice_starts_at_its_own_first_byte():
    log = Log()
    buf = bytearray(10000)
    view = memoryview(buf)[1000:3000]
    with gpudirect.ProtectionDomain(DEVICE) as pd, pd.register(view) as mr:
        check_mr(mr, log, addr_of(buf) + 1000, 2000)


def test_mmap_and_its_pin():
    log = Log()
    m = mmap.mmap(-1, 3 * 4096)
    with gpudirect.ProtectionDomain(DEVICE) as pd:
        mr = pd.register(m)
        check_mr(mr, log, addr_of(m), 3 * 4096)
        # The region holds the mapping: it cannot be closed under the MR.
        raises(BufferError, m.close)
        mr.close()
    m.close()


def test_bytearray_cannot_move_under_its_mr():
    buf = bytearray(4096)
    with gpudirect.ProtectionDomain(DEVICE) as pd, pd.register(buf):
        raises(BufferError, buf.extend, b"x" * 100000)
    buf.extend(b"x")  # free again once closed


def test_numpy_arrays():
    np = support.numpy()
    log = Log()
    a = np.zeros((64, 128), dtype=np.float32)
    with gpudirect.ProtectionDomain(DEVICE) as pd:
        with pd.register(a) as mr:
            check_mr(mr, log, a.ctypes.data, a.nbytes)
        row = a[3:5]  # a view with an offset: its own first element
        with pd.register(row) as mr:
            check_mr(mr, log, a.ctypes.data + 3 * 128 * 4, 2 * 128 * 4)
        e = raises(GdrError, pd.register, a[:, ::2])
        assert e.errno == 22 and "not contiguous" in e.sentence
        ro = np.zeros(1024, dtype=np.uint8)
        ro.flags.writeable = False
        e = raises(GdrError, pd.register, ro)
        assert e.errno == 22 and "read-only" in e.sentence


class DLPackOnly:
    """An object that speaks only DLPack (as JAX arrays do)."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, **kw):
        return self.a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def test_dlpack():
    np = support.numpy()
    if not hasattr(np.zeros(1), "__dlpack__"):
        support.skip("this NumPy has no DLPack (1.22 or newer has)")
    log = Log()
    a = np.arange(4096, dtype=np.int64)
    with gpudirect.ProtectionDomain(DEVICE) as pd:
        with pd.register(DLPackOnly(a[100:600])) as mr:
            check_mr(mr, log, a.ctypes.data + 800, 500 * 8)
        e = raises(GdrError, pd.register, DLPackOnly(a[::3]))
        assert "not contiguous" in e.sentence


class CudaArrayLike:
    """__cuda_array_interface__ over host memory: what CuPy and Numba give
    (the library classifies the pointer; here it is host memory)."""

    def __init__(self, buf, shape, typestr, strides=None, readonly=False):
        self.__cuda_array_interface__ = {
            "data": (addr_of(buf), readonly), "shape": shape,
            "typestr": typestr, "strides": strides, "version": 3}


def test_cuda_array_interface():
    log = Log()
    buf = bytearray(64 * 1024)
    with gpudirect.ProtectionDomain(DEVICE) as pd:
        with pd.register(CudaArrayLike(buf, (16, 256), "<f4")) as mr:
            check_mr(mr, log, addr_of(buf), 16 * 256 * 4)
        with pd.register(CudaArrayLike(buf, (16, 256), "<f4",
                                       strides=(1024, 4))) as mr:
            assert mr.length == 16 * 1024
        e = raises(GdrError, pd.register,
                   CudaArrayLike(buf, (16, 128), "<f4", strides=(1024, 4)))
        assert e.errno == 22 and "not contiguous" in e.sentence
        e = raises(GdrError, pd.register,
                   CudaArrayLike(buf, (16,), "<f4", readonly=True))
        assert "read-only" in e.sentence
        with pd.register(CudaArrayLike(buf, (16,), "<f4", readonly=True),
                         access=gpudirect.ACCESS_REMOTE_READ) as mr:
            assert mr.length == 64


def test_access_and_path_options_reach_the_verbs():
    log = Log()
    buf = bytearray(4096)
    a = addr_of(buf)
    with gpudirect.ProtectionDomain(DEVICE) as pd:
        acc = gpudirect.ACCESS_LOCAL_WRITE | gpudirect.ACCESS_REMOTE_READ
        with pd.register(buf, access=acc, path="host") as mr:
            f = reg_line(log, a, 4096)
            assert int(f["access"], 16) == acc, f
            assert mr.path == "host"
        with pd.register(buf, path=["host", "dmabuf"]):
            pass
        e = raises(GdrError, pd.register, buf, path="dmabuf")
        assert e.errno == 95 and "host memory" in e.sentence
        assert e.call == "gdr_register_ex"
        e = raises(GdrError, pd.register, buf, path="nope")
        assert e.errno == 22 and "'nope'" in e.sentence
        raises(GdrError, pd.register, buf, path=[])
        raises(GdrError, pd.register, buf, access="rw")
        raises(GdrError, pd.register, buf, access=-1)


def test_register_multi():
    log = Log()
    buf = bytearray(16384)
    a = addr_of(buf)
    with gpudirect.ProtectionDomain(DEVICE) as p1, \
            gpudirect.ProtectionDomain(DEVICE) as p2:
        with gpudirect.register_multi([p1, p2], buf) as m:
            assert len(m) == 2
            assert [r.pd for r in m.regions] == [p1, p2]
            assert all(r.addr == a and r.length == 16384 for r in m.regions)
            assert all(r.path == "host" for r in m.regions)
            keys = log.keys()
            assert [(r.lkey, r.rkey) for r in m.regions] == keys[-2:]
            assert m.lkey == m[0].lkey
        assert sum(x.startswith("ibv_dereg_mr") for x in log.lines()) == 2
        raises(GdrError, gpudirect.register_multi, [], buf)
        raises(GdrError, gpudirect.register_multi, [p1, "p2"], buf)


def test_wrapped_pd_is_never_freed():
    buf = bytearray(4096)
    with gpudirect.ProtectionDomain(DEVICE) as owner:
        w = gpudirect.ProtectionDomain.wrap(owner.handle)
        assert w.device == DEVICE and not w.owned
        mr = w.register(buf)
        w.close()  # closes the region, leaves the PD to its owner
        assert mr.closed
        with owner.register(buf) as mr2:  # the PD still works
            assert mr2.length == 4096
        raises(GdrError, gpudirect.ProtectionDomain.wrap, 0)
        raises(GdrError, gpudirect.ProtectionDomain.wrap, "0x1234")


def test_devices_and_pd_by_name():
    assert DEVICE in gpudirect.devices()
    e = raises(GdrError, gpudirect.ProtectionDomain, "mlx5_99")
    assert e.errno == 19 and "mlx5_99" in e.sentence and DEVICE in e.sentence
    raises(GdrError, gpudirect.ProtectionDomain, 3)
    with gpudirect.ProtectionDomain() as pd:  # the first device
        assert pd.device == gpudirect.devices()[0]
        assert pd.handle and repr(pd).startswith("<gpudirect.Protection")


def test_rank_needs_a_gpu():
    with open("/proc/self/maps") as f:
        cuda = "libcuda.so" in f.read()
    if not cuda:  # CUDA not started here: an ordinal names no GPU
        e = raises(GdrError, gpudirect.rank_nics, 0)
        assert e.errno == 19 and e.call == "gdr_rank_nics" and e.sentence
    e = raises(GdrError, gpudirect.ProtectionDomain.nearest, "0000:ff:1f.7")
    assert e.errno == 19 and "0000:ff:1f.7" in e.sentence
    raises(GdrError, gpudirect.rank_nics, 0, policy="far")
    raises(GdrError, gpudirect.rank_nics, 1.5)
