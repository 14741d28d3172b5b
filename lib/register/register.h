/* SPDX-License-Identifier: MIT */
/*
 * Registration (lib/register/): the public entry points that pick a path
 * and walk the backends. Calls down to lib/backends/ and below.
 */
#ifndef GDR_REGISTER_H
#define GDR_REGISTER_H

#include "backends.h"

/* --- one registration call (gpudirect.c) ------------------------------------ */
/*
 * The decision of a multi-PD call's last registered PD, made without
 * texts: the paths skipped before the one that registered, and the
 * answers of the PD's device. A later PD whose device answered alike
 * takes the same decision without asking the conditions again: the node's
 * and the GPU's verdicts are the call's (its memo), a device's follow from
 * its answers, and the one verdict that can change within a call (the
 * PCIe mapping, refused once tried) only ever changes to a refusal, which
 * does not revive a path skipped already. Kept only when every path before
 * the one used was skipped and the used one has no such condition.
 */
struct gdr_reg_decided {
	bool valid;
	unsigned int used;  /* the index of the backend that registered */
	struct gdr_nic nic; /* its device's answers (device memory) */
	struct {	    /* each GDR_ATTEMPT_SKIPPED */
		enum gdr_path path;
		int err;
		unsigned char later;
		bool cond;
	} skipped[GDR_REG_INFO_MAX_ATTEMPTS];
};

/*
 * What the registrations of one call share: the buffer's classification,
 * made once, whether GDR_REG_SYNC_MEMOPS was applied, and the dma-buf
 * exports (closed by gdr_reg_call_end()). gdr_reg_call_init() clears
 * what comes before @memo; the rest is valid only as its flags say.
 */
struct gdr_reg_call {
	/* an imported dma-buf (import.c; its exports set with
	 * gdr_exports_import), or NULL */
	const struct gdr_import_src *imp;
	/* the MR's iova when not the buffer's address (the preload) */
	bool has_iova;
	uint64_t iova;
	struct gdr_ptr_info pi;
	bool classified;
	bool synced;
	/* A multi-PD call: what its first PD settled (the arguments, the
	 * mask, the request) serves the later PDs, and each decision is kept
	 * for the next PD. */
	bool reuse;
	bool settled; /* @req, @mask, @mask_src */
	/* the path mask and where it came from */
	uint32_t mask;
	const char *mask_src;
	/* node and GPU verdicts, asked once for all the call's PDs */
	struct gdr_check_memo memo;
	struct gdr_exports xs; /* gdr_exports_init() */
	struct gdr_req req;
	struct gdr_reg_decided decided;
};
void gdr_reg_call_init(struct gdr_reg_call *call);
void gdr_reg_call_end(struct gdr_reg_call *call);
/*
 * Register [@ptr, +@len) on @pd as part of @call, trying the paths in
 * @known: 0 and *@mr, or an errno with the message in @why. @rec is the
 * decision record (@texts: write every reason into it).
 */
int gdr_reg_one(struct gdr_reg_call *call, struct ibv_pd *pd, void *ptr,
		size_t len, const struct gdr_reg_attr *attr, uint32_t known,
		struct gdr_reg_info *rec, bool texts, struct ibv_mr **mr,
		char *why, size_t n);
/* An info_size below GDR_REG_INFO_MIN_SIZE refused: NULL, errno EINVAL,
 * the words in gdr_last_error(). */
struct ibv_mr *gdr_reg_small_info(size_t info_size);
/* Every path bit this library knows. */
uint32_t gdr_reg_paths(void);
/* Copy what fits of @rec into the caller's @info of @size bytes (@v0_1:
 * a caller built against 0.1). */
void gdr_reg_give_info(const struct gdr_reg_info *rec,
		       struct gdr_reg_info *info, size_t size, bool v0_1);

/* --- one buffer on several PDs (multi.c) ---------------------------------- */
/*
 * gdr_register_multi() over the paths in @known, named @name in its
 * messages, with @prepare (or NULL)
 * run on the call after the arguments are checked (an errno there fails
 * the call as a whole, the reason in @why). Sets gdr_last_error(); 0 or -1.
 */
int gdr_reg_multi(const char *name, struct ibv_pd *const *pds, unsigned int num,
		  void *ptr, size_t len, const struct gdr_reg_attr *attr,
		  uint32_t known, struct ibv_mr **mrs,
		  struct gdr_reg_info *infos, size_t info_size,
		  int (*prepare)(struct gdr_reg_call *call, void *arg,
				 char *why, size_t n),
		  void *arg);

/* --- imports (import.c) ---------------------------------------------------- */
/* Check @desc and its @fds (dma-bufs, the descriptor's own) and describe
 * them in *@imp: 0, or EINVAL/EBADF with the reason in @why. */
int gdr_import_check(const struct gdr_export_desc *desc, const int *fds,
		     struct gdr_import_src *imp, char *why, size_t n);

/* --- registration for the preload (gpudirect.c) --------------------------- */
/*
 * [@ptr, +@len) classified here and, if it is device memory the library
 * registers, registered with exactly the caller's @access at @iova,
 * without touching gdr_last_error(): 0 and the MR in *@mr; ENXIO with @why
 * "" when it is not device memory (host, managed, unknown to CUDA, or no
 * CUDA loaded: the caller passes it on); else an errno with the message
 * in @why. Never loads CUDA.
 */
int gdr_register_device_iova(struct ibv_pd *pd, void *ptr, size_t len,
			     uint64_t iova, int access, struct ibv_mr **mr,
			     char *why, size_t n);

/* --- registration for the cache (gpudirect.c) ----------------------------- */
/* gdr_register_ex() without touching gdr_last_error(): 0 and the MR in
 * *@mr, or an errno with the message in @why. @pi: the buffer's
 * classification when the caller has it (NULL: classified here). */
int gdr_register_internal(struct ibv_pd *pd, void *ptr, size_t len,
			  const struct gdr_reg_attr *attr,
			  const struct gdr_ptr_info *pi, struct ibv_mr **mr,
			  char *why, size_t n);

#endif /* GDR_REGISTER_H */
