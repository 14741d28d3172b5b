# SPDX-License-Identifier: MIT
"""The package's build backend (python/_build/gpudirect_build.py): its
reader of pyproject.toml where Python has no tomllib agrees with tomllib;
the wheel it makes holds the package, metadata and a RECORD whose hashes
are right; the editable wheel points at the tree. (check-install.sh
installs it with pip into a fresh venv.)"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import os
import sys
import tempfile
import zipfile

import support


def backend():
    path = os.path.join(support.SOURCE, "python", "_build",
                        "gpudirect_build.py")
    spec = importlib.util.spec_from_file_location("gpudirect_build", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_fallback_toml_reader_agrees_with_tomllib():
    try:
        import tomllib
    except ImportError:
        support.skip("no tomllib (Python older than 3.11) to compare with")
    b = backend()
    with open(os.path.join(b.HERE, "pyproject.toml"), "rb") as f:
        data = f.read()
    want = tomllib.loads(data.decode())
    real = sys.modules.pop("tomllib")
    sys.modules["tomllib"] = None  # an import of it fails, as on 3.10
    try:
        got = b._parse_toml(data.decode())
    finally:
        sys.modules["tomllib"] = real
    assert got == want


def test_wheel_contents_and_record():
    b = backend()
    with tempfile.TemporaryDirectory() as d:
        name = b.build_wheel(d)
        assert name == "gpudirect-0.5.0-py3-none-any.whl"
        with zipfile.ZipFile(os.path.join(d, name)) as z:
            names = set(z.namelist())
            pkg = {n for n in names if n.startswith("gpudirect/")}
            src = os.path.join(b.HERE, "gpudirect")
            want = {f"gpudirect/{f}" for f in os.listdir(src)
                    if f.endswith((".py", ".typed"))}
            assert pkg == want
            meta = z.read("gpudirect-0.5.0.dist-info/METADATA").decode()
            assert "Name: gpudirect\n" in meta and "Version: 0.5.0\n" in meta
            assert "Requires-Python: >=3.8" in meta
            assert "Root-Is-Purelib: true" in \
                z.read("gpudirect-0.5.0.dist-info/WHEEL").decode()
            record = z.read("gpudirect-0.5.0.dist-info/RECORD").decode()
            rows = [r.split(",") for r in record.splitlines()]
            assert {r[0] for r in rows} == names
            for path, digest, size in rows:
                if path.endswith("RECORD"):
                    assert digest == size == ""
                    continue
                data = z.read(path)
                h = base64.urlsafe_b64encode(
                    hashlib.sha256(data).digest()).rstrip(b"=").decode()
                assert digest == f"sha256={h}" and int(size) == len(data)
        ed = b.build_editable(d)
        with zipfile.ZipFile(os.path.join(d, ed)) as z:
            pth = z.read("__editable__.gpudirect.pth").decode().strip()
            assert pth == b.HERE
        sd = b.build_sdist(d)
        assert sd == "gpudirect-0.5.0.tar.gz"
