/* SPDX-License-Identifier: MIT */
/*
 * The registration cache. Entries live in a range index (ranges.c) keyed
 * by the range they register; each device-memory entry remembers the CUDA buffer
 * id of every physical allocation it covers (one for cuMemAlloc memory,
 * one per chunk of a VMM range) and a hit re-reads the id under the
 * requested range, so memory freed and allocated again is never served an
 * old MR. Nothing in CUDA is intercepted.
 *
 * Locks: a read-write lock for the index and the MR table (lookups share
 * it), a mutex for the LRU list, and a mutex with a condition for
 * waiting on a registration another thread has in flight. No CUDA or
 * verbs call is made while holding any of them: validation, registration
 * and deregistration happen between.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define DEFAULT_MAX_ENTRIES 4096
#define DEFAULT_MAX_REG_RATIO 16
#define MAX_CHUNKS 8 /* VMM chunks an entry validates; more: not cached */
#define MAX_OVERLAPS 256

enum entry_kind {
	E_DEVICE, /* validated by buffer ids */
	E_HOST,	  /* host memory, GDR_CACHE_HOST: trusted until invalidated */
	E_PASSTHROUGH, /* host memory, not cached: deregistered on put */
	E_PENDING,     /* a registration in flight */
};

struct chunk {
	uintptr_t start;
	size_t size;
	unsigned long long buffer_id;
};

/*
 * What a hit reads (references, kind, MR, the first chunk's buffer id) and
 * what a put reads (the hash chain) share the first cache line; entries
 * are allocated on a line boundary.
 */
struct entry {
	int refs; /* atomic */
	enum entry_kind kind;
	unsigned int num_chunks;
	bool dead; /* out of the index: deregister at the last put */
	bool idle; /* on the LRU list */
	struct ibv_mr *mr;
	struct entry *hash_next;
	struct chunk chunks[MAX_CHUNKS];
	struct entry *lru_prev, *lru_next;
	uintptr_t start, end; /* the range registered */
};

#define LINE 64

static struct entry *entry_new(void)
{
	size_t size = (sizeof(struct entry) + LINE - 1) / LINE * LINE;
	struct entry *e = aligned_alloc(LINE, size);

	if (e)
		memset(e, 0, sizeof(*e));
	return e;
}

struct gdr_cache {
	struct ibv_pd *pd;
	uint32_t flags;
	size_t max_entries, max_bytes;
	unsigned int max_reg_ratio;
	struct gdr_reg_attr reg;
	bool have_reg;

	pthread_rwlock_t lock; /* index, MR table, counts */
	struct gdr_ranges index;
	struct entry **table; /* MR -> entry */
	size_t table_size, table_used;
	size_t entries, bytes; /* cached (not pass-through, not pending) */

	/*
	 * Cached entries by the time they were last put back, oldest first.
	 * An entry stays on it while in use (a hit touches no list); the
	 * eviction passes over those with references.
	 */
	pthread_mutex_t lru_lock;
	struct entry *lru_head, *lru_tail;

	pthread_mutex_t zombie_lock; /* MRs whose deregistration failed */
	struct entry *zombies;

	pthread_mutex_t wait_lock; /* registrations in flight */
	pthread_cond_t wait_cond;
	unsigned long completions;

	/* statistics, atomic */
	uint64_t hits, misses, stale, evictions, invalidations, passthrough;
};

#define ADD(x, v) __atomic_add_fetch(&(x), (v), __ATOMIC_RELAXED)
#define GET(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

/* --- the MR table --------------------------------------------------------- */

static size_t slot(const struct gdr_cache *c, const struct ibv_mr *mr)
{
	uintptr_t h = (uintptr_t)mr;

	h ^= h >> 17;
	h *= 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 20) & (c->table_size - 1);
}

/* Under the write lock. 0 or ENOMEM. */
static int table_add(struct gdr_cache *c, struct entry *e)
{
	size_t i;

	if (c->table_used >= c->table_size) {
		size_t n = c->table_size * 2;
		struct entry **t = calloc(n, sizeof(*t)), *x, *next;

		if (!t)
			return ENOMEM;
		for (i = 0; i < c->table_size; i++) {
			for (x = c->table[i]; x; x = next) {
				size_t h;

				next = x->hash_next;
				h = ((uintptr_t)x->mr ^
				     ((uintptr_t)x->mr >> 17)) *
						    0x9e3779b97f4a7c15ull >>
					    20 &
				    (n - 1);
				x->hash_next = t[h];
				t[h] = x;
			}
		}
		free(c->table);
		c->table = t;
		c->table_size = n;
	}
	i = slot(c, e->mr);
	e->hash_next = c->table[i];
	c->table[i] = e;
	c->table_used++;
	return 0;
}

