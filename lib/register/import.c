/* SPDX-License-Identifier: MIT */
/*
 * Registering a dma-buf this process was given: another process's export
 * (a descriptor and its fds) or a bare fd from any exporter. The same walk,
 * record and words as gdr_register_ex(), over the paths that take a
 * dma-buf (Data Direct with a PCIe-mapped fd, DMA-BUF); the GPU's side was
 * the exporter's business, so no CUDA is asked here.
 */
#include <errno.h>
#include <string.h>

#include "register.h"

/* The paths a dma-buf can take: there is no address to pin or lock. */
#define IMPORT_PATHS                                                           \
	(GDR_PATH_BIT(GDR_PATH_DATA_DIRECT) | GDR_PATH_BIT(GDR_PATH_DMABUF))

static const char no_pcie_desc[] =
	"the export has no PCIe-mapped dma-buf: have the owner export with "
	"GDR_EXPORT_PCIE_MAPPING (needed for a NIC with a Data Direct "
	"function)";
static const char no_pcie_bare[] =
	"a bare dma-buf fd is taken as plainly mapped; pass "
	"GDR_REG_PCIE_MAPPING if it has the PCIe mapping";
/* (Never said: DMA-BUF takes fd[GDR_REG_PCIE_MAPPING], which is there.) */
static const char no_plain[] = "the import has no plainly mapped dma-buf";

/* The options that mean nothing for a dma-buf: 0, or EINVAL and why. */
static int check_attr(const struct gdr_reg_attr *attr, char *why, size_t n)
{
	if (!attr)
		return 0;
	if ((attr->comp_mask & GDR_REG_ATTR_FLAGS) &&
	    (attr->flags &
	     (GDR_REG_SYNC_MEMOPS | GDR_REG_OWNER_RDMA_CAPABLE))) {
		gdr_fmt(why, n,
			"gdr_reg_attr.flags 0x%x: GDR_REG_SYNC_MEMOPS and "
			"GDR_REG_OWNER_RDMA_CAPABLE are about the owner's "
			"allocation and do not apply to a dma-buf; set them "
			"in the owning process",
			attr->flags);
		return EINVAL;
	}
	if ((attr->comp_mask & GDR_REG_ATTR_PATH_MASK) &&
	    (attr->path_mask & ~(uint32_t)IMPORT_PATHS)) {
		gdr_fmt(why, n,
			"gdr_reg_attr.path_mask 0x%x: a dma-buf registers "
			"through GDR_PATH_DATA_DIRECT or GDR_PATH_DMABUF only "
			"(nvidia-peermem and host registration need an "
			"address in this process)",
			attr->path_mask);
		return EINVAL;
	}
	return 0;
}

/* How a message names @fd: "fd" for a bare one, "fds[i] (fd)" for the
 * descriptor's @i-th (formatted only for a message). */
static void fd_name(int fd, int i, char *name, size_t n)
{
	if (i < 0)
		gdr_copy(name, n, "fd");
	else
		gdr_fmt(name, n, "fds[%d] (%d)", i, fd);
}

/* What the kernel says of @fd (the descriptor's @i-th, or bare when @i is
 * -1), checked to be a dma-buf: 0, or an errno (EBADF, EINVAL for another
 * kind of file) with the fd named in the reason. */
static int dmabuf_of(int fd, int i, struct gdr_dmabuf_facts *f, char *why,
		     size_t n)
{
	char detail[GDR_WHY_LEN], name[32];
	int err;

	err = gdr_seam()->dmabuf_facts(fd, f, detail, sizeof(detail));
	if (!err)
		return 0;
	fd_name(fd, i, name, sizeof(name));
	if (err == GDR_ENOTDMABUF) {
		gdr_fmt(why, n,
			"%s: %s; pass the fd the exporter gave "
			"(cuMemGetHandleForAddressRange, gdr_export, udmabuf)",
			name, detail);
		return EINVAL;
	}
	gdr_fmt(why, n, "%s: %s", name, detail);
	return err == EBADF ? EBADF : err;
}

