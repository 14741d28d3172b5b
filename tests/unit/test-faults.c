/* SPDX-License-Identifier: MIT */
/*
 * Fault injection: every call the library makes to the outside world
 * (CUDA entry points, verbs calls, cuda_load, file opens, and with
 * "alloc" the heap allocations) is made to fail in turn, through the seam.
 * After each run: a clean answer (an MR, or NULL with errno and a message),
 * no fd and no heap left behind, no MR alive, every primary context
 * retained released, the caller's context stack as it was, and the
 * library usable again.
 *
 *   test-faults [alloc]
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fakes.h"
#include "errnos.h"

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define HEAP_CHECKS 1
/* Allocation faults: the executable's definitions take precedence. */
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

void *malloc(size_t n)
{
	if (fault_alloc && fault_inject("malloc")) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_malloc(n);
}

/* The arguments of the calloc() failed last: which table it was. */
static size_t failed_calloc_n, failed_calloc_size;

void *calloc(size_t a, size_t b)
{
	if (fault_alloc && fault_inject("calloc")) {
		failed_calloc_n = a;
		failed_calloc_size = b;
		errno = ENOMEM;
		return NULL;
	}
	return __libc_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
	if (fault_alloc && fault_inject("realloc")) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_realloc(p, n);
}

int posix_memalign(void **p, size_t align, size_t n)
{
	if (fault_alloc && fault_inject("posix_memalign"))
		return ENOMEM;
	*p = __libc_memalign(align, n);
	return *p ? 0 : ENOMEM;
}

void *aligned_alloc(size_t align, size_t n)
{
	if (fault_alloc && fault_inject("aligned_alloc")) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_memalign(align, n);
}
#endif

enum op {
	OP_DMABUF,
	OP_PEERMEM,
	OP_HOST,
	OP_REPORT,
	OP_CACHE,
	OP_VMM,		/* exported in the primary context, retained */
	OP_DATA_DIRECT, /* the PCIe-mapped export and mlx5dv */
	OP_CACHE_VMM,	/* the cache over VMM mappings */
	OP_MULTI,	/* one buffer on three rails of three kinds */
	OP_RANK,	/* the rails ranked for GPU 0 */
	OP_CACHE_SPAN,	/* the cache over a buffer across two VMM chunks */
	OP_COUNT
};
static const char *const op_names[OP_COUNT] = { "dmabuf registration",
						"peermem registration",
						"host registration",
						"report",
						"cache",
						"vmm registration",
						"data-direct registration",
						"cache over vmm",
						"multi-PD registration",
						"rank",
						"cache over two vmm chunks" };

static struct fixture fx;
static void *dev_ptr;
static char host_buf[8192];

/* OP_MULTI and OP_RANK: a DMA-BUF rail beside the GPU, a rail whose NIC
 * refuses DMA-BUF (nvidia-peermem takes it), a Data Direct rail. */
#define RAILS 3
static const struct {
	const char *name, *chain;
} rail[RAILS] = {
	{ "mlx5_near", "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:04.0/"
		       "0000:04:00.0" },
	{ "irdma_far", "pci0000:80/0000:80:01.0/0000:81:00.0" },
	{ "mlx5_dd", "pci0000:00/0000:00:03.0/0000:06:00.0" },
};
#define RAIL_GPU_CHAIN                                                         \
	"pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0"
static struct fake_nic rails[RAILS];
static struct ibv_pd *rail_pds[RAILS];
static struct ibv_context *rail_ctxs[RAILS];

