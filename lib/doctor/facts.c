/* SPDX-License-Identifier: MIT */
/*
 * The facts only the report shows (the doctor's side): what a node, a GPU,
 * an RDMA device and a pair of them are, beside the conditions that gate
 * registrations (node/conditions.c), and the lists the report walks.
 * GPUDirect Storage's facts are facts-gds.c's. Each remedy sentence is
 * written in one of these files or in conditions.c, and nowhere else.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"
#include "thresholds.h"

/* --- node ---------------------------------------------------------------- */

static void eval_cuda_devices(const struct gdr_subject *s, struct gdr_eval *e)
{
	const struct gdr_cuda *c = s->cuda;
	int n = c->state == GDR_CUDA_READY ? c->num_devices : 0;

	gdr_eval_value(e, "%d", n);
	if (n > 0)
		return;
	gdr_eval_verdict(e, GDR_VERDICT_MISSING, GDR_FAIL);
	if (c->why[0])
		e->remedy = c->why;
}

static const struct gdr_check check_cuda_devices = {
	.key = "cuda_devices",
	.scope = GDR_SCOPE_NODE,
	.eval = eval_cuda_devices,
	.describe = gdr_describe_value,
	.remedy = "no CUDA device is visible",
};

static void eval_rdma_devices(const struct gdr_subject *s, struct gdr_eval *e)
{
	gdr_eval_value(e, "%u", s->num_nics);
	if (!s->num_nics)
		gdr_eval_verdict(e, GDR_VERDICT_MISSING, GDR_FAIL);
}

static const struct gdr_check check_rdma_devices = {
	.key = "rdma_devices",
	.scope = GDR_SCOPE_NODE,
	.eval = eval_rdma_devices,
	.describe = gdr_describe_value,
	.remedy = "no RDMA device is visible: load the NIC's RDMA driver "
		  "(e.g. mlx5_ib), check /sys/class/infiniband, and in a "
		  "container expose /dev/infiniband",
};

/* rdma-core's level, from the loaded libraries' file names: the third
 * number of libibverbs.so.1.14.44.0 is the rdma-core release (44). After
 * mlx5dv_data_direct, which loads libmlx5 where it is installed. */
static void eval_rdma_core(const struct gdr_subject *s, struct gdr_eval *e)
{
	const struct gdr_seam *seam = gdr_seam();
	char ibv[64] = "", mlx5[64] = "";
	const char *rel = NULL;

	(void)s;
	if (seam->verbs_files)
		seam->verbs_files(ibv, sizeof(ibv), mlx5, sizeof(mlx5));
	if (!strncmp(ibv, "libibverbs.so.1.", 16)) {
		rel = strchr(ibv + 16, '.');
		rel = rel && rel[1] ? rel + 1 : NULL;
	}
	gdr_eval_verdict(e, GDR_VERDICT_INFO, GDR_PASS);
	if (!ibv[0]) {
		gdr_eval_value(e, "unknown (the loaded libibverbs has no file "
				  "name to read it from)");
		e->verdict = GDR_VERDICT_UNKNOWN;
		e->remedy = "";
		return;
	}
	gdr_eval_value(e, "%s%s%s(%s; %s)", rel ? "rdma-core " : "",
		       rel ? rel : "", rel ? " " : "", ibv,
		       mlx5[0] ? mlx5 : "libmlx5 not loaded");
}

static const struct gdr_check check_rdma_core = {
	.key = "rdma_core",
	.scope = GDR_SCOPE_NODE,
	.eval = eval_rdma_core,
	.describe = gdr_describe_value,
	.remedy = "",
};

/* ibv_is_fork_initialized(): whether a child forked while memory is
 * registered leaves the parent's MRs intact. enum ibv_fork_status. */
