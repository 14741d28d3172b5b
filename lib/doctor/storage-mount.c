/* SPDX-License-Identifier: MIT */
/*
 * The mount under a --storage path and what carries its bytes, from the
 * kernel's own records: this process's mount table (procfs
 * self/mountinfo, the mount of the path found by its mount id, else by its
 * device and the longest mount point above it), the file system's
 * options (NFS's proto= and addr=, Lustre's NID), and for a block device
 * sysfs's view of it (an NVMe controller's transport and address, SCSI).
 * Everything is read through the seam: a snapshot replays it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"

/* The table is read up to this much, as cufile.json is: a container's is
 * a few KiB, a node's with many pods some hundreds. */
#define MOUNTINFO_MAX ((size_t)256 << 10)
/* Paths of one NVMe namespace looked for under its multipath head. */
#define NVME_MAX_PATHS 16

static const struct {
	const char *fstype;
	enum gdr_transport t;
	const char *module; /* the client's kernel module */
} named[] = {
	{ "lustre", GDR_T_LUSTRE, "lustre" },
	{ "gpfs", GDR_T_GPFS, "mmfs26" },
	{ "wekafs", GDR_T_WEKAFS, "wekafsio" },
	{ "beegfs", GDR_T_BEEGFS, "beegfs" },
	{ "virtiofs", GDR_T_VIRTIOFS, NULL },
	{ "overlay", GDR_T_OVERLAY, NULL },
	{ "tmpfs", GDR_T_MEMORY, NULL },
	{ "ramfs", GDR_T_MEMORY, NULL },
};

/* Find @p's line in the table @text (NUL-terminated): by mount id where
 * known, else the last mount of its device whose mount point holds its
 * real path, longest first. 0, ENOENT, or EINVAL when a line (only
 * counted) was not mountinfo's form. */
static int find_line(char *text, const struct gdr_storage_path *p,
		     struct gdr_mount *best, unsigned int *bad)
{
	struct gdr_mount *m = malloc(sizeof(*m));
	size_t best_len = 0;
	bool found = false;
	char *line = text;

	if (!m)
		return ENOMEM;
	*bad = 0;
	while (*line) {
		char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		if (len && gdr_parse_mountinfo_line(line, len, m)) {
			(*bad)++;
		} else if (len && p->mnt_id >= 0) {
			if (m->id == p->mnt_id) {
				*best = *m;
				found = true;
				break;
			}
		} else if (len && m->major == p->dev_major &&
			   m->minor == p->dev_minor &&
			   gdr_path_under(p->real, m->point) &&
			   strlen(m->point) >= best_len) {
			/* a later mount at the same point hides an earlier */
			best_len = strlen(m->point);
			*best = *m;
			found = true;
		}
		line = nl ? nl + 1 : line + len;
	}
	free(m);
	return found ? 0 : ENOENT;
}

/* NFS: the transport and server from the super block's options. */
static void nfs(struct gdr_storage_mount *sm)
{
	char proto[32] = "", port[16] = "", vers[16] = "";

	gdr_mount_option(sm->m.super, "proto", proto, sizeof(proto));
	gdr_mount_option(sm->m.super, "port", port, sizeof(port));
	gdr_mount_option(sm->m.super, "vers", vers, sizeof(vers));
	if (gdr_mount_option(sm->m.super, "addr", sm->server,
			     sizeof(sm->server)))
		sm->server[0] = '\0';
	sm->transport = !strncmp(proto, "rdma", 4) ? GDR_T_NFS_RDMA
			: proto[0]		   ? GDR_T_NFS_TCP
						   : GDR_T_UNKNOWN;
	gdr_fmt(sm->detail, sizeof(sm->detail), "NFS%s%s over %s to %s%s%s",
		vers[0] ? " " : "", vers,
		proto[0] ? proto : "an unknown protocol",
		sm->server[0] ? sm->server : "an unknown server",
		port[0] ? " port " : "", port);
	if (sm->transport == GDR_T_UNKNOWN)
		gdr_fmt(sm->why, sizeof(sm->why),
			"the mount's options name no proto=");
}

