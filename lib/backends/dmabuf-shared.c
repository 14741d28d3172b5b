/* SPDX-License-Identifier: MIT */
/*
 * What the DMA-BUF and Data Direct backends share: the page-aligned span
 * around a buffer, its export as a dma-buf (with the PCIe mapping when
 * asked) under the context that owns the memory, made once per call and
 * shared by the PDs of a multi-PD registration, and the registration's end
 * (mr->addr fixed, or the failure explained).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "backends.h"

int gdr_dmabuf_range(uintptr_t ptr, size_t len, long page,
		     struct gdr_dmabuf_range *r)
{
	uintptr_t mask = (uintptr_t)page - 1;
	uintptr_t end;

	if (page <= 0 || (mask & (uintptr_t)page) || len == 0 ||
	    ptr > UINTPTR_MAX - len || ptr + len > UINTPTR_MAX - mask)
		return EINVAL;
	r->base = ptr & ~mask;
	end = (ptr + len + mask) & ~mask;
	r->size = end - r->base;
	r->offset = ptr - r->base;
	return 0;
}

/* The context an export runs under, and what to undo afterwards. */
struct export_ctx {
	CUcontext ctx;
	bool retained; /* the primary context was retained for this call */
	CUdevice dev;
};

/*
 * Memory of a context is exported under that context. VMM (and pool)
 * memory has none: use the current context when it is on the buffer's
 * device, else the device's primary context, retained for this call only
 * so that the library never leaves a context alive the program did not
 * create.
 */
static int pick_ctx(const struct gdr_req *req, struct export_ctx *x, char *why,
		    size_t n)
{
	const struct gdr_cuda_ops *cu = req->cu;
	const struct gdr_dev *d;
	CUcontext cur = NULL;
	CUdevice cur_dev;
	char name[64];
	CUresult r;

	memset(x, 0, sizeof(*x));
	x->ctx = req->pi.ctx;
	if (x->ctx)
		return 0;
	d = gdr_dev_get(req->pi.device);
	if (!d || d->why[0]) {
		gdr_fmt(why, n, "GPU %d cannot be used: %s", req->pi.device,
			d ? d->why : "it is not visible to this process");
		return ENODEV;
	}
	x->dev = d->dev;
	r = cu->cuCtxGetCurrent(&cur);
	if (r == CUDA_SUCCESS && cur &&
	    cu->cuCtxGetDevice(&cur_dev) == CUDA_SUCCESS && cur_dev == d->dev) {
		x->ctx = cur;
		return 0;
	}
	r = cu->cuDevicePrimaryCtxRetain(&x->ctx, d->dev);
	if (r != CUDA_SUCCESS) {
		gdr_fmt(why, n,
			"cuDevicePrimaryCtxRetain on GPU %d failed with %s",
			d->ordinal, gdr_cu_errname(cu, r, name, sizeof(name)));
		return gdr_cu_errno(r);
	}
	x->retained = true;
	return 0;
}

static void drop_ctx(const struct gdr_req *req, const struct export_ctx *x)
{
	char name[64];
	CUresult r;

	if (!x->retained)
		return;
	r = req->cu->cuDevicePrimaryCtxRelease
		    ? req->cu->cuDevicePrimaryCtxRelease(x->dev)
		    : CUDA_ERROR_NOT_SUPPORTED;
	if (r != CUDA_SUCCESS)
		gdr_debug("cuDevicePrimaryCtxRelease(GPU %d) failed with %s",
			  req->pi.device,
			  gdr_cu_errname(req->cu, r, name, sizeof(name)));
}

/*
 * Export [r->base, +r->size) with @ctx current. The caller's current
 * context is restored on every path: a failed pop is retried, and a pop
 * that fails twice is the error reported.
 */
static CUresult export_range(const struct gdr_cuda_ops *cu, CUcontext ctx,
			     const struct gdr_dmabuf_range *r,
			     unsigned long long flags, int *fd,
			     const char **step)
{
	CUcontext cur = NULL, popped;
	CUresult res, pop;
	bool pushed = false;

	*fd = -1;
	*step = "cuCtxGetCurrent";
	res = cu->cuCtxGetCurrent(&cur);
	if (res != CUDA_SUCCESS)
		return res;
	if (cur != ctx) {
		*step = "cuCtxPushCurrent";
		res = cu->cuCtxPushCurrent(ctx);
		if (res != CUDA_SUCCESS)
			return res;
		pushed = true;
	}
	*step = "cuMemGetHandleForAddressRange";
	res = cu->cuMemGetHandleForAddressRange(
		fd, (CUdeviceptr)r->base, r->size,
		CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, flags);
	if (res != CUDA_SUCCESS)
		*fd = -1;
	if (!pushed)
		return res;
	pop = cu->cuCtxPopCurrent(&popped);
	if (pop != CUDA_SUCCESS)
		pop = cu->cuCtxPopCurrent(&popped);
	if (pop != CUDA_SUCCESS) {
		*step = "cuCtxPopCurrent (twice; the caller's context is not "
			"current again)";
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return pop;
	}
	return res;
}

void gdr_exports_init(struct gdr_exports *x)
{
	x->fd[0] = x->fd[1] = -1;
	x->number[0] = x->number[1] = -1;
	x->count = 0;
	x->last = -1;
	x->err[0] = x->err[1] = 0;
	x->borrowed = false;
}