static void eval_fork(const struct gdr_subject *s, struct gdr_eval *e)
{
	const struct gdr_seam *seam = gdr_seam();
	int st;

	if (!seam->verbs.is_fork_initialized) {
		gdr_eval_value(e, "unknown (libibverbs older than rdma-core 35 "
				  "has no ibv_is_fork_initialized)");
		gdr_eval_verdict(e, GDR_VERDICT_UNKNOWN, GDR_PASS);
		return;
	}
	st = seam->verbs.is_fork_initialized();
	if (st == 2) { /* IBV_FORK_UNNEEDED */
		gdr_eval_value(e, "fork-safe: the kernel copies a child's "
				  "pinned pages (IBV_FORK_UNNEEDED)");
	} else if (st == 1) { /* IBV_FORK_ENABLED */
		gdr_eval_value(e, "ibv_fork_init() in effect: registered "
				  "memory is not inherited (IBV_FORK_ENABLED)");
	} else if (st == 0) { /* IBV_FORK_DISABLED */
		gdr_eval_value(e, "not fork-safe: no ibv_fork_init(), and the "
				  "kernel does not copy pinned pages "
				  "(IBV_FORK_DISABLED)");
		gdr_eval_verdict(e, GDR_VERDICT_WRONG, GDR_PASS);
		if (!s->node->kver_err &&
		    gdr_kver_cmp(&s->node->kver, KERNEL_FORK_COPY_MAJOR,
				 KERNEL_FORK_COPY_MINOR) >= 0)
			/* 5.13+ copies, but the RDMA core did not say so. */
			e->remedy =
				"the kernel is new enough to copy pinned "
				"pages, but its RDMA core did not say so (is "
				"ib_uverbs loaded?): call ibv_fork_init() "
				"before any registration (or "
				"RDMAV_FORK_SAFE=1)";
	} else {
		gdr_eval_value(e,
			       "unknown (ibv_is_fork_initialized answered "
			       "%d)",
			       st);
		gdr_eval_verdict(e, GDR_VERDICT_UNKNOWN, GDR_PASS);
	}
}

static const struct gdr_check check_fork = {
	.key = "fork",
	.scope = GDR_SCOPE_NODE,
	.eval = eval_fork,
	.describe = gdr_describe_value,
	.remedy = "a child forked while host memory is registered can take "
		  "the parent's pages from under its MRs: call ibv_fork_init() "
		  "before any registration (or RDMAV_FORK_SAFE=1), or run "
		  "Linux 5.13 or newer (device memory is not affected)",
};

/* --- IOMMU and ATS of a PCI function (a GPU's, an RDMA device's) -------- */

static void iommu_mode(const struct gdr_host_facts *h, const char *bdf,
		       struct gdr_eval *e)
{
	char type[96], cmd[200];
	bool no_group;
	int err;

	if (!h) {
		e->skip = true; /* read by the report only */
		return;
	}
	if (h->cmdline_err)
		gdr_fmt(cmd, sizeof(cmd), "/proc/cmdline unreadable: %s",
			gdr_errno_name(h->cmdline_err));
	else
		gdr_fmt(cmd, sizeof(cmd), "kernel command line: %s",
			h->iommu_cmdline[0] ? h->iommu_cmdline
					    : "no IOMMU setting");
	err = gdr_pci_iommu_type(bdf, type, sizeof(type), &no_group);
	gdr_eval_verdict(e, GDR_VERDICT_INFO, GDR_PASS);
	if (no_group) {
		gdr_eval_value(e, "none (no IOMMU group; %s)", cmd);
		e->verdict = GDR_VERDICT_OK;
	} else if (err) {
		gdr_eval_value(e, "unknown (%s: %s; %s)", type,
			       gdr_errno_name(err), cmd);
		e->verdict = GDR_VERDICT_UNKNOWN;
		e->remedy = "kernels before 5.11 do not say: dmesg | grep -i "
			    "-e DMAR -e AMD-Vi -e iommu";
	} else if (!strcmp(type, "identity")) {
		gdr_eval_value(e, "passthrough (identity; %s)", cmd);
		e->verdict = GDR_VERDICT_OK;
	} else if (!strcmp(type, "DMA") || !strcmp(type, "DMA-FQ")) {
		gdr_eval_value(e, "translated (%s; %s)", type, cmd);
		e->verdict = GDR_VERDICT_WRONG;
		e->remedy = gdr_iommu_translated_remedy;
	} else if (!strcmp(type, "unmanaged")) {
		gdr_eval_value(e,
			       "unmanaged (a domain of VFIO or of the "
			       "driver; %s)",
			       cmd);
	} else {
		gdr_eval_value(e, "%s (%s)", type, cmd);
		e->verdict = GDR_VERDICT_UNKNOWN;
		e->remedy = "";
	}
}

