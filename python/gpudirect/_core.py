# SPDX-License-Identifier: MIT
"""Protection domains and memory regions.

Lifetimes (docs/python.md says the same to users):
- A MemoryRegion holds the object it registered (a tensor, a memoryview of
  a buffer, a DLPack capsule) until it is closed, so the memory cannot go
  back to its allocator under an open MR. An int address is the caller's
  to keep valid.
- A MemoryRegion holds its ProtectionDomain, so a PD is never collected
  while one of its regions lives.
- ProtectionDomain.close() closes its caches, then its regions (each
  deregistered), then deallocates the PD and closes the device it opened
  (a wrapped PD is left to its owner). A region or cache used after that
  raises GdrError(EBADF) saying so.
- A region or PD collected without close() is closed by its finalizer.
- At interpreter exit, every PD still open is closed in reverse order of
  creation (its caches and regions first), before other modules are torn
  down; an object another thread is still inside a call of is left to the
  process's end (the kernel releases MRs and PDs with the process).
"""

from __future__ import annotations

import atexit
import ctypes
import errno
import threading
import weakref
from ctypes import byref, c_int, c_uint, c_void_p, sizeof
from dataclasses import dataclass
from typing import (Any, Dict, Iterable, List, Optional, Sequence, Tuple,
                    Type, TypeVar, Union)

from . import _lib as L
from ._errors import GdrError, argument, closed
from ._gate import Gate
from ._memory import Target, resolve

_WRITE_BITS = L.IBV_ACCESS_LOCAL_WRITE | L.IBV_ACCESS_REMOTE_WRITE | L.IBV_ACCESS_REMOTE_ATOMIC
_RESULTS = {L.ATTEMPT_SKIPPED: "skipped", L.ATTEMPT_FAILED: "failed",
            L.ATTEMPT_USED: "used"}

PathSpec = Union[None, str, Iterable[str]]
_R = TypeVar("_R", bound="MemoryRegion")


# --- the decision record -----------------------------------------------------


@dataclass(frozen=True)
class Attempt:
    """What became of one path during a registration."""

    path: str  # "data-direct", "dmabuf", "peermem", "host"
    result: str  # "skipped", "failed" or "used"
    errno: int  # 0 unless it failed
    reason: str  # why it was skipped or failed, in the library's words


@dataclass(frozen=True)
class Decision:
    """struct gdr_reg_info: how the library registered (or did not)."""

    path: str  # the path that registered ("none" on failure)
    mem_type: str  # "host", "cuda-host", "cuda-device", "cuda-pool", ...
    device: int  # the CUDA device owning the memory, -1 for host memory
    attempts: Tuple[Attempt, ...]
    export_index: Optional[int]  # the dma-buf export used, None if none


def path_name(p: int) -> str:
    return L.text(L.lib().gdr_path_str(p))


def _decision(info: L.RegInfo) -> Decision:
    g = L.lib()
    n = min(info.num_attempts, L.REG_INFO_MAX_ATTEMPTS)
    attempts = tuple(
        Attempt(L.text(g.gdr_path_str(a.path)),
                _RESULTS.get(a.result, str(a.result)), a.err,
                a.reason.decode("utf-8", "replace"))
        for a in info.attempts[:n])
    idx: Optional[int] = None
    if info.comp_mask & L.REG_INFO_EXPORT and info.export_index >= 0:
        idx = info.export_index
    return Decision(L.text(g.gdr_path_str(info.path)),
                    L.text(g.gdr_mem_type_str(info.mem_type)), info.device,
                    attempts, idx)


# --- options -------------------------------------------------------------------


def path_mask(path: PathSpec, call: str) -> Optional[int]:
    """GDR_PATH_BIT()s of @path: None/"auto" for the library's choice, a
    name to force one path, several names to allow those."""
    if path is None:
        return None
    names = [path] if isinstance(path, str) else list(path)
    mask = 0
    for name in names:
        if not isinstance(name, str):
            raise argument(f"path {name!r} is not a path name: use 'auto', "
                           "'data-direct', 'dmabuf', 'peermem' or 'host'",
                           call)
        p = c_int(0)
        if L.lib().gdr_path_parse(name.encode(), byref(p)) != 0:
            raise argument(f"path {name!r} is not a path: use 'auto', "
                           "'data-direct', 'dmabuf', 'peermem' or 'host'",
                           call)
        if p.value == L.PATH_NONE:
            if len(names) == 1:
                return None
            raise argument("'auto' cannot be combined with other paths",
                           call)
        mask |= 1 << p.value
    if not mask:
        raise argument("path is an empty list: name at least one path, or "
                       "pass None for the library's choice", call)
    return mask


