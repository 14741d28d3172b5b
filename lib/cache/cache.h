/* SPDX-License-Identifier: MIT */
/* The cache's own checks, for the tests (the API is in gpudirect.h). */
#ifndef GPUDIRECT_CACHE_H
#define GPUDIRECT_CACHE_H

#include <stddef.h>

struct gdr_cache;

/* Every free entry on a free list, once; 0 or EPROTO with the counts in
 * @why. Not with another call on the cache in flight. */
int gdr_cache_audit(struct gdr_cache *c, char *why, size_t n);

#endif /* GPUDIRECT_CACHE_H */
