/* SPDX-License-Identifier: MIT */
/*
 * gdr-info snapshots (snapshot.h). A capture keeps, in memory, every file
 * the report read (resolved through the links on its way, the links kept
 * as data) and the CUDA, verbs, mlx5 and NVML answers, then writes them as
 * one tar archive; a replay reads an archive or a directory into memory
 * (tree.c) and serves the library from it. Neither extracts, follows a
 * link on the real file system, nor writes anywhere but the capture's
 * file.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gpudirect-private.h>

#include "json.h"
#include "snapshot.h"
#include "storage-json.h"
#include "tree.h"

/* A limit (or max_mr_size) as answers.json holds it: -1 for all ones. */
static long long limit_out(unsigned long long v)
{
	return v > (unsigned long long)LLONG_MAX ? -1 : (long long)v;
}

/* @key's value (-1: all ones), or 0 with *@bad set when it is absent or
 * not a whole number from -1 to 2^53. */
static unsigned long long limit_in(const struct json *o, const char *key,
				   bool *bad)
{
	if (json_int(o, key, 0) == -1)
		return ~0ULL;
	if (json_bytes(o, key, ~0ULL) == ~0ULL) {
		*bad = true;
		return 0;
	}
	return json_bytes(o, key, 0);
}

/* Format 2 keeps links in answers.json; 1 (0.1, 0.2) had them as tar
 * members, which a replay now refuses. */
#define FORMAT 2

void snapshot_record(void)
{
	gdr_private_record();
}

/* --- answers.json ------------------------------------------------------- */

/* answers.json: what gdr_model holds, and the links of the tree. */
static int answers(FILE *f, const struct gdr_model *m, const struct tree *t,
		   const struct gdr_storage *st)
{
	size_t i, k = 0;
	int g;

	fprintf(f,
		"{\n  \"format\": \"libgpudirect-snapshot\",\n"
		"  \"version\": %d,\n  \"kernel_release\": ",
		FORMAT);
	json_write_str(f, m->kernel_release);
	fprintf(f, ",\n  \"cuda\": {\"error\": ");
	json_write_str(f, m->cuda_error);
	fprintf(f, ", \"driver_version\": %d, \"devices\": [",
		m->driver_version);
	for (g = 0; g < m->num_gpus; g++) {
		const struct gdr_model_gpu *gpu = &m->gpu[g];

		fprintf(f, "%s\n    {\"name\": ", g ? "," : "");
		json_write_str(f, gpu->name);
		fprintf(f, ", \"pci_bus_id\": ");
		json_write_str(f, gpu->pci_bus_id);
		fprintf(f,
			", \"dmabuf_supported\": %d, "
			"\"gpudirect_rdma_supported\": %d, "
			"\"gpudirect_rdma_with_vmm\": %d, \"c2c\": %d, "
			"\"c2c_why\": ",
			gpu->dmabuf_supported, gpu->gpudirect_rdma_supported,
			gpu->gpudirect_rdma_with_vmm, gpu->c2c);
		json_write_str(f, gpu->c2c_why);
		fprintf(f,
			", \"pcie_mapping\": %d, \"bar1_errno\": %d, "
			"\"bar1_why\": ",
			gpu->pcie_mapping, gpu->bar1_errno);
		json_write_str(f, gpu->bar1_why);
		fprintf(f,
			", \"bar1_total\": %llu, \"bar1_used\": %llu, "
			"\"total_mem\": %llu}",
			gpu->bar1_total, gpu->bar1_used, gpu->total_mem);
	}
	fprintf(f, "]},\n  \"limits\": {\"errno\": %d, \"why\": ",
		m->limits_errno);
	json_write_str(f, m->limits_why);
	fprintf(f,
		", \"memlock_soft\": %lld, \"memlock_hard\": %lld, "
		"\"nofile_soft\": %lld, \"nofile_hard\": %lld, "
		"\"cap_ipc_lock\": %d, \"user_ns\": %d},\n"
		"  \"fork_status\": %d,\n  \"libibverbs_file\": ",
		limit_out(m->memlock_soft), limit_out(m->memlock_hard),
		limit_out(m->nofile_soft), limit_out(m->nofile_hard),
		m->cap_ipc_lock, m->user_ns, m->fork_status);
	json_write_str(f, m->libibverbs_file);
	fprintf(f, ", \"libmlx5_file\": ");
	json_write_str(f, m->libmlx5_file);
	fprintf(f, ",\n  \"cufile_path\": ");
	json_write_str(f, m->cufile_path);
	fprintf(f, ",");
	fprintf(f,
		"\n  \"libibverbs_dmabuf\": %s,\n  \"mlx5dv\": %d,\n"
		"  \"rdma_devices\": [",
		m->libibverbs_dmabuf ? "true" : "false", m->mlx5dv);
	for (g = 0; g < m->num_nics; g++) {
		const struct gdr_model_nic *nic = &m->nic[g];

		fprintf(f, "%s\n    {\"name\": ", g ? "," : "");
		json_write_str(f, nic->name);
		fprintf(f,
			", \"dmabuf_probe_errno\": %d, \"port_state\": %d, "
			"\"link_layer\": %d, \"mlx5\": %d, "
			"\"data_direct_errno\": %d, \"data_direct_path\": ",
			nic->dmabuf_probe_errno, nic->port_state,
			nic->link_layer, nic->mlx5, nic->data_direct_errno);
		json_write_str(f, nic->data_direct_path);
		fprintf(f, ", \"max_mr_size\": %lld, \"netdev\": ",
			limit_out(nic->max_mr_size));
		json_write_str(f, nic->netdev);
		fprintf(f,
			", \"addrs_errno\": %d, \"addrs\": ", nic->addrs_errno);
		json_write_str(f, nic->addrs);
		fprintf(f, "}");
	}
	fprintf(f, "\n  ]");
	if (st && st->num_paths)
		storage_json_write(f, st);
	fprintf(f, ",\n  \"links\": {");
	for (i = 0; i < t->num; i++) {
		if (t->n[i].kind != GDR_WALK_LINK)
			continue;
		fprintf(f, "%s\n    ", k++ ? "," : "");
		json_write_str(f, t->n[i].name);
		fprintf(f, ": ");
		json_write_str(f, t->n[i].data);
	}
	fprintf(f, "\n  }\n}\n");
	return ferror(f) ? -1 : 0;
}