int gdr_import_check(const struct gdr_export_desc *desc, const int *fds,
		     struct gdr_import_src *imp, char *why, size_t n)
{
	struct gdr_dmabuf_facts f;
	char name[32], detail[GDR_WHY_LEN];
	unsigned int i, m;
	int err;

	if (!desc || !fds) {
		gdr_fmt(why, n,
			"desc and fds must not be NULL; pass what "
			"gdr_export_recv() (or gdr_export()) gave");
		return EINVAL;
	}
	/* The same checks a descriptor passes on the wire. */
	if (gdr_desc_check(desc, detail, sizeof(detail))) {
		gdr_fmt(why, n, "desc is not a valid export descriptor: %s",
			detail);
		return EINVAL;
	}
	memset(imp, 0, sizeof(*imp));
	imp->fd[0] = imp->fd[1] = -1;
	imp->index[0] = imp->index[1] = -1;
	imp->offset = desc->offset;
	imp->size = desc->dmabuf_size;
	imp->no_pcie = no_pcie_desc;
	imp->no_plain = no_plain;
	for (i = 0; i < desc->num_fds; i++) {
		err = dmabuf_of(fds[i], (int)i, &f, why, n);
		if (err)
			return err;
		if (f.ino != desc->dmabuf_ino[i] ||
		    f.size != desc->dmabuf_size) {
			fd_name(fds[i], (int)i, name, sizeof(name));
			gdr_fmt(why, n,
				"%s is not the dma-buf the descriptor names "
				"(inode %llu of %llu bytes, not inode %llu of "
				"%llu bytes): pass the fds that came with the "
				"descriptor, in their order",
				name, (unsigned long long)f.ino,
				(unsigned long long)f.size,
				(unsigned long long)desc->dmabuf_ino[i],
				(unsigned long long)desc->dmabuf_size);
			return EINVAL;
		}
		m = desc->mapping[i];
		imp->fd[m] = fds[i];
		imp->index[m] = (int)i;
	}
	return 0;
}

/* Set up @call for the import @imp (checked). */
static void call_import(struct gdr_reg_call *call,
			const struct gdr_import_src *imp)
{
	gdr_reg_call_init(call);
	call->imp = imp;
	gdr_exports_import(&call->xs, imp);
	call->pi.type = GDR_MEM_DMABUF;
	call->pi.device = -1;
	call->classified = true;
}

/* One import on one PD, as register_ex() does for a pointer. */
static struct ibv_mr *import_one(struct ibv_pd *pd,
				 const struct gdr_import_src *imp,
				 uint64_t iova, size_t len,
				 const struct gdr_reg_attr *attr,
				 struct gdr_reg_info *info, size_t info_size)
{
	struct gdr_reg_info rec;
	struct gdr_reg_call call;
	struct ibv_mr *mr;
	char why[GDR_MSG_LEN];
	int err;

	call_import(&call, imp);
	err = gdr_reg_one(&call, pd, (void *)(uintptr_t)iova, len, attr,
			  IMPORT_PATHS, &rec, info != NULL, &mr, why,
			  sizeof(why));
	gdr_reg_call_end(&call);
	if (info)
		gdr_reg_give_info(&rec, info, info_size, false);
	if (!err)
		return mr;
	return gdr_fail(err, "%s", why);
}

/* A failure before any path: the record says "nothing", as for a
 * pointer whose arguments were refused. */
static struct ibv_mr *refuse(int err, const char *why,
			     struct gdr_reg_info *info, size_t info_size)
{
	struct gdr_reg_info rec;

	if (info) {
		memset(&rec, 0, sizeof(rec));
		rec.device = -1;
		rec.export_index = -1;
		gdr_reg_give_info(&rec, info, info_size, false);
	}
	return gdr_fail(err, "%s", why);
}

/* What both single-PD calls begin with: true when the record's size or
 * the options are refused (gdr_last_error() and the record say so). */
static bool refused_at_start(const struct gdr_reg_attr *attr,
			     struct gdr_reg_info *info, size_t info_size)
{
	char why[GDR_MSG_LEN];
	int err;

