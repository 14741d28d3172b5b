/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "json.h"
#include "snapshot.h"

#define MAX_PATHS 4096

static char *paths[MAX_PATHS];
static unsigned int num_paths;
static pthread_mutex_t paths_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gdr_seam real;

static void remember(const char *path)
{
	unsigned int i;

	pthread_mutex_lock(&paths_lock);
	for (i = 0; i < num_paths; i++)
		if (!strcmp(paths[i], path))
			break;
	if (i == num_paths && num_paths < MAX_PATHS) {
		paths[num_paths] = strdup(path);
		if (paths[num_paths])
			num_paths++;
	}
	pthread_mutex_unlock(&paths_lock);
}

static int rec_open(const char *path)
{
	int fd = real.open_file(path);

	if (fd >= 0)
		remember(path);
	return fd;
}

static ssize_t rec_link(const char *path, char *buf, size_t n)
{
	ssize_t r = real.read_link(path, buf, n);

	if (r >= 0)
		remember(path);
	return r;
}

void snapshot_record(void)
{
	struct gdr_seam s;

	gdr_seam_default(&real);
	s = real;
	s.open_file = rec_open;
	s.read_link = rec_link;
	gdr_seam_install(&s);
}

static int run(char *const argv[])
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int mkdirs(const char *dir)
{
	char tmp[PATH_MAX], *p;

	snprintf(tmp, sizeof(tmp), "%s", dir);
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(tmp, 0755) && errno != EEXIST ? -1 : 0;
}

