# SPDX-License-Identifier: MIT
"""The registration cache under PyTorch's allocators, on a real GPU, with
the recording verbs standing in for the NIC (tests/gpu/torch-helper.c).
Every MR the cache hands out is checked against the ground truth: every
mapping under the range it serves must still be the one it registered.

  expandable  PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: two
              adjacent tensors (40 MiB, then 160 MiB) got as one range, the
              second freed and emptied, a new 160 MiB tensor at the same
              address: the next get over both must register again; then a
              churn of tensors, every MR checked
  default     the default caching allocator: the same churn
  trusted     GDR_CACHE_TRUSTED with a CUDAPluggableAllocator that calls
              gdr_cache_invalidate() before cuMemFree: a churn with no
              stale MR, and no driver question on a hit
  control     the same allocator breaking the promise (no invalidate): the
              check must see a stale MR (so it can fail), and
              gdr_cache_purge() must find it

usage: test-torch.py HELPER.so MODE; exits 77 without torch or a GPU.
"""
import ctypes
import os
import random
import sys

MiB = 1 << 20
HIT, MISS, UNCACHED = 1, 2, 3
TRUSTED = 1 << 2

helper_path, mode = sys.argv[1], sys.argv[2]
if mode == "expandable":
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
try:
    import torch
except ImportError:
    print("SKIP: PyTorch is not installed (the gpu machine has it)")
    sys.exit(77)
if not torch.cuda.is_available():
    print("SKIP: no CUDA device for PyTorch")
    sys.exit(77)

h = ctypes.CDLL(os.path.abspath(helper_path))
h.gt_get.restype = ctypes.c_void_p
h.gt_get.argtypes = [ctypes.c_uint64, ctypes.c_uint64, ctypes.POINTER(ctypes.c_int)]
h.gt_put.argtypes = [ctypes.c_void_p]
h.gt_stale.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64]
h.gt_invalidate.argtypes = [ctypes.c_uint64, ctypes.c_uint64]
h.gt_queries.restype = ctypes.c_long
h.gt_error.restype = ctypes.c_char_p
h.gt_init.argtypes = [ctypes.c_uint]

failures = []
checks = 0


def check(ok, what):
    global checks
    checks += 1
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def stats():
    out = (ctypes.c_uint64 * 6)()
    h.gt_stats(out)
    return dict(zip(["hits", "misses", "stale", "entries", "in_use", "uncached"], out))


def get(ptr, length):
    r = ctypes.c_int(0)
    mr = h.gt_get(ptr, length, ctypes.byref(r))
    if not mr:
        print("get failed:", h.gt_error().decode())
    return mr, r.value


