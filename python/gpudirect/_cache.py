# SPDX-License-Identifier: MIT
"""The registration cache (gdr_cache_create(3)) from Python.

``cache.get(obj)`` gives a CachedRegion: the MR covering the object's
bytes, from the cache or registered now, held until it is put back (the
end of its with block, ``put()``, or its collection). A hit from Python
costs two C calls and a few attribute writes; nothing here takes a lock
on the way (see _gate.py for how close() waits for calls in flight).
"""

from __future__ import annotations

import ctypes
import errno
import threading
import weakref
from ctypes import byref, sizeof
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import _lib as L
from ._core import PathSpec, ProtectionDomain, reg_attr, reg_flags, writes
from ._errors import GdrError, argument, closed
from ._gate import Gate
from ._memory import resolve

_RESULT_NAMES = {L.CACHE_RESULT_HIT: "hit", L.CACHE_RESULT_MISS: "miss",
                 L.CACHE_RESULT_UNCACHED: "uncached"}
_EXIT_WAIT = 5.0
_INFO_SIZE = ctypes.sizeof(L.CacheGetInfo)
_new_region = object.__new__


@dataclass(frozen=True)
class CacheStats:
    """struct gdr_cache_stats (gdr_cache_query_stats(3))."""

    hits: int
    misses: int
    stale: int
    evictions: int
    invalidations: int
    passthrough: int
    entries: int
    bytes: int
    in_use: int
    uncached: int


class _CacheState:
    is_cache = True

    def __init__(self, ptr: int, pd: Any, name: str) -> None:
        self.ptr = ptr
        self.pd = pd  # the PD's _PdState
        self.name = name
        self.gate = Gate()
        self.lock = threading.Lock()
        # get()s not yet put back: token (the id of the CachedRegion, which
        # is taken out before the region can be freed and its id reused)
        # -> MR pointer. Only the token is kept, so a region collected
        # without put() is put back by its __del__.
        self.out: Dict[Any, int] = {}
        self.why = ""
        self.done = False
        self.hooks: List[Callable[[], None]] = []  # run at close (gpudirect.torch)
        self.put_fn = L.lib().gdr_cache_put
        self.invalidate_fn = L.lib().gdr_cache_invalidate

    def check(self, call: str) -> None:
        raise closed("the cache", self.why, call)

    def put(self, tok: Any) -> int:
        """Put back the MR of @tok; 0, or the errno of a failed put."""
        g = self.gate
        g._inside.append(None)  # counted before the token is taken
        try:
            mr = self.out.pop(tok, None)
            if mr is None:
                return 0  # put back already (by close())
            err: int = self.put_fn(self.ptr, mr)
            return err
        finally:
            g._inside.pop()

    def close(self, why: str = "", force: bool = False,
              exiting: bool = False) -> None:
        with self.lock:
            if self.done:
                return
            if self.out and not force:
                n = len(self.out)
                raise GdrError(errno.EBUSY, f"{n} region{'s'[:n != 1]} from "
                               "this cache are still out: put them back (end "
                               "their with blocks, or call put()) before "
                               "closing the cache", "Cache.close")
            if not self.gate.shut(_EXIT_WAIT if exiting else None):
                return  # another thread is inside a get: left to the process
            if self.out and not force:
                # A get that was under way when the check above ran.
                self.gate.closed = False
                n = len(self.out)
                raise GdrError(errno.EBUSY, f"{n} region{'s'[:n != 1]} from "
                               "this cache are still out: put them back "
                               "before closing the cache", "Cache.close")
            self.why = why or " (Cache.close())"
            # What is still out is put back now: its regions are closed.
            for tok in list(self.out):
                mr = self.out.pop(tok, None)
                if mr is not None:
                    L.lib().gdr_cache_put(self.ptr, mr)
            if not self.gate.drain(_EXIT_WAIT if exiting else None):
                return
            for h in self.hooks:
                try:
                    h()
                except Exception:
                    pass
            err = L.lib().gdr_cache_destroy(self.ptr)
            if err:
                e = L.fail("gdr_cache_destroy", err)
                if not exiting:
                    raise e
            self.done = True
        self.pd.release(self)

    def close_by_parent(self, why: str, exiting: bool) -> None:
        self.close(why, force=True, exiting=exiting)

    def finalize(self) -> None:
        try:
            self.close(" (it was garbage collected)", force=True)
        except Exception:
            pass


