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
#include "conform.h"
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

static void memory_reset(void);
static void model_reset(void);
static const char *env_path, *env_debug;
static char env_extra_name[64], env_extra_value[64];
int fake_real_verbs;

void fakes_reset(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, fakes_atfork);

	memset(&fake_cu, 0, sizeof(fake_cu));
	memory_reset();
	memset(&fake_ibv, 0, sizeof(fake_ibv));
	memset(&fake_device, 0, sizeof(fake_device));
	strcpy(fake_device.name, "fake_mlx5_0");
	memset(&fake_context, 0, sizeof(fake_context));
	fake_context.device = &fake_device;
	memset(&fake_pd, 0, sizeof(fake_pd));
	fake_pd.context = &fake_context;
	model_reset();
	env_extra_name[0] = '\0';
	ctx_depth = 0;
}

#define MiB2 ((size_t)2 << 20)
#define ROUND2M(x) (((x) + MiB2 - 1) & ~(MiB2 - 1))

/* Buffer and block ids: one series, as the driver's (907, 908, ...). */
static unsigned long long next_id(void)
{
	static unsigned long long id = 900;

	return __atomic_add_fetch(&id, 1, __ATOMIC_RELAXED);
}

/* A slot: a freed one (the application's side reuses them) or a new one. */
static struct fake_alloc *slot_new(int reuse)
{
	int i;

	for (i = 0; reuse && i < fake_cu.num_allocs; i++)
		if (!fake_cu.allocs[i].size)
			return &fake_cu.allocs[i];
	if (fake_cu.num_allocs == FAKE_MAX_ALLOCS) {
		fprintf(stderr, "fakes: more than %d allocations\n",
			FAKE_MAX_ALLOCS);
		abort();
	}
	return &fake_cu.allocs[fake_cu.num_allocs++];
}

static struct fake_alloc *add(uintptr_t start, size_t size, int device,
			      unsigned int type, int reuse)
{
	struct fake_alloc *a = slot_new(reuse);

	memset(a, 0, sizeof(*a));
	a->start = start;
	a->size = size;
	a->device = device;
	a->type = type;
	a->buffer_id = next_id();
	return a;
}

