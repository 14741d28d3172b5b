/* SPDX-License-Identifier: MIT */
/*
 * The private interface (gpudirect-private.h): what gdr-info needs from
 * inside the library to capture a node, replay a snapshot of one, and read
 * a host's sysfs from a container.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpudirect-private.h"
#include "doctor.h"
#include "thresholds.h"

GDR_PUBLIC int gdr_private_model_read(struct gdr_model *m,
				      struct ibv_context *const *ctxs,
				      unsigned int num)
{
	const struct gdr_node *nd = gdr_node_get();
	const struct gdr_cuda *c = gdr_cuda_get(true);
	struct gdr_limits_view limits;
	unsigned int i;
	int d;

	memset(m, 0, sizeof(*m));
	gdr_fmt(m->kernel_release, sizeof(m->kernel_release), "%s",
		nd->kernel_release);
	if (c->state != GDR_CUDA_READY)
		gdr_fmt(m->cuda_error, sizeof(m->cuda_error), "%s", c->why);
	m->driver_version = c->state == GDR_CUDA_READY ? c->driver_version : 0;
	for (d = 0; c->state == GDR_CUDA_READY && d < c->num_devices &&
		    d < GDR_MODEL_MAX_GPUS;
	     d++) {
		const struct gdr_dev *dev = gdr_dev_get(d);
		struct gdr_model_gpu *g = &m->gpu[m->num_gpus++];
		struct gdr_bar1_view bar1;

		if (!dev)
			return ENOMEM;
		gdr_fmt(g->name, sizeof(g->name), "%s", dev->name);
		gdr_fmt(g->pci_bus_id, sizeof(g->pci_bus_id), "%s", dev->busid);
		g->dmabuf_supported = dev->dmabuf_attr;
		g->gpudirect_rdma_supported = dev->gdr_attr;
		g->gpudirect_rdma_with_vmm = dev->gdr_vmm_attr;
		g->c2c = dev->c2c == GDR_YES ? 1 : dev->c2c == GDR_NO ? 0 : -1;
		gdr_fmt(g->c2c_why, sizeof(g->c2c_why), "%s", dev->c2c_why);
		if (c->cu.cuDeviceTotalMem) {
			size_t bytes = 0;

			if (c->cu.cuDeviceTotalMem(&bytes, dev->dev) ==
			    CUDA_SUCCESS)
				g->total_mem = bytes;
		}
		gdr_bar1_read(dev, 0, &bar1);
		g->bar1_errno = bar1.err;
		gdr_fmt(g->bar1_why, sizeof(g->bar1_why), "%s", bar1.why);
		g->bar1_total = bar1.b.total;
		g->bar1_used = bar1.b.used;
		gdr_pcie_map_probe(d);
		g->pcie_mapping =
			gdr_pcie_map_get(d) == GDR_PCIE_MAP_OK ? CUDA_SUCCESS
			: gdr_pcie_map_get(d) == GDR_PCIE_MAP_UNSUPPORTED
				? CUDA_ERROR_NOT_SUPPORTED
				: -1;
	}
	gdr_limits_read(&limits);
	m->limits_errno = limits.err;
	gdr_fmt(m->limits_why, sizeof(m->limits_why), "%s", limits.why);
	m->memlock_soft = limits.l.memlock_soft;
	m->memlock_hard = limits.l.memlock_hard;
	m->nofile_soft = limits.l.nofile_soft;
	m->nofile_hard = limits.l.nofile_hard;
	m->cap_ipc_lock = limits.l.cap_ipc_lock;
	m->user_ns = limits.l.user_ns;
	m->fork_status = gdr_seam()->verbs.is_fork_initialized
				 ? gdr_seam()->verbs.is_fork_initialized()
				 : -1;
	m->libibverbs_dmabuf = nd->verbs_dmabuf;
	m->mlx5dv = gdr_mlx5_get()->present	       ? 2
		    : gdr_mlx5_get()->ops.is_supported ? 1
						       : 0;
	gdr_fmt(m->cufile_path, sizeof(m->cufile_path), "%s",
		gdr_env_cufile_json() ? gdr_env_cufile_json() : "");
	/* After libmlx5 is loaded (as the report's mlx5dv item does). */
	gdr_seam()->verbs_files(m->libibverbs_file, sizeof(m->libibverbs_file),
				m->libmlx5_file, sizeof(m->libmlx5_file));
	for (i = 0; i < num && i < GDR_MODEL_MAX_NICS; i++) {
		struct gdr_model_nic *n = &m->nic[m->num_nics++];
		struct gdr_nic_view v;

		gdr_nic_look(ctxs[i], &v);
		gdr_fmt(n->name, sizeof(n->name), "%s",
			v.name[0] ? v.name : "unknown");
		n->dmabuf_probe_errno = EIO;
		if (v.have_nic) {
			n->dmabuf_probe_errno =
				v.nic.dmabuf == GDR_YES ? EBADF : v.nic.err;
			n->mlx5 = v.nic.mlx5;
			n->data_direct_errno = v.nic.data_direct == GDR_YES ? 0
					       : v.nic.data_direct == GDR_NO
						       ? ENODEV
						       : v.nic.dd_err;
			gdr_fmt(n->data_direct_path,
				sizeof(n->data_direct_path), "%s",
				v.nic.dd_path);
		}
		if (v.have_port) {
			n->port_state = v.port.state;
			n->link_layer = v.port.link_layer;
		}
		n->max_mr_size = v.max_mr_size;
		n->addrs_errno =
			gdr_nic_netdev(n->name, n->netdev, sizeof(n->netdev));
		if (!n->addrs_errno)
			n->addrs_errno = gdr_seam()->if_addrs(
				n->netdev, n->addrs, sizeof(n->addrs));
	}
	return 0;
}

