# SPDX-License-Identifier: MIT
"""Realistic node layouts for the doctor, written as gdr-info snapshots: the
sysfs/procfs files the report reads plus the CUDA and verbs answers
(answers.json, snapshot format version 1, as gdr-info --capture writes it).

Each layout names the exit status and the verdicts it must produce. Shared
by test-doctor.py (verdicts, exit codes, goldens) and check-schema.py."""
import json
import os
import shutil
import subprocess

NV_OPEN = ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.133.20"
           "  Release Build  (dvs-builder@U16-I3-C01-4-1)  Thu Mar 20 2025\n"
           "GCC version:  gcc version 12.3.0\n")
NV_PROP = ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug"
           " 19 01:15:15 UTC 2023\nGCC version:  gcc version 12.3.0\n")
EBADF, ENODEV, EOPNOTSUPP = 9, 19, 95
CUDA_ERROR_NOT_SUPPORTED = 801
CMDLINE = "BOOT_IMAGE=/boot/vmlinuz-6.5.0-35-generic root=/dev/sda1 ro quiet"
PEERMEM_MODULE = "module/nvidia_peermem/version"
PEERMEM_ENTRY = "kernel/mm/memory_peers/nv_mem/version"  # registered with the RDMA core
BAR1_H100 = (2 << 20, 128 << 30)  # (bytes used, total): an idle H100's BAR1

# ACS control register bits (PCIe base spec 7.7.8.3)
ACS_SV, ACS_TB, ACS_RR, ACS_CR, ACS_UF, ACS_DT = 0x01, 0x02, 0x04, 0x08, 0x10, 0x40


def io_faults(gdr_info):
    """The io-faults preload (GDR_IO_FAULTS, from meson.build) if gdr-info
    runs with it here, else None (say SKIP: a sanitizer build, say)."""
    shim = os.environ.get("GDR_IO_FAULTS")
    if not shim:
        return None
    probe = subprocess.run([gdr_info, "-h"], capture_output=True, timeout=60,
                           env=dict(os.environ, LD_PRELOAD=shim))
    return shim if probe.returncode == 0 else None


def write(root, rel, text, mode="w"):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, mode) as f:
        f.write(text)


def pack(root, tar_path, gz=False):
    """The layout as gdr-info --capture writes it (snapshot format 2):
    regular files and directories as tar members, the links in
    answers.json's "links" (a snapshot never carries a link member)."""
    import io
    import tarfile
    links = {}
    files = []
    for d, dirs, names in os.walk(root):
        for n in sorted(dirs + names):
            full = os.path.join(d, n)
            rel = os.path.relpath(full, root)
            if os.path.islink(full):
                links[rel] = os.readlink(full)
            elif os.path.isfile(full):
                files.append(rel)
        dirs[:] = sorted(x for x in dirs if not os.path.islink(os.path.join(d, x)))
    with open(os.path.join(root, "answers.json")) as f:
        answers = json.load(f)
    answers["version"] = 2
    answers["links"] = links
    with tarfile.open(tar_path, "w:gz" if gz else "w", format=tarfile.USTAR_FORMAT) as t:
        for rel in files:
            if rel == "answers.json":
                continue
            t.add(os.path.join(root, rel), arcname=rel, recursive=False)
        data = json.dumps(answers, indent=1).encode()
        info = tarfile.TarInfo("answers.json")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))


def link(root, rel, target):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.symlink(target, path)


def config(acs_ctl, ats=None):
    """4 KiB of PCI config space with an ACS extended capability whose
    control register holds acs_ctl; ats (True: enabled, False: capable,
    not enabled) adds an ATS capability after it. "unreadable" gives the
    64 bytes a process without root reads."""
    if ats == "unreadable":
        return bytes(64)
    cfg = bytearray(4096)
    nxt = 0x140 if ats is not None else 0
    cfg[0x100:0x104] = (0x000D | 1 << 16 | nxt << 20).to_bytes(4, "little")  # ACS, v1
    cfg[0x104:0x106] = (0x007F).to_bytes(2, "little")  # capabilities
    cfg[0x106:0x108] = acs_ctl.to_bytes(2, "little")
    if ats is not None:
        cfg[0x140:0x144] = (0x000F | 1 << 16).to_bytes(4, "little")  # ATS, v1, last
        cfg[0x146:0x148] = (0x8000 if ats else 0).to_bytes(2, "little")  # Enable
    return bytes(cfg)


def pci(root, chain, numa=0, group=None, acs=None, ats=None, iommu_type=None):
    """chain: ["pci0000:00", bridge..., device]; creates every function.
    acs: {bdf: ACS control bits} of the node's bridges; ats: the device's
    ATS (see config()); iommu_type: its IOMMU group's type file."""
    acs = acs or {}
    for depth in range(1, len(chain)):
        bdf = chain[depth]
        rel = "sys/devices/" + "/".join(chain[:depth + 1])
        if os.path.exists(os.path.join(root, rel)):
            continue
        write(root, rel + "/numa_node", "%d\n" % numa)
        last = depth == len(chain) - 1
        write(root, rel + "/config",
              config(acs.get(bdf, 0), ats if last else None), "wb")
        link(root, "sys/bus/pci/devices/" + bdf,
             "../../../devices/" + "/".join(chain[:depth + 1]))
        if group is not None and depth == len(chain) - 1:
            link(root, rel + "/iommu_group", "../" * (depth + 2) +
                 "kernel/iommu_groups/%d" % group)
            if iommu_type:
                write(root, "sys/kernel/iommu_groups/%d/type" % group, iommu_type + "\n")
    return "sys/devices/" + "/".join(chain)


