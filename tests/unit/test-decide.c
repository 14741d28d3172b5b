/* SPDX-License-Identifier: MIT */
/*
 * The registration decision (DESIGN section 3) as a table of scenarios run
 * over fake CUDA and verbs tables and fixture sysfs/procfs trees. Each
 * scenario checks the path taken, errno, the message, the MR's addr and
 * length, and that no fd or MR is left behind.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fakes.h"
#include "errnos.h"

#define PM_NV_MEM "kernel/mm/memory_peers/nv_mem/version"
#define PM_NV_MEM_NC "kernel/mm/memory_peers/nv_mem_nc/version"
#define PM_MODULE "module/nvidia_peermem/version"
#define PM_OLD "module/nv_peer_mem/version"

enum ptr_kind {
	P_DEVICE,
	P_HOST,
	P_CUDA_HOST,
	P_MANAGED,
	P_MANAGED_HOST,
	P_ARRAY, /* CU_MEMORYTYPE_ARRAY: neither host nor device memory */
	P_POOL,
	P_POOL_NOT_RDMA,
	P_VMM,
	P_VMM_NOT_RDMA,
	P_PAST_END,
	P_ONE_PAST, /* the range ends one byte past its allocation */
	P_AT_END,   /* the range ends where its allocation does */
	P_VMM_PAST, /* a VMM range past the end of its reservation */
	P_ADJACENT
};

/* The caller's current context when the registration is made. */
enum caller_ctx { C_FOREIGN, C_NONE, C_GPU0_OTHER, C_GPU0_PRIMARY };

struct scenario {
	const char *name;
	/* the node */
	const char *nv;	     /* /proc/driver/nvidia/version, NULL: absent */
	const char *kernel;  /* NULL: 6.1.0-57-amd64 */
	const char *peermem; /* sysfs file that shows peermem, NULL: none */
	/* and the RDMA core lists it (memory_peers/nv_mem), as a working
	 * nvidia-peermem on MLNX_OFED/DOCA-OFED shows both */
	int registered;
	const char *other_peer; /* a memory_peers entry of another client */
	int no_libcuda;
	CUresult init_result;
	int driver;	    /* 0: 13000 */
	int two_gpus_attr1; /* 2 GPUs; DMA_BUF_SUPPORTED of GPU 1 is this-1 */
	int probe_errno;    /* 0: EBADF */
	int probe_mr;	    /* the probe gets an MR back */
	int no_dmabuf_symbol;
	int no_export_entry; /* libcuda lacks cuMemGetHandleForAddressRange */
	unsigned int access; /* GDR_REG_ATTR_ACCESS (0: not given) */
	/* Data Direct and the PCIe mapping */
	int dd;	      /* the NIC has a Data Direct function */
	int mlx5dv;   /* 0: rdma-core v54+; 1: older; -1: no libmlx5 */
	int not_mlx5; /* the NIC is not an mlx5 device */
	int nic_pci;  /* the NIC has a PCI parent in sysfs */
	/* its IOMMU group's type ("DMA-FQ", "identity"; NULL: no group) */
	const char *nic_iommu;
	/* ibv_query_device's max_mr_size (0: 2^64-1, as mlx5 answers) */
	unsigned long long max_mr_size;
	int c2c;	      /* GPU 0 is C2C-attached */
	CUresult pcie_result; /* a flagged export answers this */
	int mlx5_reg_errno;
	const char *env_pcie; /* GPUDIRECT_PCIE_MAPPING */
	/* the process */
	int cuda_not_loaded; /* the application never loaded libcuda */
	int not_initialized; /* the driver answers NOT_INITIALIZED */
	enum caller_ctx caller;
	int pop_fails;
	int no_ctx_set_flags;
	const char *env_ro; /* GPUDIRECT_RELAXED_ORDERING */
	/* the buffer */
	enum ptr_kind ptr;
	int gpu;
	/* the process's locked-memory limit (0: unlimited), CAP_IPC_LOCK */
	unsigned long long memlock;
	int cap_ipc_lock;
	int user_ns; /* in a user namespace: 1; -1 unknown; 0 not */
	/* NVML: the process has it loaded; GPU 0's BAR1 (0: the default) */
	int nvml_loaded;
	unsigned long long bar1_used, bar1_total;
	/* what the calls answer */
	int dmabuf_errno, reg_errno;
	CUresult export_result, set_attr_result;
	CUresult attrs_result; /* cuPointerGetAttributes answers this */
	/* the request */
	const char *env_path;
	uint32_t mask; /* 0: none given */
	uint32_t flags;
	/* expected */
	enum gdr_path want_path;
	int want_errno;
	const char *want_msg;
	const char *want_not_msg; /* and the message lacks this */
	enum gdr_mem_type want_mem;
	int want_no_ro;	   /* no IBV_ACCESS_RELAXED_ORDERING on device memory */
	int want_ctx_flag; /* CU_CTX_SYNC_MEMOPS set on the caller's context */
	int want_ctx_lost; /* the context stack cannot be restored */
	int want_flagged;  /* flagged exports + 1 (0: not checked) */
	const char *want_reason; /* in the record of some attempt */
};

#define B(p) GDR_PATH_BIT(GDR_PATH_##p)