static void add_rails(void)
{
	char path[512], target[320];
	int i;

	fixture_pci(&fx, RAIL_GPU_CHAIN, 0);
	snprintf(fake_model.gpu[0].pci_bus_id,
		 sizeof(fake_model.gpu[0].pci_bus_id), "0000:03:00.0");
	fixture_write(fx.sys, "module/nvidia_peermem/version", "580\n");
	for (i = 0; i < RAILS; i++) {
		struct gdr_model_nic *m =
			fake_add_nic(&rails[i], rail[i].name, 1);

		rail_pds[i] = &rails[i].pd;
		rail_ctxs[i] = &rails[i].ctx;
		if (i == 1) {
			m->dmabuf_probe_errno = EOPNOTSUPP;
			m->mlx5 = 0;
		}
		if (i == 2)
			m->data_direct_errno = 0;
		fixture_pci(&fx, rail[i].chain, i == 1);
		snprintf(path, sizeof(path), "class/infiniband/%s/uevent",
			 rail[i].name);
		fixture_write(fx.sys, path, "");
		snprintf(path, sizeof(path), "%s/class/infiniband/%s/device",
			 fx.sys, rail[i].name);
		snprintf(target, sizeof(target), "../../../devices/%s",
			 rail[i].chain);
		unlink(path);
		if (symlink(target, path))
			CHECK(0);
	}
}

static size_t heap_used(void)
{
#ifdef HEAP_CHECKS
	return mallinfo2().uordblks;
#else
	return 0;
#endif
}

static void setup(enum op op)
{
	fakes_reset();
	if (op == OP_PEERMEM) {
		fixture_write(fx.proc, "driver/nvidia/version", NV_PROPRIETARY);
		fixture_write(fx.sys, "module/nvidia_peermem/version", "580\n");
		fixture_write(fx.sys, "kernel/mm/memory_peers/nv_mem/version",
			      "580\n");
	} else {
		fixture_write(fx.proc, "driver/nvidia/version", NV_OPEN);
	}
	if (op == OP_DATA_DIRECT)
		fake_model.nic[0].data_direct_errno =
			0; /* the NIC has a Data Direct function */
	if (op == OP_MULTI || op == OP_RANK)
		add_rails();
	fakes_install(&fx, NULL, NULL, NULL);
	if (op == OP_VMM || op == OP_CACHE_VMM)
		dev_ptr = (char *)fake_vmm(0, 2, 2 << 20, 0) + 4096;
	else if (op == OP_CACHE_SPAN)
		/* the 4 KiB run() asks for: the last half of the first chunk's
		 * last page and the first half of the second chunk */
		dev_ptr = (char *)fake_vmm(0, 2, 2 << 20, 0) + (2 << 20) - 2048;
	else
		dev_ptr = (char *)fake_alloc_device(0, 1 << 20) + 4096;
}

/* Primary contexts the library holds now. */
static int primary_refs(void)
{
	int d, n = 0;

	for (d = 0; d < FAKE_MAX_DEVS; d++)
		n += fake_cu.primary_refs[d];
	return n;
}

/* One buffer on the three rails; 0 or errno, as run(). */
static int run_multi(int *clean)
{
	struct gdr_reg_info infos[RAILS];
	struct ibv_mr *mrs[RAILS];
	int err, i;

	if (gdr_register_multi(rail_pds, RAILS, dev_ptr, 4096, NULL, mrs, infos,
			       sizeof(infos[0]))) {
		err = errno;
		*clean = err != 0 && gdr_last_error()[0] != '\0';
		for (i = 0; i < RAILS; i++)
			*clean = *clean && !mrs[i];
		return err ? err : -1;
	}
	for (i = 0; i < RAILS; i++)
		*clean = *clean && mrs[i] && mrs[i]->addr == dev_ptr &&
			 mrs[i]->length == 4096 &&
			 infos[i].path != GDR_PATH_NONE;
	if (gdr_deregister_multi(mrs, RAILS)) {
		/* An injected dereg failure: that MR stays in mrs. */
		long saved = fault_at;

		fault_at = 0;
		*clean = *clean && gdr_last_error()[0] != '\0';
		if (gdr_deregister_multi(mrs, RAILS))
			*clean = 0;
		fault_at = saved;
	}
	return 0;
}

