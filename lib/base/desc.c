/* SPDX-License-Identifier: MIT */
/*
 * The export descriptor on the wire: GDR_EXPORT_WIRE_LEN bytes, the fixed
 * layout of struct desc_wire below, every integer little-endian, a magic
 * and the version first. What comes in is another process's word: every
 * field is checked before anything uses it.
 */
#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "base.h"

/* Version 1, byte for byte (the offsets are asserted below). */
struct desc_wire {
	uint8_t magic[8];	/* "GDRXDESC" */
	uint16_t version;	/* GDR_EXPORT_DESC_VERSION */
	uint16_t wire_len;	/* GDR_EXPORT_WIRE_LEN */
	uint32_t num_fds;	/* 1 or GDR_EXPORT_MAX_FDS */
	uint32_t mapping[2];	/* enum gdr_dmabuf_mapping, per fd */
	uint64_t dmabuf_size;	/* each dma-buf's bytes */
	uint64_t offset;	/* of the buffer in the dma-buf */
	uint64_t length;	/* of the buffer */
	uint64_t iova;		/* the owner's address: the default iova */
	uint64_t buffer_id;	/* CUDA's, global on the node */
	uint64_t dmabuf_ino[2]; /* each fd's inode, per fd */
	uint32_t mem_type;	/* enum gdr_mem_type */
	uint32_t owner_pid;	/* for messages */
	uint32_t lib_version;	/* the writer's release: major << 16 | .. */
	uint32_t reserved0;	/* 0 */
	char gpu_bus_id[16];	/* "dddd:bb:dd.f", NUL ended */
	uint8_t gpu_uuid[16];	/* CUDA's */
	uint8_t boot_id[16];	/* the node's running kernel */
	uint8_t reserved1[16];	/* 0 */
} __attribute__((packed));

#define WIRE_AT(field, at)                                                     \
	_Static_assert(offsetof(struct desc_wire, field) == (at),              \
		       "descriptor version 1: " #field " at byte " #at)
WIRE_AT(version, 8);
WIRE_AT(wire_len, 10);
WIRE_AT(num_fds, 12);
WIRE_AT(mapping, 16);
WIRE_AT(dmabuf_size, 24);
WIRE_AT(offset, 32);
WIRE_AT(length, 40);
WIRE_AT(iova, 48);
WIRE_AT(buffer_id, 56);
WIRE_AT(dmabuf_ino, 64);
WIRE_AT(mem_type, 80);
WIRE_AT(owner_pid, 84);
WIRE_AT(lib_version, 88);
WIRE_AT(reserved0, 92);
WIRE_AT(gpu_bus_id, 96);
WIRE_AT(gpu_uuid, 112);
WIRE_AT(boot_id, 128);
WIRE_AT(reserved1, 144);
_Static_assert(sizeof(struct desc_wire) == GDR_EXPORT_WIRE_LEN,
	       "descriptor version 1 is 160 bytes");
_Static_assert(GDR_EXPORT_MAX_FDS == 2, "two mappings on the wire");
_Static_assert(sizeof(((struct gdr_export_desc *)0)->gpu_bus_id) == 16 &&
		       sizeof(((struct gdr_export_desc *)0)->gpu_uuid) == 16 &&
		       sizeof(((struct gdr_export_desc *)0)->boot_id) == 16,
	       "the byte fields as the wire has them");

static const char magic[8] = { 'G', 'D', 'R', 'X', 'D', 'E', 'S', 'C' };

/* The granule a dma-buf's size is a multiple of on every Linux page size. */
#define DESC_PAGE 4096u

/* "dddd:bb:dd.f" in hex digits, NUL-terminated inside the field. */
bool gdr_bus_id_ok(const char *id, size_t room)
{
	static const char shape[] = "xxxx:xx:xx.x";
	size_t i;

	if (strnlen(id, room) != sizeof(shape) - 1)
		return false;
	for (i = 0; i < sizeof(shape) - 1; i++) {
		char c = id[i];

		if (shape[i] != 'x') {
			if (c != shape[i])
				return false;
		} else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
			     (c >= 'A' && c <= 'F'))) {
			return false;
		}
	}
	return true;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

/*
 * The checks every descriptor passes, written or read: 0, or EINVAL with
 * the field at fault in @why.
 */
