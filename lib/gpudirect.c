/* SPDX-License-Identifier: MIT */
/*
 * The public entry points and the one place where a registration decides:
 * validate, classify, then walk the backends in order of preference.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

const struct gdr_backend *const gdr_backends[] = {
	&gdr_backend_dmabuf,
	&gdr_backend_peermem,
	&gdr_backend_host,
};
const unsigned int gdr_num_backends =
	sizeof(gdr_backends) / sizeof(gdr_backends[0]);

#define ATTR_KNOWN                                                             \
	(GDR_REG_ATTR_ACCESS | GDR_REG_ATTR_PATH_MASK | GDR_REG_ATTR_FLAGS)
#define FLAGS_KNOWN (GDR_REG_STRICT_ORDERING | GDR_REG_SYNC_MEMOPS)
#define DEFAULT_ACCESS                                                         \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |                    \
	 IBV_ACCESS_REMOTE_READ)

static const char *const path_names[GDR_PATH_COUNT] = {
	[GDR_PATH_NONE] = "none",
	[GDR_PATH_DMABUF] = "dmabuf",
	[GDR_PATH_PEERMEM] = "peermem",
	[GDR_PATH_HOST] = "host",
};

GDR_EXPORT const char *gdr_path_str(enum gdr_path path)
{
	if ((unsigned)path >= GDR_PATH_COUNT)
		return "invalid";
	return path_names[path];
}

GDR_EXPORT int gdr_path_parse(const char *name, enum gdr_path *path)
{
	unsigned int i;

	if (name && path) {
		if (strcmp(name, "auto") == 0) {
			*path = GDR_PATH_NONE;
			return 0;
		}
		for (i = GDR_PATH_DMABUF; i < GDR_PATH_COUNT; i++) {
			if (strcmp(name, path_names[i]) == 0) {
				*path = (enum gdr_path)i;
				return 0;
			}
		}
	}
	errno = EINVAL;
	return -1;
}

GDR_EXPORT const char *gdr_mem_type_str(enum gdr_mem_type type)
{
	switch (type) {
	case GDR_MEM_HOST: return "host";
	case GDR_MEM_CUDA_HOST: return "cuda-host";
	case GDR_MEM_CUDA_DEVICE: return "cuda-device";
	case GDR_MEM_CUDA_MANAGED: return "cuda-managed";
	case GDR_MEM_CUDA_POOL: return "cuda-pool";
	case GDR_MEM_UNKNOWN: /* fall through */
	default: return "unknown";
	}
}

static const char *result_str(enum gdr_attempt_result r)
{
	return r == GDR_ATTEMPT_USED	 ? "used"
	       : r == GDR_ATTEMPT_FAILED ? "failed"
					 : "skipped";
}

static struct gdr_path_attempt *record(struct gdr_reg_info *rec,
				       const struct gdr_backend *b,
				       enum gdr_attempt_result result, int err,
				       const char *why)
{
	struct gdr_path_attempt *a = &rec->attempts[rec->num_attempts++];
	size_t n = strnlen(why, sizeof(a->reason) - 1);

	a->path = b->path;
	a->result = result;
	a->err = err;
	memcpy(a->reason, why, n);
	a->reason[n] = '\0';
	gdr_debug("%s: %s%s%s", b->name, result_str(result), *why ? ": " : "",
		  why);
	return a;
}

