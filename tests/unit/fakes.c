/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
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
/* The driver of a process that has not initialised it, or of a child
 * forked after its parent did. */
#define UNINITIALISED()                                                        \
	do {                                                                   \
		if (fake_cu.not_initialized)                                   \
			return CUDA_ERROR_NOT_INITIALIZED;                     \
	} while (0)

struct fake_cuda fake_cu;
struct gdr_model fake_model;
struct fake_verbs fake_ibv;
struct ibv_device fake_device;
struct ibv_context fake_context;
struct ibv_pd fake_pd;

__thread CUcontext fake_current;
static __thread CUcontext ctx_stack[8];
static __thread int ctx_depth;

/* The model's node-level tables, which the fakes wrap. */
static struct gdr_cuda_ops model_cu;
static struct gdr_verbs_ops model_ibv;

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

static const char *env_path, *env_debug;
static char env_extra_name[64], env_extra_value[64];
int fake_real_verbs;

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
	/* rdma-core v54+ and an mlx5 NIC without a Data Direct function */
	fake_ibv.mlx5dv = 2;
	fake_ibv.dd_errno = ENODEV;
	memset(&fake_device, 0, sizeof(fake_device));
	strcpy(fake_device.name, "fake_mlx5_0");
	memset(&fake_context, 0, sizeof(fake_context));
	fake_context.device = &fake_device;
	memset(&fake_pd, 0, sizeof(fake_pd));
	fake_pd.context = &fake_context;
	env_extra_name[0] = '\0';
	ctx_depth = 0;
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

static struct fake_alloc *find(uintptr_t p)
{
	int i;

	for (i = 0; i < fake_cu.num_allocs; i++)
		if (p >= fake_cu.allocs[i].start &&
		    p - fake_cu.allocs[i].start < fake_cu.allocs[i].size)
			return &fake_cu.allocs[i];
	return NULL;
}

void fake_realloc(void *p)
{
	static unsigned long long next = 5000;
	struct fake_alloc *a = find((uintptr_t)p);

	if (a)
		a->buffer_id = __atomic_add_fetch(&next, 1, __ATOMIC_RELAXED);
}

void fake_free(void *p)
{
	struct fake_alloc *a = find((uintptr_t)p);

	if (a)
		a->size = 0;
}

/* The device a fake context belongs to; -1 for a foreign one. */
static int dev_of(CUcontext c)
{
	uintptr_t v = (uintptr_t)c;

	if (v >= 0x1000 && v < 0x1000 + FAKE_MAX_DEVS)
		return (int)(v - 0x1000);
	if (v >= 0x2000 && v < 0x2000 + FAKE_MAX_DEVS)
		return (int)(v - 0x2000);
	return -1;
}

