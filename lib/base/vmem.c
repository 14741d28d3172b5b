/* SPDX-License-Identifier: MIT */
/*
 * Address space reserved up front and committed as a table grows, so that
 * the table grows in place: a reader that read the old size still reads
 * mapped memory, and nothing has to be kept or freed behind it. Reserved
 * space is PROT_NONE (it costs no memory and no commit charge); committed
 * space is zeroed, and marked for transparent huge pages (a table read at
 * random costs a TLB miss per 4 KiB page otherwise; where the kernel does
 * not do huge pages the hint is ignored).
 */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>

#include "base.h"

static size_t pages(size_t n)
{
	const size_t huge = (size_t)2 << 20;

	return (n + huge - 1) & ~(huge - 1);
}

/* Bytes committed now, for the memory benchmark. */
static size_t committed; /* atomic */

size_t gdr_vmem_committed(void)
{
	return __atomic_load_n(&committed, __ATOMIC_RELAXED);
}

void *gdr_vmem_reserve(size_t size)
{
	void *p = mmap(NULL, pages(size), PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED) {
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

int gdr_vmem_commit(void *p, size_t old, size_t size)
{
	size_t a = old & ~((size_t)4095), b = (size + 4095) & ~(size_t)4095;

	if (b <= a)
		return 0;
	if (mprotect((char *)p + a, b - a, PROT_READ | PROT_WRITE))
		return errno ? errno : ENOMEM;
	/* A hint: an error only means no huge pages. */
	(void)madvise((char *)p + a, b - a, MADV_HUGEPAGE);
	__atomic_add_fetch(&committed, b - a, __ATOMIC_RELAXED);
	return 0;
}

void gdr_vmem_free(void *p, size_t reserved, size_t used)
{
	if (!p)
		return;
	if (!munmap(p, pages(reserved)))
		__atomic_sub_fetch(&committed, (used + 4095) & ~(size_t)4095,
				   __ATOMIC_RELAXED);
}
