/* SPDX-License-Identifier: MIT */
/*
 * The cache's range index against a brute-force list: random inserts and
 * removes of overlapping ranges (equal starts included, enough to split
 * and empty many blocks), each cover, exact and overlap query checked
 * against the list; then adversarial shapes (adjacent, nested, at the top
 * of the address space, queries at exact edges); then an ordered fill of
 * 100k ranges.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "internal.h"

#define N 3000

struct item {
	uintptr_t start, end;
	int live;
};

static struct item items[N];
static uint64_t state = 12345;

static uint64_t rnd(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state;
}

/* Does the index's answer agree with the list? */
static int cover_ok(const struct gdr_ranges *x, uintptr_t a, uintptr_t b)
{
	struct item *got = gdr_ranges_cover(x, a, b);
	int i, any = 0;

	for (i = 0; i < N; i++)
		if (items[i].live && items[i].start <= a && items[i].end >= b)
			any = 1;
	if (!got)
		return !any;
	return got->live && got->start <= a && got->end >= b;
}

static int overlaps_ok(const struct gdr_ranges *x, uintptr_t a, uintptr_t b)
{
	static void *out[N];
	unsigned int n = gdr_ranges_overlaps(x, a, b, out, N), k;
	int i, want = 0;

	for (i = 0; i < N; i++)
		if (items[i].live && items[i].start < b && items[i].end > a)
			want++;
	if ((int)n != want)
		return 0;
	for (k = 0; k < n; k++) {
		struct item *it = out[k];

		if (!it->live || it->start >= b || it->end <= a)
			return 0;
		if (k && ((struct item *)out[k - 1])->start > it->start)
			return 0; /* start order */
	}
	return 1;
}

static int exact_ok(const struct gdr_ranges *x, uintptr_t a, uintptr_t b)
{
	static void *out[N];
	unsigned int n = 0, k;
	int i, want = 0;

	if (gdr_ranges_exact_read(x, a, b, out, N, &n))
		return 0; /* no writer runs: EAGAIN is wrong here */
	for (i = 0; i < N; i++)
		if (items[i].live && items[i].start == a && items[i].end == b)
			want++;
	if ((int)n != want)
		return 0;
	for (k = 0; k < n; k++) {
		struct item *it = out[k];

		if (!it->live || it->start != a || it->end != b)
			return 0;
	}
	return 1;
}

/* Every query at and around each live range's edges. */
static int edges_ok(const struct gdr_ranges *x)
{
	int i, bad = 0;

	for (i = 0; i < N; i++) {
		uintptr_t s, e;

		if (!items[i].live)
			continue;
		s = items[i].start;
		e = items[i].end;
		bad += !cover_ok(x, s, e) + !exact_ok(x, s, e);
		bad += !overlaps_ok(x, s, e) + !overlaps_ok(x, e, e + 1);
		bad += !overlaps_ok(x, e - 1, e) + !cover_ok(x, e - 1, e);
		if (s > 0) {
			bad += !overlaps_ok(x, s - 1, s);
			bad += !cover_ok(x, s - 1, e) + !cover_ok(x, s - 1, s);
		}
		if (e < UINTPTR_MAX)
			bad += !cover_ok(x, s, e + 1);
	}
	return bad;
}

/* Insert [s, e) as item @k (which must be free); 0 on success. */
static int put(struct gdr_ranges *x, int k, uintptr_t s, uintptr_t e)
{
	items[k].start = s;
	items[k].end = e;
	items[k].live = 1;
	return gdr_ranges_insert(x, s, e, &items[k]);
}

static void adversarial(void)
{
	struct gdr_ranges x;
	int i, k = 0, bad = 0, wrong;
	uintptr_t top = UINTPTR_MAX - ((uintptr_t)1 << 20);

	check_scope = "adjacent, nested and top-of-memory ranges";
	memset(&x, 0, sizeof(x));
	memset(items, 0, sizeof(items));
	/* 300 adjacent pages: one's end is the next one's start. */
	for (i = 0; i < 300; i++)
		bad += put(&x, k++, 4096 * (uintptr_t)(100 + i),
			   4096 * (uintptr_t)(101 + i));
	/* 100 nested ranges on one start, 100 on one end. */
	for (i = 0; i < 100; i++) {
		bad += put(&x, k++, 4096 * 1000, 4096 * (uintptr_t)(1001 + i));
		bad += put(&x, k++, 4096 * (uintptr_t)(2000 - i - 1),
			   4096 * 2000);
	}
	/* Ranges ending at the very top of the address space. */
	for (i = 0; i < 40; i++)
		bad += put(&x, k++, top + 4096 * (uintptr_t)i, UINTPTR_MAX);
	bad += put(&x, k++, UINTPTR_MAX - 1, UINTPTR_MAX);
	bad += put(&x, k++, 0, 1); /* and at the bottom */
	CHECK_INT(bad, 0);
	wrong = edges_ok(&x);
	CHECK_INT(wrong, 0);
	CHECK(overlaps_ok(&x, UINTPTR_MAX - 1, UINTPTR_MAX));
	CHECK(overlaps_ok(&x, 0, UINTPTR_MAX));
	CHECK(cover_ok(&x, UINTPTR_MAX - 1, UINTPTR_MAX));
	/* Remove every other one, in an order unlike the inserts'. */
	for (i = k - 1; i >= 0; i -= 2) {
		bad += gdr_ranges_remove(&x, items[i].start, &items[i]) != 0;
		items[i].live = 0;
	}
	CHECK_INT(bad, 0);
	wrong = edges_ok(&x);
	CHECK_INT(wrong, 0);
	/* Removing with the right start and the wrong item, or the right
	 * item and the wrong start, removes nothing. */
	for (i = 0; i < k; i++) {
		if (!items[i].live)
			continue;
		CHECK_INT(gdr_ranges_remove(&x, items[i].start + 1, &items[i]),
			  ENOENT);
		CHECK_INT(gdr_ranges_remove(&x, items[i].start, &x), ENOENT);
		break;
	}
	printf("%d adversarial ranges, half removed: %d wrong answers\n", k,
	       wrong);
	gdr_ranges_clear(&x);
	memset(items, 0, sizeof(items));
}

