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
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/*
 * The starts apart from the rest, so that the binary search reads four
 * cache lines of starts and then the one line with the end and the item.
 */
struct gdr_ranges_block {
	uintptr_t start[RANGES_BLOCK];
	struct {
		uintptr_t end;
		void *item;
	} ei[RANGES_BLOCK];
	unsigned int n;
};

/* The last index in [0, n) whose start is <= @x, or -1. */
static long last_at_or_before(const uintptr_t *v, size_t n, uintptr_t x)
{
	size_t lo = 0, hi = n; /* the answer + 1 lies in [lo, hi] */

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

static long block_last_at_or_before(const struct gdr_ranges_block *b,
				    uintptr_t x)
{
	unsigned int lo = 0, hi = b->n;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (b->start[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

static void set(struct gdr_ranges_block *b, unsigned int k,
		const struct gdr_range *r)
{
	b->start[k] = r->start;
	b->ei[k].end = r->end;
	b->ei[k].item = r->item;
}

/* Move @count ranges of @from starting at @src to @to at @dst. */
static void move(struct gdr_ranges_block *to, unsigned int dst,
		 const struct gdr_ranges_block *from, unsigned int src,
		 unsigned int count)
{
	memmove(&to->start[dst], &from->start[src],
		count * sizeof(to->start[0]));
	memmove(&to->ei[dst], &from->ei[src], count * sizeof(to->ei[0]));
}

/*
 * Ask for every line of a block at once: the binary search's loads depend
 * on each other, the prefetches do not, so the block costs about one
 * memory latency instead of one per line.
 */
static void prefetch_block(const struct gdr_ranges_block *b)
{
	const char *p = (const char *)b;
	size_t off;

	for (off = 0; off < sizeof(*b); off += 64)
		__builtin_prefetch(p + off);
}

static void summarise(struct gdr_ranges *x, size_t i)
{
	const struct gdr_ranges_block *b = x->blocks[i];
	uintptr_t m = 0;
	unsigned int k;

	for (k = 0; k < b->n; k++)
		if (b->ei[k].end > m)
			m = b->ei[k].end;
	x->first[i] = b->start[0];
	x->last[i] = b->start[b->n - 1];
	x->max_end[i] = m;
}

/* Room for one more block in the summary arrays. 0 or ENOMEM. */
static int reserve(struct gdr_ranges *x)
{
	size_t cap = x->cap ? x->cap * 2 : 16;
	uintptr_t *first, *last, *max_end;
	struct gdr_ranges_block **blocks;

	if (x->num_blocks < x->cap)
		return 0;
	first = malloc(cap * sizeof(*first));
	last = malloc(cap * sizeof(*last));
	max_end = malloc(cap * sizeof(*max_end));
	blocks = malloc(cap * sizeof(*blocks));
	if (!first || !last || !max_end || !blocks) {
		free(first);
		free(last);
		free(max_end);
		free(blocks);
		return ENOMEM;
	}
	if (x->num_blocks) {
		memcpy(first, x->first, x->num_blocks * sizeof(*first));
		memcpy(last, x->last, x->num_blocks * sizeof(*last));
		memcpy(max_end, x->max_end, x->num_blocks * sizeof(*max_end));
		memcpy(blocks, x->blocks, x->num_blocks * sizeof(*blocks));
	}
	free(x->first);
	free(x->last);
	free(x->max_end);
	free(x->blocks);
	x->first = first;
	x->last = last;
	x->max_end = max_end;
	x->blocks = blocks;
	x->cap = cap;
	return 0;
}

/* Make room at summary slot @i (shifting the later blocks up). */
static void open_slot(struct gdr_ranges *x, size_t i)
{
	size_t tail = x->num_blocks - i;

	memmove(&x->first[i + 1], &x->first[i], tail * sizeof(*x->first));
	memmove(&x->last[i + 1], &x->last[i], tail * sizeof(*x->last));
	memmove(&x->max_end[i + 1], &x->max_end[i], tail * sizeof(*x->max_end));
	memmove(&x->blocks[i + 1], &x->blocks[i], tail * sizeof(*x->blocks));
	x->num_blocks++;
}

static void close_slot(struct gdr_ranges *x, size_t i)
{
	size_t tail = x->num_blocks - i - 1;

	memmove(&x->first[i], &x->first[i + 1], tail * sizeof(*x->first));
	memmove(&x->last[i], &x->last[i + 1], tail * sizeof(*x->last));
	memmove(&x->max_end[i], &x->max_end[i + 1], tail * sizeof(*x->max_end));
	memmove(&x->blocks[i], &x->blocks[i + 1], tail * sizeof(*x->blocks));
	x->num_blocks--;
}

int gdr_ranges_insert(struct gdr_ranges *x, uintptr_t start, uintptr_t end,
		      void *item)
{
	struct gdr_ranges_block *b, *nb = NULL;
	struct gdr_range r = { start, end, item };
	unsigned int pos;
	long i;

	if (reserve(x))
		return ENOMEM;
	if (!x->num_blocks) {
		b = calloc(1, sizeof(*b));
		if (!b)
			return ENOMEM;
		open_slot(x, 0);
		x->blocks[0] = b;
		set(b, 0, &r);
		b->n = 1;
		summarise(x, 0);
		goto done;
	}
	i = last_at_or_before(x->first, x->num_blocks, start);
	if (i < 0)
		i = 0;
	b = x->blocks[i];
	pos = (unsigned int)(block_last_at_or_before(b, start) + 1);
	if (b->n == RANGES_BLOCK) {
		nb = calloc(1, sizeof(*nb));
		if (!nb)
			return ENOMEM;
		if (pos == RANGES_BLOCK && (size_t)i == x->num_blocks - 1) {
			/* Appending in order: leave the full block full. */
			set(nb, 0, &r);
			nb->n = 1;
			open_slot(x, (size_t)i + 1);
			x->blocks[i + 1] = nb;
			summarise(x, (size_t)i + 1);
			goto done;
		}
		/* Split in halves; the range goes into the one it sorts in. */
		nb->n = RANGES_BLOCK / 2;
		move(nb, 0, b, RANGES_BLOCK / 2, nb->n);
		b->n = RANGES_BLOCK / 2;
		open_slot(x, (size_t)i + 1);
		x->blocks[i + 1] = nb;
		summarise(x, (size_t)i + 1);
		if (pos > RANGES_BLOCK / 2) {
			pos -= RANGES_BLOCK / 2;
			b = nb;
			i++;
		}
	}
	move(b, pos + 1, b, pos, b->n - pos);
	set(b, pos, &r);
	b->n++;
	summarise(x, (size_t)i);
done:
	x->count++;
	if (end - start > x->max_len)
		x->max_len = end - start;
	return 0;
}

int gdr_ranges_remove(struct gdr_ranges *x, uintptr_t start, void *item)
{
	long i, k;

	i = last_at_or_before(x->first, x->num_blocks, start);
	/* Equal starts may run back over several blocks. */
	for (; i >= 0 && x->last[i] >= start; i--) {
		struct gdr_ranges_block *b = x->blocks[i];

		for (k = block_last_at_or_before(b, start);
		     k >= 0 && b->start[k] == start; k--) {
			if (b->ei[k].item != item)
				continue;
			move(b, (unsigned int)k, b, (unsigned int)k + 1,
			     b->n - (unsigned int)k - 1);
			b->n--;
			if (b->n) {
				summarise(x, (size_t)i);
			} else {
				free(b);
				close_slot(x, (size_t)i);
			}
			if (--x->count == 0)
				x->max_len = 0;
			return 0;
		}
	}
	return ENOENT;
}

void *gdr_ranges_cover(const struct gdr_ranges *x, uintptr_t a, uintptr_t b)
{
	uintptr_t lo = b > x->max_len ? b - x->max_len : 0;
	long i, k;

	i = last_at_or_before(x->first, x->num_blocks, a);
	if (i >= 0)
		prefetch_block(x->blocks[i]);
	/* Nearest start first: where ranges do not nest, that one. */
	for (; i >= 0 && x->last[i] >= lo; i--) {
		const struct gdr_ranges_block *blk = x->blocks[i];

		if (x->max_end[i] < b)
			continue;
		for (k = block_last_at_or_before(blk, a);
		     k >= 0 && blk->start[k] >= lo; k--)
			if (blk->ei[k].end >= b)
				return blk->ei[k].item;
	}
	return NULL;
}

unsigned int gdr_ranges_overlaps(const struct gdr_ranges *x, uintptr_t a,
				 uintptr_t b, void **out, unsigned int max)
{
	uintptr_t lo = a >= x->max_len ? a - x->max_len : 0;
	unsigned int n = 0, k;
	long i;

	if (a >= b)
		return 0;
	i = last_at_or_before(x->first, x->num_blocks, lo);
	if (i < 0)
		i = 0;
	for (; (size_t)i < x->num_blocks && x->first[i] < b && n < max; i++) {
		const struct gdr_ranges_block *blk = x->blocks[i];

		if (x->max_end[i] <= a || x->last[i] < lo)
			continue;
		for (k = 0; k < blk->n && blk->start[k] < b && n < max; k++)
			if (blk->ei[k].end > a)
				out[n++] = blk->ei[k].item;
	}
	return n;
}

void gdr_ranges_clear(struct gdr_ranges *x)
{
	size_t i;

	for (i = 0; i < x->num_blocks; i++)
		free(x->blocks[i]);
	free(x->first);
	free(x->last);
	free(x->max_end);
	free(x->blocks);
	memset(x, 0, sizeof(*x));
}
