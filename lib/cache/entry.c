/* SPDX-License-Identifier: MIT */
/*
 * The cache's entries: one cache line each, in slabs that are never freed
 * before the cache (a reader holding a stale pointer reads a dead word,
 * never freed memory), opened with the caller's reference, and back to a
 * free list (under the lock) or the freed stack (without it).
 */
#include "cache-int.h"

#define CHUNK_MAX ((size_t)256 << 10) /* bytes of entries at a time */

/*
 * Under the lock, for an entry leaving the index: mark it out. True when
 * it had no reference: it is dead now and the caller releases it; false:
 * the put of its last reference will (unref).
 */
bool cache_take_out(struct entry *e)
{
	uint64_t w = LD(e->word), v;

	do
		v = refs_of(w) ? w | OUT : w | OUT | REFS_DEAD;
	while (!__atomic_compare_exchange_n(
		&e->word, &w, v, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
	return refs_of(w) == 0;
}

/* More free entries: a chunk as large as all before it, up to 256 KiB. */
static int slab_add(struct gdr_cache *c)
{
	size_t bytes = c->num_slots * sizeof(struct entry), runs, k, i;
	struct chunk *ch;

	if (bytes < SLAB * sizeof(struct entry))
		bytes = SLAB * sizeof(struct entry);
	if (bytes > CHUNK_MAX)
		bytes = CHUNK_MAX;
	runs = bytes / (SLAB * sizeof(struct entry));
	if (c->num_slots / SLAB + runs > c->cap_slabs) {
		size_t cap = c->cap_slabs ? 2 * c->cap_slabs : 8;
		struct entry **v;

		while (cap < c->num_slots / SLAB + runs)
			cap *= 2;
		v = realloc(c->slabv, cap * sizeof(*v));
		if (!v)
			return ENOMEM;
		c->slabv = v;
		c->cap_slabs = cap;
	}
	ch = malloc(sizeof(*ch));
	if (!ch)
		return ENOMEM;
	ch->size = bytes;
	ch->e = aligned_alloc(64, bytes);
	if (ch->e)
		memset(ch->e, 0, bytes);
	if (!ch->e) {
		free(ch);
		return ENOMEM;
	}
	ch->next = c->chunks;
	c->chunks = ch;
	for (i = runs * SLAB; i-- > 0;) {
		ch->e[i].word = REFS_DEAD;
		ch->e[i].u.next = c->free;
		c->free = &ch->e[i];
	}
	for (k = 0; k < runs; k++)
		c->slabv[c->num_slots / SLAB + k] = &ch->e[k * SLAB];
	c->num_slots += runs * SLAB;
	return 0;
}

/* A free entry, its word dead; NULL when out of memory. */
struct entry *cache_entry_new(struct gdr_cache *c)
{
	struct entry *e;

	if (!c->free)
		c->free =
			__atomic_exchange_n(&c->freed, NULL, __ATOMIC_ACQUIRE);
	if (!c->free && slab_add(c))
		return NULL;
	e = c->free;
	c->free = e->u.next;
	return e;
}

/*
 * Fill a free entry and open it for references: @refs of them (1: the
 * caller's), the hits it had before kept in the word.
 */
void cache_entry_open(struct entry *e, enum kind kind, enum state state,
		      uintptr_t start, uintptr_t end, struct ibv_mr *mr)
{
	e->kind = (uint8_t)kind;
	e->start = start;
	e->end = end;
	__atomic_store_n(&e->mr, mr, __ATOMIC_RELAXED);
	__atomic_store_n(&e->state, (uint8_t)state, __ATOMIC_RELAXED);
	/* Release: whoever takes a reference sees the fields. One opened
	 * out of the index is out from the start. */
	__atomic_store_n(&e->word, state == S_DEAD ? 1 | OUT : 1,
			 __ATOMIC_RELEASE);
}

void cache_maps_free(struct entry *e)
{
	if (e->num_maps > 1)
		free(e->u.many);
	e->num_maps = 0;
}

/*
 * Forget a dead entry's MR and hits (it is ours alone). Nobody else writes
 * a dead word (tryget and unref give up on it before their
 * compare-and-swap; take_out runs under the lock, on entries that still
 * hold a reference or are not dead yet), so a load and a store do; the
 * push onto a free list that follows publishes them.
 */
static void entry_clear(struct gdr_cache *c, struct entry *e)
{
	uint64_t hits = LD(e->word) >> HIT_SHIFT;

	/* A new life: a put that found the old one cannot give back a
	 * reference of the next (unref_at). Before the entry can be opened
	 * again: the free list's push publishes it. */
	__atomic_fetch_add(&e->gen, 1, __ATOMIC_RELEASE);
	ST(e->word, (uint64_t)REFS_DEAD);
	if (hits) /* a miss never hit leaves the shared counter alone */
		__atomic_fetch_add(&c->retired_hits, hits, __ATOMIC_RELAXED);
	__atomic_store_n(&e->mr, NULL, __ATOMIC_RELAXED);
	cache_maps_free(e);
	__atomic_store_n(&e->state, (uint8_t)S_FREE, __ATOMIC_RELAXED);
}

/* Under the lock: back to the free list (its word is dead already). */
static void entry_free(struct gdr_cache *c, struct entry *e)
{
	entry_clear(c, e);
	e->u.next = c->free;
	c->free = e;
}

/* Without the lock: onto the freed stack, which the next cache_entry_new()
 * takes whole under the lock (so no pop races a push). */
void cache_entry_free_nolock(struct gdr_cache *c, struct entry *e)
{
	struct entry *head = __atomic_load_n(&c->freed, __ATOMIC_RELAXED);

	entry_clear(c, e);
	do
		e->u.next = head;
	while (!__atomic_compare_exchange_n(
		&c->freed, &head, e, true, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}

/* Back to the free list, never opened. */
void cache_entry_unget(struct gdr_cache *c, struct entry *e)
{
	e->u.next = c->free;
	c->free = e;
}

/*
 * Under the lock: give up an opened entry that holds no MR and is in no
 * table. A reader holding it by mistake frees it at its undo.
 */
void cache_abandon(struct gdr_cache *c, struct entry *e)
{
	bool last;

	__atomic_store_n(&e->mr, NULL, __ATOMIC_RELAXED);
	__atomic_store_n(&e->state, (uint8_t)S_DEAD, __ATOMIC_SEQ_CST);
	cache_maps_free(e);
	cache_take_out(e); /* false: the caller's reference is still there */
	if (!unref(e, &last) && last)
		entry_free(c, e);
}