static const char ats_unknown_remedy[] = "run as root to read the device's "
					 "extended PCI config space";

static void ats_value(const char *bdf, struct gdr_eval *e)
{
	switch (gdr_pci_ats(bdf)) {
	case GDR_ATS_ENABLED: gdr_eval_value(e, "enabled"); break;
	case GDR_ATS_DISABLED: gdr_eval_value(e, "capable, not enabled"); break;
	case GDR_ATS_ABSENT: gdr_eval_value(e, "no ATS capability"); break;
	case GDR_ATS_UNKNOWN: /* fall through */
	default:
		gdr_eval_value(e, "unknown");
		gdr_eval_verdict(e, GDR_VERDICT_UNKNOWN, GDR_PASS);
		e->remedy = ats_unknown_remedy;
		return;
	}
	gdr_eval_verdict(e, GDR_VERDICT_INFO, GDR_PASS);
}

/* --- GPU ------------------------------------------------------------------ */

static void eval_gpu_name(const struct gdr_subject *s, struct gdr_eval *e)
{
	gdr_eval_value(e, "%s", s->dev->name);
	gdr_eval_verdict(e, GDR_VERDICT_INFO, GDR_PASS);
}

static const struct gdr_check check_gpu_name = {
	.key = "name",
	.scope = GDR_SCOPE_GPU,
	.eval = eval_gpu_name,
	.describe = gdr_describe_value,
	.remedy = "",
};

static void eval_gpu_busid(const struct gdr_subject *s, struct gdr_eval *e)
{
	gdr_eval_value(e, "%s", s->dev->busid);
	gdr_eval_verdict(e, GDR_VERDICT_INFO, GDR_PASS);
}

static const struct gdr_check check_gpu_busid = {
	.key = "pci_bus_id",
	.scope = GDR_SCOPE_GPU,
	.eval = eval_gpu_busid,
	.describe = gdr_describe_value,
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
		gdr_eval_value(e, "%d", node);
	else
		gdr_eval_value(e, "unknown (sysfs gives no NUMA node)");
	gdr_eval_verdict(e, GDR_VERDICT_INFO, GDR_PASS);
}

static void group_value(struct gdr_eval *e, int group)
{
	if (group >= 0)
		gdr_eval_value(e, "%d", group);
	else
		gdr_eval_value(e, "none (no IOMMU group in sysfs)");
	gdr_eval_verdict(e, GDR_VERDICT_INFO, GDR_PASS);
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
	.describe = gdr_describe_value,
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
	.describe = gdr_describe_value,
	.remedy = "",
};

static void eval_gpu_iommu_mode(const struct gdr_subject *s, struct gdr_eval *e)
{
	char bdf[GDR_BDF_LEN];

	gpu_bdf(s, bdf, sizeof(bdf));
	if (!bdf[0] || !gdr_pci_exists(bdf)) {
		e->skip = true;
		return;
	}
	iommu_mode(s->host, bdf, e);
}

static const struct gdr_check check_gpu_iommu_mode = {
	.key = "iommu_mode",
	.scope = GDR_SCOPE_GPU,
	.eval = eval_gpu_iommu_mode,
	.describe = gdr_describe_value,
	.remedy = "",
};

static void eval_gpu_ats(const struct gdr_subject *s, struct gdr_eval *e)
{
	char bdf[GDR_BDF_LEN];

	gpu_bdf(s, bdf, sizeof(bdf));
	if (!bdf[0] || !gdr_pci_exists(bdf)) {
		e->skip = true;
		return;
	}
	ats_value(bdf, e);
}

