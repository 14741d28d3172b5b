/* SPDX-License-Identifier: MIT */
/*
 * The conditions that gate registrations, as data: one entry each,
 * evaluated into the observed value, the report's verdict and what it
 * means for a path that needs it. Each remedy sentence is written here
 * (or, for facts only the report shows, in doctor/facts.c) and nowhere
 * else; the thresholds are in thresholds.h. A backend lists the entries it
 * needs (its eligibility is the first that fails); the report walks the
 * same entries.
 */
#include <errno.h>
#include <string.h>

#include "node.h"
#include "thresholds.h"

void gdr_eval_value(struct gdr_eval *e, const char *fmt, ...)
{
	va_list ap;

	if (e->quiet)
		return;
	va_start(ap, fmt);
	gdr_vfmt(e->value, sizeof(e->value), fmt, ap);
	va_end(ap);
}

void gdr_eval_verdict(struct gdr_eval *e, enum gdr_verdict v, enum gdr_pass p)
{
	e->verdict = v;
	e->pass = p;
}

void gdr_describe_value(const struct gdr_subject *s, const struct gdr_eval *e,
			char *buf, size_t n)
{
	(void)s;
	gdr_fmt(buf, n, "%s", e->value);
}

/* --- node ---------------------------------------------------------------- */

static void eval_kernel(const struct gdr_subject *s, struct gdr_eval *e)
{
	gdr_eval_value(e, "%s",
		       s->node->kernel_release[0] ? s->node->kernel_release
						  : "unknown");
	if (s->node->kver_err)
		gdr_eval_verdict(e, GDR_VERDICT_UNKNOWN, GDR_UNDECIDED);
	else if (gdr_kver_cmp(&s->node->kver, KERNEL_DMABUF_MAJOR,
			      KERNEL_DMABUF_MINOR) < 0)
		gdr_eval_verdict(e, GDR_VERDICT_WRONG, GDR_FAIL);
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
		gdr_eval_value(e, "%s (open kernel module)", nd->nv_version);
		break;
	case GDR_NV_PROPRIETARY:
		gdr_eval_value(e, "%s (proprietary kernel module)",
			       nd->nv_version);
		gdr_eval_verdict(e, GDR_VERDICT_WRONG, GDR_FAIL);
		break;
	case GDR_NV_UNPARSED:
		gdr_eval_value(e, "unrecognised /proc/driver/nvidia/version");
		gdr_eval_verdict(e, GDR_VERDICT_UNKNOWN, GDR_UNDECIDED);
		e->remedy = nv_by_hand;
		break;
	case GDR_NV_UNREADABLE:
		gdr_eval_value(
			e, "/proc/driver/nvidia/version could not be read (%s)",
			gdr_errno_name(nd->nv_err));
		gdr_eval_verdict(e, GDR_VERDICT_UNKNOWN, GDR_UNDECIDED);
		e->remedy = nv_by_hand;
		break;
	case GDR_NV_ABSENT: /* fall through */
	default:
		/* In a container the file may be absent while CUDA works:
		 * the CUDA driver decides. */
		gdr_eval_value(e,
			       "not loaded (no /proc/driver/nvidia/version)");
		gdr_eval_verdict(e, GDR_VERDICT_MISSING, GDR_UNDECIDED);
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
	.gpu_side = true,
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
		gdr_eval_value(e, "unavailable");
		gdr_eval_verdict(e, GDR_VERDICT_MISSING, GDR_FAIL);
		e->remedy = c->why;
		return;
	}
	gdr_eval_value(e, "%d.%d (%d)", c->driver_version / 1000,
		       c->driver_version % 1000 / 10, c->driver_version);
	if (c->driver_version < CUDA_DMABUF_API ||
	    !c->cu.cuMemGetHandleForAddressRange)
		gdr_eval_verdict(e, GDR_VERDICT_WRONG, GDR_FAIL);
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
	.gpu_side = true,
	.key = "cuda_driver_api",
	.scope = GDR_SCOPE_NODE,
	.eval = eval_cuda_api,
	.describe = describe_cuda_api,
	.remedy = "DMA-BUF export needs CUDA 11.7 (driver R515) or newer: "
		  "upgrade the NVIDIA driver",
};

/* nvidia-peermem hands GPU pages to the RDMA core through the peer-memory
 * API of MLNX_OFED/DOCA-OFED's ib_core; the kernel's own ib_core has none. */
