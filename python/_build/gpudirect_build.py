# SPDX-License-Identifier: MIT
"""The package's build backend (PEP 517, PEP 660), in the tree and written
with the standard library alone, so that ``pip install ./python`` needs
nothing from a package index and no build tool installed: not online, not
offline, not with or without build isolation, not in a fresh virtual
environment (Python 3.12's has no setuptools; Debian 12's setuptools 66
cannot make a wheel without the separate ``wheel`` package).

The package is pure Python: a wheel is its files, the metadata of
pyproject.toml's [project] table (PEP 621) and a RECORD. Only the fields
pyproject.toml uses are read.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import time
import zipfile
from typing import Any, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "gpudirect"

# --- pyproject.toml ------------------------------------------------------------


def _parse_toml(text: str) -> Dict[str, Any]:
    """pyproject.toml as a dict: tomllib where Python has it (3.11), else
    a reader of the subset this file is written in (tables, strings,
    arrays of strings, inline tables of strings)."""
    try:
        import tomllib

        return dict(tomllib.loads(text))
    except ImportError:
        pass
    out: Dict[str, Any] = {}
    table = out
    buf = ""
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip() if '"' not in raw else raw.strip()
        if not line or line.startswith("#"):
            continue
        if buf:
            buf += " " + line
            if buf.count("[") > buf.count("]"):
                continue
            line, buf = buf, ""
        m = re.fullmatch(r"\[([\w.-]+)\]", line)
        if m:
            table = out
            for part in m.group(1).split("."):
                table = table.setdefault(part, {})
            continue
        key, _, value = line.partition("=")
        value = value.strip()
        if value.startswith("[") and value.count("[") > value.count("]"):
            buf = line
            continue
        table[key.strip().strip('"')] = _value(value)
    return out


def _value(v: str) -> Any:
    if v.startswith('"'):
        return v[1:v.rindex('"')]
    if v.startswith("["):
        return re.findall(r'"([^"]*)"', v)
    if v.startswith("{"):
        return dict(re.findall(r'(\w[\w-]*)\s*=\s*"([^"]*)"', v))
    if v in ("true", "false"):
        return v == "true"
    return v


def _project() -> Dict[str, Any]:
    with open(os.path.join(HERE, "pyproject.toml"), encoding="utf-8") as f:
        return dict(_parse_toml(f.read())["project"])


def _dist_name(p: Dict[str, Any]) -> str:
    return f"{re.sub(r'[-_.]+', '_', p['name'])}-{p['version']}"


def _metadata(p: Dict[str, Any]) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {p['name']}",
             f"Version: {p['version']}"]
    if "description" in p:
        lines.append(f"Summary: {p['description']}")
    if "requires-python" in p:
        lines.append(f"Requires-Python: {p['requires-python']}")
    lic = p.get("license")
    if isinstance(lic, dict) and "text" in lic:
        lines.append(f"License: {lic['text']}")
    for c in p.get("classifiers", []):
        lines.append(f"Classifier: {c}")
    for name, url in p.get("urls", {}).items():
        lines.append(f"Project-URL: {name}, {url}")
    body = ""
    readme = p.get("readme")
    if isinstance(readme, str):
        with open(os.path.join(HERE, readme), encoding="utf-8") as f:
            body = f.read()
        lines.append("Description-Content-Type: text/markdown")
    return "\n".join(lines) + "\n\n" + body


def _wheel_file() -> str:
    return ("Wheel-Version: 1.0\nGenerator: gpudirect_build\n"
            "Root-Is-Purelib: true\nTag: py3-none-any\n")


def _package_files() -> List[Tuple[str, str]]:
    """(archive name, path) of every file of the package."""
    out = []
    top = os.path.join(HERE, PACKAGE)
    for d, dirs, files in os.walk(top):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        for f in sorted(files):
            if f.endswith((".py", ".typed")):
                path = os.path.join(d, f)
                out.append((os.path.relpath(path, HERE).replace(os.sep, "/"),
                            path))
    return out


# --- wheels ----------------------------------------------------------------------


def _epoch() -> Tuple[int, int, int, int, int, int]:
    t = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))
    return time.gmtime(max(t, 315532800))[:6]


class _Wheel:
    def __init__(self, path: str) -> None:
        self.zip = zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED)
        self.record: List[str] = []

    def add(self, name: str, data: bytes) -> None:
        info = zipfile.ZipInfo(name, _epoch())
        info.external_attr = 0o644 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(
            hashlib.sha256(data).digest()).rstrip(b"=").decode()
        self.record.append(f"{name},sha256={digest},{len(data)}")

    def close(self, dist_info: str) -> None:
        rec = f"{dist_info}/RECORD"
        self.record.append(f"{rec},,")
        info = zipfile.ZipInfo(rec, _epoch())
        info.external_attr = 0o644 << 16
        self.zip.writestr(info, "\n".join(self.record) + "\n")
        self.zip.close()


def _write_dist_info(whl: _Wheel, p: Dict[str, Any]) -> str:
    dist_info = f"{_dist_name(p)}.dist-info"
    whl.add(f"{dist_info}/METADATA", _metadata(p).encode())
    whl.add(f"{dist_info}/WHEEL", _wheel_file().encode())
    return dist_info


def _build(wheel_directory: str, editable: bool) -> str:
    p = _project()
    name = f"{_dist_name(p)}-py3-none-any.whl"
    whl = _Wheel(os.path.join(wheel_directory, name))
    if editable:
        # The tree's python/ folder on sys.path: edits apply at once.
        whl.add(f"__editable__.{PACKAGE}.pth", (HERE + "\n").encode())
    else:
        for arc, path in _package_files():
            with open(path, "rb") as f:
                whl.add(arc, f.read())
    whl.close(_write_dist_info(whl, p))
    return name


def get_requires_for_build_wheel(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: Optional[Dict[str, Any]] = None) -> str:
    p = _project()
    dist_info = f"{_dist_name(p)}.dist-info"
    d = os.path.join(metadata_directory, dist_info)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata(p))
    with open(os.path.join(d, "WHEEL"), "w", encoding="utf-8") as f:
        f.write(_wheel_file())
    return dist_info


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory: str, config_settings: Optional[Dict[str, Any]] = None,
                metadata_directory: Optional[str] = None) -> str:
    return _build(wheel_directory, editable=False)


def build_editable(wheel_directory: str, config_settings: Optional[Dict[str, Any]] = None,
                   metadata_directory: Optional[str] = None) -> str:
    return _build(wheel_directory, editable=True)


def build_sdist(sdist_directory: str, config_settings: Optional[Dict[str, Any]] = None) -> str:
    p = _project()
    base = _dist_name(p)
    name = f"{base}.tar.gz"
    files = [("pyproject.toml", os.path.join(HERE, "pyproject.toml")),
             ("_build/gpudirect_build.py", os.path.abspath(__file__))]
    readme = p.get("readme")
    if isinstance(readme, str):
        files.append((readme, os.path.join(HERE, readme)))
    files += _package_files()
    mtime = time.mktime(_epoch() + (0, 0, -1))
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz",
                      format=tarfile.PAX_FORMAT) as tar:
        def add(arc: str, data: bytes) -> None:
            info = tarfile.TarInfo(f"{base}/{arc}")
            info.size = len(data)
            info.mode = 0o644
            info.mtime = int(mtime)
            tar.addfile(info, io.BytesIO(data))

        add("PKG-INFO", _metadata(p).encode())
        for arc, path in files:
            with open(path, "rb") as f:
                add(arc, f.read())
    return name
