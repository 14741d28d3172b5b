/* SPDX-License-Identifier: MIT */
/*
 * The owner's half of memory another process registers: export device
 * memory as dma-buf fds exactly as the registration paths do (export.c),
 * describe it in a fixed-size descriptor, and hand both over a unix
 * socket. The importer's half is import.c.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "register.h"

_Static_assert(GDR_FDS_MAX == GDR_EXPORT_MAX_FDS, "one message, one export");
_Static_assert(sizeof(((struct gdr_dev *)0)->pci_id) ==
		       sizeof(((struct gdr_export_desc *)0)->gpu_bus_id),
	       "the bus id as the descriptor has it");

#define LIB_VERSION                                                            \
	((uint32_t)GPUDIRECT_VERSION_MAJOR << 16 |                             \
	 (uint32_t)GPUDIRECT_VERSION_MINOR << 8 | GPUDIRECT_VERSION_MICRO)

/* Whether to make the PCIe-mapped export: 1 yes, 0 no, -1 refused with
 * the reason in @why (the caller insisted and the driver cannot). */
static int export_wants_pcie(uint32_t flags, const struct gdr_node *node,
			     const struct gdr_dev *d, char *why, size_t n)
{
	bool forced = flags & GDR_EXPORT_PCIE_MAPPING;

	if (!gdr_cuda_has_pcie_mapping(gdr_cuda_get(false))) {
		if (!forced)
			return 0;
		gdr_fmt(why, n,
			"GDR_EXPORT_PCIE_MAPPING: this CUDA driver cannot "
			"export a PCIe-mapped dma-buf (it needs 12.8 or "
			"newer); export without the flag, or upgrade the "
			"driver");
		return -1;
	}
	if (forced)
		return 1;
	/* Needed by every NIC on PCIe reading a C2C-attached GPU, unless
	 * the GPU answered NOT_SUPPORTED to it before (remembered). */
	return node->pcie_policy != GDR_PCIE_OFF && d && d->c2c == GDR_YES &&
	       gdr_pcie_map_get(d->ordinal) != GDR_PCIE_MAP_UNSUPPORTED;
}

/* Fill @desc's facts of the fds in @xs, in the order plain, PCIe. */
static int describe(const struct gdr_exports *xs, struct gdr_export_desc *desc,
		    char *why, size_t n)
{
	struct gdr_dmabuf_facts f;
	char detail[GDR_WHY_LEN];
	int i, err;

	for (i = 0; i < 2; i++) {
		if (xs->fd[i] < 0)
			continue;
		err = gdr_seam()->dmabuf_facts(xs->fd[i], &f, detail,
					       sizeof(detail));
		if (err) {
			gdr_fmt(why, n,
				"the driver's dma-buf (fd %d) could not be "
				"described: %s",
				xs->fd[i], detail);
			return err == GDR_ENOTDMABUF ? EIO : err;
		}
		desc->mapping[desc->num_fds] = (uint32_t)i;
		desc->dmabuf_ino[desc->num_fds] = f.ino;
		desc->num_fds++;
	}
	return 0;
}

