#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The mutation check: apply each mutant of mutants.txt to a scratch copy of
the tree, build, run the tests it names, and say caught or survived. The
mutants for the Soft-RoCE guest are built side by side and run in one boot.

    run-mutants.py OUTDIR [NAME...]

Exits 1 if any mutant survived or no longer applies (its lines are gone)."""
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))


def parse(path):
    mutants, cur, edit = [], None, None
    for raw in open(path):
        line = raw.rstrip("\n")
        if line.startswith("#") or (not line.strip() and edit is None):
            continue
        m = re.match(r"^\[(.+)\]$", line)
        if m:
            cur = {"name": m.group(1), "tests": [], "edits": [], "why": ""}
            mutants.append(cur)
            edit = None
            continue
        if not line.strip():
            edit = None
            continue
        if line.startswith("why: "):
            cur["why"] = line[5:]
        elif line.startswith("tests: "):
            cur["tests"] = line[7:].split()
        elif line.startswith("file: "):
            edit = {"file": line[6:].strip(), "minus": [], "plus": []}
            cur["edits"].append(edit)
        elif line.startswith("-") and edit is not None:
            edit["minus"].append(line[1:])
        elif line.startswith("+") and edit is not None:
            edit["plus"].append(line[1:])
        else:
            raise SystemExit("mutants.txt: cannot read line: %r" % line)
    return mutants


def apply(root, mutant):
    """Apply in place; returns {path: original text} or an error string."""
    saved = {}
    for e in mutant["edits"]:
        path = os.path.join(root, e["file"])
        text = saved.get(path) or open(path).read()
        lines = open(path).read().split("\n")
        n, at = len(e["minus"]), []
        for i in range(len(lines) - n + 1):
            if lines[i:i + n] == e["minus"]:
                at.append(i)
        if len(at) != 1:
            for p, t in saved.items():
                open(p, "w").write(t)
            return "%s: the '-' lines match %d times, not once (the code " \
                   "changed: update the mutant)" % (e["file"], len(at))
        saved.setdefault(path, text)
        lines[at[0]:at[0] + n] = e["plus"]
        open(path, "w").write("\n".join(lines))
    return saved


def run(cmd, log, timeout=600, env=None):
    with open(log, "w") as f:
        try:
            return subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT,
                                  timeout=timeout, env=env).returncode
        except subprocess.TimeoutExpired:
            return 124


def copy_tree(dst):
    files = subprocess.run(["git", "-C", TOP, "ls-files", "-co", "--exclude-standard", "-z"],
                           capture_output=True, check=True).stdout.split(b"\0")
    for f in files:
        if not f:
            continue
        f = f.decode()
        src = os.path.join(TOP, f)
        if not os.path.lexists(src):
            continue
        os.makedirs(os.path.dirname(os.path.join(dst, f)), exist_ok=True)
        shutil.copy2(src, os.path.join(dst, f), follow_symlinks=False)


VM_TARGETS = ["tools/gdr-info/gdr-info", "examples/gdr-register-one",
              "examples/gdr-write-bw", "tests/vm/test-vm", "tests/vm/vm-syscalls"]


def main():
    out = os.path.abspath(sys.argv[1])
    only = set(sys.argv[2:])
    mutants = [m for m in parse(os.path.join(HERE, "mutants.txt"))
               if not only or m["name"] in only]
    shutil.rmtree(out, ignore_errors=True)
    src, build = os.path.join(out, "src"), os.path.join(out, "b")
    os.makedirs(out)
    copy_tree(src)
    t0 = time.time()
    if run(["meson", "setup", build, src], os.path.join(out, "setup.log")) or \
            run(["ninja", "-C", build], os.path.join(out, "build.log")):
        print("FAIL: the unmutated tree does not build (%s)" % out)
        return 1
    unit = [m for m in mutants if "vm" not in m["tests"]]
    vm = [m for m in mutants if "vm" in m["tests"]]
    names = sorted({t for m in unit for t in m["tests"]})
    if run(["meson", "test", "-C", build, "--no-rebuild"] + names,
           os.path.join(out, "baseline.log")):
        print("FAIL: the tests fail without any mutant (%s/baseline.log)" % out)
        return 1
    results = []
    for m in unit:
        saved = apply(src, m)
        if isinstance(saved, str):
            results.append((m, "INVALID", saved))
            continue
        log = os.path.join(out, m["name"] + ".log")
        try:
            if run(["ninja", "-C", build], log):
                results.append((m, "INVALID", "does not build (%s)" % log))
                continue
            rc = run(["meson", "test", "-C", build, "--no-rebuild"] + m["tests"], log)
            results.append((m, "caught" if rc else "SURVIVED", ""))
        finally:
            for p, t in saved.items():
                open(p, "w").write(t)
    if vm:
        dirs = []
        for m in vm:
            msrc = os.path.join(out, "vm-" + m["name"])
            shutil.copytree(src, msrc, symlinks=True)
            saved = apply(msrc, m)
            if isinstance(saved, str):
                results.append((m, "INVALID", saved))
                continue
            mb = os.path.join(msrc, "b")
            log = os.path.join(out, m["name"] + ".log")
            if run(["meson", "setup", mb, msrc], log) or \
                    run(["ninja", "-C", mb] + VM_TARGETS, log):
                results.append((m, "INVALID", "does not build (%s)" % log))
                continue
            dirs.append((m, mb))
        if dirs:
            driver = os.path.join(out, "guest-mutants.sh")
            # The tree (and the builds in it) is read-only in the guest: the
            # logs go to the guest's /tmp, and each mutant's last line (the
            # suite's "vm: N passed, M failed") comes back with its status.
            with open(driver, "w") as f:
                for m, mb in dirs:
                    f.write("sh %s/tests/vm/guest-tests.sh %s > /tmp/guest.log 2>&1\n"
                            "echo \"mutant %s $? $(tail -n 1 /tmp/guest.log)\"\n"
                            "grep '^FAIL' /tmp/guest.log | head -n 5\n"
                            % (src, mb, m["name"]))
            env = dict(os.environ, GDR_VM_BUILD=out)
            log = os.path.join(out, "vm.log")
            run(["bash", os.path.join(TOP, "tests/vm/vm.sh"), "run", "sh", driver],
                log, timeout=1800, env=env)
            seen = {n: (rc, rest) for n, rc, rest in
                    re.findall(r"^mutant (\S+) (\d+) ?(.*)$", open(log).read(), re.M)}
            for m, mb in dirs:
                got = seen.get(m["name"])
                if got is None:
                    results.append((m, "INVALID", "the guest gave no result (%s)" % log))
                    continue
                rc, rest = got
                summary = re.match(r"vm: (\d+) passed, (\d+) failed", rest)
                if not summary:
                    # The suite did not run to its end: that proves nothing.
                    results.append((m, "INVALID", "the guest suite did not finish: %r (%s)"
                                    % (rest, log)))
                elif rc != "0" and int(summary.group(2)) > 0:
                    results.append((m, "caught", "in the guest: " + rest))
                else:
                    results.append((m, "SURVIVED", "in the guest: " + rest))
    bad = 0
    for m, res, note in results:
        print("%-9s %-30s %s%s" % (res, m["name"], m["why"], ("  [" + note + "]") if note else ""))
        bad += res != "caught"
    caught = len(results) - bad
    print("mutants: %d caught, %d survived or invalid, in %.0f s" %
          (caught, bad, time.time() - t0))
    print("%d passed, %d failed" % (caught, bad))
    return 1 if bad else 0


sys.exit(main())
