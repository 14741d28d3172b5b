/* SPDX-License-Identifier: MIT */
/*
 * Registration (lib/register/): the public entry points that pick a path
 * and walk the backends. Calls down to lib/backends/ and below.
 */
#ifndef GDR_REGISTER_H
#define GDR_REGISTER_H

#include "backends.h"

/* --- registration for the cache (gpudirect.c) ----------------------------- */
/* gdr_register_ex() without touching gdr_last_error(): 0 and the MR in
 * *@mr, or an errno with the message in @why. @pi: the buffer's
 * classification when the caller has it (NULL: classified here). */
int gdr_register_internal(struct ibv_pd *pd, void *ptr, size_t len,
			  const struct gdr_reg_attr *attr,
			  const struct gdr_ptr_info *pi, struct ibv_mr **mr,
			  char *why, size_t n);

#endif /* GDR_REGISTER_H */
