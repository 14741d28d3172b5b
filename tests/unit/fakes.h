/* SPDX-License-Identifier: MIT */
/*
 * Fakes for the seam. The node-level answers (GPUs, their attributes, the
 * driver version, the RDMA devices' probe answers and ports) come from the
 * library's own modelled node (lib/model.c), the one gdr-info replays
 * snapshots with; on top of it these add what registrations need: a CUDA
 * driver with allocations, contexts and exports, a verbs provider that
 * records its calls, fault injection, and fixture sysfs/procfs trees.
 */
#ifndef GDR_TEST_FAKES_H
#define GDR_TEST_FAKES_H

#include "internal.h"
#include "private/gpudirect-private.h"

#define FAKE_MAX_DEVS 4
#define FAKE_MAX_ALLOCS 256
#define FAKE_MAX_RESERVATIONS 8
/* The kernel release fakes_install(..., NULL, ...) gives the node. */
#define FAKE_KERNEL "6.1.0-57-amd64"

/*
 * One mapping of memory the fake driver knows, answered as the H200 answers
 * (tests/conform/record-h200.txt, checked by test-conform):
 *  - cuMemAlloc memory: RANGE_START/SIZE and cuMemGetAddressRange are the
 *    allocation; MAPPING_* the 2 MiB pages under it;
 *  - VMM memory: RANGE_START/SIZE are the whole reservation (res_*), the
 *    same at every chunk; cuMemGetAddressRange and MAPPING_* the mapping;
 *    BUFFER_ID that of the physical allocation mapped there; no context;
 *  - pool memory: RANGE and cuMemGetAddressRange the allocation, MAPPING_*
 *    the pool's chunk; no context; not GPUDirect RDMA capable by default.
 */
struct fake_alloc {
	uintptr_t start;
	size_t size; /* 0: freed */
	int device;
	unsigned int type; /* CU_MEMORYTYPE_* */
	int managed;
	int pool;
	int vmm;      /* no owning context */
	int not_rdma; /* not GPUDirect RDMA capable */
	/* mapped from another process with cuIpcOpenMemHandle (with
	 * not_rdma: neither RDMA nor IPC capable here, as measured) */
	int ipc_imported;
	unsigned long long buffer_id;
	/* VMM: the reservation holding the mapping (0: the mapping itself) */
	uintptr_t res_start;
	size_t res_size;
	/* MAPPING_BASE_ADDR/SIZE (0: start, size rounded up to 2 MiB) */
	uintptr_t map_start;
	size_t map_size;
	unsigned long long block_id; /* MEMORY_BLOCK_ID (0: buffer_id) */
	unsigned long long handle;   /* VMM: the cuMemCreate handle */
};

/*
 * The node (GPUs, driver version, whether libcuda loads, the NIC's answers)
 * is fake_model, reset by fakes_reset() to a healthy H200-like node with an
 * mlx5-like NIC; a test writes it directly. What follows is the process and
 * its memory, which a model does not hold.
 */
struct fake_cuda {
	int not_loaded;	     /* libcuda.so.1 not loaded by the application */
	int not_initialized; /* the driver answers CUDA_ERROR_NOT_INITIALIZED
			      * (cuInit not called; a forked child) */
	CUresult init_result;
	int init_delay_ms;    /* cuInit takes this long */
	int init_forks;	      /* cuInit forks; the child registers host
			      * memory and exits with 0 on success */
	int no_export_entry;  /* cuMemGetHandleForAddressRange missing */
	int no_ctx_set_flags; /* cuCtxSetFlags missing (driver < 12.1) */
	CUresult export_result;
	CUresult attrs_result;
	CUresult set_attr_result;
	int pop_fails;		 /* this many cuCtxPopCurrent calls fail */
	CUresult dev_get_result; /* what cuDeviceGet answers, if not 0 */
	struct fake_alloc allocs[FAKE_MAX_ALLOCS];
	int num_allocs;
	/* observed */
	int flagged_exports; /* exports asking for the PCIe mapping */
	/* cuPointerGetAttribute, cuPointerGetAttributes, cuMemGetAddressRange
	 * (on the real driver only with count_queries set) */
	int ptr_attr_calls, ptr_attrs_calls, range_calls;
	int count_queries;
	int inits, loads, noload_loads, exports, set_attr_calls, push_calls,
		pop_calls, retains, releases, set_flags_calls;
	int primary_refs[FAKE_MAX_DEVS];
	unsigned int ctx_flags[FAKE_MAX_DEVS]; /* of contexts 0x2000 + dev */
	uintptr_t last_export_base;
	size_t last_export_size;
	CUcontext ctx_at_export;
	int init_child_status; /* exit status of the child init_forks made */
};

struct fake_verbs {
	int probe_mr;	  /* the probe gets an MR back */
	int dmabuf_errno; /* 0: real calls succeed */
	int reg_errno;	  /* 0: ibv_reg_mr_iova2 succeeds */
	int dereg_errno;
	int mlx5_reg_errno; /* mlx5dv_reg_dmabuf_mr fails with this */
	/* observed */
	int mlx5_reg_calls, last_mlx5_access;
	int probes, dmabuf_calls, reg_calls, live_mrs;
	uint64_t last_offset, last_iova;
	size_t last_len;
	int last_fd, last_access;
	int last_fd_open; /* the fd was open during the call */
	int lean;	  /* skip the fdinfo look-up (benchmarks) */
	/* called by each registration (not the probe) before it answers */
	void (*reg_hook)(void);
	/* called with each MR a registration makes, before it is returned */
	void (*mr_hook)(struct ibv_mr *mr);
	/* called by each release before it answers (it may set dereg_errno) */
	void (*dereg_hook)(void);
	int no_hold; /* MRs keep no dup of the dma-buf fd (100k-entry bench) */
	/* A released MR's memory becomes PROT_NONE, never reused: whoever
	 * reads an MR after its ibv_dereg_mr crashes, with or without a
	 * sanitizer (libibverbs frees it). */
	int guard_freed;
	char last_exp_name[64];	 /* fdinfo exp_name of the fd passed */
	size_t last_dmabuf_size; /* fdinfo size of the fd passed */
};