static struct entry *table_find(const struct gdr_cache *c,
				const struct ibv_mr *mr)
{
	struct entry *e;

	for (e = c->table[slot(c, mr)]; e; e = e->hash_next)
		if (e->mr == mr)
			return e;
	return NULL;
}

static void table_remove(struct gdr_cache *c, struct entry *e)
{
	struct entry **p;

	for (p = &c->table[slot(c, e->mr)]; *p; p = &(*p)->hash_next) {
		if (*p == e) {
			*p = e->hash_next;
			c->table_used--;
			return;
		}
	}
}

/* MRs given out and not put back: the references of every entry in the
 * table (a walk, so that a hit counts nothing shared). Under the lock. */
static uint64_t in_use(const struct gdr_cache *c)
{
	const struct entry *e;
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < c->table_size; i++)
		for (e = c->table[i]; e; e = e->hash_next)
			n += (uint64_t)__atomic_load_n(&e->refs,
						       __ATOMIC_RELAXED);
	return n;
}

/* --- the LRU list ------------------------------------------------------------ */

static void lru_unlink(struct gdr_cache *c, struct entry *e)
{
	if (!e->idle)
		return;
	if (e->lru_prev)
		e->lru_prev->lru_next = e->lru_next;
	else
		c->lru_head = e->lru_next;
	if (e->lru_next)
		e->lru_next->lru_prev = e->lru_prev;
	else
		c->lru_tail = e->lru_prev;
	e->lru_prev = e->lru_next = NULL;
	e->idle = false;
}

static void lru_append(struct gdr_cache *c, struct entry *e)
{
	e->lru_next = NULL;
	e->lru_prev = c->lru_tail;
	if (c->lru_tail)
		c->lru_tail->lru_next = e;
	else
		c->lru_head = e;
	c->lru_tail = e;
	e->idle = true;
}

/* --- helpers ------------------------------------------------------------------ */

static size_t entry_bytes(const struct entry *e)
{
	return e->end - e->start;
}

/*
 * Take @e out of the index (under the write lock). An idle one goes to
 * *@release for deregistration after the locks; one in use is
 * deregistered at its last put.
 */
static void drop(struct gdr_cache *c, struct entry *e, struct entry **release)
{
	/* A registration in flight: its owner sees it cancelled and gives
	 * the caller the MR without caching it. */
	if (e->kind == E_PENDING) {
		e->dead = true;
		return;
	}
	gdr_ranges_remove(&c->index, e->start, e);
	e->dead = true;
	c->entries--;
	c->bytes -= entry_bytes(e);
	pthread_mutex_lock(&c->lru_lock);
	lru_unlink(c, e);
	pthread_mutex_unlock(&c->lru_lock);
	if (__atomic_load_n(&e->refs, __ATOMIC_ACQUIRE) == 0) {
		table_remove(c, e);
		e->hash_next = *release;
		*release = e;
	}
}

/* An MR whose deregistration failed: still registered, so kept and tried
 * again by the next release (at the latest by gdr_cache_destroy()). */
static void keep_for_retry(struct gdr_cache *c, struct entry *e, int err)
{
	gdr_debug("cache: ibv_dereg_mr failed: %s; kept for a retry",
		  gdr_errno_name(err));
	pthread_mutex_lock(&c->zombie_lock);
	e->hash_next = c->zombies;
	c->zombies = e;
	pthread_mutex_unlock(&c->zombie_lock);
}

/*
 * Deregister what drop() collected, with no lock held. An MR whose
 * deregistration fails is kept and tried again later (and by destroy):
 * it is still registered, and forgetting it would leak it.
 */