static int export_checked(void *ptr, size_t len, uint32_t flags,
			  struct gdr_export_desc *desc, struct gdr_exports *xs,
			  char *why, size_t n)
{
	const struct gdr_node *node;
	const struct gdr_dev *d;
	struct gdr_dmabuf_range r;
	struct gdr_req req;
	CUresult res;
	int err, fd, pcie;

	if (flags & ~(uint32_t)GDR_EXPORT_PCIE_MAPPING) {
		gdr_fmt(why, n,
			"flags has unknown bits 0x%x; use "
			"GDR_EXPORT_PCIE_MAPPING only",
			flags & ~(uint32_t)GDR_EXPORT_PCIE_MAPPING);
		return EINVAL;
	}
	if (!ptr || !len || (uintptr_t)ptr > UINTPTR_MAX - len) {
		gdr_fmt(why, n,
			"[%p, +%zu) is not a buffer: pass device memory and "
			"a length of at least one byte",
			ptr, len);
		return EINVAL;
	}
	node = gdr_node_get();
	if (node->env_error[0]) {
		gdr_fmt(why, n, "%s", node->env_error);
		return node->oom ? ENOMEM : EINVAL;
	}
	memset(&req, 0, sizeof(req));
	err = gdr_classify(ptr, len, false, &req.pi, why, n);
	if (err)
		return err;
	if (req.pi.type != GDR_MEM_CUDA_DEVICE &&
	    req.pi.type != GDR_MEM_CUDA_POOL) {
		gdr_fmt(why, n,
			"%p is %s memory, and gdr_export() exports device "
			"memory; share host memory through a file (memfd) "
			"and register it in the importer with ibv_reg_mr",
			ptr, gdr_mem_type_name(req.pi.type));
		return EINVAL;
	}
	/* Without it no importer could check the node: say so, as EIO. */
	if (gdr_boot_id(desc->boot_id, why, n))
		return EIO;
	d = gdr_dev_get(req.pi.device);
	/* The descriptor names the exporting GPU by its bus id: an export
	 * without one could be made but never sent. */
	if (!d || d->why[0] || !gdr_bus_id_ok(d->pci_id, sizeof(d->pci_id))) {
		gdr_fmt(why, n,
			"GPU %d's PCI bus id is not known (%s), and the "
			"descriptor names the exporting GPU by it; check the "
			"driver (nvidia-smi)",
			req.pi.device,
			!d	    ? "the GPU is not visible to this process"
			: d->why[0] ? d->why
				    : d->busid);
		return EIO;
	}
	pcie = export_wants_pcie(flags, node, d, why, n);
	if (pcie < 0)
		return EOPNOTSUPP;
	req.ptr = ptr;
	req.len = len;
	req.iova = (uint64_t)(uintptr_t)ptr;
	req.node = node;
	req.cu = &gdr_cuda_table()->cu;
	req.xs = xs;
	err = gdr_dmabuf_export(&req, false, &r, &fd, &res, why, n);
	if (err)
		return err;
	if (pcie) {
		err = gdr_dmabuf_export(&req, true, &r, &fd, &res, why, n);
		if (err && res == CUDA_ERROR_NOT_SUPPORTED)
			gdr_pcie_map_set(req.pi.device,
					 GDR_PCIE_MAP_UNSUPPORTED);
		if (err && (flags & GDR_EXPORT_PCIE_MAPPING))
			return err == EOPNOTSUPP || err == ENOSYS ? EOPNOTSUPP
								  : err;
		/* Asked for a C2C GPU only: the plain one still serves. */
		if (err)
			gdr_debug("export %p: no PCIe-mapped dma-buf: %s", ptr,
				  why);
	}
	err = describe(xs, desc, why, n);
	if (err)
		return err;
	desc->version = GDR_EXPORT_DESC_VERSION;
	desc->dmabuf_size = r.size;
	desc->offset = r.offset;
	desc->length = len;
	desc->iova = (uint64_t)(uintptr_t)ptr;
	desc->buffer_id = req.pi.buffer_id;
	desc->mem_type = req.pi.type;
	desc->owner_pid = (uint32_t)gdr_self_pid();
	desc->lib_version = LIB_VERSION;
	memcpy(desc->gpu_bus_id, d->pci_id, sizeof(desc->gpu_bus_id));
	if (d->has_uuid)
		memcpy(desc->gpu_uuid, d->uuid, sizeof(desc->gpu_uuid));
	return 0;
}

GDR_PUBLIC int gdr_export(void *ptr, size_t len, uint32_t flags,
			  struct gdr_export_desc *desc, int *fds)
{
	struct gdr_exports xs;
	char why[GDR_MSG_LEN];
	int err, i;

