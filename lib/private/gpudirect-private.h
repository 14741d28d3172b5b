/* SPDX-License-Identifier: MIT */
/*
 * libgpudirect's private interface, for the programs built from this tree
 * (gdr-info) and its tests. It is not installed and has no stability
 * promise: the symbols are exported under the version node
 * GPUDIRECT_PRIVATE_<major>.<minor> of this release only, so a program
 * built against another release's private interface fails to load instead
 * of misbehaving (rdma-core's IBVERBS_PRIVATE_* scheme).
 */
#ifndef GPUDIRECT_PRIVATE_H
#define GPUDIRECT_PRIVATE_H

#include <sys/types.h>

#include <gpudirect.h>

/* The modelled node (struct gdr_model): the doctor layer's types. */
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Fill @m with what this node answers for @ctxs (starting CUDA, as the
 * report does). 0 or an errno.
 */
int gdr_private_model_read(struct gdr_model *m, struct ibv_context *const *ctxs,
			   unsigned int num);

/*
 * Where a replay reads the node's files: an open(2) and a readlink(2) of
 * the node's own paths ("/sys/...", "/proc/..."), served from memory by
 * the caller (gdr-info's snapshot tree). open_file answers an fd the
 * library reads and closes, or -1 with errno: ENOENT, or
 * GDR_PRIVATE_ENOTREG for what is not a regular file.
 */
struct gdr_files {
	int (*open_file)(const char *path);
	ssize_t (*read_link)(const char *path, char *buf, size_t n);
};

/* The errno of a file that is not a regular file (a FIFO, a device). */
#define GDR_PRIVATE_ENOTREG 4097

/*
 * Answer from @m from now on, reading the node's files through @files.
 * @m and @files must outlive their use. The model's RDMA devices are
 * returned in @ctxs (@num entries, owned by the library until
 * gdr_private_replay_end()). 0 or an errno with the reason in @why.
 */
int gdr_private_replay(const struct gdr_model *m, const struct gdr_files *files,
		       struct ibv_context ***ctxs, unsigned int *num, char *why,
		       size_t n);
/* Back to the live node; frees what gdr_private_replay() returned. */
void gdr_private_replay_end(void);

/*
 * Read the host's sysfs and procfs below @dir (@dir/sys, @dir/proc; a
 * container that mounts the host's / at /host), CUDA and verbs live. @dir
 * may be relative or a link: the library keeps its real path. The report
 * still shows the host's own paths. 0 or an errno with @why.
 */
int gdr_private_host_root(const char *dir, char *why, size_t n);

/*
 * From now on remember every file and link the library reads (below the
 * roots in force). gdr_private_recorded() lists them, the real paths as
 * opened, in the order first read; the strings stay valid.
 */
int gdr_private_record(void);
unsigned int gdr_private_recorded(const char *const **paths);

/*
 * Open the node's file @path for reading as the library does: a regular
 * file or directory only, checked before it is opened, and resolved
 * inside the --host-root in force. An fd, or -1 with errno.
 */
int gdr_private_open(const char *path);
/*
 * lstat(2) and readlink(2) of the node's @path as the library resolves it:
 * inside the --host-root in force (a link on the way never leads out of
 * it), the last name not followed. 0 or an errno; the length or -1 with
 * errno.
 */
struct stat;
int gdr_private_lstat(const char *path, struct stat *st);
ssize_t gdr_private_readlink(const char *path, char *buf, size_t n);

/*
 * gdr_report_create() of @ctxs, with each GPU's nearest_rdma ranked among
 * @all (gdr-info -d: the report shows one device, the nearest are the
 * node's).
 */
struct gdr_report *gdr_private_report_create(struct ibv_context *const *ctxs,
					     unsigned int num_ctxs,
					     struct ibv_context *const *all,
					     unsigned int num_all);

/*
 * For libgpudirect-preload.so: register [@addr, +@len) if it is device
 * memory the library registers (cuMemAlloc, VMM, capable pool memory),
 * with exactly @access at @iova, through the library's walk. 0 and *@mr;
 * ENXIO with *@mr NULL and @why "" when it is not device memory (host,
 * managed, unknown to CUDA: the caller goes to libibverbs); else an errno
 * with the reason in @why (device memory no path took, or that the
 * library refuses: not RDMA capable, CUDA IPC, past its allocation).
 * Never loads CUDA; gdr_last_error() untouched.
 */
int gdr_private_reg_device(struct ibv_pd *pd, void *addr, size_t len,
			   uint64_t iova, int access, struct ibv_mr **mr,
			   char *why, size_t n);

/* For libgpudirect-preload.so: *@off when GPUDIRECT_PRELOAD=0, *@debug
 * when GPUDIRECT_DEBUG asks for every decision. */
void gdr_private_preload_env(int *off, int *debug);

/*
 * gdr-info --storage: look at each of @paths (a directory or a regular
 * file on the mount to check), load cuFile, and write and read each
 * through cuFile into GPU @gpu's memory (@bytes, 0: 64 MiB; a named file
 * is only read), each step given at most @timeout_ms (0: 30 s). Fills
 * @st, which --capture keeps and --from replays. Starts CUDA. 0 or an
 * errno.
 */
int gdr_private_storage_check(struct gdr_storage *st, const char *const *paths,
			      unsigned int num, unsigned long long bytes,
			      unsigned int timeout_ms, int gpu);
/* Add @st's items to @r (sections "storage" and "storageN"), the RDMA
 * device of each path found among @ctxs. 0, EINVAL (@r or @st NULL, or
 * @num devices with no @ctxs) or ENOMEM. */
int gdr_private_storage_report(struct gdr_report *r,
			       const struct gdr_storage *st,
			       struct ibv_context *const *ctxs,
			       unsigned int num);
/* 1 when a step of a storage check did not return and its thread is
 * still inside it: end the process with _exit() after flushing, not
 * exit(), whose handlers could meet that thread. */
int gdr_private_storage_stuck(void);

#ifdef __cplusplus
}
#endif

#endif /* GPUDIRECT_PRIVATE_H */
