# SPDX-License-Identifier: MIT
# What the CUDA driver says of PyTorch's allocations: for each 2 MiB step
# of a span, the pointer's range attributes, buffer id and mapping. Prints
# facts for the record; asserts nothing.
import ctypes
import os
import sys

mode = sys.argv[1] if len(sys.argv) > 1 else "expandable"
if mode == "expandable":
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
import torch  # noqa: E402

cu = ctypes.CDLL("libcuda.so.1")
MiB = 1 << 20


def attr(p, a):
    v = ctypes.c_ulonglong(0)
    r = cu.cuPointerGetAttribute(ctypes.byref(v), ctypes.c_int(a), ctypes.c_ulonglong(p))
    return v.value if r == 0 else "err%d" % r


def mapping(p):
    b = ctypes.c_ulonglong(0)
    s = ctypes.c_size_t(0)
    r = cu.cuMemGetAddressRange_v2(ctypes.byref(b), ctypes.byref(s), ctypes.c_ulonglong(p))
    return (b.value, s.value) if r == 0 else ("err%d" % r, 0)


def survey(label, base, length, origin):
    print("--", label)
    last = None
    p = base
    while p < base + length:
        mb, ms = mapping(p)
        row = (attr(p, 11) - origin if isinstance(attr(p, 11), int) else attr(p, 11),
               attr(p, 12), attr(p, 7), attr(p, 20),
               (mb - origin if isinstance(mb, int) else mb), ms,
               attr(p, 19) - origin if isinstance(attr(p, 19), int) else attr(p, 19),
               attr(p, 18))
        if row != last:
            print("  +%dMiB: range_start=%s range_size=%s buffer_id=%s block_id=%s "
                  "mapping=%s,%s mapping_attr=%s,%s" % (((p - origin) >> 20,) + row))
            last = row
        p += 2 * MiB


torch.cuda.init()
x = torch.empty(40 * MiB, dtype=torch.uint8, device="cuda")
y = torch.empty(160 * MiB, dtype=torch.uint8, device="cuda")
o = x.data_ptr()
print("mode", mode, "x +0 y +%d MiB" % ((y.data_ptr() - o) >> 20))
survey("x and y", o, (y.data_ptr() - o) + 160 * MiB, o)
yp = y.data_ptr()
del y
torch.cuda.empty_cache()
z = torch.empty(160 * MiB, dtype=torch.uint8, device="cuda")
print("z at +%d MiB (y was at +%d MiB)" % ((z.data_ptr() - o) >> 20, (yp - o) >> 20))
survey("x and z", o, (z.data_ptr() - o) + 160 * MiB, o)
small = [torch.empty(1 * MiB, dtype=torch.uint8, device="cuda") for _ in range(3)]
print("small tensors at", [((t.data_ptr() - o) >> 10) for t in small], "KiB")
survey("small", small[0].data_ptr(), 2 * MiB, o)
