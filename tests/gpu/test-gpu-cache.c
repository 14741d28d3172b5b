/* SPDX-License-Identifier: MIT */
/*
 * The registration cache on a real GPU and driver, with the recording
 * verbs standing in for the NIC. Each recorded MR holds a dup of its
 * dma-buf fd until it is deregistered, as a real MR holds the dma-buf.
 *
 *   churn  10k cycles of cuMemAlloc, gdr_cache_get/put on sub-ranges,
 *          cuMemFree and cuMemAlloc again (often at the same address),
 *          each hit checked against the ground truth: the MR must have
 *          been registered for the allocation that lives there now. Run
 *          once with and once without GDR_CACHE_WHOLE_ALLOC.
 *   purge  memory freed under an idle entry stays pinned by the MR; after
 *          gdr_cache_purge() cuMemGetInfo shows it released.
 *   vmm    a VMM range of 4 chunks, the last replaced: the next get over it
 *          registers again.
 *
 * Exits 77 where there is no GPU.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cutest.h"
#include "fakes.h"

#define MiB ((size_t)1024 * 1024)
#define SLOTS 8
#define CYCLES 10000
#define MAX_TAGS 4096

static uint64_t state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state;
}

/* An allocation the test made: which one lives at d now (gen). */
struct slot {
	CUdeviceptr d;
	size_t size;
	unsigned long gen;
	struct ibv_mr *held; /* an MR kept across a free, put back later */
};

/* Ground truth: the allocation each MR was registered for. */
struct tag {
	struct ibv_mr *mr;
	unsigned long gen;
};
static struct tag tags[MAX_TAGS];
static int num_tags;

static void tag_set(struct ibv_mr *mr, unsigned long gen)
{
	int i;

	for (i = 0; i < num_tags; i++)
		if (tags[i].mr == mr) {
			tags[i].gen = gen;
			return;
		}
	if (num_tags < MAX_TAGS)
		tags[num_tags++] = (struct tag){ mr, gen };
	else
		CHECK(!"more live MRs than the test can tag");
}

static long tag_gen(struct ibv_mr *mr)
{
	int i;

	for (i = 0; i < num_tags; i++)
		if (tags[i].mr == mr)
			return (long)tags[i].gen;
	return -1;
}

static const size_t sizes[] = { 64 << 10, 1 * MiB, 2 * MiB, 6 * MiB };

static unsigned long next_gen;

static int alloc_slot(struct slot *s, size_t size)
{
	if (ct.cuMemAlloc(&s->d, size) != CUDA_SUCCESS)
		return -1;
	s->size = size;
	s->gen = ++next_gen;
	return 0;
}

