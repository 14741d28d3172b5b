# SPDX-License-Identifier: MIT
"""Lifetimes: what a region holds, closing a PD under open regions and
caches, collection of what was never closed, interpreter exit with
everything open (also with a thread inside a registration), a
deregistration that fails. Every MR the stand-in made is counted back."""

from __future__ import annotations

import gc
import weakref

import gpudirect
from gpudirect import GdrError

from support import DEVICE, Log, raises, run_python


def count(log: Log, prefix: str) -> int:
    return sum(x.startswith(prefix) for x in log.lines())


def test_region_holds_its_object():
    buf = bytearray(4096)
    with gpudirect.ProtectionDomain(DEVICE) as pd:
        mr = pd.register(buf)
        held = mr.obj
        del buf
        gc.collect()
        assert held is mr.obj and len(held) == 4096  # still there
        mr.close()
        assert mr.obj is None


def test_region_keeps_its_pd():
    log = Log()
    buf = bytearray(4096)
    pd = gpudirect.ProtectionDomain(DEVICE)
    w = weakref.ref(pd)
    mr = pd.register(buf)
    del pd
    gc.collect()
    assert w() is not None and not mr.closed and mr.lkey  # kept alive
    del mr
    gc.collect()
    assert w() is None  # both went, the MR first
    assert count(log, "ibv_dereg_mr") == 1


def test_pd_close_closes_its_regions():
    log = Log()
    bufs = [bytearray(4096) for _ in range(3)]
    pd = gpudirect.ProtectionDomain(DEVICE)
    mrs = [pd.register(b) for b in bufs]
    other = gpudirect.ProtectionDomain(DEVICE)
    multi = gpudirect.register_multi([pd, other], bufs[0])
    pd.close()
    assert all(m.closed for m in mrs) and multi.closed
    assert count(log, "ibv_dereg_mr") == 5  # three, and both of the multi
    for m in mrs:
        e = raises(GdrError, lambda: m.lkey)
        assert e.errno == 9
        assert "protection domain on standin0 was closed" in e.sentence
        assert m.decision.path == "host"  # the record stays readable
        m.close()  # nothing
    e = raises(GdrError, pd.register, bufs[0])
    assert e.errno == 9 and "protection domain" in e.sentence
    raises(GdrError, lambda: pd.handle)
    pd.close()  # twice: nothing
    other.close()


def test_region_collected_without_close_is_deregistered():
    log = Log()
    with gpudirect.ProtectionDomain(DEVICE) as pd:
        pd.register(bytearray(4096))  # dropped at once
        gc.collect()
        assert count(log, "ibv_dereg_mr") == 1


_EXIT = """
import mmap, threading, gpudirect
pd = gpudirect.ProtectionDomain(%(dev)r)
pd2 = gpudirect.ProtectionDomain(%(dev)r)
keep = [bytearray(4096) for _ in range(4)]
regions = [pd.register(b) for b in keep]
m = mmap.mmap(-1, 8192)
regions.append(pd2.register(m))
regions.append(gpudirect.register_multi([pd, pd2], keep[0]))
c = gpudirect.Cache(pd, host=True)
out = c.get(keep[1])        # never put back
with c.get(keep[2]):        # cached, idle
    pass
c2 = gpudirect.Cache(pd2)   # a cache nobody closes
%(extra)s
print("exiting")
"""


def _exit_run(extra: str = "", env=None):
    log = Log()
    r = run_python(_EXIT % {"dev": DEVICE, "extra": extra}, env=env)
    return r, log


def test_interpreter_exit_with_everything_open():
    r, log = _exit_run()
    assert r.returncode == 0 and r.stdout.strip() == "exiting", r
    assert r.stderr == "", r.stderr
    made = count(log, "mr lkey=")
    assert made == 9  # 5 regions, 2 of the multi, 2 of the cache
    assert count(log, "ibv_dereg_mr") == made


def test_exit_waits_for_a_registration_under_way():
    """A daemon thread is inside a 1 s registration when the interpreter
    exits: the exit waits for it (up to 5 s), then closes its region too."""
    code = """
import threading, time, gpudirect
pd = gpudirect.ProtectionDomain(%r)
keep = []
def slow():
    keep.append(pd.register(bytearray(4096)))
threading.Thread(target=slow, daemon=True).start()
time.sleep(0.2)
print("exiting")
""" % DEVICE
    log = Log()
    r = run_python(code, env={"STANDIN_SLOW_US": "1000000"})
    assert r.returncode == 0 and r.stderr == "", r
    assert count(log, "mr lkey=") == 1 and count(log, "ibv_dereg_mr") == 1


def test_failed_deregistration_keeps_the_region():
    code = """
import gpudirect
pd = gpudirect.ProtectionDomain(%r)
b = bytearray(4096)
mr = pd.register(b)
try:
    mr.close()
except gpudirect.GdrError as e:
    print("errno", e.errno, "open", not mr.closed, mr.lkey > 0)
    print(e.sentence)
""" % DEVICE
    r = run_python(code, env={"STANDIN_FAIL": "ibv_dereg_mr=16"})
    assert r.returncode == 0, r.stderr
    first = r.stdout.splitlines()[0]
    assert first == "errno 16 open True True", r.stdout
    assert r.stdout.splitlines()[1], r.stdout  # the library said why
    assert r.stderr == "", r.stderr