static const struct scenario table[] = {
	{ .name = "healthy node: dmabuf",
	  .nv = NV_OPEN,
	  .want_path = GDR_PATH_DMABUF,
	  .want_mem = GDR_MEM_CUDA_DEVICE },
	{ .name = "no libcuda: host pointer registers as host",
	  .nv = NV_OPEN,
	  .no_libcuda = 1,
	  .ptr = P_HOST,
	  .want_path = GDR_PATH_HOST,
	  .want_mem = GDR_MEM_HOST },
	{ .name = "cuInit finds no device: host path",
	  .nv = NV_OPEN,
	  .init_result = CUDA_ERROR_NO_DEVICE,
	  .ptr = P_HOST,
	  .want_path = GDR_PATH_HOST,
	  .want_mem = GDR_MEM_HOST },
	{ .name = "proprietary module, no peermem",
	  .nv = NV_PROPRIETARY,
	  .want_errno = EOPNOTSUPP,
	  .want_msg = "is the proprietary kernel module, which cannot export "
		      "DMA-BUF; DMA-BUF needs the open kernel module: install "
		      "it (GPU Operator: --set driver.kernelModuleType=open)" },
	{ .name = "proprietary module + peermem (memory_peers/nv_mem)",
	  .nv = NV_PROPRIETARY,
	  .peermem = PM_NV_MEM,
	  .want_path = GDR_PATH_PEERMEM },
	{ .name = "kernel 5.10, no peermem",
	  .nv = NV_OPEN,
	  .kernel = "5.10.0-28-amd64",
	  .want_errno = EOPNOTSUPP,
	  .want_msg = "kernel 5.10.0-28-amd64 is older than 5.12" },
	{ .name = "kernel 5.11.22, the last without DMA-BUF MRs",
	  .nv = NV_OPEN,
	  .kernel = "5.11.22",
	  .want_errno = EOPNOTSUPP,
	  .want_msg = "kernel 5.11.22 is older than 5.12" },
	{ .name = "kernel 4.18 (RHEL 8) + nv_peer_mem",
	  .nv = NV_OPEN,
	  .kernel = "4.18.0-513.el8.x86_64",
	  .peermem = PM_OLD,
	  .registered = 1,
	  .want_path = GDR_PATH_PEERMEM },
	{ .name = "nvidia_peermem loaded, no memory_peers (inbox ib_core)",
	  .nv = NV_OPEN,
	  .kernel = "4.18.0-513.el8.x86_64",
	  .peermem = PM_MODULE,
	  .want_errno = EOPNOTSUPP,
	  .want_msg =
		  "peermem skipped: nvidia-peermem is 1.1 "
		  "(/sys/module/nvidia_peermem/version), not registered "
		  "with the RDMA core (no /sys/kernel/mm/memory_peers/nv_mem, "
		  "nor the directory); nvidia-peermem works only "
		  "with MLNX_OFED/DOCA-OFED's ib_core" },
	{ .name = "nvidia_peermem loaded, memory_peers without nv_mem",
	  .nv = NV_OPEN,
	  .kernel = "4.18.0-513.el8.x86_64",
	  .peermem = PM_MODULE,
	  .other_peer = "kernel/mm/memory_peers/amdgpu/version",
	  .want_errno = EOPNOTSUPP,
	  .want_msg = "not registered with the RDMA core (no "
		      "/sys/kernel/mm/memory_peers/nv_mem); nvidia-peermem "
		      "is loaded but did not register (dmesg says why)" },
	{ .name = "kernel 5.12.0-rc1+ is new enough",
	  .nv = NV_OPEN,
	  .kernel = "5.12.0-rc1+",
	  .want_path = GDR_PATH_DMABUF },
	{ .name = "driver 11.4, no peermem",
	  .nv = NV_OPEN,
	  .driver = 11040,
	  .want_errno = EOPNOTSUPP,
	  .want_msg = "older than 11.7" },
	/* The thresholds at their edges: one below, equal, one above. */
	{ .name = "kernel 5.11.99: one below 5.12",
	  .nv = NV_OPEN,
	  .kernel = "5.11.99",
	  .want_errno = EOPNOTSUPP,
	  .want_msg = "kernel 5.11.99 is older than 5.12" },
	{ .name = "kernel 5.12: exactly the threshold",
	  .nv = NV_OPEN,
	  .kernel = "5.12",
	  .want_path = GDR_PATH_DMABUF },
	{ .name = "kernel 5.13.0: one above",
	  .nv = NV_OPEN,
	  .kernel = "5.13.0",
	  .want_path = GDR_PATH_DMABUF },
	{ .name = "kernel 4.99.0: an older major with a larger minor",
	  .nv = NV_OPEN,
	  .kernel = "4.99.0",
	  .want_errno = EOPNOTSUPP,
	  .want_msg = "kernel 4.99.0 is older than 5.12" },
	{ .name = "kernel 6.0.0: a newer major with a smaller minor",
	  .nv = NV_OPEN,
	  .kernel = "6.0.0",
	  .want_path = GDR_PATH_DMABUF },
	{ .name = "driver API 11069: one below 11.7",
	  .nv = NV_OPEN,
	  .driver = 11069,
	  .want_errno = EOPNOTSUPP,
	  .want_msg = "older than 11.7" },
	{ .name = "driver API 11070: exactly 11.7",
	  .nv = NV_OPEN,
	  .driver = 11070,
	  .want_path = GDR_PATH_DMABUF },
	{ .name = "driver API 11071: one above 11.7",
	  .nv = NV_OPEN,
	  .driver = 11071,
	  .want_path = GDR_PATH_DMABUF },
	{ .name = "Data Direct NIC, driver API 12079: one below 12.8",
	  .nv = NV_OPEN,
	  .dd = 1,
	  .driver = 12079,
	  .want_path = GDR_PATH_DMABUF,
	  .want_reason = "older than 12.8",
	  .want_flagged = 0 + 1 },
	{ .name = "Data Direct NIC, driver API 12080: exactly 12.8",
	  .nv = NV_OPEN,
	  .dd = 1,
	  .driver = 12080,
	  .want_path = GDR_PATH_DATA_DIRECT,
	  .want_flagged = 1 + 1 },
	{ .name = "Data Direct NIC, driver API 12081: one above 12.8",
	  .nv = NV_OPEN,
	  .dd = 1,
	  .driver = 12081,
	  .want_path = GDR_PATH_DATA_DIRECT,
	  .want_flagged = 1 + 1 },
	{ .name = "driver 11.4 + nvidia_peermem module",
	  .nv = NV_OPEN,
	  .driver = 11040,
	  .peermem = PM_MODULE,
	  .registered = 1,
	  .want_path = GDR_PATH_PEERMEM },
	{ .name = "GPU 1 of 2 lacks DMA-BUF: its memory is refused",
	  .nv = NV_OPEN,
	  .two_gpus_attr1 = 1,
	  .gpu = 1,
	  .want_errno = EOPNOTSUPP,
	  .want_msg = "GPU 1 (Fake H200 1) reports "
		      "CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED=0" },
	{ .name = "GPU 1 of 2 lacks DMA-BUF: GPU 0 still uses it",
	  .nv = NV_OPEN,
	  .two_gpus_attr1 = 1,
	  .gpu = 0,
	  .want_path = GDR_PATH_DMABUF },
	{ .name = "GPU 1 memory while GPU 0's context is current",
	  .nv = NV_OPEN,
	  .two_gpus_attr1 = 2,
	  .gpu = 1,
	  .want_path = GDR_PATH_DMABUF },
	{ .name = "GPU 1 VMM memory: GPU 1's primary context",
	  .nv = NV_OPEN,
	  .two_gpus_attr1 = 2,
	  .gpu = 1,
	  .ptr = P_VMM,
	  .want_path = GDR_PATH_DMABUF },
	{ .name = "NIC answers EOPNOTSUPP, no peermem",
	  .nv = NV_OPEN,
	  .probe_errno = EOPNOTSUPP,
	  .want_errno = EOPNOTSUPP,
	  .want_msg = "RDMA device fake_mlx5_0 does not support DMA-BUF" },
	{ .name = "NIC answers EPROTONOSUPPORT + nv_mem_nc",
	  .nv = NV_OPEN,
	  .probe_errno = EPROTONOSUPPORT,
	  .peermem = PM_NV_MEM_NC,
	  .want_path = GDR_PATH_PEERMEM },
	{ .name = "NIC answers EINVAL (unknown): a real registration decides",
	  .nv = NV_OPEN,
	  .probe_errno = EINVAL,
	  .want_path = GDR_PATH_DMABUF },
	{ .name = "NIC answers EINVAL, registration says EOPNOTSUPP: peermem",
	  .nv = NV_OPEN,
	  .probe_errno = EINVAL,
	  .dmabuf_errno = EOPNOTSUPP,
	  .peermem = PM_NV_MEM,
	  .want_path = GDR_PATH_PEERMEM },
	{ .name = "neither path: open module, NIC without DMA-BUF, no peermem",
	  .nv = NV_OPEN,
	  .probe_errno = EOPNOTSUPP,
	  .want_errno = EOPNOTSUPP,
	  .want_msg = "peermem skipped: nvidia-peermem is not loaded" },
	{ .name = "plain host pointer",
	  .nv = NV_OPEN,
	  .ptr = P_HOST,
	  .want_path = GDR_PATH_HOST,
	  .want_mem = GDR_MEM_HOST },
	{ .name = "CUDA pinned host pointer takes the host path",
	  .nv = NV_OPEN,
	  .ptr = P_CUDA_HOST,
	  .want_path = GDR_PATH_HOST,
	  .want_mem = GDR_MEM_CUDA_HOST },
	{ .name = "managed pointer refused",
	  .nv = NV_OPEN,
	  .ptr = P_MANAGED,
	  .want_errno = EINVAL,
	  .want_msg = "CUDA managed memory",
	  .want_mem = GDR_MEM_CUDA_MANAGED },
	{ .name = "range past the end of the allocation refused",
	  .nv = NV_OPEN,
	  .ptr = P_PAST_END,
	  .want_errno = EINVAL,
	  .want_msg = "runs past the end of its CUDA allocation" },
	{ .name = "a range one byte past the end of its allocation refused",
	  .nv = NV_OPEN,
	  .ptr = P_ONE_PAST,
	  .want_errno = EINVAL,
	  .want_msg = "runs past the end of its CUDA allocation" },
	{ .name = "a range that ends with its allocation registered",
	  .nv = NV_OPEN,
	  .ptr = P_AT_END,
	  .want_path = GDR_PATH_DMABUF,
	  .want_mem = GDR_MEM_CUDA_DEVICE },
	{ .name = "VMM memory: exported under the primary context",
	  .nv = NV_OPEN,
	  .ptr = P_VMM,
	  .want_path = GDR_PATH_DMABUF },
	{ .name = "a VMM range past its reservation: the export refuses it",
	  .nv = NV_OPEN,
	  .ptr = P_VMM_PAST,
	  .want_errno = EINVAL,
	  .want_msg = "failed with CUDA_ERROR_INVALID_VALUE: the page-aligned "
		      "span is not one cuMemAlloc allocation or a fully mapped "
		      "VMM range" },
	{ .name = "VMM memory without gpuDirectRDMACapable refused",
	  .nv = NV_OPEN,
	  .ptr = P_VMM_NOT_RDMA,
	  .want_errno = EINVAL,
	  .want_msg = "allocFlags.gpuDirectRDMACapable=1" },
	{ .name = "forced dmabuf that works",
	  .nv = NV_OPEN,
	  .peermem = PM_NV_MEM,
	  .mask = B(DMABUF),
	  .want_path = GDR_PATH_DMABUF },
	{ .name = "forced dmabuf that fails does not fall back",
	  .nv = NV_OPEN,
	  .probe_errno = EOPNOTSUPP,
	  .peermem = PM_NV_MEM,
	  .mask = B(DMABUF),
	  .want_errno = EOPNOTSUPP,
	  .want_msg = "does not support DMA-BUF memory regions" },
	{ .name = "forced dmabuf, registration fails: no fallback",
	  .nv = NV_OPEN,
	  .dmabuf_errno = EOPNOTSUPP,
	  .peermem = PM_NV_MEM,
	  .mask = B(DMABUF),
	  .want_errno = EOPNOTSUPP,
	  .want_msg = "ibv_reg_dmabuf_mr(offset 100, 5000 bytes) on "
		      "fake_mlx5_0 failed with EOPNOTSUPP" },
	{ .name = "forced peermem that works",
	  .nv = NV_OPEN,
	  .peermem = PM_NV_MEM,
	  .mask = B(PEERMEM),
	  .want_path = GDR_PATH_PEERMEM },
	{ .name = "forced peermem without the module",
	  .nv = NV_OPEN,
	  .mask = B(PEERMEM),
	  .want_errno = EOPNOTSUPP,
	  .want_msg = "modprobe nvidia-peermem" },
	{ .name = "forced host for device memory",
	  .nv = NV_OPEN,
	  .mask = B(HOST),
	  .want_errno = EOPNOTSUPP,
	  .want_msg = "the buffer is cuda-device memory" },
	{ .name = "dmabuf registration fails with 524, peermem succeeds",
	  .nv = NV_OPEN,
	  .dmabuf_errno = GDR_ENOTSUPP,
	  .peermem = PM_NV_MEM,
	  .want_path = GDR_PATH_PEERMEM },
	{ .name = "dmabuf registration ENOMEM is reported, not hidden",
	  .nv = NV_OPEN,
	  .dmabuf_errno = ENOMEM,
	  .peermem = PM_NV_MEM,
	  .want_errno = ENOMEM,
	  .want_msg = "failed with ENOMEM" },
	{ .name = "dmabuf ENOMEM with BAR1 at 95%: BAR1 named as the cause",
	  .nv = NV_OPEN,
	  .nvml_loaded = 1,
	  .bar1_used = 255013684, /* just over 95% of 256 MiB */
	  .bar1_total = 256 << 20,
	  .dmabuf_errno = ENOMEM,
	  .want_errno = ENOMEM,
	  .want_msg = "failed with ENOMEM (Cannot allocate memory); likely "
		      "cause: BAR1 of GPU 0 is "
		      "nearly used up (243 MiB of 256 MiB used (95%)); "
		      "register less device memory at a time" },
	{ .name = "dmabuf EINVAL with BAR1 at 90%: BAR1 named as the cause",
	  .nv = NV_OPEN,
	  .nvml_loaded = 1,
	  .bar1_used = 241591911,
	  .bar1_total = 256 << 20,
	  .dmabuf_errno = EINVAL,
	  .want_errno = EINVAL,
	  .want_msg = "likely cause: BAR1 of GPU 0 is nearly used up" },
	{ .name = "dmabuf EFAULT, BAR1 under 90% but with less free than the "
		  "buffer: BAR1 named",
	  .nv = NV_OPEN,
	  .nvml_loaded = 1,
	  .bar1_used = 36863, /* 89.99% of 40 KiB: 4097 bytes free */
	  .bar1_total = 40960,
	  .dmabuf_errno = EFAULT,
	  .want_errno = EFAULT,
	  .want_msg = "likely cause: BAR1 of GPU 0 has 4097 bytes free, fewer "
		      "than the buffer's 5000" },
	{ .name = "dmabuf ENOMEM with BAR1 almost idle: BAR1 not blamed",
	  .nv = NV_OPEN,
	  .nvml_loaded = 1,
	  .dmabuf_errno = ENOMEM,
	  .want_errno = ENOMEM,
	  .want_msg = "failed with ENOMEM",
	  .want_not_msg = "BAR1" },
	{ .name = "dmabuf ENOMEM, NVML not loaded here: BAR1 only suggested",
	  .nv = NV_OPEN,
	  .bar1_used = 255013684,
	  .bar1_total = 256 << 20,
	  .dmabuf_errno = ENOMEM,
	  .want_errno = ENOMEM,
	  .want_msg = "if BAR1 of GPU 0 is nearly used up, that is the likely "
		      "cause (not known here: NVML is not loaded in this "
		      "process; nvidia-smi -q -d MEMORY shows BAR1 use)",
	  .want_not_msg = "likely cause:" },
	{ .name = "dmabuf EFAULT, BAR1 with exactly the buffer's length free: "
		  "not blamed",
	  .nv = NV_OPEN,
	  .nvml_loaded = 1,
	  .bar1_used = 35960, /* 87.8% of 40 KiB: 5000 bytes free */
	  .bar1_total = 40960,
	  .dmabuf_errno = EFAULT,
	  .want_errno = EFAULT,
	  .want_not_msg = "BAR1" },
	{ .name = "peermem ENOMEM with BAR1 full: BAR1 named as the cause",
	  .nv = NV_PROPRIETARY,
	  .peermem = PM_NV_MEM,
	  .nvml_loaded = 1,
	  .bar1_used = 256 << 20,
	  .bar1_total = 256 << 20,
	  .reg_errno = ENOMEM,
	  .want_errno = ENOMEM,
	  .want_msg = "likely cause: BAR1 of GPU 0 is nearly used up (256 MiB "
		      "of 256 MiB used (100%))" },
	{ .name = "peermem EFAULT with BAR1 full: BAR1 named before the "
		  "module's words, which a length limit may cut",
	  .nv = NV_PROPRIETARY,
	  .peermem = PM_NV_MEM,
	  .nvml_loaded = 1,
	  .bar1_used = 256 << 20,
	  .bar1_total = 256 << 20,
	  .reg_errno = EFAULT,
	  .want_errno = EFAULT,
	  .want_msg = "failed with EFAULT (Bad address); likely cause: BAR1 "
		      "of GPU 0 is nearly used up (256 MiB of 256 MiB used "
		      "(100%)); register less device memory at a time" },
	{ .name = "peermem EFAULT, BAR1 with room: the module's words",
	  .nv = NV_PROPRIETARY,
	  .peermem = PM_NV_MEM,
	  .nvml_loaded = 1,
	  .reg_errno = EFAULT,
	  .want_errno = EFAULT,
	  .want_msg = "failed with EFAULT (Bad address): nvidia-peermem is "
		      "loaded",
	  .want_not_msg = "BAR1" },
	{ .name = "dmabuf EINVAL, NVML not loaded: the access flags first, "
		  "BAR1 only a possibility",
	  .nv = NV_OPEN,
	  .dmabuf_errno = EINVAL,
	  .want_errno = EINVAL,
	  .want_msg = "failed with EINVAL (Invalid argument); check the access "
		      "flags; if BAR1 of GPU 0 is nearly used up, that may be "
		      "the cause (not known here" },
	{ .name = "dmabuf EPERM with BAR1 full: not a BAR1 error",
	  .nv = NV_OPEN,
	  .nvml_loaded = 1,
	  .bar1_used = 256 << 20,
	  .bar1_total = 256 << 20,
	  .dmabuf_errno = EPERM,
	  .want_errno = EPERM,
	  .want_not_msg = "BAR1" },
	{ .name = "host ENOMEM with BAR1 full: BAR1 is for device memory",
	  .nv = NV_OPEN,
	  .nvml_loaded = 1,
	  .bar1_used = 256 << 20,
	  .bar1_total = 256 << 20,
	  .ptr = P_HOST,
	  .reg_errno = ENOMEM,
	  .want_errno = ENOMEM,
	  .want_msg = "locked-memory limit",
	  .want_not_msg = "BAR1" },
	{ .name = "export CUDA_ERROR_NOT_SUPPORTED falls back to peermem",
	  .nv = NV_OPEN,
	  .export_result = CUDA_ERROR_NOT_SUPPORTED,
	  .peermem = PM_NV_MEM,
	  .want_path = GDR_PATH_PEERMEM },
	{ .name = "export CUDA_ERROR_INVALID_VALUE is an error",
	  .nv = NV_OPEN,
	  .export_result = CUDA_ERROR_INVALID_VALUE,
	  .peermem = PM_NV_MEM,
	  .nvml_loaded = 1,
	  .bar1_used = 256 << 20,
	  .bar1_total = 256 << 20,
	  .want_errno = EINVAL,
	  .want_msg = "cuMemGetHandleForAddressRange",
	  /* the driver's own refusal: nothing mapped through BAR1 yet */
	  .want_not_msg = "BAR1" },
	{ .name = "peermem EFAULT with the module there names other causes",
	  .nv = NV_PROPRIETARY,
	  .peermem = PM_NV_MEM,
	  .reg_errno = EFAULT,
	  .want_errno = EFAULT,
	  .want_msg = "nvidia-peermem is loaded (/sys/kernel/mm/memory_peers/"
		      "nv_mem/version) but the kernel could not pin the device "
		      "memory: the module may be bound to another RDMA stack" },
	{ .name = "host EFAULT names an unmapped range",
	  .nv = NV_OPEN,
	  .ptr = P_HOST,
	  .reg_errno = EFAULT,
	  .want_errno = EFAULT,
	  .want_msg = "not mapped in this process" },
	{ .name = "host ENOMEM names the memlock limit",
	  .nv = NV_OPEN,
	  .ptr = P_HOST,
	  .memlock = 8 << 20,
	  .reg_errno = ENOMEM,
	  .want_errno = ENOMEM,
	  .want_msg = "failed with ENOMEM (Cannot allocate memory); the "
		      "locked-memory limit is 8 MiB (hard 8 MiB): host "
		      "registrations pin their pages against this limit: make "
		      "it unlimited (ulimit -l unlimited;" },
	{ .name = "host ENOMEM, memlock unlimited: the kernel ran out",
	  .nv = NV_OPEN,
	  .ptr = P_HOST,
	  .reg_errno = ENOMEM,
	  .want_errno = ENOMEM,
	  .want_msg = "the locked-memory limit is unlimited, so the kernel "
		      "itself ran out of memory for it",
	  .want_not_msg = "ulimit" },
	{ .name = "host ENOMEM, 64 KiB limit but CAP_IPC_LOCK",
	  .nv = NV_OPEN,
	  .ptr = P_HOST,
	  .memlock = 64 << 10,
	  .cap_ipc_lock = 1,
	  .reg_errno = ENOMEM,
	  .want_errno = ENOMEM,
	  .want_msg = "the locked-memory limit is 64 KiB (hard 64 KiB), not "
		      "applied: the process has CAP_IPC_LOCK, so the kernel "
		      "itself ran out",
	  .want_not_msg = "ulimit" },
	{ .name = "host ENOMEM, 64 KiB limit, CAP_IPC_LOCK in a user namespace",
	  .nv = NV_OPEN,
	  .ptr = P_HOST,
	  .memlock = 64 << 10,
	  .cap_ipc_lock = 1,
	  .user_ns = 1,
	  .reg_errno = ENOMEM,
	  .want_errno = ENOMEM,
	  .want_msg = "the locked-memory limit is 64 KiB (hard 64 KiB), "
		      "applied although the process has CAP_IPC_LOCK: it is "
		      "in a user namespace",
	  .want_not_msg = "ran out" },
	{ .name = "host ENOMEM, CAP_IPC_LOCK, user namespace unknown",
	  .nv = NV_OPEN,
	  .ptr = P_HOST,
	  .memlock = 64 << 10,
	  .cap_ipc_lock = 1,
	  .user_ns = -1,
	  .reg_errno = ENOMEM,
	  .want_errno = ENOMEM,
	  .want_msg = "; if the locked-memory limit is low (64 KiB (hard 64 "
		      "KiB); the process has CAP_IPC_LOCK, which lifts it "
		      "only outside a user namespace" },
	{ .name = "longer than the NIC's max_mr_size: refused before any call",
	  .nv = NV_OPEN,
	  .max_mr_size = 4999, /* LEN - 1 */
	  .want_errno = EINVAL,
	  .want_msg = "5000 bytes is longer than its max_mr_size, 4999 bytes "
		      "(ibv_query_device); register it in pieces no longer "
		      "than that" },
	{ .name = "exactly the NIC's max_mr_size: registered",
	  .nv = NV_OPEN,
	  .max_mr_size = 5000, /* LEN */
	  .want_path = GDR_PATH_DMABUF },
	{ .name = "DMA-BUF ENOMEM behind a translated IOMMU names it",
	  .nv = NV_OPEN,
	  .nic_iommu = "DMA-FQ",
	  .dmabuf_errno = ENOMEM,
	  .want_errno = ENOMEM,
	  .want_msg = "mlx5_0's IOMMU domain translates (DMA-FQ), a likely "
		      "cause beside BAR1: translated DMA" },
	{ .name = "DMA-BUF ENOMEM, IOMMU passthrough: not named",
	  .nv = NV_OPEN,
	  .nic_iommu = "identity",
	  .dmabuf_errno = ENOMEM,
	  .want_errno = ENOMEM,
	  .want_not_msg = "IOMMU" },
	{ .name = "peermem ENOMEM behind a translated IOMMU names it",
	  .nv = NV_PROPRIETARY,
	  .peermem = PM_NV_MEM,
	  .nic_iommu = "DMA",
	  .reg_errno = ENOMEM,
	  .want_errno = ENOMEM,
	  .want_msg = "IOMMU domain translates (DMA), a likely cause beside "
		      "BAR1: translated DMA" },
	{ .name = "host ENOMEM behind a translated IOMMU: the memlock words only",
	  .nv = NV_OPEN,
	  .ptr = P_HOST,
	  .nic_iommu = "DMA-FQ",
	  .reg_errno = ENOMEM,
	  .want_errno = ENOMEM,
	  .want_not_msg = "IOMMU" },
	{ .name = "rdma-core without ibv_reg_dmabuf_mr + peermem",
	  .nv = NV_OPEN,
	  .no_dmabuf_symbol = 1,
	  .peermem = PM_NV_MEM,
	  .want_path = GDR_PATH_PEERMEM },
	{ .name = "rdma-core without ibv_reg_dmabuf_mr, no peermem",
	  .nv = NV_OPEN,
	  .no_dmabuf_symbol = 1,
	  .want_errno = EOPNOTSUPP,
	  .want_msg = "rdma-core older than v34" },
	{ .name = "no /proc/driver/nvidia/version: CUDA decides",
	  .nv = NULL,
	  .want_path = GDR_PATH_DMABUF },
	{ .name = "GPUDIRECT_PATH=peermem",
	  .nv = NV_OPEN,
	  .peermem = PM_NV_MEM,
	  .env_path = "peermem",
	  .want_path = GDR_PATH_PEERMEM },
	{ .name = "GPUDIRECT_PATH=dmabuf still registers host memory",
	  .nv = NV_OPEN,
	  .env_path = "dmabuf",
	  .ptr = P_HOST,
	  .want_path = GDR_PATH_HOST },
	{ .name = "GPUDIRECT_PATH=host refuses device memory",
	  .nv = NV_OPEN,
	  .env_path = "host",
	  .want_errno = EOPNOTSUPP,
	  .want_msg = "dmabuf skipped: not allowed by GPUDIRECT_PATH" },
	{ .name = "GPUDIRECT_PATH=bogus is an error",
	  .nv = NV_OPEN,
	  .env_path = "bogus",
	  .want_errno = EINVAL,
	  .want_msg = "GPUDIRECT_PATH=bogus is not a path" },
	{ .name = "GPUDIRECT_PATH=auto: the default order",
	  .nv = NV_OPEN,
	  .env_path = "auto",
	  .want_path = GDR_PATH_DMABUF },
	/* A setting is shown up to 40 bytes, "..." only after a cut. */
	{ .name = "GPUDIRECT_PATH of 40 bytes: shown whole",
	  .nv = NV_OPEN,
	  .env_path = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
	  .want_errno = EINVAL,
	  .want_msg =
		  "GPUDIRECT_PATH=bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb is not a path" },
	{ .name = "GPUDIRECT_PATH of 41 bytes: 40 and ...",
	  .nv = NV_OPEN,
	  .env_path = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
	  .want_errno = EINVAL,
	  .want_msg =
		  "GPUDIRECT_PATH=bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb... is not a path" },
	{ .name = "path_mask overrides GPUDIRECT_PATH",
	  .nv = NV_OPEN,
	  .env_path = "host",
	  .mask = B(DMABUF) | B(HOST),
	  .want_path = GDR_PATH_DMABUF },
	{ .name = "sync-memops on peermem",
	  .nv = NV_OPEN,
	  .peermem = PM_NV_MEM,
	  .mask = B(PEERMEM),
	  .flags = GDR_REG_SYNC_MEMOPS,
	  .want_path = GDR_PATH_PEERMEM },
	{ .name = "strict ordering",
	  .nv = NV_OPEN,
	  .flags = GDR_REG_STRICT_ORDERING,
	  .want_path = GDR_PATH_DMABUF,
	  .want_no_ro = 1 },
	{ .name = "strict ordering on peermem",
	  .nv = NV_PROPRIETARY,
	  .peermem = PM_NV_MEM,
	  .flags = GDR_REG_STRICT_ORDERING,
	  .want_path = GDR_PATH_PEERMEM,
	  .want_no_ro = 1 },
	{ .name = "GPUDIRECT_RELAXED_ORDERING=0",
	  .nv = NV_OPEN,
	  .env_ro = "0",
	  .want_path = GDR_PATH_DMABUF,
	  .want_no_ro = 1 },
	{ .name = "GPUDIRECT_RELAXED_ORDERING=1 keeps it",
	  .nv = NV_OPEN,
	  .env_ro = "1",
	  .want_path = GDR_PATH_DMABUF },
	{ .name = "GPUDIRECT_RELAXED_ORDERING=auto (the default) keeps it",
	  .nv = NV_OPEN,
	  .env_ro = "auto",
	  .want_path = GDR_PATH_DMABUF },
	{ .name = "GPUDIRECT_RELAXED_ORDERING empty: as unset",
	  .nv = NV_OPEN,
	  .env_ro = "",
	  .want_path = GDR_PATH_DMABUF },
	{ .name = "GPUDIRECT_RELAXED_ORDERING=yes is an error",
	  .nv = NV_OPEN,
	  .env_ro = "yes",
	  .want_errno = EINVAL,
	  .want_msg = "GPUDIRECT_RELAXED_ORDERING=yes is not 0, 1 or auto" },
	{ .name = "managed memory that reads as host memory is refused",
	  .nv = NV_OPEN,
	  .ptr = P_MANAGED_HOST,
	  .want_errno = EINVAL,
	  .want_msg = "CUDA managed memory",
	  .want_mem = GDR_MEM_CUDA_MANAGED },
	{ .name = "a CUDA array is refused, not taken for host memory",
	  .nv = NV_OPEN,
	  .ptr = P_ARRAY,
	  .want_errno = EINVAL,
	  .want_msg = "is CUDA memory of type 3 (array or unified), which "
		      "cannot be registered" },
	{ .name = "NIC probe gets an MR: released, a real registration decides",
	  .nv = NV_OPEN,
	  .probe_mr = 1,
	  .want_path = GDR_PATH_DMABUF },
	{ .name = "pool memory the driver marks GPUDirect RDMA capable",
	  .nv = NV_OPEN,
	  .ptr = P_POOL,
	  .want_path = GDR_PATH_DMABUF,
	  .want_mem = GDR_MEM_CUDA_POOL },
	{ .name = "pool memory not GPUDirect RDMA capable is refused",
	  .nv = NV_OPEN,
	  .ptr = P_POOL_NOT_RDMA,
	  .want_errno = EINVAL,
	  .want_msg = "stream-ordered memory pool (cuMemAllocAsync/"
		      "cudaMallocAsync) whose memory the driver does not mark "
		      "GPUDirect RDMA capable",
	  .want_mem = GDR_MEM_CUDA_POOL },
	{ .name = "a span over two adjacent allocations is refused",
	  .nv = NV_OPEN,
	  .ptr = P_ADJACENT,
	  .want_errno = EINVAL,
	  .want_msg = "runs past the end of its CUDA allocation" },
	{ .name = "forced dmabuf answering 524: EOPNOTSUPP, never 524",
	  .nv = NV_OPEN,
	  .dmabuf_errno = GDR_ENOTSUPP,
	  .mask = B(DMABUF),
	  .want_errno = EOPNOTSUPP,
	  .want_msg = "failed with 524 (the kernel's internal ENOTSUPP, "
		      "reported as EOPNOTSUPP)" },
	{ .name = "524 everywhere: EOPNOTSUPP",
	  .nv = NV_OPEN,
	  .dmabuf_errno = GDR_ENOTSUPP,
	  .peermem = PM_NV_MEM,
	  .reg_errno = GDR_ENOTSUPP,
	  .want_errno = EOPNOTSUPP },
	{ .name = "host memory when the application never loaded libcuda",
	  .nv = NV_OPEN,
	  .ptr = P_HOST,
	  .cuda_not_loaded = 1,
	  .want_path = GDR_PATH_HOST,
	  .want_mem = GDR_MEM_HOST },
	{ .name = "host memory, CUDA not initialised (a forked child)",
	  .nv = NV_OPEN,
	  .ptr = P_HOST,
	  .not_initialized = 1,
	  .want_path = GDR_PATH_HOST,
	  .want_mem = GDR_MEM_HOST },
	{ .name = "device memory where CUDA is not initialised: not 'freed'",
	  .nv = NV_OPEN,
	  .not_initialized = 1,
	  .reg_errno = EFAULT,
	  .want_errno = EFAULT,
	  .want_msg = "the CUDA driver is not initialised in this process "
		      "(CUDA_ERROR_NOT_INITIALIZED)",
	  .want_mem = GDR_MEM_HOST },
	{ .name = "VMM memory, a context of its GPU current: reused",
	  .nv = NV_OPEN,
	  .ptr = P_VMM,
	  .caller = C_GPU0_OTHER,
	  .want_path = GDR_PATH_DMABUF },
	{ .name = "VMM memory, no context current: primary retained+released",
	  .nv = NV_OPEN,
	  .ptr = P_VMM,
	  .caller = C_NONE,
	  .want_path = GDR_PATH_DMABUF },
	{ .name = "export and pop both fail: the caller's context survives",
	  .nv = NV_OPEN,
	  .export_result = CUDA_ERROR_INVALID_VALUE,
	  .pop_fails = 1,
	  .want_errno = EINVAL,
	  .want_msg = "cuMemGetHandleForAddressRange" },
	{ .name = "pop fails twice: reported, not hidden",
	  .nv = NV_OPEN,
	  .pop_fails = 2,
	  .want_errno = EIO,
	  .want_ctx_lost = 1,
	  .want_msg = "cuCtxPopCurrent (twice; the caller's context is not "
		      "current again)" },
	{ .name = "an 11.8 driver registers through DMA-BUF",
	  .nv = NV_OPEN,
	  .driver = 11080,
	  .want_path = GDR_PATH_DMABUF },
	{ .name = "an 11.8 driver: VMM memory, its primary context",
	  .nv = NV_OPEN,
	  .driver = 11080,
	  .ptr = P_VMM,
	  .want_path = GDR_PATH_DMABUF },
	{ .name = "an 11.8 driver has no cuCtxSetFlags: sync-memops on VMM",
	  .nv = NV_OPEN,
	  .driver = 11080,
	  .ptr = P_VMM,
	  .caller = C_GPU0_OTHER,
	  .flags = GDR_REG_SYNC_MEMOPS,
	  .want_errno = ENOSYS,
	  .want_msg = "CUDA 12.1 or newer" },
	{ .name = "sync-memops on dmabuf",
	  .nv = NV_OPEN,
	  .flags = GDR_REG_SYNC_MEMOPS,
	  .want_path = GDR_PATH_DMABUF },
	{ .name = "sync-memops on VMM memory sets the context flag",
	  .nv = NV_OPEN,
	  .ptr = P_VMM,
	  .caller = C_GPU0_OTHER,
	  .flags = GDR_REG_SYNC_MEMOPS,
	  .want_path = GDR_PATH_DMABUF,
	  .want_ctx_flag = 1 },
	{ .name = "sync-memops on VMM memory, no context of its GPU current",
	  .nv = NV_OPEN,
	  .ptr = P_VMM,
	  .flags = GDR_REG_SYNC_MEMOPS,
	  .want_errno = EINVAL,
	  .want_msg = "no context of GPU 0 is current" },
	{ .name = "sync-memops on VMM memory, driver without cuCtxSetFlags",
	  .nv = NV_OPEN,
	  .ptr = P_VMM,
	  .caller = C_GPU0_OTHER,
	  .no_ctx_set_flags = 1,
	  .flags = GDR_REG_SYNC_MEMOPS,
	  .want_errno = ENOSYS,
	  .want_msg = "which this driver lacks" },
	{ .name = "Data Direct NIC: the data-direct path",
	  .nv = NV_OPEN,
	  .dd = 1,
	  .want_path = GDR_PATH_DATA_DIRECT,
	  .want_flagged = 1 + 1 },
	{ .name = "Data Direct NIC, rdma-core before v54: dmabuf",
	  .nv = NV_OPEN,
	  .dd = 1,
	  .mlx5dv = 1,
	  .want_path = GDR_PATH_DMABUF,
	  .want_reason = "rdma-core older than v54",
	  .want_flagged = 0 + 1 },
	{ .name = "no libmlx5 at all: dmabuf, the NIC is no mlx5",
	  .nv = NV_OPEN,
	  .mlx5dv = -1,
	  .want_path = GDR_PATH_DMABUF,
	  .want_reason = "no (not an mlx5 device)",
	  .want_flagged = 0 + 1 },
	{ .name = "mlx5 NIC without a Data Direct function (ENODEV): dmabuf",
	  .nv = NV_OPEN,
	  .want_path = GDR_PATH_DMABUF,
	  .want_reason = "answered ENODEV: no Data Direct function",
	  .want_flagged = 0 + 1 },
	{ .name = "a NIC that is not mlx5: dmabuf",
	  .nv = NV_OPEN,
	  .not_mlx5 = 1,
	  .want_path = GDR_PATH_DMABUF,
	  .want_reason = "not an mlx5 device" },
	{ .name = "Data Direct NIC, driver 12.6 (no PCIe mapping): dmabuf",
	  .nv = NV_OPEN,
	  .dd = 1,
	  .driver = 12060,
	  .want_path = GDR_PATH_DMABUF,
	  .want_reason = "older than 12.8",
	  .want_flagged = 0 + 1 },
	{ .name = "flagged export NOT_SUPPORTED: plain DMA-BUF, remembered",
	  .nv = NV_OPEN,
	  .dd = 1,
	  .pcie_result = CUDA_ERROR_NOT_SUPPORTED,
	  .want_path = GDR_PATH_DMABUF,
	  .want_reason = "remembered for this GPU",
	  .want_flagged = 1 + 1 },
	{ .name = "mlx5dv registration answers 524: falls back to dmabuf",
	  .nv = NV_OPEN,
	  .dd = 1,
	  .mlx5_reg_errno = 524,
	  .want_path = GDR_PATH_DMABUF,
	  .want_reason = "mlx5dv_reg_dmabuf_mr(offset 100, 5000 bytes, "
			 "DATA_DIRECT)",
	  .want_flagged = 1 + 1 },
	{ .name = "mlx5dv registration fails with EINVAL: no fallback",
	  .nv = NV_OPEN,
	  .dd = 1,
	  .mlx5_reg_errno = EINVAL,
	  .want_errno = EINVAL,
	  .want_msg = "data-direct failed: mlx5dv_reg_dmabuf_mr(offset 100, "
		      "5000 bytes, DATA_DIRECT) on fake_mlx5_0 failed with "
		      "EINVAL" },
	{ .name = "forced data-direct without the function: no fallback",
	  .nv = NV_OPEN,
	  .mask = B(DATA_DIRECT),
	  .want_errno = EOPNOTSUPP,
	  .want_msg = "no Data Direct function" },
	{ .name = "forced data-direct, flagged export NOT_SUPPORTED",
	  .nv = NV_OPEN,
	  .dd = 1,
	  .mask = B(DATA_DIRECT),
	  .pcie_result = CUDA_ERROR_NOT_SUPPORTED,
	  .want_errno = EOPNOTSUPP,
	  .want_msg = "cannot export a PCIe-mapped dma-buf" },
	{ .name = "GPUDIRECT_PATH=data-direct, NIC without the function: why",
	  .nv = NV_OPEN,
	  .env_path = "data-direct",
	  .want_errno = EOPNOTSUPP,
	  .want_msg = "data-direct skipped: RDMA device fake_mlx5_0 has no "
		      "usable Data Direct function: no (the device answered "
		      "ENODEV: no Data Direct function); Data Direct needs" },
	{ .name = "GPUDIRECT_PATH=data-direct, a NIC that is not mlx5: why",
	  .nv = NV_OPEN,
	  .not_mlx5 = 1,
	  .env_path = "data-direct",
	  .want_errno = EOPNOTSUPP,
	  .want_msg = "data-direct skipped: RDMA device" },
	{ .name = "GPUDIRECT_PATH=data-direct on a Data Direct node",
	  .nv = NV_OPEN,
	  .dd = 1,
	  .env_path = "data-direct",
	  .want_path = GDR_PATH_DATA_DIRECT },
	{ .name = "GPUDIRECT_PCIE_MAPPING=off: no Data Direct",
	  .nv = NV_OPEN,
	  .dd = 1,
	  .env_pcie = "off",
	  .want_path = GDR_PATH_DMABUF,
	  .want_reason = "GPUDIRECT_PCIE_MAPPING=off",
	  .want_flagged = 0 + 1 },
	{ .name = "GPUDIRECT_PCIE_MAPPING=on: dmabuf exports PCIe-mapped",
	  .nv = NV_OPEN,
	  .env_pcie = "on",
	  .want_path = GDR_PATH_DMABUF,
	  .want_reason = "PCIe mapping: asked by GPUDIRECT_PCIE_MAPPING=on",
	  .want_flagged = 1 + 1 },
	{ .name = "GPUDIRECT_PCIE_MAPPING=on, the GPU cannot: peermem",
	  .nv = NV_OPEN,
	  .peermem = PM_MODULE,
	  .registered = 1,
	  .env_pcie = "on",
	  .pcie_result = CUDA_ERROR_NOT_SUPPORTED,
	  .want_path = GDR_PATH_PEERMEM,
	  .want_flagged = 1 + 1 },
	{ .name = "GDR_REG_PCIE_MAPPING with a 12.6 driver: not taken",
	  .nv = NV_OPEN,
	  .driver = 12060,
	  .flags = GDR_REG_PCIE_MAPPING,
	  .want_errno = EOPNOTSUPP,
	  .want_msg = "GDR_REG_PCIE_MAPPING asks for the PCIe mapping",
	  .want_flagged = 0 + 1 },
	{ .name = "cuPointerGetAttributes fails: the remedy says what to check",
	  .nv = NV_OPEN,
	  .attrs_result = CUDA_ERROR_UNKNOWN,
	  .want_errno = EIO,
	  .want_msg = "the CUDA driver could not classify the buffer: check "
		      "the driver (nvidia-smi) and that CUDA is usable here" },
	{ .name = "GPUDIRECT_PCIE_MAPPING=maybe is refused",
	  .nv = NV_OPEN,
	  .env_pcie = "maybe",
	  .want_errno = EINVAL,
	  .want_msg = "GPUDIRECT_PCIE_MAPPING=maybe is not auto, on or off" },
	{ .name = "C2C GPU, NIC on PCIe: dmabuf with the PCIe mapping",
	  .nv = NV_OPEN,
	  .c2c = 1,
	  .nic_pci = 1,
	  .want_path = GDR_PATH_DMABUF,
	  .want_reason = "PCIe mapping: GPU 0 is C2C-attached and fake_mlx5_0 "
			 "is on PCIe",
	  .want_flagged = 1 + 1 },
	{ .name = "C2C GPU, NIC not on PCIe: no PCIe mapping",
	  .nv = NV_OPEN,
	  .c2c = 1,
	  .want_path = GDR_PATH_DMABUF,
	  .want_flagged = 0 + 1 },
	{ .name = "C2C GPU, flagged export NOT_SUPPORTED: plain, recorded",
	  .nv = NV_OPEN,
	  .c2c = 1,
	  .nic_pci = 1,
	  .pcie_result = CUDA_ERROR_NOT_SUPPORTED,
	  .want_path = GDR_PATH_DMABUF,
	  .want_reason = "without the PCIe mapping: GPU 0 answered "
			 "NOT_SUPPORTED",
	  .want_flagged = 1 + 1 },
	{ .name = "a PCIe NIC beside a GPU without C2C: no PCIe mapping",
	  .nv = NV_OPEN,
	  .nic_pci = 1,
	  .want_path = GDR_PATH_DMABUF,
	  .want_flagged = 0 + 1 },
	{ .name = "the export answers NO_DEVICE: ENODEV, no fallback",
	  .nv = NV_OPEN,
	  .export_result = CUDA_ERROR_NO_DEVICE,
	  .want_errno = ENODEV,
	  .want_msg = "CUDA_ERROR_NO_DEVICE" },
	{ .name = "sync-memops refused by the driver",
	  .nv = NV_OPEN,
	  .flags = GDR_REG_SYNC_MEMOPS,
	  .set_attr_result = CUDA_ERROR_NOT_PERMITTED,
	  .want_errno = EPERM,
	  .want_msg = "cuPointerSetAttribute(SYNC_MEMOPS)" },
	{ .name = "VMM export fails, no context current: primary released",
	  .nv = NV_OPEN,
	  .ptr = P_VMM,
	  .caller = C_NONE,
	  .export_result = CUDA_ERROR_INVALID_VALUE,
	  .want_errno = EINVAL },
	{ .name = "C2C unknown (NVML cannot say), NIC on PCIe: no PCIe mapping",
	  .nv = NV_OPEN,
	  .c2c = -1,
	  .nic_pci = 1,
	  .want_path = GDR_PATH_DMABUF,
	  .want_flagged = 0 + 1 },
	{ .name = "driver 13.0 without cuMemGetHandleForAddressRange",
	  .nv = NV_OPEN,
	  .no_export_entry = 1,
	  .want_errno = EOPNOTSUPP,
	  .want_msg = "libcuda.so.1 has no cuMemGetHandleForAddressRange" },
	{ .name = "dmabuf registration EPROTONOSUPPORT, peermem succeeds",
	  .nv = NV_OPEN,
	  .dmabuf_errno = EPROTONOSUPPORT,
	  .peermem = PM_NV_MEM,
	  .want_path = GDR_PATH_PEERMEM },
	{ .name = "export CUDA_ERROR_OUT_OF_MEMORY is ENOMEM",
	  .nv = NV_OPEN,
	  .export_result = CUDA_ERROR_OUT_OF_MEMORY,
	  .peermem = PM_NV_MEM,
	  .want_errno = ENOMEM },
	{ .name = "the caller's access flags, exactly (no relaxed ordering)",
	  .nv = NV_OPEN,
	  .access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ,
	  .want_path = GDR_PATH_DMABUF },
	{ .name = "an 11.3 driver is asked the pool attributes",
	  .nv = NV_PROPRIETARY,
	  .driver = 11030,
	  .peermem = PM_NV_MEM,
	  .ptr = P_POOL,
	  .want_path = GDR_PATH_PEERMEM,
	  .want_mem = GDR_MEM_CUDA_POOL },
};