def node(out, name, kernel="6.5.0-35-generic", nv=NV_OPEN, driver=12040,
         cuda_error="", gpus=(), nics=(), peermem=None, gds=False, acs=None, ofed=None,
         cmdline=CMDLINE, limits=None, fork=2, gds_stats=None, cufile=None,
         mlx5dv=1, drop=()):
    """mlx5dv: 0 no libmlx5, 1 rdma-core before v54, 2 v54 or newer.
    drop: keys answers.json leaves out, as a snapshot older than them
    lacks them: "KEY" at the top, "gpu:KEY" of every CUDA device,
    "nic:KEY" of every RDMA device, "limits:KEY" inside "limits".
    A GPU's "c2c" (1, 0, -1) and "pcie" (the CUresult of a PCIe-mapped
    export, -1 not tried); a NIC's "dd" (its Data Direct function's sysfs
    path, or "dd_chain": its PCI chain, created in sysfs) make the Data
    Direct answers; a NIC without "chain" has no PCI parent (rxe); mlx5
    NICs are named mlx5_*."""
    root = os.path.join(out, name)
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(os.path.join(root, "sys"))
    os.makedirs(os.path.join(root, "proc"))
    if nv:
        write(root, "proc/driver/nvidia/version", nv)
    if cufile is not None:
        write(root, "etc/cufile.json", cufile)
    if cmdline is not None:
        write(root, "proc/cmdline", cmdline + "\n")
    if peermem:  # a path, or a list of them (a module and its entry)
        for p in [peermem] if isinstance(peermem, str) else peermem:
            write(root, "sys/" + p, "1.2\n")
    if ofed:  # MLNX_OFED/DOCA-OFED: its mlx_compat module, and version
        write(root, "sys/module/mlx_compat/version", ofed + "\n")
    if gds not in (None, False):  # True, or nvidia_fs's version ("": none in sysfs)
        ver = "2.24.3" if gds is True else gds
        if ver:
            write(root, "sys/module/nvidia_fs/version", ver + "\n")
        write(root, "proc/driver/nvidia-fs/version", "2.24\n")
        if gds_stats:
            write(root, "proc/driver/nvidia-fs/stats", gds_stats)
    answers = {
        "format": "libgpudirect-snapshot", "version": 1,
        "kernel_release": kernel,
        "cuda": {"error": cuda_error, "driver_version": 0 if cuda_error else driver,
                 "devices": []},
        "libibverbs_dmabuf": True, "mlx5dv": mlx5dv, "rdma_devices": [],
        "fork_status": fork, "libibverbs_file": "libibverbs.so.1.14.50.0",
        "libmlx5_file": "libmlx5.so.1.24.50.0" if mlx5dv else ""}
    # the process's limits (-1: unlimited), or "absent" (before 0.3)
    if limits != "absent":
        answers["limits"] = dict(dict(errno=0, why="", memlock_soft=-1, memlock_hard=-1,
                                      nofile_soft=1048576, nofile_hard=1048576,
                                      cap_ipc_lock=0, user_ns=0), **(limits or {}))
    for g in gpus:
        pci(root, g["chain"], g.get("numa", 0), g.get("group"), acs, g.get("ats"),
            g.get("iommu_type"))
        bar1 = g.get("bar1", BAR1_H100)
        if g.get("bar1_errno") or bar1 == "absent":
            bar1 = (0, 0)
        answers["cuda"]["devices"].append({
            "name": g.get("name", "NVIDIA H100 80GB HBM3"), "pci_bus_id": g["chain"][-1].upper(),
            "dmabuf_supported": g.get("dmabuf", 1),
            "gpudirect_rdma_supported": g.get("rdma", 1),
            "gpudirect_rdma_with_vmm": g.get("vmm", 1), "c2c": g.get("c2c", 0 if driver >= 12080 else -1),
            "c2c_why": "" if driver >= 12080 else
            "not asked: it matters only with the PCIe mapping",
            "pcie_mapping": g.get("pcie", -1),
            # NVML's BAR1 (bytes used, total), or "bar1_errno" with why
            "bar1_errno": g.get("bar1_errno", 0), "bar1_why": g.get("bar1_why", ""),
            "bar1_used": bar1[0], "bar1_total": bar1[1],
            "total_mem": g.get("mem", 80 << 30)})
        if g.get("bar1") == "absent":  # a snapshot older than 0.3
            for k in ("bar1_errno", "bar1_why", "bar1_used", "bar1_total"):
                del answers["cuda"]["devices"][-1][k]
    for n in nics:
        if n.get("chain"):  # software devices (rxe) have no PCI parent
            dev = pci(root, n["chain"], n.get("numa", 0), n.get("group"), acs,
                      n.get("ats"), n.get("iommu_type"))
            link(root, "sys/class/infiniband/%s/device" % n["name"],
                 "../../../" + dev[len("sys/"):])
        if n.get("dd_chain"):  # the Data Direct function, in sysfs
            n = dict(n, dd="/" + pci(root, n["dd_chain"], n.get("numa", 0)))
        answers["rdma_devices"].append({
            "name": n["name"], "dmabuf_probe_errno": n.get("probe", EBADF),
            "port_state": n.get("port", 4), "link_layer": n.get("ll", 1),
            "mlx5": int(n["name"].startswith("mlx5") and mlx5dv > 0),
            "data_direct_errno": 0 if n.get("dd") else ENODEV,
            "data_direct_path": n.get("dd", ""),
            "max_mr_size": n.get("max_mr", -1),
            "netdev": n.get("netdev", ""), "addrs_errno": 0 if n.get("netdev") else 2,
            "addrs": " ".join(n.get("addrs", []))})
        if n.get("netdev"):  # RoCE: port 1's netdev, as sysfs names it
            write(root, "sys/class/infiniband/%s/ports/1/gid_attrs/ndevs/0" % n["name"],
                  n["netdev"] + "\n")
    for d in drop:
        where, _, key = d.rpartition(":")
        for obj in {"": [answers], "gpu": answers["cuda"]["devices"],
                    "nic": answers["rdma_devices"],
                    "limits": [answers.get("limits", {})]}[where]:
            if key not in obj:
                raise KeyError("layout drops %s, which answers.json does not have" % d)
            del obj[key]
    write(root, "answers.json", json.dumps(answers, indent=1))
    return root


R0 = "pci0000:00"
SW = ["0000:00:01.0", "0000:01:00.0"]           # a switch: root port, upstream port
GPU_SW = [R0] + SW + ["0000:02:00.0", "0000:03:00.0"]   # downstream port, GPU
NIC_SW = [R0] + SW + ["0000:02:04.0", "0000:04:00.0"]   # downstream port, NIC
# A GPU behind a second switch below the first one's downstream port.
GPU_SW2 = [R0] + SW + ["0000:02:00.0", "0000:03:00.0", "0000:04:08.0", "0000:05:00.0"]
NIC_SW_B = [R0] + SW + ["0000:02:04.0", "0000:06:00.0"]
GPU_RP = [R0, "0000:00:02.0", "0000:05:00.0"]  # GPU on its own root port
NIC_RP = [R0, "0000:00:03.0", "0000:06:00.0"]
NIC_HB2 = ["pci0000:40", "0000:40:01.0", "0000:41:00.0"]  # another host bridge, same socket
NIC_S1 = ["pci0000:80", "0000:80:01.0", "0000:81:00.0"]  # other socket
GPU_RP2 = [R0, "0000:00:05.0", "0000:09:00.0"]  # a third GPU, its own root port
H200_MEM = 150754820096  # an H200's 143771 MiB (140 GiB)

# (name, node() arguments, exit status, {(section, key): verdict or (verdict, value)})
LAYOUTS = [
    ("open-6x-no-peermem-phb",
     dict(gpus=[dict(chain=GPU_RP, group=20, iommu_type="identity")],
          nics=[dict(name="mlx5_0", chain=NIC_RP, group=21, iommu_type="identity")],
          cmdline=CMDLINE + " intel_iommu=on iommu=pt"),
     0, {("node", "nvidia_driver"): "ok",
         ("node", "nvidia_peermem"): ("info", "not loaded (not needed: DMA-BUF is usable)"),
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
         ("node", "nvidia_peermem"): "missing",
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
    ("two-switches-pxb",
     dict(gpus=[dict(chain=GPU_SW2)], nics=[dict(name="mlx5_0", chain=NIC_SW_B)]),
     0, {("mlx5_0", "topology_gpu0"): ("ok", "PXB"),
         ("mlx5_0", "acs_redirect_gpu0"): ("ok", "none"),
         ("gpu0", "iommu_group"): ("info", "none (no IOMMU group in sysfs)")}),
    ("host-bridges-same-numa-node",
     dict(gpus=[dict(chain=GPU_RP, numa=0)], nics=[dict(name="mlx5_0", chain=NIC_HB2, numa=0)]),
     0, {("mlx5_0", "topology_gpu0"): ("wrong", "NODE"),
         ("mlx5_0", "path_gpu0"): ("ok", "dmabuf")}),
    ("across-sockets-sys-acs",
     dict(gpus=[dict(chain=GPU_RP, numa=0)],
          nics=[dict(name="mlx5_1", chain=NIC_S1, numa=1)],
          acs={"0000:80:01.0": ACS_SV | ACS_RR | ACS_CR | ACS_UF}),
     0, {("mlx5_1", "topology_gpu0"): ("wrong", "SYS"),
         ("mlx5_1", "acs_redirect_gpu0"): ("wrong", "0000:80:01.0"),
         ("mlx5_1", "path_gpu0"): ("ok", "dmabuf")}),
    # Each redirect bit alone is enough; source validation alone is not.
    ("acs-request-redirect-only",
     dict(gpus=[dict(chain=GPU_SW)],
          nics=[dict(name="mlx5_0", chain=NIC_SW)], acs={"0000:01:00.0": ACS_SV | ACS_RR}),
     0, {("mlx5_0", "acs_redirect_gpu0"): ("wrong", "0000:01:00.0")}),
    ("acs-completion-redirect-only",
     dict(gpus=[dict(chain=GPU_SW)],
          nics=[dict(name="mlx5_0", chain=NIC_SW)], acs={"0000:02:04.0": ACS_CR}),
     0, {("mlx5_0", "acs_redirect_gpu0"): ("wrong", "0000:02:04.0")}),
    ("acs-source-validation-only",
     dict(gpus=[dict(chain=GPU_SW)],
          nics=[dict(name="mlx5_0", chain=NIC_SW)], acs={"0000:01:00.0": ACS_SV | ACS_UF | ACS_TB}),
     0, {("mlx5_0", "acs_redirect_gpu0"): ("ok", "none")}),
    ("cuda-11.4-driver",
     dict(driver=11040, gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW)]),
     1, {("node", "cuda_driver_api"): ("wrong", "11.4 (11040)"),
         ("mlx5_0", "path_gpu0"): ("missing", "none")}),
    # A GPU that exports DMA-BUF next to a NIC whose driver refuses it.
    ("gpu-with-nic-without-dmabuf",
     dict(gpus=[dict(chain=GPU_SW)], nics=[dict(name="irdma0", chain=NIC_SW, probe=EOPNOTSUPP)]),
     1, {("irdma0", "dmabuf_mr"): ("missing", "unsupported (ibv_reg_dmabuf_mr probe answered EOPNOTSUPP)"),
         ("gpu0", "dmabuf_supported"): "ok",
         ("irdma0", "path_gpu0"): ("missing", "none")}),
    ("gpu-with-nic-without-dmabuf-peermem",
     dict(gpus=[dict(chain=GPU_SW)], nics=[dict(name="irdma0", chain=NIC_SW, probe=EOPNOTSUPP)],
          peermem=[PEERMEM_MODULE, PEERMEM_ENTRY], ofed="24.10-1.1.4"),
     0, {("irdma0", "dmabuf_mr"): "missing", ("node", "nvidia_peermem"): "ok",
         ("node", "rdma_stack"): ("info", "MLNX_OFED/DOCA-OFED (mlx_compat 24.10-1.1.4)"),
         ("irdma0", "path_gpu0"): ("ok", "peermem (DMA-BUF unavailable)")}),
    # nvidia-peermem loaded, but the RDMA core does not list it: on the
    # inbox stack (no memory_peers at all), and on OFED where it did not
    # register; and the same inbox node where DMA-BUF makes it moot.
    ("peermem-loaded-inbox-stack",
     dict(gpus=[dict(chain=GPU_SW)], nics=[dict(name="irdma0", chain=NIC_SW, probe=EOPNOTSUPP)],
          peermem=PEERMEM_MODULE),
     1, {("node", "nvidia_peermem"): ("wrong", "1.2 (/sys/module/nvidia_peermem/version), "
                                      "not registered with the RDMA core (no "
                                      "/sys/kernel/mm/memory_peers/nv_mem, nor the directory)"),
         ("node", "rdma_stack"): ("wrong", "inbox kernel drivers (no mlx_compat module)"),
         ("irdma0", "path_gpu0"): ("missing", "none")}),
    ("peermem-loaded-not-registered-ofed",
     dict(gpus=[dict(chain=GPU_SW)], nics=[dict(name="irdma0", chain=NIC_SW, probe=EOPNOTSUPP)],
          peermem=[PEERMEM_MODULE, "kernel/mm/memory_peers/amdgpu/version"], ofed="24.10-1.1.4"),
     1, {("node", "nvidia_peermem"): ("wrong", "1.2 (/sys/module/nvidia_peermem/version), "
                                      "not registered with the RDMA core (no "
                                      "/sys/kernel/mm/memory_peers/nv_mem)"),
         ("node", "rdma_stack"): ("info", "MLNX_OFED/DOCA-OFED (mlx_compat 24.10-1.1.4)"),
         ("irdma0", "path_gpu0"): ("missing", "none")}),
    ("peermem-loaded-inbox-dmabuf-usable",
     dict(gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW)],
          peermem=PEERMEM_MODULE),
     0, {("node", "nvidia_peermem"): ("info", "1.2 (/sys/module/nvidia_peermem/version), "
                                     "not registered with the RDMA core (no "
                                     "/sys/kernel/mm/memory_peers/nv_mem, nor the directory) "
                                     "(not needed: DMA-BUF is usable)"),
         ("node", "rdma_stack"): ("info", "inbox kernel drivers (no mlx_compat module)"),
         ("mlx5_0", "path_gpu0"): ("ok", "dmabuf")}),
    # Two NICs: the pair with the DMA-BUF NIC is usable, the other is not.
    ("two-nics-one-without-dmabuf",
     dict(gpus=[dict(chain=GPU_SW)],
          nics=[dict(name="mlx5_0", chain=NIC_SW),
                dict(name="rxe0", chain=NIC_RP, probe=EOPNOTSUPP, ll=2)]),
     0, {("mlx5_0", "path_gpu0"): ("ok", "dmabuf"),
         ("rxe0", "path_gpu0"): ("missing", "none"),
         ("node", "nvidia_peermem"): ("missing", "not loaded"),
         ("rxe0", "link_layer"): ("info", "Ethernet")}),
]


