/* SPDX-License-Identifier: MIT */
/* Reading the report's items back (the self-test, the NFD labels). */
#ifndef GDR_INFO_ITEMS_H
#define GDR_INFO_ITEMS_H

#include <gpudirect.h>

/*
 * The value of @key in @section of @scope (an RDMA device may be named
 * "node" or "gpu0": the scope tells them apart), its verdict in *@v when
 * @v is not NULL; NULL when the report has no such item. The string
 * belongs to the report.
 */
const char *report_value(const struct gdr_report *r,
			 enum gdr_report_scope scope, const char *section,
			 const char *key, enum gdr_verdict *v);

/* The report's CUDA device count (its node item cuda_devices), 0 when it
 * has none or it is not a number. */
int report_gpus(const struct gdr_report *r);

/* The report's RDMA devices in order, their names (the report's strings)
 * in @names: how many, at most @max. */
unsigned int report_rdma_devices(const struct gdr_report *r, const char **names,
				 unsigned int max);

#endif