#define DEV_OFF 100
#define LEN 5000

/* A fake allocation on GPU 0, to be marked by the caller. */
static struct fake_alloc *device_with(size_t size)
{
	fake_alloc_device(0, size);
	return &fake_cu.allocs[fake_cu.num_allocs - 1];
}

/* An unaligned pointer into the last allocation. */
static void *last_dev(void)
{
	return (char *)fake_cu.allocs[fake_cu.num_allocs - 1].start + DEV_OFF;
}

static void *make_ptr(const struct scenario *sc, void *host)
{
	struct fake_alloc *a;

	switch (sc->ptr) {
	case P_HOST: return host;
	case P_CUDA_HOST:
		fake_add_alloc((uintptr_t)host, 65536, 0, CU_MEMORYTYPE_HOST);
		return host;
	case P_MANAGED: device_with(1 << 20)->managed = 1; break;
	case P_MANAGED_HOST:
		a = device_with(1 << 20);
		a->managed = 1;
		a->type = CU_MEMORYTYPE_HOST;
		break;
	case P_ARRAY: device_with(1 << 20)->type = CU_MEMORYTYPE_ARRAY; break;
	case P_POOL: device_with(1 << 20)->pool = 1; break;
	case P_POOL_NOT_RDMA:
		a = device_with(1 << 20);
		a->pool = 1;
		a->not_rdma = 1;
		break;
	case P_ADJACENT:
		/* Two allocations side by side; the range starts in the first
		 * and ends in the second. */
		a = device_with(4096);
		fake_add_alloc(a->start + 4096, 1 << 20, 0,
			       CU_MEMORYTYPE_DEVICE);
		return (char *)a->start + DEV_OFF;
	case P_VMM:
		fake_alloc_device(sc->gpu, 1 << 21);
		fake_cu.allocs[fake_cu.num_allocs - 1].vmm = 1;
		break;
	case P_VMM_NOT_RDMA:
		a = device_with(1 << 21);
		a->vmm = 1;
		a->not_rdma = 1;
		break;
	case P_PAST_END: device_with(4096); break;
	case P_ONE_PAST: device_with(DEV_OFF + LEN - 1); break;
	case P_AT_END: device_with(DEV_OFF + LEN); break;
	case P_VMM_PAST: return (char *)fake_vmm(0, 1, 4096, 0) + DEV_OFF;
	case P_DEVICE: /* fall through */
	default: fake_alloc_device(sc->gpu, 1 << 20); break;
	}
	return last_dev();
}

