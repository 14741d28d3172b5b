/* SPDX-License-Identifier: MIT */
/*
 * The base layer of libgpudirect (lib/base/): errors and messages, names,
 * parsers of outside text, the range index and reserved address space.
 * It calls nothing but the C library. Nothing in lib/ is exported: the
 * shared library is built with hidden visibility and a version script,
 * and the tests link the internal static library instead. docs/hacking.md
 * gives the layers and the conventions.
 *
 * Error convention, everywhere in lib/:
 *  - a function returning int returns 0 on success or a positive errno
 *    value; it does not rely on errno;
 *  - a function returning a pointer returns NULL and sets errno;
 *  - words for the user go into a caller's (char *why, size_t n) buffer;
 *  - only the public entry points set gdr_last_error() (gdr_fail()).
 */
#ifndef GDR_BASE_H
#define GDR_BASE_H

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "cuda-abi.h"
#include "gpudirect.h"

#define GDR_PUBLIC __attribute__((visibility("default")))

/*
 * Bind @impl to the exported @name at version @node (both strings, as the
 * version script spells them): GDR_SYMVER_DEFAULT
 * for the version programs link against from now on (name@@node),
 * GDR_SYMVER_COMPAT for an older one that programs built against it keep
 * (name@node). Each version of a changed function is its own @impl.
 */