# Data Direct: a ConnectX-8 class NIC with its Data Direct function.
DD_PATH = "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:04.0/0000:04:00.1"
# A Data Direct function on a downstream port of the GPU's switch.
DD_FN_SW = [R0] + SW + ["0000:02:08.0", "0000:08:00.1"]
LAYOUTS += [
    ("data-direct-cx8",
     dict(driver=12090, mlx5dv=2, gpus=[dict(chain=GPU_SW, pcie=0)],
          nics=[dict(name="mlx5_0", chain=NIC_SW, dd=DD_PATH)]),
     0, {("node", "mlx5dv_data_direct"): ("ok", "present (libmlx5.so.1 MLX5_1.25)"),
         ("node", "cuda_pcie_mapping"): ("ok", "available (driver API 12.9)"),
         ("gpu0", "pcie_mapping"): ("ok", "supported"),
         ("mlx5_0", "data_direct"): ("ok", "yes (%s)" % DD_PATH),
         ("mlx5_0", "path_gpu0"): ("ok", "data-direct")}),
    # The GPU answers NOT_SUPPORTED to the PCIe mapping (the H200 on x86).
    ("data-direct-gpu-without-pcie-mapping",
     dict(driver=13000, mlx5dv=2,
          gpus=[dict(chain=GPU_SW, pcie=CUDA_ERROR_NOT_SUPPORTED)],
          nics=[dict(name="mlx5_0", chain=NIC_SW, dd=DD_PATH)]),
     0, {("gpu0", "pcie_mapping"): ("info", "not supported (the PCIe-mapped "
                                    "export answered CUDA_ERROR_NOT_SUPPORTED)"),
         ("mlx5_0", "data_direct"): "ok",
         ("mlx5_0", "path_gpu0"): ("ok", "dmabuf (Data Direct unavailable)")}),
    ("data-direct-rdma-core-before-v54",
     dict(driver=12090, mlx5dv=1, gpus=[dict(chain=GPU_SW, pcie=0)],
          nics=[dict(name="mlx5_0", chain=NIC_SW, dd=DD_PATH)]),
     0, {("node", "mlx5dv_data_direct"): "info",
         ("mlx5_0", "data_direct"): "info",
         ("mlx5_0", "path_gpu0"): ("ok", "dmabuf")}),
    ("data-direct-driver-12.6",
     dict(driver=12060, mlx5dv=2, gpus=[dict(chain=GPU_SW)],
          nics=[dict(name="mlx5_0", chain=NIC_SW, dd=DD_PATH)]),
     0, {("node", "cuda_pcie_mapping"): ("info", "unavailable (driver API 12.6, "
                                         "older than 12.8)"),
         ("mlx5_0", "path_gpu0"): ("ok", "dmabuf (Data Direct unavailable)")}),
    # Four rails at four distances from one GPU, and a ConnectX-8 whose
    # NIC function is on another root port but whose Data Direct function
    # sits in the GPU's switch: the nearest is measured from the function
    # that moves the data.
    ("rails-four-distances-data-direct",
     dict(driver=12090, mlx5dv=2, gpus=[dict(chain=GPU_SW, pcie=0)],
          nics=[dict(name="mlx5_0", chain=NIC_SW),
                dict(name="mlx5_1", chain=NIC_RP),
                dict(name="mlx5_2", chain=NIC_HB2),
                dict(name="mlx5_3", chain=NIC_S1, numa=1),
                dict(name="mlx5_4", chain=[R0, "0000:00:04.0", "0000:07:00.0"],
                     dd_chain=DD_FN_SW)]),
     0, {("gpu0", "nearest_rdma"): ("info", "mlx5_0, mlx5_4 (its Data Direct function): PIX"),
         ("mlx5_0", "topology_gpu0"): ("ok", "PIX"),
         ("mlx5_1", "topology_gpu0"): ("info", "PHB"),
         ("mlx5_2", "topology_gpu0"): ("wrong", "NODE"),
         ("mlx5_3", "topology_gpu0"): ("wrong", "SYS"),
         ("mlx5_4", "path_gpu0"): ("ok", "data-direct")}),
    # Only software devices: nothing is on PCIe.
    ("rails-rxe-only",
     dict(gpus=[dict(chain=GPU_SW)], nics=[dict(name="rxe0", chain=None)]),
     0, {("gpu0", "nearest_rdma"): ("unknown", "unknown")}),
    # The same node, but the GPU answers NOT_SUPPORTED to the PCIe mapping
    # (the H200 on x86): Data Direct cannot reach it, so the data moves
    # through mlx5_4's own function, at the host bridge.
    ("rails-data-direct-gpu-without-pcie-mapping",
     dict(driver=13000, mlx5dv=2,
          gpus=[dict(chain=GPU_SW, pcie=CUDA_ERROR_NOT_SUPPORTED)],
          nics=[dict(name="mlx5_0", chain=NIC_SW),
                dict(name="mlx5_4", chain=[R0, "0000:00:04.0", "0000:07:00.0"],
                     dd_chain=DD_FN_SW)]),
     0, {("gpu0", "nearest_rdma"): ("info", "mlx5_0: PIX"),
         ("mlx5_4", "topology_gpu0"): ("info", "PHB"),
         ("mlx5_4", "path_gpu0"): ("ok", "dmabuf (Data Direct unavailable)")}),
    # Grace Blackwell: a C2C-attached GPU, a ConnectX-7 on PCIe.
    ("gb200-c2c-gpu-pcie-nic",
     dict(driver=12080, mlx5dv=2, gpus=[dict(chain=GPU_RP, c2c=1, pcie=0)],
          nics=[dict(name="mlx5_0", chain=NIC_RP)]),
     0, {("gpu0", "c2c"): ("info", "yes (NVLink-C2C to the CPU)"),
         ("mlx5_0", "data_direct"): ("info", "no (the device answered ENODEV: "
                                     "no Data Direct function)"),
         ("mlx5_0", "path_gpu0"): ("ok", "dmabuf")}),
]


