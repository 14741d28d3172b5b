/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "fakes.h"

int check_passed, check_failed;
const char *check_scope;

int check_summary(const char *what)
{
	printf("%s: %d passed, %d failed\n", what, check_passed, check_failed);
	return check_failed ? 1 : 0;
}

/* Recording by concurrent threads (the threads test, TSan). */
static pthread_mutex_t rec = PTHREAD_MUTEX_INITIALIZER;
#define COUNT(x) __atomic_add_fetch(&(x), 1, __ATOMIC_RELAXED)

long fault_at, fault_calls;
int fault_alloc;
const char *fault_where;

int fault_inject(const char *name)
{
	if (!fault_at)
		return 0;
	if (++fault_calls != fault_at)
		return 0;
	fault_where = name;
	return 1;
}

#define FAULT_CU(name)                                                         \
	do {                                                                   \
		if (fault_inject(name))                                        \
			return CUDA_ERROR_UNKNOWN;                             \
	} while (0)
#define FAULT_IBV(name)                                                        \
	do {                                                                   \
		if (fault_inject(name)) {                                      \
			errno = EIO;                                           \
			return NULL;                                           \
		}                                                              \
	} while (0)

struct fake_cuda fake_cu;
struct fake_verbs fake_ibv;
struct ibv_device fake_device;
struct ibv_context fake_context;
struct ibv_pd fake_pd;

#define CTX_OF(dev) ((CUcontext)(uintptr_t)(0x1000 + (dev)))
#define DEV_BASE 0x7f0000000000ull
#define DEV_STRIDE 0x10000000ull

/* A child forked while another thread records must not inherit rec held. */
static void rec_lock(void)
{
	pthread_mutex_lock(&rec);
}

static void rec_unlock(void)
{
	pthread_mutex_unlock(&rec);
}

static void fakes_atfork(void)
{
	pthread_atfork(rec_lock, rec_unlock, rec_unlock);
}

void fakes_reset(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	int i;

	pthread_once(&once, fakes_atfork);

	memset(&fake_cu, 0, sizeof(fake_cu));
	fake_cu.driver_version = 13000;
	fake_cu.num_devices = 1;
	for (i = 0; i < FAKE_MAX_DEVS; i++)
		fake_cu.dmabuf_attr[i] = 1;
	memset(&fake_ibv, 0, sizeof(fake_ibv));
	fake_ibv.probe_errno = EBADF;
	memset(&fake_device, 0, sizeof(fake_device));
	strcpy(fake_device.name, "fake_mlx5_0");
	memset(&fake_context, 0, sizeof(fake_context));
	fake_context.device = &fake_device;
	memset(&fake_pd, 0, sizeof(fake_pd));
	fake_pd.context = &fake_context;
}

struct fake_alloc *fake_add_alloc(uintptr_t start, size_t size, int device,
				  unsigned int type)
{
	struct fake_alloc *a = &fake_cu.allocs[fake_cu.num_allocs++];

	memset(a, 0, sizeof(*a));
	a->start = start;
	a->size = size;
	a->device = device;
	a->type = type;
	a->buffer_id = 100 + (unsigned long long)fake_cu.num_allocs;
	return a;
}

void *fake_alloc_device(int device, size_t size)
{
	uintptr_t start = DEV_BASE + (uintptr_t)fake_cu.num_allocs * DEV_STRIDE;

	fake_add_alloc(start, size, device, CU_MEMORYTYPE_DEVICE);
	return (void *)start;
}

static const struct fake_alloc *find(uintptr_t p)
{
	int i;

	for (i = 0; i < fake_cu.num_allocs; i++)
		if (p >= fake_cu.allocs[i].start &&
		    p - fake_cu.allocs[i].start < fake_cu.allocs[i].size)
			return &fake_cu.allocs[i];
	return NULL;
}

