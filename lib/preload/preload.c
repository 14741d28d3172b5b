/* SPDX-License-Identifier: MIT */
/*
 * libgpudirect-preload.so: GPUDirect RDMA for programs nobody will change.
 * Loaded with LD_PRELOAD (gdr-run), it interposes libibverbs' registration
 * calls at the versions programs bind to. Host memory, and anything CUDA
 * does not call device memory, goes to libibverbs untouched; device memory
 * goes through the library's walk (Data Direct, DMA-BUF, nvidia-peermem)
 * with the caller's access flags and iova. Where no path takes it, the
 * program gets what libibverbs itself answers, and stderr the library's
 * reason, once per cause.
 *
 * The walk is libgpudirect.so.1's (gdr_private_reg_device, the private
 * interface of this source tree); the library's own verbs calls reach
 * libibverbs' definitions by libibverbs' handle (lib/os/verbs.c), never
 * these.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "gpudirect-private.h"
#include "reg-mr-ex.h"

#define PRELOAD_EXPORT __attribute__((visibility("default")))

/* libibverbs' own definitions, found after this object (RTLD_NEXT). */
struct real {
	struct ibv_mr *(*reg_mr)(struct ibv_pd *, void *, size_t, int);
	struct ibv_mr *(*reg_mr_iova)(struct ibv_pd *, void *, size_t, uint64_t,
				      int);
	struct ibv_mr *(*reg_mr_iova2)(struct ibv_pd *, void *, size_t,
				       uint64_t, unsigned int);
	int (*rereg_mr)(struct ibv_mr *, int, struct ibv_pd *, void *, size_t,
			int);
	int (*dereg_mr)(struct ibv_mr *);
	/* IBVERBS_1.15 (rdma-core 59): NULL in an older libibverbs */
	struct ibv_mr *(*reg_mr_ex)(struct ibv_pd *, struct mr_init_attr *);
	/* the IBVERBS_1.0 ABI (libibverbs 1.0's compat objects) */
	void *(*reg_mr_1_0)(void *, void *, size_t, int);
	int (*rereg_mr_1_0)(void *, int, void *, void *, size_t, int);
	int (*dereg_mr_1_0)(void *);
};

static struct real real;
static pthread_once_t real_once = PTHREAD_ONCE_INIT;
/* GPUDIRECT_PRELOAD=0: interpose nothing. GPUDIRECT_DEBUG: every reason. */
static bool off, debug;
/* libcuda.so.1 was seen loaded: from then on, classify (it stays). */
static int cuda_seen;
/*
 * In one of the preload's registration calls on this thread. libibverbs'
 * own ibv_reg_mr and ibv_reg_mr_iova call ibv_reg_mr_iova2 through its PLT
 * (rdma-core 29-32 had ibv_reg_mr_iova2 call ibv_reg_mr_iova), which lands
 * here again: that call is libibverbs' doing, passed straight through, so
 * that one registration is classified and said once. The library's calls
 * are covered too (it reaches libibverbs by handle: belt and braces).
 * Initial-exec: the preload is loaded with the program, so its TLS is
 * static and read without a __tls_get_addr call (a dlopen of it later
 * still finds room in glibc's surplus).
 */
static __thread int inside __attribute__((tls_model("initial-exec")));

static void *next(const char *name, const char *version)
{
	void *sym = dlvsym(RTLD_NEXT, name, version);

	return sym ? sym : dlsym(RTLD_NEXT, name);
}

static void find_real(void)
{
	int o = 0, d = 0;

	*(void **)&real.reg_mr = next("ibv_reg_mr", "IBVERBS_1.1");
	*(void **)&real.reg_mr_iova = next("ibv_reg_mr_iova", "IBVERBS_1.7");
	*(void **)&real.reg_mr_iova2 = next("ibv_reg_mr_iova2", "IBVERBS_1.8");
	*(void **)&real.rereg_mr = next("ibv_rereg_mr", "IBVERBS_1.1");
	*(void **)&real.dereg_mr = next("ibv_dereg_mr", "IBVERBS_1.1");
	/* No unversioned fallback: only libibverbs' own 1.15 definition. */
	*(void **)&real.reg_mr_ex =
		dlvsym(RTLD_NEXT, "ibv_reg_mr_ex", "IBVERBS_1.15");
	*(void **)&real.reg_mr_1_0 =
		dlvsym(RTLD_NEXT, "ibv_reg_mr", "IBVERBS_1.0");
	*(void **)&real.rereg_mr_1_0 =
		dlvsym(RTLD_NEXT, "ibv_rereg_mr", "IBVERBS_1.0");
	*(void **)&real.dereg_mr_1_0 =
		dlvsym(RTLD_NEXT, "ibv_dereg_mr", "IBVERBS_1.0");
	gdr_private_preload_env(&o, &d);
	off = o;
	debug = d;
}