static const struct gdr_check check_gpu_ats = {
	.key = "ats",
	.scope = GDR_SCOPE_GPU,
	.eval = eval_gpu_ats,
	.describe = gdr_describe_value,
	.remedy = "",
};

static void eval_gpu_rdma(const struct gdr_subject *s, struct gdr_eval *e)
{
	gdr_eval_value(e, "%d", s->dev->gdr_attr);
	if (s->dev->gdr_attr != 1)
		gdr_eval_verdict(e, GDR_VERDICT_WRONG, GDR_UNDECIDED);
}

static const struct gdr_check check_gpu_rdma = {
	.key = "gpudirect_rdma_supported",
	.scope = GDR_SCOPE_GPU,
	.eval = eval_gpu_rdma,
	.describe = gdr_describe_value,
	.remedy = "this GPU does not support GPUDirect RDMA",
};

static void eval_gpu_vmm(const struct gdr_subject *s, struct gdr_eval *e)
{
	gdr_eval_value(e, "%d", s->dev->gdr_vmm_attr);
	gdr_eval_verdict(e, GDR_VERDICT_INFO, GDR_PASS);
}

static void eval_gpu_c2c(const struct gdr_subject *s, struct gdr_eval *e)
{
	const struct gdr_dev *d = s->dev;

	if (d->c2c == GDR_YES)
		gdr_eval_value(e, "yes (NVLink-C2C to the CPU)");
	else if (d->c2c == GDR_NO)
		gdr_eval_value(e, "no");
	else
		gdr_eval_value(e, "unknown (%s)", d->c2c_why);
	gdr_eval_verdict(e, GDR_VERDICT_INFO, GDR_PASS);
}

static const struct gdr_check check_gpu_c2c = {
	.key = "c2c",
	.scope = GDR_SCOPE_GPU,
	.eval = eval_gpu_c2c,
	.describe = gdr_describe_value,
	.remedy = "",
};

static const struct gdr_check check_gpu_vmm = {
	.key = "gpudirect_rdma_with_vmm",
	.scope = GDR_SCOPE_GPU,
	.eval = eval_gpu_vmm,
	.describe = gdr_describe_value,
	.remedy = "",
};

/* --- RDMA device ------------------------------------------------------- */

static void eval_nic_pci(const struct gdr_subject *s, struct gdr_eval *e)
{
	if (s->nic_bdf[0]) {
		gdr_eval_value(e, "%s", s->nic_bdf);
		gdr_eval_verdict(e, GDR_VERDICT_INFO, GDR_PASS);
		return;
	}
	gdr_eval_value(e, "none");
	gdr_eval_verdict(e, GDR_VERDICT_UNKNOWN, GDR_PASS);
}

static const struct gdr_check check_nic_pci = {
	.key = "pci_address",
	.scope = GDR_SCOPE_NIC,
	.eval = eval_nic_pci,
	.describe = gdr_describe_value,
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
	.describe = gdr_describe_value,
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
	.describe = gdr_describe_value,
	.remedy = "",
};

static void eval_nic_iommu_mode(const struct gdr_subject *s, struct gdr_eval *e)
{
	if (!s->nic_bdf[0]) {
		e->skip = true;
		return;
	}
	iommu_mode(s->host, s->nic_bdf, e);
}

static const struct gdr_check check_nic_iommu_mode = {
	.key = "iommu_mode",
	.scope = GDR_SCOPE_NIC,
	.eval = eval_nic_iommu_mode,
	.describe = gdr_describe_value,
	.remedy = "",
};

static void eval_nic_ats(const struct gdr_subject *s, struct gdr_eval *e)
{
	if (!s->nic_bdf[0]) {
		e->skip = true;
		return;
	}
	ats_value(s->nic_bdf, e);
}

static const struct gdr_check check_nic_ats = {
	.key = "ats",
	.scope = GDR_SCOPE_NIC,
	.eval = eval_nic_ats,
	.describe = gdr_describe_value,
	.remedy = "",
};

