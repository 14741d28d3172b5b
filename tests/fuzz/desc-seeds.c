/* SPDX-License-Identifier: MIT */
/*
 * Writes the seeds of the desc fuzz target (tests/fuzz/corpus/desc/):
 * descriptors made by gdr_desc_pack() with the fuzz target's boot id, and
 * near misses, each one field (or the length) off, with what
 * gdr_desc_unpack() must answer checked here. Run by hand when the wire
 * layout changes; the seeds are checked in:
 *
 *   cc -D_GNU_SOURCE -Iinclude -Ilib/base tests/fuzz/desc-seeds.c \
 *      lib/base/desc.c lib/base/error.c -o /tmp/desc-seeds &&
 *   /tmp/desc-seeds tests/fuzz/corpus/desc
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

/* The fuzz target's boot id (fuzz-parsers.c, TARGET_DESC). */
static const uint8_t boot_id[16] = { 0x5e, 0xed, 0xb0, 0x07, 0x1d, 0x00,
				     0x4f, 0x2a, 0x9c, 0x11, 0x22, 0x33,
				     0x44, 0x55, 0x66, 0x77 };

static const char *dir;
static int bad;

static void put64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Write @size bytes as seed @name; gdr_desc_unpack must answer @want. */
static void seed(const char *name, const uint8_t *b, size_t size, int want)
{
	struct gdr_export_desc d;
	char path[4096], why[512] = "";
	int got = gdr_desc_unpack(b, size, boot_id, &d, why, sizeof(why));
	FILE *f;

	if (got != want) {
		fprintf(stderr, "%s: unpack gives %d, want %d (%s)\n", name,
			got, want, why);
		bad = 1;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(b, 1, size, f) != size || fclose(f)) {
		perror(path);
		exit(1);
	}
}

static void pack(const struct gdr_export_desc *d, uint8_t *out)
{
	char why[256];

	if (gdr_desc_pack(d, out, why, sizeof(why))) {
		fprintf(stderr, "pack: %s\n", why);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	struct gdr_export_desc one = {
		.version = GDR_EXPORT_DESC_VERSION,
		.num_fds = 1,
		.mapping = { GDR_DMABUF_MAPPING_DEFAULT },
		.dmabuf_size = 2 << 20,
		.offset = 4096 + 256,
		.length = 1 << 20,
		.iova = 0x7f3a12345100ull,
		.buffer_id = 42,
		.dmabuf_ino = { 123456 },
		.mem_type = GDR_MEM_CUDA_DEVICE,
		.owner_pid = 4242,
		.lib_version = 0 << 16 | 3 << 8 | 0,
		.gpu_bus_id = "0000:65:00.0",
		.gpu_uuid = { 0xa1, 0xb2, 0xc3, 0xd4, 1, 2, 3, 4, 5, 6, 7, 8, 9,
			      10, 11, 12 },
	};
	struct gdr_export_desc two, edge;
	uint8_t b[GDR_EXPORT_WIRE_LEN + 1], w[GDR_EXPORT_WIRE_LEN + 1];

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	dir = argv[1];
	memcpy(one.boot_id, boot_id, sizeof(boot_id));
	two = one;
	two.num_fds = 2;
	two.mapping[1] = GDR_DMABUF_MAPPING_PCIE;
	two.dmabuf_ino[1] = 123457;
	two.mem_type = GDR_MEM_CUDA_POOL;
	/* The limits: the buffer ends where the dma-buf does, and its iova
	 * ends at the top of the address space. */
	edge = one;
	edge.dmabuf_size = 4096;
	edge.offset = 4095;
	edge.length = 1;
	edge.iova = UINT64_MAX - 1;
	snprintf(edge.gpu_bus_id, sizeof(edge.gpu_bus_id), "ABCD:ef:1F.7");

	pack(&one, b);
	seed("valid-one-fd", b, GDR_EXPORT_WIRE_LEN, 0);
	pack(&two, w);
	seed("valid-two-fds", w, GDR_EXPORT_WIRE_LEN, 0);
	pack(&edge, w);
	seed("valid-edges", w, GDR_EXPORT_WIRE_LEN, 0);

	/* One thing off each. */
	memcpy(w, b, sizeof(b));
	w[128] ^= 1;
	seed("other-boot", w, GDR_EXPORT_WIRE_LEN, EXDEV);
	seed("cut", b, GDR_EXPORT_WIRE_LEN - 1, EPROTO);
	memcpy(w, b, sizeof(b));
	w[GDR_EXPORT_WIRE_LEN] = 0;
	seed("padded", w, GDR_EXPORT_WIRE_LEN + 1, EPROTO);
	memcpy(w, b, sizeof(b));
	w[8] = 2;
	seed("version-2", w, GDR_EXPORT_WIRE_LEN, EPROTO);
	memcpy(w, b, sizeof(b));
	w[10] = GDR_EXPORT_WIRE_LEN - 1;
	seed("says-159", w, GDR_EXPORT_WIRE_LEN, EPROTO);
	memcpy(w, b, sizeof(b));
	w[12] = 3;
	seed("three-fds", w, GDR_EXPORT_WIRE_LEN, EPROTO);
	pack(&two, w);
	w[20] = GDR_DMABUF_MAPPING_DEFAULT;
	seed("mapping-repeated", w, GDR_EXPORT_WIRE_LEN, EPROTO);
	memcpy(w, b, sizeof(b));
	w[72] = 1; /* dmabuf_ino[1] past num_fds 1 */
	seed("ino-past-num-fds", w, GDR_EXPORT_WIRE_LEN, EPROTO);
	memcpy(w, b, sizeof(b));
	put64(w + 24, (2 << 20) + 1);
	seed("size-not-pages", w, GDR_EXPORT_WIRE_LEN, EPROTO);
	memcpy(w, b, sizeof(b));
	put64(w + 32, (2 << 20) - (1 << 20) + 1);
	seed("past-the-end", w, GDR_EXPORT_WIRE_LEN, EPROTO);
	memcpy(w, b, sizeof(b));
	put64(w + 48, UINT64_MAX - (1 << 20) + 1);
	seed("iova-wraps", w, GDR_EXPORT_WIRE_LEN, EPROTO);
	memcpy(w, b, sizeof(b));
	memcpy(w + 96, "0000:65:00.00000", 16);
	seed("bus-id-unterminated", w, GDR_EXPORT_WIRE_LEN, EPROTO);
	memcpy(w, b, sizeof(b));
	memcpy(w + 96, "0000:65:00.00", 13); /* a character past the BDF */
	seed("bus-id-long", w, GDR_EXPORT_WIRE_LEN, EPROTO);
	memcpy(w, b, sizeof(b));
	w[80] = GDR_MEM_HOST;
	seed("host-memory", w, GDR_EXPORT_WIRE_LEN, EPROTO);
	memcpy(w, b, sizeof(b));
	w[80] = GDR_MEM_DMABUF;
	seed("dmabuf-memory", w, GDR_EXPORT_WIRE_LEN, EPROTO);
	memcpy(w, b, sizeof(b));
	w[20] = GDR_DMABUF_MAPPING_PCIE; /* mapping[1] past num_fds 1 */
	seed("mapping-past-num-fds", w, GDR_EXPORT_WIRE_LEN, EPROTO);
	memcpy(w, b, sizeof(b));
	w[159] = 1;
	seed("reserved-set", w, GDR_EXPORT_WIRE_LEN, EPROTO);
	return bad;
}
