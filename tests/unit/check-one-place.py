#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every threshold and every remedy sentence of the library exists in
exactly one place: lib/node/thresholds.h holds the thresholds,
lib/node/conditions.c and lib/doctor/facts.c the remedies; no other string
literal in lib/ repeats a remedy or a long sentence, and no C file states
a threshold but in the remedies' words.

    check-one-place.py SOURCE_ROOT"""
import glob
import os
import re
import sys

THRESHOLDS = [
    (r"\b11070\b", "CUDA 11.7 (DMA-BUF export)"),
    (r"\b12080\b", "CUDA 12.8 (PCIe mapping)"),
    (r"\b5\s*,\s*12\b|\"5\.12|\b5\.12\b", "Linux 5.12"),
]


def literals(path):
    """The string literals of a C file, adjacent ones joined, with lines."""
    text = open(path).read()
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text,
                  flags=re.S)
    out = []
    for m in re.finditer(r'"(?:[^"\\\n]|\\.)*"(?:\s*"(?:[^"\\\n]|\\.)*")*', text):
        parts = re.findall(r'"((?:[^"\\\n]|\\.)*)"', m.group(0))
        out.append(("".join(parts), text.count("\n", 0, m.start()) + 1))
    return out


def main():
    src = sys.argv[1]
    problems = []
    files = sorted(glob.glob(os.path.join(src, "lib", "**", "*.c"), recursive=True))
    lits = {f: literals(f) for f in files}
    homes = [os.path.join(src, "lib", "node", "conditions.c"),
             os.path.join(src, "lib", "doctor", "facts.c")]
    remedies = [s for h in homes for s, _ in lits[h] if len(s) >= 25]
    for f in files:
        name = os.path.relpath(f, src)
        for s, line in lits[f]:
            if f in homes:
                continue
            for r in remedies:
                if r in s or (len(s) >= 30 and s in r):
                    problems.append("%s:%d repeats a remedy of conditions.c or "
                                    "facts.c: \"%s\"" % (name, line, s[:70]))
        code = re.sub(r"/\*.*?\*/", " ", open(f).read(), flags=re.S)
        # The remedies say the thresholds in words; no other file may.
        for rx, what in THRESHOLDS if f not in homes else ():
            if re.search(rx, code):
                problems.append("%s states the %s threshold; it belongs "
                                "in lib/node/thresholds.h" % (name, what))
    seen = {}
    for f in files:
        for s, line in lits[f]:
            if len(s) < 40 or "%" in s[:3]:
                continue
            where = "%s:%d" % (os.path.relpath(f, src), line)
            if s in seen:
                problems.append("%s repeats the sentence of %s: \"%s\""
                                % (where, seen[s], s[:70]))
            seen.setdefault(s, where)
    for p in problems:
        print("FAIL " + p)
    print("one place: %d literals in %d files checked" % (
        sum(len(v) for v in lits.values()), len(files)))
    print("%d passed, %d failed" % (0 if problems else 1, 1 if problems else 0))
    return 1 if problems else 0


sys.exit(main())