static int check_args(struct ibv_pd *pd, void *ptr, size_t len,
		      const struct gdr_reg_attr *attr)
{
	if (attr && (attr->comp_mask & ~(uint32_t)ATTR_KNOWN)) {
		gdr_fail(EINVAL,
			 "gdr_reg_attr.comp_mask has unknown bits 0x%x; this "
			 "library knows 0x%x: clear the others or use a newer "
			 "libgpudirect",
			 attr->comp_mask & ~(uint32_t)ATTR_KNOWN, ATTR_KNOWN);
		return -1;
	}
	if (attr && (attr->comp_mask & GDR_REG_ATTR_FLAGS) &&
	    (attr->flags & ~(uint32_t)FLAGS_KNOWN)) {
		gdr_fail(EINVAL,
			 "gdr_reg_attr.flags has unknown bits 0x%x; use "
			 "GDR_REG_STRICT_ORDERING and GDR_REG_SYNC_MEMOPS only",
			 attr->flags & ~(uint32_t)FLAGS_KNOWN);
		return -1;
	}
	if (attr && (attr->comp_mask & GDR_REG_ATTR_PATH_MASK) &&
	    (!attr->path_mask || (attr->path_mask & ~GDR_PATH_MASK_ALL))) {
		gdr_fail(EINVAL,
			 "gdr_reg_attr.path_mask 0x%x is empty or names no "
			 "path; combine GDR_PATH_BIT(GDR_PATH_DMABUF), "
			 "..._PEERMEM and ..._HOST",
			 attr->path_mask);
		return -1;
	}
	if (!pd) {
		gdr_fail(EINVAL, "pd is NULL; pass a protection domain from "
				 "ibv_alloc_pd()");
		return -1;
	}
	if (!ptr) {
		gdr_fail(EINVAL, "ptr is NULL; pass the buffer to register");
		return -1;
	}
	if (!len) {
		gdr_fail(EINVAL, "len is 0; register at least one byte");
		return -1;
	}
	if ((uintptr_t)ptr > UINTPTR_MAX - len) {
		gdr_fail(EINVAL,
			 "[%p, +%zu) wraps around the end of the address "
			 "space; check the length",
			 ptr, len);
		return -1;
	}
	return 0;
}

/* Join the reasons of the paths that could have taken this memory. */
static void explain(const struct gdr_reg_info *rec, bool device,
		    uint32_t mask, char *buf, size_t n)
{
	size_t used = strlen(buf);
	unsigned int i;

	for (i = 0; i < rec->num_attempts && used + 1 < n; i++) {
		const struct gdr_path_attempt *a = &rec->attempts[i];
		const struct gdr_backend *b = gdr_backends[i];

		/* A path for the other kind of memory says nothing, unless
		 * the caller forced it. */
		if (b->device_memory != device &&
		    mask != GDR_PATH_BIT(b->path))
			continue;
		gdr_fmt(buf + used, n - used, "%s%s %s: %s",
			used ? "; " : "", gdr_path_str(a->path),
			result_str(a->result), a->reason);
		used = strlen(buf);
	}
}

static struct ibv_mr *decide(struct gdr_req *req, uint32_t mask,
			     const char *mask_src, struct gdr_reg_info *rec)
{
	bool device = req->pi.type == GDR_MEM_CUDA_DEVICE;
	char why[GDR_REASON_LEN];
	char msg[GDR_MSG_LEN];
	int err = 0, first_hard = 0;
	struct ibv_mr *mr;
	unsigned int i;

	for (i = 0; i < gdr_num_backends; i++) {
		const struct gdr_backend *b = gdr_backends[i];
		int e;

		why[0] = '\0';
		if (!(mask & GDR_PATH_BIT(b->path))) {
			gdr_fmt(why, sizeof(why), "not allowed by %s", mask_src);
			record(rec, b, GDR_ATTEMPT_SKIPPED, 0, why);
			continue;
		}
		if (b->device_memory != device) {
			gdr_fmt(why, sizeof(why),
				"this path registers %s memory, the buffer is "
				"%s memory",
				b->device_memory ? "device" : "host",
				gdr_mem_type_str(req->pi.type));
			record(rec, b, GDR_ATTEMPT_SKIPPED, EOPNOTSUPP, why);
			continue;
		}
		e = b->eligible(req, why, sizeof(why));
		if (e) {
			record(rec, b, GDR_ATTEMPT_SKIPPED, e, why);
			if (!err)
				err = e;
			continue;
		}
		mr = b->reg(req, why, sizeof(why));
		if (mr) {
			record(rec, b, GDR_ATTEMPT_USED, 0, "");
			rec->path = b->path;
			return mr;
		}
		e = errno ? errno : EIO;
		record(rec, b, GDR_ATTEMPT_FAILED, e, why);
		err = e;
		/* Only "not supported" moves on to the next path. */
		if (!gdr_err_is_unsupported(e)) {
			first_hard = e;
			break;
		}
	}
	if (!err)
		err = EOPNOTSUPP;
	if (first_hard)
		err = first_hard;
	gdr_fmt(msg, sizeof(msg), "cannot register [%p, +%zu) (%s", req->ptr,
		req->len, gdr_mem_type_str(req->pi.type));
	if (device)
		gdr_fmt(msg + strlen(msg), sizeof(msg) - strlen(msg),
			" on GPU %d", req->pi.device);
	gdr_fmt(msg + strlen(msg), sizeof(msg) - strlen(msg), ") with %s: ",
		gdr_pd_name(req->pd));
	explain(rec, device, mask, msg + strlen(msg), sizeof(msg) - strlen(msg));
	return gdr_fail(err, "%s", msg);
}