def reg_attr(path: PathSpec, access: Optional[int], flags: int,
             call: str) -> Optional[L.RegAttr]:
    """The struct gdr_reg_attr for these options (None: the defaults)."""
    if path is None and access is None and not flags:
        return None
    a = L.RegAttr()
    mask = path_mask(path, call)
    if mask is not None:
        a.comp_mask |= L.REG_ATTR_PATH_MASK
        a.path_mask = mask
    if access is not None:
        if isinstance(access, bool) or not isinstance(access, int):
            raise argument(f"access is {type(access).__name__}: it is an "
                           "int of IBV_ACCESS_* bits (gpudirect.ACCESS_*)",
                           call)
        if access < 0 or access >= 1 << 31:
            raise argument(f"access {access:#x} is not a set of "
                           "IBV_ACCESS_* bits", call)
        a.comp_mask |= L.REG_ATTR_ACCESS
        a.access = access
    if flags:
        a.comp_mask |= L.REG_ATTR_FLAGS
        a.flags = flags
    return a if a.comp_mask else None


def reg_flags(strict_ordering: bool = False, sync_memops: bool = False,
              pcie_mapping: bool = False,
              owner_rdma_capable: bool = False) -> int:
    return ((L.REG_STRICT_ORDERING if strict_ordering else 0)
            | (L.REG_SYNC_MEMOPS if sync_memops else 0)
            | (L.REG_PCIE_MAPPING if pcie_mapping else 0)
            | (L.REG_OWNER_RDMA_CAPABLE if owner_rdma_capable else 0))


def writes(access: Optional[int]) -> bool:
    """Whether the access asked for lets anything write the memory (the
    library's default does; an access that is no int is refused later)."""
    if access is None or not isinstance(access, int):
        return True
    return bool(access & _WRITE_BITS)


def _ref(a: Optional[L.RegAttr]) -> Any:
    return byref(a) if a is not None else None


# --- RDMA devices ----------------------------------------------------------------


class _DeviceList:
    """ibv_get_device_list(), freed on exit from the with block."""

    def __init__(self) -> None:
        self.lst: Any = None
        self.names: List[str] = []

    def __enter__(self) -> "_DeviceList":
        v = L.ibv()
        n = c_int(0)
        lst = v.ibv_get_device_list(byref(n))
        if not lst:
            err = ctypes.get_errno() or errno.ENODEV
            raise GdrError(err, "libibverbs lists no RDMA devices "
                           f"(ibv_get_device_list: {errno.errorcode.get(err, err)}): "
                           "load the NIC's RDMA driver (e.g. mlx5_ib, or rxe "
                           "for Soft-RoCE) and check /sys/class/infiniband",
                           "ibv_get_device_list")
        self.lst = lst
        self.names = [L.text(v.ibv_get_device_name(lst[i]))
                      for i in range(n.value)]
        return self

    def __exit__(self, *exc: Any) -> None:
        L.ibv().ibv_free_device_list(self.lst)

    def open(self, i: int) -> int:
        ctx = L.ibv().ibv_open_device(self.lst[i])
        if not ctx:
            err = ctypes.get_errno() or errno.ENODEV
            raise GdrError(err, f"ibv_open_device({self.names[i]}) failed: "
                           f"{errno.errorcode.get(err, err)}; is /dev/infiniband "
                           "readable by this user (and exposed to the "
                           "container)?", "ibv_open_device")
        return int(ctx)

    def none_here(self, want: str) -> GdrError:
        have = ", ".join(self.names)
        if not self.names:
            return GdrError(errno.ENODEV, "no RDMA device is visible: load "
                            "the NIC's RDMA driver (e.g. mlx5_ib, or rxe for "
                            "Soft-RoCE), check /sys/class/infiniband, and in "
                            "a container expose /dev/infiniband",
                            "ProtectionDomain")
        return GdrError(errno.ENODEV, f"no RDMA device named {want!r}: the "
                        f"devices here are {have}", "ProtectionDomain")


