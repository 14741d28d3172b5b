#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gdr-info on realistic node layouts (tests/doctor/layouts.py), replayed from
snapshots with --root and --from: each report must give the expected exit
status and verdicts, the text and JSON must equal the golden files in
tests/doctor/golden/, a tar of the layout must replay identically, and the
layout used as --host-root (absolute, relative, through a link) and
captured must replay as the live report.
Needs python3 only.

    test-doctor.py GDR_INFO OUTDIR [--update-golden]

--update-golden (or GDR_UPDATE_GOLDEN=1) rewrites the golden files from
this build: only for an intended change of the doctor's output, committed
together with that change."""
import difflib
import json
import os
import re
import subprocess
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import layouts  # noqa: E402

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=60)


def main():
    gdr_info, out = sys.argv[1], sys.argv[2]
    update = "--update-golden" in sys.argv or os.environ.get("GDR_UPDATE_GOLDEN") == "1"
    passed = failed = 0

    def check(cond, what):
        nonlocal passed, failed
        if cond:
            passed += 1
        else:
            failed += 1
            print("FAIL " + what)
        return cond

    bare_done = False

    def cuda_answers(name, root, snap):
        """The capture's CUDA answers: the driver version is 0 exactly
        when CUDA said why it is not there. Once more (the first layout)
        with no libcuda on the library path, where meson puts the fake
        one: no CUDA here, a real one on the GPU machine."""
        nonlocal bare_done
        runs = [("", snap)]
        if not bare_done:
            bare_done = True
            fake = os.path.abspath(os.environ.get("GDR_FAKE_CUDA_DIR", "/nonexistent"))
            path = [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(":")
                    if p and os.path.abspath(p) != fake]
            bare = snap + ".no-cuda.tar"
            subprocess.run([gdr_info, "--host-root", root, "--capture", bare],
                           capture_output=True,
                           env=dict(os.environ, LD_LIBRARY_PATH=":".join(path)))
            runs.append((" (no fake libcuda)", bare))
        for what, tar in runs:
            try:
                with tarfile.open(tar) as t:
                    f = t.extractfile("answers.json")
                    cu = json.load(f)["cuda"] if f else {}
            except (OSError, tarfile.TarError, ValueError) as e:
                cu = {"unreadable": str(e)}
            check(cu.get("driver_version", -2) >= 0 and
                  (cu["driver_version"] == 0) == (cu.get("error") != ""),
                  "%s: the capture's CUDA answers%s: %r" % (name, what, cu))

    def golden(name, ext, text):
        path = os.path.join(GOLDEN, name + ext)
        if update:
            with open(path, "w") as f:
                f.write(text)
            return
        try:
            want = open(path).read()
        except OSError:
            check(False, "%s: no golden file %s (run with --update-golden)" % (name, path))
            return
        if not check(text == want, "%s: output differs from %s" % (name, path)):
            sys.stdout.writelines(difflib.unified_diff(
                want.splitlines(True), text.splitlines(True), path, "this build"))

    seen = set()
    for name, root, want_rc, want in layouts.build_all(out):
        seen.add(name)
        res = run(gdr_info, "--root", root, "--json")
        check(res.returncode == want_rc, "%s: exit %d, want %d %s" %
              (name, res.returncode, want_rc, res.stderr.strip()))
        try:
            rep = json.loads(res.stdout)
        except ValueError as e:
            check(False, "%s: JSON does not parse: %s" % (name, e))
            continue
        items = {(i["section"], i["key"]): i for i in rep["items"]}
        for key, exp in want.items():
            # verdict, (verdict, value) or (verdict, value, words of the remedy)
            verdict, value, remedy = (tuple(exp) + (None, None))[:3] \
                if isinstance(exp, tuple) else (exp, None, None)
            it = items.get(key)
            if not check(it is not None, "%s: no item %s/%s" % (name, key[0], key[1])):
                continue
            check(it["verdict"] == verdict, "%s: %s/%s verdict %s, want %s (%s)" %
                  (name, key[0], key[1], it["verdict"], verdict, it["value"]))
            if value is not None:
                check(it["value"] == value, "%s: %s/%s value %r, want %r" %
                      (name, key[0], key[1], it["value"], value))
            if remedy is not None:
                check(remedy in it.get("remedy", ""), "%s: %s/%s remedy %r lacks %r" %
                      (name, key[0], key[1], it.get("remedy"), remedy))
        check(rep["gpudirect_rdma_usable"] == (want_rc == 0),
              "%s: usable is %s" % (name, rep["gpudirect_rdma_usable"]))
        golden(name, ".json", res.stdout)
        text = run(gdr_info, "--root", root)
        check(text.returncode == want_rc and "GPUDirect RDMA:" in text.stdout,
              "%s: text report, exit %d" % (name, text.returncode))
        golden(name, ".txt", text.stdout)
        # The same layout packed as --capture packs it (and gzip'd)
        # replays the same way.
        for gz in (False, True):
            tar = root + (".tar.gz" if gz else ".tar")
            layouts.pack(root, tar, gz)
            again = run(gdr_info, "--from", tar, "--json")
            check(again.stdout == res.stdout and again.returncode == want_rc,
                  "%s: --from %s gives another report: %s" %
                  (name, os.path.basename(tar), again.stderr.strip()))
        # The layout as a host root (CUDA and verbs live: this machine's),
        # captured and replayed: the same report, with the root given
        # absolute, relative and through a link.
        where = os.path.dirname(root)
        alias = root + ".link"
        if os.path.lexists(alias):
            os.unlink(alias)
        os.symlink(os.path.basename(root), alias)
        for form, hr, cwd in (("absolute", root, None),
                              ("relative", os.path.basename(root), where),
                              ("a link", alias, None)):
            snap = os.path.join(where, name + ".capture.tar")
            if os.path.exists(snap):
                os.unlink(snap)
            live = subprocess.run([os.path.abspath(gdr_info), "--host-root", hr,
                                   "--capture", snap, "--json"],
                                  capture_output=True, text=True, cwd=cwd)
            back = run(gdr_info, "--from", snap, "--json")
            check(live.returncode in (0, 1) and os.path.exists(snap),
                  "%s: --host-root (%s) --capture: exit %d %s" %
                  (name, form, live.returncode, live.stderr.strip()))
            if form == "absolute" and os.path.exists(snap):
                cuda_answers(name, root, snap)
            check(back.stdout == live.stdout and back.returncode == live.returncode,
                  "%s: --host-root (%s): the capture replays another report (%s)" %
                  (name, form, back.stderr.strip()))
            if back.stdout != live.stdout:
                sys.stdout.writelines(difflib.unified_diff(
                    live.stdout.splitlines(True), back.stdout.splitlines(True),
                    "live", "replayed"))
        os.unlink(alias)
        print("ok   %-36s exit %d, %d items" % (name, res.returncode, len(rep["items"])))
    # a format 1 (0.1) snapshot has no c2c, c2c_why nor pcie_mapping:
    # on a 12.8 driver they replay as not known, never as supported.
    root = layouts.node(out, "old-0.1-answers", driver=12080,
                        gpus=[dict(chain=layouts.GPU_SW)],
                        nics=[dict(name="mlx5_0", chain=layouts.NIC_SW)])
    ans_path = os.path.join(root, "answers.json")
    ans = json.load(open(ans_path))
    ans["version"] = 1
    for g in ans["cuda"]["devices"]:
        for k in ("c2c", "c2c_why", "pcie_mapping"):
            g.pop(k, None)
    open(ans_path, "w").write(json.dumps(ans, indent=1))
    res = run(gdr_info, "--root", root, "--json")
    items = {(i["section"], i["key"]): i for i in json.loads(res.stdout)["items"]}
    pm = items.get(("gpu0", "pcie_mapping"), {})
    check(pm.get("verdict") == "unknown" and pm.get("value") == "not tried",
          "a 0.1 snapshot's PCIe mapping replays as %r (%s), want not tried" %
          (pm.get("value"), pm.get("verdict")))
    # answers.json edited: another format's name, or a link whose target
    # is not a string, is refused (exit 2, the reason said), never
    # replayed.
    for what, edit, said in (
            ("format", lambda a: a.update(format="libgpudirect-snapshop"),
             "not a libgpudirect-snapshot of version 1 or"),
            ("link target", lambda a: a.update(links={"/sys/x": 7}),
             "a link's target is not a string")):
        bad = json.loads(json.dumps(ans))
        edit(bad)
        open(ans_path, "w").write(json.dumps(bad, indent=1))
        refused = run(gdr_info, "--root", root, "--json")
        check(refused.returncode == 2 and said in refused.stderr and not refused.stdout,
              "answers.json with a bad %s: exit %d, %r" % (what, refused.returncode,
                                                          refused.stderr[-200:]))
    open(ans_path, "w").write(json.dumps(ans, indent=1))
    # A snapshot from before 0.3 has no addrs_errno: its netdev's
    # addresses were never asked, so cufile.json's are not judged (unknown),
    # whatever "addrs" holds.
    groot = layouts.node(out, "no-addrs-errno", **layouts.gds_node("false", ["10.1.0.7"]))
    g_path = os.path.join(groot, "answers.json")
    g_ans = json.load(open(g_path))
    for d in g_ans["rdma_devices"]:
        d.pop("addrs_errno", None)
        d["addrs"] = ""
    open(g_path, "w").write(json.dumps(g_ans, indent=1))
    replay = run(gdr_info, "--root", groot, "--json")
    got = [i for i in json.loads(replay.stdout or "{}").get("items", [])
           if (i["section"], i["key"]) == ("node", "gds_rdma_addrs")]
    check(len(got) == 1 and got[0]["verdict"] == "unknown",
          "a snapshot without addrs_errno: cufile.json's addresses judged %r" % got)
    # A limit of all ones (RLIM_INFINITY) is captured as -1 and replayed
    # as unlimited: the live report and the replay agree.
    import resource
    inf = resource.RLIM_INFINITY
    try:
        resource.setrlimit(resource.RLIMIT_MEMLOCK,
                           resource.getrlimit(resource.RLIMIT_MEMLOCK))
        unlimited = (lambda: resource.setrlimit(resource.RLIMIT_MEMLOCK, (inf, inf)))
        subprocess.run(["true"], preexec_fn=unlimited, check=True)
    except (OSError, subprocess.SubprocessError, ValueError) as e:
        print("SKIP an unlimited memlock captured: cannot raise the limit here (%s)" % e)
        unlimited = None
    if unlimited:
        root = layouts.node(out, "memlock-unlimited", gpus=[dict(chain=layouts.GPU_SW)],
                            nics=[dict(name="mlx5_0", chain=layouts.NIC_SW)])
        snap = root + ".capture.tar"
        if os.path.exists(snap):
            os.unlink(snap)
        live = subprocess.run([gdr_info, "--host-root", root, "--capture", snap, "--json"],
                              capture_output=True, text=True, preexec_fn=unlimited)
        back = run(gdr_info, "--from", snap, "--json")
        lim = {}
        if os.path.exists(snap):
            with tarfile.open(snap) as t:
                for m in t.getmembers():
                    if m.name.endswith("answers.json"):
                        lim = json.load(t.extractfile(m)).get("limits", {})
        check(lim.get("memlock_soft") == -1 and lim.get("memlock_hard") == -1,
              "an unlimited memlock is captured as -1: %r" % lim)
        check(live.returncode in (0, 1) and back.stdout == live.stdout and
              back.returncode == live.returncode,
              "an unlimited memlock replays as captured (%s)" % back.stderr.strip())
        print("ok   an unlimited memlock: captured as -1, replayed the same")
    # The report is about this process's registrations: a GPUDIRECT_* that
    # makes every registration fail is wrong and named, the pairs take no
    # path, the exit status is 1; GPUDIRECT_PATH leaves paths out of each
    # pair (and says which); settings that change nothing are listed.
    envroot = layouts.node(out, "env-dmabuf", gpus=[dict(chain=layouts.GPU_SW)],
                           nics=[dict(name="mlx5_0", chain=layouts.NIC_SW)])
    clean = {k: v for k, v in os.environ.items() if not k.startswith("GPUDIRECT_")}
    for env, rc, verdict, word, path, why in [
            ({}, 0, None, None, "dmabuf", None),
            ({"GPUDIRECT_PATH": "bogus"}, 1, "wrong", "GPUDIRECT_PATH=bogus is not a path",
             "none", "GPUDIRECT_PATH=bogus is not a path"),
            ({"GPUDIRECT_PATH": "peermem"}, 1, "info", "GPUDIRECT_PATH=peermem", "none",
             "dmabuf: left out by GPUDIRECT_PATH; peermem: nvidia-peermem is not loaded"),
            ({"GPUDIRECT_PATH": "host"}, 1, "info", "GPUDIRECT_PATH=host", "none",
             "data-direct: left out by GPUDIRECT_PATH; dmabuf: left out by GPUDIRECT_PATH; "
             "peermem: left out by GPUDIRECT_PATH"),
            ({"GPUDIRECT_PATH": "data-direct"}, 1, "info", "GPUDIRECT_PATH=data-direct", "none",
             "data-direct: RDMA device mlx5_0 has no usable Data Direct function"),
            ({"GPUDIRECT_PATH": "dmabuf"}, 0, "info", "GPUDIRECT_PATH=dmabuf", "dmabuf", None),
            ({"GPUDIRECT_PCIE_MAPPING": "maybe"}, 1, "wrong",
             "GPUDIRECT_PCIE_MAPPING=maybe is not auto, on or off", "none",
             "GPUDIRECT_PCIE_MAPPING=maybe"),
            ({"GPUDIRECT_RELAXED_ORDERING": "2"}, 1, "wrong",
             "GPUDIRECT_RELAXED_ORDERING=2 is not 0, 1 or auto", "none",
             "GPUDIRECT_RELAXED_ORDERING=2"),
            ({"GPUDIRECT_CACHE_MAX_ENTRIES": "12x"}, 0, "wrong",
             "GPUDIRECT_CACHE_MAX_ENTRIES=12x is not a decimal number", "dmabuf", None),
            ({"GPUDIRECT_CACHE_MAX_BYTES": "18446744073709551616"}, 0, "wrong",
             "GPUDIRECT_CACHE_MAX_BYTES=18446744073709551616 is larger than "
             "18446744073709551615", "dmabuf", None),
            ({"GPUDIRECT_PATH": "p" * 60}, 1, "wrong",
             "GPUDIRECT_PATH=%s... is not a path" % ("p" * 40), "none", None),
            ({"GPUDIRECT_CACHE_MAX_BYTES": "18446744073709551615", "GPUDIRECT_DEBUG": "1"}, 0,
             "info", "GPUDIRECT_CACHE_MAX_BYTES=18446744073709551615, GPUDIRECT_DEBUG=1",
             "dmabuf", None)]:
        got = subprocess.run([gdr_info, "--root", envroot, "--json"], capture_output=True,
                             text=True, timeout=60, env=dict(clean, **env))
        try:
            items = {(i["section"], i["key"]): i for i in json.loads(got.stdout)["items"]}
        except ValueError:
            items = {}
        item = items.get(("node", "environment"))
        pair = items.get(("mlx5_0", "path_gpu0"), {})
        ok = got.returncode == rc and pair.get("value") == path
        ok = ok and (item is None if verdict is None else
                     item["verdict"] == verdict and word in item["value"])
        ok = ok and (why is None or why in pair.get("remedy", ""))
        check(ok, "environment %s: exit %d (want %d), item %s, pair %s" %
              (env, got.returncode, rc, item, pair))
    # nearest_rdma of many equally near devices with long names: the
    # names that do not fit are counted, the distance always shows.
    many = layouts.node(out, "nearest-many-long", gpus=[dict(chain=layouts.GPU_SW)],
                        nics=[dict(name="mlx5_%s%02d" % ("n" * 50, i), chain=layouts.NIC_SW)
                              for i in range(12)])
    got = subprocess.run([gdr_info, "--root", many, "--json"], capture_output=True, text=True,
                         timeout=60, env=clean)
    try:
        near = {(i["section"], i["key"]): i["value"]
                for i in json.loads(got.stdout)["items"]}.get(("gpu0", "nearest_rdma"), "")
    except ValueError:
        near = "no JSON: %r" % got.stderr[-200:]
    check(re.search(r", mlx5_n+\d\d and \d+ more: PIX$", near) is not None,
          "nearest_rdma of 12 long names: %r" % near)
    # C0 and C1 control characters of input (a device name asked for, the
    # environment) reach neither stderr nor the text report: a terminal
    # acts on ESC and on CSI (U+009B) alike.
    nasty = "x\x1b[2J\u009b2Jy"
    got = subprocess.run([gdr_info, "--root", envroot, "-d", nasty], capture_output=True,
                         timeout=60, env=dict(clean, GPUDIRECT_PATH=nasty))
    for stream, data in (("stderr", got.stderr), ("stdout", got.stdout)):
        check(b"\x1b" not in data and b"\xc2\x9b" not in data and b"\\x1b" in data,
              "control bytes reach %s: %r" % (stream, data[-300:]))
    # A raw C1 byte (8-bit CSI, not UTF-8) in a name asked for.
    got = subprocess.run([gdr_info.encode(), b"--root", envroot.encode(), b"-d", b"a\x9b31m"],
                         capture_output=True, timeout=60, env=clean)
    check(b"\x9b" not in got.stderr and b"\\x9b" in got.stderr,
          "a raw C1 byte reaches stderr: %r" % got.stderr[-200:])
    # Every C0 control byte and DEL in a GPU's name (a replayed snapshot):
    # the JSON report escapes each, and reads back to the same name.
    ctl = "".join(chr(c) for c in list(range(1, 0x20)) + [0x7f])
    croot = layouts.node(out, "control-name", gpus=[dict(chain=layouts.GPU_SW,
                                                         name="g" + ctl + "h")])
    got = subprocess.run([gdr_info, "--root", croot, "--json"], capture_output=True,
                         timeout=60, env=clean)
    try:
        names = [i["value"] for i in json.loads(got.stdout.decode())["items"]
                 if (i["section"], i["key"]) == ("gpu0", "name")]
    except ValueError as e:
        names = ["no JSON: %s" % e]
    check(names == ["g" + ctl + "h"] and not any(b in got.stdout for b in
                                               (b"\x1f", b"\x01", b"\x7f")),
          "control bytes in a JSON value: %r" % names)
    # The short options are the long ones.
    short = run(gdr_info, "--root", root, "-j")
    check(short.returncode == res.returncode and short.stdout == res.stdout,
          "-j is not --json: exit %d, %r" % (short.returncode, short.stderr[-200:]))
    usage = run(gdr_info, "-h")
    check(usage.returncode == 0 and "--json" in usage.stdout + usage.stderr,
          "-h: exit %d, %r" % (usage.returncode, usage.stderr[-200:]))
    # -d DEV: the report covers that RDMA device only; one that is not
    # there is said so, and the report then has no device.
    one = run(gdr_info, "--root", root, "-d", "mlx5_0", "--json")
    secs = {i["section"] for i in json.loads(one.stdout)["items"]} if one.stdout else set()
    check("mlx5_0" in secs, "-d mlx5_0: no mlx5_0 items (%s)" % one.stderr.strip())
    none = run(gdr_info, "--root", root, "-d", "mlx5_9", "--json")
    secs = {i["section"] for i in json.loads(none.stdout)["items"]} if none.stdout else {"?"}
    check("RDMA device mlx5_9 not found" in none.stderr and "mlx5_0" not in secs,
          "-d mlx5_9: %r, sections %s" % (none.stderr.strip(), sorted(secs)))
    # -d DEV on a node of several rails: the report shows DEV, and the
    # GPU's nearest devices are still ranked among all of them.
    spec = dict(next(l for l in layouts.LAYOUTS
                     if l[0] == "rails-four-distances-data-direct")[1])
    rails = layouts.node(out, "rails-minus-d", **spec)
    far = run(gdr_info, "--root", rails, "-d", "mlx5_3", "--json")
    items = {(i["section"], i["key"]): i for i in json.loads(far.stdout)["items"]} \
        if far.stdout else {}
    near = items.get(("gpu0", "nearest_rdma"), {}).get("value")
    check(near == "mlx5_0, mlx5_4 (its Data Direct function): PIX"
          and ("mlx5_3", "topology_gpu0") in items
          and not any(sec == "mlx5_0" for sec, _ in items),
          "-d mlx5_3: nearest_rdma %r, sections %s (%s)" %
          (near, sorted({sec for sec, _ in items}), far.stderr.strip()))
    # A snapshot's driver older than a required entry point: the remedy
    # names the entry point and the CUDA API that brought it (4.1: 4010).
    old_cuda = layouts.node(out, "cuda-driver-api-4000-remedy", **dict(
        next(l for l in layouts.LAYOUTS if l[0] == "cuda-driver-api-4000")[1]))
    res = run(gdr_info, "--root", old_cuda, "--json")
    rem = [i.get("remedy") for i in json.loads(res.stdout)["items"]
           if i["key"] == "cuda_driver_api"] if res.stdout else []
    check(rem == ["the CUDA driver (API 4000) lacks cuDeviceGetPCIBusId (CUDA 4.1 API); "
                  "upgrade the NVIDIA driver"],
          "a CUDA 4.0 driver: the remedy is %r (%s)" % (rem, res.stderr.strip()))
    # A capture that fails is an internal error (exit 2): no self-test is
    # run after it.
    st = run(gdr_info, "--host-root", root, "--self-test", "--capture",
             os.path.join(out, "no-such-dir", "snap.tar"))
    check(st.returncode == 2 and "self-test" not in st.stdout,
          "--self-test after a failed capture: exit %d, %r" % (st.returncode, st.stdout[-200:]))
    # Under --host-root every read resolves inside the host tree, the
    # path from CUFILE_ENV_PATH_JSON and absolute links included; live,
    # capture and replay agree. The container's own file of that name
    # (here: the same absolute path outside the root) is never read.
    other = os.path.join(out, "c" * len(os.path.basename(root)))
    os.makedirs(other, exist_ok=True)
    with open(os.path.join(other, "cufile.json"), "w") as f:
        f.write('{"properties": {"allow_compat_mode": true}}\n')

    def gds(res):
        try:
            items = json.loads(res.stdout)["items"]
        except ValueError:
            return "no JSON: %r" % res.stderr[-200:]
        return [i["value"] for i in items if i["key"] == "gds_compat_mode"]

    # Each case also with openat2 failing (kernels before 5.6, seccomp
    # filters: the library's own walk) and without /proc/self/fd (the
    # reopen by name, its inode compared), through the io-faults preload.
    shim = layouts.io_faults(gdr_info)
    kernels = [("openat2", {})]
    if shim:
        kernels += [("walk", {"LD_PRELOAD": shim, "GDR_IO_NO_OPENAT2": "1"}),
                    # a rename elsewhere raced a ".." a few times
                    ("eagain", {"LD_PRELOAD": shim, "GDR_IO_OPENAT2_EAGAIN": "5"})]
    else:
        print("SKIP host-root without openat2: no io-faults preload")

    def host_case(what, env, want):
        for how, extra in kernels:
            snap = os.path.join(out, "cufile-%s-%s.tar" % (what, how))
            if os.path.exists(snap):
                os.unlink(snap)
            cap = subprocess.run([gdr_info, "--host-root", root, "--json", "--capture", snap],
                                 capture_output=True, text=True, timeout=60,
                                 env=dict(os.environ, **env, **extra))
            back = run(gdr_info, "--from", snap, "--json")
            check(cap.returncode in (0, 1) and gds(cap) == want and back.stdout == cap.stdout,
                  "%s (%s): exit %d, gds_compat_mode %s (want %s), replay %s (%s)" %
                  (what, how, cap.returncode, gds(cap), want, gds(back), cap.stderr.strip()))
            # Every path the report read was kept, and the capture says
            # so (not "0 of N paths could not be kept").
            check(re.search(r"snapshot written to .* \(\d+ paths and the CUDA/verbs "
                            r"answers[;)]", cap.stderr) and "could not be kept" not in cap.stderr,
                  "%s (%s): the capture says %r" % (what, how, cap.stderr.strip()))
        return cap

    # Without /proc under --host-root nothing is opened: the inode checked
    # cannot be reopened, and the name opened again could be a device by
    # then. The report says so rather than reading.
    if shim:
        with open(os.path.join(root, "etc", "cufile.json") if os.path.isdir(
                os.path.join(root, "etc")) else os.path.join(other, "unused"), "w") as f:
            f.write("{}")
        os.makedirs(os.path.join(root, "etc"), exist_ok=True)
        with open(os.path.join(root, "etc", "cufile.json"), "w") as f:
            f.write('{"properties": {"allow_compat_mode": false}}')
        got = subprocess.run([gdr_info, "--host-root", root, "--json"], capture_output=True,
                             text=True, timeout=60,
                             env=dict(os.environ, LD_PRELOAD=shim, GDR_IO_NO_PROC_FD="1"))
        check(gds(got) == ["unknown (/etc/cufile.json: ENOSYS)"],
              "--host-root without /proc: %s (%s)" % (gds(got), got.stderr.strip()))
        os.unlink(os.path.join(root, "etc", "cufile.json"))
    env_path = other + "/cufile.json"
    # Only the container has the file: the host has none, so nothing.
    host_case("env-container-only", {"CUFILE_ENV_PATH_JSON": env_path}, [])
    # The host has its own at that path: the host's is read.
    hosted = os.path.join(root, env_path.lstrip("/"))
    os.makedirs(os.path.dirname(hosted), exist_ok=True)
    with open(hosted, "w") as f:
        f.write('{"properties": {"allow_compat_mode": false}}\n')
    host_case("env-host", {"CUFILE_ENV_PATH_JSON": env_path}, ["false (%s)" % env_path])
    # /etc/cufile.json an absolute link to a file of the host's: read
    # below the root, never the container's file the link names.
    os.makedirs(os.path.join(root, "etc"), exist_ok=True)
    link = os.path.join(root, "etc", "cufile.json")
    os.symlink(env_path, link)
    host_case("absolute-link", {}, ["false (/etc/cufile.json)"])
    # A link that climbs: ".." stops at the host root.
    os.unlink(link)
    os.symlink("../../../../../../../../.." + env_path, link)
    host_case("climbing-link", {}, ["false (/etc/cufile.json)"])
    os.unlink(link)
    os.unlink(hosted)
    # Large files: one of 200 KiB is read and captured whole (a capture
    # kept 64 KiB and its replay differed); one past the 256 KiB the
    # report reads is kept as read, and the capture says it was cut.
    body = '{"properties": {"allow_compat_mode": false}}'
    with open(link, "w") as f:
        f.write(" " * (200 << 10) + body)
    cap = host_case("200-kib", {}, ["false (/etc/cufile.json)"])
    check("cut" not in cap.stderr, "a 200 KiB file said cut: %r" % cap.stderr)
    with open(link, "w") as f:
        f.write(" " * ((256 << 10) - len(body)) + body)
    cap = host_case("256-kib", {}, ["false (/etc/cufile.json)"])
    check("cut" not in cap.stderr, "a file of exactly 256 KiB said cut: %r" % cap.stderr)
    with open(link, "w") as f:
        f.write(" " * (300 << 10) + body)
    cap = host_case("300-kib", {}, ["unknown (/etc/cufile.json: larger than the 256 KiB "
                                    "the doctor reads)"])
    check("1 files longer than 256 KiB kept cut there" in cap.stderr,
          "a 300 KiB file's capture: %r" % cap.stderr)
    os.unlink(link)
    # A live RDMA device (the stand-in libibverbs' standin0) whose netdev
    # the tree names: under --host-root, with the tree's proc no procfs,
    # this network namespace cannot be proved the host's, so its
    # addresses are not judged against cufile.json, and the remedy says
    # why (not "an InfiniBand port").
    verbs = os.environ.get("GDR_STANDIN_VERBS_DIR")
    if verbs and os.path.exists(os.path.join(verbs, "libibverbs.so.1")):
        spec = layouts.gds_node("false", ["10.1.0.7"])
        spec["nics"][0]["name"] = "standin0"
        sroot = layouts.node(out, "standin-netns", **spec)
        live = subprocess.run([gdr_info, "--host-root", sroot, "--json"],
                              capture_output=True, text=True, timeout=60,
                              env=dict(os.environ, LD_LIBRARY_PATH=verbs))
        addrs = [i for i in json.loads(live.stdout or "{}").get("items", [])
                 if (i["section"], i["key"]) == ("node", "gds_rdma_addrs")]
        check(len(addrs) == 1 and addrs[0]["verdict"] == "unknown" and
              addrs[0]["remedy"].startswith(
                  "under --host-root this network namespace is not the host's"),
              "a live RDMA device under --host-root: cufile.json's addresses "
              "judged as %r (%s)" % (addrs, live.stderr.strip()))
        # The same node captured with a live (fake) GPU as well: the
        # report reads files through links that several paths share
        # (sys/bus/pci/devices/BDF for its config and numa_node), and more
        # files than a process limited to 12 descriptors could hold open
        # at once beside stdin, stdout and stderr (it needs 6 here). Every
        # path is kept, no descriptor is kept past its file, and the
        # capture replays as the live report.
        fake = os.environ.get("GDR_FAKE_CUDA_DIR", "")
        snap = os.path.join(out, "standin-live.tar")
        if os.path.exists(snap):
            os.unlink(snap)

        def few_fds():
            import resource
            hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
            resource.setrlimit(resource.RLIMIT_NOFILE, (12, hard))

        live = subprocess.run([gdr_info, "--host-root", sroot, "--capture", snap, "--json"],
                              capture_output=True, text=True, timeout=60, preexec_fn=few_fds,
                              env=dict(os.environ, LD_LIBRARY_PATH=verbs + ":" + fake,
                                       GDR_FAKE_GPU_BUSID="0000:03:00.0"))
        members, links = [], {}
        if os.path.exists(snap):
            with tarfile.open(snap) as t:
                members = [m.name for m in t.getmembers()
                           if m.isfile() and m.name != "answers.json"]
                links = json.load(t.extractfile("answers.json")).get("links", {})
        shared = "sys/bus/pci/devices/0000:03:00.0"
        below = os.path.normpath(os.path.join(os.path.dirname(shared), links.get(shared, "-")))
        check(len(members) > 12 - 3 and
              sum(os.path.dirname(m) == below for m in members) >= 2,
              "a live node's capture: %d files, %s to %s (the premise)" %
              (len(members), shared, below))
        check(live.returncode in (0, 1) and
              re.search(r"snapshot written to .* \((\d+) paths and the CUDA/verbs "
                        r"answers\)", live.stderr) and "could not be kept" not in live.stderr,
              "a live node's capture under 12 descriptors says %r" % live.stderr.strip())
        back = run(gdr_info, "--from", snap, "--json")
        check(back.stdout == live.stdout and back.returncode == live.returncode,
              "a live node's capture replays another report (%s)" % back.stderr.strip())
        # A file the report read whose name is longer than a snapshot may
        # hold (1,024 bytes): not kept, and the capture says how many.
        deep = "/" + "/".join(c * 250 for c in "abcde") + "/cufile.json"
        layouts.write(sroot, deep.lstrip("/"), '{"properties": {"allow_compat_mode": false}}')
        if os.path.exists(snap):
            os.unlink(snap)
        live = subprocess.run([gdr_info, "--host-root", sroot, "--capture", snap, "--json"],
                              capture_output=True, text=True, timeout=60,
                              env=dict(os.environ, LD_LIBRARY_PATH=verbs,
                                       CUFILE_ENV_PATH_JSON=deep))
        # (read: the value names the path, cut to the item's width)
        got = gds(live)
        check(len(got) == 1 and got[0].startswith("false (" + deep[:300]),
              "a %d-byte cufile.json path under --host-root: %s" % (len(deep), got))
        m = re.search(r"snapshot written to .* \(1 of (\d+) paths could not be kept\)",
                      live.stderr)
        check(m and int(m.group(1)) > 1,
              "a capture with a %d-byte name says %r" % (len(deep), live.stderr.strip()))
    else:
        check(False, "the stand-in libibverbs is not built (GDR_STANDIN_VERBS_DIR)")
    # A live GPU (fake-libcuda.c: "Fake GPU" at the layout's GPU address)
    # is captured with its answers, and replays as the live report.
    fake = os.environ.get("GDR_FAKE_CUDA_DIR")
    if fake and os.path.exists(os.path.join(fake, "libcuda.so.1")):
        snap = os.path.join(out, "fake-gpu.tar")
        env = dict(os.environ, LD_LIBRARY_PATH=fake, GDR_FAKE_GPU_BUSID="0000:03:00.0")
        live = subprocess.run([gdr_info, "--host-root", root, "--capture", snap],
                              capture_output=True, text=True, timeout=60, env=env)
        back = run(gdr_info, "--from", snap)
        check(live.returncode in (0, 1) and "Fake GPU" in live.stdout and
              back.stdout == live.stdout and back.returncode == live.returncode,
              "a live GPU: exit %d (%s), replayed exit %d" %
              (live.returncode, live.stderr.strip(), back.returncode))
        ans = json.load(tarfile.open(snap).extractfile("answers.json")) \
            if os.path.exists(snap) else {}
        dev = (ans.get("cuda", {}).get("devices") or [{}])[0]
        check(dev.get("name") == "Fake GPU" and dev.get("c2c_why") ==
              "not asked: it matters only with the PCIe mapping",
              "answers.json of a live GPU: %s" % dev)
    else:
        print("SKIP a live GPU: no fake libcuda.so.1 (GDR_FAKE_CUDA_DIR)")
    # Reading the snapshot: a read a signal interrupts is retried (the same
    # report); one that fails says so, exit 2. GDR_IO_FAULTS (meson.build)
    # preloads io-faults.c into gdr-info.
    shim = layouts.io_faults(gdr_info)
    if not shim:
        print("SKIP interrupted and failing reads: no io-faults preload (GDR_IO_FAULTS=%s)" %
              os.environ.get("GDR_IO_FAULTS", "unset"))
    else:
        tar = os.path.join(out, "read-faults.tar")
        layouts.pack(root, tar)
        plain = run(gdr_info, "--from", tar, "--json")
        for var, rc, what in (("GDR_IO_READ_EINTR", plain.returncode, plain.stdout),
                              ("GDR_IO_READ_EIO", 2, "")):
            try:
                got = subprocess.run([gdr_info, "--from", tar, "--json"],
                                     capture_output=True, text=True, timeout=20,
                                     env=dict(os.environ, LD_PRELOAD=shim, **{var: ".tar"}))
            except subprocess.TimeoutExpired:
                check(False, "%s: no answer within 20 s" % var)
                continue
            check(got.returncode == rc and got.stdout == what and
                  (rc != 2 or got.stderr == "gdr-info: %s: reading failed\n" % tar),
                  "%s: exit %d, %r" % (var, got.returncode, got.stderr[-300:]))
    if not update:
        stale = sorted({f.rsplit(".", 1)[0] for f in os.listdir(GOLDEN)} - seen)
        check(not stale, "golden files without a layout: %s" % ", ".join(stale))
    print("doctor: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


sys.exit(main())
