/* SPDX-License-Identifier: MIT */
/*
 * The node report: every prerequisite with what was observed, a verdict
 * and a remedy, built from the same probes gdr_register() uses, printable
 * as text or JSON so that every program says the same thing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct item {
	char *section, *key, *value, *remedy;
	enum gdr_verdict verdict;
};

struct gdr_report {
	struct item *items;
	unsigned int num, cap;
	int usable;
	bool oom;
};

static void add(struct gdr_report *r, const char *section, const char *key,
		enum gdr_verdict verdict, const char *remedy,
		const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static void add(struct gdr_report *r, const char *section, const char *key,
		enum gdr_verdict verdict, const char *remedy, const char *fmt,
		...)
{
	char value[512];
	struct item *it;
	va_list ap;

	if (r->oom)
		return;
	if (r->num == r->cap) {
		unsigned int cap = r->cap ? r->cap * 2 : 32;
		struct item *n = realloc(r->items, cap * sizeof(*n));

		if (!n) {
			r->oom = true;
			return;
		}
		r->items = n;
		r->cap = cap;
	}
	va_start(ap, fmt);
	gdr_vfmt(value, sizeof(value), fmt, ap);
	va_end(ap);
	it = &r->items[r->num];
	it->section = strdup(section);
	it->key = strdup(key);
	it->value = strdup(value);
	it->remedy = strdup(remedy ? remedy : "");
	it->verdict = verdict;
	if (!it->section || !it->key || !it->value || !it->remedy) {
		free(it->section);
		free(it->key);
		free(it->value);
		free(it->remedy);
		r->oom = true;
		return;
	}
	r->num++;
}

/* ok for yes, @no for no, unknown otherwise. */
static enum gdr_verdict tri(enum gdr_tristate t, enum gdr_verdict no)
{
	return t == GDR_YES ? GDR_VERDICT_OK : t == GDR_NO ? no
							   : GDR_VERDICT_UNKNOWN;
}

