#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The mutation check: apply each mutant to a scratch copy of the tree,
build, run the tests that can see it, and say caught or survived.

Two lists: mutants.txt, chosen by hand (a regression set: every one must
be caught; gpu.txt holds those only the GPU machine's tests can catch,
run there by NAME, and checked here only to still apply), and
generated.txt, made by universalmutator (generate.py), the measure: its
score is caught / (caught + survived), equivalent mutants (equivalent.txt,
or code that compiles to the same object) left out.
Every generated survivor is triaged once: a test that catches it, a line
in equivalent.txt (why it cannot change behaviour), or a line in
survivors.txt (a known gap, counted as survived).

    run-mutants.py OUTDIR [--all] [--slice N] [--hand-slice H] [--near-slice NEAR]
                   [--seed S] [NAME...]

Without --all (CI): of the hand list, at most NEAR (--near-slice, 40)
drawn of the mutants of the files the last RECENT commits changed and H
(--hand-slice, 30) more drawn of the rest, with seed S; of the generated
list, those of the files the last commit changed (at most N) and N more
drawn with seed S (default: the time, printed, so each run checks a
different slice; --seed repeats one). The whole hand list (some 525; 279
of them took 32 minutes on 2 cores) is more than CI's budget leaves: run
--all before a stop.
--all: every mutant of both lists, and the score. NAMEs: only those.