/* The rails ranked for GPU 0 (by ordinal: the CUDA calls too). */
static int run_rank(int *clean)
{
	struct gdr_rank_attr a = { .cuda_device = 0, .policy = GDR_RANK_ALL };
	struct gdr_nic_rank out[RAILS];
	unsigned int num = RAILS;
	int err;

	if (gdr_rank_nics(&a, rail_ctxs, RAILS, out, &num, sizeof(out[0]))) {
		err = errno;
		*clean = err != 0 && gdr_last_error()[0] != '\0';
		return err ? err : -1;
	}
	*clean = num == RAILS;
	return 0;
}

/* One operation; 0 when it succeeded, else errno. Frees what it made. */
static int run(enum op op, int *clean)
{
	struct gdr_report *r;
	struct ibv_mr *mr;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int err;

	errno = 0;
	*clean = 1;
	if (op == OP_MULTI)
		return run_multi(clean);
	if (op == OP_RANK)
		return run_rank(clean);
	if (op == OP_REPORT) {
		struct ibv_context *ctxs[1] = { &fake_context };

		r = gdr_report_create(ctxs, 1, 0);
		if (!r) {
			err = errno;
			*clean = err != 0 && gdr_last_error()[0];
			return err ? err : -1;
		}
		f = open_memstream(&text, &len);
		if (f) {
			gdr_report_print(r, f, GDR_REPORT_JSON);
			fclose(f);
		}
		free(text);
		gdr_report_destroy(r);
		return 0;
	}
	if (op == OP_CACHE || op == OP_CACHE_VMM || op == OP_CACHE_SPAN) {
		struct gdr_cache *c = gdr_cache_create(&fake_pd, NULL);

		if (!c) {
			err = errno;
			*clean = err != 0 && gdr_last_error()[0];
			return err ? err : -1;
		}
		mr = gdr_cache_get(c, dev_ptr, 4096);
		err = mr ? 0 : errno;
		*clean = mr ? mr->addr == dev_ptr : err && gdr_last_error()[0];
		if (mr && gdr_cache_put(c, mr))
			*clean = 0;
		/* The second get hits (or registers again after a failure). */
		mr = gdr_cache_get(c, dev_ptr, 4096);
		if (mr && gdr_cache_put(c, mr))
			*clean = 0;
		if (gdr_cache_purge(c) && !gdr_last_error()[0])
			*clean = 0;
		if (gdr_cache_destroy(c)) {
			/* An injected dereg failure: the MR is still there. */
			long saved = fault_at;

			fault_at = 0;
			if (gdr_cache_destroy(c))
				*clean = 0;
			fault_at = saved;
		}
		return err;
	}
	mr = gdr_register(&fake_pd, op == OP_HOST ? (void *)host_buf : dev_ptr,
			  4096);
	if (!mr) {
		err = errno;
		*clean = err != 0 && gdr_last_error()[0] != '\0';
		return err ? err : -1;
	}
	*clean = mr->addr == (op == OP_HOST ? (void *)host_buf : dev_ptr) &&
		 mr->length == 4096;
	if (gdr_deregister(mr)) {
		/* An injected dereg failure: the MR is still there. */
		long saved = fault_at;

		fault_at = 0;
		*clean = *clean && gdr_last_error()[0] != '\0';
		if (gdr_deregister(mr))
			*clean = 0;
		fault_at = saved;
	}
	return 0;
}

