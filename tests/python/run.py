# SPDX-License-Identifier: MIT
"""Run the Python tests against a build directory:

    python3 tests/python/run.py BUILD_DIR [--standin | --real] [FILE|DIR ...]

The package is the tree's (python/), the library the build's
(GPUDIRECT_LIBRARY), and, with --standin (the default), libibverbs.so.1 is
the stand-in of tests/fakes/libibverbs/ (one device, standin0, that logs every
registration to $STANDIN_LOG); --real uses the system's libibverbs.

Under pytest where it is installed (python3-pytest); else under the small
runner below, which does what these tests need: every test_* function of
each file, unittest.SkipTest as a skip, a summary, exit status 1 on a
failure (pytest's 0/1 too; 77 when every test skipped, for meson).
Without arguments it runs tests/python/.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import unittest
from typing import List

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))


def environment(build: str, standin: bool, tmp: str) -> dict:
    env = dict(os.environ)
    lib = os.path.join(build, "lib")
    paths = [lib]
    if standin:
        paths.insert(0, os.path.join(build, "tests", "fakes", "libibverbs"))
        env["STANDIN_LOG"] = os.path.join(tmp, "standin.log")
        env["STANDIN_KEYS"] = "1"  # each MR's keys logged too
        env["GDR_TEST_DEVICE"] = "standin0"
    if env.get("LD_LIBRARY_PATH"):
        paths.append(env["LD_LIBRARY_PATH"])
    env["LD_LIBRARY_PATH"] = ":".join(paths)
    env["GPUDIRECT_LIBRARY"] = os.path.join(lib, "libgpudirect.so.1")
    env["GDR_BUILD_DIR"] = build
    env["GDR_SOURCE_DIR"] = SOURCE
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(SOURCE, "python"), HERE] +
        ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # nothing written into the tree
    return env


def all_skipped(xml: str) -> bool:
    """Whether pytest's JUnit report has tests and skipped every one."""
    import xml.etree.ElementTree as ET

    try:
        root = ET.parse(xml).getroot()
    except (OSError, ET.ParseError):
        return False
    suites = [root] if root.tag == "testsuite" else list(root)
    tests = sum(int(x.get("tests", 0)) for x in suites)
    skipped = sum(int(x.get("skipped", 0)) for x in suites)
    return tests > 0 and skipped == tests


def have_pytest() -> bool:
    return importlib.util.find_spec("pytest") is not None


def mini(files: List[str]) -> int:
    """The runner without pytest: each test_* function, in file order."""
    passed = failed = skipped = 0
    for path in files:
        name = os.path.splitext(os.path.basename(path))[0]
        d = os.path.dirname(path)
        if d not in sys.path:
            sys.path.insert(0, d)  # its helpers, as pytest finds them
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec and spec.loader
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        try:
            spec.loader.exec_module(mod)
        except unittest.SkipTest as e:
            print(f"SKIP {name}: {e}")
            skipped += 1
            continue
        except Exception:
            print(f"FAIL {name} (import)")
            traceback.print_exc()
            failed += 1
            continue
        for fname in [n for n in vars(mod) if n.startswith("test_")]:
            fn = getattr(mod, fname)
            if not callable(fn):
                continue
            t0 = time.monotonic()
            try:
                fn()
            except unittest.SkipTest as e:
                print(f"SKIP {name}::{fname}: {e}")
                skipped += 1
            except Exception:
                print(f"FAIL {name}::{fname}")
                traceback.print_exc()
                failed += 1
            else:
                print(f"ok   {name}::{fname} ({time.monotonic() - t0:.2f}s)")
                passed += 1
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    if failed:
        return 1
    return 77 if skipped and not passed else 0


def collect(args: List[str]) -> List[str]:
    out = []
    for a in args or [HERE]:
        a = os.path.abspath(a)
        if os.path.isdir(a):
            out += sorted(os.path.join(a, f) for f in os.listdir(a)
                          if f.startswith("test_") and f.endswith(".py"))
        else:
            out.append(os.path.abspath(a))
    return out


def main() -> int:
    args = sys.argv[1:]
    if not args:
        print(__doc__)
        return 2
    build = os.path.abspath(args.pop(0))
    standin = True
    if args and args[0] in ("--standin", "--real"):
        standin = args.pop(0) == "--standin"
    files = collect(args)
    if os.environ.get("GDR_PY_CHILD"):
        return mini(files)
    tmp = tempfile.mkdtemp(prefix="gdr-py-")
    try:
        env = environment(build, standin, tmp)
        if have_pytest() and not os.environ.get("GDR_NO_PYTEST"):
            xml = os.path.join(tmp, "junit.xml")
            cmd = [sys.executable, "-m", "pytest", "-q", "-rs",
                   "-p", "no:cacheprovider", "--rootdir", tmp,
                   f"--junitxml={xml}", *files]
            rc = subprocess.call(cmd, env=env, cwd=tmp)
            # 5: nothing collected (a module that skipped as a whole)
            if rc in (0, 5) and all_skipped(xml):
                return 77  # meson's skip: nothing here could run
            return 1 if rc == 5 else rc
        print("pytest is not installed: the tests run under run.py's own "
              "runner (apt-get install python3-pytest for pytest)")
        env["GDR_PY_CHILD"] = "1"
        return subprocess.call([sys.executable, os.path.abspath(__file__),
                                build, *files], env=env, cwd=tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