/* --- the fake CUDA driver ------------------------------------------------ */
static CUresult f_init(unsigned int flags)
{
	FAULT_CU("cuInit");
	if (fake_cu.init_delay_ms) {
		struct timespec ts = { fake_cu.init_delay_ms / 1000,
				       fake_cu.init_delay_ms % 1000 * 1000000L };

		nanosleep(&ts, NULL);
	}
	return fake_cu.init_result;
}
static CUresult f_version(int *v)
{
	FAULT_CU("cuDriverGetVersion");
	*v = fake_cu.driver_version;
	return CUDA_SUCCESS;
}
static CUresult f_errname(CUresult r, const char **name)
{
	switch (r) {
	case CUDA_ERROR_INVALID_VALUE: *name = "CUDA_ERROR_INVALID_VALUE"; break;
	case CUDA_ERROR_NO_DEVICE: *name = "CUDA_ERROR_NO_DEVICE"; break;
	case CUDA_ERROR_NOT_SUPPORTED: *name = "CUDA_ERROR_NOT_SUPPORTED"; break;
	case CUDA_ERROR_INVALID_CONTEXT: *name = "CUDA_ERROR_INVALID_CONTEXT"; break;
	case CUDA_ERROR_OUT_OF_MEMORY: *name = "CUDA_ERROR_OUT_OF_MEMORY"; break;
	default: return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}
static CUresult f_count(int *n)
{
	FAULT_CU("cuDeviceGetCount");
	*n = fake_cu.num_devices;
	return CUDA_SUCCESS;
}
static CUresult f_dev_get(CUdevice *d, int ordinal)
{
	FAULT_CU("cuDeviceGet");
	if (ordinal < 0 || ordinal >= fake_cu.num_devices)
		return CUDA_ERROR_INVALID_DEVICE;
	*d = ordinal;
	return CUDA_SUCCESS;
}
static CUresult f_attr(int *v, CUdevice_attribute a, CUdevice d)
{
	FAULT_CU("cuDeviceGetAttribute");
	switch (a) {
	case CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED:
		if (fake_cu.driver_version < 11070)
			return CUDA_ERROR_INVALID_VALUE;
		*v = fake_cu.dmabuf_attr[d];
		return CUDA_SUCCESS;
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED:
		*v = 1;
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}
static CUresult f_name(char *name, int len, CUdevice d)
{
	FAULT_CU("cuDeviceGetName");
	snprintf(name, (size_t)len, "Fake H200 %d", d);
	return CUDA_SUCCESS;
}
static CUresult f_busid(char *id, int len, CUdevice d)
{
	FAULT_CU("cuDeviceGetPCIBusId");
	snprintf(id, (size_t)len, "0000:%02x:00.0", 6 + d);
	return CUDA_SUCCESS;
}
static CUresult f_ptr_attrs(unsigned int n, CUpointer_attribute *attrs,
			    void **data, CUdeviceptr ptr)
{
	FAULT_CU("cuPointerGetAttributes");
	const struct fake_alloc *a = find((uintptr_t)ptr);
	unsigned int i;

	if (fake_cu.attrs_result)
		return fake_cu.attrs_result;
	for (i = 0; i < n; i++) {
		switch (attrs[i]) {
		case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
			*(unsigned int *)data[i] = a ? a->type : 0;
			break;
		case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
			*(int *)data[i] = a ? a->device : -2;
			break;
		case CU_POINTER_ATTRIBUTE_IS_MANAGED:
			*(unsigned int *)data[i] = a ? (unsigned)a->managed : 0;
			break;
		case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
			*(unsigned int *)data[i] = a ? !a->not_rdma : 0;
			break;
		case CU_POINTER_ATTRIBUTE_CONTEXT:
			*(CUcontext *)data[i] =
				a && !a->vmm ? CTX_OF(a->device) : NULL;
			break;
		case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
			*(CUdeviceptr *)data[i] = a ? a->start : 0;
			break;
		case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
			*(size_t *)data[i] = a ? a->size : 0;
			break;
		case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
			*(void **)data[i] = a && a->pool ? (void *)0x5 : NULL;
			break;
		default:
			return CUDA_ERROR_INVALID_VALUE;
		}
	}
	return CUDA_SUCCESS;
}
static CUresult f_set_attr(const void *v, CUpointer_attribute a,
			   CUdeviceptr p)
{
	FAULT_CU("cuPointerSetAttribute");
	COUNT(fake_cu.set_attr_calls);
	return fake_cu.set_attr_result;
}
static CUresult f_retain(CUcontext *ctx, CUdevice d)
{
	FAULT_CU("cuDevicePrimaryCtxRetain");
	*ctx = CTX_OF(d);
	return CUDA_SUCCESS;
}

__thread CUcontext fake_current;
static __thread CUcontext ctx_stack[8];
static __thread int ctx_depth;

static CUresult f_get_current(CUcontext *ctx)
{
	FAULT_CU("cuCtxGetCurrent");
	*ctx = fake_current;
	return CUDA_SUCCESS;
}
static CUresult f_push(CUcontext ctx)
{
	FAULT_CU("cuCtxPushCurrent");
	COUNT(fake_cu.push_calls);
	if (ctx_depth == 8)
		return CUDA_ERROR_INVALID_VALUE;
	ctx_stack[ctx_depth++] = fake_current;
	fake_current = ctx;
	return CUDA_SUCCESS;
}
static CUresult f_pop(CUcontext *ctx)
{
	FAULT_CU("cuCtxPopCurrent");
	COUNT(fake_cu.pop_calls);
	if (!ctx_depth)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (ctx)
		*ctx = fake_current;
	fake_current = ctx_stack[--ctx_depth];
	return CUDA_SUCCESS;
}
static CUresult f_export(void *handle, CUdeviceptr p, size_t size,
			 CUmemRangeHandleType type, unsigned long long flags)
{
	FAULT_CU("cuMemGetHandleForAddressRange");
	const struct fake_alloc *a = find((uintptr_t)p);
	int fd;

	COUNT(fake_cu.exports);
	pthread_mutex_lock(&rec);
	fake_cu.ctx_at_export = fake_current;
	fake_cu.last_export_base = (uintptr_t)p;
	fake_cu.last_export_size = size;
	pthread_mutex_unlock(&rec);
	if (!fake_current)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (fake_cu.export_result)
		return fake_cu.export_result;
	/* As seen on the H200: only page-aligned spans of one allocation. */
	if (type != CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD || (p & 4095) ||
	    (size & 4095) || !a || a->type != CU_MEMORYTYPE_DEVICE ||
	    a->managed || (uintptr_t)p + size > a->start + ((a->size + 4095) & ~4095ull))
		return CUDA_ERROR_INVALID_VALUE;
	fd = memfd_create("fake-dmabuf", MFD_CLOEXEC);
	if (fd < 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*(int *)handle = fd;
	return CUDA_SUCCESS;
}

static int fake_cuda_load(struct gdr_cuda_ops *ops, char *why, size_t n)
{
	if (fault_inject("dlopen libcuda")) {
		memset(ops, 0, sizeof(*ops));
		snprintf(why, n, "libcuda.so.1 could not be loaded (injected)");
		return -1;
	}
	memset(ops, 0, sizeof(*ops));
	ctx_depth = 0;
	if (fake_cu.load_fails) {
		snprintf(why, n, "libcuda.so.1 could not be loaded (fake)");
		return -1;
	}
	ops->cuInit = f_init;
	ops->cuDriverGetVersion = f_version;
	ops->cuGetErrorName = f_errname;
	ops->cuDeviceGetCount = f_count;
	ops->cuDeviceGet = f_dev_get;
	ops->cuDeviceGetAttribute = f_attr;
	ops->cuDeviceGetName = f_name;
	ops->cuDeviceGetPCIBusId = f_busid;
	ops->cuPointerGetAttributes = f_ptr_attrs;
	ops->cuPointerSetAttribute = f_set_attr;
	ops->cuDevicePrimaryCtxRetain = f_retain;
	ops->cuCtxGetCurrent = f_get_current;
	ops->cuCtxPushCurrent = f_push;
	ops->cuCtxPopCurrent = f_pop;
	if (!fake_cu.no_export_entry && fake_cu.driver_version >= 11070)
		ops->cuMemGetHandleForAddressRange = f_export;
	return 0;
}

/* --- the fake verbs provider --------------------------------------------- */
static struct ibv_mr *new_mr(struct ibv_pd *pd, void *addr, size_t len)
{
	struct ibv_mr *mr = calloc(1, sizeof(*mr));

	if (!mr) {
		errno = ENOMEM;
		return NULL;
	}
	mr->context = pd->context;
	mr->pd = pd;
	mr->addr = addr;
	mr->length = len;
	mr->lkey = mr->rkey = 0x1234;
	COUNT(fake_ibv.live_mrs);
	return mr;
}
static struct ibv_mr *v_reg(struct ibv_pd *pd, void *addr, size_t len,
			    uint64_t iova, unsigned int access)
{
	FAULT_IBV("ibv_reg_mr_iova2");
	COUNT(fake_ibv.reg_calls);
	pthread_mutex_lock(&rec);
	fake_ibv.last_iova = iova;
	fake_ibv.last_len = len;
	fake_ibv.last_access = (int)access;
	pthread_mutex_unlock(&rec);
	if (fake_ibv.reg_errno) {
		errno = fake_ibv.reg_errno;
		return NULL;
	}
	return new_mr(pd, addr, len);
}
/* What the kernel says of a dma-buf fd: exporter name and size. */
static void read_fdinfo(int fd)
{
	char path[64], line[256];
	FILE *f;

	fake_ibv.last_exp_name[0] = '\0';
	fake_ibv.last_dmabuf_size = 0;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "exp_name: %63s", fake_ibv.last_exp_name) == 1)
			continue;
		if (strncmp(line, "size:", 5) == 0)
			fake_ibv.last_dmabuf_size = strtoull(line + 5, NULL, 10);
	}
	fclose(f);
}