	gdr_clear_error();
	if (info && info_size < GDR_REG_INFO_MIN_SIZE) {
		gdr_reg_small_info(info_size);
		return true;
	}
	err = check_attr(attr, why, sizeof(why));
	if (err)
		refuse(err, why, info, info_size);
	return err != 0;
}

GDR_PUBLIC struct ibv_mr *
gdr_import_register(struct ibv_pd *pd, const struct gdr_export_desc *desc,
		    const int *fds, const struct gdr_reg_attr *attr,
		    struct gdr_reg_info *info, size_t info_size)
{
	struct gdr_import_src imp;
	char why[GDR_MSG_LEN];
	int err;

	if (refused_at_start(attr, info, info_size))
		return NULL;
	err = gdr_import_check(desc, fds, &imp, why, sizeof(why));
	if (err)
		return refuse(err, why, info, info_size);
	return import_one(pd, &imp, desc->iova, desc->length, attr, info,
			  info_size);
}

GDR_PUBLIC struct ibv_mr *
gdr_register_dmabuf(struct ibv_pd *pd, int fd, uint64_t offset, size_t len,
		    uint64_t iova, const struct gdr_reg_attr *attr,
		    struct gdr_reg_info *info, size_t info_size)
{
	struct gdr_import_src imp;
	struct gdr_dmabuf_facts f;
	char why[GDR_MSG_LEN];
	bool pcie;
	int err;

	if (refused_at_start(attr, info, info_size))
		return NULL;
	err = dmabuf_of(fd, -1, &f, why, sizeof(why));
	if (!err && (!len || offset >= f.size || len > f.size - offset)) {
		gdr_fmt(why, sizeof(why),
			"offset %llu + len %zu does not fit in the dma-buf's "
			"%llu bytes (fd %d)%s",
			(unsigned long long)offset, len,
			(unsigned long long)f.size, fd,
			len ? "" : "; register at least one byte");
		err = EINVAL;
	}
	if (!err && iova > UINT64_MAX - len) {
		gdr_fmt(why, sizeof(why),
			"iova 0x%llx + len %zu wraps around the end of the "
			"address space",
			(unsigned long long)iova, len);
		err = EINVAL;
	}
	if (err)
		return refuse(err, why, info, info_size);
	pcie = attr && (attr->comp_mask & GDR_REG_ATTR_FLAGS) &&
	       (attr->flags & GDR_REG_PCIE_MAPPING);
	memset(&imp, 0, sizeof(imp));
	imp.fd[pcie] = fd;
	imp.fd[!pcie] = -1;
	imp.index[pcie] = 0;
	imp.index[!pcie] = -1;
	imp.offset = offset;
	imp.size = f.size;
	imp.no_pcie = no_pcie_bare;
	imp.no_plain = no_plain;
	return import_one(pd, &imp, iova, len, attr, info, info_size);
}

/* gdr_reg_multi()'s preparation: the import checked, the call set up. */
struct multi_import {
	const struct gdr_export_desc *desc;
	const int *fds;
	const struct gdr_reg_attr *attr;
	struct gdr_import_src imp;
};

static int prepare_multi(struct gdr_reg_call *call, void *arg, char *why,
			 size_t n)
{
	struct multi_import *m = arg;
	int err;

	err = check_attr(m->attr, why, n);
	if (!err)
		err = gdr_import_check(m->desc, m->fds, &m->imp, why, n);
	if (err)
		return err;
	call_import(call, &m->imp);
	return 0;
}

GDR_PUBLIC int
gdr_import_register_multi(struct ibv_pd *const *pds, unsigned int num,
			  const struct gdr_export_desc *desc, const int *fds,
			  const struct gdr_reg_attr *attr, struct ibv_mr **mrs,
			  struct gdr_reg_info *infos, size_t info_size)
{
	struct multi_import m = { .desc = desc, .fds = fds, .attr = attr };

	return gdr_reg_multi("gdr_import_register_multi", pds, num,
			     desc ? (void *)(uintptr_t)desc->iova : NULL,
			     desc ? desc->length : 0, attr, IMPORT_PATHS, mrs,
			     infos, info_size, prepare_multi, &m);
}