static void churn(uint32_t flags, const char *name)
{
	struct gdr_cache_attr attr = { .comp_mask = GDR_CACHE_ATTR_FLAGS |
						    GDR_CACHE_ATTR_MAX_ENTRIES,
				       .flags = flags,
				       .max_entries = 256 };
	struct slot slots[SLOTS];
	struct gdr_cache_stats st;
	struct gdr_cache *c;
	long hits = 0, misses = 0, stale_hits = 0, untagged = 0, bad = 0;
	long same_addr = 0, reallocs = 0, held_across = 0;
	int fds = count_fds(), mrs = fake_ibv.live_mrs, i;

	check_scope = name;
	num_tags = 0;
	memset(slots, 0, sizeof(slots));
	c = gdr_cache_create(&fake_pd, &attr);
	CHECK(c != NULL);
	if (!c) {
		printf("gdr_cache_create: %s\n", gdr_last_error());
		return;
	}
	for (i = 0; i < SLOTS; i++)
		CHECK_INT(alloc_slot(&slots[i], sizes[rnd() % 4]), 0);

	for (i = 0; i < CYCLES; i++) {
		struct slot *s = &slots[rnd() % SLOTS];
		int calls = fake_ibv.dmabuf_calls;
		size_t off, len;
		struct ibv_mr *mr;
		uintptr_t a;

		if (rnd() % 10 < 3) {
			/* Free, and allocate again: the same size half the
			 * time, which the driver tends to put at the same
			 * address. */
			CUdeviceptr old = s->d;
			size_t size = rnd() % 2 ? s->size : sizes[rnd() % 4];

			CHECK_INT(ct.cuMemFree(s->d), CUDA_SUCCESS);
			CHECK_INT(alloc_slot(s, size), 0);
			reallocs++;
			same_addr += s->d == old;
			if (s->held) {
				CHECK_INT(gdr_cache_put(c, s->held), 0);
				s->held = NULL;
			}
			continue;
		}
		off = (size_t)(rnd() % s->size);
		len = 1 + (size_t)(rnd() % (s->size - off));
		a = (uintptr_t)s->d + off;
		mr = gdr_cache_get(c, (void *)a, len);
		if (!mr) {
			printf("gdr_cache_get(%#lx, %zu): %s\n",
			       (unsigned long)a, len, gdr_last_error());
			bad++;
			continue;
		}
		if ((uintptr_t)mr->addr > a ||
		    (uintptr_t)mr->addr + mr->length < a + len)
			bad++;
		if (fake_ibv.dmabuf_calls != calls) {
			misses++;
			tag_set(mr, s->gen);
		} else {
			long g = tag_gen(mr);

			hits++;
			if (g < 0)
				untagged++;
			else if ((unsigned long)g != s->gen)
				stale_hits++;
		}
		/* Now and then keep the MR while the memory is freed. */
		if (!s->held && rnd() % 20 == 0) {
			s->held = mr;
			held_across++;
		} else {
			CHECK_INT(gdr_cache_put(c, mr), 0);
		}
	}
	CHECK_INT(gdr_cache_query_stats(c, &st, sizeof(st)), 0);
	CHECK_INT(stale_hits, 0);
	CHECK_INT(untagged, 0);
	CHECK_INT(bad, 0);
	CHECK_INT((long)st.hits, hits);
	CHECK_INT((long)st.misses, misses);
	/* The run must have exercised what it claims to check. */
	CHECK(same_addr > 100);
	CHECK(hits > 1000);
	CHECK(st.stale > 0);
	printf("%s: %d cycles: %ld hits, %ld misses, %ld stale hits, %ld "
	       "reallocations (%ld at the same address), %llu stale entries "
	       "detected, %llu evictions, %ld MRs held across a free\n",
	       name, CYCLES, hits, misses, stale_hits, reallocs, same_addr,
	       (unsigned long long)st.stale, (unsigned long long)st.evictions,
	       held_across);

	for (i = 0; i < SLOTS; i++) {
		if (slots[i].held)
			CHECK_INT(gdr_cache_put(c, slots[i].held), 0);
		CHECK_INT(ct.cuMemFree(slots[i].d), CUDA_SUCCESS);
	}
	CHECK_INT(gdr_cache_purge(c), 0);
	CHECK_INT(gdr_cache_query_stats(c, &st, sizeof(st)), 0);
	CHECK_INT(st.entries, 0);
	CHECK_INT(gdr_cache_destroy(c), 0);
	CHECK_INT(fake_ibv.live_mrs, mrs);
	CHECK_INT(count_fds(), fds);
}

static size_t free_mem(void)
{
	size_t f = 0, t = 0;

	CHECK_INT(ct.cuMemGetInfo(&f, &t), CUDA_SUCCESS);
	return f;
}

static void purge(void)
{
	const size_t size = 2048 * MiB;
	struct gdr_cache_stats st;
	struct gdr_cache *c;
	struct ibv_mr *mr;
	size_t before, allocated, freed, purged;
	CUdeviceptr d;

	check_scope = "purge";
	c = gdr_cache_create(&fake_pd, NULL);
	CHECK(c != NULL);
	if (!c)
		return;
	before = free_mem();
	CHECK_INT(ct.cuMemAlloc(&d, size), CUDA_SUCCESS);
	allocated = free_mem();
	mr = gdr_cache_get(c, (void *)d, size);
	CHECK(mr != NULL);
	if (mr)
		CHECK_INT(gdr_cache_put(c, mr), 0);
	CHECK_INT(ct.cuMemFree(d), CUDA_SUCCESS);
	freed = free_mem();
	CHECK_INT(gdr_cache_purge(c), 0);
	purged = free_mem();
	CHECK_INT(gdr_cache_query_stats(c, &st, sizeof(st)), 0);
	/* The idle entry's MR pins the memory past cuMemFree ... */
	CHECK(before - freed >= size / 2);
	/* ... until purge finds it stale and deregisters it. */
	CHECK(purged + 64 * MiB >= before);
	CHECK_INT(st.stale, 1);
	CHECK_INT(st.entries, 0);
	printf("purge: free GPU memory %zu MiB before, %zu after cuMemAlloc of "
	       "%zu MiB, %zu after cuMemFree with the entry idle, %zu after "
	       "gdr_cache_purge\n",
	       before / MiB, allocated / MiB, size / MiB, freed / MiB,
	       purged / MiB);
	CHECK_INT(gdr_cache_destroy(c), 0);
}

