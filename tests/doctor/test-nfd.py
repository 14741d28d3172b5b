#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gdr-info --nfd: the Node Feature Discovery feature file of every doctor
layout (tests/doctor/layouts.py) follows NFD's rules and carries the
expected labels; long device names are cut and stay unique; a node too big
for 64 KiB is truncated with a label saying so; the file is replaced
atomically; --host-root reads a fixture tree as the host's.

    test-nfd.py GDR_INFO OUTDIR"""
import datetime
import os
import shutil
import stat
import re
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import layouts  # noqa: E402

PREFIX = "feature.node.kubernetes.io/"
NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
EXPIRY = re.compile(r"^# \+expiry-time=(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)$")

# The full label set of the layouts the issue names (version aside).
WANT = {
    "iommu-translated-strict-nic-only": {
        "gpudirect-rdma.usable": "true", "gpudirect-dmabuf.ready": "true",
        "gpudirect-data-direct.ready": "false", "gpudirect-peermem.ready": "false",
        "gpudirect-gds.ready": "false", "gpudirect-gpu.count": "1",
        "gpudirect-iommu.translated": "true",
        "gpudirect-rdma.devices": "1", "gpudirect-host-only": "false",
        "gpudirect-gpu0.mlx5_0.path": "dmabuf", "gpudirect-gpu0.mlx5_0.pcie": "PIX"},
    "iommu-group-without-type": {
        "gpudirect-rdma.usable": "true", "gpudirect-dmabuf.ready": "true",
        "gpudirect-data-direct.ready": "false", "gpudirect-peermem.ready": "false",
        "gpudirect-gds.ready": "false", "gpudirect-gpu.count": "1",
        "gpudirect-rdma.devices": "1", "gpudirect-host-only": "false",
        "gpudirect-gpu0.mlx5_0.path": "dmabuf", "gpudirect-gpu0.mlx5_0.pcie": "PIX"},
    "open-6x-no-peermem-phb": {
        "gpudirect-rdma.usable": "true", "gpudirect-dmabuf.ready": "true",
        "gpudirect-data-direct.ready": "false", "gpudirect-peermem.ready": "false",
        "gpudirect-gds.ready": "false", "gpudirect-gpu.count": "1",
        "gpudirect-iommu.translated": "false",
        "gpudirect-rdma.devices": "1", "gpudirect-host-only": "false",
        "gpudirect-gpu0.mlx5_0.path": "dmabuf", "gpudirect-gpu0.mlx5_0.pcie": "PHB"},
    "proprietary-peermem-nv_mem": {
        "gpudirect-rdma.usable": "true", "gpudirect-dmabuf.ready": "false",
        "gpudirect-data-direct.ready": "false", "gpudirect-peermem.ready": "true",
        "gpudirect-gds.ready": "false", "gpudirect-gpu.count": "1",
        "gpudirect-iommu.translated": "false",
        "gpudirect-rdma.devices": "1", "gpudirect-host-only": "false",
        "gpudirect-gpu0.mlx5_0.path": "peermem", "gpudirect-gpu0.mlx5_0.pcie": "PIX"},
    "open-kernel-5.4": {
        "gpudirect-rdma.usable": "false", "gpudirect-dmabuf.ready": "false",
        "gpudirect-data-direct.ready": "false", "gpudirect-peermem.ready": "false",
        "gpudirect-gds.ready": "false", "gpudirect-gpu.count": "1",
        "gpudirect-iommu.translated": "false",
        "gpudirect-rdma.devices": "1", "gpudirect-host-only": "false",
        "gpudirect-gpu0.mlx5_0.path": "none", "gpudirect-gpu0.mlx5_0.pcie": "PIX"},
    "no-nvidia-driver": {
        "gpudirect-rdma.usable": "false", "gpudirect-dmabuf.ready": "false",
        "gpudirect-data-direct.ready": "false", "gpudirect-peermem.ready": "false",
        "gpudirect-gds.ready": "false", "gpudirect-gpu.count": "0",
        "gpudirect-iommu.translated": "false",
        "gpudirect-rdma.devices": "1", "gpudirect-host-only": "true"},
    "gds-enabled": {
        "gpudirect-rdma.usable": "true", "gpudirect-dmabuf.ready": "true",
        "gpudirect-data-direct.ready": "false", "gpudirect-peermem.ready": "false",
        "gpudirect-gds.ready": "true", "gpudirect-gpu.count": "1",
        "gpudirect-iommu.translated": "false",
        "gpudirect-rdma.devices": "1", "gpudirect-host-only": "false",
        "gpudirect-gpu0.mlx5_0.path": "dmabuf", "gpudirect-gpu0.mlx5_0.pcie": "PIX"},
    "one-switch-pix": {
        "gpudirect-rdma.usable": "true", "gpudirect-dmabuf.ready": "true",
        "gpudirect-data-direct.ready": "false", "gpudirect-peermem.ready": "false",
        "gpudirect-gds.ready": "false", "gpudirect-gpu.count": "1",
        "gpudirect-iommu.translated": "false",
        "gpudirect-rdma.devices": "1", "gpudirect-host-only": "false",
        "gpudirect-gpu0.mlx5_0.path": "dmabuf", "gpudirect-gpu0.mlx5_0.pcie": "PIX"},
    "across-sockets-sys-acs": {
        "gpudirect-rdma.usable": "true", "gpudirect-dmabuf.ready": "true",
        "gpudirect-data-direct.ready": "false", "gpudirect-peermem.ready": "false",
        "gpudirect-gds.ready": "false", "gpudirect-gpu.count": "1",
        "gpudirect-iommu.translated": "false",
        "gpudirect-rdma.devices": "1", "gpudirect-host-only": "false",
        "gpudirect-gpu0.mlx5_1.path": "dmabuf", "gpudirect-gpu0.mlx5_1.pcie": "SYS"},
    "rdma-devices-named-node-gpu0": {
        "gpudirect-rdma.usable": "true", "gpudirect-dmabuf.ready": "true",
        "gpudirect-data-direct.ready": "false", "gpudirect-peermem.ready": "false",
        "gpudirect-gds.ready": "false", "gpudirect-gpu.count": "1",
        "gpudirect-iommu.translated": "true",
        "gpudirect-rdma.devices": "2", "gpudirect-host-only": "false",
        "gpudirect-gpu0.node.path": "dmabuf", "gpudirect-gpu0.node.pcie": "PIX",
        "gpudirect-gpu0.gpu0.path": "none", "gpudirect-gpu0.gpu0.pcie": "PHB"},
    "data-direct-cx8": {
        "gpudirect-rdma.usable": "true", "gpudirect-dmabuf.ready": "true",
        "gpudirect-data-direct.ready": "true", "gpudirect-peermem.ready": "false",
        "gpudirect-gds.ready": "false", "gpudirect-gpu.count": "1",
        "gpudirect-iommu.translated": "false",
        "gpudirect-rdma.devices": "1", "gpudirect-host-only": "false",
        "gpudirect-gpu0.mlx5_0.path": "data-direct", "gpudirect-gpu0.mlx5_0.pcie": "PIX"},
}

passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL " + what)
    return cond


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=60)


def parse(name, text, expiry=3600):
    """The labels of a feature file, each rule of NFD checked."""
    check(len(text.encode()) <= 65536, "%s: %d bytes, over 64 KiB" % (name, len(text)))
    lines = text.split("\n")
    check(lines[-1] == "", "%s: the file does not end with a newline" % name)
    check(lines[0].startswith("# "), "%s: no comment first" % name)
    m = EXPIRY.match(lines[1])
    if check(m is not None, "%s: no expiry directive on line 2: %r" % (name, lines[1])):
        when = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%SZ")
        now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
        check(abs((when - now).total_seconds() - expiry) < 120,
              "%s: expiry %s is not %d s from now" % (name, m.group(1), expiry))
    labels = {}
    for line in lines[2:-1]:
        if not check(line.startswith(PREFIX) and "=" in line,
                     "%s: line %r is no prefixed name=value" % (name, line)):
            continue
        key, value = line[len(PREFIX):].split("=", 1)
        check(len(key) <= 63 and NAME.match(key) is not None,
              "%s: name %r breaks the label rules" % (name, key))
        check(len(value) <= 63 and VALUE.match(value) is not None,
              "%s: value %r breaks the label rules" % (name, value))
        check(key not in labels, "%s: %s twice" % (name, key))
        labels[key] = value
    return labels


def leftovers(d):
    return [f for f in os.listdir(d) if f.startswith(".")]


def main():
    gdr_info, out = sys.argv[1], sys.argv[2]
    # A clean start: a file an earlier run left must not fail this one.
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    labels_dir = os.path.join(out, "features.d")
    os.makedirs(labels_dir, exist_ok=True)
    roots = {}
    for name, root, want_rc, _ in layouts.build_all(os.path.join(out, "layouts")):
        roots[name] = root
        path = os.path.join(labels_dir, name)
        res = run(gdr_info, "--root", root, "--nfd", path)
        check(res.returncode == want_rc, "%s: --nfd changed the exit status to %d (%s)"
              % (name, res.returncode, res.stderr.strip()))
        if not check(os.path.exists(path), "%s: no feature file" % name):
            continue
        labels = parse(name, open(path).read())
        check(labels.pop("gpudirect-version", "").count(".") == 2,
              "%s: no gpudirect-version" % name)
        check(labels.get("gpudirect-rdma.usable") == ("true" if want_rc == 0 else "false"),
              "%s: gpudirect-rdma.usable disagrees with the exit status" % name)
        if name in WANT:
            check(labels == WANT[name], "%s: labels %s, want %s" % (name, labels, WANT[name]))
        print("ok   %-36s %d labels" % (name, len(labels) + 1))
    check(not leftovers(labels_dir), "dot-files left behind: %s" % leftovers(labels_dir))
    check(set(WANT) <= set(roots), "a layout of WANT is gone")

    # Long device names: cut to fit, unique by a hash of the whole.
    long_a = "mlx5_bond.0-" + "a" * 50          # 62 characters, a '.'
    long_b = "mlx5_bond.0-" + "a" * 49 + "b"
    root = layouts.node(out, "long-names", gpus=[dict(chain=layouts.GPU_SW)],
                        nics=[dict(name=long_a, chain=layouts.NIC_SW),
                              dict(name=long_b, chain=layouts.NIC_RP),
                              dict(name="mlx5_bond.1", chain=layouts.NIC_HB2)])
    path = os.path.join(labels_dir, "long-names")
    res = run(gdr_info, "--root", root, "--nfd", path)
    labels = parse("long-names", open(path).read())
    check(labels.get("gpudirect-gpu0.mlx5_bond-1.path") == "dmabuf",
          "a '.' in a device name is not replaced: %s" % sorted(labels))
    pairs = sorted(k for k in labels if k.endswith(".path") and "aaaa" in k)
    check(len(pairs) == 2 and pairs[0] != pairs[1], "long names collide: %s" % pairs)
    check(all("mlx5_bond-0-aaaa" in k for k in pairs), "long names lost their start: %s" % pairs)
    print("ok   long device names: %s" % ", ".join(pairs))

    # Too many pairs for 64 KiB: node labels stay, a label says so.
    gpus = [dict(chain=["pci0000:%02x" % (0x10 + g), "0000:%02x:01.0" % (0x10 + g),
                        "0000:%02x:00.0" % (0x11 + g)]) for g in range(0, 32, 2)]
    nics = [dict(name="mlx5_%d_%s" % (i, "x" * 20),
                 chain=["pci0000:%02x" % (0x80 + i), "0000:%02x:01.0" % (0x80 + i),
                        "0000:%02x:00.0" % (0x81 + i)]) for i in range(0, 64, 2)]
    root = layouts.node(out, "huge", gpus=gpus, nics=nics)
    path = os.path.join(labels_dir, "huge")
    res = run(gdr_info, "--root", root, "--nfd", path)
    text = open(path).read()
    labels = parse("huge", text)
    check(labels.get("gpudirect-labels.truncated") == "true",
          "16 GPUs x 32 NICs: no truncation label (%d bytes)" % len(text))
    # the truncation label itself fits: the file stays within 64 KiB
    check(len(text.encode()) <= 65536, "16 GPUs x 32 NICs: %d bytes, over 64 KiB" % len(text))
    check(labels.get("gpudirect-gpu.count") == "16" and "gpudirect-rdma.usable" in labels,
          "16 GPUs x 32 NICs: node labels missing")
    print("ok   16 GPUs x 32 NICs: %d bytes, %d labels, truncated" % (len(text), len(labels)))
    # The same with device names of other lengths, so that the last label
    # that fits leaves less room than the truncation label needs in some
    # of them: the file still ends within 64 KiB, the label in it.
    for extra in range(1, 9):
        nics_n = [dict(n, name="mlx5_%d_%s" % (i, "x" * (20 + extra)))
                  for i, n in zip(range(0, 64, 2), nics)]
        root = layouts.node(out, "huge-%d" % extra, gpus=gpus, nics=nics_n)
        path = os.path.join(labels_dir, "huge-%d" % extra)
        run(gdr_info, "--root", root, "--nfd", path)
        text = open(path).read() if os.path.exists(path) else ""
        check(len(text.encode()) <= 65536 and text.endswith(
            "gpudirect-labels.truncated=true\n"),
            "device names %d longer: %d bytes, ends %r" % (extra, len(text), text[-60:]))

    # a node with neither GPU nor RDMA device is not "host-only".
    root = layouts.node(out, "empty")
    path = os.path.join(labels_dir, "empty")
    run(gdr_info, "--root", root, "--nfd", path)
    labels = parse("empty", open(path).read())
    check(labels.get("gpudirect-host-only") == "false",
          "no GPU and no RDMA device labelled host-only=%s" % labels.get("gpudirect-host-only"))

    # --nfd-expiry
    path = os.path.join(labels_dir, "expiry")
    res = run(gdr_info, "--root", roots["one-switch-pix"], "--nfd", path,
              "--nfd-expiry", "600")
    parse("expiry", open(path).read(), expiry=600)
    # Both edges taken exactly; past them, or not digits, refused.
    for secs in (60, 31622400):
        res = run(gdr_info, "--root", roots["one-switch-pix"], "--nfd", path,
                  "--nfd-expiry", str(secs))
        parse("expiry-%d" % secs, open(path).read(), expiry=secs)
    for bad in ("5", "59", "31622401", "600s", "0x258", " 600", "-600", ""):
        res = run(gdr_info, "--root", roots["one-switch-pix"], "--nfd", path,
                  "--nfd-expiry", bad)
        check(res.returncode == 2 and "--nfd-expiry" in res.stderr,
              "--nfd-expiry %r was accepted" % bad)

    # Atomic replacement: a reader never sees part of a file.
    path = os.path.join(labels_dir, "atomic")
    run(gdr_info, "--root", roots["one-switch-pix"], "--nfd", path)
    whole = open(path).read()
    partial = []
    stop = threading.Event()

    def reader():
        while not stop.is_set():
            try:
                t = open(path).read()
            except FileNotFoundError:
                partial.append("vanished")
                continue
            if len(t) != len(whole) or not t.endswith("\n"):
                partial.append(t)

    th = threading.Thread(target=reader)
    th.start()
    for _ in range(60):
        run(gdr_info, "--root", roots["one-switch-pix"], "--nfd", path)
    stop.set()
    th.join()
    check(not partial, "a reader saw %d partial or missing files" % len(partial))
    check(not leftovers(labels_dir), "dot-files left behind: %s" % leftovers(labels_dir))
    print("ok   60 rewrites under a reader: no partial file, no dot-file left")

    # The file's mode is 0644 whatever the umask: NFD (another user in
    # some setups) must read it; nothing makes it writable to others.
    for mask in (0o077, 0o000, 0o022):
        path = os.path.join(labels_dir, "mode-%03o" % mask)
        old = os.umask(mask)
        try:
            res = run(gdr_info, "--root", roots["one-switch-pix"], "--nfd", path)
        finally:
            os.umask(old)
        mode = stat.S_IMODE(os.stat(path).st_mode) if os.path.exists(path) else None
        check(mode == 0o644, "umask %03o: the feature file has mode %s, want 0644"
              % (mask, oct(mode) if mode is not None else "none (not written)"))
    # The target is a directory: refused before anything is made (exit
    # 2), the directory untouched, no dot-file left beside it.
    target = os.path.join(labels_dir, "a-directory")
    os.makedirs(os.path.join(target, "inside"), exist_ok=True)
    res = run(gdr_info, "--root", roots["one-switch-pix"], "--nfd", target)
    check(res.returncode == 2 and "is a directory" in res.stderr and
          "nothing was changed" in res.stderr,
          "--nfd over a directory: exit %d, %r" % (res.returncode, res.stderr))
    check(os.listdir(target) == ["inside"], "--nfd over a directory changed it")
    check(not leftovers(labels_dir), "a failed rename left %s" % leftovers(labels_dir))
    os.rmdir(os.path.join(target, "inside"))
    os.rmdir(target)
    print("ok   mode 0644 under every umask; a failed rename leaves nothing")

    # An empty name: refused before anything is made (no dot-file in the
    # working directory), for --nfd and --capture alike.
    for opt in ("--nfd", "--capture"):
        args = ["--root", roots["one-switch-pix"]] if opt == "--nfd" else []
        res = subprocess.run([os.path.abspath(gdr_info)] + args + [opt, ""],
                             capture_output=True, text=True,
                             timeout=30, cwd=labels_dir)
        check(res.returncode == 2 and "an empty file name" in res.stderr and
              not leftovers(labels_dir),
              "%s '': exit %d, %r" % (opt, res.returncode, res.stderr))

    # A directory that cannot take the file: exit 2, nothing left.
    blocker = os.path.join(out, "not-a-dir")
    open(blocker, "w").close()
    res = run(gdr_info, "--root", roots["one-switch-pix"], "--nfd", blocker + "/labels")
    check(res.returncode == 2 and "Not a directory" in res.stderr,
          "--nfd into a file's path: exit %d, %r" % (res.returncode, res.stderr))

    # Something appears at a new name while the file is written (a FIFO,
    # planted by the preload at the first write): it is refused, never
    # replaced, and nothing is left.
    shim = layouts.io_faults(gdr_info)
    if shim:
        path = os.path.join(labels_dir, "raced")
        res = subprocess.run([gdr_info, "--root", roots["one-switch-pix"], "--nfd", path],
                             capture_output=True, text=True, timeout=30,
                             env=dict(os.environ, LD_PRELOAD=shim, GDR_IO_PLANT_FIFO=path))
        check(res.returncode == 2 and "is a FIFO" in res.stderr and
              stat.S_ISFIFO(os.lstat(path).st_mode) and not leftovers(labels_dir),
              "a FIFO planted at a new name: exit %d, %r" % (res.returncode, res.stderr))
        os.unlink(path)
        res = subprocess.run([gdr_info, "--root", roots["one-switch-pix"], "--nfd", path],
                             capture_output=True, text=True, timeout=30,
                             env=dict(os.environ, LD_PRELOAD=shim, GDR_IO_PLANT_FILE=path))
        check(res.returncode == 2 and "appeared while it was written" in res.stderr and
              open(path).read() == "planted\n" and not leftovers(labels_dir),
              "a file planted at a new name: exit %d, %r" % (res.returncode, res.stderr))
        os.unlink(path)
        print("ok   a FIFO or file that appears at a new name meanwhile is refused, not replaced")
        # A file system without RENAME_NOREPLACE (renameat2 EINVAL or
        # ENOSYS): a new name is still written, by rename.
        for e in ("22", "38"):
            path = os.path.join(labels_dir, "no-noreplace-" + e)
            res = subprocess.run([gdr_info, "--root", roots["one-switch-pix"], "--nfd", path],
                                 capture_output=True, text=True, timeout=30,
                                 env=dict(os.environ, LD_PRELOAD=shim, GDR_IO_RENAMEAT2_ERRNO=e))
            check(res.returncode in (0, 1) and os.path.isfile(path) and not leftovers(labels_dir),
                  "renameat2 errno %s: exit %d, %r" % (e, res.returncode, res.stderr))
        # renameat2 failing otherwise (ENOSPC): refused, nothing written.
        path = os.path.join(labels_dir, "enospc")
        res = subprocess.run([gdr_info, "--root", roots["one-switch-pix"], "--nfd", path],
                             capture_output=True, text=True, timeout=30,
                             env=dict(os.environ, LD_PRELOAD=shim, GDR_IO_RENAMEAT2_ERRNO="28"))
        check(res.returncode == 2 and "No space left" in res.stderr and
              not os.path.exists(path) and not leftovers(labels_dir),
              "renameat2 ENOSPC: exit %d, %r" % (res.returncode, res.stderr))
        # The rename over an existing file fails (EIO): exit 2, the file
        # as it was, no dot-file left beside it.
        path = os.path.join(labels_dir, "rename-fails")
        with open(path, "w") as f:
            f.write("old\n")
        res = subprocess.run([gdr_info, "--root", roots["one-switch-pix"], "--nfd", path],
                             capture_output=True, text=True, timeout=30,
                             env=dict(os.environ, LD_PRELOAD=shim, GDR_IO_RENAME_ERRNO="5"))
        check(res.returncode == 2 and "renaming" in res.stderr and
              open(path).read() == "old\n" and not leftovers(labels_dir),
              "a failing rename: exit %d, %r, left %s" % (res.returncode, res.stderr,
                                                         leftovers(labels_dir)))
        os.unlink(path)
        print("ok   renameat2 without RENAME_NOREPLACE, failing renames leave nothing")
        # An output checked as a regular file is swapped for a FIFO while
        # its dot-file is written (the preload swaps it at the first
        # write): the check before the rename refuses it, the FIFO stays
        # as it is and no dot-file is left; --nfd and --capture alike.
        for opt, args in (("--nfd", ["--root", roots["one-switch-pix"]]),
                          ("--capture", ["--host-root", roots["one-switch-pix"]])):
            path = os.path.join(labels_dir, "swapped" + opt)
            with open(path, "w") as f:
                f.write("old\n")
            res = subprocess.run([gdr_info] + args + [opt, path],
                                 capture_output=True, text=True, timeout=30,
                                 env=dict(os.environ, LD_PRELOAD=shim, GDR_IO_SWAP_FIFO=path))
            check(res.returncode == 2 and path + " is a FIFO" in res.stderr and
                  "nothing was changed" in res.stderr and
                  stat.S_ISFIFO(os.lstat(path).st_mode) and not leftovers(labels_dir),
                  "%s over a file swapped for a FIFO meanwhile: exit %d, %r, FIFO %s, left %s" %
                  (opt, res.returncode, res.stderr, stat.S_ISFIFO(os.lstat(path).st_mode),
                   leftovers(labels_dir)))
            os.unlink(path)
        # A new name where renameat2 lacks RENAME_NOREPLACE: a FIFO that
        # appears meanwhile is refused by the same check, not renamed over.
        path = os.path.join(labels_dir, "planted-no-noreplace")
        res = subprocess.run([gdr_info, "--root", roots["one-switch-pix"], "--nfd", path],
                             capture_output=True, text=True, timeout=30,
                             env=dict(os.environ, LD_PRELOAD=shim, GDR_IO_RENAMEAT2_ERRNO="22",
                                      GDR_IO_PLANT_FIFO=path))
        check(res.returncode == 2 and path + " is a FIFO" in res.stderr and
              stat.S_ISFIFO(os.lstat(path).st_mode) and not leftovers(labels_dir),
              "a FIFO planted at a new name, renameat2 EINVAL: exit %d, %r" %
              (res.returncode, res.stderr))
        os.unlink(path)
        print("ok   an output swapped for a FIFO while it is written is refused, not replaced")

    # Writes a file system cuts short (100 bytes a call) still give the
    # whole file; a write that fails names the error (ENOSPC here), exit
    # 2, nothing left. GDR_IO_FAULTS (meson.build) preloads io-faults.c.
    shim = layouts.io_faults(gdr_info)
    if not shim:
        print("SKIP short and failing writes: no io-faults preload (GDR_IO_FAULTS=%s)" %
              os.environ.get("GDR_IO_FAULTS", "unset"))
    else:
        path = os.path.join(labels_dir, "short-writes")
        res = subprocess.run([gdr_info, "--root", roots["one-switch-pix"], "--nfd", path],
                             capture_output=True, text=True, timeout=30,
                             env=dict(os.environ, LD_PRELOAD=shim, GDR_IO_WRITE_MAX="100"))
        want = re.sub(r"expiry-time=\S+", "", whole)
        got = open(path).read() if os.path.exists(path) else ""
        check(res.returncode == 0 and re.sub(r"expiry-time=\S+", "", got) == want,
              "short writes: exit %d, %d bytes, want %d (%s)" %
              (res.returncode, len(got), len(whole), res.stderr.strip()))
        path = os.path.join(labels_dir, "enospc")
        res = subprocess.run([gdr_info, "--root", roots["one-switch-pix"], "--nfd", path],
                             capture_output=True, text=True, timeout=30,
                             env=dict(os.environ, LD_PRELOAD=shim, GDR_IO_WRITE_ERRNO="28"))
        check(res.returncode == 2 and "failed: No space left on device" in res.stderr
              and not os.path.exists(path),
              "a failing write: exit %d, %r" % (res.returncode, res.stderr))
        check(not leftovers(labels_dir), "failed writes left %s" % leftovers(labels_dir))
        print("ok   short writes give the whole file; a failing write says why")

    # --host-root over a fixture tree: the host's files, the host's paths.
    root = roots["gpu-with-nic-without-dmabuf-peermem"]
    res = run(gdr_info, "--host-root", root, "--json")
    check(res.returncode in (0, 1), "--host-root: exit %d (%s)" % (res.returncode, res.stderr))
    check('"value": "570.133.20 (open kernel module)"' in res.stdout,
          "--host-root: the fixture's driver version is not in the report")
    check('"value": "1.2 (/sys/kernel/mm/memory_peers/nv_mem/version)"' in res.stdout,
          "--host-root: peermem is not shown at its host path")
    check(root not in res.stdout, "--host-root: the fixture's own path leaks into the report")
    res = run(gdr_info, "--host-root", root, "--from", "x.tar")
    check(res.returncode == 2 and "--host-root" in res.stderr,
          "--host-root with --from: exit %d" % res.returncode)
    res = run(gdr_info, "--host-root", os.path.join(out, "nowhere"))
    check(res.returncode == 2 and "is not a directory" in res.stderr,
          "--host-root on a missing directory: exit %d, %r" % (res.returncode, res.stderr))
    print("ok   --host-root over a fixture tree")

    print("nfd: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


sys.exit(main())
