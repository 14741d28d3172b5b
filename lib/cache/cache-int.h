/* SPDX-License-Identifier: MIT */
/*
 * The registration cache's insides, shared by its files (lib/cache/):
 *   cache.c     the public calls: create, get (hits, misses, waits), put,
 *               invalidate, purge, statistics
 *   entry.c     entries: the slabs they live in, opening and freeing
 *   tables.c    finding entries: the front table by start, the MR hint
 *               and the MR table by MR
 *   release.c   leaving the index (drop, eviction, stale entries) and
 *               deregistering with no lock held
 *   validate.c  what device memory is under a range, and whether it
 *               still is (the validated mode's check)
 * The hot path's small steps (the entry's word, the lock-free lookups)
 * are inline here, as UCX keeps rcache.inl beside rcache.c.
 *
 * The registration cache.
 *
 * Entries live in a range index (ranges.c) keyed by the range they
 * register. A device-memory entry remembers every mapping under its range
 * as the driver reports it (cuMemGetAddressRange: the allocation for
 * cuMemAlloc and pool memory, each mapped chunk of a VMM reservation) with
 * the buffer id of the physical allocation mapped there. A validated hit
 * compares the buffer id at each mapping the requested range touches (the
 * pointer's RANGE_* attributes describe a whole VMM reservation, so they
 * cannot say which chunk changed: tests/conform/record-h200.txt); a trusted
 * hit compares nothing.
 *
 * The hit path takes no lock and writes nothing shared but the entry's
 * own word: the index is read optimistically (its sequence count), the
 * entry is held with one compare-and-swap of its word (references, a clock
 * bit and a hit count in one 64-bit word), and the put finds the entry
 * again through the index by the MR's exact range. No memory a reader may
 * touch is freed while the cache lives: entries come from slabs and go
 * back to a free list (a reader holding a stale pointer finds the word
 * marked dead, or an entry whose range it checks), and the index keeps
 * its blocks. So there is no reclamation protocol and no per-thread
 * state.
 *
 * Everything else (misses, invalidation, eviction, puts of entries out of
 * the index) takes the one mutex, and no CUDA or verbs call is made while
 * holding it: classification, description, registration and
 * deregistration happen outside.
 */
#ifndef GDR_CACHE_INT_H
#define GDR_CACHE_INT_H

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "register.h"

#define DEFAULT_MAX_ENTRIES 4096
#define DEFAULT_MAX_REG_RATIO 16
#define SLAB 64	     /* entries per slab */
#define READ_TRIES 4 /* optimistic reads before taking the lock */
#define GET_TRIES 8  /* stale or changing memory before giving up */
#define MAX_OVERLAPS 256

#define LD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define ST(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

/*
 * The entry's word: references in the low 24 bits (all ones: dead, no
 * reference can be taken), the clock bit, the out bit, and the hits it
 * served above. Out: the entry has left the index (or never was in it);
 * no new reference is taken, and giving back the last one makes the word
 * dead in the same compare-and-swap, so exactly one put releases it and
 * no late claim can land on the entry's next life.
 */
#define REFS_MASK ((1ull << 24) - 1)
#define REFS_DEAD REFS_MASK
#define USED (1ull << 24)
#define OUT (1ull << 25)
#define HIT_SHIFT 26
#define HIT_ONE (1ull << HIT_SHIFT)

enum state {
	S_FREE = 0,    /* on the free list */
	S_PENDING = 1, /* in the index, its registration in flight */
	S_LIVE = 2,    /* in the index */
	S_DEAD = 3,    /* out of the index; released at its last put */
};

enum kind {
	K_VALIDATED = 0, /* device memory, buffer ids compared on a hit */
	K_TRUSTED = 1,	 /* device memory, GDR_CACHE_TRUSTED */
	K_HOST = 2,	 /* host memory, GDR_CACHE_HOST */
	K_PASS = 3,	 /* not cached: deregistered at its put */
};

