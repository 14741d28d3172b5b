# SPDX-License-Identifier: MIT
"""The C library, bound with ctypes: the structs of include/gpudirect.h
that Python reads or fills, the calls and their prototypes, and the few
libibverbs and libc calls the package needs.

Every layout here is checked against the header by
tests/python/test_abi.py (through the C program tests/python/abi-layout.c),
so a change of the header fails a test before it reaches a user.

The libraries are loaded on first use, not at import: ``import gpudirect``
works on a machine without libgpudirect, and the first call that needs it
raises GdrError naming what is missing. Every function comes from a
``ctypes.CDLL``, whose calls release the GIL for their whole duration
(``ctypes.PyDLL`` would hold it): a registration, a cache miss, a report
or a blocking receive never stops the interpreter's other threads.
"""

from __future__ import annotations

import ctypes
import errno
import os
import threading
from ctypes import (
    POINTER,
    Structure,
    c_char,
    c_char_p,
    c_int,
    c_size_t,
    c_uint,
    c_uint8,
    c_uint32,
    c_uint64,
    c_void_p,
)
from typing import Any, Optional

from ._errors import GdrError

# --- constants of include/gpudirect.h and infiniband/verbs.h ---------------

PATH_NONE = 0
PATH_DMABUF = 1
PATH_PEERMEM = 2
PATH_HOST = 3
PATH_DATA_DIRECT = 4

MEM_UNKNOWN = 0
MEM_HOST = 1
MEM_CUDA_HOST = 2
MEM_CUDA_DEVICE = 3
MEM_CUDA_MANAGED = 4
MEM_CUDA_POOL = 5
MEM_DMABUF = 6

REG_ATTR_ACCESS = 1 << 0
REG_ATTR_PATH_MASK = 1 << 1
REG_ATTR_FLAGS = 1 << 2

REG_STRICT_ORDERING = 1 << 0
REG_SYNC_MEMOPS = 1 << 1
REG_PCIE_MAPPING = 1 << 2
REG_OWNER_RDMA_CAPABLE = 1 << 3

ATTEMPT_SKIPPED = 0
ATTEMPT_FAILED = 1
ATTEMPT_USED = 2

REG_INFO_BASIC = 1 << 0
REG_INFO_EXPORT = 1 << 1

REASON_LEN = 256
REG_INFO_MAX_ATTEMPTS = 8
REG_MULTI_MAX = 256

DIST_PIX = 1
DIST_PXB = 2
DIST_PHB = 3
DIST_NODE = 4
DIST_SYS = 5
DIST_UNKNOWN = 6

RANK_CLOSEST = 0
RANK_BEST = 1
RANK_BEST_N = 2
RANK_ALL = 3
RANK_ATTR_BUS_ID = 1 << 0

EXPORT_MAX_FDS = 2
EXPORT_DESC_VERSION = 1
EXPORT_WIRE_LEN = 160
EXPORT_PCIE_MAPPING = 1 << 0
DMABUF_MAPPING_DEFAULT = 0
DMABUF_MAPPING_PCIE = 1

CACHE_ATTR_MAX_ENTRIES = 1 << 0
CACHE_ATTR_MAX_BYTES = 1 << 1
CACHE_ATTR_FLAGS = 1 << 2
CACHE_ATTR_MAX_REG_RATIO = 1 << 3
CACHE_ATTR_REG = 1 << 4
CACHE_WHOLE_ALLOC = 1 << 0
CACHE_HOST = 1 << 1
CACHE_TRUSTED = 1 << 2
CACHE_MAX_MAPPINGS = 64
CACHE_RESULT_HIT = 1
CACHE_RESULT_MISS = 2
CACHE_RESULT_UNCACHED = 3
CACHE_GET_INFO_BASIC = 1 << 0

VERDICT_OK = 0
VERDICT_MISSING = 1
VERDICT_WRONG = 2
VERDICT_UNKNOWN = 3
VERDICT_INFO = 4
REPORT_TEXT = 0
REPORT_JSON = 1
REPORT_SCOPE_UNKNOWN = 0
REPORT_SCOPE_NODE = 1
REPORT_SCOPE_GPU = 2
REPORT_SCOPE_RDMA_DEVICE = 3
REPORT_SCOPE_STORAGE = 4

IBV_ACCESS_LOCAL_WRITE = 1 << 0
IBV_ACCESS_REMOTE_WRITE = 1 << 1
IBV_ACCESS_REMOTE_READ = 1 << 2
IBV_ACCESS_REMOTE_ATOMIC = 1 << 3
IBV_ACCESS_RELAXED_ORDERING = 1 << 20