class Churn:
    """Random tensors allocated and freed, gets over live ones and over
    neighbours, every MR against the ground truth."""

    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.live = []
        self.stale = self.gets = self.hits = self.reuses = 0
        self.freed = set()

    def step(self, empty_every=17):
        rng = self.rng
        if len(self.live) < 8 or rng.random() < 0.4:
            n = rng.choice([1, 2, 3, 8, 20, 40]) * MiB + rng.randrange(0, 4) * 4096
            t = torch.empty(n, dtype=torch.uint8, device="cuda")
            if t.data_ptr() in self.freed:
                self.reuses += 1
            self.live.append(t)
        if len(self.live) > 4 and rng.random() < 0.4:
            t = self.live.pop(rng.randrange(len(self.live)))
            self.freed.add(t.data_ptr())
            del t
            if rng.randrange(empty_every) == 0:
                torch.cuda.empty_cache()
        t = rng.choice(self.live)
        off = rng.randrange(0, t.numel() // 2) & ~4095
        length = rng.randrange(1, t.numel() - off + 1)
        mr, r = get(t.data_ptr() + off, length)
        check(mr is not None, "a get during the churn")
        if not mr:
            return
        self.gets += 1
        self.hits += r == HIT
        bad = h.gt_stale(mr, t.data_ptr() + off, length)
        check(bad == 0, "MR %#x served for [%#x, +%d) is %s" %
              (mr, t.data_ptr() + off, length, "stale" if bad > 0 else "without ground truth"))
        self.stale += bad > 0
        check(h.gt_put(mr) == 0, "a put")


def finish():
    st = stats()
    check(st["in_use"] == 0, "nothing in use at the end")
    check(h.gt_destroy() == 0, "destroy")
    check(h.gt_live_mrs() == 0, "no MR left")
    print("%d passed, %d failed" % (checks - len(failures), len(failures)))
    sys.exit(1 if failures else 0)


torch.zeros(1, device="cuda") if mode not in ("trusted", "control") else None

if mode == "expandable":
    check(h.gt_init(0) == 0, "init: %s" % h.gt_error().decode())
    x = torch.empty(40 * MiB, dtype=torch.uint8, device="cuda")
    y = torch.empty(160 * MiB, dtype=torch.uint8, device="cuda")
    a, span = x.data_ptr(), 200 * MiB
    check(y.data_ptr() == a + 40 * MiB, "y right after x (the allocator's layout)")
    mr, r = get(a, span)
    check(r == MISS and h.gt_stale(mr, a, span) == 0, "first get over both: a miss")
    h.gt_put(mr)
    mr, r = get(a, span)
    check(r == HIT, "second get over both: a hit")
    h.gt_put(mr)
    del y
    torch.cuda.empty_cache()
    z = torch.empty(160 * MiB, dtype=torch.uint8, device="cuda")
    check(z.data_ptr() == a + 40 * MiB, "the new tensor at the old address")
    mr, r = get(a, span)
    check(r != HIT, "the get over x and the new tensor is not a hit (got %d)" % r)
    check(h.gt_stale(mr, a, span) == 0, "and its MR is not stale")
    h.gt_put(mr)
    check(stats()["stale"] >= 1, "the cache saw the old entry stale")
    print("expandable segments: span case: %s" % stats())
    del x, z
    c = Churn(1)
    for _ in range(3000):
        c.step()
    print("churn: %d gets, %d hits, %d addresses reused, %d stale MRs"
          % (c.gets, c.hits, c.reuses, c.stale))
    check(c.reuses > 10, "the churn reused addresses (%d)" % c.reuses)
    c.live.clear()
    finish()

if mode == "default":
    check(h.gt_init(0) == 0, "init: %s" % h.gt_error().decode())
    c = Churn(2)
    for _ in range(3000):
        c.step(empty_every=5)
    print("churn: %d gets, %d hits, %d addresses reused, %d stale MRs"
          % (c.gets, c.hits, c.reuses, c.stale))
    check(c.reuses > 10, "the churn reused addresses (%d)" % c.reuses)
    c.live.clear()
    finish()

if mode in ("trusted", "control"):
    alloc = torch.cuda.memory.CUDAPluggableAllocator(
        os.path.abspath(helper_path), "gt_malloc", "gt_free")
    torch.cuda.memory.change_current_allocator(alloc)
    torch.zeros(1, device="cuda")
    check(h.gt_init(TRUSTED) == 0, "init: %s" % h.gt_error().decode())

if mode == "trusted":
    c = Churn(3)
    for _ in range(300):
        c.step()
    # Hits ask the driver nothing: the same MRs again, counted.
    t = c.live[0]
    mr, r = get(t.data_ptr(), t.numel())
    h.gt_put(mr)
    q0 = h.gt_queries()
    for _ in range(1000):
        mr, r = get(t.data_ptr(), t.numel())
        check(r == HIT, "a trusted hit") if r != HIT else None
        h.gt_put(mr)
    q1 = h.gt_queries()
    check(q1 == q0, "1000 trusted hits asked the driver %d questions" % (q1 - q0))
    for _ in range(3000):
        c.step()
    print("trusted churn: %d gets, %d hits, %d addresses reused, %d stale MRs; "
          "1000 hits, %d driver questions" % (c.gets, c.hits, c.reuses, c.stale, q1 - q0))
    check(c.reuses > 10, "the churn reused addresses (%d)" % c.reuses)
    c.live.clear()
    finish()

if mode == "control":
    # The promise broken: freed without gdr_cache_invalidate().
    h.gt_set_invalidate_on_free(0)
    seen = 0
    for i in range(20):
        t = torch.empty(8 * MiB, dtype=torch.uint8, device="cuda")
        p = t.data_ptr()
        mr, r = get(p, t.numel())
        h.gt_put(mr)
        del t
        u = torch.empty(8 * MiB, dtype=torch.uint8, device="cuda")
        if u.data_ptr() == p:
            mr, r = get(p, u.numel())
            if r == HIT and h.gt_stale(mr, p, u.numel()) == 1:
                seen += 1
            h.gt_put(mr)
            st0 = stats()["stale"]
            check(h.gt_purge() == 0, "purge")
            check(stats()["stale"] == st0 + 1, "purge found the entry of freed memory")
            mr, r = get(p, u.numel())
            check(r == MISS and h.gt_stale(mr, p, u.numel()) == 0,
                  "after purge: registered again")
            h.gt_put(mr)
        h.gt_set_invalidate_on_free(1)
        del u
        h.gt_set_invalidate_on_free(0)
    print("control: %d stale MRs served once the promise was broken" % seen)
    check(seen > 0, "the ground truth saw a stale MR (the check can fail)")
    h.gt_set_invalidate_on_free(1)
    finish()

print("unknown mode", mode)
sys.exit(2)
