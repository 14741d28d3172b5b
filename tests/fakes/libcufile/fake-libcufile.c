/* SPDX-License-Identifier: MIT */
/*
 * A libcufile.so.0 (by file name and soname) for the storage check's
 * tests: cuFile's calls as its API reference documents them, answering
 * what $GDR_FAKE_CUFILE asks for, a comma-separated list of:
 *
 *   open=N       cuFileDriverOpen answers CUfileOpError N (5001: nvidia-fs
 *                not loaded and compatibility mode not allowed)
 *   props=N      cuFileDriverGetProperties answers N
 *   register=N   cuFileHandleRegister answers N (5008: not supported)
 *   read=N, write=N   cuFileRead/cuFileWrite return N (-1 sets errno EIO;
 *                -5044 is CU_FILE_IO_ERROR)
 *   short        cuFileRead moves half the bytes, then nothing
 *   corrupt      cuFileRead flips one byte of what it brings
 *   empty        cuFileRead says it read every byte and brings none
 *   nvfs         nvidia-fs 2.24 is there and reaches every file system:
 *                the bytes move "direct" (counted as nvidia-fs's)
 *   p2p          PCI P2PDMA supported and on (counted as P2PDMA's)
 *   layout=1.20  the statistics in 1.20's layout (default 1.15's)
 *   miscount     the statistics count other bytes than were moved
 *   noreads      the statistics count the bytes, but no call on any path
 *   force        force_compat_mode is true
 *   hang=STEP    open, read or write never returns (a dead NFS server)
 *   chatter      prints on stdout, as libcufile 1.15 does without CUDA
 *   log          writes cufile.log in the working directory unless
 *                CUFILE_LOGFILE_PATH is set, as cuFile does
 *
 * cuFileHandleRegister refuses an fd whose status flags carry O_NONBLOCK
 * or O_TMPFILE with CU_FILE_INVALID_FILE_OPEN_FLAG, as libcufile 1.15 did
 * on the GPU machine (docs/benchmarks.md); with $GDR_FAKE_CUFILE_FDLOG set
 * to a path, it appends the access mode of each fd it registers there
 * ("register O_RDONLY O_DIRECT"): what a test checks of the fd it gets.
 *
 * Without any, nvidia-fs is absent and allow_compat_mode true: every byte
 * moves through POSIX (compat), counted as such. "Device memory" is the
 * fake libcuda's, which is host memory: it is read into and written from
 * directly. Built also without the statistics and parameter calls
 * (-DGDR_FAKE_CUFILE_1_14: cuFile 1.14 had none).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cufile-abi.h"

#define EXPORT __attribute__((visibility("default")))

typedef struct gdr_cufile_error err_t;

static const char *opt(const char *name)
{
	static char buf[256];
	const char *all = getenv("GDR_FAKE_CUFILE"), *p;
	size_t len = strlen(name);

	for (p = all; p && *p;) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		if (n >= len && !strncmp(p, name, len) &&
		    (n == len || p[len] == '=')) {
			size_t v = n > len ? n - len - 1 : 0;

			if (v >= sizeof(buf))
				v = sizeof(buf) - 1;
			memcpy(buf, p + n - v, v);
			buf[v] = '\0';
			return buf;
		}
		p += n + (e ? 1 : 0);
	}
	return NULL;
}

static int num(const char *name, int def)
{
	const char *v = opt(name);

	return v ? atoi(v) : def;
}

static void hang(const char *step)
{
	const char *h = opt("hang");

	if (h && !strcmp(h, step))
		for (;;)
			pause();
}

static err_t ok(int e)
{
	err_t r = { e, 0 };

	return r;
}

static bool opened;
static int stats_level;
static struct gdr_cufile_gpu_stats counts;

struct handle {
	int fd;
};

EXPORT err_t cuFileDriverOpen(void);
EXPORT err_t cuFileDriverOpen(void)
{
	int e = num("open", 0);

	if (opt("chatter"))
		printf("fake cuFile: opening the driver\n");
	if (opt("log") && !getenv("CUFILE_LOGFILE_PATH")) {
		FILE *f = fopen("cufile.log", "a");

		if (f) {
			fprintf(f, "fake cuFile: opened\n");
			fclose(f);
		}
	}
	hang("open");
	opened = !e;
	return ok(e);
}

EXPORT err_t cuFileDriverClose_v2(void);
EXPORT err_t cuFileDriverClose_v2(void)
{
	if (!opened)
		return ok(GDR_CU_FILE_DRIVER_NOT_INITIALIZED);
	opened = false;
	return ok(0);
}

EXPORT err_t cuFileDriverGetProperties(struct gdr_cufile_props *p);
EXPORT err_t cuFileDriverGetProperties(struct gdr_cufile_props *p)
{
	if (!p)
		return ok(GDR_CU_FILE_INVALID_VALUE);
	if (num("props", 0))
		return ok(num("props", 0));
	memset(p, 0, sizeof(*p));
	p->nvfs.max_direct_io_size = 16 << 20;
	p->nvfs.dcontrolflags = 1u << GDR_CUFILE_CTL_ALLOW_COMPAT;
	if (opt("nvfs")) {
		p->nvfs.major_version = 2;
		p->nvfs.minor_version = 24;
		p->nvfs.dstatusflags = 0x33ff; /* every file system */
	}
	if (opt("p2p"))
		p->fflags |= 1u << GDR_CUFILE_FEAT_P2P;
	return ok(0);
}