/* DMA-BUF works, nvidia-peermem is absent: what programs nobody will
 * port need. */
static const char peermem_gdr_run[] =
	"programs that register GPU memory with plain ibv_reg_mr (perftest "
	"without --use_cuda_dmabuf, MPI and UCX releases older than their "
	"DMA-BUF support) get EFAULT here: run them under gdr-run, which "
	"registers that memory through DMA-BUF";

static const char peermem_needs_ofed[] =
	"nvidia-peermem works only with MLNX_OFED/DOCA-OFED's ib_core, which "
	"the kernel's inbox drivers lack: install DOCA-OFED (Network Operator: "
	"its OFED driver; GPU Operator: driver.rdma.useHostMofed=true with "
	"OFED on the host) and reload nvidia-peermem, or use DMA-BUF (open "
	"kernel module, Linux 5.12+)";
static const char peermem_reload[] =
	"nvidia-peermem is loaded but did not register (dmesg says why): "
	"reload it after the OFED ib_core (modprobe -r nvidia-peermem; "
	"modprobe nvidia-peermem), or use DMA-BUF";

static void eval_peermem(const struct gdr_subject *s, struct gdr_eval *e)
{
	const struct gdr_node *nd = s->node;

	if (nd->peermem_path[0] && nd->peermem_registered) {
		gdr_eval_value(e, "%s (%s)", nd->peermem_version,
			       nd->peermem_path);
		return;
	}
	if (nd->peermem_path[0]) {
		/* Loaded, but the RDMA core does not list it: device memory
		 * would be refused with EFAULT. */
		gdr_eval_value(e,
			       "%s (%s), not registered with the RDMA core "
			       "(no /sys%s/nv_mem%s)",
			       nd->peermem_version, nd->peermem_path,
			       GDR_MEMORY_PEERS,
			       nd->memory_peers ? "" : ", nor the directory");
		gdr_eval_verdict(e, GDR_VERDICT_WRONG, GDR_FAIL);
		e->remedy =
			nd->memory_peers ? peermem_reload : peermem_needs_ofed;
	} else {
		gdr_eval_value(e, "not loaded");
		gdr_eval_verdict(e, GDR_VERDICT_MISSING, GDR_FAIL);
	}
	if (s->dmabuf_usable) {
		/* Every pair takes DMA-BUF: nothing to fix here, but programs
		 * that hand GPU pointers to plain ibv_reg_mr still need
		 * peermem, or the preload. */
		gdr_append(e->value, sizeof(e->value),
			   " (not needed: DMA-BUF is usable)");
		e->verdict = GDR_VERDICT_INFO;
		e->remedy = nd->peermem_path[0] ? "" : peermem_gdr_run;
	}
}

