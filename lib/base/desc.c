/* SPDX-License-Identifier: MIT */
/*
 * The export descriptor on the wire: GDR_EXPORT_WIRE_LEN bytes, fixed
 * layout, little-endian, a magic and the version first. What comes in is
 * another process's word: every field is checked before anything uses it.
 *
 *   0  magic "GDRXDESC"         64  dmabuf_ino[2]   (u64 each)
 *   8  version (u16)            80  mem_type        (u32)
 *  10  wire length (u16)        84  owner_pid       (u32)
 *  12  num_fds (u32)            88  lib_version     (u32)
 *  16  mapping[2] (u32 each)    92  reserved, 0     (u32)
 *  24  dmabuf_size (u64)        96  gpu_bus_id      (16 bytes, NUL ended)
 *  32  offset (u64)            112  gpu_uuid        (16 bytes)
 *  40  length (u64)            128  boot_id         (16 bytes)
 *  48  iova (u64)              144  reserved, 0     (16 bytes)
 *  56  buffer_id (u64)
 */
#include <errno.h>
#include <string.h>

#include "base.h"

static const char magic[8] = { 'G', 'D', 'R', 'X', 'D', 'E', 'S', 'C' };

/* The granule a dma-buf's size is a multiple of on every Linux page size. */
#define DESC_PAGE 4096u

_Static_assert(GDR_EXPORT_WIRE_LEN == 160, "the wire layout above");

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) | (uint32_t)get16(p + 2) << 16;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

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
	unsigned int i;
	int err = gdr_desc_check(d, why, n);

	if (err)
		return err;
	memset(out, 0, GDR_EXPORT_WIRE_LEN);
	memcpy(out, magic, sizeof(magic));
	put16(out + 8, (uint16_t)d->version);
	put16(out + 10, GDR_EXPORT_WIRE_LEN);
	put32(out + 12, d->num_fds);
	for (i = 0; i < GDR_EXPORT_MAX_FDS; i++) {
		put32(out + 16 + 4 * i, d->mapping[i]);
		put64(out + 64 + 8 * i, d->dmabuf_ino[i]);
	}
	put64(out + 24, d->dmabuf_size);
	put64(out + 32, d->offset);
	put64(out + 40, d->length);
	put64(out + 48, d->iova);
	put64(out + 56, d->buffer_id);
	put32(out + 80, d->mem_type);
	put32(out + 84, d->owner_pid);
	put32(out + 88, d->lib_version);
	memcpy(out + 96, d->gpu_bus_id, sizeof(d->gpu_bus_id));
	memcpy(out + 112, d->gpu_uuid, sizeof(d->gpu_uuid));
	memcpy(out + 128, d->boot_id, sizeof(d->boot_id));
	return 0;
}

int gdr_desc_unpack(const uint8_t *in, size_t size, const uint8_t *boot_id,
		    struct gdr_export_desc *d, char *why, size_t n)
{
	char field[GDR_WHY_LEN];
	unsigned int i;
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
	lib = size >= 92 ? get32(in + 88) : 0;
	if (size < 12 || get16(in + 8) != GDR_EXPORT_DESC_VERSION) {
		gdr_fmt(why, n,
			"the descriptor is version %u, from libgpudirect "
			"%u.%u.%u; this library (%d.%d.%d) reads version %u: "
			"use the same libgpudirect release in owner and "
			"importer",
			size >= 10 ? get16(in + 8) : 0, lib >> 16,
			lib >> 8 & 0xff, lib & 0xff, GPUDIRECT_VERSION_MAJOR,
			GPUDIRECT_VERSION_MINOR, GPUDIRECT_VERSION_MICRO,
			GDR_EXPORT_DESC_VERSION);
		return EPROTO;
	}
	if (size != GDR_EXPORT_WIRE_LEN || get16(in + 10) != size) {
		gdr_fmt(why, n,
			"the descriptor is %zu bytes and says %u; version %u "
			"is %u bytes: it was cut or padded on the way",
			size, get16(in + 10), GDR_EXPORT_DESC_VERSION,
			GDR_EXPORT_WIRE_LEN);
		return EPROTO;
	}
	d->version = get16(in + 8);
	d->num_fds = get32(in + 12);
	for (i = 0; i < GDR_EXPORT_MAX_FDS; i++) {
		d->mapping[i] = get32(in + 16 + 4 * i);
		d->dmabuf_ino[i] = get64(in + 64 + 8 * i);
	}
	d->dmabuf_size = get64(in + 24);
	d->offset = get64(in + 32);
	d->length = get64(in + 40);
	d->iova = get64(in + 48);
	d->buffer_id = get64(in + 56);
	d->mem_type = get32(in + 80);
	d->owner_pid = get32(in + 84);
	d->lib_version = lib;
	memcpy(d->gpu_bus_id, in + 96, sizeof(d->gpu_bus_id));
	memcpy(d->gpu_uuid, in + 112, sizeof(d->gpu_uuid));
	memcpy(d->boot_id, in + 128, sizeof(d->boot_id));
	bad = gdr_desc_check(d, field, sizeof(field)) != 0;
	if (!bad && (!all_zero(in + 92, 4) || !all_zero(in + 144, 16))) {
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