extern struct fake_cuda fake_cu;
extern struct gdr_model fake_model;
/* The calling thread's current context, as the fake driver sees it. */
extern __thread CUcontext fake_current;
extern struct fake_verbs fake_ibv;
extern struct ibv_device fake_device;
extern struct ibv_context fake_context;
extern struct ibv_pd fake_pd;

/* Contexts: the primary context of GPU d, and another context on it. */
#define FAKE_PRIMARY(d) ((CUcontext)(uintptr_t)(0x1000 + (d)))
#define FAKE_OTHER_CTX(d) ((CUcontext)(uintptr_t)(0x2000 + (d)))

/* Reset the fakes to a healthy H200-like node with an mlx5-like NIC. */
void fakes_reset(void);
/*
 * Another RDMA device of the node: its verbs objects (the PD is &n->pd),
 * and, unless @in_model is 0 (a device the node does not know: no path),
 * its entry in fake_model, a copy of the default NIC's answers, returned
 * for the test to change. Call between fakes_reset() and fakes_install().
 */
struct fake_nic {
	struct ibv_device dev;
	struct ibv_context ctx;
	struct ibv_pd pd;
};
struct gdr_model_nic *fake_add_nic(struct fake_nic *n, const char *name,
				   int in_model);

/* The node has no libcuda.so.1 (fake_model.cuda_error says so). */
void fakes_no_libcuda(void);
/* A fake device allocation; returns its address. */
void *fake_alloc_device(int device, size_t size);
struct fake_alloc *fake_add_alloc(uintptr_t start, size_t size, int device,
				  unsigned int type);
/* Give the allocation holding @p a new buffer id (freed and reallocated). */
void fake_realloc(void *p);
/* Forget the allocation holding @p (freed: the driver no longer knows it). */
void fake_free(void *p);
/*
 * A VMM reservation of @n chunks of @chunk bytes on @device, each its own
 * physical allocation mapped side by side (GPUDirect RDMA capable unless
 * @not_rdma); the address of the reservation.
 */
void *fake_vmm(int device, unsigned int n, size_t chunk, int not_rdma);
/* Replace the VMM chunk mapped at @p by a new physical allocation. */
void fake_vmm_replace(void *p);

/*
 * The application's side of the fake driver (cuMemAlloc, cuMemCreate,
 * cuMemMap, cuMemAllocAsync, ...), for the conformance scenarios.
 */
struct conf_app;
void fake_conf_app(struct conf_app *app);

/* A fixture root with sys/ and proc/ below it. */
struct fixture {
	char root[128];
	char sys[160];
	char proc[160];
};
int fixture_make(struct fixture *f);
/* Write @text to @rel below @base, creating directories. */
int fixture_write(const char *base, const char *rel, const char *text);
/* Give RDMA device @name a PCI parent @bdf in the fixture's sysfs. */
int fixture_nic_pci(const struct fixture *f, const char *name, const char *bdf);
/* A PCI function at @chain ("pci0000:00/0000:00:01.0/0000:01:00.0")
 * on NUMA node @numa, with its /sys/bus/pci/devices link. */
int fixture_pci(const struct fixture *f, const char *chain, int numa);
void fixture_remove(struct fixture *f);

#define NV_OPEN                                                                \
	"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "            \
	"580.159.04  Release Build  (dvs-builder@U22)  Thu Oct 30 2025\n"      \
	"GCC version:  gcc version 12.3.0\n"
#define NV_PROPRIETARY                                                         \
	"NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug " \
	"19 01:15:15 UTC 2023\nGCC version:  gcc version 12.3.0\n"

/*
 * Fault injection: with fault_at = N, the Nth call into the outside world
 * (each fake CUDA and verbs entry point, cuda_load, each file open, read
 * and readlink, and the allocations of tests that arm fault_alloc) fails.
 * fault_calls counts the calls seen; fault_where names the one that
 * failed.
 */
extern long fault_at, fault_calls;
extern int fault_alloc;
extern const char *fault_where;
int fault_inject(const char *name);

/* Set before fakes_install: keep the real libibverbs (guest tests). */
extern int fake_real_verbs;

/* Install a seam over the fixture and the fakes; env values may be NULL. */
void fakes_install(const struct fixture *f, const char *kernel,
		   const char *env_path, const char *env_debug);
/* Set another environment variable for the next fakes_install. */
void fakes_setenv(const char *name, const char *value);

/* The real CUDA driver, sysfs and procfs, with the recording verbs. */
void fakes_install_real_cuda(void);

/* Open file descriptors of this process. */
int count_fds(void);
/* The depth of the calling thread's fake context stack. */
int fake_ctx_depth(void);
/*
 * Append a gdr_last_error() text to the file named by GDR_MESSAGES_OUT,
 * when set: tests/unit/check-docs.py checks each against docs/errors.md.
 */
void log_message(const char *msg);
/* A public call returned @err: appended to $GDR_ERRNOS_OUT, for the errno
 * contract check (tests/unit/check-errnos.py). */
void errno_seen(const char *call, int err);

#endif