static CUcontext caller_of(const struct scenario *sc)
{
	/* With two GPUs, the caller has GPU 0's context current. */
	if (sc->two_gpus_attr1)
		return FAKE_PRIMARY(0);
	switch (sc->caller) {
	case C_NONE: return NULL;
	case C_GPU0_OTHER: return FAKE_OTHER_CTX(0);
	case C_GPU0_PRIMARY: return FAKE_PRIMARY(0);
	case C_FOREIGN: /* fall through */
	default: return (CUcontext)(uintptr_t)0xc0ffee;
	}
}

/* The context the export must run under. */
static CUcontext export_ctx(const struct scenario *sc, CUcontext caller)
{
	if (sc->ptr != P_VMM)
		return FAKE_PRIMARY(sc->gpu);
	return sc->caller == C_GPU0_OTHER ? caller : FAKE_PRIMARY(sc->gpu);
}

static void run(const struct scenario *sc)
{
	struct gdr_reg_info info;
	struct gdr_reg_attr attr = { 0 };
	CUcontext caller = caller_of(sc);
	struct fixture fx;
	struct ibv_mr *mr;
	void *host, *ptr;
	int fds, err, depth, i, want_access, regs;
	bool device_path;

	check_scope = sc->name;
	fakes_reset();
	if (fixture_make(&fx)) {
		CHECK_(0, "fixture: %s", strerror(errno));
		return;
	}
	if (sc->nv)
		fixture_write(fx.proc, "driver/nvidia/version", sc->nv);
	if (sc->peermem)
		fixture_write(fx.sys, sc->peermem, "1.1\n");
	if (sc->registered)
		fixture_write(fx.sys, PM_NV_MEM, "1.1\n");
	if (sc->other_peer)
		fixture_write(fx.sys, sc->other_peer, "1.0\n");
	if (sc->no_libcuda)
		fakes_no_libcuda();
	fake_cu.not_loaded = sc->cuda_not_loaded;
	fake_cu.not_initialized = sc->not_initialized;
	fake_cu.init_result = sc->init_result;
	fake_cu.pop_fails = sc->pop_fails;
	fake_cu.no_ctx_set_flags = sc->no_ctx_set_flags;
	fake_cu.set_attr_result = sc->set_attr_result;
	fake_cu.attrs_result = sc->attrs_result;
	if (sc->driver)
		fake_model.driver_version = sc->driver;
	if (sc->two_gpus_attr1) {
		fake_model.num_gpus = 2;
		fake_model.gpu[1].dmabuf_supported = sc->two_gpus_attr1 - 1;
	}
	if (sc->probe_errno)
		fake_model.nic[0].dmabuf_probe_errno = sc->probe_errno;
	fake_ibv.probe_mr = sc->probe_mr;
	fake_model.libibverbs_dmabuf = !sc->no_dmabuf_symbol;
	fake_cu.no_export_entry = sc->no_export_entry;
	fake_ibv.dmabuf_errno = sc->dmabuf_errno;
	fake_ibv.reg_errno = sc->reg_errno;
	fake_model.nvml_loaded = sc->nvml_loaded;
	if (sc->memlock)
		fake_model.memlock_soft = fake_model.memlock_hard = sc->memlock;
	fake_model.cap_ipc_lock = sc->cap_ipc_lock;
	fake_model.user_ns = sc->user_ns;
	if (sc->bar1_total) {
		fake_model.gpu[0].bar1_used = sc->bar1_used;
		fake_model.gpu[0].bar1_total = sc->bar1_total;
	}
	fake_cu.export_result = sc->export_result;
	if (sc->dd)
		fake_model.nic[0].data_direct_errno = 0;
	if (sc->mlx5dv)
		fake_model.mlx5dv = sc->mlx5dv < 0 ? 0 : sc->mlx5dv;
	fake_model.nic[0].mlx5 = !sc->not_mlx5;
	fake_ibv.mlx5_reg_errno = sc->mlx5_reg_errno;
	fake_model.gpu[0].c2c = sc->c2c;
	if (sc->pcie_result)
		fake_model.gpu[0].pcie_mapping = sc->pcie_result;
	if (sc->nic_pci || sc->nic_iommu)
		fixture_nic_pci(&fx, fake_device.name, "0000:04:00.0");
	if (sc->nic_iommu) {
		char link[512];

		fixture_write(fx.sys, "kernel/iommu_groups/7/type",
			      sc->nic_iommu);
		fixture_write(fx.sys, "bus/pci/devices/0000:04:00.0/.keep", "");
		snprintf(link, sizeof(link),
			 "%s/bus/pci/devices/0000:04:00.0/iommu_group", fx.sys);
		CHECK_INT(symlink("../../../../kernel/iommu_groups/7", link),
			  0);
	}
	if (sc->max_mr_size)
		fake_model.nic[0].max_mr_size = sc->max_mr_size;
	if (sc->env_pcie)
		fakes_setenv("GPUDIRECT_PCIE_MAPPING", sc->env_pcie);
	fake_current = caller;
	if (sc->env_ro)
		fakes_setenv("GPUDIRECT_RELAXED_ORDERING", sc->env_ro);
	fakes_install(&fx, sc->kernel, sc->env_path, NULL);

	host = aligned_alloc(4096, 65536);
	ptr = make_ptr(sc, host);
	if (sc->mask) {
		attr.comp_mask |= GDR_REG_ATTR_PATH_MASK;
		attr.path_mask = sc->mask;
	}
	if (sc->access) {
		attr.comp_mask |= GDR_REG_ATTR_ACCESS;
		attr.access = sc->access;
	}
	if (sc->flags) {
		attr.comp_mask |= GDR_REG_ATTR_FLAGS;
		attr.flags = sc->flags;
	}

	fds = count_fds();
	depth = fake_ctx_depth();
	regs = fake_ibv.reg_calls + fake_ibv.dmabuf_calls;
	memset(&info, 0xa5, sizeof(info));
	errno = 0;
	mr = gdr_register_ex(&fake_pd, ptr, LEN, &attr, &info, sizeof(info));
	err = errno;
	log_message(gdr_last_error());

	CHECK_INT(info.comp_mask, GDR_REG_INFO_BASIC | GDR_REG_INFO_EXPORT);
	/* An MR from a dma-buf came from one of the call's exports (a
	 * second when a Data Direct attempt made a PCIe-mapped one first);
	 * the other paths export nothing. */
	if (mr &&
	    (info.path == GDR_PATH_DMABUF || info.path == GDR_PATH_DATA_DIRECT))
		CHECK(info.export_index == 0 || info.export_index == 1);
	else
		CHECK_INT(info.export_index, -1);
	CHECK(info.num_attempts <= 4);
	/* The kernel's internal 524 never reaches the caller, not even in
	 * the record. */
	for (i = 0; i < (int)info.num_attempts && i < 4; i++)
		CHECK(info.attempts[i].err != GDR_ENOTSUPP);
	if (sc->want_reason) {
		bool found = false;

		for (i = 0; i < (int)info.num_attempts; i++)
			found |= strstr(info.attempts[i].reason,
					sc->want_reason) != NULL;
		CHECK_(found, "no attempt says \"%s\"", sc->want_reason);
	}
	if (sc->want_flagged)
		CHECK_INT(fake_cu.flagged_exports, sc->want_flagged - 1);
	if (sc->want_errno) {
		CHECK(mr == NULL);
		CHECK_INT(err, sc->want_errno);
		CHECK_INT(info.path, GDR_PATH_NONE);
		if (sc->want_msg)
			CHECK_HAS(gdr_last_error(), sc->want_msg);
		if (sc->want_not_msg)
			CHECK_(!strstr(gdr_last_error(), sc->want_not_msg),
			       "the message says \"%s\"", sc->want_not_msg);
		for (i = 0; i < (int)info.num_attempts && i < 4; i++)
			CHECK(info.attempts[i].result != GDR_ATTEMPT_USED);
	} else {
		CHECK(mr != NULL);
		CHECK_INT(info.path, sc->want_path);
		CHECK_STR(gdr_last_error(), "");
		CHECK(info.num_attempts >= 1);
		/* The record ends with the path used; none before it was. */
		CHECK_INT(info.attempts[info.num_attempts - 1].path,
			  sc->want_path);
		CHECK_INT(info.attempts[info.num_attempts - 1].result,
			  GDR_ATTEMPT_USED);
		for (i = 0; i + 1 < (int)info.num_attempts; i++)
			CHECK(info.attempts[i].result != GDR_ATTEMPT_USED);
	}
	if (sc->want_mem)
		CHECK_INT(info.mem_type, sc->want_mem);
	/* Past max_mr_size: refused before any registration call (the
	 * device's one DMA-BUF probe aside). */
	if (sc->max_mr_size && sc->max_mr_size < LEN)
		CHECK_INT(fake_ibv.reg_calls + fake_ibv.dmabuf_calls - regs, 0);
	if (mr) {
		/* Looks like ibv_reg_mr's MR on every path. */
		CHECK(mr->addr == ptr);
		CHECK_INT(mr->length, LEN);
		CHECK_INT(gdr_deregister(mr), 0);
	}
	/* The access flags and iova of every path, exactly. */
	device_path = info.path == GDR_PATH_DMABUF ||
		      info.path == GDR_PATH_PEERMEM ||
		      info.path == GDR_PATH_DATA_DIRECT;
	want_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		      IBV_ACCESS_REMOTE_READ;
	if (device_path && !sc->want_no_ro)
		want_access |= IBV_ACCESS_RELAXED_ORDERING;
	if (sc->access)
		want_access = (int)sc->access; /* the caller's, exactly */
	if (info.path != GDR_PATH_NONE) {
		CHECK_INT(fake_ibv.last_access, want_access);
		CHECK_INT(fake_ibv.last_iova, (uintptr_t)ptr);
		CHECK_INT(fake_ibv.last_len, LEN);
	}
	if (info.path == GDR_PATH_DATA_DIRECT) {
		CHECK_INT(fake_ibv.mlx5_reg_calls, 1);
		CHECK_INT(fake_ibv.last_mlx5_access, GDR_MLX5DV_DATA_DIRECT);
		/* a PCIe-mapped dma-buf never goes to ibv_reg_dmabuf_mr */
		CHECK_INT(fake_ibv.dmabuf_calls, 0);
	}
	if (info.path == GDR_PATH_DMABUF || info.path == GDR_PATH_DATA_DIRECT) {
		uintptr_t base = (uintptr_t)ptr & ~(uintptr_t)4095;

		CHECK(fake_ibv.last_fd_open);
		CHECK_INT(fake_ibv.last_offset, (uintptr_t)ptr - base);
		CHECK_INT(fake_cu.last_export_base, base);
		CHECK_INT(fake_cu.last_export_size % 4096, 0);
		/* Exported under the right context ... */
		CHECK(fake_cu.ctx_at_export == export_ctx(sc, caller));
	}
	if ((sc->flags & GDR_REG_SYNC_MEMOPS) && !sc->want_errno) {
		if (sc->ptr == P_VMM) {
			CHECK_INT(fake_cu.set_attr_calls, 0);
			CHECK(fake_cu.ctx_flags[0] & CU_CTX_SYNC_MEMOPS);
		} else {
			CHECK_INT(fake_cu.set_attr_calls, 1);
		}
	}
	if (!(sc->flags & GDR_REG_SYNC_MEMOPS))
		CHECK_INT(fake_cu.set_attr_calls, 0);
	/* ... the caller's context is current again, the stack as it was,
	 * and no primary context is left retained. */
	if (!sc->want_ctx_lost) {
		CHECK(fake_current == caller);
		CHECK_INT(fake_ctx_depth(), depth);
	}
	CHECK_INT(fake_cu.retains, fake_cu.releases);
	for (i = 0; i < FAKE_MAX_DEVS; i++)
		CHECK_INT(fake_cu.primary_refs[i], 0);
	/* A registration never starts CUDA, nor loads it. */
	CHECK_INT(fake_cu.inits, 0);
	CHECK_INT(fake_cu.loads, fake_cu.noload_loads);
	/* Nothing left behind: no fd, no MR. */
	CHECK_INT(count_fds(), fds);
	CHECK_INT(fake_ibv.live_mrs, 0);

	free(host);
	fixture_remove(&fx);
}

