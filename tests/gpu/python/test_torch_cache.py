# SPDX-License-Identifier: MIT
"""The cache under PyTorch's caching allocator on a real GPU (the
stand-in verbs in place of the NIC), every MR served checked against the
CUDA driver's ground truth: the validated cache with the default
allocator and with expandable segments; a trusted cache kept exact by a
gpudirect.torch.TrustedPool (free and reuse, empty_cache(), also with
expandable segments set); and the control, a trusted cache whose promise
is broken, where the check must see a stale MR. Each in a fresh
interpreter (torch_cases.py)."""

from __future__ import annotations

import unittest

from gpu_support import child, torch_cuda

torch_cuda()
EXPANDABLE = {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}


def check_churn(out: dict) -> None:
    assert out["stale"] == 0, out
    assert out["gets"] == 3000 and out["hits"] > 0, out
    assert out["reuses"] > 10, out  # addresses came back: the case bites
    assert out["empty_cache"] > 10 and out["in_use"] == 0, out


def test_validated_cache_default_allocator():
    check_churn(child("torch_cases.py", "validated"))


def test_validated_cache_expandable_segments():
    check_churn(child("torch_cases.py", "validated", EXPANDABLE))


def check_pool(out: dict) -> None:
    check_churn(out)
    # Its end gave every segment back, each heard by the cache first; a
    # second pool in the same addresses was served no MR of the first.
    assert out["segments_freed"] == out["segments_made"] > 0, out
    assert out["invalidations_heard"] > 0, out
    assert out["second_stale"] == 0 and out["second_gets"] == 1000, out
    assert out["refused_outside"], out


def test_trusted_cache_with_a_trusted_pool():
    check_pool(child("torch_cases.py", "trusted-pool"))


def test_trusted_pool_under_expandable_segments():
    check_pool(child("torch_cases.py", "trusted-pool", EXPANDABLE))


def test_control_a_broken_promise_is_seen():
    out = child("torch_cases.py", "control")
    # Each round the memory was replaced under a trusted entry, the
    # trusted get served the stale MR (the ground truth saw it) and the
    # purge found it; a round where it was not replaced is a hit, kept.
    for stale, first, dropped, after in out["trace"]:
        assert first == "hit", out
        assert (dropped > 0) == stale and after == \
            ("miss" if stale else "hit"), out
    # Every pool ended gave its segment back to the driver (else no
    # address could come back, and the skip below would hide it).
    assert out["released"] == out["closed"] == 20, out
    if not out["replaced"]:
        raise unittest.SkipTest("the driver never gave a freed address "
                                "back over new memory in 20 rounds: %r"
                                % out)
    assert out["seen"] == out["found"] == out["replaced"], out