struct fake_alloc *fake_add_alloc(uintptr_t start, size_t size, int device,
				  unsigned int type)
{
	return add(start, size, device, type, 0);
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

/* The VMM reservation holding @p, if any (its mappings may be gone). */
static struct {
	uintptr_t start;
	size_t size;
} reservations[FAKE_MAX_RESERVATIONS];

static int reserved(uintptr_t p, uintptr_t *start, size_t *size)
{
	int i;

	for (i = 0; i < FAKE_MAX_RESERVATIONS; i++)
		if (reservations[i].size && p >= reservations[i].start &&
		    p - reservations[i].start < reservations[i].size) {
			*start = reservations[i].start;
			*size = reservations[i].size;
			return 1;
		}
	return 0;
}

void fake_realloc(void *p)
{
	struct fake_alloc *a = find((uintptr_t)p);

	if (a) /* other threads may be reading it (test-cache-threads) */
		__atomic_store_n(&a->buffer_id, next_id(), __ATOMIC_SEQ_CST);
}

void fake_free(void *p)
{
	struct fake_alloc *a = find((uintptr_t)p);

	if (a)
		a->size = 0;
}

#define VMM_BASE 0x6d0000000000ull
static uintptr_t vmm_next = VMM_BASE;

static uintptr_t reserve(size_t size)
{
	uintptr_t va = vmm_next;
	int i;

	for (i = 0; i < FAKE_MAX_RESERVATIONS && reservations[i].size; i++)
		;
	if (i == FAKE_MAX_RESERVATIONS)
		return 0;
	reservations[i].start = va;
	reservations[i].size = size;
	vmm_next += ROUND2M(size) + 64 * MiB2; /* a gap: nothing adjacent */
	return va;
}

/* Map physical allocation @handle (id @id) at @va in its reservation. */
static struct fake_alloc *vmm_map(uintptr_t va, size_t size, int device,
				  int not_rdma, unsigned long long handle,
				  unsigned long long id)
{
	struct fake_alloc *a = add(va, size, device, CU_MEMORYTYPE_DEVICE, 1);

	a->vmm = 1;
	a->not_rdma = not_rdma;
	a->buffer_id = id;
	a->block_id = id;
	a->handle = handle;
	a->map_start = va;
	a->map_size = size;
	reserved(va, &a->res_start, &a->res_size);
	return a;
}

void *fake_vmm(int device, unsigned int n, size_t chunk, int not_rdma)
{
	uintptr_t va = reserve(n * chunk);
	unsigned int i;

	if (!va)
		abort();
	for (i = 0; i < n; i++) {
		unsigned long long id = next_id();

		vmm_map(va + i * chunk, chunk, device, not_rdma, id, id);
	}
	return (void *)va;
}

void fake_vmm_replace(void *p)
{
	struct fake_alloc *a = find((uintptr_t)p);

	if (a && a->vmm)
		a->handle = a->buffer_id = a->block_id = next_id();
}

/* --- the application's side of the fake driver ------------------------- */

#define APP_BASE 0x6e0000000000ull
#define POOL_BASE 0x6c0000000000ull
#define POOL_CHUNK ((size_t)32 << 20)

/* Physical allocations made with cuMemCreate: handle -> size, flags. */
#define MAX_PHYS 16
static struct {
	unsigned long long handle; /* the id; 0: free */
	size_t size;
	int device, not_rdma;
} phys[MAX_PHYS];

/* cuMemAlloc: 2 MiB pages, a freed span of the same size reused first. */
static CUresult app_alloc(CUdeviceptr *p, size_t size)
{
	static uintptr_t next = APP_BASE;
	size_t span = ROUND2M(size);
	struct fake_alloc *a;
	uintptr_t at = 0;
	int i;

	for (i = 0; i < fake_cu.num_allocs; i++) {
		a = &fake_cu.allocs[i];
		if (!a->size && a->type == CU_MEMORYTYPE_DEVICE && !a->vmm &&
		    !a->pool && a->map_size == span && a->start >= APP_BASE &&
		    a->start < APP_BASE + (1ull << 36)) {
			at = a->start;
			a->map_size = 0; /* taken: not offered twice */
			break;
		}
	}
	if (!at) {
		at = next;
		next += span;
	}
	a = add(at, size, 0, CU_MEMORYTYPE_DEVICE, 1);
	a->map_start = at;
	a->map_size = span;
	*p = at;
	return CUDA_SUCCESS;
}

static CUresult app_free(CUdeviceptr p)
{
	struct fake_alloc *a = find(p);

	if (!a || a->start != p || a->vmm || a->pool)
		return CUDA_ERROR_INVALID_VALUE;
	a->size = 0;
	return CUDA_SUCCESS;
}

static CUresult app_alloc_host(void **p, size_t size)
{
	CUdeviceptr d;
	struct fake_alloc *a;

	app_alloc(&d, size);
	a = find(d);
	a->type = CU_MEMORYTYPE_HOST;
	a->not_rdma = 1;
	*p = (void *)(uintptr_t)d;
	return CUDA_SUCCESS;
}

static CUresult app_free_host(void *p)
{
	struct fake_alloc *a = find((uintptr_t)p);

	if (!a || a->type != CU_MEMORYTYPE_HOST)
		return CUDA_ERROR_INVALID_VALUE;
	a->size = 0;
	return CUDA_SUCCESS;
}

static CUresult app_alloc_managed(CUdeviceptr *p, size_t size,
				  unsigned int flags)
{
	app_alloc(p, size);
	find(*p)->managed = 1;
	find(*p)->not_rdma = 1;
	return CUDA_SUCCESS;
}

/* The default pool: one 32 MiB chunk, sub-allocated in order. */
static CUresult app_alloc_async(CUdeviceptr *p, size_t size, CUstream s)
{
	static unsigned long long chunk_id;
	static uintptr_t next = POOL_BASE;
	struct fake_alloc *a;
	uintptr_t at = 0;
	int i;

	if (!chunk_id)
		chunk_id = next_id();
	for (i = 0; i < fake_cu.num_allocs && !at; i++) {
		a = &fake_cu.allocs[i];
		if (!a->size && a->pool && a->map_size == size) {
			at = a->start;
			a->map_size = 0;
		}
	}
	if (!at) {
		if (next + size > POOL_BASE + POOL_CHUNK)
			return CUDA_ERROR_OUT_OF_MEMORY;
		at = next;
		next += size;
	}
	a = add(at, size, 0, CU_MEMORYTYPE_DEVICE, 1);
	a->pool = 1;
	a->not_rdma = 1;
	a->map_start = POOL_BASE;
	a->map_size = POOL_CHUNK;
	a->block_id = chunk_id;
	*p = at;
	return CUDA_SUCCESS;
}

static CUresult app_free_async(CUdeviceptr p, CUstream s)
{
	struct fake_alloc *a = find(p);

	if (!a || !a->pool || a->start != p)
		return CUDA_ERROR_INVALID_VALUE;
	/* Remember the size in map_size for the next allocation to reuse. */
	a->map_size = a->size;
	a->size = 0;
	return CUDA_SUCCESS;
}

static CUresult app_sync(CUstream s)
{
	return CUDA_SUCCESS;
}

static CUresult app_reserve(CUdeviceptr *p, size_t size, size_t align,
			    CUdeviceptr addr, unsigned long long flags)
{
	uintptr_t va = size && !(size % MiB2) ? reserve(size) : 0;

	if (!va)
		return CUDA_ERROR_INVALID_VALUE;
	*p = va;
	return CUDA_SUCCESS;
}

static CUresult app_address_free(CUdeviceptr p, size_t size)
{
	int i;

	for (i = 0; i < FAKE_MAX_RESERVATIONS; i++)
		if (reservations[i].start == p &&
		    reservations[i].size == size) {
			reservations[i].size = 0;
			return CUDA_SUCCESS;
		}
	return CUDA_ERROR_INVALID_VALUE;
}

static CUresult app_create(CUmemGenericAllocationHandle *h, size_t size,
			   const CUmemAllocationProp *prop,
			   unsigned long long flags)
{
	int i;

	if (!size || size % MiB2)
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < MAX_PHYS && phys[i].handle; i++)
		;
	if (i == MAX_PHYS)
		return CUDA_ERROR_OUT_OF_MEMORY;
	phys[i].handle = next_id();
	phys[i].size = size;
	phys[i].device = prop->location.id;
	phys[i].not_rdma = !prop->allocFlags.gpuDirectRDMACapable;
	*h = phys[i].handle;
	return CUDA_SUCCESS;
}

