# SPDX-License-Identifier: MIT
"""Memory another process owns, without a GPU: export refuses host memory
with the library's words; a descriptor made here (as an owner's would be)
packs to 160 bytes and unpacks to the same fields; send and recv move it
over a unix socket, and recv refuses fds that are not dma-bufs, closing
each one; a descriptor of another boot is refused. (The GPU machine runs
a real owner and importers: tests/gpu/python/.)"""

from __future__ import annotations

import errno
import os
import socket
import uuid

import gpudirect
from gpudirect import GdrError, _lib as L
from gpudirect._share import Export

from support import DEVICE, raises


def boot_id() -> bytes:
    with open("/proc/sys/kernel/random/boot_id") as f:
        return uuid.UUID(f.read().strip()).bytes


def fake_export(fd: int, boot: bytes = b"") -> Export:
    """An Export as an owner's gdr_export() fills it, around @fd."""
    d = L.ExportDesc()
    d.version = L.EXPORT_DESC_VERSION
    d.num_fds = 1
    d.dmabuf_size = 8192
    d.offset = 100
    d.length = 4000
    d.iova = 0x7f0000001064
    d.buffer_id = 42
    d.dmabuf_ino[0] = os.fstat(fd).st_ino
    d.mem_type = L.MEM_CUDA_DEVICE
    d.owner_pid = os.getpid()
    d.lib_version = 0x000400
    d.gpu_bus_id = b"0000:17:00.0"
    d.gpu_uuid[:] = list(uuid.UUID(int=7).bytes)
    d.boot_id[:] = list(boot or boot_id())
    return Export._made(d, [fd], None)


def fds_open() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_export_refuses_host_memory():
    e = raises(GdrError, gpudirect.export, bytearray(4096))
    assert e.errno == errno.EINVAL and e.call == "gdr_export"
    assert "host memory" in e.sentence
    raises(GdrError, gpudirect.export, "tensor")
    raises(GdrError, gpudirect.export, 0x1000)  # no nbytes


def test_pack_and_unpack():
    fd = os.memfd_create("not-a-dmabuf")
    x = fake_export(fd)
    packed = x.packed
    assert len(packed) == 160 == L.EXPORT_WIRE_LEN
    y = gpudirect.unpack(packed, [fd])
    try:
        for f in ("version", "num_fds", "mapping", "dmabuf_size", "offset",
                  "length", "iova", "buffer_id", "dmabuf_ino", "mem_type",
                  "owner_pid", "lib_version", "gpu_bus_id", "gpu_uuid",
                  "boot_id"):
            assert getattr(x, f) == getattr(y, f), f
        assert y.mapping == ("default",) and y.mem_type == "cuda-device"
        assert y.lib_version == "0.4.0" and y.packed == packed
        assert y.fds and y.fds[0] != fd  # its own copy
        assert "4000 bytes" in repr(y)
    finally:
        y.close()
    assert y.closed and y.fds == ()
    os.fstat(fd)  # the caller's fd is still open
    x.close()
    raises(OSError, os.fstat, fd)  # the Export closed its fd


def test_unpack_refuses():
    e = raises(GdrError, gpudirect.unpack, b"\0" * 160)
    assert e.errno == errno.EPROTO and "not a libgpudirect export" in e.sentence
    fd = os.memfd_create("x")
    other = fake_export(fd, boot=uuid.UUID(int=1).bytes)
    e = raises(GdrError, gpudirect.unpack, other.packed)
    assert e.errno == errno.EXDEV and "boot" in e.sentence
    other.close()
    raises(GdrError, gpudirect.unpack, "text")
    raises(GdrError, gpudirect.unpack, fake_export(os.memfd_create("y")).packed,
           [10 ** 6])


def test_send_and_recv_refuse_what_is_not_a_dmabuf():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    fd = os.memfd_create("not-a-dmabuf")
    x = fake_export(fd)
    before = fds_open()
    x.send(a)
    e = raises(GdrError, gpudirect.recv, b)
    assert e.errno == errno.EPROTO and e.call == "gdr_export_recv"
    assert "dma-buf" in e.sentence
    assert fds_open() == before  # the fd that arrived was closed
    x.close()
    e = raises(GdrError, x.send, a)
    assert e.errno == errno.EBADF
    raises(GdrError, x.send, "socket")
    a.close()
    e = raises(GdrError, gpudirect.recv, b)  # the peer has gone
    assert e.errno == errno.ECONNRESET
    b.close()


def test_import_register_refuses_a_closed_export():
    fd = os.memfd_create("x")
    x = fake_export(fd)
    with gpudirect.ProtectionDomain(DEVICE) as pd:
        x.close()
        e = raises(GdrError, pd.import_register, x)
        assert e.errno == errno.EBADF
        y = fake_export(os.memfd_create("y"))
        # A memfd is no dma-buf: the library checks before registering.
        e = raises(GdrError, pd.import_register, y)
        assert e.call == "gdr_import_register" and e.sentence
        e = raises(GdrError, gpudirect.register_multi, [pd], y)
        assert e.call == "gdr_import_register_multi" and e.sentence
        y.close()
