# SPDX-License-Identifier: MIT
"""Keeping a trusted cache exact under PyTorch's caching allocator.

A validated ``gpudirect.Cache`` (the default) needs nothing here: every hit
asks the CUDA driver whether the memory under it is still the memory
registered, so it is exact under PyTorch's allocator in every setting
(free and reuse, ``empty_cache()``, expandable segments).

A trusted cache (``Cache(pd, trusted=True)``) asks nothing on a hit; it
stays exact only if it hears of every release of memory to the driver
before the release. PyTorch tells C++ of releases through
``CUDACachingAllocator::attachAllocatorTraceTracker``, which it keeps out
of Python on purpose (a callback that takes the GIL under the allocator's
lock can deadlock). What PyTorch does offer Python is a memory pool whose
segments come from an allocator of one's own: ``torch.cuda.MemPool`` with
a ``CUDAPluggableAllocator``. PyTorch's caching allocator still caches and
splits blocks inside the pool's segments (free and reuse of tensors never
reaches the allocator), and while the pool is in use it gives none of
them back (``empty_cache()`` and releases under memory pressure pass over
a pool whose use count is not zero). The segments go back when the pool
ends: its free ones then, the others when their tensors are gone and
``empty_cache()`` runs. ``TrustedPool`` is such a pool whose free calls
``gdr_cache_invalidate()`` on its caches before ``cuMemFree``, so its
caches never serve an MR of released memory:

    cache = gpudirect.Cache(pd, trusted=True)
    pool = gpudirect.torch.TrustedPool(cache)
    with pool:                                  # this thread's allocations
        kv = torch.empty(n, dtype=torch.uint8, device="cuda")
    with pool.get(kv) as mr:                    # refuses memory not in it
        ...
    pool.close()                                # the segments go back

The pool's segments are plain ``cuMemAlloc`` memory whatever
``PYTORCH_CUDA_ALLOC_CONF`` says: PyTorch does not make expandable
segments in a pool with an allocator of its own. Tensors outside the pool
(the default pool, with or without expandable segments) belong in a
validated cache; ``pool.get()`` refuses them.

The allocator's two functions are ctypes callbacks (as PyTorch's own
``torch.cuda._use_uvm`` does): they run Python and so take the GIL, inside
PyTorch's allocator lock. A thread that holds the GIL while it waits for
that lock (freeing a CUDA tensor in Python while another thread's
allocation in the pool needs a new segment) would deadlock with it. Use
the pool from one thread, or make sure the pool's segments are made
(``reserve()``) before other threads free CUDA tensors; docs/python.md
says more.
"""

from __future__ import annotations

import bisect
import ctypes
import errno
import threading
from ctypes import CFUNCTYPE, c_int, c_size_t, c_uint64, c_void_p, c_ssize_t
from typing import Any, Dict, List, Optional, Tuple

from ._cache import Cache, CachedRegion
from ._errors import GdrError, argument
from ._memory import resolve

_ALLOC = CFUNCTYPE(c_void_p, c_ssize_t, c_int, c_void_p)
_FREE = CFUNCTYPE(None, c_void_p, c_size_t, c_int, c_void_p)
# The callbacks of every pool, for the life of the process: PyTorch may
# call a pool's free after the pool object is gone (a block cached in it,
# released by a later empty_cache()).
_KEEP: List[Any] = []


class _Cuda:
    """cuMemAlloc/cuMemFree of the driver PyTorch loaded."""

    def __init__(self) -> None:
        try:
            cu = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise GdrError(errno.ENODEV, f"libcuda.so.1 cannot be loaded "
                           f"({e}): a TrustedPool needs the CUDA driver",
                           "TrustedPool") from None
        self.alloc = cu.cuMemAlloc_v2
        self.alloc.restype = c_int
        self.alloc.argtypes = [ctypes.POINTER(c_uint64), c_size_t]
        self.free = cu.cuMemFree_v2
        self.free.restype = c_int
        self.free.argtypes = [c_uint64]


class _Core:
    """What the pool's callbacks use: never the TrustedPool itself, so
    that the pool and its caches can be collected while PyTorch still
    holds the callbacks."""

    def __init__(self, caches: List[Any]) -> None:
        self.cu = _Cuda()
        self.lock = threading.Lock()
        self.caches = caches  # the caches' _CacheState
        self.starts: List[int] = []  # sorted segment starts
        self.segs: Dict[int, int] = {}  # start -> size
        self.allocs = 0  # segments made
        self.frees = 0  # segments released (each after invalidation)

    # --- the allocator (called by PyTorch, under its allocator lock) ---

    def alloc(self, size: int, device: int, stream: Any) -> int:
        p = c_uint64(0)
        if self.cu.alloc(ctypes.byref(p), size) != 0:
            return 0  # PyTorch sees an allocation failure
        with self.lock:
            bisect.insort(self.starts, p.value)
            self.segs[p.value] = size
            self.allocs += 1
        return p.value

    def free(self, ptr: int, size: int, device: int, stream: Any) -> None:
        ptr = ptr or 0
        with self.lock:
            caches = list(self.caches)
            size = self.segs.pop(ptr, size)
            i = bisect.bisect_left(self.starts, ptr)
            if i < len(self.starts) and self.starts[i] == ptr:
                del self.starts[i]
            self.frees += 1
        # The promise of a trusted cache: it hears before the driver does.
        for st in caches:
            if st.gate.enter():
                try:
                    st.invalidate_fn(st.ptr, ptr, size)
                finally:
                    st.gate.leave()
        self.cu.free(ptr)

    def forget(self, st: Any) -> Any:
        def run() -> None:
            with self.lock:
                if st in self.caches:
                    self.caches.remove(st)
        return run