/* --- the fake CUDA driver ------------------------------------------------ */
static CUresult f_init(unsigned int flags)
{
	FAULT_CU("cuInit");
	COUNT(fake_cu.inits);
	if (fake_cu.init_delay_ms) {
		struct timespec ts = { fake_cu.init_delay_ms / 1000,
				       fake_cu.init_delay_ms % 1000 *
					       1000000L };

		nanosleep(&ts, NULL);
	}
	if (fake_cu.init_forks) {
		/* The real driver may run nvidia-modprobe from here. The
		 * child answers through a pipe (under valgrind its exit
		 * status counts the parent's allocations as leaks). */
		char buf[4096], ok = 'n';
		int status = -1, fds[2];
		pid_t pid = pipe(fds) ? -1 : fork();

		if (pid == 0) {
			struct ibv_mr *mr;

			alarm(10); /* a deadlock ends in SIGALRM, not a hang */
			mr = gdr_register(&fake_pd, buf, sizeof(buf));
			ok = mr && mr->addr == buf && !gdr_deregister(mr) ? 'y'
									  : 'n';
			_exit(write(fds[1], &ok, 1) == 1 ? 0 : 2);
		}
		fake_cu.init_child_status = -1;
		if (pid > 0) {
			close(fds[1]);
			if (read(fds[0], &ok, 1) == 1 && ok == 'y' &&
			    waitpid(pid, &status, 0) == pid &&
			    WIFEXITED(status))
				fake_cu.init_child_status = 0;
			close(fds[0]);
		}
	}
	if (fake_cu.init_result)
		return fake_cu.init_result;
	return model_cu.cuInit(flags);
}
static CUresult f_version(int *v)
{
	FAULT_CU("cuDriverGetVersion");
	return model_cu.cuDriverGetVersion(v);
}
static CUresult f_count(int *n)
{
	FAULT_CU("cuDeviceGetCount");
	UNINITIALISED();
	return model_cu.cuDeviceGetCount(n);
}
static CUresult f_dev_get(CUdevice *d, int ordinal)
{
	FAULT_CU("cuDeviceGet");
	UNINITIALISED();
	if (fake_cu.dev_get_result)
		return fake_cu.dev_get_result;
	return model_cu.cuDeviceGet(d, ordinal);
}
static CUresult f_attr(int *v, CUdevice_attribute a, CUdevice d)
{
	FAULT_CU("cuDeviceGetAttribute");
	UNINITIALISED();
	/* A driver older than 11.7 does not know the attribute. */
	if (a == CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED &&
	    fake_cu.driver_version < 11070)
		return CUDA_ERROR_INVALID_VALUE;
	return model_cu.cuDeviceGetAttribute(v, a, d);
}
static CUresult f_name(char *name, int len, CUdevice d)
{
	FAULT_CU("cuDeviceGetName");
	return model_cu.cuDeviceGetName(name, len, d);
}
static CUresult f_busid(char *id, int len, CUdevice d)
{
	FAULT_CU("cuDeviceGetPCIBusId");
	return model_cu.cuDeviceGetPCIBusId(id, len, d);
}
static CUresult ptr_attr(CUpointer_attribute at, void *data,
			 const struct fake_alloc *a)
{
	switch (at) {
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		*(unsigned int *)data = a ? a->type : 0;
		break;
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
		*(int *)data = a ? a->device : -2;
		break;
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
		*(unsigned int *)data = a ? (unsigned)a->managed : 0;
		break;
	case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
		*(unsigned int *)data = a ? !a->not_rdma : 0;
		break;
	case CU_POINTER_ATTRIBUTE_CONTEXT:
		*(CUcontext *)data =
			a && !a->vmm && a->type != CU_MEMORYTYPE_HOST
				? FAKE_PRIMARY(a->device)
				: NULL;
		break;
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
		*(CUdeviceptr *)data = a ? a->start : 0;
		break;
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
		*(size_t *)data = a ? a->size : 0;
		break;
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
		*(unsigned long long *)data = a ? a->buffer_id : 0;
		break;
	case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
		*(void **)data = a && a->pool ? (void *)0x5 : NULL;
		break;
	default: return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}
static CUresult f_ptr_attrs(unsigned int n, CUpointer_attribute *attrs,
			    void **data, CUdeviceptr ptr)
{
	FAULT_CU("cuPointerGetAttributes");
	UNINITIALISED();
	const struct fake_alloc *a = find((uintptr_t)ptr);
	unsigned int i;
	CUresult r;

	if (fake_cu.attrs_result)
		return fake_cu.attrs_result;
	for (i = 0; i < n; i++) {
		r = ptr_attr(attrs[i], data[i], a);
		if (r)
			return r;
	}
	return CUDA_SUCCESS;
}
static CUresult f_ptr_attr(void *data, CUpointer_attribute at, CUdeviceptr ptr)
{
	FAULT_CU("cuPointerGetAttribute");
	UNINITIALISED();
	const struct fake_alloc *a = find((uintptr_t)ptr);

	if (fake_cu.attrs_result)
		return fake_cu.attrs_result;
	/* The real driver refuses a pointer it does not know. */
	if (!a)
		return CUDA_ERROR_INVALID_VALUE;
	return ptr_attr(at, data, a);
}
static CUresult f_set_attr(const void *v, CUpointer_attribute a, CUdeviceptr p)
{
	FAULT_CU("cuPointerSetAttribute");
	COUNT(fake_cu.set_attr_calls);
	return fake_cu.set_attr_result;
}
static CUresult f_retain(CUcontext *ctx, CUdevice d)
{
	FAULT_CU("cuDevicePrimaryCtxRetain");
	if (d < 0 || d >= FAKE_MAX_DEVS)
		return CUDA_ERROR_INVALID_DEVICE;
	COUNT(fake_cu.retains);
	__atomic_add_fetch(&fake_cu.primary_refs[d], 1, __ATOMIC_RELAXED);
	*ctx = FAKE_PRIMARY(d);
	return CUDA_SUCCESS;
}
static CUresult f_release(CUdevice d)
{
	FAULT_CU("cuDevicePrimaryCtxRelease");
	if (d < 0 || d >= FAKE_MAX_DEVS)
		return CUDA_ERROR_INVALID_DEVICE;
	COUNT(fake_cu.releases);
	__atomic_sub_fetch(&fake_cu.primary_refs[d], 1, __ATOMIC_RELAXED);
	return CUDA_SUCCESS;
}

static CUresult f_get_current(CUcontext *ctx)
{
	FAULT_CU("cuCtxGetCurrent");
	*ctx = fake_current;
	return CUDA_SUCCESS;
}
static CUresult f_get_device(CUdevice *dev)
{
	FAULT_CU("cuCtxGetDevice");
	if (!fake_current)
		return CUDA_ERROR_INVALID_CONTEXT;
	*dev = dev_of(fake_current) >= 0 ? dev_of(fake_current) : 7;
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
	if (fake_cu.pop_fails > 0) {
		fake_cu.pop_fails--;
		return CUDA_ERROR_UNKNOWN;
	}
	if (!ctx_depth)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (ctx)
		*ctx = fake_current;
	fake_current = ctx_stack[--ctx_depth];
	return CUDA_SUCCESS;
}
static unsigned int *flags_of(CUcontext c)
{
	static unsigned int foreign;
	int d = dev_of(c);

	return d >= 0 ? &fake_cu.ctx_flags[d] : &foreign;
}
static CUresult f_get_flags(unsigned int *flags)
{
	FAULT_CU("cuCtxGetFlags");
	if (!fake_current)
		return CUDA_ERROR_INVALID_CONTEXT;
	*flags = *flags_of(fake_current);
	return CUDA_SUCCESS;
}
static CUresult f_set_flags(unsigned int flags)
{
	FAULT_CU("cuCtxSetFlags");
	COUNT(fake_cu.set_flags_calls);
	if (!fake_current)
		return CUDA_ERROR_INVALID_CONTEXT;
	*flags_of(fake_current) = flags;
	return CUDA_SUCCESS;
}
static CUresult f_export(void *handle, CUdeviceptr p, size_t size,
			 CUmemRangeHandleType type, unsigned long long flags)
{
	FAULT_CU("cuMemGetHandleForAddressRange");
	const struct fake_alloc *a = find((uintptr_t)p);
	int fd;

	COUNT(fake_cu.exports);
	if (flags & GDR_CU_RANGE_FLAG_PCIE)
		COUNT(fake_cu.flagged_exports);
	pthread_mutex_lock(&rec);
	fake_cu.ctx_at_export = fake_current;
	fake_cu.last_export_base = (uintptr_t)p;
	fake_cu.last_export_size = size;
	pthread_mutex_unlock(&rec);
	if (!fake_current)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (fake_cu.export_result)
		return fake_cu.export_result;
	if ((flags & GDR_CU_RANGE_FLAG_PCIE) && a && a->device >= 0 &&
	    a->device < FAKE_MAX_DEVS && fake_cu.pcie_result[a->device])
		return fake_cu.pcie_result[a->device];
	/* As seen on the H200: only page-aligned spans of one allocation,
	 * or of a VMM range fully mapped by several. */
	if (type != CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD || (p & 4095) ||
	    (size & 4095) || !a || a->type != CU_MEMORYTYPE_DEVICE ||
	    a->managed)
		return CUDA_ERROR_INVALID_VALUE;
	while (a->vmm && (uintptr_t)p + size > a->start + a->size) {
		const struct fake_alloc *next = find(a->start + a->size);

		if (!next || !next->vmm)
			return CUDA_ERROR_INVALID_VALUE;
		a = next;
	}
	if ((uintptr_t)p + size > a->start + ((a->size + 4095) & ~4095ull))
		return CUDA_ERROR_INVALID_VALUE;
	fd = memfd_create("fake-dmabuf", MFD_CLOEXEC);
	if (fd < 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*(int *)handle = fd;
	return CUDA_SUCCESS;
}

static int fake_cuda_load(struct gdr_cuda_ops *ops, unsigned int flags,
			  char *why, size_t n)
{
	memset(ops, 0, sizeof(*ops));
	if (fault_inject("dlopen libcuda")) {
		snprintf(why, n, "libcuda.so.1 could not be loaded (injected)");
		return ENOENT;
	}
	COUNT(fake_cu.loads);
	if (flags & GDR_CUDA_NOLOAD) {
		COUNT(fake_cu.noload_loads);
		if (__atomic_load_n(&fake_cu.not_loaded, __ATOMIC_RELAXED) ||
		    fake_cu.load_fails) {
			snprintf(why, n,
				 "libcuda.so.1 is not loaded in this "
				 "process");
			return ENOENT;
		}
	}
	/* The model says whether the driver loads (model_cu was filled at
	 * install time, once, for concurrent loads to share). */
	if (fake_model.cuda_error[0]) {
		snprintf(why, n, "%s", fake_model.cuda_error);
		return ENOENT;
	}
	/* Loading it is what an application (or the report) does. */
	if (__atomic_load_n(&fake_cu.not_loaded, __ATOMIC_RELAXED))
		__atomic_store_n(&fake_cu.not_loaded, 0, __ATOMIC_RELAXED);
	ctx_depth = 0;
	ops->cuInit = f_init;
	ops->cuDriverGetVersion = f_version;
	ops->cuGetErrorName = model_cu.cuGetErrorName;
	ops->cuDeviceGetCount = f_count;
	ops->cuDeviceGet = f_dev_get;
	ops->cuDeviceGetAttribute = f_attr;
	ops->cuDeviceGetName = f_name;
	ops->cuDeviceGetPCIBusId = f_busid;
	ops->cuPointerGetAttribute = f_ptr_attr;
	ops->cuPointerGetAttributes = f_ptr_attrs;
	ops->cuPointerSetAttribute = f_set_attr;
	ops->cuDevicePrimaryCtxRetain = f_retain;
	ops->cuDevicePrimaryCtxRelease = f_release;
	ops->cuCtxGetCurrent = f_get_current;
	ops->cuCtxGetDevice = f_get_device;
	ops->cuCtxPushCurrent = f_push;
	ops->cuCtxPopCurrent = f_pop;
	ops->cuCtxGetFlags = f_get_flags;
	if (!fake_cu.no_ctx_set_flags && model_cu.cuCtxSetFlags)
		ops->cuCtxSetFlags = f_set_flags;
	if (!fake_cu.no_export_entry && model_cu.cuMemGetHandleForAddressRange)
		ops->cuMemGetHandleForAddressRange = f_export;
	return 0;
}

/* --- the fake verbs provider --------------------------------------------- */

/* An MR that holds a duplicate of its dma-buf fd until it is released, as
 * a real one holds a reference to the dma-buf. */
struct fake_mr {
	struct ibv_mr mr;
	int dmabuf_fd;
};

static struct ibv_mr *new_mr(struct ibv_pd *pd, void *addr, size_t len,
			     int dmabuf_fd)
{
	struct fake_mr *f = calloc(1, sizeof(*f));

	if (!f) {
		errno = ENOMEM;
		return NULL;
	}
	f->dmabuf_fd = dmabuf_fd >= 0 && !fake_ibv.no_hold
			       ? fcntl(dmabuf_fd, F_DUPFD_CLOEXEC, 0)
			       : -1;
	if (dmabuf_fd >= 0 && !fake_ibv.no_hold && f->dmabuf_fd < 0) {
		free(f);
		return NULL; /* errno from fcntl, as a real MR would fail */
	}
	f->mr.context = pd->context;
	f->mr.pd = pd;
	f->mr.addr = addr;
	f->mr.length = len;
	f->mr.lkey = f->mr.rkey = 0x1234;
	COUNT(fake_ibv.live_mrs);
	return &f->mr;
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
	return new_mr(pd, addr, len, -1);
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
			fake_ibv.last_dmabuf_size =
				strtoull(line + 5, NULL, 10);
	}
	fclose(f);
}

/* A dma-buf registration, recorded; fails with @err if not 0. */
static struct ibv_mr *dmabuf_reg(struct ibv_pd *pd, uint64_t offset, size_t len,
				 uint64_t iova, int fd, int access,
				 int mlx5_access, int err)
{
	pthread_mutex_lock(&rec);
	fake_ibv.last_offset = offset;
	fake_ibv.last_len = len;
	fake_ibv.last_iova = iova;
	fake_ibv.last_fd = fd;
	fake_ibv.last_access = access;
	if (mlx5_access >= 0)
		fake_ibv.last_mlx5_access = mlx5_access;
	fake_ibv.last_fd_open = fcntl(fd, F_GETFD) != -1;
	if (!fake_ibv.lean)
		read_fdinfo(fd);
	pthread_mutex_unlock(&rec);
	if (err) {
		errno = err;
		return NULL;
	}
	/* libibverbs puts the dma-buf offset in addr; the library fixes it. */
	return new_mr(pd, (void *)(uintptr_t)offset, len, fd);
}

static struct ibv_mr *v_reg_dmabuf(struct ibv_pd *pd, uint64_t offset,
				   size_t len, uint64_t iova, int fd,
				   int access)
{
	FAULT_IBV("ibv_reg_dmabuf_mr");
	if (fd == -1 && len == 0) {
		COUNT(fake_ibv.probes);
		if (fake_ibv.probe_mr)
			return new_mr(pd, NULL, 0, -1);
		/* The device's answer, from the model. */
		return model_ibv.reg_dmabuf_mr(pd, offset, len, iova, fd,
					       access);
	}
	COUNT(fake_ibv.dmabuf_calls);
	return dmabuf_reg(pd, offset, len, iova, fd, access, -1,
			  fake_ibv.dmabuf_errno);
}
static struct ibv_mr *v_reg_mlx5(struct ibv_pd *pd, uint64_t offset, size_t len,
				 uint64_t iova, int fd, int access,
				 int mlx5_access)
{
	FAULT_IBV("mlx5dv_reg_dmabuf_mr");
	COUNT(fake_ibv.mlx5_reg_calls);
	return dmabuf_reg(pd, offset, len, iova, fd, access, mlx5_access,
			  fake_ibv.mlx5_reg_errno);
}

/* The model's mlx5 direct verbs, with a registration that records. */
static int fake_mlx5_load(struct gdr_mlx5_ops *ops, char *why, size_t n)
{
	int err = gdr_model_mlx5_load(ops, why, n);

	if (!err)
		ops->reg_dmabuf_mr = v_reg_mlx5;
	return err;
}

static int v_dereg(struct ibv_mr *mr)
{
	struct fake_mr *f = (struct fake_mr *)mr;

	if (fault_inject("ibv_dereg_mr"))
		return EIO;
	if (fake_ibv.dereg_errno)
		return fake_ibv.dereg_errno;
	if (f->dmabuf_fd >= 0)
		close(f->dmabuf_fd);
	free(f);
	__atomic_sub_fetch(&fake_ibv.live_mrs, 1, __ATOMIC_RELAXED);
	return 0;
}
static struct ibv_pd *v_alloc_pd(struct ibv_context *ctx)
{
	FAULT_IBV("ibv_alloc_pd");
	return model_ibv.alloc_pd(ctx);
}
static int v_dealloc_pd(struct ibv_pd *pd)
{
	int err = model_ibv.dealloc_pd(pd);

	return fault_inject("ibv_dealloc_pd") ? EIO : err;
}
static int v_query_port(struct ibv_context *ctx, uint8_t port,
			struct ibv_port_attr *a)
{
	if (fault_inject("ibv_query_port"))
		return EIO;
	return model_ibv.query_port(ctx, port, a);
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

int fixture_nic_pci(const struct fixture *f, const char *name, const char *bdf)
{
	char rel[256], path[512], target[256];

	/* The device's own directory, then the class link to it. */
	snprintf(rel, sizeof(rel), "devices/pci0000:00/%s/uevent", bdf);
	if (fixture_write(f->sys, rel, ""))
		return -1;
	snprintf(rel, sizeof(rel), "class/infiniband/%s/uevent", name);
	if (fixture_write(f->sys, rel, ""))
		return -1;
	snprintf(path, sizeof(path), "%s/class/infiniband/%s/device", f->sys,
		 name);
	snprintf(target, sizeof(target), "../../../devices/pci0000:00/%s", bdf);
	return symlink(target, path);
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

static ssize_t fake_read(int fd, void *buf, size_t n)
{
	if (fault_inject("read")) {
		errno = EIO;
		return -1;
	}
	/* sysfs hands out at most a page per read(2). */
	return read(fd, buf, n > 4096 ? 4096 : n);
}

static ssize_t fake_readlink(const char *path, char *buf, size_t n)
{
	if (fault_inject("readlink")) {
		errno = EIO;
		return -1;
	}
	return readlink(path, buf, n);
}

static char *fake_getenv(const char *name)
{
	if (strcmp(name, "GPUDIRECT_PATH") == 0)
		return (char *)env_path;
	if (strcmp(name, "GPUDIRECT_DEBUG") == 0)
		return (char *)env_debug;
	if (env_extra_name[0] && strcmp(name, env_extra_name) == 0)
		return env_extra_value;
	return NULL;
}

void fakes_setenv(const char *name, const char *value)
{
	snprintf(env_extra_name, sizeof(env_extra_name), "%s", name);
	snprintf(env_extra_value, sizeof(env_extra_value), "%s", value);
}

/* The node of fake_cu and fake_ibv as the model the fakes answer from. */
static void fill_model(const char *kernel)
{
	int i;

	memset(&fake_model, 0, sizeof(fake_model));
	snprintf(fake_model.kernel_release, sizeof(fake_model.kernel_release),
		 "%s", kernel ? kernel : "6.1.0-57-amd64");
	if (fake_cu.load_fails)
		snprintf(fake_model.cuda_error, sizeof(fake_model.cuda_error),
			 "libcuda.so.1 could not be loaded (fake)");
	fake_model.driver_version = fake_cu.driver_version;
	fake_model.num_gpus = fake_cu.num_devices;
	for (i = 0; i < fake_cu.num_devices && i < FAKE_MAX_DEVS; i++) {
		struct gdr_model_gpu *g = &fake_model.gpu[i];

		snprintf(g->name, sizeof(g->name), "Fake H200 %d", i);
		snprintf(g->pci_bus_id, sizeof(g->pci_bus_id), "0000:%02x:00.0",
			 6 + i);
		g->dmabuf_supported = fake_cu.dmabuf_attr[i];
		g->gpudirect_rdma_supported = 1;
		g->gpudirect_rdma_with_vmm = 1;
		g->c2c = fake_cu.c2c[i];
		g->pcie_mapping = -1;
	}
	fake_model.mlx5dv = fake_ibv.mlx5dv;
	fake_model.libibverbs_dmabuf = !fake_ibv.no_dmabuf_symbol;
	fake_model.num_nics = 1;
	snprintf(fake_model.nic[0].name, sizeof(fake_model.nic[0].name), "%s",
		 fake_device.name);
	fake_model.nic[0].dmabuf_probe_errno = fake_ibv.probe_errno;
	fake_model.nic[0].port_state = IBV_PORT_ACTIVE;
	fake_model.nic[0].link_layer = IBV_LINK_LAYER_ETHERNET;
	fake_model.nic[0].mlx5 = !fake_ibv.not_mlx5;
	fake_model.nic[0].data_direct_errno = fake_ibv.dd_errno;
	snprintf(fake_model.nic[0].data_direct_path,
		 sizeof(fake_model.nic[0].data_direct_path),
		 "/sys/devices/pci0000:00/0000:00:03.0/0000:04:00.1");
	gdr_model_use(&fake_model);
	gdr_model_cuda_ops(&model_cu);
	gdr_model_verbs_ops(&model_ibv);
}

static void fake_verbs_table(struct gdr_verbs_ops *v)
{
	v->reg_mr_iova2 = v_reg;
	v->reg_dmabuf_mr = fake_ibv.no_dmabuf_symbol ? NULL : v_reg_dmabuf;
	v->dereg_mr = v_dereg;
	v->alloc_pd = v_alloc_pd;
	v->dealloc_pd = v_dealloc_pd;
	v->query_port = v_query_port;
	v->device_name = model_ibv.device_name;
	v->device_index = model_ibv.device_index;
}

/* The real driver, with its exports counted (flagged ones apart). */
static CUresult (*real_export)(void *, CUdeviceptr, size_t,
			       CUmemRangeHandleType, unsigned long long);

static CUresult counting_export(void *handle, CUdeviceptr p, size_t size,
				CUmemRangeHandleType type,
				unsigned long long flags)
{
	COUNT(fake_cu.exports);
	if (flags & GDR_CU_RANGE_FLAG_PCIE)
		COUNT(fake_cu.flagged_exports);
	return real_export(handle, p, size, type, flags);
}

static int counting_cuda_load(struct gdr_cuda_ops *ops, unsigned int flags,
			      char *why, size_t n)
{
	int err = gdr_cuda_load(ops, flags, why, n);

	if (!err && ops->cuMemGetHandleForAddressRange) {
		real_export = ops->cuMemGetHandleForAddressRange;
		ops->cuMemGetHandleForAddressRange = counting_export;
	}
	return err;
}

void fakes_install_real_cuda(void)
{
	struct gdr_seam s;

	fill_model(NULL);
	gdr_seam_default(&s);
	fake_verbs_table(&s.verbs);
	s.mlx5_load = fake_mlx5_load;
	s.cuda_load = counting_cuda_load;
	gdr_seam_install(&s);
}

void fakes_install(const struct fixture *f, const char *kernel,
		   const char *path, const char *debug)
{
	struct gdr_seam s;

	fill_model(kernel);
	gdr_seam_default(&s);
	snprintf(s.sysfs_root, sizeof(s.sysfs_root), "%s", f->sys);
	snprintf(s.procfs_root, sizeof(s.procfs_root), "%s", f->proc);
	snprintf(s.kernel_release, sizeof(s.kernel_release), "%s",
		 fake_model.kernel_release);
	s.cuda_load = fake_cuda_load;
	if (!fake_real_verbs) {
		fake_verbs_table(&s.verbs);
		s.mlx5_load = fake_mlx5_load;
	}
	s.gpu_c2c = gdr_model_gpu_c2c;
	env_path = path;
	env_debug = debug;
	s.getenv = fake_getenv;
	s.open_file = fake_open;
	s.read_fd = fake_read;
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

int fake_ctx_depth(void)
{
	return ctx_depth;
}

void errno_seen(const char *call, int err)
{
	const char *file = getenv("GDR_ERRNOS_OUT");
	FILE *f;

	if (err > 0)
		log_message(gdr_last_error());
	if (!file || !*file || err <= 0)
		return;
	f = fopen(file, "a");
	if (!f)
		return;
	fprintf(f, "%s %s\n", call,
		strerrorname_np(err) ? strerrorname_np(err) : "unknown");
	fclose(f);
}

void log_message(const char *msg)
{
	const char *file = getenv("GDR_MESSAGES_OUT");
	FILE *f;

	if (!file || !*file || !msg || !*msg)
		return;
	f = fopen(file, "a");
	if (!f)
		return;
	fprintf(f, "%s\n", msg);
	fclose(f);
}