/*
 * The reserved address space under the tables: a reservation of any size,
 * committed in steps of any size (not only whole pages), is usable up to
 * each step's end and reads back zeroed.
 */
static void vmem(void)
{
	static const size_t sizes[] = { 1, 4096, 5000, (size_t)2 << 20,
					((size_t)2 << 20) + 1 };
	size_t i, at, old, step;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t size = sizes[i];
		unsigned char *p = gdr_vmem_reserve(size);
		int bad = 0;

		check_scope = "vmem reserve and commit";
		CHECK_(p != NULL, "reserving %zu bytes failed", size);
		if (!p)
			continue;
		/* Odd steps: each commit starts where the last one ended. */
		step = size / 3 + 1;
		for (old = 0; old < size; old += step) {
			size_t end = old + step < size ? old + step : size;

			CHECK_INT(gdr_vmem_commit(p, old, end), 0);
			for (at = old; at < end; at++) {
				bad += p[at] != 0;
				p[at] = 0x5a;
			}
		}
		CHECK_INT(bad, 0);
		gdr_vmem_free(p, size, size);
	}
}

int main(void)
{
	struct gdr_ranges x;
	int i, step, live = 0, bad_cover = 0, bad_overlap = 0, bad = 0;
	uintptr_t a;

	vmem();
	check_scope = "random ranges against a list";
	memset(&x, 0, sizeof(x));
	for (step = 0; step < 40000; step++) {
		struct item *it = &items[rnd() % N];

		if (!it->live) {
			/* Starts on a coarse grid: many equal starts. */
			it->start = 4096 * (1 + rnd() % 500);
			it->end = it->start + 1 +
				  rnd() % (rnd() % 8 ? 20000 : 2000000);
			if (gdr_ranges_insert(&x, it->start, it->end, it))
				bad++;
			it->live = 1;
			live++;
		} else if (rnd() % 3 == 0) {
			if (gdr_ranges_remove(&x, it->start, it))
				bad++;
			it->live = 0;
			live--;
		}
		a = 4096 * (rnd() % 520) + rnd() % 4096;
		if (!cover_ok(&x, a, a + 1 + rnd() % 30000))
			bad_cover++;
		if (step % 8 == 0 &&
		    !overlaps_ok(&x, a, a + 1 + rnd() % 100000))
			bad_overlap++;
		if (step % 8 == 4 && it->live &&
		    !exact_ok(&x, it->start, it->end))
			bad_cover++;
		if (step % 4000 == 0)
			bad_cover += edges_ok(&x);
		if (x.count != (size_t)live)
			bad++;
	}
	CHECK_INT(bad, 0);
	CHECK_INT(bad_cover, 0);
	CHECK_INT(bad_overlap, 0);
	printf("40000 random steps, %d ranges live at the end in %zu blocks: "
	       "%d wrong covers, %d wrong overlap sets\n",
	       live, gdr_ranges_num_blocks(&x), bad_cover, bad_overlap);
	/* Removing what is not there changes nothing. */
	CHECK_INT(gdr_ranges_remove(&x, 1, &x), ENOENT);
	for (i = 0; i < N; i++)
		if (items[i].live)
			CHECK_INT(gdr_ranges_remove(&x, items[i].start,
						    &items[i]),
				  0);
	CHECK_INT(x.count, 0);
	CHECK_INT(gdr_ranges_num_blocks(&x), 0);
	CHECK(gdr_ranges_cover(&x, 4096, 4097) == NULL);
	gdr_ranges_clear(&x);
	adversarial();

	check_scope = "100k ranges filled in order";
	for (i = 0; i < 100000; i++)
		if (gdr_ranges_insert(&x, (uintptr_t)i * 4096 + 4096,
				      (uintptr_t)i * 4096 + 8192, &items[0]))
			bad++;
	CHECK_INT(bad, 0);
	/* Appends leave full blocks: ceil(100000 / RANGES_BLOCK). */
	CHECK_INT(gdr_ranges_num_blocks(&x),
		  (100000 + RANGES_BLOCK - 1) / RANGES_BLOCK);
	CHECK(gdr_ranges_cover(&x, 4096 * 777 + 10, 4096 * 777 + 20) ==
	      &items[0]);
	CHECK(gdr_ranges_cover(&x, 4096 * 777 + 10, 4096 * 778 + 20) == NULL);
	gdr_ranges_clear(&x);
	return check_summary("ranges");
}
