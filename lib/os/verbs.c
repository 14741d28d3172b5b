/* SPDX-License-Identifier: MIT */
/*
 * The verbs table. libibverbs is linked, but the entry points newer than
 * the oldest supported rdma-core (26) are looked up at run time, so that the
 * library still loads there: ibv_reg_dmabuf_mr (rdma-core 34, IBVERBS_1.12)
 * ibv_get_device_index (rdma-core 32, IBVERBS_1.9) and
 * ibv_is_fork_initialized (rdma-core 35, IBVERBS_1.13). The mlx5 direct
 * verbs come from libmlx5.so.1, opened only when asked (gdr_mlx5_load).
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "os.h"

typedef struct ibv_mr *(*reg_dmabuf_fn)(struct ibv_pd *, uint64_t, size_t,
					uint64_t, int, int);
typedef int (*device_index_fn)(struct ibv_device *);
typedef int (*fork_status_fn)(void);

static int real_query_port(struct ibv_context *ctx, uint8_t port,
			   struct ibv_port_attr *attr)
{
	/* ibv_query_port is an inline wrapper in verbs.h. */
	return ibv_query_port(ctx, port, attr);
}

/*
 * libibverbs' own definition of @name at @version, looked up in
 * libibverbs.so.1 itself: an interposer of the verbs (libgpudirect-preload,
 * or any LD_PRELOAD library) is never the one the library calls, so that
 * its own registrations cannot come back into it. NULL where this
 * libibverbs lacks it.
 */
static void *versioned(const char *name, const char *version)
{
	void *lib = dlopen("libibverbs.so.1", RTLD_LAZY | RTLD_NOLOAD);
	void *sym = NULL;

	if (lib) {
		sym = dlvsym(lib, name, version);
		dlclose(lib); /* the reference NOLOAD took; it stays loaded */
	}
	return sym;
}

void gdr_verbs_real(struct gdr_verbs_ops *ops)
{
	void *sym;

	sym = versioned("ibv_reg_mr_iova2", "IBVERBS_1.8");
	ops->reg_mr_iova2 =
		sym ? (struct ibv_mr * (*)(struct ibv_pd *, void *, size_t,
					   uint64_t, unsigned int)) sym
		    : ibv_reg_mr_iova2;
	ops->reg_dmabuf_mr =
		(reg_dmabuf_fn)versioned("ibv_reg_dmabuf_mr", "IBVERBS_1.12");
	sym = versioned("ibv_dereg_mr", "IBVERBS_1.1");
	ops->dereg_mr = sym ? (int (*)(struct ibv_mr *))sym : ibv_dereg_mr;
	ops->alloc_pd = ibv_alloc_pd;
	ops->dealloc_pd = ibv_dealloc_pd;
	ops->query_port = real_query_port;
	ops->device_name = ibv_get_device_name;
	ops->device_index = (device_index_fn)versioned("ibv_get_device_index",
						       "IBVERBS_1.9");
	ops->query_device = ibv_query_device;
	ops->is_fork_initialized = (fork_status_fn)versioned(
		"ibv_is_fork_initialized", "IBVERBS_1.13");
}

/*
 * libmlx5.so.1 is libibverbs' mlx5 provider: where an mlx5 device is open
 * it is loaded already, and where the library is missing no mlx5 device
 * can be. mlx5dv_is_supported is old; the Data Direct pair is MLX5_1.25
 * (rdma-core v54).
 */
const char gdr_mlx5_too_old[] = "libmlx5.so.1 lacks the Data Direct calls "
				"of MLX5_1.25 (rdma-core older than v54)";
const char gdr_mlx5_absent[] = "libmlx5.so.1 is not installed";

int gdr_mlx5_load(struct gdr_mlx5_ops *ops, char *why, size_t n)
{
	void *lib;

	memset(ops, 0, sizeof(*ops));
	lib = dlopen("libmlx5.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		gdr_fmt(why, n, "%s", gdr_mlx5_absent);
		return ENOENT;
	}
	*(void **)&ops->is_supported = dlsym(lib, "mlx5dv_is_supported");
	*(void **)&ops->data_direct_path =
		dlvsym(lib, "mlx5dv_get_data_direct_sysfs_path", "MLX5_1.25");
	*(void **)&ops->reg_dmabuf_mr =
		dlvsym(lib, "mlx5dv_reg_dmabuf_mr", "MLX5_1.25");
	if (ops->data_direct_path && ops->reg_dmabuf_mr)
		return 0; /* the library stays loaded, as libibverbs keeps it */
	gdr_fmt(why, n, "%s", gdr_mlx5_too_old);
	/* mlx5dv_is_supported stays usable: it tells mlx5 devices apart. */
	ops->data_direct_path = NULL;
	ops->reg_dmabuf_mr = NULL;
	return ENOSYS;
}

/* The file name behind the library holding @sym ("libibverbs.so.1.14.44.0"
 * once the links are followed), or "". */
static void file_of(void *sym, char *out, size_t n)
{
	char real[PATH_MAX];
	const char *base;
	Dl_info info;

	if (n)
		out[0] = '\0';
	if (!sym || !dladdr(sym, &info) || !info.dli_fname ||
	    !realpath(info.dli_fname, real))
		return;
	base = strrchr(real, '/');
	gdr_fmt(out, n, "%s", base ? base + 1 : real);
}

int gdr_verbs_files(char *ibv, size_t n1, char *mlx5, size_t n2)
{
	void *lib;

	file_of((void *)ibv_get_device_list, ibv, n1);
	if (n2)
		mlx5[0] = '\0';
	/* Only a libmlx5 that is loaded already: an mlx5 device is open. */
	lib = dlopen("libmlx5.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (lib) {
		file_of(dlsym(lib, "mlx5dv_is_supported"), mlx5, n2);
		dlclose(lib);
	}
	return ibv[0] ? 0 : ENOENT;
}