void gdr_exports_import(struct gdr_exports *x, const struct gdr_import_src *imp)
{
	int i;

	gdr_exports_init(x);
	x->borrowed = true;
	for (i = 0; i < 2; i++) {
		x->r[i].base = 0;
		x->r[i].size = imp->size;
		x->r[i].offset = imp->offset;
		x->res[i] = CUDA_SUCCESS;
		if (imp->fd[i] >= 0) {
			x->fd[i] = imp->fd[i];
			x->number[i] = imp->index[i];
			continue;
		}
		x->err[i] = EOPNOTSUPP;
		x->said[i] = i ? imp->no_pcie : imp->no_plain;
	}
}

void gdr_exports_close(struct gdr_exports *x)
{
	int i;

	for (i = 0; i < 2 && !x->borrowed; i++) {
		if (x->fd[i] >= 0 && close(x->fd[i]))
			gdr_debug("close(dma-buf fd %d) failed: %s", x->fd[i],
				  strerror(errno));
		x->fd[i] = -1;
	}
}

static int export_new(const struct gdr_req *req, bool pcie,
		      struct gdr_dmabuf_range *r, int *fd, CUresult *res,
		      char *why, size_t n)
{
	const struct gdr_cuda_ops *cu = req->cu;
	struct export_ctx x;
	const char *step;
	char name[64];
	int err;

	if (gdr_dmabuf_range((uintptr_t)req->ptr, req->len,
			     req->node->page_size, r)) {
		gdr_fmt(why, n, "[%p, +%zu) overflows the address space",
			req->ptr, req->len);
		return EINVAL;
	}
	err = pick_ctx(req, &x, why, n);
	if (err)
		return err;
	*res = export_range(cu, x.ctx, r, pcie ? GDR_CU_RANGE_FLAG_PCIE : 0, fd,
			    &step);
	drop_ctx(req, &x);
	if (*res == CUDA_SUCCESS)
		return 0;
	if (strcmp(step, "cuMemGetHandleForAddressRange")) {
		gdr_fmt(why, n,
			"%s failed with %s while exporting [0x%lx, +%zu)", step,
			gdr_cu_errname(cu, *res, name, sizeof(name)),
			(unsigned long)r->base, r->size);
		return gdr_cu_errno(*res);
	}
	gdr_fmt(why, n, "%s(0x%lx, %zu%s) failed with %s%s", step,
		(unsigned long)r->base, r->size, pcie ? ", PCIe mapping" : "",
		gdr_cu_errname(cu, *res, name, sizeof(name)),
		*res == CUDA_ERROR_INVALID_VALUE
			? ": the page-aligned span is not one "
			  "cuMemAlloc allocation or a fully mapped "
			  "VMM range; register memory from "
			  "cuMemAlloc/cudaMalloc, or VMM memory "
			  "created with gpuDirectRDMACapable"
			: "");
	return gdr_cu_errno(*res);
}

int gdr_dmabuf_export(const struct gdr_req *req, bool pcie,
		      struct gdr_dmabuf_range *r, int *fd, CUresult *res,
		      char *why, size_t n)
{
	struct gdr_exports *xs = req->xs;
	int err;

	*fd = -1;
	*res = CUDA_SUCCESS;
	if (xs->fd[pcie] >= 0) {
		*r = xs->r[pcie];
		*fd = xs->fd[pcie];
		xs->last = xs->number[pcie];
		return 0;
	}
	/* The same range refused already in this call: the same answer,
	 * without asking the driver again for each PD. */
	if (xs->err[pcie]) {
		*res = xs->res[pcie];
		gdr_copy(why, n, xs->borrowed ? xs->said[pcie] : xs->why[pcie]);
		return xs->err[pcie];
	}
	err = export_new(req, pcie, r, fd, res, why, n);
	if (err) {
		xs->err[pcie] = err;
		xs->res[pcie] = *res;
		gdr_copy(xs->why[pcie], sizeof(xs->why[pcie]), why);
		return err;
	}
	xs->fd[pcie] = *fd;
	xs->r[pcie] = *r;
	xs->number[pcie] = xs->count++;
	xs->last = xs->number[pcie];
	return 0;
}

struct ibv_mr *gdr_dmabuf_finish(const struct gdr_req *req,
				 const struct gdr_dmabuf_range *r,
				 struct ibv_mr *mr, const char *call,
				 const char *extra, char *why, size_t n)
{
	char words[96], clause[GDR_BAR1_CLAUSE_LEN];
	enum gdr_bar1_says bar1;
	int err;

	if (!mr) {
		err = errno ? errno : EIO;
		/* An MR that failed used no export. */
		req->xs->last = -1;
		/* An import's GPU is the exporter's: not this process's. */
		bar1 = req->imp ? GDR_BAR1_NOT_IT
				: gdr_bar1_cause(gdr_dev_get(req->pi.device),
						 err, req->len, clause,
						 sizeof(clause));
		gdr_fmt(why, n,
			"%s(offset %llu, %zu bytes%s) on %s failed with %s%s%s%s",
			call, (unsigned long long)r->offset, req->len, extra,
			gdr_pd_name(req->pd),
			gdr_errno_words(err, words, sizeof(words)),
			bar1 == GDR_BAR1_LIKELY ? clause : "",
			err == EINVAL ? gdr_access_hint : "",
			bar1 == GDR_BAR1_UNKNOWN ? clause : "");
		gdr_iommu_explain(gdr_dev_name(req->pd->context), err, why, n);
		errno = err;
		return NULL;
	}
	/* libibverbs leaves the dma-buf offset in addr; callers expect ptr
	 * (an import: its iova). */
	mr->addr = req->ptr;
	return mr;
}