static void node_items(struct gdr_report *r, const struct gdr_node *nd,
		       unsigned int num_ctxs)
{
	const char *s = "node";

	add(r, s, "kernel", tri(nd->kernel_ok, GDR_VERDICT_WRONG),
	    nd->kernel_ok == GDR_YES
		    ? ""
		    : "DMA-BUF needs Linux 5.12 or newer: upgrade the kernel, "
		      "or use nvidia-peermem",
	    "%s", nd->kernel_release[0] ? nd->kernel_release : "unknown");

	switch (nd->nv_flavour) {
	case GDR_NV_OPEN:
		add(r, s, "nvidia_driver", GDR_VERDICT_OK, "",
		    "%s (open kernel module)", nd->nv_version);
		break;
	case GDR_NV_PROPRIETARY:
		add(r, s, "nvidia_driver", GDR_VERDICT_WRONG,
		    "DMA-BUF needs the open kernel module: install it "
		    "(GPU Operator: --set driver.kernelModuleType=open), or "
		    "load nvidia-peermem",
		    "%s (proprietary kernel module)", nd->nv_version);
		break;
	case GDR_NV_UNPARSED:
		add(r, s, "nvidia_driver", GDR_VERDICT_UNKNOWN,
		    "check /proc/driver/nvidia/version by hand",
		    "unrecognised /proc/driver/nvidia/version");
		break;
	case GDR_NV_ABSENT: /* fall through */
	default:
		add(r, s, "nvidia_driver", GDR_VERDICT_MISSING,
		    "install and load the NVIDIA driver (open kernel module); "
		    "in a container, the driver must be loaded on the host",
		    "not loaded (no /proc/driver/nvidia/version)");
		break;
	}

	if (!nd->cuda_ok && !nd->driver_version)
		add(r, s, "cuda_driver_api", GDR_VERDICT_MISSING, nd->cuda_why,
		    "unavailable");
	else
		add(r, s, "cuda_driver_api",
		    nd->driver_version >= 11070 ? GDR_VERDICT_OK
						: GDR_VERDICT_WRONG,
		    nd->driver_version >= 11070
			    ? ""
			    : "DMA-BUF export needs CUDA 11.7 (driver R515) or "
			      "newer: upgrade the NVIDIA driver",
		    "%d.%d (%d)", nd->driver_version / 1000,
		    nd->driver_version % 1000 / 10, nd->driver_version);

	if (nd->peermem_path[0])
		add(r, s, "nvidia_peermem", GDR_VERDICT_OK, "", "%s (%s)",
		    nd->peermem_version, nd->peermem_path);
	else
		add(r, s, "nvidia_peermem", GDR_VERDICT_MISSING,
		    "only needed where DMA-BUF is unavailable: modprobe "
		    "nvidia-peermem (GPU Operator: driver.rdma.enabled=true; "
		    "with host MOFED also driver.rdma.useHostMofed=true)",
		    "not loaded");

	add(r, s, "libibverbs_dmabuf",
	    nd->verbs_dmabuf ? GDR_VERDICT_OK : GDR_VERDICT_MISSING,
	    nd->verbs_dmabuf ? ""
			     : "upgrade rdma-core to v34 or newer for "
			       "ibv_reg_dmabuf_mr",
	    "%s", nd->verbs_dmabuf ? "ibv_reg_dmabuf_mr present"
				   : "ibv_reg_dmabuf_mr absent");

	add(r, s, "gpudirect_storage",
	    nd->nvidia_fs ? GDR_VERDICT_OK : GDR_VERDICT_INFO,
	    nd->nvidia_fs ? ""
			  : "only for GPUDirect Storage: modprobe nvidia-fs "
			    "(GPU Operator: gds.enabled=true)",
	    "%s%s%s%s", nd->nvidia_fs ? "nvidia_fs loaded" : "nvidia_fs not loaded",
	    nd->nvidia_fs_version[0] ? " " : "", nd->nvidia_fs_version,
	    nd->nvidia_fs_proc ? ", /proc/driver/nvidia-fs present" : "");

	add(r, s, "cuda_devices",
	    nd->num_devices > 0 ? GDR_VERDICT_OK : GDR_VERDICT_MISSING,
	    nd->num_devices > 0 ? ""
	    : nd->cuda_why[0]   ? nd->cuda_why
				: "no CUDA device is visible",
	    "%d", nd->num_devices);

	add(r, s, "rdma_devices",
	    num_ctxs ? GDR_VERDICT_OK : GDR_VERDICT_MISSING,
	    num_ctxs ? ""
		     : "no RDMA device is visible: load the NIC's RDMA driver "
		       "(e.g. mlx5_ib), check /sys/class/infiniband, and in a "
		       "container expose /dev/infiniband",
	    "%u", num_ctxs);
}

static void gpu_items(struct gdr_report *r, const struct gdr_dev *d)
{
	char s[16], bdf[GDR_BDF_LEN];
	int numa = -1, group = -1;

	gdr_fmt(s, sizeof(s), "gpu%d", d->ordinal);
	if (!gdr_bdf_normalize(d->busid, bdf, sizeof(bdf))) {
		numa = gdr_pci_numa(bdf);
		group = gdr_pci_iommu_group(bdf);
	}
	add(r, s, "name", GDR_VERDICT_INFO, "", "%s", d->name);
	add(r, s, "pci_bus_id", GDR_VERDICT_INFO, "", "%s", d->busid);
	add(r, s, "numa_node", GDR_VERDICT_INFO, "", "%d", numa);
	add(r, s, "iommu_group", GDR_VERDICT_INFO, "", "%d", group);
	add(r, s, "dmabuf_supported",
	    d->dmabuf_attr == 1 ? GDR_VERDICT_OK : GDR_VERDICT_WRONG,
	    d->dmabuf_attr == 1 ? ""
				: "this GPU/driver cannot export DMA-BUF: use "
				  "the open kernel module, or nvidia-peermem",
	    "%d", d->dmabuf_attr);
	add(r, s, "gpudirect_rdma_supported",
	    d->gdr_attr == 1 ? GDR_VERDICT_OK : GDR_VERDICT_WRONG,
	    d->gdr_attr == 1 ? "" : "this GPU does not support GPUDirect RDMA",
	    "%d", d->gdr_attr);
	add(r, s, "gpudirect_rdma_with_vmm", GDR_VERDICT_INFO, "", "%d",
	    d->gdr_vmm_attr);
}

