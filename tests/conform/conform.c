/* SPDX-License-Identifier: MIT */
/*
 * The conformance scenarios (conform.h). Each line is one driver answer:
 *
 *   attrs A+0x1000: ok type=2 ord=0 managed=0 ctx=primary
 *         range=A+0x0,4194304 id=#1 pool=no rdma=1 ipc=1
 *
 * Addresses are written as NAME+offset of the named allocation holding
 * them (or ending right before them), so the transcript does not depend on
 * where the driver placed anything; ids are #1, #2, ... in order of first
 * appearance in a scenario, so only which answers are equal matters.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conform.h"

#define MiB ((size_t)1 << 20)
/* Pointer attributes past the library's own list (CUDA 12 cuda.h). */
#define ATTR_MAPPING_SIZE ((CUpointer_attribute)18)
#define ATTR_MAPPING_BASE ((CUpointer_attribute)19)
#define ATTR_BLOCK_ID ((CUpointer_attribute)20)

static FILE *out;
static const struct conf_app *app;
static const struct gdr_cuda_ops *cu;

/* --- names ------------------------------------------------------------- */

#define MAX_NAMES 16
static struct {
	char name[8];
	uintptr_t start;
	size_t size;
} names[MAX_NAMES];
static int num_names;

#define MAX_IDS 64
struct series {
	unsigned long long v[MAX_IDS];
	int n;
};
static struct series buffer_ids, block_ids;

static void scenario(const char *title)
{
	num_names = 0;
	buffer_ids.n = block_ids.n = 0;
	fprintf(out, "\n== %s\n", title);
}

static void name(const char *n, uintptr_t start, size_t size)
{
	int i;

	for (i = 0; i < num_names; i++)
		if (!strcmp(names[i].name, n))
			break;
	if (i == num_names) {
		if (num_names == MAX_NAMES)
			return;
		num_names++;
	}
	snprintf(names[i].name, sizeof(names[i].name), "%s", n);
	names[i].start = start;
	names[i].size = size;
}

/* "A+0x1000"; an address no named allocation holds is "elsewhere". */
static const char *where(uintptr_t p, char *buf, size_t n)
{
	int i;

	for (i = num_names - 1; i >= 0; i--)
		if (p >= names[i].start &&
		    p - names[i].start <= names[i].size) {
			snprintf(buf, n, "%s+0x%zx", names[i].name,
				 (size_t)(p - names[i].start));
			return buf;
		}
	snprintf(buf, n, "%s", p ? "elsewhere" : "null");
	return buf;
}

/* "#3": the third distinct value of the series in this scenario. */
static const char *numbered(struct series *s, const char *prefix,
			    unsigned long long v, char *buf, size_t n)
{
	int i;

	if (!v) {
		snprintf(buf, n, "0");
		return buf;
	}
	for (i = 0; i < s->n && s->v[i] != v; i++)
		;
	if (i == s->n && s->n < MAX_IDS)
		s->v[s->n++] = v;
	snprintf(buf, n, "%s%d", prefix, i + 1);
	return buf;
}

static const char *id(unsigned long long v, char *buf, size_t n)
{
	return numbered(&buffer_ids, "#", v, buf, n);
}

static const char *res(CUresult r)
{
	static char buf[32];

	switch (r) {
	case CUDA_SUCCESS: return "ok";
	case CUDA_ERROR_INVALID_VALUE: return "INVALID_VALUE";
	case CUDA_ERROR_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
	case CUDA_ERROR_NOT_INITIALIZED: return "NOT_INITIALIZED";
	case CUDA_ERROR_INVALID_DEVICE: return "INVALID_DEVICE";
	case CUDA_ERROR_INVALID_CONTEXT: return "INVALID_CONTEXT";
	case CUDA_ERROR_NOT_FOUND: return "NOT_FOUND";
	case CUDA_ERROR_NOT_PERMITTED: return "NOT_PERMITTED";
	case CUDA_ERROR_NOT_SUPPORTED: return "NOT_SUPPORTED";
	default: snprintf(buf, sizeof(buf), "CUresult %d", (int)r); return buf;
	}
}