int gdr_desc_check(const struct gdr_export_desc *d, char *why, size_t n)
{
	unsigned int i;

	if (d->version != GDR_EXPORT_DESC_VERSION) {
		gdr_fmt(why, n, "version %u; this library reads version %u",
			d->version, GDR_EXPORT_DESC_VERSION);
		return EINVAL;
	}
	if (d->num_fds < 1 || d->num_fds > GDR_EXPORT_MAX_FDS) {
		gdr_fmt(why, n, "num_fds %u; an export has 1 or %u dma-bufs",
			d->num_fds, GDR_EXPORT_MAX_FDS);
		return EINVAL;
	}
	for (i = 0; i < GDR_EXPORT_MAX_FDS; i++) {
		if (i >= d->num_fds) {
			if (d->mapping[i] || d->dmabuf_ino[i]) {
				gdr_fmt(why, n,
					"mapping[%u] or dmabuf_ino[%u] is set "
					"past num_fds %u",
					i, i, d->num_fds);
				return EINVAL;
			}
			continue;
		}
		if (d->mapping[i] > GDR_DMABUF_MAPPING_PCIE) {
			gdr_fmt(why, n, "mapping[%u] is %u, not a mapping", i,
				d->mapping[i]);
			return EINVAL;
		}
		if (!d->dmabuf_ino[i]) {
			gdr_fmt(why, n, "dmabuf_ino[%u] is 0", i);
			return EINVAL;
		}
		if (i && d->mapping[i] == d->mapping[0]) {
			gdr_fmt(why, n,
				"mapping[%u] repeats mapping[0]; each dma-buf "
				"of an export has its own mapping",
				i);
			return EINVAL;
		}
		/* The importer cannot see how a dma-buf maps the memory:
		 * it takes the owner's word, but never one dma-buf as
		 * both. */
		if (i && d->dmabuf_ino[i] == d->dmabuf_ino[0]) {
			gdr_fmt(why, n,
				"dmabuf_ino[%u] repeats dmabuf_ino[0]; each "
				"mapping is a dma-buf of its own",
				i);
			return EINVAL;
		}
	}
	if (!d->dmabuf_size || d->dmabuf_size % DESC_PAGE) {
		gdr_fmt(why, n,
			"dmabuf_size %llu is not a whole number of 4 KiB pages",
			(unsigned long long)d->dmabuf_size);
		return EINVAL;
	}
	if (!d->length || d->offset >= d->dmabuf_size ||
	    d->length > d->dmabuf_size - d->offset) {
		gdr_fmt(why, n,
			"offset %llu + length %llu does not fit in the "
			"dma-buf's %llu bytes",
			(unsigned long long)d->offset,
			(unsigned long long)d->length,
			(unsigned long long)d->dmabuf_size);
		return EINVAL;
	}
	if (d->iova > UINT64_MAX - d->length) {
		gdr_fmt(why, n, "iova 0x%llx + length %llu wraps around",
			(unsigned long long)d->iova,
			(unsigned long long)d->length);
		return EINVAL;
	}
	if (d->mem_type != GDR_MEM_CUDA_DEVICE &&
	    d->mem_type != GDR_MEM_CUDA_POOL) {
		gdr_fmt(why, n, "mem_type %u is not device memory",
			d->mem_type);
		return EINVAL;
	}
	if (!gdr_bus_id_ok(d->gpu_bus_id, sizeof(d->gpu_bus_id))) {
		gdr_fmt(why, n,
			"gpu_bus_id is not a PCI address (dddd:bb:dd.f)");
		return EINVAL;
	}
	return 0;
}

int gdr_desc_pack(const struct gdr_export_desc *d, uint8_t *out, char *why,
		  size_t n)
{
	struct desc_wire w;
	unsigned int i;
	int err = gdr_desc_check(d, why, n);

	if (err)
		return err;
	memset(&w, 0, sizeof(w));
	memcpy(w.magic, magic, sizeof(magic));
	w.version = htole16((uint16_t)d->version);
	w.wire_len = htole16(GDR_EXPORT_WIRE_LEN);
	w.num_fds = htole32(d->num_fds);
	for (i = 0; i < GDR_EXPORT_MAX_FDS; i++) {
		w.mapping[i] = htole32(d->mapping[i]);
		w.dmabuf_ino[i] = htole64(d->dmabuf_ino[i]);
	}
	w.dmabuf_size = htole64(d->dmabuf_size);
	w.offset = htole64(d->offset);
	w.length = htole64(d->length);
	w.iova = htole64(d->iova);
	w.buffer_id = htole64(d->buffer_id);
	w.mem_type = htole32(d->mem_type);
	w.owner_pid = htole32(d->owner_pid);
	w.lib_version = htole32(d->lib_version);
	memcpy(w.gpu_bus_id, d->gpu_bus_id, sizeof(w.gpu_bus_id));
	memcpy(w.gpu_uuid, d->gpu_uuid, sizeof(w.gpu_uuid));
	memcpy(w.boot_id, d->boot_id, sizeof(w.boot_id));
	memcpy(out, &w, sizeof(w));
	return 0;
}