static int phys_of(CUmemGenericAllocationHandle h)
{
	int i;

	for (i = 0; i < MAX_PHYS; i++)
		if (h && phys[i].handle == h)
			return i;
	return -1;
}

static CUresult app_release(CUmemGenericAllocationHandle h)
{
	int i = phys_of(h);

	if (i < 0)
		return CUDA_ERROR_INVALID_VALUE;
	phys[i].handle = 0; /* a mapping keeps the memory until unmapped */
	return CUDA_SUCCESS;
}

static CUresult app_map(CUdeviceptr va, size_t size, size_t offset,
			CUmemGenericAllocationHandle h,
			unsigned long long flags)
{
	uintptr_t rs;
	size_t rn;
	int i = phys_of(h);

	/* As the H200 answers: a mapping starts at offset 0 of its handle. */
	if (offset)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (i < 0 || size != phys[i].size || !reserved(va, &rs, &rn) ||
	    va + size > rs + rn || find(va) || find(va + size - 1))
		return CUDA_ERROR_INVALID_VALUE;
	vmm_map(va, size, phys[i].device, phys[i].not_rdma, h, h);
	return CUDA_SUCCESS;
}

static CUresult app_unmap(CUdeviceptr va, size_t size)
{
	struct fake_alloc *a = find(va);

	if (!a || !a->vmm || a->start != va || a->size != size)
		return CUDA_ERROR_INVALID_VALUE;
	a->size = 0;
	a->map_size = 0;
	return CUDA_SUCCESS;
}

