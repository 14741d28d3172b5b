# SPDX-License-Identifier: MIT
"""Memory another process owns: gdr_export(3), gdr_export_send(3),
gdr_export_recv(3), gdr_export_pack(3)/gdr_export_unpack(3), and
ProtectionDomain.import_register() (gdr_import_register(3)).

The owner exports a tensor's memory as dma-buf fds and a 160-byte
descriptor, and sends both over a unix socket; the importer (a transfer
engine, in C or Python) receives them and registers the fds on its own
NICs, without CUDA. An importer's MR keeps the owner's memory allocated
until it is released, whatever the owner frees; the owner keeps the Export
(and so the tensor) open while importers use the bytes, so that its own
allocator does not hand them to another tensor.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import socket
import uuid
from ctypes import byref, c_int
from typing import Any, List, Optional, Sequence, Tuple, Union

from . import _lib as L
from ._errors import GdrError, argument, closed
from ._memory import resolve

SockLike = Union[socket.socket, int]


def _fileno(sock: Any, call: str) -> int:
    if isinstance(sock, bool):
        raise argument("sock is a bool: pass a connected unix socket "
                       "(socket.socket) or its fd", call)
    if isinstance(sock, int):
        return sock
    try:
        return int(sock.fileno())
    except (AttributeError, ValueError, OSError):
        raise argument(f"sock is {type(sock).__name__}: pass a connected "
                       "unix socket (socket.socket, AF_UNIX) or its fd",
                       call) from None


class Export:
    """An export of device memory: the descriptor's fields, its 160 packed
    bytes (``packed``), and the dma-buf fds (``fds``), which this object
    owns and closes on ``close()`` (or collection). An Export made by
    ``gpudirect.export()`` also holds the exported object until closed.
    """

    __slots__ = ("_desc", "_fds", "_obj", "__weakref__")

    _desc: L.ExportDesc
    _fds: List[int]
    _obj: Any

    def __init__(self) -> None:
        raise TypeError("an Export is made by gpudirect.export(), "
                        "gpudirect.recv() or gpudirect.unpack()")

    @classmethod
    def _made(cls, desc: L.ExportDesc, fds: Sequence[int],
              obj: Any) -> "Export":
        self = object.__new__(cls)
        self._desc = desc
        self._fds = [int(f) for f in fds if f >= 0]
        self._obj = obj
        return self

    # --- the descriptor ---

    @property
    def version(self) -> int:
        return int(self._desc.version)

    @property
    def num_fds(self) -> int:
        return int(self._desc.num_fds)

    @property
    def mapping(self) -> Tuple[str, ...]:
        """How each fd maps the GPU's memory: 'default' or 'pcie'."""
        n = min(self._desc.num_fds, L.EXPORT_MAX_FDS)
        return tuple("pcie" if m == L.DMABUF_MAPPING_PCIE else "default"
                     for m in self._desc.mapping[:n])

    @property
    def dmabuf_size(self) -> int:
        return int(self._desc.dmabuf_size)

    @property
    def offset(self) -> int:
        """Where the buffer starts in the dma-buf."""
        return int(self._desc.offset)

    @property
    def length(self) -> int:
        return int(self._desc.length)

    @property
    def iova(self) -> int:
        """The owner's address of the buffer: an importer's MR address."""
        return int(self._desc.iova)

    @property
    def buffer_id(self) -> int:
        return int(self._desc.buffer_id)

    @property
    def dmabuf_ino(self) -> Tuple[int, ...]:
        n = min(self._desc.num_fds, L.EXPORT_MAX_FDS)
        return tuple(int(i) for i in self._desc.dmabuf_ino[:n])

    @property
    def mem_type(self) -> str:
        return L.text(L.lib().gdr_mem_type_str(self._desc.mem_type))

    @property
    def owner_pid(self) -> int:
        return int(self._desc.owner_pid)

    @property
    def lib_version(self) -> str:
        v = int(self._desc.lib_version)
        return f"{v >> 16}.{(v >> 8) & 0xff}.{v & 0xff}"

    @property
    def gpu_bus_id(self) -> str:
        return L.text(self._desc.gpu_bus_id)

    @property
    def gpu_uuid(self) -> uuid.UUID:
        return uuid.UUID(bytes=bytes(self._desc.gpu_uuid))

    @property
    def boot_id(self) -> uuid.UUID:
        return uuid.UUID(bytes=bytes(self._desc.boot_id))

    @property
    def packed(self) -> bytes:
        """The descriptor as gdr_export_pack(3) writes it: 160 bytes."""
        buf = ctypes.create_string_buffer(L.EXPORT_WIRE_LEN)
        if L.lib().gdr_export_pack(byref(self._desc), buf, len(buf)) != 0:
            raise L.fail("gdr_export_pack")
        return buf.raw

    @property
    def fds(self) -> Tuple[int, ...]:
        """The dma-buf fds (closed by close()); () once closed."""
        return tuple(self._fds)

    @property
    def obj(self) -> Any:
        """The exported object (None for a received export, or closed)."""
        return self._obj

    @property
    def closed(self) -> bool:
        return not self._fds

    # --- moving it ---

    def _fd_array(self, call: str) -> Any:
        if not self._fds:
            raise closed("the export", " (its fds were closed)", call)
        arr = (c_int * L.EXPORT_MAX_FDS)(*([-1] * L.EXPORT_MAX_FDS))
        for i, f in enumerate(self._fds[:L.EXPORT_MAX_FDS]):
            arr[i] = f
        return arr

    def send(self, sock: SockLike) -> None:
        """Send the descriptor and its fds over the connected unix socket
        @sock in one message (gdr_export_send(3)); the fds stay this
        Export's."""
        call = "Export.send"
        fd = _fileno(sock, call)
        arr = self._fd_array(call)
        if L.lib().gdr_export_send(fd, byref(self._desc), arr) != 0:
            raise L.fail("gdr_export_send")

    def _for_import(self, iova: Optional[int],
                    call: str) -> Tuple[L.ExportDesc, Any]:
        arr = self._fd_array(call)
        desc = L.ExportDesc.from_buffer_copy(self._desc)
        if iova is not None:
            if isinstance(iova, bool) or not isinstance(iova, int) or \
                    iova < 0 or iova >= 1 << 64:
                raise argument(f"iova {iova!r} is not an address", call)
            desc.iova = iova
        return desc, arr

    def close(self) -> None:
        """Close the fds (an importer's MR holds its own reference) and let
        the exported object go. Twice does nothing."""
        fds: List[int] = self._fds
        self._fds = []
        self._obj = None
        for f in fds:
            try:
                os.close(f)
            except OSError:
                pass

    def __enter__(self) -> "Export":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        return (f"<gpudirect.Export {self.length} bytes at {self.iova:#x} "
                f"({self.mem_type}, GPU {self.gpu_bus_id}), fds "
                f"{list(self._fds)}>")


