# SPDX-License-Identifier: MIT
"""Cases that need a fresh interpreter (PYTORCH_CUDA_ALLOC_CONF is read
when CUDA starts), run by the GPU tests: python3 torch_cases.py CASE.
Each prints what it saw, and a JSON object on its last line; exit 77
without PyTorch or a GPU.

  expandable-span    a 64 MiB tensor over several expandable-segment
                     chunks, registered whole (one dma-buf of the span)
  validated          the validated cache under PyTorch's allocator (as
                     configured): a churn of tensors allocated and freed,
                     empty_cache() now and then, gets over live tensors;
                     every MR served checked against the driver's ground
                     truth (every mapping under the range served is the
                     one registered)
  trusted-pool       the same churn through a trusted cache whose tensors
                     come from a gpudirect.torch.TrustedPool, also under
                     expandable segments; a tensor outside the pool refused
  control            a trusted cache over pools whose releases it does
                     not hear, breaking the promise: the ground truth
                     must see a stale MR (the check can fail), and
                     purge() must find it
"""

from __future__ import annotations

import json
import os
import random
import sys

here = os.path.dirname(os.path.abspath(__file__))
top = os.path.dirname(os.path.dirname(os.path.dirname(here)))
sys.path[:0] = [here, os.path.join(top, "tests", "python"),
                os.path.join(top, "python")]

import unittest  # noqa: E402

import gpudirect  # noqa: E402
from gpudirect import GdrError  # noqa: E402

try:
    import gpu_support as gs  # noqa: E402
    import support  # noqa: E402

    torch = gs.torch_cuda()
except unittest.SkipTest as e:
    print(f"SKIP: {e}")
    sys.exit(77)

MiB = 1 << 20
DEVICE = support.DEVICE


