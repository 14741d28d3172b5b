#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""docs/errors.md against the code, both ways:
  - every message row: each fixed part of it (between the placeholder
    words) is in a string literal of lib/ (no row describes a message the
    library no longer makes);
  - every message the unit tests provoke (test-decide, -faults, -cache,
    -report, -multi, -rank, with GDR_MESSAGES_OUT): each reason in it matches the start
    of a row (no message the library makes is missing from the doc).

    check-docs.py SOURCE_ROOT BUILD_DIR"""
import glob
import os
import re
import subprocess
import sys
import tempfile

PLACEHOLDERS = ["PTR", "LEN", "BASE", "SIZE", "OFF", "TYPE", "N", "DEV", "NAME",
                "E", "CU", "V", "X", "..."]
PATHS = r"(?:data-direct|dmabuf|peermem|host)"


def literals(src):
    out = []
    for path in glob.glob(os.path.join(src, "lib", "**", "*.c"), recursive=True):
        text = re.sub(r"/\*.*?\*/", " ", open(path).read(), flags=re.S)
        for m in re.finditer(r'"(?:[^"\\\n]|\\.)*"(?:\s*"(?:[^"\\\n]|\\.)*")*', text):
            out.append("".join(re.findall(r'"((?:[^"\\\n]|\\.)*)"', m.group(0))))
    return out


SPEC = re.compile(r"%[-+ #0-9.*]*(?:ll|l|z|h)?[diouxXscpf%]")


def in_code(frag, lits):
    """Can some literal of lib/, its %-conversions filled in, contain
    @frag? (Messages fill names and numbers into their format strings.)"""
    words = [w for w in re.findall(r"[A-Za-z_]{5,}", frag)]
    for lit in lits:
        if words and not any(w in lit for w in words):
            continue
        if frag in lit:
            return True
        pieces = SPEC.split(lit)
        if len(pieces) < 2:
            continue
        # frag = (end of one piece) fill (piece) fill ... (start of another)
        for i in range(len(pieces)):
            for j in range(i + 1, len(pieces)):
                rx = "(?:%s)?" % "|".join(re.escape(pieces[i][k:])
                                         for k in range(len(pieces[i]) + 1))
                for mid in pieces[i + 1:j]:
                    rx += ".+?" + re.escape(mid)
                rx += ".+?(?:%s)?" % "|".join(re.escape(pieces[j][:k])
                                            for k in range(len(pieces[j]) + 1))
                if re.fullmatch(rx, frag, re.S):
                    return True
    return False


def rows(path):
    out = []
    for line in open(path):
        cells = [c.strip() for c in line.split("|")]
        if len(cells) < 4 or not cells[2].startswith("`"):
            continue
        out.append(cells[2].strip("`"))
    return out


def split(row):
    """The row's fixed parts and its regex."""
    words = "|".join(re.escape(p) for p in PLACEHOLDERS)
    tokens = re.split(r"(\.\.\.|\b(?:%s)\b)" % words, row)
    fixed, rx = [], ""
    for t in tokens:
        if t in PLACEHOLDERS:
            rx += ".*" if t == "..." else ".+?"
        else:
            fixed.append(t)
            rx += re.escape(t)
    return fixed, re.compile(rx, re.S)


# Prefixes that say which call or what failed, before the reason itself.
PREFIXES = [r"cannot export \[.*?\): ", r"gdr_export_recv: the fds received do not match: ",
            r"gdr_export_recv: (?=the |recvmsg)"]


def reasons(msg):
    for pre in PREFIXES:
        msg = re.sub("^" + pre, "", msg, flags=re.S)
    m = re.match(r"cannot register \[.*?\) \(.*?\) with [^:]+: (.*)$", msg, re.S)
    if not m:
        return [msg]
    parts = re.split(r"(?:^|; )%s (?:skipped|failed): " % PATHS, m.group(1))
    return [p for p in parts if p]


def main():
    src, build = sys.argv[1], sys.argv[2]
    lits = literals(src)
    table = rows(os.path.join(src, "docs/errors.md"))
    bad = 0
    compiled = []
    for row in table:
        fixed, rx = split(row)
        compiled.append((row, rx))
        for part in fixed:
            part = part.strip(" ;:,()")
            if len(part) >= 10 and not in_code(part, lits):
                print("FAIL docs/errors.md: %r is in no string of lib/ (row %r)" % (part, row))
                bad += 1
    env = dict(os.environ, GLIBC_TUNABLES="glibc.malloc.tcache_count=0")
    with tempfile.TemporaryDirectory() as tmp:
        env["GDR_MESSAGES_OUT"] = os.path.join(tmp, "messages")
        for test, args in [("test-decide", []), ("test-faults", []), ("test-cache", []),
                           ("test-report", []), ("test-faults-alloc", ["alloc"]),
                           ("test-multi", []), ("test-multi-fail", []), ("test-rank", []),
                           ("test-share", []), ("test-share-attack", []),
                           ("test-share-edges", []), ("test-share-import", [])]:
            try:
                rc = subprocess.run([os.path.join(build, "tests/unit", test)] + args,
                                    env=env, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, timeout=120).returncode
            except subprocess.TimeoutExpired:
                print("FAIL %s did not finish within 120 s" % test)
                return 1
            if rc not in (0, 77):
                print("FAIL %s failed (exit %d): fix it first" % (test, rc))
                return 1
        msgs = set(open(env["GDR_MESSAGES_OUT"]).read().splitlines())
    missing = set()
    for msg in sorted(msgs):
        for r in reasons(msg):
            if not any(rx.match(r) for _, rx in compiled):
                missing.add(r)
    for r in sorted(missing):
        print("FAIL no row of docs/errors.md starts this message: %r" % r[:200])
        bad += 1
    # The README's table of settings against the names the library reads
    # (lib/node/env.c's gdr_env_names), and no other file reading one.
    env_c = open(os.path.join(src, "lib", "node", "env.c")).read()
    table_c = re.search(r"gdr_env_names\[\] = \{(.*?)\};", env_c, re.S)
    names = set(re.findall(r'"(GPUDIRECT_[A-Z_]+)"', table_c.group(1) if table_c else ""))
    readme = open(os.path.join(src, "README.md")).read()
    documented = set()
    for line in readme.splitlines():
        if line.startswith("| `GPUDIRECT_"):
            documented |= set(re.findall(r"`(GPUDIRECT_[A-Z_]+)`", line.split("|")[1]))
    for n in sorted(names - documented):
        print("FAIL README.md's settings table lacks %s (lib/node/env.c reads it)" % n)
        bad += 1
    for n in sorted(documented - names):
        print("FAIL README.md documents %s, which lib/node/env.c does not read" % n)
        bad += 1
    for path in glob.glob(os.path.join(src, "lib", "**", "*.c"), recursive=True):
        if path.endswith(os.path.join("node", "env.c")):
            continue
        code = re.sub(r"/\*.*?\*/", " ", open(path).read(), flags=re.S)
        if re.search(r"getenv\s*\(", code):
            print("FAIL %s reads the environment; only lib/node/env.c may"
                  % os.path.relpath(path, src))
            bad += 1
    print("docs: %d rows in docs/errors.md, %d messages from the tests; %d problems" %
          (len(table), len(msgs), bad))
    return 1 if bad else 0


sys.exit(main())
