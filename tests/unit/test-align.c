/* SPDX-License-Identifier: MIT */
/*
 * The DMA-BUF span arithmetic on random pointers and lengths, for 4 KiB and
 * 64 KiB pages: the span is page aligned, covers [ptr, ptr + len), and is
 * the smallest that does; offset and iova agree modulo the page size.
 */
#include <stdlib.h>

#include "check.h"
#include "fakes.h"

static uint64_t state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	/* xorshift64*: reproducible without libc's rand(). */
	state ^= state >> 12;
	state ^= state << 25;
	state ^= state >> 27;
	return state * 0x2545f4914f6cdd1dull;
}

static void one(uintptr_t ptr, size_t len, long page)
{
	struct gdr_dmabuf_range r;
	uintptr_t mask = (uintptr_t)page - 1;

	if (gdr_dmabuf_range(ptr, len, page, &r)) {
		/* Refused only when the aligned end would overflow. */
		CHECK(ptr > UINTPTR_MAX - len ||
		      ptr + len > UINTPTR_MAX - mask);
		return;
	}
	CHECK_INT(r.base & mask, 0);
	CHECK_INT(r.size & mask, 0);
	CHECK(r.base <= ptr);
	CHECK(ptr - r.base < (uintptr_t)page);
	CHECK_INT(r.offset, ptr - r.base);
	CHECK(r.base + r.size >= ptr + len);
	CHECK(r.base + r.size - (ptr + len) < (uintptr_t)page);
	/* What ibv_reg_dmabuf_mr gets: iova = ptr, offset; same page phase */
	CHECK_INT((uint64_t)ptr % (uint64_t)page, r.offset % (uint64_t)page);
	CHECK(r.offset + len <= r.size);
}

int main(void)
{
	static const long pages[] = { 4096, 65536 };
	struct gdr_dmabuf_range r;
	size_t i, p;

	for (p = 0; p < 2; p++) {
		check_scope = pages[p] == 4096 ? "4 KiB pages" : "64 KiB pages";
		for (i = 0; i < 100000; i++) {
			uintptr_t ptr =
				(uintptr_t)(rnd() & 0x00007fffffffffffull);
			size_t len =
				(size_t)(rnd() % (i & 1 ? 1u << 30 : 70000)) +
				1;

			one(ptr, len, pages[p]);
		}
		/* Edges: aligned, one byte, straddling, end of space. */
		one(0x10000, 1, pages[p]);
		one(0x10000, (size_t)pages[p], pages[p]);
		one(0x10000 - 1, 2, pages[p]);
		one(UINTPTR_MAX - 100, 50, pages[p]);
		one(UINTPTR_MAX - 100, 101, pages[p]);
	}
	check_scope = "exact values";
	CHECK(gdr_dmabuf_range(0x7f0000001064, 5000, 4096, &r) == 0);
	CHECK_INT(r.base, 0x7f0000001000);
	CHECK_INT(r.size, 8192);
	CHECK_INT(r.offset, 100);
	CHECK(gdr_dmabuf_range(0x7f0000001064, 5000, 65536, &r) == 0);
	CHECK_INT(r.base, 0x7f0000000000);
	CHECK_INT(r.size, 65536);
	CHECK_INT(r.offset, 0x1064);
	CHECK(gdr_dmabuf_range(0x1000, 0, 4096, &r) == EINVAL);
	CHECK(gdr_dmabuf_range(UINTPTR_MAX - 100, 101, 4096, &r) == EINVAL);
	CHECK(gdr_dmabuf_range(UINTPTR_MAX - 10, 4096, 4096, &r) == EINVAL);
	CHECK(gdr_dmabuf_range(0x1000, 1, 3000, &r) == EINVAL);
	CHECK(gdr_dmabuf_range(UINTPTR_MAX - 10, 5, 4096, &r) == EINVAL);
	return check_summary("align");
}
