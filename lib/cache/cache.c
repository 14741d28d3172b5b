/* SPDX-License-Identifier: MIT */
/*
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
	uint32_t unused;
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

/* --- the entry's word ------------------------------------------------------- */

static uint64_t refs_of(uint64_t w)
{
	return w & REFS_MASK;
}

/* Take a reference unless the entry is dead or out; a hit counts. */
static bool tryget(struct entry *e)
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
 * Under the lock, for an entry leaving the index: mark it out. True when
 * it had no reference: it is dead now and the caller releases it; false:
 * the put of its last reference will (unref).
 */
static bool take_out(struct entry *e)
{
	uint64_t w = LD(e->word), v;

	do
		v = refs_of(w) ? w | OUT : w | OUT | REFS_DEAD;
	while (!__atomic_compare_exchange_n(
		&e->word, &w, v, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
	return refs_of(w) == 0;
}

/*
 * Give a reference back: 0, or EINVAL when the entry had none to give.
 * *@last: it was the last one of an out entry, which is dead now: the
 * caller releases it.
 */
static int unref(struct entry *e, bool *last)
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

static struct ibv_mr *mr_of(const struct entry *e)
{
	return __atomic_load_n(&e->mr, __ATOMIC_ACQUIRE);
}

/*
 * The put hint: the entry this thread's last get gave out, so that the put
 * that follows finds it without reading the MR (a cache line of the
 * verbs' that a get never touches). Entries are never freed before their
 * cache, and the hint is read only for the cache whose unique id it
 * names, so it never points into freed memory; holds() decides.
 */
static __thread struct {
	uint64_t cache;
	struct entry *e;
} last_got;

static uint64_t cache_ids; /* atomic: the last id given */

static struct ibv_mr *given(const struct gdr_cache *c, struct entry *e)
{
	last_got.cache = c->id;
	last_got.e = e;
	return mr_of(e);
}

static const struct map *maps_of(const struct entry *e)
{
	return e->num_maps > 1 ? e->u.many : &e->u.one;
}

/* --- entries (under the lock) ------------------------------------------------ */

/* Entry @i of all the cache's slabs. */
static struct entry *slot_at(const struct gdr_cache *c, size_t i)
{
	return &c->slabv[i / SLAB][i % SLAB];
}

#define CHUNK_MAX ((size_t)256 << 10) /* bytes of entries at a time */

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
static struct entry *entry_new(struct gdr_cache *c)
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
static void entry_open(struct entry *e, enum kind kind, enum state state,
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

static void maps_free(struct entry *e)
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

	ST(e->word, (uint64_t)REFS_DEAD);
	if (hits) /* a miss never hit leaves the shared counter alone */
		__atomic_fetch_add(&c->retired_hits, hits, __ATOMIC_RELAXED);
	__atomic_store_n(&e->mr, NULL, __ATOMIC_RELAXED);
	maps_free(e);
	__atomic_store_n(&e->state, (uint8_t)S_FREE, __ATOMIC_RELAXED);
}

/* Under the lock: back to the free list (its word is dead already). */
static void entry_free(struct gdr_cache *c, struct entry *e)
{
	entry_clear(c, e);
	e->u.next = c->free;
	c->free = e;
}

/* Without the lock: onto the freed stack, which the next entry_new()
 * takes whole under the lock (so no pop races a push). */
static void entry_free_nolock(struct gdr_cache *c, struct entry *e)
{
	struct entry *head = __atomic_load_n(&c->freed, __ATOMIC_RELAXED);

	entry_clear(c, e);
	do
		e->u.next = head;
	while (!__atomic_compare_exchange_n(
		&c->freed, &head, e, true, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}

/* --- the front table ----------------------------------------------------- */

/*
 * The cache's one hash: the top @bits bits of two multiplications. Keys
 * are often aligned (buffers 64 KiB or 2 MiB apart, MRs from malloc), which
 * a single multiplicative hash maps onto a few slots.
 */
static size_t hash_bits(uint64_t key, unsigned int bits)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ull;

	h ^= h >> 32;
	h *= 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> (64 - bits));
}

static size_t front_slot(unsigned int bits, uintptr_t start)
{
	return hash_bits((uint64_t)start, bits);
}

static struct entry *front_get(const struct gdr_cache *c, uintptr_t start)
{
	unsigned int bits = __atomic_load_n(&c->front_bits, __ATOMIC_ACQUIRE);

	return bits ? LD(c->front[front_slot(bits, start)]) : NULL;
}

static void mr_hint_set(struct gdr_cache *c, unsigned int bits,
			struct entry *e);

/*
 * Under the lock: remember @e under its start, and under its MR in the MR
 * hint, both tables grown to twice the entries first. Out of memory, the
 * tables stay as they are (hints).
 */
static void front_set(struct gdr_cache *c, struct entry *e)
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

/* Back to the free list, never opened. */
static void entry_unget(struct gdr_cache *c, struct entry *e)
{
	e->u.next = c->free;
	c->free = e;
}

/*
 * Under the lock: give up an opened entry that holds no MR and is in no
 * table. A reader holding it by mistake frees it at its undo.
 */
static void abandon(struct gdr_cache *c, struct entry *e)
{
	bool last;

	__atomic_store_n(&e->mr, NULL, __ATOMIC_RELAXED);
	__atomic_store_n(&e->state, (uint8_t)S_DEAD, __ATOMIC_SEQ_CST);
	maps_free(e);
	take_out(e); /* false: the caller's reference is still there */
	if (!unref(e, &last) && last)
		entry_free(c, e);
}

/* --- the MR table: every entry that holds an MR, by MR ------------------- */

/*
 * Under the lock: what a put finds an MR's entry by without reading the
 * MR (a second put's MR may be freed: only a pointer the cache holds is
 * ever read through). Cached entries from when they go live, entries not
 * cached, and those dropped while in use, until their release. The
 * cache's own address marks a removed slot. Keyed by the pointer alone.
 */

/* @cap: a power of two. */
static size_t mr_hash(const struct ibv_mr *mr, size_t cap)
{
	return hash_bits(
		(uint64_t)(uintptr_t)mr,
		(unsigned int)__builtin_ctzll((unsigned long long)cap));
}

static int mrtab_add(struct gdr_cache *c, struct entry *e)
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
static struct entry **mrtab_slot(struct gdr_cache *c, const struct ibv_mr *mr)
{
	size_t i;

	if (!c->mrtab_cap)
		return NULL;
	for (i = mr_hash(mr, c->mrtab_cap); c->mrtab[i];
	     i = (i + 1) & (c->mrtab_cap - 1))
		if (c->mrtab[i] != (struct entry *)c &&
		    c->mrtab[i]->mr == mr)
			return &c->mrtab[i];
	return NULL;
}

static void mrtab_remove(struct gdr_cache *c, struct entry *e)
{
	struct entry **slot = mrtab_slot(c, e->mr);

	if (slot && *slot == e)
		*slot = (struct entry *)c;
}

/* Under the lock: add @e, or remember that a put may need a walk. */
static void mrtab_keep(struct gdr_cache *c, struct entry *e)
{
	if (mrtab_add(c, e)) {
		c->mrtab_short = true;
		gdr_debug("cache: out of memory for the MR table; a put of "
			  "this MR finds it by a walk");
	}
}

/* --- the MR hint: find an MR's entry without the lock -------------------- */

/*
 * Pairs of slots by the MR's address, in address space reserved like the
 * front table's and as large: a hint (holds() decides), written under the
 * lock, read without it. A put whose MR is in neither slot of its pair
 * takes the lock and the MR table.
 */
static size_t mr_pair(unsigned int bits, const struct ibv_mr *mr)
{
	return hash_bits((uint64_t)(uintptr_t)mr, bits) & ~(size_t)1;
}

/* The entries of @mr's pair (NULL when there is no table yet). */
static void mr_hint_get(const struct gdr_cache *c, const struct ibv_mr *mr,
			struct entry **e0, struct entry **e1)
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

/* Under the lock: a slot of @e's pair, one not holding a live MR first. */
static void mr_hint_set(struct gdr_cache *c, unsigned int bits, struct entry *e)
{
	size_t i = mr_pair(bits, e->mr);
	struct entry *x = LD(c->by_mr[i]);

	if (x && x != e && LD(x->state) == S_LIVE && x->mr)
		i++;
	ST(c->by_mr[i], e);
}

/* --- releasing ---------------------------------------------------------------- */

/*
 * Deregister what the lock's holder collected (dead, claimed, out of the
 * index), with no lock held. An MR whose
 * deregistration fails stays registered: it is kept and tried again by
 * the next release, at the latest by gdr_cache_destroy(). 0 or the first
 * errno.
 */
static int release_all(struct gdr_cache *c, struct entry *list)
{
	const struct gdr_seam *s;
	struct entry *e, *next, *done = NULL, *failed = NULL;
	int err, first = 0;

	if (!list && !__atomic_load_n(&c->zombies, __ATOMIC_ACQUIRE))
		return 0; /* the common case of a miss: nothing to release */
	s = gdr_seam();
	if (__atomic_load_n(&c->zombies, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&c->lock);
		while ((e = c->zombies)) { /* the earlier failures first */
			c->zombies = e->u.next;
			e->u.next = list;
			list = e;
		}
		pthread_mutex_unlock(&c->lock);
	}
	for (e = list; e; e = next) {
		next = e->u.next;
		err = e->mr ? s->verbs.dereg_mr(e->mr) : 0;
		if (err) {
			gdr_debug("cache: ibv_dereg_mr failed: %s; kept for a "
				  "retry",
				  gdr_errno_name(err));
			if (!first)
				first = err;
			e->u.next = failed;
			failed = e;
		} else {
			e->u.next = done;
			done = e;
		}
	}
	for (e = done; e; e = next) {
		next = e->u.next;
		entry_free_nolock(c, e);
	}
	if (!failed)
		return 0;
	pthread_mutex_lock(&c->lock);
	for (e = failed; e; e = next) {
		next = e->u.next;
		e->u.next = c->zombies;
		__atomic_store_n(&c->zombies, e, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&c->lock);
	return first;
}

/*
 * Under the lock: take @e out of the index. One with no reference goes to
 * *@release; one in use goes to the outside table, deregistered at its
 * last put. A registration in flight is cancelled: its owner gives its
 * caller the MR without caching it.
 */
static void drop(struct gdr_cache *c, struct entry *e, struct entry **release)
{
	uint8_t st = LD(e->state);
	bool dead;

	if (st != S_PENDING && st != S_LIVE)
		return;
	gdr_ranges_remove(&c->index, e->start, e);
	__atomic_store_n(&e->state, (uint8_t)S_DEAD, __ATOMIC_SEQ_CST);
	dead = take_out(e);
	if (st == S_PENDING)
		return; /* its owner's reference: the owner puts it */
	c->entries--;
	c->bytes -= e->end - e->start;
	if (dead) {
		mrtab_remove(c, e);
		maps_free(e);
		e->u.next = *release;
		*release = e;
	} else if (!mrtab_slot(c, e->mr)) {
		mrtab_keep(c, e); /* not there: its add had failed */
	}
}

/* Under the lock: drop every entry overlapping [a, b). How many. */
static unsigned int drop_overlaps(struct gdr_cache *c, uintptr_t a, uintptr_t b,
				  struct entry **release)
{
	void *hit[MAX_OVERLAPS];
	unsigned int n, i, total = 0;

	do {
		n = gdr_ranges_overlaps(&c->index, a, b, hit, MAX_OVERLAPS);
		for (i = 0; i < n; i++)
			drop(c, (struct entry *)hit[i], release);
		total += n;
	} while (n == MAX_OVERLAPS);
	return total;
}

/*
 * Under the lock: idle entries past the limits, by the clock: an entry
 * used since the hand last passed loses its bit and stays; one in use is
 * never evicted.
 */
static void evict(struct gdr_cache *c, struct entry **release)
{
	size_t steps = 2 * c->num_slots;

	while (((c->max_entries && c->entries > c->max_entries) ||
		(c->max_bytes && c->bytes > c->max_bytes)) &&
	       steps--) {
		struct entry *e = slot_at(c, c->hand);
		uint64_t w = LD(e->word);

		c->hand = (c->hand + 1) % c->num_slots;
		if (LD(e->state) != S_LIVE || refs_of(w))
			continue;
		if (w & USED) {
			__atomic_fetch_and(&e->word, ~USED, __ATOMIC_RELAXED);
			continue;
		}
		drop(c, e, release);
		c->evictions++;
	}
}

/* The last reference of an out entry is gone: it is dead and ours. */
static int release_last(struct gdr_cache *c, struct entry *e)
{
	pthread_mutex_lock(&c->lock);
	mrtab_remove(c, e);
	pthread_mutex_unlock(&c->lock);
	maps_free(e); /* ours alone now */
	e->u.next = NULL;
	return release_all(c, e);
}

static int put_entry(struct gdr_cache *c, struct entry *e)
{
	bool last;
	int err = unref(e, &last);

	if (err || !last)
		return err;
	return release_last(c, e);
}

/* A reference taken by mistake (a stale pointer, a pending entry). */
static void undo(struct gdr_cache *c, struct entry *e)
{
	__atomic_fetch_add(&c->bad_hits, 1, __ATOMIC_RELAXED);
	put_entry(c, e);
}

/* --- validity ---------------------------------------------------------------- */

/*
 * Are the mappings under [a, b) still the physical allocations @e
 * registered? One buffer-id query per mapping the range touches. When not,
 * *@gone is the extent of the mapping that changed.
 */
static bool still_valid(const struct gdr_cuda_ops *cu, const struct entry *e,
			uintptr_t a, uintptr_t b, struct gdr_range *gone)
{
	const struct map *m = maps_of(e);
	unsigned long long id;
	unsigned int i;

	for (i = 0; i < e->num_maps; i++) {
		uintptr_t at = a > m[i].start ? a : m[i].start;

		if (at >= b || at >= m[i].start + m[i].size)
			continue;
		if (cu->cuPointerGetAttribute(
			    &id, CU_POINTER_ATTRIBUTE_BUFFER_ID,
			    (CUdeviceptr)at) != CUDA_SUCCESS ||
		    id != m[i].id) {
			gone->start = m[i].start;
			gone->end = m[i].start + m[i].size;
			return false;
		}
	}
	return true;
}

/*
 * The mappings under [a, b) as the driver reports them, into @m (room for
 * @max). Their number, or -EINVAL when the driver cannot describe them (a
 * hole, no entry point), -E2BIG past @max.
 */
static int describe(const struct gdr_cuda_ops *cu, uintptr_t a, uintptr_t b,
		    struct map *m, int max)
{
	uintptr_t at = a;
	int n = 0;

	if (!cu->cuMemGetAddressRange)
		return -EINVAL;
	while (at < b) {
		CUdeviceptr base = 0;
		size_t size = 0;
		unsigned long long id = 0;

		if (n == max)
			return -E2BIG;
		if (cu->cuMemGetAddressRange(&base, &size, (CUdeviceptr)at) !=
			    CUDA_SUCCESS ||
		    !size || (uintptr_t)base > at ||
		    (uintptr_t)base + size <= at ||
		    cu->cuPointerGetAttribute(&id,
					      CU_POINTER_ATTRIBUTE_BUFFER_ID,
					      (CUdeviceptr)at) != CUDA_SUCCESS)
			return -EINVAL;
		m[n].start = (uintptr_t)base;
		m[n].size = size;
		m[n].id = id;
		n++;
		at = (uintptr_t)base + size;
	}
	return n;
}

/* --- settings --------------------------------------------------------------- */

/* --- the public calls ---------------------------------------------------------- */

#define CACHE_ATTR_KNOWN                                                       \
	(GDR_CACHE_ATTR_MAX_ENTRIES | GDR_CACHE_ATTR_MAX_BYTES |               \
	 GDR_CACHE_ATTR_FLAGS | GDR_CACHE_ATTR_MAX_REG_RATIO |                 \
	 GDR_CACHE_ATTR_REG)
#define CACHE_FLAGS_KNOWN                                                      \
	(GDR_CACHE_WHOLE_ALLOC | GDR_CACHE_HOST | GDR_CACHE_TRUSTED)

GDR_EXPORT struct gdr_cache *gdr_cache_create(struct ibv_pd *pd,
					      const struct gdr_cache_attr *attr)
{
	struct gdr_cache *c;
	char why[GDR_WHY_LEN];
	size_t max_entries = DEFAULT_MAX_ENTRIES, max_bytes = 0;
	int err;

	gdr_clear_error();
	if (!pd)
		return gdr_fail(EINVAL, "%s", gdr_msg_pd_null);
	if (attr && (attr->comp_mask & ~(uint32_t)CACHE_ATTR_KNOWN))
		return gdr_fail(EINVAL,
				"gdr_cache_attr.comp_mask has unknown bits "
				"0x%x; this library knows 0x%x",
				attr->comp_mask & ~(uint32_t)CACHE_ATTR_KNOWN,
				CACHE_ATTR_KNOWN);
	if (attr && (attr->comp_mask & GDR_CACHE_ATTR_FLAGS) &&
	    (attr->flags & ~(uint32_t)CACHE_FLAGS_KNOWN))
		return gdr_fail(EINVAL,
				"gdr_cache_attr.flags has unknown bits 0x%x; "
				"use GDR_CACHE_WHOLE_ALLOC, GDR_CACHE_HOST and "
				"GDR_CACHE_TRUSTED",
				attr->flags & ~(uint32_t)CACHE_FLAGS_KNOWN);
	why[0] = '\0';
	err = gdr_env_cache_limits(&max_entries, &max_bytes, why, sizeof(why));
	if (err)
		return gdr_fail(err, "%s", why);
	if (posix_memalign((void **)&c, 64, sizeof(*c)))
		return gdr_fail(ENOMEM, "out of memory for the cache");
	memset(c, 0, sizeof(*c));
	c->pd = pd;
	c->id = __atomic_add_fetch(&cache_ids, 1, __ATOMIC_RELAXED);
	c->max_entries = max_entries;
	c->max_bytes = max_bytes;
	c->max_reg_ratio = DEFAULT_MAX_REG_RATIO;
	if (attr) {
		if (attr->comp_mask & GDR_CACHE_ATTR_FLAGS)
			c->flags = attr->flags;
		if (attr->comp_mask & GDR_CACHE_ATTR_MAX_ENTRIES)
			c->max_entries = attr->max_entries;
		if (attr->comp_mask & GDR_CACHE_ATTR_MAX_BYTES)
			c->max_bytes = attr->max_bytes;
		if (attr->comp_mask & GDR_CACHE_ATTR_MAX_REG_RATIO)
			c->max_reg_ratio = attr->max_reg_ratio;
		if (attr->comp_mask & GDR_CACHE_ATTR_REG) {
			c->reg = attr->reg;
			c->have_reg = true;
		}
	}
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	gdr_debug("cache %p: max %zu entries, %zu bytes, flags 0x%x", (void *)c,
		  c->max_entries, c->max_bytes, c->flags);
	return c;
}

/* Under the lock: MRs given out and not put back. */
static uint64_t in_use(const struct gdr_cache *c)
{
	uint64_t n = 0, r;
	size_t i;

	for (i = 0; i < c->num_slots; i++) {
		r = refs_of(LD(slot_at(c, i)->word));
		if (r != REFS_DEAD)
			n += r;
	}
	return n;
}

GDR_EXPORT int gdr_cache_destroy(struct gdr_cache *c)
{
	struct entry *release = NULL;
	struct chunk *ch;
	uint64_t busy;
	size_t i;
	int err;

	gdr_clear_error();
	if (!c) {
		gdr_fail(EINVAL, "cache is NULL");
		return EINVAL;
	}
	pthread_mutex_lock(&c->lock);
	busy = in_use(c);
	if (busy) {
		pthread_mutex_unlock(&c->lock);
		gdr_fail(EBUSY,
			 "%llu MRs from gdr_cache_get() are not put back; put "
			 "them back first",
			 (unsigned long long)busy);
		return EBUSY;
	}
	for (i = 0; i < c->num_slots; i++)
		drop(c, slot_at(c, i), &release);
	pthread_mutex_unlock(&c->lock);
	err = release_all(c, release);
	if (err) {
		/* Still registered: the cache stays, to be destroyed again. */
		gdr_fail(
			err,
			"ibv_dereg_mr failed with %s for cached MRs; they stay "
			"registered: call gdr_cache_destroy() again",
			gdr_errno_name(err));
		return gdr_errno_public(err);
	}
	gdr_ranges_clear(&c->index);
	gdr_vmem_free(c->front, sizeof(*c->front) << FRONT_MAX_BITS,
		      c->front_bits ? sizeof(*c->front) << c->front_bits : 0);
	for (i = 0; i < c->num_slots; i++)
		maps_free(slot_at(c, i));
	while ((ch = c->chunks)) {
		c->chunks = ch->next;
		free(ch->e);
		free(ch);
	}
	free(c->slabv);
	free(c->mrtab);
	gdr_vmem_free(c->by_mr, sizeof(*c->by_mr) << FRONT_MAX_BITS,
		      c->front_bits ? sizeof(*c->by_mr) << c->front_bits : 0);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->cond);
	free(c);
	return 0;
}

/* Fill the caller's record of a get. */
static void get_info(struct gdr_cache_get_info *info, size_t size,
		     enum gdr_cache_result result, unsigned int maps,
		     const char *reason)
{
	struct gdr_cache_get_info out;
	size_t n;

	if (!info)
		return;
	memset(&out, 0, sizeof(out));
	out.comp_mask = GDR_CACHE_GET_INFO_BASIC;
	out.result = result;
	out.num_mappings = maps;
	n = strnlen(reason, sizeof(out.reason) - 1);
	memcpy(out.reason, reason, n);
	memcpy(info, &out, size < sizeof(out) ? size : sizeof(out));
}

/* An entry that covers [a, b) with a reference taken, without a lock;
 * NULL when none does or the index kept changing. */
static struct entry *lookup(struct gdr_cache *c, uintptr_t a, uintptr_t b)
{
	struct entry *e = front_get(c, a);
	void *item;
	int t;

	/* The entry cached under this start, if it still is and covers. */
	if (e && tryget(e)) {
		if (__atomic_load_n(&e->state, __ATOMIC_ACQUIRE) == S_LIVE &&
		    e->start <= a && e->end >= b)
			return e;
		undo(c, e);
	}
	for (t = 0; t < READ_TRIES; t++) {
		if (gdr_ranges_cover_read(&c->index, a, b, &item))
			continue;
		if (!item)
			return NULL;
		e = item;
		if (!tryget(e))
			continue;
		if (__atomic_load_n(&e->state, __ATOMIC_ACQUIRE) == S_LIVE &&
		    e->start <= a && e->end >= b)
			return e;
		undo(c, e);
	}
	return NULL;
}

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

/*
 * Classify and describe [ptr, +len) with no lock held. 0, or an errno with
 * the message in @why.
 */
static int plan_miss(struct gdr_cache *c, void *ptr, size_t len, struct plan *p,
		     char *why, size_t n)
{
	const struct gdr_cuda_lib *lib;
	struct gdr_ptr_info *pi = &p->pi;
	uintptr_t a = (uintptr_t)ptr, b = a + len, wa, wb;
	int err, k;

	p->a = a;
	p->b = b;
	p->num_maps = 0;
	p->why[0] = '\0';
	err = gdr_classify(ptr, len, pi, why, n);
	if (err)
		return err;
	p->device = pi->type == GDR_MEM_CUDA_DEVICE ||
		    pi->type == GDR_MEM_CUDA_POOL;
	if (!p->device) {
		p->kind = (c->flags & GDR_CACHE_HOST) ? K_HOST : K_PASS;
		if (p->kind == K_PASS)
			gdr_fmt(p->why, sizeof(p->why),
				"host memory is cached only with "
				"GDR_CACHE_HOST: registered for this get "
				"only");
		return 0;
	}
	p->kind = (c->flags & GDR_CACHE_TRUSTED) ? K_TRUSTED : K_VALIDATED;
	lib = gdr_cuda_table();
	k = lib ? describe(&lib->cu, a, b, p->maps, GDR_CACHE_MAX_MAPPINGS)
		: -EINVAL;
	if (k < 0) {
		p->kind = K_PASS;
		if (k == -E2BIG)
			gdr_fmt(p->why, sizeof(p->why),
				"[%p, +%zu) spans more than %d mappings (VMM "
				"chunks), each a driver query on every hit: "
				"registered for this get only",
				ptr, len, GDR_CACHE_MAX_MAPPINGS);
		else
			gdr_fmt(p->why, sizeof(p->why),
				"the CUDA driver does not describe the "
				"mappings under [%p, +%zu) "
				"(cuMemGetAddressRange): registered for this "
				"get only",
				ptr, len);
		return 0;
	}
	p->num_maps = k;
	/* The whole allocation: every mapping the buffer touches (a
	 * cuMemAlloc or pool allocation, or the VMM chunks), not the VMM
	 * reservation, if at most max_reg_ratio times the buffer. */
	wa = p->maps[0].start;
	wb = p->maps[k - 1].start + p->maps[k - 1].size;
	if ((c->flags & GDR_CACHE_WHOLE_ALLOC) &&
	    (!c->max_reg_ratio || (wb - wa) / c->max_reg_ratio < len ||
	     ((wb - wa) / c->max_reg_ratio == len &&
	      (wb - wa) % c->max_reg_ratio == 0))) {
		p->a = wa;
		p->b = wb;
	}
	return 0;
}

/* Store @p's mappings in @e. 0 or ENOMEM. */
static int maps_set(struct entry *e, const struct plan *p)
{
	if (p->num_maps > 1) {
		e->u.many = malloc((size_t)p->num_maps * sizeof(struct map));
		if (!e->u.many)
			return ENOMEM;
		memcpy(e->u.many, p->maps,
		       (size_t)p->num_maps * sizeof(struct map));
	} else if (p->num_maps == 1) {
		e->u.one = p->maps[0];
	}
	e->num_maps = (uint16_t)p->num_maps;
	return 0;
}

/* Register [a, b), classified already (the same allocations as the
 * buffer's). */
static int reg(struct gdr_cache *c, const struct plan *p, uintptr_t a,
	       uintptr_t b, struct ibv_mr **mr, char *why, size_t n)
{
	return gdr_register_internal(c->pd, (void *)a, b - a,
				     c->have_reg ? &c->reg : NULL, &p->pi, mr,
				     why, n);
}

/* A get that registers for itself only: the entry is out of the index
 * from the start, deregistered at its put. */
static struct entry *uncached(struct gdr_cache *c, const struct plan *p,
			      void *ptr, size_t len, char *why, size_t n,
			      int *err)
{
	struct ibv_mr *mr;
	struct entry *e;

	*err = reg(c, p, (uintptr_t)ptr, (uintptr_t)ptr + len, &mr, why, n);
	if (*err)
		return NULL;
	pthread_mutex_lock(&c->lock);
	e = entry_new(c);
	if (e) {
		entry_open(e, K_PASS, S_DEAD, (uintptr_t)ptr,
			   (uintptr_t)ptr + len, mr);
		if (mrtab_add(c, e)) {
			abandon(c, e);
			e = NULL;
		}
	}
	if (e) {
		if (p->device)
			c->uncached++;
		else
			c->passthrough++;
	}
	pthread_mutex_unlock(&c->lock);
	if (!e) {
		gdr_seam()->verbs.dereg_mr(mr);
		gdr_fmt(why, n, "out of memory for a cache entry");
		*err = ENOMEM;
	}
	return e;
}

/*
 * A miss: wait for a registration of the range in flight, or claim the
 * range with a pending entry, register it, and cache it. The entry with a
 * reference, or NULL with *@err; with *@again when an entry for the range
 * appeared meanwhile: that entry with a reference (validate it), or NULL
 * (look again).
 */
static struct entry *miss(struct gdr_cache *c, const struct plan *p,
			  uintptr_t a, uintptr_t b, char *why, size_t n,
			  int *err, bool *again)
{
	struct entry *e, *release = NULL;
	struct ibv_mr *mr = NULL;
	unsigned long seen;

	*again = false;
	*err = 0;
	pthread_mutex_lock(&c->lock);
	for (;;) {
		e = gdr_ranges_cover(&c->index, a, b);
		if (!e || LD(e->state) != S_PENDING)
			break;
		seen = c->completions;
		c->waiters++;
		while (c->completions == seen)
			pthread_cond_wait(&c->cond, &c->lock);
		c->waiters--;
	}
	if (e) {
		/* Registered meanwhile: taken here, under the lock, for the
		 * caller to validate. Looking it up again without the lock
		 * can fail for as long as other threads keep changing the
		 * index, and a get gave up (EAGAIN) that way. */
		if (!tryget(e))
			e = NULL;
		pthread_mutex_unlock(&c->lock);
		*again = true;
		return e;
	}
	e = entry_new(c);
	if (e && maps_set(e, p)) {
		entry_unget(c, e);
		e = NULL;
	}
	if (e) {
		entry_open(e, p->kind, S_PENDING, p->a, p->b, NULL);
		if (gdr_ranges_insert(&c->index, p->a, p->b, e)) {
			abandon(c, e);
			e = NULL;
		}
	}
	pthread_mutex_unlock(&c->lock);
	if (!e) {
		gdr_fmt(why, n, "out of memory for a cache entry");
		*err = ENOMEM;
		return NULL;
	}

	*err = reg(c, p, p->a, p->b, &mr, why, n);

	pthread_mutex_lock(&c->lock);
	if (LD(e->state) == S_PENDING && *err) {
		gdr_ranges_remove(&c->index, e->start, e);
	} else if (LD(e->state) == S_PENDING) {
		/* Live: readers see the MR once they see the state. */
		__atomic_store_n(&e->mr, mr, __ATOMIC_RELEASE);
		__atomic_store_n(&e->state, (uint8_t)S_LIVE, __ATOMIC_RELEASE);
		c->entries++;
		c->bytes += e->end - e->start;
		c->misses++;
		mrtab_keep(c, e);
		front_set(c, e);
		evict(c, &release);
	} else if (!*err) {
		/* Invalidated while in flight: this get only. */
		__atomic_store_n(&e->mr, mr, __ATOMIC_RELEASE);
		e->kind = K_PASS;
		mrtab_keep(c, e);
		c->uncached++;
	}
	if (*err) {
		/* Nothing registered: gone. */
		abandon(c, e);
		e = NULL;
	}
	c->completions++;
	if (c->waiters)
		pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	release_all(c, release);
	if (!e && *err == ENOMEM && mr)
		gdr_seam()->verbs.dereg_mr(mr);
	return e;
}

/*
 * A stale entry: drop it and every entry over the memory that changed
 * (they all pin memory that is gone).
 */
static void stale(struct gdr_cache *c, struct entry *e,
		  const struct gdr_range *gone)
{
	struct entry *release = NULL;

	__atomic_fetch_add(&c->bad_hits, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&c->lock);
	if (LD(e->state) == S_LIVE) {
		c->stale++;
		drop(c, e, &release);
		drop_overlaps(c, gone->start, gone->end, &release);
	}
	pthread_mutex_unlock(&c->lock);
	release_all(c, release);
	put_entry(c, e);
}

/* A validated hit still maps what it registered (the common case; a
 * stale one goes the slow way, which asks again and drops it). */
static bool hit_valid(const struct entry *e, uintptr_t a, uintptr_t b)
{
	const struct gdr_cuda_lib *lib = gdr_cuda_table();
	struct gdr_range gone;

	return lib && still_valid(&lib->cu, e, a, b, &gone);
}

/*
 * Everything but a hit that is valid: validation of a hit (@e, held),
 * misses, waits. Kept apart from the hit path.
 */
static __attribute__((noinline)) struct ibv_mr *
get_slow(struct gdr_cache *c, void *ptr, size_t len, struct entry *e,
	 struct gdr_cache_get_info *info, size_t info_size)
{
	const struct gdr_cuda_lib *lib;
	uintptr_t a = (uintptr_t)ptr, b = a + len;
	struct gdr_range gone;
	struct plan p;
	char why[GDR_MSG_LEN];
	int err = 0, tries;
	bool again;

	for (tries = 0; tries < GET_TRIES; tries++) {
		enum gdr_cache_result result = GDR_CACHE_RESULT_HIT;

		if (tries && !e)
			e = lookup(c, a, b);
		if (!e) {
			err = plan_miss(c, ptr, len, &p, why, sizeof(why));
			if (err)
				break;
			if (p.kind == K_PASS) {
				e = uncached(c, &p, ptr, len, why, sizeof(why),
					     &err);
				if (!e)
					break;
				get_info(info, info_size,
					 GDR_CACHE_RESULT_UNCACHED,
					 (unsigned int)p.num_maps, p.why);
				return given(c, e);
			}
			e = miss(c, &p, a, b, why, sizeof(why), &err, &again);
			if (again)
				continue; /* registered meanwhile: @e or look */
			if (!e)
				break;
			result = GDR_CACHE_RESULT_MISS;
		} else if (e->kind == K_VALIDATED) {
			/* A hit: the memory must still be what was
			 * registered. */
			lib = gdr_cuda_table();
			gone.start = e->start;
			gone.end = e->end;
			if (!lib || !still_valid(&lib->cu, e, a, b, &gone)) {
				stale(c, e, &gone);
				e = NULL;
				continue;
			}
		}
		get_info(info, info_size, result, e->num_maps, "");
		return given(c, e);
	}
	get_info(info, info_size, 0, 0, "");
	if (e)
		put_entry(c, e); /* taken by the last try's miss */
	if (tries == GET_TRIES)
		return gdr_fail(EAGAIN,
				"gdr_cache_get: [%p, +%zu) kept changing "
				"under the cache (freed and reallocated by "
				"another thread?); try again",
				ptr, len);
	return gdr_fail(err, "%s", why);
}

/* The record's smallest size: the fields before the reason. */
#define GET_INFO_MIN offsetof(struct gdr_cache_get_info, reason)

static bool get_args_ok(struct gdr_cache *c, void *ptr, size_t len)
{
	return c && ptr && len && (uintptr_t)ptr <= UINTPTR_MAX - len;
}

static const char bad_get_args[] =
	"gdr_cache_get: cache and ptr must not be NULL and [ptr, +len) must "
	"be a non-empty range";

GDR_EXPORT struct ibv_mr *gdr_cache_get(struct gdr_cache *c, void *ptr,
					size_t len)
{
	struct entry *e;

	gdr_clear_error();
	if (!get_args_ok(c, ptr, len))
		return gdr_fail(EINVAL, "%s", bad_get_args);
	/* The hit path: no lock; a driver question per mapping only for a
	 * validated entry. */
	e = lookup(c, (uintptr_t)ptr, (uintptr_t)ptr + len);
	if (e && e->kind != K_VALIDATED)
		return given(c, e);
	if (e && hit_valid(e, (uintptr_t)ptr, (uintptr_t)ptr + len))
		return given(c, e);
	return get_slow(c, ptr, len, e, NULL, 0);
}

GDR_EXPORT struct ibv_mr *gdr_cache_get_ex(struct gdr_cache *c, void *ptr,
					   size_t len,
					   struct gdr_cache_get_info *info,
					   size_t info_size)
{
	gdr_clear_error();
	if (info && info_size < GET_INFO_MIN)
		return gdr_fail(EINVAL,
				"info_size %zu is smaller than the first "
				"fields of struct gdr_cache_get_info (%zu); "
				"pass sizeof(*info)",
				info_size, (size_t)GET_INFO_MIN);
	if (!get_args_ok(c, ptr, len)) {
		get_info(info, info_size, 0, 0, "");
		return gdr_fail(EINVAL, "%s", bad_get_args);
	}
	return get_slow(c, ptr, len,
			lookup(c, (uintptr_t)ptr, (uintptr_t)ptr + len), info,
			info_size);
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
static bool holds(const struct entry *e, const struct ibv_mr *mr)
{
	return e && mr_of(e) == mr && refs_of(LD(e->word)) != REFS_DEAD;
}

static struct entry *find_mr(struct gdr_cache *c, const struct ibv_mr *mr)
{
	struct entry **slot, *e, *e1;
	size_t i;

	if (last_got.cache == c->id && holds(last_got.e, mr))
		return last_got.e;
	mr_hint_get(c, mr, &e, &e1);
	if (holds(e, mr))
		return e;
	if (holds(e1, mr))
		return e1;
	pthread_mutex_lock(&c->lock);
	slot = mrtab_slot(c, mr);
	e = slot && holds(*slot, mr) ? *slot : NULL;
	for (i = 0; !e && c->mrtab_short && i < c->num_slots; i++)
		if (LD(slot_at(c, i)->state) != S_FREE &&
		    holds(slot_at(c, i), mr))
			e = slot_at(c, i);
	pthread_mutex_unlock(&c->lock);
	return e;
}

GDR_EXPORT int gdr_cache_put(struct gdr_cache *c, struct ibv_mr *mr)
{
	struct entry *e;
	int err;

	gdr_clear_error();
	if (!c || !mr) {
		gdr_fail(EINVAL,
			 "gdr_cache_put: cache and mr must not be NULL");
		return EINVAL;
	}
	e = find_mr(c, mr);
	err = e ? put_entry(c, e) : EINVAL;
	if (err == EINVAL) {
		gdr_fail(EINVAL,
			 "gdr_cache_put: this MR is not one the cache gave out "
			 "(or it was put back already)");
		return EINVAL;
	}
	if (err)
		gdr_fail(err,
			 "ibv_dereg_mr failed with %s; the MR stays "
			 "registered: it is deregistered again by the next "
			 "release or gdr_cache_destroy()",
			 gdr_errno_name(err));
	return gdr_errno_public(err);
}

GDR_EXPORT int gdr_cache_invalidate(struct gdr_cache *c, void *ptr, size_t len)
{
	struct entry *release = NULL;
	uintptr_t a = (uintptr_t)ptr;
	unsigned int n;

	gdr_clear_error();
	if (!c || !len || a > UINTPTR_MAX - len) {
		gdr_fail(EINVAL, "gdr_cache_invalidate: cache must not be NULL "
				 "and [ptr, +len) a non-empty range");
		return EINVAL;
	}
	pthread_mutex_lock(&c->lock);
	n = drop_overlaps(c, a, a + len, &release);
	c->invalidations += n;
	pthread_mutex_unlock(&c->lock);
	release_all(c, release);
	return 0;
}

GDR_EXPORT int gdr_cache_purge(struct gdr_cache *c)
{
	const struct gdr_cuda_lib *lib;
	struct entry **held, *e, *release = NULL;
	size_t n = 0, i;

	gdr_clear_error();
	if (!c) {
		gdr_fail(EINVAL, "gdr_cache_purge: cache is NULL");
		return EINVAL;
	}
	lib = gdr_cuda_table();
	if (!lib)
		return 0; /* no CUDA in this process: no device entries */
	/* Hold every idle device entry, check each with no lock held, then
	 * drop the stale ones. */
	pthread_mutex_lock(&c->lock);
	held = c->entries ? calloc(c->entries, sizeof(*held)) : NULL;
	if (c->entries && !held) {
		pthread_mutex_unlock(&c->lock);
		gdr_fail(ENOMEM, "out of memory for the purge");
		return ENOMEM;
	}
	for (i = 0; i < c->num_slots && n < c->entries; i++) {
		e = slot_at(c, i);
		if (LD(e->state) == S_LIVE &&
		    (e->kind == K_VALIDATED || e->kind == K_TRUSTED) &&
		    !refs_of(LD(e->word)) && tryget(e))
			held[n++] = e;
	}
	pthread_mutex_unlock(&c->lock);
	for (i = 0; i < n; i++) {
		struct gdr_range gone;

		e = held[i];
		__atomic_fetch_add(&c->bad_hits, 1, __ATOMIC_RELAXED);
		if (still_valid(&lib->cu, e, e->start, e->end, &gone))
			continue;
		pthread_mutex_lock(&c->lock);
		c->stale++;
		drop(c, e, &release);
		pthread_mutex_unlock(&c->lock);
	}
	for (i = 0; i < n; i++)
		put_entry(c, held[i]);
	free(held);
	release_all(c, release);
	return 0;
}

GDR_EXPORT int gdr_cache_query_stats(struct gdr_cache *c,
				     struct gdr_cache_stats *stats,
				     size_t stats_size)
{
	struct gdr_cache_stats st;
	const size_t size_0_2 = offsetof(struct gdr_cache_stats, uncached);
	uint64_t hits;
	size_t i;

	gdr_clear_error();
	if (!c || !stats || stats_size < size_0_2) {
		gdr_fail(EINVAL, "gdr_cache_query_stats: cache and stats must "
				 "not be NULL, stats_size at least "
				 "sizeof(struct gdr_cache_stats) of 0.2");
		return EINVAL;
	}
	memset(&st, 0, sizeof(st));
	pthread_mutex_lock(&c->lock);
	hits = __atomic_load_n(&c->retired_hits, __ATOMIC_RELAXED);
	for (i = 0; i < c->num_slots; i++)
		if (LD(slot_at(c, i)->state) != S_FREE)
			hits += LD(slot_at(c, i)->word) >> HIT_SHIFT;
	st.hits = hits - LD(c->bad_hits);
	st.misses = c->misses;
	st.stale = c->stale;
	st.evictions = c->evictions;
	st.invalidations = c->invalidations;
	st.passthrough = c->passthrough;
	st.uncached = c->uncached;
	st.in_use = in_use(c);
	st.entries = c->entries;
	st.bytes = c->bytes;
	pthread_mutex_unlock(&c->lock);
	memcpy(stats, &st, stats_size < sizeof(st) ? stats_size : sizeof(st));
	return 0;
}

/*
 * For the tests, with no other call on @c in flight: every free entry is
 * on the free list or the freed stack, once. A push onto the freed stack
 * that lost a race would leave one on neither, never to be used again.
 */
int gdr_cache_audit(struct gdr_cache *c, char *why, size_t n)
{
	size_t i, free_state = 0, listed = 0;
	struct entry *e;
	int err = 0;

	pthread_mutex_lock(&c->lock);
	for (i = 0; i < c->num_slots; i++)
		free_state += LD(slot_at(c, i)->state) == S_FREE;
	for (e = c->free; e && listed <= c->num_slots; e = e->u.next)
		listed++;
	for (e = LD(c->freed); e && listed <= c->num_slots; e = e->u.next)
		listed++;
	if (listed != free_state) {
		gdr_fmt(why, n,
			"%zu of %zu entries are free, %zu are on the free "
			"lists",
			free_state, c->num_slots, listed);
		err = EPROTO;
	}
	/* A put finds every live entry by its MR alone. */
	for (i = 0; !err && !c->mrtab_short && i < c->num_slots; i++) {
		struct entry **slot;

		e = slot_at(c, i);
		if (LD(e->state) != S_LIVE)
			continue;
		slot = mrtab_slot(c, e->mr);
		if (!slot || *slot != e) {
			gdr_fmt(why, n,
				"a live entry's MR is not in the MR table");
			err = EPROTO;
		}
	}
	pthread_mutex_unlock(&c->lock);
	return err;
}