static const struct real *reals(void)
{
	pthread_once(&real_once, find_real);
	return &real;
}

/* --- saying why, once per cause ------------------------------------------ */
#define SAID_MAX 64
/* The longest reason the library gives the preload. A cause is kept
 * whole: the library's reasons share long beginnings ("cannot register
 * [..] (cuda-device on GPU ..) with ..: dmabuf failed: ..") and part
 * only where the cause is named, so a cut key would take two causes for
 * one and leave the second unsaid. */
#define WHY_MAX 1024
static pthread_mutex_t said_lock = PTHREAD_MUTEX_INITIALIZER;
static char said[SAID_MAX][WHY_MAX];
static unsigned int num_said;

/*
 * @why without its numbers: decimal digits (lengths, fds, GPU ordinals)
 * and whole 0x tokens (addresses, whose hex letters would otherwise make
 * every buffer a cause of its own). What is left is the cause.
 */
static void cause_of(const char *why, char *key, size_t n)
{
	size_t k = 0;

	while (*why && k + 1 < n) {
		if (why[0] == '0' && why[1] == 'x') {
			for (why += 2; isxdigit((unsigned char)*why); why++)
				;
			continue;
		}
		if (!isdigit((unsigned char)*why))
			key[k++] = *why;
		why++;
	}
	key[k] = '\0';
}

static void say(const char *call, const char *why)
{
	char key[sizeof(said[0])];
	unsigned int i;
	bool fresh = true;

	cause_of(why, key, sizeof(key));
	pthread_mutex_lock(&said_lock);
	for (i = 0; i < num_said && fresh; i++)
		fresh = strcmp(said[i], key) != 0;
	if (fresh && num_said < SAID_MAX)
		memcpy(said[num_said++], key, sizeof(key));
	pthread_mutex_unlock(&said_lock);
	if (fresh || debug)
		fprintf(stderr, "libgpudirect-preload: %s: %s\n", call, why);
}

/* --- the MRs this made through a dma-buf (for ibv_rereg_mr) -------------- */
#define MADE_MAX 4096
static pthread_mutex_t made_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ibv_mr *made[MADE_MAX];
static unsigned int num_made;

static void made_add(struct ibv_mr *mr)
{
	pthread_mutex_lock(&made_lock);
	/* Past the table, a translation rereg of the MR goes to libibverbs,
	 * which refuses it for a dma-buf MR with its own errno. */
	if (num_made < MADE_MAX) {
		made[num_made] = mr;
		__atomic_store_n(&num_made, num_made + 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&made_lock);
}

/* Whether @mr is one of them; forgotten too when @drop. */
static bool made_has(struct ibv_mr *mr, bool drop)
{
	unsigned int i;
	bool found = false;

	/* A program that never had one (host memory only) takes no lock. */
	if (!__atomic_load_n(&num_made, __ATOMIC_RELAXED))
		return false;

	pthread_mutex_lock(&made_lock);
	for (i = 0; i < num_made && !found; i++)
		if (made[i] == mr) {
			found = true;
			if (drop) {
				made[i] = made[num_made - 1];
				__atomic_store_n(&num_made, num_made - 1,
						 __ATOMIC_RELAXED);
			}
		}
	pthread_mutex_unlock(&made_lock);
	return found;
}

/* --- the decision ------------------------------------------------------- */
/* The loader's count of objects loaded, when libcuda.so.1 was last seen
 * absent: while it stays, nothing new was loaded, CUDA included. */
static unsigned long long absent_at = ~0ULL;

static int first_object(struct dl_phdr_info *info, size_t size, void *adds)
{
	(void)size;
	*(unsigned long long *)adds = info->dlpi_adds;
	return 1;
}

/* Stops the walk (1) at an object whose file is libcuda.so.*. */
static int is_cuda(struct dl_phdr_info *info, size_t size, void *unused)
{
	const char *name = info->dlpi_name, *base;

	(void)size;
	(void)unused;
	if (!name)
		return 0;
	base = strrchr(name, '/');
	base = base ? base + 1 : name;
	return strncmp(base, "libcuda.so", 10) == 0;
}

/*
 * Whether the process has loaded the CUDA driver (it then stays): the
 * loader's count of objects ever loaded first, which costs a lock and no
 * search; only when it moved, a walk of the loaded objects' names. Never
 * dlopen: nothing is loaded, and no loader path search runs.
 */
static bool cuda_now(void)
{
	unsigned long long adds = 0;

	dl_iterate_phdr(first_object, &adds);
	if (adds && adds == __atomic_load_n(&absent_at, __ATOMIC_RELAXED))
		return false;
	if (!dl_iterate_phdr(is_cuda, NULL)) {
		__atomic_store_n(&absent_at, adds, __ATOMIC_RELAXED);
		return false;
	}
	__atomic_store_n(&cuda_seen, 1, __ATOMIC_RELAXED);
	return true;
}

/*
 * Register device memory through the library; NULL when it is not device
 * memory (a process that never loaded libcuda.so.1 has none) or no path
 * took it (the reason said),
 * for the caller to ask libibverbs as the program would have.
 */
static struct ibv_mr *through_library(const char *call, struct ibv_pd *pd,
				      void *addr, size_t len, uint64_t iova,
				      int access)
{
	struct ibv_mr *mr = NULL;
	const char *host = "not CUDA device memory";
	char why[WHY_MAX];
	int saved = errno, err;

	if (off || !pd || !addr || !len)
		return NULL;
	if (!__atomic_load_n(&cuda_seen, __ATOMIC_RELAXED) && !cuda_now()) {
		host = "libcuda.so.1 is not loaded, so no device memory";
		err = ENXIO;
		goto out;
	}
	err = gdr_private_reg_device(pd, addr, len, iova, access, &mr, why,
				     sizeof(why));
out:
	if (err == ENXIO && debug)
		fprintf(stderr,
			"libgpudirect-preload: %s(%p, %zu): %s: passed to "
			"libibverbs\n",
			call, addr, len, host);
	if (err && err != ENXIO)
		say(call, why);
	if (!err && debug)
		fprintf(stderr,
			"libgpudirect-preload: %s(%p, %zu): registered by "
			"libgpudirect\n",
			call, addr, len);
	if (!err)
		made_add(mr);
	errno = saved;
	return err ? NULL : mr;
}

/* --- the interposed calls ----------------------------------------------- */
struct ibv_mr *gdr_preload_reg_mr(struct ibv_pd *pd, void *addr, size_t len,
				  int access);
struct ibv_mr *gdr_preload_reg_mr_iova(struct ibv_pd *pd, void *addr,
				       size_t len, uint64_t iova, int access);
struct ibv_mr *gdr_preload_reg_mr_iova2(struct ibv_pd *pd, void *addr,
					size_t len, uint64_t iova,
					unsigned int access);
struct ibv_mr *gdr_preload_reg_mr_ex(struct ibv_pd *pd,
				     struct mr_init_attr *attr);
int gdr_preload_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd,
			 void *addr, size_t len, int access);