static const char *ctx_name(CUcontext c)
{
	return !c ? "none" : c == app->primary ? "primary" : "other";
}

/* --- questions ----------------------------------------------------------- */

const CUpointer_attribute conf_classify_attrs[CONF_CLASSIFY_ATTRS] = {
	CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
	CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
	CU_POINTER_ATTRIBUTE_IS_MANAGED,
	CU_POINTER_ATTRIBUTE_CONTEXT,
	CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
	CU_POINTER_ATTRIBUTE_RANGE_SIZE,
	CU_POINTER_ATTRIBUTE_BUFFER_ID,
	CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,
	CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE,
	CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE,
};

/* What the classifier asks (classify.c), in one call. */
static void attrs(uintptr_t p)
{
	CUpointer_attribute a[CONF_CLASSIFY_ATTRS];
	unsigned int type = 7, managed = 7, rdma = 7, ipc = 7;
	int ord = -7;
	CUcontext ctx = (CUcontext)(uintptr_t)0x7;
	CUdeviceptr start = 0x7;
	size_t size = 7;
	unsigned long long bid = 7;
	void *pool = (void *)0x7;
	void *d[10] = { &type, &ord, &managed, &ctx,  &start,
			&size, &bid, &pool,    &rdma, &ipc };
	char w[48], s[48], i[16];
	CUresult r;

	memcpy(a, conf_classify_attrs, sizeof(a));
	r = cu->cuPointerGetAttributes(10, a, d, (CUdeviceptr)p);

	fprintf(out, "attrs %s: %s", where(p, w, sizeof(w)), res(r));
	if (r == CUDA_SUCCESS)
		fprintf(out,
			" type=%u ord=%d managed=%u ctx=%s range=%s,%zu "
			"id=%s pool=%s rdma=%u ipc=%u",
			type, ord, managed, ctx_name(ctx),
			where((uintptr_t)start, s, sizeof(s)), size,
			id(bid, i, sizeof(i)), pool ? "yes" : "no", rdma, ipc);
	fprintf(out, "\n");
}

/* One attribute at a time: what the cache asks on a hit, and the
 * per-mapping attributes of newer drivers (recorded, not relied on). */
static void one(uintptr_t p)
{
	unsigned long long bid = 0, block = 0, msize = 0;
	CUdeviceptr mbase = 0;
	unsigned int mapped = 0;
	char w[48], s[48], i[16], b[16];
	CUresult r;

	fprintf(out, "one %s:", where(p, w, sizeof(w)));
	r = cu->cuPointerGetAttribute(&bid, CU_POINTER_ATTRIBUTE_BUFFER_ID,
				      (CUdeviceptr)p);
	fprintf(out, " id=%s", r ? res(r) : id(bid, i, sizeof(i)));
	r = cu->cuPointerGetAttribute(&mapped, CU_POINTER_ATTRIBUTE_MAPPED,
				      (CUdeviceptr)p);
	if (r)
		fprintf(out, " mapped=%s", res(r));
	else
		fprintf(out, " mapped=%u", mapped);
	r = cu->cuPointerGetAttribute(&mbase, ATTR_MAPPING_BASE,
				      (CUdeviceptr)p);
	if (!r)
		r = cu->cuPointerGetAttribute(&msize, ATTR_MAPPING_SIZE,
					      (CUdeviceptr)p);
	if (r)
		fprintf(out, " mapping=%s", res(r));
	else
		fprintf(out, " mapping=%s,%llu",
			where((uintptr_t)mbase, s, sizeof(s)), msize);
	r = cu->cuPointerGetAttribute(&block, ATTR_BLOCK_ID, (CUdeviceptr)p);
	fprintf(out, " block=%s",
		r ? res(r) : numbered(&block_ids, "b", block, b, sizeof(b)));
	fprintf(out, "\n");
}

