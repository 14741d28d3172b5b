/* SPDX-License-Identifier: MIT */
/*
 * What test-preload-internals.c puts in place of the preload's neighbours:
 * the library's private calls (gdr_private_reg_device answers lib_err with
 * the reason lib_why, or an MR of lib_mrs) and libibverbs' definitions
 * (the real_* table's entries, counting their calls; the nesting ones call
 * the preload's own entry as libibverbs' PLT does). Included once, after
 * preload.c.
 */
#ifndef GDR_FAKES_PRELOAD_STUBS_H
#define GDR_FAKES_PRELOAD_STUBS_H

static int lib_err; /* what gdr_private_reg_device answers */
static unsigned int lib_calls;
static struct ibv_mr lib_mrs[4200];
static unsigned int lib_next;
static uint64_t lib_iova;
static int lib_access;
static const char *lib_why = "a test's reason";

int gdr_private_reg_device(struct ibv_pd *pd, void *addr, size_t len,
			   uint64_t iova, int access, struct ibv_mr **mr,
			   char *why, size_t n)
{
	(void)pd;
	lib_calls++;
	lib_iova = iova;
	lib_access = access;
	*mr = NULL;
	if (lib_err) {
		snprintf(why, n, "cannot register [%p, +%zu): %s", addr, len,
			 lib_why);
		return lib_err;
	}
	*mr = &lib_mrs[lib_next++ % 4200];
	(*mr)->addr = addr;
	(*mr)->length = len;
	return 0;
}

void gdr_private_preload_env(int *o, int *d)
{
	*o = 0;
	*d = 0;
}

static int real_calls, real_err;
static struct mr_init_attr *real_attr;

static int stub_rereg(struct ibv_mr *mr, int flags, struct ibv_pd *pd,
		      void *addr, size_t len, int access)
{
	(void)mr, (void)flags, (void)pd, (void)addr, (void)len, (void)access;
	real_calls++;
	return real_err;
}

static int stub_dereg(struct ibv_mr *mr)
{
	(void)mr;
	real_calls++;
	return real_err;
}

static struct ibv_mr stub_mr;
static uint64_t iova2_iova;
/* What the last leaf registration (stub_reg_mr, stub_iova, stub_iova2)
 * was given. */
static void *real_addr;
static size_t real_len;
static int real_access;

static struct ibv_mr *leaf(void *addr, size_t len, int access)
{
	real_calls++;
	real_addr = addr;
	real_len = len;
	real_access = access;
	return &stub_mr;
}

static struct ibv_mr *stub_iova2(struct ibv_pd *pd, void *addr, size_t len,
				 uint64_t iova, unsigned int access)
{
	(void)pd;
	iova2_iova = iova;
	return leaf(addr, len, (int)access);
}

static struct ibv_mr *stub_reg_mr(struct ibv_pd *pd, void *addr, size_t len,
				  int access)
{
	(void)pd;
	return leaf(addr, len, access);
}

static struct ibv_mr *stub_iova(struct ibv_pd *pd, void *addr, size_t len,
				uint64_t iova, int access)
{
	(void)pd;
	iova2_iova = iova;
	return leaf(addr, len, access);
}

/* libibverbs' ibv_reg_mr@IBVERBS_1.1 and ibv_reg_mr_iova (rdma-core 33 and
 * later): ibv_reg_mr_iova2 through the PLT, which is the preload's. */
static struct ibv_mr *stub_reg_mr_nests(struct ibv_pd *pd, void *addr,
					size_t len, int access)
{
	real_calls++;
	return gdr_preload_reg_mr_iova2(pd, addr, len, (uintptr_t)addr,
					(unsigned int)access);
}

static struct ibv_mr *stub_iova_nests(struct ibv_pd *pd, void *addr, size_t len,
				      uint64_t iova, int access)
{
	real_calls++;
	return gdr_preload_reg_mr_iova2(pd, addr, len, iova,
					(unsigned int)access);
}

/* A libibverbs whose ibv_reg_mr_ex of an address is its ibv_reg_mr. */
static struct ibv_mr *stub_reg_mr_ex_nests(struct ibv_pd *pd,
					   struct mr_init_attr *attr)
{
	real_calls++;
	return gdr_preload_reg_mr(pd, attr->addr, attr->length, attr->access);
}

/* rdma-core 29-32 nested the other way. */
static struct ibv_mr *stub_iova2_nests(struct ibv_pd *pd, void *addr,
				       size_t len, uint64_t iova,
				       unsigned int access)
{
	real_calls++;
	return gdr_preload_reg_mr_iova(pd, addr, len, iova, (int)access);
}

static struct ibv_mr *stub_reg_mr_ex(struct ibv_pd *pd,
				     struct mr_init_attr *attr)
{
	(void)pd;
	real_calls++;
	real_attr = attr;
	errno = EFAULT;
	return real_err ? NULL : &stub_mr;
}

#endif