static void describe_peermem(const struct gdr_subject *s,
			     const struct gdr_eval *e, char *buf, size_t n)
{
	const char *const *p;

	if (s->node->peermem_path[0]) {
		gdr_fmt(buf, n, "nvidia-peermem is %s", e->value);
		return;
	}
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

/*
 * The network driver stack, by the rule of NVIDIA's prerequisites: the
 * kernel's inbox drivers are enough for DMA-BUF; nvidia-peermem needs
 * MLNX_OFED/DOCA-OFED. Judged only where no pair takes DMA-BUF.
 */
static void eval_rdma_stack(const struct gdr_subject *s, struct gdr_eval *e)
{
	const struct gdr_node *nd = s->node;
	const struct gdr_host_facts *h = s->host;
	bool gpus = s->cuda && s->cuda->state == GDR_CUDA_READY &&
		    s->cuda->num_devices > 0;

	if (!h) {
		e->skip = true; /* read by the report only */
		return;
	}
	if (h->ofed)
		gdr_eval_value(e, "MLNX_OFED/DOCA-OFED (mlx_compat %s)",
			       h->ofed_version[0] ? h->ofed_version
						  : "loaded, version unread");
	else if (nd->memory_peers)
		gdr_eval_value(e,
			       "an ib_core with peer memory (/sys%s), no "
			       "mlx_compat module",
			       GDR_MEMORY_PEERS);
	else
		gdr_eval_value(e,
			       "inbox kernel drivers (no mlx_compat module)");
	gdr_eval_verdict(e, GDR_VERDICT_INFO, GDR_PASS);
	/* Only nvidia-peermem is left for some GPU, and it needs OFED. */
	if (!h->ofed && !nd->memory_peers && !s->dmabuf_usable && s->num_nics &&
	    gpus) {
		gdr_eval_verdict(e, GDR_VERDICT_WRONG, GDR_PASS);
		e->remedy = peermem_needs_ofed;
	}
}

const struct gdr_check gdr_check_rdma_stack = {
	.key = "rdma_stack",
	.scope = GDR_SCOPE_NODE,
	.eval = eval_rdma_stack,
	.describe = gdr_describe_value,
	.remedy = "",
};

static void eval_verbs_dmabuf(const struct gdr_subject *s, struct gdr_eval *e)
{
	if (s->node->verbs_dmabuf) {
		gdr_eval_value(e, "ibv_reg_dmabuf_mr present");
		return;
	}
	gdr_eval_value(e, "ibv_reg_dmabuf_mr absent");
	gdr_eval_verdict(e, GDR_VERDICT_MISSING, GDR_FAIL);
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
		gdr_eval_value(e, "present (libmlx5.so.1 MLX5_1.25)");
		return;
	}
	gdr_eval_value(e, "absent (%s)", m->why);
	/* Only Data Direct NICs need them: a fact, not a fault. */
	gdr_eval_verdict(e, GDR_VERDICT_INFO, GDR_FAIL);
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
		gdr_eval_value(e, "off (GPUDIRECT_PCIE_MAPPING=off)");
		gdr_eval_verdict(e, GDR_VERDICT_INFO, GDR_FAIL);
		e->remedy = "unset GPUDIRECT_PCIE_MAPPING to allow the PCIe "
			    "mapping (Data Direct, C2C GPUs)";
		return;
	}
	if (!c || c->state != GDR_CUDA_READY) {
		gdr_eval_value(e, "unknown (the CUDA driver is unavailable)");
		gdr_eval_verdict(e, GDR_VERDICT_UNKNOWN, GDR_FAIL);
		return;
	}
	if (c->driver_version >= CUDA_PCIE_MAPPING_API) {
		gdr_eval_value(e, "available (driver API %d.%d)",
			       c->driver_version / 1000,
			       c->driver_version % 1000 / 10);
		return;
	}
	gdr_eval_value(e, "unavailable (driver API %d.%d, older than %d.%d)",
		       c->driver_version / 1000, c->driver_version % 1000 / 10,
		       CUDA_PCIE_MAPPING_API / 1000,
		       CUDA_PCIE_MAPPING_API % 1000 / 10);
	gdr_eval_verdict(e, GDR_VERDICT_INFO, GDR_FAIL);
}

static void describe_cuda_pcie(const struct gdr_subject *s,
			       const struct gdr_eval *e, char *buf, size_t n)
{
	gdr_fmt(buf, n, "the PCIe-mapped dma-buf export is %s", e->value);
}

const struct gdr_check gdr_check_cuda_pcie = {
	.gpu_side = true,
	.key = "cuda_pcie_mapping",
	.scope = GDR_SCOPE_NODE,
	.eval = eval_cuda_pcie,
	.describe = describe_cuda_pcie,
	.remedy = "the PCIe mapping (Data Direct, C2C GPUs) needs CUDA driver "
		  "12.8 (R570) or newer: upgrade the NVIDIA driver",
};

/* --- GPU ------------------------------------------------------------------ */

static void eval_gpu_dmabuf(const struct gdr_subject *s, struct gdr_eval *e)
{
	const struct gdr_dev *d = s->dev;

	if (!d || d->why[0]) {
		gdr_eval_value(e, "unknown (%s)",
			       d ? d->why : "the GPU is not visible");
		gdr_eval_verdict(e, GDR_VERDICT_UNKNOWN, GDR_FAIL);
		return;
	}
	gdr_eval_value(e, "%d", d->dmabuf_attr);
	if (d->dmabuf_attr != 1)
		gdr_eval_verdict(e, GDR_VERDICT_WRONG, GDR_FAIL);
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
	.gpu_side = true,
	.key = "dmabuf_supported",
	.scope = GDR_SCOPE_GPU,
	.eval = eval_gpu_dmabuf,
	.describe = describe_gpu_dmabuf,
	.remedy = "this GPU/driver cannot export DMA-BUF: use the open "
		  "kernel module, or nvidia-peermem",
};

