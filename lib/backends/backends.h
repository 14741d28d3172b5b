/* SPDX-License-Identifier: MIT */
/*
 * The registration paths (lib/backends/): one file per path behind
 * struct gdr_backend, and what they share (common.c). Calls down to
 * lib/node/ and below.
 */
#ifndef GDR_BACKENDS_H
#define GDR_BACKENDS_H

#include "node.h"

/* --- backends (dmabuf.c, data-direct.c, peermem.c, host.c, common.c) ----- */
struct gdr_exports;

/*
 * A dma-buf this process was given (lib/register/import.c): the caller's
 * fds, never closed here, and where the buffer lies in them. No CUDA is
 * asked about it: the conditions of the GPU's side are the exporter's.
 */
struct gdr_import_src {
	int fd[2];    /* [pcie]: the plain and the PCIe-mapped dma-buf, or -1 */
	int index[2]; /* [pcie]: the fd's index in the caller's array */
	uint64_t offset; /* the buffer's first byte in the dma-buf */
	uint64_t size;	 /* the dma-buf's bytes */
	/* why an fd is missing, for the path that would have used it */
	const char *no_pcie;
	const char *no_plain;
};

/* One registration request, as the dispatcher hands it to a backend. */
struct gdr_req {
	struct ibv_pd *pd;
	void *ptr; /* an import: its iova, for words and mr->addr */
	size_t len;
	uint64_t iova; /* the MR's address on the wire */
	int access;
	uint32_t flags; /* GDR_REG_* */
	const struct gdr_node *node;
	const struct gdr_cuda_ops *cu; /* NULL for host memory */
	struct gdr_ptr_info pi;
	bool nic_pci; /* the RDMA device has a PCI parent */
	/* the call's dma-buf exports, shared by all its PDs (export.c) */
	struct gdr_exports *xs;
	/* the call's node and GPU verdicts (conditions.c) */
	struct gdr_check_memo *memo;
	/* an imported dma-buf, or NULL */
	const struct gdr_import_src *imp;
};

struct gdr_backend {
	enum gdr_path path;
	const char *title; /* in the report: "DMA-BUF", "nvidia-peermem" */
	/* true: registers CUDA device memory; false: host memory */
	bool device_memory;
	/* The conditions it needs, NULL-terminated; its eligibility is the
	 * first that fails. */
	const struct gdr_check *const *needs;
	/* Where this condition fails the path does not apply to the pair at
	 * all (no Data Direct function): the report does not name it as
	 * unavailable. NULL: it always applies. */
	const struct gdr_check *applies;
	/* The MR, or NULL with errno set and the reason in @why. */
	struct ibv_mr *(*reg)(const struct gdr_req *req, char *why, size_t n);
};

extern const struct gdr_backend gdr_backend_data_direct;
extern const struct gdr_backend gdr_backend_dmabuf;
extern const struct gdr_backend gdr_backend_peermem;
extern const struct gdr_backend gdr_backend_host;

/* Does path @b concern @s's pair at all (its `applies` condition)? */
bool gdr_backend_applies(const struct gdr_backend *b,
			 const struct gdr_subject *s);

/* Every backend, in order of preference; NULL-terminated. */
extern const struct gdr_backend *const gdr_backends[];

/* The host and peermem backends: ibv_reg_mr_iova2(ptr, iova = ptr) with
 * the failure explained; @efault names the likely cause of EFAULT. */
struct ibv_mr *gdr_reg_va(const struct gdr_req *req, const char *efault,
			  char *why, size_t n);

/* --- dmabuf arithmetic and export (export.c) ---------------------------- */
struct gdr_dmabuf_range {
	uintptr_t base;	 /* first byte exported, page aligned */
	size_t size;	 /* bytes exported, page multiple */
	uint64_t offset; /* ptr - base */
};
/* 0, or EINVAL when ptr + len overflows after alignment. */
int gdr_dmabuf_range(uintptr_t ptr, size_t len, long page,
		     struct gdr_dmabuf_range *r);
/*
 * The dma-buf exports of one registration call, shared by every PD a
 * multi-PD registration covers: at most one plain and one PCIe-mapped
 * export of the buffer's span, each made once, when a PD's path first needs
 * it, and closed once by gdr_exports_close() (each MR holds its own
 * reference to the dma-buf).
 */
struct gdr_exports {
	int fd[2]; /* [pcie]; -1: not exported */
	struct gdr_dmabuf_range r[2];
	int number[2]; /* [pcie]: the export's number in the call, or -1 */
	int count;     /* exports made */
	int last;      /* number of the export the last registration used */
	/* [pcie]: an export that failed, not asked again within the call:
	 * its errno (0: none), the driver's answer and the reason */
	int err[2];
	CUresult res[2];
	char why[2][GDR_WHY_LEN];
	/* [pcie], an import's where err is set: its constant reason, which
	 * stands for why[] (pointed to, not copied each call) */
	const char *said[2];
	bool borrowed; /* the fds are an import's: never closed here */
};
/* What a registration that the kernel refused with EINVAL adds. */
extern const char gdr_access_hint[];
void gdr_exports_init(struct gdr_exports *x);
/* The exports of an import: its fds, as if exported (a missing one is
 * refused with its reason); gdr_exports_close() leaves them open. */
void gdr_exports_import(struct gdr_exports *x,
			const struct gdr_import_src *imp);
void gdr_exports_close(struct gdr_exports *x);

/*
 * Export the page-aligned span around req's buffer as a dma-buf (with the
 * PCIe mapping if @pcie) under the right context, or hand out the call's
 * export of it made for an earlier PD (req->xs). 0 with *@fd and *@r, or
 * an errno with the reason in @why; *@res is the driver's answer. The fd
 * belongs to req->xs: gdr_exports_close() closes it.
 */
int gdr_dmabuf_export(const struct gdr_req *req, bool pcie,
		      struct gdr_dmabuf_range *r, int *fd, CUresult *res,
		      char *why, size_t n);
/* After a registration call named @call (errno set by it when @mr is
 * NULL): fix mr->addr, or explain the failure. */
struct ibv_mr *gdr_dmabuf_finish(const struct gdr_req *req,
				 const struct gdr_dmabuf_range *r,
				 struct ibv_mr *mr, const char *call,
				 const char *extra, char *why, size_t n);

#endif /* GDR_BACKENDS_H */
