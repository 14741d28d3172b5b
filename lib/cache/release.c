/* SPDX-License-Identifier: MIT */
/*
 * Entries leaving the cache's index (invalidated, evicted by the clock,
 * stale) and their MRs deregistered with no lock held; an MR whose
 * deregistration fails is kept and tried again.
 */
#include "cache-int.h"

/*
 * Deregister what the lock's holder collected (dead, claimed, out of the
 * index), with no lock held. An MR whose
 * deregistration fails stays registered: it is kept and tried again by
 * the next release, at the latest by gdr_cache_destroy(). 0 or the first
 * errno.
 */
int cache_release_all(struct gdr_cache *c, struct entry *list)
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
		cache_entry_free_nolock(c, e);
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
void cache_drop(struct gdr_cache *c, struct entry *e, struct entry **release)
{
	uint8_t st = LD(e->state);
	bool dead;

	if (st != S_PENDING && st != S_LIVE)
		return;
	gdr_ranges_remove(&c->index, e->start, e);
	__atomic_store_n(&e->state, (uint8_t)S_DEAD, __ATOMIC_SEQ_CST);
	dead = cache_take_out(e);
	if (st == S_PENDING)
		return; /* its owner's reference: the owner puts it */
	c->entries--;
	c->bytes -= e->end - e->start;
	if (dead) {
		cache_mrtab_remove(c, e);
		cache_maps_free(e);
		e->u.next = *release;
		*release = e;
	} else if (!cache_mrtab_slot(c, e->mr)) {
		cache_mrtab_keep(c, e); /* not there: its add had failed */
	}
}

/* Under the lock: drop every entry overlapping [a, b). How many. */
unsigned int cache_drop_overlaps(struct gdr_cache *c, uintptr_t a, uintptr_t b,
				 struct entry **release)
{
	void *hit[MAX_OVERLAPS];
	unsigned int n, i, total = 0;

	do {
		n = gdr_ranges_overlaps(&c->index, a, b, hit, MAX_OVERLAPS);
		for (i = 0; i < n; i++)
			cache_drop(c, (struct entry *)hit[i], release);
		total += n;
	} while (n == MAX_OVERLAPS);
	return total;
}

/*
 * Under the lock: idle entries past the limits, by the clock: an entry
 * used since the hand last passed loses its bit and stays; one in use is
 * never evicted.
 */
void cache_evict(struct gdr_cache *c, struct entry **release)
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
		cache_drop(c, e, release);
		c->evictions++;
	}
}

/* The last reference of an out entry is gone: it is dead and ours. */
static int release_last(struct gdr_cache *c, struct entry *e)
{
	pthread_mutex_lock(&c->lock);
	cache_mrtab_remove(c, e);
	pthread_mutex_unlock(&c->lock);
	cache_maps_free(e); /* ours alone now */
	e->u.next = NULL;
	return cache_release_all(c, e);
}

int cache_put_entry(struct gdr_cache *c, struct entry *e)
{
	bool last;
	int err = unref(e, &last);

	if (err || !last)
		return err;
	return release_last(c, e);
}

int cache_put_entry_at(struct gdr_cache *c, struct entry *e, uint32_t gen)
{
	bool last;
	int err = unref_at(e, gen, &last);

	if (err || !last)
		return err;
	return release_last(c, e);
}

/* A reference taken by mistake (a stale pointer, a pending entry). */
void cache_undo(struct gdr_cache *c, struct entry *e)
{
	__atomic_fetch_add(&c->bad_hits, 1, __ATOMIC_RELAXED);
	cache_put_entry(c, e);
}

/*
 * A stale entry: drop it and every entry over the memory that changed
 * (they all pin memory that is gone).
 */
void cache_stale(struct gdr_cache *c, struct entry *e,
		 const struct gdr_range *gone)
{
	struct entry *release = NULL;

	__atomic_fetch_add(&c->bad_hits, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&c->lock);
	if (LD(e->state) == S_LIVE) {
		c->stale++;
		cache_drop(c, e, &release);
		cache_drop_overlaps(c, gone->start, gone->end, &release);
	}
	pthread_mutex_unlock(&c->lock);
	cache_release_all(c, release);
	cache_put_entry(c, e);
}
