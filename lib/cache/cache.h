/* SPDX-License-Identifier: MIT */
/* The cache's own checks, for the tests (the API is in gpudirect.h). */
#ifndef GPUDIRECT_CACHE_H
#define GPUDIRECT_CACHE_H

#include <stddef.h>

struct ibv_mr;

struct gdr_cache;

/* Every free entry on a free list, once; 0 or EPROTO with the counts in
 * @why. Not with another call on the cache in flight. */
int gdr_cache_audit(struct gdr_cache *c, char *why, size_t n);

/*
 * A pause point for the tests: when set, gdr_cache_put calls it between
 * finding the MR's entry and giving its reference back (@c and the MR),
 * so that a test can free and reuse the entry in that window, which no
 * fake reaches. NULL in production: one load on the put path.
 */
extern void (*gdr_cache_put_pause)(struct gdr_cache *c, struct ibv_mr *mr);

#endif /* GPUDIRECT_CACHE_H */