static void sweep(enum op op, int alloc)
{
	long n, failures = 0, total = 0;
	char scope[160];

	for (n = 1;; n++) {
		size_t heap0, heap1;
		int fds0, refs0, depth0, clean, err, again;

		setup(op);
		gdr_seam_install(NULL); /* empty caches, for the heap count */
		setup(op);
		fds0 = count_fds();
		refs0 = primary_refs();
		depth0 = fake_ctx_depth();
		heap0 = heap_used();

		fault_calls = 0;
		fault_where = NULL;
		fault_alloc = alloc;
		fault_at = n;
		err = run(op, &clean);
		fault_at = 0;
		fault_alloc = 0;
		if (!fault_where) {
			total = n - 1;
			break; /* every call has failed once */
		}
		snprintf(scope, sizeof(scope), "%s, call %ld (%s) fails",
			 op_names[op], n, fault_where);
		check_scope = scope;
		if (err)
			failures++;
		CHECK(clean);
		/* VMM memory has no context of its own: without the primary
		 * one there is nothing to export in, so the call fails and
		 * says so (it does not export in no context). */
		if (op == OP_VMM &&
		    !strcmp(fault_where, "cuDevicePrimaryCtxRetain")) {
			CHECK(err != 0);
			CHECK(strstr(gdr_last_error(),
				     "cuDevicePrimaryCtxRetain") != NULL);
		}
		/* Memory of a context: the export asks which context is
		 * current, and a failure there is the registration's. */
		if (op == OP_DMABUF && !alloc &&
		    !strcmp(fault_where, "cuCtxGetCurrent")) {
			CHECK(err != 0);
			CHECK(strstr(gdr_last_error(), "cuCtxGetCurrent") !=
			      NULL);
		}
		CHECK_INT(count_fds(), fds0);
		CHECK_INT(fake_ibv.live_mrs, 0);
		/* A release that fails keeps its reference (nothing can give
		 * it back); every other fault must leave none. */
		if (strcmp(fault_where, "cuDevicePrimaryCtxRelease"))
			CHECK_INT(primary_refs(), refs0);
		CHECK_INT(fake_ctx_depth(), depth0);

		/* Still usable: the next call answers cleanly ... */
		again = run(op, &clean);
		CHECK(clean);
		(void)again;
		/* ... and after a fresh probe it succeeds. */
		setup(op);
		CHECK_INT(run(op, &clean), 0);
		CHECK(clean);
		CHECK_INT(fake_ibv.live_mrs, 0);
		CHECK_INT(count_fds(), fds0);
		CHECK_INT(primary_refs(), refs0);
		CHECK_INT(fake_ctx_depth(), depth0);
		gdr_seam_install(NULL);
		setup(op);
		heap1 = heap_used();
#ifdef HEAP_CHECKS
		CHECK_INT(heap1, heap0);
#endif
		(void)heap1;
		(void)heap0;
	}
	printf("%s%s: %ld calls, each failed once (%ld runs failed cleanly, "
	       "the rest absorbed the fault)\n",
	       op_names[op], alloc ? " with allocations" : "", total, failures);
	check_scope = op_names[op];
	CHECK(total >= 3);
}

/*
 * With GPUDIRECT_DEBUG set, a failed release of the primary context the
 * export retained is not silent: its debug line names the call and the
 * GPU (the registration itself still succeeds).
 */
static void release_failure_logged(void)
{
	char path[] = "/tmp/gdr-faults-stderr-XXXXXX";
	char text[8192];
	struct ibv_mr *mr;
	int n, fd, saved, found = 0;
	ssize_t got;

	check_scope = "a failed cuDevicePrimaryCtxRelease is logged";
	fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	unlink(path);
	for (n = 1; n < 1000 && !found; n++) {
		fakes_reset();
		fixture_write(fx.proc, "driver/nvidia/version", NV_OPEN);
		fakes_install(&fx, NULL, NULL, "1");
		/* VMM memory has no context: exported in the retained
		 * primary one. */
		dev_ptr = (char *)fake_vmm(0, 2, 2 << 20, 0) + 4096;
		fflush(stderr);
		if (ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET))
			break;
		saved = dup(2);
		if (saved < 0 || dup2(fd, 2) < 0)
			break;
		fault_calls = 0;
		fault_where = NULL;
		fault_at = n;
		mr = gdr_register(&fake_pd, dev_ptr, 4096);
		fault_at = 0;
		fflush(stderr);
		dup2(saved, 2);
		close(saved);
		if (mr)
			CHECK_INT(gdr_deregister(mr), 0);
		if (!fault_where)
			break; /* every call has failed once */
		if (strcmp(fault_where, "cuDevicePrimaryCtxRelease"))
			continue;
		found = 1;
		CHECK(mr != NULL);
		got = pread(fd, text, sizeof(text) - 1, 0);
		text[got > 0 ? got : 0] = '\0';
		CHECK_HAS(text, "cuDevicePrimaryCtxRelease(GPU 0) failed with "
				"CUDA_ERROR_UNKNOWN");
	}
	close(fd);
	CHECK(found);
}

