/* SPDX-License-Identifier: MIT */
/*
 * The seam: the one place where the library reaches outside the process.
 * Production fills it from the running system; tests and snapshot replay
 * replace it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "os.h"

static struct gdr_seam seam;
static pthread_once_t seam_once = PTHREAD_ONCE_INIT;

void gdr_seam_default(struct gdr_seam *s)
{
	memset(s, 0, sizeof(*s));
	strcpy(s->sysfs_root, "/sys");
	strcpy(s->procfs_root, "/proc");
	strcpy(s->etc_root, "/etc");
	s->cuda_load = gdr_cuda_load;
	gdr_verbs_real(&s->verbs);
	s->mlx5_load = gdr_mlx5_load;
	s->gpu_c2c = gdr_nvml_c2c;
	s->gpu_bar1 = gdr_nvml_bar1;
	s->limits = gdr_process_limits;
	s->if_addrs = gdr_if_addrs;
	s->dmabuf_facts = gdr_dmabuf_facts_real;
	s->verbs_files = gdr_verbs_files;
	s->cufile_load = gdr_cufile_load;
	/* Ignores the environment in setuid/setgid processes. */
	s->getenv = secure_getenv;
	s->open_file = gdr_open_node;
	s->read_fd = read;
	s->read_link = gdr_readlink_node;
}

static int seam_ready; /* atomic: seam_init ran */

static void seam_init(void)
{
	gdr_seam_default(&seam);
	__atomic_store_n(&seam_ready, 1, __ATOMIC_RELEASE);
}

/* Asked by every registration and put: a load once it is set up. */
const struct gdr_seam *gdr_seam(void)
{
	if (!__atomic_load_n(&seam_ready, __ATOMIC_ACQUIRE))
		pthread_once(&seam_once, seam_init);
	return &seam;
}

void gdr_seam_set(const struct gdr_seam *s)
{
	pthread_once(&seam_once, seam_init);
	if (s)
		seam = *s;
	else
		gdr_seam_default(&seam);
}

const char *gdr_dev_name(struct ibv_context *ctx)
{
	const struct gdr_seam *s = gdr_seam();

	if (s->verbs.device_name && ctx && ctx->device)
		return s->verbs.device_name(ctx->device);
	return NULL;
}

const char *gdr_pd_name(struct ibv_pd *pd)
{
	const char *name = gdr_dev_name(pd->context);

	return name ? name : "the RDMA device";
}