/* Where GPU @d and the NIC at @nic_bdf meet on the PCIe tree. */
static void pair_topology(struct gdr_report *r, const char *sec,
			  const struct gdr_dev *d, const char *nic_bdf)
{
	char key[32], gpu[GDR_BDF_LEN], acs[256];
	const char *dist = "unknown";
	int n = -1;

	if (nic_bdf[0] && !gdr_bdf_normalize(d->busid, gpu, sizeof(gpu))) {
		dist = gdr_pci_distance(gpu, nic_bdf);
		n = gdr_pci_acs_redirects(gpu, nic_bdf, acs, sizeof(acs));
	}
	gdr_fmt(key, sizeof(key), "topology_gpu%d", d->ordinal);
	if (!strcmp(dist, "PIX") || !strcmp(dist, "PXB"))
		add(r, sec, key, GDR_VERDICT_OK, "", "%s", dist);
	else if (!strcmp(dist, "PHB"))
		add(r, sec, key, GDR_VERDICT_INFO,
		    "GPU and NIC meet at the CPU's host bridge: expect less "
		    "bandwidth than under one PCIe switch",
		    "%s", dist);
	else if (!strcmp(dist, "unknown"))
		add(r, sec, key, GDR_VERDICT_UNKNOWN,
		    "the PCI path of the GPU or the NIC is not in sysfs", "%s",
		    dist);
	else
		add(r, sec, key, GDR_VERDICT_WRONG,
		    "traffic crosses NUMA nodes or host bridges: pick the NIC "
		    "closest to this GPU (NCCL_IB_HCA, UCX_NET_DEVICES)",
		    "%s", dist);

	gdr_fmt(key, sizeof(key), "acs_redirect_gpu%d", d->ordinal);
	if (n == 0)
		add(r, sec, key, GDR_VERDICT_OK, "", "none");
	else if (n > 0)
		add(r, sec, key, GDR_VERDICT_WRONG,
		    "ACS redirect sends GPU<->NIC traffic through the root "
		    "complex: disable it on these bridges (BIOS, or setpci "
		    "ECAP_ACS+0x6.w=0000) or enable ATS",
		    "%s", acs);
	else
		add(r, sec, key, GDR_VERDICT_UNKNOWN,
		    "run as root to read the bridges' extended PCI config "
		    "space",
		    "unknown");
}

static void nic_items(struct gdr_report *r, const struct gdr_node *nd,
		      struct ibv_context *ctx)
{
	const struct gdr_seam *s = gdr_seam();
	const struct gdr_nic *nic = NULL;
	struct ibv_port_attr port;
	char why[GDR_REASON_LEN], sec[IBV_SYSFS_NAME_MAX + 8], key[32];
	char bdf[GDR_BDF_LEN];
	const char *name;
	struct ibv_pd *pd;
	int i, e;