#ifdef HEAP_CHECKS
/*
 * The cache's MR table (lib/cache/tables.c: every entry that holds an MR,
 * by the MR's address, so that a put finds its entry without reading the
 * MR) doubles when it would be more than half full: with MRTAB_HELD MRs
 * out, the next get must grow it. Each call of that get fails in turn
 * (fault_alloc: every allocation among them), the MR table's calloc()
 * once:
 *  - a cached miss (GDR_CACHE_HOST) whose MR the table cannot take still
 *    gives the MR out (a put finds it by a walk): its put gives it back,
 *    the next get hits it, and an invalidation while it is out (its
 *    drop tries the add again, and that growth fails too) leaves it to
 *    its last put, which finds it by the walk when no hint has it;
 *  - a pass-through get (host memory without GDR_CACHE_HOST) whose MR the
 *    table cannot take fails with ENOMEM, "out of memory for a cache
 *    entry", and deregisters that MR.
 * Whatever failed, the get answers cleanly (the MR, or NULL with errno and
 * a message) and nothing is lost: every MR given out is put back once
 * (a second put, and a put of an MR the cache never gave out, are EINVAL
 * and do not hang in the table: the alarm fails the test), the cache
 * audits clean, and its destruction leaves no MR and no heap behind.
 */
#define MRTAB_HELD 32 /* MRs out before the get that grows the MR table */
/* Live entries that grow the MR hint past its first 256 slots: it is
 * rebuilt from the live entries alone (tables.c), so that a dropped entry
 * missing from the MR table is found by nothing but the walk. */
#define HINT_REBUILT 129

static char mrtab_buf[(MRTAB_HELD + 2) * 4096] __attribute__((aligned(4096)));
static char mrtab_more[HINT_REBUILT * 4096] __attribute__((aligned(4096)));

/* The failed call was the MR table's growth: a calloc() of entry pointers
 * with room for MRTAB_HELD + 1 of them, at most half full. */
static int mrtab_growth_failed(void)
{
	return fault_where && !strcmp(fault_where, "calloc") &&
	       failed_calloc_size == sizeof(void *) &&
	       failed_calloc_n >= 2 * (MRTAB_HELD + 1);
}

static struct gdr_cache_stats mrtab_stats(struct gdr_cache *c)
{
	struct gdr_cache_stats st;

	memset(&st, 0xff, sizeof(st));
	CHECK_INT(gdr_cache_query_stats(c, &st, sizeof(st)), 0);
	return st;
}

static void mrtab_audit(struct gdr_cache *c)
{
	char why[256] = "";

	CHECK_(gdr_cache_audit(c, why, sizeof(why)) == 0, "gdr_cache_audit: %s",
	       why);
}

/*
 * One run, call @n of the get that grows the table failing (0: none); the
 * heap is counted unless @warm (the first run: what the library keeps for
 * the process is not a leak). Whether a call failed; *@growth: it was the
 * table's growth.
 */