/* --- capture ------------------------------------------------------------- */

/* The live file system below the capture's root, for gdr_walk. */
static char live_root[PATH_MAX];

static int live_lookup(void *ctx, const char *name, enum gdr_walk_kind *kind,
		       char *target, size_t n)
{
	char full[PATH_MAX * 2];
	struct stat st;
	ssize_t r;

	snprintf(full, sizeof(full), "%s/%s", live_root, name);
	/* As the library reads it: inside --host-root, whatever a name on
	 * the way has become since it was looked at. */
	if (gdr_private_lstat(full, &st))
		return -1;
	if (S_ISLNK(st.st_mode)) {
		r = gdr_private_readlink(full, target, n - 1);
		if (r < 0)
			return -1;
		target[r] = '\0';
		*kind = GDR_WALK_LINK;
	} else {
		*kind = S_ISDIR(st.st_mode)   ? GDR_WALK_DIR
			: S_ISREG(st.st_mode) ? GDR_WALK_FILE
					      : GDR_WALK_OTHER;
	}
	return 0;
}

struct capture {
	struct tree *t;
	int bad;
	int cut; /* files longer than TREE_CAPTURE_FILE, kept cut */
};

static void keep_link(void *arg, const char *name, const char *target)
{
	struct capture *cap = arg;
	char err[256];

	if (!tree_find(cap->t, name) &&
	    tree_add(cap->t, name, GDR_WALK_LINK, target, strlen(target), err,
		     sizeof(err)))
		cap->bad++;
}

/* Keep the file at the resolved @name (what a sysfs read would give). */
static void keep_file(struct capture *cap, const char *name)
{
	char full[PATH_MAX * 2], *buf, err[256];
	struct stat st;
	ssize_t r = 0;
	size_t got = 0;
	int fd;

	if (tree_find(cap->t, name))
		return;
	snprintf(full, sizeof(full), "%s/%s", live_root, name);
	/* Opened as the library opens it: inside --host-root (a directory
	 * swapped for a link meanwhile leads nowhere else), a regular file
	 * only, the inode checked. */
	fd = gdr_private_open(full);
	buf = malloc(TREE_CAPTURE_FILE);
	if (fd < 0 || !buf || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		cap->bad++;
	} else {
		while (got < TREE_CAPTURE_FILE) {
			r = read(fd, buf + got, TREE_CAPTURE_FILE - got);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			got += (size_t)r;
		}
		if (got == TREE_CAPTURE_FILE) {
			char more;

			while ((r = read(fd, &more, 1)) < 0 && errno == EINTR)
				;
			cap->cut += r > 0;
		}
		/* A read that fails is not kept (and counted): a part of
		 * the file would replay as if it were all of it. */
		if (r < 0 || tree_add(cap->t, name, GDR_WALK_FILE, buf, got,
				      err, sizeof(err)))
			cap->bad++;
	}
	free(buf);
	if (fd >= 0)
		close(fd);
}