struct map {
	uintptr_t start;
	size_t size;
	unsigned long long id; /* CU_POINTER_ATTRIBUTE_BUFFER_ID */
};

/* One cache line. */
struct entry {
	uint64_t word; /* atomic */
	uint8_t state; /* atomic, enum state */
	uint8_t kind;  /* enum kind */
	uint16_t num_maps;
	/* atomic: the entry's life, one more each time it is cleared; a put
	 * that found the entry in one life never gives back a reference of
	 * the next (unref_at) */
	uint32_t gen;
	struct ibv_mr *mr; /* atomic: a put reads it before holding */
	uintptr_t start, end;
	union {
		struct map one;	    /* num_maps == 1 */
		struct map *many;   /* num_maps > 1 */
		struct entry *next; /* free list, release lists, zombies */
	} u;
};

_Static_assert(sizeof(struct entry) == 64, "an entry is one cache line");

/* Memory for entries: runs of SLAB of them, in chunks that grow. */
struct chunk {
	struct chunk *next;
	size_t size;
	struct entry *e;
};

/*
 * The front table: a direct-mapped hash from an entry's start to the entry
 * last cached there, for the common get of a buffer as it was registered
 * and the put of its MR: one slot and the entry, no search. Written only
 * under the lock, read without it; a slot is a hint (the entry is checked
 * after it is held), so the table is rebuilt in place as it grows, in
 * address space reserved for its largest size (vmem.c): nothing a reader
 * may be reading is ever unmapped.
 */
#define FRONT_MIN_BITS 8
#define FRONT_MAX_BITS 24

struct gdr_cache {
	/* Read by every hit; written only under the lock. */
	struct gdr_ranges index;
	struct entry **front;	 /* the front table */
	unsigned int front_bits; /* atomic: 0 until it is there */
	uint32_t flags;
	struct ibv_pd *pd;
	uint64_t id; /* unique in the process: the put hint's key */
	uint64_t bad_hits __attribute__((aligned(64))); /* atomic */

	pthread_mutex_t lock __attribute__((aligned(64)));
	pthread_cond_t cond; /* a registration in flight completed */
	unsigned long completions;
	unsigned int waiters; /* gets waiting for a completion */
	size_t max_entries, max_bytes;
	unsigned int max_reg_ratio;
	struct gdr_reg_attr reg;
	bool have_reg;
	/* entries */
	struct entry **slabv; /* every run of SLAB entries, in order */
	size_t num_slots, cap_slabs, hand;
	struct chunk *chunks;
	struct entry *free;
	struct entry *freed;   /* atomic: freed without the lock */
	struct entry *zombies; /* deregistration failed: still registered */
	/* the MR table: every entry holding an MR, by MR (under the lock) */
	struct entry **mrtab;
	size_t mrtab_cap, mrtab_used;
	bool mrtab_short; /* an entry holding an MR could not be added */
	/* the MR hint: pairs of slots by MR, read without the lock */
	struct entry **by_mr;
	/* counts */
	size_t entries, bytes;
	uint64_t retired_hits, misses, stale, evictions, invalidations,
		passthrough, uncached;
};

/* What a miss learnt about the memory before registering it. */
struct plan {
	enum kind kind;
	uintptr_t a, b; /* the range to register */
	bool device;	/* device memory */
	struct gdr_ptr_info pi;
	int num_maps;
	struct map maps[GDR_CACHE_MAX_MAPPINGS];
	char why[GDR_REASON_LEN]; /* why not cached (K_PASS) */
};

/* --- the entry's word and the lock-free lookups (inline: the hot path) --- */

static inline uint64_t refs_of(uint64_t w)
{
	return w & REFS_MASK;
}

