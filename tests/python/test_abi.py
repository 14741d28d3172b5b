# SPDX-License-Identifier: MIT
"""The package's ctypes layouts and constants against the compiler's
reading of include/gpudirect.h and infiniband/verbs.h (abi-layout.c):
a field moved, resized or added, or a constant changed, fails here."""

from __future__ import annotations

import ctypes
import os
import subprocess
from typing import Dict, Tuple

from gpudirect import _lib as L

import support


def _layout() -> Tuple[Dict[str, int], Dict[str, Tuple[int, int]],
                       Dict[str, int], set]:
    prog = os.path.join(support.need_build(), "tests", "python", "abi-layout")
    out = subprocess.run([prog], capture_output=True, text=True, check=True)
    sizes, fields, consts, prefix = {}, {}, {}, set()
    for line in out.stdout.splitlines():
        kind, rest = line.split(" ", 1)
        if kind == "size":
            name, n = rest.split()
            sizes[name] = int(n)
        elif kind == "field":
            name, off, n = rest.split()
            fields[name] = (int(off), int(n))
        elif kind == "const":
            name, v = rest.split()
            consts[name] = int(v)
        elif kind == "prefix":
            prefix.add(rest)
    return sizes, fields, consts, prefix


def test_struct_sizes_and_fields():
    sizes, fields, _, prefix = _layout()
    structs = dict(L.STRUCTS)
    structs.update(L.PREFIX_STRUCTS)
    # Every struct the program prints is mirrored, and the other way round.
    assert set(sizes) | prefix == set(structs), (set(sizes) | prefix) ^ set(structs)
    checked = 0
    for name, cls in structs.items():
        if name in sizes:
            assert ctypes.sizeof(cls) == sizes[name], \
                f"sizeof(struct {name}): C {sizes[name]}, Python {ctypes.sizeof(cls)}"
        c_fields = {k.split(".", 1)[1]: v for k, v in fields.items()
                    if k.split(".", 1)[0] == name}
        py_fields = [f for f, _ in cls._fields_]
        assert set(c_fields) == set(py_fields), \
            f"struct {name}: C fields {sorted(c_fields)}, Python {py_fields}"
        for f in py_fields:
            d = getattr(cls, f)
            assert (d.offset, d.size) == c_fields[f], \
                f"{name}.{f}: C offset/size {c_fields[f]}, Python {(d.offset, d.size)}"
            checked += 1
    assert checked > 60


def test_constants():
    _, _, consts, _ = _layout()
    py = {k: v for k, v in vars(L).items()
          if k.isupper() and isinstance(v, int) and not k.startswith("_")}
    c = {}
    for name, v in consts.items():
        key = name[4:] if name.startswith("GDR_") else name
        c[key] = v
    assert set(py) == set(c), set(py) ^ set(c)
    for k, v in c.items():
        assert py[k] == v, f"{k}: C {v}, Python {py[k]}"


def test_access_constants_exported():
    import gpudirect

    assert gpudirect.ACCESS_LOCAL_WRITE == L.IBV_ACCESS_LOCAL_WRITE
    assert gpudirect.ACCESS_RELAXED_ORDERING == L.IBV_ACCESS_RELAXED_ORDERING


def test_every_call_is_bound_and_releases_the_gil():
    """Each C function comes from a CDLL (the GIL is released during the
    call), none from a PyDLL, and each has a prototype."""
    g = L.lib()
    assert type(L.LIB.gdr) is ctypes.CDLL
    for name, (res, args) in L._GDR_PROTOTYPES.items():
        f = getattr(g, name)
        assert not f._flags_ & ctypes._FUNCFLAG_PYTHONAPI, name
        assert f.argtypes == args and f.restype == res, name
    for name in L._IBV_PROTOTYPES:
        assert not getattr(L.ibv(), name)._flags_ & ctypes._FUNCFLAG_PYTHONAPI