static int mrtab_run(int cached, long n, int warm, int *growth)
{
	struct gdr_cache_attr attr = { .comp_mask = GDR_CACHE_ATTR_FLAGS,
				       .flags = cached ? GDR_CACHE_HOST : 0 };
	struct ibv_mr *mrs[MRTAB_HELD + 1], *mr, stranger = { 0 };
	struct gdr_cache_get_info info;
	struct gdr_cache_stats st;
	char *p = mrtab_buf + MRTAB_HELD * 4096;
	static char scope[192];
	struct gdr_cache *c;
	int i, err, out, failed, bad = 0;
	size_t heap0 = heap_used();

	snprintf(scope, sizeof(scope), "cache: the MR table out of memory, %s",
		 cached ? "cached" : "pass-through");
	check_scope = scope;
	c = gdr_cache_create(&fake_pd, &attr);
	CHECK(c != NULL);
	if (!c)
		return 0;
	for (i = 0; i < MRTAB_HELD; i++)
		bad += !(mrs[i] = gdr_cache_get(c, mrtab_buf + i * 4096, 4096));
	CHECK_INT(bad, 0);
	if (bad)
		return 0;

	fault_calls = 0;
	fault_where = NULL;
	failed_calloc_n = failed_calloc_size = 0;
	fault_alloc = 1;
	fault_at = n;
	errno = 0;
	mr = gdr_cache_get(c, p, 4096);
	err = mr ? 0 : errno;
	fault_at = 0;
	fault_alloc = 0;
	failed = fault_where != NULL;
	*growth = mrtab_growth_failed();
	if (failed)
		snprintf(
			scope, sizeof(scope),
			"cache: the MR table out of memory, %s, call %ld (%s%s) "
			"fails",
			cached ? "cached" : "pass-through", n, fault_where,
			*growth ? ": the MR table's growth" : "");

	/* A clean answer; the table's growth is the documented one. */
	if (mr)
		CHECK(mr->addr == p && mr->length == 4096);
	else
		CHECK(err != 0 && gdr_last_error()[0] != '\0');
	if (*growth && cached) {
		CHECK(mr != NULL);
	} else if (*growth) {
		CHECK(mr == NULL);
		CHECK_INT(err, ENOMEM);
		CHECK_HAS(gdr_last_error(), "out of memory for a cache entry");
	}
	out = MRTAB_HELD + (mr != NULL);
	mrs[MRTAB_HELD] = mr;
	CHECK_INT(fake_ibv.live_mrs, out);
	st = mrtab_stats(c);
	CHECK_INT(st.in_use, out);
	CHECK_INT(st.entries, cached ? out : 0);
	CHECK_INT(st.passthrough, cached ? 0 : out);
	mrtab_audit(c);

	if (cached && mr) {
		/* Put back, the entry is still cached: a hit on that MR. */
		CHECK_INT(gdr_cache_put(c, mr), 0);
		mrs[MRTAB_HELD] =
			gdr_cache_get_ex(c, p, 4096, &info, sizeof(info));
		CHECK(mrs[MRTAB_HELD] == mr);
		CHECK_INT(info.result, GDR_CACHE_RESULT_HIT);
		if (mrs[MRTAB_HELD] != mr)
			out = MRTAB_HELD;
	}
	if (cached) {
		/* Every entry dropped while its MR is out, any allocation of
		 * the drop failing: deregistered at its last put. */
		fault_calls = 0;
		fault_where = NULL;
		fault_alloc = 1;
		fault_at = 1;
		CHECK_INT(gdr_cache_invalidate(c, mrtab_buf, sizeof(mrtab_buf)),
			  0);
		fault_at = 0;
		fault_alloc = 0;
		/* The entry the table could not take was added again by its
		 * drop, and that growth failed as well. */
		if (*growth)
			CHECK(mrtab_growth_failed());
		st = mrtab_stats(c);
		CHECK_INT(st.entries, 0);
		CHECK_INT(st.in_use, out);
		CHECK_INT(st.invalidations, out);
		CHECK_INT(fake_ibv.live_mrs, out);
		mrtab_audit(c);
		/* Other buffers cached meanwhile: the MR hint forgets the
		 * dropped entries, and this thread's last get is another. */
		for (i = 0; i < HINT_REBUILT; i++) {
			struct ibv_mr *m =
				gdr_cache_get(c, mrtab_more + i * 4096, 4096);

			bad += !m || gdr_cache_put(c, m) != 0;
		}
		CHECK_INT(bad, 0);
		CHECK_INT(mrtab_stats(c).entries, HINT_REBUILT);
	}

	/* A stranger, each MR once (the last one first), a second put. */
	alarm(20);
	stranger.addr = mrtab_buf + (MRTAB_HELD + 1) * 4096;
	stranger.length = 4096;
	CHECK_INT(gdr_cache_put(c, &stranger), EINVAL);
	CHECK_HAS(gdr_last_error(), "not one the cache gave out");
	for (i = out - 1; i >= 0; i--)
		bad += gdr_cache_put(c, mrs[i]) != 0;
	CHECK_INT(bad, 0);
	if (mr)
		CHECK_INT(gdr_cache_put(c, mr), EINVAL);
	alarm(0);
	CHECK_INT(fake_ibv.live_mrs, cached ? HINT_REBUILT : 0);
	CHECK_INT(mrtab_stats(c).in_use, 0);
	mrtab_audit(c);
	CHECK_INT(gdr_cache_destroy(c), 0);
	CHECK_INT(fake_ibv.live_mrs, 0);
	if (!warm)
		CHECK_INT(heap_used(), heap0);
	return failed;
}