def devices() -> List[str]:
    """The names of the RDMA devices libibverbs lists, in its order."""
    with _DeviceList() as dl:
        return list(dl.names)


@dataclass(frozen=True)
class NicRank:
    """struct gdr_nic_rank: an RDMA device as ranked for a GPU."""

    device: str  # its name
    distance: str  # "PIX", "PXB", "PHB", "NODE", "SYS", "unknown"
    acs_redirect: int  # bridges that redirect peer-to-peer traffic, -1 unknown
    same_numa: int  # 1, 0, or -1 unknown
    data_direct: bool  # it has a Data Direct function
    nic_bus_id: str  # the PCI address the distance was measured from


_POLICIES = {"closest": L.RANK_CLOSEST, "best": L.RANK_BEST,
             "all": L.RANK_ALL}


def _rank_attr(gpu: Union[int, str], call: str) -> Tuple[L.RankAttr, Any]:
    a = L.RankAttr()
    keep = None
    if isinstance(gpu, bool) or not isinstance(gpu, (int, str)):
        raise argument(f"gpu is {type(gpu).__name__}: name the GPU by its "
                       "CUDA ordinal (an int) or its PCI address "
                       "('0000:17:00.0')", call)
    if isinstance(gpu, str):
        keep = gpu.encode()
        a.comp_mask = L.RANK_ATTR_BUS_ID
        a.gpu_bus_id = keep
    else:
        a.cuda_device = gpu
    return a, keep


def _rank(dl: _DeviceList, ctxs: List[int], gpu: Union[int, str],
          policy: str, call: str) -> List[Tuple[int, L.NicRank]]:
    if policy not in _POLICIES:
        raise argument(f"policy {policy!r}: use 'closest', 'best' or 'all'",
                       call)
    attr, keep = _rank_attr(gpu, call)
    attr.policy = _POLICIES[policy]
    n = len(ctxs)
    arr = (c_void_p * max(n, 1))(*ctxs)
    out = (L.NicRank * max(n, 1))()
    num = c_uint(n)
    g = L.lib()
    if g.gdr_rank_nics(byref(attr), arr, n, out, byref(num),
                       sizeof(L.NicRank)) != 0:
        raise L.fail("gdr_rank_nics")
    del keep
    return [(out[i].index, out[i]) for i in range(min(num.value, n))]


def rank_nics(gpu: Union[int, str], policy: str = "all") -> List[NicRank]:
    """The RDMA devices of this node ranked by PCIe distance from @gpu (a
    CUDA ordinal, which needs CUDA initialised in this process, or a PCI
    address, which needs nothing), nearest first: gdr_rank_nics(3)."""
    g = L.lib()
    with _DeviceList() as dl:
        if not dl.names:
            raise dl.none_here("")
        ctxs: List[int] = []
        try:
            for i in range(len(dl.names)):
                ctxs.append(dl.open(i))
            ranked = _rank(dl, ctxs, gpu, policy, "rank_nics")
            return [NicRank(dl.names[idx],
                            L.text(g.gdr_distance_str(r.distance)),
                            r.acs_redirect, r.same_numa, bool(r.data_direct),
                            L.text(r.nic_bus_id)) for idx, r in ranked]
        finally:
            for c in ctxs:
                L.ibv().ibv_close_device(c)


# --- protection domains ----------------------------------------------------------

_LIVE: Dict[int, "_PdState"] = {}
_LIVE_LOCK = threading.Lock()
_EXIT_WAIT = 5.0  # seconds an exit waits for another thread's call


