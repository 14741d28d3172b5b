# SPDX-License-Identifier: MIT
"""gpudirect: register GPU (or host) memory with an RDMA device from Python,
through libgpudirect.

    import gpudirect, torch

    t = torch.empty(1 << 26, dtype=torch.uint8, device="cuda")
    with gpudirect.ProtectionDomain.nearest(0) as pd:
        with pd.register(t) as mr:          # DMA-BUF where the node can
            print(mr.lkey, mr.rkey, mr.addr == t.data_ptr(), mr.path)
        cache = gpudirect.Cache(pd)
        with cache.get(t) as mr:            # validated: never a stale MR
            ...

Every check, path choice and sentence is the C library's; failures raise
GdrError (an OSError) with its errno and words. docs/python.md lists every
call, its errors, and the thread and lifetime rules.
"""

from __future__ import annotations

from . import _lib
from ._cache import Cache, CachedRegion, CacheStats
from ._core import (
    Attempt,
    Decision,
    MemoryRegion,
    MultiRegion,
    NicRank,
    ProtectionDomain,
    RegionOnPd,
    devices,
    rank_nics,
    register_multi,
)
from ._errors import GdrError
from ._report import check, report, report_text
from ._share import Export, export, recv, unpack

__version__ = "0.5.0"
GdrError.__module__ = "gpudirect"

ACCESS_LOCAL_WRITE = _lib.IBV_ACCESS_LOCAL_WRITE
ACCESS_REMOTE_WRITE = _lib.IBV_ACCESS_REMOTE_WRITE
ACCESS_REMOTE_READ = _lib.IBV_ACCESS_REMOTE_READ
ACCESS_REMOTE_ATOMIC = _lib.IBV_ACCESS_REMOTE_ATOMIC
ACCESS_RELAXED_ORDERING = _lib.IBV_ACCESS_RELAXED_ORDERING


def library_path() -> str:
    """The libgpudirect this process uses (loading it if needed)."""
    return _lib.LIB.load().path


__all__ = [
    "ACCESS_LOCAL_WRITE",
    "ACCESS_RELAXED_ORDERING",
    "ACCESS_REMOTE_ATOMIC",
    "ACCESS_REMOTE_READ",
    "ACCESS_REMOTE_WRITE",
    "Attempt",
    "Cache",
    "CacheStats",
    "CachedRegion",
    "Decision",
    "Export",
    "GdrError",
    "MemoryRegion",
    "MultiRegion",
    "NicRank",
    "ProtectionDomain",
    "RegionOnPd",
    "check",
    "devices",
    "export",
    "library_path",
    "rank_nics",
    "recv",
    "register_multi",
    "report",
    "report_text",
    "unpack",
]