/* --- replay ------------------------------------------------------------- */

struct replay_nic {
	struct ibv_context ctx;
	struct ibv_device dev;
};

static struct replay_nic *replay_nics;
static struct ibv_context **replay_ctxs;

GDR_PUBLIC void gdr_private_replay_end(void)
{
	gdr_seam_install(NULL);
	free(replay_ctxs);
	free(replay_nics);
	replay_ctxs = NULL;
	replay_nics = NULL;
}

_Static_assert(GDR_PRIVATE_ENOTREG == GDR_ENOTREG,
	       "the private errno of a file that is not regular");

GDR_PUBLIC int gdr_private_replay(const struct gdr_model *m,
				  const struct gdr_files *files,
				  struct ibv_context ***ctxs, unsigned int *num,
				  char *why, size_t n)
{
	struct gdr_seam s;
	int i, count = m->num_nics;

	if (count < 0 || count > GDR_MODEL_MAX_NICS || m->num_gpus < 0 ||
	    m->num_gpus > GDR_MODEL_MAX_GPUS || !files || !files->open_file ||
	    !files->read_link) {
		gdr_fmt(why, n,
			"the model has %d GPUs and %d RDMA devices; at "
			"most %d and %d are allowed, with files to read",
			m->num_gpus, count, GDR_MODEL_MAX_GPUS,
			GDR_MODEL_MAX_NICS);
		return EINVAL;
	}
	gdr_private_replay_end();
	replay_nics = calloc((size_t)count + 1, sizeof(*replay_nics));
	replay_ctxs = calloc((size_t)count + 1, sizeof(*replay_ctxs));
	if (!replay_nics || !replay_ctxs) {
		gdr_private_replay_end();
		gdr_fmt(why, n, "out of memory");
		return ENOMEM;
	}
	for (i = 0; i < count; i++) {
		gdr_fmt(replay_nics[i].dev.name,
			sizeof(replay_nics[i].dev.name), "%s", m->nic[i].name);
		replay_nics[i].ctx.device = &replay_nics[i].dev;
		replay_ctxs[i] = &replay_nics[i].ctx;
	}
	gdr_model_use(m);
	gdr_seam_default(&s);
	gdr_fmt(s.sysfs_root, sizeof(s.sysfs_root), "/sys");
	gdr_fmt(s.procfs_root, sizeof(s.procfs_root), "/proc");
	gdr_fmt(s.etc_root, sizeof(s.etc_root), "/etc");
	gdr_fmt(s.kernel_release, sizeof(s.kernel_release), "%s",
		m->kernel_release[0] ? m->kernel_release : "unknown");
	s.cuda_load = gdr_model_cuda_load;
	gdr_model_verbs_ops(&s.verbs);
	s.mlx5_load = gdr_model_mlx5_load;
	s.gpu_c2c = gdr_model_gpu_c2c;
	s.gpu_bar1 = gdr_model_gpu_bar1;
	s.limits = gdr_model_limits;
	s.if_addrs = gdr_model_if_addrs;
	s.verbs_files = gdr_model_verbs_files;
	/* The capture's cufile.json, whatever this process's environment. */
	gdr_fmt(s.cufile_path, sizeof(s.cufile_path), "%s",
		m->cufile_path[0] ? m->cufile_path : "/etc/cufile.json");
	s.open_file = files->open_file;
	s.read_link = files->read_link;
	gdr_seam_install(&s);
	/* What each GPU answered to the PCIe mapping, as recorded: the
	 * report then asks nothing (a probe needs a context, an allocation
	 * and an export, none of which a snapshot has). Where the driver or
	 * the policy rules the mapping out, it stays untried, as live. */
	if (m->driver_version >= CUDA_PCIE_MAPPING_API &&
	    gdr_node_get()->pcie_policy != GDR_PCIE_OFF) {
		for (i = 0; i < m->num_gpus; i++) {
			if (m->gpu[i].pcie_mapping == CUDA_SUCCESS)
				gdr_pcie_map_set(i, GDR_PCIE_MAP_OK);
			else if (m->gpu[i].pcie_mapping ==
				 CUDA_ERROR_NOT_SUPPORTED)
				gdr_pcie_map_set(i, GDR_PCIE_MAP_UNSUPPORTED);
		}
	}
	*ctxs = replay_ctxs;
	*num = (unsigned int)count;
	return 0;
}