int snapshot_capture(const char *file, struct ibv_context *const *ctxs,
		     unsigned int num, const char *host_root,
		     const struct gdr_storage *st, char *err, size_t n)
{
	static struct gdr_model model;
	const char *const *paths;
	struct capture cap;
	struct tree t;
	unsigned int i, num_paths;
	size_t rootlen;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int e;

	e = gdr_private_model_read(&model, ctxs, num);
	if (e) {
		snprintf(err, n, "reading the node's answers failed: %s",
			 strerror(e));
		return -1;
	}
	/* The library reads below the real path of --host-root. */
	if (!realpath(host_root && host_root[0] ? host_root : "/", live_root)) {
		snprintf(err, n, "%s: %s", host_root, strerror(errno));
		return -1;
	}
	if (!strcmp(live_root, "/"))
		live_root[0] = '\0';
	rootlen = strlen(live_root);
	tree_init(&t);
	cap.t = &t;
	cap.bad = 0;
	cap.cut = 0;
	num_paths = gdr_private_recorded(&paths);
	for (i = 0; i < num_paths; i++) {
		char name[PATH_MAX];
		enum gdr_walk_kind kind;
		const char *rel = paths[i];

		/* What the library read, as the host names it. */
		if (strncmp(rel, live_root, rootlen) || rel[rootlen] != '/') {
			cap.bad++;
			continue;
		}
		rel += rootlen;
		/* The path itself (a link the library read as one) ... */
		if (gdr_walk(live_lookup, NULL, rel, 1, name, sizeof(name),
			     &kind, keep_link, &cap))
			continue; /* gone since: the replay says so too */
		/* ... and what it leads to (a file the library opened). */
		if (kind == GDR_WALK_LINK &&
		    gdr_walk(live_lookup, NULL, rel, 0, name, sizeof(name),
			     &kind, keep_link, &cap))
			continue;
		if (kind == GDR_WALK_FILE)
			keep_file(&cap, name);
		else if (kind == GDR_WALK_DIR &&
			 tree_add(&t, name, GDR_WALK_DIR, NULL, 0, err, n))
			cap.bad++;
	}
	f = open_memstream(&text, &len);
	if (!f || answers(f, &model, &t, st) || fclose(f) ||
	    tree_add(&t, "answers.json", GDR_WALK_FILE, text, len, err, n) ||
	    tree_write_tar(&t, file, err, n)) {
		if (!err[0])
			snprintf(err, n, "out of memory");
		free(text);
		tree_free(&t);
		return -1;
	}
	free(text);
	if (cap.bad)
		snprintf(err, n, "%u of %u paths could not be kept", cap.bad,
			 num_paths);
	else
		snprintf(err, n, "%u paths and the CUDA/verbs answers",
			 num_paths);
	if (cap.cut) {
		size_t used = strlen(err);

		snprintf(err + used, n - used,
			 "; %d files longer than %zu KiB kept cut there, as "
			 "the report read them",
			 cap.cut, TREE_CAPTURE_FILE >> 10);
	}
	tree_free(&t);
	return 0;
}

/* --- replay ------------------------------------------------------------- */

static struct tree snap; /* in use until the program ends */
static struct gdr_storage snap_storage;

const struct gdr_storage *snapshot_storage(void)
{
	return &snap_storage;
}