/* cuMemGetAddressRange: the driver's word for a mapping. */
static void range(uintptr_t p)
{
	CUdeviceptr base = 0;
	size_t size = 0;
	char w[48], s[48];
	CUresult r =
		cu->cuMemGetAddressRange
			? cu->cuMemGetAddressRange(&base, &size, (CUdeviceptr)p)
			: CUDA_ERROR_NOT_FOUND;

	fprintf(out, "range %s: %s", where(p, w, sizeof(w)), res(r));
	if (r == CUDA_SUCCESS)
		fprintf(out, " %s,%zu", where((uintptr_t)base, s, sizeof(s)),
			size);
	fprintf(out, "\n");
}

/* Everything about one address. */
static void probe(uintptr_t p)
{
	attrs(p);
	one(p);
	range(p);
}

/* An export of [p, p+len) as a dma-buf, and the size of what came back. */
static void export(uintptr_t p, size_t len, unsigned long long flags)
{
	char w[48];
	int fd = -1;
	CUresult r = cu->cuMemGetHandleForAddressRange(
		&fd, (CUdeviceptr)p, len, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
		flags);

	fprintf(out, "export %s,%zu%s: %s", where(p, w, sizeof(w)), len,
		flags ? " pcie" : "", res(r));
	if (r == CUDA_SUCCESS) {
		off_t end = lseek(fd, 0, SEEK_END);

		fprintf(out, " size=%lld", (long long)end);
		close(fd);
	}
	fprintf(out, "\n");
}

static int failed;

/* An application call that must work for the scenario to go on. */
static int need(const char *what, CUresult r)
{
	if (r == CUDA_SUCCESS)
		return 0;
	fprintf(out, "FAILED: %s: %s\n", what, res(r));
	failed = 1;
	return -1;
}

/* Say where a new allocation landed relative to the named ones. */
static void landed(const char *n, uintptr_t p, size_t size)
{
	char w[48];

	fprintf(out, "%s at %s\n", n, where(p, w, sizeof(w)));
	name(n, p, size);
}

/* --- scenarios ------------------------------------------------------------ */

static void s_alloc(void)
{
	CUdeviceptr a, b;
	const size_t sz = 4 * MiB;

	scenario("cuMemAlloc 4 MiB; freed and allocated again");
	if (need("cuMemAlloc", app->cuMemAlloc(&a, sz)))
		return;
	landed("A", a, sz);
	probe(a);
	probe(a + 4096);
	probe(a + sz - 1);
	export(a, sz, 0);
	export(a + 4096, 4096, 0);
	export(a + 100, 1000, 0);
	export(a, sz + 2 * MiB, 0);
	export(a, sz, CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE);
	need("cuMemFree", app->cuMemFree(a));
	if (need("cuMemAlloc", app->cuMemAlloc(&b, sz)))
		return;
	landed("B", b, sz);
	probe(b + 4096);
	need("cuMemFree", app->cuMemFree(b));
}

static void s_small(void)
{
	CUdeviceptr p, q;

	scenario("two cuMemAlloc of 1 MiB and 1 MiB + 123");
	if (need("cuMemAlloc", app->cuMemAlloc(&p, MiB)))
		return;
	landed("P", p, MiB);
	if (need("cuMemAlloc", app->cuMemAlloc(&q, MiB + 123))) {
		app->cuMemFree(p);
		return;
	}
	landed("Q", q, MiB + 123);
	probe(p + 4096);
	probe(q + 4096);
	probe(q + MiB + 122);
	export(q, MiB + 4096, 0);
	export(p, 2 * MiB, 0);
	need("cuMemFree", app->cuMemFree(q));
	need("cuMemFree", app->cuMemFree(p));
}

