# SPDX-License-Identifier: MIT
"""What the Python tests share: where the build is, the stand-in verbs'
log, skipping and expecting errors without pytest (tests/python/run.py
runs them under pytest where it is installed, else with its own small
runner: both honour unittest.SkipTest)."""

from __future__ import annotations

import os
import subprocess
import sys
import unittest
from typing import Any, Callable, List, Type, TypeVar

BUILD = os.environ.get("GDR_BUILD_DIR", "")
SOURCE = os.environ.get("GDR_SOURCE_DIR",
                        os.path.dirname(os.path.dirname(
                            os.path.dirname(os.path.abspath(__file__)))))
STANDIN_LOG = os.environ.get("STANDIN_LOG", "")
DEVICE = os.environ.get("GDR_TEST_DEVICE", "standin0")

E = TypeVar("E", bound=BaseException)


def skip(reason: str) -> None:
    raise unittest.SkipTest(reason)


def raises(exc: Type[E], fn: Callable[..., Any], *args: Any,
           **kwargs: Any) -> E:
    """The exception @fn raised; a failure when it raised none."""
    try:
        fn(*args, **kwargs)
    except exc as e:
        return e
    raise AssertionError(f"{getattr(fn, '__name__', fn)} raised no "
                         f"{exc.__name__}")


def need_build() -> str:
    if not BUILD:
        skip("GDR_BUILD_DIR is not set (run through tests/python/run.py)")
    return BUILD


def numpy() -> Any:
    try:
        import numpy as np
    except ImportError:
        skip("NumPy is not installed (python3-numpy): the NumPy cases need it")
    return np


class Log:
    """The stand-in verbs' log ($STANDIN_LOG) from a point on."""

    def __init__(self) -> None:
        if not STANDIN_LOG:
            skip("no stand-in verbs log (STANDIN_LOG): these checks read "
                 "what reached the stand-in libibverbs")
        try:
            self.start = os.path.getsize(STANDIN_LOG)
        except OSError:
            self.start = 0

    def lines(self) -> List[str]:
        try:
            with open(STANDIN_LOG) as f:
                f.seek(self.start)
                return f.read().splitlines()
        except OSError:
            return []

    def regs(self) -> List[str]:
        return [x for x in self.lines() if x.startswith("ibv_reg")]

    def keys(self) -> List[tuple]:
        """(lkey, rkey) of each MR the stand-in made since the mark."""
        out = []
        for x in self.lines():
            if x.startswith("mr lkey="):
                f = dict(p.split("=") for p in x.split()[1:])
                out.append((int(f["lkey"], 16), int(f["rkey"], 16)))
        return out


def run_python(code: str, env: Any = None, timeout: float = 60) -> Any:
    """@code in a new interpreter with this one's environment."""
    e = dict(os.environ)
    if env:
        e.update(env)
    return subprocess.run([sys.executable, "-c", code], env=e,
                          capture_output=True, text=True, timeout=timeout)