"tests: auto" runs the tests whose programs link the file (ninja's inputs)
and the checks that read sources (docs, errnos, one-place), those named
after the file first; the first failure ends a mutant's run. The mutants
for the Soft-RoCE guest are built whole, side by side, and run in one boot
after the unmutated tree: only a guest test that passes without the
mutant catches it.

Exits 1 if a hand mutant survived or no longer applies, a generated
mutant survived that neither list names (triage it), a listed equivalent
or known survivor is caught (the list is wrong: take it out), or, with
--all, the generated score is below 90%. A generated mutant whose lines
are gone (the code changed) counts for nothing: regenerate the list."""
import argparse
import concurrent.futures
import filecmp
import json
import os
import queue
import random
import re
import shutil
import stat
import signal
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


def stale(mutant):
    """Why @mutant no longer applies to the tree, or None (no build)."""
    for e in mutant["edits"]:
        if not os.path.exists(os.path.join(TOP, e["file"])):
            return "%s is not in the tree any more" % e["file"]
        lines = open(os.path.join(TOP, e["file"])).read().split("\n")
        n = len(e["minus"])
        at = sum(1 for i in range(len(lines) - n + 1) if lines[i:i + n] == e["minus"])
        if at != 1:
            return "%s: the '-' lines match %d times, not once (the code " \
                   "changed: update the mutant)" % (e["file"], at)
    return None


def apply(root, mutant):
    """Apply in place; returns {path: original text} or an error string."""
    saved = {}
    for e in mutant["edits"]:
        path = os.path.join(root, e["file"])
        if not os.path.exists(path):
            for p, t in saved.items():
                open(p, "w").write(t)
            return "%s is not in the tree any more (the code moved: " \
                   "update the mutant)" % e["file"]
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


def said_stale(mutant):
    """Whether @mutant no longer applies, said as a failure if so."""
    why = stale(mutant)
    if why:
        print("FAIL %s: %s" % (mutant["name"], why))
    return bool(why)


def run(cmd, log, timeout=600, env=None):
    """@cmd's exit status; 124 past @timeout, its whole process group
    stopped. meson test runs each test in a session of its own, out of
    that group's reach: it is asked first (SIGTERM: it stops its tests),
    then the group is killed."""
    with open(log, "a") as f:
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, env=env,
                             start_new_session=True)
        try:
            return p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            for sig, wait in ((signal.SIGTERM, 30), (signal.SIGKILL, None)):
                try:
                    os.killpg(p.pid, sig)
                    p.wait(timeout=wait)
                    break
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    pass
            p.wait()
            f.write("\n[killed after %d s]\n" % timeout)
            return 124


def special_files(d, names):
    """For copytree: what is neither a file, a directory nor a link (a
    FIFO or socket a test left) is not copied: reading a FIFO blocks."""
    out = []
    for n in names:
        st = os.lstat(os.path.join(d, n))
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)
                or stat.S_ISLNK(st.st_mode)):
            out.append(n)
    return out


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


SOURCE_CHECKS = ["docs", "errnos", "one-place"]
# Tests to try first for a file (by its stem); the rest follow.
FIRST = {
    "ranges": ["ranges", "cache"], "cache": ["cache", "cache-threads"],
    "vmem": ["cache", "cache-threads"], "gpudirect": ["decide", "faults"],
    "classify": ["decide", "faults"], "probe": ["decide", "report"],
    "env": ["decide", "cache"], "names": ["parse", "decide"],
    "parse": ["parse", "decide"], "model": ["conform", "decide"],
    "conditions": ["checks", "decide", "report"], "facts": ["report", "doctor-layouts"],
    "report": ["report", "doctor-layouts"], "report-print": ["doctor-layouts", "report"],
    "topology": ["report", "doctor-layouts"], "sysfs": ["report", "faults"],
    "cuda-loader": ["loader", "noload"], "nvml": ["loader", "report"],
    "error": ["errnos", "decide"], "private": ["private", "doctor-layouts", "report"],
    "preload": ["preload-internals", "preload"],
    "seam": ["faults", "report"], "verbs": ["decide", "faults"],
    "dmabuf": ["decide", "faults"], "data-direct": ["decide", "faults"],
    "dmabuf-shared": ["decide", "faults"], "common": ["decide", "faults"],
    "export": ["share", "share-attack"], "import": ["share", "share-attack"],
    "handover": ["share", "share-attack"], "dmabuf-facts": ["dmabuf-facts", "share"],
    "desc": ["share-attack", "share"], "facts-gds": ["report", "doctor-layouts"],
    "host": ["decide", "faults"], "peermem": ["decide", "faults"],
    "gdr-info": ["doctor-layouts", "doctor-nfd"], "nfd": ["doctor-nfd"],
    "json": ["doctor-json", "doctor-layouts"], "snapshot": ["doctor-layouts", "hostile"],
    "tree": ["hostile", "doctor-layouts"], "replace": ["doctor-nfd", "hostile"],
    "loopback": ["doctor-layouts"],
    "mountinfo": ["mountinfo", "doctor-storage"], "cufile-loader": ["doctor-storage"],
    "route": ["doctor-storage"], "storage-path": ["doctor-storage"],
    "storage-mount": ["doctor-storage"], "storage-io": ["doctor-storage"],
    "storage": ["doctor-storage", "doctor-nfd"],
    "storage-json": ["doctor-storage", "doctor-layouts"],
}
SKIP_SUITES = {"gpu", "vm"}
PASS_GOAL = 0.90


def test_map(build, src):
    """{source path relative to the tree: [test names]} for tests: auto."""
    tests = json.loads(subprocess.run(["meson", "introspect", "--tests", build],
                                      capture_output=True, check=True, text=True).stdout)
    targets = json.loads(subprocess.run(["meson", "introspect", "--targets", build],
                                        capture_output=True, check=True, text=True).stdout)
    by_id = {t["id"]: t for t in targets}
    included = {}  # object: the .c files its compilation read (depfiles)
    obj = None
    for line in subprocess.run(["ninja", "-C", build, "-t", "deps"],
                               capture_output=True, text=True).stdout.split("\n"):
        if line and not line[0].isspace():
            obj = line.split(":")[0]
        elif obj and line.strip().endswith(".c"):
            included.setdefault(obj, []).append(line.strip())
    seen = {}
    for t in tests:
        if set(x.split(":")[-1] for x in t["suite"]) & SKIP_SUITES:
            continue
        outs = [c for c in t["cmd"] if c.startswith(build)]
        for d in t.get("depends", []):
            outs += by_id[d]["filename"] if d in by_id else []
        srcs = set()
        for o in outs:
            r = subprocess.run(["ninja", "-C", build, "-t", "inputs",
                                os.path.relpath(o, build)], capture_output=True, text=True)
            for line in r.stdout.split():
                # a .c file #included by an object's source (a unit test
                # of a file's static functions) counts as its source too
                found = [line] if line.endswith(".c") else \
                    included.get(line, []) if line.endswith(".o") else []
                for c in found:
                    # relative to the scratch tree the build reads
                    srcs.add(os.path.relpath(os.path.realpath(os.path.join(build, c)),
                                             os.path.realpath(src)))
        if t["name"] in SOURCE_CHECKS:
            srcs.add("*")
        for path in srcs:
            seen.setdefault(path, []).append(t["name"])
    return seen


def guest_sources(build, src):
    """The sources of what the guest suite runs."""
    out = set()
    for t in VM_TARGETS:
        r = subprocess.run(["ninja", "-C", build, "-t", "inputs", t],
                           capture_output=True, text=True)
        for line in r.stdout.split():
            if line.endswith(".c"):
                out.add(os.path.relpath(os.path.realpath(os.path.join(build, line)),
                                        os.path.realpath(src)))
    return out


def auto_tests(tmap, path):
    names = set(tmap.get(path, [])) | set(tmap.get("*", []))
    if path.startswith("tools/gdr-info/"):
        # the doctor's programs, and what drives them
        names |= {"doctor-layouts", "doctor-schema", "doctor-nfd", "hostile"}
    stem = os.path.basename(path)[:-2]
    first = [t for t in FIRST.get(stem, []) if t in names]
    return first, sorted(names - set(first))


def objects(build, path):
    """The object files compiled from @path."""
    out = []
    for e in json.load(open(os.path.join(build, "compile_commands.json"))):
        if os.path.realpath(os.path.join(e["directory"], e["file"])).endswith("/" + path):
            out.append(os.path.join(e["directory"], e["output"]))
    return out


def load_listed(name):
    """{mutant: reason} from tests/mutants/@name."""
    eq = {}
    path = os.path.join(HERE, name)
    if os.path.exists(path):
        for line in open(path):
            line = line.strip()
            if line and not line.startswith("#"):
                name, _, why = line.partition(" ")
                eq[name] = why.strip()
    return eq


# The commits whose files' hand mutants every CI run tries.
RECENT = 10


def changed_files(back=1):
    """Files changed by the last @back commits (fewer where the history is
    shorter)."""
    for n in range(back, 0, -1):
        r = subprocess.run(["git", "-C", TOP, "diff", "--name-only", "HEAD~%d" % n, "HEAD"],
                           capture_output=True, text=True)
        if r.returncode == 0:
            return set(r.stdout.split())
    return set()


# How every mutant is configured, here and in the guest. No debug
# information: a mutant whose objects equal the original's changed nothing
# the compiler keeps (trivial compiler equivalence). The stack protector as
# distributions build (Ubuntu's gcc has it on by default, Debian's packages
# through dpkg-buildflags): a mutant that lets the kernel write past a
# stack array aborts the same way on every machine.
MUTANT_SETUP = ["-Ddebug=false", "-Doptimization=2", "-Dc_args=-fstack-protector-strong"]
NINJA_J = []
TEST_J = []


def one_mutant(m, src, build, saved_objs, out, guest):
    """(result, note) of one unit mutant in the worker tree @src/@build."""
    saved = apply(src, m)
    if isinstance(saved, str):
        return ("gone" if m.get("generated") else "INVALID", saved)
    log = os.path.join(out, m["name"] + ".log")
    try:
        if run(["ninja", "-C", build] + NINJA_J, log):
            return ("stillborn" if m.get("generated") else "INVALID",
                    "does not build (%s)" % log)
        objs = [o for e in m["edits"] for o in objects(build, e["file"])]
        if objs and all(filecmp.cmp(o, saved_objs[o], shallow=False) for o in objs):
            return ("equivalent", "the same object code")
        rc = 0
        for group in (m["first"], m["rest"]):
            if group and not rc:
                rc = run(["meson", "test", "-C", build, "--no-rebuild", "--maxfail", "1"]
                         + TEST_J + group, log, timeout=300)
        if not rc and m.get("generated") and m["edits"][0]["file"] in guest:
            # The mutated build, for the guest (its run paths are
            # relative, so a copy runs as well).
            m["guest_build"] = os.path.join(out, "vm-b-" + m["name"])
            shutil.copytree(build, m["guest_build"], symlinks=True,
                            ignore=special_files)
        return ("caught" if rc else "SURVIVED", "")
    finally:
        for p, t in saved.items():
            open(p, "w").write(t)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("names", nargs="*")
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--slice", type=int, default=12)
    ap.add_argument("--hand-slice", type=int, default=30,
                    help="hand mutants drawn beside those of recently changed files")
    ap.add_argument("--near-slice", type=int, default=40,
                    help="hand mutants drawn of the recently changed files")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--jobs", type=int, default=1,
                    help="mutants at a time, each in a scratch tree of its own")
    ap.add_argument("--drop-failing", action="store_true",
                    help="leave out tests that fail without any mutant (a machine "
                    "that cannot run them), and say which")
    ap.add_argument("--progress", action="store_true",
                    help="print each unit mutant's result as it is known")
    ap.add_argument("--no-guest", action="store_true",
                    help="do not try the unit suites' generated survivors in the Soft-RoCE guest")
    ap.add_argument("--full", action="store_true",
                    help="run every test that is not gpu or vm, not only those that see the file")
    a = ap.parse_args()
    out = os.path.abspath(a.out)
    hand = parse(os.path.join(HERE, "mutants.txt"))
    # Caught only by the gpu suite's tests: run by NAME on the GPU machine.
    gpu_only = parse(os.path.join(HERE, "gpu.txt"))
    gen = parse(os.path.join(HERE, "generated.txt"))
    for m in gen:
        m["generated"] = True
    equivalent = load_listed("equivalent.txt")
    known = load_listed("survivors.txt")
    for n in set(equivalent) & set(known):
        raise SystemExit("%s is in both equivalent.txt and survivors.txt" % n)
    stale_found = []
    if a.names:
        only = set(a.names)
        mutants = [m for m in hand + gpu_only + gen if m["name"] in only]
    elif a.all:
        mutants = hand + gen
    else:
        seed = a.seed if a.seed is not None else int(time.time())
        touched = changed_files()
        mine = [m for m in gen if m["edits"][0]["file"] in touched]
        rng = random.Random(seed)
        rng.shuffle(mine)
        mine = mine[:a.slice]
        rest = [m for m in gen if m not in mine]
        rng.shuffle(rest)
        picked = mine + rest[:a.slice]
        print("generated mutants: %d of the files the last commit changed, %d drawn "
              "with --seed %d (of %d)" % (len(mine), len(picked) - len(mine), seed, len(gen)))
        recent = changed_files(RECENT)
        near = [m for m in hand if any(e["file"] in recent for e in m["edits"])]
        far = [m for m in hand if m not in near]
        # A merge brings many files into the last commits: those of
        # recently changed files are drawn too, at most --near-slice, so
        # that CI's time stays bounded whatever a merge touched.
        rng.shuffle(near)
        rng.shuffle(far)
        not_run = near[a.near_slice:] + far[a.hand_slice:]
        print("hand mutants: %d drawn of the %d of the files the last %d commits "
              "changed, %d drawn of the rest, with --seed %d (of %d; --all runs "
              "them all)"
              % (min(a.near_slice, len(near)), len(near), RECENT,
                 min(a.hand_slice, len(far)), seed, len(hand)))
        mutants = near[:a.near_slice] + far[:a.hand_slice] + picked
        # The hand mutants not run still apply: a stale one fails now.
        stale_found = [m["name"] for m in not_run if said_stale(m)]
    if not a.names:
        # gpu.txt's run only on the GPU machine: here they must apply.
        stale_found += [m["name"] for m in gpu_only if said_stale(m)]
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    t0 = time.time()
    jobs = max(1, a.jobs)
    workers = [(os.path.join(out, "src"), os.path.join(out, "b"))] + \
        [(os.path.join(out, "w%d" % i, "src"), os.path.join(out, "w%d" % i, "b"))
         for i in range(1, jobs)]

    def prepare(w):
        wsrc, wbuild = w
        copy_tree(wsrc)
        d = os.path.dirname(wbuild)
        return run(["meson", "setup", wbuild, wsrc] + MUTANT_SETUP,
                   os.path.join(d, "setup.log")) or \
            run(["ninja", "-C", wbuild] + NINJA_J, os.path.join(d, "build.log"))

    if jobs > 1:
        share = str(max(1, (os.cpu_count() or 2) // jobs))
        NINJA_J[:] = ["-j", share]
        TEST_J[:] = ["--num-processes", share]
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        if any(pool.map(prepare, workers)):
            print("FAIL: the unmutated tree does not build (%s)" % out)
            return 1
    src, build = workers[0]
    tmap = test_map(build, src)
    # A mutant of a file no test links would run only the source checks:
    # that is a mistake of the map, not a survivor.
    for m in mutants:
        # A generated mutant of a file that has gone counts as gone below.
        if m.get("generated") and \
                not os.path.exists(os.path.join(src, m["edits"][0]["file"])):
            continue
        if m["tests"] == ["auto"] and not tmap.get(m["edits"][0]["file"]):
            print("FAIL: no test links %s (the test map is wrong)" % m["edits"][0]["file"])
            return 1
    unit = [m for m in mutants if "vm" not in m["tests"]]
    vm = [m for m in mutants if "vm" in m["tests"]]
    for m in unit:
        if m["tests"] == ["auto"] and a.full:
            m["first"], m["rest"] = [], sorted({t for ts in tmap.values() for t in ts})
        elif m["tests"] == ["auto"]:
            m["first"], m["rest"] = auto_tests(tmap, m["edits"][0]["file"])
        else:
            m["first"], m["rest"] = m["tests"], []
    names = sorted({t for m in unit for t in m["first"] + m["rest"]})

    def failing():
        """The tests of the last meson run that did not pass, by the names
        meson test takes, and the lines that say why (CI keeps only this
        output, not the logs)."""
        bad, said = set(), []
        for line in open(os.path.join(build, "meson-logs", "testlog.json")):
            t = json.loads(line)
            if t.get("result") not in ("OK", "SKIP"):
                # "libgpudirect:unit / NAME" (Debian's meson) or "unit -
                # libgpudirect:NAME" (Ubuntu 24.04's)
                bad.add(t["name"].split(" / ")[-1].split(":")[-1])
                lines = (t.get("stdout") or "").splitlines()
                why = [x for x in lines if x.startswith("FAIL")] or lines[-5:] or \
                    ["exit %s, no output" % t.get("returncode")]
                said += ["  %s (%s): %s" % (t["name"], t.get("result"), x) for x in why[:10]]
        return bad, said

    if run(["meson", "test", "-C", build, "--no-rebuild"] + TEST_J + names,
           os.path.join(out, "baseline.log")):
        bad, said = failing()
        print("the tests fail without any mutant (%s/baseline.log): %s"
              % (out, " ".join(sorted(bad))))
        print("\n".join(said))
        if not bad:
            print("FAIL: meson test failed, no test named (%s/baseline.log)" % out)
            return 1
        # Once more, those alone: a test that passes then failed only
        # beside the others (said above, to be fixed); it stays in.
        if not run(["meson", "test", "-C", build, "--no-rebuild"] + TEST_J + sorted(bad),
                   os.path.join(out, "baseline-again.log")):
            print("FLAKY: %s passed when run again alone; kept" % " ".join(sorted(bad)))
            bad = set()
        else:
            bad, said = failing()
            print("\n".join(said))
        if bad and not a.drop_failing:
            print("FAIL: the tests fail without any mutant, twice (%s/baseline-again.log): %s"
                  % (out, " ".join(sorted(bad))))
            return 1
        if bad:
            # A machine that cannot run some tests: say so, and leave them
            # out (a mutant only they would catch counts as survived).
            print("left out, they fail without any mutant here: %s" % " ".join(sorted(bad)))
            for m in unit:
                m["first"] = [t for t in m["first"] if t not in bad]
                m["rest"] = [t for t in m["rest"] if t not in bad]
    guest = guest_sources(build, src) if not a.no_guest else set()
    todo = queue.Queue()
    for m in unit:
        todo.put(m)
    results = []

    def worker(w):
        wsrc, wbuild = w
        base = os.path.join(os.path.dirname(wbuild), "objects")
        saved_objs = {}
        for m in unit:
            for e in m["edits"]:
                for o in objects(wbuild, e["file"]):
                    if o not in saved_objs:
                        saved_objs[o] = os.path.join(base, str(len(saved_objs)) + ".o")
                        os.makedirs(base, exist_ok=True)
                        shutil.copy(o, saved_objs[o])
        while True:
            try:
                m = todo.get_nowait()
            except queue.Empty:
                return
            r = one_mutant(m, wsrc, wbuild, saved_objs, out, guest)
            results.append((m,) + r)
            if a.progress:
                print("progress %s %s" % (m["name"], r[0]), flush=True)

    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        list(pool.map(worker, workers))
    order = {m["name"]: i for i, m in enumerate(unit)}
    results.sort(key=lambda r: order[r[0]["name"]])
    # A generated mutant the unit suites miss, in code the Soft-RoCE guest
    # runs (the library, gdr-info, the examples), is tried there too: the
    # vm suite is part of meson test.
    # A slice (CI) tries only survivors neither list names: a known one
    # costs a guest run and says nothing new; --all and NAMEs try them all.
    again = [m for m, res, _ in results if res == "SURVIVED" and m.get("guest_build")
             and (a.all or a.names or (m["name"] not in known and m["name"] not in equivalent))]
    if again:
        print("generated mutants the unit suites miss, tried in the guest: %d" % len(again))
        results = [r for r in results if r[0] not in again]
        vm += again
    if vm:
        # The unmutated tree first, built the same way: a guest test that
        # fails without any mutant catches nothing.
        base = {"name": "(baseline)", "generated": False}
        msrc = os.path.join(out, "vm-baseline")
        shutil.copytree(src, msrc, symlinks=True, ignore=special_files)
        log = os.path.join(out, "vm-baseline.log")
        if run(["meson", "setup", os.path.join(msrc, "b"), msrc] + MUTANT_SETUP, log) or \
                run(["ninja", "-C", os.path.join(msrc, "b")], log):
            print("FAIL: the unmutated tree does not build for the guest (%s)" % log)
            return 1
        dirs = [(base, os.path.join(msrc, "b"))]
        for m in vm:
            if m.get("guest_build"):
                dirs.append((m, m["guest_build"]))
                continue
            msrc = os.path.join(out, "vm-" + m["name"])
            shutil.copytree(src, msrc, symlinks=True, ignore=special_files)
            saved = apply(msrc, m)
            if isinstance(saved, str):
                results.append((m, "INVALID", saved))
                continue
            mb = os.path.join(msrc, "b")
            log = os.path.join(out, m["name"] + ".log")
            # All of it: the guest suite runs gdr-run, the preload and the
            # Python package too.
            if run(["meson", "setup", mb, msrc] + MUTANT_SETUP, log) or \
                    run(["ninja", "-C", mb], log):
                results.append((m, "INVALID", "does not build (%s)" % log))
                continue
            dirs.append((m, mb))
        if len(dirs) > 1:
            driver = os.path.join(out, "guest-mutants.sh")
            # The tree (and the builds in it) is read-only in the guest: the
            # logs go to the guest's /tmp, and each mutant's last line (the
            # suite's "vm: N passed, M failed") comes back with its status.
            with open(driver, "w") as f:
                for m, mb in dirs:
                    f.write("sh %s/tests/vm/guest-tests.sh %s > /tmp/guest.log 2>&1\n"
                            "echo \"mutant %s $? $(tail -n 1 /tmp/guest.log)\"\n"
                            "grep '^FAIL' /tmp/guest.log | sed 's/^FAIL /fail %s /'\n"
                            % (src, mb, m["name"], m["name"]))
            env = dict(os.environ, GDR_VM_BUILD=out)
            log = os.path.join(out, "vm.log")
            run(["bash", os.path.join(TOP, "tests/vm/vm.sh"), "run", "sh", driver],
                log, timeout=600 + 180 * len(dirs), env=env)
            text = open(log).read()
            seen = {n: (rc, rest) for n, rc, rest in
                    re.findall(r"^mutant (\S+) (\d+) ?(.*)$", text, re.M)}
            failed = {}
            for n, what in re.findall(r"^fail (\S+) (.*)$", text, re.M):
                failed.setdefault(n, set()).add(what.split(":")[0].strip())
            got = seen.get(base["name"])
            if not got or not re.match(r"vm: \d+ passed", got[1]):
                print("FAIL: the guest suite did not run to its end without a "
                      "mutant (%s)" % log)
                return 1
            known_bad = failed.get(base["name"], set())
            if known_bad:
                print("the guest suite fails without any mutant (not counted): %s"
                      % "; ".join(sorted(known_bad)))
            for m, mb in dirs[1:]:
                got = seen.get(m["name"])
                if got is None and m.get("generated"):
                    results.append((m, "SURVIVED", "the unit suites; the guest gave no "
                                    "result (%s)" % log))
                    continue
                if got is None:
                    results.append((m, "INVALID", "the guest gave no result (%s)" % log))
                    continue
                rc, rest = got
                summary = re.match(r"vm: (\d+) passed, (\d+) failed", rest)
                if not summary:
                    # The suite did not run to its end: that proves nothing.
                    results.append((m, "SURVIVED" if m.get("generated") else "INVALID",
                                    "the guest suite did not finish: %r (%s)" % (rest, log)))
                elif rc != "0" and failed.get(m["name"], set()) - known_bad:
                    results.append((m, "caught", "in the guest: %s (%s)" % (
                        rest, "; ".join(sorted(failed[m["name"]] - known_bad)))))
                else:
                    results.append((m, "SURVIVED", "in the guest: " + rest))
    bad = 0
    count = {}
    judged = []
    for m, res, note in results:
        if res == "SURVIVED" and m["name"] in equivalent:
            res, note = "equivalent", equivalent[m["name"]]
        elif res == "SURVIVED" and m["name"] in known:
            res, note = "known", known[m["name"]]
        elif res == "caught" and m["name"] in equivalent:
            res, note = "WRONG", "listed as equivalent in equivalent.txt, but a test fails"
        elif res == "caught" and m["name"] in known:
            res, note = "WRONG", "listed in survivors.txt, but a test fails now: take it out"
        elif res == "SURVIVED" and m.get("generated"):
            note = "a new survivor: a test, or a line in equivalent.txt or survivors.txt"
        print("%-10s %-30s %s%s" % (res, m["name"], m["why"],
                                    ("  [" + note + "]") if note else ""))
        kind = "generated" if m.get("generated") else "hand"
        judged.append((m, res))
        count.setdefault(kind, {}).setdefault(res, 0)
        count[kind][res] += 1
        if kind == "hand" and res != "caught":
            bad += 1
        if res in ("WRONG", "SURVIVED") and kind == "generated":
            bad += 1
    h = count.get("hand", {})
    if h:
        print("hand-made mutants: %d caught, %d survived or invalid"
              % (h.get("caught", 0), sum(v for k, v in h.items() if k != "caught")))
    g = count.get("generated", {})
    if g:
        c = g.get("caught", 0) + g.get("WRONG", 0)
        s = g.get("SURVIVED", 0) + g.get("known", 0)
        score = c / (c + s) if c + s else 1.0
        print("generated mutants: %d caught, %d survived (%d known), %d equivalent, "
              "%d stillborn, %d gone: score %.1f%% of %d%s"
              % (c, s, g.get("known", 0), g.get("equivalent", 0), g.get("stillborn", 0),
                 g.get("gone", 0), 100 * score, c + s,
                 " (goal %d%%)" % (100 * PASS_GOAL) if a.all else
                 " (a slice: the score is measured with --all)"))
        if a.all and score < PASS_GOAL:
            bad += 1
    if stale_found:
        print("hand-made mutants not run that no longer apply: %s"
              % " ".join(stale_found))
        bad += len(stale_found)
    print("mutants: %d checked in %.0f s" % (len(results), time.time() - t0))
    # As judged above: a listed equivalent or known survivor passes, a
    # listed one that is caught (WRONG) does not.
    ok = sum(1 for m, r in judged
             if r in ("caught", "equivalent", "stillborn", "gone", "known"))
    print("%d passed, %d failed" % (ok, len(judged) - ok))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