static void eval_nic_max_mr(const struct gdr_subject *s, struct gdr_eval *e)
{
	unsigned long long m = s->max_mr_size;

	if (!m) {
		gdr_eval_value(e, "unknown (ibv_query_device failed)");
		gdr_eval_verdict(e, GDR_VERDICT_UNKNOWN, GDR_PASS);
		e->remedy = "";
		return;
	}
	if (m == ~0ULL)
		gdr_eval_value(e, "no limit (2^64-1)");
	else
		gdr_eval_value(e, "%llu bytes (%llu GiB)", m, m >> 30);
	gdr_eval_verdict(e, GDR_VERDICT_OK, GDR_PASS);
	if (s->largest_gpu && m < s->largest_gpu) {
		gdr_append(e->value, sizeof(e->value),
			   ", less than a GPU's %llu GiB",
			   s->largest_gpu >> 30);
		e->verdict = GDR_VERDICT_WRONG;
	}
}

static const struct gdr_check check_nic_max_mr = {
	.key = "max_mr_size",
	.scope = GDR_SCOPE_NIC,
	.eval = eval_nic_max_mr,
	.describe = gdr_describe_value,
	.remedy = "one MR cannot cover all of a GPU's memory here: a larger "
		  "registration fails, or is silently cut short by a transport "
		  "that clamps it (kvcache-ai/Mooncake#2017): register in "
		  "pieces of at most this size",
};

static void eval_nic_link(const struct gdr_subject *s, struct gdr_eval *e)
{
	if (!s->port) {
		e->skip = true;
		return;
	}
	gdr_eval_value(e, "%s",
		       s->port->link_layer == IBV_LINK_LAYER_ETHERNET
			       ? "Ethernet"
		       : s->port->link_layer == IBV_LINK_LAYER_INFINIBAND
			       ? "InfiniBand"
			       : "unspecified");
	gdr_eval_verdict(e, GDR_VERDICT_INFO, GDR_PASS);
}

static const struct gdr_check check_nic_link = {
	.key = "link_layer",
	.scope = GDR_SCOPE_NIC,
	.eval = eval_nic_link,
	.describe = gdr_describe_value,
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
	gdr_eval_value(e, "%s", dev);
	gdr_eval_verdict(e, GDR_VERDICT_INFO, GDR_PASS);
}

static const struct gdr_check check_nic_netdev = {
	.key = "netdev",
	.scope = GDR_SCOPE_NIC,
	.eval = eval_nic_netdev,
	.describe = gdr_describe_value,
	.remedy = "",
};

static void eval_nic_port(const struct gdr_subject *s, struct gdr_eval *e)
{
	if (!s->port) {
		gdr_eval_value(e, "unknown");
		gdr_eval_verdict(e, GDR_VERDICT_UNKNOWN, GDR_UNDECIDED);
		e->remedy = "ibv_query_port failed";
		return;
	}
	gdr_eval_value(e, "%s", ibv_port_state_str(s->port->state));
	if (s->port->state != IBV_PORT_ACTIVE)
		gdr_eval_verdict(e, GDR_VERDICT_WRONG, GDR_UNDECIDED);
}

static const struct gdr_check check_nic_port = {
	.key = "port_state",
	.scope = GDR_SCOPE_NIC,
	.eval = eval_nic_port,
	.describe = gdr_describe_value,
	.remedy = "port 1 is not active: check the cable, the switch and the "
		  "subnet manager (ibstat)",
};

/* --- GPU x RDMA device ----------------------------------------------------- */

/*
 * The PCI function of the pair's RDMA device that moves the data: its
 * Data Direct function where sysfs shows one and the pair takes the Data
 * Direct path (as gdr_rank_nics() measures), else its own. True when it
 * is the Data Direct function.
 */
static bool data_bdf(const struct gdr_subject *s, char *bdf, size_t n)
{
	if (s->nic && s->nic->data_direct == GDR_YES &&
	    !gdr_checks_first_failure(gdr_backend_data_direct.needs, s, NULL,
				      0) &&
	    gdr_data_direct_bdf(s->nic->dd_path, bdf, n) == 0)
		return true;
	gdr_fmt(bdf, n, "%s", s->nic_bdf);
	return false;
}