static void s_adjacent(void)
{
	CUdeviceptr a, b;
	const size_t sz = 4 * MiB;

	scenario("two cuMemAlloc of 4 MiB side by side");
	if (need("cuMemAlloc", app->cuMemAlloc(&a, sz)))
		return;
	landed("A", a, sz);
	if (need("cuMemAlloc", app->cuMemAlloc(&b, sz))) {
		app->cuMemFree(a);
		return;
	}
	landed("B", b, sz);
	probe(a + sz - 4096);
	probe(b);
	if (b == a + sz) {
		export(a, 2 * sz, 0);
		export(a + 2 * MiB, sz, 0);
	}
	need("cuMemFree", app->cuMemFree(b));
	need("cuMemFree", app->cuMemFree(a));
}

static int vmm_prop(CUmemAllocationProp *prop, int rdma)
{
	memset(prop, 0, sizeof(*prop));
	prop->type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop->location.id = 0;
	prop->allocFlags.gpuDirectRDMACapable = (unsigned char)rdma;
	return 0;
}

/* Map a new physical allocation of @size at @va. */
static int vmm_chunk(CUdeviceptr va, size_t size, int rdma,
		     CUmemGenericAllocationHandle *h)
{
	CUmemAllocationProp prop;
	CUmemAccessDesc acc;

	vmm_prop(&prop, rdma);
	if (need("cuMemCreate", app->cuMemCreate(h, size, &prop, 0)))
		return -1;
	memset(&acc, 0, sizeof(acc));
	acc.location = prop.location;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	if (need("cuMemMap", app->cuMemMap(va, size, 0, *h, 0)) ||
	    need("cuMemSetAccess", app->cuMemSetAccess(va, size, &acc, 1))) {
		app->cuMemRelease(*h);
		return -1;
	}
	return 0;
}

static size_t granularity(void)
{
	CUmemAllocationProp prop;
	size_t g = 0;

	vmm_prop(&prop, 1);
	if (need("cuMemGetAllocationGranularity",
		 app->cuMemGetAllocationGranularity(
			 &g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM)))
		return 0;
	return g;
}

static void s_vmm(void)
{
	CUmemGenericAllocationHandle h[4];
	size_t g = granularity();
	CUdeviceptr r;
	int i, n = 0;

	scenario("VMM: a reservation of 4 chunks, one replaced, one unmapped");
	if (!g)
		return;
	fprintf(out, "granularity %zu\n", g);
	if (need("cuMemAddressReserve",
		 app->cuMemAddressReserve(&r, 4 * g, 0, 0, 0)))
		return;
	name("R", r, 4 * g);
	for (n = 0; n < 4; n++)
		if (vmm_chunk(r + n * g, g, 1, &h[n]))
			goto out;
	for (i = 0; i < 4; i++) {
		probe(r + i * g + 4096);
		probe(r + i * g + g - 1);
	}
	export(r, 4 * g, 0);
	export(r + g / 2, g, 0);
	export(r + 3 * g, g, 0);
	export(r, g, CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE);

	fprintf(out, "-- chunk 3 unmapped, released, a new one mapped\n");
	need("cuMemUnmap", app->cuMemUnmap(r + 3 * g, g));
	need("cuMemRelease", app->cuMemRelease(h[3]));
	n = 3;
	if (vmm_chunk(r + 3 * g, g, 1, &h[3]))
		goto out;
	n = 4;
	probe(r + 4096);
	probe(r + 3 * g + 4096);

	fprintf(out, "-- chunk 2 unmapped (a hole)\n");
	need("cuMemUnmap", app->cuMemUnmap(r + 2 * g, g));
	need("cuMemRelease", app->cuMemRelease(h[2]));
	probe(r + 2 * g + 4096);
	probe(r + 3 * g);
	export(r, 4 * g, 0);
	export(r, 2 * g, 0);
	for (i = 0; i < 4; i++)
		if (i != 2)
			need("cuMemUnmap", app->cuMemUnmap(r + i * g, g));
	for (i = 0; i < 4; i++)
		if (i != 2)
			need("cuMemRelease", app->cuMemRelease(h[i]));
	n = 0;
	fprintf(out, "-- all unmapped\n");
	probe(r + 4096);
out:
	for (i = 0; i < n; i++) {
		app->cuMemUnmap(r + i * g, g);
		app->cuMemRelease(h[i]);
	}
	need("cuMemAddressFree", app->cuMemAddressFree(r, 4 * g));
}