# Every port state (ibv_port_state 1-5; only ACTIVE is ok), every GPU
# attribute at 0 and 1, and the driver thresholds one below and at.
# (libibverbs' ibv_port_state_str names them)
PORT_STATES = {1: "down", 2: "init", 3: "armed", 4: "active", 5: "active defer"}
for state, text in PORT_STATES.items():
    LAYOUTS.append(
        ("port-%s" % text.replace(" ", "-"),
         dict(gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW, port=state)]),
         0, {("mlx5_0", "port_state"): ("ok" if state == 4 else "wrong", text),
             ("mlx5_0", "path_gpu0"): ("ok", "dmabuf")}))
LAYOUTS += [
    ("gpu-attributes-0",
     dict(gpus=[dict(chain=GPU_SW, dmabuf=0, rdma=0, vmm=0)],
          nics=[dict(name="mlx5_0", chain=NIC_SW)]),
     1, {("gpu0", "dmabuf_supported"): "wrong",
         ("gpu0", "gpudirect_rdma_supported"): ("wrong", "0"),
         ("gpu0", "gpudirect_rdma_with_vmm"): ("info", "0"),
         ("mlx5_0", "path_gpu0"): ("missing", "none")}),
    ("gpu-rdma-0-dmabuf-1",
     dict(gpus=[dict(chain=GPU_SW, rdma=0, vmm=1)], nics=[dict(name="mlx5_0", chain=NIC_SW)]),
     0, {("gpu0", "dmabuf_supported"): "ok",
         ("gpu0", "gpudirect_rdma_supported"): ("wrong", "0"),
         ("gpu0", "gpudirect_rdma_with_vmm"): ("info", "1")}),
    ("cuda-driver-api-11069",
     dict(driver=11069, gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW)]),
     1, {("node", "cuda_driver_api"): "wrong", ("mlx5_0", "path_gpu0"): ("missing", "none")}),
    ("cuda-driver-api-11070",
     dict(driver=11070, gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW)]),
     0, {("node", "cuda_driver_api"): "ok", ("mlx5_0", "path_gpu0"): ("ok", "dmabuf")}),
    # A driver older than an entry point the library cannot work without
    # (cuDeviceGetPCIBusId, CUDA 4.1): unavailable, as the loader says of a
    # real one; the remedy names the entry point's API (test-doctor.py).
    ("cuda-driver-api-4000",
     dict(driver=4000, gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW)]),
     1, {("node", "cuda_driver_api"): ("missing", "unavailable"),
         ("node", "cuda_devices"): ("missing", "0")}),
    ("data-direct-driver-api-12079",
     dict(driver=12079, mlx5dv=2, gpus=[dict(chain=GPU_SW, pcie=0)],
          nics=[dict(name="mlx5_0", chain=NIC_SW, dd=DD_PATH)]),
     0, {("node", "cuda_pcie_mapping"): "info",
         ("mlx5_0", "path_gpu0"): ("ok", "dmabuf (Data Direct unavailable)")}),
    ("data-direct-driver-api-12080",
     dict(driver=12080, mlx5dv=2, gpus=[dict(chain=GPU_SW, pcie=0)],
          nics=[dict(name="mlx5_0", chain=NIC_SW, dd=DD_PATH)]),
     0, {("node", "cuda_pcie_mapping"): "ok",
         ("mlx5_0", "path_gpu0"): ("ok", "data-direct")}),
    ("kernel-5.11.99",
     dict(kernel="5.11.99", gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW)]),
     1, {("node", "kernel"): ("wrong", "5.11.99"), ("mlx5_0", "path_gpu0"): ("missing", "none")}),
    ("kernel-5.12",
     dict(kernel="5.12", gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW)]),
     0, {("node", "kernel"): ("ok", "5.12"), ("mlx5_0", "path_gpu0"): ("ok", "dmabuf")}),
]

# The IOMMU mode of the GPU's and the NIC's functions, from their group's
# type and the kernel command line; and ATS. rdma_topo (rdma-core's
# kernel-boot/rdma_topo) judges these differently, so no verdict here is
# compared with its own: it reads no group type and no command line (it
# only compares group numbers: GPU and NIC in one group, or each in its
# own, by topology), and it asks only whether a ConnectX NIC has the ATS
# capability (wanted with virtualisation, unwanted otherwise), never
# whether ATS is enabled, nor a GPU's. It also recognises only NVIDIA
# and ConnectX switch/root-port topologies by PCI id, which these
# generic trees are not. The doctor reports the mode and the enable bit
# of both ends as facts and judges only translated DMA, and ACS redirect
# with ATS on both ends (Direct Translated P2P).
def iommu(gpu_type, nic_type, cmdline, **more):
    return dict(gpus=[dict(chain=GPU_SW, group=20, iommu_type=gpu_type)],
                nics=[dict(name="mlx5_0", chain=NIC_SW, group=21, iommu_type=nic_type)],
                cmdline=CMDLINE + cmdline, **more)


