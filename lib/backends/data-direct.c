/* SPDX-License-Identifier: MIT */
/*
 * The Data Direct backend (ConnectX-8 class NICs): the dma-buf is exported
 * with the PCIe mapping and registered with mlx5dv_reg_dmabuf_mr and
 * MLX5DV_REG_DMABUF_ACCESS_DATA_DIRECT, so that the NIC's Data Direct
 * function reaches the GPU. A PCIe-mapped dma-buf never goes to plain
 * ibv_reg_dmabuf_mr here: that can register and then fail remote
 * operations. A GPU that answers NOT_SUPPORTED to the PCIe mapping is
 * remembered, and the next paths take the registration.
 */
#include <errno.h>

#include "backends.h"

static struct ibv_mr *data_direct_reg(const struct gdr_req *req, char *why,
				      size_t n)
{
	const struct gdr_mlx5 *m = gdr_mlx5_get();
	struct gdr_dmabuf_range r;
	struct ibv_mr *mr;
	char name[64];
	CUresult res;
	int fd, err;

	err = gdr_dmabuf_export(req, true, &r, &fd, &res, why, n);
	if (res == CUDA_ERROR_NOT_SUPPORTED) {
		gdr_pcie_map_set(req->pi.device, GDR_PCIE_MAP_UNSUPPORTED);
		gdr_fmt(why, n,
			"GPU %d cannot export a PCIe-mapped dma-buf "
			"(cuMemGetHandleForAddressRange with "
			"CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE answered "
			"%s); remembered for this GPU",
			req->pi.device,
			gdr_cu_errname(req->cu, res, name, sizeof(name)));
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (err) {
		errno = err;
		return NULL;
	}
	if (!req->imp)
		gdr_pcie_map_set(req->pi.device, GDR_PCIE_MAP_OK);
	errno = 0;
	mr = m->ops.reg_dmabuf_mr(req->pd, r.offset, req->len, req->iova, fd,
				  req->access, GDR_MLX5DV_DATA_DIRECT);
	return gdr_dmabuf_finish(req, &r, mr, "mlx5dv_reg_dmabuf_mr",
				 ", DATA_DIRECT", why, n);
}

/* The first that fails says why the path is not taken: the NIC first
 * (most have no Data Direct function), then the library, the driver, the
 * GPU. */
static const struct gdr_check *const data_direct_needs[] = {
	&gdr_check_nic_data_direct,
	&gdr_check_mlx5dv,
	&gdr_check_cuda_api,
	&gdr_check_cuda_pcie,
	&gdr_check_kernel,
	&gdr_check_nvidia_driver,
	&gdr_check_gpu_dmabuf,
	&gdr_check_gpu_pcie,
	NULL,
};

const struct gdr_backend gdr_backend_data_direct = {
	.path = GDR_PATH_DATA_DIRECT,
	.title = "Data Direct",
	.device_memory = true,
	.needs = data_direct_needs,
	.applies = &gdr_check_nic_data_direct,
	.reg = data_direct_reg,
};
