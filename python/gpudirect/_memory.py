# SPDX-License-Identifier: MIT
"""What an object's memory is: its address and bytes, whether it is on a
GPU, and what must be kept alive for the address to stay valid.

Objects come in through the ecosystem's protocols, in this order:
- an ``int``: an address, with ``nbytes`` (nothing is kept: the caller
  owns the memory's lifetime);
- a PyTorch tensor (read through its own methods, without importing
  torch: the tensor's data pointer, element size and count);
- ``__cuda_array_interface__`` (CuPy, Numba, PyTorch);
- the buffer protocol (bytearray, NumPy arrays, memoryview, mmap): host
  memory, which must be writable and C-contiguous;
- DLPack (``__dlpack__`` and ``__dlpack_device__``: JAX, NumPy, CuPy, ...).

An object's bytes are the span from its data pointer over its elements (a
view or a slice starts at its own first element: the storage offset is in
the pointer). An object that is not C-contiguous is refused: its elements
do not form one range, and registering the span around them would give
the NIC bytes the object does not own. ``nbytes`` registers the first
``nbytes`` of the object.
"""

from __future__ import annotations

import ctypes
import sys
from ctypes import POINTER, Structure, c_int32, c_int64, c_uint8, c_uint16, c_uint32, c_uint64, c_void_p
import mmap
from typing import Any, Optional, Sequence

from ._errors import argument

# DLPack device types (dlpack.h).
DL_CPU = 1
DL_CUDA = 2
DL_CUDA_HOST = 3
DL_CUDA_MANAGED = 13
_DL_NAMES = {1: "CPU", 2: "CUDA", 3: "CUDA host", 4: "OpenCL", 7: "Vulkan",
             8: "Metal", 9: "VPI", 10: "ROCm", 11: "ROCm host",
             13: "CUDA managed", 14: "oneAPI"}
_DL_READ_ONLY = 1 << 0  # DLPACK_FLAG_BITMASK_READ_ONLY


class Target:
    """The memory behind an object."""

    __slots__ = ("addr", "nbytes", "device", "keep", "what")

    def __init__(self, addr: int, nbytes: int, device: bool, keep: Any,
                 what: str) -> None:
        self.addr = addr
        self.nbytes = nbytes
        self.device = device  # on a GPU (or its managed or host memory)
        self.keep = keep  # what keeps the address valid (None for an int)
        self.what = what  # a short description, for messages


def _check_nbytes(nbytes: Any, call: str) -> Optional[int]:
    if nbytes is None:
        return None
    if isinstance(nbytes, bool) or not isinstance(nbytes, int):
        raise argument(f"nbytes is {type(nbytes).__name__} {nbytes!r}: a "
                       "size is an int, a number of bytes", call)
    if nbytes < 0:
        raise argument(f"nbytes is {nbytes}: a size is a number of bytes, "
                       "0 or more", call)
    if nbytes >= 1 << 64:
        raise argument(f"nbytes is {nbytes}: more than a size_t holds", call)
    return nbytes


def _span(nbytes: Optional[int], size: int, what: str, call: str) -> int:
    if nbytes is None:
        return size
    if nbytes > size:
        raise argument(f"nbytes is {nbytes}, but {what} has only {size} "
                       "bytes: register at most the object's own bytes "
                       "(or pass its address as an int to register more)",
                       call)
    return nbytes


def _contiguous(shape: Sequence[int], strides: Optional[Sequence[int]],
                itemsize: int) -> bool:
    """C order without gaps (strides in bytes; dimensions of 1 skipped)."""
    if strides is None:
        return True
    want = itemsize
    for n, s in zip(reversed(list(shape)), reversed(list(strides))):
        if n == 1:
            continue
        if n == 0:
            return True
        if s != want:
            return False
        want *= n
    return True


def _prod(shape: Sequence[int]) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def _not_contiguous(what: str, call: str) -> Exception:
    return argument(
        f"{what} is not contiguous: its elements are not one range of "
        "memory, and gpudirect registers one range; register a contiguous "
        "copy (.contiguous() in PyTorch, numpy.ascontiguousarray), or pass "
        "the address of the whole span with nbytes if the NIC may see the "
        "bytes between its elements", call)


def _torch_tensor(obj: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.Tensor)