# bridges between GPU_SW and NIC_SW: the downstream ports and the switch
SW_DOWN_GPU, SW_DOWN_NIC = "0000:02:00.0", "0000:02:04.0"
LAYOUTS += [
    ("iommu-passthrough",
     iommu("identity", "identity", " intel_iommu=on iommu=pt"),
     0, {("gpu0", "iommu_mode"): ("ok", "passthrough (identity; kernel command line: "
                                  "intel_iommu=on iommu=pt)"),
         ("mlx5_0", "iommu_mode"): ("ok", "passthrough (identity; kernel command line: "
                                    "intel_iommu=on iommu=pt)")}),
    ("iommu-translated-lazy",
     iommu("DMA-FQ", "DMA-FQ", " intel_iommu=on"),
     0, {("gpu0", "iommu_mode"): ("wrong", "translated (DMA-FQ; kernel command line: "
                                  "intel_iommu=on)"),
         ("mlx5_0", "iommu_mode"): ("wrong", "translated (DMA-FQ; kernel command line: "
                                    "intel_iommu=on)"),
         ("mlx5_0", "path_gpu0"): ("ok", "dmabuf")}),
    ("iommu-translated-strict-nic-only",
     iommu("identity", "DMA", " amd_iommu=on iommu.strict=1"),
     0, {("gpu0", "iommu_mode"): ("ok", "passthrough (identity; kernel command line: "
                                  "amd_iommu=on iommu.strict=1)"),
         ("mlx5_0", "iommu_mode"): ("wrong", "translated (DMA; kernel command line: "
                                    "amd_iommu=on iommu.strict=1)")}),
    ("iommu-unmanaged",
     iommu("unmanaged", "identity", " iommu=pt"),
     0, {("gpu0", "iommu_mode"): ("info", "unmanaged (a domain of VFIO or of the driver; "
                                  "kernel command line: iommu=pt)")}),
    ("iommu-group-without-type",  # a kernel older than 5.11
     iommu(None, None, ""),
     0, {("gpu0", "iommu_mode"): ("unknown", "unknown (/sys/kernel/iommu_groups/20/type: "
                                  "ENOENT; kernel command line: no IOMMU setting)")}),
    ("iommu-none",
     dict(gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW)]),
     0, {("gpu0", "iommu_mode"): ("ok", "none (no IOMMU group; kernel command line: "
                                  "no IOMMU setting)")}),
    # /proc/cmdline unreadable (absent here): the mode still shows, and
    # says why the command line does not
    ("iommu-cmdline-unreadable",
     dict(gpus=[dict(chain=GPU_SW, group=20, iommu_type="identity")],
          nics=[dict(name="mlx5_0", chain=NIC_SW)], cmdline=None),
     0, {("gpu0", "iommu_mode"): ("ok", "passthrough (identity; /proc/cmdline unreadable: "
                                  "ENOENT)"),
         ("mlx5_0", "iommu_mode"): ("ok", "none (no IOMMU group; /proc/cmdline unreadable: "
                                    "ENOENT)")}),
    # ATS on both ends with ACS redirect at the switch's downstream ports:
    # without Direct Translated P2P the traffic still goes up; with it,
    # translated requests go peer to peer.
    ("ats-both-acs-redirect",
     dict(gpus=[dict(chain=GPU_SW, ats=True)], nics=[dict(name="mlx5_0", chain=NIC_SW, ats=True)],
          acs={SW_DOWN_GPU: ACS_SV | ACS_RR | ACS_CR, SW_DOWN_NIC: ACS_SV | ACS_RR | ACS_CR}),
     0, {("gpu0", "ats"): ("info", "enabled"), ("mlx5_0", "ats"): ("info", "enabled"),
         ("mlx5_0", "acs_redirect_gpu0"): ("wrong", "0000:02:00.0 0000:02:04.0 (ATS on both "
                                           "ends, no Direct Translated P2P)")}),
    ("ats-both-acs-direct-translated",
     dict(gpus=[dict(chain=GPU_SW, ats=True)], nics=[dict(name="mlx5_0", chain=NIC_SW, ats=True)],
          acs={SW_DOWN_GPU: ACS_SV | ACS_RR | ACS_CR | ACS_DT,
               SW_DOWN_NIC: ACS_SV | ACS_RR | ACS_CR | ACS_DT}),
     0, {("mlx5_0", "acs_redirect_gpu0"): ("info", "0000:02:00.0 0000:02:04.0 (with Direct "
                                          "Translated P2P, and ATS on both ends: translated "
                                          "requests go peer to peer)")}),
    ("ats-both-direct-translated-one-bridge",
     dict(gpus=[dict(chain=GPU_SW, ats=True)], nics=[dict(name="mlx5_0", chain=NIC_SW, ats=True)],
          acs={SW_DOWN_GPU: ACS_SV | ACS_RR | ACS_CR | ACS_DT,
               SW_DOWN_NIC: ACS_SV | ACS_RR | ACS_CR}),
     0, {("mlx5_0", "acs_redirect_gpu0"): ("wrong", "0000:02:00.0 0000:02:04.0 (ATS on both "
                                           "ends, no Direct Translated P2P)")}),
    ("ats-nic-capable-not-enabled",
     dict(gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW, ats=False)],
          acs={SW_DOWN_GPU: ACS_RR}),
     0, {("gpu0", "ats"): ("info", "no ATS capability"),
         ("mlx5_0", "ats"): ("info", "capable, not enabled"),
         ("mlx5_0", "acs_redirect_gpu0"): ("wrong", "0000:02:00.0")}),
    ("ats-unreadable-without-root",
     dict(gpus=[dict(chain=GPU_SW, ats="unreadable")],
          nics=[dict(name="mlx5_0", chain=NIC_SW, ats="unreadable")]),
     0, {("gpu0", "ats"): ("unknown", "unknown"), ("mlx5_0", "ats"): ("unknown", "unknown")}),
    # ATS enabled at one end only (the other's unknown, or capable and
    # not enabled): redirected traffic goes up untranslated, whatever
    # the bridges' Direct Translated P2P; the plain redirect verdict.
    ("ats-gpu-only-acs-redirect",
     dict(gpus=[dict(chain=GPU_SW, ats=True)],
          nics=[dict(name="mlx5_0", chain=NIC_SW, ats="unreadable")],
          acs={SW_DOWN_GPU: ACS_SV | ACS_RR | ACS_CR, SW_DOWN_NIC: ACS_SV | ACS_RR | ACS_CR}),
     0, {("gpu0", "ats"): ("info", "enabled"), ("mlx5_0", "ats"): ("unknown", "unknown"),
         ("mlx5_0", "acs_redirect_gpu0"): ("wrong", "0000:02:00.0 0000:02:04.0")}),
    ("ats-nic-only-acs-direct-translated",
     dict(gpus=[dict(chain=GPU_SW, ats=False)], nics=[dict(name="mlx5_0", chain=NIC_SW, ats=True)],
          acs={SW_DOWN_GPU: ACS_SV | ACS_RR | ACS_CR | ACS_DT,
               SW_DOWN_NIC: ACS_SV | ACS_RR | ACS_CR | ACS_DT}),
     0, {("gpu0", "ats"): ("info", "capable, not enabled"), ("mlx5_0", "ats"): ("info", "enabled"),
         ("mlx5_0", "acs_redirect_gpu0"): ("wrong", "0000:02:00.0 0000:02:04.0")}),
]

# The process's limits: locked memory unlimited or not, and CAP_IPC_LOCK
# that lifts it; open files one under NOFILE_MIN (65536) and at it, with a
# hard limit that allows raising the soft one and one that does not; a
# snapshot from before 0.3. Facts: the exit status stays 0.
def limits(**l):
    return dict(gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW)], limits=l)


LAYOUTS += [
    ("limits-memlock-8mib",
     limits(memlock_soft=8 << 20, memlock_hard=8 << 20),
     0, {("node", "memlock_limit"): ("wrong", "8 MiB (hard 8 MiB)"),
         ("node", "nofile_limit"): ("ok", "1048576 (hard 1048576)")}),
    ("limits-memlock-64kib-cap-ipc-lock",
     limits(memlock_soft=64 << 10, memlock_hard=64 << 10, cap_ipc_lock=1),
     0, {("node", "memlock_limit"): ("ok", "64 KiB (hard 64 KiB), not applied: "
                                     "the process has CAP_IPC_LOCK")}),
    ("limits-memlock-64kib-cap-ipc-lock-user-ns",
     limits(memlock_soft=64 << 10, memlock_hard=64 << 10, cap_ipc_lock=1, user_ns=1),
     0, {("node", "memlock_limit"): ("wrong", "64 KiB (hard 64 KiB), applied although "
                                     "the process has CAP_IPC_LOCK: it is in a user "
                                     "namespace (a rootless container, a pod with "
                                     "hostUsers: false), and the kernel honours that "
                                     "capability for pinning only in the initial one")}),
    ("limits-memlock-64kib-cap-ipc-lock-user-ns-unknown",
     limits(memlock_soft=64 << 10, memlock_hard=64 << 10, cap_ipc_lock=1, user_ns=-1),
     0, {("node", "memlock_limit"): ("unknown", "64 KiB (hard 64 KiB); the process has "
                                     "CAP_IPC_LOCK, which lifts it only outside a user "
                                     "namespace, and whether it is in one is unknown")}),
    ("limits-memlock-unlimited",
     limits(),
     0, {("node", "memlock_limit"): ("ok", "unlimited")}),
    ("limits-nofile-65535-hard-raisable",
     limits(nofile_soft=65535, nofile_hard=1048576),
     0, {("node", "nofile_limit"): ("wrong", "65535 (hard 1048576)")}),
    ("limits-nofile-1024-hard-4096",
     limits(nofile_soft=1024, nofile_hard=4096),
     0, {("node", "nofile_limit"): ("wrong", "1024 (hard 4096)")}),
    ("limits-nofile-65536",
     limits(nofile_soft=65536, nofile_hard=-1),
     0, {("node", "nofile_limit"): ("ok", "65536 (hard unlimited)")}),
    ("limits-crafted-numbers",
     limits(nofile_soft=-7, memlock_soft=1e300, memlock_hard="unlimited"),
     0, {("node", "memlock_limit"): ("unknown", "unknown (the snapshot's limits are "
                                     "not numbers)"),
         ("node", "nofile_limit"): "unknown"}),
    ("limits-snapshot-before-0.3",
     dict(gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW)], limits="absent"),
     0, {("node", "memlock_limit"): ("unknown", "unknown (not in this snapshot "
                                     "(captured before 0.3))")}),
    # NOFILE_MIN itself as the hard limit: the soft one can be raised to
    # it, so the remedy says to raise the soft one; one below, both.
    ("limits-nofile-1024-hard-65536",
     limits(nofile_soft=1024, nofile_hard=65536),
     0, {("node", "nofile_limit"): ("wrong", "1024 (hard 65536)",
                                    "raise the soft limit (ulimit -n")}),
    ("limits-nofile-1024-hard-65535",
     limits(nofile_soft=1024, nofile_hard=65535),
     0, {("node", "nofile_limit"): ("wrong", "1024 (hard 65535)",
                                    "raise the hard and soft limits")}),
    # Locked memory passes only unlimited (or lifted by CAP_IPC_LOCK): the
    # largest finite soft limit a snapshot holds (2^53) is still a limit,
    # whatever the hard one.
    ("limits-memlock-2p53-hard-unlimited",
     limits(memlock_soft=1 << 53, memlock_hard=-1),
     0, {("node", "memlock_limit"): ("wrong", "8589934592 MiB (hard unlimited)")}),
    # A 0.3 snapshot: limits without user_ns, which 0.4 added; unknown,
    # so CAP_IPC_LOCK may or may not lift the limit.
    ("limits-snapshot-0.3-without-user-ns",
     dict(limits(memlock_soft=64 << 10, memlock_hard=64 << 10, cap_ipc_lock=1),
          drop=["limits:user_ns"]),
     0, {("node", "memlock_limit"): ("unknown", "64 KiB (hard 64 KiB); the process has "
                                     "CAP_IPC_LOCK, which lifts it only outside a user "
                                     "namespace, and whether it is in one is unknown")}),
]

