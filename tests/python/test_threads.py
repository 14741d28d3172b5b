# SPDX-License-Identifier: MIT
"""Threads and the GIL: 8 Python threads on one cache, every hit counted;
a registration, a cache miss, a report and a blocking receive each leave
the interpreter to the other threads while they wait in C (the stand-in
made slow by STANDIN_SLOW_US, in a child interpreter)."""

from __future__ import annotations

import json
import socket
import threading
import time

import gpudirect
from gpudirect import GdrError

from support import DEVICE, run_python

THREADS = 8
GETS = 2000


def test_eight_threads_of_cache_hits_counted():
    bufs = [bytearray(8192) for _ in range(THREADS)]
    shared = bytearray(8192)
    results = [None] * THREADS
    start = threading.Barrier(THREADS)

    def work(i: int) -> None:
        hits = misses = 0
        try:
            start.wait()
            for k in range(GETS):
                b = bufs[i] if k % 2 else shared
                with c.get(b) as r:
                    assert r.length == 8192 and r.lkey
                    hits += r.result == "hit"
                    misses += r.result == "miss"
            results[i] = (hits, misses)
        except BaseException as e:  # reported below
            results[i] = e

    with gpudirect.ProtectionDomain(DEVICE) as pd, \
            gpudirect.Cache(pd, host=True) as c:
        ts = [threading.Thread(target=work, args=(i,)) for i in range(THREADS)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        for r in results:
            assert isinstance(r, tuple), r
        hits = sum(r[0] for r in results)
        misses = sum(r[1] for r in results)
        s = c.stats()
        assert hits + misses == THREADS * GETS
        assert (s.hits, s.misses) == (hits, misses)
        # One miss per range: each thread's own and the shared one (two
        # threads missing the shared one at once end with one entry).
        assert s.entries == THREADS + 1 and misses >= THREADS + 1
        assert s.in_use == 0 and c.out == 0


# In a child: the stand-in reads STANDIN_SLOW_US when it loads. A thread
# makes one slow call; the main thread spins meanwhile, and its share is
# how much of its spinning alone it did: near 1 when the call let go of the
# GIL, near 0 when it held it (a switch interval or two at the edges).
_CHILD = """
import ctypes, json, sys, threading, time, gpudirect
from gpudirect import _lib
what = %r
pd = gpudirect.ProtectionDomain(%r)
cache = gpudirect.Cache(pd, host=True)
buf = bytearray(4096)
addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
held = ctypes.PyDLL(_lib.LIB.path).gdr_register  # holds the GIL: control
held.restype = ctypes.c_void_p
held.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
inside = threading.Event(); done = threading.Event()
def call():
    inside.set()
    if what == "register":
        pd.register(buf).close()
    elif what == "control":
        _lib.lib().gdr_deregister(held(pd.handle, addr, 4096))
    elif what == "miss":
        cache.get(buf).put()
    else:
        gpudirect.report()
    done.set()
# How fast this thread spins alone: the yardstick of its share below.
n, t0 = 0, time.monotonic()
while time.monotonic() - t0 < 0.1:
    n += 1
rate = n / (time.monotonic() - t0)
t = threading.Thread(target=call)
t0 = time.monotonic()
t.start()
inside.wait()
n = 0
while not done.is_set():
    n += 1
took = time.monotonic() - t0
t.join()
print(json.dumps({"share": n / (rate * took), "seconds": took}))
"""


def _spins(what: str) -> dict:
    r = run_python(_CHILD % (what, DEVICE), env={"STANDIN_SLOW_US": "300000"})
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_registration_releases_the_gil():
    out = _spins("register")
    assert out["seconds"] >= 0.3 and out["share"] > 0.5, out


def test_control_a_call_holding_the_gil_is_seen():
    """The measure can fail: a call that holds the GIL (PyDLL) leaves the
    other thread (almost) no turn."""
    out = _spins("control")
    assert out["seconds"] >= 0.3 and out["share"] < 0.25, out


def test_cache_miss_releases_the_gil():
    out = _spins("miss")
    assert out["seconds"] >= 0.3 and out["share"] > 0.5, out


def test_report_releases_the_gil():
    out = _spins("report")
    assert out["seconds"] >= 0.3 and out["share"] > 0.5, out


def test_blocking_receive_releases_the_gil():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    err = []

    def receive() -> None:
        try:
            gpudirect.recv(a)
        except GdrError as e:
            err.append(e)

    t = threading.Thread(target=receive)
    t.start()
    n = 0
    end = time.monotonic() + 0.2
    while time.monotonic() < end:  # this thread runs while recv blocks
        n += 1
    assert t.is_alive() and n > 1000
    b.close()  # the peer goes: recv ends with ECONNRESET
    t.join(10)
    assert not t.is_alive() and err and err[0].errno == 104, err
    a.close()