def export(obj: Any, nbytes: Optional[int] = None, *,
           pcie: bool = False) -> Export:
    """Export the device memory of @obj (a CUDA tensor or array, or an int
    address with @nbytes) as dma-buf fds, the way the library's own
    registrations would (gdr_export(3)); @pcie also exports the
    PCIe-mapped dma-buf (Data Direct NICs, C2C GPUs)."""
    call = "export"
    t = resolve(obj, nbytes, False, call)
    desc = L.ExportDesc()
    fds = (c_int * L.EXPORT_MAX_FDS)()
    flags = L.EXPORT_PCIE_MAPPING if pcie else 0
    if L.lib().gdr_export(t.addr, t.nbytes, flags, byref(desc), fds) != 0:
        raise L.fail("gdr_export")
    return Export._made(desc, list(fds), t.keep)


def recv(sock: SockLike) -> Export:
    """Receive one Export.send() (or gdr_export_send()) message from the
    unix socket @sock, checked field by field, its fds checked to be the
    descriptor's dma-bufs (gdr_export_recv(3)). Blocks as the socket does
    (its timeout bounds the wait), without holding the GIL."""
    call = "recv"
    fd = _fileno(sock, call)
    desc = L.ExportDesc()
    fds = (c_int * L.EXPORT_MAX_FDS)()
    if L.lib().gdr_export_recv(fd, byref(desc), fds) != 0:
        raise L.fail("gdr_export_recv")
    return Export._made(desc, list(fds), None)


def unpack(data: Union[bytes, bytearray, memoryview],
           fds: Sequence[int] = ()) -> Export:
    """An Export from a packed descriptor that came another way than
    recv() (gdr_export_unpack(3): every field checked), with its @fds
    (duplicated: the caller keeps its own)."""
    call = "unpack"
    try:
        raw = bytes(data)
    except TypeError:
        raise argument(f"data is {type(data).__name__}: pass the packed "
                       "descriptor's bytes", call) from None
    desc = L.ExportDesc()
    if L.lib().gdr_export_unpack(raw, len(raw), byref(desc)) != 0:
        raise L.fail("gdr_export_unpack")
    mine = []
    try:
        for f in fds:
            if isinstance(f, bool) or not isinstance(f, int):
                raise argument(f"fds holds {f!r}: fds are ints", call)
            mine.append(_dup(f, call))
    except BaseException:
        for f in mine:
            os.close(f)
        raise
    return Export._made(desc, mine, None)


def _dup(fd: int, call: str) -> int:
    try:
        return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 0)
    except OSError as e:
        raise GdrError(e.errno or errno.EBADF, f"fd {fd} cannot be "
                       f"duplicated ({e.strerror}): pass open dma-buf fds",
                       call) from None