# Fork safety as libibverbs answers it (enum ibv_fork_status; -1: an
# rdma-core before 35 without ibv_is_fork_initialized), and a NIC's
# max_mr_size against the GPU's memory (80 GiB): below, at, no limit.
LAYOUTS += [
    ("fork-disabled",
     dict(gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW)], fork=0),
     0, {("node", "fork"): ("wrong", "not fork-safe: no ibv_fork_init(), and the kernel "
                            "does not copy pinned pages (IBV_FORK_DISABLED)")}),
    ("fork-enabled",
     dict(gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW)], fork=1),
     0, {("node", "fork"): ("ok", "ibv_fork_init() in effect: registered memory is "
                            "not inherited (IBV_FORK_ENABLED)")}),
    ("fork-unknown-old-rdma-core",
     dict(gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW)], fork=-1),
     0, {("node", "fork"): ("unknown", "unknown (libibverbs older than rdma-core 35 has "
                            "no ibv_is_fork_initialized)")}),
    ("max-mr-size-below-gpu-memory",
     dict(gpus=[dict(chain=GPU_SW)],
          nics=[dict(name="mlx5_0", chain=NIC_SW, max_mr=(80 << 30) - 4096)]),
     0, {("mlx5_0", "max_mr_size"): ("wrong", "85899341824 bytes (79 GiB), less than "
                                     "a GPU's 80 GiB"),
         ("mlx5_0", "path_gpu0"): ("ok", "dmabuf")}),
    ("max-mr-size-equal-gpu-memory",
     dict(gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW, max_mr=80 << 30)]),
     0, {("mlx5_0", "max_mr_size"): ("ok", "85899345920 bytes (80 GiB)")}),
    ("max-mr-size-unknown",
     dict(gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW, max_mr=0)]),
     0, {("mlx5_0", "max_mr_size"): ("unknown", "unknown (ibv_query_device failed)")}),
    # IBV_FORK_DISABLED at the release from which the kernel copies a
    # child's pinned pages (5.13, KERNEL_FORK_COPY_*) and just before it:
    # the remedy tells the RDMA core's silence from an old kernel.
    ("fork-disabled-kernel-5.13.0",
     dict(kernel="5.13.0", gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW)],
          fork=0),
     0, {("node", "fork"): ("wrong", "not fork-safe: no ibv_fork_init(), and the kernel "
                            "does not copy pinned pages (IBV_FORK_DISABLED)",
                            "the kernel is new enough to copy pinned pages, but its "
                            "RDMA core did not say so")}),
    ("fork-disabled-kernel-5.12.19",
     dict(kernel="5.12.19", gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW)],
          fork=0),
     0, {("node", "fork"): ("wrong", "not fork-safe: no ibv_fork_init(), and the kernel "
                            "does not copy pinned pages (IBV_FORK_DISABLED)",
                            "or run Linux 5.13 or newer")}),
    # max_mr_size against the largest of three GPUs of different sizes
    # (an H200's 140 GiB between two 80 GiB H100s): below it is wrong
    # even where it covers the others; equal to it is fine.
    ("max-mr-size-below-the-largest-gpu",
     dict(gpus=[dict(chain=GPU_SW), dict(chain=GPU_RP, name="NVIDIA H200", mem=H200_MEM),
                dict(chain=GPU_RP2)],
          nics=[dict(name="mlx5_0", chain=NIC_SW, max_mr=100 << 30)]),
     0, {("mlx5_0", "max_mr_size"): ("wrong", "107374182400 bytes (100 GiB), less than "
                                     "a GPU's 140 GiB")}),
    ("max-mr-size-equal-the-largest-gpu",
     dict(gpus=[dict(chain=GPU_SW), dict(chain=GPU_RP, name="NVIDIA H200", mem=H200_MEM),
                dict(chain=GPU_RP2)],
          nics=[dict(name="mlx5_0", chain=NIC_SW, max_mr=H200_MEM)]),
     0, {("mlx5_0", "max_mr_size"): ("ok", "150754820096 bytes (140 GiB)")}),
]

# GPUDirect Storage: nvidia-fs 2.17.5 is the line (the GPU Operator's),
# and from it the open kernel module is needed; the stats file gives the
# version where sysfs does not, and whether PeerDirect was built in.
NVFS_STATS = ("GDS Version: 1.13.1.3\nNVFS statistics(ver: 4.0)\n"
              "NVFS Driver(version: %s)\nMellanox PeerDirect Supported: %s\n"
              "IO stats: Disabled, peer IO stats: Disabled\n")
LAYOUTS += [
    ("gds-nvfs-2.17.4",
     dict(gds="2.17.4", gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW)]),
     0, {("node", "gpudirect_storage"): ("wrong", "nvidia_fs loaded 2.17.4, "
                                         "/proc/driver/nvidia-fs present (older than 2.17.5)")}),
    ("gds-nvfs-2.17.5",
     dict(gds="2.17.5", gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW)]),
     0, {("node", "gpudirect_storage"): ("ok", "nvidia_fs loaded 2.17.5, "
                                         "/proc/driver/nvidia-fs present")}),
    # The version compares as major, minor, patch: a newer major with a
    # smaller minor or patch is newer; an older major is older.
    ("gds-nvfs-3.0.0",
     dict(gds="3.0.0", gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW)]),
     0, {("node", "gpudirect_storage"): ("ok", "nvidia_fs loaded 3.0.0, "
                                         "/proc/driver/nvidia-fs present")}),
    ("gds-nvfs-2.18.0",
     dict(gds="2.18.0", gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW)]),
     0, {("node", "gpudirect_storage"): ("ok", "nvidia_fs loaded 2.18.0, "
                                         "/proc/driver/nvidia-fs present")}),
    ("gds-nvfs-1.99.99",
     dict(gds="1.99.99", gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW)]),
     0, {("node", "gpudirect_storage"): ("wrong", "nvidia_fs loaded 1.99.99, "
                                         "/proc/driver/nvidia-fs present (older than 2.17.5)")}),
    ("gds-nvfs-proprietary-module",
     dict(gds="2.20.5", nv=NV_PROP, peermem=PEERMEM_ENTRY,
          gpus=[dict(chain=GPU_SW, dmabuf=0)], nics=[dict(name="mlx5_0", chain=NIC_SW)]),
     0, {("node", "gpudirect_storage"): ("wrong", "nvidia_fs loaded 2.20.5, "
                                         "/proc/driver/nvidia-fs present (without the "
                                         "open kernel module)")}),
    ("gds-version-from-stats",
     dict(gds="", gds_stats=NVFS_STATS % ("2.22.3", "True"),
          gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW)]),
     0, {("node", "gpudirect_storage"): ("ok", "nvidia_fs loaded 2.22.3, "
                                         "/proc/driver/nvidia-fs present, PeerDirect supported")}),
    ("gds-stats-peerdirect-false",
     dict(gds="", gds_stats=NVFS_STATS % ("2.22.3", "False"),
          gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW)]),
     0, {("node", "gpudirect_storage"): ("ok", "nvidia_fs loaded 2.22.3, "
                                         "/proc/driver/nvidia-fs present, PeerDirect "
                                         "not supported")}),
    ("gds-nvidia-driver-unknown",
     dict(gds="2.20.5", nv=None, gpus=[dict(chain=GPU_SW)],
          nics=[dict(name="mlx5_0", chain=NIC_SW)]),
     0, {("node", "gpudirect_storage"): ("unknown", "nvidia_fs loaded 2.20.5, "
                                         "/proc/driver/nvidia-fs present (the NVIDIA "
                                         "kernel module's flavour is unknown)")}),
    ("gds-version-unknown",
     dict(gds="", gds_stats="NVFS statistics(ver: 4.0)\n",
          gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW)]),
     0, {("node", "gpudirect_storage"): ("unknown", "nvidia_fs loaded, "
                                         "/proc/driver/nvidia-fs present (version unknown)")}),
]

