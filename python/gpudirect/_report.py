# SPDX-License-Identifier: MIT
"""The doctor from Python: the library's own report
(gdr_report_create(3)), printed by the library as JSON or text into a
memory stream (libc's open_memstream) and read from there, so Python says
exactly what ``gdr-info`` says."""

from __future__ import annotations

import ctypes
import errno
import json
from ctypes import byref, c_size_t, c_void_p
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import _lib as L
from ._core import _DeviceList
from ._errors import GdrError, argument


def _print(report: int, fmt: int) -> str:
    c = L.libc()
    buf = c_void_p()
    size = c_size_t()
    f = c.open_memstream(byref(buf), byref(size))
    if not f:
        err = ctypes.get_errno() or errno.ENOMEM
        raise GdrError(err, "open_memstream failed: out of memory?",
                       "open_memstream")
    rc = L.lib().gdr_report_print(report, f, fmt)
    e = L.fail("gdr_report_print") if rc != 0 else None
    c.fclose(f)  # flushes: buf and size are valid after it
    try:
        out = ctypes.string_at(buf.value, size.value) if buf.value else b""
    finally:
        c.free(buf)
    if e is not None:
        raise e
    return out.decode("utf-8", "replace")


def _collect(devices: Optional[Sequence[str]], fmt: int) -> Tuple[str, bool]:
    if devices is not None and (isinstance(devices, str) or not all(
            isinstance(d, str) for d in devices)):
        raise argument("devices is a list of RDMA device names "
                       "(['mlx5_0']), or None for every device", "report")
    g = L.lib()
    ctxs: List[int] = []
    try:
        dl = _DeviceList().__enter__()
    except GdrError:
        dl = None  # no verbs devices at all: the report says so
    try:
        if dl is not None:
            want = dl.names if devices is None else list(devices)
            for name in want:
                if name not in dl.names:
                    raise dl.none_here(name)
                ctxs.append(dl.open(dl.names.index(name)))
        elif devices:
            raise GdrError(errno.ENODEV, "no RDMA device is visible",
                           "report")
        arr = (c_void_p * max(len(ctxs), 1))(*ctxs)
        r = g.gdr_report_create(arr, len(ctxs), 0)
        if not r:
            raise L.fail("gdr_report_create")
        try:
            return _print(r, fmt), bool(g.gdr_report_usable(r))
        finally:
            g.gdr_report_destroy(r)
    finally:
        for c in ctxs:
            L.ibv().ibv_close_device(c)
        if dl is not None:
            dl.__exit__(None, None, None)


def report(devices: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """The node's report as ``gdr-info --json`` gives it
    (docs/report-schema.json): ``{"schema": ..., "library_version": ...,
    "gpudirect_rdma_usable": bool, "items": [{"section", "key", "value",
    "verdict", "remedy"}, ...]}``, on every RDMA device (or those named in
    @devices). Starts CUDA in this process when a driver is installed, as
    the doctor does; does not hold the GIL while it probes."""
    text, _ = _collect(devices, L.REPORT_JSON)
    try:
        out: Dict[str, Any] = json.loads(text)
    except ValueError as e:
        raise GdrError(errno.EPROTO, f"the library's JSON report does not "
                       f"parse ({e}): please report this", "report") from None
    return out


def report_text(devices: Optional[Sequence[str]] = None) -> str:
    """The report as ``gdr-info`` prints it."""
    return _collect(devices, L.REPORT_TEXT)[0]


def check(devices: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """The report, when GPUDirect RDMA is usable on at least one GPU x RDMA
    device pair; else GdrError(EOPNOTSUPP) whose sentence lists each item
    the report found missing or wrong, with the library's remedy."""
    r = report(devices)
    if r.get("gpudirect_rdma_usable"):
        return r
    bad = [i for i in r.get("items", [])
           if i.get("verdict") in ("missing", "wrong")]
    parts = []
    for i in bad:
        s = f"{i['section']} {i['key']}: {i['value']}"
        if i.get("remedy"):
            s += f" ({i['remedy']})"
        parts.append(s)
    why = "GPUDirect RDMA is not usable on this node"
    if parts:
        why += ": " + "; ".join(parts)
    raise GdrError(errno.EOPNOTSUPP, why, "check")
