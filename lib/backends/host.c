/* SPDX-License-Identifier: MIT */
/* The host backend: plain ibv_reg_mr of host memory. */
#include <errno.h>
#include <string.h>

#include "backends.h"

static struct ibv_mr *host_reg(const struct gdr_req *req, char *why, size_t n)
{
	const char *efault;

	switch (req->pi.host_why) {
	case GDR_HOST_NOT_INITIALIZED:
		/* Not "freed": CUDA could not say what the pointer is. */
		efault = "the range is not mapped host memory, and the CUDA "
			 "driver is not initialised in this process "
			 "(CUDA_ERROR_NOT_INITIALIZED), so device memory "
			 "cannot be recognised: initialise CUDA before "
			 "registering device memory; a child forked after its "
			 "parent used CUDA cannot register device memory at "
			 "all (exec a new program instead)";
		break;
	case GDR_HOST_NO_CUDA:
		efault = "the range is not mapped in this process (freed or "
			 "never allocated; CUDA is not loaded, so it is no "
			 "device memory either); pass memory the process owns";
		break;
	default:
		efault = "the range is not mapped in this process (freed, "
			 "never allocated, or a freed CUDA buffer); pass "
			 "memory the process owns";
		break;
	}
	return gdr_reg_va(req, efault, why, n);
}

static const struct gdr_check *const host_needs[] = { NULL };

const struct gdr_backend gdr_backend_host = {
	.path = GDR_PATH_HOST,
	.title = "host memory",
	.device_memory = false,
	.needs = host_needs,
	.reg = host_reg,
};