class _PdState:
    """What a ProtectionDomain owns; outlives it in finalizers."""

    def __init__(self, ptr: int, ctx: int, owned: bool, name: str) -> None:
        self.ptr = ptr
        self.ctx = ctx
        self.owned = owned
        self.name = name
        self.gate = Gate()
        self.lock = threading.Lock()
        self.children: Dict[int, Any] = {}  # caches and regions, by id
        self.why = ""
        with _LIVE_LOCK:
            _LIVE[id(self)] = self

    def enter(self, call: str) -> None:
        if not self.gate.enter():
            raise closed(f"the protection domain on {self.name}", self.why,
                         call)

    # A child is adopted only inside the gate (a registration under way),
    # which close() drains before it lists the children; a dict's item
    # assignment and pop are each one atomic step for the interpreter.
    def adopt(self, child: Any) -> None:
        self.children[id(child)] = child

    def release(self, child: Any) -> None:
        self.children.pop(id(child), None)

    def close(self, why: str = "", exiting: bool = False) -> None:
        with self.lock:
            if self.gate.closed:
                return
            self.why = why or " (ProtectionDomain.close())"
            self.gate.closed = True
        if not self.gate.drain(_EXIT_WAIT if exiting else None):
            return  # a thread is still registering: left to the process
        kids = list(self.children.values())
        self.children.clear()
        # Caches first (they hold MRs of their own), then regions.
        kids.sort(key=lambda k: 0 if getattr(k, "is_cache", False) else 1)
        first: Optional[GdrError] = None
        for k in kids:
            try:
                k.close_by_parent(f" (its protection domain on {self.name} "
                                  "was closed)", exiting)
            except GdrError as e:
                first = first or e
        with _LIVE_LOCK:
            _LIVE.pop(id(self), None)
        if self.owned:
            v = L.ibv()
            err = v.ibv_dealloc_pd(self.ptr)
            if err:
                first = first or GdrError(
                    err, f"ibv_dealloc_pd on {self.name} failed: "
                    f"{errno.errorcode.get(err, err)} (an MR or QP made "
                    "outside gpudirect still uses it?)", "ibv_dealloc_pd")
            if self.ctx:
                v.ibv_close_device(self.ctx)
        if first is not None and not exiting:
            raise first

    def finalize(self) -> None:
        try:
            self.close(" (it was garbage collected)")
        except Exception:
            pass


@atexit.register
def _close_at_exit() -> None:
    with _LIVE_LOCK:
        live = list(_LIVE.values())
    for s in reversed(live):
        try:
            s.close(" (the interpreter is exiting)", exiting=True)
        except Exception:
            pass