GDR_EXPORT struct ibv_mr *gdr_register_ex(struct ibv_pd *pd, void *ptr,
					  size_t len,
					  const struct gdr_reg_attr *attr,
					  struct gdr_reg_info *info)
{
	const struct gdr_node *node;
	struct gdr_reg_info rec;
	struct gdr_req req;
	const char *mask_src = "the default";
	uint32_t mask = GDR_PATH_MASK_ALL;
	struct ibv_mr *mr = NULL;
	int saved;

	memset(&rec, 0, sizeof(rec));
	rec.device = -1;
	gdr_clear_error();
	if (check_args(pd, ptr, len, attr))
		goto out;
	node = gdr_node_get();
	if (attr && (attr->comp_mask & GDR_REG_ATTR_PATH_MASK)) {
		mask = attr->path_mask;
		mask_src = "gdr_reg_attr.path_mask";
	} else if (node->env_error[0]) {
		gdr_fail(EINVAL, "%s", node->env_error);
		goto out;
	} else if (node->env_mask) {
		mask = node->env_mask;
		mask_src = "GPUDIRECT_PATH";
	}

	memset(&req, 0, sizeof(req));
	req.pd = pd;
	req.ptr = ptr;
	req.len = len;
	req.node = node;
	req.flags = attr && (attr->comp_mask & GDR_REG_ATTR_FLAGS) ? attr->flags
								   : 0;
	if (gdr_classify(node, ptr, len, &req.pi)) {
		rec.mem_type = req.pi.type;
		rec.device = req.pi.device;
		goto out;
	}
	rec.mem_type = req.pi.type;
	rec.device = req.pi.device;
	if (attr && (attr->comp_mask & GDR_REG_ATTR_ACCESS)) {
		req.access = attr->access;
	} else {
		req.access = DEFAULT_ACCESS;
		if (req.pi.type == GDR_MEM_CUDA_DEVICE &&
		    !(req.flags & GDR_REG_STRICT_ORDERING))
			req.access |= IBV_ACCESS_RELAXED_ORDERING;
	}
	gdr_debug("register %p +%zu: %s%s%d, access 0x%x, paths 0x%x (%s)",
		  ptr, len, gdr_mem_type_str(req.pi.type),
		  req.pi.device >= 0 ? " on GPU " : " ", req.pi.device,
		  req.access, mask, mask_src);
	mr = decide(&req, mask, mask_src, &rec);
out:
	saved = errno;
	if (info && (info->comp_mask & GDR_REG_INFO_BASIC)) {
		rec.comp_mask = info->comp_mask;
		*info = rec;
	}
	if (mr)
		gdr_clear_error();
	else
		errno = saved;
	return mr;
}

GDR_EXPORT struct ibv_mr *gdr_register(struct ibv_pd *pd, void *ptr,
				       size_t len)
{
	return gdr_register_ex(pd, ptr, len, NULL, NULL);
}

GDR_EXPORT int gdr_deregister(struct ibv_mr *mr)
{
	int err;

	gdr_clear_error();
	if (!mr) {
		gdr_fail(EINVAL, "mr is NULL; pass an MR from gdr_register()");
		return EINVAL;
	}
	err = gdr_seam()->verbs.dereg_mr(mr);
	if (err) {
		gdr_fail(err,
			 "ibv_dereg_mr failed with %s (%s); the MR stays "
			 "registered: destroy the memory windows bound to it "
			 "first",
			 gdr_errno_name(err), strerror(err));
	}
	return err;
}