EXPORT err_t cuFileGetVersion(int *v);
EXPORT err_t cuFileGetVersion(int *v)
{
	if (!v)
		return ok(GDR_CU_FILE_INVALID_VALUE);
	*v = 1150;
	return ok(0);
}

EXPORT err_t cuFileHandleRegister(void **fh, struct gdr_cufile_descr *d);
EXPORT err_t cuFileHandleRegister(void **fh, struct gdr_cufile_descr *d)
{
	const char *fdlog = getenv("GDR_FAKE_CUFILE_FDLOG");
	struct handle *h;
	FILE *f;
	int fl;

	if (!opened)
		return ok(GDR_CU_FILE_DRIVER_NOT_INITIALIZED);
	if (!fh || !d || d->type != GDR_CUFILE_HANDLE_FD || d->handle.fd < 0)
		return ok(GDR_CU_FILE_INVALID_VALUE);
	fl = fcntl(d->handle.fd, F_GETFL);
	if (fl < 0)
		return ok(GDR_CU_FILE_INVALID_VALUE);
	if (fl & (O_NONBLOCK | (O_TMPFILE & ~O_DIRECTORY)))
		return ok(GDR_CU_FILE_INVALID_FILE_OPEN_FLAG);
	if (fdlog && (f = fopen(fdlog, "a"))) {
		fprintf(f, "register %s%s\n",
			(fl & O_ACCMODE) == O_RDONLY   ? "O_RDONLY"
			: (fl & O_ACCMODE) == O_WRONLY ? "O_WRONLY"
						       : "O_RDWR",
			fl & O_DIRECT ? " O_DIRECT" : "");
		fclose(f);
	}
	if (num("register", 0))
		return ok(num("register", 0));
	h = malloc(sizeof(*h));
	if (!h)
		return ok(GDR_CU_FILE_INTERNAL_ERROR);
	h->fd = d->handle.fd;
	*fh = h;
	return ok(0);
}

EXPORT void cuFileHandleDeregister(void *fh);
EXPORT void cuFileHandleDeregister(void *fh)
{
	free(fh);
}

EXPORT err_t cuFileBufRegister(const void *b, size_t n, int flags);
EXPORT err_t cuFileBufRegister(const void *b, size_t n, int flags)
{
	(void)flags;
	return ok(!b || !n ? GDR_CU_FILE_INVALID_VALUE : 0);
}

EXPORT err_t cuFileBufDeregister(const void *b);
EXPORT err_t cuFileBufDeregister(const void *b)
{
	return ok(!b ? GDR_CU_FILE_INVALID_VALUE : 0);
}

/* Count one call the way cuFile does: which path served it. */
static void count(size_t bytes, bool writing)
{
	uint64_t *n = writing ? (opt("nvfs")  ? &counts.n_nvfs_writes
				 : opt("p2p") ? &counts.n_p2p_writes
					      : &counts.n_posix_writes)
			      : (opt("nvfs")  ? &counts.n_nvfs_reads
				 : opt("p2p") ? &counts.n_p2p_reads
					      : &counts.n_posix_reads);

	if (stats_level < 3)
		return;
	if (!opt("noreads"))
		(*n)++;
	if (writing) {
		counts.n_total_writes++;
		counts.write_bytes += bytes + (opt("miscount") ? 1 : 0);
	} else {
		counts.n_total_reads++;
		counts.read_bytes += bytes;
	}
}