static int release_all(struct gdr_cache *c, struct entry *list)
{
	const struct gdr_seam *s = gdr_seam();
	struct entry *next;
	int err, first = 0;

	pthread_mutex_lock(&c->zombie_lock);
	while (c->zombies) { /* the earlier failures first */
		next = c->zombies->hash_next;
		c->zombies->hash_next = list;
		list = c->zombies;
		c->zombies = next;
	}
	pthread_mutex_unlock(&c->zombie_lock);
	for (; list; list = next) {
		next = list->hash_next;
		err = s->verbs.dereg_mr(list->mr);
		if (!err) {
			free(list);
			continue;
		}
		if (!first)
			first = err;
		keep_for_retry(c, list, err);
	}
	return first;
}

/* Under the write lock: drop every entry overlapping [a, b). */
static unsigned int drop_overlaps(struct gdr_cache *c, uintptr_t a, uintptr_t b,
				  struct entry **release)
{
	void *hit[MAX_OVERLAPS];
	unsigned int n, i, total = 0, round;

	do {
		n = gdr_ranges_overlaps(&c->index, a, b, hit, MAX_OVERLAPS);
		round = 0;
		for (i = 0; i < n; i++) {
			struct entry *e = (struct entry *)hit[i];

			if (e->dead)
				continue; /* cancelled in flight already */
			drop(c, e, release);
			round++;
		}
		total += round;
	} while (n == MAX_OVERLAPS && round);
	return total;
}

/*
 * Under the write lock (so no reference is taken or given back meanwhile):
 * idle entries past the limits, least recently put back first.
 */
static void evict(struct gdr_cache *c, struct entry **release)
{
	struct entry *e, *next;

	pthread_mutex_lock(&c->lru_lock);
	e = c->lru_head;
	pthread_mutex_unlock(&c->lru_lock);
	while (((c->max_entries && c->entries > c->max_entries) ||
		(c->max_bytes && c->bytes > c->max_bytes)) &&
	       e) {
		next = e->lru_next;
		if (__atomic_load_n(&e->refs, __ATOMIC_ACQUIRE)) {
			e = next; /* in use: never evicted */
			continue;
		}
		drop(c, e, release);
		e = next;
		ADD(c->evictions, 1);
	}
}

/*
 * The buffer ids under [a, b) still those the entry recorded? One
 * cuPointerGetAttribute per chunk the range touches (usually one).
 */
static bool still_valid(const struct gdr_cuda_ops *cu, const struct entry *e,
			uintptr_t a, uintptr_t b)
{
	unsigned long long id;
	unsigned int i;

	for (i = 0; i < e->num_chunks; i++) {
		const struct chunk *k = &e->chunks[i];
		uintptr_t at = a > k->start ? a : k->start;

		if (at >= b || at >= k->start + k->size)
			continue;
		if (cu->cuPointerGetAttribute(
			    &id, CU_POINTER_ATTRIBUTE_BUFFER_ID,
			    (CUdeviceptr)at) != CUDA_SUCCESS ||
		    id != k->buffer_id)
			return false;
	}
	return true;
}

/*
 * The physical allocations under [a, b): their ranges and buffer ids, read
 * from the driver. 0, or an errno when they cannot be described (then the
 * range is not cached).
 */
static int describe(const struct gdr_cuda_ops *cu, uintptr_t a, uintptr_t b,
		    struct entry *e)
{
	CUpointer_attribute attrs[3] = { CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
					 CU_POINTER_ATTRIBUTE_RANGE_SIZE,
					 CU_POINTER_ATTRIBUTE_BUFFER_ID };
	uintptr_t at = a;

	e->num_chunks = 0;
	while (at < b) {
		struct chunk *k;
		CUdeviceptr start = 0;
		size_t size = 0;
		unsigned long long id = 0;
		void *data[3] = { &start, &size, &id };

		if (e->num_chunks == MAX_CHUNKS)
			return E2BIG;
		if (cu->cuPointerGetAttributes(
			    3, attrs, data, (CUdeviceptr)at) != CUDA_SUCCESS ||
		    !size || (uintptr_t)start > at ||
		    (uintptr_t)start + size <= at)
			return EINVAL;
		k = &e->chunks[e->num_chunks++];
		k->start = (uintptr_t)start;
		k->size = size;
		k->buffer_id = id;
		at = (uintptr_t)start + size;
	}
	return 0;
}