/* Map a new physical allocation of @g bytes at @va. */
static int chunk(CUdeviceptr va, size_t g, CUmemGenericAllocationHandle *h)
{
	CUmemAllocationProp prop;
	CUmemAccessDesc acc;

	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.allocFlags.gpuDirectRDMACapable = 1;
	memset(&acc, 0, sizeof(acc));
	acc.location = prop.location;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	if (ct.cuMemCreate(h, g, &prop, 0))
		return -1;
	if (ct.cuMemMap(va, g, 0, *h, 0) || ct.cuMemSetAccess(va, g, &acc, 1)) {
		ct.cuMemRelease(*h);
		return -1;
	}
	return 0;
}

/*
 * A VMM range of 4 chunks, its last chunk replaced: the driver's RANGE_*
 * attributes describe the whole reservation at every chunk, so only the
 * per-mapping buffer ids can tell (the stale hit of 0.2).
 */
static void vmm(void)
{
	CUmemGenericAllocationHandle h[4];
	struct gdr_cache_get_info info;
	struct gdr_cache_stats st;
	struct gdr_cache *c;
	struct ibv_mr *mr, *first;
	size_t g = 2 * MiB;
	CUdeviceptr r;
	int i, ok = 1, calls;

	check_scope = "vmm chunk replaced";
	c = gdr_cache_create(&fake_pd, NULL);
	CHECK(c != NULL);
	CHECK_INT(ct.cuMemAddressReserve(&r, 4 * g, 0, 0, 0), CUDA_SUCCESS);
	for (i = 0; i < 4; i++)
		ok &= chunk(r + i * g, g, &h[i]) == 0;
	CHECK(ok);
	if (!c || !ok)
		return;
	first = gdr_cache_get_ex(c, (void *)r, 4 * g, &info, sizeof(info));
	CHECK(first != NULL);
	CHECK_INT(info.result, GDR_CACHE_RESULT_MISS);
	CHECK_INT(info.num_mappings, 4);
	CHECK_INT(gdr_cache_put(c, first), 0);
	mr = gdr_cache_get_ex(c, (void *)(r + g + 4096), 2 * g, &info,
			      sizeof(info));
	CHECK(mr == first);
	CHECK_INT(info.result, GDR_CACHE_RESULT_HIT);
	CHECK_INT(gdr_cache_put(c, mr), 0);

	/* Chunk 3 unmapped, released, a new allocation mapped there. */
	CHECK_INT(ct.cuMemUnmap(r + 3 * g, g), CUDA_SUCCESS);
	CHECK_INT(ct.cuMemRelease(h[3]), CUDA_SUCCESS);
	CHECK_INT(chunk(r + 3 * g, g, &h[3]), 0);
	calls = fake_ibv.dmabuf_calls;
	mr = gdr_cache_get_ex(c, (void *)r, 4 * g, &info, sizeof(info));
	CHECK(mr != NULL);
	CHECK_INT(info.result, GDR_CACHE_RESULT_MISS);
	CHECK_INT(fake_ibv.dmabuf_calls, calls + 1);
	CHECK_INT(fake_ibv.last_dmabuf_size, 4 * g); /* one export of all 4 */
	if (mr)
		CHECK_INT(gdr_cache_put(c, mr), 0);
	/* A hit on chunk 0 alone stays a hit. */
	mr = gdr_cache_get_ex(c, (void *)(r + 4096), 4096, &info, sizeof(info));
	CHECK_INT(info.result, GDR_CACHE_RESULT_HIT);
	if (mr)
		CHECK_INT(gdr_cache_put(c, mr), 0);
	CHECK_INT(gdr_cache_query_stats(c, &st, sizeof(st)), 0);
	CHECK_INT(st.stale, 1);
	printf("vmm: a 4-chunk range: miss, hit; chunk 3 replaced: miss (one "
	       "8 MiB export), %llu stale entry found\n",
	       (unsigned long long)st.stale);
	CHECK_INT(gdr_cache_destroy(c), 0);
	for (i = 0; i < 4; i++) {
		ct.cuMemUnmap(r + i * g, g);
		ct.cuMemRelease(h[i]);
	}
	ct.cuMemAddressFree(r, 4 * g);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	char why[256];
	int rc;

	rc = cutest_init(0, why, sizeof(why));
	if (rc) {
		printf("%s: %s\n", rc == 77 ? "SKIP" : "FAIL", why);
		return rc;
	}
	fakes_reset();
	fakes_install_real_cuda();
	if (!strcmp(what, "churn")) {
		churn(0, "churn");
		churn(GDR_CACHE_WHOLE_ALLOC, "churn whole-alloc");
	} else if (!strcmp(what, "purge")) {
		purge();
	} else if (!strcmp(what, "vmm")) {
		vmm();
	} else {
		fprintf(stderr, "usage: %s churn|purge|vmm\n", argv[0]);
		return 2;
	}
	return check_summary(what);
}