static void eval_topology(const struct gdr_subject *s, struct gdr_eval *e)
{
	char gpu[GDR_BDF_LEN], nic[GDR_BDF_LEN];
	enum gdr_distance dist = GDR_DIST_UNKNOWN;
	bool dd;

	if (!s->dev) {
		e->skip = true;
		return;
	}
	gpu_bdf(s, gpu, sizeof(gpu));
	dd = data_bdf(s, nic, sizeof(nic));
	if (nic[0] && gpu[0])
		dist = gdr_pci_distance(gpu, nic);
	gdr_eval_value(e, "%s", gdr_distance_name(dist));
	if (dd)
		gdr_append(e->value, sizeof(e->value),
			   " (from the Data Direct function %s)", nic);
	if (dist == GDR_DIST_PIX || dist == GDR_DIST_PXB) {
		return;
	} else if (dist == GDR_DIST_PHB) {
		gdr_eval_verdict(e, GDR_VERDICT_INFO, GDR_PASS);
		e->remedy = "GPU and NIC meet at the CPU's host bridge: expect "
			    "less bandwidth than under one PCIe switch";
	} else if (dist == GDR_DIST_UNKNOWN) {
		gdr_eval_verdict(e, GDR_VERDICT_UNKNOWN, GDR_PASS);
		e->remedy =
			"the PCI path of the GPU or the NIC is not in sysfs";
	} else {
		gdr_eval_verdict(e, GDR_VERDICT_WRONG, GDR_PASS);
	}
}

static const struct gdr_check check_topology = {
	.key = "topology_gpu%d",
	.scope = GDR_SCOPE_PAIR,
	.eval = eval_topology,
	.describe = gdr_describe_value,
	.remedy = "traffic crosses NUMA nodes or host bridges: pick the NIC "
		  "closest to this GPU (NCCL_IB_HCA, UCX_NET_DEVICES)",
};

static void eval_acs(const struct gdr_subject *s, struct gdr_eval *e)
{
	char gpu[GDR_BDF_LEN], nic[GDR_BDF_LEN], acs[256];
	int n = -1;

	if (!s->dev) {
		e->skip = true;
		return;
	}
	gpu_bdf(s, gpu, sizeof(gpu));
	data_bdf(s, nic, sizeof(nic));
	if (nic[0] && gpu[0])
		n = gdr_pci_acs_redirects(gpu, nic, acs, sizeof(acs));
	if (n == 0) {
		gdr_eval_value(e, "none");
	} else if (n > 0 && gdr_pci_ats(gpu) == GDR_ATS_ENABLED &&
		   gdr_pci_ats(nic) == GDR_ATS_ENABLED) {
		/* With ATS on both ends, translated requests may go peer to
		 * peer where the bridges allow Direct Translated P2P. */
		if (gdr_pci_acs_direct_translated(acs)) {
			gdr_eval_value(
				e,
				"%s (with Direct Translated P2P, and ATS "
				"on both ends: translated requests go "
				"peer to peer)",
				acs);
			gdr_eval_verdict(e, GDR_VERDICT_INFO, GDR_PASS);
		} else {
			gdr_eval_value(e,
				       "%s (ATS on both ends, no Direct "
				       "Translated P2P)",
				       acs);
			gdr_eval_verdict(e, GDR_VERDICT_WRONG, GDR_PASS);
			e->remedy = "ACS redirect sends GPU<->NIC traffic "
				    "through the root complex: enable ACS "
				    "Direct Translated P2P (bit 6 of "
				    "ECAP_ACS+0x6) on these bridges so that "
				    "ATS-translated requests go peer to peer, "
				    "or disable the redirects";
		}
	} else if (n > 0) {
		gdr_eval_value(e, "%s", acs);
		gdr_eval_verdict(e, GDR_VERDICT_WRONG, GDR_PASS);
	} else {
		gdr_eval_value(e, "unknown");
		gdr_eval_verdict(e, GDR_VERDICT_UNKNOWN, GDR_PASS);
		e->remedy = "run as root to read the bridges' extended PCI "
			    "config space";
	}
}