static int parse_env(const char *name, size_t *out, char *why, size_t n)
{
	const struct gdr_seam *s = gdr_seam();
	const char *v = s->getenv ? s->getenv(name) : NULL;
	char *end;
	unsigned long long x;

	if (!v || !*v)
		return 0;
	errno = 0;
	x = strtoull(v, &end, 0);
	if (errno || end == v || *end || *v == '-') {
		gdr_fmt(why, n,
			"%s=%.40s is not a number; set a count of entries or "
			"bytes (0: no limit), or unset it",
			name, v);
		return EINVAL;
	}
	*out = (size_t)x;
	return 0;
}

/* --- the public calls ------------------------------------------------------------ */

#define CACHE_ATTR_KNOWN                                                       \
	(GDR_CACHE_ATTR_MAX_ENTRIES | GDR_CACHE_ATTR_MAX_BYTES |               \
	 GDR_CACHE_ATTR_FLAGS | GDR_CACHE_ATTR_MAX_REG_RATIO |                 \
	 GDR_CACHE_ATTR_REG)
#define CACHE_FLAGS_KNOWN (GDR_CACHE_WHOLE_ALLOC | GDR_CACHE_HOST)

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
				"use GDR_CACHE_WHOLE_ALLOC and GDR_CACHE_HOST",
				attr->flags & ~(uint32_t)CACHE_FLAGS_KNOWN);
	why[0] = '\0';
	err = parse_env("GPUDIRECT_CACHE_MAX_ENTRIES", &max_entries, why,
			sizeof(why));
	if (!err)
		err = parse_env("GPUDIRECT_CACHE_MAX_BYTES", &max_bytes, why,
				sizeof(why));
	if (err)
		return gdr_fail(err, "%s", why);
	c = calloc(1, sizeof(*c));
	if (!c)
		return gdr_fail(ENOMEM, "out of memory for the cache");
	c->table_size = 64;
	c->table = calloc(c->table_size, sizeof(*c->table));
	if (!c->table) {
		free(c);
		return gdr_fail(ENOMEM, "out of memory for the cache");
	}
	c->pd = pd;
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
	pthread_rwlock_init(&c->lock, NULL);
	pthread_mutex_init(&c->zombie_lock, NULL);
	pthread_mutex_init(&c->lru_lock, NULL);
	pthread_mutex_init(&c->wait_lock, NULL);
	pthread_cond_init(&c->wait_cond, NULL);
	gdr_debug("cache %p: max %zu entries, %zu bytes, flags 0x%x", (void *)c,
		  c->max_entries, c->max_bytes, c->flags);
	return c;
}

GDR_EXPORT int gdr_cache_destroy(struct gdr_cache *c)
{
	struct entry *release = NULL, *e;
	uint64_t busy;
	size_t i;
	int err;

	gdr_clear_error();
	if (!c) {
		gdr_fail(EINVAL, "cache is NULL");
		return EINVAL;
	}
	pthread_rwlock_wrlock(&c->lock);
	busy = in_use(c);
	if (busy) {
		pthread_rwlock_unlock(&c->lock);
		gdr_fail(EBUSY,
			 "%llu MRs from gdr_cache_get() are not put back; put "
			 "them back first",
			 (unsigned long long)busy);
		return EBUSY;
	}
	for (i = 0; i < c->table_size; i++) {
		while ((e = c->table[i])) {
			c->table[i] = e->hash_next;
			e->hash_next = release;
			release = e;
		}
	}
	c->table_used = 0;
	gdr_ranges_clear(&c->index);
	c->lru_head = c->lru_tail = NULL;
	c->entries = c->bytes = 0;
	pthread_rwlock_unlock(&c->lock);
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
	pthread_rwlock_destroy(&c->lock);
	pthread_mutex_destroy(&c->zombie_lock);
	pthread_mutex_destroy(&c->lru_lock);
	pthread_mutex_destroy(&c->wait_lock);
	pthread_cond_destroy(&c->wait_cond);
	free(c->table);
	free(c);
	return 0;
}

/* A cached entry covering [a, b) with a reference taken, or NULL. */
static struct entry *lookup(struct gdr_cache *c, uintptr_t a, uintptr_t b)
{
	struct entry *e;

	pthread_rwlock_rdlock(&c->lock);
	e = gdr_ranges_cover(&c->index, a, b);
	if (e && e->kind != E_PENDING)
		__atomic_add_fetch(&e->refs, 1, __ATOMIC_ACQ_REL);
	else
		e = NULL;
	pthread_rwlock_unlock(&c->lock);
	return e;
}