/* Arguments are checked before anything else is touched. */
static void bad_arguments(void)
{
	struct gdr_reg_attr attr = { 0 };
	struct fixture fx;
	char buf[64];
	int fds;

	check_scope = "bad arguments";
	fakes_reset();
	fixture_make(&fx);
	fixture_write(fx.proc, "driver/nvidia/version", NV_OPEN);
	fakes_install(&fx, NULL, NULL, NULL);
	fds = count_fds();

	{
		enum gdr_path path;

		CHECK_INT(gdr_path_parse("bogus", &path), -1);
		CHECK_INT(errno, EINVAL);
		errno_seen("gdr_path_parse", errno);
		CHECK_INT(gdr_path_parse("data-direct", &path), 0);
		CHECK_INT(path, GDR_PATH_DATA_DIRECT);
	}
	errno = 0;
	CHECK(gdr_register(NULL, buf, 64) == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK_HAS(gdr_last_error(), "pd is NULL");
	CHECK(gdr_register(&fake_pd, NULL, 64) == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK_HAS(gdr_last_error(), "ptr is NULL");
	CHECK(gdr_register(&fake_pd, buf, 0) == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK_HAS(gdr_last_error(), "len is 0");
	CHECK(gdr_register(&fake_pd, (void *)(UINTPTR_MAX - 10), 64) == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK_HAS(gdr_last_error(), "wraps around");

	attr.comp_mask = 1u << 30;
	CHECK(gdr_register_ex(&fake_pd, buf, 64, &attr, NULL, 0) == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK_HAS(gdr_last_error(), "comp_mask has unknown bits 0x40000000");
	attr.comp_mask = GDR_REG_ATTR_FLAGS;
	attr.flags = 1u << 7;
	CHECK(gdr_register_ex(&fake_pd, buf, 64, &attr, NULL, 0) == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK_HAS(gdr_last_error(), "flags has unknown bits");
	attr.comp_mask = GDR_REG_ATTR_PATH_MASK;
	attr.path_mask = 0;
	CHECK(gdr_register_ex(&fake_pd, buf, 64, &attr, NULL, 0) == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK_HAS(gdr_last_error(), "path_mask 0x0");
	attr.path_mask = GDR_PATH_BIT(GDR_PATH_NONE);
	CHECK(gdr_register_ex(&fake_pd, buf, 64, &attr, NULL, 0) == NULL);
	CHECK_INT(errno, EINVAL);

	CHECK_INT(gdr_deregister(NULL), EINVAL);
	CHECK_HAS(gdr_last_error(), "mr is NULL");
	CHECK_INT(fake_ibv.reg_calls + fake_ibv.dmabuf_calls, 0);
	CHECK_INT(count_fds(), fds);

	/* A failing ibv_dereg_mr is passed on with its errno. */
	{
		struct ibv_mr *mr = gdr_register(&fake_pd, buf, 64);

		CHECK(mr != NULL);
		fake_ibv.dereg_errno = EBUSY;
		CHECK_INT(gdr_deregister(mr), EBUSY);
		CHECK_HAS(gdr_last_error(), "ibv_dereg_mr failed with EBUSY");
		CHECK_HAS(gdr_last_error(),
			  "something still holds it: destroy the memory "
			  "windows bound to it, let another thread's call on "
			  "it finish, then call again");
		/* Not memory windows: the device's trouble. */
		fake_ibv.dereg_errno = EIO;
		CHECK_INT(gdr_deregister(mr), EIO);
		CHECK_HAS(gdr_last_error(), "ibv_dereg_mr failed with EIO");
		CHECK_HAS(gdr_last_error(), "see the kernel log");
		CHECK(!strstr(gdr_last_error(), "memory windows"));
		fake_ibv.dereg_errno = 0;
		CHECK_INT(gdr_deregister(mr), 0);
		CHECK_STR(gdr_last_error(), "");
	}
	fixture_remove(&fx);
}

/* Probes run once; later registrations neither re-read nor re-ask. */
static void cached(void)
{
	struct gdr_reg_info info;
	struct fixture fx;
	struct ibv_mr *mr;
	void *p;
	int i;

	check_scope = "probes are cached";
	fakes_reset();
	fixture_make(&fx);
	fixture_write(fx.proc, "driver/nvidia/version", NV_PROPRIETARY);
	fixture_write(fx.sys, PM_NV_MEM, "1.1\n");
	fakes_install(&fx, NULL, NULL, NULL);
	p = (char *)fake_alloc_device(0, 1 << 20) + 4096;
	for (i = 0; i < 3; i++) {
		mr = gdr_register_ex(&fake_pd, p, 4096, NULL, &info,
				     sizeof(info));
		CHECK(mr != NULL);
		CHECK_INT(info.path, GDR_PATH_PEERMEM);
		if (mr)
			gdr_deregister(mr);
		/* Take the files away: the cached answers must not change. */
		fixture_remove(&fx);
	}
	CHECK_INT(fake_ibv.probes, 1);
	/* Another context of the same device: the same answer, no probe. */
	{
		struct ibv_context ctx2 = fake_context;
		struct ibv_pd pd2 = { .context = &ctx2 };

		mr = gdr_register(&pd2, p, 4096);
		CHECK(mr != NULL);
		if (mr)
			gdr_deregister(mr);
		CHECK_INT(fake_ibv.probes, 1);
	}
}

/*
 * The NIC answer belongs to the device, not to the ibv_context's address:
 * after ibv_close_device, malloc may hand the same address to another
 * device's context, which must be asked again.
 */
static void stale_context(void)
{
	struct fixture fx;
	struct ibv_mr *mr;
	void *p;
	int i;

	check_scope = "a context address reused by another device";
	fakes_reset();
	fixture_make(&fx);
	fixture_write(fx.proc, "driver/nvidia/version", NV_OPEN);
	fakes_install(&fx, NULL, NULL, NULL);
	fake_model.num_nics = 2;
	strcpy(fake_model.nic[1].name, "fake_irdma_1");
	fake_model.nic[1].dmabuf_probe_errno = EOPNOTSUPP;
	p = fake_alloc_device(0, 1 << 20);
	mr = gdr_register(&fake_pd, p, 4096);
	CHECK(mr != NULL);
	if (mr)
		gdr_deregister(mr);
	/* The same struct ibv_context, now another device's. */
	strcpy(fake_device.name, "fake_irdma_1");
	errno = 0;
	mr = gdr_register(&fake_pd, p, 4096);
	CHECK(mr == NULL);
	CHECK_INT(errno, EOPNOTSUPP);
	CHECK_HAS(gdr_last_error(), "RDMA device fake_irdma_1 does not support "
				    "DMA-BUF memory regions");
	CHECK_INT(fake_ibv.probes, 2);
	if (mr)
		gdr_deregister(mr);

	check_scope = "the device cache is bounded";
	fake_ibv.probes = 0;
	for (i = 0; i < GDR_NIC_CACHE_MAX + 6; i++) {
		snprintf(fake_device.name, sizeof(fake_device.name), "dev%d",
			 i);
		mr = gdr_register(&fake_pd, p, 4096);
		if (mr)
			gdr_deregister(mr);
	}
	CHECK_INT(fake_ibv.probes, GDR_NIC_CACHE_MAX + 6);
	for (i = 0; i < GDR_NIC_CACHE_MAX + 6; i++) {
		snprintf(fake_device.name, sizeof(fake_device.name), "dev%d",
			 i);
		mr = gdr_register(&fake_pd, p, 4096);
		if (mr)
			gdr_deregister(mr);
	}
	/* The first ones fill the cache (two names were cached above);
	 * the rest are asked every time. */
	CHECK_INT(fake_ibv.probes,
		  2 * (GDR_NIC_CACHE_MAX + 6) - (GDR_NIC_CACHE_MAX - 2));
	CHECK_INT(fake_ibv.live_mrs, 0);
	fixture_remove(&fx);
}

/*
 * A GPU that answers NOT_SUPPORTED to the PCIe mapping is asked once: 1000
 * registrations through a Data Direct NIC make one flagged export and then
 * go straight to plain DMA-BUF, each with the reason in the record.
 */
static void pcie_remembered(void)
{
	struct gdr_reg_info info;
	struct fixture fx;
	int i, plain = 0, reasons = 0;
	void *p;

	check_scope = "PCIe mapping refused once, remembered";
	fakes_reset();
	fixture_make(&fx);
	fixture_write(fx.proc, "driver/nvidia/version", NV_OPEN);
	fake_model.nic[0].data_direct_errno = 0;
	fake_model.gpu[0].pcie_mapping = CUDA_ERROR_NOT_SUPPORTED;
	fakes_install(&fx, NULL, NULL, NULL);
	p = fake_alloc_device(0, 1 << 20);
	fake_current = FAKE_PRIMARY(0);
	for (i = 0; i < 1000; i++) {
		struct ibv_mr *mr = gdr_register_ex(&fake_pd, p, 4096, NULL,
						    &info, sizeof(info));

		if (!mr)
			break;
		plain += info.path == GDR_PATH_DMABUF;
		reasons += info.attempts[0].path == GDR_PATH_DATA_DIRECT &&
			   strstr(info.attempts[0].reason,
				  "CUDA_ERROR_NOT_SUPPORTED") != NULL;
		CHECK_INT(gdr_deregister(mr), 0);
	}
	CHECK_INT(plain, 1000);
	CHECK_INT(reasons, 1000);
	CHECK_INT(fake_cu.flagged_exports, 1);
	CHECK_INT(fake_ibv.mlx5_reg_calls, 0);
	printf("1000 registrations on a GPU without the PCIe mapping: %d "
	       "flagged export, %d plain DMA-BUF\n",
	       fake_cu.flagged_exports, plain);
	fake_current = NULL;
	fixture_remove(&fx);
}

/* Only NOT_SUPPORTED is remembered; another failure of a flagged
 * export is tried again by the next registration. */
static void pcie_other_failure_not_remembered(void)
{
	struct gdr_reg_info info;
	struct fixture fx;
	struct ibv_mr *mr;
	void *p;

	check_scope =
		"PCIe-mapped export failing with INVALID_VALUE: not remembered";
	fakes_reset();
	fixture_make(&fx);
	fixture_write(fx.proc, "driver/nvidia/version", NV_OPEN);
	fake_model.nic[0].data_direct_errno = 0;
	fake_model.gpu[0].pcie_mapping = CUDA_ERROR_INVALID_VALUE;
	fakes_install(&fx, NULL, NULL, NULL);
	p = fake_alloc_device(0, 1 << 20);
	fake_current = FAKE_PRIMARY(0);
	errno = 0;
	mr = gdr_register_ex(&fake_pd, p, 4096, NULL, &info, sizeof(info));
	CHECK(mr == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK_INT(fake_cu.flagged_exports, 1);
	fake_model.gpu[0].pcie_mapping = -1;
	mr = gdr_register_ex(&fake_pd, p, 4096, NULL, &info, sizeof(info));
	CHECK(mr != NULL);
	CHECK_INT(info.path, GDR_PATH_DATA_DIRECT);
	CHECK_INT(fake_cu.flagged_exports, 2);
	if (mr)
		CHECK_INT(gdr_deregister(mr), 0);
	fake_current = NULL;
	fixture_remove(&fx);
}

/*
 * The report's question to a GPU (gdr_pcie_map_probe): one PCIe-mapped
 * export of a 2 MiB allocation of its own, in the primary context, freed
 * and released after; the answer is remembered.
 */
static void pcie_probe(void)
{
	struct fixture fx;
	int allocs, i, live = 0;

	check_scope = "the report's PCIe mapping probe";
	fakes_reset();
	fixture_make(&fx);
	fixture_write(fx.proc, "driver/nvidia/version", NV_OPEN);
	fakes_install(&fx, NULL, NULL, NULL);
	allocs = fake_cu.num_allocs;
	gdr_pcie_map_probe(0);
	CHECK_INT(gdr_pcie_map_get(0), GDR_PCIE_MAP_OK);
	CHECK_INT(fake_cu.flagged_exports, 1);
	CHECK_INT(fake_cu.last_export_size, 2u << 20);
	CHECK(fake_cu.ctx_at_export == FAKE_PRIMARY(0));
	CHECK_INT(fake_cu.num_allocs, allocs + 1);
	CHECK_INT(fake_cu.allocs[allocs].size, 0); /* freed */
	for (i = 0; i < FAKE_MAX_DEVS; i++)
		live += fake_cu.primary_refs[i];
	CHECK_INT(live, 0);
	CHECK(fake_current == NULL);
	fixture_remove(&fx);
}

/*
 * GPUDIRECT_DEBUG: "1" (any value but 0 or empty) prints the decisions to
 * stderr (here the Data Direct probe's line: the function's path, or why
 * it is unknown); "0", empty or unset prints nothing.
 */
static void debug_run(const char *debug, int dd_errno, char *out, size_t n)
{
	struct fixture fx;
	struct ibv_mr *mr;
	FILE *f = tmpfile();
	int saved;
	size_t got = 0;
	void *p;

	out[0] = '\0';
	if (!f) {
		CHECK_(0, "tmpfile: %s", strerror(errno));
		return;
	}
	fakes_reset();
	fixture_make(&fx);
	fixture_write(fx.proc, "driver/nvidia/version", NV_OPEN);
	fake_model.nic[0].data_direct_errno = dd_errno;
	fakes_install(&fx, NULL, NULL, debug);
	p = fake_alloc_device(0, 1 << 20);
	fake_current = FAKE_PRIMARY(0);
	fflush(stderr);
	saved = dup(2);
	dup2(fileno(f), 2);
	mr = gdr_register(&fake_pd, p, 4096);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	CHECK(mr != NULL);
	if (mr)
		CHECK_INT(gdr_deregister(mr), 0);
	rewind(f);
	got = fread(out, 1, n - 1, f);
	out[got] = '\0';
	fclose(f);
	fake_current = NULL;
	fixture_remove(&fx);
}

static void debug_output(void)
{
	static char out[16384];

	check_scope = "GPUDIRECT_DEBUG=1, a Data Direct NIC";
	debug_run("1", 0, out, sizeof(out));
	CHECK_HAS(out, "gpudirect: fake_mlx5_0: Data Direct at /sys/devices/");

	check_scope = "GPUDIRECT_DEBUG=1, Data Direct unknown";
	debug_run("1", EIO, out, sizeof(out));
	CHECK_HAS(out, "gpudirect: fake_mlx5_0: Data Direct unknown: EIO\n");

	check_scope = "GPUDIRECT_DEBUG=0";
	debug_run("0", 0, out, sizeof(out));
	CHECK_STR(out, "");

	check_scope = "GPUDIRECT_DEBUG unset";
	debug_run(NULL, 0, out, sizeof(out));
	CHECK_STR(out, "");

	check_scope = "GPUDIRECT_DEBUG empty";
	debug_run("", 0, out, sizeof(out));
	CHECK_STR(out, "");

	check_scope = "GPUDIRECT_DEBUG=yes (any value but 0 or empty)";
	debug_run("yes", 0, out, sizeof(out));
	CHECK_HAS(out, "gpudirect: fake_mlx5_0: Data Direct at /sys/devices/");
}

/*
 * A verbs context without a device (nothing names it): messages call the
 * RDMA device "unknown" rather than leaving a hole.
 */
static void nameless_device(void)
{
	struct fixture fx;
	struct ibv_mr *mr;
	void *p;

	check_scope = "an RDMA device without a name";
	fakes_reset();
	fixture_make(&fx);
	fixture_write(fx.proc, "driver/nvidia/version", NV_OPEN);
	fakes_install(&fx, NULL, NULL, NULL);
	fake_context.device = NULL;
	p = fake_alloc_device(0, 1 << 20);
	fake_current = FAKE_PRIMARY(0);
	errno = 0;
	mr = gdr_register(&fake_pd, p, 4096);
	CHECK(mr == NULL);
	CHECK_INT(errno, EOPNOTSUPP);
	CHECK_HAS(gdr_last_error(), "RDMA device unknown does not support "
				    "DMA-BUF memory regions");
	if (mr)
		gdr_deregister(mr);
	fake_context.device = &fake_device;
	fake_current = NULL;
	fixture_remove(&fx);
}

/*
 * Two devices probed at once, the second finishing first: the first one
 * loses the cache slot it saw free, takes the next, and is not probed
 * again. (The second is probed from inside the first's probe.)
 */
static struct fake_nic race_nic[2];
static struct ibv_mr *(*race_next)(struct ibv_pd *, uint64_t, size_t, uint64_t,
				   int, int);
static int race_nested;

static struct ibv_mr *race_probe(struct ibv_pd *pd, uint64_t offset, size_t len,
				 uint64_t iova, int fd, int access)
{
	struct gdr_nic other;

	if (pd == &race_nic[0].pd && !race_nested) {
		race_nested = 1;
		gdr_nic_get(&race_nic[1].pd, &other);
	}
	return race_next(pd, offset, len, iova, fd, access);
}

static void nic_cache_race(void)
{
	struct gdr_seam s;
	struct gdr_nic a, b;
	struct fixture fx;
	int probes;

	check_scope = "a device cache slot taken meanwhile";
	fakes_reset();
	fixture_make(&fx);
	fixture_write(fx.proc, "driver/nvidia/version", NV_OPEN);
	fake_add_nic(&race_nic[0], "fake_mlx5_a", 1);
	fake_add_nic(&race_nic[1], "fake_mlx5_b", 1);
	fakes_install(&fx, NULL, NULL, NULL);
	s = *gdr_seam();
	race_next = s.verbs.reg_dmabuf_mr;
	s.verbs.reg_dmabuf_mr = race_probe;
	race_nested = 0;
	gdr_seam_install(&s);
	gdr_nic_get(&race_nic[0].pd, &a);
	CHECK_STR(a.key.name, "fake_mlx5_a");
	CHECK_INT(fake_ibv.probes, 2);
	probes = fake_ibv.probes;
	gdr_nic_get(&race_nic[0].pd, &a);
	gdr_nic_get(&race_nic[1].pd, &b);
	CHECK_STR(b.key.name, "fake_mlx5_b");
	/* Both were cached: neither is asked again. */
	CHECK_INT(fake_ibv.probes, probes);
	fixture_remove(&fx);
}

/*
 * A driver that fills the whole bus-id buffer, with no room left for the
 * terminator: the id is cut at the buffer (31 characters), never read on
 * past it, when NVML is asked about the GPU.
 */
static int (*busid_load_next)(struct gdr_cuda_ops *, unsigned int, char *,
			      size_t);
static char busid_seen[64];

static CUresult full_busid(char *id, int len, CUdevice d)
{
	(void)d;
	memset(id, 'f', (size_t)len);
	return CUDA_SUCCESS;
}

static int load_full_busid(struct gdr_cuda_ops *ops, unsigned int flags,
			   char *why, size_t n)
{
	int err = busid_load_next(ops, flags, why, n);

	if (!err)
		ops->cuDeviceGetPCIBusId = full_busid;
	return err;
}

static int c2c_asked(const char *busid, bool *c2c, char *why, size_t n)
{
	(void)why;
	(void)n;
	snprintf(busid_seen, sizeof(busid_seen), "%s", busid);
	*c2c = false;
	return 0;
}

static void busid_filled(void)
{
	struct gdr_seam s;
	struct fixture fx;
	struct ibv_mr *mr;
	void *p;

	check_scope = "a bus id that fills the driver's buffer";
	fakes_reset();
	fixture_make(&fx);
	fixture_write(fx.proc, "driver/nvidia/version", NV_OPEN);
	fake_model.gpu[0].c2c = 1; /* host atomics: NVML is asked */
	fakes_install(&fx, NULL, NULL, NULL);
	s = *gdr_seam();
	busid_load_next = s.cuda_load;
	s.cuda_load = load_full_busid;
	s.gpu_c2c = c2c_asked;
	gdr_seam_install(&s);
	busid_seen[0] = '\0';
	p = fake_alloc_device(0, 1 << 20);
	fake_current = FAKE_PRIMARY(0);
	mr = gdr_register(&fake_pd, p, 4096);
	if (mr)
		gdr_deregister(mr);
	CHECK_INT(strlen(busid_seen), 31);
	CHECK_INT(strspn(busid_seen, "f"), 31);
	fake_current = NULL;
	fixture_remove(&fx);
}

int main(void)
{
	size_t i;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		run(&table[i]);
	printf("%zu scenarios\n", i);
	bad_arguments();
	cached();
	stale_context();
	pcie_remembered();
	pcie_other_failure_not_remembered();
	pcie_probe();
	debug_output();
	nameless_device();
	nic_cache_race();
	busid_filled();
	gdr_seam_install(NULL);
	return check_summary("decide");
}