/* The library's open(2) of a node path: a file of the tree, from memory. */
static int snap_open(const char *path)
{
	char name[PATH_MAX];
	const struct tree_node *x;
	enum gdr_walk_kind kind;
	int fd;

	if (gdr_walk(tree_lookup, &snap, path, 0, name, sizeof(name), &kind,
		     NULL, NULL))
		return -1;
	if (kind == GDR_WALK_DIR) /* a directory: reading it fails, as live */
		return open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	x = kind == GDR_WALK_FILE ? tree_find(&snap, name) : NULL;
	if (!x) {
		errno = GDR_PRIVATE_ENOTREG;
		return -1;
	}
	fd = memfd_create("gdr-snapshot", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if ((x->size && write(fd, x->data, x->size) != (ssize_t)x->size) ||
	    lseek(fd, 0, SEEK_SET)) {
		close(fd);
		errno = EIO;
		return -1;
	}
	return fd;
}

static ssize_t snap_read_link(const char *path, char *buf, size_t n)
{
	char name[PATH_MAX];
	const struct tree_node *x;
	enum gdr_walk_kind kind;
	size_t len;

	if (gdr_walk(tree_lookup, &snap, path, 1, name, sizeof(name), &kind,
		     NULL, NULL))
		return -1;
	x = kind == GDR_WALK_LINK ? tree_find(&snap, name) : NULL;
	if (!x) {
		errno = EINVAL;
		return -1;
	}
	len = x->size < n ? x->size : n;
	memcpy(buf, x->data, len);
	return (ssize_t)len;
}

static const struct gdr_files snap_files = { snap_open, snap_read_link };

static void text(char *dst, size_t n, const struct json *o, const char *key,
		 const char *def)
{
	snprintf(dst, n, "%s", json_str(o, key, def));
}

/* The links answers.json records, into the tree. */
static int links(const struct json *root, char *err, size_t n)
{
	const struct json *l = json_get(root, "links"), *e;

	if (l && l->type != JSON_OBJ) {
		snprintf(err, n, "answers.json: \"links\" is not an object");
		return -1;
	}
	for (e = l ? l->child : NULL; e; e = e->next) {
		if (e->type != JSON_STR || !e->key) {
			snprintf(err, n,
				 "answers.json: a link's target is not "
				 "a string");
			return -1;
		}
		if (tree_add(&snap, e->key, GDR_WALK_LINK, e->str,
			     strlen(e->str), err, n))
			return -1;
	}
	return 0;
}

int snapshot_replay(const char *source, int is_dir, struct ibv_context ***ctxs,
		    unsigned int *num, char *err, size_t n)
{
	static struct gdr_model m; /* in use until the program ends */
	const struct tree_node *ans;
	const struct json *cuda, *arr, *e, *lim;
	struct json *root;
	double version;
	int rc;

	tree_free(&snap);
	if (is_dir ? tree_read_dir(&snap, source, err, n)
		   : tree_read_tar(&snap, source, err, n))
		return -1;
	ans = tree_find(&snap, "answers.json");
	if (!ans || ans->kind != GDR_WALK_FILE) {
		snprintf(err, n, "%s has no answers.json (not a snapshot?)",
			 source);
		return -1;
	}
	if (strlen(ans->data) != ans->size) {
		snprintf(err, n, "%s: answers.json holds a NUL byte: not JSON",
			 source);
		return -1;
	}
	root = json_parse(ans->data, err, n);
	if (!root)
		return -1;
	version = json_num(root, "version", 0);
	if (strcmp(json_str(root, "format", ""), "libgpudirect-snapshot") ||
	    (version != 1 && version != FORMAT)) {
		snprintf(err, n,
			 "%s: not a libgpudirect-snapshot of version 1 or %d",
			 source, FORMAT);
		json_free(root);
		return -1;
	}
	if (links(root, err, n) ||
	    storage_json_read(root, &snap_storage, err, n)) {
		json_free(root);
		return -1;
	}
	memset(&m, 0, sizeof(m));
	text(m.kernel_release, sizeof(m.kernel_release), root, "kernel_release",
	     "unknown");
	cuda = json_get(root, "cuda");
	text(m.cuda_error, sizeof(m.cuda_error), cuda, "error", "");
	m.driver_version = json_int(cuda, "driver_version", 0);
	arr = json_get(cuda, "devices");
	for (e = json_items(arr); e && m.num_gpus < GDR_MODEL_MAX_GPUS;
	     e = e->next) {
		struct gdr_model_gpu *g = &m.gpu[m.num_gpus++];

		text(g->name, sizeof(g->name), e, "name", "unknown");
		text(g->pci_bus_id, sizeof(g->pci_bus_id), e, "pci_bus_id",
		     "unknown");
		g->dmabuf_supported = json_int(e, "dmabuf_supported", 0);
		g->gpudirect_rdma_supported =
			json_int(e, "gpudirect_rdma_supported", 0);
		g->gpudirect_rdma_with_vmm =
			json_int(e, "gpudirect_rdma_with_vmm", 0);
		/* Added in 0.2; a 0.1 snapshot does not know them. */
		g->c2c = json_int(e, "c2c", -1);
		text(g->c2c_why, sizeof(g->c2c_why), e, "c2c_why", "");
		g->pcie_mapping = json_int(e, "pcie_mapping", -1);
		/* Added in 0.3: an older snapshot says nothing of BAR1. */
		g->bar1_errno = json_int(e, "bar1_errno", ENODATA);
		text(g->bar1_why, sizeof(g->bar1_why), e, "bar1_why",
		     json_get(e, "bar1_errno") ? ""
					       : "not in this snapshot "
						 "(captured before 0.3)");
		g->bar1_total = json_bytes(e, "bar1_total", 0);
		g->bar1_used = json_bytes(e, "bar1_used", 0);
		g->total_mem = json_bytes(e, "total_mem", 0);
	}
	lim = json_get(root, "limits");
	if (lim) {
		m.limits_errno = json_int(lim, "errno", EINVAL);
		text(m.limits_why, sizeof(m.limits_why), lim, "why", "");
		bool bad = false;

		m.memlock_soft = limit_in(lim, "memlock_soft", &bad);
		m.memlock_hard = limit_in(lim, "memlock_hard", &bad);
		m.nofile_soft = limit_in(lim, "nofile_soft", &bad);
		m.nofile_hard = limit_in(lim, "nofile_hard", &bad);
		m.cap_ipc_lock = json_int(lim, "cap_ipc_lock", -1);
		/* Before 0.4 not recorded: unknown. */
		m.user_ns = json_int(lim, "user_ns", -1);
		if (bad && !m.limits_errno) {
			m.limits_errno = EINVAL;
			snprintf(m.limits_why, sizeof(m.limits_why),
				 "the snapshot's limits are not numbers");
		}
	} else {
		/* Added in 0.3. */
		m.limits_errno = ENODATA;
		snprintf(m.limits_why, sizeof(m.limits_why),
			 "not in this snapshot (captured before 0.3)");
	}
	m.fork_status = json_int(root, "fork_status", -1);
	text(m.libibverbs_file, sizeof(m.libibverbs_file), root,
	     "libibverbs_file", "");
	text(m.libmlx5_file, sizeof(m.libmlx5_file), root, "libmlx5_file", "");
	text(m.cufile_path, sizeof(m.cufile_path), root, "cufile_path", "");
	m.libibverbs_dmabuf = json_bool(root, "libibverbs_dmabuf", 0);
	m.mlx5dv = json_int(root, "mlx5dv", 0);
	arr = json_get(root, "rdma_devices");
	for (e = json_items(arr); e && m.num_nics < GDR_MODEL_MAX_NICS;
	     e = e->next) {
		struct gdr_model_nic *nic = &m.nic[m.num_nics++];

		text(nic->name, sizeof(nic->name), e, "name", "unknown");
		nic->dmabuf_probe_errno =
			json_int(e, "dmabuf_probe_errno", EIO);
		nic->port_state = json_int(e, "port_state", 0);
		nic->link_layer = json_int(e, "link_layer", 0);
		nic->mlx5 = json_int(e, "mlx5", 0);
		nic->data_direct_errno =
			json_int(e, "data_direct_errno", ENODEV);
		text(nic->data_direct_path, sizeof(nic->data_direct_path), e,
		     "data_direct_path", "");
		/* Added in 0.3; -1 is 2^64-1 (mlx5: no limit). */
		{
			bool bad = false;

			/* 0 (unknown) for what no device answers */
			nic->max_mr_size = limit_in(e, "max_mr_size", &bad);
		}
		text(nic->netdev, sizeof(nic->netdev), e, "netdev", "");
		nic->addrs_errno = json_int(e, "addrs_errno", ENODATA);
		text(nic->addrs, sizeof(nic->addrs), e, "addrs", "");
	}
	json_free(root);
	rc = gdr_private_replay(&m, &snap_files, ctxs, num, err, n);
	return rc ? -1 : 0;
}

void snapshot_end(void)
{
	tree_free(&snap);
}
