/* SPDX-License-Identifier: MIT */
/*
 * The verbs table. libibverbs is linked, but ibv_reg_dmabuf_mr (rdma-core
 * 34, IBVERBS_1.12) is looked up at run time so that the library still
 * loads on older rdma-core and reports DMA-BUF as unavailable there.
 */
#include <dlfcn.h>

#include "internal.h"

typedef struct ibv_mr *(*reg_dmabuf_fn)(struct ibv_pd *, uint64_t, size_t,
					uint64_t, int, int);

static int real_query_port(struct ibv_context *ctx, uint8_t port,
			   struct ibv_port_attr *attr)
{
	/* ibv_query_port is an inline wrapper in verbs.h. */
	return ibv_query_port(ctx, port, attr);
}

void gdr_verbs_real(struct gdr_verbs_ops *ops)
{
	void *sym;

	ops->reg_mr_iova2 = ibv_reg_mr_iova2;
	sym = dlvsym(RTLD_DEFAULT, "ibv_reg_dmabuf_mr", "IBVERBS_1.12");
	if (!sym)
		sym = dlsym(RTLD_DEFAULT, "ibv_reg_dmabuf_mr");
	ops->reg_dmabuf_mr = (reg_dmabuf_fn)sym;
	ops->dereg_mr = ibv_dereg_mr;
	ops->alloc_pd = ibv_alloc_pd;
	ops->dealloc_pd = ibv_dealloc_pd;
	ops->query_device = ibv_query_device;
	ops->query_port = real_query_port;
	ops->device_name = ibv_get_device_name;
}

const char *gdr_pd_name(struct ibv_pd *pd)
{
	const struct gdr_seam *s = gdr_seam();
	const char *name = NULL;

	if (s->verbs.device_name && pd->context && pd->context->device)
		name = s->verbs.device_name(pd->context->device);
	return name ? name : "the RDMA device";
}