class ProtectionDomain:
    """An RDMA protection domain (struct ibv_pd) to register memory on.

    ``ProtectionDomain("mlx5_0")`` opens the named RDMA device and allocates
    a PD on it (``ProtectionDomain()``: the first device libibverbs lists);
    ``ProtectionDomain.nearest(gpu)`` the device nearest a GPU;
    ``ProtectionDomain.wrap(ptr)`` a PD another library allocated (never
    freed here). ``close()`` (or the with block's end) closes every cache
    and region made on it, then frees what it opened.
    """

    def __init__(self, device: Optional[str] = None) -> None:
        if device is not None and not isinstance(device, str):
            raise argument(f"device is {type(device).__name__}: name the "
                           "RDMA device as a str ('mlx5_0'), or use "
                           "ProtectionDomain.wrap() for an ibv_pd pointer",
                           "ProtectionDomain")
        with _DeviceList() as dl:
            if device is None:
                if not dl.names:
                    raise dl.none_here("")
                i = 0
            elif device in dl.names:
                i = dl.names.index(device)
            else:
                raise dl.none_here(device)
            ctx = dl.open(i)
            name = dl.names[i]
        self._state = self._alloc(ctx, name)
        self._finalizer = weakref.finalize(self, self._state.finalize)
        self._finalizer.atexit = False  # _close_at_exit orders exit

    @staticmethod
    def _alloc(ctx: int, name: str) -> _PdState:
        v = L.ibv()
        pd = v.ibv_alloc_pd(ctx)
        if not pd:
            err = ctypes.get_errno() or errno.ENOMEM
            v.ibv_close_device(ctx)
            raise GdrError(err, f"ibv_alloc_pd on {name} failed: "
                           f"{errno.errorcode.get(err, err)}",
                           "ibv_alloc_pd")
        return _PdState(int(pd), ctx, True, name)

    @classmethod
    def nearest(cls, gpu: Union[int, str]) -> "ProtectionDomain":
        """A PD on the RDMA device nearest @gpu (a CUDA ordinal, which
        needs CUDA initialised in this process, e.g. by PyTorch; or the
        GPU's PCI address), as gdr_rank_nics(GDR_RANK_CLOSEST) ranks them."""
        self = cls.__new__(cls)
        with _DeviceList() as dl:
            if not dl.names:
                raise dl.none_here("")
            ctxs: List[int] = []
            keep = -1
            try:
                for i in range(len(dl.names)):
                    ctxs.append(dl.open(i))
                ranked = _rank(dl, ctxs, gpu, "closest", "nearest")
                if not ranked:
                    raise GdrError(errno.ENODEV, "no RDMA device was ranked "
                                   f"for GPU {gpu}", "gdr_rank_nics")
                keep = ranked[0][0]
                name = dl.names[keep]
            finally:
                for i, c in enumerate(ctxs):
                    if i != keep:
                        L.ibv().ibv_close_device(c)
        self._state = cls._alloc(ctxs[keep], name)
        self._finalizer = weakref.finalize(self, self._state.finalize)
        self._finalizer.atexit = False
        return self

    @classmethod
    def wrap(cls, pd: int, device: Optional[str] = None) -> "ProtectionDomain":
        """Use the ``struct ibv_pd *`` @pd (an int) another library
        allocated (pyverbs, a transfer engine). It must stay allocated
        while this object and its regions are open; close() closes the
        regions and caches made here and leaves the PD to its owner.
        @device names it in messages (default: read through the PD)."""
        if isinstance(pd, bool) or not isinstance(pd, int) or pd <= 0 \
                or pd >= 1 << 64:
            raise argument(f"pd {pd!r} is not a pointer: wrap() takes the "
                           "address of a struct ibv_pd as an int",
                           "ProtectionDomain.wrap")
        if device is None:
            try:
                ctx = L.IbvPd.from_address(pd).context
                dev = L.IbvContext.from_address(ctx).device if ctx else None
                device = L.text(L.ibv().ibv_get_device_name(dev)) \
                    if dev else "?"
            except (ValueError, OSError):
                device = "?"
        self = cls.__new__(cls)
        self._state = _PdState(pd, 0, False, device or "?")
        self._finalizer = weakref.finalize(self, self._state.finalize)
        self._finalizer.atexit = False
        return self

    # --- properties ---

    @property
    def device(self) -> str:
        """The RDMA device's name."""
        return self._state.name

    @property
    def handle(self) -> int:
        """The ``struct ibv_pd *`` as an int (for other verbs bindings)."""
        self._check("handle")
        return self._state.ptr

    @property
    def closed(self) -> bool:
        return self._state.gate.closed

    @property
    def owned(self) -> bool:
        """False for a wrapped PD (its owner frees it)."""
        return self._state.owned

    def _check(self, call: str) -> None:
        if self._state.gate.closed:
            raise closed(f"the protection domain on {self.device}",
                         self._state.why, call)

    # --- registration ---

    def register(self, obj: Any, nbytes: Optional[int] = None, *,
                 path: PathSpec = None, access: Optional[int] = None,
                 strict_ordering: bool = False, sync_memops: bool = False,
                 pcie_mapping: bool = False,
                 owner_rdma_capable: bool = False) -> "MemoryRegion":
        """Register @obj's memory (gdr_register_ex(3)) and return its
        MemoryRegion: a tensor or array (CUDA or host), a writable buffer,
        or an int address with @nbytes. @path forces a path ('dmabuf') or
        allows some (a list); @access replaces the default IBV_ACCESS_*
        bits. Raises GdrError with the library's errno and sentence."""
        call = "register"
        t = resolve(obj, nbytes, writes(access), call)
        attr = reg_attr(path, access, reg_flags(strict_ordering, sync_memops,
                        pcie_mapping, owner_rdma_capable), call)
        return _register_one(self, t, attr, call)

    def import_register(self, export: Any, *, path: PathSpec = None,
                        access: Optional[int] = None,
                        strict_ordering: bool = False,
                        pcie_mapping: bool = False,
                        iova: Optional[int] = None) -> "MemoryRegion":
        """Register memory another process exported (an Export from
        gpudirect.recv() or gpudirect.export()): gdr_import_register(3).
        The region's addr is the export's iova (the owner's address by
        default; @iova gives another). The export's fds may be closed
        afterwards: the MR holds its own reference."""
        from ._share import Export

        call = "import_register"
        if not isinstance(export, Export):
            raise argument(f"export is {type(export).__name__}: pass the "
                           "Export that gpudirect.recv() or "
                           "gpudirect.export() gave", call)
        desc, fds = export._for_import(iova, call)
        attr = reg_attr(path, access, reg_flags(strict_ordering, False,
                        pcie_mapping, False), call)
        info = L.RegInfo()
        self._state.enter(call)
        try:
            mr = L.lib().gdr_import_register(self._state.ptr, byref(desc),
                                             fds, _ref(attr), byref(info),
                                             sizeof(info))
            if not mr:
                raise L.fail("gdr_import_register")
            return MemoryRegion._made(self, [int(mr)], [info], None,
                                      export.length)
        finally:
            self._state.gate.leave()

    def register_dmabuf(self, fd: int, offset: int, nbytes: int, iova: int, *,
                        path: PathSpec = None, access: Optional[int] = None,
                        pcie_mapping: bool = False) -> "MemoryRegion":
        """Register [@offset, +@nbytes) of the dma-buf @fd of any exporter
        at address @iova (gdr_register_dmabuf(3)). @fd stays the caller's."""
        call = "register_dmabuf"
        for name, v in (("fd", fd), ("offset", offset), ("nbytes", nbytes),
                        ("iova", iova)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0 \
                    or v >= 1 << 64:
                raise argument(f"{name} {v!r} is not a number from 0 to "
                               "2**64-1", call)
        attr = reg_attr(path, access, reg_flags(False, False, pcie_mapping,
                        False), call)
        info = L.RegInfo()
        self._state.enter(call)
        try:
            mr = L.lib().gdr_register_dmabuf(self._state.ptr, fd, offset,
                                             nbytes, iova, _ref(attr),
                                             byref(info), sizeof(info))
            if not mr:
                raise L.fail("gdr_register_dmabuf")
            return MemoryRegion._made(self, [int(mr)], [info], None, nbytes)
        finally:
            self._state.gate.leave()

    # --- lifetime ---

    def close(self) -> None:
        """Close every cache and region made on this PD (deregistering
        their MRs), then deallocate the PD and close its device (a wrapped
        PD is left to its owner). Closing twice does nothing."""
        self._finalizer.detach()
        self._state.close()

    def __enter__(self) -> "ProtectionDomain":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        st = "closed" if self.closed else f"{self._state.ptr:#x}"
        return f"<gpudirect.ProtectionDomain {self.device} {st}>"


def _register_one(pd: ProtectionDomain, t: Target, attr: Optional[L.RegAttr],
                  call: str) -> "MemoryRegion":
    info = L.RegInfo()
    st = pd._state
    st.enter(call)
    try:
        mr = L.lib().gdr_register_ex(st.ptr, t.addr, t.nbytes, _ref(attr),
                                     byref(info), sizeof(info))
        if not mr:
            raise L.fail("gdr_register_ex")
        return MemoryRegion._made(pd, [int(mr)], [info], t.keep, t.nbytes)
    finally:
        st.gate.leave()


# --- memory regions ----------------------------------------------------------------


# Closing regions is rare and quick: one lock for all (a lock per region
# would cost every registration its making).
_CLOSE_LOCK = threading.Lock()


class _MrState:
    """The MRs of one region (one per PD) and who owns them."""

    __slots__ = ("mrs", "parents", "closed", "why")
    is_cache = False

    def __init__(self, mrs: List[int], parents: List[_PdState]) -> None:
        self.mrs = mrs
        self.parents = parents
        self.closed = False
        self.why = ""

    def close(self, why: str = "") -> None:
        if self.closed:
            return
        with _CLOSE_LOCK:
            if self.closed:
                return
            g = L.lib()
            if len(self.mrs) == 1:
                err = g.gdr_deregister(self.mrs[0])
                if err:
                    raise L.fail("gdr_deregister", err)
            else:
                arr = (c_void_p * len(self.mrs))(*self.mrs)
                if g.gdr_deregister_multi(arr, len(self.mrs)) != 0:
                    e = L.fail("gdr_deregister_multi")
                    self.mrs = [int(p) for p in arr if p]
                    raise e
            self.closed = True
            self.why = why or " (MemoryRegion.close())"
        for p in self.parents:
            p.release(self)

    def close_by_parent(self, why: str, exiting: bool) -> None:
        self.close(why)


class MemoryRegion:
    """A registered range: the MR's ``lkey``, ``rkey``, ``addr`` and
    ``length`` (addr is the registered address, its iova; length the bytes
    asked for), the ``path`` it took and the whole ``decision`` record.

    It holds the object it registered until ``close()`` (or the end of a
    with block), so the memory stays where the MR points. A region from
    ``gpudirect.register_multi()`` is a MultiRegion: one MR per PD.
    """

    __slots__ = ("_state", "_pd", "_obj", "_mr", "_decision", "_length",
                 "__weakref__")

    _state: _MrState
    _pd: Any  # a ProtectionDomain, or the list of a MultiRegion's
    _obj: Any
    _mr: Optional[List[L.IbvMr]]
    _decision: List[Any]  # RegInfo until read, then Decision
    _length: int

    def __init__(self) -> None:
        raise TypeError("MemoryRegion is made by ProtectionDomain.register()")

    @classmethod
    def _made(cls: Type[_R], pd: Any, mrs: List[int], infos: List[Any],
              keep: Any, length: int) -> _R:
        self = object.__new__(cls)
        pds = pd if isinstance(pd, list) else [pd]
        self._state = _MrState(mrs, [p._state for p in pds])
        self._pd = pd
        self._obj = keep
        self._mr = None  # the struct ibv_mr views, made on first use
        # The records as the library wrote them: read into Decisions on
        # first use (most callers never look).
        self._decision = list(infos)
        self._length = length
        for p in pds:
            p._state.adopt(self._state)
        return self

    def _check(self, what: str) -> None:
        if self._state.closed:
            raise closed("the memory region", self._state.why, what)

    def _view(self, i: int, what: str) -> L.IbvMr:
        """MR @i as a struct, checked open (a closed MR is freed memory)."""
        self._check(what)
        if self._mr is None:
            self._mr = [L.IbvMr.from_address(m) for m in self._state.mrs]
        return self._mr[i]

    @property
    def lkey(self) -> int:
        """The MR's local key."""
        return int(self._view(0, "lkey").lkey)

    @property
    def rkey(self) -> int:
        """The MR's remote key."""
        return int(self._view(0, "rkey").rkey)

    @property
    def addr(self) -> int:
        """The MR's address (its iova): the registered pointer."""
        return int(self._view(0, "addr").addr or 0)

    @property
    def length(self) -> int:
        """The MR's length: the bytes registered."""
        return int(self._view(0, "length").length)

    @property
    def handle(self) -> int:
        """The ``struct ibv_mr *`` as an int (for other verbs bindings)."""
        self._check("handle")
        return self._state.mrs[0]

    def _record(self, i: int) -> Decision:
        d = self._decision[i]
        if not isinstance(d, Decision):
            d = self._decision[i] = _decision(d)
        assert isinstance(d, Decision)
        return d

    @property
    def decision(self) -> Decision:
        """The library's decision record (readable after close too)."""
        return self._record(0)

    @property
    def path(self) -> str:
        """The path that registered: 'dmabuf', 'peermem', 'host', ..."""
        return self._record(0).path

    @property
    def pd(self) -> ProtectionDomain:
        pd: ProtectionDomain = self._pd[0] if isinstance(self._pd, list) \
            else self._pd
        return pd

    @property
    def obj(self) -> Any:
        """The object registered (None for an int address, or after
        close())."""
        keep = self._obj
        return keep[0] if isinstance(keep, tuple) else keep

    @property
    def closed(self) -> bool:
        return self._state.closed

    def close(self) -> None:
        """Deregister the MR and let the object go. Closing twice does
        nothing; a failed deregistration raises GdrError and leaves the
        region open."""
        self._state.close()
        self._obj = None

    def __enter__(self) -> "MemoryRegion":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self._state.close(" (it was garbage collected)")
        except Exception:
            pass

    def __repr__(self) -> str:
        if self.closed:
            return "<gpudirect.MemoryRegion closed>"
        return (f"<gpudirect.MemoryRegion addr={self.addr:#x} "
                f"length={self.length} lkey={self.lkey:#x} "
                f"rkey={self.rkey:#x} path={self.path}>")


class RegionOnPd:
    """One PD's MR of a MultiRegion."""

    __slots__ = ("_multi", "_i")

    def __init__(self, multi: "MultiRegion", i: int) -> None:
        self._multi = multi
        self._i = i

    @property
    def pd(self) -> ProtectionDomain:
        pd: ProtectionDomain = self._multi._pd[self._i]
        return pd

    @property
    def lkey(self) -> int:
        return int(self._multi._view(self._i, "lkey").lkey)

    @property
    def rkey(self) -> int:
        return int(self._multi._view(self._i, "rkey").rkey)

    @property
    def addr(self) -> int:
        return int(self._multi._view(self._i, "addr").addr or 0)

    @property
    def length(self) -> int:
        return int(self._multi._view(self._i, "length").length)

    @property
    def decision(self) -> Decision:
        return self._multi._record(self._i)

    @property
    def path(self) -> str:
        return self.decision.path


class MultiRegion(MemoryRegion):
    """One buffer on several PDs (gdr_register_multi(3)): ``regions[i]``
    is its MR on ``pds[i]``; the first one's keys are also the region's
    own. ``close()`` releases them all."""

    __slots__ = ()

    @property
    def regions(self) -> List[RegionOnPd]:
        return [RegionOnPd(self, i) for i in range(len(self._state.mrs))]

    def __len__(self) -> int:
        return len(self._state.mrs)

    def __getitem__(self, i: int) -> RegionOnPd:
        return self.regions[i]


def register_multi(pds: Sequence[ProtectionDomain], obj: Any,
                   nbytes: Optional[int] = None, *, path: PathSpec = None,
                   access: Optional[int] = None, strict_ordering: bool = False,
                   sync_memops: bool = False, pcie_mapping: bool = False,
                   owner_rdma_capable: bool = False) -> MultiRegion:
    """Register @obj on every PD of @pds at once (gdr_register_multi(3)):
    one classification and one dma-buf export for all, all or nothing.
    @obj may also be an Export (gdr_import_register_multi(3))."""
    from ._share import Export

    call = "register_multi"
    pds = list(pds)
    if not pds or len(pds) > L.REG_MULTI_MAX:
        raise argument(f"{len(pds)} protection domains: register_multi "
                       f"takes 1 to {L.REG_MULTI_MAX}", call)
    for p in pds:
        if not isinstance(p, ProtectionDomain):
            raise argument(f"pds holds a {type(p).__name__}: pass "
                           "ProtectionDomain objects", call)
    n = len(pds)
    entered: List[_PdState] = []
    flags = reg_flags(strict_ordering, sync_memops, pcie_mapping,
                      owner_rdma_capable)
    imported = isinstance(obj, Export)
    t: Optional[Target] = None
    if imported:
        desc, fds = obj._for_import(None, call)
        attr = reg_attr(path, access, flags, call)
    else:
        t = resolve(obj, nbytes, writes(access), call)
        attr = reg_attr(path, access, flags, call)
    try:
        for p in pds:
            p._state.enter(call)
            entered.append(p._state)
        ptrs = (c_void_p * n)(*[p._state.ptr for p in pds])
        mrs = (c_void_p * n)()
        infos = (L.RegInfo * n)()
        g = L.lib()
        if imported:
            rc = g.gdr_import_register_multi(ptrs, n, byref(desc), fds,
                                             _ref(attr), mrs, infos,
                                             sizeof(L.RegInfo))
            length = obj.length
            keep = None
        else:
            assert t is not None
            rc = g.gdr_register_multi(ptrs, n, t.addr, t.nbytes, _ref(attr),
                                      mrs, infos, sizeof(L.RegInfo))
            length = t.nbytes
            keep = t.keep
        if rc != 0:
            raise L.fail("gdr_import_register_multi" if imported
                         else "gdr_register_multi")
        return MultiRegion._made(pds, [int(m or 0) for m in mrs],
                                 list(infos), keep, length)
    finally:
        for s in entered:
            s.gate.leave()
