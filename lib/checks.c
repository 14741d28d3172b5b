/* SPDX-License-Identifier: MIT */
/*
 * Every prerequisite and fact the library knows, as data: one entry each,
 * evaluated into the observed value, the report's verdict and what it
 * means for a path that needs it. Each threshold and each remedy sentence
 * is written here and nowhere else. A backend lists the entries it needs
 * (its eligibility is the first that fails); the report walks the same
 * entries and the same backend table.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

/* The thresholds. */
#define KERNEL_DMABUF_MAJOR 5 /* Linux 5.12: dma-buf memory regions */
#define KERNEL_DMABUF_MINOR 12
#define CUDA_DMABUF_API 11070 /* CUDA 11.7: cuMemGetHandleForAddressRange */
#define CUDA_PCIE_MAPPING_API 12080 /* CUDA 12.8: the PCIe-mapped dma-buf */

bool gdr_cuda_has_pcie_mapping(const struct gdr_cuda *c)
{
	return c && c->state == GDR_CUDA_READY &&
	       c->driver_version >= CUDA_PCIE_MAPPING_API;
}

static void value(struct gdr_eval *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void value(struct gdr_eval *e, const char *fmt, ...)
{
	va_list ap;

	if (e->quiet)
		return;
	va_start(ap, fmt);
	gdr_vfmt(e->value, sizeof(e->value), fmt, ap);
	va_end(ap);
}

static void verdict(struct gdr_eval *e, enum gdr_verdict v, enum gdr_pass p)
{
	e->verdict = v;
	e->pass = p;
}

/* Most problems are best said as "KEY is VALUE". */
static void describe_value(const struct gdr_subject *s,
			   const struct gdr_eval *e, char *buf, size_t n)
{
	(void)s;
	gdr_fmt(buf, n, "%s", e->value);
}

/* --- node ---------------------------------------------------------------- */

static void eval_kernel(const struct gdr_subject *s, struct gdr_eval *e)
{
	struct gdr_kver v;

	value(e, "%s",
	      s->node->kernel_release[0] ? s->node->kernel_release : "unknown");
	if (gdr_parse_kernel_release(s->node->kernel_release, &v))
		verdict(e, GDR_VERDICT_UNKNOWN, GDR_UNDECIDED);
	else if (gdr_kver_cmp(&v, KERNEL_DMABUF_MAJOR, KERNEL_DMABUF_MINOR) < 0)
		verdict(e, GDR_VERDICT_WRONG, GDR_FAIL);
}

static void describe_kernel(const struct gdr_subject *s,
			    const struct gdr_eval *e, char *buf, size_t n)
{
	gdr_fmt(buf, n, "kernel %s is older than %d.%d", e->value,
		KERNEL_DMABUF_MAJOR, KERNEL_DMABUF_MINOR);
}

const struct gdr_check gdr_check_kernel = {
	.key = "kernel",
	.scope = GDR_SCOPE_NODE,
	.eval = eval_kernel,
	.describe = describe_kernel,
	.remedy = "DMA-BUF needs Linux 5.12 or newer: upgrade the kernel, "
		  "or use nvidia-peermem",
};

static const char nv_by_hand[] = "check /proc/driver/nvidia/version by hand";

static void eval_nvidia_driver(const struct gdr_subject *s, struct gdr_eval *e)
{
	const struct gdr_node *nd = s->node;

	switch (nd->nv_flavour) {
	case GDR_NV_OPEN:
		value(e, "%s (open kernel module)", nd->nv_version);
		break;
	case GDR_NV_PROPRIETARY:
		value(e, "%s (proprietary kernel module)", nd->nv_version);
		verdict(e, GDR_VERDICT_WRONG, GDR_FAIL);
		break;
	case GDR_NV_UNPARSED:
		value(e, "unrecognised /proc/driver/nvidia/version");
		verdict(e, GDR_VERDICT_UNKNOWN, GDR_UNDECIDED);
		e->remedy = nv_by_hand;
		break;
	case GDR_NV_UNREADABLE:
		value(e, "/proc/driver/nvidia/version could not be read (%s)",
		      gdr_errno_name(nd->nv_err));
		verdict(e, GDR_VERDICT_UNKNOWN, GDR_UNDECIDED);
		e->remedy = nv_by_hand;
		break;
	case GDR_NV_ABSENT: /* fall through */
	default:
		/* In a container the file may be absent while CUDA works:
		 * the CUDA driver decides. */
		value(e, "not loaded (no /proc/driver/nvidia/version)");
		verdict(e, GDR_VERDICT_MISSING, GDR_UNDECIDED);
		e->remedy = "install and load the NVIDIA driver (open kernel "
			    "module); in a container, the driver must be "
			    "loaded on the host";
		break;
	}
}

static void describe_nvidia_driver(const struct gdr_subject *s,
				   const struct gdr_eval *e, char *buf,
				   size_t n)
{
	gdr_fmt(buf, n,
		"the NVIDIA driver %s is the proprietary kernel "
		"module, which cannot export DMA-BUF",
		s->node->nv_version);
}

const struct gdr_check gdr_check_nvidia_driver = {
	.key = "nvidia_driver",
	.scope = GDR_SCOPE_NODE,
	.eval = eval_nvidia_driver,
	.describe = describe_nvidia_driver,
	.remedy = "DMA-BUF needs the open kernel module: install it (GPU "
		  "Operator: --set driver.kernelModuleType=open), or load "
		  "nvidia-peermem",
};

static void eval_cuda_api(const struct gdr_subject *s, struct gdr_eval *e)
{
	const struct gdr_cuda *c = s->cuda;

	if (c->state != GDR_CUDA_READY) {
		value(e, "unavailable");
		verdict(e, GDR_VERDICT_MISSING, GDR_FAIL);
		e->remedy = c->why;
		return;
	}
	value(e, "%d.%d (%d)", c->driver_version / 1000,
	      c->driver_version % 1000 / 10, c->driver_version);
	if (c->driver_version < CUDA_DMABUF_API ||
	    !c->cu.cuMemGetHandleForAddressRange)
		verdict(e, GDR_VERDICT_WRONG, GDR_FAIL);
}

static void describe_cuda_api(const struct gdr_subject *s,
			      const struct gdr_eval *e, char *buf, size_t n)
{
	const struct gdr_cuda *c = s->cuda;

	if (c->state != GDR_CUDA_READY)
		gdr_fmt(buf, n, "the CUDA driver is unavailable");
	else if (c->driver_version < CUDA_DMABUF_API)
		gdr_fmt(buf, n,
			"the CUDA driver API is %d.%d, older than "
			"%d.%d which added DMA-BUF export",
			c->driver_version / 1000, c->driver_version % 1000 / 10,
			CUDA_DMABUF_API / 1000, CUDA_DMABUF_API % 1000 / 10);
	else
		gdr_fmt(buf, n,
			"libcuda.so.1 has no "
			"cuMemGetHandleForAddressRange");
}

const struct gdr_check gdr_check_cuda_api = {
	.key = "cuda_driver_api",
	.scope = GDR_SCOPE_NODE,
	.eval = eval_cuda_api,
	.describe = describe_cuda_api,
	.remedy = "DMA-BUF export needs CUDA 11.7 (driver R515) or newer: "
		  "upgrade the NVIDIA driver",
};

static void eval_peermem(const struct gdr_subject *s, struct gdr_eval *e)
{
	const struct gdr_node *nd = s->node;

	if (nd->peermem_path[0]) {
		value(e, "%s (%s)", nd->peermem_version, nd->peermem_path);
		return;
	}
	verdict(e, GDR_VERDICT_MISSING, GDR_FAIL);
	if (s->dmabuf_usable) {
		/* Every pair takes DMA-BUF: nothing to fix here. */
		value(e, "not loaded (not needed: DMA-BUF is usable)");
		e->verdict = GDR_VERDICT_INFO;
		e->remedy = "";
		return;
	}
	value(e, "not loaded");
}

static void describe_peermem(const struct gdr_subject *s,
			     const struct gdr_eval *e, char *buf, size_t n)
{
	const char *const *p;

	gdr_fmt(buf, n, "nvidia-peermem is not loaded (none of");
	for (p = gdr_peermem_paths; *p; p++)
		gdr_append(buf, n, "%s /sys%s",
			   p == gdr_peermem_paths ? "" : ",", *p);
	gdr_append(buf, n, " exists)");
}

const struct gdr_check gdr_check_peermem = {
	.key = "nvidia_peermem",
	.scope = GDR_SCOPE_NODE,
	.eval = eval_peermem,
	.describe = describe_peermem,
	.remedy = "only needed where DMA-BUF is unavailable: modprobe "
		  "nvidia-peermem (GPU Operator: driver.rdma.enabled=true; "
		  "with host MOFED also driver.rdma.useHostMofed=true)",
};

static void eval_verbs_dmabuf(const struct gdr_subject *s, struct gdr_eval *e)
{
	if (s->node->verbs_dmabuf) {
		value(e, "ibv_reg_dmabuf_mr present");
		return;
	}
	value(e, "ibv_reg_dmabuf_mr absent");
	verdict(e, GDR_VERDICT_MISSING, GDR_FAIL);
}

static void describe_verbs_dmabuf(const struct gdr_subject *s,
				  const struct gdr_eval *e, char *buf, size_t n)
{
	gdr_fmt(buf, n,
		"the loaded libibverbs has no ibv_reg_dmabuf_mr "
		"(rdma-core older than v34)");
}

const struct gdr_check gdr_check_verbs_dmabuf = {
	.key = "libibverbs_dmabuf",
	.scope = GDR_SCOPE_NODE,
	.eval = eval_verbs_dmabuf,
	.describe = describe_verbs_dmabuf,
	.remedy = "upgrade rdma-core to v34 or newer for ibv_reg_dmabuf_mr",
};

static void eval_mlx5dv(const struct gdr_subject *s, struct gdr_eval *e)
{
	const struct gdr_mlx5 *m = gdr_mlx5_get();

	(void)s;
	if (m->present) {
		value(e, "present (libmlx5.so.1 MLX5_1.25)");
		return;
	}
	value(e, "absent (%s)", m->why);
	/* Only Data Direct NICs need them: a fact, not a fault. */
	verdict(e, GDR_VERDICT_INFO, GDR_FAIL);
}

static void describe_mlx5dv(const struct gdr_subject *s,
			    const struct gdr_eval *e, char *buf, size_t n)
{
	gdr_fmt(buf, n, "the mlx5 direct verbs for Data Direct are %s",
		e->value);
}

const struct gdr_check gdr_check_mlx5dv = {
	.key = "mlx5dv_data_direct",
	.scope = GDR_SCOPE_NODE,
	.eval = eval_mlx5dv,
	.describe = describe_mlx5dv,
	.remedy = "only for NICs with a Data Direct function (ConnectX-8 "
		  "class): install rdma-core v54 or newer",
};

static void eval_cuda_pcie(const struct gdr_subject *s, struct gdr_eval *e)
{
	const struct gdr_cuda *c = s->cuda;

	if (s->node->pcie_policy == GDR_PCIE_OFF) {
		value(e, "off (GPUDIRECT_PCIE_MAPPING=off)");
		verdict(e, GDR_VERDICT_INFO, GDR_FAIL);
		e->remedy = "unset GPUDIRECT_PCIE_MAPPING to allow the PCIe "
			    "mapping (Data Direct, C2C GPUs)";
		return;
	}
	if (!c || c->state != GDR_CUDA_READY) {
		value(e, "unknown (the CUDA driver is unavailable)");
		verdict(e, GDR_VERDICT_UNKNOWN, GDR_FAIL);
		return;
	}
	if (c->driver_version >= CUDA_PCIE_MAPPING_API) {
		value(e, "available (driver API %d.%d)",
		      c->driver_version / 1000, c->driver_version % 1000 / 10);
		return;
	}
	value(e, "unavailable (driver API %d.%d, older than %d.%d)",
	      c->driver_version / 1000, c->driver_version % 1000 / 10,
	      CUDA_PCIE_MAPPING_API / 1000, CUDA_PCIE_MAPPING_API % 1000 / 10);
	verdict(e, GDR_VERDICT_INFO, GDR_FAIL);
}

static void describe_cuda_pcie(const struct gdr_subject *s,
			       const struct gdr_eval *e, char *buf, size_t n)
{
	gdr_fmt(buf, n, "the PCIe-mapped dma-buf export is %s", e->value);
}

const struct gdr_check gdr_check_cuda_pcie = {
	.key = "cuda_pcie_mapping",
	.scope = GDR_SCOPE_NODE,
	.eval = eval_cuda_pcie,
	.describe = describe_cuda_pcie,
	.remedy = "the PCIe mapping (Data Direct, C2C GPUs) needs CUDA driver "
		  "12.8 (R570) or newer: upgrade the NVIDIA driver",
};

static const char gds_remedy[] = "only for GPUDirect Storage: modprobe "
				 "nvidia-fs (GPU Operator: gds.enabled=true)";

static void eval_gds(const struct gdr_subject *s, struct gdr_eval *e)
{
	const struct gdr_node *nd = s->node;

	value(e, "%s%s%s%s",
	      nd->nvidia_fs ? "nvidia_fs loaded" : "nvidia_fs not loaded",
	      nd->nvidia_fs_version[0] ? " " : "", nd->nvidia_fs_version,
	      nd->nvidia_fs_proc ? ", /proc/driver/nvidia-fs present" : "");
	if (nd->nvidia_fs)
		return;
	verdict(e, GDR_VERDICT_INFO, GDR_PASS);
	e->remedy = gds_remedy;
}

static const struct gdr_check check_gds = {
	.key = "gpudirect_storage",
	.scope = GDR_SCOPE_NODE,
	.eval = eval_gds,
	.describe = describe_value,
	.remedy = gds_remedy,
};

static void eval_cuda_devices(const struct gdr_subject *s, struct gdr_eval *e)
{
	const struct gdr_cuda *c = s->cuda;
	int n = c->state == GDR_CUDA_READY ? c->num_devices : 0;

	value(e, "%d", n);
	if (n > 0)
		return;
	verdict(e, GDR_VERDICT_MISSING, GDR_FAIL);
	if (c->why[0])
		e->remedy = c->why;
}

static const struct gdr_check check_cuda_devices = {
	.key = "cuda_devices",
	.scope = GDR_SCOPE_NODE,
	.eval = eval_cuda_devices,
	.describe = describe_value,
	.remedy = "no CUDA device is visible",
};

static void eval_rdma_devices(const struct gdr_subject *s, struct gdr_eval *e)
{
	value(e, "%u", s->num_nics);
	if (!s->num_nics)
		verdict(e, GDR_VERDICT_MISSING, GDR_FAIL);
}

static const struct gdr_check check_rdma_devices = {
	.key = "rdma_devices",
	.scope = GDR_SCOPE_NODE,
	.eval = eval_rdma_devices,
	.describe = describe_value,
	.remedy = "no RDMA device is visible: load the NIC's RDMA driver "
		  "(e.g. mlx5_ib), check /sys/class/infiniband, and in a "
		  "container expose /dev/infiniband",
};

/* --- GPU ------------------------------------------------------------------ */

static void eval_gpu_name(const struct gdr_subject *s, struct gdr_eval *e)
{
	value(e, "%s", s->dev->name);
	verdict(e, GDR_VERDICT_INFO, GDR_PASS);
}

static const struct gdr_check check_gpu_name = {
	.key = "name",
	.scope = GDR_SCOPE_GPU,
	.eval = eval_gpu_name,
	.describe = describe_value,
	.remedy = "",
};

static void eval_gpu_busid(const struct gdr_subject *s, struct gdr_eval *e)
{
	value(e, "%s", s->dev->busid);
	verdict(e, GDR_VERDICT_INFO, GDR_PASS);
}

static const struct gdr_check check_gpu_busid = {
	.key = "pci_bus_id",
	.scope = GDR_SCOPE_GPU,
	.eval = eval_gpu_busid,
	.describe = describe_value,
	.remedy = "",
};

/* The GPU's PCI address in sysfs form, or "" */
static void gpu_bdf(const struct gdr_subject *s, char *bdf, size_t n)
{
	if (!s->dev || gdr_bdf_normalize(s->dev->busid, bdf, n))
		bdf[0] = '\0';
}

/* A NUMA node or IOMMU group, -1 said in words. */
static void numa_value(struct gdr_eval *e, int node)
{
	if (node >= 0)
		value(e, "%d", node);
	else
		value(e, "unknown (sysfs gives no NUMA node)");
	verdict(e, GDR_VERDICT_INFO, GDR_PASS);
}

static void group_value(struct gdr_eval *e, int group)
{
	if (group >= 0)
		value(e, "%d", group);
	else
		value(e, "none (no IOMMU group in sysfs)");
	verdict(e, GDR_VERDICT_INFO, GDR_PASS);
}

static void eval_gpu_numa(const struct gdr_subject *s, struct gdr_eval *e)
{
	char bdf[GDR_BDF_LEN];

	gpu_bdf(s, bdf, sizeof(bdf));
	numa_value(e, bdf[0] ? gdr_pci_numa(bdf) : -1);
}

static const struct gdr_check check_gpu_numa = {
	.key = "numa_node",
	.scope = GDR_SCOPE_GPU,
	.eval = eval_gpu_numa,
	.describe = describe_value,
	.remedy = "",
};

static void eval_gpu_iommu(const struct gdr_subject *s, struct gdr_eval *e)
{
	char bdf[GDR_BDF_LEN];

	gpu_bdf(s, bdf, sizeof(bdf));
	group_value(e, bdf[0] ? gdr_pci_iommu_group(bdf) : -1);
}

static const struct gdr_check check_gpu_iommu = {
	.key = "iommu_group",
	.scope = GDR_SCOPE_GPU,
	.eval = eval_gpu_iommu,
	.describe = describe_value,
	.remedy = "",
};

static void eval_gpu_dmabuf(const struct gdr_subject *s, struct gdr_eval *e)
{
	const struct gdr_dev *d = s->dev;

	if (!d || d->why[0]) {
		value(e, "unknown (%s)", d ? d->why : "the GPU is not visible");
		verdict(e, GDR_VERDICT_UNKNOWN, GDR_FAIL);
		return;
	}
	value(e, "%d", d->dmabuf_attr);
	if (d->dmabuf_attr != 1)
		verdict(e, GDR_VERDICT_WRONG, GDR_FAIL);
}

static void describe_gpu_dmabuf(const struct gdr_subject *s,
				const struct gdr_eval *e, char *buf, size_t n)
{
	const struct gdr_dev *d = s->dev;

	if (!d || d->why[0])
		gdr_fmt(buf, n, "GPU %d could not be queried: %s",
			d ? d->ordinal : -1,
			d ? d->why : "the GPU is not visible");
	else
		gdr_fmt(buf, n,
			"GPU %d (%s) reports "
			"CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED=%d",
			d->ordinal, d->name, d->dmabuf_attr);
}

const struct gdr_check gdr_check_gpu_dmabuf = {
	.key = "dmabuf_supported",
	.scope = GDR_SCOPE_GPU,
	.eval = eval_gpu_dmabuf,
	.describe = describe_gpu_dmabuf,
	.remedy = "this GPU/driver cannot export DMA-BUF: use the open "
		  "kernel module, or nvidia-peermem",
};

static void eval_gpu_rdma(const struct gdr_subject *s, struct gdr_eval *e)
{
	value(e, "%d", s->dev->gdr_attr);
	if (s->dev->gdr_attr != 1)
		verdict(e, GDR_VERDICT_WRONG, GDR_UNDECIDED);
}

static const struct gdr_check check_gpu_rdma = {
	.key = "gpudirect_rdma_supported",
	.scope = GDR_SCOPE_GPU,
	.eval = eval_gpu_rdma,
	.describe = describe_value,
	.remedy = "this GPU does not support GPUDirect RDMA",
};

static void eval_gpu_vmm(const struct gdr_subject *s, struct gdr_eval *e)
{
	value(e, "%d", s->dev->gdr_vmm_attr);
	verdict(e, GDR_VERDICT_INFO, GDR_PASS);
}

static void eval_gpu_c2c(const struct gdr_subject *s, struct gdr_eval *e)
{
	const struct gdr_dev *d = s->dev;

	if (d->c2c == GDR_YES)
		value(e, "yes (NVLink-C2C to the CPU)");
	else if (d->c2c == GDR_NO)
		value(e, "no");
	else
		value(e, "unknown (%s)", d->c2c_why);
	verdict(e, GDR_VERDICT_INFO, GDR_PASS);
}

static const struct gdr_check check_gpu_c2c = {
	.key = "c2c",
	.scope = GDR_SCOPE_GPU,
	.eval = eval_gpu_c2c,
	.describe = describe_value,
	.remedy = "",
};

const struct gdr_check gdr_check_gpu_pcie;

static void eval_gpu_pcie(const struct gdr_subject *s, struct gdr_eval *e)
{
	int ordinal = s->dev ? s->dev->ordinal : -1;

	if (s->node->pcie_policy == GDR_PCIE_OFF) {
		value(e, "off (GPUDIRECT_PCIE_MAPPING=off)");
		verdict(e, GDR_VERDICT_INFO, GDR_FAIL);
		return;
	}
	if (!gdr_cuda_has_pcie_mapping(s->cuda)) {
		value(e, "unavailable (the driver is older than %d.%d)",
		      CUDA_PCIE_MAPPING_API / 1000,
		      CUDA_PCIE_MAPPING_API % 1000 / 10);
		verdict(e, GDR_VERDICT_INFO, GDR_FAIL);
		return;
	}
	switch (gdr_pcie_map_get(ordinal)) {
	case GDR_PCIE_MAP_OK: value(e, "supported"); break;
	case GDR_PCIE_MAP_UNSUPPORTED:
		value(e, "not supported (the PCIe-mapped export answered "
			 "CUDA_ERROR_NOT_SUPPORTED)");
		verdict(e, GDR_VERDICT_INFO, GDR_FAIL);
		e->remedy = gdr_check_gpu_pcie.remedy;
		break;
	case GDR_PCIE_MAP_UNTRIED: /* fall through */
	default:
		/* The first registration that needs it finds out. */
		value(e, "not tried");
		verdict(e, GDR_VERDICT_UNKNOWN, GDR_PASS);
		e->remedy = "";
		break;
	}
}

static void describe_gpu_pcie(const struct gdr_subject *s,
			      const struct gdr_eval *e, char *buf, size_t n)
{
	gdr_fmt(buf, n, "the PCIe-mapped dma-buf of GPU %d is %s",
		s->dev ? s->dev->ordinal : -1, e->value);
}

const struct gdr_check gdr_check_gpu_pcie = {
	.key = "pcie_mapping",
	.scope = GDR_SCOPE_GPU,
	.eval = eval_gpu_pcie,
	.describe = describe_gpu_pcie,
	.remedy = "no Data Direct for this GPU; DMA-BUF registers its memory "
		  "without the PCIe mapping",
};

static const struct gdr_check check_gpu_vmm = {
	.key = "gpudirect_rdma_with_vmm",
	.scope = GDR_SCOPE_GPU,
	.eval = eval_gpu_vmm,
	.describe = describe_value,
	.remedy = "",
};

/* --- RDMA device ------------------------------------------------------- */

static const char pd_failed[] = "ibv_alloc_pd failed; check the device's "
				"driver";

static void eval_nic_dmabuf(const struct gdr_subject *s, struct gdr_eval *e)
{
	const struct gdr_nic *nic = s->nic;

	if (!nic) {
		value(e, "unknown");
		verdict(e, GDR_VERDICT_UNKNOWN, GDR_UNDECIDED);
		e->remedy = pd_failed;
		return;
	}
	value(e, "%s (ibv_reg_dmabuf_mr probe answered %s)",
	      nic->dmabuf == GDR_YES  ? "supported"
	      : nic->dmabuf == GDR_NO ? "unsupported"
				      : "unknown",
	      nic->mr ? "an MR" : gdr_errno_name(nic->err));
	if (nic->dmabuf == GDR_NO) {
		verdict(e, GDR_VERDICT_MISSING, GDR_FAIL);
	} else if (nic->dmabuf == GDR_UNKNOWN) {
		/* Neither yes nor no: nothing to change yet. */
		verdict(e, GDR_VERDICT_UNKNOWN, GDR_UNDECIDED);
		e->remedy = "the answer says neither yes nor no: a real "
			    "registration decides (gdr-info --self-test tries "
			    "one)";
	}
}

static void describe_nic_dmabuf(const struct gdr_subject *s,
				const struct gdr_eval *e, char *buf, size_t n)
{
	gdr_fmt(buf, n,
		"RDMA device %s does not support DMA-BUF memory "
		"regions (ibv_reg_dmabuf_mr answered %s)",
		s->nic->key.name, gdr_errno_name(s->nic->err));
}

const struct gdr_check gdr_check_nic_dmabuf = {
	.key = "dmabuf_mr",
	.scope = GDR_SCOPE_NIC,
	.eval = eval_nic_dmabuf,
	.describe = describe_nic_dmabuf,
	.remedy = "use an RDMA device whose kernel driver registers DMA-BUF "
		  "memory (mlx5, efa, irdma, bnxt_re), or nvidia-peermem",
};

static void eval_nic_data_direct(const struct gdr_subject *s,
				 struct gdr_eval *e)
{
	const struct gdr_nic *nic = s->nic;

	if (!nic) {
		value(e, "unknown");
		verdict(e, GDR_VERDICT_UNKNOWN, GDR_FAIL);
		e->remedy = pd_failed;
		return;
	}
	if (nic->data_direct == GDR_YES) {
		value(e, "yes (%s)", nic->dd_path);
		return;
	}
	if (nic->data_direct == GDR_NO)
		value(e, "no (%s)",
		      nic->mlx5 ? "the device answered ENODEV: no Data Direct "
				  "function"
				: "not an mlx5 device");
	else
		value(e, "unknown (%s)",
		      nic->dd_err == ENOSYS ? gdr_mlx5_get()->why
					    : gdr_errno_name(nic->dd_err));
	/* Most NICs have none: a fact, unless the call itself failed. */
	verdict(e,
		nic->data_direct == GDR_NO || nic->dd_err == ENOSYS
			? GDR_VERDICT_INFO
			: GDR_VERDICT_UNKNOWN,
		GDR_FAIL);
}

static void describe_nic_data_direct(const struct gdr_subject *s,
				     const struct gdr_eval *e, char *buf,
				     size_t n)
{
	gdr_fmt(buf, n, "RDMA device %s has no usable Data Direct function: %s",
		s->nic ? s->nic->key.name : "?", e->value);
}

const struct gdr_check gdr_check_nic_data_direct = {
	.key = "data_direct",
	.scope = GDR_SCOPE_NIC,
	.eval = eval_nic_data_direct,
	.describe = describe_nic_data_direct,
	.remedy = "Data Direct needs a ConnectX-8 class NIC with its Data "
		  "Direct function, Linux 6.12 or newer and rdma-core v54 or "
		  "newer",
};

static void eval_nic_pci(const struct gdr_subject *s, struct gdr_eval *e)
{
	if (s->nic_bdf[0]) {
		value(e, "%s", s->nic_bdf);
		verdict(e, GDR_VERDICT_INFO, GDR_PASS);
		return;
	}
	value(e, "none");
	verdict(e, GDR_VERDICT_UNKNOWN, GDR_PASS);
}

static const struct gdr_check check_nic_pci = {
	.key = "pci_address",
	.scope = GDR_SCOPE_NIC,
	.eval = eval_nic_pci,
	.describe = describe_value,
	.remedy = "no PCI parent in sysfs (a software device?)",
};

static void eval_nic_numa(const struct gdr_subject *s, struct gdr_eval *e)
{
	if (!s->nic_bdf[0]) {
		e->skip = true;
		return;
	}
	numa_value(e, gdr_pci_numa(s->nic_bdf));
}

static const struct gdr_check check_nic_numa = {
	.key = "numa_node",
	.scope = GDR_SCOPE_NIC,
	.eval = eval_nic_numa,
	.describe = describe_value,
	.remedy = "",
};

static void eval_nic_iommu(const struct gdr_subject *s, struct gdr_eval *e)
{
	if (!s->nic_bdf[0]) {
		e->skip = true;
		return;
	}
	group_value(e, gdr_pci_iommu_group(s->nic_bdf));
}

static const struct gdr_check check_nic_iommu = {
	.key = "iommu_group",
	.scope = GDR_SCOPE_NIC,
	.eval = eval_nic_iommu,
	.describe = describe_value,
	.remedy = "",
};

static void eval_nic_link(const struct gdr_subject *s, struct gdr_eval *e)
{
	if (!s->port) {
		e->skip = true;
		return;
	}
	value(e, "%s",
	      s->port->link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet"
	      : s->port->link_layer == IBV_LINK_LAYER_INFINIBAND
		      ? "InfiniBand"
		      : "unspecified");
	verdict(e, GDR_VERDICT_INFO, GDR_PASS);
}

static const struct gdr_check check_nic_link = {
	.key = "link_layer",
	.scope = GDR_SCOPE_NIC,
	.eval = eval_nic_link,
	.describe = describe_value,
	.remedy = "",
};

static void eval_nic_netdev(const struct gdr_subject *s, struct gdr_eval *e)
{
	char dev[64];

	/* RoCE: the network device under port 1, from sysfs. */
	if (!s->port || s->port->link_layer != IBV_LINK_LAYER_ETHERNET ||
	    !s->nic_name || gdr_nic_netdev(s->nic_name, dev, sizeof(dev))) {
		e->skip = true;
		return;
	}
	value(e, "%s", dev);
	verdict(e, GDR_VERDICT_INFO, GDR_PASS);
}

static const struct gdr_check check_nic_netdev = {
	.key = "netdev",
	.scope = GDR_SCOPE_NIC,
	.eval = eval_nic_netdev,
	.describe = describe_value,
	.remedy = "",
};

static void eval_nic_port(const struct gdr_subject *s, struct gdr_eval *e)
{
	if (!s->port) {
		value(e, "unknown");
		verdict(e, GDR_VERDICT_UNKNOWN, GDR_UNDECIDED);
		e->remedy = "ibv_query_port failed";
		return;
	}
	value(e, "%s", ibv_port_state_str(s->port->state));
	if (s->port->state != IBV_PORT_ACTIVE)
		verdict(e, GDR_VERDICT_WRONG, GDR_UNDECIDED);
}

static const struct gdr_check check_nic_port = {
	.key = "port_state",
	.scope = GDR_SCOPE_NIC,
	.eval = eval_nic_port,
	.describe = describe_value,
	.remedy = "port 1 is not active: check the cable, the switch and the "
		  "subnet manager (ibstat)",
};

/* --- GPU x RDMA device ----------------------------------------------------- */

static void eval_topology(const struct gdr_subject *s, struct gdr_eval *e)
{
	char gpu[GDR_BDF_LEN];
	const char *dist = "unknown";

	if (!s->dev) {
		e->skip = true;
		return;
	}
	gpu_bdf(s, gpu, sizeof(gpu));
	if (s->nic_bdf[0] && gpu[0])
		dist = gdr_pci_distance(gpu, s->nic_bdf);
	value(e, "%s", dist);
	if (!strcmp(dist, "PIX") || !strcmp(dist, "PXB")) {
		return;
	} else if (!strcmp(dist, "PHB")) {
		verdict(e, GDR_VERDICT_INFO, GDR_PASS);
		e->remedy = "GPU and NIC meet at the CPU's host bridge: expect "
			    "less bandwidth than under one PCIe switch";
	} else if (!strcmp(dist, "unknown")) {
		verdict(e, GDR_VERDICT_UNKNOWN, GDR_PASS);
		e->remedy =
			"the PCI path of the GPU or the NIC is not in sysfs";
	} else {
		verdict(e, GDR_VERDICT_WRONG, GDR_PASS);
	}
}

static const struct gdr_check check_topology = {
	.key = "topology_gpu%d",
	.scope = GDR_SCOPE_PAIR,
	.eval = eval_topology,
	.describe = describe_value,
	.remedy = "traffic crosses NUMA nodes or host bridges: pick the NIC "
		  "closest to this GPU (NCCL_IB_HCA, UCX_NET_DEVICES)",
};

static void eval_acs(const struct gdr_subject *s, struct gdr_eval *e)
{
	char gpu[GDR_BDF_LEN], acs[256];
	int n = -1;

	if (!s->dev) {
		e->skip = true;
		return;
	}
	gpu_bdf(s, gpu, sizeof(gpu));
	if (s->nic_bdf[0] && gpu[0])
		n = gdr_pci_acs_redirects(gpu, s->nic_bdf, acs, sizeof(acs));
	if (n == 0) {
		value(e, "none");
	} else if (n > 0) {
		value(e, "%s", acs);
		verdict(e, GDR_VERDICT_WRONG, GDR_PASS);
	} else {
		value(e, "unknown");
		verdict(e, GDR_VERDICT_UNKNOWN, GDR_PASS);
		e->remedy = "run as root to read the bridges' extended PCI "
			    "config space";
	}
}

static const struct gdr_check check_acs = {
	.key = "acs_redirect_gpu%d",
	.scope = GDR_SCOPE_PAIR,
	.eval = eval_acs,
	.describe = describe_value,
	.remedy = "ACS redirect sends GPU<->NIC traffic through the root "
		  "complex: disable it on these bridges (BIOS, or setpci "
		  "ECAP_ACS+0x6.w=0000) or enable ATS",
};

/* --- walking them ---------------------------------------------------------- */

const struct gdr_check *const gdr_node_checks[] = {
	&gdr_check_kernel,
	&gdr_check_nvidia_driver,
	&gdr_check_cuda_api,
	&gdr_check_peermem,
	&gdr_check_verbs_dmabuf,
	&gdr_check_mlx5dv,
	&gdr_check_cuda_pcie,
	&check_gds,
	&check_cuda_devices,
	&check_rdma_devices,
	NULL,
};

const struct gdr_check *const gdr_gpu_checks[] = {
	&check_gpu_name,       &check_gpu_busid,
	&check_gpu_numa,       &check_gpu_iommu,
	&gdr_check_gpu_dmabuf, &check_gpu_rdma,
	&check_gpu_vmm,	       &check_gpu_c2c,
	&gdr_check_gpu_pcie,   NULL,
};

const struct gdr_check *const gdr_nic_checks[] = {
	&gdr_check_nic_dmabuf,
	&gdr_check_nic_data_direct,
	&check_nic_pci,
	&check_nic_numa,
	&check_nic_iommu,
	&check_nic_link,
	&check_nic_netdev,
	&check_nic_port,
	NULL,
};

/* The path each GPU would take (path_gpuN) comes from the backend table,
 * after these. */
const struct gdr_check *const gdr_pair_checks[] = {
	&check_topology,
	&check_acs,
	NULL,
};

void gdr_check_eval(const struct gdr_check *c, const struct gdr_subject *s,
		    struct gdr_eval *e, bool quiet)
{
	e->verdict = GDR_VERDICT_OK;
	e->pass = GDR_PASS;
	e->value[0] = '\0';
	e->remedy = NULL;
	e->skip = false;
	e->quiet = quiet;
	c->eval(s, e);
}

const char *gdr_check_remedy(const struct gdr_check *c,
			     const struct gdr_eval *e)
{
	if (e->verdict == GDR_VERDICT_OK)
		return "";
	if (e->remedy)
		return e->remedy;
	/* A fact has a remedy only where its evaluation gives one. */
	return e->verdict == GDR_VERDICT_INFO ? "" : c->remedy;
}

int gdr_checks_first_failure(const struct gdr_check *const *needs,
			     const struct gdr_subject *s, char *why, size_t n)
{
	const char *remedy;
	struct gdr_eval e;

	for (; *needs; needs++) {
		/* The steady state only asks for verdicts. */
		gdr_check_eval(*needs, s, &e, true);
		if (e.pass != GDR_FAIL)
			continue;
		if (!why)
			return EOPNOTSUPP; /* the reason is not wanted */
		gdr_check_eval(*needs, s, &e, false);
		(*needs)->describe(s, &e, why, n);
		/* A fact in the report is a reason here: its remedy too. */
		remedy = gdr_check_remedy(*needs, &e);
		if (!*remedy)
			remedy = (*needs)->remedy;
		if (*remedy)
			gdr_append(why, n, "; %s", remedy);
		return EOPNOTSUPP;
	}
	return 0;
}

bool gdr_backend_applies(const struct gdr_backend *b,
			 const struct gdr_subject *s)
{
	struct gdr_eval e;

	if (!b->applies)
		return true;
	gdr_check_eval(b->applies, s, &e, true);
	return e.pass != GDR_FAIL;
}