	gdr_clear_error();
	if (!desc || !fds) {
		gdr_fail(EINVAL, "gdr_export: desc and fds must not be NULL; "
				 "pass a descriptor and room for "
				 "GDR_EXPORT_MAX_FDS fds");
		return -1;
	}
	memset(desc, 0, sizeof(*desc));
	for (i = 0; i < GDR_EXPORT_MAX_FDS; i++)
		fds[i] = -1;
	gdr_exports_init(&xs);
	err = export_checked(ptr, len, flags, desc, &xs, why, sizeof(why));
	if (err) {
		gdr_exports_close(&xs);
		memset(desc, 0, sizeof(*desc));
		gdr_fail(err, "cannot export [%p, +%zu): %s", ptr, len, why);
		return -1;
	}
	/* The fds change hands: the caller's now, in the descriptor's
	 * order. */
	for (i = 0; i < (int)desc->num_fds; i++) {
		fds[i] = xs.fd[desc->mapping[i]];
		xs.fd[desc->mapping[i]] = -1;
	}
	gdr_exports_close(&xs);
	return 0;
}

GDR_PUBLIC int gdr_export_pack(const struct gdr_export_desc *desc, void *buf,
			       size_t size)
{
	char why[GDR_WHY_LEN];

	gdr_clear_error();
	if (!desc || !buf || size < GDR_EXPORT_WIRE_LEN) {
		gdr_fail(EINVAL,
			 "gdr_export_pack: pass a descriptor and a buffer of "
			 "at least GDR_EXPORT_WIRE_LEN (%d) bytes",
			 GDR_EXPORT_WIRE_LEN);
		return -1;
	}
	if (gdr_desc_pack(desc, buf, why, sizeof(why))) {
		gdr_fail(EINVAL,
			 "gdr_export_pack: the descriptor is not "
			 "one gdr_export() makes: %s",
			 why);
		return -1;
	}
	return 0;
}

/* Unpack with this node's boot id: 0 or an errno with the reason. */
static int unpack_here(const void *buf, size_t size,
		       struct gdr_export_desc *desc, char *why, size_t n)
{
	uint8_t boot[16];

	if (gdr_boot_id(boot, why, n))
		return EIO;
	return gdr_desc_unpack(buf, size, boot, desc, why, n);
}

GDR_PUBLIC int gdr_export_unpack(const void *buf, size_t size,
				 struct gdr_export_desc *desc)
{
	char why[GDR_MSG_LEN];
	int err;

	gdr_clear_error();
	if (!buf || !desc) {
		gdr_fail(EINVAL, "gdr_export_unpack: buf and desc must not "
				 "be NULL");
		return -1;
	}
	err = unpack_here(buf, size, desc, why, sizeof(why));
	if (err) {
		gdr_fail(err, "%s", why);
		return -1;
	}
	return 0;
}

GDR_PUBLIC int gdr_export_send(int sock, const struct gdr_export_desc *desc,
			       const int *fds)
{
	uint8_t wire[GDR_EXPORT_WIRE_LEN];
	char why[GDR_WHY_LEN], words[96];
	unsigned int i;
	int err;

	gdr_clear_error();
	if (!desc || !fds) {
		gdr_fail(EINVAL, "gdr_export_send: desc and fds must not be "
				 "NULL");
		return -1;
	}
	if (gdr_desc_pack(desc, wire, why, sizeof(why))) {
		gdr_fail(EINVAL,
			 "gdr_export_send: the descriptor is not one "
			 "gdr_export() makes: %s",
			 why);
		return -1;
	}
	for (i = 0; i < desc->num_fds; i++)
		if (fds[i] < 0) {
			gdr_fail(EBADF,
				 "gdr_export_send: fds[%u] is %d; pass the fds "
				 "gdr_export() gave",
				 i, fds[i]);
			return -1;
		}
	err = gdr_fds_send(sock, wire, sizeof(wire), fds, desc->num_fds);
	if (err) {
		gdr_fail(err,
			 "gdr_export_send: sendmsg on socket %d failed with "
			 "%s%s",
			 sock, gdr_errno_words(err, words, sizeof(words)),
			 err == EMSGSIZE ? " (only part of the descriptor "
					   "went: a SOCK_SEQPACKET unix socket "
					   "sends it whole)"
					 : "");
		return -1;
	}
	return 0;
}

