/* SPDX-License-Identifier: MIT */
/* The host backend: plain ibv_reg_mr of host memory. */
#include <errno.h>
#include <string.h>

#include "internal.h"

struct ibv_mr *gdr_reg_va(const struct gdr_req *req, const char *hint,
			  char *why, size_t n)
{
	const struct gdr_seam *s = gdr_seam();
	struct ibv_mr *mr;
	int err;

	errno = 0;
	mr = s->verbs.reg_mr_iova2(req->pd, req->ptr, req->len,
				   (uintptr_t)req->ptr, (unsigned)req->access);
	if (mr)
		return mr;
	err = errno ? errno : EIO;
	gdr_fmt(why, n, "ibv_reg_mr(%p, %zu) on %s failed with %s (%s)%s%s",
		req->ptr, req->len, gdr_pd_name(req->pd), gdr_errno_name(err),
		strerror(err), err == EFAULT ? ": " : "",
		err == EFAULT ? hint
		: err == ENOMEM
			? "; raise the locked-memory limit (ulimit -l, "
			  "systemd LimitMEMLOCK=infinity)"
		: err == EINVAL ? "; check the access flags" : "");
	errno = err;
	return NULL;
}

static int host_eligible(const struct gdr_req *req, char *why, size_t n)
{
	(void)req;
	(void)why;
	(void)n;
	return 0;
}

static struct ibv_mr *host_reg(const struct gdr_req *req, char *why, size_t n)
{
	return gdr_reg_va(req,
			  "the range is not mapped in this process (freed, "
			  "never allocated, or a freed CUDA buffer); pass "
			  "memory the process owns",
			  why, n);
}

const struct gdr_backend gdr_backend_host = {
	.path = GDR_PATH_HOST,
	.name = "host",
	.device_memory = false,
	.needs = "nothing beyond an RDMA device",
	.eligible = host_eligible,
	.reg = host_reg,
};