int gdr_preload_dereg_mr(struct ibv_mr *mr);
void *gdr_preload_reg_mr_1_0(void *pd, void *addr, size_t len, int access);
int gdr_preload_rereg_mr_1_0(void *mr, int flags, void *pd, void *addr,
			     size_t len, int access);
int gdr_preload_dereg_mr_1_0(void *mr);

/* The unit test (GDR_PRELOAD_UNIT) calls these by their own names. */
#ifndef GDR_PRELOAD_UNIT
__asm__(".symver gdr_preload_reg_mr, ibv_reg_mr@@IBVERBS_1.1");
__asm__(".symver gdr_preload_reg_mr_1_0, ibv_reg_mr@IBVERBS_1.0");
__asm__(".symver gdr_preload_reg_mr_iova, ibv_reg_mr_iova@@IBVERBS_1.7");
__asm__(".symver gdr_preload_reg_mr_iova2, ibv_reg_mr_iova2@@IBVERBS_1.8");
__asm__(".symver gdr_preload_reg_mr_ex, ibv_reg_mr_ex@@IBVERBS_1.15");
__asm__(".symver gdr_preload_rereg_mr, ibv_rereg_mr@@IBVERBS_1.1");
__asm__(".symver gdr_preload_rereg_mr_1_0, ibv_rereg_mr@IBVERBS_1.0");
__asm__(".symver gdr_preload_dereg_mr, ibv_dereg_mr@@IBVERBS_1.1");
__asm__(".symver gdr_preload_dereg_mr_1_0, ibv_dereg_mr@IBVERBS_1.0");
#endif

PRELOAD_EXPORT struct ibv_mr *gdr_preload_reg_mr(struct ibv_pd *pd, void *addr,
						 size_t len, int access)
{
	const struct real *r = reals();
	struct ibv_mr *mr;

	if (inside)
		return r->reg_mr(pd, addr, len, access);
	inside = 1;
	mr = through_library("ibv_reg_mr", pd, addr, len,
			     (uint64_t)(uintptr_t)addr, access);
	if (!mr)
		mr = r->reg_mr(pd, addr, len, access);
	inside = 0;
	return mr;
}

PRELOAD_EXPORT struct ibv_mr *gdr_preload_reg_mr_iova(struct ibv_pd *pd,
						      void *addr, size_t len,
						      uint64_t iova, int access)
{
	const struct real *r = reals();
	struct ibv_mr *mr;

	if (inside)
		return r->reg_mr_iova(pd, addr, len, iova, access);
	inside = 1;
	mr = through_library("ibv_reg_mr_iova", pd, addr, len, iova, access);
	if (!mr)
		mr = r->reg_mr_iova(pd, addr, len, iova, access);
	inside = 0;
	return mr;
}