/* Take a reference unless the entry is dead or out; a hit counts. */
static inline bool tryget(struct entry *e)
{
	uint64_t w = LD(e->word);

	do {
		if (refs_of(w) == REFS_DEAD || (w & OUT) ||
		    refs_of(w) == REFS_MASK - 1)
			return false;
	} while (!__atomic_compare_exchange_n(
		&e->word, &w, (w + 1 + HIT_ONE) | USED, true, __ATOMIC_SEQ_CST,
		__ATOMIC_RELAXED));
	return true;
}

/*
 * Give a reference back: 0, or EINVAL when the entry had none to give.
 * *@last: it was the last one of an out entry, which is dead now: the
 * caller releases it.
 */
static inline int unref(struct entry *e, bool *last)
{
	uint64_t w = LD(e->word), v;

	do {
		if (refs_of(w) == 0 || refs_of(w) == REFS_DEAD)
			return EINVAL;
		v = (w & OUT) && refs_of(w) == 1 ? (w - 1) | REFS_DEAD : w - 1;
	} while (!__atomic_compare_exchange_n(
		&e->word, &w, v, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
	*last = refs_of(v) == REFS_DEAD;
	return 0;
}

/*
 * unref() for a put that found @e by its MR in life @gen (holds_at): EINVAL
 * when the entry is in another life by now (freed and opened again for
 * another MR between the find and this). The life is checked before each
 * compare-and-swap; a new life's word is published after its life number
 * (entry_clear, then entry_open's release store).
 */
static inline int unref_at(struct entry *e, uint32_t gen, bool *last)
{
	uint64_t w = __atomic_load_n(&e->word, __ATOMIC_ACQUIRE), v;

	do {
		if (refs_of(w) == 0 || refs_of(w) == REFS_DEAD ||
		    __atomic_load_n(&e->gen, __ATOMIC_ACQUIRE) != gen)
			return EINVAL;
		v = (w & OUT) && refs_of(w) == 1 ? (w - 1) | REFS_DEAD : w - 1;
	} while (!__atomic_compare_exchange_n(
		&e->word, &w, v, false, __ATOMIC_SEQ_CST, __ATOMIC_ACQUIRE));
	*last = refs_of(v) == REFS_DEAD;
	return 0;
}

static inline struct ibv_mr *mr_of(const struct entry *e)
{
	return __atomic_load_n(&e->mr, __ATOMIC_ACQUIRE);
}

static inline const struct map *maps_of(const struct entry *e)
{
	return e->num_maps > 1 ? e->u.many : &e->u.one;
}

/* Entry @i of all the cache's slabs. */
static inline struct entry *slot_at(const struct gdr_cache *c, size_t i)
{
	return &c->slabv[i / SLAB][i % SLAB];
}

/*
 * The cache's one hash: the top @bits bits of two multiplications. Keys
 * are often aligned (buffers 64 KiB or 2 MiB apart, MRs from malloc), which
 * a single multiplicative hash maps onto a few slots.
 */
static inline size_t hash_bits(uint64_t key, unsigned int bits)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ull;

	h ^= h >> 32;
	h *= 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> (64 - bits));
}

static inline size_t front_slot(unsigned int bits, uintptr_t start)
{
	return hash_bits((uint64_t)start, bits);
}

static inline struct entry *front_get(const struct gdr_cache *c,
				      uintptr_t start)
{
	unsigned int bits = __atomic_load_n(&c->front_bits, __ATOMIC_ACQUIRE);

	return bits ? LD(c->front[front_slot(bits, start)]) : NULL;
}

/*
 * Pairs of slots by the MR's address, in address space reserved like the
 * front table's and as large: a hint (holds() decides), written under the
 * lock, read without it. A put whose MR is in neither slot of its pair
 * takes the lock and the MR table.
 */
static inline size_t mr_pair(unsigned int bits, const struct ibv_mr *mr)
{
	return hash_bits((uint64_t)(uintptr_t)mr, bits) & ~(size_t)1;
}

/* The entries of @mr's pair (NULL when there is no table yet). */
static inline void mr_hint_get(const struct gdr_cache *c,
			       const struct ibv_mr *mr, struct entry **e0,
			       struct entry **e1)
{
	unsigned int bits = __atomic_load_n(&c->front_bits, __ATOMIC_ACQUIRE);
	size_t i;