# --- structs -----------------------------------------------------------------


class RegAttr(Structure):
    """struct gdr_reg_attr"""

    _fields_ = [
        ("comp_mask", c_uint32),
        ("access", c_int),
        ("path_mask", c_uint32),
        ("flags", c_uint32),
    ]


class PathAttempt(Structure):
    """struct gdr_path_attempt"""

    _fields_ = [
        ("path", c_int),
        ("result", c_int),
        ("err", c_int),
        ("reason", c_char * REASON_LEN),
    ]


class RegInfo(Structure):
    """struct gdr_reg_info"""

    _fields_ = [
        ("comp_mask", c_uint32),
        ("path", c_int),
        ("mem_type", c_int),
        ("device", c_int),
        ("num_attempts", c_uint),
        ("attempts", PathAttempt * REG_INFO_MAX_ATTEMPTS),
        ("export_index", c_int),
    ]


class RankAttr(Structure):
    """struct gdr_rank_attr"""

    _fields_ = [
        ("comp_mask", c_uint32),
        ("cuda_device", c_int),
        ("gpu_bus_id", c_char_p),
        ("policy", c_int),
        ("max", c_uint),
    ]


class NicRank(Structure):
    """struct gdr_nic_rank"""

    _fields_ = [
        ("index", c_uint),
        ("distance", c_int),
        ("acs_redirect", c_int),
        ("same_numa", c_int),
        ("data_direct", c_int),
        ("nic_bus_id", c_char * 16),
    ]


class ExportDesc(Structure):
    """struct gdr_export_desc"""

    _fields_ = [
        ("version", c_uint32),
        ("num_fds", c_uint32),
        ("mapping", c_uint32 * EXPORT_MAX_FDS),
        ("dmabuf_size", c_uint64),
        ("offset", c_uint64),
        ("length", c_uint64),
        ("iova", c_uint64),
        ("buffer_id", c_uint64),
        ("dmabuf_ino", c_uint64 * EXPORT_MAX_FDS),
        ("mem_type", c_uint32),
        ("owner_pid", c_uint32),
        ("lib_version", c_uint32),
        ("gpu_bus_id", c_char * 16),
        ("gpu_uuid", c_uint8 * 16),
        ("boot_id", c_uint8 * 16),
    ]


class CacheAttr(Structure):
    """struct gdr_cache_attr"""

    _fields_ = [
        ("comp_mask", c_uint32),
        ("flags", c_uint32),
        ("max_entries", c_size_t),
        ("max_bytes", c_size_t),
        ("max_reg_ratio", c_uint),
        ("reg", RegAttr),
    ]


class CacheGetInfo(Structure):
    """struct gdr_cache_get_info"""

    _fields_ = [
        ("comp_mask", c_uint32),
        ("result", c_uint32),
        ("num_mappings", c_uint32),
        ("reason", c_char * REASON_LEN),
    ]


class CacheStats(Structure):
    """struct gdr_cache_stats"""

    _fields_ = [
        ("hits", c_uint64),
        ("misses", c_uint64),
        ("stale", c_uint64),
        ("evictions", c_uint64),
        ("invalidations", c_uint64),
        ("passthrough", c_uint64),
        ("entries", c_uint64),
        ("bytes", c_uint64),
        ("in_use", c_uint64),
        ("uncached", c_uint64),
    ]


class ReportItem(Structure):
    """struct gdr_report_item"""

    _fields_ = [
        ("section", c_char_p),
        ("key", c_char_p),
        ("value", c_char_p),
        ("verdict", c_int),
        ("remedy", c_char_p),
        ("scope", c_int),  # since 0.5
    ]


class IbvMr(Structure):
    """struct ibv_mr of infiniband/verbs.h (what an MR says of itself)."""

    _fields_ = [
        ("context", c_void_p),
        ("pd", c_void_p),
        ("addr", c_void_p),
        ("length", c_size_t),
        ("handle", c_uint32),
        ("lkey", c_uint32),
        ("rkey", c_uint32),
    ]


class IbvPd(Structure):
    """The first fields of struct ibv_pd."""

    _fields_ = [("context", c_void_p), ("handle", c_uint32)]


class IbvContext(Structure):
    """The first field of struct ibv_context."""

    _fields_ = [("device", c_void_p)]