static struct ibv_mr *v_reg_dmabuf(struct ibv_pd *pd, uint64_t offset,
				   size_t len, uint64_t iova, int fd,
				   int access)
{
	FAULT_IBV("ibv_reg_dmabuf_mr");
	if (fd == -1 && len == 0) {
		COUNT(fake_ibv.probes);
		errno = fake_ibv.probe_errno;
		return NULL;
	}
	COUNT(fake_ibv.dmabuf_calls);
	pthread_mutex_lock(&rec);
	fake_ibv.last_offset = offset;
	fake_ibv.last_len = len;
	fake_ibv.last_iova = iova;
	fake_ibv.last_fd = fd;
	fake_ibv.last_access = access;
	fake_ibv.last_fd_open = fcntl(fd, F_GETFD) != -1;
	if (!fake_ibv.lean)
		read_fdinfo(fd);
	pthread_mutex_unlock(&rec);
	if (fake_ibv.dmabuf_errno) {
		errno = fake_ibv.dmabuf_errno;
		return NULL;
	}
	/* libibverbs puts the dma-buf offset in addr; the library fixes it. */
	return new_mr(pd, (void *)(uintptr_t)offset, len);
}
static int v_dereg(struct ibv_mr *mr)
{
	if (fault_inject("ibv_dereg_mr"))
		return EIO;
	if (fake_ibv.dereg_errno)
		return fake_ibv.dereg_errno;
	free(mr);
	__atomic_sub_fetch(&fake_ibv.live_mrs, 1, __ATOMIC_RELAXED);
	return 0;
}
static struct ibv_pd *v_alloc_pd(struct ibv_context *ctx)
{
	FAULT_IBV("ibv_alloc_pd");
	struct ibv_pd *pd = calloc(1, sizeof(*pd));