/*
 * Give a reference back; the last one of a dead or pass-through entry
 * deregisters it. The read lock keeps drop() (which decides under the
 * write lock whether an entry is still in use) from running in between.
 */
static int unref(struct gdr_cache *c, struct entry *e)
{
	const struct gdr_seam *s = gdr_seam();
	int err;

	pthread_rwlock_rdlock(&c->lock);
	if (__atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL) > 0) {
		pthread_rwlock_unlock(&c->lock);
		return 0;
	}
	if (e->kind != E_PASSTHROUGH && !e->dead) {
		/* Used last now: to the tail. */
		pthread_mutex_lock(&c->lru_lock);
		if (c->lru_tail != e) {
			lru_unlink(c, e);
			lru_append(c, e);
		}
		pthread_mutex_unlock(&c->lru_lock);
		pthread_rwlock_unlock(&c->lock);
		return 0;
	}
	pthread_rwlock_unlock(&c->lock);
	/* Out of the index with no reference: nobody else can reach it. */
	pthread_rwlock_wrlock(&c->lock);
	table_remove(c, e); /* first: a new MR may reuse the address */
	pthread_rwlock_unlock(&c->lock);
	err = s->verbs.dereg_mr(e->mr);
	if (err) {
		keep_for_retry(c, e, err);
		return err;
	}
	free(e);
	return 0;
}

/* Registration of [a, b) for the cache: the range to register. */
static void reg_range(const struct gdr_cache *c, const struct gdr_ptr_info *pi,
		      uintptr_t *a, uintptr_t *b)
{
	uintptr_t s = pi->range_start, e = pi->range_start + pi->range_size;
	size_t len = *b - *a;

	if (!(c->flags & GDR_CACHE_WHOLE_ALLOC) || !s || s > *a || e < *b)
		return;
	if (c->max_reg_ratio && pi->range_size / c->max_reg_ratio > len)
		return;
	*a = s;
	*b = e;
}

static struct ibv_mr *miss(struct gdr_cache *c, void *ptr, size_t len,
			   struct entry **out, char *why, size_t n, int *err)
{
	const struct gdr_cuda_lib *lib = gdr_cuda_table();
	struct entry *pend, *e, *found, *release = NULL;
	uintptr_t a = (uintptr_t)ptr, b = a + len;
	struct gdr_ptr_info pi;
	struct ibv_mr *mr;
	unsigned long seen;

	*err = gdr_classify(ptr, len, &pi, why, n);
	if (*err)
		return NULL;
	e = entry_new();
	if (!e) {
		*err = ENOMEM;
		gdr_fmt(why, n, "out of memory for a cache entry");
		return NULL;
	}
	e->refs = 1;
	if (pi.type == GDR_MEM_CUDA_DEVICE || pi.type == GDR_MEM_CUDA_POOL) {
		e->kind = E_DEVICE;
		reg_range(c, &pi, &a, &b);
		if (!lib || describe(&lib->cu, a, b, e))
			e->kind = E_PASSTHROUGH; /* not describable: no cache */
	} else {
		e->kind = (c->flags & GDR_CACHE_HOST) ? E_HOST : E_PASSTHROUGH;
	}
	if (e->kind == E_PASSTHROUGH) {
		*err = gdr_register_internal(c->pd, ptr, len,
					     c->have_reg ? &c->reg : NULL, &mr,
					     why, n);
		if (*err) {
			free(e);
			return NULL;
		}
		e->mr = mr;
		pthread_rwlock_wrlock(&c->lock);
		*err = table_add(c, e);
		pthread_rwlock_unlock(&c->lock);
		if (*err) {
			gdr_seam()->verbs.dereg_mr(mr);
			free(e);
			gdr_fmt(why, n, "out of memory for a cache entry");
			return NULL;
		}
		ADD(c->passthrough, 1);
		*out = e;
		return mr;
	}
	e->start = a;
	e->end = b;