class CachedRegion:
    """An MR from ``Cache.get()``: ``lkey``, ``rkey``, ``addr`` and
    ``length`` of the MR (which may cover more than asked, with
    ``whole_alloc``), what the get did (``result``: 'hit', 'miss' or
    'uncached', and ``reason`` for 'uncached'), until ``put()``."""

    __slots__ = ("_cache", "_owner", "_tok", "_mr", "_obj", "_result",
                 "_more")

    _cache: _CacheState
    _owner: "Cache"  # held: a region out keeps its cache (and PD) alive
    _tok: Optional[int]
    _mr: int
    _obj: Any
    _result: int
    _more: Tuple[int, bytes]

    def __init__(self) -> None:
        raise TypeError("CachedRegion is made by Cache.get()")

    def _check(self, what: str) -> None:
        if self._tok is None:
            raise closed("the cached region", " (put back)", what)
        if self._tok not in self._cache.out:
            raise closed("the cached region", self._cache.why, what)

    @property
    def lkey(self) -> int:
        self._check("lkey")
        return int(L.IbvMr.from_address(self._mr).lkey)

    @property
    def rkey(self) -> int:
        self._check("rkey")
        return int(L.IbvMr.from_address(self._mr).rkey)

    @property
    def addr(self) -> int:
        self._check("addr")
        return int(L.IbvMr.from_address(self._mr).addr or 0)

    @property
    def length(self) -> int:
        self._check("length")
        return int(L.IbvMr.from_address(self._mr).length)

    @property
    def handle(self) -> int:
        """The ``struct ibv_mr *`` as an int."""
        self._check("handle")
        return self._mr

    @property
    def result(self) -> str:
        """'hit', 'miss' (registered now and cached) or 'uncached'
        (registered for this get only; ``reason`` says why)."""
        return _RESULT_NAMES.get(self._result, str(self._result))

    @property
    def reason(self) -> str:
        """Why the range was not cached ('uncached'), else ''."""
        return self._more[1].decode("utf-8", "replace")

    @property
    def num_mappings(self) -> int:
        """The mappings a validated hit compares (0 for host memory)."""
        return int(self._more[0])

    @property
    def closed(self) -> bool:
        return self._tok is None or self._tok not in self._cache.out

    def put(self) -> None:
        """Give the MR back to the cache. Twice does nothing."""
        tok = self._tok
        if tok is None:
            return
        self._tok = None
        self._obj = None
        self._owner = None  # type: ignore[assignment]
        err = self._cache.put(tok)
        if err:
            raise L.fail("gdr_cache_put", err)

    close = put

    def __enter__(self) -> "CachedRegion":
        return self

    def __exit__(self, *exc: Any) -> None:
        tok = self._tok
        if tok is not None:
            self._tok = None
            self._obj = None
            self._owner = None  # type: ignore[assignment]
            err = self._cache.put(tok)
            if err:
                raise L.fail("gdr_cache_put", err)

    def __del__(self) -> None:
        tok = self._tok
        if tok is not None:
            try:
                self._cache.put(tok)
            except Exception:
                pass