# Every struct mirrored here, by its C name: what the ABI test compares.
STRUCTS = {
    "gdr_reg_attr": RegAttr,
    "gdr_path_attempt": PathAttempt,
    "gdr_reg_info": RegInfo,
    "gdr_rank_attr": RankAttr,
    "gdr_nic_rank": NicRank,
    "gdr_export_desc": ExportDesc,
    "gdr_cache_attr": CacheAttr,
    "gdr_cache_get_info": CacheGetInfo,
    "gdr_cache_stats": CacheStats,
    "gdr_report_item": ReportItem,
    "ibv_mr": IbvMr,
}
# Structs of which only the first fields are mirrored (no size compared).
PREFIX_STRUCTS = {"ibv_pd": IbvPd, "ibv_context": IbvContext}

# --- prototypes --------------------------------------------------------------

P = POINTER
# name: (restype, argtypes); every call libgpudirect exports that the
# package uses.
_GDR_PROTOTYPES: dict[str, tuple[Any, list[Any]]] = {
    "gdr_register_ex": (
        c_void_p,
        [c_void_p, c_void_p, c_size_t, P(RegAttr), P(RegInfo), c_size_t],
    ),
    "gdr_deregister": (c_int, [c_void_p]),
    "gdr_last_error": (c_char_p, []),
    "gdr_register_multi": (
        c_int,
        [P(c_void_p), c_uint, c_void_p, c_size_t, P(RegAttr), P(c_void_p),
         P(RegInfo), c_size_t],
    ),
    "gdr_deregister_multi": (c_int, [P(c_void_p), c_uint]),
    "gdr_rank_nics": (
        c_int,
        [P(RankAttr), P(c_void_p), c_uint, P(NicRank), P(c_uint), c_size_t],
    ),
    "gdr_distance_str": (c_char_p, [c_int]),
    "gdr_path_str": (c_char_p, [c_int]),
    "gdr_path_parse": (c_int, [c_char_p, P(c_int)]),
    "gdr_mem_type_str": (c_char_p, [c_int]),
    "gdr_export": (
        c_int, [c_void_p, c_size_t, c_uint32, P(ExportDesc), P(c_int)]
    ),
    "gdr_export_pack": (c_int, [P(ExportDesc), c_void_p, c_size_t]),
    "gdr_export_unpack": (c_int, [c_void_p, c_size_t, P(ExportDesc)]),
    "gdr_export_send": (c_int, [c_int, P(ExportDesc), P(c_int)]),
    "gdr_export_recv": (c_int, [c_int, P(ExportDesc), P(c_int)]),
    "gdr_import_register": (
        c_void_p,
        [c_void_p, P(ExportDesc), P(c_int), P(RegAttr), P(RegInfo), c_size_t],
    ),
    "gdr_import_register_multi": (
        c_int,
        [P(c_void_p), c_uint, P(ExportDesc), P(c_int), P(RegAttr),
         P(c_void_p), P(RegInfo), c_size_t],
    ),
    "gdr_register_dmabuf": (
        c_void_p,
        [c_void_p, c_int, c_uint64, c_size_t, c_uint64, P(RegAttr),
         P(RegInfo), c_size_t],
    ),
    "gdr_cache_create": (c_void_p, [c_void_p, P(CacheAttr)]),
    "gdr_cache_destroy": (c_int, [c_void_p]),
    "gdr_cache_get_ex": (
        c_void_p, [c_void_p, c_void_p, c_size_t, P(CacheGetInfo), c_size_t]
    ),
    "gdr_cache_put": (c_int, [c_void_p, c_void_p]),
    "gdr_cache_invalidate": (c_int, [c_void_p, c_void_p, c_size_t]),
    "gdr_cache_purge": (c_int, [c_void_p]),
    "gdr_cache_query_stats": (c_int, [c_void_p, P(CacheStats), c_size_t]),
    "gdr_report_create": (c_void_p, [P(c_void_p), c_uint, c_uint32]),
    "gdr_report_destroy": (None, [c_void_p]),
    "gdr_report_num_items": (c_uint, [c_void_p]),
    "gdr_report_item": (c_int, [c_void_p, c_uint, P(ReportItem), c_size_t]),
    "gdr_report_usable": (c_int, [c_void_p]),
    "gdr_report_print": (c_int, [c_void_p, c_void_p, c_int]),
}

_IBV_PROTOTYPES: dict[str, tuple[Any, list[Any]]] = {
    "ibv_get_device_list": (P(c_void_p), [P(c_int)]),
    "ibv_free_device_list": (None, [P(c_void_p)]),
    "ibv_get_device_name": (c_char_p, [c_void_p]),
    "ibv_open_device": (c_void_p, [c_void_p]),
    "ibv_close_device": (c_int, [c_void_p]),
    "ibv_alloc_pd": (c_void_p, [c_void_p]),
    "ibv_dealloc_pd": (c_int, [c_void_p]),
}