	/* One registration per range: wait for one in flight, else claim it. */
	for (;;) {
		pthread_rwlock_wrlock(&c->lock);
		found = gdr_ranges_cover(&c->index, (uintptr_t)ptr,
					 (uintptr_t)ptr + len);
		if (!found || found->kind != E_PENDING)
			break;
		pthread_mutex_lock(&c->wait_lock);
		seen = c->completions;
		pthread_mutex_unlock(&c->wait_lock);
		pthread_rwlock_unlock(&c->lock);
		pthread_mutex_lock(&c->wait_lock);
		while (c->completions == seen)
			pthread_cond_wait(&c->wait_cond, &c->wait_lock);
		pthread_mutex_unlock(&c->wait_lock);
	}
	if (found) {
		/* Registered meanwhile: that one, validated by the caller. */
		__atomic_add_fetch(&found->refs, 1, __ATOMIC_ACQ_REL);
		pthread_rwlock_unlock(&c->lock);
		free(e);
		*out = found;
		*err = EAGAIN; /* the caller validates and retries */
		return NULL;
	}
	pend = e;
	pend->kind = E_PENDING;
	if (gdr_ranges_insert(&c->index, a, b, pend)) {
		pthread_rwlock_unlock(&c->lock);
		free(e);
		*err = ENOMEM;
		gdr_fmt(why, n, "out of memory for a cache entry");
		return NULL;
	}
	pthread_rwlock_unlock(&c->lock);

	*err = gdr_register_internal(c->pd, (void *)a, b - a,
				     c->have_reg ? &c->reg : NULL, &mr, why, n);

	pthread_rwlock_wrlock(&c->lock);
	gdr_ranges_remove(&c->index, a, pend);
	if (!*err) {
		e->kind = (pi.type == GDR_MEM_CUDA_DEVICE ||
			   pi.type == GDR_MEM_CUDA_POOL)
				  ? E_DEVICE
				  : E_HOST;
		e->mr = mr;
		*err = table_add(c, e);
		/* Invalidated while in flight: the caller gets the MR, which
		 * is deregistered when put back; nothing is cached. */
		if (!*err && !e->dead &&
		    gdr_ranges_insert(&c->index, a, b, e)) {
			table_remove(c, e);
			*err = ENOMEM;
		}
		if (!*err && !e->dead) {
			pthread_mutex_lock(&c->lru_lock);
			lru_append(c, e);
			pthread_mutex_unlock(&c->lru_lock);
			c->entries++;
			c->bytes += entry_bytes(e);
			evict(c, &release);
		}
	}
	pthread_rwlock_unlock(&c->lock);
	pthread_mutex_lock(&c->wait_lock);
	c->completions++;
	pthread_cond_broadcast(&c->wait_cond);
	pthread_mutex_unlock(&c->wait_lock);
	release_all(c, release);
	if (*err) {
		if (mr) {
			gdr_seam()->verbs.dereg_mr(mr);
			gdr_fmt(why, n, "out of memory for a cache entry");
		}
		free(e);
		return NULL;
	}
	ADD(c->misses, 1);
	*out = e;
	return mr;
}