class Cache:
    """A registration cache on @pd (gdr_cache_create(3)).

    Device memory is validated by default: every hit asks the CUDA driver
    whether the memory under it is still the memory registered, so an MR
    is never served for memory freed or replaced (PyTorch's caching
    allocator included, with or without expandable segments). With
    ``trusted=True`` a hit asks nothing and the caller promises
    ``invalidate()`` before memory under a cached range goes back to the
    driver: ``gpudirect.torch.TrustedPool`` keeps that promise for
    PyTorch tensors. Host memory is cached only with ``host=True`` (the
    caller then promises ``invalidate()`` before freeing it); otherwise
    it is registered on each get and deregistered on put.
    """

    def __init__(self, pd: ProtectionDomain, trusted: bool = False, *,
                 host: bool = False, whole_alloc: bool = False,
                 max_entries: Optional[int] = None,
                 max_bytes: Optional[int] = None,
                 max_reg_ratio: Optional[int] = None, path: PathSpec = None,
                 access: Optional[int] = None, strict_ordering: bool = False,
                 sync_memops: bool = False,
                 pcie_mapping: bool = False) -> None:
        call = "Cache"
        if not isinstance(pd, ProtectionDomain):
            raise argument(f"pd is {type(pd).__name__}: a Cache is made on a "
                           "ProtectionDomain", call)
        a = L.CacheAttr()
        a.comp_mask = L.CACHE_ATTR_FLAGS
        a.flags = ((L.CACHE_TRUSTED if trusted else 0)
                   | (L.CACHE_HOST if host else 0)
                   | (L.CACHE_WHOLE_ALLOC if whole_alloc else 0))
        for name, v, bit in (("max_entries", max_entries,
                              L.CACHE_ATTR_MAX_ENTRIES),
                             ("max_bytes", max_bytes, L.CACHE_ATTR_MAX_BYTES),
                             ("max_reg_ratio", max_reg_ratio,
                              L.CACHE_ATTR_MAX_REG_RATIO)):
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, int) or v < 0 or \
                    v >= 1 << 63:
                raise argument(f"{name} is {v!r}: a count, 0 or more", call)
            a.comp_mask |= bit
            setattr(a, name, v)
        reg = reg_attr(path, access, reg_flags(strict_ordering, sync_memops,
                       pcie_mapping), call)
        if reg is not None:
            a.comp_mask |= L.CACHE_ATTR_REG
            a.reg = reg
        self._writes = writes(access)
        st = pd._state
        st.enter(call)
        try:
            ptr = L.lib().gdr_cache_create(st.ptr, byref(a))
            if not ptr:
                raise L.fail("gdr_cache_create")
        finally:
            st.gate.leave()
        self._pd = pd
        self.trusted = trusted
        self.host = host
        self._state = _CacheState(int(ptr), st, pd.device)
        st.adopt(self._state)
        self._finalizer = weakref.finalize(self, self._state.finalize)
        self._finalizer.atexit = False  # the PD's exit closes it first
        self._tls = threading.local()
        self._get = L.lib().gdr_cache_get_ex

    @property
    def pd(self) -> ProtectionDomain:
        return self._pd

    @property
    def closed(self) -> bool:
        return self._state.gate.closed

    def get(self, obj: Any, nbytes: Optional[int] = None) -> CachedRegion:
        """The MR covering @obj's bytes (or an int address and @nbytes),
        from the cache or registered now (gdr_cache_get_ex(3)). Use it as
        a context manager, or call put() when the transfer is done."""
        # The hot path: an int address skips resolve(), and the record of
        # the get is a per-thread struct filled in place.
        if type(obj) is int and type(nbytes) is int and obj >= 0 and \
                nbytes >= 0 and obj < 1 << 64 and nbytes < 1 << 64:
            addr, n, keep = obj, nbytes, None
        else:
            t = resolve(obj, nbytes, self._writes, "Cache.get")
            addr, n, keep = t.addr, t.nbytes, t.keep
        try:
            info, pinfo = self._tls.v
        except AttributeError:
            info = L.CacheGetInfo()
            pinfo = byref(info)
            self._tls.v = (info, pinfo)
        st = self._state
        inside = st.gate._inside
        inside.append(None)
        try:
            if st.gate.closed:
                st.check("Cache.get")
            mr = self._get(st.ptr, addr, n, pinfo, _INFO_SIZE)
            if not mr:
                raise L.fail("gdr_cache_get_ex")
            r = _new_region(CachedRegion)
            r._cache = st
            r._owner = self
            r._tok = tok = id(r)
            r._mr = mr
            r._obj = keep
            res = r._result = info.result
            if res == L.CACHE_RESULT_UNCACHED:
                r._more = (info.num_mappings, info.reason)
            else:
                r._more = (info.num_mappings, b"")
            st.out[tok] = mr
            return r
        finally:
            inside.pop()

    def invalidate(self, obj: Any, nbytes: Optional[int] = None) -> None:
        """Forget every entry overlapping @obj's bytes (or an int address
        and @nbytes): idle ones are deregistered now, those out when put
        back. Required before freeing memory a trusted or host cache may
        hold (gdr_cache_invalidate(3))."""
        call = "Cache.invalidate"
        t = resolve(obj, nbytes, False, call)
        self._call(call, "gdr_cache_invalidate", t.addr, t.nbytes)

    def purge(self) -> None:
        """Check every idle device-memory entry against the driver now and
        deregister the stale ones (gdr_cache_purge(3))."""
        self._call("Cache.purge", "gdr_cache_purge")

    def _call(self, call: str, fname: str, *args: Any) -> None:
        st = self._state
        if not st.gate.enter():
            st.check(call)
        try:
            err = getattr(L.lib(), fname)(st.ptr, *args)
            if err:
                raise L.fail(fname, err)
        finally:
            st.gate.leave()

    def stats(self) -> CacheStats:
        """What the cache did (gdr_cache_query_stats(3))."""
        st = self._state
        if not st.gate.enter():
            st.check("Cache.stats")
        try:
            s = L.CacheStats()
            err = L.lib().gdr_cache_query_stats(st.ptr, byref(s), sizeof(s))
            if err:
                raise L.fail("gdr_cache_query_stats", err)
        finally:
            st.gate.leave()
        return CacheStats(*(int(getattr(s, f[0])) for f in s._fields_))

    @property
    def out(self) -> int:
        """How many regions from get() are not yet put back."""
        return len(self._state.out)

    def close(self, force: bool = False) -> None:
        """Deregister every entry and free the cache. While regions are
        out it raises GdrError(EBUSY), unless @force: then they are put
        back (and closed) first. Closing twice does nothing."""
        self._state.close(force=force)
        self._finalizer.detach()

    def __enter__(self) -> "Cache":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close(force=exc[0] is not None)

    def __repr__(self) -> str:
        mode = "trusted" if self.trusted else "validated"
        st = "closed" if self.closed else f"{self._state.ptr:#x}"
        return f"<gpudirect.Cache {mode} on {self._state.name} {st}>"
