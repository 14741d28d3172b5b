/* SPDX-License-Identifier: MIT */
/* The storage check's facts in answers.json (storage-json.c). */
#ifndef GDR_INFO_STORAGE_JSON_H
#define GDR_INFO_STORAGE_JSON_H

#include <stdio.h>

struct gdr_storage;
struct json;

/* ",\n  \"storage\": {...}" for answers.json. */
void storage_json_write(FILE *f, const struct gdr_storage *st);
/* answers.json's "storage" into @st (replayed); none leaves it empty. 0,
 * or -1 with the reason in @err. */
int storage_json_read(const struct json *root, struct gdr_storage *st,
		      char *err, size_t n);

#endif