static void s_vmm_big(void)
{
	CUmemGenericAllocationHandle h;
	CUmemAllocationProp prop;
	CUmemAccessDesc acc;
	size_t g = granularity();
	CUdeviceptr r;

	scenario("VMM: one physical allocation of 2 chunks, mapped in two "
		 "halves, then whole");
	if (!g)
		return;
	if (need("cuMemAddressReserve",
		 app->cuMemAddressReserve(&r, 2 * g, 0, 0, 0)))
		return;
	name("R", r, 2 * g);
	vmm_prop(&prop, 1);
	if (need("cuMemCreate", app->cuMemCreate(&h, 2 * g, &prop, 0)))
		goto free_va;
	memset(&acc, 0, sizeof(acc));
	acc.location = prop.location;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	fprintf(out, "map R+0x0,%zu offset %zu: %s\n", g, g,
		res(app->cuMemMap(r, g, g, h, 0)));
	if (need("cuMemMap", app->cuMemMap(r, 2 * g, 0, h, 0)) ||
	    need("cuMemSetAccess", app->cuMemSetAccess(r, 2 * g, &acc, 1)))
		goto release;
	probe(r + 4096);
	probe(r + g + 4096);
	export(r + g / 2, g, 0);
	need("cuMemUnmap", app->cuMemUnmap(r, 2 * g));
release:
	need("cuMemRelease", app->cuMemRelease(h));
free_va:
	need("cuMemAddressFree", app->cuMemAddressFree(r, 2 * g));
}

static void s_vmm_plain(void)
{
	CUmemGenericAllocationHandle h;
	size_t g = granularity();
	CUdeviceptr r;

	scenario("VMM without gpuDirectRDMACapable");
	if (!g)
		return;
	if (need("cuMemAddressReserve",
		 app->cuMemAddressReserve(&r, g, 0, 0, 0)))
		return;
	name("R", r, g);
	if (!vmm_chunk(r, g, 0, &h)) {
		probe(r + 4096);
		export(r, g, 0);
		need("cuMemUnmap", app->cuMemUnmap(r, g));
		need("cuMemRelease", app->cuMemRelease(h));
	}
	need("cuMemAddressFree", app->cuMemAddressFree(r, g));
}

static void s_pool(void)
{
	CUdeviceptr a, b, c;

	scenario("the default stream-ordered pool: two of 1 MiB, one freed "
		 "and allocated again");
	if (need("cuMemAllocAsync", app->cuMemAllocAsync(&a, MiB, NULL)))
		return;
	if (need("cuMemAllocAsync", app->cuMemAllocAsync(&b, MiB, NULL)) ||
	    need("cuStreamSynchronize", app->cuStreamSynchronize(NULL))) {
		app->cuMemFreeAsync(a, NULL);
		return;
	}
	landed("A", a, MiB);
	landed("B", b, MiB);
	probe(a + 4096);
	probe(b + 4096);
	export(a, MiB, 0);
	need("cuMemFreeAsync", app->cuMemFreeAsync(b, NULL));
	need("cuStreamSynchronize", app->cuStreamSynchronize(NULL));
	if (!need("cuMemAllocAsync", app->cuMemAllocAsync(&c, MiB, NULL)) &&
	    !need("cuStreamSynchronize", app->cuStreamSynchronize(NULL))) {
		landed("C", c, MiB);
		probe(c + 4096);
		need("cuMemFreeAsync", app->cuMemFreeAsync(c, NULL));
	}
	need("cuMemFreeAsync", app->cuMemFreeAsync(a, NULL));
	need("cuStreamSynchronize", app->cuStreamSynchronize(NULL));
}