static void cache_mr_table_out_of_memory(void)
{
	void *(*volatile alloc)(size_t, size_t) = calloc;
	int cached, growth, growths;
	void *probe;
	long n;

	check_scope = "cache: the MR table out of memory";
	fakes_reset();
	fixture_write(fx.proc, "driver/nvidia/version", NV_OPEN);
	fakes_install(&fx, NULL, NULL, NULL);
	/* Valgrind replaces calloc() in every object, this test's too: then
	 * no allocation can be made to fail, and nothing would be tested. */
	fault_calls = 0;
	fault_where = NULL;
	fault_alloc = 1;
	fault_at = 1;
	probe = alloc(1, 1);
	fault_at = 0;
	fault_alloc = 0;
	if (probe || !fault_where) {
		free(probe);
		printf("SKIP: %s: calloc() is not this test's own (valgrind "
		       "replaces it), so no allocation can be made to fail\n",
		       check_scope);
		return;
	}
	for (cached = 0; cached < 2; cached++) {
		/* Unfaulted: to warm up, then counted. */
		mrtab_run(cached, 0, 1, &growth);
		CHECK(!mrtab_run(cached, 0, 0, &growth));
		growths = 0;
		for (n = 1; mrtab_run(cached, n, 0, &growth); n++)
			growths += growth;
		check_scope =
			cached ? "cache: the MR table out of memory, cached"
			       : "cache: the MR table out of memory, "
				 "pass-through";
		printf("%s: %ld calls of the get that grows the table, each "
		       "failed once\n",
		       check_scope, n - 1);
		/* The table's growth was among them, once. */
		CHECK_INT(growths, 1);
		CHECK(n - 1 >= 2);
	}
}
#endif

/*
 * cuPointerGetAttributes failing: NOT_INITIALIZED (cuInit not called in
 * this process) and INVALID_VALUE (memory CUDA does not know) make the
 * buffer host memory; every other result is the registration's error,
 * with the errno gdr_register(3) names for it (ENOMEM, ENODEV, EPERM),
 * EIO only for the rest. The record: nothing registered, nothing tried,
 * the buffer not classified; the message names the call and the result.
 */