# cuFile's /etc/cufile.json (JSON with comments, as cuFile reads it):
# allow_compat_mode, and rdma_dev_addr_list against the RDMA devices'
# netdev addresses (RoCE: port 1's netdev).
CUFILE = """{
    // a comment, as NVIDIA's sample has them
    "logging": { "dir": "/var/log", "level": "ERROR" },
    /* a block comment with "quotes" */
    "properties": {
        "allow_compat_mode": %s,
        "rdma_dev_addr_list": [ %s ]
    }
}
"""
def gds_node(compat, addrs, **more):
    return dict(gds=True, gpus=[dict(chain=GPU_SW)],
                nics=[dict(name="mlx5_0", chain=NIC_SW, ll=2, netdev="ens1f0",
                           addrs=["10.1.0.7", "fe80::a"])],
                cufile=CUFILE % (compat, ", ".join('"%s"' % a for a in addrs)), **more)


LAYOUTS += [
    ("gds-cufile-compat-true",
     gds_node("true", ["10.1.0.7"]),
     0, {("node", "gds_compat_mode"): ("info", "true (/etc/cufile.json): where GPUDirect "
                                       "Storage cannot be used, cuFile moves the data "
                                       "through a CPU bounce buffer without saying so"),
         ("node", "gds_rdma_addrs"): ("ok", "10.1.0.7 (mlx5_0)")}),
    ("gds-cufile-stale-address",
     gds_node("false", ["10.1.0.7", "10.9.9.9"]),
     0, {("node", "gds_compat_mode"): ("ok", "false (/etc/cufile.json)"),
         ("node", "gds_rdma_addrs"): ("wrong", "10.1.0.7 (mlx5_0), 10.9.9.9 (on no RDMA "
                                      "device here)")}),
    ("gds-cufile-empty-list",
     gds_node("false", []),
     0, {("node", "gds_rdma_addrs"): ("info", "empty (/etc/cufile.json): GPUDirect "
                                      "Storage uses no RDMA device")}),
    ("gds-cufile-infiniband-unknown",
     dict(gds=True, gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW)],
          cufile=CUFILE % ("false", '"10.1.0.7"')),
     0, {("node", "gds_rdma_addrs"): ("unknown", "10.1.0.7 (unknown)")}),
    # Addresses compare as addresses, not text; entries that cannot be
    # judged (empty, too long, past the 16th) make the verdict unknown.
    ("gds-cufile-ipv6-written-long",
     gds_node("false", ["fe80::000a"]),
     0, {("node", "gds_rdma_addrs"): ("ok", "fe80::000a (mlx5_0)")}),
    ("gds-cufile-ipv6-other-host",
     gds_node("false", ["fe80::b"]),
     0, {("node", "gds_rdma_addrs"): ("wrong", "fe80::b (on no RDMA device here)")}),
    ("gds-cufile-nul-byte",
     dict(gds=True, gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW)],
          cufile='{"properties": {"allow_compat_mode": false}}\x00 and more'),
     0, {("node", "gds_compat_mode"): "unknown"}),
    ("gds-cufile-empty-entry",
     gds_node("false", ["10.1.0.7", ""]),
     0, {("node", "gds_rdma_addrs"): ("wrong", "10.1.0.7 (mlx5_0); 1 entries not IP "
                                      "addresses (not strings, empty, or longer than "
                                      "any address)")}),
    ("gds-cufile-entries-not-strings",
     dict(gds=True, gpus=[dict(chain=GPU_SW)],
          nics=[dict(name="mlx5_0", chain=NIC_SW, ll=2, netdev="ens1f0", addrs=["10.1.0.7"])],
          cufile='{"properties": {"rdma_dev_addr_list": [12, null]}}'),
     0, {("node", "gds_rdma_addrs"): ("wrong", "2 entries not IP addresses (not strings, "
                                      "empty, or longer than any address)")}),
    ("gds-cufile-stale-past-16",
     gds_node("false", ["10.1.0.7"] * 16 + ["10.9.9.9"]),
     0, {("node", "gds_rdma_addrs"): "unknown"}),
    ("gds-cufile-unterminated-comment",
     dict(gds=True, gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW)],
          cufile='{ "properties": { /* never closed '),
     0, {("node", "gds_compat_mode"): ("unknown", "unknown (/etc/cufile.json: not JSON "
                                       "with comments as cuFile reads it: line 1: a "
                                       "comment is not closed)")}),
    # One JSON reader (lib/base/json.c): keys sorted as jq -S writes them
    # put a file system's list first, which is not the global one; a key
    # given twice is its last value; text that is not JSON says so; types
    # are respected; an entry that is not an address is not "stale".
    ("gds-cufile-sorted-keys",
     dict(gds=True, gpus=[dict(chain=GPU_SW)],
          nics=[dict(name="mlx5_0", chain=NIC_SW, ll=2, netdev="ens1f0", addrs=["10.1.0.7"])],
          cufile='{"fs": {"lustre": {"rdma_dev_addr_list": ["10.9.9.9"]}}, '
                 '"properties": {"allow_compat_mode": false, '
                 '"rdma_dev_addr_list": ["10.1.0.7"]}}'),
     0, {("node", "gds_rdma_addrs"): ("ok", "10.1.0.7 (mlx5_0)")}),
    ("gds-cufile-duplicate-key",
     dict(gds=True, gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW)],
          cufile='{"properties": {"allow_compat_mode": true, "allow_compat_mode": false}}'),
     0, {("node", "gds_compat_mode"): ("ok", "false (/etc/cufile.json)")}),
    ("gds-cufile-not-json",
     dict(gds=True, gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW)],
          cufile='properties: {"allow_compat_mode": true, "rdma_dev_addr_list": []}'),
     0, {("node", "gds_compat_mode"): ("unknown", "unknown (/etc/cufile.json: not JSON "
                                       "with comments as cuFile reads it: line 1: not a "
                                       "JSON value)")}),
    ("gds-cufile-compat-a-string",
     gds_node('"true"', ["10.1.0.7"]),
     0, {("node", "gds_compat_mode"): ("wrong", "not true or false (/etc/cufile.json): "
                                       "what cuFile does with it is not known here")}),
    ("gds-cufile-list-not-an-array",
     dict(gds=True, gpus=[dict(chain=GPU_SW)], nics=[dict(name="mlx5_0", chain=NIC_SW)],
          cufile='{"properties": {"rdma_dev_addr_list": "10.1.0.7"}}'),
     0, {("node", "gds_compat_mode"): ("unknown", "unknown (/etc/cufile.json: not JSON "
                                       "with comments as cuFile reads it: \"properties\": "
                                       "\"rdma_dev_addr_list\" is not an array)")}),
    ("gds-cufile-not-an-address",
     gds_node("false", ["10.1.0.7", "mlx5_0"]),
     0, {("node", "gds_rdma_addrs"): ("wrong", "10.1.0.7 (mlx5_0), mlx5_0 (not an IP "
                                      "address)")}),
    # Host names and CIDR blocks: not addresses (cuFile takes none of
    # them), so wrong in their own words, never counted stale; a netdev
    # name with ':' or '%' and a CIDR of no address are just "not an IP
    # address".
    ("gds-cufile-host-names-and-cidr",
     gds_node("false", ["10.1.0.7", "nfs-1.example.com", "10.1.0.0/24",
                        "fe80::a/64", "10.1.0.0/x", "eth0:1", "-bad"]),
     0, {("node", "gds_rdma_addrs"): (
         "wrong", "10.1.0.7 (mlx5_0), nfs-1.example.com (a host name, not an IP "
         "address), 10.1.0.0/24 (a CIDR block, not an IP address), fe80::a/64 "
         "(a CIDR block, not an IP address), 10.1.0.0/x (not an IP address), "
         "eth0:1 (not an IP address), -bad (not an IP address)")}),
    # Two RDMA devices on one netdev (Soft-RoCE over a ConnectX port's
    # netdev): an address is named with one device, the first the report
    # lists, not each in turn overwriting it.
    ("gds-cufile-two-devices-one-netdev",
     dict(gds=True, gpus=[dict(chain=GPU_SW)],
          nics=[dict(name="mlx5_0", chain=NIC_SW, ll=2, netdev="ens1f0", addrs=["10.1.0.7"]),
                dict(name="rxe0", ll=2, netdev="ens1f0", addrs=["10.1.0.7"])],
          cufile=CUFILE % ("false", '"10.1.0.7"')),
     0, {("node", "gds_rdma_addrs"): ("ok", "10.1.0.7 (mlx5_0)")}),
]