#define GDR_SYMVER_DEFAULT(impl, name, node)                                   \
	__asm__(".symver " #impl ", " name "@@" node)
#define GDR_SYMVER_COMPAT(impl, name, node)                                    \
	__asm__(".symver " #impl ", " name "@" node)

/* The kernel's internal "not supported" code, which some RDMA drivers let
 * escape from ibv_reg_*_mr. User space must never see it from us. */
#define GDR_ENOTSUPP 524

/* A file the library reads that is not a regular file (a FIFO, a device,
 * a socket): the seam's open refuses it, never blocks on it. Past every
 * real errno; named by gdr_errno_name(). */
#define GDR_ENOTREG 4097
/* An fd that is not a dma-buf (the dma-buf checks of lib/os/handover.c). */
#define GDR_ENOTDMABUF 4098

#define GDR_MSG_LEN 1024
/* A reason in words; the public record keeps the first GDR_REASON_LEN. */
#define GDR_WHY_LEN 512
#define GDR_VALUE_LEN 512

/* The names of paths and memory types (names.c): what the public
 * gdr_path_str/_parse and gdr_mem_type_str answer, without touching
 * gdr_last_error(), for the library's own messages. */
const char *gdr_path_name(enum gdr_path path);
int gdr_path_lookup(const char *name, enum gdr_path *path); /* 0 or -1 */
const char *gdr_mem_type_name(enum gdr_mem_type type);
const char *gdr_distance_name(enum gdr_distance d);

/* --- errors and debug (error.c) ----------------------------------------- */
void gdr_clear_error(void);
/* Set this thread's message and errno (after gdr_errno_public()). Returns
 * NULL for convenience. Only public entry points call it. */
void *gdr_fail(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* snprintf that never overflows and always terminates. */
void gdr_fmt(char *buf, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void gdr_vfmt(char *buf, size_t n, const char *fmt, va_list ap);
/* @src into @buf of @n bytes, cut to fit and always terminated: the hot
 * paths' copy of a word (gdr_fmt's "%s" without the formatter). */
void gdr_copy(char *buf, size_t n, const char *src);
/* Append to the string in @buf. */
void gdr_append(char *buf, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Set by the node probe from GPUDIRECT_DEBUG (defined in error.c); read
 * atomically. */
extern int gdr_debug_on;
/* One line on stderr when GPUDIRECT_DEBUG is set (the check inline: the
 * hot paths pay a load, not a call). */
void gdr_debug_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define gdr_debug(...)                                                         \
	do {                                                                   \
		if (__atomic_load_n(&gdr_debug_on, __ATOMIC_RELAXED))          \
			gdr_debug_line(__VA_ARGS__);                           \
	} while (0)
/* The errno that best matches a CUDA error. */
int gdr_cu_errno(CUresult r);
/* "EOPNOTSUPP", "EBADF", ... for messages. */
const char *gdr_errno_name(int err);
/* "EOPNOTSUPP (Operation not supported)"; says what a 524 was. */
const char *gdr_errno_words(int err, char *buf, size_t n);
/* Sentences more than one public call says. */
extern const char gdr_msg_pd_null[];
/* What to do about an MR that ibv_dereg_mr refused with @err. */
const char *gdr_dereg_remedy(int err);
/* True when @err means "this path is not supported here". */
bool gdr_err_is_unsupported(int err);
/* The errno a caller may see for @err: the kernel-internal 524 becomes
 * EOPNOTSUPP (the message says what it was). */
int gdr_errno_public(int err);

/* --- parsers of outside text (parse.c) --------------------------------- */
struct gdr_kver {
	int major, minor, patch;
};
/* Parse "5.12.0-rc1+", "6.18.44-fc-v973-gpu", "4.18.0-513.el8.x86_64".
 * 0 or EINVAL. */
int gdr_parse_kernel_release(const char *s, struct gdr_kver *v);
int gdr_kver_cmp(const struct gdr_kver *a, int major, int minor);

enum gdr_nv_flavour {
	GDR_NV_ABSENT = 0, /* no /proc/driver/nvidia/version */
	GDR_NV_OPEN = 1,   /* "Open Kernel Module" */
	GDR_NV_PROPRIETARY = 2,
	GDR_NV_UNPARSED = 3,   /* present but not understood */
	GDR_NV_UNREADABLE = 4, /* present, but reading it failed */
};
/* Parse /proc/driver/nvidia/version text: flavour and "580.159.04".
 * NULL text: the file is absent; "" (empty, or NUL bytes): unparsed. */
enum gdr_nv_flavour gdr_parse_nvidia_version(const char *text, char *ver,
					     size_t n);
/* Parse a decimal (or 0x) number from a sysfs attribute. 0 or EINVAL. */
int gdr_parse_long(const char *s, long *out);
/*
 * The IOMMU settings of a kernel command line (/proc/cmdline): its iommu=,
 * iommu.passthrough=, iommu.strict=, intel_iommu= and amd_iommu= words,
 * space-separated in their order, into @out ("" when none; words that do
 * not fit are left out whole).
 */
void gdr_parse_iommu_cmdline(const char *cmdline, char *out, size_t n);
/*
 * /proc/driver/nvidia-fs/stats: the driver's version ("NVFS Driver(version:
 * 2.17.5)") into @ver ("" when absent), and "PeerDirect Supported: True"
 * into *@peerdirect (1, 0, -1 when absent).
 */
void gdr_parse_nvfs_stats(const char *text, char *ver, size_t n,
			  int *peerdirect);

/* What the doctor reads of GPUDirect Storage's cufile.json, at most. */
#define GDR_CUFILE_MAX_BYTES ((size_t)256 << 10)
/* What the doctor reads of GPUDirect Storage's cufile.json. */
#define GDR_CUFILE_MAX_ADDRS 16
struct gdr_cufile {
	/* properties.allow_compat_mode: 1, 0, -1 absent, -2 not a boolean */
	int allow_compat_mode;
	int has_addr_list; /* properties.rdma_dev_addr_list is there */
	unsigned int num_addrs;
	char addrs[GDR_CUFILE_MAX_ADDRS][48];
	/* entries that cannot be addresses: not strings, empty, or longer
	 * than any address is written */
	unsigned int not_addrs;
	/* entries past GDR_CUFILE_MAX_ADDRS, not judged */
	unsigned int dropped;
	char why[96]; /* what is wrong, with EINVAL */
};
/*
 * Read cufile.json text (JSON with // and block comments, as cuFile
 * accepts it; json.h) for properties.allow_compat_mode and
 * properties.rdma_dev_addr_list (the per-file-system lists under "fs" are
 * not these). 0; EINVAL with @c->why when the text is not such JSON, or
 * the list is not an array; ENOMEM.
 */
int gdr_parse_cufile(const char *text, struct gdr_cufile *c);

/* --- the mount table (mountinfo.c) ------------------------------------ */
/* One line of /proc/PID/mountinfo, its escapes (\040) undone. */
struct gdr_mount {
	long long id, parent;
	unsigned int major, minor;
	char root[PATH_MAX];  /* within the file system */
	char point[PATH_MAX]; /* where it is mounted */
	char options[1024];   /* per mount: "rw,nosuid" */
	char fstype[64];
	char source[PATH_MAX];
	char super[4096]; /* the file system's: NFS's proto=, addr= */
};
/* Parse @len bytes of one line (no newline) into @m: 0, or EINVAL when
 * the line does not have mountinfo's form (nothing of it kept). */
int gdr_parse_mountinfo_line(const char *line, size_t len, struct gdr_mount *m);
/* The value of @key in a comma-separated option list ("" for a bare
 * flag): 0, ENOENT when absent, ENOBUFS when it does not fit @n. */
int gdr_mount_option(const char *opts, const char *key, char *out, size_t n);
/* @path is @dir or below it, name by name ("/mnt/ab" is not below
 * "/mnt/a"). */
bool gdr_path_under(const char *path, const char *dir);

#define GDR_BDF_LEN 16
/* "0000:3B:00.0" or "00000000:3b:00.0" -> "0000:3b:00.0". 0 or EINVAL. */
int gdr_bdf_normalize(const char *in, char *out, size_t n);

/* --- reserved address space (vmem.c) ------------------------------------ */
/* Reserve @size bytes of address space (no memory yet). NULL with errno. */
void *gdr_vmem_reserve(size_t size);
/* Make [@old, @size) of it usable, zeroed: 0 or an errno. */
int gdr_vmem_commit(void *p, size_t old, size_t size);
/* Give it all back; @used: what was committed. */
void gdr_vmem_free(void *p, size_t reserved, size_t used);
/* Bytes committed now (for the memory benchmark). */
size_t gdr_vmem_committed(void);

/* --- range index (ranges.c) ---------------------------------------------- */
#define RANGES_BLOCK 32 /* ranges per block */
struct gdr_range {
	uintptr_t start, end; /* [start, end) */
	void *item;
};
struct gdr_ranges_block;
struct gdr_ranges_dir;
struct gdr_ranges_chunk;
/*
 * Zero-initialised. One writer at a time (insert, remove, clear and the
 * plain queries, under the caller's lock); readers without a lock use the
 * _read calls, which answer EAGAIN when a writer changed the index
 * meanwhile (then retry, or take the lock).
 */
struct gdr_ranges {
	unsigned long seq; /* odd while the writer changes the index */
	struct gdr_ranges_dir *dir;
	size_t count;
	size_t max_len; /* the longest range held since the index was empty */
	struct gdr_ranges_block *spare;	 /* free blocks, kept for reuse */
	struct gdr_ranges_chunk *chunks; /* where the blocks live */
	size_t num_chunk_blocks;
};
/* Add [start, end) -> @item. 0, or ENOMEM with the index unchanged. */
int gdr_ranges_insert(struct gdr_ranges *x, uintptr_t start, uintptr_t end,
		      void *item);
/* Remove the range of @item that starts at @start. 0 or ENOENT. */
int gdr_ranges_remove(struct gdr_ranges *x, uintptr_t start, void *item);
/* An item whose range has start <= a and end >= b (the one starting
 * nearest before @a first), or NULL. */
void *gdr_ranges_cover(const struct gdr_ranges *x, uintptr_t a, uintptr_t b);
/* gdr_ranges_cover() without the lock: 0 with *@item (NULL: none), or
 * EAGAIN. */
int gdr_ranges_cover_read(const struct gdr_ranges *x, uintptr_t a, uintptr_t b,
			  void **item);
/* Without the lock: up to @max items whose range is exactly [start, end)
 * into @out, their number in *@n. 0 or EAGAIN. */
int gdr_ranges_exact_read(const struct gdr_ranges *x, uintptr_t start,
			  uintptr_t end, void **out, unsigned int max,
			  unsigned int *n);
/* Up to @max items overlapping [a, b) into @out, in start order; how many. */
unsigned int gdr_ranges_overlaps(const struct gdr_ranges *x, uintptr_t a,
				 uintptr_t b, void **out, unsigned int max);
/* How many blocks hold the ranges (for tests). */
size_t gdr_ranges_num_blocks(const struct gdr_ranges *x);
/* Free everything (no reader may be inside); the index is empty again. */
void gdr_ranges_clear(struct gdr_ranges *x);

/* --- the export descriptor on the wire (desc.c) ------------------------- */
/* Whether @id (in @room bytes) is a PCI address as a descriptor has it,
 * "dddd:bb:dd.f". */
bool gdr_bus_id_ok(const char *id, size_t room);
/* Whether @d is a descriptor gdr_export() could make: 0, or EINVAL with
 * the field at fault in @why (what packing checks, without packing). */
int gdr_desc_check(const struct gdr_export_desc *d, char *why, size_t n);
/* @d as GDR_EXPORT_WIRE_LEN bytes into @out: 0, or EINVAL (a field out of
 * range, named in @why). */
int gdr_desc_pack(const struct gdr_export_desc *d, uint8_t *out, char *why,
		  size_t n);
/*
 * Read @size bytes from another process into *@d, every field checked: 0,
 * EPROTO (not a descriptor, another version, cut or padded, a field out of
 * range), or EXDEV when @boot_id (NULL: not checked) is not the
 * descriptor's; the reason in @why, *@d all zero on failure.
 */
int gdr_desc_unpack(const uint8_t *in, size_t size, const uint8_t *boot_id,
		    struct gdr_export_desc *d, char *why, size_t n);

#endif /* GDR_BASE_H */