/* Copy the symbolic links on @path's way, then the file or directory. */
static int store(const char *out, const char *path)
{
	char prefix[PATH_MAX], real_dir[PATH_MAX], dest[PATH_MAX * 2 + 2];
	char link[PATH_MAX], *slash, buf[65536];
	struct stat st;
	ssize_t r;
	int in, fd;

	snprintf(prefix, sizeof(prefix), "%s", path);
	for (slash = strchr(prefix + 1, '/');; slash = strchr(slash + 1, '/')) {
		if (slash)
			*slash = '\0';
		if (!lstat(prefix, &st) && S_ISLNK(st.st_mode)) {
			char parent[PATH_MAX], *base = strrchr(prefix, '/');

			r = readlink(prefix, link, sizeof(link) - 1);
			*base = '\0';
			if (r < 0 || !realpath(prefix[0] ? prefix : "/", parent))
				return -1;
			*base = '/';
			link[r] = '\0';
			snprintf(dest, sizeof(dest), "%s%s", out, parent);
			if (mkdirs(dest))
				return -1;
			snprintf(dest, sizeof(dest), "%s%s%s", out, parent, base);
			if (symlink(link, dest) && errno != EEXIST)
				return -1;
		}
		if (!slash)
			break;
		*slash = '/';
	}
	if (lstat(path, &st) || S_ISLNK(st.st_mode))
		return 0; /* the link itself was what was read */
	if (!realpath(path, real_dir))
		return -1;
	snprintf(dest, sizeof(dest), "%s%s", out, real_dir);
	if (S_ISDIR(st.st_mode))
		return mkdirs(dest);
	*strrchr(dest, '/') = '\0';
	if (mkdirs(dest))
		return -1;
	snprintf(dest, sizeof(dest), "%s%s", out, real_dir);
	in = open(path, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	fd = open(dest, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		close(in);
		return -1;
	}
	r = read(in, buf, sizeof(buf));
	if (r > 0 && write(fd, buf, (size_t)r) != r)
		r = -1;
	close(in);
	if (close(fd) || r < 0)
		return -1;
	return 0;
}

static void json_text(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static int answers(const char *file, struct ibv_context *const *ctxs,
		   unsigned int num)
{
	const struct gdr_node *nd = gdr_node_get();
	const struct gdr_seam *s = gdr_seam();
	FILE *f = fopen(file, "w");
	unsigned int i;
	int d;

	if (!f)
		return -1;
	fprintf(f, "{\n  \"format\": \"libgpudirect-snapshot\",\n"
		   "  \"version\": 1,\n  \"kernel_release\": ");
	json_text(f, nd->kernel_release);
	fprintf(f, ",\n  \"cuda\": {\"error\": ");
	json_text(f, nd->cuda_ok ? "" : nd->cuda_why);
	fprintf(f, ", \"driver_version\": %d, \"devices\": [", nd->driver_version);
	for (d = 0; d < nd->num_devices; d++) {
		const struct gdr_dev *dev = gdr_dev_get(d);

		fprintf(f, "%s\n    {\"name\": ", d ? "," : "");
		json_text(f, dev->name);
		fprintf(f, ", \"pci_bus_id\": ");
		json_text(f, dev->busid);
		fprintf(f, ", \"dmabuf_supported\": %d, "
			   "\"gpudirect_rdma_supported\": %d, "
			   "\"gpudirect_rdma_with_vmm\": %d}",
			dev->dmabuf_attr, dev->gdr_attr, dev->gdr_vmm_attr);
	}
	fprintf(f, "]},\n  \"libibverbs_dmabuf\": %s,\n  \"rdma_devices\": [",
		nd->verbs_dmabuf ? "true" : "false");
	for (i = 0; i < num; i++) {
		struct ibv_port_attr port;
		const struct gdr_nic *nic = NULL;
		struct ibv_pd *pd = s->verbs.alloc_pd(ctxs[i]);

		if (pd) {
			nic = gdr_nic_get(pd);
			s->verbs.dealloc_pd(pd);
		}
		memset(&port, 0, sizeof(port));
		s->verbs.query_port(ctxs[i], 1, &port);
		fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
		json_text(f, s->verbs.device_name(ctxs[i]->device));
		fprintf(f, ", \"dmabuf_probe_errno\": %d, \"port_state\": %d, "
			   "\"link_layer\": %d}",
			nic ? (nic->dmabuf == GDR_YES ? EBADF : nic->err) : EIO,
			port.state, port.link_layer);
	}
	fprintf(f, "\n  ]\n}\n");
	return fclose(f);
}

int snapshot_capture(const char *file, struct ibv_context *const *ctxs,
		     unsigned int num, char *err, size_t n)
{
	char tmpl[] = "/tmp/gdr-capture.XXXXXX", ans[64];
	char *tar[] = { "tar", "-cf", (char *)file, "-C", tmpl, ".", NULL };
	unsigned int i, bad = 0;

	if (!mkdtemp(tmpl)) {
		snprintf(err, n, "mkdtemp: %s", strerror(errno));
		return -1;
	}
	for (i = 0; i < num_paths; i++)
		bad += store(tmpl, paths[i]) != 0;
	snprintf(ans, sizeof(ans), "%s/answers.json", tmpl);
	if (answers(ans, ctxs, num) || run(tar)) {
		snprintf(err, n, "writing %s failed", file);
		snapshot_remove(tmpl);
		return -1;
	}
	snapshot_remove(tmpl);
	if (bad)
		snprintf(err, n, "%u of %u files could not be copied", bad,
			 num_paths);
	else
		snprintf(err, n, "%u files and the CUDA/verbs answers", num_paths);
	return 0;
}

char *snapshot_extract(const char *file, char *err, size_t n)
{
	char *dir = strdup("/tmp/gdr-snapshot.XXXXXX");
	char *tar[] = { "tar", "-xf", (char *)file, "-C", dir, NULL };

	if (!dir || !mkdtemp(dir)) {
		snprintf(err, n, "mkdtemp: %s", strerror(errno));
		free(dir);
		return NULL;
	}
	tar[4] = dir;
	if (run(tar)) {
		snprintf(err, n, "cannot unpack %s (is it a gdr-info --capture "
				 "file?)", file);
		snapshot_remove(dir);
		free(dir);
		return NULL;
	}
	return dir;
}

void snapshot_remove(const char *dir)
{
	char *rm[] = { "rm", "-rf", (char *)dir, NULL };

	if (run(rm))
		fprintf(stderr, "gdr-info: could not remove %s\n", dir);
}

/* --- replay --------------------------------------------------------------- */
#define MAX_GPUS 16
#define MAX_NICS 32

static struct {
	int driver_version, num;
	char error[256];
	struct {
		char name[128], busid[32];
		int dmabuf, gdr, vmm;
	} gpu[MAX_GPUS];
} rc;

struct replay_nic {
	struct ibv_context ctx;
	struct ibv_device dev;
	int probe_errno, state, link_layer;
};

static CUresult r_ok(void) { return CUDA_SUCCESS; }
static CUresult r_init(unsigned int f) { (void)f; return CUDA_SUCCESS; }
static CUresult r_version(int *v) { *v = rc.driver_version; return CUDA_SUCCESS; }
static CUresult r_count(int *v) { *v = rc.num; return CUDA_SUCCESS; }
static CUresult r_get(CUdevice *d, int o)
{
	if (o < 0 || o >= rc.num)
		return CUDA_ERROR_INVALID_DEVICE;
	*d = o;
	return CUDA_SUCCESS;
}
static CUresult r_attr(int *v, CUdevice_attribute a, CUdevice d)
{
	*v = a == CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED ? rc.gpu[d].dmabuf
	     : a == CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED ? rc.gpu[d].gdr
	     : a == CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED
		     ? rc.gpu[d].vmm
		     : 0;
	return CUDA_SUCCESS;
}
static CUresult r_name(char *s, int n, CUdevice d)
{
	snprintf(s, (size_t)n, "%s", rc.gpu[d].name);
	return CUDA_SUCCESS;
}
static CUresult r_busid(char *s, int n, CUdevice d)
{
	snprintf(s, (size_t)n, "%s", rc.gpu[d].busid);
	return CUDA_SUCCESS;
}
static CUresult r_unsupported(void) { return CUDA_ERROR_NOT_SUPPORTED; }

static int replay_cuda(struct gdr_cuda_ops *ops, char *why, size_t n)
{
	memset(ops, 0, sizeof(*ops));
	if (rc.error[0]) {
		snprintf(why, n, "%s", rc.error);
		return -1;
	}
	ops->cuInit = r_init;
	ops->cuDriverGetVersion = r_version;
	ops->cuDeviceGetCount = r_count;
	ops->cuDeviceGet = r_get;
	ops->cuDeviceGetAttribute = r_attr;
	ops->cuDeviceGetName = r_name;
	ops->cuDeviceGetPCIBusId = r_busid;
	/* The report never calls these; they exist so that the entry points
	 * a real driver of that version has are present. */
	ops->cuPointerGetAttributes = (void *)r_unsupported;
	ops->cuPointerSetAttribute = (void *)r_unsupported;
	ops->cuDevicePrimaryCtxRetain = (void *)r_unsupported;
	ops->cuCtxGetCurrent = (void *)r_unsupported;
	ops->cuCtxPushCurrent = (void *)r_unsupported;
	ops->cuCtxPopCurrent = (void *)r_unsupported;
	if (rc.driver_version >= 11070)
		ops->cuMemGetHandleForAddressRange = (void *)r_unsupported;
	(void)r_ok;
	return 0;
}

static struct replay_nic *nic_of(struct ibv_context *ctx)
{
	return (struct replay_nic *)ctx; /* ctx is the first member */
}

static struct ibv_pd *v_alloc_pd(struct ibv_context *ctx)
{
	struct ibv_pd *pd = calloc(1, sizeof(*pd));

	if (pd)
		pd->context = ctx;
	return pd;
}
static int v_dealloc_pd(struct ibv_pd *pd) { free(pd); return 0; }
static struct ibv_mr *v_dmabuf(struct ibv_pd *pd, uint64_t o, size_t l,
			       uint64_t i, int fd, int a)
{
	errno = nic_of(pd->context)->probe_errno;
	return NULL;
}
static struct ibv_mr *v_reg(struct ibv_pd *pd, void *p, size_t l, uint64_t i,
			    unsigned int a)
{
	errno = EOPNOTSUPP; /* a snapshot registers nothing */
	return NULL;
}
static int v_dereg(struct ibv_mr *mr) { return EINVAL; }
static int v_query_port(struct ibv_context *ctx, uint8_t p,
			struct ibv_port_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->state = (enum ibv_port_state)nic_of(ctx)->state;
	a->link_layer = (uint8_t)nic_of(ctx)->link_layer;
	return 0;
}
static int v_query_device(struct ibv_context *ctx, struct ibv_device_attr *a)
{
	memset(a, 0, sizeof(*a));
	return 0;
}
static const char *v_name(struct ibv_device *d) { return d->name; }

int snapshot_replay(const char *dir, struct ibv_context ***ctxs,
		    unsigned int *num, char *err, size_t n)
{
	char path[PATH_MAX], *text;
	const struct json *cuda, *arr, *e;
	struct json *root;
	struct gdr_seam s;
	unsigned int count = 0;
	FILE *f;
	long len;

	snprintf(path, sizeof(path), "%s/answers.json", dir);
	f = fopen(path, "r");
	if (!f) {
		snprintf(err, n, "%s: %s (not a snapshot?)", path, strerror(errno));
		return -1;
	}
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	text = len > 0 && len < (1 << 20) ? calloc(1, (size_t)len + 1) : NULL;
	if (!text || fread(text, 1, (size_t)len, f) != (size_t)len) {
		fclose(f);
		free(text);
		snprintf(err, n, "%s: cannot read", path);
		return -1;
	}
	fclose(f);
	root = json_parse(text, err, n);
	free(text);
	if (!root)
		return -1;
	if (strcmp(json_str(root, "format", ""), "libgpudirect-snapshot") ||
	    json_num(root, "version", 0) != 1) {
		snprintf(err, n, "%s: not a libgpudirect-snapshot version 1", path);
		json_free(root);
		return -1;
	}
	gdr_seam_default(&s);
	snprintf(s.sysfs_root, sizeof(s.sysfs_root), "%s/sys", dir);
	snprintf(s.procfs_root, sizeof(s.procfs_root), "%s/proc", dir);
	snprintf(s.kernel_release, sizeof(s.kernel_release), "%s",
		 json_str(root, "kernel_release", "unknown"));
	memset(&rc, 0, sizeof(rc));
	cuda = json_get(root, "cuda");
	snprintf(rc.error, sizeof(rc.error), "%s", json_str(cuda, "error", ""));
	rc.driver_version = (int)json_num(cuda, "driver_version", 0);
	arr = json_get(cuda, "devices");
	for (e = arr ? arr->child : NULL; e && rc.num < MAX_GPUS; e = e->next) {
		snprintf(rc.gpu[rc.num].name, sizeof(rc.gpu[0].name), "%s",
			 json_str(e, "name", "unknown"));
		snprintf(rc.gpu[rc.num].busid, sizeof(rc.gpu[0].busid), "%s",
			 json_str(e, "pci_bus_id", "unknown"));
		rc.gpu[rc.num].dmabuf = (int)json_num(e, "dmabuf_supported", 0);
		rc.gpu[rc.num].gdr = (int)json_num(e, "gpudirect_rdma_supported", 0);
		rc.gpu[rc.num].vmm = (int)json_num(e, "gpudirect_rdma_with_vmm", 0);
		rc.num++;
	}
	s.cuda_load = replay_cuda;
	s.verbs.reg_mr_iova2 = v_reg;
	s.verbs.reg_dmabuf_mr = json_num(root, "libibverbs_dmabuf", 0) ? v_dmabuf
									: NULL;
	s.verbs.dereg_mr = v_dereg;
	s.verbs.alloc_pd = v_alloc_pd;
	s.verbs.dealloc_pd = v_dealloc_pd;
	s.verbs.query_device = v_query_device;
	s.verbs.query_port = v_query_port;
	s.verbs.device_name = v_name;

	arr = json_get(root, "rdma_devices");
	*ctxs = calloc(MAX_NICS, sizeof(**ctxs));
	for (e = arr ? arr->child : NULL; *ctxs && e && count < MAX_NICS;
	     e = e->next) {
		struct replay_nic *nic = calloc(1, sizeof(*nic));

		if (!nic)
			break;
		snprintf(nic->dev.name, sizeof(nic->dev.name), "%s",
			 json_str(e, "name", "unknown"));
		nic->ctx.device = &nic->dev;
		nic->probe_errno = (int)json_num(e, "dmabuf_probe_errno", EIO);
		nic->state = (int)json_num(e, "port_state", 0);
		nic->link_layer = (int)json_num(e, "link_layer", 0);
		(*ctxs)[count++] = &nic->ctx;
	}
	json_free(root);
	if (!*ctxs) {
		snprintf(err, n, "out of memory");
		return -1;
	}
	*num = count;
	gdr_seam_install(&s);
	return 0;
}
