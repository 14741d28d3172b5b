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

#include <gpudirect-private.h>

#include "json.h"
#include "snapshot.h"

void snapshot_record(void)
{
	gdr_private_record();
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
			if (r < 0 ||
			    !realpath(prefix[0] ? prefix : "/", parent))
				return -1;
			*base = '/';
			link[r] = '\0';
			snprintf(dest, sizeof(dest), "%s%s", out, parent);
			if (mkdirs(dest))
				return -1;
			snprintf(dest, sizeof(dest), "%s%s%s", out, parent,
				 base);
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

/* answers.json, snapshot format version 1: what gdr_model holds. */
static int answers(const char *file, const struct gdr_model *m)
{
	FILE *f = fopen(file, "w");
	int i;

	if (!f)
		return -1;
	fprintf(f, "{\n  \"format\": \"libgpudirect-snapshot\",\n"
		   "  \"version\": 1,\n  \"kernel_release\": ");
	json_text(f, m->kernel_release);
	fprintf(f, ",\n  \"cuda\": {\"error\": ");
	json_text(f, m->cuda_error);
	fprintf(f, ", \"driver_version\": %d, \"devices\": [",
		m->driver_version);
	for (i = 0; i < m->num_gpus; i++) {
		const struct gdr_model_gpu *g = &m->gpu[i];

		fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
		json_text(f, g->name);
		fprintf(f, ", \"pci_bus_id\": ");
		json_text(f, g->pci_bus_id);
		fprintf(f,
			", \"dmabuf_supported\": %d, "
			"\"gpudirect_rdma_supported\": %d, "
			"\"gpudirect_rdma_with_vmm\": %d, \"c2c\": %d, "
			"\"c2c_why\": ",
			g->dmabuf_supported, g->gpudirect_rdma_supported,
			g->gpudirect_rdma_with_vmm, g->c2c);
		json_text(f, g->c2c_why);
		fprintf(f, ", \"pcie_mapping\": %d}", g->pcie_mapping);
	}
	fprintf(f,
		"]},\n  \"libibverbs_dmabuf\": %s,\n  \"mlx5dv\": %d,\n"
		"  \"rdma_devices\": [",
		m->libibverbs_dmabuf ? "true" : "false", m->mlx5dv);
	for (i = 0; i < m->num_nics; i++) {
		const struct gdr_model_nic *n = &m->nic[i];

		fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
		json_text(f, n->name);
		fprintf(f,
			", \"dmabuf_probe_errno\": %d, \"port_state\": %d, "
			"\"link_layer\": %d, \"mlx5\": %d, "
			"\"data_direct_errno\": %d, \"data_direct_path\": ",
			n->dmabuf_probe_errno, n->port_state, n->link_layer,
			n->mlx5, n->data_direct_errno);
		json_text(f, n->data_direct_path);
		fprintf(f, "}");
	}
	fprintf(f, "\n  ]\n}\n");
	return fclose(f);
}

int snapshot_capture(const char *file, struct ibv_context *const *ctxs,
		     unsigned int num, const char *host_root, char *err,
		     size_t n)
{
	char tmpl[] = "/tmp/gdr-capture.XXXXXX", ans[64];
	char *tar[] = { "tar", "-cf", (char *)file, "-C", tmpl, ".", NULL };
	static struct gdr_model model;
	const char *const *paths;
	unsigned int i, bad = 0, num_paths;
	int e;

	e = gdr_private_model_read(&model, ctxs, num);
	if (e) {
		snprintf(err, n, "reading the node's answers failed: %s",
			 strerror(e));
		return -1;
	}
	if (!mkdtemp(tmpl)) {
		snprintf(err, n, "mkdtemp: %s", strerror(errno));
		return -1;
	}
	num_paths = gdr_private_recorded(&paths);
	for (i = 0; i < num_paths; i++)
		bad += store(tmpl, paths[i]) != 0;
	/* Files read below --host-root go where the host has them (sysfs
	 * links are relative: the subtrees move whole). */
	if (host_root && host_root[0] && strcmp(host_root, "/")) {
		const char *sub[] = { "sys", "proc" };
		char from[PATH_MAX * 2], to[PATH_MAX];

		for (i = 0; i < 2; i++) {
			snprintf(from, sizeof(from), "%s%s/%s", tmpl, host_root,
				 sub[i]);
			snprintf(to, sizeof(to), "%s/%s", tmpl, sub[i]);
			if (rename(from, to) && errno != ENOENT)
				bad++;
		}
	}
	snprintf(ans, sizeof(ans), "%s/answers.json", tmpl);
	if (answers(ans, &model) || run(tar)) {
		snprintf(err, n, "writing %s failed", file);
		snapshot_remove(tmpl);
		return -1;
	}
	snapshot_remove(tmpl);
	if (bad)
		snprintf(err, n, "%u of %u files could not be copied", bad,
			 num_paths);
	else
		snprintf(err, n, "%u files and the CUDA/verbs answers",
			 num_paths);
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
		snprintf(err, n,
			 "cannot unpack %s (is it a gdr-info --capture "
			 "file?)",
			 file);
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

static void text(char *dst, size_t n, const struct json *o, const char *key,
		 const char *def)
{
	snprintf(dst, n, "%s", json_str(o, key, def));
}

int snapshot_replay(const char *dir, struct ibv_context ***ctxs,
		    unsigned int *num, char *err, size_t n)
{
	static struct gdr_model m; /* in use until the program ends */
	char path[PATH_MAX], *buf;
	const struct json *cuda, *arr, *e;
	struct json *root;
	FILE *f;
	long len;
	int rc;

	snprintf(path, sizeof(path), "%s/answers.json", dir);
	f = fopen(path, "r");
	if (!f) {
		snprintf(err, n, "%s: %s (not a snapshot?)", path,
			 strerror(errno));
		return -1;
	}
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET)) {
		fclose(f);
		snprintf(err, n, "%s: cannot read", path);
		return -1;
	}
	buf = len > 0 && len < (1 << 20) ? calloc(1, (size_t)len + 1) : NULL;
	if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
		fclose(f);
		free(buf);
		snprintf(err, n, "%s: cannot read", path);
		return -1;
	}
	fclose(f);
	root = json_parse(buf, err, n);
	free(buf);
	if (!root)
		return -1;
	if (strcmp(json_str(root, "format", ""), "libgpudirect-snapshot") ||
	    json_num(root, "version", 0) != 1) {
		snprintf(err, n, "%s: not a libgpudirect-snapshot version 1",
			 path);
		json_free(root);
		return -1;
	}
	memset(&m, 0, sizeof(m));
	text(m.kernel_release, sizeof(m.kernel_release), root, "kernel_release",
	     "unknown");
	cuda = json_get(root, "cuda");
	text(m.cuda_error, sizeof(m.cuda_error), cuda, "error", "");
	m.driver_version = (int)json_num(cuda, "driver_version", 0);
	arr = json_get(cuda, "devices");
	for (e = arr ? arr->child : NULL; e && m.num_gpus < GDR_MODEL_MAX_GPUS;
	     e = e->next) {
		struct gdr_model_gpu *g = &m.gpu[m.num_gpus++];

		text(g->name, sizeof(g->name), e, "name", "unknown");
		text(g->pci_bus_id, sizeof(g->pci_bus_id), e, "pci_bus_id",
		     "unknown");
		g->dmabuf_supported = (int)json_num(e, "dmabuf_supported", 0);
		g->gpudirect_rdma_supported =
			(int)json_num(e, "gpudirect_rdma_supported", 0);
		g->gpudirect_rdma_with_vmm =
			(int)json_num(e, "gpudirect_rdma_with_vmm", 0);
		/* Added in 0.2; a 0.1 snapshot does not know them. */
		g->c2c = (int)json_num(e, "c2c", -1);
		text(g->c2c_why, sizeof(g->c2c_why), e, "c2c_why", "");
		g->pcie_mapping = (int)json_num(e, "pcie_mapping", -1);
	}
	m.libibverbs_dmabuf = json_num(root, "libibverbs_dmabuf", 0) != 0;
	m.mlx5dv = (int)json_num(root, "mlx5dv", 0);
	arr = json_get(root, "rdma_devices");
	for (e = arr ? arr->child : NULL; e && m.num_nics < GDR_MODEL_MAX_NICS;
	     e = e->next) {
		struct gdr_model_nic *nic = &m.nic[m.num_nics++];

		text(nic->name, sizeof(nic->name), e, "name", "unknown");
		nic->dmabuf_probe_errno =
			(int)json_num(e, "dmabuf_probe_errno", EIO);
		nic->port_state = (int)json_num(e, "port_state", 0);
		nic->link_layer = (int)json_num(e, "link_layer", 0);
		nic->mlx5 = (int)json_num(e, "mlx5", 0);
		nic->data_direct_errno =
			(int)json_num(e, "data_direct_errno", ENODEV);
		text(nic->data_direct_path, sizeof(nic->data_direct_path), e,
		     "data_direct_path", "");
	}
	json_free(root);
	rc = gdr_private_replay(&m, dir, ctxs, num, err, n);
	return rc ? -1 : 0;
}
