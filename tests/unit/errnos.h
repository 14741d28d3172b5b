/* SPDX-License-Identifier: MIT */
/*
 * Every public call a test makes, recorded with the errno it fails with
 * (errno_seen, $GDR_ERRNOS_OUT), for the errno contract: check-errnos.py
 * compares what the tests saw with tests/unit/errnos.txt and the man
 * pages. Include after gpudirect.h; the parenthesised names below call the
 * library itself.
 */
#ifndef GDR_TEST_ERRNOS_H
#define GDR_TEST_ERRNOS_H

#include <errno.h>

#include "fakes.h"

static inline struct ibv_mr *rec_register(struct ibv_pd *pd, void *p, size_t n)
{
	struct ibv_mr *mr = (gdr_register)(pd, p, n);

	if (!mr)
		errno_seen("gdr_register", errno);
	return mr;
}

static inline struct ibv_mr *rec_register_ex(struct ibv_pd *pd, void *p,
					     size_t n,
					     const struct gdr_reg_attr *a,
					     struct gdr_reg_info *i, size_t is)
{
	struct ibv_mr *mr = (gdr_register_ex)(pd, p, n, a, i, is);

	if (!mr)
		errno_seen("gdr_register_ex", errno);
	return mr;
}

static inline int rec_deregister(struct ibv_mr *mr)
{
	int err = (gdr_deregister)(mr);

	errno_seen("gdr_deregister", err);
	return err;
}

static inline struct gdr_cache *rec_cache_create(struct ibv_pd *pd,
						 const struct gdr_cache_attr *a)
{
	struct gdr_cache *c = (gdr_cache_create)(pd, a);

	if (!c)
		errno_seen("gdr_cache_create", errno);
	return c;
}

static inline int rec_cache_destroy(struct gdr_cache *c)
{
	int err = (gdr_cache_destroy)(c);

	errno_seen("gdr_cache_destroy", err);
	return err;
}

static inline struct ibv_mr *rec_cache_get(struct gdr_cache *c, void *p,
					   size_t n)
{
	struct ibv_mr *mr = (gdr_cache_get)(c, p, n);

	if (!mr)
		errno_seen("gdr_cache_get", errno);
	return mr;
}

static inline int rec_cache_put(struct gdr_cache *c, struct ibv_mr *mr)
{
	int err = (gdr_cache_put)(c, mr);

	errno_seen("gdr_cache_put", err);
	return err;
}

static inline int rec_cache_invalidate(struct gdr_cache *c, void *p, size_t n)
{
	int err = (gdr_cache_invalidate)(c, p, n);

	errno_seen("gdr_cache_invalidate", err);
	return err;
}

static inline int rec_cache_purge(struct gdr_cache *c)
{
	int err = (gdr_cache_purge)(c);

	errno_seen("gdr_cache_purge", err);
	return err;
}

static inline int rec_cache_query_stats(struct gdr_cache *c,
					struct gdr_cache_stats *s, size_t n)
{
	int err = (gdr_cache_query_stats)(c, s, n);

	errno_seen("gdr_cache_query_stats", err);
	return err;
}

static inline struct gdr_report *
rec_report_create(struct ibv_context *const *ctxs, unsigned int n,
		  unsigned int flags)
{
	struct gdr_report *r = (gdr_report_create)(ctxs, n, flags);

	if (!r)
		errno_seen("gdr_report_create", errno);
	return r;
}

static inline int rec_report_item(const struct gdr_report *r, unsigned int i,
				  struct gdr_report_item *it, size_t n)
{
	int rc = (gdr_report_item)(r, i, it, n);

	if (rc)
		errno_seen("gdr_report_item", errno);
	return rc;
}

static inline int rec_report_print(const struct gdr_report *r, FILE *f,
				   enum gdr_report_format fmt)
{
	int rc = (gdr_report_print)(r, f, fmt);

	if (rc)
		errno_seen("gdr_report_print", errno);
	return rc;
}

static inline int rec_register_multi(struct ibv_pd *const *pds,
				     unsigned int num, void *p, size_t n,
				     const struct gdr_reg_attr *a,
				     struct ibv_mr **mrs,
				     struct gdr_reg_info *infos, size_t is)
{
	int rc = (gdr_register_multi)(pds, num, p, n, a, mrs, infos, is);

	if (rc)
		errno_seen("gdr_register_multi", errno);
	return rc;
}

static inline int rec_deregister_multi(struct ibv_mr **mrs, unsigned int num)
{
	int err = (gdr_deregister_multi)(mrs, num);

	errno_seen("gdr_deregister_multi", err);
	return err;
}

static inline int rec_rank_nics(const struct gdr_rank_attr *a,
				struct ibv_context *const *ctxs,
				unsigned int num_ctxs, struct gdr_nic_rank *out,
				unsigned int *num_out, size_t rank_size)
{
	int rc = (gdr_rank_nics)(a, ctxs, num_ctxs, out, num_out, rank_size);

	if (rc)
		errno_seen("gdr_rank_nics", errno);
	return rc;
}

#define gdr_register_multi(...) rec_register_multi(__VA_ARGS__)
#define gdr_deregister_multi(...) rec_deregister_multi(__VA_ARGS__)
#define gdr_rank_nics(...) rec_rank_nics(__VA_ARGS__)
#define gdr_register(...) rec_register(__VA_ARGS__)
#define gdr_register_ex(...) rec_register_ex(__VA_ARGS__)
#define gdr_deregister(...) rec_deregister(__VA_ARGS__)
#define gdr_cache_create(...) rec_cache_create(__VA_ARGS__)
#define gdr_cache_destroy(...) rec_cache_destroy(__VA_ARGS__)
#define gdr_cache_get(...) rec_cache_get(__VA_ARGS__)
#define gdr_cache_put(...) rec_cache_put(__VA_ARGS__)
#define gdr_cache_invalidate(...) rec_cache_invalidate(__VA_ARGS__)
#define gdr_cache_purge(...) rec_cache_purge(__VA_ARGS__)
#define gdr_cache_query_stats(...) rec_cache_query_stats(__VA_ARGS__)
#define gdr_report_create(...) rec_report_create(__VA_ARGS__)
#define gdr_report_item(...) rec_report_item(__VA_ARGS__)
#define gdr_report_print(...) rec_report_print(__VA_ARGS__)

#endif