static const struct gdr_check check_acs = {
	.key = "acs_redirect_gpu%d",
	.scope = GDR_SCOPE_PAIR,
	.eval = eval_acs,
	.describe = gdr_describe_value,
	.remedy = "ACS redirect sends GPU<->NIC traffic through the root "
		  "complex: disable it on these bridges (BIOS, or setpci "
		  "ECAP_ACS+0x6.w=0000) or enable ATS",
};

/* --- this process's GPUDIRECT_* settings ------------------------------------ */

/*
 * The report is about this process's registrations: a setting that makes
 * them all fail (a bad value, a cache limit that is not a number) is
 * wrong here too, named; GPUDIRECT_PATH's effect shows in each pair's
 * path. Absent when nothing is set.
 */
static const char env_remedy[] =
	"every registration of this process fails with EINVAL while it is "
	"set: fix or unset it";
static const char env_cache_remedy[] =
	"gdr_cache_create() fails with EINVAL while it is set: fix or unset "
	"it";

static void eval_env(const struct gdr_subject *s, struct gdr_eval *e)
{
	char why[GDR_WHY_LEN] = "";
	size_t x, y;

	if (s->node->env_error[0]) {
		gdr_eval_value(e, "%s", s->node->env_error);
		gdr_eval_verdict(e, GDR_VERDICT_WRONG, GDR_PASS);
		return;
	}
	if (gdr_env_cache_limits(&x, &y, why, sizeof(why))) {
		gdr_eval_value(e, "%s", why);
		gdr_eval_verdict(e, GDR_VERDICT_WRONG, GDR_PASS);
		e->remedy = env_cache_remedy;
		return;
	}
	gdr_env_list(e->value, sizeof(e->value));
	if (!e->value[0]) {
		e->skip = true;
		return;
	}
	gdr_eval_verdict(e, GDR_VERDICT_INFO, GDR_PASS);
}

static const struct gdr_check check_env = {
	.key = "environment",
	.scope = GDR_SCOPE_NODE,
	.eval = eval_env,
	.describe = gdr_describe_value,
	.remedy = env_remedy,
};

/* --- walking them ---------------------------------------------------------- */

const struct gdr_check *const gdr_node_checks[] = {
	&check_env,
	&gdr_check_kernel,
	&gdr_check_nvidia_driver,
	&gdr_check_cuda_api,
	&gdr_check_peermem,
	&gdr_check_rdma_stack,
	&gdr_check_verbs_dmabuf,
	&gdr_check_mlx5dv,
	&check_rdma_core,
	&gdr_check_cuda_pcie,
	&gdr_check_gds,
	&gdr_check_gds_compat,
	&gdr_check_gds_addrs,
	&check_cuda_devices,
	&check_rdma_devices,
	&gdr_check_memlock,
	&gdr_check_nofile,
	&check_fork,
	NULL,
};

const struct gdr_check *const gdr_gpu_checks[] = {
	&check_gpu_name,
	&check_gpu_busid,
	&check_gpu_numa,
	&check_gpu_iommu,
	&check_gpu_iommu_mode,
	&check_gpu_ats,
	&gdr_check_gpu_dmabuf,
	&check_gpu_rdma,
	&check_gpu_vmm,
	&check_gpu_c2c,
	&gdr_check_gpu_pcie,
	&gdr_check_gpu_bar1,
	NULL,
};

const struct gdr_check *const gdr_nic_checks[] = {
	&gdr_check_nic_dmabuf, &gdr_check_nic_data_direct,
	&check_nic_pci,	       &check_nic_numa,
	&check_nic_iommu,      &check_nic_iommu_mode,
	&check_nic_ats,	       &check_nic_max_mr,
	&check_nic_link,       &check_nic_netdev,
	&check_nic_port,       NULL,
};

/* The path each GPU would take (path_gpuN) comes from the backend table,
 * after these. */
const struct gdr_check *const gdr_pair_checks[] = {
	&check_topology,
	&check_acs,
	NULL,
};
