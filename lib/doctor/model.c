/* SPDX-License-Identifier: MIT */
/*
 * A modelled node: CUDA and verbs tables that answer from a struct
 * gdr_model instead of a driver. gdr-info --from/--root replays snapshots
 * through them, and the unit tests' fakes are built on them, so the two
 * share one implementation of the node-level answers. Registration-level
 * calls answer "not supported" here; the fakes replace those.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "doctor.h"
#include "model.h"

static const struct gdr_model *model;

void gdr_model_use(const struct gdr_model *m)
{
	model = m;
}

/* --- CUDA ------------------------------------------------------------------ */

/* Every entry point first answers "not supported", with its own signature. */
#define GDR_MODEL_STUB(name, sym, ver, req, params)                            \
	static CUresult stub_##name params                                     \
	{                                                                      \
		return CUDA_ERROR_NOT_SUPPORTED;                               \
	}
GDR_CU_FUNCS(GDR_MODEL_STUB)
#undef GDR_MODEL_STUB

static CUresult m_init(unsigned int flags)
{
	return CUDA_SUCCESS;
}

static CUresult m_version(int *v)
{
	*v = model->driver_version;
	return CUDA_SUCCESS;
}

static CUresult m_errname(CUresult r, const char **name)
{
	switch (r) {
	case CUDA_ERROR_INVALID_VALUE:
		*name = "CUDA_ERROR_INVALID_VALUE";
		break;
	case CUDA_ERROR_OUT_OF_MEMORY:
		*name = "CUDA_ERROR_OUT_OF_MEMORY";
		break;
	case CUDA_ERROR_NOT_INITIALIZED:
		*name = "CUDA_ERROR_NOT_INITIALIZED";
		break;
	case CUDA_ERROR_NO_DEVICE: *name = "CUDA_ERROR_NO_DEVICE"; break;
	case CUDA_ERROR_INVALID_DEVICE:
		*name = "CUDA_ERROR_INVALID_DEVICE";
		break;
	case CUDA_ERROR_INVALID_CONTEXT:
		*name = "CUDA_ERROR_INVALID_CONTEXT";
		break;
	case CUDA_ERROR_NOT_SUPPORTED:
		*name = "CUDA_ERROR_NOT_SUPPORTED";
		break;
	case CUDA_ERROR_UNKNOWN: *name = "CUDA_ERROR_UNKNOWN"; break;
	default: return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

static CUresult m_count(int *n)
{
	*n = model->num_gpus;
	return CUDA_SUCCESS;
}

static CUresult m_dev_get(CUdevice *d, int ordinal)
{
	if (ordinal < 0 || ordinal >= model->num_gpus)
		return CUDA_ERROR_INVALID_DEVICE;
	*d = ordinal;
	return CUDA_SUCCESS;
}

static CUresult m_attr(int *v, CUdevice_attribute a, CUdevice d)
{
	const struct gdr_model_gpu *g;

	if (d < 0 || d >= model->num_gpus)
		return CUDA_ERROR_INVALID_DEVICE;
	g = &model->gpu[d];
	switch (a) {
	case CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED:
		/* As the snapshot recorded it, whatever the driver version. */
		*v = g->dmabuf_supported;
		return CUDA_SUCCESS;
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED:
		*v = g->gpudirect_rdma_supported;
		return CUDA_SUCCESS;
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED:
		*v = g->gpudirect_rdma_with_vmm;
		return CUDA_SUCCESS;
	case CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED:
		/* C2C links have them; PCIe links do not. */
		*v = g->c2c != 0;
		return CUDA_SUCCESS;
	default: return CUDA_ERROR_INVALID_VALUE;
	}
}

static CUresult m_name(char *s, int n, CUdevice d)
{
	if (d < 0 || d >= model->num_gpus || n <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	gdr_fmt(s, (size_t)n, "%s", model->gpu[d].name);
	return CUDA_SUCCESS;
}

static CUresult m_total_mem(size_t *bytes, CUdevice d)
{
	if (d < 0 || d >= model->num_gpus || !model->gpu[d].total_mem)
		return CUDA_ERROR_INVALID_VALUE;
	*bytes = (size_t)model->gpu[d].total_mem;
	return CUDA_SUCCESS;
}

static CUresult m_busid(char *s, int n, CUdevice d)
{
	if (d < 0 || d >= model->num_gpus || n <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	gdr_fmt(s, (size_t)n, "%s", model->gpu[d].pci_bus_id);
	return CUDA_SUCCESS;
}

/* The entry points a driver of @version has: those of its API or older. */
static const struct {
	size_t offset;
	int version;
	int required;
	const char *name;
} versions[] = {
#define GDR_MODEL_VERSION(name, sym, ver, req, params)                         \
	{ offsetof(struct gdr_cuda_ops, name), ver, req, #name },
	GDR_CU_FUNCS(GDR_MODEL_VERSION)
#undef GDR_MODEL_VERSION
};

void gdr_model_cuda_ops(struct gdr_cuda_ops *ops)
{
	size_t i;

#define GDR_MODEL_SET(name, sym, ver, req, params) ops->name = stub_##name;
	GDR_CU_FUNCS(GDR_MODEL_SET)
#undef GDR_MODEL_SET
	ops->cuInit = m_init;
	ops->cuDriverGetVersion = m_version;
	ops->cuGetErrorName = m_errname;
	ops->cuDeviceGetCount = m_count;
	ops->cuDeviceGet = m_dev_get;
	ops->cuDeviceGetAttribute = m_attr;
	ops->cuDeviceGetName = m_name;
	ops->cuDeviceGetPCIBusId = m_busid;
	ops->cuDeviceTotalMem = m_total_mem;
	for (i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
		if (versions[i].version > model->driver_version)
			memset((char *)ops + versions[i].offset, 0,
			       sizeof(void *));
}

int gdr_model_cuda_load(struct gdr_cuda_ops *ops, unsigned int flags, char *why,
			size_t n)
{
	size_t i;

	memset(ops, 0, sizeof(*ops));
	if (model->cuda_error[0]) {
		gdr_fmt(why, n, "%s", model->cuda_error);
		return ENOENT;
	}
	/* A driver older than an entry point the library cannot work
	 * without: as the loader says of a real one (an old snapshot). */
	for (i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		if (versions[i].required &&
		    versions[i].version > model->driver_version) {
			gdr_fmt(why, n,
				"the CUDA driver (API %d) lacks %s (CUDA %d.%d "
				"API); upgrade the NVIDIA driver",
				model->driver_version, versions[i].name,
				versions[i].version / 1000,
				versions[i].version % 1000 / 10);
			return ENOSYS;
		}
	}
	gdr_model_cuda_ops(ops);
	return 0;
}

/* --- verbs ----------------------------------------------------------------- */

static const struct gdr_model_nic *nic_of(struct ibv_device *dev)
{
	int i;

	for (i = 0; dev && i < model->num_nics; i++)
		if (!strcmp(model->nic[i].name, dev->name))
			return &model->nic[i];
	return NULL;
}

static struct ibv_pd *m_alloc_pd(struct ibv_context *ctx)
{
	struct ibv_pd *pd = calloc(1, sizeof(*pd));

	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pd->context = ctx;
	return pd;
}

static int m_dealloc_pd(struct ibv_pd *pd)
{
	free(pd);
	return 0;
}

static struct ibv_mr *m_reg_dmabuf(struct ibv_pd *pd, uint64_t offset,
				   size_t len, uint64_t iova, int fd,
				   int access)
{
	const struct gdr_model_nic *nic = nic_of(pd->context->device);

	/* The probe gets the device's answer; a model registers nothing. */
	errno = fd == -1 && len == 0 && nic ? nic->dmabuf_probe_errno
					    : EOPNOTSUPP;
	return NULL;
}

static struct ibv_mr *m_reg(struct ibv_pd *pd, void *addr, size_t len,
			    uint64_t iova, unsigned int access)
{
	errno = EOPNOTSUPP;
	return NULL;
}

static int m_dereg(struct ibv_mr *mr)
{
	return EINVAL;
}

static int m_query_port(struct ibv_context *ctx, uint8_t port,
			struct ibv_port_attr *a)
{
	const struct gdr_model_nic *nic = nic_of(ctx->device);

	memset(a, 0, sizeof(*a));
	if (!nic || port != 1)
		return EINVAL;
	a->state = (enum ibv_port_state)nic->port_state;
	a->link_layer = (uint8_t)nic->link_layer;
	return 0;
}

static const char *m_device_name(struct ibv_device *d)
{
	return d ? d->name : NULL;
}

static int m_device_index(struct ibv_device *d)
{
	const struct gdr_model_nic *nic = nic_of(d);

	return nic ? (int)(nic - model->nic) : -1;
}

/* --- mlx5 direct verbs and NVML -------------------------------------------- */

static bool m_is_mlx5(struct ibv_device *dev)
{
	const struct gdr_model_nic *nic = nic_of(dev);

	return nic && nic->mlx5;
}

static int m_dd_path(struct ibv_context *ctx, char *buf, size_t n)
{
	const struct gdr_model_nic *nic = nic_of(ctx->device);

	if (!nic)
		return ENODEV;
	if (nic->data_direct_errno)
		return nic->data_direct_errno;
	gdr_fmt(buf, n, "%s", nic->data_direct_path);
	return 0;
}

static struct ibv_mr *m_reg_mlx5(struct ibv_pd *pd, uint64_t offset, size_t len,
				 uint64_t iova, int fd, int access,
				 int mlx5_access)
{
	errno = EOPNOTSUPP;
	return NULL;
}

int gdr_model_mlx5_load(struct gdr_mlx5_ops *ops, char *why, size_t n)
{
	memset(ops, 0, sizeof(*ops));
	if (model->mlx5dv <= 0) {
		gdr_fmt(why, n, "%s", gdr_mlx5_absent);
		return ENOENT;
	}
	ops->is_supported = m_is_mlx5;
	if (model->mlx5dv == 1) {
		gdr_fmt(why, n, "%s", gdr_mlx5_too_old);
		return ENOSYS;
	}
	ops->data_direct_path = m_dd_path;
	ops->reg_dmabuf_mr = m_reg_mlx5;
	return 0;
}

int gdr_model_gpu_c2c(const char *busid, bool *c2c, char *why, size_t n)
{
	int i;

	for (i = 0; i < model->num_gpus; i++) {
		const struct gdr_model_gpu *g = &model->gpu[i];

		if (strcmp(g->pci_bus_id, busid))
			continue;
		if (g->c2c < 0) {
			gdr_fmt(why, n, "%s",
				g->c2c_why[0] ? g->c2c_why
					      : "not recorded in the snapshot");
			return EIO;
		}
		*c2c = g->c2c != 0;
		return 0;
	}
	gdr_fmt(why, n, "no GPU at %s in the model", busid);
	return ENODEV;
}

int gdr_model_gpu_bar1(const char *busid, unsigned int flags,
		       struct gdr_bar1 *b, char *why, size_t n)
{
	int i;

	if ((flags & GDR_NVML_NOLOAD) && !model->nvml_loaded) {
		gdr_fmt(why, n, "NVML is not loaded in this process");
		return ENOENT;
	}
	for (i = 0; i < model->num_gpus; i++) {
		const struct gdr_model_gpu *g = &model->gpu[i];

		if (strcmp(g->pci_bus_id, busid))
			continue;
		if (g->bar1_errno) {
			gdr_fmt(why, n, "%s",
				g->bar1_why[0] ? g->bar1_why
					       : gdr_errno_name(g->bar1_errno));
			return g->bar1_errno;
		}
		b->total = g->bar1_total;
		b->used = g->bar1_used;
		return 0;
	}
	gdr_fmt(why, n, "no GPU at %s in the model", busid);
	return ENODEV;
}

int gdr_model_limits(struct gdr_limits *l, char *why, size_t n)
{
	memset(l, 0, sizeof(*l));
	if (model->limits_errno) {
		gdr_fmt(why, n, "%s",
			model->limits_why[0]
				? model->limits_why
				: gdr_errno_name(model->limits_errno));
		return model->limits_errno;
	}
	l->memlock_soft = model->memlock_soft;
	l->memlock_hard = model->memlock_hard;
	l->nofile_soft = model->nofile_soft;
	l->nofile_hard = model->nofile_hard;
	l->cap_ipc_lock = model->cap_ipc_lock;
	l->user_ns = model->user_ns;
	return 0;
}

static int m_query_device(struct ibv_context *ctx, struct ibv_device_attr *a)
{
	const struct gdr_model_nic *nic = nic_of(ctx->device);

	if (!nic || !nic->max_mr_size)
		return EIO;
	memset(a, 0, sizeof(*a));
	a->max_mr_size = nic->max_mr_size;
	return 0;
}

static int m_fork_status(void)
{
	return model->fork_status;
}

int gdr_model_if_addrs(const char *dev, char *out, size_t n)
{
	int i;

	if (n)
		out[0] = '\0';
	for (i = 0; i < model->num_nics; i++) {
		if (!model->nic[i].netdev[0] ||
		    strcmp(model->nic[i].netdev, dev))
			continue;
		if (model->nic[i].addrs_errno)
			return model->nic[i].addrs_errno;
		gdr_fmt(out, n, "%s", model->nic[i].addrs);
		return 0;
	}
	return ENODEV;
}

int gdr_model_verbs_files(char *ibv, size_t n1, char *mlx5, size_t n2)
{
	gdr_fmt(ibv, n1, "%s", model->libibverbs_file);
	gdr_fmt(mlx5, n2, "%s", model->libmlx5_file);
	return ibv[0] ? 0 : ENOENT;
}

void gdr_model_verbs_ops(struct gdr_verbs_ops *ops)
{
	memset(ops, 0, sizeof(*ops));
	ops->reg_mr_iova2 = m_reg;
	ops->reg_dmabuf_mr = model->libibverbs_dmabuf ? m_reg_dmabuf : NULL;
	ops->dereg_mr = m_dereg;
	ops->alloc_pd = m_alloc_pd;
	ops->dealloc_pd = m_dealloc_pd;
	ops->query_port = m_query_port;
	ops->device_name = m_device_name;
	ops->device_index = m_device_index;
	ops->query_device = m_query_device;
	ops->is_fork_initialized =
		model->fork_status >= 0 ? m_fork_status : NULL;
}
