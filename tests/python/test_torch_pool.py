# SPDX-License-Identifier: MIT
"""gpudirect.torch.TrustedPool without a GPU: PyTorch's side (MemPool, the
custom allocator) is a stand-in module, the driver's allocation is libc's
malloc, and the pool's two functions are called through their C function
pointers as PyTorch calls them. A segment's release must reach the cache
(gdr_cache_invalidate) before the memory is freed, and a cache's close
must stop the pool from calling it. (The GPU tests run the real thing.)"""

from __future__ import annotations

import json

from support import DEVICE, run_python

CHILD = r"""
import ctypes, json, sys, types
events = []
# A stand-in torch: what TrustedPool uses of it.
torch = types.ModuleType("torch")
torch.__version__ = "stand-in"
class Tensor: pass
torch.Tensor = Tensor
torch._C = types.SimpleNamespace()
made = {}
def custom(alloc, free):
    made["alloc"], made["free"] = alloc, free
    return ("allocator", alloc, free)
torch._C._cuda_customAllocator = custom
class MemPool:
    def __init__(self, allocator): self.allocator = allocator
torch.cuda = types.SimpleNamespace(MemPool=MemPool, current_device=lambda: 0,
                                   empty_cache=lambda: events.append("empty"))
sys.modules["torch"] = torch
import gpudirect, gpudirect.torch as gt
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
class FakeCuda:  # cuMemAlloc/cuMemFree as malloc/free, each noted
    def alloc(self, p, size):
        p._obj.value = libc.malloc(size); events.append("alloc"); return 0
    def free(self, ptr):
        events.append("free"); libc.free(ptr); return 0
gt._Cuda = FakeCuda
pd = gpudirect.ProtectionDomain(sys.argv[1])
cache = gpudirect.Cache(pd, trusted=True, host=True)
pool = gt.TrustedPool(cache)
ALLOC = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_int, ctypes.c_void_p)
FREE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p)
alloc = ALLOC(made["alloc"]); free = FREE(made["free"])
seg = alloc(1 << 20, 0, None)                 # PyTorch asks for a segment
out = {"owns": pool.owns(seg + 4096, 8192), "outside": pool.owns(seg - 1, 2)}
# The segment's last byte is in it; one byte past its end is not.
out["edges"] = [pool.owns(seg, 1 << 20), pool.owns(seg + (1 << 20) - 1, 1),
                pool.owns(seg, (1 << 20) + 1), pool.owns(seg + (1 << 20), 1)]
def refused(fn):
    try:
        fn()
        return "accepted"
    except gpudirect.GdrError as e:
        return [e.errno, e.sentence]
out["no_cache"] = refused(lambda: gt.TrustedPool())
other = gpudirect.Cache(pd, trusted=True, host=True)
out["foreign"] = refused(lambda: pool.get(seg + 4096, 8192, cache=other))
other.close()
with pool.get(seg + 4096, 8192) as r:           # a tensor's bytes in it
    out["first"] = r.result
with pool.get(seg + 4096, 8192) as r:
    out["second"] = r.result
try:
    pool.get(12345, 10)
except gpudirect.GdrError as e:
    out["refused"] = (e.errno, "TrustedPool" in e.sentence)
# A range that starts in the segment and runs past its end is not the
# pool's either; the one that ends at its last byte is.
out["past_end"] = refused(lambda: pool.get(seg + (1 << 20) - 8, 16))
with pool.get(seg + (1 << 20) - 8, 8) as r:
    out["to_end"] = r.length
real_inv = cache._state.invalidate_fn
sizes = []
def noted(*a):
    events.append("invalidate"); sizes.append(a[2]); return real_inv(*a)
cache._state.invalidate_fn = noted
free(seg, 1 << 20, 0, None)                     # PyTorch releases it
s = cache.stats()
out.update(events=list(events), entries=s.entries, invalidations=s.invalidations,
           segments=pool.segments(), allocs=pool.allocs, frees=pool.frees)
# A release whose size is not the segment's: the segment's own size is
# what goes, so an entry past the size given is dropped too.
seg3 = alloc(1 << 20, 0, None)
with pool.get(seg3 + 8192, 4096) as r:
    pass
free(seg3, 4096, 0, None)
out["sized"] = [sizes[-1], cache.stats().entries]
seg2 = alloc(1 << 20, 0, None)
cache.close()
free(seg2, 1 << 20, 0, None)                    # after the cache's close
out["after_close"] = events[-2:]
out["closed_cache"] = refused(lambda: pool.get(seg2 + 16, 16))
try:
    gt.TrustedPool(gpudirect.Cache(pd))
except gpudirect.GdrError as e:
    out["validated_refused"] = e.errno
pool.close()                                    # the MemPool let go, emptied
pool.close()
out["closed"] = [pool.pool is None, events[-1]]
try:
    with pool:
        pass
except gpudirect.GdrError as e:
    out["enter_closed"] = e.errno
print(json.dumps(out))
"""