/* --- the host's files from a container ---------------------------------- */

GDR_PUBLIC int gdr_private_host_root(const char *dir, char *why, size_t n)
{
	struct gdr_seam s;
	char path[PATH_MAX], real[PATH_MAX];
	const char *sub[] = { "sys", "proc" };
	size_t i;
	int err, fd;

	/* Its real path: relative to where we are now, or through links. */
	if (!realpath(dir, real)) {
		gdr_fmt(why, n,
			"%s is not a directory (%s): mount the host's / there "
			"(a hostPath volume of / at %s)",
			dir, strerror(errno), dir);
		return ENOENT;
	}
	err = gdr_open_root_set(real);
	if (err) {
		gdr_fmt(why, n, "%s: %s", real, strerror(err));
		return err;
	}
	/* DIR/sys and DIR/proc as every read will find them: inside DIR (a
	 * link to /sys leads to DIR/sys again, never to the container's). */
	for (i = 0; i < 2; i++) {
		gdr_fmt(path, sizeof(path), "%s/%s", real, sub[i]);
		fd = gdr_open_node(path);
		err = fd < 0 ? errno : 0;
		if (fd >= 0) {
			struct stat st;

			if (fstat(fd, &st) || !S_ISDIR(st.st_mode))
				err = ENOTDIR;
			close(fd);
		}
		if (err) {
			gdr_open_root_set(NULL);
			gdr_fmt(why, n,
				"%s is not a directory inside %s (%s): mount "
				"the host's /%s there (a hostPath volume of / "
				"at %s)",
				path, dir, gdr_errno_name(err), sub[i], dir);
			return ENOENT;
		}
	}
	gdr_seam_default(&s);
	gdr_fmt(s.sysfs_root, sizeof(s.sysfs_root), "%s/sys", real);
	gdr_fmt(s.procfs_root, sizeof(s.procfs_root), "%s/proc", real);
	gdr_fmt(s.etc_root, sizeof(s.etc_root), "%s/etc", real);
	gdr_seam_install(&s);
	return 0;
}