_LIBC_PROTOTYPES: dict[str, tuple[Any, list[Any]]] = {
    "open_memstream": (c_void_p, [P(c_void_p), P(c_size_t)]),
    "fclose": (c_int, [c_void_p]),
    "free": (None, [c_void_p]),
}

# Where each library comes from: what a message names.
LIBRARY_NAME = "libgpudirect.so.1"
LIBRARY_ENV = "GPUDIRECT_LIBRARY"


class _Lib:
    """The loaded libraries, bound once (thread-safe, on first use)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.loaded = False
        self.path = ""
        self.gdr: Any = None
        self.ibv: Any = None
        self.libc: Any = None

    def load(self) -> "_Lib":
        if self.loaded:
            return self
        with self._lock:
            if not self.loaded:
                self._load()
                self.loaded = True
        return self

    def _load(self) -> None:
        where = os.environ.get(LIBRARY_ENV, "")
        name = where or LIBRARY_NAME
        try:
            gdr = ctypes.CDLL(name, use_errno=True)
        except OSError as e:
            if where:
                why = (f"{LIBRARY_ENV}={where} could not be loaded ({e}): "
                       f"point {LIBRARY_ENV} at a built {LIBRARY_NAME} "
                       "(BUILD_DIR/lib/libgpudirect.so.1), or unset it to "
                       "use the installed one")
            else:
                why = (f"{LIBRARY_NAME} could not be loaded ({e}): install "
                       "libgpudirect (the libgpudirect1 package, or meson "
                       "install), or set GPUDIRECT_LIBRARY to the path of a "
                       "built libgpudirect.so.1")
            raise GdrError(errno.ELIBACC, why, "load") from None
        for fname, (res, args) in _GDR_PROTOTYPES.items():
            try:
                f = getattr(gdr, fname)
            except AttributeError:
                raise GdrError(
                    errno.ELIBACC,
                    f"{name} has no {fname}: it is older than 0.4, the "
                    "release this package binds; install libgpudirect 0.4 or "
                    "newer", "load") from None
            f.restype = res
            f.argtypes = args
        # libgpudirect needs libibverbs.so.1, so the loader has it already:
        # this is the same copy (a stand-in one too, where the tests put it).
        try:
            ibv = ctypes.CDLL("libibverbs.so.1", use_errno=True)
        except OSError as e:
            raise GdrError(
                errno.ELIBACC,
                f"libibverbs.so.1 could not be loaded ({e}): install "
                "rdma-core's libibverbs1", "load") from None
        for fname, (res, args) in _IBV_PROTOTYPES.items():
            f = getattr(ibv, fname)
            f.restype = res
            f.argtypes = args
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        for fname, (res, args) in _LIBC_PROTOTYPES.items():
            f = getattr(libc, fname)
            f.restype = res
            f.argtypes = args
        self.path = _mapped_path(gdr, name)
        self.gdr, self.ibv, self.libc = gdr, ibv, libc


def _mapped_path(handle: Any, name: str) -> str:
    """The file the loader mapped for @handle: where a function of it
    lives, as /proc/self/maps says (the path a message should name)."""
    try:
        at = ctypes.cast(handle.gdr_last_error, c_void_p).value or 0
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                if lo <= at < hi and len(parts) == 6:
                    return parts[5].strip()
    except (OSError, ValueError):
        pass
    return name


LIB = _Lib()


def lib() -> Any:
    """libgpudirect's functions (loading the libraries on first use)."""
    return LIB.load().gdr


def ibv() -> Any:
    """libibverbs' functions."""
    return LIB.load().ibv


def libc() -> Any:
    """libc's functions."""
    return LIB.load().libc


def last_error() -> str:
    """This thread's gdr_last_error(), as text."""
    s: Optional[bytes] = lib().gdr_last_error()
    return s.decode("utf-8", "replace") if s else ""


def fail(call: str, err: Optional[int] = None) -> GdrError:
    """The GdrError of a library call that just failed on this thread:
    @err (else the errno the call left) and gdr_last_error()'s sentence.
    Call it right after the failing call, before any other library call."""
    if err is None:
        err = ctypes.get_errno()
    why = last_error()
    if not err:
        err = errno.EIO
    if not why:
        why = f"{call} failed: {os.strerror(err)}"
    return GdrError(err, why, call)


def text(b: Optional[bytes]) -> str:
    return b.decode("utf-8", "replace") if b else ""
