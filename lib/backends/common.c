/* SPDX-License-Identifier: MIT */
/*
 * What every backend shares: whether one applies to a subject, and the
 * plain registration of a virtual address range (the host and peermem
 * backends) with its failure explained.
 */
#include <errno.h>
#include <string.h>

#include "backends.h"

const char gdr_access_hint[] = "; check the access flags";

bool gdr_backend_applies(const struct gdr_backend *b,
			 const struct gdr_subject *s)
{
	struct gdr_eval e;

	if (!b->applies)
		return true;
	gdr_check_eval(b->applies, s, &e, true);
	return e.pass != GDR_FAIL;
}

struct ibv_mr *gdr_reg_va(const struct gdr_req *req, const char *efault,
			  char *why, size_t n)
{
	const struct gdr_seam *s = gdr_seam();
	char words[96], clause[GDR_BAR1_CLAUSE_LEN];
	enum gdr_bar1_says bar1;
	struct ibv_mr *mr;
	int err;

	errno = 0;
	mr = s->verbs.reg_mr_iova2(req->pd, req->ptr, req->len, req->iova,
				   (unsigned)req->access);
	if (mr)
		return mr;
	err = errno ? errno : EIO;
	/* device memory (peermem): the NIC maps it through BAR1 */
	bar1 = req->cu ? gdr_bar1_cause(gdr_dev_get(req->pi.device), err,
					req->len, clause, sizeof(clause))
		       : GDR_BAR1_NOT_IT;
	gdr_fmt(why, n, "ibv_reg_mr(%p, %zu) on %s failed with %s%s", req->ptr,
		req->len, gdr_pd_name(req->pd),
		gdr_errno_words(err, words, sizeof(words)),
		bar1 == GDR_BAR1_LIKELY ? clause : "");
	if (err == EFAULT)
		gdr_append(why, n, "%s%s",
			   bar1 == GDR_BAR1_LIKELY ? "; if not that: " : ": ",
			   efault);
	else if (err == EINVAL)
		gdr_append(why, n, "%s", gdr_access_hint);
	if (err == ENOMEM && !req->cu)
		gdr_memlock_explain(why, n);
	if (bar1 == GDR_BAR1_UNKNOWN)
		gdr_append(why, n, "%s", clause);
	if (req->cu)
		gdr_iommu_explain(gdr_dev_name(req->pd->context), err, why, n);
	errno = err;
	return NULL;
}
