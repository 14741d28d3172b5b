#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The errno contract (tests/unit/errnos.txt): run the unit tests that call
the public API with GDR_ERRNOS_OUT set, then check that
  - every errno a call returned is listed for it (or passed on from verbs
    or stdio where the contract says so; 524 never reaches a caller),
  - every listed errno was returned by some test (except those marked ~),
  - each man page's ERRORS section names exactly the errnos of the calls
    it documents.

    check-errnos.py SOURCE_ROOT BUILD_DIR"""
import os
import re
import subprocess
import sys
import tempfile

# What the fakes pass through; EOPNOTSUPP: a verbs call answering the
# kernel's internal 524, which reaches the caller as EOPNOTSUPP.
VERBS_OK = {"EBUSY", "EIO", "EOPNOTSUPP"}


def contract(path):
    calls = {}
    for line in open(path):
        line = line.split("#", 1)[0].split()
        if not line:
            continue
        call, page, items = line[0], line[1], line[2:]
        calls[call] = {"page": page, "items": items}
    out = {}

    def resolve(call):
        if call in out:
            return out[call]
        c = calls[call]
        listed, undriven, extra, parent, minus = set(), set(), set(), None, set()
        for it in c["items"]:
            if it.startswith("="):
                parent = it[1:]
            elif it.startswith("-"):
                minus.add(it[1:])
            elif it.startswith("+"):
                extra.add(it[1:])
            elif it.endswith("~"):
                undriven.add(it[:-1])
                listed.add(it[:-1])
            else:
                listed.add(it)
        if parent:
            p = resolve(parent)
            listed |= p["listed"] - minus
            extra |= p["extra"]
        out[call] = {"page": c["page"], "listed": listed, "undriven": undriven,
                     "extra": extra, "parent": parent, "minus": minus}
        return out[call]

    for call in calls:
        resolve(call)
    return out


def main():
    src, build = sys.argv[1], sys.argv[2]
    want = contract(os.path.join(src, "tests/unit/errnos.txt"))
    seen = {}
    env = dict(os.environ, GLIBC_TUNABLES="glibc.malloc.tcache_count=0")
    with tempfile.TemporaryDirectory() as tmp:
        env["GDR_ERRNOS_OUT"] = os.path.join(tmp, "errnos")
        for test, args in [("test-decide", []), ("test-faults", []), ("test-cache", []),
                           ("test-report", []), ("test-faults-alloc", ["alloc"]),
                           ("test-multi", []), ("test-multi-fail", []), ("test-rank", []),
                           ("test-share", []), ("test-share-attack", []),
                           ("test-share-edges", []), ("test-share-import", [])]:
            exe = os.path.join(build, "tests/unit", test)
            try:
                rc = subprocess.run([exe] + args, env=env, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, timeout=120).returncode
            except subprocess.TimeoutExpired:
                print("FAIL %s did not finish within 120 s" % test)
                return 1
            if rc not in (0, 77):
                print("FAIL %s failed (exit %d): fix it first" % (test, rc))
                return 1
        for line in open(env["GDR_ERRNOS_OUT"]):
            call, err = line.split()
            seen.setdefault(call, set()).add(err)
    bad = 0
    for call, errs in sorted(seen.items()):
        c = want.get(call)
        if not c:
            print("FAIL %s is not in errnos.txt" % call)
            bad += 1
            continue
        for e in sorted(errs):
            ok = e in c["listed"] or ("verbs" in c["extra"] and e in VERBS_OK) or \
                ("stdio" in c["extra"] and e not in {"unknown"}) or \
                ("socket" in c["extra"] and e not in {"unknown"})
            if e == "unknown" or not ok:
                print("FAIL %s returned %s, which errnos.txt does not list" % (call, e))
                bad += 1
    for call, c in sorted(want.items()):
        driven = set(seen.get(call, ()))
        if c["parent"]:
            driven |= seen.get(c["parent"], set()) - c["minus"]
        for e in sorted(c["listed"] - c["undriven"] - driven):
            print("FAIL %s: no test drives %s" % (call, e))
            bad += 1
    # The man pages.
    pages = {}
    for call, c in want.items():
        p = pages.setdefault(c["page"], {"listed": set(), "extra": set()})
        p["listed"] |= c["listed"]
        p["extra"] |= c["extra"]
    for page, p in sorted(pages.items()):
        text = open(os.path.join(src, "docs/man", page)).read()
        m = re.search(r"^\.SH ERRORS\n(.*?)(?=^\.SH )", text, re.S | re.M)
        if not m:
            print("FAIL %s has no ERRORS section" % page)
            bad += 1
            continue
        named = set(re.findall(r"^\.B (E[A-Z0-9]+)\b", m.group(1), re.M))
        for e in sorted(p["listed"] - named):
            print("FAIL %s: ERRORS does not name %s" % (page, e))
            bad += 1
        for e in sorted(named - p["listed"]):
            print("FAIL %s: ERRORS names %s, which errnos.txt does not list" % (page, e))
            bad += 1
        if ("verbs" in p["extra"] or "stdio" in p["extra"]) and \
                "passed on" not in m.group(1):
            print("FAIL %s: ERRORS does not say that verbs errnos are passed on" % page)
            bad += 1
    total = sum(len(c["listed"]) for c in want.values())
    print("errno contract: %d calls, %d listed errnos, %d distinct (call, errno) seen; "
          "%d problems" % (len(want), total, sum(len(v) for v in seen.values()), bad))
    return 1 if bad else 0


sys.exit(main())