/* Close the fds received and say "none". */
static void drop_fds(int *fds, unsigned int nfds)
{
	unsigned int i;

	for (i = 0; i < nfds; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	for (i = 0; i < GDR_EXPORT_MAX_FDS; i++)
		fds[i] = -1;
}

/* The message received, checked: 0 or an errno with the reason. */
static int check_message(const uint8_t *buf, const struct gdr_fds_msg *m,
			 const int *fds, struct gdr_export_desc *desc,
			 char *why, size_t n)
{
	struct gdr_import_src imp;
	char detail[GDR_WHY_LEN];
	int err;

	if (!m->got && !m->nfds) {
		gdr_fmt(why, n,
			"the peer closed the socket (or sent an empty message) "
			"before sending a descriptor");
		return ECONNRESET;
	}
	if (m->extra_fds) {
		gdr_fmt(why, n,
			"the message carried more than %d fds; nothing was "
			"kept",
			GDR_EXPORT_MAX_FDS);
		return EPROTO;
	}
	if (m->fds_cut) {
		gdr_fmt(why, n,
			"the kernel could not hand over every fd of the "
			"message (%u arrived): this process is at its "
			"open-files limit (RLIMIT_NOFILE); close fds or raise "
			"the limit (ulimit -n)",
			m->nfds);
		return EMFILE;
	}
	/* Another release's longer descriptor: its version says more than
	 * its length. */
	err = unpack_here(buf, m->got, desc, why, n);
	if (m->data_cut &&
	    (!err || (m->got >= 10 && !memcmp(buf, "GDRX", 4) &&
		      (buf[8] | buf[9] << 8) == GDR_EXPORT_DESC_VERSION))) {
		gdr_fmt(why, n,
			"the message was longer than a descriptor (%d bytes); "
			"nothing was kept",
			GDR_EXPORT_WIRE_LEN);
		return EPROTO;
	}
	if (err)
		return err;
	if (m->nfds != desc->num_fds) {
		gdr_fmt(why, n,
			"the descriptor names %u dma-bufs and the message "
			"carried %u fds",
			desc->num_fds, m->nfds);
		return EPROTO;
	}
	err = gdr_import_check(desc, fds, &imp, detail, sizeof(detail));
	if (err) {
		gdr_fmt(why, n, "the fds received do not match: %s", detail);
		return EPROTO;
	}
	return 0;
}

GDR_PUBLIC int gdr_export_recv(int sock, struct gdr_export_desc *desc, int *fds)
{
	uint8_t buf[GDR_EXPORT_WIRE_LEN + 1];
	char why[GDR_MSG_LEN], words[96];
	struct gdr_fds_msg m;
	unsigned int i;
	int err;

	gdr_clear_error();
	if (!desc || !fds) {
		gdr_fail(EINVAL, "gdr_export_recv: desc and fds must not be "
				 "NULL");
		return -1;
	}
	memset(desc, 0, sizeof(*desc));
	for (i = 0; i < GDR_EXPORT_MAX_FDS; i++)
		fds[i] = -1;
	err = gdr_fds_recv(sock, buf, sizeof(buf), fds, GDR_EXPORT_MAX_FDS, &m);
	if (err) {
		gdr_fail(err,
			 "gdr_export_recv: recvmsg on socket %d failed "
			 "with %s",
			 sock, gdr_errno_words(err, words, sizeof(words)));
		return -1;
	}
	err = check_message(buf, &m, fds, desc, why, sizeof(why));
	if (err) {
		drop_fds(fds, m.nfds);
		memset(desc, 0, sizeof(*desc));
		gdr_fail(err, "gdr_export_recv: %s", why);
		return -1;
	}
	return 0;
}