def test_trusted_pool_invalidates_before_it_frees():
    r = run_python(CHILD.replace("sys.argv[1]", repr(DEVICE)))
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["owns"] and not out["outside"], out
    assert out["edges"] == [True, True, False, False], out
    assert out["no_cache"][0] == 22 and "at least one" in out["no_cache"][1]
    assert out["foreign"][0] == 22, out
    assert "not one of the pool's" in out["foreign"][1], out
    assert (out["first"], out["second"]) == ("miss", "hit"), out
    assert out["refused"] == [22, True], out
    assert out["past_end"][0] == 22, out
    assert "not allocated in this TrustedPool" in out["past_end"][1], out
    assert out["to_end"] == 8, out
    # The release: the cache heard first, then the memory went.
    assert out["events"] == ["alloc", "invalidate", "free"], out
    # Both entries in the segment (8 KiB in it, its last 8 bytes) went.
    assert out["entries"] == 0 and out["invalidations"] == 2, out
    assert out["segments"] == [] and (out["allocs"], out["frees"]) == (1, 1)
    # A closed cache is not called: the segment is just freed.
    assert out["after_close"] == ["alloc", "free"], out
    assert out["sized"] == [1 << 20, 0], out
    assert out["closed_cache"][0] == 22, out
    assert "not one of the pool's" in out["closed_cache"][1], out
    assert out["validated_refused"] == 22, out
    assert out["closed"] == [True, "empty"] and out["enter_closed"] == 9, out


FAKE_TENSORS = r"""
import ctypes, json, sys, types
torch = types.ModuleType("torch")
torch.strided, torch.sparse_coo = "strided", "sparse_coo"
class Tensor:  # what the package reads of a tensor, over host memory
    def __init__(self, buf, off, n, dev="cpu", contiguous=True,
                 layout="strided"):
        self.buf, self.off, self.n = buf, off, n
        self.is_cuda = dev == "cuda"
        self.device = types.SimpleNamespace(type=dev)
        self.layout, self._c = layout, contiguous
    def is_contiguous(self): return self._c
    @property
    def nbytes(self): return self.n
    def data_ptr(self):
        return ctypes.addressof(ctypes.c_char.from_buffer(self.buf)) + self.off
torch.Tensor = Tensor
sys.modules["torch"] = torch
import gpudirect
buf = bytearray(1 << 16)
out = {}
with gpudirect.ProtectionDomain(sys.argv[1]) as pd:
    t = Tensor(buf, 1000, 3000)
    with pd.register(t) as mr:
        out["view"] = [mr.addr == t.data_ptr(), mr.length, mr.obj is t]
    with pd.register(t, 100) as mr:
        out["prefix"] = mr.length
    for name, bad in (("strided", Tensor(buf, 0, 64, contiguous=False)),
                      ("device", Tensor(buf, 0, 64, dev="meta")),
                      ("layout", Tensor(buf, 0, 64, layout="sparse_coo")),
                      ("nbytes", None)):
        try:
            if bad is None:
                pd.register(t, 3001)
            else:
                pd.register(bad)
            out[name] = "registered"
        except gpudirect.GdrError as e:
            out[name] = [e.errno, e.sentence]
print(json.dumps(out))
"""


def test_tensor_accessors_without_torch():
    """The PyTorch path (a tensor read through its own accessors), with a
    stand-in torch over host memory."""
    r = run_python(FAKE_TENSORS.replace("sys.argv[1]", repr(DEVICE)))
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["view"] == [True, 3000, True] and out["prefix"] == 100, out
    assert out["strided"][0] == 22 and "not contiguous" in out["strided"][1]
    assert out["device"][0] == 22 and "meta" in out["device"][1]
    assert out["layout"][0] == 22 and "sparse_coo" in out["layout"][1]
    assert out["nbytes"][0] == 22 and "3000 bytes" in out["nbytes"][1]


NO_TORCH = r"""
import json, sys, types
out = {}
sys.modules["torch"] = None  # import torch raises ImportError
import gpudirect, gpudirect.torch as gt
pd = gpudirect.ProtectionDomain(sys.argv[1])
cache = gpudirect.Cache(pd, trusted=True, host=True)
try:
    gt.TrustedPool(cache)
except gpudirect.GdrError as e:
    out["none"] = [e.errno, e.sentence]
old = types.ModuleType("torch")  # a PyTorch without MemPool's allocator
old.__version__ = "2.1.0"
old._C = types.SimpleNamespace()
old.cuda = types.SimpleNamespace()
sys.modules["torch"] = old
try:
    gt.TrustedPool(cache)
except gpudirect.GdrError as e:
    out["old"] = [e.errno, e.sentence]
print(json.dumps(out))
"""


def test_trusted_pool_needs_pytorch_with_mempool():
    r = run_python(NO_TORCH.replace("sys.argv[1]", repr(DEVICE)))
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["none"] == [38, "a TrustedPool needs PyTorch"], out  # ENOSYS
    assert out["old"][0] == 38 and "PyTorch 2.1.0" in out["old"][1], out
