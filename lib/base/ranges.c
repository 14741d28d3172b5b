/* SPDX-License-Identifier: MIT */
/*
 * An index of [start, end) ranges for the registration cache, laid out for
 * the CPU's caches rather than as a pointer tree: ranges sorted by start in
 * blocks of up to RANGES_BLOCK, each block summarised in small parallel
 * arrays (first start, last start, largest end). A lookup is a binary
 * search of the summaries (a few kilobytes at 100k ranges) and one of the
 * block: a handful of cache lines, where a balanced tree of 100k nodes
 * walks about 17 of them.
 *
 * Ranges may overlap. The longest range ever held (since the index was
 * last empty) bounds how far before a point a range covering it can start.
 *
 * One writer at a time (the caller's lock), any number of readers without
 * a lock (the _read calls): the writer changes the index in place inside
 * a sequence count (odd while it writes), readers read optimistically and
 * check the count afterwards, and retry when a writer was there. Nothing a
 * reader may be reading is ever freed while the index lives: emptied
 * blocks are kept for reuse and outgrown summary arrays are kept until
 * gdr_ranges_clear(), so a reader that races a writer reads stale memory,
 * never freed memory. Every shared word is read and written with atomic
 * (relaxed) accesses, ordered by the count's acquire and release.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

#define LD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define ST(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

/*
 * The starts apart from the rest, so that the binary search reads four
 * cache lines of starts and then the one line with the end and the item.
 */
struct gdr_ranges_block {
	unsigned int n; /* first: on the line of the first starts */
	uintptr_t start[RANGES_BLOCK];
	struct {
		uintptr_t end;
		void *item;
	} ei[RANGES_BLOCK];
	struct gdr_ranges_block *spare; /* the next kept block */
} __attribute__((aligned(64)));

/* The summaries of the blocks, in one allocation of a fixed capacity. */
struct gdr_ranges_dir {
	size_t cap;
	size_t num_blocks;
	struct gdr_ranges_dir *older; /* outgrown ones, freed by clear */
	uintptr_t *first, *last, *max_end;
	struct gdr_ranges_block **blocks;
};

/* --- the sequence count ------------------------------------------------- */

static void write_begin(struct gdr_ranges *x)
{
	ST(x->seq, x->seq + 1);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static void write_end(struct gdr_ranges *x)
{
	__atomic_store_n(&x->seq, x->seq + 1, __ATOMIC_RELEASE);
}

static unsigned long read_begin(const struct gdr_ranges *x)
{
	return __atomic_load_n(&x->seq, __ATOMIC_ACQUIRE);
}

static bool read_ok(const struct gdr_ranges *x, unsigned long s)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return !(s & 1) && LD(x->seq) == s;
}

/* --- searching (shared by readers and the writer) ----------------------- */