/* Lustre: the server's NID in the source ("10.0.0.1@o2ib:/fs"); o2ib is
 * LNet over RDMA (InfiniBand or RoCE). */
static void lustre(struct gdr_storage_mount *sm)
{
	const char *at = strchr(sm->m.source, '@');
	size_t len = at ? (size_t)(at - sm->m.source) : 0;

	if (at && len < sizeof(sm->server)) {
		memcpy(sm->server, sm->m.source, len);
		sm->server[len] = '\0';
	}
	sm->rdma = at && !strncmp(at + 1, "o2ib", 4);
}

/* The NVMe controller behind namespace disk @disk: its sysfs directory
 * (below the seam's sysfs root) into @ctrl. 0 or an errno. */
static int nvme_controller(const char *disk, char *ctrl, size_t n)
{
	const char *sys = gdr_seam()->sysfs_root;
	char path[256], target[PATH_MAX], *slash;
	unsigned int subsys, ns, c;
	int err;

	/* Without multipath the namespace's device is its controller. */
	gdr_fmt(path, sizeof(path), "/class/block/%s/device/transport", disk);
	if (gdr_file_exists(sys, path)) {
		/* Named as the controller is (the link's last name). */
		gdr_fmt(path, sizeof(path), "/class/block/%s/device", disk);
		slash = gdr_read_link(sys, path, target, sizeof(target))
				? NULL
				: strrchr(target, '/');
		if (slash && strcmp(slash + 1, "..") && strcmp(slash + 1, "."))
			gdr_fmt(ctrl, n, "/class/nvme/%s", slash + 1);
		else
			gdr_fmt(ctrl, n, "/class/block/%s/device", disk);
		return 0;
	}
	/* A multipath head nvmeSnN: its paths nvmeScCnN, each below the
	 * controller nvmeC that serves it. */
	if (sscanf(disk, "nvme%un%u", &subsys, &ns) != 2)
		return ENOENT;
	for (c = 0; c < NVME_MAX_PATHS; c++) {
		gdr_fmt(path, sizeof(path),
			"/class/block/%s/multipath/nvme%uc%un%u", disk, subsys,
			c, ns);
		err = gdr_read_link(sys, path, target, sizeof(target));
		if (err)
			continue;
		slash = strrchr(target, '/');
		if (!slash)
			continue;
		*slash = '\0';
		slash = strrchr(target, '/');
		gdr_fmt(ctrl, n, "/class/nvme/%s", slash ? slash + 1 : target);
		return 0;
	}
	return ENOENT;
}

/* A block device's file system: the disk under the mount's device and
 * what reaches it. */
