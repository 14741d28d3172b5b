/* SPDX-License-Identifier: MIT */
/*
 * Finding the cache's entries: the front table (by start: a get of a
 * buffer as it was registered), the MR hint (by MR, without the lock: the
 * put of an MR) and the MR table (by MR, under the lock, every entry that
 * holds one). None of them reads an MR.
 */
#include "cache-int.h"

/* Under the lock: a slot of @e's pair, one not holding a live MR first. */
static void mr_hint_set(struct gdr_cache *c, unsigned int bits, struct entry *e)
{
	size_t i = mr_pair(bits, e->mr);
	struct entry *x = LD(c->by_mr[i]);

	if (x && x != e && LD(x->state) == S_LIVE && x->mr)
		i++;
	ST(c->by_mr[i], e);
}

/*
 * Under the lock: remember @e under its start, and under its MR in the MR
 * hint, both tables grown to twice the entries first. Out of memory, the
 * tables stay as they are (hints).
 */
void cache_front_set(struct gdr_cache *c, struct entry *e)
{
	unsigned int bits = c->front_bits, want = bits ? bits : FRONT_MIN_BITS;
	size_t i;

	while (want < FRONT_MAX_BITS && 2 * c->entries > ((size_t)1 << want))
		want++;
	if (!c->front) {
		c->front =
			gdr_vmem_reserve(sizeof(*c->front) << FRONT_MAX_BITS);
		c->by_mr =
			gdr_vmem_reserve(sizeof(*c->by_mr) << FRONT_MAX_BITS);
		if (!c->front || !c->by_mr) {
			gdr_vmem_free(c->front,
				      sizeof(*c->front) << FRONT_MAX_BITS, 0);
			gdr_vmem_free(c->by_mr,
				      sizeof(*c->by_mr) << FRONT_MAX_BITS, 0);
			c->front = c->by_mr = NULL;
			return;
		}
	}
	if (want > bits) {
		if (gdr_vmem_commit(c->front, sizeof(*c->front) << bits,
				    sizeof(*c->front) << want) ||
		    gdr_vmem_commit(c->by_mr, sizeof(*c->by_mr) << bits,
				    sizeof(*c->by_mr) << want))
			return;
		/* In place: readers meanwhile find a hint, or none. */
		for (i = 0; bits && i < ((size_t)1 << bits); i++) {
			ST(c->front[i], NULL);
			ST(c->by_mr[i], NULL);
		}
		for (i = 0; i < c->num_slots; i++) {
			struct entry *x = slot_at(c, i);

			if (LD(x->state) != S_LIVE)
				continue;
			ST(c->front[front_slot(want, x->start)], x);
			mr_hint_set(c, want, x);
		}
		__atomic_store_n(&c->front_bits, want, __ATOMIC_RELEASE);
		bits = want;
	}
	ST(c->front[front_slot(bits, e->start)], e);
	mr_hint_set(c, bits, e);
}

/* @cap: a power of two. */
static size_t mr_hash(const struct ibv_mr *mr, size_t cap)
{
	return hash_bits(
		(uint64_t)(uintptr_t)mr,
		(unsigned int)__builtin_ctzll((unsigned long long)cap));
}

int cache_mrtab_add(struct gdr_cache *c, struct entry *e)
{
	size_t i;

	if ((c->mrtab_used + 1) * 2 > c->mrtab_cap) {
		size_t cap = c->mrtab_cap ? c->mrtab_cap * 2 : 64;
		struct entry **t = calloc(cap, sizeof(*t));

		if (!t)
			return ENOMEM;
		for (i = 0; i < c->mrtab_cap; i++) {
			struct entry *x = c->mrtab[i];
			size_t k;

			if (!x || x == (struct entry *)c)
				continue;
			for (k = mr_hash(x->mr, cap); t[k];
			     k = (k + 1) & (cap - 1))
				;
			t[k] = x;
		}
		free(c->mrtab);
		c->mrtab = t;
		c->mrtab_cap = cap;
		/* tombstones are gone with the copy */
		c->mrtab_used = 0;
		for (i = 0; i < cap; i++)
			c->mrtab_used += t[i] != NULL;
	}
	for (i = mr_hash(e->mr, c->mrtab_cap);
	     c->mrtab[i] && c->mrtab[i] != (struct entry *)c;
	     i = (i + 1) & (c->mrtab_cap - 1))
		;
	if (!c->mrtab[i])
		c->mrtab_used++;
	c->mrtab[i] = e;
	return 0;
}

/* The slot of @mr's entry, or NULL. (The cache itself marks a removed
 * slot.) */
struct entry **cache_mrtab_slot(struct gdr_cache *c, const struct ibv_mr *mr)
{
	size_t i;

	if (!c->mrtab_cap)
		return NULL;
	for (i = mr_hash(mr, c->mrtab_cap); c->mrtab[i];
	     i = (i + 1) & (c->mrtab_cap - 1))
		if (c->mrtab[i] != (struct entry *)c && c->mrtab[i]->mr == mr)
			return &c->mrtab[i];
	return NULL;
}

void cache_mrtab_remove(struct gdr_cache *c, struct entry *e)
{
	struct entry **slot = cache_mrtab_slot(c, e->mr);

	if (slot && *slot == e)
		*slot = (struct entry *)c;
}

/* Under the lock: add @e, or remember that a put may need a walk. */
void cache_mrtab_keep(struct gdr_cache *c, struct entry *e)
{
	if (cache_mrtab_add(c, e)) {
		c->mrtab_short = true;
		gdr_debug("cache: out of memory for the MR table; a put of "
			  "this MR finds it by a walk");
	}
}