class Churn:
    """Random tensors allocated and freed, gets over live ones, every MR
    against the ground truth."""

    def __init__(self, get, seed: int, pool=None, empty_every: int = 17):
        self.get = get
        self.rng = random.Random(seed)
        self.pool = pool
        self.empty_every = empty_every
        self.truth = gs.Truth()
        self.live: list = []
        self.freed: set = set()
        self.snaps: dict = {}
        self.gets = self.hits = self.reuses = self.stale = self.empties = 0

    def alloc(self, n: int):
        if self.pool is not None:
            with self.pool:
                return torch.empty(n, dtype=torch.uint8, device="cuda")
        return torch.empty(n, dtype=torch.uint8, device="cuda")

    def step(self) -> None:
        rng = self.rng
        if len(self.live) < 8 or rng.random() < 0.4:
            n = rng.choice([1, 2, 3, 8, 20, 40]) * MiB + \
                rng.randrange(0, 4) * 4096
            t = self.alloc(n)
            self.reuses += t.data_ptr() in self.freed
            self.live.append(t)
        if len(self.live) > 4 and rng.random() < 0.4:
            t = self.live.pop(rng.randrange(len(self.live)))
            self.freed.add(t.data_ptr())
            del t
            if rng.randrange(self.empty_every) == 0:
                torch.cuda.empty_cache()
                self.empties += 1
        t = rng.choice(self.live)
        off = rng.randrange(0, t.numel() // 2) & ~4095
        n = rng.randrange(1, t.numel() - off + 1)
        a = t.data_ptr() + off
        with self.get(a, n) as r:
            self.gets += 1
            if r.result == "hit":
                self.hits += 1
            else:
                self.snaps[r.handle] = self.truth.snapshot(r.addr, r.length)
            if self.truth.stale(self.snaps.get(r.handle), a, n):
                self.stale += 1
                print(f"STALE: MR {r.handle:#x} served for [{a:#x}, +{n})")

    def summary(self) -> dict:
        return {"gets": self.gets, "hits": self.hits, "reuses": self.reuses,
                "stale": self.stale, "empty_cache": self.empties}


def expandable_span() -> dict:
    truth = gs.Truth()
    x = torch.empty(64 * MiB, dtype=torch.uint8, device="cuda")
    snap = truth.snapshot(x.data_ptr(), x.nbytes)
    chunks = len(snap or [])
    log = support.Log()
    with gpudirect.ProtectionDomain(DEVICE) as pd, pd.register(x) as mr:
        gs.check_dmabuf_mr(mr, x.data_ptr(), x.nbytes, log,
                           torch.cuda.current_device())
    # Two tensors side by side in one expandable segment, as one range.
    y = torch.empty(40 * MiB, dtype=torch.uint8, device="cuda")
    z = torch.empty(24 * MiB, dtype=torch.uint8, device="cuda")
    both = z.data_ptr() == y.data_ptr() + y.nbytes
    if both:
        log = support.Log()
        with gpudirect.ProtectionDomain(DEVICE) as pd, \
                pd.register(y.data_ptr(), 64 * MiB) as mr:
            gs.check_dmabuf_mr(mr, y.data_ptr(), 64 * MiB, log,
                               torch.cuda.current_device())
    print(f"expandable segments: a 64 MiB tensor over {chunks} mappings, "
          f"registered whole; two adjacent tensors as one range: "
          f"{'yes' if both else 'not adjacent here'}")
    return {"ok": True, "chunks": chunks, "adjacent": both}


def validated() -> dict:
    with gpudirect.ProtectionDomain(DEVICE) as pd, gpudirect.Cache(pd) as c:
        ch = Churn(c.get, 1, empty_every=5)
        for _ in range(3000):
            ch.step()
        ch.live.clear()
        s = c.stats()
        out = ch.summary()
        out.update(cache_stale=s.stale, in_use=s.in_use)
    print(f"validated cache ({os.environ.get('PYTORCH_CUDA_ALLOC_CONF', 'default allocator')}): "
          f"{out}")
    return out


def trusted_pool() -> dict:
    """A churn in a TrustedPool (empty_cache() now and then), then the
    pool's end, which gives its segments back (each heard by the cache
    first), then a second pool's churn on the same cache: the driver may
    hand the old addresses out again, and no MR of the first may be
    served for them."""
    from gpudirect.torch import TrustedPool

    with gpudirect.ProtectionDomain(DEVICE) as pd:
        c = gpudirect.Cache(pd, trusted=True)
        pool = TrustedPool(c)
        ch = Churn(pool.get, 2, pool=pool, empty_every=5)
        for _ in range(3000):
            ch.step()
        freed_while_used = pool.frees
        outside = torch.empty(MiB, dtype=torch.uint8, device="cuda")
        try:
            pool.get(outside)
            refused = False
        except GdrError as e:
            refused = e.errno == 22 and "TrustedPool" in e.sentence
        first = {s for s, _ in pool.segments()}
        made = pool.allocs
        inv0 = c.stats().invalidations
        ch.live.clear()
        pool.close()  # the pool's end: its segments go back
        torch.cuda.empty_cache()
        freed = pool.frees
        heard = c.stats().invalidations - inv0
        # A second pool on the same cache, in the first one's addresses.
        pool2 = TrustedPool(c)
        ch2 = Churn(pool2.get, 3, pool=pool2, empty_every=5)
        ch2.snaps = ch.snaps  # the first pool's MRs, still known
        for _ in range(1000):
            ch2.step()
        again = len(first & {s for s, _ in pool2.segments()})
        ch2.live.clear()
        pool2.close()
        torch.cuda.empty_cache()
        s = c.stats()
        out = ch.summary()
        out.update(segments_made=made, freed_while_in_use=freed_while_used,
                   segments_freed=freed, invalidations_heard=heard,
                   second_stale=ch2.stale, second_gets=ch2.gets,
                   addresses_again=again, refused_outside=refused,
                   in_use=s.in_use)
        c.close()
    print(f"trusted cache with a TrustedPool "
          f"({os.environ.get('PYTORCH_CUDA_ALLOC_CONF', 'default allocator')}): {out}")
    return out


def control() -> dict:
    """The promise broken: a trusted cache over TrustedPools whose
    releases it does not hear (each pool's list of caches emptied), the
    twin of trusted-pool with the invalidation cut out. Each round ends
    the pool of a cached tensor (its segment goes back to the driver,
    unheard) and makes a tensor of the same size in a new pool. Where the
    driver gave the freed address back, "trace" says whether the memory
    under it was replaced (the ground truth), the trusted get's answer,
    how many stale entries the purge found and the get's answer after."""
    from gpudirect.torch import TrustedPool

    truth = gs.Truth()
    seen = found = replaced = same = closed = released = 0
    trace = []
    with gpudirect.ProtectionDomain(DEVICE) as pd:
        c = gpudirect.Cache(pd, trusted=True)

        def unheard() -> tuple:
            pool = TrustedPool(c)
            pool._core.caches.clear()  # its releases reach no cache
            with pool:
                t = torch.empty(8 * MiB, dtype=torch.uint8, device="cuda")
            return pool, t

        pool, t = unheard()
        for _ in range(20):
            p, n = t.data_ptr(), t.nbytes
            with c.get(t) as r:
                snap = truth.snapshot(r.addr, r.length)
            del r, t  # a region holds its tensor: both go
            pool.close()  # the segment goes back to the driver, unheard
            torch.cuda.empty_cache()
            closed += 1
            released += pool.frees == pool.allocs > 0
            pool, t = unheard()
            if t.data_ptr() != p:
                c.purge()  # the entry of freed memory goes now
                continue
            same += 1
            with c.get(t) as r:
                stale = truth.stale(snap, p, n)
                first = r.result
            replaced += stale
            seen += stale and first == "hit"
            before = c.stats().stale
            c.purge()
            dropped = c.stats().stale - before
            found += stale and dropped > 0
            # The purge drops the entry only where the memory under it
            # was replaced.
            with c.get(t) as r:
                after = r.result
            trace.append([stale, first, dropped, after])
            del r
        del t
        pool.close()
        torch.cuda.empty_cache()
        c.close()
    print(f"control: {released} of {closed} pools gave their segments "
          f"back; the freed address came back {same} times, {replaced} "
          f"with the memory replaced, {seen} stale MRs served, purge found "
          f"{found}")
    return {"replaced": replaced, "seen": seen, "found": found,
            "same": same, "closed": closed, "released": released,
            "trace": trace}


CASES = {"expandable-span": expandable_span, "validated": validated,
         "trusted-pool": trusted_pool, "control": control}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        print(__doc__)
        sys.exit(2)
    print(json.dumps(CASES[sys.argv[1]]()))
