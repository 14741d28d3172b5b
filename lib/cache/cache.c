/* SPDX-License-Identifier: MIT */
/*
 * The registration cache's public calls (cache-int.h describes the
 * design): gets (the lock-free hit, the miss that registers, the waits),
 * puts, invalidation, purge, statistics.
 */
#include "cache-int.h"

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

/*
 * Under the lock: what a put finds an MR's entry by without reading the
 * MR (a second put's MR may be freed: only a pointer the cache holds is
 * ever read through). Cached entries from when they go live, entries not
 * cached, and those dropped while in use, until their release. The
 * cache's own address marks a removed slot. Keyed by the pointer alone.
 */

/* --- the public calls ---------------------------------------------------------- */

#define CACHE_ATTR_KNOWN                                                       \
	(GDR_CACHE_ATTR_MAX_ENTRIES | GDR_CACHE_ATTR_MAX_BYTES |               \
	 GDR_CACHE_ATTR_FLAGS | GDR_CACHE_ATTR_MAX_REG_RATIO |                 \
	 GDR_CACHE_ATTR_REG)
#define CACHE_FLAGS_KNOWN                                                      \
	(GDR_CACHE_WHOLE_ALLOC | GDR_CACHE_HOST | GDR_CACHE_TRUSTED)

GDR_PUBLIC struct gdr_cache *gdr_cache_create(struct ibv_pd *pd,
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

GDR_PUBLIC int gdr_cache_destroy(struct gdr_cache *c)
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
		cache_drop(c, slot_at(c, i), &release);
	pthread_mutex_unlock(&c->lock);
	err = cache_release_all(c, release);
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
		cache_maps_free(slot_at(c, i));
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
		cache_undo(c, e);
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
		cache_undo(c, e);
	}
	return NULL;
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
	e = cache_entry_new(c);
	if (e) {
		cache_entry_open(e, K_PASS, S_DEAD, (uintptr_t)ptr,
				 (uintptr_t)ptr + len, mr);
		if (cache_mrtab_add(c, e)) {
			cache_abandon(c, e);
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
	e = cache_entry_new(c);
	if (e && cache_maps_set(e, p)) {
		cache_entry_unget(c, e);
		e = NULL;
	}
	if (e) {
		cache_entry_open(e, p->kind, S_PENDING, p->a, p->b, NULL);
		if (gdr_ranges_insert(&c->index, p->a, p->b, e)) {
			cache_abandon(c, e);
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
		cache_mrtab_keep(c, e);
		cache_front_set(c, e);
		cache_evict(c, &release);
	} else if (!*err) {
		/* Invalidated while in flight: this get only. */
		__atomic_store_n(&e->mr, mr, __ATOMIC_RELEASE);
		e->kind = K_PASS;
		cache_mrtab_keep(c, e);
		c->uncached++;
	}
	if (*err) {
		/* Nothing registered: gone. */
		cache_abandon(c, e);
		e = NULL;
	}
	c->completions++;
	if (c->waiters)
		pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	cache_release_all(c, release);
	if (!e && *err == ENOMEM && mr)
		gdr_seam()->verbs.dereg_mr(mr);
	return e;
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
			err = cache_plan_miss(c, ptr, len, &p, why,
					      sizeof(why));
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
			if (!lib ||
			    !cache_still_valid(&lib->cu, e, a, b, &gone)) {
				cache_stale(c, e, &gone);
				e = NULL;
				continue;
			}
		}
		get_info(info, info_size, result, e->num_maps, "");
		return given(c, e);
	}
	get_info(info, info_size, 0, 0, "");
	if (e)
		cache_put_entry(c, e); /* taken by the last try's miss */
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

GDR_PUBLIC struct ibv_mr *gdr_cache_get(struct gdr_cache *c, void *ptr,
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
	if (e && cache_hit_valid(e, (uintptr_t)ptr, (uintptr_t)ptr + len))
		return given(c, e);
	return get_slow(c, ptr, len, e, NULL, 0);
}

GDR_PUBLIC struct ibv_mr *gdr_cache_get_ex(struct gdr_cache *c, void *ptr,
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

void (*gdr_cache_put_pause)(struct gdr_cache *c, struct ibv_mr *mr);

/* The entry and the life (*@gen) in which it holds @mr. */
static struct entry *find_mr(struct gdr_cache *c, const struct ibv_mr *mr,
			     uint32_t *gen)
{
	struct entry **slot, *e, *e1;
	size_t i;

	if (last_got.cache == c->id && holds_at(last_got.e, mr, gen))
		return last_got.e;
	mr_hint_get(c, mr, &e, &e1);
	if (holds_at(e, mr, gen))
		return e;
	if (holds_at(e1, mr, gen))
		return e1;
	pthread_mutex_lock(&c->lock);
	slot = cache_mrtab_slot(c, mr);
	e = slot && holds_at(*slot, mr, gen) ? *slot : NULL;
	for (i = 0; !e && c->mrtab_short && i < c->num_slots; i++)
		if (LD(slot_at(c, i)->state) != S_FREE &&
		    holds_at(slot_at(c, i), mr, gen))
			e = slot_at(c, i);
	pthread_mutex_unlock(&c->lock);
	return e;
}

GDR_PUBLIC int gdr_cache_put(struct gdr_cache *c, struct ibv_mr *mr)
{
	struct entry *e;
	uint32_t gen;
	int err;

	gdr_clear_error();
	if (!c || !mr) {
		gdr_fail(EINVAL,
			 "gdr_cache_put: cache and mr must not be NULL");
		return EINVAL;
	}
	e = find_mr(c, mr, &gen);
	if (__builtin_expect(gdr_cache_put_pause != NULL, 0))
		gdr_cache_put_pause(c, mr);
	err = e ? cache_put_entry_at(c, e, gen) : EINVAL;
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

GDR_PUBLIC int gdr_cache_invalidate(struct gdr_cache *c, void *ptr, size_t len)
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
	n = cache_drop_overlaps(c, a, a + len, &release);
	c->invalidations += n;
	pthread_mutex_unlock(&c->lock);
	cache_release_all(c, release);
	return 0;
}

GDR_PUBLIC int gdr_cache_purge(struct gdr_cache *c)
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
		if (cache_still_valid(&lib->cu, e, e->start, e->end, &gone))
			continue;
		pthread_mutex_lock(&c->lock);
		c->stale++;
		cache_drop(c, e, &release);
		pthread_mutex_unlock(&c->lock);
	}
	for (i = 0; i < n; i++)
		cache_put_entry(c, held[i]);
	free(held);
	cache_release_all(c, release);
	return 0;
}

GDR_PUBLIC int gdr_cache_query_stats(struct gdr_cache *c,
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
		slot = cache_mrtab_slot(c, e->mr);
		if (!slot || *slot != e) {
			gdr_fmt(why, n,
				"a live entry's MR is not in the MR table");
			err = EPROTO;
		}
	}
	pthread_mutex_unlock(&c->lock);
	return err;
}