const struct gdr_check gdr_check_gpu_pcie;

static void eval_gpu_pcie(const struct gdr_subject *s, struct gdr_eval *e)
{
	int ordinal = s->dev ? s->dev->ordinal : -1;

	if (s->node->pcie_policy == GDR_PCIE_OFF) {
		gdr_eval_value(e, "off (GPUDIRECT_PCIE_MAPPING=off)");
		gdr_eval_verdict(e, GDR_VERDICT_INFO, GDR_FAIL);
		return;
	}
	if (!gdr_cuda_has_pcie_mapping(s->cuda)) {
		gdr_eval_value(e,
			       "unavailable (the driver is older than %d.%d)",
			       CUDA_PCIE_MAPPING_API / 1000,
			       CUDA_PCIE_MAPPING_API % 1000 / 10);
		gdr_eval_verdict(e, GDR_VERDICT_INFO, GDR_FAIL);
		return;
	}
	switch (gdr_pcie_map_get(ordinal)) {
	case GDR_PCIE_MAP_OK: gdr_eval_value(e, "supported"); break;
	case GDR_PCIE_MAP_UNSUPPORTED:
		gdr_eval_value(e,
			       "not supported (the PCIe-mapped export answered "
			       "CUDA_ERROR_NOT_SUPPORTED)");
		gdr_eval_verdict(e, GDR_VERDICT_INFO, GDR_FAIL);
		e->remedy = gdr_check_gpu_pcie.remedy;
		break;
	case GDR_PCIE_MAP_UNTRIED: /* fall through */
	default:
		/* The first registration that needs it finds out. */
		gdr_eval_value(e, "not tried");
		gdr_eval_verdict(e, GDR_VERDICT_UNKNOWN, GDR_PASS);
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
	.gpu_side = true,
	.key = "pcie_mapping",
	.scope = GDR_SCOPE_GPU,
	.changes = true, /* a refused PCIe export is remembered mid-call */
	.eval = eval_gpu_pcie,
	.describe = describe_gpu_pcie,
	.remedy = "no Data Direct for this GPU; DMA-BUF registers its memory "
		  "without the PCIe mapping",
};

/*
 * BAR1: the window of device memory a NIC can reach. Every registered byte
 * of device memory holds its share of it while the MR lives, so a window
 * nearly used up is why registrations fail with ENOMEM, EFAULT or EINVAL.
 * A fact, not a gate: the state changes with every registration.
 */
static const char bar1_unknown_remedy[] = "nvidia-smi -q -d MEMORY shows "
					  "BAR1 use";

static bool bar1_nearly_full(const struct gdr_bar1 *b)
{
	/* In long double: a snapshot's numbers may be of any size. */
	return (long double)b->used * 100 >=
	       (long double)b->total * BAR1_NEARLY_FULL_PERCENT;
}

static void eval_gpu_bar1(const struct gdr_subject *s, struct gdr_eval *e)
{
	const struct gdr_bar1_view *v = s->bar1;

	if (!v || v->err) {
		gdr_eval_value(e, "unknown (%s)",
			       v ? v->why : "not asked here");
		gdr_eval_verdict(e, GDR_VERDICT_UNKNOWN, GDR_PASS);
		e->remedy = bar1_unknown_remedy;
		return;
	}
	gdr_eval_value(e, "%llu MiB of %llu MiB used (%u%%)", v->b.used >> 20,
		       v->b.total >> 20,
		       (unsigned int)((long double)v->b.used * 100 /
				      (long double)v->b.total));
	if (bar1_nearly_full(&v->b))
		gdr_eval_verdict(e, GDR_VERDICT_WRONG, GDR_PASS);
}

static void describe_gpu_bar1(const struct gdr_subject *s,
			      const struct gdr_eval *e, char *buf, size_t n)
{
	gdr_fmt(buf, n, "BAR1 of GPU %d is nearly used up (%s)",
		s->dev ? s->dev->ordinal : -1, e->value);
}

const struct gdr_check gdr_check_gpu_bar1 = {
	.key = "bar1",
	.scope = GDR_SCOPE_GPU,
	.eval = eval_gpu_bar1,
	.describe = describe_gpu_bar1,
	.remedy = "register less device memory at a time: smaller or fewer "
		  "registrations, fewer NICs per buffer, a lower cache byte "
		  "limit (gdr_cache_attr.max_bytes, GPUDIRECT_CACHE_MAX_BYTES)",
};

enum gdr_bar1_says gdr_bar1_cause(const struct gdr_dev *d, int err, size_t len,
				  char *clause, size_t n)
{
	struct gdr_subject sub = { .dev = d };
	struct gdr_bar1_view v;
	struct gdr_eval e;

	if (n)
		clause[0] = '\0';
	if (!d || (err != ENOMEM && err != EFAULT && err != EINVAL))
		return GDR_BAR1_NOT_IT;
	/* Only an NVML the process has loaded is asked: a failure path
	 * loads nothing new into the caller's process (its nvmlInit and
	 * nvmlShutdown are counted by NVML). */
	gdr_bar1_read(d, GDR_NVML_NOLOAD, &v);
	sub.bar1 = &v;
	gdr_check_eval(&gdr_check_gpu_bar1, &sub, &e, false);
	if (v.err) {
		/* EINVAL has other causes as likely (the access flags) */
		gdr_fmt(clause, n,
			"; if BAR1 of GPU %d is nearly used up, that %s "
			"(not known here: %s; %s)",
			d->ordinal,
			err == EINVAL ? "may be the cause"
				      : "is the likely cause",
			v.why, bar1_unknown_remedy);
		return GDR_BAR1_UNKNOWN;
	}
	if (e.verdict == GDR_VERDICT_WRONG) {
		gdr_fmt(clause, n, "; likely cause: ");
		describe_gpu_bar1(&sub, &e, clause + strlen(clause),
				  n - strlen(clause));
	} else if (v.b.total - v.b.used < len) {
		gdr_fmt(clause, n,
			"; likely cause: BAR1 of GPU %d has %llu bytes free, "
			"fewer than the buffer's %zu (%s)",
			d->ordinal, v.b.total - v.b.used, len, e.value);
	} else {
		return GDR_BAR1_NOT_IT;
	}
	gdr_append(clause, n, "; %s", gdr_check_gpu_bar1.remedy);
	return GDR_BAR1_LIKELY;
}

/* --- the process's limits ------------------------------------------------ */

/* A limit in words: "unlimited", "8 MiB", "64 KiB", "1000 bytes". */
static void bytes_words(unsigned long long v, char *buf, size_t n)
{
	if (v == GDR_LIMIT_INFINITY)
		gdr_fmt(buf, n, "unlimited");
	else if (v && !(v & ((1ULL << 20) - 1)))
		gdr_fmt(buf, n, "%llu MiB", v >> 20);
	else if (v && !(v & 1023))
		gdr_fmt(buf, n, "%llu KiB", v >> 10);
	else
		gdr_fmt(buf, n, "%llu bytes", v);
}

static const char limits_unknown_remedy[] = "ulimit -a shows them";

static const char memlock_userns_remedy[] =
	"raise the limit itself (ulimit -l unlimited; docker/podman --ulimit "
	"memlock=-1; in Kubernetes the container runtime's limit): "
	"CAP_IPC_LOCK does not lift it inside a user namespace";

static void eval_memlock(const struct gdr_subject *s, struct gdr_eval *e)
{
	const struct gdr_limits_view *v = s->limits;
	char soft[32], hard[32];

	if (!v || v->err) {
		gdr_eval_value(e, "unknown (%s)", v ? v->why : "not read");
		gdr_eval_verdict(e, GDR_VERDICT_UNKNOWN, GDR_PASS);
		e->remedy = limits_unknown_remedy;
		return;
	}
	bytes_words(v->l.memlock_soft, soft, sizeof(soft));
	bytes_words(v->l.memlock_hard, hard, sizeof(hard));
	if (v->l.memlock_soft == GDR_LIMIT_INFINITY) {
		gdr_eval_value(e, "unlimited");
	} else if (v->l.cap_ipc_lock == 1 && v->l.user_ns == 0) {
		gdr_eval_value(e,
			       "%s (hard %s), not applied: the process has "
			       "CAP_IPC_LOCK",
			       soft, hard);
	} else if (v->l.cap_ipc_lock == 1 && v->l.user_ns == 1) {
		gdr_eval_value(e,
			       "%s (hard %s), applied although the process "
			       "has CAP_IPC_LOCK: it is in a user namespace "
			       "(a rootless container, a pod with hostUsers: "
			       "false), and the kernel honours that "
			       "capability for pinning only in the initial "
			       "one",
			       soft, hard);
		gdr_eval_verdict(e, GDR_VERDICT_WRONG, GDR_PASS);
		e->remedy = memlock_userns_remedy;
	} else if (v->l.cap_ipc_lock == 1) {
		gdr_eval_value(e,
			       "%s (hard %s); the process has CAP_IPC_LOCK, "
			       "which lifts it only outside a user namespace, "
			       "and whether it is in one is unknown",
			       soft, hard);
		gdr_eval_verdict(e, GDR_VERDICT_UNKNOWN, GDR_PASS);
	} else {
		gdr_eval_value(e, "%s (hard %s)", soft, hard);
		gdr_eval_verdict(e, GDR_VERDICT_WRONG, GDR_PASS);
	}
}

const struct gdr_check gdr_check_memlock = {
	.key = "memlock_limit",
	.scope = GDR_SCOPE_NODE,
	.eval = eval_memlock,
	.describe = gdr_describe_value,
	.remedy = "host registrations pin their pages against this limit: "
		  "make it unlimited (ulimit -l unlimited; systemd "
		  "LimitMEMLOCK=infinity; docker --ulimit memlock=-1; in "
		  "Kubernetes the container runtime's limit, or CAP_IPC_LOCK)",
};

#define NOFILE_WHY                                                             \
	"a transport that keeps a dma-buf fd per registration runs out of "    \
	"descriptors: "
static const char nofile_soft_remedy[] =
	NOFILE_WHY "raise the soft limit (ulimit -n; a process may raise its "
		   "own up to the hard limit with setrlimit)";

static void eval_nofile(const struct gdr_subject *s, struct gdr_eval *e)
{
	const struct gdr_limits_view *v = s->limits;

	if (!v || v->err) {
		gdr_eval_value(e, "unknown (%s)", v ? v->why : "not read");
		gdr_eval_verdict(e, GDR_VERDICT_UNKNOWN, GDR_PASS);
		e->remedy = limits_unknown_remedy;
		return;
	}
	if (v->l.nofile_soft == GDR_LIMIT_INFINITY)
		gdr_eval_value(e, "unlimited");
	else if (v->l.nofile_hard == GDR_LIMIT_INFINITY)
		gdr_eval_value(e, "%llu (hard unlimited)", v->l.nofile_soft);
	else
		gdr_eval_value(e, "%llu (hard %llu)", v->l.nofile_soft,
			       v->l.nofile_hard);
	if (v->l.nofile_soft < NOFILE_MIN) {
		gdr_eval_verdict(e, GDR_VERDICT_WRONG, GDR_PASS);
		e->remedy = v->l.nofile_hard >= NOFILE_MIN ? nofile_soft_remedy
							   : NULL;
	}
}

const struct gdr_check gdr_check_nofile = {
	.key = "nofile_limit",
	.scope = GDR_SCOPE_NODE,
	.eval = eval_nofile,
	.describe = gdr_describe_value,
	.remedy = NOFILE_WHY "raise the hard and soft limits (systemd "
			     "LimitNOFILE=; docker --ulimit nofile=1048576; in "
			     "Kubernetes the container runtime's limit)",
};

const char gdr_iommu_translated_remedy[] =
	"translated DMA sends every NIC access to GPU memory through the "
	"IOMMU (IOTLB misses cost bandwidth; large dma-buf registrations can "
	"fail with ENOMEM): boot with iommu=pt (keeping intel_iommu=on or "
	"amd_iommu=on where the IOMMU is wanted; iommu.passthrough=1 on "
	"arm64, such as Grace); the GPU and Network "
	"Operators do not set it: it is the host's kernel command line";

void gdr_iommu_explain(const char *name, int err, char *msg, size_t n)
{
	char bdf[GDR_BDF_LEN], type[96];
	bool no_group;

	if (err != ENOMEM || !name || gdr_nic_pci(name, bdf, sizeof(bdf)) ||
	    gdr_pci_iommu_type(bdf, type, sizeof(type), &no_group) ||
	    (strcmp(type, "DMA") && strcmp(type, "DMA-FQ")))
		return;
	gdr_append(msg, n,
		   "; %s's IOMMU domain translates (%s), a likely cause "
		   "beside BAR1: %s",
		   name, type, gdr_iommu_translated_remedy);
}

void gdr_memlock_explain(char *msg, size_t n)
{
	struct gdr_subject sub = { 0 };
	struct gdr_limits_view v;
	struct gdr_eval e;

	gdr_limits_read(&v);
	sub.limits = &v;
	gdr_check_eval(&gdr_check_memlock, &sub, &e, false);
	if (e.verdict == GDR_VERDICT_WRONG)
		gdr_append(msg, n, "; the locked-memory limit is %s: %s",
			   e.value, gdr_check_remedy(&gdr_check_memlock, &e));
	else if (e.verdict == GDR_VERDICT_OK)
		gdr_append(msg, n,
			   "; the locked-memory limit is %s, so the kernel "
			   "itself ran out of memory for it",
			   e.value);
	else
		gdr_append(msg, n,
			   "; if the locked-memory limit is low (%s): %s",
			   e.value, gdr_check_remedy(&gdr_check_memlock, &e));
}

/* --- RDMA device ------------------------------------------------------- */

static const char pd_failed[] = "ibv_alloc_pd failed; check the device's "
				"driver";

static void eval_nic_dmabuf(const struct gdr_subject *s, struct gdr_eval *e)
{
	const struct gdr_nic *nic = s->nic;

	if (!nic) {
		gdr_eval_value(e, "unknown");
		gdr_eval_verdict(e, GDR_VERDICT_UNKNOWN, GDR_UNDECIDED);
		e->remedy = pd_failed;
		return;
	}
	gdr_eval_value(e, "%s (ibv_reg_dmabuf_mr probe answered %s)",
		       nic->dmabuf == GDR_YES  ? "supported"
		       : nic->dmabuf == GDR_NO ? "unsupported"
					       : "unknown",
		       nic->mr ? "an MR" : gdr_errno_name(nic->err));
	if (nic->dmabuf == GDR_NO) {
		gdr_eval_verdict(e, GDR_VERDICT_MISSING, GDR_FAIL);
	} else if (nic->dmabuf == GDR_UNKNOWN) {
		/* Neither yes nor no: nothing to change yet. */
		gdr_eval_verdict(e, GDR_VERDICT_UNKNOWN, GDR_UNDECIDED);
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
		gdr_eval_value(e, "unknown");
		gdr_eval_verdict(e, GDR_VERDICT_UNKNOWN, GDR_FAIL);
		e->remedy = pd_failed;
		return;
	}
	if (nic->data_direct == GDR_YES) {
		gdr_eval_value(e, "yes (%s)", nic->dd_path);
		return;
	}
	if (nic->data_direct == GDR_NO)
		gdr_eval_value(
			e, "no (%s)",
			nic->mlx5
				? "the device answered ENODEV: no Data Direct "
				  "function"
				: "not an mlx5 device");
	else
		gdr_eval_value(e, "unknown (%s)",
			       nic->dd_err == ENOSYS
				       ? gdr_mlx5_get()->why
				       : gdr_errno_name(nic->dd_err));
	/* Most NICs have none: a fact, unless the call itself failed. */
	gdr_eval_verdict(e,
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

/* --- walking them ---------------------------------------------------------- */

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

/* The verdict of @c for @s: from the call's memo where it holds one for a
 * node or GPU condition, else asked (and kept there). */
static enum gdr_pass quiet_pass(const struct gdr_check *c,
				const struct gdr_subject *s)
{
	struct gdr_check_memo *m = s->memo;
	bool keep = m && !c->changes &&
		    (c->scope == GDR_SCOPE_NODE || c->scope == GDR_SCOPE_GPU);
	struct gdr_eval e;
	unsigned int i;

	if (keep)
		for (i = 0; i < m->n; i++)
			if (m->check[i] == c)
				return m->pass[i];
	gdr_check_eval(c, s, &e, true);
	if (keep && m->n < GDR_CHECK_MEMO_MAX) {
		m->check[m->n] = c;
		m->pass[m->n++] = e.pass;
	}
	return e.pass;
}

int gdr_checks_first_failure(const struct gdr_check *const *needs,
			     const struct gdr_subject *s, char *why, size_t n)
{
	const char *remedy;
	struct gdr_eval e;

	for (; *needs; needs++) {
		if (s->imported && (*needs)->gpu_side)
			continue;
		/* The steady state only asks for verdicts. */
		if (quiet_pass(*needs, s) != GDR_FAIL)
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