def _from_torch(obj: Any, nbytes: Optional[int], call: str) -> Target:
    # The cheap accessors first; the words only when something is wrong.
    if obj.is_cuda:
        device = True
    elif obj.device.type == "cpu":
        device = False
    else:
        raise argument(f"a {obj.device.type} tensor is on a device "
                       "gpudirect cannot register: only CUDA and CPU "
                       "tensors", call)
    if obj.layout is not sys.modules["torch"].strided:
        raise argument(f"a tensor of layout {obj.layout} has no single range "
                       "of memory: register a dense (strided) tensor", call)
    if not obj.is_contiguous():
        raise _not_contiguous(f"a {obj.device.type} tensor", call)
    size = obj.nbytes
    if nbytes is not None:
        size = _span(nbytes, size, f"a {obj.device.type} tensor", call)
    return Target(obj.data_ptr(), size, device, obj, "a tensor")


def _itemsize(typestr: str) -> int:
    try:
        return int(typestr[2:])
    except ValueError:
        return 1


def _from_cai(obj: Any, cai: Any, nbytes: Optional[int], writable: bool,
              call: str) -> Target:
    what = f"a {type(obj).__name__} (__cuda_array_interface__)"
    try:
        ptr, readonly = cai["data"]
        shape = tuple(cai["shape"])
        itemsize = _itemsize(cai["typestr"])
        strides = cai.get("strides")
    except (KeyError, TypeError, ValueError):
        raise argument(f"{what} is malformed: it lacks data, shape or "
                       "typestr", call) from None
    if readonly and writable:
        raise argument(f"{what} is read-only, and the access asked for "
                       "lets the NIC write it: pass access without write "
                       "bits, or register a writable array", call)
    if not _contiguous(shape, strides, itemsize):
        raise _not_contiguous(what, call)
    size = _prod(shape) * itemsize
    return Target(int(ptr or 0), _span(nbytes, size, what, call), True, obj,
                  what)


def _from_buffer(obj: Any, mv: memoryview, nbytes: Optional[int],
                 writable: bool, call: str) -> Target:
    what = f"a {type(obj).__name__}"
    if not mv.c_contiguous:
        mv.release()
        raise _not_contiguous(what, call)
    if mv.readonly:
        mv.release()
        if writable:
            raise argument(
                f"{what} is read-only, and the access asked for lets the NIC "
                "write it: register a writable buffer (a bytearray, a "
                "writable NumPy array or mmap), or pass access without write "
                "bits", call)
        raise argument(f"{what} is read-only: Python gives no address of a "
                       "read-only buffer; register a writable one", call)
    size = mv.nbytes
    if size == 0:
        mv.release()
        raise argument(f"{what} is empty: there is nothing to register",
                       call)
    flat = mv.cast("B") if mv.ndim != 1 or mv.format != "B" else mv
    addr = ctypes.addressof(ctypes.c_char.from_buffer(flat))
    # The memoryview is what the region keeps: while it lives, a bytearray
    # cannot be resized and an mmap cannot be closed (BufferError), so the
    # address stays valid under the MR.
    return Target(addr, _span(nbytes, size, what, call), False, (obj, flat),
                  what)


class _DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class _DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class _DLTensor(Structure):
    _fields_ = [("data", c_void_p), ("device", _DLDevice), ("ndim", c_int32),
                ("dtype", _DLDataType), ("shape", POINTER(c_int64)),
                ("strides", POINTER(c_int64)), ("byte_offset", c_uint64)]


class _DLManagedTensor(Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", c_void_p),
                ("deleter", c_void_p)]