GDR_EXPORT struct ibv_mr *gdr_cache_get(struct gdr_cache *c, void *ptr,
					size_t len)
{
	const struct gdr_cuda_lib *lib;
	uintptr_t a = (uintptr_t)ptr;
	struct entry *e, *release;
	struct ibv_mr *mr;
	char why[GDR_MSG_LEN];
	int err, tries;

	gdr_clear_error();
	if (!c || !ptr || !len || a > UINTPTR_MAX - len)
		return gdr_fail(EINVAL,
				"gdr_cache_get: cache and ptr must not be NULL "
				"and [ptr, +len) must be a non-empty range");
	for (tries = 0; tries < 8; tries++) {
		e = lookup(c, a, a + len);
		if (!e) {
			mr = miss(c, ptr, len, &e, why, sizeof(why), &err);
			if (mr)
				return mr;
			if (err != EAGAIN)
				return gdr_fail(err, "%s", why);
		}
		/* A hit: device memory must still be what was registered. */
		lib = e->kind == E_DEVICE ? gdr_cuda_table() : NULL;
		if (e->kind != E_DEVICE ||
		    (lib && still_valid(&lib->cu, e, a, a + len))) {
			ADD(c->hits, 1);
			return e->mr;
		}
		/* Freed (and maybe allocated again): drop everything it
		 * overlapped, then register anew. */
		ADD(c->stale, 1);
		release = NULL;
		pthread_rwlock_wrlock(&c->lock);
		if (!e->dead)
			drop_overlaps(c, e->start, e->end, &release);
		pthread_rwlock_unlock(&c->lock);
		release_all(c, release);
		unref(c, e);
	}
	return gdr_fail(EAGAIN,
			"gdr_cache_get: [%p, +%zu) kept changing under the "
			"cache (freed and reallocated by another thread?); "
			"try again",
			ptr, len);
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
	pthread_rwlock_rdlock(&c->lock);
	e = table_find(c, mr);
	/* Taken out by a racing put only if refs were 0: not ours. */
	if (e && __atomic_load_n(&e->refs, __ATOMIC_ACQUIRE) == 0)
		e = NULL;
	pthread_rwlock_unlock(&c->lock);
	if (!e) {
		gdr_fail(EINVAL,
			 "gdr_cache_put: this MR is not one the cache gave out "
			 "(or it was put back already)");
		return EINVAL;
	}
	err = unref(c, e);
	if (err)
		gdr_fail(err,
			 "ibv_dereg_mr failed with %s; the MR stays "
			 "registered: put it back again later",
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
	pthread_rwlock_wrlock(&c->lock);
	n = drop_overlaps(c, a, a + len, &release);
	pthread_rwlock_unlock(&c->lock);
	release_all(c, release);
	ADD(c->invalidations, n);
	return 0;
}

GDR_EXPORT int gdr_cache_purge(struct gdr_cache *c)
{
	const struct gdr_cuda_lib *lib;
	struct entry **idle, *e, *release = NULL;
	size_t n = 0, i, cap;

	gdr_clear_error();
	if (!c) {
		gdr_fail(EINVAL, "gdr_cache_purge: cache is NULL");
		return EINVAL;
	}
	lib = gdr_cuda_table();
	if (!lib)
		return 0; /* no CUDA in this process: no device entries */
	/* Hold every idle device entry, check it with no lock held, then
	 * let the valid ones go idle again and drop the others. */
	pthread_rwlock_rdlock(&c->lock);
	pthread_mutex_lock(&c->lru_lock);
	cap = c->entries;
	idle = cap ? calloc(cap, sizeof(*idle)) : NULL;
	for (e = c->lru_head; e && idle && n < cap; e = e->lru_next)
		if (e->kind == E_DEVICE &&
		    __atomic_load_n(&e->refs, __ATOMIC_ACQUIRE) == 0)
			idle[n++] = e;
	for (i = 0; i < n; i++)
		__atomic_add_fetch(&idle[i]->refs, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_unlock(&c->lru_lock);
	pthread_rwlock_unlock(&c->lock);
	if (cap && !idle) {
		gdr_fail(ENOMEM, "out of memory for the purge");
		return ENOMEM;
	}
	for (i = 0; i < n; i++) {
		e = idle[i];
		if (still_valid(&lib->cu, e, e->start, e->end))
			continue;
		ADD(c->stale, 1);
		pthread_rwlock_wrlock(&c->lock);
		if (!e->dead)
			drop(c, e, &release);
		pthread_rwlock_unlock(&c->lock);
	}
	for (i = 0; i < n; i++)
		unref(c, idle[i]);
	free(idle);
	release_all(c, release);
	return 0;
}

GDR_EXPORT int gdr_cache_query_stats(struct gdr_cache *c,
				     struct gdr_cache_stats *stats,
				     size_t stats_size)
{
	struct gdr_cache_stats st;

	gdr_clear_error();
	if (!c || !stats || stats_size < sizeof(st)) {
		gdr_fail(EINVAL, "gdr_cache_query_stats: cache and stats must "
				 "not be NULL, stats_size at least "
				 "sizeof(struct gdr_cache_stats) of 0.2");
		return EINVAL;
	}
	memset(&st, 0, sizeof(st));
	st.hits = GET(c->hits);
	st.misses = GET(c->misses);
	st.stale = GET(c->stale);
	st.evictions = GET(c->evictions);
	st.invalidations = GET(c->invalidations);
	st.passthrough = GET(c->passthrough);
	pthread_rwlock_rdlock(&c->lock);
	st.in_use = in_use(c);
	st.entries = c->entries;
	st.bytes = c->bytes;
	pthread_rwlock_unlock(&c->lock);
	memcpy(stats, &st, sizeof(st));
	return 0;
}
