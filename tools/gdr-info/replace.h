/* SPDX-License-Identifier: MIT */
/* Writing a file of gdr-info's whole, or not at all. */
#ifndef GDR_INFO_REPLACE_H
#define GDR_INFO_REPLACE_H

#include <stddef.h>

/*
 * Put @len bytes of @data at @file (mode 0644): written to a new dot-file
 * in the same directory (mkstemp: O_CREAT | O_EXCL, so a link there is
 * never followed), synced, and renamed over @file, so a reader sees the
 * old file or the new one, and a link at @file is replaced, not written
 * through. Nothing is left behind on failure. 0, or -1 with @err.
 */
int replace_file(const char *file, const void *data, size_t len, char *err,
		 size_t n);

#endif
