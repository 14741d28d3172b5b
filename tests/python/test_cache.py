# SPDX-License-Identifier: MIT
"""The registration cache from Python over the stand-in verbs: hits and
misses with the keys of the MR registered, pass-through host memory,
invalidate, purge, stats, what a CachedRegion is after put, closing with
regions out, and what collection of a region never put back does."""

from __future__ import annotations

import ctypes
import gc

import gpudirect
from gpudirect import GdrError

from support import DEVICE, Log, raises


def addr_of(buf) -> int:
    return ctypes.addressof(ctypes.c_char.from_buffer(buf))


def test_host_cache_hits_and_misses():
    log = Log()
    buf = bytearray(1 << 16)
    a = addr_of(buf)
    with gpudirect.ProtectionDomain(DEVICE) as pd, \
            gpudirect.Cache(pd, host=True) as c:
        with c.get(buf) as r:
            assert r.result == "miss" and r.reason == ""
            assert r.addr == a and r.length == 1 << 16
            assert (r.lkey, r.rkey) == log.keys()[-1]
            assert r.num_mappings == 0 and r.handle
            first = (r.lkey, r.rkey)
        for _ in range(5):
            with c.get(buf) as r:
                assert r.result == "hit" and (r.lkey, r.rkey) == first
        with c.get(a + 100, 1000) as r:  # inside the cached range
            assert r.result == "hit" and r.addr == a
        assert len(log.regs()) == 1
        s = c.stats()
        assert (s.hits, s.misses, s.entries, s.bytes, s.in_use) == \
            (6, 1, 1, 1 << 16, 0)
        c.invalidate(buf)
        assert c.stats().invalidations == 1 and c.stats().entries == 0
        with c.get(buf) as r:
            assert r.result == "miss" and (r.lkey, r.rkey) != first
        c.purge()  # host entries are not the purge's: left alone
        assert c.stats().entries == 1


def test_host_memory_passes_through_without_host_flag():
    log = Log()
    buf = bytearray(4096)
    with gpudirect.ProtectionDomain(DEVICE) as pd, gpudirect.Cache(pd) as c:
        for _ in range(3):
            with c.get(buf) as r:
                assert r.result == "uncached" and r.length == 4096
        s = c.stats()
        assert s.passthrough == 3 and s.entries == 0 and s.hits == 0
        assert len(log.regs()) == 3
        assert sum(x.startswith("ibv_dereg_mr") for x in log.lines()) == 3


def test_cached_region_after_put():
    buf = bytearray(4096)
    with gpudirect.ProtectionDomain(DEVICE) as pd, \
            gpudirect.Cache(pd, host=True) as c:
        r = c.get(buf)
        assert not r.closed and c.out == 1
        r.put()
        r.put()  # twice: nothing
        assert r.closed and c.out == 0 and r.result == "miss"
        e = raises(GdrError, lambda: r.lkey)
        assert e.errno == 9 and "put back" in e.sentence


def test_close_with_regions_out():
    log = Log()
    buf = bytearray(4096)
    pd = gpudirect.ProtectionDomain(DEVICE)
    c = gpudirect.Cache(pd, host=True)
    r = c.get(buf)
    e = raises(GdrError, c.close)
    assert e.errno == 16 and "1 region" in e.sentence and not c.closed
    assert r.lkey  # still good
    c.close(force=True)  # puts it back, then frees every entry
    assert c.closed and r.closed
    e = raises(GdrError, lambda: r.rkey)
    assert e.errno == 9 and "Cache.close()" in e.sentence
    r.put()  # after a forced close: nothing
    e = raises(GdrError, c.get, buf)
    assert e.errno == 9 and "the cache is closed" in e.sentence
    raises(GdrError, c.stats)
    raises(GdrError, c.invalidate, buf)
    assert sum(x.startswith("ibv_dereg_mr") for x in log.lines()) == 1
    pd.close()


def test_pd_close_closes_its_caches():
    buf = bytearray(4096)
    pd = gpudirect.ProtectionDomain(DEVICE)
    c = gpudirect.Cache(pd, host=True)
    r = c.get(buf)
    pd.close()
    assert c.closed and r.closed
    e = raises(GdrError, c.get, buf)
    assert e.errno == 9 and "protection domain" in e.sentence
    raises(GdrError, gpudirect.Cache, pd)


def test_region_never_put_back_is_put_back_when_collected():
    buf = bytearray(4096)
    with gpudirect.ProtectionDomain(DEVICE) as pd, \
            gpudirect.Cache(pd, host=True) as c:
        c.get(buf)  # dropped at once
        gc.collect()
        assert c.out == 0 and c.stats().in_use == 0


def test_validated_and_trusted_caches_are_made():
    with gpudirect.ProtectionDomain(DEVICE) as pd:
        for kw in ({}, {"trusted": True}, {"whole_alloc": True},
                   {"max_entries": 2, "max_bytes": 1 << 20,
                    "max_reg_ratio": 4}):
            c = gpudirect.Cache(pd, **kw)
            assert "Cache" in repr(c)
            c.close()
        raises(GdrError, gpudirect.Cache, pd, max_entries=-1)
        raises(GdrError, gpudirect.Cache, pd, path="nope")
        raises(GdrError, gpudirect.Cache, "pd")


def test_cache_limits_evict():
    bufs = [bytearray(4096) for _ in range(4)]
    with gpudirect.ProtectionDomain(DEVICE) as pd, \
            gpudirect.Cache(pd, host=True, max_entries=2) as c:
        for b in bufs:
            with c.get(b):
                pass
        s = c.stats()
        assert s.entries == 2 and s.evictions == 2


def test_get_failure_is_the_library_words():
    with gpudirect.ProtectionDomain(DEVICE) as pd, \
            gpudirect.Cache(pd, host=True) as c:
        e = raises(GdrError, c.get, 4096, 4096)  # nothing mapped there
        assert e.errno == 14 and e.call == "gdr_cache_get_ex"
        assert "not mapped" in e.sentence
        e = raises(GdrError, c.get, bytearray(10), -1)
        assert e.errno == 22
        assert c.out == 0


def test_region_out_keeps_its_cache():
    import weakref

    buf = bytearray(4096)
    with gpudirect.ProtectionDomain(DEVICE) as pd:
        c = gpudirect.Cache(pd, host=True)
        w = weakref.ref(c)
        r = c.get(buf)
        del c
        gc.collect()
        assert w() is not None and r.lkey  # the cache lives on for it
        r.put()
        del r
        gc.collect()
        assert w() is None  # then it goes, closed by its finalizer
