/* SPDX-License-Identifier: MIT */
/* Writing a file of gdr-info's whole, or not at all. */
#ifndef GDR_INFO_REPLACE_H
#define GDR_INFO_REPLACE_H

#include <stddef.h>

/*
 * Whether @file may be written: a new name (*@exists 0) or a regular file
 * (*@exists 1). A link, device, FIFO, socket or directory there is -1
 * with the reason in @err; nothing is opened or changed.
 */
int replace_check(const char *file, int *exists, char *err, size_t n);

/*
 * Put @len bytes of @data at @file (mode 0644), where @file is a new name
 * or a regular file (replace_check: anything else is refused before
 * anything is made): written to a new dot-file in the same directory
 * (mkstemp: O_CREAT | O_EXCL, so a link there is never followed), synced,
 * and renamed to @file (a new name with RENAME_NOREPLACE), so a reader
 * sees the old file or the new one. Nothing is left behind on failure. 0,
 * or -1 with @err.
 */
int replace_file(const char *file, const void *data, size_t len, char *err,
		 size_t n);

#endif