	if (pd)
		pd->context = ctx;
	return pd;
}
static int v_dealloc_pd(struct ibv_pd *pd)
{
	if (fault_inject("ibv_dealloc_pd")) {
		free(pd);
		return EIO;
	}
	free(pd);
	return 0;
}
static int v_query_device(struct ibv_context *ctx, struct ibv_device_attr *a)
{
	memset(a, 0, sizeof(*a));
	return 0;
}
static int v_query_port(struct ibv_context *ctx, uint8_t port,
			struct ibv_port_attr *a)
{
	if (fault_inject("ibv_query_port"))
		return EIO;
	memset(a, 0, sizeof(*a));
	a->state = IBV_PORT_ACTIVE;
	a->link_layer = IBV_LINK_LAYER_ETHERNET;
	return 0;
}
static const char *v_name(struct ibv_device *d)
{
	return d ? d->name : NULL;
}

/* --- fixtures ------------------------------------------------------------- */
int fixture_make(struct fixture *f)
{
	strcpy(f->root, "/tmp/gdr-fixture-XXXXXX");
	if (!mkdtemp(f->root))
		return -1;
	snprintf(f->sys, sizeof(f->sys), "%s/sys", f->root);
	snprintf(f->proc, sizeof(f->proc), "%s/proc", f->root);
	if (mkdir(f->sys, 0755) || mkdir(f->proc, 0755))
		return -1;
	return 0;
}