/* The last index in [0, n) whose start is <= @x, or -1. */
static long last_at_or_before(const uintptr_t *v, size_t n, uintptr_t x)
{
	size_t lo = 0, hi = n; /* the answer + 1 lies in [lo, hi] */

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (LD(v[mid]) <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

static unsigned int block_n(const struct gdr_ranges_block *b)
{
	unsigned int n = LD(b->n);

	return n > RANGES_BLOCK ? RANGES_BLOCK : n; /* a torn read */
}

static long block_last_at_or_before(const struct gdr_ranges_block *b,
				    uintptr_t x)
{
	return last_at_or_before(b->start, block_n(b), x);
}

static size_t dir_blocks(const struct gdr_ranges_dir *d)
{
	size_t n = d ? LD(d->num_blocks) : 0;

	return d && n > d->cap ? d->cap : n;
}

/*
 * Ask for the lines of a block's starts at once: the binary search's
 * loads depend on each other, the prefetches do not, so the search costs
 * about one memory latency instead of one per line.
 */
static void prefetch_starts(const struct gdr_ranges_block *b)
{
	const char *p = (const char *)b;
	size_t off;

	for (off = 0; off < offsetof(struct gdr_ranges_block, ei); off += 64)
		__builtin_prefetch(p + off);
}

static const struct gdr_ranges_dir *dir_of(const struct gdr_ranges *x)
{
	return __atomic_load_n(&x->dir, __ATOMIC_ACQUIRE);
}

static void *cover(const struct gdr_ranges *x, uintptr_t a, uintptr_t b)
{
	const struct gdr_ranges_dir *d = dir_of(x);
	size_t max_len = LD(x->max_len);
	uintptr_t lo = b > max_len ? b - max_len : 0;
	long i, k;

	if (!d)
		return NULL;
	i = last_at_or_before(d->first, dir_blocks(d), a);
	if (i >= 0 && LD(d->blocks[i]))
		prefetch_starts(LD(d->blocks[i]));
	/* Nearest start first: where ranges do not nest, that one. */
	for (; i >= 0 && LD(d->last[i]) >= lo; i--) {
		const struct gdr_ranges_block *blk = LD(d->blocks[i]);

		if (!blk || LD(d->max_end[i]) < b)
			continue;
		for (k = block_last_at_or_before(blk, a);
		     k >= 0 && LD(blk->start[k]) >= lo; k--)
			if (LD(blk->ei[k].end) >= b)
				return LD(blk->ei[k].item);
	}
	return NULL;
}

void *gdr_ranges_cover(const struct gdr_ranges *x, uintptr_t a, uintptr_t b)
{
	return cover(x, a, b);
}

int gdr_ranges_cover_read(const struct gdr_ranges *x, uintptr_t a, uintptr_t b,
			  void **item)
{
	unsigned long s = read_begin(x);

	*item = (s & 1) ? NULL : cover(x, a, b);
	return read_ok(x, s) ? 0 : EAGAIN;
}

static unsigned int exact(const struct gdr_ranges *x, uintptr_t start,
			  uintptr_t end, void **out, unsigned int max)
{
	const struct gdr_ranges_dir *d = dir_of(x);
	unsigned int n = 0;
	long i, k;

	if (!d)
		return 0;
	i = last_at_or_before(d->first, dir_blocks(d), start);
	/* Equal starts may run back over several blocks. */
	for (; i >= 0 && LD(d->last[i]) >= start && n < max; i--) {
		const struct gdr_ranges_block *blk = LD(d->blocks[i]);

		if (!blk)
			continue;
		for (k = block_last_at_or_before(blk, start);
		     k >= 0 && LD(blk->start[k]) == start && n < max; k--)
			if (LD(blk->ei[k].end) == end)
				out[n++] = LD(blk->ei[k].item);
	}
	return n;
}

int gdr_ranges_exact_read(const struct gdr_ranges *x, uintptr_t start,
			  uintptr_t end, void **out, unsigned int max,
			  unsigned int *n)
{
	unsigned long s = read_begin(x);

	*n = (s & 1) ? 0 : exact(x, start, end, out, max);
	return read_ok(x, s) ? 0 : EAGAIN;
}

unsigned int gdr_ranges_overlaps(const struct gdr_ranges *x, uintptr_t a,
				 uintptr_t b, void **out, unsigned int max)
{
	const struct gdr_ranges_dir *d = dir_of(x);
	size_t max_len = LD(x->max_len), nb = dir_blocks(d);
	uintptr_t lo = a >= max_len ? a - max_len : 0;
	unsigned int n = 0, k;
	long i;

	if (a >= b || !d)
		return 0;
	i = last_at_or_before(d->first, nb, lo);
	if (i < 0)
		i = 0;
	for (; (size_t)i < nb && LD(d->first[i]) < b && n < max; i++) {
		const struct gdr_ranges_block *blk = LD(d->blocks[i]);

		if (!blk || LD(d->max_end[i]) <= a || LD(d->last[i]) < lo)
			continue;
		for (k = 0;
		     k < block_n(blk) && LD(blk->start[k]) < b && n < max; k++)
			if (LD(blk->ei[k].end) > a)
				out[n++] = LD(blk->ei[k].item);
	}
	return n;
}

/* --- writing (one writer, under the caller's lock) ------------------------ */

static void set(struct gdr_ranges_block *b, unsigned int k,
		const struct gdr_range *r)
{
	ST(b->start[k], r->start);
	ST(b->ei[k].end, r->end);
	ST(b->ei[k].item, r->item);
}

/* Move @count ranges of @from starting at @src to @to at @dst, a word at a
 * time (readers may be reading them). */
static void move(struct gdr_ranges_block *to, unsigned int dst,
		 const struct gdr_ranges_block *from, unsigned int src,
		 unsigned int count)
{
	unsigned int i;

	if (to == from && dst > src) {
		for (i = count; i-- > 0;) {
			ST(to->start[dst + i], from->start[src + i]);
			ST(to->ei[dst + i].end, from->ei[src + i].end);
			ST(to->ei[dst + i].item, from->ei[src + i].item);
		}
		return;
	}
	for (i = 0; i < count; i++) {
		ST(to->start[dst + i], from->start[src + i]);
		ST(to->ei[dst + i].end, from->ei[src + i].end);
		ST(to->ei[dst + i].item, from->ei[src + i].item);
	}
}

static void summarise(struct gdr_ranges_dir *d, size_t i)
{
	const struct gdr_ranges_block *b = d->blocks[i];
	uintptr_t m = 0;
	unsigned int k;

	for (k = 0; k < b->n; k++)
		if (b->ei[k].end > m)
			m = b->ei[k].end;
	ST(d->first[i], b->start[0]);
	ST(d->last[i], b->start[b->n - 1]);
	ST(d->max_end[i], m);
}

static void block_keep(struct gdr_ranges *x, struct gdr_ranges_block *b)
{
	b->spare = x->spare;
	x->spare = b;
}

/* Blocks come in chunks as large as all before them, up to 256 KiB. */
struct gdr_ranges_chunk {
	struct gdr_ranges_chunk *next;
	size_t size, n;
	struct gdr_ranges_block *b;
};

#define CHUNK_MAX ((size_t)256 << 10)

/* A block: a kept one, or one of a new chunk. NULL when out of memory. */
static struct gdr_ranges_block *block_new(struct gdr_ranges *x)
{
	struct gdr_ranges_block *b = x->spare;
	struct gdr_ranges_chunk *ch;
	size_t n, i;

	if (b) {
		x->spare = b->spare;
		return b;
	}
	n = x->num_chunk_blocks ? x->num_chunk_blocks : 4;
	if (n * sizeof(*b) > CHUNK_MAX)
		n = CHUNK_MAX / sizeof(*b);
	ch = malloc(sizeof(*ch));
	if (!ch)
		return NULL;
	ch->size = n * sizeof(*b);
	ch->n = n;
	ch->b = aligned_alloc(64, ch->size);
	if (ch->b)
		memset(ch->b, 0, ch->size);
	if (!ch->b) {
		free(ch);
		return NULL;
	}
	ch->next = x->chunks;
	x->chunks = ch;
	x->num_chunk_blocks += n;
	for (i = n; i-- > 1;)
		block_keep(x, &ch->b[i]);
	return &ch->b[0];
}

static size_t dir_size(size_t cap)
{
	return sizeof(struct gdr_ranges_dir) +
	       cap * (3 * sizeof(uintptr_t) +
		      sizeof(struct gdr_ranges_block *));
}

/*
 * Room for one more block: a larger copy of the summaries, published whole
 * (the old one is kept for readers still in it). 0 or ENOMEM.
 */
static int reserve(struct gdr_ranges *x)
{
	struct gdr_ranges_dir *old = x->dir, *d;
	size_t cap = old ? old->cap * 2 : 16, n = old ? old->num_blocks : 0;
	char *p;

	if (old && n < old->cap)
		return 0;
	/* Zeroed: a reader that sees a slot before its block sees NULL. */
	p = calloc(1, dir_size(cap));
	if (!p)
		return ENOMEM;
	d = (struct gdr_ranges_dir *)p;
	d->cap = cap;
	d->first = (uintptr_t *)(p + sizeof(*d));
	d->last = d->first + cap;
	d->max_end = d->last + cap;
	d->blocks = (struct gdr_ranges_block **)(d->max_end + cap);
	if (old) {
		memcpy(d->first, old->first, n * sizeof(*d->first));
		memcpy(d->last, old->last, n * sizeof(*d->last));
		memcpy(d->max_end, old->max_end, n * sizeof(*d->max_end));
		memcpy(d->blocks, old->blocks, n * sizeof(*d->blocks));
	}
	d->num_blocks = n;
	d->older = old;
	__atomic_store_n(&x->dir, d, __ATOMIC_RELEASE);
	return 0;
}

/* Make room at summary slot @i (shifting the later blocks up). */
static void open_slot(struct gdr_ranges_dir *d, size_t i)
{
	size_t k;

	for (k = d->num_blocks; k > i; k--) {
		ST(d->first[k], d->first[k - 1]);
		ST(d->last[k], d->last[k - 1]);
		ST(d->max_end[k], d->max_end[k - 1]);
		ST(d->blocks[k], d->blocks[k - 1]);
	}
	ST(d->num_blocks, d->num_blocks + 1);
}

static void close_slot(struct gdr_ranges_dir *d, size_t i)
{
	size_t k;

	for (k = i; k + 1 < d->num_blocks; k++) {
		ST(d->first[k], d->first[k + 1]);
		ST(d->last[k], d->last[k + 1]);
		ST(d->max_end[k], d->max_end[k + 1]);
		ST(d->blocks[k], d->blocks[k + 1]);
	}
	ST(d->num_blocks, d->num_blocks - 1);
}

static int insert(struct gdr_ranges *x, const struct gdr_range *r)
{
	struct gdr_ranges_dir *d;
	struct gdr_ranges_block *b, *nb = NULL;
	unsigned int pos;
	long i;

	if (reserve(x))
		return ENOMEM;
	d = x->dir;
	if (!d->num_blocks) {
		b = block_new(x);
		if (!b)
			return ENOMEM;
		set(b, 0, r);
		ST(b->n, 1);
		open_slot(d, 0);
		ST(d->blocks[0], b);
		summarise(d, 0);
		return 0;
	}
	i = last_at_or_before(d->first, d->num_blocks, r->start);
	if (i < 0)
		i = 0;
	b = d->blocks[i];
	pos = (unsigned int)(block_last_at_or_before(b, r->start) + 1);
	if (b->n == RANGES_BLOCK) {
		nb = block_new(x);
		if (!nb)
			return ENOMEM;
		if (pos == RANGES_BLOCK && (size_t)i == d->num_blocks - 1) {
			/* Appending in order: leave the full block full. */
			set(nb, 0, r);
			ST(nb->n, 1);
			open_slot(d, (size_t)i + 1);
			ST(d->blocks[i + 1], nb);
			summarise(d, (size_t)i + 1);
			return 0;
		}
		/* Split in halves; the range goes into the one it sorts in. */
		move(nb, 0, b, RANGES_BLOCK / 2, RANGES_BLOCK / 2);
		ST(nb->n, RANGES_BLOCK / 2);
		ST(b->n, RANGES_BLOCK / 2);
		open_slot(d, (size_t)i + 1);
		ST(d->blocks[i + 1], nb);
		summarise(d, (size_t)i + 1);
		summarise(d, (size_t)i);
		if (pos > RANGES_BLOCK / 2) {
			pos -= RANGES_BLOCK / 2;
			b = nb;
			i++;
		}
	}
	move(b, pos + 1, b, pos, b->n - pos);
	set(b, pos, r);
	ST(b->n, b->n + 1);
	summarise(d, (size_t)i);
	return 0;
}

int gdr_ranges_insert(struct gdr_ranges *x, uintptr_t start, uintptr_t end,
		      void *item)
{
	struct gdr_range r = { start, end, item };
	int err;

	write_begin(x);
	err = insert(x, &r);
	if (!err) {
		x->count++;
		if (end - start > x->max_len)
			ST(x->max_len, end - start);
	}
	write_end(x);
	return err;
}

static int remove_one(struct gdr_ranges *x, uintptr_t start, void *item)
{
	struct gdr_ranges_dir *d = x->dir;
	long i, k;

	if (!d)
		return ENOENT;
	i = last_at_or_before(d->first, d->num_blocks, start);
	/* Equal starts may run back over several blocks. */
	for (; i >= 0 && d->last[i] >= start; i--) {
		struct gdr_ranges_block *b = d->blocks[i];

		for (k = block_last_at_or_before(b, start);
		     k >= 0 && b->start[k] == start; k--) {
			if (b->ei[k].item != item)
				continue;
			move(b, (unsigned int)k, b, (unsigned int)k + 1,
			     b->n - (unsigned int)k - 1);
			ST(b->n, b->n - 1);
			if (b->n) {
				summarise(d, (size_t)i);
			} else {
				close_slot(d, (size_t)i);
				block_keep(x, b);
			}
			return 0;
		}
	}
	return ENOENT;
}

int gdr_ranges_remove(struct gdr_ranges *x, uintptr_t start, void *item)
{
	int err;

	write_begin(x);
	err = remove_one(x, start, item);
	if (!err && --x->count == 0)
		ST(x->max_len, 0);
	write_end(x);
	return err;
}

size_t gdr_ranges_num_blocks(const struct gdr_ranges *x)
{
	return dir_blocks(dir_of(x));
}

void gdr_ranges_clear(struct gdr_ranges *x)
{
	struct gdr_ranges_dir *d = x->dir, *older;
	struct gdr_ranges_chunk *ch;

	for (; d; d = older) {
		older = d->older;
		free(d);
	}
	while ((ch = x->chunks)) {
		x->chunks = ch->next;
		free(ch->b);
		free(ch);
	}
	memset(x, 0, sizeof(*x));
}