static CUresult app_set_access(CUdeviceptr va, size_t size,
			       const CUmemAccessDesc *d, size_t n)
{
	return find(va) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult app_granularity(size_t *g, const CUmemAllocationProp *prop,
				CUmemAllocationGranularity_flags flags)
{
	*g = MiB2;
	return CUDA_SUCCESS;
}

static void memory_reset(void)
{
	memset(reservations, 0, sizeof(reservations));
	memset(phys, 0, sizeof(phys));
	vmm_next = VMM_BASE;
}

void fake_conf_app(struct conf_app *app)
{
	memset(app, 0, sizeof(*app));
	app->cuMemAlloc = app_alloc;
	app->cuMemFree = app_free;
	app->cuMemAllocHost = app_alloc_host;
	app->cuMemFreeHost = app_free_host;
	app->cuMemAllocManaged = app_alloc_managed;
	app->cuMemAllocAsync = app_alloc_async;
	app->cuMemFreeAsync = app_free_async;
	app->cuStreamSynchronize = app_sync;
	app->cuMemAddressReserve = app_reserve;
	app->cuMemAddressFree = app_address_free;
	app->cuMemCreate = app_create;
	app->cuMemRelease = app_release;
	app->cuMemMap = app_map;
	app->cuMemUnmap = app_unmap;
	app->cuMemSetAccess = app_set_access;
	app->cuMemGetAllocationGranularity = app_granularity;
	app->primary = FAKE_PRIMARY(0);
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
	    fake_model.driver_version < 11070)
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
static CUresult f_uuid(CUuuid *u, CUdevice d)
{
	int i;

	FAULT_CU("cuDeviceGetUuid");
	/* GPU-d0d0d0d0-...: a UUID of its own per device */
	for (i = 0; i < 16; i++)
		u->bytes[i] = (char)(0xd0 + d);
	return CUDA_SUCCESS;
}
/* MAPPING_BASE_ADDR/SIZE of @a. */
static void mapping_of(const struct fake_alloc *a, uintptr_t *start,
		       size_t *size)
{
	*start = a->map_size ? a->map_start : a->start;
	*size = a->map_size ? a->map_size : ROUND2M(a->size);
}

/*
 * One attribute of the memory at @p (allocation @a, NULL when the driver
 * knows none there). @plural: asked through cuPointerGetAttributes, which
 * answers for unknown memory too (type 0), where cuPointerGetAttribute
 * fails (as on the H200).
 */
static CUresult ptr_attr(CUpointer_attribute at, void *data,
			 const struct fake_alloc *a, uintptr_t p)
{
	uintptr_t rs = 0, ms;
	size_t rn = 0, mn;

	switch ((int)at) {
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
	case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
		/* cuMemAlloc memory in its owner; not memory it mapped from
		 * another process, nor VMM or pool memory (measured on the
		 * H100), nor managed or host memory (the record says) */
		*(unsigned int *)data = a && a->type == CU_MEMORYTYPE_DEVICE &&
					!a->managed && !a->vmm && !a->pool &&
					!a->ipc_imported;
		break;
	case CU_POINTER_ATTRIBUTE_CONTEXT:
		*(CUcontext *)data = a && !a->vmm && !a->pool
					     ? FAKE_PRIMARY(a->device)
					     : NULL;
		break;
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
		/* VMM: the whole reservation, also over a hole in it; memory
		 * the driver does not know: nothing written. */
		if (a && a->vmm && a->res_size) {
			rs = a->res_start;
			rn = a->res_size;
		} else if (a) {
			rs = a->start;
			rn = a->size;
		} else if (!reserved(p, &rs, &rn)) {
			break;
		}
		if (at == CU_POINTER_ATTRIBUTE_RANGE_START_ADDR)
			*(CUdeviceptr *)data = rs;
		else
			*(size_t *)data = rn;
		break;
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
		*(unsigned long long *)data =
			a ? __atomic_load_n(&a->buffer_id, __ATOMIC_SEQ_CST)
			  : 0;
		break;
	case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
		*(void **)data = a && a->pool ? (void *)0x5 : NULL;
		break;
	case CU_POINTER_ATTRIBUTE_MAPPED:
		*(unsigned int *)data = a != NULL;
		break;
	case 18: /* CU_POINTER_ATTRIBUTE_MAPPING_SIZE */
	case 19: /* CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR */
		if (!a)
			return CUDA_ERROR_INVALID_VALUE;
		mapping_of(a, &ms, &mn);
		if (at == 18)
			*(unsigned long long *)data = mn;
		else
			*(CUdeviceptr *)data = ms;
		break;
	case 20: /* CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID */
		if (!a)
			return CUDA_ERROR_INVALID_VALUE;
		*(unsigned long long *)data =
			a->block_id ? a->block_id
				    : __atomic_load_n(&a->buffer_id,
						      __ATOMIC_SEQ_CST);
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

	COUNT(fake_cu.ptr_attrs_calls);
	if (fake_cu.attrs_result)
		return fake_cu.attrs_result;
	for (i = 0; i < n; i++) {
		r = ptr_attr(attrs[i], data[i], a, (uintptr_t)ptr);
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

	COUNT(fake_cu.ptr_attr_calls);
	if (fake_cu.attrs_result)
		return fake_cu.attrs_result;
	/* The real driver refuses a pointer it does not know. */
	if (!a)
		return CUDA_ERROR_INVALID_VALUE;
	return ptr_attr(at, data, a, (uintptr_t)ptr);
}
/* The mapping (VMM), or the allocation (cuMemAlloc, pools), holding @p. */
static CUresult f_address_range(CUdeviceptr *base, size_t *size, CUdeviceptr p)
{
	FAULT_CU("cuMemGetAddressRange");
	UNINITIALISED();
	const struct fake_alloc *a = find((uintptr_t)p);

	COUNT(fake_cu.range_calls);
	if (!a)
		return CUDA_ERROR_NOT_FOUND;
	if (base)
		*base = a->start;
	if (size)
		*size = a->size;
	return CUDA_SUCCESS;
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
/* The library's own allocation (the report's PCIe-mapping probe): device
 * memory of the current context's GPU. */
static CUresult f_mem_alloc(CUdeviceptr *p, size_t size)
{
	void *m;

	FAULT_CU("cuMemAlloc");
	if (!fake_current || dev_of(fake_current) < 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	m = fake_alloc_device(dev_of(fake_current), size);
	if (!m)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*p = (CUdeviceptr)(uintptr_t)m;
	return CUDA_SUCCESS;
}
static CUresult f_mem_free(CUdeviceptr p)
{
	FAULT_CU("cuMemFree");
	fake_free((void *)(uintptr_t)p);
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
	uintptr_t at, ms;
	size_t mn;
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
	    a->device < FAKE_MAX_DEVS &&
	    fake_model.gpu[a->device].pcie_mapping > 0)
		return (CUresult)fake_model.gpu[a->device].pcie_mapping;
	/* As seen on the H200: page-aligned spans of device memory, every
	 * page of them in some mapping (adjacent cuMemAllocs and VMM chunks
	 * export together; a hole refuses; not host nor managed memory). */
	if (type != CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD || (p & 4095) ||
	    (size & 4095) || !size)
		return CUDA_ERROR_INVALID_VALUE;
	for (at = (uintptr_t)p; at < (uintptr_t)p + size; at = ms + mn) {
		const struct fake_alloc *m = find(at);

		if (!m || m->type != CU_MEMORYTYPE_DEVICE || m->managed)
			return CUDA_ERROR_INVALID_VALUE;
		mapping_of(m, &ms, &mn);
		if (m->vmm || m->pool) {
			ms = m->start;
			mn = m->size;
		}
		if (ms + mn <= at)
			return CUDA_ERROR_INVALID_VALUE;
	}
	fd = memfd_create("fake-dmabuf", MFD_CLOEXEC);
	if (fd < 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	/* A dma-buf's size is the span exported (lseek SEEK_END). */
	if (!fake_ibv.lean && ftruncate(fd, (off_t)size)) {
		close(fd);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*(int *)handle = fd;
	return CUDA_SUCCESS;
}

static int fake_cuda_load(struct gdr_cuda_ops *ops, unsigned int flags,
			  char *why, size_t n)
{
	if (fault_inject("dlopen libcuda")) {
		if (n)
			snprintf(why, n,
				 "libcuda.so.1 could not be loaded (injected)");
		return ENOENT;
	}
	COUNT(fake_cu.loads);
	if (flags & GDR_CUDA_NOLOAD) {
		COUNT(fake_cu.noload_loads);
		if (__atomic_load_n(&fake_cu.not_loaded, __ATOMIC_RELAXED) ||
		    fake_model.cuda_error[0]) {
			if (n)
				snprintf(why, n,
					 "libcuda.so.1 is not loaded in this "
					 "process");
			return ENOENT;
		}
	}
	memset(ops, 0, sizeof(*ops));
	/* The model says whether the driver loads (model_cu was filled at
	 * install time, once, for concurrent loads to share). */
	if (fake_model.cuda_error[0]) {
		if (n)
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
	ops->cuDeviceGetUuid = f_uuid;
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
	ops->cuMemGetAddressRange = f_address_range;
	ops->cuMemAlloc = f_mem_alloc;
	ops->cuMemFree = f_mem_free;
	ops->cuDeviceTotalMem = model_cu.cuDeviceTotalMem;
	return 0;
}

/* --- the fake verbs provider --------------------------------------------- */

/* An MR that holds a duplicate of its dma-buf fd until it is released, as
 * a real one holds a reference to the dma-buf. */
struct fake_mr {
	struct ibv_mr mr;
	int dmabuf_fd;
	int guarded; /* a page of its own, PROT_NONE once released */
};

static struct ibv_mr *new_mr(struct ibv_pd *pd, void *addr, size_t len,
			     int dmabuf_fd)
{
	struct fake_mr *f;

	if (fake_ibv.guard_freed) {
		f = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (f == MAP_FAILED)
			f = NULL;
		else
			f->guarded = 1;
	} else {
		f = calloc(1, sizeof(*f));
	}
	if (!f) {
		errno = ENOMEM;
		return NULL;
	}
	f->dmabuf_fd = dmabuf_fd >= 0 && !fake_ibv.no_hold
			       ? fcntl(dmabuf_fd, F_DUPFD_CLOEXEC, 0)
			       : -1;
	if (dmabuf_fd >= 0 && !fake_ibv.no_hold && f->dmabuf_fd < 0) {
		if (f->guarded)
			munmap(f, 4096);
		else
			free(f);
		return NULL; /* errno from fcntl, as a real MR would fail */
	}
	f->mr.context = pd->context;
	f->mr.pd = pd;
	f->mr.addr = addr;
	f->mr.length = len;
	f->mr.lkey = f->mr.rkey = 0x1234;
	COUNT(fake_ibv.live_mrs);
	if (fake_ibv.mr_hook && len)
		fake_ibv.mr_hook(&f->mr);
	return &f->mr;
}
static struct ibv_mr *v_reg(struct ibv_pd *pd, void *addr, size_t len,
			    uint64_t iova, unsigned int access)
{
	FAULT_IBV("ibv_reg_mr_iova2");
	COUNT(fake_ibv.reg_calls);
	if (fake_ibv.reg_hook)
		fake_ibv.reg_hook();
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
	if (fake_ibv.reg_hook)
		fake_ibv.reg_hook();
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
	if (fake_ibv.dereg_hook)
		fake_ibv.dereg_hook();
	if (fake_ibv.dereg_errno)
		return fake_ibv.dereg_errno;
	if (f->dmabuf_fd >= 0)
		close(f->dmabuf_fd);
	__atomic_sub_fetch(&fake_ibv.live_mrs, 1, __ATOMIC_RELAXED);
	if (f->guarded)
		mprotect(f, 4096, PROT_NONE); /* kept: never reused */
	else
		free(f);
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

/*
 * The fake driver's dma-bufs are memfds named "fake-dmabuf": those are
 * dma-bufs here, of the memfd's size and inode; any other open file is
 * not.
 */
static int fake_dmabuf_facts(int fd, struct gdr_dmabuf_facts *f, char *why,
			     size_t n)
{
	char path[64], target[128];
	struct stat st;
	ssize_t len;

	memset(f, 0, sizeof(*f));
	if (fault_inject("dmabuf facts")) {
		snprintf(why, n, "fstatfs on fd %d failed: %s", fd,
			 strerror(EIO));
		return EIO;
	}
	if (fd < 0 || fstat(fd, &st)) {
		snprintf(why, n, "fd %d is not open", fd);
		return EBADF;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	len = readlink(path, target, sizeof(target) - 1);
	target[len > 0 ? len : 0] = '\0';
	if (strncmp(target, "/memfd:fake-dmabuf", 18)) {
		/* the words of the real check (lib/os/dmabuf-facts.c) */
		snprintf(why, n,
			 "fd %d is not a dma-buf (its file system has magic "
			 "0x%lx, not the dma-buf one)",
			 fd, 0x1021994ul /* tmpfs */);
		return GDR_ENOTDMABUF;
	}
	f->size = (uint64_t)st.st_size;
	f->ino = (uint64_t)st.st_ino;
	return 0;
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

/* Fixtures live below mkdtemp's /tmp/gdr-fixture-*: a test that forgot
 * fixture_make() must not write at the filesystem root. */
static int in_fixture(const char *path)
{
	return !strncmp(path, "/tmp/gdr-fixture-", 17) && !strstr(path, "..");
}

int fixture_write(const char *base, const char *rel, const char *text)
{
	char path[512];
	size_t i, len;
	FILE *fp;

	if (!in_fixture(base)) {
		fprintf(stderr,
			"fixture_write: %s is not a fixture (call "
			"fixture_make first)\n",
			base);
		return -1;
	}
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

int fixture_pci(const struct fixture *f, const char *chain, int numa)
{
	char rel[320], path[512], target[320], numa_text[16];
	const char *bdf = strrchr(chain, '/');

	if (!bdf)
		return -1;
	bdf++;
	snprintf(rel, sizeof(rel), "devices/%s/numa_node", chain);
	snprintf(numa_text, sizeof(numa_text), "%d\n", numa);
	if (fixture_write(f->sys, rel, numa_text))
		return -1;
	if (fixture_write(f->sys, "bus/pci/devices/.keep", ""))
		return -1;
	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s", f->sys, bdf);
	snprintf(target, sizeof(target), "../../../devices/%s", chain);
	return symlink(target, path);
}

void fixture_remove(struct fixture *f)
{
	char cmd[256];

	if (!in_fixture(f->root))
		return;
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

/*
 * The node the fakes answer from: one healthy H200-like GPU on a 13.0
 * driver, and one mlx5-like NIC on rdma-core v54+ without a Data Direct
 * function whose DMA-BUF probe answers EBADF (it supports DMA-BUF MRs).
 * Tests change the node by writing fake_model between fakes_reset() and
 * the first call into the library; there is no other copy of it.
 */
static struct gdr_model_nic default_nic; /* model_reset()'s NIC */
static int nics_added;			 /* by fake_add_nic() since */
/* The devices fake_add_nic() put in the model, and where. */
static struct {
	const struct ibv_device *dev;
	int index;
} added[GDR_MODEL_MAX_NICS];

static void model_reset(void)
{
	struct gdr_model_nic *nic = &fake_model.nic[0];
	int i;

	memset(&fake_model, 0, sizeof(fake_model));
	snprintf(fake_model.kernel_release, sizeof(fake_model.kernel_release),
		 "%s", FAKE_KERNEL);
	fake_model.driver_version = 13000;
	fake_model.num_gpus = 1;
	for (i = 0; i < FAKE_MAX_DEVS; i++) {
		struct gdr_model_gpu *g = &fake_model.gpu[i];

		snprintf(g->name, sizeof(g->name), "Fake H200 %d", i);
		snprintf(g->pci_bus_id, sizeof(g->pci_bus_id), "0000:%02x:00.0",
			 6 + i);
		g->dmabuf_supported = 1;
		g->gpudirect_rdma_supported = 1;
		g->gpudirect_rdma_with_vmm = 1;
		g->pcie_mapping = -1;
		g->total_mem = 150754820096ULL; /* an H200's 143771 MiB */
		/* an H200's: a 128 GiB window, 2 MiB of it in use */
		g->bar1_total = 128ULL << 30;
		g->bar1_used = 2ULL << 20;
	}
	fake_model.fork_status = 2; /* IBV_FORK_UNNEEDED: Linux 5.13+ */
	snprintf(fake_model.libibverbs_file, sizeof(fake_model.libibverbs_file),
		 "libibverbs.so.1.14.54.0");
	snprintf(fake_model.libmlx5_file, sizeof(fake_model.libmlx5_file),
		 "libmlx5.so.1.25.54.0");
	/* a well-set-up host: unlimited locked memory, 1M files */
	fake_model.memlock_soft = fake_model.memlock_hard = ~0ULL;
	fake_model.nofile_soft = fake_model.nofile_hard = 1048576;
	fake_model.mlx5dv = 2;
	fake_model.libibverbs_dmabuf = 1;
	fake_model.num_nics = 1;
	snprintf(nic->name, sizeof(nic->name), "%s", fake_device.name);
	nic->dmabuf_probe_errno = EBADF;
	nic->port_state = IBV_PORT_ACTIVE;
	nic->link_layer = IBV_LINK_LAYER_ETHERNET;
	nic->mlx5 = 1;
	nic->data_direct_errno = ENODEV;
	nic->max_mr_size = ~0ULL; /* as mlx5 answers */
	snprintf(nic->netdev, sizeof(nic->netdev), "eth7");
	snprintf(nic->addrs, sizeof(nic->addrs), "192.168.7.10 fe80::1");
	snprintf(nic->data_direct_path, sizeof(nic->data_direct_path),
		 "/sys/devices/pci0000:00/0000:00:03.0/0000:04:00.1");
	default_nic = *nic;
	nics_added = 0;
	memset(added, 0, sizeof(added));
	gdr_model_use(&fake_model);
}

struct gdr_model_nic *fake_add_nic(struct fake_nic *n, const char *name,
				   int in_model)
{
	struct gdr_model_nic *m;

	memset(n, 0, sizeof(*n));
	snprintf(n->dev.name, sizeof(n->dev.name), "%s", name);
	n->ctx.device = &n->dev;
	n->pd.context = &n->ctx;
	if (!in_model || fake_model.num_nics >= GDR_MODEL_MAX_NICS)
		return NULL;
	/* The first one added takes the default NIC's place. */
	if (!nics_added++)
		fake_model.num_nics = 0;
	added[fake_model.num_nics].dev = &n->dev;
	added[fake_model.num_nics].index = fake_model.num_nics;
	m = &fake_model.nic[fake_model.num_nics++];
	*m = default_nic;
	snprintf(m->name, sizeof(m->name), "%s", name);
	return m;
}

/*
 * ibv_get_device_index() reads the index libibverbs set in the device when
 * it found it, fixed for the device's life; the model's answer is a search
 * by name, which would charge the library a cost the real call does not
 * have (the benchmarks count it). A device fake_add_nic() added answers
 * the place it was given while the model has that many NICs; any other
 * (fake_device, which tests rename to stand for another device) asks the
 * model.
 */
static int v_device_index(struct ibv_device *d)
{
	int i;

	for (i = 0; i < GDR_MODEL_MAX_NICS && added[i].dev; i++)
		if (added[i].dev == d)
			return added[i].index < fake_model.num_nics
				       ? added[i].index
				       : -1;
	return model_ibv.device_index(d);
}

void fakes_no_libcuda(void)
{
	snprintf(fake_model.cuda_error, sizeof(fake_model.cuda_error),
		 "libcuda.so.1 could not be loaded (fake)");
}

/* Install the model's tables; @kernel (NULL: FAKE_KERNEL) is the release. */
static void model_install(const char *kernel)
{
	snprintf(fake_model.kernel_release, sizeof(fake_model.kernel_release),
		 "%s", kernel ? kernel : FAKE_KERNEL);
	gdr_model_use(&fake_model);
	gdr_model_cuda_ops(&model_cu);
	gdr_model_verbs_ops(&model_ibv);
}

static void fake_verbs_table(struct gdr_verbs_ops *v)
{
	v->reg_mr_iova2 = v_reg;
	v->reg_dmabuf_mr = fake_model.libibverbs_dmabuf ? v_reg_dmabuf : NULL;
	v->dereg_mr = v_dereg;
	v->alloc_pd = v_alloc_pd;
	v->dealloc_pd = v_dealloc_pd;
	v->query_port = v_query_port;
	v->device_name = model_ibv.device_name;
	v->device_index = v_device_index;
	v->query_device = model_ibv.query_device;
	v->is_fork_initialized = model_ibv.is_fork_initialized;
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

/* With fake_cu.count_queries: the pointer questions counted too (one
 * shared counter: not for timing). */
static CUresult (*real_attr)(void *, CUpointer_attribute, CUdeviceptr);
static CUresult (*real_attrs)(unsigned int, CUpointer_attribute *, void **,
			      CUdeviceptr);
static CUresult (*real_range)(CUdeviceptr *, size_t *, CUdeviceptr);

static CUresult counting_attr(void *data, CUpointer_attribute a, CUdeviceptr p)
{
	COUNT(fake_cu.ptr_attr_calls);
	return real_attr(data, a, p);
}

static CUresult counting_attrs(unsigned int n, CUpointer_attribute *a,
			       void **data, CUdeviceptr p)
{
	COUNT(fake_cu.ptr_attrs_calls);
	return real_attrs(n, a, data, p);
}

static CUresult counting_range(CUdeviceptr *base, size_t *size, CUdeviceptr p)
{
	COUNT(fake_cu.range_calls);
	return real_range(base, size, p);
}

static int counting_cuda_load(struct gdr_cuda_ops *ops, unsigned int flags,
			      char *why, size_t n)
{
	int err = gdr_cuda_load(ops, flags, why, n);

	if (!err && ops->cuMemGetHandleForAddressRange) {
		real_export = ops->cuMemGetHandleForAddressRange;
		ops->cuMemGetHandleForAddressRange = counting_export;
	}
	if (!err && fake_cu.count_queries) {
		real_attr = ops->cuPointerGetAttribute;
		real_attrs = ops->cuPointerGetAttributes;
		real_range = ops->cuMemGetAddressRange;
		ops->cuPointerGetAttribute = counting_attr;
		ops->cuPointerGetAttributes = counting_attrs;
		if (real_range)
			ops->cuMemGetAddressRange = counting_range;
	}
	return err;
}

void fakes_install_real_cuda(void)
{
	struct gdr_seam s;

	model_install(NULL);
	gdr_seam_default(&s);
	snprintf(s.etc_root, sizeof(s.etc_root), "/nonexistent-etc");
	fake_verbs_table(&s.verbs);
	s.mlx5_load = fake_mlx5_load;
	s.cuda_load = counting_cuda_load;
	gdr_seam_install(&s);
}

void fakes_install(const struct fixture *f, const char *kernel,
		   const char *path, const char *debug)
{
	struct gdr_seam s;

	model_install(kernel);
	gdr_seam_default(&s);
	snprintf(s.sysfs_root, sizeof(s.sysfs_root), "%s", f->sys);
	snprintf(s.procfs_root, sizeof(s.procfs_root), "%s", f->proc);
	/* Never the machine's own /etc (a GPU machine has a cufile.json). */
	snprintf(s.etc_root, sizeof(s.etc_root), "%s/etc", f->root);
	snprintf(s.kernel_release, sizeof(s.kernel_release), "%s",
		 fake_model.kernel_release);
	s.cuda_load = fake_cuda_load;
	if (!fake_real_verbs) {
		fake_verbs_table(&s.verbs);
		s.mlx5_load = fake_mlx5_load;
	}
	s.gpu_c2c = gdr_model_gpu_c2c;
	s.gpu_bar1 = gdr_model_gpu_bar1;
	s.limits = gdr_model_limits;
	s.if_addrs = gdr_model_if_addrs;
	s.verbs_files = gdr_model_verbs_files;
	if (!fake_real_verbs)
		s.dmabuf_facts = fake_dmabuf_facts;
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