EXPORT ssize_t cuFileRead(void *fh, void *buf, size_t size, off_t off,
			  off_t boff);
EXPORT ssize_t cuFileRead(void *fh, void *buf, size_t size, off_t off,
			  off_t boff)
{
	struct handle *h = fh;
	static int calls;
	ssize_t r;

	hang("read");
	if (opt("read")) {
		errno = EIO;
		return num("read", -1);
	}
	if (opt("short") && calls++)
		return 0;
	if (opt("short"))
		size /= 2;
	if (opt("empty")) {
		count(size, false);
		return (ssize_t)size;
	}
	r = pread(h->fd, (char *)buf + boff, size, off);
	if (r < 0)
		return -1; /* errno set */
	if (r > 0 && opt("corrupt"))
		((unsigned char *)buf)[boff + r / 2] ^= 0x5a;
	count((size_t)r, false);
	return r;
}

EXPORT ssize_t cuFileWrite(void *fh, const void *buf, size_t size, off_t off,
			   off_t boff);
EXPORT ssize_t cuFileWrite(void *fh, const void *buf, size_t size, off_t off,
			   off_t boff)
{
	struct handle *h = fh;
	ssize_t r;

	hang("write");
	if (opt("write")) {
		errno = EIO;
		return num("write", -1);
	}
	r = pwrite(h->fd, (const char *)buf + boff, size, off);
	if (r < 0)
		return -1;
	count((size_t)r, true);
	return r;
}

#ifndef GDR_FAKE_CUFILE_1_14
EXPORT err_t cuFileGetParameterBool(int param, bool *value);
EXPORT err_t cuFileGetParameterBool(int param, bool *value)
{
	if (!value)
		return ok(GDR_CU_FILE_INVALID_VALUE);
	switch (param) {
	case GDR_CUFILE_PARAM_ALLOW_COMPAT: *value = true; return ok(0);
	case GDR_CUFILE_PARAM_FORCE_COMPAT:
		*value = opt("force") != NULL;
		return ok(0);
	case GDR_CUFILE_PARAM_USE_P2PDMA:
		*value = opt("p2p") != NULL;
		return ok(0);
	default: return ok(GDR_CU_FILE_INVALID_VALUE);
	}
}

EXPORT err_t cuFileSetStatsLevel(int level);
EXPORT err_t cuFileSetStatsLevel(int level)
{
	if (level < 0 || level > 3)
		return ok(GDR_CU_FILE_INVALID_VALUE);
	stats_level = level;
	return ok(0);
}

EXPORT err_t cuFileStatsStart(void);
EXPORT err_t cuFileStatsStart(void)
{
	return ok(opened ? 0 : GDR_CU_FILE_DRIVER_NOT_INITIALIZED);
}

EXPORT err_t cuFileStatsStop(void);
EXPORT err_t cuFileStatsStop(void)
{
	return ok(opened ? 0 : GDR_CU_FILE_DRIVER_NOT_INITIALIZED);
}

EXPORT err_t cuFileStatsReset(void);
EXPORT err_t cuFileStatsReset(void)
{
	memset(&counts, 0, sizeof(counts));
	return ok(opened ? 0 : GDR_CU_FILE_DRIVER_NOT_INITIALIZED);
}

/* The level 3 record in 1.15's layout, or 1.20's (longer level 1). */
EXPORT err_t cuFileGetStatsL3(void *stats);
EXPORT err_t cuFileGetStatsL3(void *stats)
{
	const char *layout = opt("layout");
	size_t l1 = layout && !strcmp(layout, "1.20")
			    ? GDR_CUFILE_L1_BYTES_1_20
			    : GDR_CUFILE_L1_BYTES_1_15;
	size_t at = l1 + GDR_CUFILE_L2_HIST_BYTES;
	uint32_t one = 1;

	if (!stats || stats_level < 3)
		return ok(GDR_CU_FILE_INVALID_VALUE);
	memset(stats, 0, at + 8 + 16 * sizeof(counts));
	memcpy((char *)stats + at, &one, sizeof(one));
	memcpy((char *)stats + at + 8, &counts, sizeof(counts));
	return ok(0);
}
#endif
