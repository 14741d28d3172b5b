/* SPDX-License-Identifier: MIT */
/* gdr-info --storage: the live check and what the report then says. */
#ifndef GDR_INFO_STORAGE_H
#define GDR_INFO_STORAGE_H

#include <stdbool.h>
#include <stddef.h>

#include <gpudirect-private.h>

/* Check @paths live into @st (each step given @timeout_ms, 0: the
 * library's default), cuFile's own chatter on stdout sent to
 * stderr meanwhile (stdout may be JSON). 0, or -1 with the reason. */
int storage_check(struct gdr_storage *st, const char *const *paths,
		  unsigned int num, unsigned int timeout_ms, char *err,
		  size_t n);
/* Every storage path of @r was proved read and written directly (its
 * "gds" item ok); false when there is none. */
bool storage_proved(const struct gdr_report *r);
/* The node's GPUDirect Storage label value over @r's paths: "direct",
 * "compat", "fail" or "unknown"; NULL when no path was checked. */
const char *storage_label(const struct gdr_report *r);

#endif