int gdr_desc_unpack(const uint8_t *in, size_t size, const uint8_t *boot_id,
		    struct gdr_export_desc *d, char *why, size_t n)
{
	char field[GDR_WHY_LEN];
	struct desc_wire w;
	unsigned int i, version;
	uint32_t lib;
	bool bad;

	memset(d, 0, sizeof(*d));
	if (size < sizeof(magic) || memcmp(in, magic, sizeof(magic))) {
		gdr_fmt(why, n,
			"the %zu bytes received are not a libgpudirect export "
			"descriptor (no magic); the sender must use "
			"gdr_export_send() or gdr_export_pack()",
			size);
		return EPROTO;
	}
	/* What arrived, as far as it goes; the rest reads 0. */
	memset(&w, 0, sizeof(w));
	memcpy(&w, in, size < sizeof(w) ? size : sizeof(w));
	version = size >= offsetof(struct desc_wire, wire_len)
			  ? le16toh(w.version)
			  : 0;
	lib = size >= offsetof(struct desc_wire, reserved0)
		      ? le32toh(w.lib_version)
		      : 0;
	if (version != GDR_EXPORT_DESC_VERSION) {
		gdr_fmt(why, n,
			"the descriptor is version %u, from libgpudirect "
			"%u.%u.%u; this library (%d.%d.%d) reads version %u: "
			"use the same libgpudirect release in owner and "
			"importer",
			version, lib >> 16, lib >> 8 & 0xff, lib & 0xff,
			GPUDIRECT_VERSION_MAJOR, GPUDIRECT_VERSION_MINOR,
			GPUDIRECT_VERSION_MICRO, GDR_EXPORT_DESC_VERSION);
		return EPROTO;
	}
	if (size != GDR_EXPORT_WIRE_LEN || le16toh(w.wire_len) != size) {
		gdr_fmt(why, n,
			"the descriptor is %zu bytes and says %u; version %u "
			"is %u bytes: it was cut or padded on the way",
			size, le16toh(w.wire_len), GDR_EXPORT_DESC_VERSION,
			GDR_EXPORT_WIRE_LEN);
		return EPROTO;
	}
	d->version = version;
	d->num_fds = le32toh(w.num_fds);
	for (i = 0; i < GDR_EXPORT_MAX_FDS; i++) {
		d->mapping[i] = le32toh(w.mapping[i]);
		d->dmabuf_ino[i] = le64toh(w.dmabuf_ino[i]);
	}
	d->dmabuf_size = le64toh(w.dmabuf_size);
	d->offset = le64toh(w.offset);
	d->length = le64toh(w.length);
	d->iova = le64toh(w.iova);
	d->buffer_id = le64toh(w.buffer_id);
	d->mem_type = le32toh(w.mem_type);
	d->owner_pid = le32toh(w.owner_pid);
	d->lib_version = lib;
	memcpy(d->gpu_bus_id, w.gpu_bus_id, sizeof(d->gpu_bus_id));
	memcpy(d->gpu_uuid, w.gpu_uuid, sizeof(d->gpu_uuid));
	memcpy(d->boot_id, w.boot_id, sizeof(d->boot_id));
	bad = gdr_desc_check(d, field, sizeof(field)) != 0;
	if (!bad &&
	    (w.reserved0 || !all_zero(w.reserved1, sizeof(w.reserved1)))) {
		gdr_copy(field, sizeof(field), "its reserved bytes are not 0");
		bad = true;
	}
	if (bad) {
		gdr_fmt(why, n,
			"the descriptor (from libgpudirect %u.%u.%u) is "
			"malformed: %s",
			lib >> 16, lib >> 8 & 0xff, lib & 0xff, field);
		memset(d, 0, sizeof(*d));
		return EPROTO;
	}
	if (boot_id && memcmp(boot_id, d->boot_id, sizeof(d->boot_id))) {
		gdr_fmt(why, n,
			"the descriptor was made on another node, or on this "
			"one before it rebooted (its boot id differs): a "
			"dma-buf is shared only between processes of one "
			"running kernel");
		memset(d, 0, sizeof(*d));
		return EXDEV;
	}
	return 0;
}
