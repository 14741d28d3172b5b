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
 * What the registrations of one call share: the buffer's classification,
 * made once, whether GDR_REG_SYNC_MEMOPS was applied, and the dma-buf
 * exports (closed by gdr_reg_call_end()).
 */
struct gdr_reg_call {
	struct gdr_ptr_info pi;
	bool classified;
	bool synced;
	struct gdr_exports xs;
	/* node and GPU verdicts, asked once for all the call's PDs */
	struct gdr_check_memo memo;
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
/* Every path bit this library knows. */
uint32_t gdr_reg_paths(void);
/* Copy what fits of @rec into the caller's @info of @size bytes (@v0_1:
 * a caller built against 0.1). */
void gdr_reg_give_info(const struct gdr_reg_info *rec,
		       struct gdr_reg_info *info, size_t size, bool v0_1);

/* --- registration for the cache (gpudirect.c) ----------------------------- */
/* gdr_register_ex() without touching gdr_last_error(): 0 and the MR in
 * *@mr, or an errno with the message in @why. @pi: the buffer's
 * classification when the caller has it (NULL: classified here). */
int gdr_register_internal(struct ibv_pd *pd, void *ptr, size_t len,
			  const struct gdr_reg_attr *attr,
			  const struct gdr_ptr_info *pi, struct ibv_mr **mr,
			  char *why, size_t n);

#endif /* GDR_REGISTER_H */
