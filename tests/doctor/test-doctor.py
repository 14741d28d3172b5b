#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gdr-info on eight realistic node layouts, built as snapshots (the
sysfs/procfs files the report reads plus the CUDA and verbs answers) and
replayed with --root: each report must give the expected verdicts and exit
status, and its JSON must validate against docs/report-schema.json."""
import json
import os
import shutil
import subprocess
import sys

GDR_INFO, SCHEMA, OUT = sys.argv[1], sys.argv[2], sys.argv[3]

NV_OPEN = ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.133.20"
           "  Release Build  (dvs-builder@U16-I3-C01-4-1)  Thu Mar 20 2025\n"
           "GCC version:  gcc version 12.3.0\n")
NV_PROP = ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug"
           " 19 01:15:15 UTC 2023\nGCC version:  gcc version 12.3.0\n")
EBADF, EOPNOTSUPP = 9, 95


def write(root, rel, text, mode="w"):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, mode) as f:
        f.write(text)


def link(root, rel, target):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.symlink(target, path)


def config(acs_redirect):
    """4 KiB of PCI config space with an ACS extended capability."""
    cfg = bytearray(4096)
    cfg[0x100:0x104] = (0x000D | 1 << 16).to_bytes(4, "little")  # ACS, v1, last
    cfg[0x104:0x106] = (0x005F).to_bytes(2, "little")  # capabilities
    ctl = 0x001D if acs_redirect else 0x0000  # SV RR CR UF / none
    cfg[0x106:0x108] = ctl.to_bytes(2, "little")
    return bytes(cfg)


def pci(root, chain, numa=0, group=None, acs=()):
    """chain: ["pci0000:00", bridge..., device]; creates every function."""
    for depth in range(1, len(chain)):
        bdf = chain[depth]
        rel = "sys/devices/" + "/".join(chain[:depth + 1])
        if os.path.exists(os.path.join(root, rel)):
            continue
        write(root, rel + "/numa_node", "%d\n" % numa)
        write(root, rel + "/config", config(bdf in acs), "wb")
        link(root, "sys/bus/pci/devices/" + bdf,
             "../../../devices/" + "/".join(chain[:depth + 1]))
        if group is not None and depth == len(chain) - 1:
            link(root, rel + "/iommu_group", "../" * (depth + 2) +
                 "kernel/iommu_groups/%d" % group)
    return "sys/devices/" + "/".join(chain)


def node(name, kernel="6.5.0-35-generic", nv=NV_OPEN, driver=12040,
         cuda_error="", gpus=(), nics=(), peermem=None, gds=False):
    root = os.path.join(OUT, name)
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(os.path.join(root, "sys"))
    os.makedirs(os.path.join(root, "proc"))
    if nv:
        write(root, "proc/driver/nvidia/version", nv)
    if peermem:
        write(root, "sys/" + peermem, "1.2\n")
    if gds:
        write(root, "sys/module/nvidia_fs/version", "2.24.3\n")
        write(root, "proc/driver/nvidia-fs/version", "2.24\n")
    answers = {
        "format": "libgpudirect-snapshot", "version": 1,
        "kernel_release": kernel,
        "cuda": {"error": cuda_error, "driver_version": 0 if cuda_error else driver,
                 "devices": []},
        "libibverbs_dmabuf": True, "rdma_devices": []}
    for g in gpus:
        dev = pci(root, g["chain"], g.get("numa", 0), g.get("group"), g.get("acs", ()))
        answers["cuda"]["devices"].append({
            "name": "NVIDIA H100 80GB HBM3", "pci_bus_id": g["chain"][-1].upper(),
            "dmabuf_supported": g.get("dmabuf", 1), "gpudirect_rdma_supported": 1,
            "gpudirect_rdma_with_vmm": 1})
    for n in nics:
        dev = pci(root, n["chain"], n.get("numa", 0), n.get("group"), n.get("acs", ()))
        link(root, "sys/class/infiniband/%s/device" % n["name"],
             "../../../" + dev[len("sys/"):])
        answers["rdma_devices"].append({
            "name": n["name"], "dmabuf_probe_errno": n.get("probe", EBADF),
            "port_state": 4, "link_layer": n.get("ll", 1)})
    write(root, "answers.json", json.dumps(answers, indent=1))
    return root


R0 = "pci0000:00"
SW = ["0000:00:01.0", "0000:01:00.0"]           # a switch: root port, upstream port
GPU_SW = [R0] + SW + ["0000:02:00.0", "0000:03:00.0"]   # downstream port, GPU
NIC_SW = [R0] + SW + ["0000:02:04.0", "0000:04:00.0"]   # downstream port, NIC
GPU_RP = [R0, "0000:00:02.0", "0000:05:00.0"]  # GPU on its own root port
NIC_RP = [R0, "0000:00:03.0", "0000:06:00.0"]
NIC_S1 = ["pci0000:80", "0000:80:01.0", "0000:81:00.0"]  # other socket

LAYOUTS = [
    ("open-6x-no-peermem-phb",
     dict(gpus=[dict(chain=GPU_RP, group=20)], nics=[dict(name="mlx5_0", chain=NIC_RP, group=21)]),
     0, {("node", "nvidia_driver"): "ok", ("node", "nvidia_peermem"): "missing",
         ("node", "kernel"): "ok", ("mlx5_0", "path_gpu0"): ("ok", "dmabuf"),
         ("mlx5_0", "topology_gpu0"): ("info", "PHB"),
         ("mlx5_0", "pci_address"): ("info", "0000:06:00.0"),
         ("gpu0", "iommu_group"): ("info", "20")}),
    ("proprietary-peermem-nv_mem",
     dict(nv=NV_PROP, kernel="5.15.0-105-generic",
          peermem="kernel/mm/memory_peers/nv_mem/version",
          gpus=[dict(chain=GPU_SW, dmabuf=0)], nics=[dict(name="mlx5_0", chain=NIC_SW)]),
     0, {("node", "nvidia_driver"): "wrong", ("node", "nvidia_peermem"): "ok",
         ("gpu0", "dmabuf_supported"): "wrong",
         ("mlx5_0", "path_gpu0"): ("ok", "peermem (DMA-BUF unavailable)")}),
    ("open-kernel-5.4",
     dict(kernel="5.4.0-182-generic", gpus=[dict(chain=GPU_SW)],
          nics=[dict(name="mlx5_0", chain=NIC_SW)]),
     1, {("node", "kernel"): ("wrong", "5.4.0-182-generic"),
         ("mlx5_0", "path_gpu0"): ("missing", "none")}),
    ("no-nvidia-driver",
     dict(nv=None, cuda_error="libcuda.so.1 could not be loaded (libcuda.so.1: "
          "cannot open shared object file)", nics=[dict(name="mlx5_0", chain=NIC_RP)]),
     1, {("node", "nvidia_driver"): "missing", ("node", "cuda_driver_api"): "missing",
         ("node", "cuda_devices"): ("missing", "0"), ("mlx5_0", "dmabuf_mr"): "ok"}),
    ("gds-enabled",
     dict(gds=True, gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW)]),
     0, {("node", "gpudirect_storage"): ("ok", "nvidia_fs loaded 2.24.3, /proc/driver/nvidia-fs present"),
         ("mlx5_0", "path_gpu0"): ("ok", "dmabuf")}),
    ("one-switch-pix",
     dict(gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW)]),
     0, {("mlx5_0", "topology_gpu0"): ("ok", "PIX"),
         ("mlx5_0", "acs_redirect_gpu0"): ("ok", "none")}),
    ("across-sockets-sys-acs",
     dict(gpus=[dict(chain=GPU_RP, numa=0)],
          nics=[dict(name="mlx5_1", chain=NIC_S1, numa=1, acs=("0000:80:01.0",))]),
     0, {("mlx5_1", "topology_gpu0"): ("wrong", "SYS"),
         ("mlx5_1", "acs_redirect_gpu0"): ("wrong", "0000:80:01.0"),
         ("mlx5_1", "path_gpu0"): ("ok", "dmabuf")}),
    ("cuda-11.4-driver",
     dict(driver=11040, gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW)]),
     1, {("node", "cuda_driver_api"): ("wrong", "11.4 (11040)"),
         ("mlx5_0", "path_gpu0"): ("missing", "none")}),
]


def main():
    try:
        import jsonschema
    except ImportError:
        print("SKIP: python3-jsonschema is not installed (apt-get install python3-jsonschema)")
        return 77
    schema = json.load(open(SCHEMA))
    passed = failed = 0

    def check(cond, what):
        nonlocal passed, failed
        if cond:
            passed += 1
        else:
            failed += 1
            print("FAIL " + what)

    for name, spec, want_rc, want in LAYOUTS:
        root = node(name, **spec)
        res = subprocess.run([GDR_INFO, "--root", root, "--json"],
                             capture_output=True, text=True)
        check(res.returncode == want_rc, "%s: exit %d, want %d %s" %
              (name, res.returncode, want_rc, res.stderr.strip()))
        try:
            rep = json.loads(res.stdout)
        except ValueError as e:
            check(False, "%s: JSON does not parse: %s" % (name, e))
            continue
        try:
            jsonschema.validate(rep, schema)
            check(True, "")
        except jsonschema.ValidationError as e:
            check(False, "%s: schema: %s" % (name, e.message))
        items = {(i["section"], i["key"]): i for i in rep["items"]}
        for key, exp in want.items():
            verdict, value = exp if isinstance(exp, tuple) else (exp, None)
            it = items.get(key)
            check(it is not None, "%s: no item %s" % (name, key))
            if not it:
                continue
            check(it["verdict"] == verdict, "%s: %s/%s verdict %s, want %s (%s)" %
                  (name, key[0], key[1], it["verdict"], verdict, it["value"]))
            if value is not None:
                check(it["value"] == value, "%s: %s/%s value %r, want %r" %
                      (name, key[0], key[1], it["value"], value))
        check(rep["gpudirect_rdma_usable"] == (want_rc == 0),
              "%s: usable is %s" % (name, rep["gpudirect_rdma_usable"]))
        text = subprocess.run([GDR_INFO, "--root", root], capture_output=True, text=True)
        check(text.returncode == want_rc and "GPUDirect RDMA:" in text.stdout,
              "%s: text report" % name)
        # The same layout packed as a tar replays the same way.
        tar = root + ".tar"
        subprocess.run(["tar", "-cf", tar, "-C", root, "."], check=True)
        again = subprocess.run([GDR_INFO, "--from", tar, "--json"], capture_output=True, text=True)
        check(again.stdout == res.stdout, "%s: --from gives another report" % name)
        print("ok   %-28s exit %d, %d items" % (name, res.returncode, len(rep["items"])))
    print("doctor: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


sys.exit(main())