	*e0 = *e1 = NULL;
	if (!bits)
		return;
	i = mr_pair(bits, mr);
	*e0 = LD(c->by_mr[i]);
	*e1 = LD(c->by_mr[i + 1]);
}

/*
 * The entry @mr came from, found by the pointer alone: @mr is never read
 * (after a pass-through put, or the last put of a dropped entry, it is
 * freed memory; a second put must say EINVAL, not read it). This thread's
 * last get (no lock), the MR hint's pair (no lock), the MR table, else,
 * only if an entry could not be added to it, a walk. A dead entry may
 * still show the MR it is deregistering, whose address a new
 * registration can get meanwhile: only a live word counts.
 */
static inline bool holds(const struct entry *e, const struct ibv_mr *mr)
{
	return e && mr_of(e) == mr && refs_of(LD(e->word)) != REFS_DEAD;
}

/* holds(), and the life it was seen in into *@gen (the same before and
 * after the look, so @mr belongs to that life). */
static inline bool holds_at(const struct entry *e, const struct ibv_mr *mr,
			    uint32_t *gen)
{
	if (!e)
		return false;
	*gen = __atomic_load_n(&e->gen, __ATOMIC_ACQUIRE);
	return holds(e, mr) &&
	       __atomic_load_n(&e->gen, __ATOMIC_ACQUIRE) == *gen;
}

/* --- entries (entry.c) ------------------------------------------------- */
bool cache_take_out(struct entry *e);
struct entry *cache_entry_new(struct gdr_cache *c);
void cache_entry_open(struct entry *e, enum kind kind, enum state state,
		      uintptr_t start, uintptr_t end, struct ibv_mr *mr);
void cache_maps_free(struct entry *e);
void cache_entry_free_nolock(struct gdr_cache *c, struct entry *e);
void cache_entry_unget(struct gdr_cache *c, struct entry *e);
void cache_abandon(struct gdr_cache *c, struct entry *e);

/* --- finding entries (tables.c) ---------------------------------------- */
void cache_front_set(struct gdr_cache *c, struct entry *e);
int cache_mrtab_add(struct gdr_cache *c, struct entry *e);
struct entry **cache_mrtab_slot(struct gdr_cache *c, const struct ibv_mr *mr);
void cache_mrtab_remove(struct gdr_cache *c, struct entry *e);
void cache_mrtab_keep(struct gdr_cache *c, struct entry *e);

/* --- leaving the index, releasing (release.c) -------------------------- */
int cache_release_all(struct gdr_cache *c, struct entry *list);
void cache_drop(struct gdr_cache *c, struct entry *e, struct entry **release);
unsigned int cache_drop_overlaps(struct gdr_cache *c, uintptr_t a, uintptr_t b,
				 struct entry **release);
void cache_evict(struct gdr_cache *c, struct entry **release);
int cache_put_entry(struct gdr_cache *c, struct entry *e);
/* A put of an entry found by its MR in life @gen (holds_at). */
int cache_put_entry_at(struct gdr_cache *c, struct entry *e, uint32_t gen);
void cache_undo(struct gdr_cache *c, struct entry *e);
void cache_stale(struct gdr_cache *c, struct entry *e,
		 const struct gdr_range *gone);

/* --- the memory under a range (validate.c) ----------------------------- */
bool cache_still_valid(const struct gdr_cuda_ops *cu, const struct entry *e,
		       uintptr_t a, uintptr_t b, struct gdr_range *gone);
int cache_plan_miss(struct gdr_cache *c, void *ptr, size_t len, struct plan *p,
		    char *why, size_t n);
int cache_maps_set(struct entry *e, const struct plan *p);
bool cache_hit_valid(const struct entry *e, uintptr_t a, uintptr_t b);

#endif /* GDR_CACHE_INT_H */