# BAR1 is nearly used up from 90%. A 250 MiB window, where 90% is a whole
# number of bytes (235929600): one byte under the line and exactly on it;
# then a 256 MiB window all used; a GPU NVML cannot answer for; a snapshot
# from before 0.3. A fact, not a gate: the path stays what it is, and so
# does the exit status.
BAR1_SMALL = 256 << 20
LAYOUTS += [
    ("bar1-just-under-90-percent",
     dict(gpus=[dict(chain=GPU_SW, bar1=(235929599, 250 << 20))],
          nics=[dict(name="mlx5_0", chain=NIC_SW)]),
     0, {("gpu0", "bar1"): ("ok", "224 MiB of 250 MiB used (89%)"),
         ("mlx5_0", "path_gpu0"): ("ok", "dmabuf")}),
    ("bar1-at-90-percent",
     dict(gpus=[dict(chain=GPU_SW, bar1=(235929600, 250 << 20))],
          nics=[dict(name="mlx5_0", chain=NIC_SW)]),
     0, {("gpu0", "bar1"): ("wrong", "225 MiB of 250 MiB used (90%)"),
         ("mlx5_0", "path_gpu0"): ("ok", "dmabuf")}),
    ("bar1-full",
     dict(gpus=[dict(chain=GPU_SW, bar1=(BAR1_SMALL, BAR1_SMALL))],
          nics=[dict(name="mlx5_0", chain=NIC_SW)]),
     0, {("gpu0", "bar1"): ("wrong", "256 MiB of 256 MiB used (100%)")}),
    ("bar1-nvml-absent",
     dict(gpus=[dict(chain=GPU_SW, bar1_errno=2,
                     bar1_why="libnvidia-ml.so.1 could not be loaded")],
          nics=[dict(name="mlx5_0", chain=NIC_SW)]),
     0, {("gpu0", "bar1"): ("unknown", "unknown (libnvidia-ml.so.1 could not be loaded)")}),
    # Crafted answers: more used than there is; numbers no GPU gives
    # (beyond 2^53, 1e300) read as absent, never converted.
    ("bar1-used-over-total",
     dict(gpus=[dict(chain=GPU_SW, bar1=(2 << 30, 1 << 30))],
          nics=[dict(name="mlx5_0", chain=NIC_SW)]),
     0, {("gpu0", "bar1"): ("unknown", "unknown (NVML answered 2147483648 of "
                            "1073741824 bytes used)")}),
    ("bar1-crafted-numbers",
     dict(gpus=[dict(chain=GPU_SW, bar1=(2 ** 60, 1e300))],
          nics=[dict(name="mlx5_0", chain=NIC_SW)]),
     0, {("gpu0", "bar1"): ("unknown", "unknown (NVML answered 0 of 0 bytes used)")}),
    ("bar1-snapshot-before-0.3",
     dict(gpus=[dict(chain=GPU_SW, bar1="absent")],
          nics=[dict(name="mlx5_0", chain=NIC_SW)]),
     0, {("gpu0", "bar1"): ("unknown", "unknown (not in this snapshot (captured before 0.3))")}),
]

# No path for the pair: its remedy gives each device backend's reason in
# full, even where long names (an 80-character GPU name, a 60-character
# RDMA device name) make the three reasons over 1000 characters together.
LONG_GPU = "NVIDIA H100 80GB HBM3 (a board name as long as a vendor may make it)" + "." * 12
LONG_NIC = "mlx5_" + "n" * 55
LAYOUTS += [
    ("no-path-long-names",
     dict(gpus=[dict(chain=GPU_SW, dmabuf=0, name=LONG_GPU)],
          nics=[dict(name=LONG_NIC, chain=NIC_SW, probe=EOPNOTSUPP)],
          peermem=PEERMEM_MODULE),
     1, {(LONG_NIC, "path_gpu0"): ("missing", "none")}),
    # The longest names a snapshot keeps (a 127-character GPU name, a
    # 63-character device): the three reasons pass 1039 characters, where
    # 0.3's first report cut the remedy mid-sentence.
    ("no-path-longest-names",
     dict(gpus=[dict(chain=GPU_SW, dmabuf=0, name="G" * 127)],
          nics=[dict(name="mlx5_" + "n" * 58, chain=NIC_SW, probe=EOPNOTSUPP)],
          peermem=PEERMEM_MODULE),
     1, {("mlx5_" + "n" * 58, "path_gpu0"): ("missing", "none")}),
]

# RDMA devices named like the report's other sections: their items keep
# the RDMA device scope, the text heads them "[node (RDMA device)]", and
# the labels count and name both.
LAYOUTS += [
    # The RDMA device "gpu0" alone is behind a translating IOMMU: its
    # items are its own, not the GPU gpu0's (the NFD label says so).
    ("rdma-devices-named-node-gpu0",
     dict(gpus=[dict(chain=GPU_SW, group=20, iommu_type="identity")],
          nics=[dict(name="gpu0", chain=NIC_RP, probe=EOPNOTSUPP, group=22,
                     iommu_type="DMA"),
                dict(name="node", chain=NIC_SW, group=21, iommu_type="identity")],
          cmdline=CMDLINE + " intel_iommu=on"),
     0, {("node", "kernel"): "ok", ("node", "path_gpu0"): ("ok", "dmabuf"),
         ("gpu0", "path_gpu0"): ("missing", "none"),
         ("gpu0", "dmabuf_supported"): ("ok", "1")}),
]


# A snapshot with only what 0.1 wrote (every field added since left out,
# as docs/report-schema.md lists them): each replays as its documented
# default, never as a value that passes.
FIELDS_SINCE_0_1 = [
    "gpu:c2c", "gpu:c2c_why", "gpu:pcie_mapping",  # 0.2
    "mlx5dv", "nic:mlx5", "nic:data_direct_errno", "nic:data_direct_path",
    "gpu:bar1_errno", "gpu:bar1_why", "gpu:bar1_used", "gpu:bar1_total",  # 0.3
    "gpu:total_mem", "nic:max_mr_size", "fork_status", "libibverbs_file",
    "libmlx5_file", "limits", "nic:netdev", "nic:addrs_errno", "nic:addrs"]
LAYOUTS += [
    ("snapshot-0.1-fields-only",
     dict(driver=12080, gpus=[dict(chain=GPU_SW)],
          nics=[dict(name="mlx5_0", chain=NIC_SW)], drop=FIELDS_SINCE_0_1),
     0, {("node", "fork"): ("unknown", "unknown (libibverbs older than rdma-core 35 has "
                            "no ibv_is_fork_initialized)"),
         ("node", "memlock_limit"): ("unknown", "unknown (not in this snapshot (captured "
                                     "before 0.3))"),
         ("node", "nofile_limit"): ("unknown", "unknown (not in this snapshot (captured "
                                    "before 0.3))"),
         ("node", "mlx5dv_data_direct"): ("info", "absent (libmlx5.so.1 is not installed)"),
         ("node", "rdma_core"): "unknown",
         ("gpu0", "c2c"): ("info", "unknown (not recorded in the snapshot)"),
         ("gpu0", "pcie_mapping"): ("unknown", "not tried"),
         ("gpu0", "bar1"): ("unknown", "unknown (not in this snapshot (captured before 0.3))"),
         ("mlx5_0", "data_direct"): ("info", "no (not an mlx5 device)"),
         ("mlx5_0", "max_mr_size"): ("unknown", "unknown (ibv_query_device failed)"),
         ("mlx5_0", "path_gpu0"): ("ok", "dmabuf")}),
]


def build_all(out):
    """Write every layout below out; yields (name, root, want_rc, want)."""
    for name, spec, want_rc, want in LAYOUTS:
        yield name, node(out, name, **spec), want_rc, want