static void s_host(void)
{
	void *h = NULL;
	CUdeviceptr m;
	char *p;

	scenario("pinned host memory (cuMemAllocHost)");
	if (!need("cuMemAllocHost", app->cuMemAllocHost(&h, MiB))) {
		name("H", (uintptr_t)h, MiB);
		probe((uintptr_t)h + 4096);
		export((uintptr_t)h, MiB, 0);
		need("cuMemFreeHost", app->cuMemFreeHost(h));
	}
	scenario("managed memory (cuMemAllocManaged)");
	if (!need("cuMemAllocManaged",
		  app->cuMemAllocManaged(&m, MiB, CU_MEM_ATTACH_GLOBAL))) {
		name("M", m, MiB);
		probe(m + 4096);
		export(m, MiB, 0);
		need("cuMemFree", app->cuMemFree(m));
	}
	scenario("malloc memory");
	p = malloc(MiB);
	if (!p) {
		fprintf(out, "FAILED: malloc\n");
		failed = 1;
		return;
	}
	memset(p, 1, MiB);
	name("H", (uintptr_t)p, MiB);
	probe((uintptr_t)p + 4096);
	export((uintptr_t)p & ~(uintptr_t)4095, 4096, 0);
	free(p);
}

int conf_run(const struct conf_app *a, const struct gdr_cuda_ops *c, FILE *f)
{
	out = f;
	app = a;
	cu = c;
	failed = 0;
	fprintf(out,
		"# libgpudirect driver conformance transcript, format 1\n");
	s_alloc();
	s_small();
	s_adjacent();
	s_vmm();
	s_vmm_big();
	s_vmm_plain();
	s_pool();
	s_host();
	return failed;
}

/* --- comparison ---------------------------------------------------------- */

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	long len;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (len = ftell(f)) >= 0 &&
	    !fseek(f, 0, SEEK_SET)) {
		buf = calloc(1, (size_t)len + 1);
		if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) {
			free(buf);
			buf = NULL;
		}
	}
	fclose(f);
	return buf;
}

/* The next line of *@s (without its newline), skipping # comments. */
static const char *next_line(const char **s, size_t *len)
{
	const char *p, *e;

	for (;;) {
		p = *s;
		if (!*p)
			return NULL;
		e = strchr(p, '\n');
		if (!e)
			e = p + strlen(p);
		*s = *e ? e + 1 : e;
		if (*p != '#')
			break;
	}
	*len = (size_t)(e - p);
	return p;
}

int conf_compare(const char *got, const char *path, const char *who)
{
	char *want = slurp(path);
	const char *g = got, *w, *gl, *wl;
	size_t glen = 0, wlen = 0;
	int line = 0, diffs = 0;

	if (!want) {
		fprintf(stderr, "cannot read the record %s: %s\n", path,
			strerror(errno));
		return 1;
	}
	w = want;
	for (;;) {
		gl = next_line(&g, &glen);
		wl = next_line(&w, &wlen);
		line++;
		if (!gl && !wl)
			break;
		if (gl && wl && glen == wlen && !memcmp(gl, wl, glen))
			continue;
		if (++diffs <= 12)
			fprintf(stderr,
				"line %d differs:\n  record: %.*s\n  %-6s: "
				"%.*s\n",
				line, wl ? (int)wlen : 5, wl ? wl : "(end)",
				who, gl ? (int)glen : 5, gl ? gl : "(end)");
		if (!gl || !wl)
			break;
	}
	free(want);
	if (diffs)
		fprintf(stderr, "%d line(s) of %s differ from %s\n", diffs, who,
			path);
	return diffs ? 1 : 0;
}