	name = s->verbs.device_name(ctx->device);
	gdr_fmt(sec, sizeof(sec), "%s", name ? name : "rdma");
	pd = s->verbs.alloc_pd(ctx);
	if (pd) {
		nic = gdr_nic_get(pd);
		if (s->verbs.dealloc_pd(pd))
			gdr_debug("%s: ibv_dealloc_pd failed", sec);
	}
	if (!nic)
		add(r, sec, "dmabuf_mr", GDR_VERDICT_UNKNOWN,
		    "ibv_alloc_pd failed; check the device's driver", "unknown");
	else
		add(r, sec, "dmabuf_mr", tri(nic->dmabuf, GDR_VERDICT_MISSING),
		    nic->dmabuf == GDR_YES
			    ? ""
			    : "this device/driver does not register DMA-BUF "
			      "memory: use nvidia-peermem, or a NIC driver with "
			      "DMA-BUF support",
		    "%s (ibv_reg_dmabuf_mr probe answered %s)",
		    nic->dmabuf == GDR_YES  ? "supported"
		    : nic->dmabuf == GDR_NO ? "unsupported"
					    : "unknown",
		    gdr_errno_name(nic->err));
	if (gdr_nic_pci(sec, bdf, sizeof(bdf)))
		bdf[0] = '\0';
	add(r, sec, "pci_address", bdf[0] ? GDR_VERDICT_INFO : GDR_VERDICT_UNKNOWN,
	    bdf[0] ? "" : "no PCI parent in sysfs (a software device?)", "%s",
	    bdf[0] ? bdf : "none");
	if (bdf[0]) {
		add(r, sec, "numa_node", GDR_VERDICT_INFO, "", "%d",
		    gdr_pci_numa(bdf));
		add(r, sec, "iommu_group", GDR_VERDICT_INFO, "", "%d",
		    gdr_pci_iommu_group(bdf));
	}
	memset(&port, 0, sizeof(port));
	if (s->verbs.query_port(ctx, 1, &port) == 0) {
		add(r, sec, "link_layer", GDR_VERDICT_INFO, "", "%s",
		    port.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet"
		    : port.link_layer == IBV_LINK_LAYER_INFINIBAND
			    ? "InfiniBand"
			    : "unspecified");
		add(r, sec, "port_state",
		    port.state == IBV_PORT_ACTIVE ? GDR_VERDICT_OK
						  : GDR_VERDICT_WRONG,
		    port.state == IBV_PORT_ACTIVE
			    ? ""
			    : "port 1 is not active: check the cable, the "
			      "switch and the subnet manager (ibstat)",
		    "%s", ibv_port_state_str(port.state));
	} else {
		add(r, sec, "port_state", GDR_VERDICT_UNKNOWN,
		    "ibv_query_port failed", "unknown");
	}

	for (i = 0; i < nd->num_devices; i++) {
		const struct gdr_dev *d = gdr_dev_get(i);
		char both[2 * GDR_REASON_LEN + 8];

		if (d)
			pair_topology(r, sec, d, bdf);
		gdr_fmt(key, sizeof(key), "path_gpu%d", i);
		e = gdr_dmabuf_eligible(nd, d, nic, why, sizeof(why));
		if (!e) {
			r->usable = 1;
			add(r, sec, key, GDR_VERDICT_OK, "", "dmabuf");
			continue;
		}
		gdr_fmt(both, sizeof(both), "dmabuf: %s", why);
		e = gdr_peermem_eligible(nd, why, sizeof(why));
		if (!e) {
			r->usable = 1;
			add(r, sec, key, GDR_VERDICT_OK, "",
			    "peermem (DMA-BUF unavailable)");
			continue;
		}
		gdr_fmt(both + strlen(both), sizeof(both) - strlen(both),
			"; peermem: %s", why);
		add(r, sec, key, GDR_VERDICT_MISSING, both, "none");
	}
}

GDR_EXPORT struct gdr_report *gdr_report_create(struct ibv_context *const *ctxs,
						unsigned int num_ctxs,
						uint32_t flags)
{
	const struct gdr_node *nd;
	struct gdr_report *r;
	unsigned int i;
	int d;

	gdr_clear_error();
	if (flags || (num_ctxs && !ctxs))
		return gdr_fail(EINVAL, "gdr_report_create: flags must be 0 "
					"and ctxs must hold num_ctxs contexts");
	for (i = 0; i < num_ctxs; i++)
		if (!ctxs[i])
			return gdr_fail(EINVAL,
					"gdr_report_create: ctxs[%u] is NULL",
					i);
	r = calloc(1, sizeof(*r));
	if (!r)
		return gdr_fail(ENOMEM, "out of memory for the report");
	nd = gdr_node_get();
	node_items(r, nd, num_ctxs);
	for (d = 0; d < nd->num_devices; d++) {
		const struct gdr_dev *dev = gdr_dev_get(d);

		if (dev)
			gpu_items(r, dev);
	}
	for (i = 0; i < num_ctxs; i++)
		nic_items(r, nd, ctxs[i]);
	if (r->oom) {
		gdr_report_destroy(r);
		return gdr_fail(ENOMEM, "out of memory for the report");
	}
	return r;
}