/* --- recording what is read ------------------------------------------- */

#define MAX_PATHS 4096

static pthread_mutex_t rec_lock = PTHREAD_MUTEX_INITIALIZER;
static char *rec_paths[MAX_PATHS];
static unsigned int rec_num;
static struct gdr_seam rec_inner;

static void remember(const char *path)
{
	unsigned int i;
	char *copy = strdup(path);

	if (!copy)
		return;
	pthread_mutex_lock(&rec_lock);
	for (i = 0; i < rec_num; i++)
		if (!strcmp(rec_paths[i], path))
			break;
	if (i == rec_num && rec_num < MAX_PATHS) {
		rec_paths[rec_num++] = copy;
		copy = NULL;
	}
	pthread_mutex_unlock(&rec_lock);
	free(copy);
}

static int rec_open(const char *path)
{
	int fd = rec_inner.open_file(path);

	if (fd >= 0)
		remember(path);
	return fd;
}

static ssize_t rec_link(const char *path, char *buf, size_t n)
{
	ssize_t r = rec_inner.read_link(path, buf, n);

	if (r >= 0)
		remember(path);
	return r;
}

GDR_PUBLIC int gdr_private_record(void)
{
	struct gdr_seam s = *gdr_seam();

	if (s.open_file == rec_open)
		return 0;
	rec_inner = s;
	s.open_file = rec_open;
	s.read_link = rec_link;
	gdr_seam_install(&s);
	return 0;
}

GDR_PUBLIC int gdr_private_open(const char *path)
{
	return gdr_open_node(path);
}

GDR_PUBLIC int gdr_private_lstat(const char *path, struct stat *st)
{
	return gdr_lstat_node(path, st);
}

GDR_PUBLIC ssize_t gdr_private_readlink(const char *path, char *buf, size_t n)
{
	return gdr_readlink_node(path, buf, n);
}

GDR_PUBLIC unsigned int gdr_private_recorded(const char *const **paths)
{
	unsigned int n;

	pthread_mutex_lock(&rec_lock);
	n = rec_num;
	pthread_mutex_unlock(&rec_lock);
	*paths = (const char *const *)rec_paths;
	return n;
}

GDR_PUBLIC struct gdr_report *
gdr_private_report_create(struct ibv_context *const *ctxs,
			  unsigned int num_ctxs, struct ibv_context *const *all,
			  unsigned int num_all)
{
	gdr_clear_error();
	return gdr_report_ranked(ctxs, num_ctxs, all, num_all, 0);
}

GDR_PUBLIC int gdr_private_reg_device(struct ibv_pd *pd, void *addr, size_t len,
				      uint64_t iova, int access,
				      struct ibv_mr **mr, char *why, size_t n)
{
	return gdr_register_device_iova(pd, addr, len, iova, access, mr, why,
					n);
}

GDR_PUBLIC void gdr_private_preload_env(int *off, int *debug)
{
	bool o, d;

	gdr_env_preload(&o, &d);
	*off = o;
	*debug = d;
}

GDR_PUBLIC int gdr_private_storage_check(struct gdr_storage *st,
					 const char *const *paths,
					 unsigned int num,
					 unsigned long long bytes,
					 unsigned int timeout_ms, int gpu)
{
	if (!st || (num && !paths) || gpu < 0)
		return EINVAL;
	return gdr_storage_check(st, paths, num, bytes, timeout_ms, gpu);
}

GDR_PUBLIC int gdr_private_storage_report(struct gdr_report *r,
					  const struct gdr_storage *st,
					  struct ibv_context *const *ctxs,
					  unsigned int num)
{
	if (!r || !st || (num && !ctxs))
		return EINVAL;
	return gdr_storage_report(r, st, ctxs, num);
}

GDR_PUBLIC int gdr_private_storage_stuck(void)
{
	return gdr_storage_stuck();
}