static void pointer_query_errnos(void)
{
	static const struct {
		CUresult r;
		int err;
		const char *name;
	} rows[] = {
		{ CUDA_ERROR_OUT_OF_MEMORY, ENOMEM,
		  "CUDA_ERROR_OUT_OF_MEMORY" },
		{ CUDA_ERROR_NO_DEVICE, ENODEV, "CUDA_ERROR_NO_DEVICE" },
		{ CUDA_ERROR_NOT_PERMITTED, EPERM, "CUDA error 800" },
		{ CUDA_ERROR_NOT_SUPPORTED, EOPNOTSUPP,
		  "CUDA_ERROR_NOT_SUPPORTED" },
		{ CUDA_ERROR_INVALID_CONTEXT, EINVAL,
		  "CUDA_ERROR_INVALID_CONTEXT" },
		{ CUDA_ERROR_INVALID_DEVICE, EINVAL,
		  "CUDA_ERROR_INVALID_DEVICE" },
		{ CUDA_ERROR_UNKNOWN, EIO, "CUDA_ERROR_UNKNOWN" },
		{ (CUresult)12345, EIO, "CUDA error 12345" },
		/* host memory, registered */
		{ CUDA_ERROR_NOT_INITIALIZED, 0, NULL },
		{ CUDA_ERROR_INVALID_VALUE, 0, NULL },
	};
	struct gdr_reg_info info;
	char scope[96], want[96];
	struct ibv_mr *mr;
	unsigned int i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		snprintf(scope, sizeof(scope),
			 "cuPointerGetAttributes answers %d", (int)rows[i].r);
		check_scope = scope;
		setup(OP_DMABUF);
		fake_cu.attrs_result = rows[i].r;
		memset(&info, 0xa5, sizeof(info));
		errno = 0;
		mr = gdr_register_ex(&fake_pd, host_buf, 4096, NULL, &info,
				     sizeof(info));
		fake_cu.attrs_result = CUDA_SUCCESS;
		CHECK_INT(info.comp_mask,
			  GDR_REG_INFO_BASIC | GDR_REG_INFO_EXPORT);
		CHECK_INT(info.export_index, -1);
		CHECK_INT(info.device, -1);
		if (!rows[i].err) {
			CHECK(mr != NULL);
			CHECK_INT(info.path, GDR_PATH_HOST);
			CHECK_INT(info.mem_type, GDR_MEM_HOST);
			if (mr)
				CHECK_INT(gdr_deregister(mr), 0);
			continue;
		}
		CHECK(mr == NULL);
		CHECK_INT(errno, rows[i].err);
		CHECK_INT(info.path, GDR_PATH_NONE);
		CHECK_INT(info.mem_type, GDR_MEM_UNKNOWN);
		CHECK_INT(info.num_attempts, 0);
		snprintf(want, sizeof(want),
			 "cuPointerGetAttributes(%p) failed "
			 "with %s; ",
			 (void *)host_buf, rows[i].name);
		CHECK_HAS(gdr_last_error(), want);
		CHECK_INT(fake_ibv.reg_calls + fake_ibv.dmabuf_calls, 0);
	}
}

int main(int argc, char **argv)
{
	int alloc = argc > 1 && !strcmp(argv[1], "alloc");
	int op;

	if (fixture_make(&fx))
		return 1;
#ifndef HEAP_CHECKS
	if (alloc) {
		printf("SKIP: allocation faults need the plain glibc allocator "
		       "(this is a sanitizer build)\n");
		return 77;
	}
#endif
	for (op = 0; op < OP_COUNT; op++)
		sweep((enum op)op, alloc);
	release_failure_logged();
	pointer_query_errnos();
#ifdef HEAP_CHECKS
	cache_mr_table_out_of_memory();
#else
	printf("SKIP: cache: the MR table out of memory: allocation faults "
	       "need the plain glibc allocator (this is a sanitizer build)\n");
#endif
	fixture_remove(&fx);
	gdr_seam_install(NULL);
	return check_summary(alloc ? "faults+alloc" : "faults");
}