PRELOAD_EXPORT struct ibv_mr *gdr_preload_reg_mr_iova2(struct ibv_pd *pd,
						       void *addr, size_t len,
						       uint64_t iova,
						       unsigned int access)
{
	const struct real *r = reals();
	struct ibv_mr *mr;

	if (inside)
		return r->reg_mr_iova2(pd, addr, len, iova, access);
	inside = 1;
	mr = through_library("ibv_reg_mr_iova2", pd, addr, len, iova,
			     (int)access);
	if (!mr)
		mr = r->reg_mr_iova2(pd, addr, len, iova, access);
	inside = 0;
	return mr;
}

/*
 * The address form only (an address, perhaps an iova, nothing else): a
 * dma-buf fd, a DMA handle, a provider's buffer or a bit this file does not
 * know goes to libibverbs as asked.
 */
PRELOAD_EXPORT struct ibv_mr *gdr_preload_reg_mr_ex(struct ibv_pd *pd,
						    struct mr_init_attr *attr)
{
	const struct real *r = reals();
	struct ibv_mr *mr = NULL;
	bool by_addr = attr && (attr->comp_mask & MR_MASK_ADDR) &&
		       !(attr->comp_mask & ~(MR_MASK_ADDR | MR_MASK_IOVA));
	uint64_t iova = 0;
	int was = inside;

	inside = 1;
	if (by_addr) {
		iova = attr->comp_mask & MR_MASK_IOVA
			       ? attr->iova
			       : (uint64_t)(uintptr_t)attr->addr;
		if (!was)
			mr = through_library("ibv_reg_mr_ex", pd, attr->addr,
					     attr->length, iova, attr->access);
	}
	/*
	 * Else libibverbs'. One before rdma-core 59 has no ibv_reg_mr_ex
	 * (this symbol is then the preload's alone, and a program may have
	 * found it with dlsym): the address form is ibv_reg_mr_iova2's;
	 * nothing else has a meaning.
	 */
	if (!mr && r->reg_mr_ex)
		mr = r->reg_mr_ex(pd, attr);
	else if (!mr && by_addr && r->reg_mr_iova2)
		mr = r->reg_mr_iova2(pd, attr->addr, attr->length, iova,
				     (unsigned int)attr->access);
	else if (!mr)
		errno = EOPNOTSUPP;
	inside = was;
	return mr;
}

PRELOAD_EXPORT int gdr_preload_rereg_mr(struct ibv_mr *mr, int flags,
					struct ibv_pd *pd, void *addr,
					size_t len, int access)
{
	const struct real *r = reals();

	/*
	 * A DMA-BUF MR has no address translation to change: a new range
	 * is a new export. Refused, as libibverbs refuses bad input, with
	 * the reason; a change of PD or access goes to libibverbs.
	 */
	if (!off && (flags & IBV_REREG_MR_CHANGE_TRANSLATION) &&
	    made_has(mr, false)) {
		say("ibv_rereg_mr",
		    "IBV_REREG_MR_CHANGE_TRANSLATION on an MR of GPU memory "
		    "that libgpudirect-preload registered through a dma-buf "
		    "is not supported: ibv_dereg_mr it and ibv_reg_mr the new "
		    "range");
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	return r->rereg_mr(mr, flags, pd, addr, len, access);
}

PRELOAD_EXPORT int gdr_preload_dereg_mr(struct ibv_mr *mr)
{
	const struct real *r = reals();
	int err;

	err = r->dereg_mr(mr);
	/* Forgotten only once libibverbs let it go (it may refuse). */
	if (!err && !off)
		made_has(mr, true);
	return err;
}

/* The 1.0 ABI's objects are libibverbs' compat wrappers: passed on. */
PRELOAD_EXPORT void *gdr_preload_reg_mr_1_0(void *pd, void *addr, size_t len,
					    int access)
{
	const struct real *r = reals();

	if (!r->reg_mr_1_0) {
		errno = ENOSYS;
		return NULL;
	}
	return r->reg_mr_1_0(pd, addr, len, access);
}

PRELOAD_EXPORT int gdr_preload_rereg_mr_1_0(void *mr, int flags, void *pd,
					    void *addr, size_t len, int access)
{
	const struct real *r = reals();

	return r->rereg_mr_1_0
		       ? r->rereg_mr_1_0(mr, flags, pd, addr, len, access)
		       : ENOSYS;
}

PRELOAD_EXPORT int gdr_preload_dereg_mr_1_0(void *mr)
{
	const struct real *r = reals();

	return r->dereg_mr_1_0 ? r->dereg_mr_1_0(mr) : ENOSYS;
}