class _DLPackVersion(Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


class _DLManagedTensorVersioned(Structure):
    _fields_ = [("version", _DLPackVersion), ("manager_ctx", c_void_p),
                ("deleter", c_void_p), ("flags", c_uint64),
                ("dl_tensor", _DLTensor)]


_capsule_ok = ctypes.pythonapi.PyCapsule_IsValid
_capsule_ok.restype = ctypes.c_int
_capsule_ok.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_ptr = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_ptr.restype = c_void_p
_capsule_ptr.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _from_dlpack(obj: Any, nbytes: Optional[int], writable: bool,
                 call: str) -> Target:
    what = f"a {type(obj).__name__} (DLPack)"
    try:
        dev_type, _ = obj.__dlpack_device__()
    except Exception as e:
        raise argument(f"{what}: __dlpack_device__() failed: {e}",
                       call) from None
    if dev_type not in (DL_CPU, DL_CUDA, DL_CUDA_HOST, DL_CUDA_MANAGED):
        name = _DL_NAMES.get(dev_type, f"type {dev_type}")
        raise argument(f"{what} is {name} memory, which gpudirect cannot "
                       "register by address: only CPU and CUDA memory (a "
                       "dma-buf of any exporter registers with "
                       "pd.register_dmabuf())", call)
    try:
        try:
            cap = obj.__dlpack__(max_version=(1, 0))
        except TypeError:
            cap = obj.__dlpack__()
    except Exception as e:
        raise argument(f"{what}: __dlpack__() failed: {e}", call) from None
    if _capsule_ok(cap, b"dltensor_versioned"):
        m = _DLManagedTensorVersioned.from_address(
            _capsule_ptr(cap, b"dltensor_versioned"))
        t = m.dl_tensor
        if m.flags & _DL_READ_ONLY and writable:
            raise argument(f"{what} is read-only, and the access asked for "
                           "lets the NIC write it", call)
    elif _capsule_ok(cap, b"dltensor"):
        t = _DLManagedTensor.from_address(_capsule_ptr(cap, b"dltensor")
                                          ).dl_tensor
    else:
        raise argument(f"{what}: __dlpack__() did not give a DLPack capsule",
                       call)
    itemsize = (t.dtype.bits * t.dtype.lanes + 7) // 8
    shape = [t.shape[i] for i in range(t.ndim)]
    strides = None
    if t.strides:
        strides = [t.strides[i] * itemsize for i in range(t.ndim)]
    if not _contiguous(shape, strides, itemsize):
        raise _not_contiguous(what, call)
    size = _prod(shape) * itemsize
    addr = (t.data or 0) + t.byte_offset
    # The capsule is kept unconsumed: its destructor calls the producer's
    # deleter when the region lets it go, which keeps the memory until then.
    return Target(addr, _span(nbytes, size, what, call),
                  dev_type != DL_CPU, (obj, cap), what)


# Host buffers known to have no other protocol: no lookup of the others.
_BUFFERS = (bytearray, memoryview, mmap.mmap)


def resolve(obj: Any, nbytes: Any, writable: bool, call: str) -> Target:
    """The memory of @obj (see the module's words), @nbytes of it."""
    n = _check_nbytes(nbytes, call)
    if isinstance(obj, bool):
        raise argument("a bool is not memory: pass an object with "
                       "__cuda_array_interface__, DLPack or a writable "
                       "buffer, or an int address with nbytes", call)
    if isinstance(obj, int):
        if n is None:
            raise argument(f"an int address ({obj:#x}) needs nbytes: the "
                           "library cannot know the size of raw memory",
                           call)
        if obj < 0 or obj >= 1 << 64:
            raise argument(f"address {obj} is not a pointer: an address is "
                           "an int from 0 to 2**64-1", call)
        return Target(obj, n, False, None, f"address {obj:#x}")
    if _torch_tensor(obj):
        return _from_torch(obj, n, call)
    if type(obj) in _BUFFERS:
        return _from_buffer(obj, memoryview(obj), n, writable, call)
    try:
        cai = getattr(obj, "__cuda_array_interface__", None)
    except Exception as e:
        # PyTorch refuses a tensor that requires grad here: say so.
        raise argument(f"a {type(obj).__name__}: __cuda_array_interface__ "
                       f"failed: {e}", call) from None
    if cai is not None:
        return _from_cai(obj, cai, n, writable, call)
    try:
        mv = memoryview(obj)
    except TypeError:
        mv = None
    if mv is not None:
        return _from_buffer(obj, mv, n, writable, call)
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        return _from_dlpack(obj, n, writable, call)
    raise argument(
        f"a {type(obj).__name__} is not memory gpudirect can register: pass "
        "an object with __cuda_array_interface__ (PyTorch, CuPy, Numba), "
        "DLPack (__dlpack__), a writable buffer (bytearray, NumPy, mmap), or "
        "an int address with nbytes", call)
