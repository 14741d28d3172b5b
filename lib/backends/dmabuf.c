/* SPDX-License-Identifier: MIT */
/*
 * The DMA-BUF backend: export the page-aligned span around the buffer as a
 * dma-buf with cuMemGetHandleForAddressRange and register it with
 * ibv_reg_dmabuf_mr, offset and iova chosen so that the MR covers exactly
 * [ptr, ptr + len) at virtual address ptr. The export (export.c, shared
 * with the Data Direct backend) may ask for the PCIe mapping; this backend
 * does for a C2C-attached GPU whose NIC is on PCIe, or where the caller
 * asked.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "backends.h"

/*
 * Whether to ask for the PCIe mapping, and why (in @note). -1 when the
 * caller insists on it and this GPU or driver cannot (the reason in @why).
 */
static int reg_wants_pcie(const struct gdr_req *req, char *note, size_t nn,
			  char *why, size_t n)
{
	bool forced = (req->flags & GDR_REG_PCIE_MAPPING) ||
		      req->node->pcie_policy == GDR_PCIE_ON;
	const char *by = req->flags & GDR_REG_PCIE_MAPPING
				 ? "GDR_REG_PCIE_MAPPING"
				 : "GPUDIRECT_PCIE_MAPPING=on";
	const struct gdr_dev *d;
	const struct gdr_cuda *c;

	if (!forced) {
		if (req->node->pcie_policy == GDR_PCIE_OFF || !req->nic_pci)
			return 0;
		d = gdr_dev_get(req->pi.device);
		if (!d || d->c2c != GDR_YES)
			return 0;
		if (gdr_pcie_map_get(req->pi.device) ==
		    GDR_PCIE_MAP_UNSUPPORTED) {
			gdr_fmt(note, nn,
				"without the PCIe mapping: GPU %d is "
				"C2C-attached but answered NOT_SUPPORTED to it "
				"before",
				req->pi.device);
			return 0;
		}
		gdr_fmt(note, nn,
			"PCIe mapping: GPU %d is C2C-attached and %s is on "
			"PCIe",
			req->pi.device, gdr_pd_name(req->pd));
		return 1;
	}
	c = gdr_cuda_get(false);
	if (!gdr_cuda_has_pcie_mapping(c)) {
		struct gdr_subject subj = { .node = req->node, .cuda = c };
		struct gdr_eval e;

		gdr_check_eval(&gdr_check_cuda_pcie, &subj, &e, false);
		gdr_fmt(why, n, "%s asks for the PCIe mapping, and ", by);
		gdr_check_cuda_pcie.describe(&subj, &e, why + strlen(why),
					     n - strlen(why));
		gdr_append(why, n, "; %s",
			   gdr_check_remedy(&gdr_check_cuda_pcie, &e));
		return -1;
	}
	if (gdr_pcie_map_get(req->pi.device) == GDR_PCIE_MAP_UNSUPPORTED) {
		gdr_fmt(why, n,
			"%s asks for the PCIe mapping, and GPU %d answered "
			"NOT_SUPPORTED to it (remembered)",
			by, req->pi.device);
		return -1;
	}
	gdr_fmt(note, nn, "PCIe mapping: asked by %s", by);
	return 1;
}

static struct ibv_mr *dmabuf_reg(const struct gdr_req *req, char *why, size_t n)
{
	const struct gdr_seam *s = gdr_seam();
	struct gdr_dmabuf_range r;
	struct ibv_mr *mr;
	char note[GDR_WHY_LEN];
	CUresult res;
	int fd, err, pcie;

	note[0] = '\0';
	/* An import's mapping is the exporter's: the caller says which. */
	pcie = req->imp ? (req->flags & GDR_REG_PCIE_MAPPING) != 0
			: reg_wants_pcie(req, note, sizeof(note), why, n);
	if (pcie < 0) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	err = gdr_dmabuf_export(req, pcie, &r, &fd, &res, why, n);
	if (pcie && res == CUDA_ERROR_NOT_SUPPORTED) {
		/* No PCIe mapping on this GPU: never "no DMA-BUF". */
		gdr_pcie_map_set(req->pi.device, GDR_PCIE_MAP_UNSUPPORTED);
		if (req->flags & GDR_REG_PCIE_MAPPING ||
		    req->node->pcie_policy == GDR_PCIE_ON) {
			errno = EOPNOTSUPP;
			return NULL;
		}
		gdr_fmt(note, sizeof(note),
			"without the PCIe mapping: GPU %d answered "
			"NOT_SUPPORTED to it (remembered)",
			req->pi.device);
		err = gdr_dmabuf_export(req, false, &r, &fd, &res, why, n);
	} else if (pcie && !err && !req->imp) {
		gdr_pcie_map_set(req->pi.device, GDR_PCIE_MAP_OK);
	}
	if (err) {
		errno = err;
		return NULL;
	}
	errno = 0;
	mr = s->verbs.reg_dmabuf_mr(req->pd, r.offset, req->len, req->iova, fd,
				    req->access);
	mr = gdr_dmabuf_finish(req, &r, mr, "ibv_reg_dmabuf_mr", "", why, n);
	if (mr && note[0])
		gdr_copy(why, n, note); /* the policy, for the record */
	else if (mr && n)
		why[0] = '\0';
	return mr;
}

static const struct gdr_check *const dmabuf_needs[] = {
	&gdr_check_cuda_api,
	&gdr_check_kernel,
	&gdr_check_nvidia_driver,
	&gdr_check_gpu_dmabuf,
	&gdr_check_verbs_dmabuf,
	&gdr_check_nic_dmabuf,
	NULL,
};

const struct gdr_backend gdr_backend_dmabuf = {
	.path = GDR_PATH_DMABUF,
	.title = "DMA-BUF",
	.device_memory = true,
	.needs = dmabuf_needs,
	.reg = dmabuf_reg,
};