static void block(struct gdr_storage_mount *sm)
{
	const char *sys = gdr_seam()->sysfs_root;
	char path[256], target[PATH_MAX], ctrl[320], attr[256], *base;
	char disk[64];
	int err;

	gdr_fmt(path, sizeof(path), "/dev/block/%u:%u", sm->m.major,
		sm->m.minor);
	err = gdr_read_link(sys, path, target, sizeof(target));
	if (err) {
		gdr_fmt(sm->why, sizeof(sm->why), "/sys/dev/block/%u:%u: %s",
			sm->m.major, sm->m.minor, gdr_errno_name(err));
		return;
	}
	base = strrchr(target, '/');
	gdr_fmt(disk, sizeof(disk), "%s", base ? base + 1 : target);
	/* A partition's directory is inside its disk's. */
	gdr_fmt(path, sizeof(path), "/dev/block/%u:%u/partition", sm->m.major,
		sm->m.minor);
	if (gdr_file_exists(sys, path) && base && base != target) {
		*base = '\0';
		base = strrchr(target, '/');
		gdr_fmt(disk, sizeof(disk), "%s", base ? base + 1 : target);
	}
	gdr_fmt(sm->blockdev, sizeof(sm->blockdev), "%s", disk);
	if (!strncmp(disk, "nvme", 4)) {
		if (nvme_controller(disk, ctrl, sizeof(ctrl))) {
			sm->transport = GDR_T_NVME_UNKNOWN;
			gdr_fmt(sm->why, sizeof(sm->why),
				"%s: no NVMe controller found in sysfs", disk);
			return;
		}
		gdr_fmt(path, sizeof(path), "%s/transport", ctrl);
		err = gdr_read_file(sys, path, attr, sizeof(attr));
		if (err) {
			sm->transport = GDR_T_NVME_UNKNOWN;
			gdr_fmt(sm->why, sizeof(sm->why), "/sys%s: %s", path,
				gdr_errno_name(err));
			return;
		}
		sm->transport = !strcmp(attr, "pcie")	? GDR_T_NVME_LOCAL
				: !strcmp(attr, "rdma") ? GDR_T_NVMEOF_RDMA
				: !strcmp(attr, "tcp")	? GDR_T_NVMEOF_TCP
				: !strcmp(attr, "fc")	? GDR_T_NVMEOF_FC
							: GDR_T_NVME_UNKNOWN;
		base = strrchr(ctrl, '/');
		gdr_fmt(sm->detail, sizeof(sm->detail),
			"%s on %s (transport %s", disk, base ? base + 1 : ctrl,
			attr);
		gdr_fmt(path, sizeof(path), "%s/address", ctrl);
		if (!gdr_read_file(sys, path, attr, sizeof(attr)) && attr[0]) {
			gdr_append(sm->detail, sizeof(sm->detail), ", %s",
				   attr);
			if (sm->transport != GDR_T_NVME_LOCAL &&
			    gdr_mount_option(attr, "traddr", sm->server,
					     sizeof(sm->server)))
				sm->server[0] = '\0';
		}
		gdr_append(sm->detail, sizeof(sm->detail), ")");
		sm->rdma = sm->transport == GDR_T_NVMEOF_RDMA;
		return;
	}
	sm->transport = !strncmp(disk, "sd", 2) ? GDR_T_SCSI : GDR_T_BLOCK;
	gdr_fmt(sm->detail, sizeof(sm->detail), "%s", disk);
}

void gdr_storage_mount_look(const struct gdr_storage_path *p,
			    struct gdr_storage_mount *sm)
{
	const struct gdr_seam *s = gdr_seam();
	unsigned int i, bad = 0;
	size_t got = 0;
	char *text;

	memset(sm, 0, sizeof(*sm));
	sm->transport = GDR_T_UNKNOWN;
	text = malloc(MOUNTINFO_MAX + 1);
	if (!text) {
		sm->err = ENOMEM;
		return;
	}
	sm->err = gdr_read_bin(s->procfs_root, "/self/mountinfo", text,
			       MOUNTINFO_MAX, &got);
	text[got] = '\0';
	sm->cut = got == MOUNTINFO_MAX;
	if (!sm->err && strlen(text) != got)
		sm->err = EINVAL; /* a NUL byte: not the kernel's table */
	if (!sm->err)
		sm->err = find_line(text, p, &sm->m, &bad);
	sm->bad_lines = bad;
	free(text);
	if (sm->err)
		return;
	for (i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		char mod[64];

		if (strcmp(sm->m.fstype, named[i].fstype))
			continue;
		sm->transport = named[i].t;
		gdr_fmt(sm->detail, sizeof(sm->detail), "%s", sm->m.fstype);
		if (named[i].module) {
			gdr_fmt(mod, sizeof(mod), "/module/%s",
				named[i].module);
			gdr_append(sm->detail, sizeof(sm->detail),
				   ", client module %s %s", named[i].module,
				   gdr_file_exists(s->sysfs_root, mod)
					   ? "loaded"
					   : "not seen in /sys/module");
		}
		if (named[i].t == GDR_T_LUSTRE)
			lustre(sm);
		return;
	}
	if (!strcmp(sm->m.fstype, "nfs") || !strcmp(sm->m.fstype, "nfs4")) {
		nfs(sm);
		sm->rdma = sm->transport == GDR_T_NFS_RDMA;
		return;
	}
	/* A file system on a block device: its major is not 0 (anonymous
	 * devices: overlay, tmpfs, network file systems). */
	if (sm->m.major) {
		block(sm);
		return;
	}
	sm->transport = GDR_T_OTHER;
	gdr_fmt(sm->detail, sizeof(sm->detail), "%s", sm->m.fstype);
}