class TrustedPool:
    """A ``torch.cuda.MemPool`` on @device whose segments are released
    only after ``gdr_cache_invalidate()`` on each of @caches (trusted
    caches, on one or several PDs). ``with pool:`` routes this thread's
    allocations on the device into it (``torch.cuda.use_mem_pool``)."""

    def __init__(self, *caches: Cache, device: Optional[int] = None) -> None:
        call = "TrustedPool"
        try:
            import torch  # type: ignore
        except ImportError:
            raise GdrError(errno.ENOSYS, "a TrustedPool needs PyTorch",
                           call) from None
        if not caches:
            raise argument("a TrustedPool needs at least one Cache", call)
        for c in caches:
            if not isinstance(c, Cache):
                raise argument(f"{type(c).__name__} is not a gpudirect.Cache",
                               call)
            if not c.trusted:
                raise argument("this cache is validated: it is exact under "
                               "PyTorch's allocator without a pool; a "
                               "TrustedPool is for Cache(pd, trusted=True)",
                               call)
        custom = getattr(torch._C, "_cuda_customAllocator", None)
        if custom is None or not hasattr(torch.cuda, "MemPool"):
            raise GdrError(errno.ENOSYS, "this PyTorch has no "
                           "torch.cuda.MemPool with a custom allocator "
                           f"(PyTorch {torch.__version__}); a validated "
                           "Cache needs none", call)
        self._torch = torch
        self._caches = list(caches)
        self._core = core = _Core([c._state for c in caches])
        self.device = torch.cuda.current_device() if device is None \
            else int(device)
        alloc_cb = _ALLOC(core.alloc)
        free_cb = _FREE(core.free)
        _KEEP.append((alloc_cb, free_cb, core))
        a = ctypes.cast(alloc_cb, c_void_p).value
        f = ctypes.cast(free_cb, c_void_p).value
        self._allocator = custom(a, f)
        self.pool: Any = torch.cuda.MemPool(self._allocator)
        for st in core.caches:
            st.hooks.append(core.forget(st))
        self._tls = threading.local()

    @property
    def allocs(self) -> int:
        """Segments PyTorch asked the pool for."""
        return self._core.allocs

    @property
    def frees(self) -> int:
        """Segments released (each after its caches heard)."""
        return self._core.frees

    # --- use ---

    def owns(self, addr: int, nbytes: int) -> bool:
        """Whether [@addr, +@nbytes) lies in one live segment of the pool."""
        core = self._core
        with core.lock:
            i = bisect.bisect_right(core.starts, addr) - 1
            if i < 0:
                return False
            start = core.starts[i]
            return addr + nbytes <= start + core.segs[start]

    def get(self, obj: Any, nbytes: Optional[int] = None, *,
            cache: Optional[Cache] = None) -> CachedRegion:
        """``cache.get(obj)`` on the pool's first cache (or @cache, one of
        its caches), for memory of the pool only: memory outside it (a
        tensor of the default pool) is refused with GdrError(EINVAL), since
        the cache would not hear of its release."""
        call = "TrustedPool.get"
        c = self._caches[0] if cache is None else cache
        if c._state not in self._core.caches:
            raise argument("this cache is not one of the pool's (or it was "
                           "closed)", call)
        t = resolve(obj, nbytes, True, call)
        if not self.owns(t.addr, t.nbytes):
            raise argument(
                f"[{t.addr:#x}, +{t.nbytes}) was not allocated in this "
                "TrustedPool: a trusted cache serves only memory whose "
                "release it hears of; allocate it under 'with pool:', or "
                "use a validated Cache for it", call)
        return c.get(obj, nbytes)

    def reserve(self, nbytes: int) -> None:
        """Make the pool hold at least @nbytes now (one allocation freed
        again at once: PyTorch keeps its segment cached in the pool)."""
        with self:
            t = self._torch.empty(nbytes, dtype=self._torch.uint8,
                                  device=f"cuda:{self.device}")
            del t  # its block stays cached in the pool

    def segments(self) -> List[Tuple[int, int]]:
        """The pool's live segments, (start, size)."""
        core = self._core
        with core.lock:
            return [(s, core.segs[s]) for s in core.starts]

    def close(self) -> None:
        """End the pool: PyTorch gives back its free segments now (the
        caches hear of each first), and the others once their tensors are
        gone and ``torch.cuda.empty_cache()`` runs. Tensors made in it stay
        valid. Twice does nothing."""
        if self.pool is None:
            return
        self.pool = None  # the MemPool's end: PyTorch releases the pool
        self._torch.cuda.empty_cache()

    def __enter__(self) -> "TrustedPool":
        if self.pool is None:
            raise GdrError(errno.EBADF, "this TrustedPool is closed: make a "
                           "new one", "TrustedPool")
        cm = self._torch.cuda.use_mem_pool(self.pool, self.device)
        cm.__enter__()
        stack = getattr(self._tls, "stack", None)
        if stack is None:
            stack = self._tls.stack = []
        stack.append(cm)
        return self

    def __exit__(self, *exc: Any) -> None:
        self._tls.stack.pop().__exit__(*exc)
