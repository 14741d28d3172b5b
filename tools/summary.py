#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The closing lines of tools/run.sh test: every skip with its reason, then
'N passed, N failed, N skipped' over the meson test logs given and the
other steps (--steps FILE: lines 'ok|skip|fail NAME').

    summary.py [--steps FILE] TESTLOG.json..."""
import json
import sys


def main():
    args = sys.argv[1:]
    steps = None
    if args[:1] == ["--steps"]:
        steps, args = args[1], args[2:]
    counts = {"OK": 0, "FAIL": 0, "SKIP": 0}
    for f in args:
        try:
            lines = open(f).readlines()
        except OSError:
            continue
        for line in lines:
            r = json.loads(line)
            res = r["result"]
            key = "OK" if res == "OK" else "SKIP" if res == "SKIP" else "FAIL"
            counts[key] += 1
            if key == "SKIP":
                out = (r.get("stdout") or "").strip().splitlines()
                print("skipped: %s: %s" % (r["name"], out[-1] if out
                                           else "no reason given"))
            elif key == "FAIL":
                print("failed: %s (%s)" % (r["name"], res))
    if steps:
        for line in open(steps):
            res, _, name = line.strip().partition(" ")
            key = {"ok": "OK", "skip": "SKIP"}.get(res, "FAIL")
            counts[key] += 1
            if key == "SKIP":
                print("skipped: %s (see its output above)" % name)
            elif key == "FAIL":
                print("failed: %s" % name)
    print("%d passed, %d failed, %d skipped" % (counts["OK"], counts["FAIL"],
                                               counts["SKIP"]))


main()
