/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "count.h"
#include "items.h"

const char *report_value(const struct gdr_report *r,
			 enum gdr_report_scope scope, const char *section,
			 const char *key, enum gdr_verdict *v)
{
	struct gdr_report_item it;
	unsigned int i;

	for (i = 0; i < gdr_report_num_items(r); i++) {
		memset(&it, 0, sizeof(it));
		if (gdr_report_item(r, i, &it, sizeof(it)) ||
		    it.scope != scope || strcmp(it.section, section) ||
		    strcmp(it.key, key))
			continue;
		if (v)
			*v = it.verdict;
		return it.value;
	}
	return NULL;
}

unsigned int report_rdma_devices(const struct gdr_report *r, const char **names,
				 unsigned int max)
{
	struct gdr_report_item it;
	unsigned int i, k, n = 0;

	for (i = 0; i < gdr_report_num_items(r); i++) {
		memset(&it, 0, sizeof(it));
		if (gdr_report_item(r, i, &it, sizeof(it)) ||
		    it.scope != GDR_REPORT_SCOPE_RDMA_DEVICE)
			continue;
		for (k = 0; k < n && strcmp(names[k], it.section); k++)
			;
		if (k == n && n < max)
			names[n++] = it.section;
	}
	return n;
}

int report_gpus(const struct gdr_report *r)
{
	const char *v = report_value(r, GDR_REPORT_SCOPE_NODE, "node",
				     "cuda_devices", NULL);
	unsigned long long n;

	/* The library's own count; anything else counts no GPU. */
	return v && !number_parse(v, 0, 1 << 16, &n) ? (int)n : 0;
}