GDR_EXPORT void gdr_report_destroy(struct gdr_report *r)
{
	unsigned int i;

	if (!r)
		return;
	for (i = 0; i < r->num; i++) {
		free(r->items[i].section);
		free(r->items[i].key);
		free(r->items[i].value);
		free(r->items[i].remedy);
	}
	free(r->items);
	free(r);
}

GDR_EXPORT unsigned int gdr_report_num_items(const struct gdr_report *r)
{
	return r ? r->num : 0;
}

GDR_EXPORT int gdr_report_item(const struct gdr_report *r, unsigned int index,
			       struct gdr_report_item *item)
{
	if (!r || !item || index >= r->num) {
		errno = EINVAL;
		return -1;
	}
	item->section = r->items[index].section;
	item->key = r->items[index].key;
	item->value = r->items[index].value;
	item->verdict = r->items[index].verdict;
	item->remedy = r->items[index].remedy;
	return 0;
}

GDR_EXPORT int gdr_report_usable(const struct gdr_report *r)
{
	return r ? r->usable : 0;
}

static const char *verdict_str(enum gdr_verdict v)
{
	switch (v) {
	case GDR_VERDICT_OK: return "ok";
	case GDR_VERDICT_MISSING: return "missing";
	case GDR_VERDICT_WRONG: return "wrong";
	case GDR_VERDICT_UNKNOWN: return "unknown";
	case GDR_VERDICT_INFO: /* fall through */
	default: return "info";
	}
}

static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", out);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void print_json(const struct gdr_report *r, FILE *out)
{
	unsigned int i;

	fprintf(out, "{\n  \"schema\": \"libgpudirect-report\",\n"
		     "  \"schema_version\": 1,\n"
		     "  \"library_version\": \"%d.%d.%d\",\n"
		     "  \"gpudirect_rdma_usable\": %s,\n  \"items\": [",
		GPUDIRECT_VERSION_MAJOR, GPUDIRECT_VERSION_MINOR,
		GPUDIRECT_VERSION_MICRO, r->usable ? "true" : "false");
	for (i = 0; i < r->num; i++) {
		const struct item *it = &r->items[i];

		fputs(i ? ",\n    {" : "\n    {", out);
		fputs("\"section\": ", out);
		json_str(out, it->section);
		fputs(", \"key\": ", out);
		json_str(out, it->key);
		fputs(", \"value\": ", out);
		json_str(out, it->value);
		fprintf(out, ", \"verdict\": \"%s\", \"remedy\": ",
			verdict_str(it->verdict));
		json_str(out, it->remedy);
		fputc('}', out);
	}
	fputs("\n  ]\n}\n", out);
}

static void print_text(const struct gdr_report *r, FILE *out)
{
	const char *section = "";
	unsigned int i;

	fprintf(out, "libgpudirect %d.%d.%d report\n", GPUDIRECT_VERSION_MAJOR,
		GPUDIRECT_VERSION_MINOR, GPUDIRECT_VERSION_MICRO);
	for (i = 0; i < r->num; i++) {
		const struct item *it = &r->items[i];

		if (strcmp(section, it->section)) {
			section = it->section;
			fprintf(out, "\n[%s]\n", section);
		}
		fprintf(out, "  %-26s %-8s %s\n", it->key,
			verdict_str(it->verdict), it->value);
		if (it->remedy[0] && it->verdict != GDR_VERDICT_OK)
			fprintf(out, "  %-26s          -> %s\n", "", it->remedy);
	}
	fprintf(out, "\nGPUDirect RDMA: %s\n",
		r->usable ? "usable on at least one GPU x RDMA device pair"
			  : "NOT usable on this node (see the items above)");
}

GDR_EXPORT int gdr_report_print(const struct gdr_report *r, FILE *out,
				enum gdr_report_format format)
{
	if (!r || !out || (format != GDR_REPORT_TEXT &&
			   format != GDR_REPORT_JSON)) {
		errno = EINVAL;
		return -1;
	}
	if (format == GDR_REPORT_JSON)
		print_json(r, out);
	else
		print_text(r, out);
	if (fflush(out) || ferror(out)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}
