#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Mutants nobody chose: universalmutator's C rules over lib/ and
tools/gdr-info/, and a fixed-seed sample of them that compiles, written as
tests/mutants/generated.txt in mutants.txt's format.

    generate.py BUILD_DIR [--per-file-min 3] [--total 200] [--seed 21]
    generate.py BUILD_DIR --files F... --per-file N --append [--seed S]
                [--since REV]

The second form samples N mutants of each named file (files that came
after the sample: a new sample of everything would lose the triage of
every survivor) and appends them as a block of their own. With --since,
only of the lines that changed since commit REV (new code in old files).

BUILD_DIR is a configured build of this tree (its compile_commands.json
gives each file's compiler command, for the compile check).
universalmutator comes from PyPI (pinned below) into BUILD_DIR-um/.

The sample is reproducible: the same sources, the same universalmutator
and the same seed give the same list. Mutants that change only comments
are dropped; the sample is drawn per file (at least --per-file-min each,
the rest in proportion to how many mutants a file has) from those that
compile. Each is written with enough lines around it to match exactly one
place, so that unrelated edits elsewhere do not invalidate it."""
import argparse
import json
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
PIN = "universalmutator==1.14.1"
DIRS = ["lib/base", "lib/os", "lib/node", "lib/backends", "lib/register",
        "lib/cache", "lib/doctor", "lib/preload", "lib/private",
        "tools/gdr-info"]


def strip_comments(text):
    """C source with comments blanked (strings and chars kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def tool(build):
    venv = os.path.abspath(build) + "-um"
    exe = os.path.join(venv, "bin", "mutate")
    if not os.path.exists(exe):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([os.path.join(venv, "bin", "pip"), "install", "-q",
                        "--disable-pip-version-check", PIN], check=True)
    return exe


def mutants_of(exe, path):
    """[(line index, new line)] for every single-line mutant of @path."""
    src = open(path).read().split("\n")
    with tempfile.TemporaryDirectory() as d:
        base = os.path.basename(path)
        shutil.copy(path, os.path.join(d, base))
        subprocess.run([exe, base, "c", "--noCheck", "--mutantDir", "m"], cwd=d,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        out = []
        stem = base[:-2]
        files = [f for f in os.listdir(os.path.join(d, "m"))
                 if re.fullmatch(re.escape(stem) + r"\.mutant\.\d+\.c", f)]
        for f in sorted(files, key=lambda f: int(f.split(".")[-2])):
            mut = open(os.path.join(d, "m", f)).read().split("\n")
            if len(mut) != len(src):
                continue
            diff = [i for i in range(len(src)) if src[i] != mut[i]]
            if len(diff) != 1:
                continue
            out.append((diff[0], mut[diff[0]]))
    # Only comments changed: not a mutant of the program.
    plain = strip_comments("\n".join(src)).split("\n")
    keep, seen = [], set()
    for i, new in out:
        if (i, new) in seen:
            continue
        seen.add((i, new))
        lines = list(src)
        lines[i] = new
        if strip_comments("\n".join(lines)).split("\n") == plain:
            continue
        keep.append((i, new))
    return src, keep


def changed_lines(rev, f):
    """The 0-based indices of @f's lines that are new since commit @rev."""
    out = subprocess.run(["git", "diff", "-U0", rev, "--", f], cwd=TOP,
                         capture_output=True, text=True, check=True).stdout
    lines = set()
    for m in re.finditer(r"^@@ -\S+ \+(\d+)(?:,(\d+))? @@", out, re.M):
        start, count = int(m.group(1)), int(m.group(2) or 1)
        lines.update(range(start - 1, start - 1 + count))
    return lines


def compiles(cmd, directory, path, src, i, new):
    lines = list(src)
    lines[i] = new
    args = shlex.split(cmd)
    # the command with the mutated text on stdin, checked only
    k = args.index("-o")
    del args[k:k + 2]
    if "-c" in args:
        args.remove("-c")
    while "-MD" in args:
        args.remove("-MD")
    for opt in ("-MQ", "-MF"):
        while opt in args:
            k = args.index(opt)
            del args[k:k + 2]
    srcarg = [a for a in args if os.path.abspath(os.path.join(directory, a)) == path]
    if not srcarg:
        return False
    k = args.index(srcarg[0])
    args[k:k + 1] = ["-x", "c", "-"]
    args += ["-fsyntax-only", "-iquote", os.path.dirname(path)]
    r = subprocess.run(args, cwd=directory, input="\n".join(lines),
                       capture_output=True, text=True)
    return r.returncode == 0


def context(src, i):
    """The smallest window around line @i that occurs once in @src."""
    for k in range(0, 8):
        lo, hi = max(0, i - k), min(len(src), i + k + 1)
        block = src[lo:hi]
        hits = sum(1 for j in range(len(src) - len(block) + 1)
                   if src[j:j + len(block)] == block)
        if hits == 1:
            return lo, hi
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--per-file-min", type=int, default=3)
    ap.add_argument("--total", type=int, default=200)
    ap.add_argument("--seed", type=int, default=21)
    ap.add_argument("--out", default=os.path.join(HERE, "generated.txt"))
    ap.add_argument("--files", nargs="+", default=None,
                    help="only these files (paths from the top)")
    ap.add_argument("--per-file", type=int, default=None,
                    help="exactly this many of each file (at most)")
    ap.add_argument("--append", action="store_true",
                    help="append a block to --out instead of rewriting it")
    ap.add_argument("--since", default=None,
                    help="only mutants of lines changed since this commit")
    a = ap.parse_args()
    if a.append and not a.files:
        raise SystemExit("--append samples named --files only")
    exe = tool(a.build)
    db = {}
    for e in json.load(open(os.path.join(a.build, "compile_commands.json"))):
        p = os.path.realpath(os.path.join(e["directory"], e["file"]))
        db.setdefault(p, e)
    files = []
    for d in DIRS:
        for f in sorted(os.listdir(os.path.join(TOP, d))):
            if f.endswith(".c"):
                files.append(os.path.join(d, f))
    if a.files:
        for f in a.files:
            if f not in files:
                raise SystemExit("%s: not a C file of %s" % (f, ", ".join(DIRS)))
        files = list(a.files)
    per = {}
    for f in files:
        src, muts = mutants_of(exe, os.path.join(TOP, f))
        if a.since:
            new = changed_lines(a.since, f)
            muts = [(i, m) for i, m in muts if i in new]
        per[f] = (src, muts)
    total = sum(len(m) for _, m in per.values())
    rng = random.Random(a.seed)
    chosen = []
    for f in files:
        src, muts = per[f]
        want = (a.per_file if a.per_file is not None else
                max(a.per_file_min, round(a.total * len(muts) / total)))
        order = list(range(len(muts)))
        rng.shuffle(order)
        path = os.path.realpath(os.path.join(TOP, f))
        e = db.get(path)
        if e is None:
            raise SystemExit("%s: not in compile_commands.json" % f)
        got = 0
        for k in order:
            if got == want:
                break
            i, new = muts[k]
            win = context(src, i)
            if win is None or not compiles(e["command"], e["directory"], path, src, i, new):
                continue
            chosen.append((f, k, i, new, win, src))
            got += 1
        print("%-32s %5d mutants, %3d sampled" % (f, len(muts), got))
    with open(a.out, "a" if a.append else "w") as o:
        if a.append:
            o.write("# Appended by tests/mutants/generate.py (%s, seed %d):\n"
                    "# %d of the %d mutants universalmutator makes of %s\n"
                    "# that came after the sample above (%s).\n"
                    "#   python3 tests/mutants/generate.py BUILD_DIR --files %s \\\n"
                    "#     --per-file %d --seed %d --append%s\n\n"
                    % (PIN, a.seed, len(chosen), total,
                       "the lines changed since %s in files" % a.since
                       if a.since else "files",
                       ", ".join(files), " ".join(files), a.per_file or 0,
                       a.seed, " --since %s" % a.since if a.since else ""))
        else:
            o.write("# SPDX-License-Identifier: MIT\n"
                    "# Generated by tests/mutants/generate.py (%s, seed %d):\n"
                    "# %d of the %d mutants universalmutator makes of lib/ and\n"
                    "# tools/gdr-info/, sampled per file from those that compile.\n"
                    "# Regenerate, do not edit:\n"
                    "#   python3 tests/mutants/generate.py BUILD_DIR\n"
                    "# except to carry a mutant whose lines changed (\"gone\" in the runner) to\n"
                    "# the code as it is now, the same mutation, its why: saying so, or to\n"
                    "# follow a file renamed with its code (its file: lines); a new sample\n"
                    "# would lose the triage of every survivor.\n"
                    "# tests: auto = the tests that link or read the file (run-mutants.py).\n\n"
                    % (PIN, a.seed, len(chosen), total))
        for f, k, i, new, (lo, hi), src in chosen:
            name = "gen-%s-%d" % (f.split("/")[-2] + "-" + os.path.basename(f)[:-2]
                                  if f.startswith("lib/") else os.path.basename(f)[:-2], k)
            o.write("[%s]\nwhy: universalmutator, %s:%d: %s\ntests: auto\nfile: %s\n"
                    % (name, f, i + 1, new.strip()[:100], f))
            for j in range(lo, hi):
                o.write("-" + src[j] + "\n")
            for j in range(lo, hi):
                o.write("+" + (new if j == i else src[j]) + "\n")
            o.write("\n")
    print("%d mutants sampled of %d, written to %s" % (len(chosen), total, a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