int fixture_write(const char *base, const char *rel, const char *text)
{
	char path[512];
	size_t i, len;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	len = strlen(base) + 1;
	for (i = len; path[i]; i++) {
		if (path[i] == '/') {
			path[i] = '\0';
			if (mkdir(path, 0755) && errno != EEXIST)
				return -1;
			path[i] = '/';
		}
	}
	fp = fopen(path, "w");
	if (!fp)
		return -1;
	fputs(text, fp);
	return fclose(fp);
}

void fixture_remove(struct fixture *f)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->root);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", f->root);
}

static int fake_open(const char *path)
{
	if (fault_inject("open")) {
		errno = EIO;
		return -1;
	}
	return open(path, O_RDONLY | O_CLOEXEC);
}

static ssize_t fake_readlink(const char *path, char *buf, size_t n)
{
	if (fault_inject("readlink")) {
		errno = EIO;
		return -1;
	}
	return readlink(path, buf, n);
}

static const char *env_path, *env_debug;
int fake_real_verbs;

static char *fake_getenv(const char *name)
{
	if (strcmp(name, "GPUDIRECT_PATH") == 0)
		return (char *)env_path;
	if (strcmp(name, "GPUDIRECT_DEBUG") == 0)
		return (char *)env_debug;
	return NULL;
}

static void fake_verbs_table(struct gdr_verbs_ops *v)
{
	v->reg_mr_iova2 = v_reg;
	v->reg_dmabuf_mr = fake_ibv.no_dmabuf_symbol ? NULL : v_reg_dmabuf;
	v->dereg_mr = v_dereg;
	v->alloc_pd = v_alloc_pd;
	v->dealloc_pd = v_dealloc_pd;
	v->query_device = v_query_device;
	v->query_port = v_query_port;
	v->device_name = v_name;
}

void fakes_install_real_cuda(void)
{
	struct gdr_seam s;

	gdr_seam_default(&s);
	fake_verbs_table(&s.verbs);
	gdr_seam_install(&s);
}

void fakes_install(const struct fixture *f, const char *kernel,
		   const char *path, const char *debug)
{
	struct gdr_seam s;

	gdr_seam_default(&s);
	snprintf(s.sysfs_root, sizeof(s.sysfs_root), "%s", f->sys);
	snprintf(s.procfs_root, sizeof(s.procfs_root), "%s", f->proc);
	snprintf(s.kernel_release, sizeof(s.kernel_release), "%s",
		 kernel ? kernel : "6.1.0-57-amd64");
	s.cuda_load = fake_cuda_load;
	if (!fake_real_verbs)
		fake_verbs_table(&s.verbs);
	env_path = path;
	env_debug = debug;
	s.getenv = fake_getenv;
	s.open_file = fake_open;
	s.read_link = fake_readlink;
	gdr_seam_install(&s);
}

int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory's own fd */
}
