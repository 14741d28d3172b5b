/* SPDX-License-Identifier: MIT */
/*
 * The verbs table. libibverbs is linked, but the entry points newer than
 * the oldest supported rdma-core (26) are looked up at run time, so that the
 * library still loads there: ibv_reg_dmabuf_mr (rdma-core 34, IBVERBS_1.12)
 * and ibv_get_device_index (rdma-core 32, IBVERBS_1.9).
 */
#include <dlfcn.h>

#include "internal.h"

typedef struct ibv_mr *(*reg_dmabuf_fn)(struct ibv_pd *, uint64_t, size_t,
					uint64_t, int, int);
typedef int (*device_index_fn)(struct ibv_device *);

static int real_query_port(struct ibv_context *ctx, uint8_t port,
			   struct ibv_port_attr *attr)
{
	/* ibv_query_port is an inline wrapper in verbs.h. */
	return ibv_query_port(ctx, port, attr);
}

static void *versioned(const char *name, const char *version)
{
	void *sym = dlvsym(RTLD_DEFAULT, name, version);

	return sym ? sym : dlsym(RTLD_DEFAULT, name);
}

void gdr_verbs_real(struct gdr_verbs_ops *ops)
{
	ops->reg_mr_iova2 = ibv_reg_mr_iova2;
	ops->reg_dmabuf_mr =
		(reg_dmabuf_fn)versioned("ibv_reg_dmabuf_mr", "IBVERBS_1.12");
	ops->dereg_mr = ibv_dereg_mr;
	ops->alloc_pd = ibv_alloc_pd;
	ops->dealloc_pd = ibv_dealloc_pd;
	ops->query_port = real_query_port;
	ops->device_name = ibv_get_device_name;
	ops->device_index = (device_index_fn)versioned("ibv_get_device_index",
						       "IBVERBS_1.9");
}

const char *gdr_pd_name(struct ibv_pd *pd)
{
	const struct gdr_seam *s = gdr_seam();
	const char *name = NULL;

	if (s->verbs.device_name && pd->context && pd->context->device)
		name = s->verbs.device_name(pd->context->device);
	return name ? name : "the RDMA device";
}
